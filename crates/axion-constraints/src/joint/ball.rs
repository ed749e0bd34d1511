//! Ball (spherical) joint: the three [point locks](super::lock::point_lock),
//! $c = p_c - p_p$.

use super::JointGeometry;
use nalgebra::Vector3;

use super::lock::{point_lock_stiffness, point_locks};
use crate::row::PositionRow;
use crate::stiffness::Stiffness;

/// The three position rows of a ball joint.
pub fn rows(g: &JointGeometry) -> [PositionRow; 3] {
    point_locks(g)
}

/// Geometric stiffness of the three rows with multipliers `lambda`.
pub fn stiffness(g: &JointGeometry, lambda: &[f64; 3]) -> Stiffness {
    let mut k = Stiffness::zeros();
    for (i, e) in [Vector3::x(), Vector3::y(), Vector3::z()]
        .iter()
        .enumerate()
    {
        k += point_lock_stiffness(g, e, lambda[i]);
    }
    k
}
