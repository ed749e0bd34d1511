//! A long soak of a passive scene: millions of steps, reporting every block of steps
//! whether anything went non-finite, whether the total energy ever rose (a passive
//! scene under backward Euler only loses energy), and whether the joint error or the
//! Newton effort grows over time.
//!
//! ```sh
//! cargo run --release --example soak -- chain 1000000
//! cargo run --release --example soak -- stack 1000000
//! ```
//!
//! Prints one line per tenth of the run and a verdict; exits with status 1 if a state
//! went non-finite or the energy rose by more than 1e-9 of its scale in a step.

use axion::prelude::*;
use axion::scenes::{ChainOptions, chain, stack};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let scene = args.get(1).map_or("chain", String::as_str);
    let steps: usize = args.get(2).map_or(Ok(1_000_000), |s| s.parse())?;
    let model = match scene {
        "chain" => chain(ChainOptions::default())?,
        "stack" => stack(5)?,
        other => return Err(format!("unknown scene {other:?}: chain or stack").into()),
    };
    let settings = SolverSettings {
        threads: 1,
        ..SolverSettings::default()
    };
    let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::CpuWith(settings))?;
    let block = (steps / 10).max(1);
    let mut energy = sim.energy(0).total();
    let (mut rises, mut largest_rise, mut unconverged) = (0usize, 0.0f64, 0usize);
    let (mut block_error, mut block_iterations) = (0.0f64, 0usize);
    let start = std::time::Instant::now();
    println!("{scene}: {steps} steps of 0.01 s");
    println!("      step   max joint error (block)   mean iterations   total energy (J)");
    for k in 1..=steps {
        let report = sim.step()?; // a non-finite state is an error naming the body
        block_iterations += report.worlds[0].iterations;
        unconverged += usize::from(!report.worlds[0].converged);
        block_error = block_error.max(sim.joint_errors(0).position);
        let now = sim.energy(0);
        let scale = now.kinetic + now.potential.abs();
        let rise = (now.total() - energy) / scale.max(1e-12);
        if rise > 1e-9 {
            rises += 1;
            largest_rise = largest_rise.max(rise);
        }
        energy = now.total();
        if k % block == 0 {
            println!(
                "{k:>10}   {block_error:>23.3e}   {:>15.3}   {energy:>16.6}",
                block_iterations as f64 / block as f64
            );
            block_error = 0.0;
            block_iterations = 0;
        }
    }
    println!(
        "{} s wall; {unconverged} unconverged step(s); energy rose by more than 1e-9 of its scale in {rises} step(s) (largest {largest_rise:.2e})",
        start.elapsed().as_secs()
    );
    if rises > 0 {
        std::process::exit(1);
    }
    Ok(())
}
