//! The GPU step against the CPU reference on the canonical joint scenes: positions
//! within 1e-3 m after 1 s, joint errors at f32 level, steps converged.

mod common;

use axion::scenes::{self, ChainOptions, ServoJoint};
use axion_cpu::CpuBackend;
use axion_gpu::GpuSettings;
use axion_model::{Backend, BodyId, Control, DriveDesc, State, measure};

#[test]
fn pendulum_matches_cpu() {
    let model = scenes::pendulum().unwrap();
    if let Some(p) = common::run("pendulum h=0.01", &model, 0.01, 1.0) {
        common::check(&p, "pendulum");
    }
}

#[test]
fn chain_matches_cpu() {
    let model = scenes::chain(ChainOptions::default()).unwrap();
    if let Some(p) = common::run("chain (20 links) h=0.01", &model, 0.01, 1.0) {
        common::check(&p, "chain");
    }
}

#[test]
fn servos_match_cpu() {
    use std::f64::consts::FRAC_PI_2;
    let cases = [
        (
            ServoJoint::Revolute,
            DriveDesc::Position {
                target: FRAC_PI_2,
                target_velocity: 0.0,
                ke: 1000.0,
                kd: 100.0,
            },
        ),
        (
            ServoJoint::Revolute,
            DriveDesc::Velocity {
                target: 1.0,
                ke: 1000.0,
            },
        ),
        (
            ServoJoint::Prismatic,
            DriveDesc::Position {
                target: 1.0,
                target_velocity: 0.0,
                ke: 500.0,
                kd: 50.0,
            },
        ),
        (
            ServoJoint::Prismatic,
            DriveDesc::Velocity {
                target: 0.5,
                ke: 100.0,
            },
        ),
    ];
    for (joint, drive) in cases {
        let model = scenes::servo(joint, drive).unwrap();
        let name = format!("servo {joint:?} {drive:?} h=1/60");
        if let Some(p) = common::run(&name, &model, 1.0 / 60.0, 1.0) {
            common::check(&p, &name);
        }
    }
}

#[test]
fn cartpole_matches_cpu() {
    // A prismatic velocity drive on the cart, a hinge with a dynamic parent.
    let model = scenes::cartpole(1.0).unwrap();
    if let Some(p) = common::run("cartpole h=0.01", &model, 0.01, 1.0) {
        common::check(&p, "cartpole");
    }
}

#[test]
fn double_pendulum_matches_cpu() {
    let model = scenes::double_pendulum().unwrap();
    if let Some(p) = common::run("double pendulum h=0.01", &model, 0.01, 1.0) {
        common::check(&p, "double pendulum");
    }
}

/// Every joint kind, a static parent that is a body (not the world), a centre of mass
/// off the reference frame, a compliant joint and an external wrench.
#[test]
fn mixed_joints_with_a_wrench_match_cpu() {
    use axion_model::{BodyDesc, JointDesc, JointType, ModelBuilder};
    use nalgebra::{Isometry3, Matrix3, Vector3};
    let mut b = ModelBuilder::new();
    let inertia = |m: f64| Matrix3::from_diagonal(&Vector3::new(0.02, 0.03, 0.04)) * m;
    let base = b
        .add_body(BodyDesc::fixed("base").at(Vector3::new(0.1, -0.2, 1.0)))
        .unwrap();
    let a = b
        .add_body(
            BodyDesc::dynamic("a")
                .at(Vector3::new(0.1, -0.2, 0.6))
                .mass(1.0, Vector3::new(0.02, 0.0, -0.01), inertia(1.0)),
        )
        .unwrap();
    let c = b
        .add_body(
            BodyDesc::dynamic("c")
                .at(Vector3::new(0.4, -0.2, 0.6))
                .mass(0.5, Vector3::zeros(), inertia(0.5)),
        )
        .unwrap();
    let d = b
        .add_body(
            BodyDesc::dynamic("d")
                .at(Vector3::new(0.7, -0.2, 0.6))
                .mass(0.3, Vector3::zeros(), inertia(0.3)),
        )
        .unwrap();
    b.add_joint(
        JointDesc::new("ball", JointType::Ball, Some(base), a).frames(
            Isometry3::translation(0.0, 0.0, -0.2),
            Isometry3::translation(0.0, 0.0, 0.2),
        ),
    )
    .unwrap();
    b.add_joint(
        JointDesc::new("weld", JointType::Fixed, Some(a), c)
            .frames(
                Isometry3::translation(0.15, 0.0, 0.0),
                Isometry3::translation(-0.15, 0.0, 0.0),
            )
            .compliance(1e-4),
    )
    .unwrap();
    b.add_joint(
        JointDesc::new(
            "slide",
            JointType::Prismatic {
                axis: Vector3::new(1.0, 0.2, 0.0),
            },
            Some(c),
            d,
        )
        .frames(
            Isometry3::translation(0.15, 0.0, 0.0),
            Isometry3::translation(-0.15, 0.0, 0.0),
        )
        .drive(DriveDesc::Position {
            target: 0.1,
            target_velocity: 0.0,
            ke: 200.0,
            kd: 5.0,
        }),
    )
    .unwrap();
    let model = b.build().unwrap();
    let Some(mut gpu) = common::backend(&model, 1, GpuSettings::default()) else {
        return;
    };
    let mut cpu = CpuBackend::default();
    let mut s_cpu = State::new(&model, 1).unwrap();
    let mut s_gpu = s_cpu.clone();
    let mut control = Control::new(&model, 1);
    control.set_wrench(
        0,
        BodyId(3),
        Vector3::new(0.5, 1.0, 0.0),
        Vector3::new(0.0, 0.0, 0.05),
    );
    let mut converged = 0;
    for _ in 0..100 {
        assert!(
            cpu.step(&model, &mut s_cpu, &control, 0.01)
                .unwrap()
                .all_converged()
        );
        converged += usize::from(
            gpu.step(&model, &mut s_gpu, &control, 0.01)
                .unwrap()
                .all_converged(),
        );
    }
    let mut worst: f64 = 0.0;
    for body in 0..4 {
        let (qc, qg) = (
            s_cpu.com_pose(0, BodyId(body)),
            s_gpu.com_pose(0, BodyId(body)),
        );
        worst = worst.max((qc.translation.vector - qg.translation.vector).norm());
    }
    let e = measure::joint_errors(&model, &s_gpu, 0);
    println!(
        "mixed joints h=0.01: |Δx| {worst:.2e} m after 1 s; GPU joint errors {:.2e} m, {:.2e} rad; converged {converged}/100",
        e.position, e.orientation
    );
    assert!(worst <= 1e-3, "position differs by {worst} m");
    assert_eq!(converged, 100);
}

/// A step that cannot converge says so.
#[test]
fn impossible_system_reports_non_convergence() {
    let model = scenes::impossible().unwrap();
    let Some(mut gpu) = common::backend(&model, 2, GpuSettings::default()) else {
        return;
    };
    let mut state = State::new(&model, 2).unwrap();
    let report = gpu
        .step(&model, &mut state, &Control::new(&model, 2), 0.01)
        .unwrap();
    for s in &report.worlds {
        assert!(!s.converged, "{s:?}");
        assert!(s.joints > 1e-3, "{s:?}");
    }
}

/// Joint damping (an implicit damper, λ = −d q̇, carried as a velocity drive): the
/// pendulum with d = 0.5 N·m·s/rad on its hinge.
#[test]
fn damped_pendulum_matches_cpu() {
    use axion_model::JointDynamics;
    let model = scenes::pendulum_with(|hinge| {
        hinge.dynamics(JointDynamics {
            damping: 0.5,
            ..JointDynamics::default()
        })
    })
    .unwrap();
    assert!(model.joints()[0].damper.is_some());
    if let Some(p) = common::run("damped pendulum h=0.01", &model, 0.01, 1.0) {
        common::check(&p, "damped pendulum");
    }
}

/// Armature (λ = −a(q̇⁺ − q̇⁻)/h, a drive starting from the joint's rate) beside a force
/// drive at zero force: the pendulum with a = 0.3 kg·m² on its hinge swings slower, as
/// on the CPU.
#[test]
fn pendulum_with_armature_matches_cpu() {
    use axion_model::{DriveDesc, JointDynamics};
    let model = scenes::pendulum_with(|hinge| {
        hinge
            .dynamics(JointDynamics {
                armature: 0.3,
                ..JointDynamics::default()
            })
            .drive(DriveDesc::Force { force: 0.0 })
    })
    .unwrap();
    assert!(model.joints()[0].armature.is_some());
    if let Some(p) = common::run("pendulum with armature h=0.01", &model, 0.01, 1.0) {
        common::check(&p, "pendulum with armature");
    }
}

/// A 100-kg bob hung from the world by two capsules of 10 g, released 0.1 rad off the
/// vertical, at h = 0.02 s. Each link's dynamics residual sums joint impulses of about
/// 20 N·s, 2000 m/s in the residual's velocity units, whose f32 rounding alone is about
/// the velocity tolerance of 1e-4 m/s: without the rounding floor of the convergence test
/// (`ROUNDING_FLOOR` in step.wgsl), 4 of the 50 steps stall at about 1.9e-4 m/s and are
/// reported unconverged. With it every step converges and the bob swings as on the CPU.
#[test]
fn a_heavy_bob_on_light_links_matches_cpu() {
    let model = scenes::chain(ChainOptions {
        links: 2,
        link_mass: 0.01,
        bob_mass: Some(100.0),
        angle: 0.1,
        ..ChainOptions::default()
    })
    .unwrap();
    if let Some(p) = common::run("heavy bob on light links h=0.02", &model, 0.02, 1.0) {
        common::check(&p, "heavy bob on light links");
    }
}
