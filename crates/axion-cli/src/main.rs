//! `axion`: run built-in scenes and scene files of axion-rs and write what happened.
//!
//! ```text
//! axion demo                      # the double pendulum, summary on stdout
//! axion demo --list               # the demos
//! axion demo stack --dt 0.05 --duration 10 --out results
//! axion check scene.toml          # validate a scene file without running it
//! axion run scene.toml --out results
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use axion::BackendChoice;
use axion_cli::{
    CliError, DEMOS, Hold, RobotSetup, RunOptions, Summary, check_robot, check_scene, find,
    is_robot, run_demo, run_robot, run_scene,
};
use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "axion",
    version,
    about = "Implicit rigid-body simulation with exact joints, contacts and friction"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a built-in scene (no files needed).
    Demo {
        /// Which demo (see --list); the double pendulum by default.
        name: Option<String>,
        /// List the demos and exit.
        #[arg(long)]
        list: bool,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Run a scene file (TOML, or JSON with a .json extension; see docs/scenes.md), or a
    /// URDF or MJCF robot on flat ground, limp or (--hold) holding its start pose.
    Run {
        /// The scene file, or the URDF or MJCF robot.
        scene: PathBuf,
        #[command(flatten)]
        robot: RobotArgs,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Validate a scene file (TOML or JSON) or a URDF or MJCF robot without running it.
    Check {
        /// The scene file, or the URDF or MJCF robot.
        scene: PathBuf,
        #[command(flatten)]
        robot: RobotArgs,
    },
}

#[derive(Args)]
struct RobotArgs {
    /// A URDF robot's root link is bolted to the world at the origin (otherwise the
    /// robot stands on the ground, its lowest point 1 mm above it; a root link named
    /// `world` is bolted down either way).
    #[arg(long)]
    fixed_base: bool,
    /// A folder searched for a URDF's `package://NAME/…` meshes (the package folder or
    /// one above it; repeatable; searched before ROS_PACKAGE_PATH).
    #[arg(long = "package-path", value_name = "DIR")]
    package_paths: Vec<PathBuf>,
    /// Let a URDF robot's links collide with each other (links joined by a joint, links
    /// sharing a parent and links touching in the initial pose still do not).
    #[arg(long)]
    self_collision: bool,
    /// Hold a robot's start pose: a position drive on every revolute and prismatic
    /// joint, its target the joint's start coordinate, with gains scaled to the robot
    /// (docs/robots.md, "Standing under drives"), bounded by the joints' effort limits.
    #[arg(long)]
    hold: bool,
    /// Hold the start pose (as --hold) with this stiffness and damping on every joint
    /// (N·m/rad and N·m·s/rad, or N/m and N·s/m for prismatic joints).
    #[arg(long, value_name = "KE,KD", value_parser = gains, allow_hyphen_values = true)]
    hold_gains: Option<(f64, f64)>,
}

impl RobotArgs {
    /// The setup these arguments ask for; gains that cannot be are refused.
    fn setup(&self) -> Result<RobotSetup, CliError> {
        Ok(RobotSetup {
            fixed_base: self.fixed_base,
            package_paths: self.package_paths.clone(),
            self_collision: self.self_collision,
            hold: Hold::from_options(self.hold, self.hold_gains)?,
            ..RobotSetup::default()
        })
    }
}

/// `KE,KD`: two numbers separated by a comma (their values are checked by
/// [`Hold::from_options`]).
fn gains(text: &str) -> Result<(f64, f64), String> {
    let numbers: Vec<&str> = text.split(',').collect();
    let [ke, kd] = numbers.as_slice() else {
        return Err(format!("expected KE,KD (two numbers), got {text:?}"));
    };
    let number = |t: &str| {
        t.trim()
            .parse::<f64>()
            .map_err(|_| format!("{t:?} is not a number"))
    };
    Ok((number(ke)?, number(kd)?))
}

#[derive(Args)]
struct RunArgs {
    /// Time step in seconds (default: the scene's).
    #[arg(long, allow_negative_numbers = true)]
    dt: Option<f64>,
    /// Simulated duration in seconds (default: the scene's).
    #[arg(long, allow_negative_numbers = true)]
    duration: Option<f64>,
    /// Number of identical worlds (default: the scene's, or 1).
    #[arg(long)]
    worlds: Option<usize>,
    /// Backend.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Worker threads stepping the worlds on the CPU backend (default: one per core;
    /// selects the CPU backend under `--backend auto`).
    #[arg(long)]
    threads: Option<usize>,
    /// Write trajectory.csv, trajectory.jsonl, joints.csv, summary.json, animation.glb
    /// (glTF, opens in Blender or any glTF viewer), viewer.html (the animation in any
    /// browser) and plots.png into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Also write contacts.jsonl: every contact of every step with its point, normal,
    /// gap and forces (large for long runs or many worlds).
    #[arg(long)]
    contacts: bool,
    /// Look at the run after every K-th step only (and after the last): the output
    /// files, the energy and joint-error checks and the progress bar see those steps,
    /// and the backend runs the steps between on its own (the GPU keeps the state on
    /// the device). Same states and iteration counts as K = 1; Ctrl-C ends the run
    /// after the current K steps. Scenes with drive schedules or applied forces refuse
    /// K above 1.
    #[arg(long, value_name = "K", default_value_t = 1)]
    every: usize,
}

#[derive(Clone, Copy, ValueEnum)]
enum Backend {
    /// The best available backend (the GPU for large batches on a hardware adapter).
    Auto,
    /// The CPU reference backend.
    Cpu,
    /// The GPU backend (wgpu, f32; convex hulls, meshes and height fields that may
    /// collide are refused: see docs/gpu.md).
    Gpu,
}

impl RunArgs {
    fn options(&self) -> RunOptions {
        RunOptions {
            dt: self.dt,
            duration: self.duration,
            worlds: self.worlds,
            backend: match self.backend {
                Backend::Auto => BackendChoice::Auto,
                Backend::Cpu => BackendChoice::Cpu,
                Backend::Gpu => BackendChoice::Gpu,
            },
            out: self.out.clone(),
            progress: !self.quiet,
            contacts: self.contacts,
            threads: self.threads,
            every: self.every,
        }
    }
}

/// Prints a line on standard output; a reader that has gone away (`axion demo | head -1`)
/// ends the program quietly instead of with a panic.
fn say(text: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(text).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

fn report(result: Result<Summary, CliError>, out: Option<&PathBuf>) -> ExitCode {
    match result {
        Ok(summary) => {
            say(format_args!("{summary}"));
            let interrupted = summary.interrupted;
            if let Some(dir) = out {
                let written: Vec<&str> = [
                    "trajectory.csv",
                    "trajectory.jsonl",
                    "joints.csv",
                    "contacts.jsonl",
                    "summary.json",
                    "animation.glb",
                    "viewer.html",
                    "plots.png",
                ]
                .into_iter()
                .filter(|f| dir.join(f).exists())
                .collect();
                say(format_args!(
                    "  outputs            {}",
                    dir.join(format!("{{{}}}", written.join(", "))).display()
                ));
            }
            if interrupted {
                // The shell's code for a program ended by SIGINT.
                ExitCode::from(130)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    // Ctrl-C (or SIGTERM) ends a run after its current step (with --every K, its
    // current K steps) with every file written;
    // a second one ends the program at once.
    let _ = ctrlc::set_handler(|| {
        static ASKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if ASKED.swap(true, std::sync::atomic::Ordering::SeqCst) {
            std::process::exit(130);
        }
        axion_cli::request_stop();
    });
    match Cli::parse().command {
        Command::Demo { list: true, .. } => {
            for d in DEMOS {
                say(format_args!(
                    "{:<16} {} (dt {:.4} s, {:.2} s)",
                    d.name, d.about, d.dt, d.duration
                ));
            }
            ExitCode::SUCCESS
        }
        Command::Demo { name, run, .. } => {
            let result = find(name.as_deref().unwrap_or("double-pendulum"))
                .and_then(|d| run_demo(d, &run.options()));
            report(result, run.out.as_ref())
        }
        Command::Run { scene, robot, run } => {
            let result = robot.setup().and_then(|setup| {
                if is_robot(&scene) {
                    run_robot(&scene, &setup, &run.options())
                } else if setup.any_given() {
                    Err(CliError::RobotOptionsWithoutUrdf)
                } else {
                    run_scene(&scene, &run.options())
                }
            });
            report(result, run.out.as_ref())
        }
        Command::Check { scene, robot } => match robot.setup().and_then(|setup| {
            if is_robot(&scene) {
                check_robot(&scene, &setup)
            } else if setup.any_given() {
                Err(CliError::RobotOptionsWithoutUrdf)
            } else {
                check_scene(&scene)
            }
        }) {
            Ok(text) => {
                say(format_args!("{text}"));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
