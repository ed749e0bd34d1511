//! The reference's friction compliance $W$ (the seeds' fixed point).
//!
//! Each friction direction gets the row $h_{f,i} = v_{t,i} + w_i\lambda_{t,i}$,
//! $C_i = w_i/h$, where the weight $w$ is recomputed from the **previous** iterate's
//! forces $(\lambda_t^{prev}, \lambda_n^{prev})$ and the current slip. In scaled
//! variables (see [`super`]) with $\hat r$ the scaled effective inverse mass:
//! $$d = \sqrt{h^2|\hat v_t|^2 + \varepsilon_d},\quad P = h|\hat\lambda_t^{prev}|,\quad
//!   L = h\thinspace \mu_g\max(\lambda_n^{prev}, 0),\quad \sigma = L - \min(P, L),$$
//! $$\phi = d + \hat r\sigma - \sqrt{d^2 + \hat r^2\sigma^2},\qquad
//!   \hat w = \operatorname{clamp}\Big(\frac{\hat r\thinspace (d - \phi)}{\hat r P + \phi + \varepsilon_w h},\ 0,\ w_{max}\Big),
//!   \qquad w_i = \hat w / s_i^2.$$
//! Limits: sliding ($\sigma \to 0$ or $d \gg \hat r\sigma$) gives $w \to |v|/|\lambda|$ and
//! the fixed point $\lambda_t = -\mu\lambda_n\hat v_t$; sticking ($d \ll \hat r\sigma$)
//! gives $w \to 0$ and $v_t \to 0$.
//!
//! The isotropic case is the reference's formula exactly. For elliptic cones the
//! reference scales differently (its two branches are not continuous); ours reduces to
//! the isotropic formula when $\mu_1 = \mu_2$.
//!
//! Because $w$ lags one iterate behind, a set of contacts can cycle between sticking
//! and sliding while every row's residual is small — the reference's false
//! convergence. Use [`super::projection`] to measure convergence.

use nalgebra::Vector2;

use super::FrictionCone;
use crate::row::{Row, RowJacobian};

/// Constants of the fixed point, defaulting to the reference's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FixedPointSettings {
    /// $\varepsilon_d$ in m²: floor of the slip displacement (reference 1e-8).
    pub slip_eps_sq: f64,
    /// $\varepsilon_w$ (reference 1e-6).
    pub denominator_eps: f64,
    /// $w_{max}$ (reference 1e5).
    pub max_weight: f64,
}

impl Default for FixedPointSettings {
    fn default() -> Self {
        Self {
            slip_eps_sq: 1e-8,
            denominator_eps: 1e-6,
            max_weight: 1e5,
        }
    }
}

/// The weights $(w_1, w_2)$ from the slip `v_t`, the previous iterate's forces and the
/// effective inverse masses `w_t` of the two friction rows.
pub fn weights(
    cone: &FrictionCone,
    v_t: &Vector2<f64>,
    lambda_t_prev: &Vector2<f64>,
    lambda_n_prev: f64,
    w_t: &Vector2<f64>,
    h: f64,
    settings: &FixedPointSettings,
) -> Vector2<f64> {
    let sc = cone.scaling();
    let r = sc.effective_inverse_mass(w_t);
    let d = (h * h * sc.velocity_to_scaled(v_t).norm_squared() + settings.slip_eps_sq).sqrt();
    let p = h * sc.force_to_scaled(lambda_t_prev).norm();
    let l = h * sc.mu * lambda_n_prev.max(0.0);
    let slack = l - p.min(l);
    // d − φ = √(d² + r²σ²) − rσ = d² / (√(d² + r²σ²) + rσ), without cancellation (σ ≥ 0):
    // in the sticking limit d ≪ rσ the direct difference would be all rounding.
    let rs = r * slack;
    let d_minus_phi = d * d / ((d * d + rs * rs).sqrt() + rs);
    let phi = d - d_minus_phi;
    let w = (r * d_minus_phi / (r * p + phi + settings.denominator_eps * h))
        .clamp(0.0, settings.max_weight);
    sc.s.map(|s| w / (s * s))
}

/// The two rows $h_{f,i} = v_{t,i} + w_i\lambda_{t,i}$, $J = J_{t_i}$, $C_i = w_i/h$,
/// for tangent Jacobians `jacobians` and current velocities.
pub fn rows(
    jacobians: &[RowJacobian; 2],
    u_a: &axion_math::Twist,
    u_b: &axion_math::Twist,
    lambda_t: &Vector2<f64>,
    weights: &Vector2<f64>,
    h: f64,
) -> [Row; 2] {
    [0, 1].map(|i| Row {
        residual: jacobians[i].dot(u_a, u_b) + weights[i] * lambda_t[i],
        jacobian: jacobians[i],
        compliance: weights[i] / h,
    })
}
