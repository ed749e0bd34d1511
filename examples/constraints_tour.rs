//! A tour of the constraint rows: each kind evaluated at a slightly violated
//! configuration, with its Jacobian checked against a central finite difference.
//!
//! ```text
//! cargo run --release --example constraints_tour
//! ```

use axion_constraints::contact::{ContactPoint, DEFAULT_FB_EPS_SQ, normal_row};
use axion_constraints::drive::{CoordinateKind, Drive, coordinate};
use axion_constraints::friction::{FrictionCone, projection};
use axion_constraints::joint::{Joint, JointFrames, JointKind};
use axion_constraints::{PositionRow, RowJacobian};
use axion_math::{MassProperties, Pose, Twist, UnitAxis, integrate};
use nalgebra::{Isometry3, Vector2, Vector3};

/// Largest relative difference between `J·δu` and the central difference of `error`
/// along `q ⊕ G δu`, over the 12 unit directions of both bodies.
fn jacobian_check(
    error: impl Fn(&Pose, &Pose) -> f64,
    jac: &RowJacobian,
    pa: &Pose,
    pb: &Pose,
) -> f64 {
    let step = 1e-6;
    let mut worst: f64 = 0.0;
    for k in 0..12 {
        let mut du = [Twist::zeros(), Twist::zeros()];
        du[k / 6][k % 6] = 1.0;
        let at = |s: f64| {
            error(
                &integrate(pa, &(du[0] * s), 1.0),
                &integrate(pb, &(du[1] * s), 1.0),
            )
        };
        let fd = (at(step) - at(-step)) / (2.0 * step);
        let analytic = jac.dot(&du[0], &du[1]);
        worst = worst.max((fd - analytic).abs() / (1.0 + jac.norm()));
    }
    worst
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A 1 m bar hanging from the world at (0, 0, 2) on a hinge about world y, swung by
    // 0.4 rad about the hinge; the child is then displaced by 1 mm along x and twisted
    // by 0.01 rad about x so that every row has something to report.
    let world = Pose::identity();
    let frames = JointFrames::new(
        Isometry3::translation(0.0, 0.0, 2.0),
        Isometry3::translation(0.0, 0.0, 0.5),
    )?;
    let rotation = nalgebra::UnitQuaternion::new(Vector3::new(0.01, 0.4, 0.0));
    let com = Vector3::new(0.001, 0.0, 2.0) - rotation * Vector3::new(0.0, 0.0, 0.5);
    let bar = Pose::from_parts(com.into(), rotation);
    println!(
        "joint rows of a swung bar, 1 mm and 0.01 rad off its hinge (error, |J|, Jacobian check):"
    );
    for (name, kind) in [
        (
            "revolute",
            JointKind::Revolute {
                axis: UnitAxis::y(),
            },
        ),
        (
            "prismatic",
            JointKind::Prismatic {
                axis: UnitAxis::z(),
            },
        ),
        ("ball", JointKind::Ball),
        ("fixed", JointKind::Fixed),
    ] {
        let joint = Joint::new(kind, frames, 0.0)?;
        let mut rows: Vec<PositionRow> = Vec::new();
        joint.position_rows(&world, &bar, &mut rows);
        for (i, row) in rows.iter().enumerate() {
            let check = jacobian_check(
                |a, b| {
                    let mut r = Vec::new();
                    joint.position_rows(a, b, &mut r);
                    r[i].error
                },
                &row.jacobian,
                &world,
                &bar,
            );
            println!(
                "  {name:<9} row {i}: c = {:+.6e}  |J| = {:.3}  FD rel. diff {check:.1e}",
                row.error,
                row.jacobian.norm()
            );
        }
    }

    let angle = coordinate(CoordinateKind::Angle, &frames, &UnitAxis::y(), &world, &bar);
    let drive = Drive::position(0.5, 0.0, 1000.0, 25.0)?;
    let h = 0.01;
    println!(
        "\nposition drive to 0.5 rad: joint angle {:.4} rad, α = {:.3e}, PD force at rest {:.2} N·m",
        angle.value,
        drive.compliance(h),
        drive.law(
            CoordinateKind::Angle,
            &angle,
            angle.value,
            &Twist::zeros(),
            &Twist::zeros(),
            h
        )
    );

    // A 1 kg ball of radius 0.5 m, 1 mm into the ground: the contact row pushes it out.
    let contact = ContactPoint::new(-Vector3::z(), Vector3::zeros(), Vector3::zeros(), 0.0, 0.5)?;
    let ball = Pose::translation(0.0, 0.0, 0.499);
    let ball_mass = MassProperties::solid_sphere(1.0, 0.5)?;
    let jn = contact.normal_jacobian(&world, &ball);
    let w_n = jn.effective_inverse_mass(
        &MassProperties::infinite(),
        &world.rotation,
        &ball_mass,
        &ball.rotation,
    );
    let row = normal_row(
        contact.gap(&world, &ball),
        &jn,
        0.0,
        w_n,
        h,
        DEFAULT_FB_EPS_SQ,
    );
    println!(
        "\nball 1 mm into the ground: gap {:+.4e} m, residual φ/h = {:+.4e} m/s, ∂φ/∂g = {:.3}",
        contact.gap(&world, &ball),
        row.row.residual,
        row.fb.d_a
    );

    // Friction of a 1 kg box on a 35° slope with μ = 0.5 (normal force m g cos 35°):
    // the force needed to stick, m g sin 35°, lies outside the cone, so it slips.
    let cone = FrictionCone::isotropic(0.5)?;
    let (s, c) = 35f64.to_radians().sin_cos();
    let lambda_n = 9.81 * c;
    let stick_force = Vector2::new(-9.81 * s, 0.0);
    let eval = projection::evaluate(
        &cone,
        &stick_force,
        lambda_n,
        &Vector2::zeros(),
        &Vector2::new(1.0, 1.0),
        h,
    );
    println!(
        "box on a 35° slope, μ = 0.5: holding force {:.3} N > μ λ_n = {:.3} N → {:?}, residual {:.3} N",
        -stick_force.x,
        0.5 * lambda_n,
        eval.state,
        eval.residual.norm()
    );
    Ok(())
}
