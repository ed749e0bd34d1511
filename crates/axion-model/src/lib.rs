//! # axion-model
//!
//! The description of what is simulated and the interface of those who simulate it:
//!
//! * [`ModelBuilder`] → [`Model`]: bodies (mass from shapes or given, centre-of-mass
//!   offsets), joints (revolute, prismatic, ball, fixed, free) with compliance and
//!   drives, gravity — every input checked, every error naming its body or joint;
//! * [`State`]: poses, velocities and constraint forces of a batch of identical worlds;
//! * [`Control`]: drive targets and external wrenches per world;
//! * [`Backend`]: the trait the CPU and GPU backends implement, with [`StepStats`].
//!
//! Energy and constraint-error measures for tests and reports are in [`measure`]. Scene
//! files, URDF robots and meshes are read by the `axion-import` crate, so a program that
//! builds its models in code compiles no file parser.

pub mod backend;
pub mod desc;
pub mod error;
pub mod measure;
pub mod model;
pub mod shape;
pub mod state;

pub use backend::{Backend, ContactForce, MAX_SPLIT_DEPTH, RunTotals, StepReport, StepStats};
pub use desc::{
    BodyDesc, BodyId, BodyKind, DriveDesc, DriveId, JointDesc, JointDynamics, JointId, JointLimits,
    JointType, MassSpec,
};
pub use error::{ControlError, ModelError, StepError};
pub use model::{
    Body, CollisionExclusions, JointRange, Model, ModelBuilder, ModelDrive, ModelJoint,
};
pub use shape::{
    Anisotropy, CollisionFilter, Geometry, MAX_SHAPE_SIZE, Material, Shape, ShapeDesc,
};
pub use state::{Control, MAX_BODY_STATES, State, WorldMut, mode_name};
