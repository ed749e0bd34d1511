//! Fixed (weld) joint: three [point locks](super::lock::point_lock) and three
//! [angle locks](super::lock::angle_lock), $c = [p_c - p_p,\ 2 s\thinspace \mathbf v_{rel}]$.

use super::JointGeometry;
use nalgebra::Vector3;

use super::lock::{angle_locks, angle_locks_stiffness};
use crate::row::PositionRow;
use crate::stiffness::Stiffness;

/// The six position rows of a fixed joint.
#[inline]
pub fn rows(g: &JointGeometry) -> [PositionRow; 6] {
    let [p0, p1, p2] = super::ball::rows(g);
    let [a0, a1, a2] = angle_locks(g);
    [p0, p1, p2, a0, a1, a2]
}

/// Geometric stiffness of the six rows with multipliers `lambda`.
#[inline]
pub fn stiffness(g: &JointGeometry, lambda: &[f64; 6]) -> Stiffness {
    let mut k = super::ball::stiffness(g, &[lambda[0], lambda[1], lambda[2]]);
    k += angle_locks_stiffness(g, &Vector3::new(lambda[3], lambda[4], lambda[5]));
    k
}
