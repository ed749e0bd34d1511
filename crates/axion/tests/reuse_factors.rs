//! The chord step of `SolverSettings::reuse_factors`: a step continuing a quiet one
//! first tries the Newton direction from the factors the world kept, and takes it only
//! if it converges. It changes how a converged step is reached, not what it converges
//! to: two cubes resting on each other on the ground follow the same motion (to the
//! solver's tolerances) with and without it.

use axion::{BackendChoice, BodyId, Simulator, SolverSettings, scenes};

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

#[test]
fn chord_steps_reach_the_same_motion() {
    let (with, with_converged) = settle(true);
    let (without, without_converged) = settle(false);
    assert!(with_converged && without_converged, "every step converges");
    // Each step converges its contacts to 1e-8 m/s (its dynamics to 1e-10 m/s), so two
    // converged runs of 150 steps of 0.01 s may differ by 1.5e-8 m; the chord steps must
    // not add to that.
    let apart = with
        .iter()
        .zip(&without)
        .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
        .fold(0.0, f64::max);
    assert!(apart <= 1.5e-8, "positions apart by {apart:e} m");
    // The chord steps ran: converged by them, the steps are not bit for bit Newton's.
    assert_ne!(with, without, "no chord step was taken");
}
