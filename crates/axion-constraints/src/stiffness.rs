//! Geometric stiffness: how a row's force directions turn when the bodies move.
//!
//! A row pushes the bodies with the wrenches $F_a^\top\lambda$ and $F_b^\top\lambda$, where the
//! force Jacobian $F$ depends on the poses (a lever arm rotates with its body, a hinge
//! axis with its parent). The Newton matrix of an implicit step needs
//! $$K_{ij} = \frac{\partial (F_i^\top \lambda)}{\partial \delta q_j},\qquad i, j \in \{a, b\},$$
//! the derivative of body $i$'s wrench along the perturbation $q_j \oplus G\thinspace \delta q_j$,
//! $\delta q_j = (\delta x_j, \delta\phi_j)$. Without it a heavy body hanging on light
//! links makes Newton diverge (docs/step.md, "Newton's method": measured on a chain with
//! a 100× heavier bob at $h = 0.05$).
//!
//! Identities used below, for a world vector $r$ carried by body $j$
//! ($\delta r = \delta\phi_j \times r$) and a fixed vector $f$:
//! $$\delta(r\times f) = (r f^\top - (f\cdot r) I)\thinspace \delta\phi_j,\qquad
//!   \delta(f \times r) = -\delta(r \times f).$$

use std::ops::AddAssign;

use axion_math::{Pose, integrate};
use nalgebra::{Matrix3, Matrix6, Vector3};

use crate::row::RowJacobian;

/// The four 6×6 blocks $K_{ij}$ (rows: force then torque of body $i$; columns:
/// $\delta x_j$ then $\delta\phi_j$). Index 0 is body `a`, 1 is body `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stiffness {
    /// `blocks[i][j]` $= K_{ij}$.
    pub blocks: [[Matrix6<f64>; 2]; 2],
}

impl Default for Stiffness {
    fn default() -> Self {
        Self::zeros()
    }
}

impl AddAssign for Stiffness {
    #[inline]
    fn add_assign(&mut self, rhs: Self) {
        for i in 0..2 {
            for j in 0..2 {
                self.blocks[i][j] += rhs.blocks[i][j];
            }
        }
    }
}

impl Stiffness {
    /// No stiffness.
    #[inline]
    pub fn zeros() -> Self {
        Self {
            blocks: [[Matrix6::zeros(); 2]; 2],
        }
    }

    /// Adds the 3×3 `m` to block $(i, j)$ at (force/torque `row`, position/rotation `col`),
    /// each 0 (linear) or 1 (angular).
    #[inline]
    pub fn add(&mut self, i: usize, j: usize, row: usize, col: usize, m: &Matrix3<f64>) {
        let mut view = self.blocks[i][j].fixed_view_mut::<3, 3>(3 * row, 3 * col);
        view += m;
    }

    /// Central-difference stiffness of any row: differentiates
    /// $F(q)^\top\lambda$ along the 12 unit perturbations of step `step` (m, rad). For rows
    /// without a closed form (the revolute drive) and for testing those with one.
    pub fn finite_difference(
        force: impl Fn(&Pose, &Pose) -> RowJacobian,
        pose_a: &Pose,
        pose_b: &Pose,
        lambda: f64,
        step: f64,
    ) -> Self {
        let mut k = Self::zeros();
        for j in 0..2 {
            for c in 0..6 {
                let mut du = axion_math::Twist::zeros();
                du[c] = step;
                let at = |s: f64| {
                    let (pa, pb) = if j == 0 {
                        (integrate(pose_a, &(du * s), 1.0), *pose_b)
                    } else {
                        (*pose_a, integrate(pose_b, &(du * s), 1.0))
                    };
                    force(&pa, &pb)
                };
                let (plus, minus) = (at(1.0), at(-1.0));
                let d_a = (plus.body_a - minus.body_a) * (lambda / (2.0 * step));
                let d_b = (plus.body_b - minus.body_b) * (lambda / (2.0 * step));
                k.blocks[0][j].set_column(c, &d_a);
                k.blocks[1][j].set_column(c, &d_b);
            }
        }
        k
    }
}

/// $\partial(r\times f)/\partial\phi = r f^\top - (f\cdot r)I$ for $r$ rotating with the body.
#[inline]
pub fn lever_derivative(r: &Vector3<f64>, f: &Vector3<f64>) -> Matrix3<f64> {
    r * f.transpose() - Matrix3::identity() * f.dot(r)
}
