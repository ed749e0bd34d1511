//! # axion-gpu
//!
//! The GPU backend of axion-rs: the implicit Newton step of `axion-cpu` in wgpu compute
//! shaders (WGSL, f32), for a batch of identical worlds at once.
//!
//! * [`GpuContext`]: instance (from the environment), adapter, device; no adapter is a
//!   [`GpuError::NoAdapter`], not a panic. [`AdapterReport`] says which adapter runs.
//! * [`GpuBackend`]: implements [`axion_model::Backend`] for models with bodies,
//!   joints (revolute, prismatic, ball, fixed, free) and drives. Models whose shapes
//!   may collide are refused ([`GpuError::UnsupportedModel`]): contacts, friction and
//!   collision are not on the GPU yet.
//! * One Rust twin per WGSL file of the top-level `shaders/` folder: [`kinematics`]
//!   (`quat.wgsl`, `kinematics_probe.wgsl`), [`narrow`] (`narrow.wgsl`, the half-space
//!   narrow phase, probed only so far) and [`step`] (`step.wgsl`), each with the
//!   formulas it implements.
//!
//! Results are deterministic: the same inputs on the same adapter give bitwise
//! identical results, whatever the number of worlds (per-world sums run in a fixed
//! order, no float atomics). See `docs/gpu.md` for the f32 tolerances and what is
//! missing.

pub mod backend;
pub mod context;
pub mod error;
pub mod kinematics;
pub mod narrow;
pub mod step;

pub use backend::{GpuBackend, GpuSettings, RowProbe};
pub use context::{AdapterReport, GpuContext};
pub use error::GpuError;

/// Whether the GPU backend can run `model` (no adapter needed): today it refuses any
/// pair of shapes that may collide, naming them.
pub fn check_model(model: &axion_model::Model) -> Result<(), GpuError> {
    step::check_supported(model)
}
