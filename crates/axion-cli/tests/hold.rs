//! Holding a robot's start pose with position drives (`axion run ROBOT --hold`,
//! [`axion_cli::Hold`]): the gains' rule, checked by the static sag it promises, and the
//! targets, clamped into the joints' ranges.

use std::path::PathBuf;

use axion::{BackendChoice, Simulator};
use axion_cli::{HOLD_SAG, Hold, RobotSetup, STANDARD_GRAVITY, holding_drives, robot_model};

/// A 2 kg arm whose centre of mass lies `D` = 0.5 m from a hinge about y at the world
/// origin, held horizontal (the hinge's range [lower, 1] rad).
fn arm(lower: f64) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("axion-hold-{}-arm{lower}.urdf", std::process::id()));
    std::fs::write(
        &path,
        format!(
            r#"<robot name="arm">
  <link name="world"/>
  <link name="arm">
    <inertial>
      <origin xyz="0.5 0 0"/>
      <mass value="2"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/>
    </inertial>
  </link>
  <joint name="hinge" type="revolute">
    <parent link="world"/><child link="arm"/>
    <axis xyz="0 1 0"/>
    <limit lower="{lower}" upper="1" effort="1000" velocity="10"/>
  </joint>
</robot>
"#
        ),
    )
    .unwrap();
    path
}

const MASS: f64 = 2.0;
const D: f64 = 0.5;

/// The hinge angle after 6 s of holding with `hold`.
fn settled_angle(hold: Hold) -> f64 {
    let setup = RobotSetup {
        hold: Some(hold),
        ..RobotSetup::default()
    };
    let path = arm(-1.0);
    let (model, _) = robot_model(&path, &setup).unwrap();
    std::fs::remove_file(path).unwrap();
    let hinge = model.joint_id("hinge").unwrap();
    let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::Cpu).unwrap();
    let s = sim.run(600).unwrap();
    assert_eq!(s.converged_steps, s.steps);
    sim.joint_motion(0, hinge).unwrap().position
}

/// The equilibrium sag $\delta$ of the arm held horizontal with stiffness `ke`:
/// $k_e\,\delta = m g D \cos\delta$, by Newton's method.
fn sag(ke: f64, g: f64) -> f64 {
    let mut d = 0.0;
    for _ in 0..50 {
        let f = ke * d - MASS * g * D * d.cos();
        d -= f / (ke + MASS * g * D * d.sin());
    }
    d
}

/// Under [`Hold::Scaled`] the arm (the whole robot's weight at a lever of its size, the
/// distance from hinge to centre of mass) gives way by [`HOLD_SAG`] rad, less the
/// cosine of the sag itself and the ratio of the model's gravity to $g_0$; with
/// explicit gains by the sag those gains give. The angle rises about y as the arm drops
/// (+x turned towards −z).
#[test]
fn a_held_arm_sags_as_its_gains_say() {
    let g = axion::ModelBuilder::new().build().unwrap().gravity().norm();
    let ke = MASS * STANDARD_GRAVITY * D / HOLD_SAG;
    let expected = sag(ke, g);
    // cos δ and g / g₀ move it by 0.1 % from the rule's round figure.
    assert!((expected - HOLD_SAG).abs() < 0.01 * HOLD_SAG);
    let got = settled_angle(Hold::Scaled);
    assert!(
        (got - expected).abs() < 1e-8,
        "scaled: {got} rad, expected {expected} rad"
    );
    let got = settled_angle(Hold::Gains { ke: 100.0, kd: 5.0 });
    let expected = sag(100.0, g);
    assert!(
        (got - expected).abs() < 1e-8,
        "gains: {got} rad, expected {expected} rad"
    );
}

/// The targets are the start coordinates, moved into the joints' ranges: a hinge
/// described at 0 with its range starting at 0.3 rad is held at 0.3 rad.
#[test]
fn a_held_joint_is_held_inside_its_range() {
    let path = arm(0.3);
    let (model, imported) = robot_model(&path, &RobotSetup::default()).unwrap();
    std::fs::remove_file(path).unwrap();
    let drives = holding_drives(&model, &imported, Hold::Scaled).unwrap();
    let Some(axion::DriveDesc::Position {
        target,
        target_velocity,
        ke,
        kd,
    }) = drives.get("hinge").copied()
    else {
        panic!("no position drive on the hinge: {drives:?}")
    };
    assert!((target - 0.3).abs() < 1e-12, "target {target}");
    assert_eq!(target_velocity, 0.0);
    let rule = MASS * STANDARD_GRAVITY * D / HOLD_SAG;
    assert!((ke - rule).abs() < 1e-9 * rule, "ke {ke}, rule {rule}");
    assert!(
        (kd - rule * axion_cli::HOLD_TIME).abs() < 1e-9 * rule,
        "kd {kd}"
    );
    assert_eq!(drives.len(), 1);
}

/// A ball joint has no single coordinate to drive: holding the pose leaves it free and
/// says so, naming it.
#[test]
fn ball_joints_are_named_as_left_free() {
    let dir = std::env::temp_dir().join(format!("axion-hold-ball-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("shoulder.urdf");
    let link = |name: &str| {
        format!(
            r#"<link name="{name}"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>"#
        )
    };
    std::fs::write(
        &path,
        format!(
            r#"<robot name="r">
  <link name="world"/>
  {}
  {}
  <joint name="shoulder" type="spherical"><parent link="world"/><child link="upper"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>
"#,
            link("upper"),
            link("lower")
        ),
    )
    .unwrap();
    let setup = RobotSetup {
        hold: Some(Hold::Scaled),
        ..RobotSetup::default()
    };
    let (model, imported) = robot_model(&path, &setup).unwrap();
    assert_eq!(model.drives().len(), 1);
    assert!(
        imported.warnings.iter().any(|w| w
            .message
            .contains("1 ball joint(s) are left free (shoulder)")),
        "{:?}",
        imported.warnings
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
