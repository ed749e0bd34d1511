//! The projection (Alart–Curnier) friction residual, decided on the current iterate.
//!
//! With the trial force $y = \lambda_t - \rho v_t$, $\rho = 1/(h\thinspace r_t)$
//! ($r_t = \tfrac12(w_{t_1} + w_{t_2})$, so $\rho v_t$ is the force that would stop the
//! slip in one step) and the radius $R = \mu\max(\lambda_n, 0)$:
//! $$h_f = \lambda_t - \Pi_{|\cdot|\le R}(y).$$
//! It vanishes exactly on Coulomb-consistent pairs — sticking inside the cone
//! ($v_t = 0$, $|\lambda_t| \le R$) or slipping on its boundary against the slip
//! ($\lambda_t = -R\thinspace \hat v_t$) — and for a force outside the cone
//! $|h_f| \ge |\lambda_t| - R$ whatever $v_t$ is, so a converged norm means Coulomb holds.
//!
//! **Stick** ($|y| < R(1 - 10^{-6})$): $h_f = \rho v_t$;
//! $\partial h_f/\partial v_t = \rho I$, $\partial h_f/\partial\lambda_t = 0$.
//!
//! **Slip** (otherwise, or $R = 0$), $\hat y = y/|y|$, $\kappa = R/|y|$,
//! $P = I - \hat y\hat y^\top$: $h_f = \lambda_t - R\hat y$;
//! $$\frac{\partial h_f}{\partial v_t} = \kappa\rho P,\qquad
//!   \frac{\partial h_f}{\partial\lambda_t} = I - \kappa P,\qquad
//!   \frac{\partial h_f}{\partial\lambda_n} = -\mu\hat y\ (\lambda_n > 0).$$
//! These form an element of the generalized (Clarke) Jacobian, which is all a
//! semismooth Newton method needs.
//!
//! **Creep.** [`evaluate_with_creep`] replaces the slip by $v_t + c\thinspace\lambda_t/\rho$ for a
//! dimensionless creep $c \ge 0$: the trial force becomes $y = (1 - c)\lambda_t - \rho v_t$, a
//! sticking contact's residual $\rho v_t + c\lambda_t$ (so it slips at
//! $c\thinspace\lambda_t/\rho$, $c$ times the velocity change its force causes in one step), and
//! $\partial h_f/\partial\lambda_t$ becomes $cI$ (stick) or $I - \kappa(1 - c)P$ (slip). It makes
//! the forces of redundant sticking contacts (two points of a cylinder lying on the
//! ground, a box's four corners) unique: without it their internal forces are
//! undetermined and the Newton iteration can wander along them to huge values. Elliptic cones use the same formulas in the scaled
//! variables of [`super`], mapped back: $h_f = S\hat h$, $\partial h_f/\partial\lambda_t =
//! S(I-\kappa P)S^{-1}$, $\partial h_f/\partial v_t = \kappa\hat\rho\thinspace S P S$,
//! $\partial h_f/\partial\lambda_n = -\mu_g S\hat y$, with $\hat\rho = 1/(h\hat r)$ from
//! [`ConeScaling::trial_inverse_mass`](super::ConeScaling::trial_inverse_mass).

use nalgebra::{Matrix2, Vector2};

use super::FrictionCone;
use crate::row::RowJacobian;

/// The default creep of both backends (`SolverSettings::friction_creep`,
/// `GpuSettings::friction_creep`).
pub const FRICTION_CREEP: f64 = 1e-6;

/// Relative width of the band below the cone boundary treated as slipping.
pub const SLIP_BAND: f64 = 1e-6;

/// Stick or slip, as decided on the current iterate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SlipState {
    /// The trial force is strictly inside the cone.
    Stick,
    /// The trial force is on or outside the cone (or the cone has zero radius).
    Slip {
        /// $\hat y$, unit trial direction in scaled variables (zero if $y = 0$).
        direction: Vector2<f64>,
        /// $\kappa = R/|y| \in [0, 1/(1 - 10^{-6})]$.
        kappa: f64,
    },
}

/// The projection residual and its generalized Jacobian at one iterate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProjectionEval {
    /// $h_f$ (N), in the tangent frame.
    pub residual: Vector2<f64>,
    /// Stick or slip.
    pub state: SlipState,
    /// $\partial h_f/\partial v_t$ (N·s/m).
    pub d_velocity: Matrix2<f64>,
    /// $\partial h_f/\partial\lambda_t$.
    pub d_lambda_t: Matrix2<f64>,
    /// $\partial h_f/\partial\lambda_n$.
    pub d_lambda_n: Vector2<f64>,
    /// $\hat\rho = 1/(h\hat r)$ used for the trial force (N·s/m).
    pub rho: f64,
}

impl ProjectionEval {
    /// The residual in m/s, $h_f/\hat\rho$, as used for convergence tests. On an
    /// elliptic cone a sticking contact's residual is $S^2 v_t$: the slip along the
    /// grippy axis is counted $s_i^2$ times (stricter than the slip itself).
    #[inline]
    pub fn residual_velocity(&self) -> Vector2<f64> {
        self.residual / self.rho
    }
}

/// Evaluates the projection residual for friction force `lambda_t`, normal force
/// `lambda_n`, slip `v_t` and effective inverse masses `w_t` of the two rows, with
/// $\hat\rho = 1/(h\hat r)$ from
/// [`ConeScaling::trial_inverse_mass`](super::ConeScaling::trial_inverse_mass).
#[inline]
pub fn evaluate(
    cone: &FrictionCone,
    lambda_t: &Vector2<f64>,
    lambda_n: f64,
    v_t: &Vector2<f64>,
    w_t: &Vector2<f64>,
    h: f64,
) -> ProjectionEval {
    evaluate_with_creep(cone, lambda_t, lambda_n, v_t, w_t, h, 0.0)
}

/// [`evaluate`] with creep $c$ (see the module's documentation); `creep = 0` is
/// [`evaluate`].
#[inline]
pub fn evaluate_with_creep(
    cone: &FrictionCone,
    lambda_t: &Vector2<f64>,
    lambda_n: f64,
    v_t: &Vector2<f64>,
    w_t: &Vector2<f64>,
    h: f64,
    creep: f64,
) -> ProjectionEval {
    let sc = cone.scaling();
    let r = sc.trial_inverse_mass(
        w_t,
        &sc.force_to_scaled(lambda_t),
        &sc.velocity_to_scaled(v_t),
    );
    trial(cone, lambda_t, lambda_n, v_t, 1.0 / (h * r), creep)
}

/// [`evaluate`] with a given $\hat\rho > 0$. The derivatives returned by both are those
/// of this function ($\hat\rho$ held fixed); they equal the derivatives of [`evaluate`]
/// at Coulomb-consistent pairs.
#[inline]
pub fn evaluate_with_rho(
    cone: &FrictionCone,
    lambda_t: &Vector2<f64>,
    lambda_n: f64,
    v_t: &Vector2<f64>,
    rho: f64,
) -> ProjectionEval {
    trial(cone, lambda_t, lambda_n, v_t, rho, 0.0)
}

/// The residual for trial force $y = (1 - c)\hat\lambda_t - \hat\rho\hat v_t$ (scaled variables).
#[inline]
fn trial(
    cone: &FrictionCone,
    lambda_t: &Vector2<f64>,
    lambda_n: f64,
    v_t: &Vector2<f64>,
    rho: f64,
    creep: f64,
) -> ProjectionEval {
    let sc = cone.scaling();
    let s = Matrix2::from_diagonal(&sc.s);
    let s_inv = Matrix2::from_diagonal(&sc.s.map(|x| 1.0 / x));
    let lam = sc.force_to_scaled(lambda_t);
    let y = lam * (1.0 - creep) - sc.velocity_to_scaled(v_t) * rho;
    let radius = sc.mu * lambda_n.max(0.0);
    let y_norm = y.norm();
    if radius > 0.0 && y_norm < radius * (1.0 - SLIP_BAND) {
        return ProjectionEval {
            residual: sc.force_from_scaled(&(lam - y)),
            state: SlipState::Stick,
            d_velocity: s * s * rho,
            d_lambda_t: Matrix2::identity() * creep,
            d_lambda_n: Vector2::zeros(),
            rho,
        };
    }
    let (dir, kappa) = if y_norm > 0.0 {
        (y / y_norm, radius / y_norm)
    } else {
        (Vector2::zeros(), 0.0)
    };
    let p = Matrix2::identity() - dir * dir.transpose();
    let d_lambda_n = if lambda_n > 0.0 {
        s * dir * -sc.mu
    } else {
        Vector2::zeros()
    };
    ProjectionEval {
        residual: sc.force_from_scaled(&(lam - dir * radius)),
        state: SlipState::Slip {
            direction: dir,
            kappa,
        },
        d_velocity: s * p * s * (kappa * rho),
        d_lambda_t: s * (Matrix2::identity() - p * (kappa * (1.0 - creep))) * s_inv,
        d_lambda_n,
        rho,
    }
}

/// The friction force of a Newton trial taken back onto its cone, for a contact whose
/// force was on the cone's boundary (or outside it) at the iterate the step started
/// from: `(λ_n, λ_t)` there and at the trial. Where such a trial's force lies outside
/// the cone of the trial's normal force, it is projected onto that cone's disc, its
/// direction kept (in the scaled variables of [`super`], where the cone is round):
/// $$\hat\lambda_t \leftarrow \hat\lambda_t\,\frac{\mu_g\lambda_n}{|\hat\lambda_t|}.$$
/// `None` where the contact was inside its cone (a sticking contact's force may leave
/// it: that is how the iteration learns it slips), where the trial is within its cone,
/// or where either normal force is not positive.
///
/// A sliding contact's Newton step keeps $|\hat\lambda_t| = R$ only to first order: it
/// moves the force along the circle's tangent, so turning it by $\theta$ leaves it
/// $R(1/\cos\theta - 1)$ outside, and where the slip is slow (a foot creeping on the
/// ground at $10^{-5}$ m/s) its direction turns far in one step. The next full
/// step then has a friction residual of that excess over $\hat\rho$, and the
/// iteration zig-zags between iterates near the solution and iterates with such forces.
/// No solution has a force outside its cone (a zero of the residual is
/// $\lambda_t = \Pi(y)$), and near one the correction is of the order of the step's
/// own linearisation error, so Newton's local rate is kept; far from one it also cuts a
/// sliding contact's force that the step threw far outside its cone.
pub fn onto_cone_after_step(
    cone: &FrictionCone,
    before: (f64, &Vector2<f64>),
    trial: (f64, &Vector2<f64>),
) -> Option<Vector2<f64>> {
    let sc = cone.scaling();
    let on_boundary = |(lambda_n, lambda_t): (f64, &Vector2<f64>)| {
        lambda_n > 0.0
            && sc.force_to_scaled(lambda_t).norm() >= sc.mu * lambda_n * (1.0 - SLIP_BAND)
    };
    let (lambda_n, lambda_t) = trial;
    let scaled = sc.force_to_scaled(lambda_t);
    let radius = sc.mu * lambda_n;
    (on_boundary(before) && lambda_n > 0.0 && scaled.norm() > radius)
        .then(|| sc.force_from_scaled(&(scaled * (radius / scaled.norm()))))
}

/// The semismooth Newton rows of one contact's friction, for a non-symmetric solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProjectionRows {
    /// $h_f$ (N).
    pub residual: Vector2<f64>,
    /// $\partial h_{f,i}/\partial u = \sum_j D_{ij} J_{t_j}$ with $D = \partial h_f/\partial v_t$.
    pub jacobian: [RowJacobian; 2],
    /// $\partial h_f/\partial\lambda_t$.
    pub d_lambda_t: Matrix2<f64>,
    /// $\partial h_f/\partial\lambda_n$.
    pub d_lambda_n: Vector2<f64>,
}

/// Chains [`evaluate`]'s derivatives with the tangent Jacobians $J_{t_1}, J_{t_2}$.
#[inline]
pub fn rows(eval: &ProjectionEval, tangent_jacobians: &[RowJacobian; 2]) -> ProjectionRows {
    let d = &eval.d_velocity;
    let [j1, j2] = *tangent_jacobians;
    ProjectionRows {
        residual: eval.residual,
        jacobian: [0, 1].map(|i| j1 * d[(i, 0)] + j2 * d[(i, 1)]),
        d_lambda_t: eval.d_lambda_t,
        d_lambda_n: eval.d_lambda_n,
    }
}
