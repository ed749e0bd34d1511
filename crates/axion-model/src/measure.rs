//! Physical measures of a state: energy, joint errors and joint coordinates.

use axion_constraints::drive::CoordinateKind;
use axion_math::{Pose, Twist};

use crate::model::Model;
use crate::state::State;

/// Energy of one world (J).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Energy {
    /// $\sum \tfrac12 u^\top\tilde M u$.
    pub kinetic: f64,
    /// $\sum -m\thinspace g\cdot x$ (zero at the world origin).
    pub potential: f64,
}

impl Energy {
    /// Kinetic plus potential.
    pub fn total(&self) -> f64 {
        self.kinetic + self.potential
    }

    /// The size a change of energy between `self` and `other` is judged by: the larger
    /// of $K + |V|$ at either of them and `exchange` (see [`exchange_scale`]).
    /// $K + |V|$ alone depends on where height 0 is: a model lying still at height 0
    /// has about none, and rounding would read as a rise of 100 %.
    pub fn scale(&self, other: &Energy, exchange: f64) -> f64 {
        (self.kinetic + self.potential.abs())
            .max(other.kinetic + other.potential.abs())
            .max(exchange)
    }
}

/// $m\,|g|\,L$: the potential energy a model's own motion can exchange, with $m$ its
/// total mass and $L$ the largest distance between two of its moving bodies' initial
/// centres of mass (0 for a single body). Floors [`Energy::scale`].
pub fn exchange_scale(model: &Model) -> f64 {
    let moving: Vec<_> = model.bodies().iter().filter(|b| b.is_dynamic()).collect();
    let mass: f64 = moving.iter().map(|b| b.mass.mass()).sum();
    let mut size: f64 = 0.0;
    for (i, a) in moving.iter().enumerate() {
        for b in &moving[i + 1..] {
            size = size.max(
                (a.initial_pose.translation.vector - b.initial_pose.translation.vector).norm(),
            );
        }
    }
    mass * model.gravity().norm() * size
}

/// Kinetic and gravitational energy of the dynamic bodies of one world.
pub fn energy(model: &Model, state: &State, world: usize) -> Energy {
    energy_with_masses(model, state, world, &[])
}

/// [`energy`] with some bodies' masses changed (`masses[b]`: body `b`'s mass, `None`
/// or absent: the model's), inertia scaled with the mass as
/// [`Model::with_masses`] does: each body's energies scale by $m'/m$.
pub fn energy_with_masses(
    model: &Model,
    state: &State,
    world: usize,
    masses: &[Option<f64>],
) -> Energy {
    let g = model.gravity();
    let mut e = Energy {
        kinetic: 0.0,
        potential: 0.0,
    };
    for (b, ((body, pose), u)) in model
        .bodies()
        .iter()
        .zip(state.world_poses(world))
        .zip(state.world_velocities(world))
        .enumerate()
    {
        if body.is_dynamic() {
            let m = body.mass.mass();
            let k = masses.get(b).copied().flatten().map_or(1.0, |mb| mb / m);
            e.kinetic += k * body.mass.kinetic_energy(&pose.rotation, u);
            e.potential -= k * m * g.dot(&pose.translation.vector);
        }
    }
    e
}

/// Largest joint errors of one world, split by unit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointErrors {
    /// Anchor separation (m): point and slide locks.
    pub position: f64,
    /// Misalignment (rad, small-angle measure): angle locks and axis alignments.
    pub orientation: f64,
}

/// Joint errors $|c(q)|$ of one world.
pub fn joint_errors(model: &Model, state: &State, world: usize) -> JointErrors {
    let poses = state.world_poses(world);
    let pose_of = |b: Option<crate::BodyId>| b.map_or(Pose::identity(), |b| poses[b.0]);
    let mut errors = JointErrors::default();
    let mut rows = Vec::with_capacity(6);
    for j in model.joints() {
        rows.clear();
        j.joint
            .position_rows(&pose_of(j.parent), &pose_of(Some(j.child)), &mut rows);
        for (i, r) in rows.iter().enumerate() {
            let slot = if j.joint.row_is_positional(i) {
                &mut errors.position
            } else {
                &mut errors.orientation
            };
            *slot = slot.max(r.error.abs());
        }
    }
    errors
}

/// Position and rate of a joint's coordinate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointMotion {
    /// Angle (rad) of a revolute joint, displacement (m) of a prismatic one; 0 where
    /// the joint frames coincide.
    pub position: f64,
    /// Its rate (rad/s or m/s).
    pub velocity: f64,
}

/// The coordinate of joint `joint` of one world and its rate, $\dot q = J\,u$ with the
/// coordinate's Jacobian; `None` for a joint without a single coordinate (fixed,
/// ball, free). An angle lies in $[-\pi, \pi)$, or, for a joint whose enforced range
/// crosses $\pm\pi$, within a turn around the middle of the range (as the range
/// measures it), so it does not jump where the joint moves.
pub fn joint_motion(
    model: &Model,
    state: &State,
    world: usize,
    joint: crate::JointId,
) -> Option<JointMotion> {
    let mj = &model.joints()[joint.0];
    let (kind, axis) = mj.coordinate()?;
    let poses = state.world_poses(world);
    let velocities = state.world_velocities(world);
    let u_parent = mj.parent.map_or(Twist::zeros(), |p| velocities[p.0]);
    let c = mj.coordinate_at(kind, &axis, poses);
    let position = match mj.range() {
        Some(range) => range.relative(c.value) + range.reference(),
        None => match kind {
            CoordinateKind::Angle => axion_math::wrap_angle(c.value),
            CoordinateKind::Displacement => c.value,
        },
    };
    Some(JointMotion {
        position,
        velocity: c.jacobian.dot(&u_parent, &velocities[mj.child.0]),
    })
}
