//! Revolute (hinge) joint: 5 rows.
//!
//! Rows, in order: the three [point locks](super::lock::point_lock) (anchors coincide),
//! then two [axis alignments](super::lock::axis_alignment) keeping the child's hinge
//! axis along the parent's,
//! $$c = \big[(p_c - p_p)\cdot e_x,\ (p_c - p_p)\cdot e_y,\ (p_c - p_p)\cdot e_z,\
//!   a_c\cdot b_{1,p},\ a_c\cdot b_{2,p}\big].$$

use axion_math::UnitAxis;

use super::JointGeometry;
use super::lock::{axis_alignments, point_locks};
use crate::row::PositionRow;

/// The five position rows of a revolute joint about `axis` (joint frame).
pub fn rows(g: &JointGeometry, axis: &UnitAxis) -> [PositionRow; 5] {
    let [p0, p1, p2] = point_locks(g);
    let [a0, a1] = axis_alignments(g, &axis.vector());
    [p0, p1, p2, a0, a1]
}
