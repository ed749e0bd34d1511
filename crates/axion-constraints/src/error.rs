//! Typed errors of constraint constructors.

use axion_math::MathError;
use thiserror::Error;

/// A constraint parameter that cannot be used.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ConstraintError {
    /// A vector, pose or number failed a math-level check (non-finite, zero-length, …).
    #[error(transparent)]
    Math(#[from] MathError),
    /// A parameter that must be non-negative is negative.
    #[error("{what} must be non-negative, got {value}")]
    Negative {
        /// The parameter.
        what: &'static str,
        /// Its value.
        value: f64,
    },
    /// A parameter outside $[0, 1]$.
    #[error("{what} must lie in [0, 1], got {value}")]
    OutsideUnitInterval {
        /// The parameter.
        what: &'static str,
        /// Its value.
        value: f64,
    },
    /// A drive whose gains make it exert no force at all.
    #[error("drive gains give no force: {reason}")]
    ZeroDriveGains {
        /// Which gains are zero for the chosen mode.
        reason: &'static str,
    },
    /// A parameter that must be positive is zero or negative.
    #[error("{what} must be positive, got {value}")]
    NotPositive {
        /// The parameter.
        what: &'static str,
        /// Its value.
        value: f64,
    },
}

/// Checks that `value` is finite and `≥ 0`.
pub(crate) fn non_negative(what: &'static str, value: f64) -> Result<f64, ConstraintError> {
    axion_math::error::ensure_finite(what, value)?;
    if value < 0.0 {
        return Err(ConstraintError::Negative { what, value });
    }
    Ok(value)
}

/// Checks that `value` is finite and in `[0, 1]`.
pub(crate) fn unit_interval(what: &'static str, value: f64) -> Result<f64, ConstraintError> {
    axion_math::error::ensure_finite(what, value)?;
    if !(0.0..=1.0).contains(&value) {
        return Err(ConstraintError::OutsideUnitInterval { what, value });
    }
    Ok(value)
}
