//! Tangent bases.

use nalgebra::Vector3;

/// Two unit vectors $(b_1, b_2)$ completing the unit vector `n` to a right-handed
/// orthonormal frame $(b_1, b_2, n)$: $b_1 \times b_2 = n$.
///
/// $v$ is the coordinate axis along which $|n|$ has its smallest component (ties: x
/// before y before z); $b_1 = \dfrac{n \times v}{|n \times v|}$, $b_2 = n \times b_1$.
/// The choice is a deterministic function of `n`, so a contact's tangent frame does not
/// depend on anything but its normal.
#[inline]
pub fn orthobasis(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = n.abs();
    let v = if a.x <= a.y && a.x <= a.z {
        Vector3::x()
    } else if a.y <= a.z {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let b1 = n.cross(&v).normalize();
    let b2 = n.cross(&b1);
    (b1, b2)
}

/// Wraps an angle to $[-\pi, \pi)$.
pub fn wrap_angle(angle: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    let w = (angle + PI).rem_euclid(TAU) - PI;
    if w >= PI { w - TAU } else { w }
}
