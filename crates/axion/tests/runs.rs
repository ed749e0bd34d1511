//! Runs of many steps (`Simulator::run`, `run_every`) give exactly what stepping one
//! step at a time gives: the same state, bit for bit, and the same statistics. On the
//! GPU the run keeps the state on the device between the calls of `observe`.

use std::ops::ControlFlow;

use axion::prelude::*;
use axion::{RunTotals, scenes};

/// The skid-steer turning, three worlds started at different chassis speeds (so a
/// world's result is its own), with at most `iterations` Newton iterations a step.
fn turning(backend: impl Fn(usize) -> BackendChoice, iterations: usize) -> Simulator {
    let model = scenes::skid_steer([6.0, 2.0, 4.0]).unwrap();
    let chassis = model
        .bodies()
        .iter()
        .position(|b| b.name == "chassis")
        .map(axion::BodyId)
        .unwrap();
    let mut sim = Simulator::new(model, 3, 0.02, backend(iterations)).unwrap();
    for w in 0..3 {
        let mut u = sim.state().velocity(w, chassis);
        u[0] += 0.2 * w as f64;
        sim.state_mut().set_velocity(w, chassis, u);
    }
    sim
}

/// Steps `steps` times one step at a time, summing the statistics.
fn step_by_step(sim: &mut Simulator, steps: usize) -> RunTotals {
    let mut totals = RunTotals::default();
    for _ in 0..steps {
        totals.add(sim.step().unwrap());
    }
    totals
}

/// Runs `steps` steps of `make`'s simulator three ways (one step at a time, `run`, and
/// `run_every` with observations every 70 steps) and checks that they agree exactly.
/// Returns the step-by-step totals.
fn runs_agree(make: impl Fn() -> Simulator, steps: usize) -> RunTotals {
    let mut single = make();
    let totals = step_by_step(&mut single, steps);

    let mut whole = make();
    let summary = whole.run(steps).unwrap();
    assert_eq!(whole.state(), single.state(), "run({steps}) differs");
    assert_eq!(whole.last_report(), single.last_report());

    let mut observed = make();
    let mut seen = Vec::new();
    let every = observed
        .run_every(steps, 70, |sim| {
            seen.push(sim.time());
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(observed.state(), single.state(), "run_every differs");
    let dt = observed.dt();
    let expected: Vec<usize> = (1..=steps.div_ceil(70))
        .map(|k| (70 * k).min(steps))
        .collect();
    assert_eq!(seen.len(), expected.len(), "observed after every 70th step");
    for (t, k) in seen.iter().zip(expected) {
        assert!(
            (t - k as f64 * dt).abs() < 1e-9,
            "observed at {t} s, not step {k}"
        );
    }

    for s in [summary, every] {
        assert_eq!(s.steps, totals.steps);
        assert_eq!(s.converged_steps, totals.converged_steps);
        assert_eq!(s.max_iterations, totals.max_iterations);
        assert_eq!(s.mean_iterations, totals.mean_iterations());
        assert_eq!(s.iterations, totals.iterations);
        assert_eq!(s.converged_world_steps, totals.converged_world_steps);
    }
    totals
}

#[test]
fn cpu_runs_equal_stepping() {
    let cpu = |iterations| {
        BackendChoice::CpuWith(axion::SolverSettings {
            max_iterations: iterations,
            ..Default::default()
        })
    };
    // Four iterations are too few for some turning steps: both counts are exercised.
    let totals = runs_agree(|| turning(cpu, 4), 120);
    assert!(
        0 < totals.converged_steps && totals.converged_steps < totals.steps,
        "{totals:?}"
    );
}

#[test]
fn observe_can_stop_a_run() {
    let mut sim = Simulator::new(scenes::pendulum().unwrap(), 1, 0.01, BackendChoice::Cpu).unwrap();
    let mut calls = 0;
    let summary = sim
        .run_every(100, 10, |_| {
            calls += 1;
            if calls == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
    assert_eq!((calls, summary.steps), (3, 30));
    assert!((sim.time() - 0.3).abs() < 1e-12);
}

/// The GPU's run crosses its blocks of 192 steps (statistics read back between them)
/// and still equals stepping, step counts of unconverged steps included.
#[cfg(feature = "gpu")]
#[test]
fn gpu_runs_equal_stepping() {
    if !axion::device_tests_run("gpu_runs_equal_stepping") {
        return;
    }
    let gpu = |iterations| {
        BackendChoice::GpuWith(axion::GpuSettings {
            max_iterations: iterations,
            ..Default::default()
        })
    };
    let totals = runs_agree(|| turning(gpu, 4), 230);
    assert!(
        0 < totals.converged_steps && totals.converged_steps < totals.steps,
        "{totals:?}"
    );
}
