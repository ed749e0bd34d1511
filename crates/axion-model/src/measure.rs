//! Physical measures of a state: energy and joint errors.

use axion_math::Pose;

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
}

/// Kinetic and gravitational energy of the dynamic bodies of one world.
pub fn energy(model: &Model, state: &State, world: usize) -> Energy {
    let g = model.gravity();
    let mut e = Energy {
        kinetic: 0.0,
        potential: 0.0,
    };
    for ((body, pose), u) in model
        .bodies()
        .iter()
        .zip(state.world_poses(world))
        .zip(state.world_velocities(world))
    {
        if body.is_dynamic() {
            e.kinetic += body.mass.kinetic_energy(&pose.rotation, u);
            e.potential -= body.mass.mass() * g.dot(&pose.translation.vector);
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
