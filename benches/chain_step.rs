//! One backward-Euler step (h = 0.01 s) of the hanging chain of canonical scene 3
//! (docs/canonical-scenes.md) with 10, 50, 100 and 1000 links, single thread: solved
//! along the chain's tree (the default), by the sparse LU (`tree_solve = false`), and
//! with velocity-level hinges (Baumgarte factor 0.2, `ChainOptions::baumgarte`) along
//! the tree. Every timed step starts from the same swinging state (after 50 steps), so
//! the chain never comes to rest during timing; such a step starts cold (a state set by
//! hand keeps no warm start of contacts and no factors). The "running" variants time
//! steps that continue one another the way a run does, along the tree: 100 steps from
//! the swinging state, then back to it (one cold step in 100). Before timing, prints
//! the Newton iterations per step and the largest joint error over 100 steps of the
//! motion.
//!
//! `cargo bench --bench chain_step`

use std::hint::black_box;

use axion::prelude::*;
use axion::scenes::{ChainOptions, chain};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

/// The variants timed: name, `tree_solve`, Baumgarte factor of velocity-level hinges.
const VARIANTS: [(&str, bool, Option<f64>); 3] = [
    ("tree", true, None),
    ("sparse LU", false, None),
    ("velocity level", true, Some(0.2)),
];

/// Steps of a "running" stretch before it starts again from the swinging state.
const RUN: usize = 100;

fn simulator(links: usize, tree_solve: bool, baumgarte: Option<f64>) -> Simulator {
    let model = chain(ChainOptions {
        links,
        baumgarte,
        ..Default::default()
    })
    .expect("built-in scene");
    let settings = SolverSettings {
        tree_solve,
        ..Default::default()
    };
    Simulator::new(model, 1, 0.01, BackendChoice::CpuWith(settings)).expect("valid simulator")
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("chain_step");
    for (links, (solve, tree_solve, baumgarte)) in [10, 50, 100, 1000]
        .into_iter()
        .flat_map(|n| VARIANTS.map(|v| (n, v)))
    {
        let mut sim = simulator(links, tree_solve, baumgarte);
        sim.run(50).expect("step");
        let swinging = sim.state().clone();
        let mut joint_error: f64 = 0.0;
        let mut chord_steps = 0;
        let summary = sim
            .run_with(100, |s| {
                joint_error = joint_error.max(s.joint_errors(0).position);
                chord_steps += s.last_report().worlds[0].chord_steps;
            })
            .expect("step");
        eprintln!(
            "chain of {links}, {solve}: {:.2} Newton iterations per step ({:.2} factorized, the rest chord steps; max {}), {}/{} converged, joint error up to {joint_error:.1e} m, {:.0} steps/s over 100 steps",
            summary.mean_iterations,
            summary.mean_iterations - chord_steps as f64 / summary.steps as f64,
            summary.max_iterations,
            summary.converged_steps,
            summary.steps,
            summary.steps as f64 / summary.wall.as_secs_f64()
        );
        if links >= 1000 {
            group.sample_size(10);
        }
        group.bench_with_input(BenchmarkId::new(solve, links), &links, |b, _| {
            b.iter(|| {
                *sim.state_mut() = swinging.clone();
                black_box(sim.step().expect("step").worlds[0].iterations)
            })
        });
        if tree_solve && baumgarte.is_none() {
            let mut taken = 0usize;
            group.bench_with_input(BenchmarkId::new("running", links), &links, |b, _| {
                b.iter(|| {
                    if taken.is_multiple_of(RUN) {
                        *sim.state_mut() = swinging.clone();
                    }
                    taken += 1;
                    black_box(sim.step().expect("step").worlds[0].iterations)
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
