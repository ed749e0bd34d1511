//! Robots of the corpus in batches on the GPU backend, against the CPU reference: the
//! drop of `axion run ROBOT` (a URDF robot limp on flat ground from 1 mm above it, an
//! MJCF model as written on its own floor) for 0.5 s at h = 0.01, four identical worlds
//! on the GPU beside one world on the CPU.
//!
//! The robots are those of the corpus that pass the CPU's own drop bar at h = 0.01
//! (`corpus.rs`) and that the GPU backend runs: its narrow phase has spheres, boxes,
//! capsules, cylinders and half-spaces (not meshes or convex hulls: r2d2, kuka_iiwa,
//! laikago, mini_cheetah), and it has no massless frames (MJCF's compound joints:
//! humanoid, hopper, walker2d, half_cheetah, swimmer) yet (docs/gpu.md). Every one is a
//! tree of bodies on the ground, so the device solves its Newton systems along the tree.
//!
//! Each must be solved along its tree also under lavapipe's loop budget
//! (`axion::solved_along_tree`), and must, on the GPU: converge in every world-step but
//! at most 1 %, keep its joints
//! within 2e-6 m (the GPU's position tolerance, f32), end with less than 1 mm of
//! penetration and run its four worlds bit for bit alike. Its bodies must stay within
//! 1 mm of the CPU's — the largest centre-of-mass distance of any body over the run —
//! or, where the CPU itself moves further than that when it stops at the GPU's
//! tolerances, within twice that distance. The CPU runs the GPU's discrete system
//! (`axion::cpu_settings_like`: the GPU's friction creep and fallback creep) to its own
//! tolerances, and again to the GPU's (1e-4 m/s, 2e-6 m) by two paths, with and without
//! chord steps on kept factors (the same tolerances, other iterates): the a1's and
//! aliengo's landings move their bodies by about 2 mm between the run to the CPU's
//! tolerances and one of those two, which is what the GPU's f32 tolerances allow it
//! (docs/gpu.md, "Corpus robots on the device"). One path alone can land closer by
//! chance: the a1's with chord steps came within 0.37 mm, its run without them 2.4 mm
//! away, while the two paths to the CPU's own tolerances end within 3e-13 m.
//!
//! Device tests: skipped with a line saying so where no adapter is found, a failure
//! under `AXION_GPU_TESTS=require` (CI, on lavapipe).

mod common;

use axion::{BackendChoice, BodyId, GpuSettings, Simulator, SolverSettings};
use axion_cli::{RobotSetup, robot_model};
use common::corpus;

const H: f64 = 0.01;
const SECONDS: f64 = 0.5;
const WORLDS: usize = 4;

/// The corpus files, relative to `pybullet_data/`.
const ROBOTS: [&str; 10] = [
    "quadruped/minitaur.urdf",
    "quadruped/spirit40.urdf",
    "racecar/racecar.urdf",
    "mjcf/ant.xml",
    "cartpole.urdf",
    "pendulum5.urdf",
    "quadruped/vision60.urdf",
    "a1/a1.urdf",
    "aliengo/aliengo.urdf",
    "humanoid/humanoid.urdf",
];

/// The largest distance between the two states' centres of mass (world 0 of each).
fn distance(a: &Simulator, b: &Simulator, bodies: usize) -> f64 {
    (0..bodies)
        .map(|k| {
            let (p, q) = (
                a.state().com_pose(0, BodyId(k)),
                b.state().com_pose(0, BodyId(k)),
            );
            (p.translation.vector - q.translation.vector).norm()
        })
        .fold(0.0, f64::max)
}

#[test]
fn corpus_robots_in_gpu_batches_match_the_cpu() {
    if !axion::device_tests_run("axion-cli GPU corpus test") {
        return;
    }
    let Some(data) = corpus() else { return };
    let gpu_settings = GpuSettings::default();
    let reference = axion::cpu_settings_like(&gpu_settings);
    let loose = SolverSettings {
        velocity_tolerance: gpu_settings.velocity_tolerance,
        position_tolerance: gpu_settings.position_tolerance,
        contact_tolerance: gpu_settings.contact_tolerance,
        ..reference
    };
    let loose_without_chords = SolverSettings {
        reuse_factors: false,
        ..loose
    };
    let mut failures = Vec::new();
    for file in ROBOTS {
        let (model, _) = robot_model(&data.join(file), &RobotSetup::default())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut gpu = Simulator::new(model.clone(), WORLDS, H, BackendChoice::Gpu)
            .unwrap_or_else(|e| panic!("{file} on the GPU: {e}"));
        let cpu = |s| Simulator::new(model.clone(), 1, H, BackendChoice::CpuWith(s)).unwrap();
        let mut cpu_ref = cpu(reference);
        let mut cpu_loose = [cpu(loose), cpu(loose_without_chords)];
        let bodies = gpu.model().bodies().len();
        let n = (SECONDS / H).round() as usize;
        let (mut converged, mut iterations, mut joint_error) = (0, 0, 0.0f64);
        let (mut to_cpu, mut spread) = (0.0f64, 0.0f64);
        let mut alike = true;
        for _ in 0..n {
            let report = gpu.step().unwrap();
            cpu_ref.step().unwrap();
            for c in &mut cpu_loose {
                c.step().unwrap();
                spread = spread.max(distance(c, &cpu_ref, bodies));
            }
            converged += report.worlds.iter().filter(|s| s.converged).count();
            iterations += report.worlds.iter().map(|s| s.iterations).sum::<usize>();
            let state = gpu.state();
            alike &= (1..WORLDS).all(|w| {
                state.world_poses(w) == state.world_poses(0)
                    && state.world_velocities(w) == state.world_velocities(0)
            });
            joint_error = joint_error.max(gpu.joint_errors(0).position);
            to_cpu = to_cpu.max(distance(&gpu, &cpu_ref, bodies));
        }
        let end = axion::violations(gpu.model(), gpu.state().world_poses(0)).unwrap();
        let depth = end.penetration.map_or(0.0, |p| p.0);
        let share = converged as f64 / (n * WORLDS) as f64;
        let bound = f64::max(1e-3, 2.0 * spread);
        let line = format!(
            "{file}: {:.1} % of world-steps converged, {:.2} iterations per world-step, joint error {joint_error:.1e} m, penetration {depth:.1e} m, largest distance to the CPU {to_cpu:.1e} m (the CPU at the GPU's tolerances: {spread:.1e} m), worlds alike: {alike}",
            100.0 * share,
            iterations as f64 / (n * WORLDS) as f64,
        );
        println!("{line}");
        if share < 0.99 || joint_error > 2e-6 || depth >= 1e-3 || to_cpu > bound || !alike {
            failures.push(line);
        }
        // Solved along the tree also where a loop budget applies (lavapipe), so that a
        // factorization grown past it cannot fall back on the Krylov solve unnoticed.
        if !axion::solved_along_tree(&model, true).unwrap() {
            failures.push(format!(
                "{file}: not solved along the tree under lavapipe's loop budget"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
