//! The CPU backend steps the worlds of a batch on several threads: every world is
//! solved on its own, so any thread count gives the same result bit for bit, and each
//! world of a batch equals that world simulated alone.

use axion::{BackendChoice, BodyId, Simulator, SolverSettings, scenes};
use nalgebra::Vector3;

/// Throws one cube per world (forward and sideways speeds in m/s, spinning at
/// 0.3 rad/s) across ground with μ = 0.5, runs 0.8 s with `threads` threads and returns
/// each world's final pose and twist as bits.
fn thrown(throws: &[(f64, f64)], threads: usize) -> Vec<Vec<u64>> {
    let settings = SolverSettings {
        threads,
        ..Default::default()
    };
    let mut sim = Simulator::new(
        scenes::thrown_box(0.0, 0.5).unwrap(),
        throws.len(),
        0.01,
        BackendChoice::CpuWith(settings),
    )
    .unwrap();
    for (w, &(forward, side)) in throws.iter().enumerate() {
        let twist = axion::math::twist(Vector3::new(forward, side, 0.0), Vector3::z() * 0.3);
        sim.state_mut().set_velocity(w, BodyId(1), twist);
    }
    let s = sim.run(80).unwrap();
    assert_eq!(s.converged_steps, s.steps);
    (0..throws.len())
        .map(|w| {
            let p = sim.state().com_pose(w, BodyId(1));
            let u = sim.state().velocity(w, BodyId(1));
            let numbers = p.translation.vector.iter().chain(p.rotation.coords.iter());
            numbers.chain(u.iter()).map(|x| x.to_bits()).collect()
        })
        .collect()
}

#[test]
fn thread_count_does_not_change_any_world() {
    // Seven throws that stop at different steps (so the workers' contact patterns
    // and iteration counts differ).
    let throws: Vec<(f64, f64)> = (0..7)
        .map(|w| (0.5 + 0.5 * w as f64, 0.1 * w as f64))
        .collect();
    let one = thrown(&throws, 1);
    for threads in [2, 3, 7, 0] {
        assert_eq!(thrown(&throws, threads), one, "{threads} threads");
    }
    for w in [0, 3, 6] {
        assert_eq!(thrown(&throws[w..w + 1], 0)[0], one[w], "world {w} alone");
    }
}
