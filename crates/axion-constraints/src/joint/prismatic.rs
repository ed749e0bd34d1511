//! Prismatic (slider) joint: 5 rows.
//!
//! Rows, in order: two [slide locks](super::lock::slide_lock) along the directions
//! $(b_1, b_2)$ = orthobasis$(a)$ normal to the slide axis, then the three
//! [angle locks](super::lock::angle_lock):
//! $$c = \big[(p_c - p_p)\cdot R_{wp} b_1,\ (p_c - p_p)\cdot R_{wp} b_2,\
//!   2 s\thinspace \mathbf v_{rel}\big].$$

use axion_math::{UnitAxis, orthobasis};

use super::JointGeometry;
use super::lock::{angle_lock_stiffness, angle_locks, slide_lock, slide_lock_stiffness};
use crate::row::PositionRow;
use crate::stiffness::Stiffness;

/// The five position rows of a prismatic joint along `axis` (joint frame).
pub fn rows(g: &JointGeometry, axis: &UnitAxis) -> [PositionRow; 5] {
    let (b1, b2) = orthobasis(&axis.vector());
    let [r0, r1, r2] = angle_locks(g);
    [slide_lock(g, &b1), slide_lock(g, &b2), r0, r1, r2]
}

/// Geometric stiffness of the five rows with multipliers `lambda`.
pub fn stiffness(g: &JointGeometry, axis: &UnitAxis, lambda: &[f64; 5]) -> Stiffness {
    let (b1, b2) = orthobasis(&axis.vector());
    let mut k = slide_lock_stiffness(g, &b1, lambda[0]);
    k += slide_lock_stiffness(g, &b2, lambda[1]);
    for i in 0..3 {
        k += angle_lock_stiffness(g, i, lambda[2 + i]);
    }
    k
}
