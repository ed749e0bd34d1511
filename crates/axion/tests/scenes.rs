//! Canonical scenes 3, 6 and 7 (docs/canonical-scenes.md) and the torque-free body, at
//! h = 0.01 and 0.05, plus a deliberately impossible system that must say so.

use axion::prelude::*;
use axion::scenes::{self, ChainOptions, ServoJoint};
use axion::{BodyId, DriveId, Integrator};

const STEPS: [f64; 2] = [0.01, 0.05];

fn finite(sim: &Simulator) -> bool {
    (0..sim.model().bodies().len()).all(|b| {
        let q = sim.state().com_pose(0, BodyId(b));
        let u = sim.state().velocity(0, BodyId(b));
        axion::math::pose_coords(&q)
            .iter()
            .chain(u.iter())
            .all(|x| x.is_finite())
    })
}

/// Runs `seconds` and returns (max joint position error, max energy rise over E₀, summary).
fn run_chain(
    options: ChainOptions,
    h: f64,
    integrator: Integrator,
    seconds: f64,
) -> (f64, f64, axion::RunSummary) {
    let settings = SolverSettings {
        integrator,
        ..Default::default()
    };
    let mut sim = Simulator::new(
        scenes::chain(options).unwrap(),
        1,
        h,
        BackendChoice::CpuWith(settings),
    )
    .unwrap();
    let e0 = sim.energy(0).total();
    let (mut err, mut rise) = (0.0f64, f64::NEG_INFINITY);
    let summary = sim
        .run_with((seconds / h).round() as usize, |s| {
            err = err.max(s.joint_errors(0).position);
            rise = rise.max(s.energy(0).total() - e0);
        })
        .unwrap();
    assert!(finite(&sim), "NaN in the chain state");
    (err, rise, summary)
}

#[test]
fn chain_of_20_holds_together_without_gaining_energy() {
    for h in STEPS {
        for integrator in [Integrator::BackwardEuler, Integrator::EnergyMomentum] {
            let (err, rise, s) = run_chain(ChainOptions::default(), h, integrator, 10.0);
            println!(
                "chain h = {h} {integrator:?}: joint error {err:.2e} m, energy rise {rise:.2e} J, {:.2} it/step (max {}), converged {}/{}",
                s.mean_iterations, s.max_iterations, s.converged_steps, s.steps
            );
            assert!(err < 1e-5, "joint error {err}");
            assert!(rise <= 1e-6, "energy gained {rise} J");
            assert_eq!(s.converged_steps, s.steps);
        }
    }
}

#[test]
fn light_chain_carries_a_body_100_times_heavier() {
    for h in STEPS {
        let options = ChainOptions {
            bob_mass: Some(10.0),
            ..Default::default()
        };
        let (err, rise, s) = run_chain(options, h, Integrator::BackwardEuler, 5.0);
        println!(
            "heavy chain h = {h}: joint error {err:.2e} m, energy rise {rise:.2e} J, {:.2} it/step (max {}), converged {}/{}",
            s.mean_iterations, s.max_iterations, s.converged_steps, s.steps
        );
        assert!(err < 1e-5, "joint error {err}");
        assert!(rise <= 1e-6, "energy gained {rise} J");
        assert_eq!(s.converged_steps, s.steps);
    }
}

/// The geometric stiffness ∂(Jᵀλ)/∂q in the Newton matrix is what keeps a heavy body on
/// light links solvable at large steps (docs/step.md, "Newton's method"). Without
/// it (the reference's matrix) the same chain fails to converge at h = 0.05.
#[test]
fn geometric_stiffness_is_what_makes_the_heavy_chain_converge() {
    let options = ChainOptions {
        bob_mass: Some(10.0),
        ..Default::default()
    };
    let run = |geometric_stiffness: bool| {
        let settings = SolverSettings {
            geometric_stiffness,
            ..Default::default()
        };
        let mut sim = Simulator::new(
            scenes::chain(options).unwrap(),
            1,
            0.05,
            BackendChoice::CpuWith(settings),
        )
        .unwrap();
        sim.run(20).unwrap()
    };
    let (with, without) = (run(true), run(false));
    println!(
        "heavy chain h = 0.05, 20 steps: with stiffness {}/20 converged ({:.2} it/step), without {}/20 ({:.2} it/step)",
        with.converged_steps,
        with.mean_iterations,
        without.converged_steps,
        without.mean_iterations
    );
    assert_eq!(with.converged_steps, 20);
    assert!(
        without.converged_steps < 10,
        "the approximate matrix converged {} of 20 steps",
        without.converged_steps
    );
}

/// Momentum form: angular momentum I_w ω is exact, kinetic energy never grows.
#[test]
fn torque_free_body_keeps_angular_momentum() {
    for h in STEPS {
        let mut sim = Simulator::new(
            scenes::torque_free_body().unwrap(),
            1,
            h,
            BackendChoice::Cpu,
        )
        .unwrap();
        let momentum = |s: &Simulator| {
            let b = &s.model().bodies()[0];
            let q = s.state().com_pose(0, BodyId(0));
            b.mass.world_inertia(&q.rotation)
                * axion::math::angular(&s.state().velocity(0, BodyId(0)))
        };
        let (l0, e0) = (momentum(&sim), sim.energy(0).kinetic);
        let (mut dl, mut de) = (0.0f64, f64::NEG_INFINITY);
        let s = sim
            .run_with(1000, |s| {
                dl = dl.max((momentum(s) - l0).norm() / l0.norm());
                de = de.max(s.energy(0).kinetic - e0);
            })
            .unwrap();
        println!(
            "torque-free h = {h}: |ΔL|/|L| ≤ {dl:.2e}, kinetic energy rise {de:.2e} J (of {e0:.3} J), {:.2} it/step",
            s.mean_iterations
        );
        assert!(dl < 1e-9, "angular momentum drift {dl}");
        assert!(de <= 1e-9 * e0, "kinetic energy gained {de}");
        assert_eq!(s.converged_steps, s.steps);
    }
}

/// Canonical scene 6: 100 steps of 1/60 s (and the same 1.67 s at h = 0.01 and 0.05).
#[test]
fn servos_track_their_targets() {
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
    for h in [1.0 / 60.0, 0.01, 0.05] {
        for (joint, drive) in cases {
            let mut sim = Simulator::new(
                scenes::servo(joint, drive).unwrap(),
                1,
                h,
                BackendChoice::Cpu,
            )
            .unwrap();
            let s = sim.run((100.0 / 60.0 / h).round() as usize).unwrap();
            let mj = &sim.model().joints()[0];
            let md = &sim.model().drives()[0];
            let q = sim.state().com_pose(0, BodyId(0));
            let c = axion::constraints::drive::coordinate(
                md.coordinate,
                &mj.joint.frames,
                &md.axis,
                &axion::math::Pose::identity(),
                &q,
            );
            let error = match drive {
                DriveDesc::Position { target, .. } => c.value - target,
                DriveDesc::Velocity { target, .. } => {
                    c.jacobian.dot(
                        &nalgebra::Vector6::zeros(),
                        &sim.state().velocity(0, BodyId(0)),
                    ) - target
                }
                DriveDesc::Force { .. } => unreachable!("the cases are servos"),
            };
            println!(
                "servo {joint:?} {drive:?} h = {h:.4}: error {error:.2e}, {:.2} it/step",
                s.mean_iterations
            );
            assert!(error.abs() < 0.01, "{joint:?} {drive:?}: error {error}");
            assert!(sim.joint_errors(0).position < 1e-9);
            assert_eq!(s.converged_steps, s.steps);
        }
    }
}

/// The small-oscillation period of the pole when the cart, braked by its velocity drive
/// (a damper of gain ke), can still move: the imaginary part of the eigenvalues of
/// (M + m)ẍ + m l θ̈ = −ke ẋ,  m l ẍ + J θ̈ = −m g l θ   (J about the hinge).
fn cartpole_period(m_cart: f64, m_pole: f64, l: f64, j: f64, ke: f64, g: f64) -> f64 {
    // State (ẋ, θ, θ̇); solve the 2×2 mass matrix for (ẍ, θ̈).
    let mass = nalgebra::Matrix2::new(m_cart + m_pole, m_pole * l, m_pole * l, j);
    let inv = mass.try_inverse().unwrap();
    let force_xd = inv * nalgebra::Vector2::new(-ke, 0.0);
    let force_th = inv * nalgebra::Vector2::new(0.0, -m_pole * g * l);
    let a = nalgebra::Matrix3::new(
        force_xd[0],
        force_th[0],
        0.0,
        0.0,
        0.0,
        1.0,
        force_xd[1],
        force_th[1],
        0.0,
    );
    let omega = a
        .complex_eigenvalues()
        .iter()
        .map(|e| e.im.abs())
        .fold(0.0, f64::max);
    2.0 * std::f64::consts::PI / omega
}

/// Canonical scene 7: constraint errors < 1e-6; the cart's mean velocity over whole
/// seconds is its command within 1 % (the swinging pole pushes it back and forth, so
/// the instantaneous velocity is not); after the cart is stopped the pole swings with
/// the period of the linearised cart–pole (within 1 %).
#[test]
fn cartpole_tracks_and_swings() {
    for h in STEPS {
        let mut sim =
            Simulator::new(scenes::cartpole(1.0).unwrap(), 1, h, BackendChoice::Cpu).unwrap();
        let cart = BodyId(0);
        let pole = BodyId(1);
        let mut worst: f64 = 0.0;
        let y = |s: &Simulator| s.state().com_pose(0, cart).translation.vector.y;
        sim.run_with((2.0 / h).round() as usize, |s| {
            worst = worst.max(s.joint_errors(0).position)
        })
        .unwrap();
        let (t0, y0) = (sim.time(), y(&sim));
        sim.run_with((6.0 / h).round() as usize, |s| {
            worst = worst.max(s.joint_errors(0).position)
        })
        .unwrap();
        let mean = (y(&sim) - y0) / (sim.time() - t0);
        // Stop the cart; measure the pole's swing.
        sim.control_mut()
            .set_velocity_target(0, DriveId(0), 0.0)
            .unwrap();
        let angle = |s: &Simulator| {
            let p = s.state().com_pose(0, pole).translation.vector
                - s.state().com_pose(0, cart).translation.vector;
            p.y.atan2(-(p.z - 0.2))
        };
        sim.run((3.0 / h).round() as usize).unwrap();
        let mut crossings = Vec::new();
        let mut prev = angle(&sim);
        sim.run_with((12.0 / h).round() as usize, |s| {
            worst = worst.max(s.joint_errors(0).position);
            let a = angle(s);
            if a.signum() != prev.signum() {
                crossings.push(s.time() - s.dt() * a / (a - prev));
            }
            prev = a;
        })
        .unwrap();
        let measured =
            2.0 * (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
        let body = &sim.model().bodies()[1];
        let j = body.mass.inertia()[(0, 0)] + 20.0 * 1.0;
        let expected = cartpole_period(240.0, 20.0, 1.0, j, 1000.0, 9.81);
        println!(
            "cartpole h = {h}: joint error {worst:.2e} m, mean cart velocity {mean:.5} m/s, pole period {measured:.4} s (linearised {expected:.4} s)"
        );
        assert!(worst < 1e-6, "joint error {worst}");
        assert!((mean - 1.0).abs() < 0.01, "mean cart velocity {mean}");
        assert!(
            (measured / expected - 1.0).abs() < 0.01,
            "pole period {measured} vs {expected}"
        );
    }
}

/// Two welds pulling one body to two places: no state satisfies them. The step says
/// so in its statistics and leaves a finite state.
#[test]
fn impossible_system_reports_non_convergence() {
    for h in STEPS {
        let mut sim =
            Simulator::new(scenes::impossible().unwrap(), 1, h, BackendChoice::Cpu).unwrap();
        for _ in 0..10 {
            let report = sim.step().unwrap().clone();
            let stats = report.worlds[0];
            assert!(
                !stats.converged,
                "an impossible system reported convergence: {stats:?}"
            );
            assert!(stats.joints > 1e-3, "joint residual {}", stats.joints);
            assert!(finite(&sim), "NaN state");
        }
        println!("impossible h = {h}: {:?}", sim.last_report().worlds[0]);
    }
}

/// Inputs a step cannot use are typed errors, and leave the state as it was.
#[test]
fn bad_step_inputs_are_errors() {
    use axion::{SimError, StepError};
    assert!(matches!(
        Simulator::new(scenes::pendulum().unwrap(), 1, -0.01, BackendChoice::Cpu),
        Err(SimError::Step(StepError::InvalidTimeStep { .. }))
    ));
    assert!(matches!(
        Simulator::new(scenes::pendulum().unwrap(), 0, 0.01, BackendChoice::Cpu),
        Err(SimError::Model(axion::ModelError::NoWorlds))
    ));
    // A degenerate convex hull (points on a line) is refused when the body is added.
    let mut b = axion::ModelBuilder::new();
    let line = axion::Geometry::ConvexHull {
        points: (0..4).map(|i| nalgebra::Vector3::x() * i as f64).collect(),
    };
    let err = b
        .add_body(axion::BodyDesc::fixed("rail").shape(axion::ShapeDesc::from_geometry(line)))
        .expect_err("degenerate hull");
    assert!(
        matches!(err, axion::ModelError::InvalidShape { .. })
            && err.to_string().contains("rail")
            && err.to_string().contains("coplanar"),
        "{err}"
    );
    let mut sim =
        Simulator::new(scenes::pendulum().unwrap(), 2, 0.01, BackendChoice::Auto).unwrap();
    assert!(sim.backend_reason().contains("auto"));
    sim.state_mut()
        .set_velocity(1, BodyId(0), nalgebra::Vector6::repeat(f64::NAN));
    let before = sim.state().clone();
    let err = sim.step().unwrap_err();
    assert!(
        matches!(
            err,
            SimError::Step(StepError::NonFiniteInput {
                world: 1,
                index: 0,
                ..
            })
        ),
        "{err}"
    );
    // Untouched (compared where NaN != NaN cannot interfere).
    assert_eq!(sim.state().world_poses(0), before.world_poses(0));
    assert_eq!(sim.state().time(), 0.0);
    sim.state_mut()
        .set_velocity(1, BodyId(0), nalgebra::Vector6::zeros());
    sim.control_mut().set_wrench(
        0,
        BodyId(0),
        nalgebra::Vector3::new(f64::INFINITY, 0.0, 0.0),
        nalgebra::Vector3::zeros(),
    );
    assert!(matches!(
        sim.step(),
        Err(SimError::Step(StepError::NonFiniteInput {
            what: "external wrench",
            ..
        }))
    ));
}

/// A batch of worlds steps each world independently: three perturbed copies of the
/// chain (and of a contact scene) in one batch end exactly where each ends alone.
#[test]
fn worlds_of_a_batch_are_independent() {
    for model in [
        scenes::chain(ChainOptions {
            links: 5,
            ..Default::default()
        })
        .unwrap(),
        scenes::stack(3).unwrap(),
    ] {
        let push = |sim: &mut Simulator, world: usize, k: usize| {
            let body = BodyId(model.bodies().len() - 1);
            let v = axion::math::twist(
                nalgebra::Vector3::new(0.1 * k as f64, 0.0, 0.0),
                nalgebra::Vector3::zeros(),
            );
            sim.state_mut().set_velocity(world, body, v);
        };
        let mut batch = Simulator::new(model.clone(), 3, 0.01, BackendChoice::Cpu).unwrap();
        for w in 0..3 {
            push(&mut batch, w, w);
        }
        batch.run(50).unwrap();
        for w in 0..3 {
            let mut alone = Simulator::new(model.clone(), 1, 0.01, BackendChoice::Cpu).unwrap();
            push(&mut alone, 0, w);
            alone.run(50).unwrap();
            assert_eq!(
                batch.state().world_poses(w),
                alone.state().world_poses(0),
                "world {w}"
            );
            assert_eq!(
                batch.state().world_velocities(w),
                alone.state().world_velocities(0),
                "world {w}"
            );
        }
    }
}
