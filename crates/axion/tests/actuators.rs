//! Joint forces (force drives: MuJoCo's `motor`; feed-forward forces on servos) and
//! armature, against their analytic answers.

use axion::constraints::drive::{Drive, DriveMode};
use axion::prelude::*;
use axion::{ControlError, DriveId, Integrator, JointDynamics, JointId, Model, SolverSettings};
use nalgebra::{Matrix3, Vector3};

const INTEGRATORS: [Integrator; 2] = [Integrator::BackwardEuler, Integrator::EnergyMomentum];

fn cpu(integrator: Integrator) -> BackendChoice {
    BackendChoice::CpuWith(SolverSettings {
        integrator,
        ..SolverSettings::default()
    })
}

/// A box of 2 kg (inertia diag(0.1, 0.2, 0.3) about its centre) on a hinge about the
/// world's z axis through its centre; no gravity; a force drive and, if
/// `armature > 0`, an armature on the hinge.
fn turntable(armature: f64) -> Model {
    let mut b = ModelBuilder::new();
    b.gravity(Vector3::zeros()).unwrap();
    let arm = b
        .add_body(BodyDesc::dynamic("arm").mass(
            2.0,
            Vector3::zeros(),
            Matrix3::from_diagonal(&Vector3::new(0.1, 0.2, 0.3)),
        ))
        .unwrap();
    b.add_joint(
        JointDesc::new(
            "hinge",
            JointType::Revolute { axis: Vector3::z() },
            None,
            arm,
        )
        .drive(DriveDesc::Force { force: 0.0 })
        .dynamics(JointDynamics {
            armature,
            ..JointDynamics::default()
        }),
    )
    .unwrap();
    b.build().unwrap()
}

/// About a fixed axis through the body's centre, $(I_{zz} + a)\dot\omega = \tau$ (the
/// armature $a$ adds to the inertia): both integrators give exactly
/// $\omega_n = n h \tau / (I_{zz} + a)$, and the drive reports $\lambda = \tau$; a largest
/// force $F < \tau$ gives $n h F / (I_{zz} + a)$.
#[test]
fn a_joint_torque_spins_a_hinge_as_newton_says() {
    let (h, n, tau) = (0.01, 50, 1.5);
    for integrator in INTEGRATORS {
        for armature in [0.0, 0.25] {
            let inertia = 0.3 + armature;
            let mut sim = Simulator::new(turntable(armature), 1, h, cpu(integrator)).unwrap();
            let drive = sim.model().joints()[0].drive.unwrap();
            assert_eq!(sim.model().joints()[0].armature.is_some(), armature > 0.0);
            sim.control_mut().set_drive_force(0, drive, tau).unwrap();
            let s = sim.run(n).unwrap();
            assert_eq!(s.converged_steps, s.steps);
            let omega = sim.joint_motion(0, JointId(0)).unwrap().velocity;
            let exact = n as f64 * h * tau / inertia;
            println!(
                "{integrator:?}, armature {armature}: ω = {omega:.15} rad/s, exact {exact:.15}"
            );
            assert!((omega / exact - 1.0).abs() < 1e-9, "{omega} vs {exact}");
            assert!((sim.drive_force(0, drive) - tau).abs() < 1e-9 * tau);

            // The same with a largest force of τ/3.
            let limited = Drive::force(tau)
                .unwrap()
                .with_max_force(tau / 3.0)
                .unwrap();
            let mut sim = Simulator::new(turntable(armature), 1, h, cpu(integrator)).unwrap();
            sim.control_mut().set_drive(0, drive, limited).unwrap();
            sim.run(n).unwrap();
            let omega = sim.joint_motion(0, JointId(0)).unwrap().velocity;
            assert!((omega / (exact / 3.0) - 1.0).abs() < 1e-9, "{omega}");
            assert!((sim.drive_force(0, drive) - tau / 3.0).abs() < 1e-9 * tau);
        }
    }
}

/// Two free bodies (1 kg and 3 kg) on a slider, no gravity, pushed apart by a force
/// drive of 6 N: an internal force, so the total momentum stays zero. With the slide
/// through both centres nothing turns and the slide's rate grows by
/// $h F (1/m_1 + 1/m_2)$ per step; with the second body off the line the pair spins
/// and the momentum still stays zero.
#[test]
fn a_joint_force_is_internal() {
    let slider = |side: f64| {
        let mut b = ModelBuilder::new();
        b.gravity(Vector3::zeros()).unwrap();
        let inertia = Matrix3::from_diagonal(&Vector3::new(0.01, 0.02, 0.03));
        let a = b
            .add_body(BodyDesc::dynamic("a").mass(1.0, Vector3::zeros(), inertia))
            .unwrap();
        let offset = Vector3::new(0.3, 0.3 + side, 0.0);
        let c = b
            .add_body(
                BodyDesc::dynamic("c")
                    .mass(3.0, Vector3::zeros(), inertia * 2.0)
                    .pose(nalgebra::Isometry3::translation(offset.x, offset.y, 0.0)),
            )
            .unwrap();
        let axis = Vector3::new(1.0, 1.0, 0.0).normalize();
        b.add_joint(
            JointDesc::new("slide", JointType::Prismatic { axis }, Some(a), c)
                .frames(
                    nalgebra::Isometry3::identity(),
                    nalgebra::Isometry3::translation(-offset.x, -offset.y, 0.0),
                )
                .drive(DriveDesc::Force { force: 6.0 }),
        )
        .unwrap();
        (b.build().unwrap(), a, c)
    };
    for integrator in INTEGRATORS {
        for side in [0.0, 0.2] {
            let (model, a, c) = slider(side);
            let (h, n) = (0.01, 40);
            let mut sim = Simulator::new(model, 1, h, cpu(integrator)).unwrap();
            let s = sim.run(n).unwrap();
            assert_eq!(s.converged_steps, s.steps);
            let (ua, uc) = (sim.state().velocity(0, a), sim.state().velocity(0, c));
            let momentum = ua.fixed_rows::<3>(0) * 1.0 + uc.fixed_rows::<3>(0) * 3.0;
            let rate = sim.joint_motion(0, JointId(0)).unwrap().velocity;
            let exact = n as f64 * h * 6.0 * (1.0 + 1.0 / 3.0);
            println!(
                "{integrator:?}, {side} m off the line: |p| = {:.3e}, q̇ = {rate:.15} (on the line: exactly {exact})",
                momentum.norm()
            );
            assert!(momentum.norm() < 1e-12);
            if side == 0.0 {
                assert!((rate / exact - 1.0).abs() < 1e-9, "{rate} vs {exact}");
            }
        }
    }
}

/// A horizontal arm (0.5 kg at 0.3 m from a hinge about y, gravity −z) held at its
/// target by a servo: without a feed-forward force it sags until the spring carries
/// the weight; with the feed-forward force $-m g d$ (gravity compensation) it stays
/// at the target and the servo's force is the feed-forward force.
#[test]
fn a_feedforward_force_compensates_gravity() {
    let (m, d, g, ke) = (0.5, 0.3, 9.81, 200.0);
    let mut b = ModelBuilder::new();
    let arm = b
        .add_body(
            BodyDesc::dynamic("arm")
                .mass(
                    m,
                    Vector3::zeros(),
                    Matrix3::from_diagonal(&Vector3::new(1e-3, 1e-3, 1e-3)),
                )
                .pose(nalgebra::Isometry3::translation(d, 0.0, 1.0)),
        )
        .unwrap();
    b.add_joint(
        JointDesc::new(
            "shoulder",
            JointType::Revolute { axis: Vector3::y() },
            None,
            arm,
        )
        .frames(
            nalgebra::Isometry3::translation(0.0, 0.0, 1.0),
            nalgebra::Isometry3::translation(-d, 0.0, 0.0),
        )
        .drive(DriveDesc::Position {
            target: 0.0,
            target_velocity: 0.0,
            ke,
            kd: 5.0,
        }),
    )
    .unwrap();
    let model = b.build().unwrap();
    let drive = DriveId(0);
    // Gravity's torque about +y: (d, 0, 0) × (0, 0, −m g) = (0, m g d, 0).
    let gravity_torque = m * g * d;
    for (ff, expect_sag) in [(0.0, true), (-gravity_torque, false)] {
        let mut sim = Simulator::new(model.clone(), 1, 0.01, BackendChoice::Cpu).unwrap();
        sim.control_mut().set_drive_force(0, drive, ff).unwrap();
        sim.run(300).unwrap();
        let q = sim.joint_motion(0, JointId(0)).unwrap().position;
        let force = sim.drive_force(0, drive);
        println!("feed-forward {ff:.4} N·m: q = {q:.3e} rad, drive force {force:.6} N·m");
        if expect_sag {
            // The spring alone: ke q = m g d cos q, q ≈ m g d / ke.
            assert!((q / (gravity_torque / ke) - 1.0).abs() < 0.01, "{q}");
        } else {
            assert!(q.abs() < 1e-10, "{q}");
            assert!((force - ff).abs() < 1e-8, "{force}");
        }
    }
    // A position target keeps the feed-forward force, and the wrong setter names the
    // right one.
    let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::Cpu).unwrap();
    sim.control_mut().set_drive_force(0, drive, 0.7).unwrap();
    sim.control_mut()
        .set_position_target(0, drive, 0.2, 0.0)
        .unwrap();
    assert_eq!(sim.control().drive(0, drive).feedforward(), 0.7);
    let mut motor = Simulator::new(turntable(0.0), 1, 0.01, BackendChoice::Cpu).unwrap();
    let err = motor
        .control_mut()
        .set_position_target(0, DriveId(0), 1.0, 0.0)
        .unwrap_err();
    assert!(matches!(
        err,
        ControlError::WrongDriveMode { mode: "force", .. }
    ));
    assert!(err.to_string().contains("set_drive_force"), "{err}");
    assert!(
        motor
            .control_mut()
            .set_drive_force(0, DriveId(0), f64::NAN)
            .is_err()
    );
    assert!(matches!(
        motor.control().drive(0, DriveId(0)).mode(),
        DriveMode::Force
    ));
}

/// A pendulum (1 kg bob 0.5 m below a hinge) with armature $a$ swings with the period
/// $2\pi\sqrt{(m l^2 + I + a)/(m g l)}\,(1 + \theta_0^2/16)$ (amplitude $\theta_0$ = 0.05
/// rad); measured between zero crossings with the energy–momentum integrator. The
/// armature of 0.1 kg·m² lengthens it by 18 %.
#[test]
fn armature_slows_a_pendulum_as_its_inertia_says() {
    let (m, l, g, i_c) = (1.0, 0.5, 9.81, 1e-3);
    for a in [0.0, 0.1] {
        // Released at rest 0.05 rad from the bottom.
        let tilt = nalgebra::UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 0.05);
        let mut b = ModelBuilder::new();
        let bob = b
            .add_body(
                BodyDesc::dynamic("bob")
                    .mass(m, Vector3::zeros(), Matrix3::identity() * i_c)
                    .pose(nalgebra::Isometry3::from_parts(
                        (tilt * Vector3::new(0.0, 0.0, -l)).into(),
                        tilt,
                    )),
            )
            .unwrap();
        b.add_joint(
            JointDesc::new(
                "pivot",
                JointType::Revolute { axis: Vector3::y() },
                None,
                bob,
            )
            .frames(
                nalgebra::Isometry3::identity(),
                nalgebra::Isometry3::translation(0.0, 0.0, l),
            )
            .dynamics(JointDynamics {
                armature: a,
                ..JointDynamics::default()
            }),
        )
        .unwrap();
        let model = b.build().unwrap();
        let h = 0.001;
        let mut sim = Simulator::new(model, 1, h, cpu(Integrator::EnergyMomentum)).unwrap();
        assert!((sim.joint_motion(0, JointId(0)).unwrap().position - 0.05).abs() < 1e-12);
        let period = 2.0
            * std::f64::consts::PI
            * ((m * l * l + i_c + a) / (m * g * l)).sqrt()
            * (1.0 + 0.05f64.powi(2) / 16.0);
        // Times where q crosses 0 downwards, linearly interpolated.
        let mut crossings = Vec::new();
        let mut last = 0.05;
        for k in 1..=((2.5 * period / h) as usize) {
            sim.step().unwrap();
            let q = sim.joint_motion(0, JointId(0)).unwrap().position;
            if last > 0.0 && q <= 0.0 {
                crossings.push(h * (k as f64 - 1.0 + last / (last - q)));
            }
            last = q;
        }
        let measured = crossings[1] - crossings[0];
        println!("armature {a}: period {measured:.7} s, expected {period:.7} s");
        // The next term of the amplitude series is 11 θ₀⁴/3072 ≈ 2e-8; the step lengthens
        // the period by about (ω h)²/12 ≈ 2e-6.
        assert!(
            (measured / period - 1.0).abs() < 1e-5,
            "{measured} vs {period}"
        );
    }
}
