//! Velocity-level joints with Baumgarte stabilisation (`JointDesc::velocity_level`),
//! the alternative to the default position-level rows, on the pendulum of canonical
//! scene 2 (a point mass on a 1 m hinge released horizontal, h = 0.01).
//!
//! The velocity-level rows keep the anchor's velocity at $-\Upsilon e_k/h$ (with $e_k$
//! the anchor's offset at the start of step $k$), so the bob turns about the anchor
//! along the tangent, and the anchor lands off by the second-order term of the
//! rotation: with the arm $a_k$ from the centre of mass to the anchor and the step's
//! angular velocity $\omega_k$,
//! $$e_{k+1} = (1 - \Upsilon)\thinspace e_k - \tfrac12 h^2 |\omega_k|^2 a_k + O(h^3).$$
//! The test runs that recurrence on the simulated $a_k, \omega_k$ and compares it with
//! the simulated offsets; the position-level hinge of the same pendulum keeps its anchor
//! on the axis to rounding.

use axion::BodyId;
use axion::prelude::*;
use axion::scenes::pendulum_with;
use nalgebra::Vector3;

const H: f64 = 0.01;
const STEPS: usize = 150;

/// The anchor's offset from the hinge axis' point (the origin) after a step, and the
/// recurrence's prediction of it.
type Offset = (Vector3<f64>, Vector3<f64>);

/// Per step, the [`Offset`]; and the mean Newton iterations.
fn offsets(baumgarte: Option<f64>) -> (Vec<Offset>, f64) {
    let model = pendulum_with(|hinge| match baumgarte {
        Some(b) => hinge.velocity_level(b),
        None => hinge,
    })
    .unwrap();
    let mut sim = Simulator::new(model, 1, H, BackendChoice::Cpu).unwrap();
    let bob = BodyId(0);
    // The child frame sits 1 m from the bob's centre along its −x axis.
    let anchor = |s: &Simulator| {
        let pose = s.state().com_pose(0, bob);
        (pose * nalgebra::Point3::new(-1.0, 0.0, 0.0)).coords
    };
    let mut predicted = anchor(&sim);
    let mut out = Vec::with_capacity(STEPS);
    let mut iterations = 0;
    for _ in 0..STEPS {
        let start = sim.state().com_pose(0, bob);
        let arm = anchor(&sim) - start.translation.vector;
        let report = sim.step().unwrap();
        assert!(report.worlds[0].converged, "every step converges");
        iterations += report.worlds[0].iterations;
        let omega = axion_math::angular(&sim.state().velocity(0, bob));
        predicted = predicted * (1.0 - baumgarte.unwrap_or(1.0))
            - arm * (0.5 * H * H * omega.norm_squared());
        out.push((anchor(&sim), predicted));
    }
    (out, iterations as f64 / STEPS as f64)
}

#[test]
fn velocity_level_joints_drift_as_the_rotation_predicts() {
    for baumgarte in [0.0, 0.2, 1.0] {
        let (run, iterations) = offsets(Some(baumgarte));
        let largest = run.iter().map(|(e, _)| e.norm()).fold(0.0, f64::max);
        let worst = run.iter().map(|(e, p)| (e - p).norm()).fold(0.0, f64::max);
        // O(h³) per step against the O(h²) drift: the bob turns by hω ≤ 0.045 rad per step
        // (measured within 1.2–1.5 % of the largest offset).
        assert!(
            worst <= 0.05 * largest,
            "Υ = {baumgarte}: offsets {largest:e}, off the recurrence by {worst:e}"
        );
        // The drift is real: at 4.4 rad/s, h²ω²L/2 ≈ 1e-3 m per step.
        assert!(largest > 5e-4, "Υ = {baumgarte}: offsets only {largest:e}");
        eprintln!(
            "Υ = {baumgarte}: largest anchor offset {largest:.3e} m, recurrence within {worst:.1e} m, {iterations:.2} Newton iterations per step"
        );
    }
    // Without stabilisation the drift only accumulates: Υ = 0 ends far off, Υ = 0.2
    // settles near (h²ω²L/2)/Υ.
    let end = |b| offsets(Some(b)).0.last().unwrap().0.norm();
    assert!(end(0.0) > 3.0 * end(0.2), "{} vs {}", end(0.0), end(0.2));
}

#[test]
fn position_level_joints_do_not_drift() {
    let (run, iterations) = offsets(None);
    let largest = run.iter().map(|(e, _)| e.norm()).fold(0.0, f64::max);
    assert!(largest < 1e-10, "position-level hinge off by {largest:e}");
    eprintln!(
        "position level: largest anchor offset {largest:.1e} m, {iterations:.2} Newton iterations per step"
    );
}

#[test]
fn a_baumgarte_factor_outside_zero_to_one_is_refused() {
    for b in [-0.1, 1.5, f64::NAN] {
        let err = pendulum_with(|hinge| hinge.velocity_level(b)).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("hinge") && text.contains("Baumgarte"),
            "{text}"
        );
    }
}
