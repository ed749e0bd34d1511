//! Poses, velocities, unit axes and their validation.
//!
//! A body's pose $q = (x, \theta)$ is the world position $x$ of its centre of mass and
//! the unit quaternion $\theta$ of its orientation; [`Pose`] is nalgebra's
//! [`Isometry3`], so composition, inversion and point transforms come from nalgebra.
//! Its 7 coordinates are ordered $(x_1, x_2, x_3, \theta_x, \theta_y, \theta_z, \theta_w)$,
//! the storage order of nalgebra's quaternion (vector part first, scalar last).
//!
//! A body's velocity $u = (v, \omega)$ is the linear velocity of the centre of mass and
//! the angular velocity, **both in the world frame** ([`Twist`]).

use nalgebra::{
    Isometry3, Quaternion, SVector, Translation3, Unit, UnitQuaternion, Vector3, Vector6,
};

use crate::error::{MathError, ensure_all_finite};

/// Pose of a body: centre-of-mass position and orientation (world frame).
pub type Pose = Isometry3<f64>;

/// Body velocity $u = (v, \omega)$: linear COM velocity, then angular velocity, world frame.
pub type Twist = Vector6<f64>;

/// Spatial force $(f, \tau)$ at the centre of mass, world frame; dual to [`Twist`].
pub type Wrench = Vector6<f64>;

/// Accepted deviation from unit length for user-supplied axes and quaternions.
pub const UNIT_TOLERANCE: f64 = 1e-6;

/// Builds a [`Twist`] from its linear and angular parts.
#[inline]
pub fn twist(linear: Vector3<f64>, angular: Vector3<f64>) -> Twist {
    Vector6::new(
        linear.x, linear.y, linear.z, angular.x, angular.y, angular.z,
    )
}

/// Linear part of a twist or wrench.
#[inline]
pub fn linear(u: &Vector6<f64>) -> Vector3<f64> {
    u.fixed_rows::<3>(0).into_owned()
}

/// Angular part of a twist or wrench.
#[inline]
pub fn angular(u: &Vector6<f64>) -> Vector3<f64> {
    u.fixed_rows::<3>(3).into_owned()
}

/// The 7 pose coordinates $(x, \theta_x, \theta_y, \theta_z, \theta_w)$.
pub fn pose_coords(pose: &Pose) -> SVector<f64, 7> {
    let t = pose.translation.vector;
    let c = pose.rotation.coords;
    SVector::<f64, 7>::from_column_slice(&[t.x, t.y, t.z, c.x, c.y, c.z, c.w])
}

/// Validates 7 pose coordinates (finite, quaternion of unit norm within
/// [`UNIT_TOLERANCE`]) and builds the pose, renormalising the quaternion exactly.
pub fn pose_from_coords(q: &[f64; 7]) -> Result<Pose, MathError> {
    ensure_all_finite("pose coordinate", q.iter())?;
    let quat = Quaternion::new(q[6], q[3], q[4], q[5]);
    let norm = quat.norm();
    if (norm - 1.0).abs() > UNIT_TOLERANCE {
        return Err(MathError::NotUnit {
            what: "pose quaternion",
            norm,
            tolerance: UNIT_TOLERANCE,
        });
    }
    Ok(Isometry3::from_parts(
        Translation3::new(q[0], q[1], q[2]),
        UnitQuaternion::new_normalize(quat),
    ))
}

/// A validated unit direction (a joint axis, a friction axis), with the two unit vectors
/// completing it to a right-handed frame ([`orthobasis`](crate::orthobasis), computed
/// once here: a joint's rows use them at every evaluation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitAxis {
    axis: Unit<Vector3<f64>>,
    basis: (Vector3<f64>, Vector3<f64>),
}

impl UnitAxis {
    /// Accepts `v` if it is finite and of unit length within [`UNIT_TOLERANCE`];
    /// a zero-length or non-unit vector is an error (use [`UnitAxis::normalize`] to
    /// accept any non-zero direction).
    pub fn new(v: Vector3<f64>) -> Result<Self, MathError> {
        let axis = Self::normalize(v)?;
        let norm = v.norm();
        if (norm - 1.0).abs() > UNIT_TOLERANCE {
            return Err(MathError::NotUnit {
                what: "axis",
                norm,
                tolerance: UNIT_TOLERANCE,
            });
        }
        Ok(axis)
    }

    /// Normalises any finite, non-zero direction.
    pub fn normalize(v: Vector3<f64>) -> Result<Self, MathError> {
        ensure_all_finite("axis component", v.iter())?;
        let norm = v.norm();
        if norm <= f64::EPSILON {
            return Err(MathError::ZeroLength { what: "axis", norm });
        }
        Ok(Self::from_unit(Unit::new_unchecked(v / norm)))
    }

    fn from_unit(axis: Unit<Vector3<f64>>) -> Self {
        Self {
            axis,
            basis: crate::orthobasis(&axis),
        }
    }

    /// The unit x, y or z axis.
    pub fn x() -> Self {
        Self::from_unit(Vector3::x_axis())
    }
    /// The unit y axis.
    pub fn y() -> Self {
        Self::from_unit(Vector3::y_axis())
    }
    /// The unit z axis.
    pub fn z() -> Self {
        Self::from_unit(Vector3::z_axis())
    }

    /// The direction as a vector.
    #[inline]
    pub fn vector(&self) -> Vector3<f64> {
        self.axis.into_inner()
    }

    /// The direction as nalgebra's unit vector.
    #[inline]
    pub fn unit(&self) -> Unit<Vector3<f64>> {
        self.axis
    }

    /// $(b_1, b_2)$ = [`orthobasis`](crate::orthobasis) of the direction.
    #[inline]
    pub fn basis(&self) -> (Vector3<f64>, Vector3<f64>) {
        self.basis
    }
}
