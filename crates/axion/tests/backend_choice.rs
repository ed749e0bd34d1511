//! Backend choice: `Auto` takes the CPU for small batches, software adapters and models
//! the GPU cannot run, and says why; `Gpu` is an error where the GPU cannot run.

#![cfg(feature = "gpu")]

use axion::constraints::drive::Drive;
use axion::prelude::*;
use axion::{DriveId, Geometry, GpuError, Model, SimError, auto_gpu_min_worlds, scenes};

/// A convex hull resting on a box, a shape pair without a device narrow phase.
fn hull_on_box() -> Model {
    let cube: Vec<_> = (0..8)
        .map(|k| {
            let s = |bit: u32| if k & (1 << bit) == 0 { -0.1 } else { 0.1 };
            nalgebra::Vector3::new(s(0), s(1), s(2))
        })
        .collect();
    let block = Shape::Box {
        half_extents: nalgebra::Vector3::repeat(0.1),
    };
    let mut b = ModelBuilder::new();
    for (name, z) in [("lower", 0.0), ("upper", 0.2)] {
        let geometry = if name == "lower" {
            Geometry::Solid(block)
        } else {
            Geometry::ConvexHull {
                points: cube.clone(),
            }
        };
        b.add_body(
            BodyDesc::dynamic(name)
                .at(nalgebra::Vector3::new(0.0, 0.0, z))
                .mass(1.0, nalgebra::Vector3::zeros(), block.unit_inertia(1.0))
                .shape(ShapeDesc::from_geometry(geometry)),
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
    // Convex hulls are CPU-only.
    let model = hull_on_box();
    let sim = Simulator::new(model, auto_gpu_min_worlds(), 0.01, BackendChoice::Auto).unwrap();
    assert!(sim.backend_name().starts_with("cpu"));
    assert!(
        sim.backend_reason().contains("convex hull"),
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
        auto_gpu_min_worlds(),
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
    match Simulator::new(hull_on_box(), 4, 0.01, BackendChoice::Gpu) {
        Err(SimError::Gpu(GpuError::UnsupportedModel { reason })) => {
            assert!(reason.contains("'upper'"), "{reason}")
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a convex hull was accepted by the GPU backend"),
    }
}

/// The GPU backend through the facade (needs an adapter; CI has lavapipe).
#[test]
fn gpu_runs_the_pendulum() {
    if !axion::device_tests_run("gpu_runs_the_pendulum") {
        return;
    }
    let mut sim = Simulator::new(scenes::pendulum().unwrap(), 3, 0.01, BackendChoice::Gpu)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(sim.backend_name().starts_with("gpu"));
    assert!(sim.backend_reason().starts_with("requested, on "));
    let summary = sim.run(50).unwrap();
    assert_eq!(summary.converged_steps, 50);
    assert!(sim.joint_errors(2).position < 1e-5);
}

/// What the GPU backend does not implement is refused, never ignored: per-world
/// friction or masses at the step, a force-limited drive, a drive that exerts a force.
#[test]
fn gpu_refuses_per_world_parameters_and_force_limits() {
    if !axion::device_tests_run("gpu_refuses_per_world_parameters_and_force_limits") {
        return;
    }
    let mut sim = Simulator::new(
        scenes::incline(0.3, 0.5).unwrap(),
        2,
        0.01,
        BackendChoice::Gpu,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    sim.step().unwrap();
    sim.control_mut().set_friction(1, Some(0.1)).unwrap();
    let err = sim.step().unwrap_err().to_string();
    assert!(err.contains("per-world friction and masses"), "{err}");
    let servo = DriveDesc::Velocity {
        target: 1.0,
        ke: 100.0,
    };
    let model = scenes::servo(scenes::ServoJoint::Prismatic, servo).unwrap();
    let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::Gpu).unwrap();
    let limited = sim
        .control()
        .drive(0, DriveId(0))
        .with_max_force(5.0)
        .unwrap();
    sim.control_mut().set_drive(0, DriveId(0), limited).unwrap();
    let err = sim.step().unwrap_err().to_string();
    assert!(err.contains("force limit"), "{err}");
    // A force (a force drive's, or a servo's feed-forward) is refused too.
    sim.control_mut()
        .set_drive(0, DriveId(0), Drive::velocity(1.0, 100.0).unwrap())
        .unwrap();
    sim.control_mut()
        .set_drive_force(0, DriveId(0), 2.0)
        .unwrap();
    let err = sim.step().unwrap_err().to_string();
    assert!(err.contains("exerts a force"), "{err}");

    let drive = DriveDesc::Velocity {
        target: 1.0,
        ke: 100.0,
    };
    let mut b = ModelBuilder::new();
    b.gravity(nalgebra::Vector3::zeros()).unwrap();
    let body = b
        .add_body(BodyDesc::dynamic("cube").mass(
            1.0,
            nalgebra::Vector3::zeros(),
            nalgebra::Matrix3::identity(),
        ))
        .unwrap();
    b.add_joint(
        JointDesc::new(
            "slider",
            JointType::Prismatic {
                axis: nalgebra::Vector3::x(),
            },
            None,
            body,
        )
        .limits(axion::JointLimits {
            lower: f64::NEG_INFINITY,
            upper: f64::INFINITY,
            effort: 5.0,
            velocity: f64::INFINITY,
        })
        .drive(drive),
    )
    .unwrap();
    match Simulator::new(b.build().unwrap(), 1, 0.01, BackendChoice::Gpu) {
        Err(SimError::Gpu(GpuError::UnsupportedModel { reason })) => {
            assert!(
                reason.contains("force limit") && reason.contains("slider"),
                "{reason}"
            )
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a force-limited drive must be refused on the GPU"),
    }
}
