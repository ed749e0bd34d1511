//! The elementary rows joints are made of.

use axion_math::UnitAxis;
use nalgebra::{Matrix3, Vector3};

use super::JointGeometry;
use crate::row::{PositionRow, RowJacobian};
use crate::stiffness::{Stiffness, lever_derivative};

const PARENT: usize = 0;
const CHILD: usize = 1;
const LIN: usize = 0;
const ANG: usize = 1;

/// Point lock along a world direction $e$:
/// $$c = (p_c - p_p)\cdot e,\qquad
///   J_p = \big(-e,\ -(r_p \times e)\big),\quad J_c = \big(e,\ r_c \times e\big).$$
#[inline]
pub fn point_lock(g: &JointGeometry, e: &Vector3<f64>) -> PositionRow {
    PositionRow {
        error: g.separation().dot(e),
        jacobian: RowJacobian::new(-e, -g.r_parent.cross(e), *e, g.r_child.cross(e)),
    }
}

/// Geometric stiffness of a [`point_lock`] with multiplier $\lambda$: only the torques
/// turn, $\partial\tau_c/\partial\phi_c = \lambda(r_c e^\top - (e\cdot r_c)I)$ and the
/// parent's likewise with $-\lambda$, $r_p$.
#[inline]
pub fn point_lock_stiffness(g: &JointGeometry, e: &Vector3<f64>, lambda: f64) -> Stiffness {
    let mut k = Stiffness::zeros();
    k.add(
        CHILD,
        CHILD,
        ANG,
        ANG,
        &(lever_derivative(&g.r_child, e) * lambda),
    );
    k.add(
        PARENT,
        PARENT,
        ANG,
        ANG,
        &(lever_derivative(&g.r_parent, e) * -lambda),
    );
    k
}

/// Geometric stiffness of the three [`point_locks`] with multipliers `lambda`: linear
/// in $\lambda e$, so one [`point_lock_stiffness`] along $e = \lambda$.
#[inline]
pub fn point_locks_stiffness(g: &JointGeometry, lambda: &Vector3<f64>) -> Stiffness {
    point_lock_stiffness(g, lambda, 1.0)
}

/// The three point-lock rows along the world axes.
#[inline]
pub fn point_locks(g: &JointGeometry) -> [PositionRow; 3] {
    [
        point_lock(g, &Vector3::x()),
        point_lock(g, &Vector3::y()),
        point_lock(g, &Vector3::z()),
    ]
}

/// Angle lock about axis $k$ of the parent joint frame. With
/// $\theta_{rel} = \theta_{wp}^{-1}\otimes\theta_{wc} = (w, \mathbf v)$ and
/// $s = \operatorname{sign} w$ (the short way round):
/// $$c = 2 s\thinspace  v_k,\qquad J_c = \big(0,\ s\thinspace R_{wp}(w\thinspace e_k + \mathbf v \times e_k)\big),\quad J_p = -J_c.$$
/// The Jacobian follows from $\dot\theta_{rel} = \tfrac12 [0, R_{wp}^\top(\omega_c - \omega_p)]\otimes\theta_{rel}$;
/// at $\theta_{rel} = 1$ it is the familiar $(0, \pm R_{wp} e_k)$.
#[inline]
pub fn angle_lock(g: &JointGeometry, k: usize) -> PositionRow {
    let rel = g.relative_rotation();
    let (w, v) = (rel.w, rel.imag());
    let s = if w < 0.0 { -1.0 } else { 1.0 };
    let e = Vector3::ith(k, 1.0);
    let axis = g.frame_parent.rotation * ((e * w + v.cross(&e)) * s);
    PositionRow {
        error: 2.0 * s * v[k],
        jacobian: RowJacobian::new(Vector3::zeros(), -axis, Vector3::zeros(), axis),
    }
}

/// Geometric stiffness of the three [`angle_locks`] with multipliers $\lambda_k$. Row $k$'s
/// torque $\lambda g$ on the child ($-\lambda g$ on the parent),
/// $g = s R_{wp}(w e_k + \mathbf v\times e_k)$, turns with
/// $$\frac{\partial g}{\partial\phi_c} = -A,\qquad \frac{\partial g}{\partial\phi_p} = -\operatorname{skew}(g) + A,\qquad
///   A = \frac s2 R_{wp}\big(e_k\mathbf v^\top + \operatorname{skew}(e_k)(wI - \operatorname{skew}(\mathbf v))\big)R_{wp}^\top,$$
/// from $\delta\theta_{rel} = \tfrac12[0, R_{wp}^\top(\delta\phi_c - \delta\phi_p)]\otimes\theta_{rel}$.
/// $g$ and $A$ are linear in $e_k$, so the sum over the rows is this formula once with
/// $e_k$ replaced by $e = (\lambda_0, \lambda_1, \lambda_2)$ and multiplier 1.
#[inline]
pub fn angle_locks_stiffness(g: &JointGeometry, lambda: &Vector3<f64>) -> Stiffness {
    let rel = g.relative_rotation();
    let (w, v) = (rel.w, rel.imag());
    let s = if w < 0.0 { -1.0 } else { 1.0 };
    let e = lambda;
    let r = g.frame_parent.rotation.to_rotation_matrix().into_inner();
    let gw = r * ((e * w + v.cross(e)) * s);
    let m = e * v.transpose() + e.cross_matrix() * (Matrix3::identity() * w - v.cross_matrix());
    let a = r * m * r.transpose() * (0.5 * s);
    let dg_child = -a;
    let dg_parent = a - gw.cross_matrix();
    let mut st = Stiffness::zeros();
    st.add(CHILD, CHILD, ANG, ANG, &dg_child);
    st.add(CHILD, PARENT, ANG, ANG, &dg_parent);
    st.add(PARENT, CHILD, ANG, ANG, &-dg_child);
    st.add(PARENT, PARENT, ANG, ANG, &-dg_parent);
    st
}

/// The three angle-lock rows.
#[inline]
pub fn angle_locks(g: &JointGeometry) -> [PositionRow; 3] {
    [angle_lock(g, 0), angle_lock(g, 1), angle_lock(g, 2)]
}

/// Alignment of the child's axis $a_c = R_{wc}\thinspace a$ with the plane normal to the parent's
/// $b_p = R_{wp}\thinspace b$ ($b \perp a$ in the joint frame):
/// $$c = a_c \cdot b_p,\qquad n = a_c \times b_p,\qquad J_c = (0,\ n),\quad J_p = (0,\ -n).$$
#[inline]
pub fn axis_alignment(g: &JointGeometry, axis: &Vector3<f64>, b: &Vector3<f64>) -> PositionRow {
    alignment_row(
        &(g.frame_child.rotation * axis),
        &(g.frame_parent.rotation * b),
    )
}

/// The [`axis_alignment`] row of the world vectors $a_c$ and $b_p$.
#[inline]
fn alignment_row(a_c: &Vector3<f64>, b_p: &Vector3<f64>) -> PositionRow {
    let n = a_c.cross(b_p);
    PositionRow {
        error: a_c.dot(b_p),
        jacobian: RowJacobian::new(Vector3::zeros(), -n, Vector3::zeros(), n),
    }
}

/// Geometric stiffness of an [`axis_alignment`]: the torque $\lambda n$,
/// $n = a_c\times b_p$, turns with
/// $\partial n/\partial\phi_c = a_c b_p^\top - (a_c\cdot b_p)I$ and
/// $\partial n/\partial\phi_p = (a_c\cdot b_p)I - b_p a_c^\top$.
#[inline]
pub fn axis_alignment_stiffness(
    g: &JointGeometry,
    axis: &Vector3<f64>,
    b: &Vector3<f64>,
    lambda: f64,
) -> Stiffness {
    let a_c = g.frame_child.rotation * axis;
    let b_p = g.frame_parent.rotation * b;
    let d = a_c.dot(&b_p);
    let dn_child = a_c * b_p.transpose() - Matrix3::identity() * d;
    let dn_parent = Matrix3::identity() * d - b_p * a_c.transpose();
    let mut k = Stiffness::zeros();
    k.add(CHILD, CHILD, ANG, ANG, &(dn_child * lambda));
    k.add(CHILD, PARENT, ANG, ANG, &(dn_parent * lambda));
    k.add(PARENT, CHILD, ANG, ANG, &(dn_child * -lambda));
    k.add(PARENT, PARENT, ANG, ANG, &(dn_parent * -lambda));
    k
}

/// The two alignment rows keeping $a_c$ parallel to $a_p$, with $(b_1, b_2)$ =
/// [`orthobasis`](axion_math::orthobasis)$(a)$ ([`UnitAxis::basis`]).
#[inline]
pub fn axis_alignments(g: &JointGeometry, axis: &UnitAxis) -> [PositionRow; 2] {
    let (b1, b2) = axis.basis();
    let a_c = g.frame_child.rotation * axis.vector();
    [
        alignment_row(&a_c, &(g.frame_parent.rotation * b1)),
        alignment_row(&a_c, &(g.frame_parent.rotation * b2)),
    ]
}

/// Slide lock: no separation along the parent-fixed direction $n = R_{wp}\thinspace b$:
/// $$c = (p_c - p_p)\cdot n,\qquad J_c = (n,\ r_c\times n),\quad
///   J_p = \big(-n,\ -(p_c - x_P)\times n\big).$$
/// The parent's angular block includes the rotation of $n$ itself
/// ($\delta\cdot(\omega_p\times n)$).
#[inline]
pub fn slide_lock(g: &JointGeometry, b: &Vector3<f64>) -> PositionRow {
    let n = g.frame_parent.rotation * b;
    let d = g.separation();
    PositionRow {
        error: d.dot(&n),
        jacobian: RowJacobian::new(-n, -(g.r_parent + d).cross(&n), n, g.r_child.cross(&n)),
    }
}

/// Geometric stiffness of a [`slide_lock`] (force $\lambda n$ at the child's anchor,
/// $n = R_{wp}b$ turning with the parent; $D = p_c - x_P$):
/// $$\frac{\partial f_c}{\partial\phi_p} = -\lambda\operatorname{skew}(n),\quad
///   \frac{\partial\tau_c}{\partial\phi_c} = \lambda(r_c n^\top - (n\cdot r_c)I),\quad
///   \frac{\partial\tau_c}{\partial\phi_p} = -\lambda\operatorname{skew}(r_c)\operatorname{skew}(n),$$
/// $$\frac{\partial f_p}{\partial\phi_p} = \lambda\operatorname{skew}(n),\quad
///   \frac{\partial\tau_p}{\partial x_c} = -\frac{\partial\tau_p}{\partial x_p} = \lambda\operatorname{skew}(n),\quad
///   \frac{\partial\tau_p}{\partial\phi_c} = -\lambda(r_c n^\top - (n\cdot r_c)I),\quad
///   \frac{\partial\tau_p}{\partial\phi_p} = \lambda\operatorname{skew}(D)\operatorname{skew}(n).$$
#[inline]
pub fn slide_lock_stiffness(g: &JointGeometry, b: &Vector3<f64>, lambda: f64) -> Stiffness {
    let n = g.frame_parent.rotation * b;
    let nx = n.cross_matrix();
    let d = g.r_parent + g.separation();
    let lever = lever_derivative(&g.r_child, &n);
    let mut k = Stiffness::zeros();
    k.add(CHILD, PARENT, LIN, ANG, &(nx * -lambda));
    k.add(CHILD, CHILD, ANG, ANG, &(lever * lambda));
    k.add(
        CHILD,
        PARENT,
        ANG,
        ANG,
        &(g.r_child.cross_matrix() * nx * -lambda),
    );
    k.add(PARENT, PARENT, LIN, ANG, &(nx * lambda));
    k.add(PARENT, CHILD, ANG, LIN, &(nx * lambda));
    k.add(PARENT, PARENT, ANG, LIN, &(nx * -lambda));
    k.add(PARENT, CHILD, ANG, ANG, &(lever * -lambda));
    k.add(PARENT, PARENT, ANG, ANG, &(d.cross_matrix() * nx * lambda));
    k
}
