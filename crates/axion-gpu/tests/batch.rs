//! Determinism and batching: reruns are bitwise identical, and a world's result does
//! not depend on how many worlds are stepped beside it (1, 16, 256, 4096).

mod common;

use axion::scenes::{self, ChainOptions};
use axion_gpu::{GpuBackend, GpuSettings};
use axion_model::{Backend, BodyId, Control, Model, State};
use nalgebra::Vector3;
use std::num::NonZeroUsize;

/// World `w` starts with its own velocity (a different trajectory per world).
fn initial(model: &Model, worlds: usize, first: usize) -> State {
    moving(model, worlds, first, 1.0)
}

/// [`initial`] with the velocities scaled by `speed`.
fn moving(model: &Model, worlds: usize, first: usize, speed: f64) -> State {
    let mut s = State::new(model, worlds).unwrap();
    for k in 0..worlds {
        let w = (first + k) as f64;
        for b in 0..model.bodies().len() {
            let v = speed * Vector3::new(0.0, 0.3 * (0.7 * w).sin(), 0.1 * (1.3 * w).cos());
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

/// 16 worlds of `model` stepped `steps` times on two backends built afresh end bitwise
/// the same.
fn reruns_match(model: &Model, steps: usize) {
    let Some(mut gpu) = common::backend(model, 16, GpuSettings::default()) else {
        return;
    };
    let a = run(&mut gpu, model, initial(model, 16, 0), steps);
    let mut fresh = common::backend(model, 16, GpuSettings::default()).unwrap();
    let b = run(&mut fresh, model, initial(model, 16, 0), steps);
    assert_eq!(a, b, "two runs differ");
}

#[test]
fn reruns_are_bitwise_identical() {
    let model = scenes::chain(ChainOptions {
        links: 5,
        ..Default::default()
    })
    .unwrap();
    reruns_match(&model, 30);
}

/// Worlds 0, 7, N/2 and N − 1 of a batch of N equal a batch of one world started in
/// the same state, bit for bit, with the same statistics of the last step.
fn batch_equals_single(model: &Model, sizes: &[usize], steps: usize) {
    batch_equals_single_with(model, GpuSettings::default(), 1.0, sizes, steps);
}

/// [`batch_equals_single`] with GPU settings of its own and the start velocities of
/// [`initial`] scaled by `speed`.
fn batch_equals_single_with(
    model: &Model,
    settings: GpuSettings,
    speed: f64,
    sizes: &[usize],
    steps: usize,
) {
    let Some(mut gpu) = common::backend(model, 1, settings) else {
        return;
    };
    for &n in sizes {
        let batch = run(&mut gpu, model, moving(model, n, 0, speed), steps);
        let report = gpu.last_report().unwrap();
        let mut sample = vec![0, 7 % n, n / 2, n - 1];
        sample.dedup();
        for w in sample {
            let single = run(&mut gpu, model, moving(model, 1, w, speed), steps);
            assert!(
                same_world(&batch, w, &single, 0),
                "world {w} of {n} differs from the same world run alone"
            );
            // Iterations, residuals and contact counts as well: alone, a world's
            // iterations stop being dispatched when it stops; in the batch they go on
            // while any world iterates.
            assert_eq!(
                report.worlds[w],
                gpu.last_report().unwrap().worlds[0],
                "world {w} of {n}: the last step's statistics differ from the world run alone"
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

/// With the slip coupling lagged (`GpuSettings::slip_coupling` off: the conjugate
/// residual in every world): the two-box stacks of
/// [`stack_batches_of_1_16_256_4096_match_one_world`].
#[test]
fn lagged_stack_batches_of_16_and_256_match_one_world() {
    let settings = common::lagged();
    batch_equals_single_with(&scenes::stack(2).unwrap(), settings, 1.0, &[16, 256], 6);
}

/// The 10-box pyramid's scratch is about 200 KB per world: 4096 worlds need about
/// 830 MB, more than one storage buffer holds on lavapipe (128 MiB), so the batch runs
/// in chunks sized by the adapter's limits (7 on lavapipe). One step, the boxes
/// starting at 1/100 of [`initial`]'s speeds: a first step near rest takes the pyramid
/// about 6 Newton iterations, and this test about 2 minutes on lavapipe.
#[test]
fn pyramid_batch_of_4096_in_chunks_matches_one_world() {
    let model = scenes::pyramid(1).unwrap();
    batch_equals_single_with(&model, GpuSettings::default(), 0.01, &[4096], 1);
}

/// A batch split into chunks (`GpuSettings::max_chunk_worlds`), each with its own
/// buffers and dispatches, gives every world the same state, statistics and probed rows
/// as the same batch in one chunk, bit for bit: 13 worlds in chunks of 5, 4 and 4.
/// The bouncing balls carry their approach velocities in the chunks' scratch from step
/// to step; the chains' rows are probed per chunk.
#[test]
fn chunked_batches_equal_one_chunk() {
    let chunked = GpuSettings {
        max_chunk_worlds: NonZeroUsize::new(5),
        ..Default::default()
    };
    let n = 13;
    for (model, steps) in [
        (scenes::drop(0.5).unwrap(), 70),
        (scenes::stack(2).unwrap(), 6),
    ] {
        let Some(mut one) = common::backend(&model, n, GpuSettings::default()) else {
            return;
        };
        let mut split = common::backend(&model, n, chunked).unwrap();
        let a = run(&mut one, &model, initial(&model, n, 0), steps);
        let b = run(&mut split, &model, initial(&model, n, 0), steps);
        assert_eq!(a, b, "the chunked batch's states differ");
        assert_eq!(one.last_report().unwrap(), split.last_report().unwrap());
    }
    let chain = scenes::chain(ChainOptions {
        links: 3,
        ..Default::default()
    })
    .unwrap();
    let mut one = common::backend(&chain, n, GpuSettings::default()).unwrap();
    let mut split = common::backend(&chain, n, chunked).unwrap();
    // Poses of their own per world, so that rows probed in the wrong world would show.
    let state = run(&mut one, &chain, initial(&chain, n, 0), 5);
    let rows = one.probe_rows(&chain, &state).unwrap();
    assert_eq!(rows.len(), n);
    assert_eq!(rows, split.probe_rows(&chain, &state).unwrap());
}

/// With restitution and joint ranges: a bouncing ball (each world with its own sideways
/// and vertical start speed; 70 steps take it through its first landing and rebound)
/// and a hinge driven against its range (30 steps).
#[test]
fn bounce_and_limit_batches_of_16_and_256_match_one_world() {
    batch_equals_single(&scenes::drop(0.5).unwrap(), &[16, 256], 70);
    batch_equals_single(&scenes::turnstile_across_pi().unwrap(), &[16, 256], 30);
}

/// A model of dynamic solids `(name, shape, centre)` on a ground plane.
fn on_ground(bodies: &[(&str, axion_model::Shape, Vector3<f64>)]) -> Model {
    use axion_model::{BodyDesc, Geometry, ModelBuilder, ShapeDesc};
    let mut b = ModelBuilder::new();
    let ground = ShapeDesc::from_geometry(Geometry::HalfSpace {
        normal: Vector3::z(),
    });
    b.add_body(BodyDesc::fixed("ground").shape(ground)).unwrap();
    for &(name, shape, at) in bodies {
        b.add_body(
            BodyDesc::dynamic(name)
                .at(at)
                .mass(1.0, Vector3::zeros(), shape.unit_inertia(1.0))
                .shape(ShapeDesc::new(shape)),
        )
        .unwrap();
    }
    b.build().unwrap()
}

/// With the cylinder narrow phases (each world with its own start velocities, 25
/// steps): a can dropped onto a box (cylinder–box, the box's face the reference), a
/// small box dropped onto a cylinder standing on the ground (its cap the reference),
/// and a stack of a box, a can and a block (40 steps). The stack is the case that found
/// lavapipe's loop budget (`tests/loop_budget.rs`): before the linear solve was split
/// over dispatches, world 0 of a batch left the same world run alone at step 8.
#[test]
fn cylinder_batches_of_16_and_256_match_one_world() {
    use axion_model::Shape;
    let table = Shape::Box {
        half_extents: Vector3::new(0.6, 0.4, 0.2),
    };
    let can = Shape::Cylinder {
        radius: 0.12,
        half_length: 0.2,
    };
    let pedestal = Shape::Cylinder {
        radius: 0.3,
        half_length: 0.2,
    };
    let block = Shape::Box {
        half_extents: Vector3::new(0.08, 0.08, 0.03),
    };
    let lower = Vector3::new(0.0, 0.0, 0.2);
    let upper = Vector3::new(0.05, 0.02, 0.62);
    batch_equals_single(
        &on_ground(&[("table", table, lower), ("can", can, upper)]),
        &[16, 256],
        25,
    );
    batch_equals_single(
        &on_ground(&[("pedestal", pedestal, lower), ("block", block, upper)]),
        &[16, 256],
        25,
    );
    let stack = on_ground(&[
        ("table", table, lower),
        ("can", can, Vector3::new(0.1, 0.05, 0.62)),
        ("block", block, Vector3::new(0.12, 0.05, 0.86)),
    ]);
    batch_equals_single(&stack, &[16, 256], 40);
    reruns_match(&stack, 40);
}
