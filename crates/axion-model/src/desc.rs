//! What a user writes to describe bodies and joints; [`crate::ModelBuilder`] checks it.

use axion_math::Twist;
use nalgebra::{Isometry3, Matrix3, Vector3};

use crate::shape::ShapeDesc;

/// Dynamic bodies move; static bodies (the ground, fixtures) never do; massless frames
/// move as their joints make them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    /// Moves under forces.
    Dynamic,
    /// Infinite mass, never moves.
    Static,
    /// A massless frame between the joints of a compound joint (MuJoCo's body with
    /// several joints: a 2- or 3-hinge hip, a planar root): the child of one joint and
    /// the parent of one, with no mass and no shapes. The joints on either side fix
    /// its motion ([`crate::ModelBuilder::build`] checks that they do), and the two
    /// bodies at the ends of a chain of frames never collide with each other.
    Frame,
}

/// Mass properties given explicitly (as URDF `<inertial>` does).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassSpec {
    /// kg.
    pub mass: f64,
    /// Centre of mass in the body's reference frame.
    pub com: Vector3<f64>,
    /// Inertia about the centre of mass, in the body's reference frame axes.
    pub inertia: Matrix3<f64>,
}

/// A body description.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyDesc {
    /// Unique name.
    pub name: String,
    /// Dynamic or static.
    pub kind: BodyKind,
    /// Initial pose of the body's reference frame in the world.
    pub pose: Isometry3<f64>,
    /// Initial velocity of the centre of mass and angular velocity (world frame).
    pub velocity: Twist,
    /// Explicit mass properties; if `None`, computed from the shapes' densities.
    pub mass: Option<MassSpec>,
    /// Solid shapes (mass, and later collision).
    pub shapes: Vec<ShapeDesc>,
}

impl BodyDesc {
    /// A dynamic body at the origin, at rest, with no mass yet.
    pub fn dynamic(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            kind: BodyKind::Dynamic,
            pose: Isometry3::identity(),
            velocity: Twist::zeros(),
            mass: None,
            shapes: Vec::new(),
        }
    }

    /// A massless frame ([`BodyKind::Frame`]).
    pub fn frame(name: impl Into<String>) -> Self {
        Self {
            kind: BodyKind::Frame,
            ..Self::dynamic(name)
        }
    }

    /// A static body.
    pub fn fixed(name: impl Into<String>) -> Self {
        Self {
            kind: BodyKind::Static,
            ..Self::dynamic(name)
        }
    }

    /// Sets the initial pose.
    pub fn pose(mut self, pose: Isometry3<f64>) -> Self {
        self.pose = pose;
        self
    }

    /// Sets the initial position (keeping the orientation).
    pub fn at(mut self, position: Vector3<f64>) -> Self {
        self.pose.translation.vector = position;
        self
    }

    /// Sets the initial velocity.
    pub fn velocity(mut self, velocity: Twist) -> Self {
        self.velocity = velocity;
        self
    }

    /// Gives the mass explicitly: `mass` kg, centre of mass `com`, `inertia` about it.
    pub fn mass(mut self, mass: f64, com: Vector3<f64>, inertia: Matrix3<f64>) -> Self {
        self.mass = Some(MassSpec { mass, com, inertia });
        self
    }

    /// Adds a shape.
    pub fn shape(mut self, shape: ShapeDesc) -> Self {
        self.shapes.push(shape);
        self
    }
}

/// Index of a body in a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyId(pub usize);

/// Index of a joint in a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JointId(pub usize);

/// Index of a drive in a model (drives are numbered in joint order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DriveId(pub usize);

/// The relative motion a joint allows; axes in the joint frame, any non-zero length
/// (normalised by the builder).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointType {
    /// Rotation about `axis`.
    Revolute {
        /// Hinge axis.
        axis: Vector3<f64>,
    },
    /// Translation along `axis`.
    Prismatic {
        /// Slide axis.
        axis: Vector3<f64>,
    },
    /// Any rotation about the anchor.
    Ball,
    /// Welded.
    Fixed,
    /// No constraint (a floating base).
    Free,
}

impl JointType {
    /// A short name for messages.
    pub fn name(&self) -> &'static str {
        match self {
            JointType::Revolute { .. } => "revolute",
            JointType::Prismatic { .. } => "prismatic",
            JointType::Ball => "ball",
            JointType::Fixed => "fixed",
            JointType::Free => "free",
        }
    }
}

/// A drive's mode and gains.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DriveDesc {
    /// Implicit PD servo to `target` (rad or m) with feed-forward velocity.
    Position {
        /// Target position.
        target: f64,
        /// Target velocity (feed-forward, usually 0).
        target_velocity: f64,
        /// Stiffness (N·m/rad or N/m).
        ke: f64,
        /// Damping (N·m·s/rad or N·s/m).
        kd: f64,
    },
    /// Velocity servo to `target` (rad/s or m/s) with gain `ke`.
    Velocity {
        /// Target velocity.
        target: f64,
        /// Gain (N·m·s/rad or N·s/m).
        ke: f64,
    },
    /// An actuator commanded in force: exerts `force` (N·m or N) on the joint until
    /// changed ([`crate::Control::set_drive_force`]).
    Force {
        /// The initial force.
        force: f64,
    },
}

/// A joint description. Frames are given in each body's **reference** frame (the
/// builder moves them to the centre-of-mass frame).
#[derive(Clone, Debug, PartialEq)]
pub struct JointDesc {
    /// Unique name.
    pub name: String,
    /// What it allows.
    pub kind: JointType,
    /// Parent body, or `None` for the world.
    pub parent: Option<BodyId>,
    /// Child body (must be dynamic).
    pub child: BodyId,
    /// Joint frame in the parent's reference frame (world frame for the world).
    pub parent_frame: Isometry3<f64>,
    /// Joint frame in the child's reference frame.
    pub child_frame: Isometry3<f64>,
    /// Compliance ε ≥ 0 (m/N or rad/(N·m)); 0 is rigid.
    pub compliance: f64,
    /// `Some(Υ)`: velocity-level rows with Baumgarte factor Υ ∈ [0, 1] instead of the
    /// default position-level rows (see [`JointDesc::velocity_level`]).
    pub baumgarte: Option<f64>,
    /// Optional drive (revolute and prismatic joints).
    pub drive: Option<DriveDesc>,
    /// Range and ratings (from URDF `<limit>`, or a scene's `range`): the solver keeps
    /// a revolute or prismatic coordinate in `[lower, upper]` (see
    /// `ModelJoint::range`); the effort and velocity ratings are kept, not enforced.
    pub limits: Option<JointLimits>,
    /// Damping and friction (from URDF `<dynamics>`, or a scene's `damping`): viscous
    /// damping of a revolute or prismatic joint becomes an implicit damper
    /// (`ModelJoint::damper`); dry friction is kept, not applied.
    pub dynamics: Option<JointDynamics>,
}

/// A joint's range and ratings, as URDF's `<limit>` gives them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointLimits {
    /// Lowest coordinate (rad or m).
    pub lower: f64,
    /// Highest coordinate (rad or m).
    pub upper: f64,
    /// Largest force or torque (N or N m): a drive on the joint never exerts more
    /// ([`Drive::with_max_force`](axion_constraints::drive::Drive::with_max_force));
    /// infinite or zero: no limit (URDF files often say 0 for "unknown").
    pub effort: f64,
    /// Largest speed (rad/s or m/s).
    pub velocity: f64,
}

/// A joint's damping and dry friction, as URDF's `<dynamics>` gives them, and its
/// armature (MJCF's).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointDynamics {
    /// Viscous damping (N s/m or N m s/rad).
    pub damping: f64,
    /// Dry friction (N or N m).
    pub friction: f64,
    /// Armature: a rotor's inertia reflected to the joint coordinate (kg m² or kg),
    /// added to the joint's effective inertia.
    pub armature: f64,
}

impl JointLimits {
    /// What is wrong with these limits: NaN, a lower bound above the upper one, or a
    /// negative rating.
    pub fn problem(&self) -> Option<String> {
        let l = self;
        if [l.lower, l.upper, l.effort, l.velocity]
            .iter()
            .any(|v| v.is_nan())
        {
            Some(format!("limits must be numbers, got {l:?}"))
        } else if l.lower > l.upper {
            Some(format!(
                "lower limit {} is above upper limit {}",
                l.lower, l.upper
            ))
        } else if l.effort < 0.0 || l.velocity < 0.0 {
            Some(format!(
                "effort and velocity limits must not be negative, got {l:?}"
            ))
        } else {
            None
        }
    }
}

impl JointDynamics {
    /// What is wrong: a negative or non-finite coefficient.
    pub fn problem(&self) -> Option<String> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        (!(ok(self.damping) && ok(self.friction) && ok(self.armature))).then(|| {
            format!("damping, friction and armature must be finite and non-negative, got {self:?}")
        })
    }
}

impl JointDesc {
    /// A rigid joint with identity frames and no drive.
    pub fn new(
        name: impl Into<String>,
        kind: JointType,
        parent: Option<BodyId>,
        child: BodyId,
    ) -> Self {
        Self {
            name: name.into(),
            kind,
            parent,
            child,
            parent_frame: Isometry3::identity(),
            child_frame: Isometry3::identity(),
            compliance: 0.0,
            baumgarte: None,
            drive: None,
            limits: None,
            dynamics: None,
        }
    }

    /// Makes the joint velocity-level with Baumgarte factor `baumgarte` ∈ [0, 1]: its
    /// rows ask for $J(q^-)u^+ = -\Upsilon c(q^-)/h$ (the seeds' alternative formulation,
    /// `axion_constraints::velocity_row`) instead of $c(q^+) = 0$. Cheaper per iteration,
    /// but the joint drifts by about $h^2\omega^2L/2$ per step (an arm of length $L$ at
    /// angular speed $\omega$), of which Υ is taken back each step; the default
    /// position-level rows do not drift. For comparison and for users who want the
    /// classic behaviour (docs/step.md, "Velocity-level joints"). Not on the GPU backend.
    pub fn velocity_level(mut self, baumgarte: f64) -> Self {
        self.baumgarte = Some(baumgarte);
        self
    }

    /// Sets the range and ratings: the solver enforces `lower`/`upper` as a range
    /// (`ModelJoint::range`); the effort and velocity ratings are kept, not enforced.
    pub fn limits(mut self, limits: JointLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// Sets damping and dry friction: the damping of a revolute or prismatic joint is
    /// applied as an implicit damper (`ModelJoint::damper`); friction is kept, not
    /// applied.
    pub fn dynamics(mut self, dynamics: JointDynamics) -> Self {
        self.dynamics = Some(dynamics);
        self
    }

    /// Sets both frames.
    pub fn frames(mut self, parent_frame: Isometry3<f64>, child_frame: Isometry3<f64>) -> Self {
        self.parent_frame = parent_frame;
        self.child_frame = child_frame;
        self
    }

    /// Sets the compliance.
    pub fn compliance(mut self, compliance: f64) -> Self {
        self.compliance = compliance;
        self
    }

    /// Adds a drive.
    pub fn drive(mut self, drive: DriveDesc) -> Self {
        self.drive = Some(drive);
        self
    }
}
