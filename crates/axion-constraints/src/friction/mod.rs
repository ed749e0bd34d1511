//! Coulomb friction: two tangential rows per contact.
//!
//! The friction force $\lambda_t \in \mathbb R^2$ (N, in a tangent frame $(t_1, t_2)$)
//! acts against the tangential slip velocity $v_t = J_t u^+$ (m/s, velocity of `a`
//! relative to `b`) and lies in the cone
//! $$\Big(\frac{\lambda_1}{\mu_1}\Big)^2 + \Big(\frac{\lambda_2}{\mu_2}\Big)^2 \le \lambda_n^2,$$
//! a disk of radius $\mu\lambda_n$ when isotropic and an ellipse when not. Coulomb's law
//! (maximal dissipation): sticking ($v_t = 0$) anywhere in the cone, or slipping with
//! the force on the boundary, opposite to the slip in the cone's metric.
//!
//! Three formulations live here:
//! * [`fixed_point`] — the reference's compliance $W$ built from the previous iterate
//!   (kept for comparison; it can report convergence while a contact carries several
//!   times its Coulomb limit, see docs/constraints.md, "Why the reference's friction
//!   sticks");
//! * [`projection`] — the residual $\lambda_t - \Pi_{cone}(\lambda_t - \rho v_t)$ and its
//!   generalized Jacobian, for a semismooth Newton method on the current iterate;
//! * [`symmetric`] — the same decision with a symmetric positive definite linearisation
//!   (stick rows, or one row across the slip direction) for Krylov solvers.
//!
//! **Elliptic cones** are handled in scaled variables where the cone is a disk. With
//! $\mu_g = \sqrt{\mu_1\mu_2}$ and $s_i = \mu_i/\mu_g$:
//! $$\hat\lambda_i = \lambda_i / s_i,\qquad \hat v_i = s_i v_i,\qquad \text{radius } \mu_g\lambda_n,$$
//! which keeps the dissipation $\hat\lambda\cdot\hat v = \lambda\cdot v$. When
//! $\mu_1 = \mu_2$, $s = (1, 1)$ and every formula is the isotropic one, bit for bit.

pub mod fixed_point;
pub mod projection;
pub mod symmetric;

use axion_math::orthobasis;
use nalgebra::{Vector2, Vector3};

use crate::error::{ConstraintError, non_negative};

/// Smallest friction coefficient in the cone metric, relative to the larger one: a zero
/// coefficient along one axis is treated as `1e-9 · max(μ₁, μ₂)` so the scaling stays
/// finite (the force along that axis is then at most 1e-9 of the other's).
pub const MU_FLOOR_RELATIVE: f64 = 1e-9;

/// A Coulomb cone: friction coefficients along $t_1$ and $t_2$.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrictionCone {
    mu: Vector2<f64>,
}

impl FrictionCone {
    /// An isotropic cone, $\mu \ge 0$.
    pub fn isotropic(mu: f64) -> Result<Self, ConstraintError> {
        Self::elliptic(mu, mu)
    }

    /// An elliptic cone with $\mu_1$ along $t_1$ and $\mu_2$ along $t_2$, both `≥ 0`.
    pub fn elliptic(mu_1: f64, mu_2: f64) -> Result<Self, ConstraintError> {
        non_negative("friction coefficient", mu_1)?;
        non_negative("friction coefficient", mu_2)?;
        Ok(Self {
            mu: Vector2::new(mu_1, mu_2),
        })
    }

    /// The same cone shape with $\mu_1 = \mu$ (an isotropic cone becomes isotropic with
    /// $\mu$; an elliptic one keeps its ratio, $\mu_2 = \mu\thinspace\mu_2/\mu_1$, or
    /// becomes isotropic if $\mu_1 = 0$). Errors: $\mu$ negative or not finite.
    pub fn with_coefficient(&self, mu: f64) -> Result<Self, ConstraintError> {
        let ratio = if self.mu.x > 0.0 {
            self.mu.y / self.mu.x
        } else {
            1.0
        };
        Self::elliptic(mu, mu * ratio)
    }

    /// $(\mu_1, \mu_2)$.
    #[inline]
    pub fn coefficients(&self) -> Vector2<f64> {
        self.mu
    }

    /// The scaling that maps the cone to a disk (see the [module docs](self)).
    #[inline]
    pub fn scaling(&self) -> ConeScaling {
        let max = self.mu.max();
        if max == 0.0 {
            return ConeScaling {
                s: Vector2::new(1.0, 1.0),
                mu: 0.0,
            };
        }
        if self.mu.x == self.mu.y {
            return ConeScaling {
                s: Vector2::new(1.0, 1.0),
                mu: max,
            };
        }
        let floored = self.mu.map(|m| m.max(MU_FLOOR_RELATIVE * max));
        let mu_g = (floored.x * floored.y).sqrt();
        ConeScaling {
            s: floored / mu_g,
            mu: mu_g,
        }
    }
}

/// Scaling $s$ and radius coefficient $\mu_g$ of a [`FrictionCone`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConeScaling {
    /// $s_i = \mu_i/\mu_g$ ($=(1,1)$ when isotropic).
    pub s: Vector2<f64>,
    /// $\mu_g = \sqrt{\mu_1\mu_2}$ (the coefficient of the scaled disk).
    pub mu: f64,
}

impl ConeScaling {
    /// $\hat\lambda = \lambda / s$.
    #[inline]
    pub fn force_to_scaled(&self, lambda: &Vector2<f64>) -> Vector2<f64> {
        lambda.component_div(&self.s)
    }
    /// $\lambda = s\thinspace \hat\lambda$.
    #[inline]
    pub fn force_from_scaled(&self, scaled: &Vector2<f64>) -> Vector2<f64> {
        scaled.component_mul(&self.s)
    }
    /// $\hat v = s\thinspace v$.
    #[inline]
    pub fn velocity_to_scaled(&self, v: &Vector2<f64>) -> Vector2<f64> {
        v.component_mul(&self.s)
    }
    /// Scaled effective inverse mass from the effective inverse masses
    /// $w_i = J_{t_i}\tilde M^{-1}J_{t_i}^\top$ of the two rows:
    /// $$\hat r = \tfrac12(s_1^2 w_1 + s_2^2 w_2)\sqrt{\frac{\min_i s_i^2}{\max_i s_i^2}}.$$
    /// $\hat\rho = 1/(h\hat r)$ is about the force that stops a slip in one step; in
    /// scaled variables axis $i$ needs $1/(h s_i^2 w_i)$, and the plain mean is set by
    /// the grippy axis: on a 100:1 cone it is 100× too small along the slippery axis, a
    /// sliding contact is taken for sticking and Newton cycles. The factor balances the
    /// two axes (10× off on each instead of 100× on one; taking the slippery axis's
    /// scale instead made the grippy axis cycle) and is exactly 1 for an isotropic
    /// cone, which keeps the plain mean $\tfrac12(w_1 + w_2)$ there.
    #[inline]
    pub fn effective_inverse_mass(&self, w_t: &Vector2<f64>) -> f64 {
        let s2 = self.s.component_mul(&self.s);
        0.5 * s2.dot(w_t) * (s2.min() / s2.max()).sqrt()
    }

    /// The $\hat r$ of the trial force $y = \hat\lambda - \hat v/(h\hat r)$ at one iterate:
    /// the larger of the balanced mean above and the effective inverse mass along the
    /// direction $d$ in which the contact currently pushes (unit $\hat\lambda$, or unit
    /// $\hat v$ while $\hat\lambda = 0$),
    /// $$\hat r = \max\Big(\hat r_{mean},\ \sum_i d_i^2 s_i^2 w_i\Big).$$
    /// On a 100:1 cone the mean makes $\hat\rho$ 200× too large along the grippy axis:
    /// a sticking contact's trial force lands outside the cone on alternating sides and
    /// Newton cycles. Along $d$ the trial is the force that stops the slip in one step;
    /// the maximum keeps the mean where it is smaller (a too small $\hat\rho$ only
    /// delays a slip decision by an iteration, and taking the directional value alone
    /// made slides along the slippery axis cycle as $d$ turned). $\hat r$ may change
    /// between iterates: the residual vanishes exactly on Coulomb pairs for any
    /// $\hat\rho > 0$, and its derivative with respect to $\hat\rho$ is zero at a
    /// solution ($v = 0$ when sticking; $\partial y/\partial\hat\rho = -\hat v$ is
    /// parallel to $\hat y$ when slipping), so Newton's local rate is kept.
    /// Isotropic cones keep the plain mean $\tfrac12(w_1 + w_2)$.
    #[inline]
    pub fn trial_inverse_mass(
        &self,
        w_t: &Vector2<f64>,
        lambda_scaled: &Vector2<f64>,
        v_scaled: &Vector2<f64>,
    ) -> f64 {
        let mean = self.effective_inverse_mass(w_t);
        if self.s.x == self.s.y {
            return mean;
        }
        let d = if lambda_scaled.norm_squared() > 0.0 {
            lambda_scaled.normalize()
        } else if v_scaled.norm_squared() > 0.0 {
            v_scaled.normalize()
        } else {
            return mean;
        };
        let s2 = self.s.component_mul(&self.s);
        d.component_mul(&d).component_mul(&s2).dot(w_t).max(mean)
    }
}

/// A tangent frame $(t_1, t_2)$ with $t_1\times t_2 = n$.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TangentFrame {
    /// First tangent (along the anisotropy axis when there is one).
    pub t1: Vector3<f64>,
    /// Second tangent, $n \times t_1$.
    pub t2: Vector3<f64>,
    /// Whether $t_1$ follows the requested anisotropy axis (false: the axis was
    /// (nearly) parallel to the normal and [`orthobasis`] was used instead).
    pub aligned: bool,
}

impl TangentFrame {
    /// The frame for unit normal `n`. With an anisotropy axis $a$ (world frame),
    /// $t_1 = \dfrac{a - (a\cdot n)n}{|a - (a\cdot n)n|}$, $t_2 = n\times t_1$; if
    /// $|a - (a\cdot n)n|^2 < 10^{-8}$, or without an axis, $(t_1, t_2)$ = orthobasis$(n)$.
    pub fn new(n: &Vector3<f64>, anisotropy_axis: Option<&Vector3<f64>>) -> Self {
        if let Some(a) = anisotropy_axis {
            let at = a - n * a.dot(n);
            if at.norm_squared() >= 1e-8 {
                let t1 = at.normalize();
                return Self {
                    t1,
                    t2: n.cross(&t1),
                    aligned: true,
                };
            }
        }
        let (t1, t2) = orthobasis(n);
        Self {
            t1,
            t2,
            aligned: anisotropy_axis.is_none(),
        }
    }
}
