//! Scene files: every documented and example scene parses and runs; malformed files
//! get errors that point at the line, never a panic.

use std::path::{Path, PathBuf};

use axion::{BackendChoice, parse_scene, parse_scene_in};
use axion_cli::{RunOptions, check_scene, run_scene};
use proptest::prelude::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The ```toml blocks of docs/scenes.md.
fn documented_scenes() -> Vec<String> {
    let doc = std::fs::read_to_string(root().join("docs/scenes.md")).unwrap();
    doc.split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect()
}

fn example_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples/scenes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

fn quick() -> RunOptions {
    RunOptions {
        dt: None,
        duration: Some(0.5),
        worlds: 1,
        backend: BackendChoice::Cpu,
        out: None,
        progress: false,
    }
}

#[test]
fn every_documented_and_example_scene_runs() {
    let docs = documented_scenes();
    assert!(docs.len() >= 2);
    let dir = std::env::temp_dir().join(format!("axion-doc-scenes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = example_files();
    assert!(files.len() >= 2);
    for (i, text) in docs.iter().enumerate() {
        let path = dir.join(format!("doc{i}.toml"));
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
    fn mutated_scene_files_never_panic(file in 0usize..3, at in any::<prop::sample::Index>(), with in prop::char::range(' ', '~'), how in 0u8..3) {
        let text = std::fs::read_to_string(&example_files()[file]).unwrap();
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
        if let Ok(scene) = parse_scene_in(&mutated, &root().join("examples/scenes"))
            && let Ok(mut sim) = axion::Simulator::new(scene.model, 1, 0.01, BackendChoice::Cpu)
        {
            let _ = sim.step();
        }
    }
}
