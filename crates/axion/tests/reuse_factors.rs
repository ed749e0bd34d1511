//! The chord steps of `SolverSettings::reuse_factors`: a step continuing a quiet one
//! first tries the Newton direction from the factors the world kept, and a step whose
//! iterations contract quadratically ends with a chord step on the factors of its last
//! iteration; each is taken only if it converges. They change how a converged step is
//! reached, not what it converges to: two cubes resting on each other on the ground
//! and a swinging chain follow the same motion (to the solver's tolerances) with and
//! without them.

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

/// `steps` steps of `model` at h = 0.01 on one thread: each step's body positions, the
/// largest joint error (m), whether every step converged and the fewest Newton
/// iterations a step took.
fn run(model: Model, steps: usize, reuse_factors: bool) -> (Vec<Vec<f64>>, f64, bool, usize) {
    let settings = SolverSettings {
        reuse_factors,
        threads: 1,
        ..Default::default()
    };
    let bodies = model.bodies().len();
    let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::CpuWith(settings)).unwrap();
    let mut positions = Vec::new();
    let mut joint_error: f64 = 0.0;
    let (mut converged, mut fewest) = (true, usize::MAX);
    for _ in 0..steps {
        let stats = sim.step().unwrap().worlds[0];
        converged &= stats.converged;
        fewest = fewest.min(stats.iterations);
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
    (positions, joint_error, converged, fewest)
}

#[test]
fn a_swinging_chain_ends_its_steps_with_chord_steps() {
    // Ten links released 45° off vertical: every step needs two or more Newton
    // iterations (asserted), so none is quiet, no step starts with a chord step, and
    // only the chord steps ending a step can make the runs differ.
    let model = || {
        chain(ChainOptions {
            links: 10,
            ..Default::default()
        })
        .unwrap()
    };
    let (with, with_error, with_converged, fewest) = run(model(), 100, true);
    let (without, without_error, without_converged, _) = run(model(), 100, false);
    assert!(with_converged && without_converged, "every step converges");
    assert!(fewest >= 2, "a step took {fewest} iteration(s)");
    // Each step converges its dynamics to 1e-10 m/s and its joints to 1e-11 m, so two
    // converged runs of 100 steps of 0.01 s may differ by 1e-10 m; a chord step is
    // taken only where the residual it reaches converges.
    let apart = largest_difference(&with, &without);
    assert!(apart <= 1e-10, "positions apart by {apart:e} m");
    assert!(
        with_error <= 1e-11 && without_error <= 1e-11,
        "joint errors {with_error:e} / {without_error:e} m"
    );
    assert_ne!(with, without, "no chord step was taken");
}
