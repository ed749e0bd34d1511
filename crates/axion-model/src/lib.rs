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
//! Scene files (TOML) are read by [`scene`]; energy and constraint-error measures for
//! tests and reports are in [`measure`].

pub mod backend;
pub mod desc;
pub mod error;
pub mod measure;
pub mod model;
pub mod scene;
pub mod shape;
pub mod state;
pub mod urdf;

pub use backend::{Backend, StepReport, StepStats};
pub use desc::{
    BodyDesc, BodyId, BodyKind, DriveDesc, DriveId, JointDesc, JointDynamics, JointId, JointLimits,
    JointType, MassSpec,
};
pub use error::{ModelError, StepError};
pub use model::{Body, JointRange, Model, ModelBuilder, ModelDrive, ModelJoint};
pub use scene::{
    DriveSchedule, Scene, SceneError, SceneFormat, SceneSettings, SolverOverrides, load_scene,
    parse_scene, parse_scene_as, parse_scene_in,
};
pub use shape::{
    Anisotropy, CollisionFilter, Geometry, MAX_SHAPE_SIZE, Material, Shape, ShapeDesc,
};
pub use state::{Control, State, WorldMut};
pub use urdf::{ImportedRobot, UrdfError, UrdfOptions, import_urdf};
