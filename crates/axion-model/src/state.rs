//! State and control of a batch of identical worlds.

use axion_constraints::ConstraintError;
use axion_constraints::drive::{Drive, DriveMode};
use axion_math::{Pose, Twist, Wrench, pose_coords, twist};
use nalgebra::Vector3;

use crate::desc::{BodyId, BodyKind, DriveId};
use crate::error::{ControlError, ModelError};
use crate::model::Model;

/// Positions, velocities and constraint forces of `worlds` copies of a model.
///
/// Body poses are stored for the centre of mass (what the solver integrates); use
/// [`State::body_pose`] for the reference frame a user placed the body with.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    worlds: usize,
    bodies: usize,
    rows: usize,
    poses: Vec<Pose>,
    velocities: Vec<Twist>,
    joint_forces: Vec<f64>,
    drive_forces: Vec<f64>,
    time: f64,
}

/// Most bodies a [`State`] holds over all its worlds (2²⁴, about 1.7 GB of poses,
/// velocities and their copies): 131 072 worlds of a 100-body robot.
pub const MAX_BODY_STATES: usize = 1 << 24;

impl State {
    /// The model's initial state in each of `worlds` worlds; at most
    /// [`MAX_BODY_STATES`] bodies over all worlds.
    pub fn new(model: &Model, worlds: usize) -> Result<Self, ModelError> {
        if worlds == 0 {
            return Err(ModelError::NoWorlds);
        }
        let b = model.bodies();
        if worlds.saturating_mul(b.len().max(1)) > MAX_BODY_STATES {
            return Err(ModelError::TooManyWorlds {
                worlds,
                bodies: b.len(),
            });
        }
        Ok(Self {
            worlds,
            bodies: b.len(),
            rows: model.joint_row_count(),
            poses: (0..worlds)
                .flat_map(|_| b.iter().map(|b| b.initial_pose))
                .collect(),
            velocities: (0..worlds)
                .flat_map(|_| b.iter().map(|b| b.initial_velocity))
                .collect(),
            joint_forces: vec![0.0; worlds * model.joint_row_count()],
            drive_forces: vec![0.0; worlds * model.drives().len()],
            time: 0.0,
        })
    }

    /// Number of worlds.
    pub fn worlds(&self) -> usize {
        self.worlds
    }
    /// Number of bodies per world.
    pub fn body_count(&self) -> usize {
        self.bodies
    }
    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.time
    }
    /// Advances the clock (backends call this after a step).
    pub fn advance_time(&mut self, h: f64) {
        self.time += h;
    }
    /// Sets the clock (a backend that kept the state elsewhere, with its clock).
    pub fn set_time(&mut self, time: f64) {
        self.time = time;
    }

    fn index(&self, world: usize, body: BodyId) -> usize {
        assert!(
            world < self.worlds && body.0 < self.bodies,
            "world {world} / body {} out of range",
            body.0
        );
        world * self.bodies + body.0
    }

    /// Centre-of-mass pose.
    pub fn com_pose(&self, world: usize, body: BodyId) -> Pose {
        self.poses[self.index(world, body)]
    }
    /// Reference-frame pose (the frame the body was placed with).
    pub fn body_pose(&self, model: &Model, world: usize, body: BodyId) -> Pose {
        model.bodies()[body.0].reference_pose(&self.com_pose(world, body))
    }
    /// Velocity of the centre of mass and angular velocity (world frame).
    pub fn velocity(&self, world: usize, body: BodyId) -> Twist {
        self.velocities[self.index(world, body)]
    }
    /// Sets the reference-frame pose of a body.
    pub fn set_body_pose(&mut self, model: &Model, world: usize, body: BodyId, pose: Pose) {
        let i = self.index(world, body);
        self.poses[i] = model.bodies()[body.0].com_pose(&pose);
    }
    /// Sets the velocity of a body.
    pub fn set_velocity(&mut self, world: usize, body: BodyId, velocity: Twist) {
        let i = self.index(world, body);
        self.velocities[i] = velocity;
    }

    /// All COM poses of one world.
    pub fn world_poses(&self, world: usize) -> &[Pose] {
        &self.poses[world * self.bodies..(world + 1) * self.bodies]
    }
    /// All velocities of one world.
    pub fn world_velocities(&self, world: usize) -> &[Twist] {
        &self.velocities[world * self.bodies..(world + 1) * self.bodies]
    }
    /// Joint row forces λ of one world (N or N·m; in the model's row order).
    pub fn joint_forces(&self, world: usize) -> &[f64] {
        &self.joint_forces[world * self.rows..(world + 1) * self.rows]
    }
    /// Drive forces of one world (N or N·m).
    pub fn drive_forces(&self, world: usize) -> &[f64] {
        let n = self.drive_forces.len() / self.worlds;
        &self.drive_forces[world * n..(world + 1) * n]
    }

    /// The first body (world, body) whose pose or velocity has a non-finite number.
    pub fn first_non_finite(&self) -> Option<(usize, BodyId)> {
        let finite =
            |(q, u): (&Pose, &Twist)| pose_coords(q).iter().chain(u.iter()).all(|x| x.is_finite());
        let i = self
            .poses
            .iter()
            .zip(&self.velocities)
            .position(|pair| !finite(pair))?;
        Some((i / self.bodies, BodyId(i % self.bodies)))
    }

    /// Mutable views of one world's poses, velocities, joint and drive forces.
    pub fn world_mut(&mut self, world: usize) -> WorldMut<'_> {
        let (b, r) = (self.bodies, self.rows);
        let d = self.drive_forces.len() / self.worlds;
        WorldMut {
            poses: &mut self.poses[world * b..(world + 1) * b],
            velocities: &mut self.velocities[world * b..(world + 1) * b],
            joint_forces: &mut self.joint_forces[world * r..(world + 1) * r],
            drive_forces: &mut self.drive_forces[world * d..(world + 1) * d],
        }
    }
}

/// A drive mode's name in errors and outputs.
pub fn mode_name(mode: DriveMode) -> &'static str {
    match mode {
        DriveMode::Position { .. } => "position",
        DriveMode::Velocity { .. } => "velocity",
        DriveMode::Force => "force",
        DriveMode::Armature => "armature",
    }
}

/// One world's mutable state, for backends.
pub struct WorldMut<'a> {
    /// COM poses.
    pub poses: &'a mut [Pose],
    /// Velocities.
    pub velocities: &'a mut [Twist],
    /// Joint row forces.
    pub joint_forces: &'a mut [f64],
    /// Drive forces.
    pub drive_forces: &'a mut [f64],
}

/// Inputs of each world for the next steps: drive targets, external wrenches, and the
/// physical parameters a batch varies across its worlds (friction, body masses).
#[derive(Clone, Debug, PartialEq)]
pub struct Control {
    worlds: usize,
    drives: Vec<Drive>,
    wrenches: Vec<Wrench>,
    bodies: usize,
    /// Each body's kind (only dynamic bodies have a mass to vary).
    kinds: Vec<BodyKind>,
    /// Per world: the friction coefficient of every contact, if varied.
    friction: Vec<Option<f64>>,
    /// Per world and body: the body's mass, if varied.
    masses: Vec<Option<f64>>,
}

impl Control {
    /// The model's initial drive targets, no external force and the model's own
    /// parameters, in each world.
    pub fn new(model: &Model, worlds: usize) -> Self {
        let d: Vec<Drive> = model.drives().iter().map(|d| d.initial).collect();
        let bodies = model.bodies().len();
        Self {
            worlds,
            drives: (0..worlds).flat_map(|_| d.iter().copied()).collect(),
            wrenches: vec![Wrench::zeros(); worlds * bodies],
            bodies,
            kinds: model.bodies().iter().map(|b| b.kind).collect(),
            friction: vec![None; worlds],
            masses: vec![None; worlds * bodies],
        }
    }

    /// Number of worlds.
    pub fn worlds(&self) -> usize {
        self.worlds
    }

    fn check(what: &'static str, index: usize, count: usize) -> Result<(), ControlError> {
        if index < count {
            Ok(())
        } else {
            Err(ControlError::OutOfRange { what, index, count })
        }
    }

    fn drive_index(&self, world: usize, drive: DriveId) -> Result<usize, ControlError> {
        let n = self.drives.len() / self.worlds.max(1);
        Self::check("world", world, self.worlds)?;
        Self::check("drive", drive.0, n)?;
        Ok(world * n + drive.0)
    }

    /// The drive (mode, targets, gains) of one world. Panics if the world or drive
    /// does not exist.
    pub fn drive(&self, world: usize, drive: DriveId) -> Drive {
        let i = self.drive_index(world, drive);
        self.drives[i.unwrap_or_else(|e| panic!("{e}"))]
    }

    /// All drives of one world.
    pub fn world_drives(&self, world: usize) -> &[Drive] {
        let n = self.drives.len() / self.worlds;
        &self.drives[world * n..(world + 1) * n]
    }

    /// Sets a position drive's target $q^\ast$ and feed-forward velocity $\dot q^\ast$
    /// (usually 0), keeping its gains. Errors: the drive is a velocity drive, a
    /// non-finite value, an index out of range.
    pub fn set_position_target(
        &mut self,
        world: usize,
        drive: DriveId,
        position: f64,
        velocity: f64,
    ) -> Result<(), ControlError> {
        let i = self.drive_index(world, drive)?;
        let d = self.drives[i];
        self.drives[i] = match d.mode() {
            DriveMode::Position { .. } => Drive::position(position, velocity, d.ke(), d.kd())?
                .with_max_force(d.max_force())?
                .with_feedforward(d.feedforward())?,
            other => {
                return Err(ControlError::WrongDriveMode {
                    drive: drive.0,
                    mode: mode_name(other),
                });
            }
        };
        Ok(())
    }

    /// Sets a velocity drive's target $\dot q^\ast$, keeping its gain. Errors: the drive
    /// is a position drive, a non-finite value, an index out of range.
    pub fn set_velocity_target(
        &mut self,
        world: usize,
        drive: DriveId,
        velocity: f64,
    ) -> Result<(), ControlError> {
        let i = self.drive_index(world, drive)?;
        let d = self.drives[i];
        self.drives[i] = match d.mode() {
            DriveMode::Velocity { .. } => Drive::velocity(velocity, d.ke())?
                .with_max_force(d.max_force())?
                .with_feedforward(d.feedforward())?,
            other => {
                return Err(ControlError::WrongDriveMode {
                    drive: drive.0,
                    mode: mode_name(other),
                });
            }
        };
        Ok(())
    }

    /// Sets a drive's force $\tau$ (N·m or N): the whole force of a force drive (an
    /// actuator commanded in torque, MuJoCo's `motor`), the feed-forward force added to
    /// the law of a position or velocity drive. The drive's largest force still bounds
    /// the total. Errors: a non-finite value, an index out of range.
    pub fn set_drive_force(
        &mut self,
        world: usize,
        drive: DriveId,
        force: f64,
    ) -> Result<(), ControlError> {
        let i = self.drive_index(world, drive)?;
        self.drives[i] = self.drives[i].with_feedforward(force)?;
        Ok(())
    }

    /// Replaces a drive (mode, targets and gains).
    pub fn set_drive(
        &mut self,
        world: usize,
        drive: DriveId,
        value: Drive,
    ) -> Result<(), ControlError> {
        let i = self.drive_index(world, drive)?;
        self.drives[i] = value;
        Ok(())
    }

    /// External force and torque at a body's centre of mass (world frame), applied
    /// during every following step until changed. Panics if the world or body does
    /// not exist.
    pub fn set_wrench(
        &mut self,
        world: usize,
        body: BodyId,
        force: Vector3<f64>,
        torque: Vector3<f64>,
    ) {
        assert!(
            world < self.worlds && body.0 < self.bodies,
            "world {world} / body {} out of range",
            body.0
        );
        self.wrenches[world * self.bodies + body.0] = twist(force, torque);
    }

    /// External wrenches of one world, per body.
    pub fn world_wrenches(&self, world: usize) -> &[Wrench] {
        &self.wrenches[world * self.bodies..(world + 1) * self.bodies]
    }

    /// Gives every contact of `world` the Coulomb coefficient `mu` in place of the one
    /// its materials combine to (an anisotropic contact keeps its ratio across the
    /// axis, see [`FrictionCone::with_coefficient`](axion_constraints::friction::FrictionCone::with_coefficient));
    /// `None` returns to the materials'. Errors: `mu` negative or not finite.
    pub fn set_friction(&mut self, world: usize, mu: Option<f64>) -> Result<(), ControlError> {
        Self::check("world", world, self.worlds)?;
        if let Some(mu) = mu {
            axion_constraints::friction::FrictionCone::isotropic(mu)?;
        }
        self.friction[world] = mu;
        Ok(())
    }

    /// The friction coefficient given to every contact of `world`, if varied.
    pub fn friction(&self, world: usize) -> Option<f64> {
        self.friction[world]
    }

    /// Gives a dynamic body of `world` the mass `mass` (kg), its inertia scaled by the
    /// same factor (the same shape, uniformly denser or lighter); `None` returns to
    /// the model's. Errors: a static body or massless frame, a mass that is not
    /// positive and finite.
    pub fn set_body_mass(
        &mut self,
        world: usize,
        body: BodyId,
        mass: Option<f64>,
    ) -> Result<(), ControlError> {
        Self::check("world", world, self.worlds)?;
        Self::check("body", body.0, self.bodies)?;
        match self.kinds[body.0] {
            BodyKind::Dynamic => {}
            BodyKind::Static => return Err(ControlError::StaticBody { body: body.0 }),
            BodyKind::Frame => return Err(ControlError::FrameBody { body: body.0 }),
        }
        if let Some(m) = mass {
            axion_math::error::ensure_finite("mass", m).map_err(ConstraintError::from)?;
            if m <= 0.0 {
                return Err(ConstraintError::NotPositive {
                    what: "mass",
                    value: m,
                }
                .into());
            }
        }
        self.masses[world * self.bodies + body.0] = mass;
        Ok(())
    }

    /// The varied masses of one world, per body (`None`: the model's).
    pub fn world_masses(&self, world: usize) -> &[Option<f64>] {
        &self.masses[world * self.bodies..(world + 1) * self.bodies]
    }

    /// Whether any world has a varied friction or mass (backends that cannot vary
    /// them refuse to step).
    pub fn has_parameters(&self) -> bool {
        self.friction.iter().any(Option::is_some) || self.masses.iter().any(Option::is_some)
    }
}
