//! Shared strategies and helpers of the constraint tests.
#![allow(dead_code)]

use axion_constraints::joint::JointKind;
use axion_constraints::{Row, RowJacobian};
use axion_math::{MassProperties, Pose, Twist, UnitAxis, angular, integrate, linear, twist};
use nalgebra::{DMatrix, DVector, Isometry3, UnitQuaternion, Vector3, Vector6};
use proptest::prelude::*;

pub fn vec3(range: f64) -> impl Strategy<Value = Vector3<f64>> {
    prop::array::uniform3(-range..range).prop_map(Vector3::from)
}

pub fn rotation() -> impl Strategy<Value = UnitQuaternion<f64>> {
    prop::array::uniform4(-1.0f64..1.0)
        .prop_filter("non-degenerate quaternion", |q| {
            q.iter().map(|x| x * x).sum::<f64>() > 1e-2
        })
        .prop_map(|q| {
            UnitQuaternion::new_normalize(nalgebra::Quaternion::new(q[0], q[1], q[2], q[3]))
        })
}

pub fn pose(range: f64) -> impl Strategy<Value = Pose> {
    (vec3(range), rotation()).prop_map(|(t, r)| Pose::from_parts(t.into(), r))
}

pub fn frame() -> impl Strategy<Value = Isometry3<f64>> {
    pose(1.0)
}

pub fn axis() -> impl Strategy<Value = UnitAxis> {
    vec3(1.0)
        .prop_filter("non-zero axis", |v| v.norm() > 1e-2)
        .prop_map(|v| UnitAxis::normalize(v).unwrap())
}

pub fn twist6(range: f64) -> impl Strategy<Value = Twist> {
    (vec3(range), vec3(range)).prop_map(|(v, w)| twist(v, w))
}

/// Size of the pose perturbation used by the finite differences (m or rad): small
/// enough that the O(δ²) truncation is ~1e-10, large enough that rounding in residuals
/// of size ~10 stays ~1e-15/δ = 1e-10.
pub const FD_STEP: f64 = 1e-5;

/// Relative tolerance on Jacobian × direction against the central difference.
pub const FD_TOL: f64 = 1e-6;

/// Central difference of `residual(q_a ⊕ h G s δu_a, q_b ⊕ h G s δu_b)` in `s`, with
/// `s` chosen so that the pose moves by [`FD_STEP`].
pub fn fd_along(
    residual: impl Fn(&Pose, &Pose) -> f64,
    pose_a: &Pose,
    pose_b: &Pose,
    du_a: &Twist,
    du_b: &Twist,
    h: f64,
) -> f64 {
    let s = FD_STEP / h;
    let at = |sign: f64| {
        residual(
            &integrate(pose_a, &(du_a * (sign * s)), h),
            &integrate(pose_b, &(du_b * (sign * s)), h),
        )
    };
    (at(1.0) - at(-1.0)) / (2.0 * s)
}

/// Asserts `jacobian · δu` equals the central difference within [`FD_TOL`] relative to
/// `|J_a||δu_a| + |J_b||δu_b|`.
pub fn check_jacobian(
    what: &str,
    jacobian: &RowJacobian,
    fd: f64,
    du_a: &Twist,
    du_b: &Twist,
) -> Result<(), TestCaseError> {
    check_jacobian_against(what, jacobian, jacobian, fd, du_a, du_b)
}

/// As [`check_jacobian`], with the tolerance relative to the blocks of `scale_of` (for
/// a row whose Jacobian is a geometric one times a factor that may vanish, like FB's
/// ∂φ/∂g far from contact: the difference is then judged at the geometric scale).
pub fn check_jacobian_against(
    what: &str,
    jacobian: &RowJacobian,
    scale_of: &RowJacobian,
    fd: f64,
    du_a: &Twist,
    du_b: &Twist,
) -> Result<(), TestCaseError> {
    let analytic = jacobian.dot(du_a, du_b);
    let scale = scale_of.body_a.norm() * du_a.norm() + scale_of.body_b.norm() * du_b.norm() + 1e-12;
    prop_assert!(
        (analytic - fd).abs() <= FD_TOL * scale,
        "{what}: J·δu = {analytic}, finite difference = {fd}, relative error {:e}",
        (analytic - fd).abs() / scale
    );
    Ok(())
}

/// One dynamic body attached to the static world by constraint rows.
pub struct OneBody {
    pub mass: MassProperties,
    pub gravity: Vector3<f64>,
}

/// Result of [`OneBody::step`].
pub struct StepResult {
    pub pose: Pose,
    pub velocity: Twist,
    pub lambda: Vec<f64>,
    pub iterations: usize,
    pub residual: f64,
}

impl OneBody {
    /// Solves one implicit step with a dense Newton method: unknowns u⁺ (6) and the
    /// row multipliers λ; dynamics in momentum form
    /// M̃(θ⁺)u⁺ − M̃(θ⁻)u⁻ − h m g − h Σ Jᵀλ = 0, rows from `rows(q⁺, u⁺, λ)`, which
    /// returns (row, force Jacobian of the dynamic body) pairs (body `b` of each row is
    /// the dynamic one). Newton matrix [[M̃, −h Fᵀ], [J, h C]].
    pub fn step(
        &self,
        pose: &Pose,
        velocity: &Twist,
        h: f64,
        n_rows: usize,
        rows: impl Fn(&Pose, &Twist, &[f64]) -> Vec<(Row, Vector6<f64>)>,
    ) -> StepResult {
        let mut u = *velocity;
        let mut lambda = vec![0.0; n_rows];
        let momentum_start = self.mass.momentum(&pose.rotation, velocity);
        let gravity_impulse = twist(self.gravity * (self.mass.mass() * h), Vector3::zeros());
        let mut residual = f64::INFINITY;
        for it in 0..200 {
            let q = integrate(pose, &u, h);
            let r = rows(&q, &u, &lambda);
            let mut dyn_res =
                self.mass.momentum(&q.rotation, &u) - momentum_start - gravity_impulse;
            for ((_, force), l) in r.iter().zip(&lambda) {
                dyn_res -= force * (h * l);
            }
            let n = 6 + n_rows;
            let mut rhs = DVector::zeros(n);
            rhs.rows_mut(0, 6).copy_from(&(-dyn_res));
            let mut k = DMatrix::zeros(n, n);
            let iw = self.mass.world_inertia(&q.rotation);
            for i in 0..3 {
                k[(i, i)] = self.mass.mass();
            }
            k.view_mut((3, 3), (3, 3)).copy_from(&iw);
            for (i, (row, force)) in r.iter().enumerate() {
                for c in 0..6 {
                    k[(c, 6 + i)] = -h * force[c];
                    k[(6 + i, c)] = row.jacobian.body_b[c];
                }
                k[(6 + i, 6 + i)] = h * row.compliance;
                rhs[6 + i] = -row.residual;
            }
            residual = rhs.norm();
            if residual < 1e-11 {
                return StepResult {
                    pose: q,
                    velocity: u,
                    lambda,
                    iterations: it,
                    residual,
                };
            }
            let dx = k.lu().solve(&rhs).expect("non-singular Newton matrix");
            u += dx.rows(0, 6);
            for (l, d) in lambda.iter_mut().zip(dx.rows(6, n_rows).iter()) {
                *l += d;
            }
        }
        StepResult {
            pose: integrate(pose, &u, h),
            velocity: u,
            lambda,
            iterations: 200,
            residual,
        }
    }
}

/// Linear and angular parts, for readable assertions.
pub fn split(u: &Twist) -> (Vector3<f64>, Vector3<f64>) {
    (linear(u), angular(u))
}

/// 512 cases per property, or `PROPTEST_CASES` when set (for longer local runs).
pub fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(512);
    // Some properties discard a share of inputs (near a kink); allow that share.
    ProptestConfig {
        max_global_rejects: 4 * cases,
        ..ProptestConfig::with_cases(cases)
    }
}

/// Every joint kind with rows, with random axes.
pub fn joint_kind() -> impl Strategy<Value = JointKind> {
    prop_oneof![
        axis().prop_map(|axis| JointKind::Revolute { axis }),
        axis().prop_map(|axis| JointKind::Prismatic { axis }),
        Just(JointKind::Ball),
        Just(JointKind::Fixed),
    ]
}
