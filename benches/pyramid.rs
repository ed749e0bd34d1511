//! Canonical scene 9 (docs/canonical-scenes.md): one step of N/10 side-by-side 10-box
//! pyramids (N = 10, 100, 1000 unit boxes, μ 0.8) at h = 0.01 and 0.05, single thread,
//! after 1 s of simulated time (the boxes settled):
//!
//! * `settled`: the next step, warm-started from the previous one's contact forces (the
//!   steps of a resting pyramid: collision detection and a converged start, no Newton
//!   iteration);
//! * `cold`: a step from the settled state set again with `state_mut` (which forgets the
//!   previous contacts), so its forces start from zero: the Newton iterations and
//!   linear solves of a step that has to find its contact forces.
//!
//! Before timing, prints steps/s and Newton iterations over 1 s from rest.
//!
//! `cargo bench --bench pyramid`

use std::hint::black_box;

use axion::prelude::*;
use axion::scenes::pyramid;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("pyramid_step");
    group.sample_size(10);
    for boxes in [10, 100, 1000] {
        for h in [0.01, 0.05] {
            let mut sim = Simulator::new(
                pyramid(boxes / 10).expect("built-in scene"),
                1,
                h,
                BackendChoice::Cpu,
            )
            .expect("valid simulator");
            let summary = sim.run((1.0 / h).round() as usize).expect("step");
            eprintln!(
                "pyramid of {boxes} boxes, h = {h}: {:.1} steps/s over 1 s from rest, {:.2} Newton iterations per step (max {}), {}/{} converged, {} contacts",
                summary.steps as f64 / summary.wall.as_secs_f64(),
                summary.mean_iterations,
                summary.max_iterations,
                summary.converged_steps,
                summary.steps,
                sim.last_report().worlds[0].contact_count
            );
            let settled = sim.state().clone();
            let id = |kind: &str| BenchmarkId::new(format!("h{h}/{kind}"), boxes);
            group.bench_with_input(id("settled"), &boxes, |b, _| {
                b.iter(|| black_box(sim.step().expect("step").worlds[0].iterations))
            });
            group.bench_with_input(id("cold"), &boxes, |b, _| {
                b.iter(|| {
                    *sim.state_mut() = settled.clone();
                    black_box(sim.step().expect("step").worlds[0].iterations)
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
