//! The validated model and its builder.

use std::collections::HashSet;

use axion_constraints::drive::{CoordinateKind, Drive, JointCoordinate, coordinate};
use axion_constraints::joint::{Joint, JointFrames, JointKind};
use axion_math::{MassProperties, MathError, Pose, Twist, UnitAxis};
use nalgebra::{Isometry3, Translation3, Vector3};

use crate::desc::{
    BodyDesc, BodyId, BodyKind, DriveDesc, DriveId, JointDesc, JointDynamics, JointId, JointLimits,
    JointType,
};
use crate::error::ModelError;
use crate::shape::{Geometry, ShapeDesc, combined_mass};

/// A validated body. The solver works with its centre-of-mass pose; the reference
/// frame is `com_pose * Translation(-com)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// Name.
    pub name: String,
    /// Dynamic or static.
    pub kind: BodyKind,
    /// Mass and inertia about the COM (infinite for a static body).
    pub mass: MassProperties,
    /// Centre of mass in the reference frame.
    pub com: Vector3<f64>,
    /// Inertia axes = reference frame axes; shapes in the reference frame.
    pub shapes: Vec<ShapeDesc>,
    /// Initial COM pose.
    pub initial_pose: Pose,
    /// Initial velocity.
    pub initial_velocity: Twist,
}

impl Body {
    /// Whether the body moves (a dynamic body or a massless frame).
    pub fn is_dynamic(&self) -> bool {
        matches!(self.kind, BodyKind::Dynamic | BodyKind::Frame)
    }

    /// The reference-frame pose of a body whose COM pose is `com_pose`.
    pub fn reference_pose(&self, com_pose: &Pose) -> Pose {
        com_pose * Translation3::from(-self.com)
    }

    /// The COM pose of a body whose reference-frame pose is `reference`.
    pub fn com_pose(&self, reference: &Pose) -> Pose {
        reference * Translation3::from(self.com)
    }
}

/// A validated joint, frames relative to the centres of mass.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelJoint {
    /// Name.
    pub name: String,
    /// Parent body (`None` = world).
    pub parent: Option<BodyId>,
    /// Child body.
    pub child: BodyId,
    /// The constraint (kind, COM-relative frames, compliance).
    pub joint: Joint,
    /// The joint's drive, if any.
    pub drive: Option<DriveId>,
    /// The joint's damper, if [`dynamics`](Self::dynamics) gives a revolute or prismatic
    /// joint a viscous damping $d > 0$: a velocity drive with target 0 and gain $d$,
    /// $\lambda = -d\thinspace\dot q$, implicit like every drive. (Dry friction, and damping on
    /// other joint kinds, are kept in `dynamics` but not applied.)
    pub damper: Option<DriveId>,
    /// The joint's armature, if [`dynamics`](Self::dynamics) gives a revolute or
    /// prismatic joint an armature $a > 0$: a drive in
    /// [`DriveMode::Armature`](axion_constraints::drive::DriveMode::Armature),
    /// $\lambda = -a(\dot q^+ - \dot q^-)/h$. (Armature on other joint kinds is kept in
    /// `dynamics`, not applied.)
    pub armature: Option<DriveId>,
    /// First row of this joint among the model's joint rows.
    pub first_row: usize,
    /// Range and ratings from the description; the solver enforces the range
    /// ([`range`](Self::range)) and the effort on the joint's drive, not the velocity
    /// rating.
    pub limits: Option<JointLimits>,
    /// Damping and friction from the description: damping is applied through
    /// [`damper`](Self::damper); friction is kept, not applied.
    pub dynamics: Option<JointDynamics>,
}

/// The position range the solver enforces on a joint coordinate (see
/// [`ModelJoint::range`]): $\text{lower} \le q \le \text{upper}$.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointRange {
    /// Angle (revolute) or displacement (prismatic).
    pub coordinate: CoordinateKind,
    /// The joint axis (joint frame).
    pub axis: UnitAxis,
    /// Lowest coordinate (rad or m; `-inf`: none).
    pub lower: f64,
    /// Highest coordinate (rad or m; `inf`: none).
    pub upper: f64,
}

impl JointRange {
    /// The middle of an angle range, from which angles are measured (wrapped to
    /// $[-\pi, \pi)$ around it, so a range such as $[2.5, 3.5]$ rad that crosses $\pi$
    /// works); 0 for a displacement.
    pub fn reference(&self) -> f64 {
        match self.coordinate {
            CoordinateKind::Angle => 0.5 * (self.lower + self.upper),
            CoordinateKind::Displacement => 0.0,
        }
    }

    /// The coordinate `value` measured from [`reference`](Self::reference): the wrapped
    /// difference for an angle.
    pub fn relative(&self, value: f64) -> f64 {
        match self.coordinate {
            CoordinateKind::Angle => axion_math::wrap_angle(value - self.reference()),
            CoordinateKind::Displacement => value,
        }
    }
}

impl ModelJoint {
    /// The joint's single coordinate and its axis (joint frame): the angle of a
    /// revolute joint, the displacement of a prismatic one; `None` for other kinds.
    pub fn coordinate(&self) -> Option<(CoordinateKind, UnitAxis)> {
        match self.joint.kind {
            JointKind::Revolute { axis } => Some((CoordinateKind::Angle, axis)),
            JointKind::Prismatic { axis } => Some((CoordinateKind::Displacement, axis)),
            _ => None,
        }
    }

    /// Coordinate `kind` about or along `axis` (joint frame) and its velocity Jacobian
    /// at the world poses `poses` of every body (the world's pose, the identity, for a
    /// joint without parent): what a drive, a range or a measurement of this joint reads.
    pub fn coordinate_at(
        &self,
        kind: CoordinateKind,
        axis: &UnitAxis,
        poses: &[Pose],
    ) -> JointCoordinate {
        let parent = self.parent.map_or(Pose::identity(), |p| poses[p.0]);
        coordinate(
            kind,
            &self.joint.frames,
            axis,
            &parent,
            &poses[self.child.0],
        )
    }

    /// The range the solver enforces: a revolute or prismatic joint's
    /// [`limits`](Self::limits) lower and upper bounds. An angle range of a full turn
    /// or more ($\text{upper} - \text{lower} \ge 2\pi$, URDF's `continuous`, or an
    /// infinite bound) is not enforced: every relative orientation lies in it, and the
    /// state keeps no count of turns. A prismatic joint may have one infinite bound.
    pub fn range(&self) -> Option<JointRange> {
        let l = self.limits?;
        let (coordinate, axis) = self.coordinate()?;
        let enforced = match coordinate {
            CoordinateKind::Angle => l.upper - l.lower < std::f64::consts::TAU,
            CoordinateKind::Displacement => l.lower.is_finite() || l.upper.is_finite(),
        };
        enforced.then_some(JointRange {
            coordinate,
            axis,
            lower: l.lower,
            upper: l.upper,
        })
    }
}

/// A validated drive on a joint coordinate.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelDrive {
    /// The driven joint.
    pub joint: JointId,
    /// Angle (revolute) or displacement (prismatic).
    pub coordinate: CoordinateKind,
    /// The joint axis (joint frame).
    pub axis: UnitAxis,
    /// Initial mode, targets and gains (the [`crate::Control`] can change targets).
    pub initial: Drive,
}

/// A validated, immutable model: bodies, joints, drives, gravity.
///
/// Two models are equal when their contents are; [`Model::id`] tells builds apart.
#[derive(Clone, Debug)]
pub struct Model {
    /// This build's number ([`Model::id`]).
    id: u64,
    bodies: Vec<Body>,
    joints: Vec<ModelJoint>,
    drives: Vec<ModelDrive>,
    gravity: Vector3<f64>,
    joint_rows: usize,
    /// Which body pairs never collide.
    exclusions: CollisionExclusions,
}

/// The body pairs whose shapes never collide with each other: a joint's parent and
/// child, the pairs given to [`ModelBuilder::exclude_collision`], and bodies of one
/// group of [`ModelBuilder::exclude_within`] (a robot's links).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CollisionExclusions {
    /// Pairs, lower index first.
    pairs: HashSet<(usize, usize)>,
    /// Group of each body (0: none); bodies of one group do not collide.
    groups: Vec<u32>,
}

impl CollisionExclusions {
    /// Whether bodies `a` and `b` (indices) never collide.
    pub fn excludes(&self, a: usize, b: usize) -> bool {
        let group = |i: usize| self.groups.get(i).copied().unwrap_or(0);
        a == b
            || (group(a) != 0 && group(a) == group(b))
            || self.pairs.contains(&(a.min(b), a.max(b)))
    }
}

impl PartialEq for Model {
    fn eq(&self, other: &Self) -> bool {
        self.bodies == other.bodies
            && self.joints == other.joints
            && self.drives == other.drives
            && self.gravity == other.gravity
            && self.joint_rows == other.joint_rows
            && self.exclusions == other.exclusions
    }
}

/// The number of the next model built ([`Model::id`]).
static NEXT_MODEL_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Model {
    /// A number that identifies this build of the model: every
    /// [`ModelBuilder::build`] gives a new one, clones keep it. A model never changes
    /// after it is built, so a backend may keep what it derived from a model (the GPU
    /// backend's packed buffers) for as long as it is given a model with the same id.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// The bodies, indexed by [`BodyId`].
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }
    /// The joints, indexed by [`JointId`].
    pub fn joints(&self) -> &[ModelJoint] {
        &self.joints
    }
    /// The drives, indexed by [`DriveId`].
    pub fn drives(&self) -> &[ModelDrive] {
        &self.drives
    }
    /// Gravity (m/s²).
    pub fn gravity(&self) -> Vector3<f64> {
        self.gravity
    }
    /// Whether the shapes of bodies `a` and `b` never collide with each other: one
    /// body, a joint's parent and child, or a pair excluded with
    /// [`ModelBuilder::exclude_collision`] (filters and static pairs aside).
    pub fn collision_excluded(&self, a: BodyId, b: BodyId) -> bool {
        self.exclusions.excludes(a.0, b.0)
    }
    /// What [`collision_excluded`](Self::collision_excluded) reads.
    pub fn collision_exclusions(&self) -> &CollisionExclusions {
        &self.exclusions
    }
    /// Total number of joint rows.
    pub fn joint_row_count(&self) -> usize {
        self.joint_rows
    }
    /// The body with this name.
    pub fn body_id(&self, name: &str) -> Option<BodyId> {
        self.bodies.iter().position(|b| b.name == name).map(BodyId)
    }
    /// The joint with this name.
    pub fn joint_id(&self, name: &str) -> Option<JointId> {
        self.joints.iter().position(|j| j.name == name).map(JointId)
    }

    /// The drive of the joint with this name, if it has one.
    pub fn drive_id(&self, joint_name: &str) -> Option<DriveId> {
        self.joint_id(joint_name)
            .and_then(|j| self.joints[j.0].drive)
    }

    /// This model with some bodies' masses changed (`masses[b]`: body `b`'s new mass,
    /// `None` to keep it), each inertia scaled with its mass, $I' = I\,m'/m$ (the same
    /// shape, uniformly denser or lighter; the centre of mass stays). Per-world masses
    /// ([`crate::Control::set_body_mass`]) are stepped with such a copy.
    pub fn with_masses(&self, masses: &[Option<f64>]) -> Result<Model, MathError> {
        let mut varied = self.clone();
        for (body, mass) in varied.bodies.iter_mut().zip(masses) {
            if let Some(m) = *mass {
                let old = &body.mass;
                body.mass = MassProperties::new(m, old.inertia() * (m / old.mass()))?;
            }
        }
        Ok(varied)
    }
}

/// Builds a [`Model`], checking every body and joint as it is added.
#[derive(Clone, Debug)]
pub struct ModelBuilder {
    bodies: Vec<Body>,
    joints: Vec<ModelJoint>,
    drives: Vec<ModelDrive>,
    gravity: Vector3<f64>,
    joint_rows: usize,
    exclusions: CollisionExclusions,
    /// Names taken, for the uniqueness checks in constant time.
    body_names: HashSet<String>,
    joint_names: HashSet<String>,
}

impl Default for ModelBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// Checks one shape of a body: geometry, density, pose, material, and that its mass can
/// be known (a dynamic body's half-space cannot; a mesh needs an explicit body mass).
fn validate_shape(body: &BodyDesc, s: &ShapeDesc) -> Result<(), String> {
    s.geometry.validate()?;
    if !(s.density.is_finite() && s.density >= 0.0) {
        return Err(format!(
            "density must be non-negative and finite, got {}",
            s.density
        ));
    }
    finite_pose(&s.local_pose).map_err(|e| e.to_string())?;
    let m = &s.material;
    if !(m.friction.is_finite() && m.friction >= 0.0) {
        return Err(format!(
            "friction must be non-negative and finite, got {}",
            m.friction
        ));
    }
    if !(0.0..=1.0).contains(&m.restitution) {
        return Err(format!(
            "restitution must lie in [0, 1], got {}",
            m.restitution
        ));
    }
    if let Some(a) = &m.anisotropy {
        let axis_ok = a.axis.iter().all(|x| x.is_finite()) && a.axis.norm() > f64::EPSILON;
        if !(axis_ok && a.friction_perp.is_finite() && a.friction_perp >= 0.0) {
            return Err(format!(
                "anisotropy needs a non-zero axis and a non-negative friction across it, got {a:?}"
            ));
        }
    }
    if body.kind == BodyKind::Dynamic {
        match s.geometry {
            Geometry::HalfSpace { .. } => {
                return Err("a half-space has infinite mass: put it on a static body".into());
            }
            Geometry::Solid(_) => {}
            _ if body.mass.is_none() => {
                return Err(format!(
                    "the mass of a {} is not computed: give the body an explicit mass",
                    s.geometry.name()
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

fn finite_pose(pose: &Isometry3<f64>) -> Result<(), MathError> {
    let c = axion_math::pose_coords(pose);
    axion_math::pose_from_coords(&[c[0], c[1], c[2], c[3], c[4], c[5], c[6]]).map(|_| ())
}

impl ModelBuilder {
    /// An empty model with gravity $(0, 0, -9.81)$ m/s².
    pub fn new() -> Self {
        Self {
            bodies: Vec::new(),
            joints: Vec::new(),
            drives: Vec::new(),
            gravity: Vector3::new(0.0, 0.0, -9.81),
            joint_rows: 0,
            exclusions: CollisionExclusions::default(),
            body_names: HashSet::new(),
            joint_names: HashSet::new(),
        }
    }

    /// Keeps the shapes of bodies `a` and `b` from colliding with each other (links of
    /// one robot, say). Errors on an unknown body.
    pub fn exclude_collision(&mut self, a: BodyId, b: BodyId) -> Result<&mut Self, ModelError> {
        let count = self.bodies.len();
        for id in [a, b] {
            if id.0 >= count {
                return Err(ModelError::UnknownExcludedBody { index: id.0, count });
            }
        }
        self.exclusions.pairs.insert((a.0.min(b.0), a.0.max(b.0)));
        Ok(self)
    }

    /// Keeps the given bodies from colliding with each other (all the links of a robot)
    /// at a cost independent of their number of pairs. A body may be in one such group;
    /// errors on an unknown body or one already grouped.
    pub fn exclude_within(&mut self, bodies: &[BodyId]) -> Result<&mut Self, ModelError> {
        let count = self.bodies.len();
        let groups = &mut self.exclusions.groups;
        groups.resize(count, 0);
        let group = groups.iter().copied().max().unwrap_or(0) + 1;
        for id in bodies {
            match groups.get(id.0) {
                None => return Err(ModelError::UnknownExcludedBody { index: id.0, count }),
                Some(&g) if g != 0 => {
                    return Err(ModelError::AlreadyExcluded {
                        body: self.bodies[id.0].name.clone(),
                    });
                }
                Some(_) => {}
            }
        }
        for id in bodies {
            groups[id.0] = group;
        }
        Ok(self)
    }

    /// Sets gravity.
    pub fn gravity(&mut self, gravity: Vector3<f64>) -> Result<&mut Self, ModelError> {
        if !gravity.iter().all(|g| g.is_finite()) {
            return Err(ModelError::InvalidGravity {
                gravity: gravity.into(),
            });
        }
        self.gravity = gravity;
        Ok(self)
    }

    /// Adds a body. Mass properties come from [`BodyDesc::mass`] or, if absent, from
    /// the shapes' densities.
    pub fn add_body(&mut self, desc: BodyDesc) -> Result<BodyId, ModelError> {
        let name = desc.name.clone();
        let invalid = |source| ModelError::InvalidBody {
            body: name.clone(),
            source,
        };
        if self.body_names.contains(&desc.name) {
            return Err(ModelError::DuplicateBodyName { name: desc.name });
        }
        finite_pose(&desc.pose).map_err(invalid)?;
        axion_math::error::ensure_all_finite("body velocity", desc.velocity.iter())
            .map_err(invalid)?;
        if desc.kind == BodyKind::Frame && (desc.mass.is_some() || !desc.shapes.is_empty()) {
            return Err(ModelError::FrameWithMass { body: name });
        }
        for (index, s) in desc.shapes.iter().enumerate() {
            validate_shape(&desc, s).map_err(|reason| ModelError::InvalidShape {
                body: name.clone(),
                index,
                reason,
            })?;
        }
        let (mass, com) = match desc.kind {
            // Infinite until `build` gives the frame the inverses of the body it carries.
            BodyKind::Static | BodyKind::Frame => (MassProperties::infinite(), Vector3::zeros()),
            BodyKind::Dynamic => {
                let (m, com, inertia) = match desc.mass {
                    Some(spec) => {
                        axion_math::error::ensure_all_finite("centre of mass", spec.com.iter())
                            .map_err(invalid)?;
                        (spec.mass, spec.com, spec.inertia)
                    }
                    None => combined_mass(&desc.shapes)
                        .ok_or(ModelError::NoMass { body: name.clone() })?,
                };
                (MassProperties::new(m, inertia).map_err(invalid)?, com)
            }
        };
        let initial_pose = desc.pose * Translation3::from(com);
        self.body_names.insert(desc.name.clone());
        self.bodies.push(Body {
            name: desc.name,
            kind: desc.kind,
            mass,
            com,
            shapes: desc.shapes,
            initial_pose,
            initial_velocity: if desc.kind == BodyKind::Static {
                Twist::zeros()
            } else {
                desc.velocity
            },
        });
        Ok(BodyId(self.bodies.len() - 1))
    }

    /// Adds a joint (and its drive).
    pub fn add_joint(&mut self, desc: JointDesc) -> Result<JointId, ModelError> {
        let name = desc.name.clone();
        if self.joint_names.contains(&desc.name) {
            return Err(ModelError::DuplicateJointName { name: desc.name });
        }
        let count = self.bodies.len();
        let check = |id: BodyId| {
            if id.0 < count {
                Ok(&self.bodies[id.0])
            } else {
                Err(ModelError::UnknownBody {
                    joint: name.clone(),
                    index: id.0,
                    count,
                })
            }
        };
        let child = check(desc.child)?;
        let parent = desc.parent.map(check).transpose()?;
        if desc.parent == Some(desc.child) {
            return Err(ModelError::SelfJoint {
                joint: name,
                body: child.name.clone(),
            });
        }
        if !child.is_dynamic() {
            return Err(ModelError::StaticChild {
                joint: name,
                body: child.name.clone(),
            });
        }
        let data_problem = desc
            .limits
            .and_then(|l| l.problem())
            .or_else(|| desc.dynamics.and_then(|d| d.problem()));
        if let Some(problem) = data_problem {
            return Err(ModelError::InvalidJointData {
                joint: name,
                problem,
            });
        }
        let invalid = |source| ModelError::InvalidJoint {
            joint: name.clone(),
            source,
        };
        let axis = |v: Vector3<f64>| UnitAxis::normalize(v).map_err(|e| invalid(e.into()));
        let kind = match desc.kind {
            JointType::Revolute { axis: a } => JointKind::Revolute { axis: axis(a)? },
            JointType::Prismatic { axis: a } => JointKind::Prismatic { axis: axis(a)? },
            JointType::Ball => JointKind::Ball,
            JointType::Fixed => JointKind::Fixed,
            JointType::Free => JointKind::Free,
        };
        // Joint frames relative to each centre of mass.
        let parent_com = parent.map_or(Vector3::zeros(), |p| p.com);
        let frames = JointFrames::new(
            Translation3::from(-parent_com) * desc.parent_frame,
            Translation3::from(-child.com) * desc.child_frame,
        )
        .map_err(invalid)?;
        let mut joint = Joint::new(kind, frames, desc.compliance).map_err(invalid)?;
        if let Some(b) = desc.baumgarte {
            joint = joint.velocity_level(b).map_err(invalid)?;
        }
        let joint_id = JointId(self.joints.len());
        let coordinate = match kind {
            JointKind::Revolute { axis } => Some((CoordinateKind::Angle, axis)),
            JointKind::Prismatic { axis } => Some((CoordinateKind::Displacement, axis)),
            _ => None,
        };
        let drive = match desc.drive {
            None => None,
            Some(d) => {
                let Some((coordinate, axis)) = coordinate else {
                    return Err(ModelError::DriveOnUnsupportedJoint {
                        joint: name,
                        kind: desc.kind.name(),
                    });
                };
                let initial = match d {
                    DriveDesc::Position {
                        target,
                        target_velocity,
                        ke,
                        kd,
                    } => Drive::position(target, target_velocity, ke, kd),
                    DriveDesc::Velocity { target, ke } => Drive::velocity(target, ke),
                    DriveDesc::Force { force } => Drive::force(force),
                }
                .map_err(invalid)?;
                // An effort rating bounds the actuator the drive stands for.
                let initial = match desc.limits.map(|l| l.effort) {
                    Some(effort) if effort.is_finite() && effort > 0.0 => {
                        initial.with_max_force(effort).map_err(invalid)?
                    }
                    _ => initial,
                };
                self.drives.push(ModelDrive {
                    joint: joint_id,
                    coordinate,
                    axis,
                    initial,
                });
                Some(DriveId(self.drives.len() - 1))
            }
        };
        let dynamics = desc.dynamics.unwrap_or_default();
        let mut internal = |value: f64, drive: fn(f64) -> Result<Drive, _>| {
            Ok(match coordinate {
                Some((coordinate, axis)) if value > 0.0 => {
                    self.drives.push(ModelDrive {
                        joint: joint_id,
                        coordinate,
                        axis,
                        initial: drive(value).map_err(invalid)?,
                    });
                    Some(DriveId(self.drives.len() - 1))
                }
                _ => None,
            })
        };
        let damper = internal(dynamics.damping, |d| Drive::velocity(0.0, d))?;
        let armature = internal(dynamics.armature, Drive::armature)?;
        self.joint_names.insert(desc.name.clone());
        self.joints.push(ModelJoint {
            name: desc.name,
            parent: desc.parent,
            child: desc.child,
            joint,
            drive,
            damper,
            armature,
            first_row: self.joint_rows,
            limits: desc.limits,
            dynamics: desc.dynamics,
        });
        self.joint_rows += joint.row_count();
        Ok(joint_id)
    }

    /// Finishes the model: checks the massless frames ([`BodyKind::Frame`]) now that
    /// their joints are known (everything else was checked as it was added).
    pub fn build(mut self) -> Result<Model, ModelError> {
        let frame_ends = self.link_frames()?;
        let mut exclusions = self.exclusions;
        exclusions.groups.resize(self.bodies.len(), 0);
        exclusions.pairs.extend(
            self.joints
                .iter()
                .filter_map(|j| j.parent.map(|p| (p.0.min(j.child.0), p.0.max(j.child.0)))),
        );
        exclusions.pairs.extend(frame_ends);
        Ok(Model {
            id: NEXT_MODEL_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            bodies: self.bodies,
            joints: self.joints,
            drives: self.drives,
            gravity: self.gravity,
            joint_rows: self.joint_rows,
            exclusions,
        })
    }

    /// Checks the chains of massless frames: each frame is the child of one joint and
    /// the parent of one, and the joints of a chain, from the body (or world) above it
    /// to the body below, have independent motions in the initial pose (else the
    /// frames could move while both ends stand still, and with no mass nothing would
    /// say how). Gives each frame the inverses of the body below its chain
    /// ([`MassProperties::massless`]). Returns the pairs of dynamic bodies at the two
    /// ends of a chain: like a joint's two bodies they never collide. A static body
    /// at the top (the world of a planar root) still collides with the bottom, as
    /// MuJoCo lets a body collide with the world body it hangs from.
    fn link_frames(&mut self) -> Result<Vec<(usize, usize)>, ModelError> {
        let n = self.bodies.len();
        let is_frame = |bodies: &[Body], b: usize| bodies[b].kind == BodyKind::Frame;
        let mut up = vec![Vec::new(); n];
        let mut down = vec![Vec::new(); n];
        for (j, mj) in self.joints.iter().enumerate() {
            up[mj.child.0].push(j);
            if let Some(p) = mj.parent {
                down[p.0].push(j);
            }
        }
        for b in (0..n).filter(|&b| is_frame(&self.bodies, b)) {
            if up[b].len() != 1 || down[b].len() != 1 {
                return Err(ModelError::FrameJoints {
                    body: self.bodies[b].name.clone(),
                    parents: up[b].len(),
                    children: down[b].len(),
                });
            }
        }
        let mut ends = Vec::new();
        for top in 0..self.joints.len() {
            let first = &self.joints[top];
            if !is_frame(&self.bodies, first.child.0)
                || first.parent.is_some_and(|p| is_frame(&self.bodies, p.0))
            {
                continue;
            }
            let (mut chain, mut frames) = (vec![top], Vec::new());
            let mut b = first.child.0;
            while is_frame(&self.bodies, b) {
                frames.push(b);
                let next = down[b][0];
                chain.push(next);
                b = self.joints[next].child.0;
            }
            if !self.independent(&chain) {
                return Err(ModelError::DependentFrameJoints {
                    joints: chain.iter().map(|&j| self.joints[j].name.clone()).collect(),
                    frames: frames
                        .iter()
                        .map(|&f| self.bodies[f].name.clone())
                        .collect(),
                });
            }
            let carried = self.bodies[b].mass;
            for &f in &frames {
                self.bodies[f].mass = MassProperties::massless(&carried).map_err(|source| {
                    ModelError::InvalidBody {
                        body: self.bodies[f].name.clone(),
                        source,
                    }
                })?;
            }
            if let Some(p) = first.parent.filter(|p| self.bodies[p.0].is_dynamic()) {
                ends.push((p.0.min(b), p.0.max(b)));
            }
        }
        if let Some(f) =
            (0..n).find(|&b| is_frame(&self.bodies, b) && self.bodies[b].mass.mass() != 0.0)
        {
            // Every frame has one parent joint, so one not reached from above lies on a
            // loop of frames: nothing with mass fixes their motion.
            return Err(ModelError::DependentFrameJoints {
                joints: up[f].iter().map(|&j| self.joints[j].name.clone()).collect(),
                frames: vec![self.bodies[f].name.clone()],
            });
        }
        Ok(ends)
    }

    /// Whether the motions the joints `chain` allow are linearly independent in the
    /// initial pose: the unit twists (angular, linear at the first joint's anchor) of
    /// a revolute joint $(a,\ p \times a)$, a prismatic one $(0,\ a)$, a ball's three
    /// rotations and a free joint's six, as columns of $S$, have
    /// $\sigma_{\min}(S) > 10^{-9}\,\sigma_{\max}(S)$.
    fn independent(&self, chain: &[usize]) -> bool {
        let world_frame = |j: &ModelJoint| {
            let parent = j
                .parent
                .map_or(Pose::identity(), |p| self.bodies[p.0].initial_pose);
            parent * j.joint.frames.parent
        };
        let origin = world_frame(&self.joints[chain[0]]).translation.vector;
        let mut columns: Vec<nalgebra::Vector6<f64>> = Vec::new();
        for &j in chain {
            let frame = world_frame(&self.joints[j]);
            let p = frame.translation.vector - origin;
            let rotation = |a: Vector3<f64>| {
                let mut c = nalgebra::Vector6::zeros();
                c.fixed_rows_mut::<3>(0).copy_from(&a);
                c.fixed_rows_mut::<3>(3).copy_from(&p.cross(&a));
                c
            };
            let slide = |a: Vector3<f64>| {
                let mut c = nalgebra::Vector6::zeros();
                c.fixed_rows_mut::<3>(3).copy_from(&a);
                c
            };
            match self.joints[j].joint.kind {
                JointKind::Revolute { axis } => {
                    columns.push(rotation(frame.rotation * axis.vector()))
                }
                JointKind::Prismatic { axis } => {
                    columns.push(slide(frame.rotation * axis.vector()))
                }
                JointKind::Ball => {
                    columns.extend([Vector3::x(), Vector3::y(), Vector3::z()].map(rotation))
                }
                JointKind::Free => {
                    columns.extend([Vector3::x(), Vector3::y(), Vector3::z()].map(rotation));
                    columns.extend([Vector3::x(), Vector3::y(), Vector3::z()].map(slide));
                }
                JointKind::Fixed => {}
            }
        }
        if columns.len() > 6 {
            return false;
        }
        let s = nalgebra::Matrix6xX::from_columns(&columns).singular_values();
        let (lo, hi) = (s.min(), s.max());
        hi > 0.0 && lo > 1e-9 * hi
    }
}
