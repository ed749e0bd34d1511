//! Scene files: every documented and example scene parses and runs; malformed files
//! get errors that point at the line, never a panic.

use std::path::{Path, PathBuf};

use axion::{BackendChoice, GpuSettings, SceneFormat, parse_scene, parse_scene_as, parse_scene_in};
use axion_cli::{
    CliError, RunOptions, check_scene, gpu_settings, run_scene, scene_backend, solver_settings,
};
use proptest::prelude::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The ```toml (or ```json) blocks of docs/scenes.md.
fn documented(language: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(root().join("docs/scenes.md")).unwrap();
    doc.split(&format!("```{language}\n"))
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect()
}

fn documented_scenes() -> Vec<String> {
    documented("toml")
}

/// The example scene files with the given extension.
fn examples_with(extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples/scenes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == extension))
        .collect();
    files.sort();
    files
}

fn example_files() -> Vec<PathBuf> {
    examples_with("toml")
}

fn quick() -> RunOptions {
    RunOptions {
        dt: None,
        duration: Some(0.5),
        worlds: None,
        backend: BackendChoice::Cpu,
        out: None,
        progress: false,
        contacts: false,
        threads: None,
        every: 1,
    }
}

#[test]
fn every_documented_and_example_scene_runs() {
    let docs = documented_scenes();
    assert!(docs.len() >= 2);
    let dir = std::env::temp_dir().join(format!("axion-doc-scenes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = example_files();
    files.extend(examples_with("json"));
    assert!(files.len() >= 4);
    for (i, text) in docs.iter().enumerate() {
        let path = dir.join(format!("doc{i}.toml"));
        std::fs::write(&path, text).unwrap();
        files.push(path);
    }
    let json = documented("json");
    assert!(!json.is_empty());
    for (i, text) in json.iter().enumerate() {
        let path = dir.join(format!("doc{i}.json"));
        std::fs::write(&path, text).unwrap();
        files.push(path);
    }
    for file in &files {
        let checked = check_scene(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(checked.contains("ok"));
        let summary =
            run_scene(file, &quick()).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            summary.converged_share > 0.99 && summary.max_joint_error < 1e-6,
            "{}: {summary}",
            file.display()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The README's scene snippets parse (from examples/scenes, where their relative robot
/// paths point) and run.
#[test]
fn readme_scenes_run() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let blocks: Vec<&str> = readme
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert!(!blocks.is_empty());
    for text in blocks {
        let scene = parse_scene_in(text, &root().join("examples/scenes"))
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut sim =
            axion::Simulator::new(scene.model, 1, scene.settings.dt, BackendChoice::Cpu).unwrap();
        let summary = sim.run(20).unwrap();
        assert_eq!(summary.steps, 20);
    }
}

/// The documented servo reaches its target (the scene file means what the docs say).
#[test]
fn documented_servo_reaches_its_target() {
    let scene = parse_scene(&documented_scenes()[1]).unwrap();
    let mut sim =
        axion::Simulator::new(scene.model, 1, scene.settings.dt, BackendChoice::Cpu).unwrap();
    sim.run((scene.settings.duration / scene.settings.dt).round() as usize)
        .unwrap();
    let q = sim.state().com_pose(0, axion::BodyId(0));
    let angle = q.rotation.euler_angles().2;
    // The file's target is 1.5708 rad, i.e. π/2 to the 4 decimals written there.
    assert!(
        (angle - std::f64::consts::FRAC_PI_2).abs() < 0.01,
        "angle {angle}"
    );
}

/// A TOML example and its JSON translation describe the same model and settings.
#[test]
fn json_and_toml_spell_the_same_scene() {
    let folder = root().join("examples/scenes");
    for file in example_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let value: toml::Value = toml::from_str(&text).unwrap();
        let json = serde_json::to_string_pretty(&value).unwrap();
        let a = parse_scene_in(&text, &folder).unwrap();
        let b = parse_scene_as(&json, SceneFormat::Json, &folder)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(a.model, b.model, "{}", file.display());
        assert_eq!(a.settings, b.settings, "{}", file.display());
        assert_eq!(a.schedules, b.schedules, "{}", file.display());
    }
    assert_eq!(SceneFormat::of(Path::new("a/b.JSON")), SceneFormat::Json);
    assert_eq!(SceneFormat::of(Path::new("a/b.toml")), SceneFormat::Toml);
}

/// The scheduled servo of `swing.json` follows its piecewise-linear targets. With the
/// feed-forward velocity equal to the ramp's slope, the error $e = \theta - r$ obeys
/// $I \ddot e + k_d \dot e + k_e e = 0$ between the corners; at a corner the target
/// velocity jumps by $\Delta v$ and the error peaks at
/// $\frac{\Delta v}{\omega_d} e^{-\zeta\omega_n t^*} \sin(\omega_d t^*)$ with
/// $\tan(\omega_d t^*) = \omega_d / (\zeta\omega_n)$, then decays.
#[test]
fn scheduled_servo_follows_its_targets() {
    let scene = axion::load_scene(&root().join("examples/scenes/swing.json")).unwrap();
    assert_eq!(scene.schedules.len(), 1);
    let schedule = &scene.schedules[0];
    let dt = scene.settings.dt;
    // The bar about its end: 0.867 + 10 · 0.5² kg m²; ke = 1000, kd = 100.
    let (inertia, ke, kd) = (0.867 + 10.0 * 0.25, 1000.0, 100.0);
    // The largest jump of target velocity: the first ramp's slope.
    let [(t0, y0), (t1, y1), ..] = schedule.points[..] else {
        panic!("two points at least")
    };
    let dv = (y1 - y0) / (t1 - t0);
    let wn = f64::sqrt(ke / inertia);
    let zeta = kd / (2.0 * f64::sqrt(ke * inertia));
    let wd = wn * (1.0 - zeta * zeta).sqrt();
    let t_peak = (wd / (zeta * wn)).atan() / wd;
    let peak = dv / wd * (-zeta * wn * t_peak).exp() * (wd * t_peak).sin();
    let mut sim = axion::Simulator::new(scene.model, 1, dt, BackendChoice::Cpu).unwrap();
    let mut worst: f64 = 0.0;
    for k in 0..(scene.settings.duration / dt).round() as usize {
        let t = (k + 1) as f64 * dt;
        schedule.apply(sim.control_mut(), 0, t).unwrap();
        sim.step().unwrap();
        let angle = sim
            .state()
            .com_pose(0, axion::BodyId(0))
            .rotation
            .euler_angles()
            .2;
        let error = (angle - schedule.at(t).0).abs();
        worst = worst.max(error);
        // Half a second after a corner the transient has decayed by e^{-ζ ωn 0.5}.
        if [0.5, 1.5, 2.5, 3.5, 4.0]
            .iter()
            .any(|c| (t - c).abs() < 1e-9)
        {
            assert!(error < 1e-3, "t = {t}: error {error} rad");
        }
    }
    assert!(
        worst <= peak,
        "worst tracking error {worst} rad > analytic peak {peak}"
    );
    let end = sim
        .state()
        .com_pose(0, axion::BodyId(0))
        .rotation
        .euler_angles()
        .2;
    assert!(end.abs() < 1e-4, "final angle {end}");
}

/// `[simulation.solver]` reaches the solver: one iteration at most per step, and no
/// second attempt (with more creep, or as shorter steps; the pendulum has no contact
/// forces to try again without).
#[test]
fn solver_settings_from_the_file_are_used() {
    let text = std::fs::read_to_string(root().join("examples/scenes/pendulum.toml"))
        .unwrap()
        .replace("duration = 5.0", "duration = 0.2")
        + "\n[simulation.solver]\nmax_iterations = 1\ncontact_margin = 0.05\nsplit_depth = 0\nfallback_creep = 0\n";
    let dir = std::env::temp_dir().join(format!("axion-solver-scene-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("one_iteration.toml");
    std::fs::write(&path, &text).unwrap();
    let scene = axion::load_scene(&path).unwrap();
    let settings = solver_settings(&scene.settings, axion::SolverSettings::default());
    assert_eq!(settings.max_iterations, 1);
    assert_eq!(settings.contact_margin, 0.05);
    assert_eq!(settings.split_depth, 0);
    assert_eq!(settings.fallback_creep, 0.0);
    let summary = run_scene(
        &path,
        &RunOptions {
            duration: None,
            ..quick()
        },
    )
    .unwrap();
    assert_eq!(summary.max_iterations, 1);
    assert!(summary.converged_share < 1.0, "{summary}");
    assert_unconverged_told(&summary, "a smaller --dt");
    std::fs::remove_dir_all(&dir).unwrap();
    let bad =
        "[simulation.solver]\nmax_iterations = 0\n[[bodies]]\nname = \"a\"\nkind = \"static\"\n";
    assert!(
        parse_scene(bad)
            .unwrap_err()
            .to_string()
            .contains("max_iterations")
    );
}

/// The CPU-only solver settings (recovery speed and rate, the contacts' smoothing and
/// compliance, the row margin, compliant retries and first attempts ended early) and
/// the friction creep reach the CPU solver; the GPU refuses a scene that sets the
/// CPU-only ones and takes the creep and the creep of second attempts; values that mean
/// nothing are refused with their name.
#[test]
fn cpu_only_solver_settings() {
    let body = "[[bodies]]\nname = \"a\"\nshapes = [{ type = \"sphere\", radius = 0.1 }]\n";
    let text = format!(
        "[simulation.solver]\nfriction_creep = 0.0\nrecovery_speed = inf\nrecovery_rate = 0.5\n\
         contact_smoothing = 0.0\ncontact_compliance = 1e-8\nrow_margin = 0.0\n\
         compliant_retries = false\nabandon_after = 0\n{body}"
    );
    let scene = parse_scene(&text).unwrap();
    let settings = solver_settings(&scene.settings, axion::SolverSettings::default());
    assert_eq!(settings.friction_creep, 0.0);
    assert_eq!(settings.recovery_speed, f64::INFINITY);
    assert_eq!(settings.recovery_rate, 0.5);
    assert_eq!(
        (settings.contact_smoothing, settings.contact_compliance),
        (0.0, 1e-8)
    );
    assert_eq!(settings.row_margin, 0.0);
    assert!(!settings.compliant_retries);
    assert_eq!(settings.abandon_after, 0);
    let refused = scene_backend(&scene.settings, BackendChoice::Gpu).unwrap_err();
    assert!(matches!(refused, CliError::SettingWithoutCpu { .. }));
    assert!(
        refused
            .to_string()
            .contains("recovery_speed, recovery_rate, contact_smoothing, contact_compliance, row_margin, compliant_retries, abandon_after")
    );
    let creep = parse_scene(&format!(
        "[simulation.solver]\nfriction_creep = 1e-3\nfallback_creep = 1e-2\n{body}"
    ))
    .unwrap();
    match scene_backend(&creep.settings, BackendChoice::Gpu).unwrap() {
        BackendChoice::GpuWith(g) => {
            assert_eq!(g.friction_creep, 1e-3);
            assert_eq!(g.fallback_creep, 1e-2);
        }
        other => panic!("{other:?}"),
    }
    for (field, value) in [
        ("friction_creep", "-1e-6"),
        ("recovery_speed", "0.0"),
        ("recovery_rate", "nan"),
        ("split_depth", "17"),
        ("fallback_creep", "-1"),
        ("contact_smoothing", "-1e-12"),
        ("contact_compliance", "nan"),
        ("row_margin", "-0.001"),
        ("compliant_retries", "1"),
        ("abandon_after", "-1"),
        // Neither smoothing nor compliance: the forces of redundant contacts are free.
        ("contact_smoothing", "0.0"),
    ] {
        let err = parse_scene(&format!("[simulation.solver]\n{field} = {value}\n{body}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(field), "{err}");
    }
}

/// A scene's own settings reach the backend that runs it: `[simulation.solver]` the
/// GPU's settings under `--backend gpu` (fields it does not set keep the GPU's values)
/// and a given CPU configuration (its threads kept); `backend = "cpu"` holds under
/// `auto` but not against an explicit `--backend gpu`; a scene that asks for the
/// energy-momentum integrator, which the GPU does not have, is refused there before any
/// adapter is looked for, and runs on the CPU. On the device, a file's
/// `max_iterations = 1` caps every step at one Newton iteration.
#[test]
fn scene_settings_reach_the_backend_that_runs_it() {
    let pendulum = std::fs::read_to_string(root().join("examples/scenes/pendulum.toml"))
        .unwrap()
        .replace("duration = 5.0", "duration = 0.2");
    assert!(pendulum.contains("integrator = \"energy-momentum\""));
    let euler = pendulum.replace(
        "integrator = \"energy-momentum\"",
        "integrator = \"backward-euler\"",
    );
    let solver = "\n[simulation.solver]\nmax_iterations = 7\nvelocity_tolerance = 1e-3\n";
    let settings = |text: &str| parse_scene(text).unwrap().settings;

    let tuned = settings(&(euler.clone() + solver));
    let base = GpuSettings {
        max_linear_iterations: 12,
        ..GpuSettings::default()
    };
    let expected = GpuSettings {
        max_iterations: 7,
        velocity_tolerance: 1e-3,
        ..base
    };
    assert_eq!(gpu_settings(&tuned, base), expected);
    assert_eq!(
        scene_backend(&tuned, BackendChoice::GpuWith(base)).unwrap(),
        BackendChoice::GpuWith(expected)
    );
    let threaded = axion::SolverSettings {
        threads: 2,
        ..Default::default()
    };
    match scene_backend(&tuned, BackendChoice::CpuWith(threaded)).unwrap() {
        BackendChoice::CpuWith(s) => {
            assert_eq!((s.threads, s.max_iterations), (2, 7));
            assert_eq!(s.velocity_tolerance, 1e-3);
        }
        other => panic!("{other:?}"),
    }

    let on_cpu = settings(&euler.replace("[simulation]", "[simulation]\nbackend = \"cpu\""));
    assert_eq!(on_cpu.backend, "cpu");
    let chosen = |backend| scene_backend(&on_cpu, backend).unwrap();
    assert_eq!(chosen(BackendChoice::Auto), BackendChoice::Cpu);
    assert_eq!(chosen(BackendChoice::Gpu), BackendChoice::Gpu);

    let dir = std::env::temp_dir().join(format!("axion-backend-scene-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("energy_momentum.toml");
    std::fs::write(&path, &pendulum).unwrap();
    for backend in [
        BackendChoice::Gpu,
        BackendChoice::GpuWith(GpuSettings::default()),
    ] {
        let options = RunOptions { backend, ..quick() };
        match run_scene(&path, &options) {
            Err(e @ CliError::IntegratorWithoutCpu { .. }) => {
                assert!(e.to_string().contains("energy-momentum"), "{e}")
            }
            other => panic!("expected the integrator to be refused, got {other:?}"),
        }
    }
    run_scene(&path, &quick()).unwrap();

    if !axion::device_tests_run("scene settings on the GPU") {
        std::fs::remove_dir_all(&dir).unwrap();
        return;
    }
    let path = dir.join("one_iteration.toml");
    std::fs::write(&path, euler + "\n[simulation.solver]\nmax_iterations = 1\n").unwrap();
    let options = RunOptions {
        backend: BackendChoice::Gpu,
        duration: None,
        ..quick()
    };
    let summary = run_scene(&path, &options).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(summary.max_iterations, 1, "{summary}");
    assert!(summary.converged_share < 1.0, "{summary}");
    assert_unconverged_told(&summary, "--backend cpu");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The summary counts the world-steps that did not converge (the complement of its
/// converged share) and warns of them with the backend's hint.
fn assert_unconverged_told(summary: &axion_cli::Summary, hint: &str) {
    let world_steps = summary.steps * summary.worlds;
    let converged = (summary.converged_share * world_steps as f64).round() as usize;
    assert_eq!(
        summary.unconverged_world_steps,
        world_steps - converged,
        "{summary}"
    );
    let text = summary.to_string();
    let warning = format!(
        "warning: {} of {world_steps} world-steps did not converge",
        summary.unconverged_world_steps
    );
    assert!(text.contains(&warning) && text.contains(hint), "{text}");
}

#[test]
fn json_errors_point_at_the_line() {
    let cases = [
        (
            "{\n  \"bodies\": [\n    { \"name\": \"a\", \"mas\": 1 }\n  ]\n}",
            "line 3",
        ),
        (
            "{\n  \"bodies\": [\n    { \"name\": \"a\",\n      \"position\": [0, 0, \"x\"] }\n  ]\n}",
            "line 4",
        ),
        (
            "{\n  \"bodies\": [{ \"name\": \"a\", \"shapes\": [{ \"type\": \"sphere\", \"radius\": 0.1 }] }],\n  \"joints\": [\n    { \"name\": \"j\", \"type\": \"ball\", \"child\": \"b\" }\n  ]\n}",
            "line 4: joint \"j\": unknown body \"b\"",
        ),
        ("{ \"bodies\": [ }", "line 1"),
        (
            "{\"bodies\": [{\"name\": \"a\", \"kind\": \"static\"}], \"joints\": [{\"name\": \"s\", \"type\": \"revolute\", \"child\": \"a\", \"axis\": [0, 0, 1], \"drive\": {\"mode\": \"position\", \"ke\": 1, \"targets\": [[1, 0], [0, 1]]}}]}",
            "times must increase",
        ),
    ];
    for (text, expect) in cases {
        let err = parse_scene_as(text, SceneFormat::Json, Path::new("."))
            .err()
            .unwrap_or_else(|| panic!("accepted:\n{text}"));
        assert!(
            err.to_string().contains(expect),
            "{err}\n(expected {expect:?})"
        );
    }
}

#[test]
fn errors_point_at_the_line() {
    let cases = [
        ("[[bodies]]\nname = \"a\"\nmas = 1.0\n", "line 3"),
        (
            "[[bodies]]\nname = \"a\"\nposition = [0, 0, \"x\"]\n",
            "line 3",
        ),
        (
            "[[bodies]]\nname = \"a\"\nshapes = [{ type = \"sphere\", radius = 0.1 }]\n\n[[joints]]\nname = \"j\"\ntype = \"ball\"\nchild = \"b\"\n",
            "line 5: joint \"j\": unknown body \"b\"",
        ),
        (
            "[[bodies]]\nname = \"ok\"\nshapes = [{ type = \"sphere\", radius = 0.1 }]\n\n[[bodies]]\nname = \"heavy\"\nmass = -2.0\ninertia = [1, 1, 1]\n",
            "line 5: body \"heavy\"",
        ),
        (
            "[[bodies]]\nname = \"a\"\nshapes = [{ type = \"box\" }]\n",
            "needs `half_extents`",
        ),
        (
            "[[bodies]]\nname = \"a\"\nshapes = [{ type = \"teapot\" }]\n",
            "line 3",
        ),
        (
            "[simulation]\ndt = -1\n[[bodies]]\nname = \"a\"\nkind = \"static\"\n",
            "dt must be a positive",
        ),
        (
            "[[bodies]]\nname = \"a\"\nshapes = [{ type = \"sphere\", radius = nan }]\n",
            "radius",
        ),
        (
            "[[joints]]\nname = \"j\"\ntype = \"gimbal\"\nchild = \"a\"\n",
            "gimbal",
        ),
        (
            "[[bodies]]\nname = \"a\"\nmass = 1.0\ninertia = [1, 1, 1]\n\n[[joints]]\nname = \"j\"\ntype = \"ball\"\nchild = \"a\"\nbaumgarte = 1.5\n",
            "line 6: joint \"j\"",
        ),
    ];
    for (text, expect) in cases {
        let err = parse_scene(text)
            .err()
            .unwrap_or_else(|| panic!("accepted:\n{text}"));
        assert!(
            err.to_string().contains(expect),
            "{err}\n(expected {expect:?})"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256)))]

    /// Mutated scene files — a character replaced, a line dropped, the text cut — are
    /// accepted or refused with an error, and whatever is accepted can be stepped:
    /// never a panic.
    #[test]
    fn mutated_scene_files_never_panic(file in 0usize..4, at in any::<prop::sample::Index>(), with in prop::char::range(' ', '~'), how in 0u8..3) {
        let files: Vec<PathBuf> = example_files().into_iter().chain(examples_with("json")).collect();
        let format = SceneFormat::of(&files[file]);
        let text = std::fs::read_to_string(&files[file]).unwrap();
        let mutated = match how {
            0 => {
                let mut chars: Vec<char> = text.chars().collect();
                let i = at.index(chars.len());
                chars[i] = with;
                chars.into_iter().collect()
            }
            1 => {
                let lines: Vec<&str> = text.lines().collect();
                let i = at.index(lines.len());
                lines.iter().enumerate().filter(|(k, _)| *k != i).map(|(_, l)| *l).collect::<Vec<_>>().join("\n")
            }
            _ => text.chars().take(at.index(text.len())).collect(),
        };
        if let Ok(scene) = parse_scene_as(&mutated, format, &root().join("examples/scenes"))
            && let Ok(mut sim) = axion::Simulator::new(scene.model, 1, 0.01, BackendChoice::Cpu)
        {
            let _ = sim.step();
        }
    }
}

/// `--worlds` overrides a scene's `worlds`, 1 included; without it the scene's count
/// is used. A count whose states would not fit in memory is refused before anything
/// is allocated.
#[test]
fn the_command_line_world_count_overrides_the_scene() {
    let dir = std::env::temp_dir().join(format!("axion-worlds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body = "[[bodies]]\nname = \"ball\"\nshapes = [{ type = \"sphere\", radius = 0.1 }]\n";
    let path = dir.join("four.toml");
    std::fs::write(
        &path,
        format!("[simulation]\nworlds = 4\nduration = 0.05\n\n{body}"),
    )
    .unwrap();
    let run = |worlds| {
        run_scene(&path, &RunOptions { worlds, ..quick() })
            .unwrap()
            .worlds
    };
    assert_eq!(run(Some(1)), 1);
    assert_eq!(run(None), 4);
    let huge = dir.join("huge.toml");
    std::fs::write(&huge, format!("[simulation]\nworlds = 100000000\n\n{body}")).unwrap();
    let err = run_scene(&huge, &quick()).unwrap_err().to_string();
    assert!(
        err.contains("worlds = 100000000") && err.contains("bodies a state holds"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Fields that do not apply are refused with the entry's line, never ignored: a radius
/// on a box, half extents on a sphere, a mass on a static body, `kd` on a velocity drive,
/// a second drive for one robot joint.
#[test]
fn fields_that_do_not_apply_are_refused() {
    let ball = "[[bodies]]\nname = \"ball\"\nshapes = [{ type = \"sphere\", radius = 0.1 }]\n";
    let cases = [
        (
            "[[bodies]]\nname = \"a\"\nshapes = [{ type = \"box\", half_extents = [1, 1, 1], radius = 0.1 }]\n".to_string(),
            "line 1: body \"a\", shape 0: a box shape takes no `radius`",
        ),
        (
            "[[bodies]]\nname = \"a\"\nshapes = [{ type = \"sphere\", radius = 0.1, half_extents = [1, 1, 1] }]\n".to_string(),
            "a sphere shape takes no `half_extents`",
        ),
        (
            format!("{ball}\n[[bodies]]\nname = \"floor\"\nkind = \"static\"\nmass = 3.0\ninertia = [1, 1, 1]\n"),
            "line 5: body \"floor\" is static: it takes no `mass`",
        ),
        (
            format!("{ball}\n[[joints]]\nname = \"spin\"\ntype = \"revolute\"\nchild = \"ball\"\naxis = [0, 0, 1]\ndrive = {{ mode = \"velocity\", target = 1.0, ke = 2.0, kd = 3.0 }}\n"),
            "`kd` and `target_velocity` belong to position drives",
        ),
    ];
    for (text, expected) in cases {
        let err = axion::parse_scene(&text).unwrap_err().to_string();
        assert!(err.contains(expected), "{err:?} should say {expected:?}");
    }
    let dir = std::env::temp_dir().join(format!("axion-fields-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        root().join("examples/robots/cartpole.urdf"),
        dir.join("cartpole.urdf"),
    )
    .unwrap();
    let twice = "[[robots]]\nurdf = \"cartpole.urdf\"\nfixed_base = true\ndrives = [\n  { joint = \"slider\", mode = \"velocity\", target = 1.0, ke = 1.0 },\n  { joint = \"slider\", mode = \"velocity\", target = 2.0, ke = 1.0 },\n]\n";
    let err = axion::parse_scene_in(twice, &dir).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        err.contains("line 1: robot \"cartpole.urdf\": a second drive for joint \"slider\""),
        "{err}"
    );
}

/// `max_force` bounds a scene file's drive: a 10 kg cube driven towards 4 m/s by a
/// stiff velocity drive limited to 20 N accelerates at exactly 2 m/s²; a limit that is
/// not positive is refused with its line.
#[test]
fn a_drive_max_force_bounds_the_drive() {
    let scene = |max_force: &str| {
        format!(
            "[simulation]\ngravity = [0, 0, 0]\n\n[[bodies]]\nname = \"cube\"\nmass = 10\ninertia = [1, 1, 1]\n\n[[joints]]\nname = \"slider\"\ntype = \"prismatic\"\nchild = \"cube\"\naxis = [1, 0, 0]\ndrive = {{ mode = \"velocity\", target = 4.0, ke = 10000, max_force = {max_force} }}\n"
        )
    };
    let parsed = axion::parse_scene(&scene("20")).unwrap();
    let mut sim = axion::Simulator::new(parsed.model, 1, 0.01, BackendChoice::Cpu).unwrap();
    sim.run(100).unwrap();
    let v = sim.joint_motion(0, axion::JointId(0)).unwrap().velocity;
    assert!((v - 2.0).abs() < 1e-9, "{v}");
    let err = axion::parse_scene(&scene("0")).unwrap_err().to_string();
    assert!(
        err.contains("max_force must be positive") && err.contains("line"),
        "{err}"
    );
}

/// A force drive in a scene file (`mode = "force"`, `target` = the force) pushes a
/// 10 kg cube along its slide with exactly 20 N: 2 m/s after 1 s; gains on it are
/// refused with the entry's line.
#[test]
fn a_force_drive_pushes_with_its_force() {
    let scene = |drive: &str| {
        format!(
            "[simulation]\ngravity = [0, 0, 0]\n\n[[bodies]]\nname = \"cube\"\nmass = 10\ninertia = [1, 1, 1]\n\n[[joints]]\nname = \"slider\"\ntype = \"prismatic\"\nchild = \"cube\"\naxis = [1, 0, 0]\ndrive = {{ {drive} }}\n"
        )
    };
    let parsed = axion::parse_scene(&scene("mode = \"force\", target = 20.0")).unwrap();
    let mut sim = axion::Simulator::new(parsed.model, 1, 0.01, BackendChoice::Cpu).unwrap();
    sim.run(100).unwrap();
    let v = sim.joint_motion(0, axion::JointId(0)).unwrap().velocity;
    assert!((v - 2.0).abs() < 1e-9, "{v}");
    assert!((sim.drive_force(0, axion::DriveId(0)) - 20.0).abs() < 1e-9);
    let err = axion::parse_scene(&scene("mode = \"force\", target = 20.0, ke = 5.0"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 9") && err.contains("a force drive takes `target`"),
        "{err}"
    );
}

/// Runs scene `text` (TOML) for `duration` s at h = 0.01 and returns the last row of
/// body `body` in trajectory.csv: x, y, z, qx, qy, qz, qw, vx, vy, vz, wx, wy, wz.
fn last_row(name: &str, text: &str, body: &str) -> Vec<f64> {
    let dir = std::env::temp_dir().join(format!("axion-forces-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("scene.toml");
    std::fs::write(&path, text).unwrap();
    let out = dir.join("out");
    run_scene(
        &path,
        &RunOptions {
            out: Some(out.clone()),
            duration: None,
            ..quick()
        },
    )
    .unwrap();
    let csv = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
    let row = csv
        .lines()
        .rfind(|l| l.split(',').nth(2) == Some(body))
        .unwrap()
        .split(',')
        .skip(3)
        .map(|v| v.parse().unwrap())
        .collect();
    std::fs::remove_dir_all(&dir).unwrap();
    row
}

/// `[[forces]]`: a 5 N push during the first half second gives the 1 kg cube 2.5 m/s
/// (F Δt / m) and no more; a force turning with the body at a lever of 1 m spins it
/// at T t / I; a force ramped by its schedule adds backward Euler's exact sum
/// Σ F k h² = 2 · 1e-4 · 5050 = 1.01 m/s over 1 s.
#[test]
fn applied_forces_push_as_written() {
    let cube = "[simulation]\ngravity = [0, 0, 0]\nduration = 1.0\n\n[[bodies]]\nname = \"cube\"\nmass = 1\ninertia = [0.5, 0.5, 0.25]\n";
    let pushed = format!("{cube}\n[[forces]]\nbody = \"cube\"\nforce = [5, 0, 0]\nend = 0.5\n");
    let row = last_row("push", &pushed, "cube");
    assert!((row[7] - 2.5).abs() < 1e-12, "vx = {}", row[7]);
    let spun = format!(
        "{cube}\n[[forces]]\nbody = \"cube\"\nforce = [0, 1, 0]\npoint = [1, 0, 0]\nframe = \"body\"\n"
    );
    let row = last_row("spin", &spun, "cube");
    assert!((row[12] - 1.0 / 0.25).abs() < 1e-9, "wz = {}", row[12]);
    let ramped = format!(
        "{cube}\n[[forces]]\nbody = \"cube\"\nforce = [2, 0, 0]\nschedule = [[0, 0], [1, 1]]\n"
    );
    let row = last_row("ramp", &ramped, "cube");
    assert!((row[7] - 1.01).abs() < 1e-12, "vx = {}", row[7]);
}

/// A force on an unknown or static body, or one that ends before it starts, is refused
/// with its line.
#[test]
fn impossible_forces_are_refused_with_their_line() {
    let base = "[[bodies]]\nname = \"floor\"\nkind = \"static\"\n\n[[bodies]]\nname = \"cube\"\nmass = 1\ninertia = [1, 1, 1]\n\n";
    for (force, expected) in [
        (
            "[[forces]]\nbody = \"door\"\nforce = [1, 0, 0]\n",
            "no body has this name",
        ),
        (
            "[[forces]]\nbody = \"floor\"\nforce = [1, 0, 0]\n",
            "static",
        ),
        (
            "[[forces]]\nbody = \"cube\"\nstart = 2\nend = 1\n",
            "must come after",
        ),
    ] {
        let err = parse_scene(&format!("{base}{force}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected) && err.contains("line 10"), "{err}");
    }
}

/// summary.json says what ran and how: the scene file, the integrator, and the solver
/// settings the file asked for.
#[test]
fn the_summary_records_the_file_and_the_solver_settings() {
    let dir = std::env::temp_dir().join(format!("axion-summary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pendulum.toml");
    let text = std::fs::read_to_string(root().join("examples/scenes/pendulum.toml")).unwrap();
    std::fs::write(
        &path,
        format!("{text}\n[simulation.solver]\nmax_iterations = 7\ncontact_margin = 0.03\n"),
    )
    .unwrap();
    let out = dir.join("out");
    run_scene(
        &path,
        &RunOptions {
            out: Some(out.clone()),
            ..quick()
        },
    )
    .unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["file"], path.display().to_string());
    assert_eq!(
        summary["integrator"], "energy–momentum",
        "the file asks for it"
    );
    assert_eq!(summary["solver"]["backend"], "cpu");
    assert_eq!(summary["solver"]["max_iterations"], 7);
    assert_eq!(summary["solver"]["contact_margin"], 0.03);
    std::fs::remove_dir_all(&dir).unwrap();
}
