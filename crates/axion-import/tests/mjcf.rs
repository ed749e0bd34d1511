//! MJCF import checked against MuJoCo's own compiler: every body's mass, centre of mass
//! and inertia (in the world, bodies welded together combined), and every joint's
//! anchor and axis in the world, equal those of MuJoCo's compiled model within 1e-9
//! relative.
//!
//! MuJoCo runs in Python (`pip install mujoco`). Without it the comparisons print why
//! they are skipped and pass, unless `AXION_MUJOCO_REQUIRED=1` (set by `.ci/run`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use axion_constraints::joint::JointKind;
use axion_import::{RobotOptions, import_mjcf, import_mjcf_file};
use axion_model::{BodyId, Model, ModelBuilder};
use nalgebra::{Matrix3, Vector3};

/// Prints MuJoCo's compiled bodies and joints as JSON, at the reference pose with the
/// coordinates of the joints named in the JSON object of the second argument set.
const MUJOCO_DUMP: &str = r#"
import json, sys
import mujoco
import numpy as np
m = mujoco.MjModel.from_xml_path(sys.argv[1])
d = mujoco.MjData(m)
for joint, q in json.loads(sys.argv[2]).items():
    d.qpos[m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, joint)]] = q
mujoco.mj_forward(m, d)
name = lambda kind, i: mujoco.mj_id2name(m, kind, i)
bodies = []
for b in range(m.nbody):
    R = d.ximat[b].reshape(3, 3)
    bodies.append({
        "name": name(mujoco.mjtObj.mjOBJ_BODY, b),
        "mass": float(m.body_mass[b]),
        "com": d.xipos[b].tolist(),
        "inertia": (R @ np.diag(m.body_inertia[b]) @ R.T).tolist(),
    })
joints = [{
    "name": name(mujoco.mjtObj.mjOBJ_JOINT, j),
    "type": int(m.jnt_type[j]),
    "anchor": d.xanchor[j].tolist(),
    "axis": d.xaxis[j].tolist(),
} for j in range(m.njnt)]
print(json.dumps({"bodies": bodies, "joints": joints}))
"#;

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether MuJoCo can be run; prints why not (and fails when it is required).
fn mujoco_available() -> bool {
    let ok = Command::new(python())
        .args(["-c", "import mujoco"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let reason = "skipped: the Python package mujoco is not installed (pip install mujoco)";
        assert!(
            std::env::var_os("AXION_MUJOCO_REQUIRED").is_none_or(|v| v != "1"),
            "{reason}, and AXION_MUJOCO_REQUIRED=1"
        );
        println!("{reason}");
    }
    ok
}

/// What MuJoCo compiled from `path`, with the joints of `positions` at those
/// coordinates (rad, m).
fn mujoco_model(path: &Path, positions: &HashMap<String, f64>) -> serde_json::Value {
    mujoco_json(
        MUJOCO_DUMP,
        path,
        &[serde_json::to_string(positions).unwrap()],
    )
}

/// The JSON that the Python `script` prints for the model file `path` and `args`.
fn mujoco_json(script: &str, path: &Path, args: &[String]) -> serde_json::Value {
    let out = Command::new(python())
        .args(["-c", script])
        .arg(path)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "MuJoCo on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn vector(v: &serde_json::Value) -> Vector3<f64> {
    Vector3::from_iterator(v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
}

fn matrix(v: &serde_json::Value) -> Matrix3<f64> {
    let rows: Vec<Vector3<f64>> = v.as_array().unwrap().iter().map(vector).collect();
    Matrix3::from_rows(&[
        rows[0].transpose(),
        rows[1].transpose(),
        rows[2].transpose(),
    ])
}

/// One body's mass, centre and inertia in the world.
type Part = (f64, Vector3<f64>, Matrix3<f64>);

/// |a − b| within 1e-9 of `scale`.
fn close(what: &str, a: f64, b: f64, scale: f64, errors: &mut Vec<String>) {
    if (a - b).abs() > 1e-9 * scale {
        errors.push(format!("{what}: ours {a:e}, MuJoCo {b:e}"));
    }
}

/// Imports `path` and compares it with MuJoCo's compiled model, both with the joints
/// of `positions` at those coordinates; returns the mismatches.
fn compare_at(path: &Path, positions: &HashMap<String, f64>) -> Vec<String> {
    compare_with(path, path, positions)
}

/// Imports `ours` and compares it with MuJoCo's compiled model of `theirs` (the same
/// model, written as MuJoCo reads it), both with the joints of `positions` at those
/// coordinates; returns the mismatches.
fn compare_with(ours: &Path, theirs: &Path, positions: &HashMap<String, f64>) -> Vec<String> {
    let mut b = ModelBuilder::new();
    let options = RobotOptions {
        initial_positions: positions.clone(),
        ..Default::default()
    };
    let imported = import_mjcf_file(ours, &options, &mut b).unwrap_or_else(|e| panic!("{e}"));
    let model: Model = b.build().unwrap();
    let mj = mujoco_model(theirs, positions);
    let mut errors = Vec::new();
    // MuJoCo's bodies grouped by the body that carries them here (welded bodies merge).
    let mut groups: HashMap<BodyId, Vec<Part>> = HashMap::new();
    for (k, body) in mj["bodies"].as_array().unwrap().iter().enumerate() {
        let name = match body["name"].as_str() {
            Some(n) if !n.is_empty() => n.to_string(),
            _ if k == 0 => "world".to_string(),
            _ => format!("body{k}"),
        };
        let Some(&id) = imported.links.get(&name) else {
            errors.push(format!("MuJoCo's body {name:?} is missing"));
            continue;
        };
        groups.entry(id).or_default().push((
            body["mass"].as_f64().unwrap(),
            vector(&body["com"]),
            matrix(&body["inertia"]),
        ));
    }
    for (id, parts) in groups {
        let ours = &model.bodies()[id.0];
        if !ours.is_dynamic() {
            continue;
        }
        let (mass, com, inertia) = axion_math::combine_parts(&parts).unwrap();
        let name = &ours.name;
        close(
            &format!("{name} mass"),
            ours.mass.mass(),
            mass,
            mass,
            &mut errors,
        );
        let our_com = ours.initial_pose.translation.vector;
        let size = com.norm().max(1.0);
        for k in 0..3 {
            close(
                &format!("{name} com[{k}]"),
                our_com[k],
                com[k],
                size,
                &mut errors,
            );
        }
        let r = ours.initial_pose.rotation.to_rotation_matrix().into_inner();
        let our_inertia = r * ours.mass.inertia() * r.transpose();
        let scale = inertia.abs().max();
        for (k, (a, b)) in our_inertia.iter().zip(inertia.iter()).enumerate() {
            close(&format!("{name} inertia[{k}]"), *a, *b, scale, &mut errors);
        }
    }
    for joint in mj["joints"].as_array().unwrap() {
        let name = joint["name"].as_str().unwrap_or_default();
        if joint["type"] == 0 {
            continue; // free joints: no anchor or axis
        }
        let Some(&id) = imported.joints.get(name) else {
            errors.push(format!("MuJoCo's joint {name:?} is missing"));
            continue;
        };
        let j = &model.joints()[id.0];
        let parent = j.parent.map_or(nalgebra::Isometry3::identity(), |p| {
            model.bodies()[p.0].initial_pose
        });
        let frame = parent * j.joint.frames.parent;
        let anchor = frame.translation.vector;
        let mj_anchor = vector(&joint["anchor"]);
        let size = mj_anchor.norm().max(1.0);
        for k in 0..3 {
            close(
                &format!("joint {name} anchor[{k}]"),
                anchor[k],
                mj_anchor[k],
                size,
                &mut errors,
            );
        }
        let axis = match j.joint.kind {
            JointKind::Revolute { axis } | JointKind::Prismatic { axis } => axis.vector(),
            _ => continue,
        };
        let axis = frame.rotation * axis;
        let mj_axis = vector(&joint["axis"]);
        for k in 0..3 {
            close(
                &format!("joint {name} axis[{k}]"),
                axis[k],
                mj_axis[k],
                1.0,
                &mut errors,
            );
        }
    }
    errors
}

/// [`compare_at`] at the reference pose.
fn compare(path: &Path) -> Vec<String> {
    compare_at(path, &HashMap::new())
}

/// A model written for this test: nested default classes with `childclass`, every way
/// of giving an orientation, geoms with `fromto`, `mass` and `density`, an explicit
/// `fullinertia`, a welded body, joints with anchors off the body origin, slides.
const RICH: &str = r#"<mujoco model="rich">
  <compiler angle="degree" eulerseq="zyx"/>
  <default>
    <geom density="700" friction="0.8"/>
    <joint damping="0.1"/>
    <default class="limb">
      <geom type="capsule" size="0.04"/>
      <joint type="hinge" axis="0 1 0" range="-90 90"/>
      <default class="heavy">
        <geom density="2500"/>
      </default>
    </default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="base" pos="0.1 -0.2 1.0" euler="30 10 -20">
      <freejoint/>
      <geom type="box" size="0.2 0.15 0.1"/>
      <geom type="sphere" size="0.05" pos="0.2 0 0.1" mass="0.3"/>
      <body name="arm" pos="0.2 0.1 0" xyaxes="0 1 0 -1 0 0" childclass="limb">
        <joint name="shoulder" pos="0 0 0.02"/>
        <geom fromto="0 0 0 0.3 0.1 -0.2"/>
        <body name="forearm" pos="0.3 0.1 -0.2" zaxis="1 1 0">
          <joint name="elbow" axis="1 0 0" pos="0.01 0 0"/>
          <geom class="heavy" fromto="0 0 0 0 0 0.25" size="0.03"/>
          <body name="tool" pos="0 0 0.25" axisangle="0 1 1 45">
            <geom type="cylinder" size="0.02 0.05"/>
          </body>
          <body name="sensor" pos="0.02 0 0.1">
            <inertial pos="0.01 0 0" quat="0.8 0.2 0.1 0.5" mass="0.2" diaginertia="0.001 0.002 0.0025"/>
          </body>
        </body>
      </body>
      <body name="slider" pos="-0.2 0 0" quat="0.9 0.1 0.3 -0.2">
        <joint name="rail" type="slide" axis="1 0 0" range="-0.1 0.1"/>
        <inertial pos="0.01 0.02 0.03" mass="1.5" fullinertia="0.02 0.03 0.04 0.001 -0.002 0.003"/>
        <geom type="box" fromto="0 0 0 0.1 0 0" size="0.02 0.03"/>
      </body>
    </body>
  </worldbody>
</mujoco>"#;

/// `f` of a file `name` holding `text`, in a folder of its own under the temporary
/// folder (removed afterwards).
fn with_file<T>(name: &str, text: &str, f: impl FnOnce(&Path) -> T) -> T {
    let dir = std::env::temp_dir().join(format!("axion-mjcf-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let out = f(&path);
    std::fs::remove_dir_all(&dir).unwrap();
    out
}

#[test]
fn masses_frames_and_joints_equal_mujoco_on_a_written_model() {
    if !mujoco_available() {
        return;
    }
    let errors = with_file("rich.xml", RICH, compare);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Bodies with several joints (compound joints), written for this test: a planar root
/// with its hinge off the body origin, a three-hinge hip with skew axes and anchors off
/// the origin, a slide then a hinge, a hinge then a ball.
const COMPOUND: &str = r#"<mujoco model="compound">
  <compiler angle="radian"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="torso" pos="0 0 1.2" euler="0.1 0.2 0.3">
      <joint name="rootx" type="slide" axis="1 0 0"/>
      <joint name="rootz" type="slide" axis="0 0 1"/>
      <joint name="rooty" axis="0 1 0" pos="0.05 0 0.02"/>
      <geom type="box" size="0.2 0.1 0.05"/>
      <body name="thigh" pos="0.1 0.05 -0.1" quat="0.9 0.1 0.2 0.3">
        <joint name="hip_x" axis="1 0 0" pos="0 0 0.03"/>
        <joint name="hip_z" axis="0.2 0 1" pos="0 0 0.03"/>
        <joint name="hip_y" axis="0 1 0.3" pos="0.01 0 0.03"/>
        <geom type="capsule" fromto="0 0 0 0.05 0 -0.3" size="0.04"/>
        <body name="shin" pos="0.05 0 -0.3">
          <joint name="knee_slide" type="slide" axis="0.1 0 1"/>
          <joint name="knee" axis="0 1 0" pos="0.02 0 0.01"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.25" size="0.03"/>
          <body name="foot" pos="0 0 -0.25">
            <joint name="toe" axis="1 0 0" pos="0.03 0 -0.02"/>
            <joint name="ankle" type="ball" pos="0 0 0.01"/>
            <geom type="box" size="0.06 0.03 0.02"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"#;

/// MuJoCo composes a body's joints in order, each about its anchor and axis in the
/// body frame moved by the joints before it; the massless frames between the joints
/// compose them the same way: with every coordinate away from 0, every body's mass,
/// centre and inertia in the world and every joint's anchor and axis equal MuJoCo's.
#[test]
fn compound_joints_compose_as_mujoco() {
    if !mujoco_available() {
        return;
    }
    let positions: HashMap<String, f64> = [
        ("rootx", 0.3),
        ("rootz", -0.2),
        ("rooty", 0.4),
        ("hip_x", 0.3),
        ("hip_z", -0.5),
        ("hip_y", 0.7),
        ("knee_slide", 0.05),
        ("knee", -0.6),
        ("toe", 0.2),
    ]
    .into_iter()
    .map(|(j, q)| (j.to_string(), q))
    .collect();
    let (at_zero, moved, model, imported) = with_file("compound.xml", COMPOUND, |path| {
        let mut b = ModelBuilder::new();
        let imported = import_mjcf_file(path, &RobotOptions::default(), &mut b).unwrap();
        (
            compare(path),
            compare_at(path, &positions),
            b.build().unwrap(),
            imported,
        )
    });
    assert!(at_zero.is_empty(), "{}", at_zero.join("\n"));
    assert!(moved.is_empty(), "{}", moved.join("\n"));
    // Frames after every joint but a body's last: 2 + 2 + 1 + 1.
    let frames = model
        .bodies()
        .iter()
        .filter(|b| b.kind == axion_model::BodyKind::Frame)
        .count();
    assert_eq!(frames, 6);
    assert_eq!(imported.joints.len(), 10);
}

/// The corpus's MJCF files that load here and in MuJoCo 4.0 (which refuses
/// `half_cheetah.xml`, `swimmer.xml` and `humanoid_symmetric.xml` of this package for
/// an `<inertial>` without `pos`, an `<option collision>` and a missing material): each
/// equals MuJoCo's compiled model; so do `hopper.xml` and `walker2d.xml`, in global
/// coordinates, against MuJoCo's model of a copy in local ones.
#[test]
fn corpus_models_equal_mujoco() {
    let root = std::env::var_os("AXION_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus"),
        PathBuf::from,
    );
    let folder = root.join("pybullet_data/mjcf");
    if !folder.is_dir() {
        assert!(
            std::env::var_os("AXION_CORPUS_REQUIRED").is_none_or(|v| v != "1"),
            "no robot corpus at {}",
            folder.display()
        );
        println!(
            "skipped: no robot corpus at {} (run scripts/fetch-corpus.sh)",
            folder.display()
        );
        return;
    }
    if !mujoco_available() {
        return;
    }
    let mut failures = Vec::new();
    for file in [
        "ant.xml",
        "inverted_pendulum.xml",
        "inverted_double_pendulum.xml",
        "capsule.xml",
        "capsule_fromtoX.xml",
        "cylinder_fromtoY.xml",
        "hello_mjcf.xml",
        "humanoid.xml",
        "humanoid_symmetric_no_ground.xml",
        "reacher.xml",
        "pusher.xml",
        "striker.xml",
        "thrower.xml",
    ] {
        let errors = compare(&folder.join(file));
        println!("{file}: {} mismatches", errors.len());
        failures.extend(errors.into_iter().map(|e| format!("{file}: {e}")));
    }
    // MuJoCo 4.0 no longer reads global coordinates; where no body has a frame of its
    // own they are local ones, so MuJoCo compiles a copy without the attribute.
    for file in ["hopper.xml", "walker2d.xml"] {
        let text = std::fs::read_to_string(folder.join(file)).unwrap();
        assert!(text.contains(r#"coordinate="global""#));
        // (and without the material the files use but never define, which MuJoCo
        // refuses; materials do not change a model's masses or frames)
        let local = text
            .replace(r#"coordinate="global""#, "")
            .replace(r#"material="geom""#, "");
        let errors = with_file(file, &local, |copy| {
            compare_with(&folder.join(file), copy, &HashMap::new())
        });
        println!("{file} (global coordinates): {} mismatches", errors.len());
        failures.extend(errors.into_iter().map(|e| format!("{file}: {e}")));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What is refused names the element and the line: a free joint beside other joints
/// in one body, a rotation after a ball joint, global coordinates with a body frame, an
/// unknown joint type, `fullinertia` with an orientation (as MuJoCo refuses them), a
/// URDF passed as MJCF.
#[test]
fn refusals_name_the_line() {
    let refuse = |text: &str| {
        import_mjcf(text, &RobotOptions::default(), &mut ModelBuilder::new())
            .unwrap_err()
            .to_string()
    };
    let free = "<mujoco>\n<worldbody>\n<body name=\"b\">\n<joint name=\"x\" type=\"slide\" axis=\"1 0 0\"/>\n<freejoint/>\n<geom size=\"0.1\"/></body></worldbody></mujoco>";
    let e = refuse(free);
    assert!(
        e.starts_with("line 5: a free joint beside other joints in body \"b\""),
        "{e}"
    );
    let e = refuse(
        "<mujoco><worldbody><body name=\"b\">\n<joint type=\"ball\"/>\n<joint axis=\"1 0 0\"/><geom size=\"1\"/></body></worldbody></mujoco>",
    );
    assert!(
        e.starts_with("line 3: a rotation after a ball joint in body \"b\""),
        "{e}"
    );
    let e = refuse(
        "<mujoco>\n<compiler coordinate=\"global\"/><worldbody>\n<body name=\"b\" pos=\"0 0 1\"><geom size=\"1\"/></body></worldbody></mujoco>",
    );
    assert!(
        e.starts_with("line 3: a body frame (body \"b\") in compiler coordinate \"global\""),
        "{e}"
    );
    let e = refuse(
        "<mujoco><worldbody>\n<body><joint type=\"fixed\"/><geom size=\"1\"/></body></worldbody></mujoco>",
    );
    assert!(
        e.starts_with("line 2: joint") && e.contains("unknown type \"fixed\""),
        "{e}"
    );
    let e = refuse(
        "<mujoco><worldbody>\n<body><joint/>\n<inertial mass=\"1\" quat=\"1 0 0 0\" fullinertia=\"1 1 1 0 0 0\"/></body></worldbody></mujoco>",
    );
    assert!(
        e.starts_with("line 3: ") && e.contains("orientation"),
        "{e}"
    );
    let e = refuse("<robot name=\"r\"/>");
    assert!(e.contains("this is a URDF robot"), "{e}");
}

/// Position and velocity actuators become drives with the gear squared in their gains
/// (one drive when both act on a joint); a motor becomes a force drive, or the
/// feed-forward force of a servo on its joint; a scene takes the model with
/// `[[robots]] mjcf = "…"`.
#[test]
fn actuators_become_drives_and_scenes_take_mjcf() {
    let dir = std::env::temp_dir().join(format!("axion-mjcf-scene-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("arm.xml"),
        r#"<mujoco model="arm">
  <default><position kp="50"/></default>
  <worldbody>
    <body name="upper" pos="0 0 1"><joint name="shoulder" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
      <body name="lower" pos="0.5 0 0"><joint name="elbow" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
        <body name="hand" pos="0.4 0 0"><joint name="wrist" axis="0 0 1"/><geom size="0.05"/></body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position joint="shoulder" gear="2" kv="3"/>
    <position joint="elbow"/>
    <velocity joint="elbow" kv="7"/>
    <motor joint="wrist" gear="10"/>
    <motor joint="elbow" gear="2" ctrlrange="-1 1"/>
  </actuator>
</mujoco>"#,
    )
    .unwrap();
    let scene = "[[robots]]\nmjcf = \"arm.xml\"\nposition = [0, 0, 0.5]\n";
    let scene = axion_import::parse_scene_in(scene, &dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let model = &scene.model;
    let gains = |joint: &str| {
        let j = model.joints().iter().find(|j| j.name == joint).unwrap();
        j.drive.map(|d| {
            let drive = &model.drives()[d.0].initial;
            (
                matches!(drive.mode(), DriveMode::Position { .. }),
                drive.ke(),
                drive.kd(),
            )
        })
    };
    use axion_constraints::drive::DriveMode;
    assert_eq!(gains("shoulder"), Some((true, 200.0, 12.0)));
    assert_eq!(gains("elbow"), Some((true, 50.0, 7.0)));
    assert_eq!(gains("wrist"), Some((false, 0.0, 0.0)));
    let drive = |joint: &str| {
        let j = model.joints().iter().find(|j| j.name == joint).unwrap();
        model.drives()[j.drive.unwrap().0].initial
    };
    assert!(matches!(drive("wrist").mode(), DriveMode::Force));
    assert_eq!(drive("wrist").max_force(), f64::INFINITY);
    // The elbow's motor adds its bound (2 N·m) to servos without one.
    assert_eq!(drive("elbow").max_force(), f64::INFINITY);
    assert!(
        scene.warnings.iter().all(|w| !w.message.contains("motor")),
        "{:?}",
        scene.warnings
    );
    // The scene's base pose moves the world-welded tree: the upper arm's joint is at
    // z = 1.5.
    let upper = model.body_id("upper").unwrap();
    assert!((model.bodies()[upper.0].initial_pose.translation.z - 1.5).abs() < 1e-12);
}

/// An actuator's `forcerange` (with `forcelimited` auto or true) bounds its drive at the
/// gear times its larger end; `forcelimited="false"` leaves it unbounded; an
/// asymmetric range is warned about; a range without 0 is refused with its line.
#[test]
fn forcerange_bounds_the_drive() {
    let model = |actuator: &str| {
        let text = format!(
            r#"<mujoco>
  <worldbody>
    <body name="arm" pos="0 0 1"><joint name="j" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/></body>
  </worldbody>
  <actuator>
    {actuator}
  </actuator>
</mujoco>"#
        );
        let mut b = ModelBuilder::new();
        import_mjcf(&text, &RobotOptions::default(), &mut b).map(|imported| {
            let model = b.build().unwrap();
            (model.drives()[0].initial.max_force(), imported.warnings)
        })
    };
    let (limit, warnings) =
        model(r#"<position joint="j" kp="100" gear="3" forcerange="-2 2"/>"#).unwrap();
    assert_eq!(limit, 6.0);
    assert!(
        warnings.iter().all(|w| !w.message.contains("forcerange")),
        "{warnings:?}"
    );
    let (limit, _) =
        model(r#"<position joint="j" kp="100" forcelimited="false" forcerange="-2 2"/>"#).unwrap();
    assert_eq!(limit, f64::INFINITY);
    let (limit, warnings) = model(r#"<velocity joint="j" kv="10" forcerange="-1 3"/>"#).unwrap();
    assert_eq!(limit, 3.0);
    assert!(
        warnings
            .iter()
            .any(|w| w.message.contains("asymmetric forcerange")),
        "{warnings:?}"
    );
    // A motor: the gear times the smaller of its control and force bounds.
    let (limit, _) = model(r#"<motor joint="j" gear="150" ctrlrange="-1 1"/>"#).unwrap();
    assert_eq!(limit, 150.0);
    let (limit, _) =
        model(r#"<motor joint="j" gear="150" ctrlrange="-1 1" forcerange="-0.5 0.5"/>"#).unwrap();
    assert_eq!(limit, 75.0);
    let (limit, _) =
        model(r#"<motor joint="j" gear="150" ctrllimited="false" ctrlrange="-1 1"/>"#).unwrap();
    assert_eq!(limit, f64::INFINITY);
    let err = model(r#"<motor joint="j" ctrlrange="0.5 1"/>"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("ctrlrange [0.5, 1] must contain 0"), "{err}");
    let err = model(r#"<position joint="j" kp="1" forcerange="1 2"/>"#)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("must contain 0") && err.contains("line 6"),
        "{err}"
    );
}

/// An arm written for this test: two hinges and a slide, each with an armature and a
/// motor (gears 20, 5 and 10, controls limited to ±1); no contacts.
const MOTORS: &str = r#"<mujoco model="motors">
  <compiler angle="radian"/>
  <default>
    <joint armature="0.05"/>
    <geom contype="0" conaffinity="0" density="500"/>
    <motor ctrlrange="-1 1"/>
  </default>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
      <body name="lower" pos="0.4 0 0">
        <joint name="elbow" axis="0 1 0" armature="0.02"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0.1" size="0.03"/>
        <body name="slider" pos="0.3 0 0.1">
          <joint name="extend" type="slide" axis="1 0 0.3" armature="0.5"/>
          <geom type="box" size="0.05 0.03 0.03"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="shoulder" gear="20"/>
    <motor joint="elbow" gear="5"/>
    <motor joint="extend" gear="10"/>
  </actuator>
</mujoco>"#;

/// Runs the model `argv[1]` with the controls `argv[2]` (JSON list) for `argv[3]`
/// seconds with RK4 at the step `argv[4]`; prints every joint's coordinate.
const MUJOCO_RUN: &str = r#"
import json, sys
import mujoco
m = mujoco.MjModel.from_xml_path(sys.argv[1])
m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
m.opt.timestep = float(sys.argv[4])
d = mujoco.MjData(m)
d.ctrl[:] = json.loads(sys.argv[2])
for _ in range(round(float(sys.argv[3]) / m.opt.timestep)):
    mujoco.mj_step(m, d)
print(json.dumps({mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j): float(d.qpos[m.jnt_qposadr[j]]) for j in range(m.njnt)}))
"#;

/// Motors and armature move the arm as in MuJoCo. Controls (0.4, −0.7, 1.5): the last is
/// beyond its range, so MuJoCo clamps it to 1, and our drive's largest force (the gear
/// times the range) clamps 15 N to 10 N. After 0.5 s (the arm turns more than a
/// revolution) MuJoCo's joint coordinates (RK4 at 1e-4 s: converged far below the
/// differences here) are the limit of ours: the energy–momentum scheme's difference
/// falls fourfold when its step halves from 1e-3 s to 5e-4 s (second order), and is
/// below 1e-4 at 5e-4 s. Without the armature, or with the gear left out, the arm ends
/// more than 1e-2 away.
#[test]
fn motors_and_armature_move_the_arm_as_in_mujoco() {
    use axion_model::{Backend, Control, State};
    if !mujoco_available() {
        return;
    }
    let names = ["shoulder", "elbow", "extend"];
    let (duration, ctrl, gears): (f64, _, _) = (0.5, [0.4, -0.7, 1.5], [20.0, 5.0, 10.0]);
    let theirs = with_file("motors.xml", MOTORS, |path| {
        mujoco_json(
            MUJOCO_RUN,
            path,
            &[
                serde_json::to_string(&ctrl).unwrap(),
                duration.to_string(),
                "1e-4".into(),
            ],
        )
    });
    let theirs = names.map(|n| theirs[n].as_f64().unwrap());
    // Per joint, |ours − MuJoCo's| (hinge angles compared modulo a turn).
    let differences = |text: &str, force: &dyn Fn(usize) -> f64, h: f64| {
        let mut b = ModelBuilder::new();
        let imported = import_mjcf(text, &RobotOptions::default(), &mut b).unwrap();
        let model = b.build().unwrap();
        let mut state = State::new(&model, 1).unwrap();
        let mut control = Control::new(&model, 1);
        for (k, name) in names.iter().enumerate() {
            let drive = model.joints()[imported.joints[*name].0].drive.unwrap();
            control.set_drive_force(0, drive, force(k)).unwrap();
            assert_eq!(control.drive(0, drive).max_force(), gears[k]);
        }
        let mut cpu = axion_cpu::CpuBackend::new(axion_cpu::SolverSettings {
            integrator: axion_cpu::Integrator::EnergyMomentum,
            ..Default::default()
        });
        for _ in 0..(duration / h).round() as usize {
            let report = cpu.step(&model, &mut state, &control, h).unwrap();
            assert!(report.all_converged());
        }
        let mut out = [0.0; 3];
        for (k, name) in names.iter().enumerate() {
            let q = axion_model::measure::joint_motion(&model, &state, 0, imported.joints[*name])
                .unwrap()
                .position;
            let d = q - theirs[k];
            out[k] = if k < 2 { axion_math::wrap_angle(d) } else { d }.abs();
        }
        out
    };
    let geared = |k: usize| gears[k] * ctrl[k];
    let coarse = differences(MOTORS, &geared, 1e-3);
    let fine = differences(MOTORS, &geared, 5e-4);
    for (k, name) in names.iter().enumerate() {
        println!(
            "{name}: MuJoCo {:.9}; ours differs by {:.2e} at h = 1e-3, {:.2e} at 5e-4 (ratio {:.2})",
            theirs[k],
            coarse[k],
            fine[k],
            coarse[k] / fine[k]
        );
        assert!(fine[k] < 1e-4, "{name}: {}", fine[k]);
        assert!((3.0..5.0).contains(&(coarse[k] / fine[k])), "{name}");
    }
    // The comparison can fail: no armature, or no gear, moves the arm elsewhere.
    let light = ["0.05", "0.02", "0.5"]
        .iter()
        .fold(MOTORS.to_string(), |text, a| {
            text.replace(&format!("armature=\"{a}\""), "armature=\"0\"")
        });
    let largest = |d: [f64; 3]| d.into_iter().fold(0.0, f64::max);
    assert!(largest(differences(&light, &geared, 1e-3)) > 1e-2);
    assert!(largest(differences(MOTORS, &|k| ctrl[k], 1e-3)) > 1e-2);
}
