//! # axion-constraints
//!
//! Every constraint of the axion-rs step as a **pure function** of small inputs —
//! poses, velocities, body-local anchors and axes, multipliers, parameters, the step
//! $h$ — returning residuals, Jacobian blocks for at most two bodies and compliances.
//! The solvers (CPU and GPU) own storage, loops and scheduling; a formula lives here,
//! in one place, beside its LaTeX.
//!
//! | module | rows | level |
//! |---|---|---|
//! | [`joint`] | revolute 5, prismatic 5, ball 3, fixed 6, free 0 | position, compliant |
//! | [`drive`] | 1 per driven joint | position (PD) or velocity |
//! | [`contact`] | 1 per contact | position (FB) or velocity (restitution) |
//! | [`friction`] | 2 per contact | fixed point, projection, symmetric |
//!
//! The linearisation convention common to all rows is described in [`row`].

pub mod contact;
pub mod drive;
pub mod error;
pub mod friction;
pub mod joint;
pub mod row;
pub mod stiffness;

pub use error::ConstraintError;
pub use row::{PositionRow, Row, RowJacobian, compliant_row, velocity_row};
pub use stiffness::Stiffness;
