//! With no Vulkan driver, asking for the GPU is a typed error, not a panic. The
//! loader is pointed at a driver file that does not exist (this test is alone in its
//! binary because it changes the process environment).

use axion_gpu::{GpuContext, GpuError};

#[test]
fn no_driver_is_a_no_adapter_error() {
    // SAFETY: the only test of this binary; no other thread reads the environment.
    unsafe {
        std::env::set_var("VK_DRIVER_FILES", "/nonexistent/axion-no-driver.json");
        std::env::set_var("VK_ICD_FILENAMES", "/nonexistent/axion-no-driver.json");
        std::env::set_var("WGPU_BACKEND", "vulkan");
    }
    match GpuContext::new() {
        Err(GpuError::NoAdapter { reason }) => {
            let message = GpuError::NoAdapter { reason }.to_string();
            assert!(message.contains("no GPU adapter"), "{message}");
        }
        Err(e) => panic!("expected NoAdapter, got {e}"),
        Ok(ctx) => panic!("found an adapter without a driver: {}", ctx.adapter()),
    }
}
