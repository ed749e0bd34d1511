//! Determinism and batching: reruns are bitwise identical, and a world's result does
//! not depend on how many worlds are stepped beside it (1, 16, 256, 4096).

mod common;

use axion::scenes::{self, ChainOptions};
use axion_gpu::{GpuBackend, GpuSettings};
use axion_model::{Backend, BodyId, Control, Model, State};
use nalgebra::Vector3;

/// World `w` starts with its own velocity (a different trajectory per world).
fn initial(model: &Model, worlds: usize, first: usize) -> State {
    let mut s = State::new(model, worlds).unwrap();
    for k in 0..worlds {
        let w = (first + k) as f64;
        for b in 0..model.bodies().len() {
            let v = Vector3::new(0.0, 0.3 * (0.7 * w).sin(), 0.1 * (1.3 * w).cos());
            s.set_velocity(k, BodyId(b), axion_math::twist(v, Vector3::zeros()));
        }
    }
    s
}

/// Steps the worlds of `state` `steps` times on `gpu` (which reallocates its buffers
/// for the batch size and keeps its compiled kernels); returns the state.
fn run(gpu: &mut GpuBackend, model: &Model, state: State, steps: usize) -> State {
    let mut s = state;
    let control = Control::new(model, s.worlds());
    for _ in 0..steps {
        gpu.step(model, &mut s, &control, 0.01).unwrap();
    }
    s
}

fn same_world(a: &State, wa: usize, b: &State, wb: usize) -> bool {
    a.world_poses(wa) == b.world_poses(wb)
        && a.world_velocities(wa) == b.world_velocities(wb)
        && a.joint_forces(wa) == b.joint_forces(wb)
}

#[test]
fn reruns_are_bitwise_identical() {
    let model = scenes::chain(ChainOptions {
        links: 5,
        ..Default::default()
    })
    .unwrap();
    let Some(mut gpu) = common::backend(&model, 16, GpuSettings::default()) else {
        return;
    };
    let a = run(&mut gpu, &model, initial(&model, 16, 0), 30);
    let mut fresh = common::backend(&model, 16, GpuSettings::default()).unwrap();
    let b = run(&mut fresh, &model, initial(&model, 16, 0), 30);
    assert_eq!(a, b, "two runs differ");
}

/// Worlds 0, 7, N/2 and N − 1 of a batch of N equal a batch of one world started in
/// the same state, bit for bit.
fn batch_equals_single(model: &Model, sizes: &[usize], steps: usize) {
    batch_equals_single_with(model, GpuSettings::default(), sizes, steps);
}

/// [`batch_equals_single`] with GPU settings of its own.
fn batch_equals_single_with(model: &Model, settings: GpuSettings, sizes: &[usize], steps: usize) {
    let Some(mut gpu) = common::backend(model, 1, settings) else {
        return;
    };
    for &n in sizes {
        let batch = run(&mut gpu, model, initial(model, n, 0), steps);
        let mut sample = vec![0, 7 % n, n / 2, n - 1];
        sample.dedup();
        for w in sample {
            let single = run(&mut gpu, model, initial(model, 1, w), steps);
            assert!(
                same_world(&batch, w, &single, 0),
                "world {w} of {n} differs from the same world run alone"
            );
        }
    }
}

#[test]
fn pendulum_batches_of_1_16_256_4096_match_one_world() {
    batch_equals_single(&scenes::pendulum().unwrap(), &[1, 16, 256, 4096], 20);
}

#[test]
fn chain_batches_of_16_and_256_match_one_world() {
    let model = scenes::chain(ChainOptions {
        links: 5,
        ..Default::default()
    })
    .unwrap();
    batch_equals_single(&model, &[16, 256], 10);
}

/// With contacts and friction: a two-box stack whose boxes start with their own
/// velocities (sliding, landing, tilting differently in each world).
#[test]
fn stack_batches_of_1_16_256_4096_match_one_world() {
    batch_equals_single(&scenes::stack(2).unwrap(), &[1, 16, 256, 4096], 6);
}

/// With `GpuSettings::slip_coupling` (ORTHOMIN in every world): the two-box stacks of
/// [`stack_batches_of_1_16_256_4096_match_one_world`], whose sliding worlds have coupled
/// slip forces beside worlds without.
#[test]
fn slip_coupled_stack_batches_of_16_and_256_match_one_world() {
    let settings = common::slip_coupled();
    batch_equals_single_with(&scenes::stack(2).unwrap(), settings, &[16, 256], 6);
}

/// With restitution and joint ranges: a bouncing ball (each world with its own sideways
/// and vertical start speed; 70 steps take it through its first landing and rebound)
/// and a hinge driven against its range (30 steps).
#[test]
fn bounce_and_limit_batches_of_16_and_256_match_one_world() {
    batch_equals_single(&scenes::drop(0.5).unwrap(), &[16, 256], 70);
    batch_equals_single(&scenes::turnstile_across_pi().unwrap(), &[16, 256], 30);
}
