//! Ball (spherical) joint: the three [point locks](super::lock::point_lock),
//! $c = p_c - p_p$.

use super::JointGeometry;
use super::lock::point_locks;
use crate::row::PositionRow;

/// The three position rows of a ball joint.
pub fn rows(g: &JointGeometry) -> [PositionRow; 3] {
    point_locks(g)
}
