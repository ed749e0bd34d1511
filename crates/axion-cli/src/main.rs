//! `axion`: run the built-in scenes of axion-rs and write what happened.
//!
//! ```text
//! axion demo                      # the double pendulum, summary on stdout
//! axion demo --list               # the demos
//! axion demo stack --dt 0.05 --duration 10 --out results
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use axion::BackendChoice;
use axion_cli::{DEMOS, RunOptions, find, run_demo};
use clap::{Parser, Subcommand, ValueEnum};

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
        /// Time step in seconds (default: the demo's).
        #[arg(long, allow_negative_numbers = true)]
        dt: Option<f64>,
        /// Simulated duration in seconds (default: the demo's).
        #[arg(long, allow_negative_numbers = true)]
        duration: Option<f64>,
        /// Number of identical worlds.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(usize))]
        worlds: usize,
        /// Backend.
        #[arg(long, value_enum, default_value_t = Backend::Auto)]
        backend: Backend,
        /// Write trajectory.csv, trajectory.jsonl and summary.json into this folder.
        #[arg(long)]
        out: Option<PathBuf>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Backend {
    /// The best available backend (today the CPU).
    Auto,
    /// The CPU reference backend.
    Cpu,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Demo { list: true, .. } => {
            for d in DEMOS {
                println!(
                    "{:<16} {} (dt {:.4} s, {:.2} s)",
                    d.name, d.about, d.dt, d.duration
                );
            }
            ExitCode::SUCCESS
        }
        Command::Demo {
            name,
            dt,
            duration,
            worlds,
            backend,
            out,
            quiet,
            ..
        } => {
            let options = RunOptions {
                dt,
                duration,
                worlds,
                backend: match backend {
                    Backend::Auto => BackendChoice::Auto,
                    Backend::Cpu => BackendChoice::Cpu,
                },
                out: out.clone(),
                progress: !quiet,
            };
            let result = find(name.as_deref().unwrap_or("double-pendulum"))
                .and_then(|d| run_demo(d, &options));
            match result {
                Ok(summary) => {
                    println!("{summary}");
                    if let Some(dir) = out {
                        println!(
                            "  outputs            {}",
                            dir.join("{trajectory.csv, trajectory.jsonl, summary.json}")
                                .display()
                        );
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
