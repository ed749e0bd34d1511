//! A symmetric positive definite linearisation of the [projection](super::projection)
//! friction law, for matrix-free Krylov solvers (the GPU backend).
//!
//! The stick/slip decision is the projection residual's, on the current iterate, with
//! creep $c$ ([`evaluate_with_creep`]): trial force $y = (1 - c)\hat\lambda - \hat\rho\hat v$.
//! In scaled variables (see [`super`]):
//!
//! * **Stick**: two rows $J_{t_i}\Delta u + \varepsilon_t\Delta\hat\lambda_i = -(\hat v_i + \varepsilon_t\hat\lambda_i)$,
//!   $\varepsilon_t = c/\hat\rho$ — the creep, which also keeps redundant stick rows
//!   (four corners of a box) solvable.
//! * **Slip** along $\hat y$ with $\kappa = R/|y|$: the force along $\hat y$ is set,
//!   $\Delta\hat\lambda_{\hat y} = R - \hat y\cdot\hat\lambda$, and one row remains across
//!   it, along $e \perp \hat y$:
//!   $$(e^\top \hat J_t)\Delta u + C\thinspace \Delta\hat\lambda_e = -\frac{e\cdot\hat\lambda}{\hat\rho\kappa},\qquad
//!   C = \frac{1-\kappa(1 - c)}{\hat\rho\kappa} \ge 0$$
//!   ($e^\top$ of the semismooth step, whose $\partial h_f/\partial\lambda_t$ is
//!   $I - \kappa(1 - c)P$, divided by $\hat\rho\kappa$).
//!   This is the semismooth step projected on $e$ with only the $\partial R/\partial\lambda_n$
//!   coupling dropped (lagged one iterate). If $\kappa < 10^{-9}$ the force across is
//!   set to zero too. The lag can diverge where the friction forces shift the normal
//!   loads (a skid-steer's wheels at h = 0.05: the CPU's Newton with that term zeroed
//!   converged in no step); the GPU backend can keep it instead
//!   (`GpuSettings::slip_coupling`, `docs/gpu.md`), at the price of a non-symmetric
//!   system.
//!
//! The rows' multipliers are scaled forces; the physical force is $\lambda = S\hat\lambda$,
//! so each row's Jacobian is also its force direction and the system stays symmetric.

use nalgebra::Vector2;

use super::FrictionCone;
use super::projection::{SlipState, evaluate_with_creep};
use crate::row::{Row, RowJacobian};

/// Below this $\kappa$ a slipping contact has no row across the slip.
pub const KAPPA_MIN: f64 = 1e-9;

/// One scaled friction row and the physical force per unit of its multiplier.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaledRow {
    /// Residual, Jacobian $e^\top\hat J_t$, compliance (see [`Row`]).
    pub row: Row,
    /// Physical force direction $S e$ in the tangent frame: $\lambda_t$ changes by
    /// this times the change of the row's multiplier.
    pub force_direction: Vector2<f64>,
    /// The row's multiplier at the current iterate, $e\cdot\hat\lambda$.
    pub multiplier: f64,
}

/// The symmetric friction linearisation of one contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SymmetricFriction {
    /// Two regularised stick rows, along $t_1$ and $t_2$.
    Stick([ScaledRow; 2]),
    /// A slipping contact.
    Slip {
        /// The prescribed change of the physical force $\Delta\lambda_t$ (N).
        fixed_step: Vector2<f64>,
        /// The row across the slip, absent when $\kappa < 10^{-9}$.
        across: Option<ScaledRow>,
    },
}

/// Builds the symmetric linearisation at the current iterate, with creep `creep`
/// (dimensionless, `≥ 0`; see the module's documentation).
#[allow(clippy::too_many_arguments)]
pub fn linearize(
    cone: &FrictionCone,
    lambda_t: &Vector2<f64>,
    lambda_n: f64,
    v_t: &Vector2<f64>,
    w_t: &Vector2<f64>,
    tangent_jacobians: &[RowJacobian; 2],
    h: f64,
    creep: f64,
) -> SymmetricFriction {
    let eval = evaluate_with_creep(cone, lambda_t, lambda_n, v_t, w_t, h, creep);
    let sc = cone.scaling();
    let lam = sc.force_to_scaled(lambda_t);
    let v = sc.velocity_to_scaled(v_t);
    let [j1, j2] = *tangent_jacobians;
    let scaled_jacobian = |e: &Vector2<f64>| j1 * (e.x * sc.s.x) + j2 * (e.y * sc.s.y);
    match eval.state {
        SlipState::Stick => {
            let eps = creep / eval.rho;
            SymmetricFriction::Stick([0, 1].map(|i| {
                let e = Vector2::ith(i, 1.0);
                ScaledRow {
                    row: Row {
                        residual: v[i] + eps * lam[i],
                        jacobian: scaled_jacobian(&e),
                        compliance: eps / h,
                    },
                    force_direction: sc.force_from_scaled(&e),
                    multiplier: lam[i],
                }
            }))
        }
        SlipState::Slip { direction, kappa } => {
            let radius = sc.mu * lambda_n.max(0.0);
            // A zero trial force has no direction: any unit vector is a valid choice.
            let dir = if direction == Vector2::zeros() {
                Vector2::x()
            } else {
                direction
            };
            let e = Vector2::new(-dir.y, dir.x);
            let along = dir * (radius - dir.dot(&lam));
            if kappa < KAPPA_MIN {
                return SymmetricFriction::Slip {
                    fixed_step: sc.force_from_scaled(&(along - e * e.dot(&lam))),
                    across: None,
                };
            }
            let rk = eval.rho * kappa;
            SymmetricFriction::Slip {
                fixed_step: sc.force_from_scaled(&along),
                across: Some(ScaledRow {
                    row: Row {
                        residual: e.dot(&lam) / rk,
                        jacobian: scaled_jacobian(&e),
                        compliance: ((1.0 - kappa * (1.0 - creep)) / rk).max(0.0) / h,
                    },
                    force_direction: sc.force_from_scaled(&e),
                    multiplier: e.dot(&lam),
                }),
            }
        }
    }
}
