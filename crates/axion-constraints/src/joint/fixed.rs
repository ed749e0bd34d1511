//! Fixed (weld) joint: three [point locks](super::lock::point_lock) and three
//! [angle locks](super::lock::angle_lock), $c = [p_c - p_p,\ 2 s\thinspace \mathbf v_{rel}]$.

use super::JointGeometry;
use super::lock::{angle_locks, point_locks};
use crate::row::PositionRow;

/// The six position rows of a fixed joint.
pub fn rows(g: &JointGeometry) -> [PositionRow; 6] {
    let [p0, p1, p2] = point_locks(g);
    let [a0, a1, a2] = angle_locks(g);
    [p0, p1, p2, a0, a1, a2]
}
