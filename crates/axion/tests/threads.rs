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

/// Skid-steers driving straight (wheels at 3 rad/s), one per world, pushed sideways at
/// different speeds: robots whose links are eliminated along their tree and whose steps
/// start with chord steps on their own kept factors
/// (`SolverSettings::reuse_factors`). Returns each world's chassis pose and twist after
/// 1 s as bits.
fn skid_steers(pushes: &[f64], threads: usize) -> Vec<Vec<u64>> {
    let settings = SolverSettings {
        threads,
        ..Default::default()
    };
    let model = scenes::skid_steer([3.0; 3]).unwrap();
    let chassis = model.body_id("chassis").unwrap();
    let mut sim =
        Simulator::new(model, pushes.len(), 0.01, BackendChoice::CpuWith(settings)).unwrap();
    for (w, &push) in pushes.iter().enumerate() {
        let twist = axion::math::twist(Vector3::new(0.0, push, 0.0), Vector3::zeros());
        sim.state_mut().set_velocity(w, chassis, twist);
    }
    sim.run(100).unwrap();
    (0..pushes.len())
        .map(|w| {
            let p = sim.state().com_pose(w, chassis);
            let u = sim.state().velocity(w, chassis);
            let numbers = p.translation.vector.iter().chain(p.rotation.coords.iter());
            numbers.chain(u.iter()).map(|x| x.to_bits()).collect()
        })
        .collect()
}

#[test]
fn thread_count_does_not_change_robots_with_chord_steps() {
    let pushes: Vec<f64> = (0..5).map(|w| 0.05 * w as f64).collect();
    let one = skid_steers(&pushes, 1);
    for threads in [2, 3, 0] {
        assert_eq!(skid_steers(&pushes, threads), one, "{threads} threads");
    }
    for w in [0, 4] {
        assert_eq!(
            skid_steers(&pushes[w..w + 1], 0)[0],
            one[w],
            "world {w} alone"
        );
    }
}

/// A CPU backend given the model's collision shapes at creation (as `Simulator::new`
/// does) steps exactly as one that builds them at its first step.
#[test]
fn a_backend_with_its_shapes_built_steps_as_one_without() {
    use axion::{Backend, Control, CpuBackend, State};
    let model = scenes::skid_steer([2.0, 6.0, 4.0]).unwrap();
    let run = |mut backend: CpuBackend| {
        let mut state = State::new(&model, 1).unwrap();
        let control = Control::new(&model, 1);
        for _ in 0..100 {
            backend.step(&model, &mut state, &control, 0.01).unwrap();
        }
        state
            .world_poses(0)
            .iter()
            .flat_map(|p| {
                axion::math::pose_coords(p)
                    .iter()
                    .map(|c| c.to_bits())
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<u64>>()
    };
    let built = axion::collision::CollisionWorld::new(&model).unwrap();
    assert_eq!(
        run(CpuBackend::for_model(
            SolverSettings::default(),
            &model,
            built
        )),
        run(CpuBackend::new(SolverSettings::default()))
    );
}

/// A world set anew (here: every world of a batch reset to its start after 0.5 s)
/// hands its factorization to its worker's pool for whichever world meets those rows
/// next, which forgets its factors; what this checks is the outcome: the reset batch
/// steps bit for bit as a new simulator does.
#[test]
fn a_reset_batch_steps_as_a_new_one() {
    let model = scenes::skid_steer([3.0; 3]).unwrap();
    let chassis = model.body_id("chassis").unwrap();
    let settings = SolverSettings {
        threads: 2,
        ..Default::default()
    };
    let pushes = [0.0, 0.1, 0.2];
    let start = |sim: &mut Simulator| {
        for (w, &push) in pushes.iter().enumerate() {
            let twist = axion::math::twist(Vector3::new(0.0, push, 0.0), Vector3::zeros());
            sim.state_mut().set_velocity(w, chassis, twist);
        }
    };
    let bits = |sim: &Simulator| -> Vec<u64> {
        (0..pushes.len())
            .flat_map(|w| {
                let p = sim.state().com_pose(w, chassis);
                let u = sim.state().velocity(w, chassis);
                let numbers: Vec<f64> = p
                    .translation
                    .vector
                    .iter()
                    .chain(p.rotation.coords.iter())
                    .chain(u.iter())
                    .copied()
                    .collect();
                numbers.into_iter().map(f64::to_bits)
            })
            .collect()
    };
    let new = |model| Simulator::new(model, pushes.len(), 0.01, BackendChoice::CpuWith(settings));
    let mut fresh = new(model.clone()).unwrap();
    start(&mut fresh);
    fresh.run(60).unwrap();

    let mut reset = new(model).unwrap();
    let initial = reset.state().clone();
    start(&mut reset);
    reset.run(50).unwrap();
    *reset.state_mut() = initial;
    start(&mut reset);
    reset.run(60).unwrap();
    assert_eq!(bits(&reset), bits(&fresh));
}
