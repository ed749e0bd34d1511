//! Robots of the corpus (pybullet 3.2.7's `pybullet_data`, fetched by
//! `scripts/fetch-corpus.sh`) and the built-in skid-steer, single thread, h = 0.01: one
//! sample is the whole 2-s run `axion run ROBOT --duration 2` makes (a URDF robot
//! dropped limp from 1 mm above flat ground, an MJCF model as written on its own
//! floor; the skid-steer turning at wheel speeds 2, 6, 4 rad/s), from the same initial
//! state each time; criterion's throughput is steps per second. Each is solved along
//! the robot's tree (the default), along it with contacts regularised by a compliance
//! in place of the smoothing (`SolverSettings::compliant_contacts`), along it without
//! chord steps on kept factors (`reuse_factors = false`), and by the sparse LU
//! (`tree_solve = false`). Before
//! timing, prints each run's Newton iterations per step (and how many of them were
//! factorized, the rest chord steps) and converged share.
//!
//! Before timing the first variant of a robot, also prints its iterations per step and
//! wall time over [`ENSEMBLE`] runs, each from 0, 1, … µm higher than the start (the
//! robot's moving bodies lifted together): a landing's Newton iteration follows a path
//! that a micrometre changes, so one run's count is one sample of a spread, and a rule
//! for the landing is judged on the ensemble's mean.
//!
//! Group `robot_stand` times quadrupeds of the corpus standing instead, their start
//! pose held by position drives (`axion run ROBOT --hold`), along the tree, with the
//! smoothed and with the compliant contacts.
//!
//! Without the corpus the robots are skipped with the reason printed (the skid-steer
//! still runs). `scripts/mujoco_drop.py --steps 0.002,0.01` times MuJoCo on the same files.
//!
//! `cargo bench --bench robots`

use std::hint::black_box;
use std::path::PathBuf;

use axion::prelude::*;
use axion_cli::{RobotSetup, robot_model};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const H: f64 = 0.01;
const DURATION: f64 = 2.0;

/// The variants timed: name, `tree_solve`, `reuse_factors` (chord steps on kept factors,
/// which only the tree solve keeps), and contacts regularised by the compliance in place
/// of the smoothing (`SolverSettings::compliant_contacts`).
const VARIANTS: [(&str, bool, bool, bool); 4] = [
    ("tree", true, true, false),
    ("tree, compliant contacts", true, true, true),
    ("tree, no chord steps", true, false, false),
    ("sparse LU", false, false, false),
];

/// The settings of a variant.
fn settings(tree_solve: bool, reuse_factors: bool, compliant: bool) -> SolverSettings {
    let settings = SolverSettings {
        tree_solve,
        reuse_factors,
        ..Default::default()
    };
    if compliant {
        settings.compliant_contacts()
    } else {
        settings
    }
}

/// The corpus files timed, relative to `pybullet_data/`.
const ROBOTS: [&str; 9] = [
    "quadruped/minitaur.urdf",
    "a1/a1.urdf",
    "quadruped/spirit40.urdf",
    "humanoid/humanoid.urdf",
    "r2d2.urdf",
    "mjcf/ant.xml",
    "mjcf/humanoid.xml",
    "mjcf/half_cheetah.xml",
    "mjcf/inverted_double_pendulum.xml",
];

fn corpus() -> Option<PathBuf> {
    let data = axion_cli::corpus_root().join("pybullet_data");
    if data.is_dir() {
        Some(data)
    } else {
        eprintln!(
            "corpus robots skipped: no robot corpus at {} (run scripts/fetch-corpus.sh)",
            data.display()
        );
        None
    }
}

/// The corpus files also timed standing, holding their start pose under position
/// drives (`axion run ROBOT --hold`, gains scaled to the robot).
const STANDING: [&str; 6] = [
    "quadruped/minitaur.urdf",
    "a1/a1.urdf",
    "aliengo/aliengo.urdf",
    "laikago/laikago_toes_zup.urdf",
    "mini_cheetah/mini_cheetah.urdf",
    "quadruped/spirit40.urdf",
];

/// Runs in the ensemble printed before a robot's timing. A landing's iterations have a
/// long tail (the a1's worst step takes a hundred), so the mean moves with the drops
/// chosen: the a1's ensembles of 24 drops from 0 and from 24 µm averaged 3.54 and 3.99
/// iterations a step, of 240 drops from 0 and from 240 µm 3.28 and 3.42
/// (docs/benchmarks.md, "Third sitting of 2026-11-29").
const ENSEMBLE: usize = 240;

/// Prints the mean iterations per step of [`ENSEMBLE`] runs of `sim` from `start` with
/// its moving bodies raised by 0, 1, … µm, their range, and the mean wall time per step.
fn ensemble(name: &str, sim: &mut Simulator, start: &axion::State, steps: usize) {
    let moving: Vec<usize> = (sim.model().bodies().iter().enumerate())
        .filter(|(_, b)| b.is_dynamic())
        .map(|(i, _)| i)
        .collect();
    let (mut iterations, mut wall) = (Vec::with_capacity(ENSEMBLE), 0.0);
    for k in 0..ENSEMBLE {
        let mut raised = start.clone();
        let poses = raised.world_mut(0).poses;
        for &b in &moving {
            poses[b].translation.vector.z += 1e-6 * k as f64;
        }
        *sim.state_mut() = raised;
        let summary = sim.run(steps).expect("step");
        iterations.push(summary.mean_iterations);
        wall += summary.wall.as_secs_f64() / summary.steps as f64;
    }
    let (low, high) = iterations
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    eprintln!(
        "{name}, {ENSEMBLE} runs from 0–{} µm higher: {:.2} Newton iterations per step on average ({low:.2}–{high:.2}), {:.0} µs per step",
        ENSEMBLE - 1,
        iterations.iter().sum::<f64>() / ENSEMBLE as f64,
        1e6 * wall / ENSEMBLE as f64
    );
    *sim.state_mut() = start.clone();
}

/// Prints one run's iterations, converged share and wall time per step, then times
/// the whole run from the same start as benchmark `variant`/`name` of `group`.
fn time(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    (name, variant): (&str, &str),
    model: axion::Model,
    settings: SolverSettings,
) {
    let steps = (DURATION / H).round() as usize;
    let mut sim =
        Simulator::new(model, 1, H, BackendChoice::CpuWith(settings)).expect("valid simulator");
    let start = sim.state().clone();
    let mut chord_steps = 0;
    let summary = sim
        .run_with(steps, |s| {
            chord_steps += s.last_report().worlds[0].chord_steps
        })
        .expect("step");
    eprintln!(
        "{name}, {variant}: {} steps of {H} s, {:.2} Newton iterations per step ({:.2} factorized, the rest chord steps; max {}), {:.1} % converged, {:.0} µs per step",
        summary.steps,
        summary.mean_iterations,
        summary.mean_iterations - chord_steps as f64 / summary.steps as f64,
        summary.max_iterations,
        100.0 * summary.converged_steps as f64 / summary.steps as f64,
        1e6 * summary.wall.as_secs_f64() / summary.steps as f64
    );
    if variant == VARIANTS[0].0 {
        ensemble(name, &mut sim, &start, steps);
    }
    group.bench_with_input(BenchmarkId::new(variant, name), &steps, |b, &n| {
        b.iter(|| {
            *sim.state_mut() = start.clone();
            black_box(sim.run(n).expect("step").converged_steps)
        })
    });
}

fn bench(c: &mut Criterion) {
    let data = corpus();
    let load = |file: &str, setup: &RobotSetup| {
        let data = data.as_ref().expect("corpus");
        robot_model(&data.join(file), setup)
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .0
    };
    let mut models = vec![(
        "skid-steer (built in)".to_string(),
        axion::scenes::skid_steer([2.0, 6.0, 4.0]).expect("built-in robot"),
    )];
    if data.is_some() {
        for file in ROBOTS {
            models.push((file.to_string(), load(file, &RobotSetup::default())));
        }
    }
    let steps = (DURATION / H).round() as usize;
    let mut group = c.benchmark_group("robot_drop");
    group.sample_size(10);
    group.throughput(Throughput::Elements(steps as u64));
    for ((name, model), (variant, tree_solve, reuse_factors, compliant)) in models
        .into_iter()
        .flat_map(|m| VARIANTS.map(|v| (m.clone(), v)))
    {
        let settings = settings(tree_solve, reuse_factors, compliant);
        time(&mut group, (&name, variant), model, settings);
    }
    group.finish();
    if data.is_none() {
        return;
    }
    let mut group = c.benchmark_group("robot_stand");
    group.sample_size(10);
    group.throughput(Throughput::Elements(steps as u64));
    let held = RobotSetup {
        hold: Some(axion_cli::Hold::Scaled),
        ..RobotSetup::default()
    };
    for file in STANDING {
        let model = load(file, &held);
        for (variant, tree_solve, reuse_factors, compliant) in &VARIANTS[..2] {
            let settings = settings(*tree_solve, *reuse_factors, *compliant);
            time(&mut group, (file, variant), model.clone(), settings);
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
