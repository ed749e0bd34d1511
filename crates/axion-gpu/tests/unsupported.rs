//! Models the GPU backend cannot run are refused when the backend is built, with a
//! reason naming the bodies (no adapter needed for the check).

use axion_gpu::{GpuBackend, GpuError, GpuSettings, check_model};

/// Two free 1 kg bodies, "lower" at the origin and "upper" `height` above it, with one
/// shape each.
fn one_above_the_other(
    lower: axion::Geometry,
    upper: axion::Geometry,
    height: f64,
) -> axion::Model {
    let inertia = nalgebra::Matrix3::from_diagonal_element(0.01);
    let mut b = axion::ModelBuilder::new();
    for (name, z, geometry) in [("lower", 0.0, lower), ("upper", height, upper)] {
        b.add_body(
            axion::BodyDesc::dynamic(name)
                .at(nalgebra::Vector3::new(0.0, 0.0, z))
                .mass(1.0, nalgebra::Vector3::zeros(), inertia)
                .shape(axion::ShapeDesc::from_geometry(geometry)),
        )
        .unwrap();
    }
    b.build().unwrap()
}

#[test]
fn shape_pairs_without_a_narrow_phase_are_refused_by_name() {
    // A box with a convex hull resting on it: hulls have no device narrow phase.
    let cube: Vec<_> = (0..8)
        .map(|k| {
            let s = |bit: u32| if k & (1 << bit) == 0 { -0.1 } else { 0.1 };
            nalgebra::Vector3::new(s(0), s(1), s(2))
        })
        .collect();
    let block = axion::Shape::Box {
        half_extents: nalgebra::Vector3::repeat(0.1),
    };
    let model = one_above_the_other(
        axion::Geometry::Solid(block),
        axion::Geometry::ConvexHull { points: cube },
        0.2,
    );
    let err = check_model(&model).unwrap_err();
    let GpuError::UnsupportedModel { reason } = &err else {
        panic!("wrong error {err:?}");
    };
    assert!(
        reason.contains("may collide")
            && reason.contains("(box) of body 'lower'")
            && reason.contains("(convex hull) of body 'upper'"),
        "{reason}"
    );
    assert!(
        matches!(
            GpuBackend::for_model(&model, 4, GpuSettings::default()),
            Err(GpuError::UnsupportedModel { .. })
        ),
        "for_model must refuse before looking for an adapter"
    );
}

#[test]
fn contact_scenes_with_a_device_narrow_phase_are_accepted() {
    check_model(&axion::scenes::drop(0.0).unwrap()).unwrap();
    check_model(&axion::scenes::drop(0.5).unwrap()).unwrap();
    check_model(&axion::scenes::incline(0.3, 0.5).unwrap()).unwrap();
    check_model(&axion::scenes::anisotropic_box().unwrap()).unwrap();
    check_model(&axion::scenes::stack(3).unwrap()).unwrap();
    check_model(&axion::scenes::pyramid(1).unwrap()).unwrap();
    // Cylinder wheels on one chassis: their joints keep them apart.
    check_model(&axion::scenes::skid_steer([1.0; 3]).unwrap()).unwrap();
    // Cylinders stacked on their caps.
    let cylinder = axion::Geometry::Solid(axion::Shape::Cylinder {
        radius: 0.2,
        half_length: 0.25,
    });
    check_model(&one_above_the_other(cylinder.clone(), cylinder, 0.55)).unwrap();
}

#[test]
fn joint_scenes_are_accepted() {
    check_model(&axion::scenes::pendulum().unwrap()).unwrap();
    check_model(&axion::scenes::chain(Default::default()).unwrap()).unwrap();
    check_model(&axion::scenes::double_pendulum().unwrap()).unwrap();
}

#[test]
fn joint_ranges_are_accepted() {
    check_model(
        &axion::scenes::pendulum_with(|hinge| hinge.limits(axion::scenes::range(-0.5, 0.5)))
            .unwrap(),
    )
    .unwrap();
    check_model(&axion::scenes::slider_on_bound().unwrap()).unwrap();
}

/// A massless frame (a compound joint's) is refused, naming it.
#[test]
fn massless_frames_are_refused_by_name() {
    let mut b = axion::ModelBuilder::new();
    let frame = b.add_body(axion::BodyDesc::frame("hip frame")).unwrap();
    let leg = b
        .add_body(axion::BodyDesc::dynamic("leg").mass(
            1.0,
            nalgebra::Vector3::zeros(),
            nalgebra::Matrix3::from_diagonal_element(0.01),
        ))
        .unwrap();
    let hinge = |axis| axion::JointType::Revolute { axis };
    b.add_joint(axion::JointDesc::new(
        "x",
        hinge(nalgebra::Vector3::x()),
        None,
        frame,
    ))
    .unwrap();
    b.add_joint(axion::JointDesc::new(
        "y",
        hinge(nalgebra::Vector3::y()),
        Some(frame),
        leg,
    ))
    .unwrap();
    let err = check_model(&b.build().unwrap()).unwrap_err();
    let GpuError::UnsupportedModel { reason } = &err else {
        panic!("wrong error {err:?}");
    };
    assert!(
        reason.contains("\"hip frame\" is a massless frame"),
        "{reason}"
    );
}

/// A velocity-level joint (Baumgarte) is refused, naming it: the device's joints are
/// position-level.
#[test]
fn velocity_level_joints_are_refused_by_name() {
    let model = axion::scenes::pendulum_with(|hinge| hinge.velocity_level(0.2)).unwrap();
    let err = check_model(&model).unwrap_err();
    let GpuError::UnsupportedModel { reason } = &err else {
        panic!("wrong error {err:?}");
    };
    assert!(
        reason.contains("joint \"hinge\" is velocity-level"),
        "{reason}"
    );
}
