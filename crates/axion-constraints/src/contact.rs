//! Contact normal rows: non-penetration as a complementarity condition.
//!
//! A contact between body `a` and body `b` is found once per step by collision
//! detection and stays fixed during the Newton iterations ([`ContactPoint`]): world
//! normal $n$ pointing **from `b` towards `a`**, body-local points $p_a, p_b$ (relative to
//! each centre of mass) and thicknesses $t_a, t_b$ (a sphere's radius when the point is
//! its centre). The surface points and the gap (signed distance, $> 0$ apart) are
//! $$P_a(q) = x_a + R_a p_a - t_a n,\qquad P_b(q) = x_b + R_b p_b + t_b n,\qquad
//!   g(q) = n\cdot\big(P_a(q) - P_b(q)\big),$$
//! re-evaluated at every iterate $q^+$. Its velocity Jacobian, exact at the poses it is
//! evaluated at, is
//! $$J_n = \big((n,\ \rho_a\times n),\ (-n,\ -\rho_b\times n)\big),\qquad \rho_a = R_a p_a,\ \rho_b = R_b p_b.$$
//!
//! Two formulations of $0 \le \lambda_n \perp g \ge 0$ are provided:
//! * [`normal_row`] — **position level** (the default of the step): scaled, smoothed
//!   Fischer–Burmeister on $(g(q^+), \lambda_n)$; no drift, no stabilisation term.
//! * [`normal_row_velocity`] — **velocity level** on $J_n u^+ + b$ with a bias $b$ for
//!   restitution and Baumgarte stabilisation, for bouncing materials.

use axion_math::{NcpEval, Pose, Twist, error::ensure_all_finite, fischer_burmeister_scaled};
use nalgebra::Vector3;

use crate::error::{ConstraintError, non_negative, unit_interval};
use crate::row::{Row, RowJacobian};

/// Default FB smoothing $\varepsilon^2$ in m² for position-level contacts
/// (docs/constraints.md, "Contact normal": the reference's 1e-8 lets lightly loaded
/// contacts float by $\varepsilon^2/(2 r_n\lambda_n)$).
pub const DEFAULT_FB_EPS_SQ: f64 = 1e-12;

/// A contact whose gap (m) at the start of a step is larger than this is still open; at
/// or below it, it touches (see [`VelocityContact::bias`]).
pub const OPEN_GAP: f64 = 1e-6;

/// Share of a penetration a bouncing ([velocity-level](normal_row_velocity)) contact
/// removes per step: its Baumgarte factor $\beta$ (see [`VelocityContact::bias`]).
pub const BAUMGARTE: f64 = 0.2;

/// A contact persists from the previous step (keeps its forces as a warm start, and an
/// open contact its approach velocity) if it joins the same bodies, with normals within
/// about 8° (cosine above [`PERSIST_COS`]), at a point that sits within this distance
/// (m) of where it sat relative to one of the bodies, in world axes. World axes rather
/// than body axes: under a rolling wheel the contact stays at the bottom of the wheel
/// while the wheel's material point there changes every step (a skid-steer at 6 rad/s
/// moves it 0.1 m per step at h = 0.05, so matching body points found no contact to
/// warm-start from). Each previous contact continues at most one new one, the closest
/// pairs first (a sphere a few millimetres from a box's corner on the same body keeps
/// its own force).
pub const PERSIST_DISTANCE: f64 = 5e-3;

/// See [`PERSIST_DISTANCE`].
pub const PERSIST_COS: f64 = 0.99;

/// Rolling ahead (docs/step.md, "Rolling ahead"): a cylinder's contact point that lies
/// on its side surface or rim (within this share of the radius) at the azimuth of the
/// contact normal (to within [`ROLL_AZIMUTH`] rad) is replaced by the material point
/// that will face the other body at the end of the step.
pub const ROLL_ON_SIDE: f64 = 1e-4;

/// See [`ROLL_ON_SIDE`].
pub const ROLL_AZIMUTH: f64 = 1e-3;

/// A normal whose component across a cylinder's axis is below this (the cylinder
/// stands on its cap) gives no azimuth to roll along ([`ROLL_ON_SIDE`]).
pub const ROLL_MIN_RADIAL: f64 = 1e-3;

/// A contact whose points slide across each other faster than this (m/s) at the
/// start of the step does not roll ahead ([`ROLL_ON_SIDE`]): the load split along a
/// sliding line contact is left undetermined by exact rolling (docs/step.md).
pub const ROLL_SLIP: f64 = 1e-3;

/// One contact point, fixed for the step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    /// Unit world normal, from body `b` towards body `a`.
    pub normal: Vector3<f64>,
    /// Point on `a` relative to its centre of mass, body frame.
    pub local_a: Vector3<f64>,
    /// Point on `b` relative to its centre of mass, body frame (world frame for the world).
    pub local_b: Vector3<f64>,
    /// Thickness $t_a \ge 0$ of `a` at the point.
    pub thickness_a: f64,
    /// Thickness $t_b \ge 0$ of `b` at the point.
    pub thickness_b: f64,
}

impl ContactPoint {
    /// Validates the normal (unit), points (finite) and thicknesses (`≥ 0`).
    pub fn new(
        normal: Vector3<f64>,
        local_a: Vector3<f64>,
        local_b: Vector3<f64>,
        thickness_a: f64,
        thickness_b: f64,
    ) -> Result<Self, ConstraintError> {
        let normal = axion_math::UnitAxis::new(normal)?.vector();
        ensure_all_finite("contact point", local_a.iter().chain(local_b.iter()))?;
        non_negative("contact thickness", thickness_a)?;
        non_negative("contact thickness", thickness_b)?;
        Ok(Self {
            normal,
            local_a,
            local_b,
            thickness_a,
            thickness_b,
        })
    }

    /// Lever arms $(\rho_a, \rho_b) = (R_a p_a, R_b p_b)$ in the world frame.
    #[inline]
    pub fn lever_arms(&self, pose_a: &Pose, pose_b: &Pose) -> (Vector3<f64>, Vector3<f64>) {
        (
            pose_a.rotation * self.local_a,
            pose_b.rotation * self.local_b,
        )
    }

    /// Surface points $(P_a, P_b)$.
    #[inline]
    pub fn surface_points(&self, pose_a: &Pose, pose_b: &Pose) -> (Vector3<f64>, Vector3<f64>) {
        let (ra, rb) = self.lever_arms(pose_a, pose_b);
        (
            pose_a.translation.vector + ra - self.normal * self.thickness_a,
            pose_b.translation.vector + rb + self.normal * self.thickness_b,
        )
    }

    /// Gap $g(q) = n\cdot(P_a - P_b)$ (m; negative means penetration).
    #[inline]
    pub fn gap(&self, pose_a: &Pose, pose_b: &Pose) -> f64 {
        let (pa, pb) = self.surface_points(pose_a, pose_b);
        self.normal.dot(&(pa - pb))
    }

    /// Jacobian of the relative velocity of the contact points along a world direction
    /// $d$: $\big((d,\ \rho_a\times d),\ (-d,\ -\rho_b\times d)\big)$. With $d = n$ this is
    /// $J_n$; with a tangent it is a friction row.
    #[inline]
    pub fn jacobian_along(&self, pose_a: &Pose, pose_b: &Pose, d: &Vector3<f64>) -> RowJacobian {
        let (ra, rb) = self.lever_arms(pose_a, pose_b);
        RowJacobian::new(*d, ra.cross(d), -d, -rb.cross(d))
    }

    /// $J_n$, see [`jacobian_along`](Self::jacobian_along).
    #[inline]
    pub fn normal_jacobian(&self, pose_a: &Pose, pose_b: &Pose) -> RowJacobian {
        self.jacobian_along(pose_a, pose_b, &self.normal)
    }
}

/// A linearised contact normal row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormalRow {
    /// Residual, gradient $\partial h/\partial u$ and compliance $C$ (see [`Row`]).
    pub row: Row,
    /// The unscaled $J_n$: the direction in which $\lambda_n$ pushes the bodies
    /// (the impulse is $h J_n^\top\lambda_n$). `row.jacobian` $= \frac{\partial\phi}{\partial a} J_n$.
    pub force_jacobian: RowJacobian,
    /// The Fischer–Burmeister value and derivatives behind the row.
    pub fb: NcpEval,
}

/// Position-level contact row. With $r_n = h^2 w_n$ ($w_n = J_n\tilde M^{-1}J_n^\top$,
/// which converts the force $\lambda_n$ into the displacement it causes in one step),
/// $$\phi = g + r_n\lambda_n - \sqrt{g^2 + r_n^2\lambda_n^2 + \varepsilon^2},\qquad
///   h_n = \frac{\phi}{h},\qquad \frac{\partial h_n}{\partial u} = \frac{\partial\phi}{\partial g}\thinspace J_n,\qquad
///   C_n = \frac{1}{h^2}\frac{\partial\phi}{\partial\lambda_n}.$$
/// `gap` is $g(q^+)$, `jacobian` is $J_n$ at the pose the solver linearises at.
#[inline]
pub fn normal_row(
    gap: f64,
    jacobian: &RowJacobian,
    lambda_n: f64,
    w_n: f64,
    h: f64,
    eps_sq: f64,
) -> NormalRow {
    let fb = fischer_burmeister_scaled(gap, lambda_n, h * h * w_n, eps_sq);
    NormalRow {
        row: Row {
            residual: fb.value / h,
            jacobian: *jacobian * fb.d_a,
            compliance: fb.d_b / (h * h),
        },
        force_jacobian: *jacobian,
        fb,
    }
}

/// [`normal_row`] of a contact with compliance $\kappa \ge 0$ (dimensionless): the
/// Fischer–Burmeister function of the gap shifted by $\kappa r_n\lambda_n$,
/// $$\phi = \mathrm{FB}_\varepsilon(g + \kappa r_n\lambda_n,\ \lambda_n;\ r_n),\qquad
///   \frac{\partial\phi}{\partial\lambda_n} = \frac{\partial\mathrm{FB}}{\partial\lambda_n} +
///   \kappa r_n\frac{\partial\mathrm{FB}}{\partial a},$$
/// whose roots with $\varepsilon = 0$ are $\lambda_n = 0,\ g \ge 0$ (apart) and
/// $g = -\kappa r_n\lambda_n$, $\lambda_n > 0$ (pressed): a loaded contact sinks by
/// $\kappa$ times the displacement its force causes in one step, $\kappa h^2 w_n\lambda_n$,
/// and the forces of redundant contacts (a box's four corners) are those of springs of
/// that compliance, unique without the smoothing. Its compliance
/// $C_n = \kappa w_n$ is the same at every load, where the smoothing's
/// $\varepsilon^2/(2r_n\lambda_n^2)$ grows without bound as the force falls
/// (docs/constraints.md, "Contact normal"). $\kappa = 0$ is [`normal_row`], bit for bit.
#[inline]
pub fn compliant_normal_row(
    gap: f64,
    jacobian: &RowJacobian,
    lambda_n: f64,
    w_n: f64,
    h: f64,
    eps_sq: f64,
    compliance: f64,
) -> NormalRow {
    if compliance == 0.0 {
        return normal_row(gap, jacobian, lambda_n, w_n, h, eps_sq);
    }
    let shift = compliance * (h * h * w_n);
    let mut row = normal_row(gap + shift * lambda_n, jacobian, lambda_n, w_n, h, eps_sq);
    row.row.compliance += row.fb.d_a * shift / (h * h);
    row
}

/// Restitution and stabilisation of a [velocity-level](normal_row_velocity) contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VelocityContact {
    /// Coefficient of restitution $e \in [0, 1]$.
    pub restitution: f64,
    /// Baumgarte factor $\beta \in [0, 1]$: the share of a penetration removed per step.
    pub baumgarte: f64,
}

impl VelocityContact {
    /// Validates $e, \beta \in [0, 1]$.
    pub fn new(restitution: f64, baumgarte: f64) -> Result<Self, ConstraintError> {
        for (what, v) in [
            ("restitution", restitution),
            ("Baumgarte factor", baumgarte),
        ] {
            unit_interval(what, v)?;
        }
        Ok(Self {
            restitution,
            baumgarte,
        })
    }

    /// The velocity bias $b$ from the start-of-step gap $g^-$ and normal velocity $v_n^-$:
    /// $$b = \begin{cases} g^-/h & g^- > g_{open} \text{ (speculative: may close the gap, not more)}\\\\
    ///   \beta g^-/h + e\min(v_n^-, 0) & g^- \le g_{open} \text{ (touching: bounce, push out)}\end{cases}$$
    /// with $g_{open}$ = [`OPEN_GAP`]: a contact that a speculative row stopped at the
    /// surface rests at a gap of about $\varepsilon^2/(2 r\lambda_n)$ (below a nanometre), of
    /// either sign after rounding, and bounces whatever the sign.
    pub fn bias(&self, gap_start: f64, normal_velocity_start: f64, h: f64) -> f64 {
        if gap_start > OPEN_GAP {
            gap_start / h
        } else {
            self.baumgarte * gap_start / h + self.restitution * normal_velocity_start.min(0.0)
        }
    }
}

/// Velocity-level contact row: complementarity between $\lambda_n$ and the biased
/// normal velocity $a = J_n u^+ + b$ (see [`VelocityContact::bias`]), with $r = h w_n$:
/// $$\phi = a + r\lambda_n - \sqrt{a^2 + r^2\lambda_n^2 + \varepsilon^2},\qquad
///   h_n = \phi,\qquad \frac{\partial h_n}{\partial u} = \frac{\partial\phi}{\partial a}J_n,\qquad
///   C_n = \frac1h\frac{\partial\phi}{\partial\lambda_n}.$$
/// At the root $J_n u^+ \ge -b$: an approaching contact ($v_n^- < 0$, $g^- = 0$) leaves
/// with at least $-e\thinspace v_n^-$.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn normal_row_velocity(
    jacobian: &RowJacobian,
    u_a: &Twist,
    u_b: &Twist,
    bias: f64,
    lambda_n: f64,
    w_n: f64,
    h: f64,
    eps_sq: f64,
) -> NormalRow {
    let a = jacobian.dot(u_a, u_b) + bias;
    let fb = fischer_burmeister_scaled(a, lambda_n, h * w_n, eps_sq);
    NormalRow {
        row: Row {
            residual: fb.value,
            jacobian: *jacobian * fb.d_a,
            compliance: fb.d_b / h,
        },
        force_jacobian: *jacobian,
        fb,
    }
}
