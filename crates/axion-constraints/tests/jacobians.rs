//! Every Jacobian block against the central finite difference of its residual, along
//! `q ⊕ h·G·δu` perturbations of both bodies, at random poses and parameters.
//!
//! Tolerance: |J·δu − FD| ≤ 1e-6 · (|J_a||δu_a| + |J_b||δu_b|). The pose is perturbed by
//! 1e-5 (m, rad), so the central difference's truncation error is ~1e-10 and rounding
//! ~1e-10; 1e-6 leaves room for curvature without hiding a wrong term (a missing
//! lever-arm or sign error is O(1)).

mod common;

use axion_constraints::contact::{
    ContactPoint, compliant_normal_row, normal_row, normal_row_velocity,
};
use axion_constraints::drive::{
    CoordinateKind, Drive, coordinate, prismatic_coordinate, revolute_coordinate,
};
use axion_constraints::joint::{Joint, JointFrames, JointGeometry, JointKind};
use axion_constraints::row::compliant_row;
use axion_math::{MassProperties, Pose, fischer_burmeister_scaled};
use common::*;
use nalgebra::Vector3;
use proptest::prelude::*;

/// Rows with an angle lock are discontinuous where the relative quaternion's scalar
/// part changes sign (the lock switches to the short way round): stay away from it.
fn away_from_half_turn(joint: &Joint, pa: &Pose, pb: &Pose) -> bool {
    let g = JointGeometry::new(&joint.frames, pa, pb);
    g.relative_rotation().w.abs() > 0.05
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn joint_rows(
        kind in joint_kind(), fp in frame(), fc in frame(),
        pa in pose(3.0), pb in pose(3.0),
        du_a in twist6(1.0), du_b in twist6(1.0),
        lambda in prop::array::uniform6(-100.0f64..100.0),
        compliance in 0.0f64..1e-3, h in 1e-3f64..0.1,
    ) {
        let joint = Joint::new(kind, JointFrames::new(fp, fc).unwrap(), compliance).unwrap();
        prop_assume!(away_from_half_turn(&joint, &pa, &pb));
        let n = joint.row_count();
        let mut rows = Vec::new();
        joint.rows(&pa, &pb, &lambda[..n], h, &mut rows);
        prop_assert_eq!(rows.len(), n);
        for (i, row) in rows.iter().enumerate() {
            let residual = |qa: &Pose, qb: &Pose| {
                let mut pos = Vec::new();
                joint.position_rows(qa, qb, &mut pos);
                compliant_row(&pos[i], lambda[i], compliance, h).residual
            };
            let fd = fd_along(residual, &pa, &pb, &du_a, &du_b, h);
            check_jacobian(&format!("{kind:?} row {i}"), &row.jacobian, fd, &du_a, &du_b)?;
            // Compliance is ∂h/∂λ / h.
            prop_assert!((row.compliance - compliance / (h * h)).abs() <= 1e-12 * row.compliance.max(1.0));
        }
    }

    #[test]
    fn drive_coordinates_and_position_drive_rows(
        revolute in any::<bool>(), ax in axis(), fp in frame(), fc in frame(),
        pa in pose(3.0), pb in pose(3.0),
        du_a in twist6(1.0), du_b in twist6(1.0),
        target in -3.0f64..3.0, target_velocity in -2.0f64..2.0, start in -3.0f64..3.0,
        ke in 0.0f64..1e4, kd in 0.1f64..1e3, lambda in -100.0f64..100.0, h in 1e-3f64..0.1,
    ) {
        let frames = JointFrames::new(fp, fc).unwrap();
        let kind = if revolute { CoordinateKind::Angle } else { CoordinateKind::Displacement };
        let coord = coordinate(kind, &frames, &ax, &pa, &pb);
        if revolute {
            // q = 2 atan2(s, w) jumps by 4π where s = 0, w < 0, and the wrapped
            // differences jump by 2π at ±π: stay away from both.
            let rel = JointGeometry::new(&frames, &pa, &pb).relative_rotation();
            prop_assume!(rel.w > -0.95 || rel.imag().dot(&ax.vector()).abs() > 0.05);
            for reference in [target, start] {
                prop_assume!(axion_math::wrap_angle(coord.value - reference).abs() < 3.0);
            }
        }
        let value = |qa: &Pose, qb: &Pose| coordinate(kind, &frames, &ax, qa, qb).value;
        // The coordinate's Jacobian is the derivative of the coordinate ...
        let fd = fd_along(|qa, qb| value(qa, qb) / h, &pa, &pb, &du_a, &du_b, h);
        check_jacobian("joint coordinate", &coord.jacobian, fd, &du_a, &du_b)?;
        // ... and the position drive row's Jacobian that of its residual.
        let drive = Drive::position(target, target_velocity, ke, kd).unwrap();
        let zero = nalgebra::Vector6::zeros();
        let row = drive.row(kind, &coord, start, &zero, &zero, lambda, h);
        let residual = |qa: &Pose, qb: &Pose| {
            let c = coordinate(kind, &frames, &ax, qa, qb);
            drive.row(kind, &c, start, &zero, &zero, lambda, h).residual
        };
        let fd = fd_along(residual, &pa, &pb, &du_a, &du_b, h);
        check_jacobian("position drive", &row.jacobian, fd, &du_a, &du_b)?;
        // Compliance: ∂h/∂λ / h = α = 1/(h² ke + h kd).
        let dl = 1e-3;
        let d_lambda = (drive.row(kind, &coord, start, &zero, &zero, lambda + dl, h).residual
            - drive.row(kind, &coord, start, &zero, &zero, lambda - dl, h).residual) / (2.0 * dl);
        let alpha = 1.0 / (h * h * ke + h * kd);
        prop_assert!((d_lambda / h - alpha).abs() <= 1e-6 * alpha);
        prop_assert!((row.compliance - alpha).abs() <= 1e-12 * alpha);
    }

    /// The velocity drive is linear in u: its Jacobian is the exact derivative in u,
    /// and its compliance 1/(h ke).
    #[test]
    fn velocity_drive_rows(
        revolute in any::<bool>(), ax in axis(), fp in frame(), fc in frame(),
        pa in pose(3.0), pb in pose(3.0), ua in twist6(3.0), ub in twist6(3.0),
        du_a in twist6(1.0), du_b in twist6(1.0),
        target in -2.0f64..2.0, ke in 0.1f64..1e4, lambda in -100.0f64..100.0, h in 1e-3f64..0.1,
    ) {
        let frames = JointFrames::new(fp, fc).unwrap();
        let kind = if revolute { CoordinateKind::Angle } else { CoordinateKind::Displacement };
        let coord = coordinate(kind, &frames, &ax, &pa, &pb);
        let drive = Drive::velocity(target, ke).unwrap();
        let row = drive.row(kind, &coord, 0.0, &ua, &ub, lambda, h);
        let d = 1e-4;
        let fd = (drive.row(kind, &coord, 0.0, &(ua + du_a * d), &(ub + du_b * d), lambda, h).residual
            - drive.row(kind, &coord, 0.0, &(ua - du_a * d), &(ub - du_b * d), lambda, h).residual) / (2.0 * d);
        check_jacobian("velocity drive", &row.jacobian, fd, &du_a, &du_b)?;
        let alpha = 1.0 / (h * ke);
        prop_assert!((row.compliance - alpha).abs() <= 1e-12 * alpha);
        prop_assert!((row.residual - (coord.jacobian.dot(&ua, &ub) - target + alpha * h * lambda)).abs()
            <= 1e-9 * (1.0 + row.residual.abs()));
    }

    /// Contact gap and tangential rows: J_along(d) is the derivative of d·(P_a − P_b).
    #[test]
    fn contact_point_jacobians(
        pa in pose(3.0), pb in pose(3.0), n in axis(), dir in vec3(1.0),
        la in vec3(1.0), lb in vec3(1.0), ta in 0.0f64..0.5, tb in 0.0f64..0.5,
        du_a in twist6(1.0), du_b in twist6(1.0), h in 1e-3f64..0.1,
    ) {
        let c = ContactPoint::new(n.vector(), la, lb, ta, tb).unwrap();
        let fd = fd_along(|qa, qb| c.gap(qa, qb) / h, &pa, &pb, &du_a, &du_b, h);
        check_jacobian("contact gap", &c.normal_jacobian(&pa, &pb), fd, &du_a, &du_b)?;
        let fd = fd_along(|qa, qb| {
            let (p, q) = c.surface_points(qa, qb);
            dir.dot(&(p - q)) / h
        }, &pa, &pb, &du_a, &du_b, h);
        check_jacobian("contact direction", &c.jacobian_along(&pa, &pb, &dir), fd, &du_a, &du_b)?;
    }

    /// Position-level contact row φ(g(q⁺), λ)/h: Jacobian (∂φ/∂g) J_n, compliance
    /// (∂φ/∂λ)/h²; away from the FB corner: N ≥ 1e-2, because φ''' ~ 1/N² makes the
    /// central difference's truncation δ²φ'''/6 ≈ 2e-7 there (δ = 1e-5), under the tolerance.
    #[test]
    fn contact_normal_rows(
        pa in pose(1.0), pb in pose(1.0), n in axis(), la in vec3(1.0), lb in vec3(1.0),
        ta in 0.0f64..0.5, lambda in -50.0f64..200.0, mass in 0.1f64..100.0,
        du_a in twist6(1.0), du_b in twist6(1.0), h in 1e-3f64..0.1,
    ) {
        let c = ContactPoint::new(n.vector(), la, lb, ta, 0.0).unwrap();
        let mp = MassProperties::solid_box(mass, Vector3::new(1.0, 0.5, 0.3)).unwrap();
        let j = c.normal_jacobian(&pa, &pb);
        let w_n = j.effective_inverse_mass(&mp, &pa.rotation, &mp, &pb.rotation);
        let eps_sq = axion_constraints::contact::DEFAULT_FB_EPS_SQ;
        let gap = c.gap(&pa, &pb);
        let r = h * h * w_n;
        prop_assume!((gap * gap + r * r * lambda * lambda).sqrt() > 1e-2);
        let row = normal_row(gap, &j, lambda, w_n, h, eps_sq);
        let residual = |qa: &Pose, qb: &Pose| normal_row(c.gap(qa, qb), &c.normal_jacobian(qa, qb), lambda, w_n, h, eps_sq).row.residual;
        let fd = fd_along(residual, &pa, &pb, &du_a, &du_b, h);
        check_jacobian_against("contact normal", &row.row.jacobian, &j, fd, &du_a, &du_b)?;
        // Step in λ on the FB scale: r·dλ = 1e-4 N (truncation ~1e-8, rounding ~1e-12 relative).
        let dl = 1e-4 * (gap * gap + r * r * lambda * lambda).sqrt() / r;
        let d_lambda = (normal_row(gap, &j, lambda + dl, w_n, h, eps_sq).row.residual
            - normal_row(gap, &j, lambda - dl, w_n, h, eps_sq).row.residual) / (2.0 * dl);
        prop_assert!((d_lambda / h - row.row.compliance).abs() <= 1e-5 * (row.row.compliance.abs() + r / (h * h)));
        prop_assert_eq!(row.force_jacobian, j);
        prop_assert_eq!(row.fb, fischer_burmeister_scaled(gap, lambda, r, eps_sq));
    }

    /// Compliant contact row φ = FB(g + κ r λ, λ; r)/h, with and without smoothing: the
    /// same Jacobian (∂φ/∂a) J_n as [`normal_row`] at the shifted gap, the compliance
    /// (∂φ/∂λ)/h² by central differences (it carries κ r ∂φ/∂a), and at a pressed
    /// contact's root, g = −κ r λ with ε = 0, a zero residual; κ = 0 is `normal_row`.
    #[test]
    fn compliant_contact_normal_rows(
        n in axis(), la in vec3(1.0), pa in pose(1.0), pb in pose(1.0),
        lambda in -50.0f64..200.0, mass in 0.1f64..100.0, h in 1e-3f64..0.1,
        kappa in 1e-8f64..1e-2, smoothed in any::<bool>(),
    ) {
        let c = ContactPoint::new(n.vector(), la, Vector3::zeros(), 0.0, 0.0).unwrap();
        let mp = MassProperties::solid_box(mass, Vector3::new(1.0, 0.5, 0.3)).unwrap();
        let j = c.normal_jacobian(&pa, &pb);
        let w_n = j.effective_inverse_mass(&mp, &pa.rotation, &mp, &pb.rotation);
        let eps_sq = if smoothed { axion_constraints::contact::DEFAULT_FB_EPS_SQ } else { 0.0 };
        let gap = c.gap(&pa, &pb);
        let r = h * h * w_n;
        let shifted = gap + kappa * r * lambda;
        prop_assume!((shifted * shifted + r * r * lambda * lambda).sqrt() > 1e-2);
        let row = compliant_normal_row(gap, &j, lambda, w_n, h, eps_sq, kappa);
        let plain = normal_row(shifted, &j, lambda, w_n, h, eps_sq);
        prop_assert_eq!(row.row.residual, plain.row.residual);
        prop_assert_eq!(row.row.jacobian, plain.row.jacobian);
        let dl = 1e-4 * (shifted * shifted + r * r * lambda * lambda).sqrt() / r;
        let at = |l: f64| compliant_normal_row(gap, &j, l, w_n, h, eps_sq, kappa).row.residual;
        let d_lambda = (at(lambda + dl) - at(lambda - dl)) / (2.0 * dl);
        prop_assert!((d_lambda / h - row.row.compliance).abs() <= 1e-5 * (row.row.compliance.abs() + r / (h * h)));
        prop_assert_eq!(compliant_normal_row(gap, &j, lambda, w_n, h, eps_sq, 0.0), normal_row(gap, &j, lambda, w_n, h, eps_sq));
        let pressed = lambda.abs() + 1.0;
        let root = compliant_normal_row(-kappa * r * pressed, &j, pressed, w_n, h, 0.0, kappa);
        prop_assert!(root.row.residual.abs() <= 1e-15 * r * pressed / h, "{}", root.row.residual);
    }

    /// Velocity-level contact row: Jacobian (∂φ/∂a) J_n in u, compliance (∂φ/∂λ)/h.
    #[test]
    fn contact_velocity_rows(
        pa in pose(1.0), pb in pose(1.0), n in axis(), la in vec3(1.0),
        ua in twist6(3.0), ub in twist6(3.0), du_a in twist6(1.0), du_b in twist6(1.0),
        bias in -1.0f64..1.0, lambda in -50.0f64..200.0, w_n in 0.01f64..10.0, h in 1e-3f64..0.1,
    ) {
        let c = ContactPoint::new(n.vector(), la, Vector3::zeros(), 0.0, 0.0).unwrap();
        let j = c.normal_jacobian(&pa, &pb);
        let a = j.dot(&ua, &ub) + bias;
        prop_assume!((a * a + (h * w_n * lambda).powi(2)).sqrt() > 1e-2);
        let row = normal_row_velocity(&j, &ua, &ub, bias, lambda, w_n, h, 1e-12).row;
        let d = 1e-6;
        let fd = (normal_row_velocity(&j, &(ua + du_a * d), &(ub + du_b * d), bias, lambda, w_n, h, 1e-12).row.residual
            - normal_row_velocity(&j, &(ua - du_a * d), &(ub - du_b * d), bias, lambda, w_n, h, 1e-12).row.residual) / (2.0 * d);
        check_jacobian_against("velocity contact", &row.jacobian, &j, fd, &du_a, &du_b)?;
    }
}

/// At an assembled joint the exact Jacobians reduce to the textbook small-angle ones.
#[test]
fn jacobians_at_assembly_are_the_textbook_ones() {
    let pa = Pose::new(Vector3::new(0.0, 0.0, 2.0), Vector3::new(0.1, 0.2, 0.3));
    let fp = nalgebra::Isometry3::new(Vector3::new(0.5, 0.0, 0.0), Vector3::new(0.0, 0.4, 0.0));
    let fc = nalgebra::Isometry3::new(Vector3::new(-0.5, 0.0, 0.0), Vector3::zeros());
    // Place the child so that the joint frames coincide.
    let pb = pa * fp * fc.inverse();
    let frames = JointFrames::new(fp, fc).unwrap();
    let g = JointGeometry::new(&frames, &pa, &pb);
    let axis = axion_math::UnitAxis::y();
    let rev = revolute_coordinate(&g, &axis);
    let axis_world = g.frame_parent.rotation * axis.vector();
    assert!(rev.value.abs() < 1e-12);
    assert!((rev.jacobian.body_b.fixed_rows::<3>(3) - axis_world).norm() < 1e-12);
    let pri = prismatic_coordinate(&g, &axis);
    assert!(pri.value.abs() < 1e-12);
    assert!((pri.jacobian.body_b.fixed_rows::<3>(0) - axis_world).norm() < 1e-12);
    let joint = Joint::new(JointKind::Fixed, frames, 0.0).unwrap();
    let mut rows = Vec::new();
    joint.position_rows(&pa, &pb, &mut rows);
    for (k, row) in rows[3..].iter().enumerate() {
        let e = g.frame_parent.rotation * Vector3::ith(k, 1.0);
        assert!(row.error.abs() < 1e-12);
        assert!((row.jacobian.body_b.fixed_rows::<3>(3) - e).norm() < 1e-12);
    }
    assert!(rows.iter().all(|r| r.error.abs() < 1e-12));
}

#[test]
fn bad_constraint_inputs_get_typed_errors() {
    use axion_constraints::ConstraintError;
    use axion_constraints::contact::VelocityContact;
    use axion_constraints::friction::FrictionCone;
    let frames = JointFrames::at_anchors(Vector3::zeros(), Vector3::zeros()).unwrap();
    assert!(matches!(
        Joint::new(JointKind::Ball, frames, -1.0),
        Err(ConstraintError::Negative { .. })
    ));
    assert!(matches!(
        Joint::new(JointKind::Ball, frames, f64::NAN),
        Err(ConstraintError::Math(_))
    ));
    assert!(matches!(
        JointFrames::at_anchors(Vector3::new(f64::INFINITY, 0.0, 0.0), Vector3::zeros()),
        Err(ConstraintError::Math(_))
    ));
    assert!(matches!(
        Drive::position(0.0, 0.0, 0.0, 0.0),
        Err(ConstraintError::ZeroDriveGains { .. })
    ));
    assert!(matches!(
        Drive::position(0.0, 0.0, -1.0, 1.0),
        Err(ConstraintError::Negative { .. })
    ));
    assert!(matches!(
        Drive::position(f64::NAN, 0.0, 1.0, 1.0),
        Err(ConstraintError::Math(_))
    ));
    assert!(matches!(
        Drive::velocity(1.0, 0.0),
        Err(ConstraintError::ZeroDriveGains { .. })
    ));
    assert!(matches!(
        ContactPoint::new(
            Vector3::new(0.0, 0.0, 2.0),
            Vector3::zeros(),
            Vector3::zeros(),
            0.0,
            0.0
        ),
        Err(ConstraintError::Math(axion_math::MathError::NotUnit { .. }))
    ));
    assert!(matches!(
        ContactPoint::new(Vector3::z(), Vector3::zeros(), Vector3::zeros(), -0.1, 0.0),
        Err(ConstraintError::Negative { .. })
    ));
    assert!(matches!(
        FrictionCone::isotropic(-0.5),
        Err(ConstraintError::Negative { .. })
    ));
    assert!(matches!(
        FrictionCone::elliptic(0.5, f64::NAN),
        Err(ConstraintError::Math(_))
    ));
    assert!(matches!(
        VelocityContact::new(1.5, 0.2),
        Err(ConstraintError::OutsideUnitInterval { .. })
    ));
    let msg = Drive::position(0.0, 0.0, -3.0, 1.0)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("ke") && msg.contains("-3"), "{msg}");
}
