//! # axion-cpu
//!
//! The reference backend of axion-rs: every world's step is one implicit non-smooth
//! system solved by Newton's method in f64, with the Newton matrix factorized by
//! faer's sparse LU (symbolic analysis reused while the model's structure is unchanged).
//! See [`newton`] for the equations and `docs/step.md` for the design.

pub mod newton;
pub mod settings;
pub mod sparse;

use axion_model::{Backend, Control, Model, State, StepError, StepReport};

pub use settings::{Integrator, SolverSettings};

use newton::{Layout, StepInput, WorldSolver};
use sparse::SparseLu;

/// Factorizations cached for one model structure.
struct Cache {
    layout: Layout,
    newton: SparseLu,
    projection: Option<SparseLu>,
}

/// The CPU reference backend.
pub struct CpuBackend {
    settings: SolverSettings,
    cache: Option<Cache>,
}

impl CpuBackend {
    /// A backend with the given settings.
    pub fn new(settings: SolverSettings) -> Self {
        Self {
            settings,
            cache: None,
        }
    }

    /// The settings.
    pub fn settings(&self) -> &SolverSettings {
        &self.settings
    }
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new(SolverSettings::default())
    }
}

/// Checks that state and control belong to the model and are finite.
fn validate(model: &Model, state: &State, control: &Control, h: f64) -> Result<(), StepError> {
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

impl Backend for CpuBackend {
    fn name(&self) -> String {
        "cpu (f64, Newton with faer sparse LU)".to_string()
    }

    fn step(
        &mut self,
        model: &Model,
        state: &mut State,
        control: &Control,
        h: f64,
    ) -> Result<StepReport, StepError> {
        validate(model, state, control, h)?;
        let layout = Layout::new(model);
        let stale = self.cache.as_ref().is_none_or(|c| c.layout != layout);
        let mut report = StepReport::default();
        for w in 0..state.worlds() {
            let q0 = state.world_poses(w).to_vec();
            let u0 = state.world_velocities(w).to_vec();
            let mut warm = state.joint_forces(w).to_vec();
            warm.extend_from_slice(state.drive_forces(w));
            let input = StepInput {
                model,
                layout: &layout,
                settings: &self.settings,
                h,
                q0: &q0,
                u0: &u0,
                control,
                world: w,
            };
            let mut solver = WorldSolver::new(input);
            if stale && w == 0 {
                let n = layout.unknowns();
                let newton = SparseLu::new(n, &solver.pattern());
                let projection =
                    (self.settings.integrator == Integrator::EnergyMomentum).then(|| {
                        SparseLu::new(
                            6 * layout.dyn_bodies.len() + layout.joint_rows,
                            &solver.projection_pattern(),
                        )
                    });
                self.cache = Some(Cache {
                    layout: layout.clone(),
                    newton,
                    projection,
                });
            }
            let cache = self.cache.as_mut().expect("cache built above");
            let result = solver.solve(&warm, &mut cache.newton, cache.projection.as_mut());
            let world = state.world_mut(w);
            world.poses.copy_from_slice(&result.poses);
            world.velocities.copy_from_slice(&result.velocities);
            let jr = layout.joint_rows;
            world.joint_forces.copy_from_slice(&result.lambda[..jr]);
            world.drive_forces.copy_from_slice(&result.lambda[jr..]);
            report.worlds.push(result.stats);
        }
        state.advance_time(h);
        Ok(report)
    }
}
