//! Revolute (hinge) joint: 5 rows.
//!
//! Rows, in order: the three [point locks](super::lock::point_lock) (anchors coincide),
//! then two [axis alignments](super::lock::axis_alignment) keeping the child's hinge
//! axis along the parent's,
//! $$c = \big[(p_c - p_p)\cdot e_x,\ (p_c - p_p)\cdot e_y,\ (p_c - p_p)\cdot e_z,\
//!   a_c\cdot b_{1,p},\ a_c\cdot b_{2,p}\big].$$

use axion_math::UnitAxis;

use super::JointGeometry;
use nalgebra::Vector3;

use super::lock::{axis_alignment_stiffness, axis_alignments, point_locks, point_locks_stiffness};
use crate::row::PositionRow;
use crate::stiffness::Stiffness;

/// The five position rows of a revolute joint about `axis` (joint frame).
#[inline]
pub fn rows(g: &JointGeometry, axis: &UnitAxis) -> [PositionRow; 5] {
    let [p0, p1, p2] = point_locks(g);
    let [a0, a1] = axis_alignments(g, axis);
    [p0, p1, p2, a0, a1]
}

/// Geometric stiffness of the five rows with multipliers `lambda`. Each part is linear
/// in its direction ($\lambda e$ of a point lock, $b$ of an alignment through
/// $b_p = R_{wp}b$), so the three point locks are one along $(\lambda_0, \lambda_1, \lambda_2)$
/// and the two alignments one along $\lambda_3b_1 + \lambda_4b_2$.
#[inline]
pub fn stiffness(g: &JointGeometry, axis: &UnitAxis, lambda: &[f64; 5]) -> Stiffness {
    let a = axis.vector();
    let (b1, b2) = axis.basis();
    let mut k = point_locks_stiffness(g, &Vector3::new(lambda[0], lambda[1], lambda[2]));
    k += axis_alignment_stiffness(g, &a, &(b1 * lambda[3] + b2 * lambda[4]), 1.0);
    k
}
