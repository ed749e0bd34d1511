//! Prismatic (slider) joint: 5 rows.
//!
//! Rows, in order: two [slide locks](super::lock::slide_lock) along the directions
//! $(b_1, b_2)$ = orthobasis$(a)$ normal to the slide axis, then the three
//! [angle locks](super::lock::angle_lock):
//! $$c = \big[(p_c - p_p)\cdot R_{wp} b_1,\ (p_c - p_p)\cdot R_{wp} b_2,\
//!   2 s\thinspace \mathbf v_{rel}\big].$$

use axion_math::UnitAxis;

use super::JointGeometry;
use nalgebra::Vector3;

use super::lock::{angle_locks, angle_locks_stiffness, slide_lock, slide_lock_stiffness};
use crate::row::PositionRow;
use crate::stiffness::Stiffness;

/// The five position rows of a prismatic joint along `axis` (joint frame).
#[inline]
pub fn rows(g: &JointGeometry, axis: &UnitAxis) -> [PositionRow; 5] {
    let (b1, b2) = axis.basis();
    let [r0, r1, r2] = angle_locks(g);
    [slide_lock(g, &b1), slide_lock(g, &b2), r0, r1, r2]
}

/// Geometric stiffness of the five rows with multipliers `lambda`. The slide locks'
/// stiffness is linear in $b$ (through $n = R_{wp}b$), so their two rows are one
/// [`slide_lock_stiffness`] along $\lambda_0b_1 + \lambda_1b_2$.
#[inline]
pub fn stiffness(g: &JointGeometry, axis: &UnitAxis, lambda: &[f64; 5]) -> Stiffness {
    let (b1, b2) = axis.basis();
    let mut k = slide_lock_stiffness(g, &(b1 * lambda[0] + b2 * lambda[1]), 1.0);
    k += angle_locks_stiffness(g, &Vector3::new(lambda[2], lambda[3], lambda[4]));
    k
}
