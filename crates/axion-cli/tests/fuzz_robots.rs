//! A structure-aware fuzzer over robot files, run by the test command for a bounded
//! number of cases (`PROPTEST_CASES`, default 2000): the shipped URDF robots and an MJCF
//! arm, mutated — a number replaced by an extreme one (−0, 0, −1, 1e308, NaN, inf), a
//! character replaced, a line dropped, the text cut — are imported as `axion run` does
//! or refused with an error naming the file and line, and whatever is accepted steps
//! without a panic and never yields a non-finite state silently.

use std::path::{Path, PathBuf};

use axion::{BackendChoice, Simulator};
use axion_cli::{RobotSetup, robot_model};
use proptest::prelude::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const ARM_MJCF: &str = r#"<mujoco model="arm">
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body name="upper" pos="0 0 1"><joint name="shoulder" axis="0 1 0" range="-90 90"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
      <body name="lower" pos="0.5 0 0"><joint name="elbow" axis="0 1 0"/><geom type="box" size="0.2 0.05 0.05" pos="0.2 0 0"/></body>
    </body>
    <body name="ball" pos="1 0 0.5"><freejoint/><geom type="sphere" size="0.1" mass="2"/></body>
  </worldbody>
  <actuator><position joint="shoulder" kp="50" forcerange="-5 5"/></actuator>
</mujoco>"#;

/// The robots the fuzzer starts from: (file name, text).
fn robots() -> Vec<(&'static str, String)> {
    let read = |f: &str| std::fs::read_to_string(root().join("examples/robots").join(f)).unwrap();
    vec![
        ("skid_steer.urdf", read("skid_steer.urdf")),
        ("cartpole.urdf", read("cartpole.urdf")),
        ("arm.xml", ARM_MJCF.to_string()),
    ]
}

/// Byte ranges of the numbers in `text`.
fn numbers(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit()
            || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
        if starts && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
            let start = i;
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || b".eE-+".contains(&bytes[i])) {
                i += 1;
            }
            out.push(start..i);
        } else {
            i += 1;
        }
    }
    out
}

const EXTREMES: [&str; 7] = ["-0.0", "0", "-1", "1e308", "-1e308", "NaN", "inf"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(2000)))]

    #[test]
    fn mutated_robot_files_never_panic(
        file in 0usize..3,
        at in any::<prop::sample::Index>(),
        extreme in 0usize..EXTREMES.len(),
        with in prop::char::range(' ', '~'),
        how in 0u8..4,
    ) {
        let (name, text) = robots().swap_remove(file);
        let mutated = match how {
            0 => {
                let spans = numbers(&text);
                let span = spans[at.index(spans.len())].clone();
                format!("{}{}{}", &text[..span.start], EXTREMES[extreme], &text[span.end..])
            }
            1 => {
                let mut chars: Vec<char> = text.chars().collect();
                let i = at.index(chars.len());
                chars[i] = with;
                chars.into_iter().collect()
            }
            2 => {
                let lines: Vec<&str> = text.lines().collect();
                let i = at.index(lines.len());
                lines.iter().enumerate().filter(|(k, _)| *k != i).map(|(_, l)| *l).collect::<Vec<_>>().join("\n")
            }
            _ => text.chars().take(at.index(text.len())).collect(),
        };
        let dir = std::env::temp_dir().join(format!("axion-fuzz-robots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, &mutated).unwrap();
        match robot_model(&path, &RobotSetup::default()) {
            Err(e) => {
                let message = e.to_string();
                let debug = ["Some(", "Matrix {", "Unit {", "Isometry {", "Vector3 {", "Err(", "Ok("];
                prop_assert!(!debug.iter().any(|d| message.contains(d)), "Rust debug text: {message}");
            }
            Ok((model, _)) => {
                if let Ok(mut sim) = Simulator::new(model, 1, 0.01, BackendChoice::Cpu) {
                    for _ in 0..5 {
                        if sim.step().is_err() {
                            break;
                        }
                        let finite = (0..sim.model().bodies().len()).all(|b| {
                            let id = axion::BodyId(b);
                            sim.state().velocity(0, id).iter().all(|x| x.is_finite())
                                && sim.state().com_pose(0, id).translation.vector.iter().all(|x| x.is_finite())
                        });
                        prop_assert!(finite, "a step returned Ok with a non-finite state");
                    }
                }
            }
        }
    }
}
