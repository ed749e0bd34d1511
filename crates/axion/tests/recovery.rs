//! Bounded recovery of violations present at the start of a step
//! (`SolverSettings::recovery_speed`, `recovery_rate`): a penetration, a joint's anchors
//! apart or a hinge past its range close at the set speed, not in one step; a state
//! without violations steps exactly as without the bound.

use axion::{BackendChoice, BodyId, Simulator, SolverSettings, parse_scene};

const H: f64 = 0.01;

/// How closely a recovering contact or limit follows its target: the smoothed
/// Fischer–Burmeister row holds a loaded contact open by $\varepsilon^2/(2 r_n\lambda_n)$
/// (docs/constraints.md), here about 5e-10 m per step, which adds up over the steps.
const FB_FLOAT: f64 = 1e-8;

fn simulator(scene: &str, settings: SolverSettings) -> Simulator {
    let model = parse_scene(scene).expect("a valid scene").model;
    Simulator::new(model, 1, H, BackendChoice::CpuWith(settings)).expect("a simulator")
}

fn com(sim: &Simulator, body: usize) -> nalgebra::Vector3<f64> {
    sim.state().com_pose(0, BodyId(body)).translation.vector
}

fn speed(sim: &Simulator, body: usize) -> f64 {
    sim.state()
        .velocity(0, BodyId(body))
        .fixed_rows::<3>(0)
        .norm()
}

/// A 0.2 m box placed 5 cm into the ground. Body 1 is the box. (Gravity keeps the
/// contact loaded while it recovers: an unloaded smoothed Fischer–Burmeister contact may
/// open by up to its smoothing length, 1e-6 m, per step.)
const SUNK_BOX: &str = r#"
[[bodies]]
name = "ground"
kind = "static"
shapes = [{ type = "half-space", normal = [0, 0, 1] }]
[[bodies]]
name = "box"
position = [0, 0, 0.05]
shapes = [{ type = "box", half_extents = [0.1, 0.1, 0.1], density = 1000 }]
"#;

/// The box rises at exactly the recovery speed until it reaches the surface (depth
/// 0.05 − v h n after n steps), never faster; without the bound it left at
/// 0.05 m / h = 5 m/s in the first step.
#[test]
fn a_sunk_box_rises_at_the_recovery_speed() {
    let settings = SolverSettings::default();
    let v = settings.recovery_speed;
    let mut sim = simulator(SUNK_BOX, settings);
    let mut fastest = 0.0f64;
    for n in 1..=9 {
        let s = sim.run(1).unwrap();
        assert_eq!(s.converged_steps, 1, "step {n}");
        let depth = 0.1 - com(&sim, 1).z;
        let expected = 0.05 - v * H * n as f64;
        assert!(
            (depth - expected).abs() < FB_FLOAT,
            "step {n}: depth {depth} vs {expected}"
        );
        fastest = fastest.max(speed(&sim, 1));
    }
    assert!(fastest <= v + FB_FLOAT / H, "rose at {fastest} m/s");

    let unbounded = SolverSettings {
        recovery_speed: f64::INFINITY,
        ..SolverSettings::default()
    };
    let mut sim = simulator(SUNK_BOX, unbounded);
    sim.run(1).unwrap();
    assert!((speed(&sim, 1) - 0.05 / H).abs() < 1e-6);
}

/// A ball on a ball joint whose anchors start 0.2 m apart along x, no gravity: the
/// anchors close by exactly recovery_speed × h per step, and the body moves no faster.
#[test]
fn a_joint_whose_anchors_start_apart_closes_at_the_recovery_speed() {
    let scene = r#"
[simulation]
gravity = [0, 0, 0]
[[bodies]]
name = "ball"
position = [1.2, 0, 1]
shapes = [{ type = "sphere", radius = 0.1, density = 1000 }]
[[joints]]
name = "pin"
type = "ball"
child = "ball"
parent_anchor = [0, 0, 1]
child_anchor = [-1, 0, 0]
"#;
    let settings = SolverSettings::default();
    let v = settings.recovery_speed;
    let mut sim = simulator(scene, settings);
    for n in 1..=50 {
        let s = sim.run(1).unwrap();
        assert_eq!(s.converged_steps, 1, "step {n}");
        let gap = com(&sim, 0).x - 1.0;
        let expected = (0.2 - v * H * n as f64).max(0.0);
        assert!(
            (gap - expected).abs() < 1e-9,
            "step {n}: anchors {gap} apart, expected {expected}"
        );
        assert!(speed(&sim, 0) <= v + 1e-9);
    }
}

/// A hinge started 0.5 rad past its upper bound, gravity pushing it further, returns
/// at the recovery rate: 0.5 − ω h n past it after n steps.
#[test]
fn a_hinge_past_its_range_returns_at_the_recovery_rate() {
    let scene = r#"
[[bodies]]
name = "arm"
position = [0, 0, 0]
rotation = [0, 1.0, 0]
shapes = [{ type = "box", half_extents = [0.5, 0.05, 0.05], density = 1000 }]
[[joints]]
name = "hinge"
type = "revolute"
child = "arm"
axis = [0, 1, 0]
parent_anchor = [0, 0, 0]
child_anchor = [-0.5, 0, 0]
range = [-0.5, 0.5]
"#;
    let settings = SolverSettings::default();
    let rate = settings.recovery_rate;
    let mut sim = simulator(scene, settings);
    for n in 1..=24 {
        let s = sim.run(1).unwrap();
        assert_eq!(s.converged_steps, 1, "step {n}");
        let angle = sim.joint_motion(0, axion::JointId(0)).unwrap().position;
        let expected = 0.5 + 0.5 - rate * H * n as f64;
        assert!(
            (angle - expected).abs() < FB_FLOAT,
            "step {n}: angle {angle} vs {expected}"
        );
    }
}

/// Where nothing is violated at the start of a step the bound changes nothing: the
/// double pendulum swinging and a box stack settling are bit for bit the same with the
/// bound and without it.
#[test]
fn the_bound_leaves_satisfied_constraints_exact() {
    for model in [
        axion::scenes::double_pendulum().unwrap(),
        axion::scenes::stack(3).unwrap(),
    ] {
        let run = |settings: SolverSettings| {
            let mut sim = Simulator::new(model.clone(), 1, H, BackendChoice::CpuWith(settings))
                .expect("a simulator");
            sim.run(200).unwrap();
            sim.state().clone()
        };
        let bounded = run(SolverSettings::default());
        let unbounded = run(SolverSettings {
            recovery_speed: f64::INFINITY,
            recovery_rate: f64::INFINITY,
            ..SolverSettings::default()
        });
        assert_eq!(bounded, unbounded);
    }
}
