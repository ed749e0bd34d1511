//! The interface every backend (CPU reference, GPU) implements.

use nalgebra::Vector3;

use crate::error::StepError;
use crate::model::Model;
use crate::state::{Control, State};

/// Statistics of one world's step. Residuals are in physical units and measured at
/// the iterate the step returned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepStats {
    /// Newton iterations (linear solves) taken.
    pub iterations: usize,
    /// Whether every residual block met its tolerance.
    pub converged: bool,
    /// Dynamics: $\lVert\tilde M^{-1} h_{dyn}\rVert_\infty$ (m/s; angular parts times the
    /// body's radius of gyration).
    pub dynamics: f64,
    /// Joints: largest $|c(q^+) + \varepsilon\lambda|$ (m or rad).
    pub joints: f64,
    /// Drives: largest drive residual (m/s or rad/s).
    pub drives: f64,
    /// Contacts and joint limits: largest normal residual $|\phi|/h$ (m/s or rad/s).
    pub contacts: f64,
    /// Friction: largest projection residual $|h_f|/\rho$ (m/s).
    pub friction: f64,
    /// Contacts in the step (found within the speculative margin).
    pub contact_count: usize,
    /// Line-search step halvings summed over the iterations.
    pub backtracks: usize,
    /// Linear solves that failed (singular matrix or non-finite result).
    pub failed_solves: usize,
}

/// One step of every world.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Per-world statistics.
    pub worlds: Vec<StepStats>,
}

impl StepReport {
    /// Whether every world converged.
    pub fn all_converged(&self) -> bool {
        self.worlds.iter().all(|s| s.converged)
    }
    /// Largest iteration count over the worlds.
    pub fn max_iterations(&self) -> usize {
        self.worlds.iter().map(|s| s.iterations).max().unwrap_or(0)
    }
}

/// A contact of the last step and the force it carried.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactForce {
    /// The body on the normal's side (the normal points from `body_b` into it).
    pub body_a: crate::BodyId,
    /// The other body.
    pub body_b: crate::BodyId,
    /// The contact point (m, world): midway between the two surfaces' points, as the
    /// bodies are at the end of the step.
    pub point: Vector3<f64>,
    /// Unit normal (world), from `body_b` towards `body_a`.
    pub normal: Vector3<f64>,
    /// Gap between the surfaces when the step began (m; negative: penetration).
    pub gap: f64,
    /// Normal force on `body_a` along `normal` (N, ≥ 0); `body_b` gets the opposite.
    pub normal_force: f64,
    /// Friction force on `body_a` (N, world, perpendicular to the normal); `body_b`
    /// gets the opposite.
    pub friction_force: Vector3<f64>,
}

impl ContactForce {
    /// The whole force on `body_a` (N, world): $f = \lambda_n n + f_t$.
    pub fn force_on_a(&self) -> Vector3<f64> {
        self.normal * self.normal_force + self.friction_force
    }
}

/// A simulation backend: steps every world of a batch.
pub trait Backend: Send {
    /// Human-readable name, including the device where it matters.
    fn name(&self) -> String;

    /// Advances every world of `state` by `h` seconds under `control`.
    ///
    /// A step that does not converge still returns `Ok` with the best iterate found and
    /// `converged == false` in its statistics; `Err` means the step could not be taken
    /// (bad inputs) and leaves `state` unchanged.
    fn step(
        &mut self,
        model: &Model,
        state: &mut State,
        control: &Control,
        h: f64,
    ) -> Result<StepReport, StepError>;

    /// The contacts of world `world` in the last step with their forces, if this
    /// backend keeps them and `state`'s world is still where that step left it
    /// (`None` otherwise: before the first step, after the state was set or reset).
    fn contacts(&self, state: &State, world: usize) -> Option<Vec<ContactForce>> {
        let _ = (state, world);
        None
    }
}

/// Checks what every backend needs before a step: a positive finite `h`, a state and
/// control shaped for `model`, finite poses, velocities and wrenches.
pub fn validate_step(
    model: &Model,
    state: &State,
    control: &Control,
    h: f64,
) -> Result<(), StepError> {
    if !(h.is_finite() && h > 0.0) {
        return Err(StepError::InvalidTimeStep { h });
    }
    let bodies = model.bodies().len();
    let mismatch = |what, expected, got| {
        if expected == got {
            Ok(())
        } else {
            Err(StepError::Mismatch {
                what,
                expected,
                got,
            })
        }
    };
    mismatch("state bodies per world", bodies, state.body_count())?;
    mismatch("control worlds", state.worlds(), control.worlds())?;
    mismatch(
        "control drives per world",
        model.drives().len(),
        control.world_drives(0).len(),
    )?;
    for w in 0..state.worlds() {
        for (i, (q, u)) in state
            .world_poses(w)
            .iter()
            .zip(state.world_velocities(w))
            .enumerate()
        {
            let finite = axion_math::pose_coords(q)
                .iter()
                .chain(u.iter())
                .all(|x| x.is_finite());
            if !finite {
                return Err(StepError::NonFiniteInput {
                    what: "state",
                    world: w,
                    index: i,
                });
            }
        }
        if let Some(i) = control
            .world_wrenches(w)
            .iter()
            .position(|f| !f.iter().all(|x| x.is_finite()))
        {
            return Err(StepError::NonFiniteInput {
                what: "external wrench",
                world: w,
                index: i,
            });
        }
    }
    Ok(())
}
