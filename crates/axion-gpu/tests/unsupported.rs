//! Models the GPU backend cannot run are refused when the backend is built, with a
//! reason naming the bodies (no adapter needed for the check).

use axion_gpu::{GpuBackend, GpuError, GpuSettings, check_model};

#[test]
fn shape_pairs_without_a_narrow_phase_are_refused_by_name() {
    let mut b = axion::ModelBuilder::new();
    for (name, z) in [("lower", 0.0), ("upper", 0.15)] {
        let cylinder = axion::Shape::Cylinder {
            radius: 0.1,
            half_length: 0.3,
        };
        b.add_body(
            axion::BodyDesc::dynamic(name)
                .at(nalgebra::Vector3::new(0.0, 0.0, z))
                .mass(1.0, nalgebra::Vector3::zeros(), cylinder.unit_inertia(1.0))
                .shape(axion::ShapeDesc::new(cylinder)),
        )
        .unwrap();
    }
    let model = b.build().unwrap();
    let err = check_model(&model).unwrap_err();
    let GpuError::UnsupportedModel { reason } = &err else {
        panic!("wrong error {err:?}");
    };
    assert!(
        reason.contains("may collide")
            && reason.contains("(cylinder) of body 'lower'")
            && reason.contains("(cylinder) of body 'upper'"),
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
