//! The chord steps of `SolverSettings::reuse_factors`: a step continuing one with the
//! same rows first tries the Newton direction from the factors the world kept (taken
//! where it lowers the merit ½|F|², tried again while each contracts it a hundredfold),
//! and a step whose iterations contract quadratically ends with a chord step on the
//! factors of its last iteration (taken only if it converges). They change how a
//! converged step is reached, not what it converges to: two cubes resting on each other
//! on the ground and a swinging chain follow the same motion (to the solver's
//! tolerances) with and without them, and the chain factorizes its Newton system once
//! a step instead of three times.

use axion::scenes::{ChainOptions, chain};
use axion::{BackendChoice, BodyId, Model, Simulator, SolverSettings, scenes};

/// 150 steps of two stacked unit cubes settling on the ground: each step's cube
/// positions (m) and whether every step converged.
fn settle(reuse_factors: bool) -> (Vec<[f64; 6]>, bool) {
    let settings = SolverSettings {
        reuse_factors,
        threads: 1,
        ..Default::default()
    };
    let mut sim = Simulator::new(
        scenes::stack(2).unwrap(),
        1,
        0.01,
        BackendChoice::CpuWith(settings),
    )
    .unwrap();
    let mut positions = Vec::new();
    let summary = sim
        .run_with(150, |s| {
            let p = |b: usize| s.state().com_pose(0, BodyId(b)).translation.vector;
            let (a, b) = (p(1), p(2));
            positions.push([a.x, a.y, a.z, b.x, b.y, b.z]);
        })
        .unwrap();
    (positions, summary.converged_steps == summary.steps)
}

/// The largest difference between two runs' positions, step by step (m).
fn largest_difference<T: AsRef<[f64]>>(a: &[T], b: &[T]) -> f64 {
    a.iter()
        .zip(b)
        .flat_map(|(a, b)| {
            a.as_ref()
                .iter()
                .zip(b.as_ref())
                .map(|(x, y)| (x - y).abs())
        })
        .fold(0.0, f64::max)
}

#[test]
fn chord_steps_reach_the_same_motion() {
    let (with, with_converged) = settle(true);
    let (without, without_converged) = settle(false);
    assert!(with_converged && without_converged, "every step converges");
    // Each step converges its contacts to 1e-8 m/s (its dynamics to 1e-10 m/s), so two
    // converged runs of 150 steps of 0.01 s may differ by 1.5e-8 m; the chord steps must
    // not add to that.
    let apart = largest_difference(&with, &without);
    assert!(apart <= 1.5e-8, "positions apart by {apart:e} m");
    // The chord steps ran: converged by them, the steps are not bit for bit Newton's.
    assert_ne!(with, without, "no chord step was taken");
}

/// What [`run`] measures.
struct Run {
    /// Each step's body positions (m).
    positions: Vec<Vec<f64>>,
    /// The largest joint error (m).
    joint_error: f64,
    /// Whether every step converged.
    converged: bool,
    /// Newton iterations, and of them chord steps, over the steps after the first ten.
    iterations: usize,
    chord_steps: usize,
}

/// `steps` steps of `model` at h = 0.01 on one thread.
fn run(model: Model, steps: usize, reuse_factors: bool) -> Run {
    let settings = SolverSettings {
        reuse_factors,
        threads: 1,
        ..Default::default()
    };
    let bodies = model.bodies().len();
    let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::CpuWith(settings)).unwrap();
    let mut positions = Vec::new();
    let mut joint_error: f64 = 0.0;
    let mut converged = true;
    let (mut iterations, mut chord_steps) = (0, 0);
    for step in 0..steps {
        let stats = sim.step().unwrap().worlds[0];
        converged &= stats.converged;
        if step >= 10 {
            iterations += stats.iterations;
            chord_steps += stats.chord_steps;
        }
        joint_error = joint_error.max(sim.joint_errors(0).position);
        positions.push(
            (0..bodies)
                .flat_map(|b| {
                    let p = sim.state().com_pose(0, BodyId(b)).translation.vector;
                    [p.x, p.y, p.z]
                })
                .collect(),
        );
    }
    Run {
        positions,
        joint_error,
        converged,
        iterations,
        chord_steps,
    }
}

#[test]
fn a_swinging_chain_factorizes_about_once_a_step() {
    // Ten links released 45° off vertical, swinging for a second: from the velocities
    // of the step before, each step's residual is about 0.1 m/s, and without kept
    // factors a step takes three full Newton iterations (3.0 a step, measured). The
    // factors kept from the step before contract that residual a hundredfold or more,
    // so a step starts with chord steps and one full iteration follows (1.0, measured;
    // the positions of the two runs 4e-12 m apart).
    let model = || {
        chain(ChainOptions {
            links: 10,
            ..Default::default()
        })
        .unwrap()
    };
    let steps = 100;
    let with = run(model(), steps, true);
    let without = run(model(), steps, false);
    assert!(with.converged && without.converged, "every step converges");
    assert_eq!(without.chord_steps, 0, "no chord step without kept factors");
    let factorized = |r: &Run| (r.iterations - r.chord_steps) as f64 / (steps - 10) as f64;
    assert!(
        factorized(&without) >= 2.0,
        "without kept factors a step factorizes {} times",
        factorized(&without)
    );
    assert!(
        factorized(&with) <= 1.2,
        "with kept factors a step factorizes {} times",
        factorized(&with)
    );
    // Each step converges its dynamics to 1e-10 m/s and its joints to 1e-11 m, so two
    // converged runs of 100 steps of 0.01 s may differ by 1e-10 m.
    let apart = largest_difference(&with.positions, &without.positions);
    assert!(apart <= 1e-10, "positions apart by {apart:e} m");
    assert!(
        with.joint_error <= 1e-11 && without.joint_error <= 1e-11,
        "joint errors {:e} / {:e} m",
        with.joint_error,
        without.joint_error
    );
}
