//! Errors of model building and stepping.

use axion_constraints::ConstraintError;
use axion_math::MathError;
use thiserror::Error;

/// What is wrong with a model description. Every variant names the body or joint.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ModelError {
    /// Two bodies share a name.
    #[error("body name {name:?} is used twice")]
    DuplicateBodyName {
        /// The name.
        name: String,
    },
    /// Two joints share a name.
    #[error("joint name {name:?} is used twice")]
    DuplicateJointName {
        /// The name.
        name: String,
    },
    /// A body's pose, velocity, mass or inertia is not physical.
    #[error("body {body:?}: {source}")]
    InvalidBody {
        /// The body.
        body: String,
        /// What is wrong.
        #[source]
        source: MathError,
    },
    /// A shape with a non-positive or non-finite size or density.
    #[error("body {body:?}: shape {index}: {reason}")]
    InvalidShape {
        /// The body.
        body: String,
        /// Index of the shape on the body.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// A dynamic body with neither a mass nor any shape with density.
    #[error("body {body:?} is dynamic but has no mass: give it a mass or a shape with a density")]
    NoMass {
        /// The body.
        body: String,
    },
    /// A massless frame given a mass or shapes.
    #[error("body {body:?} is a massless frame: it takes no mass and no shapes")]
    FrameWithMass {
        /// The frame.
        body: String,
    },
    /// A massless frame that is not the child of exactly one joint and the parent of
    /// exactly one.
    #[error(
        "massless frame {body:?} must be the child of one joint and the parent of one; it is the child of {parents} and the parent of {children}"
    )]
    FrameJoints {
        /// The frame.
        body: String,
        /// Joints whose child it is.
        parents: usize,
        /// Joints whose parent it is.
        children: usize,
    },
    /// Joints through massless frames whose motions are not independent: the frames
    /// could move while the bodies at both ends stand still, and nothing (no mass)
    /// would say how.
    #[error(
        "joints {joints:?} through massless frames {frames:?}: their motions are not independent in the initial pose (two parallel hinges through one point, three coplanar axes through one point, …): the frames could move while the bodies at both ends stand still"
    )]
    DependentFrameJoints {
        /// The joints of the chain, from the top.
        joints: Vec<String>,
        /// The frames of the chain, from the top.
        frames: Vec<String>,
    },
    /// A joint names a body that does not exist.
    #[error("joint {joint:?}: unknown body index {index} (the model has {count} bodies)")]
    UnknownBody {
        /// The joint.
        joint: String,
        /// The index given.
        index: usize,
        /// Number of bodies.
        count: usize,
    },
    /// A collision exclusion names a body that does not exist.
    #[error("collision exclusion: unknown body index {index} (the model has {count} bodies)")]
    UnknownExcludedBody {
        /// The index given.
        index: usize,
        /// Number of bodies.
        count: usize,
    },
    /// A body put in a second no-collision group.
    #[error("body {body:?} is already in a group that does not collide with itself")]
    AlreadyExcluded {
        /// The body.
        body: String,
    },
    /// A joint between a body and itself.
    #[error("joint {joint:?} connects body {body:?} to itself")]
    SelfJoint {
        /// The joint.
        joint: String,
        /// The body.
        body: String,
    },
    /// A joint whose child is static (nothing could move).
    #[error("joint {joint:?}: child body {body:?} is static; the child of a joint must be dynamic")]
    StaticChild {
        /// The joint.
        joint: String,
        /// The child body.
        body: String,
    },
    /// An invalid joint parameter (axis, frame, compliance, drive gains …).
    #[error("joint {joint:?}: {source}")]
    InvalidJoint {
        /// The joint.
        joint: String,
        /// What is wrong.
        #[source]
        source: ConstraintError,
    },
    /// Invalid limits or dynamics data kept with a joint.
    #[error("joint {joint:?}: {problem}")]
    InvalidJointData {
        /// The joint.
        joint: String,
        /// What is wrong.
        problem: String,
    },
    /// A drive on a joint type that has no single coordinate.
    #[error(
        "joint {joint:?}: drives are supported on revolute and prismatic joints only, not on {kind} joints"
    )]
    DriveOnUnsupportedJoint {
        /// The joint.
        joint: String,
        /// Its type.
        kind: &'static str,
    },
    /// Gravity with a non-finite component.
    #[error("gravity must be finite, got {gravity:?}")]
    InvalidGravity {
        /// The value given.
        gravity: [f64; 3],
    },
    /// A batch of zero worlds.
    #[error("the number of worlds must be at least 1")]
    NoWorlds,
    /// More worlds than a state may hold ([`crate::state::MAX_BODY_STATES`] bodies in all).
    #[error(
        "{worlds} worlds of {bodies} bodies are more than the {} bodies a state holds; run fewer worlds per process",
        crate::state::MAX_BODY_STATES
    )]
    TooManyWorlds {
        /// Worlds asked for.
        worlds: usize,
        /// Bodies per world.
        bodies: usize,
    },
}

/// Why a step could not be taken at all (a step that runs but does not converge is
/// not an error: see `StepStats::converged`).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StepError {
    /// `h` is not a positive finite number.
    #[error("time step must be positive and finite, got {h}")]
    InvalidTimeStep {
        /// The value given.
        h: f64,
    },
    /// The state or control was made for another model.
    #[error("{what} does not match the model: expected {expected}, got {got}")]
    Mismatch {
        /// Which array.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// An input (state or control) contains NaN or infinity.
    #[error("{what} of world {world}, body or drive {index}, is not finite")]
    NonFiniteInput {
        /// Which input.
        what: &'static str,
        /// The world.
        world: usize,
        /// The body or drive index.
        index: usize,
    },
    /// The backend cannot run this model (for example an unsupported feature).
    #[error("backend {backend}: {reason}")]
    Unsupported {
        /// The backend.
        backend: String,
        /// Why.
        reason: String,
    },
}

/// A change to a [`crate::Control`] that cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ControlError {
    /// A world, drive or body index past the end.
    #[error("{what} {index} does not exist (there are {count})")]
    OutOfRange {
        /// "world", "drive" or "body".
        what: &'static str,
        /// The index given.
        index: usize,
        /// How many there are.
        count: usize,
    },
    /// A position target for a velocity or force drive, or the reverse.
    #[error("drive {drive} is a {mode} drive: {}", mode_hint(.mode))]
    WrongDriveMode {
        /// The drive's index.
        drive: usize,
        /// Its mode: "position", "velocity" or "force".
        mode: &'static str,
    },
    /// A mass given to a static body (static bodies have none).
    #[error("body {body} is static: it has no mass to change")]
    StaticBody {
        /// The body's index.
        body: usize,
    },
    /// A mass given to a massless frame ([`crate::BodyKind::Frame`]).
    #[error("body {body} is a massless frame: it has no mass to change")]
    FrameBody {
        /// The body's index.
        body: usize,
    },
    /// A value outside its domain (negative friction, a mass that is not positive,
    /// a non-finite target).
    #[error(transparent)]
    Value(#[from] ConstraintError),
}

/// How to command a drive of the mode `mode`.
fn mode_hint(mode: &str) -> String {
    match mode {
        "force" => "set its force with set_drive_force".into(),
        _ => format!("set its target with set_{mode}_target"),
    }
}
