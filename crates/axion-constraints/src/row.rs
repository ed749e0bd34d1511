//! The common currency of all constraint kinds: Jacobian blocks and rows.
//!
//! Every row touches at most two bodies, called `a` and `b` (for joints: parent and
//! child; for contacts: the body the normal points into and the body it points out of).
//! A body that is the static world still gets a block; the caller ignores it.
//!
//! The linearisation convention (shared with the solver): for a row $i$ with residual
//! $h_i(u, \lambda)$, the Newton system is
//! $$\begin{bmatrix} \tilde M & -h J^\top \\\\ J & h C \end{bmatrix}
//!   \begin{bmatrix} \Delta u \\\\ \Delta\lambda \end{bmatrix}
//!   = -\begin{bmatrix} h_{dyn} \\\\ h_c \end{bmatrix},\qquad
//!   J_i = \frac{\partial h_i}{\partial u^+},\quad C_i = \frac1h \frac{\partial h_i}{\partial \lambda_i},$$
//! where positions depend on velocities through $q^+ = q^- \oplus h\thinspace G\thinspace u^+$, so a
//! position-level error $c(q^+)/h$ has the velocity Jacobian $\partial c/\partial q \cdot G$.

use std::ops::{Add, Mul, Neg};

use axion_math::{MassProperties, Twist};
use nalgebra::{UnitQuaternion, Vector3, Vector6};

/// Jacobian of one scalar row with respect to the twists of its two bodies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowJacobian {
    /// Block of body `a` (linear, angular).
    pub body_a: Vector6<f64>,
    /// Block of body `b` (linear, angular).
    pub body_b: Vector6<f64>,
}

impl RowJacobian {
    /// Builds a row from the linear and angular parts of both blocks.
    #[inline]
    pub fn new(
        lin_a: Vector3<f64>,
        ang_a: Vector3<f64>,
        lin_b: Vector3<f64>,
        ang_b: Vector3<f64>,
    ) -> Self {
        Self {
            body_a: axion_math::twist(lin_a, ang_a),
            body_b: axion_math::twist(lin_b, ang_b),
        }
    }

    /// The zero row.
    #[inline]
    pub fn zeros() -> Self {
        Self {
            body_a: Vector6::zeros(),
            body_b: Vector6::zeros(),
        }
    }

    /// $J u = J_a u_a + J_b u_b$.
    #[inline]
    pub fn dot(&self, u_a: &Twist, u_b: &Twist) -> f64 {
        self.body_a.dot(u_a) + self.body_b.dot(u_b)
    }

    /// Effective inverse mass $J \tilde M^{-1} J^\top$ with world inertias at the given
    /// orientations.
    #[inline]
    pub fn effective_inverse_mass(
        &self,
        mass_a: &MassProperties,
        rotation_a: &UnitQuaternion<f64>,
        mass_b: &MassProperties,
        rotation_b: &UnitQuaternion<f64>,
    ) -> f64 {
        self.body_a
            .dot(&mass_a.inverse_apply(rotation_a, &self.body_a))
            + self
                .body_b
                .dot(&mass_b.inverse_apply(rotation_b, &self.body_b))
    }

    /// Euclidean norm of both blocks together.
    #[inline]
    pub fn norm(&self) -> f64 {
        (self.body_a.norm_squared() + self.body_b.norm_squared()).sqrt()
    }
}

impl Add for RowJacobian {
    type Output = Self;
    #[inline]
    fn add(self, rhs: Self) -> Self {
        Self {
            body_a: self.body_a + rhs.body_a,
            body_b: self.body_b + rhs.body_b,
        }
    }
}

impl Mul<f64> for RowJacobian {
    type Output = Self;
    #[inline]
    fn mul(self, s: f64) -> Self {
        Self {
            body_a: self.body_a * s,
            body_b: self.body_b * s,
        }
    }
}

impl Neg for RowJacobian {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        self * -1.0
    }
}

/// A position-level constraint function $c(q)$ and its velocity Jacobian
/// $\partial c/\partial q \cdot G(q)$ at one configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PositionRow {
    /// $c(q)$ in m or rad.
    pub error: f64,
    /// $\partial c / \partial q \cdot G(q)$.
    pub jacobian: RowJacobian,
}

/// One linearised row of the Newton system: residual $h_i$, Jacobian
/// $J_i = \partial h_i/\partial u^+$ and compliance $C_i = \frac1h\thinspace \partial h_i/\partial\lambda_i$.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// $h_i$.
    pub residual: f64,
    /// $J_i$: also the direction in which $\lambda_i$ acts on the bodies ($h J^\top \lambda$
    /// is the impulse), which makes the reduced system symmetric.
    pub jacobian: RowJacobian,
    /// $C_i \ge 0$.
    pub compliance: f64,
}

/// A compliant position-level row (joints):
/// $$h_i = \frac{c(q^+) + \varepsilon\thinspace \lambda_i}{h}, \qquad
///   J_i = \frac{\partial c}{\partial q} G, \qquad C_i = \frac{\varepsilon}{h^2}.$$
/// At the root $\lambda_i = -c/\varepsilon$: a spring of stiffness $1/\varepsilon$
/// (N/m); $\varepsilon = 0$ is a rigid joint.
#[inline]
pub fn compliant_row(position: &PositionRow, lambda: f64, compliance: f64, h: f64) -> Row {
    Row {
        residual: (position.error + compliance * lambda) / h,
        jacobian: position.jacobian,
        compliance: compliance / (h * h),
    }
}

/// A velocity-level joint row with Baumgarte stabilisation, the alternative to
/// [`compliant_row`]: the joint's function and Jacobian are taken once, at the start of
/// the step (`start`: $c(q^-)$, $J(q^-)$), and the row asks for the relative velocity
/// that removes the fraction $\Upsilon$ of the start error in one step:
/// $$h_i = J_i(q^-)\thinspace u^+ + \frac{\Upsilon\thinspace c(q^-) + \varepsilon\thinspace \lambda_i}{h},
///   \qquad \frac{\partial h_i}{\partial u^+} = J_i(q^-), \qquad C_i = \frac{\varepsilon}{h^2}.$$
/// It is linear in $u^+$ and its force direction $J_i(q^-)$ is fixed (no geometric
/// stiffness), but the joint drifts: $q^+$ follows the velocity along the tangent of
/// the constraint, so an arm of length $L$ turning at $\omega$ opens by about
/// $h^2\omega^2L/2$ per step, and the next step takes back the fraction $\Upsilon$ of
/// the accumulated error ($\Upsilon = 0$: the error only grows). `u_a`, `u_b` are the
/// two bodies' velocities $u^+$.
#[inline]
pub fn velocity_row(
    start: &PositionRow,
    u_a: &Twist,
    u_b: &Twist,
    lambda: f64,
    compliance: f64,
    baumgarte: f64,
    h: f64,
) -> Row {
    Row {
        residual: start.jacobian.dot(u_a, u_b)
            + (baumgarte * start.error + compliance * lambda) / h,
        jacobian: start.jacobian,
        compliance: compliance / (h * h),
    }
}
