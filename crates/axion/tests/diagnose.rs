//! `initial_state`: what a model's initial poses violate, measured before any step.

use axion::prelude::*;
use axion::{RobotOptions, import_urdf, initial_state};
use nalgebra::{Isometry3, Vector3};

/// Two boxes placed 3 cm into each other, and a pendulum whose joint anchors start 2 m
/// apart: the overlap and the gap are reported with their bodies and joint.
#[test]
fn overlaps_and_joint_gaps_are_reported() {
    let mut b = ModelBuilder::new();
    let cube = || {
        ShapeDesc::new(Shape::Box {
            half_extents: Vector3::repeat(0.1),
        })
    };
    b.add_body(BodyDesc::dynamic("lower").shape(cube()))
        .unwrap();
    b.add_body(
        BodyDesc::dynamic("upper")
            .at(Vector3::new(0.0, 0.0, 0.17))
            .shape(cube()),
    )
    .unwrap();
    let bob = b
        .add_body(
            BodyDesc::dynamic("bob")
                .at(Vector3::new(5.0, 0.0, 0.0))
                .shape(cube()),
        )
        .unwrap();
    b.add_joint(
        JointDesc::new("pin", JointType::Ball, None, bob)
            .frames(Isometry3::translation(3.0, 0.0, 0.0), Isometry3::identity()),
    )
    .unwrap();
    let report = initial_state(&b.build().unwrap()).unwrap();
    let (depth, a, c) = report.penetration.clone().unwrap();
    assert!((depth - 0.03).abs() < 1e-9, "{depth}");
    assert_eq!(
        [a.as_str(), c.as_str()].map(|n| n == "lower" || n == "upper"),
        [true, true]
    );
    let gap = report.joint_gap.clone().unwrap();
    assert_eq!((gap.joint.as_str(), gap.unit), ("pin", "m"));
    assert!((gap.error - 2.0).abs() < 1e-12);
    assert!(report.to_string().contains("\"pin\" starts 2.00e0 m apart"));
}

/// A knee described at 0 with a range of [−2.7, −0.9] rad is reported outside it by
/// 0.9 rad; started in range it sits at −0.9 rad (the child turned about the axis) and
/// nothing is reported; an initial position puts it where it is asked.
#[test]
fn joints_out_of_range_are_reported_and_can_start_in_range() {
    let inertial = r#"<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>"#;
    let urdf = format!(
        r#"<robot name="leg"><link name="thigh">{inertial}</link><link name="calf">{inertial}</link>
  <joint name="knee" type="revolute"><parent link="thigh"/><child link="calf"/><origin xyz="0 0 -0.2"/><axis xyz="0 1 0"/><limit lower="-2.7" upper="-0.9"/></joint></robot>"#
    );
    let import = |options: RobotOptions| {
        let mut b = ModelBuilder::new();
        let imported = import_urdf(&urdf, &options, &mut b).unwrap();
        (b.build().unwrap(), imported)
    };
    let (model, _) = import(RobotOptions {
        fixed_base: true,
        ..Default::default()
    });
    let report = initial_state(&model).unwrap();
    let [v] = &report.out_of_range[..] else {
        panic!("{report:?}")
    };
    assert_eq!(v.joint, "knee");
    assert!((v.by - 0.9).abs() < 1e-12 && v.value.abs() < 1e-12, "{v:?}");

    let (model, imported) = import(RobotOptions {
        fixed_base: true,
        start_in_range: true,
        ..Default::default()
    });
    assert!(initial_state(&model).unwrap().is_clean());
    assert!(
        imported
            .warnings
            .iter()
            .any(|w| w.message.contains("starts at -0.9"))
    );
    let calf = &model.bodies()[1];
    let turned = calf.initial_pose.rotation.scaled_axis();
    assert!(
        (turned - Vector3::new(0.0, -0.9, 0.0)).norm() < 1e-12,
        "{turned}"
    );

    let (model, _) = import(RobotOptions {
        fixed_base: true,
        initial_positions: [("knee".to_string(), -1.5)].into(),
        ..Default::default()
    });
    let turned = model.bodies()[1].initial_pose.rotation.scaled_axis();
    assert!(
        (turned - Vector3::new(0.0, -1.5, 0.0)).norm() < 1e-12,
        "{turned}"
    );
    let mut b = ModelBuilder::new();
    let err = import_urdf(
        &urdf,
        &RobotOptions {
            initial_positions: [("ankle".to_string(), 0.1)].into(),
            ..Default::default()
        },
        &mut b,
    )
    .unwrap_err();
    assert!(err.to_string().contains("\"ankle\""), "{err}");
}

/// A step that leaves a body with a non-finite pose is an error naming the body (a
/// finite 1e200 m/s velocity over a finite 1e200 s step overflows the position).
#[test]
fn a_non_finite_state_is_an_error_naming_the_body() {
    let mut b = ModelBuilder::new();
    b.add_body(
        BodyDesc::dynamic("rocket")
            .velocity(axion::math::twist(
                Vector3::new(1e200, 0.0, 0.0),
                Vector3::zeros(),
            ))
            .shape(ShapeDesc::new(Shape::Sphere { radius: 0.1 })),
    )
    .unwrap();
    let mut sim = Simulator::new(b.build().unwrap(), 1, 1e200, BackendChoice::Cpu).unwrap();
    let err = sim.step().unwrap_err().to_string();
    assert!(
        err.contains("body \"rocket\" of world 0") && err.contains("non-finite"),
        "{err}"
    );
}

/// −0.0 is 0: a cylinder of half length −0.0 (or 0) is refused when the body is added,
/// a capsule of half length 0 (a sphere) is not.
#[test]
fn flat_cylinders_are_refused_whatever_the_sign_of_zero() {
    for half_length in [-0.0, 0.0] {
        let mut b = ModelBuilder::new();
        let err = b
            .add_body(
                BodyDesc::dynamic("disc").shape(ShapeDesc::new(Shape::Cylinder {
                    radius: 0.1,
                    half_length,
                })),
            )
            .unwrap_err();
        assert!(err.to_string().contains("half length"), "{err}");
    }
    let mut b = ModelBuilder::new();
    b.add_body(
        BodyDesc::dynamic("ball").shape(ShapeDesc::new(Shape::Capsule {
            radius: 0.1,
            half_length: 0.0,
        })),
    )
    .unwrap();
}
