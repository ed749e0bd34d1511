//! Joint damping (URDF `<dynamics damping>`, a scene's `damping`): an implicit damper
//! λ = −d q̇ on the joint coordinate.

use axion::prelude::*;
use axion::{JointDynamics, Model};
use nalgebra::{Matrix3, Vector3};

/// A wheel (I = 0.2 kg·m² about z) on a hinge at its centre, no gravity, spinning at
/// 5 rad/s, with damping `d` on the hinge.
fn wheel(d: f64) -> Model {
    let mut b = ModelBuilder::new();
    b.gravity(Vector3::zeros()).unwrap();
    let wheel = b
        .add_body(
            BodyDesc::dynamic("wheel")
                .mass(
                    3.0,
                    Vector3::zeros(),
                    Matrix3::from_diagonal(&Vector3::new(0.1, 0.1, 0.2)),
                )
                .velocity(axion::math::twist(Vector3::zeros(), Vector3::z() * 5.0)),
        )
        .unwrap();
    b.add_joint(
        JointDesc::new(
            "axle",
            JointType::Revolute { axis: Vector3::z() },
            None,
            wheel,
        )
        .dynamics(JointDynamics {
            damping: d,
            ..JointDynamics::default()
        }),
    )
    .unwrap();
    b.build().unwrap()
}

/// Backward Euler on I ω̇ = −d ω gives exactly ω_n = ω₀ (1 + h d / I)^−n; the solver
/// reproduces it to 1e-9 relative over 1 s at both time steps, and without damping the
/// wheel keeps its speed.
#[test]
fn a_damped_hinge_decays_as_implicit_euler_says() {
    for h in [0.01, 0.05] {
        let model = wheel(0.5);
        assert!(model.joints()[0].damper.is_some());
        let mut sim = Simulator::new(model, 1, h, BackendChoice::Cpu).unwrap();
        let n = (1.0 / h).round() as i32;
        let s = sim.run(n as usize).unwrap();
        let omega = sim.state().velocity(0, BodyId(0))[5];
        let exact = 5.0 / (1.0 + h * 0.5 / 0.2f64).powi(n);
        println!(
            "damped wheel h = {h}: ω = {omega:.12} rad/s after 1 s (discrete {exact:.12}, continuous {:.6}), {}/{} converged",
            5.0 * (-0.5f64 / 0.2).exp(),
            s.converged_steps,
            s.steps
        );
        assert!((omega / exact - 1.0).abs() < 1e-9);
        assert_eq!(s.converged_steps, s.steps);
    }
    let mut free = Simulator::new(wheel(0.0), 1, 0.01, BackendChoice::Cpu).unwrap();
    assert!(free.model().joints()[0].damper.is_none());
    free.run(100).unwrap();
    assert!((free.state().velocity(0, BodyId(0))[5] - 5.0).abs() < 1e-12);
}
