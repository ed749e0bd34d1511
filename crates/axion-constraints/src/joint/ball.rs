//! Ball (spherical) joint: the three [point locks](super::lock::point_lock),
//! $c = p_c - p_p$.

use super::JointGeometry;
use nalgebra::Vector3;

use super::lock::{point_locks, point_locks_stiffness};
use crate::row::PositionRow;
use crate::stiffness::Stiffness;

/// The three position rows of a ball joint.
#[inline]
pub fn rows(g: &JointGeometry) -> [PositionRow; 3] {
    point_locks(g)
}

/// Geometric stiffness of the three rows with multipliers `lambda`.
#[inline]
pub fn stiffness(g: &JointGeometry, lambda: &[f64; 3]) -> Stiffness {
    point_locks_stiffness(g, &Vector3::from(*lambda))
}
