//! # axion-cli
//!
//! The library behind the `axion` command: the catalogue of built-in demos, the run
//! loop with its summary, and the output files. `main.rs` only parses arguments.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod glb;
mod plots;

pub use glb::{Keyframes, glb_bytes, viewer_html, write_glb};
pub use plots::{
    MAX_TRACKS, PANEL_HEIGHT, PLOT_WIDTH, Series, TITLE_HEIGHT, Track, panel_titles, plot_size,
    write_plots,
};

use axion::collision::{CollisionWorld, visual_mesh};
use axion::scenes::{self, ChainOptions, ServoJoint};
use axion::{
    BackendChoice, DriveDesc, GpuSettings, Model, ModelError, SimError, Simulator, SolverSettings,
    StepStats,
};

/// What can go wrong in a command; printed as `error: …` with exit status 1.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The demo name is not in the catalogue.
    #[error("unknown demo {name:?}; the demos are: {}", names().join(", "))]
    UnknownDemo {
        /// The name given.
        name: String,
    },
    /// A time step or duration that is not a positive number.
    #[error("{what} must be a positive number of seconds, got {value:?}")]
    InvalidSeconds {
        /// `--dt` or `--duration`.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// A duration that is not at least one step, or a run of more steps than
    /// [`MAX_STEPS`].
    #[error(
        "a duration of {duration:?} s at a step of {dt:?} s is {steps:.3e} steps; a run takes 1 to {} steps (change --duration or --dt)",
        MAX_STEPS
    )]
    StepCount {
        /// The duration (s).
        duration: f64,
        /// The step (s).
        dt: f64,
        /// `duration / dt`.
        steps: f64,
    },
    /// A robot option (`--fixed-base`, `--package-path`, `--self-collision`, `--hold`,
    /// `--hold-gains`) given for a scene file (robots in scene files say these
    /// themselves).
    #[error(
        "--fixed-base, --package-path, --self-collision, --hold and --hold-gains apply to URDF and MJCF files; in a scene file set `fixed_base`, `package_paths`, `self_collision` or `drives` on the robot"
    )]
    RobotOptionsWithoutUrdf,
    /// Holding gains that are not finite and non-negative, or both zero.
    #[error("hold gains must be finite and non-negative, not both zero: got ke = {ke}, kd = {kd}")]
    InvalidHoldGains {
        /// The stiffness given.
        ke: f64,
        /// The damping given.
        kd: f64,
    },
    /// `--every 0`.
    #[error("--every must be at least 1 (a step count), got 0")]
    EveryZero,
    /// `--every` above 1 for a scene whose control changes from step to step.
    #[error(
        "--every {every} needs a scene without drive schedules or applied forces: they set the control before each step, so such a scene is looked at after every step (leave --every out)"
    )]
    EveryWithInputs {
        /// The interval asked for.
        every: usize,
    },
    /// `--threads` asked of a backend that has no worker threads.
    #[error("--threads applies to the CPU backend, not to {backend}")]
    ThreadsWithoutCpu {
        /// The backend chosen.
        backend: String,
    },
    /// A scene asks for an integrator that the chosen backend does not have.
    #[error(
        "the scene asks for the {integrator} integrator, which only the CPU backend has; run it with --backend cpu or auto"
    )]
    IntegratorWithoutCpu {
        /// The scene's `integrator`.
        integrator: String,
    },
    /// The scene sets solver settings only the CPU backend has, and the GPU was asked for.
    #[error(
        "the scene's [simulation.solver] sets {settings}, which only the CPU backend has; run it with --backend cpu (or auto)"
    )]
    SettingWithoutCpu {
        /// The settings, comma separated.
        settings: String,
    },
    /// The scene could not be built.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The simulation could not be created or stepped.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A scene file could not be read.
    #[error(transparent)]
    Scene(#[from] axion::SceneError),
    /// A URDF robot could not be imported.
    #[error(transparent)]
    Robot(#[from] axion::RobotError),
    /// A scheduled drive target was refused.
    #[error("drive schedule: {0}")]
    Schedule(#[source] axion::ControlError),
    /// A picture (plot or animation) could not be drawn.
    #[error("cannot draw {what}: {reason}")]
    Picture {
        /// The file or shape.
        what: String,
        /// Why.
        reason: String,
    },
    /// An input file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An output file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A built-in demo: a canonical scene with its default step and duration.
pub struct Demo {
    /// Name on the command line.
    pub name: &'static str,
    /// One line for `axion demo --list`.
    pub about: &'static str,
    /// Default time step (s).
    pub dt: f64,
    /// Default duration (s).
    pub duration: f64,
    build: fn() -> Result<Model, CliError>,
}

impl Demo {
    /// The demo's model.
    pub fn model(&self) -> Result<Model, CliError> {
        (self.build)()
    }
}

/// The skid-steer robot of examples/robots (built into the command) on flat ground,
/// turning left: wheel speeds 2, 6 and 4 rad/s (left, right, rear)
/// ([`axion::scenes::skid_steer`]).
fn skid_steer() -> Result<Model, CliError> {
    Ok(axion::scenes::skid_steer([2.0, 6.0, 4.0])?)
}

/// The cartpole of examples/robots (built into the command): the cart driven at 1 m/s.
fn cartpole_urdf() -> Result<Model, CliError> {
    let mut b = axion::ModelBuilder::new();
    let options = axion::RobotOptions {
        fixed_base: true,
        drives: [(
            "slider".to_string(),
            DriveDesc::Velocity {
                target: 1.0,
                ke: 1000.0,
            },
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    axion::import_urdf(
        include_str!("../../../examples/robots/cartpole.urdf"),
        &options,
        &mut b,
    )?;
    Ok(b.build()?)
}

/// The catalogue: the canonical scenes (docs/canonical-scenes.md) under their names, each
/// described with its number ("canonical scene N"), the two shipped robots, and the reference's
/// double pendulum (the default).
pub const DEMOS: &[Demo] = &[
    Demo {
        name: "double-pendulum",
        about: "two 80 kg bars on hinges, released horizontal (the reference's example)",
        dt: 0.01,
        duration: 10.0,
        build: || Ok(scenes::double_pendulum()?),
    },
    Demo {
        name: "drop",
        about: "a 1 kg ball dropped from 2 m onto the ground (canonical scene 1)",
        dt: 0.01,
        duration: 3.0,
        build: || Ok(scenes::drop(0.0)?),
    },
    Demo {
        name: "pendulum",
        about: "a point mass on a 1 m hinge, released horizontal (canonical scene 2)",
        dt: 0.01,
        duration: 10.0,
        build: || Ok(scenes::pendulum()?),
    },
    Demo {
        name: "chain",
        about: "20 capsule links hanging 45° off vertical (canonical scene 3)",
        dt: 0.01,
        duration: 10.0,
        build: || Ok(scenes::chain(ChainOptions::default())?),
    },
    Demo {
        name: "stack",
        about: "5 unit cubes stacked on the ground (canonical scene 4)",
        dt: 0.01,
        duration: 10.0,
        build: || Ok(scenes::stack(5)?),
    },
    Demo {
        name: "incline",
        about: "a cube on a 35° slope with μ 0.5: it slides (canonical scene 5)",
        dt: 0.01,
        duration: 2.0,
        build: || Ok(scenes::incline(35f64.to_radians(), 0.5)?),
    },
    Demo {
        name: "servo",
        about: "a 10 kg bar driven to 90° by an implicit PD servo (canonical scene 6)",
        dt: 1.0 / 60.0,
        duration: 100.0 / 60.0,
        build: || {
            let drive = DriveDesc::Position {
                target: std::f64::consts::FRAC_PI_2,
                target_velocity: 0.0,
                ke: 1000.0,
                kd: 100.0,
            };
            Ok(scenes::servo(ServoJoint::Revolute, drive)?)
        },
    },
    Demo {
        name: "cartpole",
        about: "a 240 kg cart driven at 1 m/s with a hanging 20 kg pole (canonical scene 7)",
        dt: 0.01,
        duration: 10.0,
        build: || Ok(scenes::cartpole(1.0)?),
    },
    Demo {
        name: "mass-ratio",
        about: "a 1000 kg box resting on a 1 kg box (canonical scene 8)",
        dt: 0.01,
        duration: 5.0,
        build: || Ok(scenes::mass_ratio()?),
    },
    Demo {
        name: "skid-steer",
        about: "a three-wheeled skid-steer robot (URDF) turning left",
        dt: 0.01,
        duration: 3.0,
        build: skid_steer,
    },
    Demo {
        name: "cartpole-urdf",
        about: "the cartpole imported from URDF, its cart driven at 1 m/s",
        dt: 0.01,
        duration: 10.0,
        build: cartpole_urdf,
    },
    Demo {
        name: "pyramid",
        about: "ten 10-box pyramids, 100 boxes (canonical scene 9)",
        dt: 0.05,
        duration: 10.0,
        build: || Ok(scenes::pyramid(10)?),
    },
];

/// The demo names, in catalogue order.
pub fn names() -> Vec<&'static str> {
    DEMOS.iter().map(|d| d.name).collect()
}

/// The demo called `name`.
pub fn find(name: &str) -> Result<&'static Demo, CliError> {
    DEMOS
        .iter()
        .find(|d| d.name == name)
        .ok_or_else(|| CliError::UnknownDemo {
            name: name.to_string(),
        })
}

/// How to run a demo.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Time step (s); the demo's default if `None`.
    pub dt: Option<f64>,
    /// Simulated duration (s); the demo's default if `None`.
    pub duration: Option<f64>,
    /// Number of identical worlds (`None`: the scene's, or 1).
    pub worlds: Option<usize>,
    /// Backend.
    pub backend: BackendChoice,
    /// Folder for `trajectory.csv`, `trajectory.jsonl`, `summary.json`, `animation.glb`
    /// and `plots.png`.
    pub out: Option<PathBuf>,
    /// Show a progress bar when the run takes more than a second (on a terminal).
    pub progress: bool,
    /// Write `contacts.jsonl` (every contact of every step looked at, see
    /// [`every`](Self::every), and world) into `out`.
    pub contacts: bool,
    /// Worker threads of the CPU backend (`None`: one per core). Selects the CPU
    /// backend when `backend` is `Auto`; an error with a GPU backend.
    pub threads: Option<usize>,
    /// Look at the run after every `every`-th step (and after the last): the output
    /// files, the energy and joint-error checks, the largest contact count and the
    /// progress bar see those steps only, and between them the backend runs the steps
    /// on its own — the GPU backend keeps the state on the device instead of reading
    /// every world back after every step. The states are those of `every = 1`, bit for
    /// bit, and so are the iteration and convergence counts, which cover every step.
    /// Ctrl-C ends the run after the current stretch of `every` steps. Needs a scene
    /// without drive schedules or applied forces (they change the control step by
    /// step); 0 is an error.
    pub every: usize,
}

/// `backend` with `threads` worker threads when it is (or, for `Auto`, becomes) the CPU
/// backend; `threads = None` leaves it as it is.
pub fn with_threads(
    backend: BackendChoice,
    threads: Option<usize>,
) -> Result<BackendChoice, CliError> {
    let Some(threads) = threads else {
        return Ok(backend);
    };
    match backend {
        BackendChoice::Auto | BackendChoice::Cpu => Ok(BackendChoice::CpuWith(SolverSettings {
            threads,
            ..Default::default()
        })),
        BackendChoice::CpuWith(settings) => Ok(BackendChoice::CpuWith(SolverSettings {
            threads,
            ..settings
        })),
        BackendChoice::Gpu | BackendChoice::GpuWith(_) => Err(CliError::ThreadsWithoutCpu {
            backend: "the GPU backend".into(),
        }),
    }
}

/// Set by [`request_stop`]: the running [`run_model`] ends after its current step (its
/// current stretch of [`RunOptions::every`] steps).
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks the run in progress to end after its current step (stretch of
/// [`RunOptions::every`] steps), as if it were complete:
/// its files are flushed and its summary (marked interrupted) written. The `axion`
/// command calls it on SIGINT (Ctrl-C) and SIGTERM.
pub fn request_stop() {
    STOP.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// What a run did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Summary {
    /// Demo name.
    pub demo: String,
    /// Backend and why it was chosen.
    pub backend: String,
    /// The time integrator ([`integrator_name`]).
    pub integrator: String,
    /// The scene or robot file that was run (`None` for a built-in demo).
    pub file: Option<String>,
    /// How a robot file was set up ([`RobotSetup::record`]; `None` for scenes and demos).
    pub robot: Option<serde_json::Value>,
    /// The solver settings the run used ([`solver_record`]).
    pub solver: serde_json::Value,
    /// Time step (s).
    pub dt: f64,
    /// Steps taken.
    pub steps: usize,
    /// Worlds.
    pub worlds: usize,
    /// Simulated time (s).
    pub simulated: f64,
    /// Wall-clock time (s) of the steps and the trajectory files (the pictures are
    /// drawn after).
    pub wall: f64,
    /// Simulated time per wall time.
    pub real_time_factor: f64,
    /// Mean Newton iterations per world-step.
    pub mean_iterations: f64,
    /// Largest Newton iteration count.
    pub max_iterations: usize,
    /// Share of world-steps that converged.
    pub converged_share: f64,
    /// Share of world-steps solved with the larger creep of sticking friction
    /// (`SolverSettings::fallback_creep`: a second attempt at a step, and the steps
    /// after one that needed it; [`axion::StepStats::fallback_creep`]).
    pub fallback_creep_share: f64,
    /// World-steps that did not converge: their states are the best iterate the solver
    /// found, not the step's solution (the summary warns).
    pub unconverged_world_steps: usize,
    /// Largest joint anchor error seen (m) after the steps looked at (every
    /// [`every`](Self::every)-th), the initial state's included.
    pub max_joint_error: f64,
    /// Largest contact count of a world-step looked at (every
    /// [`every`](Self::every)-th step).
    pub max_contacts: usize,
    /// What the initial state violates ([`axion::InitialState`], one line).
    pub initial_state: String,
    /// Steps in which world 0's total energy rose by more than [`ENERGY_RISE`] of its
    /// scale ([`axion::Energy::scale`]: kinetic plus |potential|, the larger of before
    /// and after the step, at least the model's [`axion::exchange_scale`]); with
    /// [`every`](Self::every) above 1, the stretches of `every` steps between two looks
    /// in which it rose so.
    pub energy_rise_steps: usize,
    /// The largest such rise, as a share of the scale, and when (s).
    pub largest_energy_rise: (f64, f64),
    /// The run was looked at after every this many steps ([`RunOptions::every`]).
    pub every: usize,
    /// The run was stopped ([`request_stop`]) before its last step: `steps` says how
    /// many were taken.
    pub interrupted: bool,
    /// The program that ran it: `axion-cli` and its version.
    pub program: String,
    /// When the run ended, UTC, as `YYYY-MM-DDTHH:MM:SSZ`.
    pub finished_utc: String,
}

/// `seconds` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (the proleptic Gregorian
/// calendar: days to a civil date by the era arithmetic of H. Hinnant's `civil_from_days`).
fn utc(seconds: u64) -> String {
    let (days, rest) = ((seconds / 86_400) as i64, seconds % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// A step whose total energy rises by more than this share of the energy's scale is
/// counted in [`Summary::energy_rise_steps`].
pub const ENERGY_RISE: f64 = 0.01;

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{}: {} steps of {} s × {} world(s) = {:.3} s simulated",
            self.demo, self.steps, self.dt, self.worlds, self.simulated
        )?;
        writeln!(f, "  backend            {}", self.backend)?;
        writeln!(f, "  integrator         {}", self.integrator)?;
        writeln!(
            f,
            "  wall time          {:.3} s (real-time factor {:.1})",
            self.wall, self.real_time_factor
        )?;
        writeln!(
            f,
            "  Newton iterations  {:.2} per step (max {})",
            self.mean_iterations, self.max_iterations
        )?;
        writeln!(
            f,
            "  converged          {:.1} % of world-steps",
            100.0 * self.converged_share
        )?;
        if self.fallback_creep_share > 0.0 {
            writeln!(
                f,
                "  fallback creep     {:.1} % of world-steps (sticking friction slipped at the larger creep; docs/step.md, \"A step solved again\")",
                100.0 * self.fallback_creep_share
            )?;
        }
        writeln!(f, "  max joint error    {:.2e} m", self.max_joint_error)?;
        write!(f, "  max contacts       {}", self.max_contacts)?;
        write!(f, "\n  {}", self.initial_state)?;
        if self.interrupted {
            write!(
                f,
                "\n  interrupted after {} steps: the output files hold the steps taken",
                self.steps
            )?;
        }
        if self.unconverged_world_steps > 0 {
            write!(
                f,
                "\n  warning: {} of {} world-steps did not converge: their states are the best iterate the solver found, not the step's solution; {}",
                self.unconverged_world_steps,
                self.steps * self.worlds,
                if self.backend.starts_with("gpu") {
                    "the CPU backend (--backend cpu: f64, exact Newton direction, a failed step solved again) converges steps the GPU does not (docs/gpu.md)"
                } else {
                    "a smaller --dt converges more (docs/step.md, \"A step solved again\")"
                }
            )?;
        }
        if self.energy_rise_steps > 0 {
            let (share, t) = self.largest_energy_rise;
            write!(
                f,
                "\n  warning: total energy rose by more than {} % of its scale in {} {}, by {:.1} % at most (t = {t:.3} s); drives and applied forces add energy, a passive scene should not",
                100.0 * ENERGY_RISE,
                self.energy_rise_steps,
                if self.every == 1 {
                    "step(s)".to_string()
                } else {
                    format!("stretch(es) of {} steps", self.every)
                },
                100.0 * share
            )?;
        }
        Ok(())
    }
}

/// The CSV header of `trajectory.csv`: time, world, body name, the body's
/// reference-frame pose (position, quaternion xyzw) and its world-frame velocity
/// (COM linear, angular).
pub const CSV_HEADER: &str = "t,world,body,x,y,z,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz";

/// The CSV header of `joints.csv`: time, world, joint name, the joint's coordinate
/// (rad or m) and rate, its drive's targets (position and velocity; empty where the
/// drive has none or the joint no drive) and the drive's force (N or N·m).
pub const JOINTS_HEADER: &str = "t,world,joint,q,qd,target,target_velocity,drive_force";

/// Output files of a run.
struct Outputs {
    dir: PathBuf,
    csv: (PathBuf, BufWriter<File>),
    jsonl: (PathBuf, BufWriter<File>),
    /// `joints.csv`, when the model has joints with a coordinate.
    joints: Option<(PathBuf, BufWriter<File>)>,
    /// `contacts.jsonl`, when asked for.
    contact_log: Option<(PathBuf, BufWriter<File>)>,
    /// Shapes of the model, to measure penetration for the plots.
    collision: CollisionWorld,
    contacts: Vec<axion::collision::Contact>,
    series: Series,
    /// The drives plotted, one per track of `series`: drives given to joints (not their
    /// dampers or armatures), at most [`plots::MAX_TRACKS`].
    tracked: Vec<axion::DriveId>,
    keys: Keyframes,
    /// Animation keys are taken every `key_stride` recorded steps (and at the end).
    key_stride: usize,
    /// The plotted series takes every `series_stride`-th recorded step (and the last);
    /// the stride doubles whenever the series reaches [`plots::MAX_SAMPLES`], so a run
    /// of any length keeps at most that many samples in memory.
    series_stride: usize,
}

/// Margin (m) of the contact search that measures penetration for the plots: the CPU
/// solver's default, so the manifolds are those the solver saw (parry finds no contact
/// at all between faces that touch exactly when the margin is 0).
const PENETRATION_MARGIN: f64 = 0.02;

/// Animation keys are at most this many per simulated second.
const KEYS_PER_SECOND: f64 = 100.0;

fn create(path: PathBuf) -> Result<(PathBuf, BufWriter<File>), CliError> {
    match File::create(&path) {
        Ok(f) => Ok((path, BufWriter::new(f))),
        Err(source) => Err(CliError::Io { path, source }),
    }
}

pub(crate) fn io(path: &Path) -> impl Fn(std::io::Error) -> CliError + '_ {
    move |source| CliError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A CSV field: quoted if it contains a comma, quote or newline.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The targets of a drive as `joints.csv` writes them: (position, velocity), empty
/// where the mode has none; the target the plots draw (NaN: none) and whether they
/// track the position (else the velocity).
fn drive_targets(drive: &axion::constraints::drive::Drive) -> ([String; 2], f64, bool) {
    use axion::constraints::drive::DriveMode;
    match drive.mode() {
        DriveMode::Position {
            target,
            target_velocity,
        } => (
            [target.to_string(), target_velocity.to_string()],
            target,
            true,
        ),
        DriveMode::Velocity { target_velocity } => (
            [String::new(), target_velocity.to_string()],
            target_velocity,
            false,
        ),
        // A force drive or armature has no target: its joint's position is plotted alone.
        DriveMode::Force | DriveMode::Armature => ([String::new(), String::new()], f64::NAN, true),
    }
}

impl Outputs {
    /// Outputs of a run of steps of `dt` seconds looked at every `every` steps.
    fn new(
        dir: &Path,
        model: &Model,
        (dt, every): (f64, usize),
        integrator: &str,
        contacts: bool,
    ) -> Result<Self, CliError> {
        let collision = CollisionWorld::new(model).map_err(SimError::from)?;
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut csv = create(dir.join("trajectory.csv"))?;
        writeln!(csv.1, "{CSV_HEADER}").map_err(io(&csv.0))?;
        let joints = if model.joints().iter().any(|j| j.coordinate().is_some()) {
            let mut file = create(dir.join("joints.csv"))?;
            writeln!(file.1, "{JOINTS_HEADER}").map_err(io(&file.0))?;
            Some(file)
        } else {
            None
        };
        let contact_log = if contacts {
            Some(create(dir.join("contacts.jsonl"))?)
        } else {
            None
        };
        let shaped = model.bodies().iter().filter(|b| !b.shapes.is_empty());
        let has_contacts = shaped.clone().count() >= 2 && shaped.clone().any(|b| b.is_dynamic());
        let tracked: Vec<axion::DriveId> = model
            .joints()
            .iter()
            .filter_map(|j| j.drive)
            .take(plots::MAX_TRACKS)
            .collect();
        let tracks = tracked
            .iter()
            .map(|&id| {
                let d = &model.drives()[id.0];
                let name = &model.joints()[d.joint.0].name;
                let (_, _, position) = drive_targets(&d.initial);
                let what = match (d.coordinate, position) {
                    (axion::constraints::drive::CoordinateKind::Angle, true) => "angle (rad)",
                    (axion::constraints::drive::CoordinateKind::Angle, false) => "rate (rad/s)",
                    (_, true) => "offset (m)",
                    (_, false) => "speed (m/s)",
                };
                Track {
                    label: format!("{name} {what}"),
                    ..Track::default()
                }
            })
            .collect();
        Ok(Self {
            dir: dir.to_path_buf(),
            csv,
            jsonl: create(dir.join("trajectory.jsonl"))?,
            joints,
            contact_log,
            collision,
            contacts: Vec::new(),
            series: Series {
                has_joints: !model.joints().is_empty(),
                has_contacts,
                tracks,
                integrator: integrator.to_string(),
                ..Series::default()
            },
            tracked,
            keys: Keyframes::default(),
            key_stride: ((1.0 / KEYS_PER_SECOND) / (dt * every as f64))
                .floor()
                .max(1.0) as usize,
            series_stride: 1,
        })
    }

    /// One row per body and world at the simulator's current time.
    /// `t` is given as k·dt: summing dt would print 1.500000000000001.
    /// `k` counts the records (0: the initial state; with `--every K` one record per K
    /// steps); `last` marks the final one.
    fn record(
        &mut self,
        sim: &Simulator,
        (k, last): (usize, bool),
        t: f64,
        stats: &[StepStats],
    ) -> Result<(), CliError> {
        let model = sim.model();
        if k.is_multiple_of(self.series_stride) || last {
            if self.series.t.len() >= plots::MAX_SAMPLES {
                self.series.thin();
                self.series_stride *= 2;
            }
            self.sample(sim, t, stats);
        }
        if k.is_multiple_of(self.key_stride) || last {
            let poses = (0..model.bodies().len())
                .map(|b| sim.state().body_pose(model, 0, axion::BodyId(b)))
                .collect();
            self.keys.push(t, poses);
        }
        for w in 0..sim.state().worlds() {
            for (b, body) in model.bodies().iter().enumerate() {
                let id = axion::BodyId(b);
                let pose = sim.state().body_pose(model, w, id);
                let (p, q) = (pose.translation.vector, pose.rotation.coords);
                let u = sim.state().velocity(w, id);
                let values = [
                    p.x, p.y, p.z, q.x, q.y, q.z, q.w, u[0], u[1], u[2], u[3], u[4], u[5],
                ];
                let row: Vec<String> = values.iter().map(|v| format!("{v}")).collect();
                writeln!(
                    self.csv.1,
                    "{t},{w},{},{}",
                    csv_field(&body.name),
                    row.join(",")
                )
                .map_err(io(&self.csv.0))?;
                let record = serde_json::json!({
                    "t": t, "world": w, "body": body.name,
                    "x": p.x, "y": p.y, "z": p.z, "qx": q.x, "qy": q.y, "qz": q.z, "qw": q.w,
                    "vx": u[0], "vy": u[1], "vz": u[2], "wx": u[3], "wy": u[4], "wz": u[5],
                    "stats": stats.get(w).map(stats_json),
                });
                writeln!(self.jsonl.1, "{record}").map_err(io(&self.jsonl.0))?;
            }
        }
        if let Some((path, file)) = self.joints.as_mut() {
            write_joints(file, sim, t).map_err(io(path))?;
        }
        if let Some((path, file)) = self.contact_log.as_mut()
            && k > 0
        {
            write_contacts(file, sim, t).map_err(io(path))?;
        }
        Ok(())
    }

    /// The plotted quantities of world 0 at time `t`.
    fn sample(&mut self, sim: &Simulator, t: f64, stats: &[StepStats]) {
        let energy = sim.energy(0);
        self.contacts.clear();
        self.collision.detect(
            sim.state().world_poses(0),
            PENETRATION_MARGIN,
            &mut self.contacts,
        );
        let s = &mut self.series;
        s.t.push(t);
        s.kinetic.push(energy.kinetic);
        s.potential.push(energy.potential);
        s.joint_error.push(sim.joint_errors(0).position);
        s.penetration
            .push(self.contacts.iter().map(|c| -c.gap).fold(0.0, f64::max));
        s.iterations
            .push(stats.iter().map(|s| s.iterations).max().unwrap_or(0) as f64);
        for (&drive, track) in self.tracked.iter().zip(s.tracks.iter_mut()) {
            let (_, target, position) = drive_targets(&sim.control().drive(0, drive));
            let joint = sim.model().drives()[drive.0].joint;
            let motion = sim
                .joint_motion(0, joint)
                .expect("a driven joint has a coordinate");
            track.value.push(if position {
                motion.position
            } else {
                motion.velocity
            });
            track.target.push(target);
        }
    }

    /// Flushes the trajectories, writes `summary.json`, then draws `animation.glb` and
    /// `plots.png`. A picture that cannot be drawn is a warning on standard error: the
    /// run's data and summary are written first and kept.
    fn finish(mut self, model: &Model, title: &str, summary: &Summary) -> Result<(), CliError> {
        self.csv.1.flush().map_err(io(&self.csv.0))?;
        self.jsonl.1.flush().map_err(io(&self.jsonl.0))?;
        for (path, file) in self.joints.iter_mut().chain(self.contact_log.iter_mut()) {
            file.flush().map_err(io(path))?;
        }
        let path = self.dir.join("summary.json");
        let text = serde_json::to_string_pretty(summary).expect("a summary serialises");
        std::fs::write(&path, text + "\n").map_err(io(&path))?;
        let pictures = [
            write_glb(model, &self.keys, &self.dir.join("animation.glb"), title),
            write_plots(&self.series, title, &self.dir.join("plots.png")),
        ];
        for e in pictures.into_iter().filter_map(Result::err) {
            eprintln!("warning: {e} (the trajectories and summary.json are written)");
        }
        Ok(())
    }
}

/// The rows of `joints.csv` at time `t`: every joint with a coordinate, every world.
fn write_joints(file: &mut BufWriter<File>, sim: &Simulator, t: f64) -> std::io::Result<()> {
    let model = sim.model();
    for w in 0..sim.state().worlds() {
        for (j, joint) in model.joints().iter().enumerate() {
            let Some(m) = sim.joint_motion(w, axion::JointId(j)) else {
                continue;
            };
            let ([target, target_velocity], force) = match joint.drive {
                Some(d) => (
                    drive_targets(&sim.control().drive(w, d)).0,
                    sim.drive_force(w, d).to_string(),
                ),
                None => ([String::new(), String::new()], String::new()),
            };
            writeln!(
                file,
                "{t},{w},{},{},{},{target},{target_velocity},{force}",
                csv_field(&joint.name),
                m.position,
                m.velocity
            )?;
        }
    }
    Ok(())
}

/// One line of `contacts.jsonl` per world for the step that ended at `t`: its
/// contacts with body names, point, normal (from body_b into body_a), gap, and the
/// normal and friction forces on body_a. A backend that keeps no contacts writes
/// `"contacts": null`.
fn write_contacts(file: &mut BufWriter<File>, sim: &Simulator, t: f64) -> std::io::Result<()> {
    let name = |b: axion::BodyId| sim.model().bodies()[b.0].name.as_str();
    let xyz = |v: nalgebra::Vector3<f64>| [v.x, v.y, v.z];
    for w in 0..sim.state().worlds() {
        let contacts = sim.contacts(w).map(|list| {
            list.iter()
                .map(|c| {
                    serde_json::json!({
                        "body_a": name(c.body_a), "body_b": name(c.body_b),
                        "point": xyz(c.point), "normal": xyz(c.normal), "gap": c.gap,
                        "normal_force": c.normal_force, "friction_force": xyz(c.friction_force),
                    })
                })
                .collect::<Vec<_>>()
        });
        let line = serde_json::json!({"t": t, "world": w, "contacts": contacts});
        writeln!(file, "{line}")?;
    }
    Ok(())
}

fn stats_json(s: &StepStats) -> serde_json::Value {
    serde_json::json!({
        "iterations": s.iterations, "chord_steps": s.chord_steps, "converged": s.converged, "dynamics": s.dynamics,
        "joints": s.joints, "drives": s.drives, "contacts": s.contacts, "friction": s.friction,
        "contact_count": s.contact_count, "backtracks": s.backtracks, "failed_solves": s.failed_solves,
        "substeps": s.substeps, "fallback_creep": s.fallback_creep,
    })
}

/// Most steps a run may take (10⁸: a day of wall time at 1 ms a step).
pub const MAX_STEPS: usize = 100_000_000;

/// The number of steps of a run of `duration` at step `dt`: refused below one step and
/// above [`MAX_STEPS`]; a duration that is not a whole number of steps (within 10⁻⁹) is
/// said on standard error, with the duration that will be simulated.
fn step_count(duration: f64, dt: f64) -> Result<usize, CliError> {
    let exact = duration / dt;
    let steps = exact.round();
    if !(1.0..=MAX_STEPS as f64).contains(&steps) {
        return Err(CliError::StepCount {
            duration,
            dt,
            steps: exact,
        });
    }
    if (exact - steps).abs() > 1e-9 * exact {
        eprintln!(
            "warning: a duration of {duration} s is not a whole number of {dt} s steps; simulating {} steps ({} s)",
            steps,
            steps * dt
        );
    }
    Ok(steps as usize)
}

fn positive(what: &'static str, value: f64) -> Result<f64, CliError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(CliError::InvalidSeconds { what, value })
    }
}

/// Runs a demo with its default step and duration (unless `options` override them).
pub fn run_demo(demo: &Demo, options: &RunOptions) -> Result<Summary, CliError> {
    run_model(
        demo.name,
        demo.model()?,
        demo.dt,
        demo.duration,
        &Inputs::default(),
        options,
    )
}

/// Runs a scene file: its own settings unless `options` override them (the number of
/// worlds from the command line wins when it is not 1), its solver settings, and its
/// drive schedules and applied forces.
pub fn run_scene(path: &Path, options: &RunOptions) -> Result<Summary, CliError> {
    let scene = axion::load_scene(path)?;
    print_warnings(&scene.warnings);
    let s = &scene.settings;
    let mut options = options.clone();
    options.worlds = options.worlds.or(Some(s.worlds));
    options.backend = scene_backend(s, options.backend)?;
    let name = path
        .file_stem()
        .map_or("scene".into(), |n| n.to_string_lossy().into_owned());
    run_model(
        &name,
        scene.model,
        s.dt,
        s.duration,
        &Inputs {
            schedules: &scene.schedules,
            forces: &scene.forces,
            file: Some(path),
            robot: None,
        },
        &options,
    )
}

/// The backend that runs a scene, given the one the command line asks for: the file's
/// `backend = "cpu"` unless the command line names one, and the file's integrator and
/// `[simulation.solver]` settings on the backend chosen. Under `auto` a scene with
/// solver settings or the energy-momentum integrator runs on the CPU; the GPU has no
/// energy-momentum integrator ([`CliError::IntegratorWithoutCpu`]).
pub fn scene_backend(
    s: &axion::SceneSettings,
    mut backend: BackendChoice,
) -> Result<BackendChoice, CliError> {
    let energy_momentum = s.integrator == "energy-momentum";
    let overrides = s.solver != axion::SolverOverrides::default();
    // The file's `backend = "cpu"` stands unless the command line names a backend.
    if s.backend == "cpu" && matches!(backend, BackendChoice::Auto) {
        backend = BackendChoice::Cpu;
    }
    Ok(match backend {
        BackendChoice::Auto | BackendChoice::Cpu if energy_momentum || overrides => {
            BackendChoice::CpuWith(solver_settings(s, SolverSettings::default()))
        }
        BackendChoice::CpuWith(base) => BackendChoice::CpuWith(solver_settings(s, base)),
        BackendChoice::Gpu | BackendChoice::GpuWith(_) if energy_momentum => {
            return Err(CliError::IntegratorWithoutCpu {
                integrator: s.integrator.clone(),
            });
        }
        BackendChoice::Gpu | BackendChoice::GpuWith(_) if !s.solver.cpu_only().is_empty() => {
            return Err(CliError::SettingWithoutCpu {
                settings: s.solver.cpu_only().join(", "),
            });
        }
        BackendChoice::Gpu if overrides => {
            BackendChoice::GpuWith(gpu_settings(s, GpuSettings::default()))
        }
        BackendChoice::GpuWith(base) => BackendChoice::GpuWith(gpu_settings(s, base)),
        other => other,
    })
}

/// The CPU solver settings a scene asks for: its integrator (where it names the
/// energy-momentum one) and its `[simulation.solver]` values over `base`.
pub fn solver_settings(s: &axion::SceneSettings, base: SolverSettings) -> SolverSettings {
    let mut settings = base;
    if s.integrator == "energy-momentum" {
        settings.integrator = axion::Integrator::EnergyMomentum;
    }
    let o = &s.solver;
    settings.max_iterations = o.max_iterations.unwrap_or(settings.max_iterations);
    settings.velocity_tolerance = o.velocity_tolerance.unwrap_or(settings.velocity_tolerance);
    settings.position_tolerance = o.position_tolerance.unwrap_or(settings.position_tolerance);
    settings.contact_tolerance = o.contact_tolerance.unwrap_or(settings.contact_tolerance);
    settings.contact_margin = o.contact_margin.unwrap_or(settings.contact_margin);
    settings.friction_creep = o.friction_creep.unwrap_or(settings.friction_creep);
    settings.recovery_speed = o.recovery_speed.unwrap_or(settings.recovery_speed);
    settings.recovery_rate = o.recovery_rate.unwrap_or(settings.recovery_rate);
    settings.fallback_creep = o.fallback_creep.unwrap_or(settings.fallback_creep);
    settings.split_depth = o.split_depth.unwrap_or(settings.split_depth);
    settings.contact_smoothing = o.contact_smoothing.unwrap_or(settings.contact_smoothing);
    settings.contact_compliance = o.contact_compliance.unwrap_or(settings.contact_compliance);
    settings.row_margin = o.row_margin.unwrap_or(settings.row_margin);
    settings.compliant_retries = o.compliant_retries.unwrap_or(settings.compliant_retries);
    settings.abandon_after = o.abandon_after.unwrap_or(settings.abandon_after);
    settings
}

/// The GPU settings a scene asks for: its `[simulation.solver]` values over `base`.
/// The fields mean the same on both backends; the GPU computes in f32, so tolerances
/// below what f32 reaches (docs/gpu.md) leave its steps unconverged, which the run's
/// summary reports.
pub fn gpu_settings(s: &axion::SceneSettings, base: GpuSettings) -> GpuSettings {
    let o = &s.solver;
    GpuSettings {
        max_iterations: o.max_iterations.unwrap_or(base.max_iterations),
        velocity_tolerance: o.velocity_tolerance.unwrap_or(base.velocity_tolerance),
        position_tolerance: o.position_tolerance.unwrap_or(base.position_tolerance),
        contact_tolerance: o.contact_tolerance.unwrap_or(base.contact_tolerance),
        contact_margin: o.contact_margin.unwrap_or(base.contact_margin),
        friction_creep: o.friction_creep.unwrap_or(base.friction_creep),
        fallback_creep: o.fallback_creep.unwrap_or(base.fallback_creep),
        ..base
    }
}

/// Friction of the ground under a robot run straight from its URDF file.
pub const URDF_GROUND_FRICTION: f64 = 0.8;

/// Time step and duration (s) of a robot run straight from its URDF file.
pub const URDF_RUN: (f64, f64) = (0.01, 3.0);

/// The robot corpus's folder (pybullet 3.2.7's `pybullet_data/` is fetched into it by
/// `scripts/fetch-corpus.sh`): `AXION_CORPUS` if set, else `corpus/` of this checkout.
pub fn corpus_root() -> PathBuf {
    std::env::var_os("AXION_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus"),
        PathBuf::from,
    )
}

/// How a URDF file is set up when it is run or checked on its own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RobotSetup {
    /// Bolt the root link to the world at the origin.
    pub fixed_base: bool,
    /// Folders searched for `package://` names (before `ROS_PACKAGE_PATH`).
    pub package_paths: Vec<PathBuf>,
    /// Let the robot's links collide with each other ([`axion::RobotOptions::self_collision`]).
    pub self_collision: bool,
    /// Start coordinates of joints by name (rad or m;
    /// [`axion::RobotOptions::initial_positions`]).
    pub initial_positions: std::collections::HashMap<String, f64>,
    /// Hold the start pose: a position drive on every revolute and prismatic joint
    /// ([`holding_drives`]), replacing an MJCF file's actuators on those joints.
    pub hold: Option<Hold>,
}

impl RobotSetup {
    /// Whether anything differs from the default setup (a scene file's robots say these
    /// themselves, so a scene refuses them).
    pub fn any_given(&self) -> bool {
        self != &Self::default()
    }

    /// The setup for `summary.json`: `fixed_base`, `self_collision`, `package_paths`,
    /// `initial_positions` and `hold` (`null`, `"scaled"` or `{"ke": …, "kd": …}`).
    pub fn record(&self) -> serde_json::Value {
        let hold = match self.hold {
            None => serde_json::Value::Null,
            Some(Hold::Scaled) => "scaled".into(),
            Some(Hold::Gains { ke, kd }) => serde_json::json!({ "ke": ke, "kd": kd }),
        };
        serde_json::json!({
            "fixed_base": self.fixed_base,
            "self_collision": self.self_collision,
            "package_paths": self
                .package_paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>(),
            "initial_positions": self.initial_positions,
            "hold": hold,
        })
    }
}

/// The gains of the drives that hold a robot in its start pose ([`holding_drives`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hold {
    /// Gains scaled to the robot: on every joint
    /// $k_e = M g_0 \ell / \theta_s$ (N·m/rad) for a revolute joint and
    /// $k_e = M g_0 / (\theta_s \ell)$ (N/m) for a prismatic one, with $M$ the robot's
    /// mass, $g_0$ = [`STANDARD_GRAVITY`], $\ell$ its size (the diagonal of the box
    /// around its bodies' centres of mass and its joints' anchors in the start pose) and
    /// $\theta_s$ = [`HOLD_SAG`]: a joint carrying the whole robot's weight at a lever of
    /// the robot's size gives way by $\theta_s$ rad (or $\theta_s \ell$ m); and
    /// $k_d = k_e\,\tau$ with $\tau$ = [`HOLD_TIME`].
    Scaled,
    /// The same stiffness `ke` (N·m/rad or N/m) and damping `kd` (N·m·s/rad or N·s/m)
    /// on every joint.
    Gains {
        /// Stiffness.
        ke: f64,
        /// Damping.
        kd: f64,
    },
}

impl Hold {
    /// The hold a run asks for: with `gains` (stiffness, damping) those on every
    /// joint, else with `scaled` the gains scaled to the robot, else none. Gains must be
    /// finite and non-negative, not both zero.
    pub fn from_options(scaled: bool, gains: Option<(f64, f64)>) -> Result<Option<Self>, CliError> {
        match gains {
            Some((ke, kd)) => {
                let valid = |g: f64| g.is_finite() && g >= 0.0;
                if valid(ke) && valid(kd) && (ke > 0.0 || kd > 0.0) {
                    Ok(Some(Hold::Gains { ke, kd }))
                } else {
                    Err(CliError::InvalidHoldGains { ke, kd })
                }
            }
            None => Ok(scaled.then_some(Hold::Scaled)),
        }
    }
}

/// $g_0$ (m/s²) of [`Hold::Scaled`]: the gains do not depend on the model's gravity.
pub const STANDARD_GRAVITY: f64 = 9.80665;

/// $\theta_s$ of [`Hold::Scaled`]: how far (rad) a joint gives way under the robot's
/// weight at a lever of the robot's size.
pub const HOLD_SAG: f64 = 0.05;

/// $\tau = k_d / k_e$ (s) of [`Hold::Scaled`]: where the inertia $I$ a joint moves is
/// below $k_d\tau/4$ the joint returns to its target overdamped, within about $\tau$;
/// heavier, it rings (damping ratio $\tau\sqrt{k_e/I}/2$).
pub const HOLD_TIME: f64 = 0.02;

/// Position drives that hold every revolute and prismatic joint of an imported robot
/// at its coordinate in `model`'s start pose (its description's, moved into the
/// joint's range), with target velocity 0 and the gains `hold` gives, by the file's
/// joint name (as [`axion::RobotOptions::drives`] takes them). The import bounds each
/// by the joint's effort limit.
pub fn holding_drives(
    model: &Model,
    imported: &axion::ImportedRobot,
    hold: Hold,
) -> Result<std::collections::HashMap<String, DriveDesc>, ModelError> {
    let state = axion::State::new(model, 1)?;
    let poses = state.world_poses(0);
    // (ke, kd) for an angle and for a displacement.
    let (angle, offset) = match hold {
        Hold::Gains { ke, kd } => ((ke, kd), (ke, kd)),
        Hold::Scaled => {
            let dynamic = || model.bodies().iter().filter(|b| b.is_dynamic());
            let weight = dynamic().map(|b| b.mass.mass()).sum::<f64>() * STANDARD_GRAVITY;
            let anchors = model
                .joints()
                .iter()
                .map(|j| (poses[j.child.0] * j.joint.frames.child).translation.vector);
            let (lo, hi) = dynamic()
                .map(|b| b.initial_pose.translation.vector)
                .chain(anchors)
                .fold(
                    (
                        nalgebra::Vector3::repeat(f64::INFINITY),
                        nalgebra::Vector3::repeat(f64::NEG_INFINITY),
                    ),
                    |(lo, hi), p| (lo.inf(&p), hi.sup(&p)),
                );
            // At least 1 mm: a robot whose points all coincide still gets finite gains.
            let size = (hi - lo).norm().max(1e-3);
            let ke_angle = weight * size / HOLD_SAG;
            let ke_offset = weight / (HOLD_SAG * size);
            (
                (ke_angle, ke_angle * HOLD_TIME),
                (ke_offset, ke_offset * HOLD_TIME),
            )
        }
    };
    Ok(imported
        .joints
        .iter()
        .filter_map(|(name, &joint)| {
            let (kind, _) = model.joints()[joint.0].coordinate()?;
            let q = axion::joint_motion(model, &state, 0, joint)?.position;
            let (ke, kd) = match kind {
                axion::constraints::drive::CoordinateKind::Angle => angle,
                axion::constraints::drive::CoordinateKind::Displacement => offset,
            };
            Some((
                name.clone(),
                DriveDesc::Position {
                    target: q,
                    target_velocity: 0.0,
                    ke,
                    kd,
                },
            ))
        })
        .collect())
}

/// A URDF or MJCF robot on flat ground (a half-space, μ = [`URDF_GROUND_FRICTION`], also
/// the robot's friction), without drives (an MJCF file's actuators are drives) unless
/// the setup [holds](RobotSetup::hold) the start pose. With
/// `fixed_base` the root link is bolted to the world at the origin and the ground is at
/// z = 0, or 1 mm below the lowest point of the moving links if they reach lower;
/// otherwise the robot stands on the ground at z = 0 with its lowest point 1 mm above
/// it. A model with a ground of its own (a static half-space: an MJCF floor plane) is
/// taken as written, with no ground added; an MJCF file's gravity is applied. Meshes
/// are found relative to the file and on the setup's package paths. Joints described
/// outside their range start at the nearest end of it
/// ([`axion::RobotOptions::start_in_range`]). Returns the model and what the import
/// found (its warnings included).
pub fn robot_model(
    path: &Path,
    setup: &RobotSetup,
) -> Result<(Model, axion::ImportedRobot), CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let import = |base_height: f64,
                  ground: Option<f64>,
                  drives: &std::collections::HashMap<String, DriveDesc>| {
        let mut b = axion::ModelBuilder::new();
        if let Some(z) = ground {
            let plane = axion::ShapeDesc::from_geometry(axion::Geometry::HalfSpace {
                normal: nalgebra::Vector3::z(),
            })
            .material(axion::Material {
                friction: URDF_GROUND_FRICTION,
                ..Default::default()
            });
            b.add_body(
                axion::BodyDesc::fixed("ground")
                    .at(nalgebra::Vector3::new(0.0, 0.0, z))
                    .shape(plane),
            )?;
        }
        let options = axion::RobotOptions {
            base_pose: nalgebra::Isometry3::translation(0.0, 0.0, base_height),
            fixed_base: setup.fixed_base,
            friction: URDF_GROUND_FRICTION,
            file: Some(path.to_path_buf()),
            package_paths: setup.package_paths.clone(),
            self_collision: setup.self_collision,
            initial_positions: setup.initial_positions.clone(),
            start_in_range: true,
            drives: drives.clone(),
            ..Default::default()
        };
        let imported = match axion::import::RobotFormat::sniff(&text) {
            Some(axion::import::RobotFormat::Mjcf) => axion::import_mjcf(&text, &options, &mut b)?,
            _ => axion::import_urdf(&text, &options, &mut b)?,
        };
        if let Some(g) = imported.gravity {
            b.gravity(g)?;
        }
        Ok::<_, CliError>((b.build()?, imported))
    };
    // The lowest point of the robot's moving shapes (or centres of mass) as described,
    // and the drives that hold its start pose.
    let (robot, imported) = import(0.0, None, &std::collections::HashMap::new())?;
    let drives = match setup.hold {
        Some(hold) => holding_drives(&robot, &imported, hold)?,
        None => std::collections::HashMap::new(),
    };
    let own_ground = robot.bodies().iter().any(|b| {
        !b.is_dynamic()
            && b.shapes
                .iter()
                .any(|s| matches!(s.geometry, axion::Geometry::HalfSpace { .. }))
    });
    let held = |(model, mut imported): (Model, axion::ImportedRobot)| {
        let free: Vec<&str> = model
            .joints()
            .iter()
            .filter(|j| matches!(j.joint.kind, axion::constraints::joint::JointKind::Ball))
            .map(|j| j.name.as_str())
            .collect();
        if setup.hold.is_some() && !free.is_empty() {
            imported.warnings.push(axion::ImportWarning {
                at: axion::import::Location {
                    file: Some(path.to_path_buf()),
                    line: None,
                },
                message: format!(
                    "holding the start pose drives revolute and prismatic joints only: {} ball joint(s) are left free ({})",
                    free.len(),
                    free.join(", ")
                ),
            });
        }
        (model, imported)
    };
    if own_ground {
        return Ok(held(if drives.is_empty() {
            (robot, imported)
        } else {
            import(0.0, None, &drives)?
        }));
    }
    let mut lowest = f64::INFINITY;
    for body in robot.bodies().iter().filter(|b| b.is_dynamic()) {
        let pose = body.reference_pose(&body.initial_pose);
        lowest = lowest.min(body.initial_pose.translation.z);
        for shape in &body.shapes {
            let mesh = visual_mesh(&shape.geometry).map_err(|reason| CliError::Picture {
                what: format!("a shape of body {:?}", body.name),
                reason,
            })?;
            for v in &mesh.positions {
                lowest = lowest.min((pose * shape.local_pose * v).z);
            }
        }
    }
    let fixed_base = imported.fixed_base;
    Ok(held(if fixed_base {
        import(0.0, Some(0.0f64.min(lowest - 1e-3)), &drives)?
    } else {
        import(1e-3 - lowest, Some(0.0), &drives)?
    }))
}

/// Prints an import's warnings on standard error, one a line.
pub fn print_warnings(warnings: &[axion::ImportWarning]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}

/// Runs a URDF robot as [`robot_model`] sets it up ([`URDF_RUN`] unless `options` say
/// otherwise), after printing the import's warnings.
pub fn run_robot(
    path: &Path,
    setup: &RobotSetup,
    options: &RunOptions,
) -> Result<Summary, CliError> {
    let (model, imported) = robot_model(path, setup)?;
    print_warnings(&imported.warnings);
    let name = path
        .file_stem()
        .map_or("robot".into(), |n| n.to_string_lossy().into_owned());
    run_model(
        &name,
        model,
        URDF_RUN.0,
        URDF_RUN.1,
        &Inputs {
            file: Some(path),
            robot: Some(setup),
            ..Inputs::default()
        },
        options,
    )
}

/// Checks a URDF robot: builds it as [`robot_model`] does and describes it — the
/// import's warnings (repairs, merges, elements not simulated), one line a warning,
/// then a summary of the robot and of the model.
pub fn check_robot(path: &Path, setup: &RobotSetup) -> Result<String, CliError> {
    let (m, imported) = robot_model(path, setup)?;
    Simulator::new(m.clone(), 1, URDF_RUN.0, BackendChoice::Auto)?;
    let mut text = String::new();
    for w in &imported.warnings {
        text.push_str(&format!("warning: {w}\n"));
    }
    for (a, b) in &imported.touching {
        text.push_str(&format!(
            "self-collision: {a:?} and {b:?} touch in the initial pose and do not collide\n"
        ));
    }
    if setup.hold.is_some() {
        for d in m.drives() {
            if let axion::constraints::drive::DriveMode::Position { target, .. } = d.initial.mode()
            {
                let (unit, per) = match d.coordinate {
                    axion::constraints::drive::CoordinateKind::Angle => ("rad", "N·m"),
                    axion::constraints::drive::CoordinateKind::Displacement => ("m", "N"),
                };
                text.push_str(&format!(
                    "hold: joint {:?} at {target:.6} {unit}, ke {:.4e} {per}/{unit}, kd {:.4e} {per}·s/{unit}, at most {:.4e} {per}\n",
                    m.joints()[d.joint.0].name,
                    d.initial.ke(),
                    d.initial.kd(),
                    d.initial.max_force(),
                ));
            }
        }
    }
    text.push_str(&format!(
        "{}\n",
        axion::initial_state(&m).map_err(SimError::from)?
    ));
    text.push_str(&format!(
        "{}: ok — {}; {} bodies (with the ground), {} joints ({} rows), {} joint ranges, {} dampers, {} armatures, {} motors",
        path.display(),
        imported.summary(),
        m.bodies().len(),
        m.joints().len(),
        m.joint_row_count(),
        m.joints().iter().filter(|j| j.range().is_some()).count(),
        m.joints().iter().filter(|j| j.damper.is_some()).count(),
        m.joints().iter().filter(|j| j.armature.is_some()).count(),
        m.drives()
            .iter()
            .filter(|d| d.initial.mode() == axion::constraints::drive::DriveMode::Force)
            .count(),
    ));
    Ok(text)
}

/// Whether `path` names a robot file: URDF (`.urdf`, or XML whose root is `<robot>`) or
/// MJCF (XML whose root is `<mujoco>`).
pub fn is_robot(path: &Path) -> bool {
    axion::import::RobotFormat::of_file(path).is_some()
}

/// Checks a scene file: builds its model and collision shapes without running it, and
/// describes what it found.
pub fn check_scene(path: &Path) -> Result<String, CliError> {
    let scene = axion::load_scene(path)?;
    let m = &scene.model;
    let warnings: String = scene
        .warnings
        .iter()
        .map(|w| format!("warning: {w}\n"))
        .collect();
    Simulator::new(
        m.clone(),
        scene.settings.worlds,
        scene.settings.dt,
        BackendChoice::Auto,
    )?;
    let initial = axion::initial_state(m).map_err(SimError::from)?;
    Ok(format!(
        "{warnings}{initial}\n{}: ok — {} bodies, {} joints ({} rows), {} drives; dt {} s, duration {} s, {} world(s)",
        path.display(),
        m.bodies().len(),
        m.joints().len(),
        m.joint_row_count(),
        m.drives().len(),
        scene.settings.dt,
        scene.settings.duration,
        scene.settings.worlds
    ))
}

/// Bytes the trajectories take per body and recorded step (trajectory.csv and .jsonl,
/// measured: 800 to 880 on the demos), and per joint with a coordinate (joints.csv).
const BYTES_PER_BODY_ROW: u64 = 850;
const BYTES_PER_JOINT_ROW: u64 = 80;

/// Runs that would write more than this many bytes are announced before they start.
pub const LARGE_OUTPUT: u64 = 1_000_000_000;

/// About how many bytes the files of a run of `steps` steps of `worlds` worlds of
/// `model` take (the trajectories and joints.csv; contacts.jsonl not counted).
pub fn output_estimate(model: &Model, steps: usize, worlds: usize) -> u64 {
    let rows = (steps as u64 + 1) * worlds as u64;
    let joints = model
        .joints()
        .iter()
        .filter(|j| j.coordinate().is_some())
        .count() as u64;
    rows * (model.bodies().len() as u64 * BYTES_PER_BODY_ROW + joints * BYTES_PER_JOINT_ROW)
}

/// What a scene feeds a run besides its model: drive targets over time and forces.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs<'a> {
    /// Drive schedules, applied before each step at the step's end time.
    pub schedules: &'a [axion::DriveSchedule],
    /// Forces and torques on bodies ([`axion::AppliedForce`]).
    pub forces: &'a [axion::AppliedForce],
    /// The file the model came from, for the summary.
    pub file: Option<&'a Path>,
    /// How a robot file was set up, for the summary.
    pub robot: Option<&'a RobotSetup>,
}

/// The settings of the solver a backend choice runs, for `summary.json`: the backend,
/// iteration limit, tolerances (m/s, m or rad), contact margin (m) and, on the CPU,
/// worker threads (0: one per core).
pub fn solver_record(choice: BackendChoice) -> serde_json::Value {
    match choice {
        BackendChoice::Gpu | BackendChoice::GpuWith(_) => {
            let g = match choice {
                BackendChoice::GpuWith(g) => g,
                _ => GpuSettings::default(),
            };
            serde_json::json!({
                "backend": "gpu", "max_iterations": g.max_iterations,
                "velocity_tolerance": g.velocity_tolerance, "position_tolerance": g.position_tolerance,
                "contact_tolerance": g.contact_tolerance, "contact_margin": g.contact_margin,
                "max_linear_iterations": g.max_linear_iterations, "linear_tolerance": g.linear_tolerance,
                "friction_creep": g.friction_creep, "fallback_creep": g.fallback_creep,
                "tree_solve": g.tree_solve,
            })
        }
        _ => {
            let c = match choice {
                BackendChoice::CpuWith(c) => c,
                _ => SolverSettings::default(),
            };
            serde_json::json!({
                "backend": "cpu", "max_iterations": c.max_iterations,
                "velocity_tolerance": c.velocity_tolerance, "position_tolerance": c.position_tolerance,
                "contact_tolerance": c.contact_tolerance, "contact_margin": c.contact_margin,
                "contact_persistence": c.contact_persistence, "reuse_factors": c.reuse_factors,
                "threads": c.threads,
                "friction_creep": c.friction_creep, "recovery_speed": c.recovery_speed,
                "recovery_rate": c.recovery_rate, "tree_solve": c.tree_solve, "split_depth": c.split_depth, "fallback_creep": c.fallback_creep,
                "keep_fallback_creep": c.keep_fallback_creep,
                "contact_smoothing": c.contact_smoothing, "contact_compliance": c.contact_compliance,
                "row_margin": c.row_margin, "compliant_retries": c.compliant_retries,
                "abandon_after": c.abandon_after,
            })
        }
    }
}

/// The bodies `forces` push, each once.
fn pushed_bodies(forces: &[axion::AppliedForce]) -> Vec<axion::BodyId> {
    let mut bodies: Vec<axion::BodyId> = forces.iter().map(|f| f.body).collect();
    bodies.sort_by_key(|b| b.0);
    bodies.dedup();
    bodies
}

/// Sets the wrench of each of `bodies` (those `forces` push), in every world, to the
/// sum of its forces during the step that ends at `t`.
fn apply_forces(
    sim: &mut Simulator,
    forces: &[axion::AppliedForce],
    bodies: &[axion::BodyId],
    t: f64,
) {
    for w in 0..sim.state().worlds() {
        for &b in bodies {
            let (mut force, mut torque) = (nalgebra::Vector3::zeros(), nalgebra::Vector3::zeros());
            let pose = sim.state().com_pose(w, b);
            for f in forces.iter().filter(|f| f.body == b) {
                let (fi, ti) = f.wrench_at(t, &sim.model().bodies()[b.0], &pose);
                force += fi;
                torque += ti;
            }
            sim.control_mut().set_wrench(w, b, force, torque);
        }
    }
}

/// The integrator a backend choice steps with, in words: the CPU backend's setting
/// (steps with contacts or active joint ranges always use backward Euler), backward
/// Euler on the GPU.
pub fn integrator_name(choice: BackendChoice) -> &'static str {
    let settings = match choice {
        BackendChoice::CpuWith(s) => s,
        _ => SolverSettings::default(),
    };
    match settings.integrator {
        axion::Integrator::BackwardEuler => "backward Euler",
        axion::Integrator::EnergyMomentum => "energy–momentum",
    }
}

/// Runs a model: steps it with a progress bar (after the first second of wall time, on
/// a terminal), sets the scheduled drive targets before each step (their values at the
/// step's end time, where the implicit step evaluates the drive law), writes the
/// outputs, and returns the summary.
pub fn run_model(
    name: &str,
    model: Model,
    dt: f64,
    duration: f64,
    inputs: &Inputs,
    options: &RunOptions,
) -> Result<Summary, CliError> {
    let dt = positive("--dt", options.dt.unwrap_or(dt))?;
    let duration = positive("--duration", options.duration.unwrap_or(duration))?;
    let steps = step_count(duration, dt)?;
    let every = match options.every {
        0 => return Err(CliError::EveryZero),
        1 => 1,
        n if inputs.schedules.is_empty() && inputs.forces.is_empty() => n,
        every => return Err(CliError::EveryWithInputs { every }),
    };
    let backend = with_threads(options.backend, options.threads)?;
    let worlds = options.worlds.unwrap_or(1);
    if let Some(dir) = options.out.as_deref() {
        let looks = steps.div_ceil(every);
        let bytes = output_estimate(&model, looks, worlds);
        if bytes > LARGE_OUTPUT {
            eprintln!(
                "note: this run will write about {:.1} GB into {} ({} looks × {worlds} world(s) × {} bodies); Ctrl-C ends it early with every file complete",
                bytes as f64 / 1e9,
                dir.display(),
                looks + 1,
                model.bodies().len()
            );
        }
    }
    let mut sim = Simulator::new(model, worlds, dt, backend)?;
    // What `Auto` chose, for the integrator and solver settings the summary names.
    let backend = match backend {
        BackendChoice::Auto if sim.backend_name().starts_with("gpu") => BackendChoice::Gpu,
        other => other,
    };
    let integrator = integrator_name(backend);
    let pushed = pushed_bodies(inputs.forces);
    let mut outputs = match options.out.as_deref() {
        Some(dir) => Some(Outputs::new(
            dir,
            sim.model(),
            (dt, every),
            integrator,
            options.contacts,
        )?),
        None => None,
    };
    if let Some(out) = outputs.as_mut() {
        out.record(&sim, (0, false), 0.0, &[])?;
    }
    let initial = axion::initial_state(sim.model()).map_err(SimError::from)?;
    let start = Instant::now();
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(steps as u64),
        indicatif::ProgressDrawTarget::hidden(),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} steps, {elapsed} elapsed, {eta} left",
        )
        .expect("valid template"),
    );
    let (mut iterations, mut max_iterations, mut converged, mut max_contacts) =
        (0usize, 0, 0usize, 0);
    let mut crept = 0;
    let mut max_error = (0..worlds)
        .map(|w| sim.joint_errors(w).position)
        .fold(0.0, f64::max);
    let mut energy = sim.energy(0);
    let exchange = axion::exchange_scale(sim.model());
    let (mut rises, mut largest_rise) = (0usize, (0.0f64, 0.0f64));
    let (mut taken, mut looks) = (0, 0);
    while taken < steps {
        if STOP.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        // With schedules or forces `every` is 1: they are set before each step, at the
        // step's end time.
        let t_end = (taken + 1) as f64 * dt;
        for schedule in inputs.schedules {
            for w in 0..worlds {
                schedule
                    .apply(sim.control_mut(), w, t_end)
                    .map_err(CliError::Schedule)?;
            }
        }
        apply_forces(&mut sim, inputs.forces, &pushed, t_end);
        let block = every.min(steps - taken);
        let run = sim.run_every(block, block, |_| ControlFlow::Continue(()))?;
        taken += run.steps;
        looks += 1;
        iterations += run.iterations;
        max_iterations = max_iterations.max(run.max_iterations);
        converged += run.converged_world_steps;
        crept += run.fallback_creep_world_steps;
        let report = sim.last_report().clone();
        for s in &report.worlds {
            max_contacts = max_contacts.max(s.contact_count);
        }
        for w in 0..worlds {
            max_error = max_error.max(sim.joint_errors(w).position);
        }
        let t = taken as f64 * dt;
        let now = sim.energy(0);
        let scale = energy.scale(&now, exchange);
        let rise = (now.total() - energy.total()) / scale;
        if scale > 0.0 && rise > ENERGY_RISE {
            rises += 1;
            if rise > largest_rise.0 {
                largest_rise = (rise, t);
            }
        }
        energy = now;
        if let Some(out) = outputs.as_mut() {
            out.record(
                &sim,
                (
                    looks,
                    taken == steps || STOP.load(std::sync::atomic::Ordering::SeqCst),
                ),
                t,
                &report.worlds,
            )?;
        }
        if options.progress && bar.is_hidden() && start.elapsed() > Duration::from_secs(1) {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        bar.set_position(taken as u64);
    }
    bar.finish_and_clear();
    let world_steps = (taken.max(1) * worlds) as f64;
    let wall = start.elapsed().as_secs_f64();
    let summary = Summary {
        demo: name.to_string(),
        backend: format!("{} ({})", sim.backend_name(), sim.backend_reason()),
        integrator: integrator.to_string(),
        file: inputs.file.map(|p| p.display().to_string()),
        robot: inputs.robot.map(RobotSetup::record),
        solver: solver_record(backend),
        dt,
        steps: taken,
        worlds,
        simulated: taken as f64 * dt,
        wall,
        real_time_factor: taken as f64 * dt / wall.max(1e-12),
        mean_iterations: iterations as f64 / world_steps,
        max_iterations,
        converged_share: converged as f64 / world_steps,
        unconverged_world_steps: taken * worlds - converged,
        fallback_creep_share: crept as f64 / world_steps,
        max_joint_error: max_error,
        max_contacts,
        initial_state: initial.to_string(),
        energy_rise_steps: rises,
        largest_energy_rise: largest_rise,
        every,
        interrupted: taken < steps,
        program: format!("{} {}", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
        finished_utc: utc(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())),
    };
    if let Some(out) = outputs {
        let dt_text = format!("{dt:.6}");
        let dt_text = dt_text.trim_end_matches('0').trim_end_matches('.');
        let title = format!("{name}: {steps} steps of {dt_text} s, {integrator}");
        out.finish(sim.model(), &title, &summary)?;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dates of known instants (checked with Python's datetime): the epoch, a leap day,
    /// a day of 2026, the last second of 2099.
    #[test]
    fn utc_dates_are_civil_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_795_617_296), "2026-11-25T14:34:56Z");
        assert_eq!(utc(4_102_444_799), "2099-12-31T23:59:59Z");
    }

    /// A long run keeps a bounded series: 45 000 steps leave between half and all of
    /// [`plots::MAX_SAMPLES`] samples, in time order, ending at the last step.
    #[test]
    fn the_plotted_series_stays_bounded() {
        let dir = std::env::temp_dir().join(format!("axion-bounded-{}", std::process::id()));
        let mut sim =
            Simulator::new(scenes::pendulum().unwrap(), 1, 1e-4, BackendChoice::Cpu).unwrap();
        let mut out = Outputs::new(&dir, sim.model(), (1e-4, 1), "backward Euler", false).unwrap();
        let steps = 45_000;
        for k in 0..steps {
            let report = sim.step().unwrap().clone();
            let t = (k + 1) as f64 * 1e-4;
            out.record(&sim, (k + 1, k + 1 == steps), t, &report.worlds)
                .unwrap();
        }
        let t = &out.series.t;
        assert!(
            (plots::MAX_SAMPLES / 2..=plots::MAX_SAMPLES).contains(&t.len()),
            "{}",
            t.len()
        );
        assert!(t.windows(2).all(|w| w[0] < w[1]));
        assert!((t.last().unwrap() - 4.5).abs() < 1e-9);
        assert_eq!(out.series.kinetic.len(), t.len());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The plotted penetration is the current one, measured afresh at every step: a
    /// stack of equal cubes at rest reads below 1e-9 m at every step. (Before the
    /// face-corner completion of box manifolds, parry dropped a shared corner at
    /// t = 2.61 s and that corner sank 2.7e-7 m for one step.)
    #[test]
    fn plotted_penetration_is_measured_each_step() {
        let dir = std::env::temp_dir().join(format!("axion-series-{}", std::process::id()));
        let model = scenes::stack(5).unwrap();
        let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::Cpu).unwrap();
        let mut out = Outputs::new(&dir, sim.model(), (0.01, 1), "backward Euler", false).unwrap();
        for k in 0..300 {
            let report = sim.step().unwrap().clone();
            out.record(&sim, (k + 1, false), (k + 1) as f64 * 0.01, &report.worlds)
                .unwrap();
        }
        let s = &out.series;
        assert_eq!(s.t.len(), 300);
        let deep: Vec<usize> = (0..s.t.len())
            .filter(|&k| s.penetration[k] > 1e-9)
            .collect();
        assert!(
            deep.is_empty(),
            "penetration above 1e-9 m at steps {deep:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
