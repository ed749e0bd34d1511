//! Geometric stiffness ∂(Fᵀλ)/∂δq of every joint kind and drive coordinate against
//! central differences of the force Jacobians (step 1e-6 rad or m: truncation ~1e-12,
//! rounding ~1e-10 relative). Tolerance 1e-6 relative to |λ|(1 + |F|).

mod common;

use axion_constraints::drive::{CoordinateKind, coordinate, coordinate_stiffness};
use axion_constraints::joint::{Joint, JointFrames, JointGeometry};
use axion_constraints::{RowJacobian, Stiffness};
use axion_math::Pose;
use common::*;
use proptest::prelude::*;

fn assert_close(
    what: &str,
    analytic: &Stiffness,
    fd: &Stiffness,
    scale: f64,
) -> Result<(), TestCaseError> {
    for i in 0..2 {
        for j in 0..2 {
            let diff = (analytic.blocks[i][j] - fd.blocks[i][j]).abs().max();
            prop_assert!(
                diff <= 1e-6 * scale,
                "{what}: block ({i},{j}) differs by {diff:e}\nanalytic {}\nfd {}",
                analytic.blocks[i][j],
                fd.blocks[i][j]
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn joint_stiffness_matches_finite_differences(
        kind in joint_kind(), fp in frame(), fc in frame(), pa in pose(2.0), pb in pose(2.0),
        lambda in prop::array::uniform6(-50.0f64..50.0),
    ) {
        let joint = Joint::new(kind, JointFrames::new(fp, fc).unwrap(), 0.0).unwrap();
        prop_assume!(JointGeometry::new(&joint.frames, &pa, &pb).relative_rotation().w.abs() > 0.05);
        let n = joint.row_count();
        let lambda = &lambda[..n];
        let force = |qa: &Pose, qb: &Pose| {
            let mut rows = Vec::new();
            joint.position_rows(qa, qb, &mut rows);
            rows.iter().zip(lambda).fold(RowJacobian::zeros(), |acc, (r, l)| acc + r.jacobian * *l)
        };
        // Stiffness is linear in λ, so one finite difference of Σ Fᵢλᵢ with unit weight covers all rows.
        let fd = Stiffness::finite_difference(force, &pa, &pb, 1.0, 1e-6);
        let analytic = joint.stiffness(&pa, &pb, lambda);
        let scale = lambda.iter().map(|l| l.abs()).sum::<f64>() * 10.0 + 1e-9;
        assert_close(&format!("{kind:?}"), &analytic, &fd, scale)?;
    }

    #[test]
    fn drive_stiffness_matches_finite_differences(
        revolute in any::<bool>(), ax in axis(), fp in frame(), fc in frame(), pa in pose(2.0),
        pb in pose(2.0), lambda in -50.0f64..50.0,
    ) {
        let frames = JointFrames::new(fp, fc).unwrap();
        let kind = if revolute { CoordinateKind::Angle } else { CoordinateKind::Displacement };
        // Away from the hinge coordinate's singularity (w² + (v·a)² = 0: a half turn about
        // an axis normal to the hinge), where its Jacobian turns fast.
        let rel = JointGeometry::new(&frames, &pa, &pb).relative_rotation();
        prop_assume!(rel.w * rel.w + rel.imag().dot(&ax.vector()).powi(2) > 0.05);
        let fd = Stiffness::finite_difference(|qa, qb| coordinate(kind, &frames, &ax, qa, qb).jacobian, &pa, &pb, lambda, 1e-6);
        let analytic = coordinate_stiffness(kind, &frames, &ax, &pa, &pb, lambda);
        assert_close(&format!("{kind:?} drive"), &analytic, &fd, lambda.abs() * 10.0 + 1e-9)?;
    }
}
