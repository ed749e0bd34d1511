//! The `axion` command: every demo runs, the outputs have the documented shape and
//! content, bad input gets a clear error and a failing exit status.

use std::process::Command;

use axion::BackendChoice;
use axion_cli::{CSV_HEADER, CliError, DEMOS, RunOptions, find, run_demo};

fn options(duration: f64, out: Option<std::path::PathBuf>) -> RunOptions {
    RunOptions {
        dt: None,
        duration: Some(duration),
        worlds: Some(1),
        backend: BackendChoice::Cpu,
        out,
        progress: false,
        contacts: false,
        threads: None,
        every: 1,
    }
}

#[test]
fn every_demo_runs_and_converges() {
    for demo in DEMOS {
        let summary =
            run_demo(demo, &options(0.2, None)).unwrap_or_else(|e| panic!("{}: {e}", demo.name));
        assert!(summary.steps >= 1, "{}", demo.name);
        assert!(summary.converged_share > 0.99, "{}: {summary}", demo.name);
        assert!(summary.max_joint_error < 1e-6, "{}: {summary}", demo.name);
        // A warning of unconverged steps exactly when there are some.
        assert_eq!(
            summary.to_string().contains("did not converge"),
            summary.unconverged_world_steps > 0,
            "{}: {summary}",
            demo.name
        );
    }
}

#[test]
fn outputs_have_the_documented_shape() {
    let dir = std::env::temp_dir().join(format!("axion-cli-test-{}", std::process::id()));
    let demo = find("drop").unwrap();
    let summary = run_demo(
        demo,
        &RunOptions {
            worlds: Some(2),
            ..options(1.5, Some(dir.clone()))
        },
    )
    .unwrap();
    let bodies = demo.model().unwrap().bodies().len();

    let csv = std::fs::read_to_string(dir.join("trajectory.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(CSV_HEADER));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // The initial state and every step, for every world and body.
    assert_eq!(rows.len(), (summary.steps + 1) * 2 * bodies);
    assert!(rows.iter().all(|r| r.len() == 16));
    // The ball has landed (radius 0.5) and rests in both worlds, with unit quaternions.
    for last in &rows[rows.len() - 2 * bodies..] {
        let f = |i: usize| last[i].parse::<f64>().unwrap();
        let q = (f(6) * f(6) + f(7) * f(7) + f(8) * f(8) + f(9) * f(9)).sqrt();
        assert!((q - 1.0).abs() < 1e-12);
        if last[2] == "ball" {
            assert!(
                (f(5) - 0.5).abs() < 1e-4 && f(12).abs() < 1e-3,
                "ball row {last:?}"
            );
        }
    }

    let jsonl = std::fs::read_to_string(dir.join("trajectory.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), rows.len());
    let last = records.last().unwrap();
    assert_eq!(last["t"].as_f64().unwrap(), summary.simulated);
    assert!(last["stats"]["converged"].as_bool().unwrap());
    assert!(last["stats"]["contact_count"].as_u64().unwrap() >= 1);

    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(saved["steps"].as_u64().unwrap() as usize, summary.steps);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_gets_a_clear_error() {
    let unknown = find("nope").err().expect("unknown demo");
    assert!(
        matches!(unknown, CliError::UnknownDemo { .. })
            && unknown.to_string().contains("double-pendulum")
    );
    let demo = find("pendulum").unwrap();
    let bad = run_demo(
        demo,
        &RunOptions {
            dt: Some(-0.01),
            ..options(1.0, None)
        },
    )
    .expect_err("negative dt");
    assert!(bad.to_string().contains("--dt"), "{bad}");
    let bad = run_demo(
        demo,
        &RunOptions {
            worlds: Some(0),
            ..options(1.0, None)
        },
    )
    .expect_err("zero worlds");
    assert!(bad.to_string().contains("worlds"), "{bad}");

    let bad = run_demo(
        demo,
        &RunOptions {
            backend: BackendChoice::Gpu,
            threads: Some(2),
            ..options(1.0, None)
        },
    )
    .expect_err("threads on the GPU");
    assert!(matches!(bad, CliError::ThreadsWithoutCpu { .. }), "{bad}");

    let axion = env!("CARGO_BIN_EXE_axion");
    let out = Command::new(axion).args(["demo", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: unknown demo \"nope\""));
    let out = Command::new(axion)
        .args(["demo", "drop", "--duration", "-1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--duration must be a positive number"));
    let out = Command::new(axion)
        .args(["demo", "drop", "--duration", "0.1", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("drop: 10 steps")
    );
}

/// `--threads` changes who computes the worlds, not what they compute: the trajectory
/// files of three dropped balls are byte for byte the same with one and three threads.
#[test]
fn thread_count_does_not_change_the_outputs() {
    let run = |threads: usize| {
        let dir = std::env::temp_dir().join(format!(
            "axion-cli-threads-{threads}-{}",
            std::process::id()
        ));
        run_demo(
            find("drop").unwrap(),
            &RunOptions {
                worlds: Some(3),
                threads: Some(threads),
                ..options(0.8, Some(dir.clone()))
            },
        )
        .unwrap();
        let csv = std::fs::read(dir.join("trajectory.csv")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        csv
    };
    assert_eq!(run(1), run(3));
}

/// `axion run ROBOT.urdf`: the skid-steer, set on the ground with its lowest point 1 mm
/// up, drops 1 mm and rests on its wheels (centres at the 0.36 m radius, within 1e-4 m);
/// with `--fixed-base` the cartpole's rail is bolted to the world; `--fixed-base` on a
/// scene file is refused.
#[test]
fn urdf_files_run_on_flat_ground() {
    let robots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/robots");
    let skid = robots.join("skid_steer.urdf");
    let (model, _) = axion_cli::robot_model(&skid, &axion_cli::RobotSetup::default()).unwrap();
    let wheels: Vec<_> = ["left_wheel", "right_wheel", "rear_wheel"]
        .iter()
        .map(|n| model.body_id(n).expect("wheel"))
        .collect();
    let mut sim = axion::Simulator::new(model, 1, 0.01, BackendChoice::Cpu).unwrap();
    let s = sim.run(100).unwrap();
    for w in wheels {
        let z = sim.state().com_pose(0, w).translation.z;
        assert!((z - 0.36).abs() < 1e-4, "wheel centre at {z}");
    }
    assert_eq!(s.converged_steps, s.steps);

    let axion = env!("CARGO_BIN_EXE_axion");
    let out = Command::new(axion)
        .arg("run")
        .arg(robots.join("cartpole.urdf"))
        .args(["--fixed-base", "--duration", "0.5", "--quiet"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("cartpole: 50 steps"),
        "{stdout}"
    );
    assert!(stdout.contains("converged          100.0 %"), "{stdout}");
    let out = Command::new(axion)
        .arg("run")
        .arg(robots.join("../scenes/slope.toml"))
        .arg("--fixed-base")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--hold and --hold-gains apply to URDF and MJCF files")
    );
}

/// The run summary sees the initial state: two boxes started 3 cm into each other are
/// named in its initial-state line, the first step pushes them apart and the total
/// energy rises (counted); a pendulum whose joint starts 0.5 m apart has that gap in
/// its largest joint error. A passive pendulum that starts closed counts no rise.
#[test]
fn run_summaries_report_the_initial_state_and_energy_rises() {
    use axion::{BodyDesc, ModelBuilder, Shape, ShapeDesc};
    use nalgebra::{Isometry3, Vector3};
    let cube = || {
        ShapeDesc::new(Shape::Box {
            half_extents: Vector3::repeat(0.1),
        })
    };
    let mut b = ModelBuilder::new();
    b.add_body(BodyDesc::dynamic("lower").shape(cube()))
        .unwrap();
    b.add_body(
        BodyDesc::dynamic("upper")
            .at(Vector3::new(0.0, 0.0, 0.17))
            .shape(cube()),
    )
    .unwrap();
    b.gravity(Vector3::zeros()).unwrap();
    let s = axion_cli::run_model(
        "overlap",
        b.build().unwrap(),
        0.01,
        0.1,
        &axion_cli::Inputs::default(),
        &options(0.1, None),
    )
    .unwrap();
    assert!(
        s.initial_state.contains("shapes overlap by 3.00e-2 m"),
        "{}",
        s.initial_state
    );
    assert!(s.energy_rise_steps >= 1, "{s}");

    // The built-in pendulum, its hinge's world anchor moved `gap` m off the bob's.
    let pendulum = |gap: f64| {
        let model = axion::scenes::pendulum_with(|hinge| {
            hinge.frames(
                Isometry3::translation(gap, 0.0, 0.0),
                Isometry3::translation(-1.0, 0.0, 0.0),
            )
        })
        .unwrap();
        axion_cli::run_model(
            "pendulum",
            model,
            0.01,
            0.5,
            &axion_cli::Inputs::default(),
            &options(0.5, None),
        )
        .unwrap()
    };
    let gapped = pendulum(0.5);
    assert!((gapped.max_joint_error - 0.5).abs() < 1e-9, "{gapped}");
    let closed = pendulum(0.0);
    assert!(
        closed.max_joint_error < 1e-9 && closed.energy_rise_steps == 0,
        "{closed}"
    );
    assert!(closed.initial_state.contains("no overlap"));
}

/// A reader that has gone away (`axion demo --list | head -0`) ends the command quietly:
/// exit 0, no panic.
#[test]
fn a_closed_stdout_ends_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_axion"))
        .args(["demo", "--list"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("panicked"),
        "{:?}: {stderr}",
        out.status
    );
}

/// Runs that cannot finish, or would be less than one step, are refused before they
/// start, with short numbers: a subnormal step, a duration of a billion seconds, a step
/// longer than the duration.
#[test]
fn runs_of_impossible_length_are_refused_before_they_start() {
    let demo = find("pendulum").unwrap();
    for (dt, duration) in [(5e-324, 1.0), (0.01, 1e9), (5.0, 1.0)] {
        let err = run_demo(
            demo,
            &RunOptions {
                dt: Some(dt),
                ..options(duration, None)
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("a run takes 1 to 100000000 steps") && err.len() < 200,
            "{err}"
        );
    }
}

/// A picture that cannot be written (here `plots.png` is a folder) is a warning: the
/// run succeeds and its trajectories and summary.json are there.
#[test]
fn a_failed_picture_keeps_the_summary() {
    let dir = std::env::temp_dir().join(format!("axion-picture-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("plots.png")).unwrap();
    let demo = find("pendulum").unwrap();
    let summary = run_demo(demo, &options(0.1, Some(dir.clone()))).unwrap();
    let json = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(
        json.contains(&format!("\"steps\": {}", summary.steps)),
        "{json}"
    );
    assert!(dir.join("trajectory.csv").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Ctrl-C (SIGINT) during a run ends it after the current step: exit code 130, the
/// summary printed and written (marked interrupted, with the steps taken), and every
/// trajectory line complete.
#[cfg(unix)]
#[test]
fn an_interrupted_run_keeps_its_files() {
    let dir = std::env::temp_dir().join(format!("axion-sigint-{}", std::process::id()));
    let child = Command::new(env!("CARGO_BIN_EXE_axion"))
        .args(["demo", "chain", "--duration", "10000", "--quiet", "--out"])
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run has written steps, then interrupt it.
    let csv = dir.join("trajectory.csv");
    let started = std::time::Instant::now();
    while std::fs::metadata(&csv).map_or(0, |m| m.len()) < 100_000 {
        assert!(started.elapsed().as_secs() < 60, "the run wrote nothing");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("interrupted after"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["interrupted"], true);
    let steps = json["steps"].as_u64().unwrap();
    assert!(steps > 0 && steps < 1_000_000, "{steps}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.ends_with('\n'));
    let columns = CSV_HEADER.split(',').count();
    assert!(text.lines().all(|l| l.split(',').count() == columns));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `axion check ROBOT --hold` lists each holding drive with its target and gains (the
/// scaled rule's: the cartpole's 260 kg, 1 m across, gives 260 g₀ / 0.05 on both
/// joints), `--hold-gains` sets them, and a run's summary.json records the setup;
/// gains that are negative, not numbers, both zero or not two are refused.
#[test]
fn held_robots_say_how_they_are_held() {
    let cartpole = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/robots/cartpole.urdf");
    let axion = env!("CARGO_BIN_EXE_axion");
    let out = Command::new(axion)
        .arg("check")
        .arg(&cartpole)
        .args(["--fixed-base", "--hold"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let ke = 260.0 * axion_cli::STANDARD_GRAVITY * 1.0 / axion_cli::HOLD_SAG;
    let kd = ke * axion_cli::HOLD_TIME;
    for (joint, unit, force) in [("slider", "m", "N"), ("hinge", "rad", "N·m")] {
        let line = format!(
            "hold: joint {joint:?} at 0.000000 {unit}, ke {ke:.4e} {force}/{unit}, kd {kd:.4e} {force}·s/{unit}"
        );
        assert!(stdout.contains(&line), "{line} not in\n{stdout}");
    }
    let dir = std::env::temp_dir().join(format!("axion-held-{}", std::process::id()));
    let out = Command::new(axion)
        .arg("run")
        .arg(&cartpole)
        .args([
            "--fixed-base",
            "--hold-gains",
            "100,10",
            "--duration",
            "0.1",
        ])
        .args(["--quiet", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["robot"]["hold"],
        serde_json::json!({"ke": 100.0, "kd": 10.0})
    );
    assert_eq!(summary["robot"]["fixed_base"], true);
    std::fs::remove_dir_all(&dir).unwrap();
    for gains in ["-1,2", "nan,1", "0,0", "5"] {
        let out = Command::new(axion)
            .arg("check")
            .arg(&cartpole)
            .args(["--hold-gains", gains])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(if gains == "5" { 2 } else { 1 }),
            "{stderr}"
        );
        assert!(
            stderr.contains("KE,KD") || stderr.contains("hold gains must be"),
            "{stderr}"
        );
    }
}

/// The rows of `trajectory.csv` in `dir`, by time (the text of the row's time field).
fn trajectory_rows(dir: &std::path::Path) -> Vec<(String, String)> {
    let csv = std::fs::read_to_string(dir.join("trajectory.csv")).unwrap();
    csv.lines()
        .skip(1)
        .map(|l| (l.split(',').next().unwrap().to_string(), l.to_string()))
        .collect()
}

/// `--every K` runs the steps between two looks on the backend's own: the rows it
/// writes are those of the same run looked at after every step, bit for bit (the
/// text of every number), and the iteration and convergence counts cover every step.
/// The turning skid-steer at h = 0.02 with at most 4 Newton iterations an attempt, so
/// that some steps do not converge and the counts are not trivially full; 0.5 s = 25 steps in
/// looks of 7 (the last one of 4). On the CPU always, on the GPU where one is found.
fn every_k_matches_every_step(backend: BackendChoice, name: &str) {
    let demo = find("skid-steer").unwrap();
    let dir = |k: usize| {
        std::env::temp_dir().join(format!("axion-every-{name}-{k}-{}", std::process::id()))
    };
    let run = |k: usize| {
        let options = RunOptions {
            dt: Some(0.02),
            worlds: Some(3),
            backend,
            every: k,
            ..options(0.5, Some(dir(k)))
        };
        run_demo(demo, &options).unwrap_or_else(|e| panic!("{name}, every {k}: {e}"))
    };
    let (each, sevens) = (run(1), run(7));
    assert_eq!(each.steps, 25);
    // The counts against those of the step reports of a Simulator stepped by hand.
    let mut sim = axion::Simulator::new(demo.model().unwrap(), 3, 0.02, backend).unwrap();
    let (mut iterations, mut converged) = (0, 0);
    for _ in 0..25 {
        let report = sim.step().unwrap();
        iterations += report.worlds.iter().map(|s| s.iterations).sum::<usize>();
        converged += report.worlds.iter().filter(|s| s.converged).count();
    }
    assert_eq!(each.mean_iterations, iterations as f64 / 75.0, "{name}");
    assert_eq!(each.converged_share, converged as f64 / 75.0, "{name}");
    assert_eq!(each.unconverged_world_steps, 75 - converged, "{name}");
    assert_eq!((sevens.steps, sevens.every), (25, 7));
    assert_eq!(
        sevens.unconverged_world_steps, each.unconverged_world_steps,
        "{name}"
    );
    assert_eq!(sevens.mean_iterations, each.mean_iterations, "{name}");
    assert_eq!(sevens.max_iterations, each.max_iterations, "{name}");
    assert_eq!(sevens.converged_share, each.converged_share, "{name}");
    assert!(
        each.converged_share < 1.0,
        "{name}: the run should have steps that do not converge: {each}"
    );
    let all = trajectory_rows(&dir(1));
    let looked = trajectory_rows(&dir(7));
    // The initial state, steps 7, 14, 21 and 25, each world's bodies.
    let times: std::collections::BTreeSet<&str> = looked.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(times.len(), 5, "{times:?}");
    let same_times: Vec<&(String, String)> = all
        .iter()
        .filter(|(t, _)| times.contains(t.as_str()))
        .collect();
    assert_eq!(same_times.len(), looked.len());
    for (a, b) in same_times.iter().zip(&looked) {
        assert_eq!(a.1, b.1, "{name}: every 1 and every 7 differ");
    }
    for k in [1, 7] {
        std::fs::remove_dir_all(dir(k)).unwrap();
    }
}

#[test]
fn looking_every_k_steps_changes_nothing_on_the_cpu() {
    every_k_matches_every_step(
        BackendChoice::CpuWith(axion::SolverSettings {
            max_iterations: 4,
            ..Default::default()
        }),
        "cpu",
    );
}

#[test]
fn looking_every_k_steps_changes_nothing_on_the_gpu() {
    if !axion::device_tests_run("axion-cli --every on the GPU") {
        return;
    }
    every_k_matches_every_step(
        BackendChoice::GpuWith(axion::GpuSettings {
            max_iterations: 4,
            ..Default::default()
        }),
        "gpu",
    );
}

#[test]
fn every_needs_a_scene_without_forces_or_schedules_and_a_positive_count() {
    let dir = std::env::temp_dir().join(format!("axion-every-forces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("thruster.toml");
    std::fs::write(
        &path,
        "[simulation]\ngravity = [0, 0, 0]\nduration = 0.1\n\n[[bodies]]\nname = \"cube\"\nmass = 1\ninertia = [0.1667, 0.1667, 0.1667]\n\n[[forces]]\nbody = \"cube\"\nforce = [0, 1, 0]\n",
    )
    .unwrap();
    let with = |every| RunOptions {
        every,
        duration: None,
        ..options(0.1, None)
    };
    match axion_cli::run_scene(&path, &with(5)) {
        Err(e @ CliError::EveryWithInputs { every: 5 }) => {
            assert!(e.to_string().contains("applied forces"), "{e}")
        }
        other => panic!("expected --every 5 to be refused, got {other:?}"),
    }
    assert!(matches!(
        axion_cli::run_scene(&path, &with(0)),
        Err(CliError::EveryZero)
    ));
    let summary = axion_cli::run_scene(&path, &with(1)).unwrap();
    assert_eq!(summary.steps, 10);
    std::fs::remove_dir_all(&dir).unwrap();
    // A servo following a schedule of targets.
    let swing =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenes/swing.json");
    assert!(matches!(
        axion_cli::run_scene(&swing, &with(5)),
        Err(CliError::EveryWithInputs { every: 5 })
    ));
}
