//! Canonical scene 2 (docs/canonical-scenes.md): the pendulum, with both integrators, at
//! h = 0.01 and 0.05.

use axion::prelude::*;
use axion::scenes::{pendulum, pendulum_period};
use axion::{BodyId, Integrator};

/// Simulates `seconds`; returns (max joint error, first period, energy ratio at the end,
/// mean iterations, converged share).
fn run(h: f64, integrator: Integrator, seconds: f64) -> (f64, f64, f64, f64, f64) {
    let settings = SolverSettings {
        integrator,
        ..Default::default()
    };
    let mut sim =
        Simulator::new(pendulum().unwrap(), 1, h, BackendChoice::CpuWith(settings)).unwrap();
    let e0 = sim.energy(0).total();
    let mut worst: f64 = 0.0;
    let mut crossings = Vec::new();
    let mut prev_x: f64 = 1.0;
    let steps = (seconds / h).round() as usize;
    let summary = sim
        .run_with(steps, |s| {
            worst = worst.max(s.joint_errors(0).position);
            // The bob passes the bottom when x changes sign.
            let x = s.state().com_pose(0, BodyId(0)).translation.vector.x;
            if x.signum() != prev_x.signum() {
                let t = s.time() - s.dt() * x / (x - prev_x);
                crossings.push(t);
            }
            prev_x = x;
        })
        .unwrap();
    // Bottom passes at T/4, 3T/4, 5T/4: the first full period is between the 1st and 3rd.
    let period = crossings[2] - crossings[0];
    // Energy above the rest position (bob at the bottom, z = -1 m).
    let ratio = (sim.energy(0).total() + 9.81) / (e0 + 9.81);
    (
        worst,
        period,
        ratio,
        summary.mean_iterations,
        summary.converged_steps as f64 / summary.steps as f64,
    )
}

#[test]
fn pendulum_joint_error_period_and_energy() {
    let exact = pendulum_period(1.0, 9.81, std::f64::consts::FRAC_PI_2);
    assert!((exact - 2.368).abs() < 1e-3, "exact period {exact}");
    for h in [0.01, 0.05] {
        for integrator in [Integrator::BackwardEuler, Integrator::EnergyMomentum] {
            let (err, period, energy, iters, conv) = run(h, integrator, 10.0);
            println!(
                "h = {h}, {integrator:?}: joint error {err:.2e} m, period {period:.4} s ({:+.2} %), energy kept {:.1} %, {iters:.2} iterations/step, converged {:.0} %",
                100.0 * (period / exact - 1.0),
                100.0 * energy,
                100.0 * conv
            );
            assert!(err < 1e-6, "joint error {err}");
            assert!(conv == 1.0, "not every step converged");
            if integrator == Integrator::EnergyMomentum {
                assert!(
                    (period / exact - 1.0).abs() < 0.02,
                    "first period {period} vs exact {exact}"
                );
            }
            if integrator == Integrator::EnergyMomentum && h == 0.01 {
                assert!(energy >= 0.9, "energy-momentum scheme kept only {energy}");
            }
            assert!(energy <= 1.0 + 1e-6, "energy gained: {energy}");
        }
    }
}
