//! CPU backend throughput on batches of worlds against the number of worker threads
//! (`SolverSettings::threads`), h = 0.01. Every world is solved on its own, so the
//! results do not depend on the thread count (tests/threads.rs).
//!
//! One sample is a 1-s run of the batch (100 steps) from the same start, so that only
//! its first step starts cold (a state set by hand forgets the previous step's contacts
//! and factors). Group `cpu_worlds_{pendulum,pyramid10}`: 256 pendulums swinging and 32
//! settled 10-box pyramids, from the state 1 s in. Group `cpu_robots`: robots of the
//! corpus (pybullet 3.2.7's `pybullet_data`, `scripts/fetch-corpus.sh`) in batches of
//! 1, 16 and 256 identical worlds from their start: `minitaur_drop`, the minitaur
//! dropped limp from 1 mm (`axion run quadruped/minitaur.urdf`: it lands and lies
//! still), and `a1_standing`, the a1 under position drives (`axion run a1/a1.urdf
//! --hold`). Without the corpus the robots are
//! skipped with the reason printed. The robots take about 4 minutes (criterion warns
//! that a sample of 256 worlds, 2–4 s, exceeds its 5-s target for 10 samples).
//!
//! `cargo bench --bench cpu_worlds`

use std::hint::black_box;

use axion::prelude::*;
use axion::scenes;
use axion_cli::{Hold, RobotSetup, robot_model};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const H: f64 = 0.01;

/// Steps of one sample: a 1-s run of the batch from the same start.
const STEPS: usize = 100;

/// Thread counts timed: 1, then powers of two up to the machine's cores.
fn thread_counts() -> Vec<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads = vec![1];
    threads.extend([2, 4, 8, 16].into_iter().filter(|&t| t <= cores));
    threads
}

fn simulator(model: &axion::Model, worlds: usize, threads: usize) -> Simulator {
    let settings = SolverSettings {
        threads,
        ..Default::default()
    };
    Simulator::new(model.clone(), worlds, H, BackendChoice::CpuWith(settings))
        .expect("valid simulator")
}

/// Runs `sim` for [`STEPS`] steps and prints its iterations and converged share.
fn report(sim: &mut Simulator, name: &str, threads: usize) {
    let worlds = sim.state().worlds();
    let summary = sim.run(STEPS).expect("step");
    eprintln!(
        "{name}, {worlds} worlds, {threads} threads: {:.2} Newton iterations per world-step, {:.1} % converged",
        summary.mean_iterations,
        100.0 * summary.converged_world_steps as f64 / (worlds * STEPS) as f64
    );
}

fn scenes(c: &mut Criterion) {
    let cases = [
        ("pendulum", scenes::pendulum().expect("built-in scene"), 256),
        ("pyramid10", scenes::pyramid(1).expect("built-in scene"), 32),
    ];
    for (name, model, worlds) in cases {
        let mut group = c.benchmark_group(format!("cpu_worlds_{name}"));
        group.sample_size(10);
        group.throughput(Throughput::Elements((worlds * STEPS) as u64));
        for t in thread_counts() {
            let mut sim = simulator(&model, worlds, t);
            // Start from 1 s in: pendulums swinging, pyramids settled.
            sim.run(100).expect("step");
            let start = sim.state().clone();
            report(&mut sim, name, t);
            group.bench_with_input(BenchmarkId::new("threads", t), &t, |b, _| {
                b.iter(|| {
                    *sim.state_mut() = start.clone();
                    black_box(sim.run(STEPS).expect("step").converged_world_steps)
                })
            });
        }
        group.finish();
    }
}

fn robots(c: &mut Criterion) {
    let data = axion_cli::corpus_root().join("pybullet_data");
    if !data.is_dir() {
        eprintln!(
            "cpu_robots skipped: no robot corpus at {} (run scripts/fetch-corpus.sh)",
            data.display()
        );
        return;
    }
    let held = RobotSetup {
        hold: Some(Hold::Scaled),
        ..RobotSetup::default()
    };
    let cases = [
        (
            "minitaur_drop",
            "quadruped/minitaur.urdf",
            RobotSetup::default(),
        ),
        ("a1_standing", "a1/a1.urdf", held),
    ];
    let mut group = c.benchmark_group("cpu_robots");
    group.sample_size(10);
    for (name, file, setup) in cases {
        let model = robot_model(&data.join(file), &setup)
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .0;
        for worlds in [1, 16, 256] {
            group.throughput(Throughput::Elements((worlds * STEPS) as u64));
            for t in thread_counts() {
                let mut sim = simulator(&model, worlds, t);
                let start = sim.state().clone();
                report(&mut sim, name, t);
                let id = BenchmarkId::new(format!("{name}/threads_{t}"), worlds);
                group.bench_with_input(id, &worlds, |b, _| {
                    b.iter(|| {
                        *sim.state_mut() = start.clone();
                        black_box(sim.run(STEPS).expect("step").converged_world_steps)
                    })
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, scenes, robots);
criterion_main!(benches);
