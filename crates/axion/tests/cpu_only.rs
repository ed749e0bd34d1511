//! A build without the `gpu` feature (`default-features = false`, no wgpu): `Auto`
//! steps on the CPU and says why, `Gpu` is an error that names the feature.

#![cfg(not(feature = "gpu"))]

use axion::prelude::*;
use axion::{SimError, scenes};

#[test]
fn without_the_gpu_feature_the_cpu_steps_and_the_gpu_is_an_error() {
    let model = scenes::pendulum().unwrap();
    let sim = Simulator::new(model.clone(), 512, 0.01, BackendChoice::Auto).unwrap();
    assert!(sim.backend_name().starts_with("cpu"));
    assert!(
        sim.backend_reason()
            .contains("built without the gpu feature"),
        "{}",
        sim.backend_reason()
    );
    match Simulator::new(model, 1, 0.01, BackendChoice::Gpu) {
        Err(e @ SimError::NoGpuBackend) => assert!(e.to_string().contains("`gpu` feature")),
        Err(e) => panic!("expected NoGpuBackend, got {e}"),
        Ok(_) => panic!("expected NoGpuBackend"),
    }
}
