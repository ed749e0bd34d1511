//! World-steps per second of the GPU backend against the number of worlds (1, 16, 256,
//! 4096), on the pendulum, a 5-link chain, the 10-box pyramid, the skid-steer robot
//! driving straight and, where the corpus has been fetched (`scripts/fetch-corpus.sh`),
//! the quadrupeds `quadruped/spirit40.urdf` and `a1/a1.urdf` dropped limp on flat
//! ground as `axion run` drops them (h = 0.01 s), beside the CPU backend's rate on the
//! same scenes and batch sizes (`CpuBackend::default()`, its blocks of worlds on every
//! core).
//!
//! One timed iteration is one step of every world, waited for, and always the step
//! from 0.21 to 0.22 s: before each, untimed, the state reached at 0.2 s is uploaded
//! (GPU) or cloned (CPU) again and stepped once, which also refills the GPU's contact
//! slots (an upload clears them; their forces warm-start the next step). Otherwise a
//! batch that criterion steps more often would be timed later in its motion, at other
//! Newton iteration counts. Batches beyond one buffer of the adapter run in chunks
//! (4096 pyramids in 7 on lavapipe).
//!
//! `gpu_paths` times a run of 100 steps from the same state three ways: the raw device
//! path (`upload`, `advance(100)`, `download`), `Simulator::run(100)` (the same, plus
//! the run statistics read back), and 100 calls of `Simulator::step` (a round trip to
//! the host each step, as every run took before `Backend::run`).
//!
//! `cargo bench --bench gpu_worlds` (on a machine without a GPU, Mesa's lavapipe runs
//! it; without an adapter, or with `AXION_GPU_TESTS=skip`, the GPU part is left out with
//! a line saying so). `AXION_BENCH_WORLDS=1,256,131072` replaces the batch sizes of
//! `gpu_worlds` and `cpu_worlds` (the hardware sweep of docs/benchmarks.md).

use std::cell::RefCell;
use std::time::{Duration, Instant};

use axion::prelude::*;
use axion::scenes::{ChainOptions, chain, pendulum, pyramid, skid_steer};
use axion::{Backend, Control, CpuBackend, GpuBackend, GpuSettings, Model, State, StepReport};
use axion_cli::{RobotSetup, robot_model};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const H: f64 = 0.01;

/// Batch sizes unless `AXION_BENCH_WORLDS` names others. On lavapipe a step of 4096
/// pyramids (55 shape pairs, 1200 rows per world) or skid-steers takes seconds, and the
/// 20 warm-up steps minutes.
const SIZES: [usize; 4] = [1, 16, 256, 4096];

/// The batch sizes: `AXION_BENCH_WORLDS` (numbers separated by commas) or [`SIZES`].
fn sizes() -> Vec<usize> {
    match std::env::var("AXION_BENCH_WORLDS") {
        Ok(list) => list
            .split(',')
            .map(|n| match n.trim().parse::<usize>() {
                Ok(worlds) if worlds > 0 => worlds,
                _ => {
                    panic!("AXION_BENCH_WORLDS={list:?}: {n:?} is not a positive number of worlds")
                }
            })
            .collect(),
        Err(_) => SIZES.to_vec(),
    }
}

/// The corpus robots of the bench: spirit40 rests by 0.21 s, the a1 is still landing
/// (its feet's contacts change from step to step; the GPU solves it along its tree).
const CORPUS: [(&str, &str); 2] = [
    ("spirit40", "quadruped/spirit40.urdf"),
    ("a1", "a1/a1.urdf"),
];

fn scenes() -> Vec<(&'static str, Model)> {
    let mut scenes = vec![
        ("pendulum", pendulum().expect("built-in scene")),
        (
            "chain5",
            chain(ChainOptions {
                links: 5,
                ..Default::default()
            })
            .expect("built-in scene"),
        ),
        ("pyramid10", pyramid(1).expect("built-in scene")),
        (
            "skid_steer",
            skid_steer([4.0, 4.0, 4.0]).expect("built-in scene"),
        ),
    ];
    for (name, file) in CORPUS {
        let path = axion_cli::corpus_root().join("pybullet_data").join(file);
        if path.is_file() {
            let (model, _) = robot_model(&path, &RobotSetup::default())
                .unwrap_or_else(|e| panic!("the corpus's {file}: {e}"));
            scenes.push((name, model));
        } else {
            eprintln!("{name} left out: no robot corpus at {}", path.display());
        }
    }
    scenes
}

/// A backend with `worlds` copies of `model` on the device, swung or driven for 0.2 s
/// (which also compiles the kernels), its iterations reported, and the state reached.
fn warm(name: &str, model: &Model, worlds: usize) -> (GpuBackend, State, Control) {
    let mut backend = GpuBackend::for_model(model, worlds, GpuSettings::default())
        .unwrap_or_else(|e| panic!("{e} (a GPU adapter is needed; lavapipe on CI)"));
    let mut state = State::new(model, worlds).expect("valid");
    let control = Control::new(model, worlds);
    backend.upload(model, &state).expect("upload");
    backend.advance(&control, H, 20).expect("step");
    backend.download(&mut state).expect("download");
    let report = backend.last_report().expect("stats");
    eprintln!(
        "{} on {}: {worlds} worlds, {} iterations max in the last step, {}/{} worlds converged",
        name,
        backend.adapter(),
        report.max_iterations(),
        report.worlds.iter().filter(|s| s.converged).count(),
        worlds
    );
    (backend, state, control)
}

/// Prints the Newton iterations of the timed step (once per benchmark).
fn report_timed(name: &str, worlds: usize, report: &StepReport) {
    eprintln!(
        "{name}, {worlds} worlds, timed step: {} iterations max, {}/{worlds} worlds converged",
        report.max_iterations(),
        report.worlds.iter().filter(|s| s.converged).count(),
    );
}

fn gpu(c: &mut Criterion) {
    if !axion::device_tests_run("gpu_worlds benchmark") {
        return;
    }
    let mut group = c.benchmark_group("gpu_worlds");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let sizes = sizes();
    for (name, model) in scenes() {
        for &worlds in &sizes {
            // Built on the first call, which criterion makes only for the benchmarks
            // its filter selects (warming 4096 skid-steers up takes minutes on lavapipe).
            let mut setup: Option<(GpuBackend, State, Control)> = None;
            let mut reported = false;
            group.throughput(Throughput::Elements(worlds as u64));
            group.bench_with_input(BenchmarkId::new(name, worlds), &worlds, |b, _| {
                let (backend, state, control) =
                    setup.get_or_insert_with(|| warm(name, &model, worlds));
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        backend.upload(&model, state).expect("upload");
                        backend.advance(control, H, 1).expect("step");
                        backend.finish().expect("wait");
                        let start = Instant::now();
                        backend.advance(control, H, 1).expect("step");
                        backend.finish().expect("wait");
                        total += start.elapsed();
                    }
                    if !reported {
                        report_timed(name, worlds, &backend.last_report().expect("stats"));
                        reported = true;
                    }
                    total
                })
            });
        }
    }
    group.finish();
}

/// Steps per timed run of `gpu_paths`.
const RUN: usize = 100;

/// What `gpu_paths` times, all from the state `warm` reached.
struct Paths {
    backend: GpuBackend,
    start: State,
    control: Control,
    sim: Simulator,
}

fn gpu_paths(c: &mut Criterion) {
    if !axion::device_tests_run("gpu_worlds benchmark (paths)") {
        return;
    }
    let mut group = c.benchmark_group("gpu_paths");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (name, model) in scenes() {
        if !matches!(name, "pendulum" | "skid_steer" | "spirit40") {
            continue;
        }
        for worlds in [1, 256] {
            // Built on first use, for the benchmarks the filter selects.
            let setup: RefCell<Option<Paths>> = RefCell::new(None);
            let with = |f: &mut dyn FnMut(&mut Paths)| {
                let mut setup = setup.borrow_mut();
                f(setup.get_or_insert_with(|| {
                    let (backend, start, control) = warm(name, &model, worlds);
                    let sim = Simulator::new(model.clone(), worlds, H, BackendChoice::Gpu)
                        .expect("the GPU backend");
                    Paths {
                        backend,
                        start,
                        control,
                        sim,
                    }
                }))
            };
            group.throughput(Throughput::Elements((worlds * RUN) as u64));
            group.bench_function(BenchmarkId::new(format!("{name}/raw"), worlds), |b| {
                with(&mut |p| {
                    b.iter(|| {
                        let mut end = p.start.clone();
                        p.backend.upload(&model, &p.start).expect("upload");
                        p.backend.advance(&p.control, H, RUN).expect("steps");
                        p.backend.download(&mut end).expect("download");
                        end
                    })
                })
            });
            group.bench_function(BenchmarkId::new(format!("{name}/run"), worlds), |b| {
                with(&mut |p| {
                    b.iter(|| {
                        *p.sim.state_mut() = p.start.clone();
                        p.sim.run(RUN).expect("steps")
                    })
                })
            });
            group.bench_function(BenchmarkId::new(format!("{name}/step"), worlds), |b| {
                with(&mut |p| {
                    b.iter(|| {
                        *p.sim.state_mut() = p.start.clone();
                        for _ in 0..RUN {
                            p.sim.step().expect("step");
                        }
                    })
                })
            });
        }
    }
    group.finish();
}

fn cpu(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_worlds");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    let sizes = sizes();
    for (name, model) in scenes() {
        for &worlds in &sizes {
            // Run for 0.2 s on the first call (only for the benchmarks the filter selects);
            // each timed step is the second from that state, as on the device.
            let mut setup: Option<(Model, State, Control)> = None;
            let mut reported = false;
            let mut backend = CpuBackend::default();
            group.throughput(Throughput::Elements(worlds as u64));
            group.bench_with_input(BenchmarkId::new(name, worlds), &worlds, |b, _| {
                let (model, state, control) = setup.get_or_insert_with(|| {
                    let mut sim = Simulator::new(model.clone(), worlds, H, BackendChoice::Cpu)
                        .expect("valid");
                    sim.run(20).expect("step");
                    (
                        sim.model().clone(),
                        sim.state().clone(),
                        sim.control().clone(),
                    )
                });
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let mut next = state.clone();
                        backend.step(model, &mut next, control, H).expect("step");
                        let start = Instant::now();
                        let report = backend.step(model, &mut next, control, H).expect("step");
                        total += start.elapsed();
                        if !reported {
                            report_timed(name, worlds, &report);
                            reported = true;
                        }
                    }
                    total
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, gpu, gpu_paths, cpu);
criterion_main!(benches);
