//! Shared by the device tests: an adapter is required (CI installs lavapipe) unless
//! `AXION_GPU_TESTS=skip` is set, in which case the device tests return early.

#![allow(dead_code)]

use axion_gpu::{GpuBackend, GpuContext, GpuSettings};
use axion_model::Model;

/// Whether the environment asks to skip tests that need an adapter.
pub fn skipped() -> bool {
    let skip = std::env::var("AXION_GPU_TESTS").is_ok_and(|v| v == "skip");
    if skip {
        eprintln!("AXION_GPU_TESTS=skip: device test not run");
    }
    skip
}

fn no_adapter(e: axion_gpu::GpuError) -> ! {
    panic!("{e}\n(set AXION_GPU_TESTS=skip to skip the device tests on a machine without one)")
}

/// A device context, or `None` when device tests are skipped.
pub fn context() -> Option<GpuContext> {
    if skipped() {
        return None;
    }
    Some(GpuContext::new().unwrap_or_else(|e| no_adapter(e)))
}

/// A GPU backend for `worlds` copies of `model`, or `None` when skipped.
pub fn backend(model: &Model, worlds: usize, settings: GpuSettings) -> Option<GpuBackend> {
    if skipped() {
        return None;
    }
    match GpuBackend::for_model(model, worlds, settings) {
        Ok(b) => Some(b),
        Err(e @ (axion_gpu::GpuError::NoAdapter { .. } | axion_gpu::GpuError::Device { .. })) => {
            no_adapter(e)
        }
        Err(e) => panic!("{e}"),
    }
}
