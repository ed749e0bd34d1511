//! Errors of the GPU backend.

use thiserror::Error;

/// Why the GPU backend could not start or run.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GpuError {
    /// No GPU adapter (hardware or software Vulkan driver) was found.
    #[error(
        "no GPU adapter found ({reason}); install a Vulkan driver (for a software one: \
         the Debian packages mesa-vulkan-drivers and libvulkan1) or use the CPU backend"
    )]
    NoAdapter {
        /// What wgpu reported.
        reason: String,
    },
    /// The adapter refused to create a device.
    #[error("the GPU adapter {adapter} could not create a device: {reason}")]
    Device {
        /// The adapter's name.
        adapter: String,
        /// What wgpu reported.
        reason: String,
    },
    /// The model uses something the GPU backend does not implement yet.
    #[error("the GPU backend cannot run this model: {reason}")]
    UnsupportedModel {
        /// What is not supported, naming the body, shape or joint.
        reason: String,
    },
    /// One world of the model does not fit the adapter's limits (larger batches are
    /// split into chunks, see `GpuSettings::max_chunk_worlds`).
    #[error("the batch does not fit the GPU: {reason}")]
    TooLarge {
        /// Which limit.
        reason: String,
    },
    /// The driver cut a kernel's loops short, so the results are wrong: lavapipe
    /// (llvmpipe) allows one kernel invocation 65535 loop passes in all
    /// (`step::LOOP_BUDGET`) and then runs every loop once. The backend splits the
    /// linear solve over dispatches to stay inside it; a model this error names needs
    /// more than one dispatch allows elsewhere (hardware drivers have no such budget).
    #[error(
        "the driver of {adapter} cut the step kernel's loops short in {worlds} world(s) \
         (first: world {first}; the model has {rows} rows): lavapipe allows 65535 loop \
         passes per kernel invocation, so the results are wrong; use a hardware GPU or \
         the CPU backend for this model"
    )]
    LoopBudget {
        /// The adapter's name.
        adapter: String,
        /// How many worlds were affected.
        worlds: usize,
        /// The first affected world.
        first: usize,
        /// Constraint rows per world (the solve's size).
        rows: usize,
    },
    /// A device operation failed (validation, out of memory, lost device, mapping).
    #[error("GPU operation failed: {reason}")]
    Operation {
        /// What wgpu reported.
        reason: String,
    },
}
