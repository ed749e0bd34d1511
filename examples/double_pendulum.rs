//! The reference implementation's double pendulum (two 80 kg, 2 m bars released
//! horizontal), simulated for 10 s at h = 0.01 with both time integrators. Prints, once
//! per simulated second, the total energy, the largest joint error and the Newton
//! iterations, then a summary.
//!
//! ```text
//! cargo run --release --example double_pendulum [-- STEP_SECONDS]
//! ```

use axion::prelude::*;
use axion::scenes::double_pendulum;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let h: f64 = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|_| format!("time step must be a number of seconds, got {arg:?}"))?,
        None => 0.01,
    };
    let steps_per_second = (1.0 / h).round() as usize;
    let mut sims = Vec::new();
    for integrator in [Integrator::BackwardEuler, Integrator::EnergyMomentum] {
        let settings = SolverSettings {
            integrator,
            ..Default::default()
        };
        sims.push(Simulator::new(
            double_pendulum()?,
            1,
            h,
            BackendChoice::CpuWith(settings),
        )?);
    }
    // Energy is measured above the rest state: both bars hanging from the anchor at
    // z = 5 m, their centres at z = 4 m and 2 m.
    let rest = 80.0 * 9.81 * (4.0 + 2.0);
    let e0 = sims[0].energy(0).total() - rest;
    println!(
        "double pendulum, h = {h} s, backend: {}",
        sims[0].backend_name()
    );
    println!(
        "energy above rest E/E0 (E0 = {e0:.1} J), largest joint error, Newton iterations per step"
    );
    println!(
        "{:>5} | {:>26} | {:>26}",
        "", "backward Euler (default)", "energy-momentum"
    );
    println!(
        "{:>5} | {:>9} {:>9} {:>6} | {:>9} {:>9} {:>6}",
        "t [s]", "E/E0", "err [m]", "iter", "E/E0", "err [m]", "iter"
    );
    let mut totals = vec![];
    for second in 1..=10 {
        let mut row = format!("{second:>5} |");
        for sim in sims.iter_mut() {
            let mut worst: f64 = 0.0;
            let summary = sim.run_with(steps_per_second, |s| {
                worst = worst.max(s.joint_errors(0).position)
            })?;
            row += &format!(
                " {:>9.4} {:>9.1e} {:>6.2} |",
                (sim.energy(0).total() - rest) / e0,
                worst,
                summary.mean_iterations
            );
            totals.push(summary);
        }
        println!("{}", row.trim_end_matches('|'));
    }
    for (k, name) in ["backward Euler", "energy-momentum"].iter().enumerate() {
        let runs: Vec<_> = totals.iter().skip(k).step_by(2).collect();
        let steps: usize = runs.iter().map(|r| r.steps).sum();
        let converged: usize = runs.iter().map(|r| r.converged_steps).sum();
        let wall: f64 = runs.iter().map(|r| r.wall.as_secs_f64()).sum();
        let iterations: f64 = runs
            .iter()
            .map(|r| r.mean_iterations * r.steps as f64)
            .sum::<f64>()
            / steps as f64;
        println!(
            "{name}: {steps} steps in {:.1} ms ({:.0} steps/s, real-time factor {:.0}), {iterations:.2} iterations/step, {converged}/{steps} converged",
            wall * 1e3,
            steps as f64 / wall,
            steps as f64 * h / wall
        );
    }
    Ok(())
}
