//! # axion
//!
//! The front door of axion-rs: build a [`Model`], wrap it in a [`Simulator`] with a
//! time step, a number of worlds and a backend, then [`step`](Simulator::step) or
//! [`run`](Simulator::run) it and read the [`State`] and per-step [`StepStats`].
//!
//! ```
//! use axion::prelude::*;
//! use nalgebra::{Isometry3, Vector3};
//!
//! // A 1 kg ball on a massless 1 m rod, hinged to the world at the origin, released horizontal.
//! let mut b = ModelBuilder::new();
//! let ball = b.add_body(BodyDesc::dynamic("ball").at(Vector3::new(1.0, 0.0, 0.0))
//!     .mass(1.0, Vector3::zeros(), nalgebra::Matrix3::identity() * 1e-4))?;
//! b.add_joint(JointDesc::new("hinge", JointType::Revolute { axis: Vector3::y() }, None, ball)
//!     .frames(Isometry3::identity(), Isometry3::translation(-1.0, 0.0, 0.0)))?;
//! let mut sim = Simulator::new(b.build()?, 1, 0.01, BackendChoice::Cpu)?;
//! let summary = sim.run(100)?;
//! assert_eq!(summary.converged_steps, 100);
//! assert!(sim.joint_errors(0).position < 1e-9);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod diagnose;
pub mod scenes;

use std::ops::ControlFlow;

use axion_collision::CollisionWorld;
use std::time::{Duration, Instant};

pub use axion_collision as collision;
pub use axion_constraints as constraints;
pub use axion_cpu::{CpuBackend, FRICTION_CREEP, Integrator, SolverSettings};
#[cfg(feature = "gpu")]
pub use axion_gpu::{GpuBackend, GpuError, GpuSettings, device_tests_run, solved_along_tree};
pub use axion_import as import;
pub use axion_import::{
    AppliedForce, DriveSchedule, ImportWarning, ImportedRobot, InertiaPolicy, RobotError,
    RobotErrorKind, RobotOptions, Scene, SceneError, SceneFormat, SceneSettings, SolverOverrides,
    import_mjcf, import_mjcf_file, import_urdf, import_urdf_file, load_scene, parse_scene,
    parse_scene_as, parse_scene_in,
};
pub use axion_math as math;
pub use axion_model::measure::{Energy, JointErrors, JointMotion, exchange_scale, joint_motion};
pub use axion_model::{
    Anisotropy, Backend, BodyDesc, BodyId, BodyKind, CollisionFilter, ContactForce, Control,
    ControlError, DriveDesc, DriveId, Geometry, JointDesc, JointDynamics, JointId, JointLimits,
    JointRange, JointType, Material, Model, ModelBuilder, ModelError, RunTotals, Shape, ShapeDesc,
    State, StepError, StepReport, StepStats, mode_name,
};
pub use diagnose::{InitialState, initial_state, violations};

/// The README's Rust snippets, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// Everything a typical program needs.
pub mod prelude {
    pub use crate::{
        BackendChoice, BodyDesc, BodyId, DriveDesc, Integrator, JointDesc, JointType, ModelBuilder,
        Shape, ShapeDesc, Simulator, SolverSettings,
    };
}

/// Which backend steps the worlds.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum BackendChoice {
    /// The CPU reference (f64, sparse direct solves).
    Cpu,
    /// The CPU reference with custom solver settings.
    CpuWith(SolverSettings),
    /// The GPU backend (f32, wgpu): an error if there is no adapter, the model uses
    /// what it does not implement yet (convex hulls, meshes or height fields that may
    /// collide), or the crate was built without its `gpu` feature.
    Gpu,
    /// The GPU backend with custom settings.
    #[cfg(feature = "gpu")]
    GpuWith(GpuSettings),
    /// The best available backend for the batch: the GPU for at least
    /// [`auto_gpu_min_worlds`] worlds of a model it can run on a hardware adapter,
    /// otherwise the CPU. The choice and the reason (with the adapter) are reported by
    /// [`Simulator::backend_reason`].
    #[default]
    Auto,
}

/// The CPU solver settings of the discrete system the GPU backend solves with
/// `gpu`: its friction creep and the creep of its second attempts, which default
/// higher on the GPU than on the CPU (f32 does not carry a creep of 10⁻⁶, docs/gpu.md),
/// no step started with the creep of the second attempts (the GPU starts every step
/// with its friction creep: `SolverSettings::keep_fallback_creep` off), second
/// attempts with the smoothed contact rows the GPU always has
/// (`SolverSettings::compliant_retries` off, so no first attempt is ended early for
/// one, `SolverSettings::abandon_after`), and the CPU's defaults otherwise. The
/// comparisons of the two backends run the CPU so.
#[cfg(feature = "gpu")]
pub fn cpu_settings_like(gpu: &GpuSettings) -> SolverSettings {
    SolverSettings {
        friction_creep: gpu.friction_creep,
        fallback_creep: gpu.fallback_creep,
        keep_fallback_creep: false,
        compliant_retries: false,
        ..SolverSettings::default()
    }
}

/// Worlds per CPU thread from which [`BackendChoice::Auto`] gives a batch to a hardware
/// GPU (at least [`AUTO_GPU_MIN_BATCH`]). A small model's GPU step is a fixed sequence
/// of dispatches, about 3 ms on an NVIDIA H200 for anything from 1 to 4096 pendulums,
/// chains of 5 or skid-steers, while the CPU backend steps its worlds on every thread,
/// so the batch where the GPU overtakes the CPU grows with the threads and shrinks with
/// the work of a world's step. Measured on one host only, beside an H200 (16 threads,
/// docs/benchmarks.md, 2026-11-28): the GPU overtook the CPU at about 2000 pendulums,
/// 1300 skid-steers and 280 landing a1 quadrupeds — 125, 81 and 17 worlds per thread.
/// 48, near the geometric middle of the extremes, cost at most about 2.2× there on
/// either side (the GPU for 768 pendulums, the CPU for 767 a1s); on other hosts the
/// crossovers move with the speed of their cores.
pub const AUTO_GPU_WORLDS_PER_THREAD: usize = 48;

/// The smallest batch [`BackendChoice::Auto`] gives to a hardware GPU on any machine:
/// on two threads, 256 pendulums ran 2.2× slower on the H200 than on this project's
/// 2-core VM and 256 a1s 3.4× faster (docs/benchmarks.md).
pub const AUTO_GPU_MIN_BATCH: usize = 256;

/// The smallest batch [`BackendChoice::Auto`] gives to a hardware GPU on this machine:
/// [`AUTO_GPU_WORLDS_PER_THREAD`] for each thread the CPU backend steps worlds on
/// ([`axion_cpu::default_threads`]), at least [`AUTO_GPU_MIN_BATCH`]: 256 on two
/// threads, 768 on sixteen.
pub fn auto_gpu_min_worlds() -> usize {
    (AUTO_GPU_WORLDS_PER_THREAD * axion_cpu::default_threads()).max(AUTO_GPU_MIN_BATCH)
}

/// Why a simulator could not be created or stepped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The model or the number of worlds is invalid.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A step could not be taken.
    #[error(transparent)]
    Step(#[from] StepError),
    /// A collision shape cannot be used (a degenerate hull, an invalid mesh).
    #[error(transparent)]
    Collision(#[from] axion_collision::CollisionError),
    /// The GPU backend was requested and cannot run (no adapter, unsupported model).
    #[error(transparent)]
    #[cfg(feature = "gpu")]
    Gpu(#[from] GpuError),
    /// The GPU backend was requested from a build without it.
    #[cfg(not(feature = "gpu"))]
    #[error(
        "this build of axion has no GPU backend: build it with the `gpu` feature (on by default)"
    )]
    NoGpuBackend,
    /// A step left a body with a non-finite pose or velocity (a step far too large for
    /// the motion, or an input beyond what f64 holds). The state is that of the failed
    /// step; nothing after it should be trusted.
    #[error(
        "a step left body {body:?} of world {world} with a non-finite pose or velocity (is the time step far too large for the motion?)"
    )]
    NonFiniteState {
        /// The world.
        world: usize,
        /// The first such body.
        body: String,
    },
}

/// What a run did, for a summary line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunSummary {
    /// Steps taken (each steps every world).
    pub steps: usize,
    /// Simulated time covered (s).
    pub simulated: f64,
    /// Wall-clock time spent in the backend.
    pub wall: Duration,
    /// Mean Newton iterations per world-step.
    pub mean_iterations: f64,
    /// Newton iterations summed over the world-steps.
    pub iterations: usize,
    /// Largest Newton iteration count of any world-step.
    pub max_iterations: usize,
    /// Steps in which every world converged.
    pub converged_steps: usize,
    /// World-steps that converged.
    pub converged_world_steps: usize,
    /// World-steps solved with the CPU backend's larger creep of sticking friction
    /// ([`StepStats::fallback_creep`]).
    pub fallback_creep_world_steps: usize,
}

impl RunSummary {
    /// Simulated time per wall-clock time (per world).
    pub fn real_time_factor(&self) -> f64 {
        self.simulated / self.wall.as_secs_f64().max(1e-12)
    }
}

/// The GPU backend, as requested.
#[cfg(feature = "gpu")]
fn gpu(
    model: &Model,
    worlds: usize,
    settings: GpuSettings,
) -> Result<(Box<dyn Backend>, String), GpuError> {
    let backend = GpuBackend::for_model(model, worlds, settings)?;
    let reason = format!("requested, on {}", backend.adapter());
    Ok((Box::new(backend), reason))
}

/// The automatic choice (see [`BackendChoice::Auto`]).
fn auto(model: &Model, worlds: usize, collision: CollisionWorld) -> (Box<dyn Backend>, String) {
    let cpu = |why: String| -> (Box<dyn Backend>, String) {
        let backend = CpuBackend::for_model(SolverSettings::default(), model, collision);
        (Box::new(backend), format!("auto: CPU, {why}"))
    };
    let least = auto_gpu_min_worlds();
    if worlds < least {
        return cpu(format!("{worlds} worlds (the GPU is used from {least})"));
    }
    #[cfg(feature = "gpu")]
    {
        if let Err(e) = axion_gpu::check_model(model) {
            return cpu(e.to_string());
        }
        match GpuBackend::for_model(model, worlds, GpuSettings::default()) {
            Ok(g) if g.adapter().is_hardware() => {
                let reason = format!("auto: GPU {} for {worlds} worlds", g.adapter());
                (Box::new(g), reason)
            }
            Ok(g) => cpu(format!(
                "the only adapter is a software one ({})",
                g.adapter()
            )),
            Err(e) => cpu(e.to_string()),
        }
    }
    #[cfg(not(feature = "gpu"))]
    {
        let _ = model;
        cpu("built without the gpu feature".into())
    }
}

/// A model, the state of its worlds, their control, and the backend that steps them.
pub struct Simulator {
    model: Model,
    state: State,
    control: Control,
    backend: Box<dyn Backend>,
    backend_reason: String,
    dt: f64,
    last: StepReport,
}

impl Simulator {
    /// `worlds` copies of `model` in their initial state, stepped by `dt` seconds.
    pub fn new(
        model: Model,
        worlds: usize,
        dt: f64,
        backend: BackendChoice,
    ) -> Result<Self, SimError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(StepError::InvalidTimeStep { h: dt }.into());
        }
        // Build the collision shapes here so that a bad mesh is reported now, not at the
        // first step; the CPU backend keeps them.
        let collision = CollisionWorld::new(&model)?;
        let state = State::new(&model, worlds)?;
        let control = Control::new(&model, worlds);
        let (backend, backend_reason): (Box<dyn Backend>, String) = match backend {
            BackendChoice::Cpu => {
                let cpu = CpuBackend::for_model(SolverSettings::default(), &model, collision);
                (Box::new(cpu), "requested".into())
            }
            BackendChoice::CpuWith(settings) => {
                let cpu = CpuBackend::for_model(settings, &model, collision);
                (Box::new(cpu), "requested".into())
            }
            #[cfg(feature = "gpu")]
            BackendChoice::Gpu => gpu(&model, worlds, GpuSettings::default())?,
            #[cfg(feature = "gpu")]
            BackendChoice::GpuWith(settings) => gpu(&model, worlds, settings)?,
            #[cfg(not(feature = "gpu"))]
            BackendChoice::Gpu => return Err(SimError::NoGpuBackend),
            BackendChoice::Auto => auto(&model, worlds, collision),
        };
        Ok(Self {
            model,
            state,
            control,
            backend,
            backend_reason,
            dt,
            last: StepReport::default(),
        })
    }

    /// Advances every world by one step. A step that leaves any body with a non-finite
    /// pose or velocity is an error ([`SimError::NonFiniteState`]) naming the body.
    pub fn step(&mut self) -> Result<&StepReport, SimError> {
        self.last = self
            .backend
            .step(&self.model, &mut self.state, &self.control, self.dt)?;
        self.check_finite()?;
        Ok(&self.last)
    }

    fn check_finite(&self) -> Result<(), SimError> {
        match self.state.first_non_finite() {
            Some((world, body)) => Err(SimError::NonFiniteState {
                world,
                body: self.model.bodies()[body.0].name.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Runs `steps` steps, calling `observe` after each.
    pub fn run_with(
        &mut self,
        steps: usize,
        mut observe: impl FnMut(&Simulator),
    ) -> Result<RunSummary, SimError> {
        self.run_every(steps, 1, |sim| {
            observe(sim);
            ControlFlow::Continue(())
        })
    }

    /// Runs `steps` steps, calling `observe` after every `every`-th (and after the
    /// last); `observe` may stop the run early. Between two calls the backend runs the
    /// steps on its own: the GPU backend keeps the state on the device and reads back
    /// only the state and statistics when `observe` is due, so a larger `every` runs a
    /// batch faster. The state and statistics equal those of stepping one step at a
    /// time, bit for bit.
    ///
    /// A step that leaves a pose or velocity non-finite is an error
    /// ([`SimError::NonFiniteState`]), seen at the next call of `observe` at the latest.
    pub fn run_every(
        &mut self,
        steps: usize,
        every: usize,
        mut observe: impl FnMut(&Simulator) -> ControlFlow<()>,
    ) -> Result<RunSummary, SimError> {
        let mut totals = RunTotals::default();
        let mut wall = Duration::ZERO;
        let every = every.max(1);
        while totals.steps < steps {
            let block = every.min(steps - totals.steps);
            let start = Instant::now();
            let report = self.backend.run(
                &self.model,
                &mut self.state,
                &self.control,
                self.dt,
                block,
                &mut totals,
            );
            wall += start.elapsed();
            self.last = report?;
            self.check_finite()?;
            if observe(self).is_break() {
                break;
            }
        }
        Ok(RunSummary {
            steps: totals.steps,
            simulated: totals.steps as f64 * self.dt,
            wall,
            mean_iterations: totals.mean_iterations(),
            iterations: totals.iterations,
            max_iterations: totals.max_iterations,
            converged_steps: totals.converged_steps,
            converged_world_steps: totals.converged_world_steps,
            fallback_creep_world_steps: totals.fallback_creep_world_steps,
        })
    }

    /// Runs `steps` steps; a backend that keeps the state elsewhere (the GPU's) runs
    /// them there and returns the state once, at the end ([`Simulator::run_every`]).
    pub fn run(&mut self, steps: usize) -> Result<RunSummary, SimError> {
        self.run_every(steps, steps, |_| ControlFlow::Continue(()))
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }
    /// The state of every world.
    pub fn state(&self) -> &State {
        &self.state
    }
    /// The state, to set poses or velocities.
    pub fn state_mut(&mut self) -> &mut State {
        &mut self.state
    }
    /// Drive targets and external forces.
    pub fn control(&self) -> &Control {
        &self.control
    }
    /// Drive targets and external forces, to change them.
    pub fn control_mut(&mut self) -> &mut Control {
        &mut self.control
    }
    /// The time step (s).
    pub fn dt(&self) -> f64 {
        self.dt
    }
    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.state.time()
    }
    /// The statistics of the last step.
    pub fn last_report(&self) -> &StepReport {
        &self.last
    }
    /// The backend's name.
    pub fn backend_name(&self) -> String {
        self.backend.name()
    }
    /// Why this backend was chosen.
    pub fn backend_reason(&self) -> &str {
        &self.backend_reason
    }
    /// Kinetic and potential energy of a world, with its own body masses
    /// ([`Control::set_body_mass`]).
    pub fn energy(&self, world: usize) -> Energy {
        axion_model::measure::energy_with_masses(
            &self.model,
            &self.state,
            world,
            self.control.world_masses(world),
        )
    }
    /// Largest joint errors of a world.
    pub fn joint_errors(&self, world: usize) -> JointErrors {
        axion_model::measure::joint_errors(&self.model, &self.state, world)
    }
    /// A joint's coordinate (angle or displacement) and its rate in a world; `None`
    /// for a joint without a single coordinate (fixed, ball, free). See
    /// [`axion_model::measure::joint_motion`].
    pub fn joint_motion(&self, world: usize, joint: JointId) -> Option<JointMotion> {
        axion_model::measure::joint_motion(&self.model, &self.state, world, joint)
    }
    /// A drive's force (N or N·m, along its coordinate) in the last step of a world.
    pub fn drive_force(&self, world: usize, drive: DriveId) -> f64 {
        self.state.drive_forces(world)[drive.0]
    }
    /// The contacts of a world in the last step with their forces, if the backend
    /// keeps them (the CPU backend does; `None` before the first step, after a
    /// [`reset`](Self::reset) or any change of the world's state, and on the GPU).
    pub fn contacts(&self, world: usize) -> Option<Vec<ContactForce>> {
        self.backend.contacts(&self.state, world)
    }
    /// The total contact force and torque on each body of a world in the last step
    /// (world frame, torque about the body's centre of mass):
    /// $F = \sum \pm f$, $\tau = \sum (p - x) \times (\pm f)$ over its contacts, `+`
    /// where it is `body_a`. `None` where [`contacts`](Self::contacts) is.
    pub fn contact_wrenches(&self, world: usize) -> Option<Vec<math::Wrench>> {
        let contacts = self.contacts(world)?;
        let mut wrenches = vec![math::Wrench::zeros(); self.model.bodies().len()];
        for c in &contacts {
            let f = c.force_on_a();
            for (body, force) in [(c.body_a, f), (c.body_b, -f)] {
                let arm = c.point - self.state.com_pose(world, body).translation.vector;
                wrenches[body.0] += math::twist(force, arm.cross(&force));
            }
        }
        Some(wrenches)
    }
    /// Puts every world back in the model's initial state at time 0 (the control,
    /// targets and parameters included, is kept).
    pub fn reset(&mut self) -> Result<(), SimError> {
        self.state = State::new(&self.model, self.state.worlds())?;
        self.last = StepReport::default();
        Ok(())
    }
}
