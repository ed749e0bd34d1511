//! Backend choice: `Auto` takes the CPU for small batches, software adapters and models
//! the GPU cannot run, and says why; `Gpu` is an error where the GPU cannot run.

use axion::prelude::*;
use axion::{AUTO_GPU_MIN_WORLDS, GpuError, Model, SimError, scenes};

/// Two cylinders stacked on their caps, a shape pair without a device narrow phase.
fn stacked_cylinders() -> Model {
    let mut b = ModelBuilder::new();
    for (name, z) in [("lower", 0.0), ("upper", 0.55)] {
        let cylinder = Shape::Cylinder {
            radius: 0.2,
            half_length: 0.25,
        };
        b.add_body(
            BodyDesc::dynamic(name)
                .at(nalgebra::Vector3::new(0.0, 0.0, z))
                .mass(1.0, nalgebra::Vector3::zeros(), cylinder.unit_inertia(1.0))
                .shape(ShapeDesc::new(cylinder)),
        )
        .unwrap();
    }
    b.build().unwrap()
}

#[test]
fn auto_keeps_small_batches_on_the_cpu() {
    let sim = Simulator::new(scenes::pendulum().unwrap(), 2, 0.01, BackendChoice::Auto).unwrap();
    assert!(
        sim.backend_name().starts_with("cpu"),
        "{}",
        sim.backend_name()
    );
    assert!(
        sim.backend_reason().contains("2 worlds"),
        "{}",
        sim.backend_reason()
    );
}

#[test]
fn auto_keeps_models_the_gpu_cannot_run_on_the_cpu() {
    // Cylinder pairs are CPU-only.
    let model = stacked_cylinders();
    let sim = Simulator::new(model, AUTO_GPU_MIN_WORLDS, 0.01, BackendChoice::Auto).unwrap();
    assert!(sim.backend_name().starts_with("cpu"));
    assert!(
        sim.backend_reason().contains("cylinder"),
        "{}",
        sim.backend_reason()
    );
}

/// A large batch goes to the GPU only on a hardware adapter; lavapipe (a CPU device)
/// or no adapter at all keep it on the CPU, and the reason says which.
#[test]
fn auto_reports_its_choice_for_large_batches() {
    let sim = Simulator::new(
        scenes::pendulum().unwrap(),
        AUTO_GPU_MIN_WORLDS,
        0.01,
        BackendChoice::Auto,
    )
    .unwrap();
    let (name, reason) = (sim.backend_name(), sim.backend_reason().to_string());
    println!("{name}: {reason}");
    if reason.starts_with("auto: GPU") {
        assert!(name.starts_with("gpu"), "{name}");
    } else {
        assert!(name.starts_with("cpu"), "{name}");
        assert!(
            reason.contains("software") || reason.contains("no GPU adapter"),
            "{reason}"
        );
    }
}

#[test]
fn gpu_refuses_models_it_cannot_run() {
    match Simulator::new(stacked_cylinders(), 4, 0.01, BackendChoice::Gpu) {
        Err(SimError::Gpu(GpuError::UnsupportedModel { reason })) => {
            assert!(reason.contains("'upper'"), "{reason}")
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a cylinder pair was accepted by the GPU backend"),
    }
}

/// The GPU backend through the facade (needs an adapter; CI has lavapipe).
#[test]
fn gpu_runs_the_pendulum() {
    if std::env::var("AXION_GPU_TESTS").is_ok_and(|v| v == "skip") {
        return;
    }
    let mut sim = Simulator::new(scenes::pendulum().unwrap(), 3, 0.01, BackendChoice::Gpu)
        .unwrap_or_else(|e| panic!("{e} (set AXION_GPU_TESTS=skip without an adapter)"));
    assert!(sim.backend_name().starts_with("gpu"));
    assert!(sim.backend_reason().starts_with("requested, on "));
    let summary = sim.run(50).unwrap();
    assert_eq!(summary.converged_steps, 50);
    assert!(sim.joint_errors(2).position < 1e-5);
}
