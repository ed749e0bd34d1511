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
    /// Of those, the chord steps: solves with factors kept from an earlier iteration
    /// (no assembly or factorization; the CPU backend's `SolverSettings::reuse_factors`).
    /// `iterations - chord_steps` systems were factorized. 0 on the GPU.
    pub chord_steps: usize,
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
    /// The sub-steps the step was solved as: 1 for a step solved whole; more where the
    /// CPU backend solved a step that did not converge again as shorter steps
    /// (`SolverSettings::split_depth`, at most [`MAX_SPLIT_DEPTH`] halvings).
    pub substeps: usize,
    /// Whether the step's result was solved with the CPU backend's larger creep of
    /// sticking friction (`SolverSettings::fallback_creep`, in some sub-step of a split
    /// step): its sticking contacts slip at up to that creep times the velocity change
    /// their friction forces cause in a step, instead of `friction_creep` times it. A
    /// second attempt at a step whose first did not converge, and the steps of a world
    /// that follow one so solved (docs/step.md, "A step solved again"). Always `false`
    /// on the GPU, whose second attempt (`GpuSettings::fallback_creep`) is not reported.
    pub fallback_creep: bool,
}

/// The most times a step is halved into shorter steps (the CPU's
/// `SolverSettings::split_depth` acts as this above it, a scene file's `split_depth` is
/// refused above it): $2^{16}$ sub-steps at most.
pub const MAX_SPLIT_DEPTH: usize = 16;

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

/// What the steps of a run did, summed over its steps and worlds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunTotals {
    /// Steps taken (each steps every world).
    pub steps: usize,
    /// Steps in which every world converged.
    pub converged_steps: usize,
    /// World-steps that converged.
    pub converged_world_steps: usize,
    /// Newton iterations summed over the world-steps.
    pub iterations: usize,
    /// Steps times worlds.
    pub world_steps: usize,
    /// Largest Newton iteration count of any world-step.
    pub max_iterations: usize,
    /// World-steps solved with the CPU backend's larger creep of sticking friction
    /// ([`StepStats::fallback_creep`]; 0 on the GPU).
    pub fallback_creep_world_steps: usize,
}

impl RunTotals {
    /// Counts one step.
    pub fn add(&mut self, report: &StepReport) {
        self.steps += 1;
        self.converged_steps += usize::from(report.all_converged());
        self.converged_world_steps += report.worlds.iter().filter(|s| s.converged).count();
        self.iterations += report.worlds.iter().map(|s| s.iterations).sum::<usize>();
        self.world_steps += report.worlds.len();
        self.max_iterations = self.max_iterations.max(report.max_iterations());
        self.fallback_creep_world_steps +=
            report.worlds.iter().filter(|s| s.fallback_creep).count();
    }
    /// Adds the totals of a later part of the run.
    pub fn merge(&mut self, later: &RunTotals) {
        self.steps += later.steps;
        self.converged_steps += later.converged_steps;
        self.converged_world_steps += later.converged_world_steps;
        self.iterations += later.iterations;
        self.world_steps += later.world_steps;
        self.max_iterations = self.max_iterations.max(later.max_iterations);
        self.fallback_creep_world_steps += later.fallback_creep_world_steps;
    }
    /// Mean Newton iterations per world-step (0 before any step).
    pub fn mean_iterations(&self) -> f64 {
        self.iterations as f64 / self.world_steps.max(1) as f64
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

    /// Advances every world by `steps` steps of `h` seconds, adding each step to
    /// `totals`, and returns the last step's report (an empty one for no steps). Stops
    /// early, still `Ok`, after a step that leaves a pose or velocity non-finite
    /// ([`State::first_non_finite`]); `totals.steps` says how many were taken.
    ///
    /// The default steps one at a time; a backend that keeps the state elsewhere (the
    /// GPU's) runs the steps there and returns the state once, at the end. Its
    /// results equal those of `steps` calls of [`Backend::step`], bit for bit.
    fn run(
        &mut self,
        model: &Model,
        state: &mut State,
        control: &Control,
        h: f64,
        steps: usize,
        totals: &mut RunTotals,
    ) -> Result<StepReport, StepError> {
        let mut last = StepReport::default();
        for _ in 0..steps {
            last = self.step(model, state, control, h)?;
            totals.add(&last);
            if state.first_non_finite().is_some() {
                break;
            }
        }
        Ok(last)
    }

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
    if let Some((world, body)) = state.first_non_finite() {
        return Err(StepError::NonFiniteInput {
            what: "state",
            world,
            index: body.0,
        });
    }
    for w in 0..state.worlds() {
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
