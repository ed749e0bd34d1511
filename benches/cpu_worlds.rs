//! CPU backend throughput on batches of worlds against the number of worker threads
//! (`SolverSettings::threads`): world-steps per second for 256 pendulums and for 32
//! settled 10-box pyramids (h = 0.01). Every world is solved on its own, so the
//! results do not depend on the thread count (tests/threads.rs).
//!
//! `cargo bench --bench cpu_worlds`

use std::hint::black_box;

use axion::prelude::*;
use axion::scenes;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads = vec![1];
    threads.extend([2, 4, 8, 16].into_iter().filter(|&t| t <= cores));
    let cases = [
        ("pendulum", scenes::pendulum().expect("built-in scene"), 256),
        ("pyramid10", scenes::pyramid(1).expect("built-in scene"), 32),
    ];
    for (name, model, worlds) in cases {
        let mut group = c.benchmark_group(format!("cpu_worlds_{name}"));
        group.sample_size(10);
        group.throughput(Throughput::Elements(worlds as u64));
        for &t in &threads {
            let settings = SolverSettings {
                threads: t,
                ..Default::default()
            };
            let mut sim = Simulator::new(
                model.clone(),
                worlds,
                0.01,
                BackendChoice::CpuWith(settings),
            )
            .expect("valid simulator");
            // Start from 1 s in: pendulums swinging, pyramids settled.
            sim.run(100).expect("step");
            let start = sim.state().clone();
            group.bench_with_input(BenchmarkId::new("threads", t), &t, |b, _| {
                b.iter(|| {
                    *sim.state_mut() = start.clone();
                    black_box(sim.step().expect("step").worlds.len())
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
