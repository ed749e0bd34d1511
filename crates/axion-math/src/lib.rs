//! # axion-math
//!
//! The rigid-body mathematics every other axion-rs crate stands on:
//!
//! * [`pose`]: poses $q = (x, \theta)$ (centre of mass, unit quaternion), twists
//!   $u = (v, \omega)$ in the world frame, validated unit axes;
//! * [`kinematics`]: the kinematic map $G(q)$, $G^\top$, the exponential map and pose
//!   integration $q^+ = q \oplus h\thinspace G(q)\thinspace u$;
//! * [`inertia`]: mass properties, world inertia, the mass matrix $\tilde M$;
//! * [`basis`]: tangent bases and angle wrapping;
//! * [`ncp`]: the Fischer–Burmeister family of NCP functions with derivatives.
//!
//! Conventions: Z up, SI units, quaternions stored $(x, y, z, w)$ as in nalgebra.
//! Bad input is refused with a [`MathError`] that names the quantity.

pub mod basis;
pub mod error;
pub mod inertia;
pub mod kinematics;
pub mod ncp;
pub mod pose;

pub use basis::{orthobasis, wrap_angle};
pub use error::MathError;
pub use inertia::{InertiaRepair, MassProperties, combine_parts, repair_inertia};
pub use kinematics::{
    exp_map, integrate, kinematic_map, kinematic_map_transpose, left_jacobian, quaternion_rate,
    quaternion_rate_matrix, rotation_between,
};
pub use ncp::{NcpEval, fischer_burmeister, fischer_burmeister_scaled};
pub use pose::{
    Pose, Twist, UnitAxis, Wrench, angular, linear, pose_coords, pose_from_coords, twist,
};

/// Re-export of the nalgebra version this crate is built on.
pub use nalgebra;
