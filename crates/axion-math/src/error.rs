//! Typed errors for inputs the math layer refuses.

use thiserror::Error;

/// An input that cannot describe a physical quantity.
///
/// Every variant names the quantity (`what`) so that a caller several layers up
/// (a model builder, a scene file) can say which field of which body or joint is wrong.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MathError {
    /// A number is NaN or infinite.
    #[error("{what} must be finite, got {value}")]
    NonFinite {
        /// The quantity that was checked.
        what: &'static str,
        /// The offending number.
        value: f64,
    },
    /// A direction has (numerically) zero length.
    #[error("{what} must have non-zero length, got norm {norm:e}")]
    ZeroLength {
        /// The quantity that was checked.
        what: &'static str,
        /// Its norm.
        norm: f64,
    },
    /// A vector or quaternion that must be unit length is not.
    #[error("{what} must have unit length (within {tolerance:e}), got norm {norm}")]
    NotUnit {
        /// The quantity that was checked.
        what: &'static str,
        /// Its norm.
        norm: f64,
        /// The accepted deviation of the norm from 1.
        tolerance: f64,
    },
    /// A mass that is zero, negative or not finite.
    #[error("mass must be positive, got {mass}")]
    NonPositiveMass {
        /// The offending mass in kg.
        mass: f64,
    },
    /// An inertia tensor that is not symmetric.
    #[error("inertia tensor must be symmetric (largest asymmetry {asymmetry:e} kg m^2)")]
    InertiaNotSymmetric {
        /// Largest |I_ij − I_ji|.
        asymmetry: f64,
    },
    /// An inertia tensor with a zero or negative principal moment.
    #[error("inertia tensor must be positive definite, got principal moments {moments:?} kg m^2")]
    NonPositiveInertia {
        /// Principal moments (eigenvalues), ascending.
        moments: [f64; 3],
    },
    /// Principal moments that no rigid mass distribution can have (I₁ > I₂ + I₃).
    #[error(
        "inertia principal moments {moments:?} kg m^2 violate the triangle inequality \
         (the largest exceeds the sum of the other two): no rigid body has them"
    )]
    InertiaTriangleInequality {
        /// Principal moments (eigenvalues), ascending.
        moments: [f64; 3],
    },
}

/// Checks that `value` is finite.
pub fn ensure_finite(what: &'static str, value: f64) -> Result<f64, MathError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(MathError::NonFinite { what, value })
    }
}

/// Checks that every component of `values` is finite.
pub fn ensure_all_finite<'a>(
    what: &'static str,
    values: impl IntoIterator<Item = &'a f64>,
) -> Result<(), MathError> {
    values
        .into_iter()
        .try_for_each(|&v| ensure_finite(what, v).map(|_| ()))
}
