//! The elementary rows joints are made of.

use axion_math::orthobasis;
use nalgebra::Vector3;

use super::JointGeometry;
use crate::row::{PositionRow, RowJacobian};

/// Point lock along a world direction $e$:
/// $$c = (p_c - p_p)\cdot e,\qquad
///   J_p = \big(-e,\ -(r_p \times e)\big),\quad J_c = \big(e,\ r_c \times e\big).$$
pub fn point_lock(g: &JointGeometry, e: &Vector3<f64>) -> PositionRow {
    PositionRow {
        error: g.separation().dot(e),
        jacobian: RowJacobian::new(-e, -g.r_parent.cross(e), *e, g.r_child.cross(e)),
    }
}

/// The three point-lock rows along the world axes.
pub fn point_locks(g: &JointGeometry) -> [PositionRow; 3] {
    [Vector3::x(), Vector3::y(), Vector3::z()].map(|e| point_lock(g, &e))
}

/// Angle lock about axis $k$ of the parent joint frame. With
/// $\theta_{rel} = \theta_{wp}^{-1}\otimes\theta_{wc} = (w, \mathbf v)$ and
/// $s = \operatorname{sign} w$ (the short way round):
/// $$c = 2 s\thinspace  v_k,\qquad J_c = \big(0,\ s\thinspace R_{wp}(w\thinspace e_k + \mathbf v \times e_k)\big),\quad J_p = -J_c.$$
/// The Jacobian follows from $\dot\theta_{rel} = \tfrac12 [0, R_{wp}^\top(\omega_c - \omega_p)]\otimes\theta_{rel}$;
/// at $\theta_{rel} = 1$ it is the familiar $(0, \pm R_{wp} e_k)$.
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

/// The three angle-lock rows.
pub fn angle_locks(g: &JointGeometry) -> [PositionRow; 3] {
    [0, 1, 2].map(|k| angle_lock(g, k))
}

/// Alignment of the child's axis $a_c = R_{wc}\thinspace a$ with the plane normal to the parent's
/// $b_p = R_{wp}\thinspace b$ ($b \perp a$ in the joint frame):
/// $$c = a_c \cdot b_p,\qquad n = a_c \times b_p,\qquad J_c = (0,\ n),\quad J_p = (0,\ -n).$$
pub fn axis_alignment(g: &JointGeometry, axis: &Vector3<f64>, b: &Vector3<f64>) -> PositionRow {
    let a_c = g.frame_child.rotation * axis;
    let b_p = g.frame_parent.rotation * b;
    let n = a_c.cross(&b_p);
    PositionRow {
        error: a_c.dot(&b_p),
        jacobian: RowJacobian::new(Vector3::zeros(), -n, Vector3::zeros(), n),
    }
}

/// The two alignment rows keeping $a_c$ parallel to $a_p$, with $(b_1, b_2)$ =
/// [`orthobasis`]$(a)$.
pub fn axis_alignments(g: &JointGeometry, axis: &Vector3<f64>) -> [PositionRow; 2] {
    let (b1, b2) = orthobasis(axis);
    [axis_alignment(g, axis, &b1), axis_alignment(g, axis, &b2)]
}

/// Slide lock: no separation along the parent-fixed direction $n = R_{wp}\thinspace b$:
/// $$c = (p_c - p_p)\cdot n,\qquad J_c = (n,\ r_c\times n),\quad
///   J_p = \big(-n,\ -(p_c - x_P)\times n\big).$$
/// The parent's angular block includes the rotation of $n$ itself
/// ($\delta\cdot(\omega_p\times n)$).
pub fn slide_lock(g: &JointGeometry, b: &Vector3<f64>) -> PositionRow {
    let n = g.frame_parent.rotation * b;
    let d = g.separation();
    PositionRow {
        error: d.dot(&n),
        jacobian: RowJacobian::new(-n, -(g.r_parent + d).cross(&n), n, g.r_child.cross(&n)),
    }
}
