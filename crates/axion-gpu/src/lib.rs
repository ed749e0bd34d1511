//! # axion-gpu
//!
//! The GPU backend of axion-rs: the implicit Newton step of `axion-cpu` in wgpu compute
//! shaders (WGSL, f32), for a batch of identical worlds at once.
//!
//! * [`GpuContext`]: instance (from the environment), adapter, device; no adapter is a
//!   [`GpuError::NoAdapter`], not a panic. [`AdapterReport`] says which adapter runs.
//! * [`GpuBackend`]: implements [`axion_model::Backend`] for models with bodies,
//!   joints (revolute, prismatic, ball, fixed, free) with their ranges, drives, and
//!   contacts with Coulomb friction and restitution between any two of spheres, boxes,
//!   capsules and cylinders, and of any of these on a half-space. Models it cannot run
//!   are refused when it is built ([`GpuError::UnsupportedModel`], naming the bodies):
//!   convex hulls, meshes and height fields that may collide, drives with a force limit
//!   (but force drives', which run at zero force: a force that is not zero is refused at
//!   the step), and the massless frames of compound joints.
//! * One Rust twin per WGSL file of the top-level `shaders/` folder: [`kinematics`]
//!   (`quat.wgsl`, `kinematics_probe.wgsl`), [`narrow`] (`narrow.wgsl`, the narrow
//!   phases, and `narrow_probe.wgsl`) and [`step`] (`step.wgsl` and the `step_*.wgsl`
//!   files), each with the formulas it implements; [`layout`] holds the numbers they
//!   share with the host.
//!
//! Results are deterministic: the same inputs on the same adapter give bitwise
//! identical results, whatever the number of worlds (per-world sums run in a fixed
//! order, no float atomics). On lavapipe this needs every kernel to stay inside its
//! loop budget (65535 loop passes per invocation, shared with the SIMD lanes beside):
//! the linear solve is split over dispatches for it, and a step that still exceeds it
//! is [`GpuError::LoopBudget`], never a silently wrong result. See `docs/gpu.md` for
//! that, the f32 tolerances and what is missing.

pub mod backend;
pub mod context;
pub mod error;
pub mod kinematics;
pub mod layout;
pub mod narrow;
pub mod step;
pub mod tree;

pub use backend::{
    ContactSlotProbe, Detection, GpuBackend, GpuSettings, LimitProbe, ProbeIterate,
    RowLinearization, RowProbe, TreeProbe,
};
pub use context::{AdapterReport, GpuContext};
pub use error::GpuError;

/// Whether the GPU backend can run `model` (no adapter needed): it refuses, naming the
/// bodies, pairs of shapes that may collide and have no device narrow phase (convex
/// hulls, meshes, height fields).
pub fn check_model(model: &axion_model::Model) -> Result<(), GpuError> {
    step::check_supported(model)
}

/// Whether the GPU backend solves `model`'s Newton systems directly along its tree of
/// bodies (docs/gpu.md, "Solving along the tree") rather than by the Krylov method, with
/// the tree solve and the slip coupling on (the defaults): every row lies on the tree
/// and, on an adapter with lavapipe's loop budget (`loop_budget`), the factorization
/// fits it. No adapter needed; a model the backend refuses is an error, as in
/// [`check_model`].
pub fn solved_along_tree(model: &axion_model::Model, loop_budget: bool) -> Result<bool, GpuError> {
    check_model(model)?;
    Ok(step::pack(model)?.tree_fits(loop_budget))
}

/// Whether tests and benchmarks that need a GPU adapter run here, after saying so when
/// they do not. `AXION_GPU_TESTS=skip` skips them; `AXION_GPU_TESTS=require` runs them
/// and a missing adapter fails them (as CI sets it, with Mesa's software driver
/// installed); by default they run where an adapter is found and are skipped, with a
/// line on the terminal naming `what` and why, where none is. The line is written past
/// the test harness's capture, so a passing run shows it.
pub fn device_tests_run(what: &str) -> bool {
    use std::io::Write;
    static FOUND: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let say = |line: String| {
        let _ = writeln!(std::io::stderr(), "{line}");
    };
    match std::env::var("AXION_GPU_TESTS").as_deref() {
        Ok("skip") => {
            say(format!("{what}: skipped (AXION_GPU_TESTS=skip)"));
            false
        }
        Ok("require") => true,
        _ => match FOUND.get_or_init(|| GpuContext::new().map(|_| ()).map_err(|e| e.to_string())) {
            Ok(()) => true,
            Err(e) => {
                say(format!(
                    "{what}: skipped, no GPU adapter: {e} (AXION_GPU_TESTS=require makes this a failure)"
                ));
                false
            }
        },
    }
}
