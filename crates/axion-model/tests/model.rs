//! Model building: mass properties from shapes, centre-of-mass offsets, and the typed
//! errors every bad description gets.

use axion_model::measure::joint_errors;
use axion_model::*;
use nalgebra::{Isometry3, Matrix3, Vector3};

/// Mass, COM and inertia of `shape` by midpoint integration over a 80³ grid of its
/// bounding box (relative error of a few 1e-3 for curved boundaries).
fn integrate(shape: &Shape, density: f64) -> (f64, Matrix3<f64>) {
    type Inside = Box<dyn Fn(&Vector3<f64>) -> bool>;
    let (half, inside): (Vector3<f64>, Inside) = match *shape {
        Shape::Sphere { radius } => (
            Vector3::repeat(radius),
            Box::new(move |p| p.norm() <= radius),
        ),
        Shape::Box { half_extents } => (half_extents, Box::new(|_| true)),
        Shape::Cylinder {
            radius,
            half_length,
        } => (
            Vector3::new(radius, radius, half_length),
            Box::new(move |p| p.x * p.x + p.y * p.y <= radius * radius),
        ),
        Shape::Capsule {
            radius,
            half_length,
        } => (
            Vector3::new(radius, radius, half_length + radius),
            Box::new(move |p| {
                let z = p.z.clamp(-half_length, half_length);
                (p - Vector3::new(0.0, 0.0, z)).norm() <= radius
            }),
        ),
    };
    let n = 80;
    let cell = half * (2.0 / n as f64);
    let dv = cell.x * cell.y * cell.z * density;
    let (mut m, mut inertia) = (0.0, Matrix3::zeros());
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let p = Vector3::new(
                    -half.x + (i as f64 + 0.5) * cell.x,
                    -half.y + (j as f64 + 0.5) * cell.y,
                    -half.z + (k as f64 + 0.5) * cell.z,
                );
                if inside(&p) {
                    m += dv;
                    inertia += (Matrix3::identity() * p.norm_squared() - p * p.transpose()) * dv;
                }
            }
        }
    }
    (m, inertia)
}

#[test]
fn shape_mass_and_inertia_match_integration() {
    let shapes = [
        Shape::Sphere { radius: 0.3 },
        Shape::Box {
            half_extents: Vector3::new(0.5, 0.2, 0.1),
        },
        Shape::Cylinder {
            radius: 0.2,
            half_length: 0.4,
        },
        Shape::Capsule {
            radius: 0.1,
            half_length: 0.3,
        },
    ];
    for shape in shapes {
        let (m, inertia) = integrate(&shape, 700.0);
        let exact_m = 700.0 * shape.volume();
        let exact_i = shape.unit_inertia(exact_m);
        assert!(
            (m / exact_m - 1.0).abs() < 1e-2,
            "{shape:?}: mass {m} vs {exact_m}"
        );
        assert!(
            (inertia - exact_i).norm() < 1e-2 * exact_i.norm(),
            "{shape:?}: inertia\n{inertia}\nvs\n{exact_i}"
        );
    }
}

/// Two spheres off-centre: the COM is their midpoint and the inertia gains m d² terms.
#[test]
fn composite_body_uses_the_parallel_axis_theorem() {
    let sphere = Shape::Sphere { radius: 0.1 };
    let mut b = ModelBuilder::new();
    let id = b
        .add_body(
            BodyDesc::dynamic("dumbbell")
                .shape(ShapeDesc::new(sphere).at(Isometry3::translation(0.5, 1.0, 0.0)))
                .shape(ShapeDesc::new(sphere).at(Isometry3::translation(-0.5, 1.0, 0.0))),
        )
        .unwrap();
    let model = b.build().unwrap();
    let body = &model.bodies()[id.0];
    let m1 = 1000.0 * sphere.volume();
    assert!((body.mass.mass() - 2.0 * m1).abs() < 1e-12);
    assert!((body.com - Vector3::new(0.0, 1.0, 0.0)).norm() < 1e-15);
    let own = 0.4 * m1 * 0.01;
    let expect = Matrix3::from_diagonal(&Vector3::new(
        2.0 * own,
        2.0 * own + 2.0 * m1 * 0.25,
        2.0 * own + 2.0 * m1 * 0.25,
    ));
    assert!(
        (body.mass.inertia() - expect).norm() < 1e-12,
        "{}",
        body.mass.inertia()
    );
}

/// A body whose COM is offset from its reference frame: poses round-trip, and joint
/// frames given in the reference frame put the anchors where the user said.
#[test]
fn com_offsets_are_handled_at_the_boundary() {
    let mut b = ModelBuilder::new();
    let reference = Isometry3::new(Vector3::new(1.0, 2.0, 3.0), Vector3::new(0.3, -0.2, 0.1));
    let link = b
        .add_body(BodyDesc::dynamic("link").pose(reference).mass(
            2.0,
            Vector3::new(0.4, 0.0, 0.0),
            Matrix3::identity(),
        ))
        .unwrap();
    // The joint frame at the link's reference origin, seen from the world at that place.
    b.add_joint(
        JointDesc::new("ball", JointType::Ball, None, link)
            .frames(reference, Isometry3::identity()),
    )
    .unwrap();
    let model = b.build().unwrap();
    let state = State::new(&model, 2).unwrap();
    let back = state.body_pose(&model, 1, link);
    assert!((back.translation.vector - reference.translation.vector).norm() < 1e-14);
    let com = state.com_pose(1, link).translation.vector;
    assert!((com - (reference * nalgebra::Point3::new(0.4, 0.0, 0.0)).coords).norm() < 1e-14);
    assert!(joint_errors(&model, &state, 1).position < 1e-14);
}

#[test]
fn bad_descriptions_get_errors_that_name_the_culprit() {
    let ok_body = || BodyDesc::dynamic("a").shape(ShapeDesc::new(Shape::Sphere { radius: 0.1 }));
    let mut b = ModelBuilder::new();
    let a = b.add_body(ok_body()).unwrap();
    let fixed = b.add_body(BodyDesc::fixed("ground")).unwrap();
    fn expect<T: std::fmt::Debug>(r: Result<T, ModelError>, name: &str) -> ModelError {
        let e = r.expect_err("must be refused");
        assert!(
            e.to_string().contains(name),
            "message {e} does not name {name}"
        );
        e
    }
    assert!(matches!(
        expect(b.add_body(ok_body()), "\"a\""),
        ModelError::DuplicateBodyName { .. }
    ));
    assert!(matches!(
        expect(b.add_body(BodyDesc::dynamic("empty")), "empty"),
        ModelError::NoMass { .. }
    ));
    assert!(matches!(
        expect(
            b.add_body(BodyDesc::dynamic("heavy").mass(
                -1.0,
                Vector3::zeros(),
                Matrix3::identity()
            )),
            "heavy"
        ),
        ModelError::InvalidBody { .. }
    ));
    assert!(matches!(
        expect(
            b.add_body(
                BodyDesc::dynamic("nan")
                    .at(Vector3::new(f64::NAN, 0.0, 0.0))
                    .mass(1.0, Vector3::zeros(), Matrix3::identity())
            ),
            "nan"
        ),
        ModelError::InvalidBody { .. }
    ));
    assert!(matches!(
        expect(
            b.add_body(BodyDesc::dynamic("flat").shape(ShapeDesc::new(Shape::Box {
                half_extents: Vector3::new(1.0, 0.0, 1.0)
            }))),
            "flat"
        ),
        ModelError::InvalidShape { .. }
    ));
    assert!(matches!(
        expect(
            b.add_body(
                BodyDesc::dynamic("ghost")
                    .shape(ShapeDesc::new(Shape::Sphere { radius: 1.0 }).density(-5.0))
            ),
            "ghost"
        ),
        ModelError::InvalidShape { .. }
    ));
    let e = expect(
        b.add_body(
            BodyDesc::dynamic("planet").shape(ShapeDesc::new(Shape::Sphere { radius: 1e308 })),
        ),
        "planet",
    );
    assert!(e.to_string().contains("collision detection handles"), "{e}");
    let flat_points = vec![
        Vector3::zeros(),
        Vector3::x(),
        Vector3::y(),
        Vector3::new(1.0, 1.0, 0.0),
    ];
    let e = expect(
        b.add_body(BodyDesc::fixed("pancake").shape(ShapeDesc::from_geometry(
            Geometry::ConvexHull {
                points: flat_points,
            },
        ))),
        "pancake",
    );
    assert!(e.to_string().contains("coplanar"), "{e}");
    let hinge = |name: &str, axis: Vector3<f64>| {
        JointDesc::new(name, JointType::Revolute { axis }, None, a)
    };
    assert!(matches!(
        expect(
            b.add_joint(JointDesc::new("j", JointType::Ball, None, BodyId(9))),
            "\"j\""
        ),
        ModelError::UnknownBody { .. }
    ));
    assert!(matches!(
        expect(
            b.add_joint(JointDesc::new("self", JointType::Ball, Some(a), a)),
            "self"
        ),
        ModelError::SelfJoint { .. }
    ));
    assert!(matches!(
        expect(
            b.add_joint(JointDesc::new("on static", JointType::Ball, Some(a), fixed)),
            "ground"
        ),
        ModelError::StaticChild { .. }
    ));
    assert!(matches!(
        expect(b.add_joint(hinge("no axis", Vector3::zeros())), "no axis"),
        ModelError::InvalidJoint { .. }
    ));
    assert!(matches!(
        expect(
            b.add_joint(hinge("soft", Vector3::x()).compliance(-1.0)),
            "soft"
        ),
        ModelError::InvalidJoint { .. }
    ));
    assert!(matches!(
        expect(
            b.add_joint(hinge("lazy", Vector3::x()).drive(DriveDesc::Position {
                target: 0.0,
                target_velocity: 0.0,
                ke: 0.0,
                kd: 0.0
            })),
            "lazy"
        ),
        ModelError::InvalidJoint { .. }
    ));
    assert!(matches!(
        expect(
            b.add_joint(
                JointDesc::new("ball drive", JointType::Ball, None, a).drive(DriveDesc::Velocity {
                    target: 1.0,
                    ke: 1.0
                })
            ),
            "ball drive"
        ),
        ModelError::DriveOnUnsupportedJoint { .. }
    ));
    b.add_joint(hinge("hinge", Vector3::new(0.0, 2.0, 0.0)))
        .unwrap();
    assert!(matches!(
        expect(b.add_joint(hinge("hinge", Vector3::x())), "hinge"),
        ModelError::DuplicateJointName { .. }
    ));
    assert!(matches!(
        b.gravity(Vector3::new(0.0, f64::INFINITY, 0.0))
            .unwrap_err(),
        ModelError::InvalidGravity { .. }
    ));
    let model = b.build().unwrap();
    assert!(matches!(State::new(&model, 0), Err(ModelError::NoWorlds)));
    // A non-unit axis is normalised, not rejected, at the model level (URDF axes often are).
    assert_eq!(model.joints()[0].joint.row_count(), 5);
}

/// The energy scale's floor is $m\,|g|\,L$ (total moving mass, gravity, the widest
/// distance between two moving bodies' initial centres of mass), and `Energy::scale`
/// takes the largest of it and $K + |V|$ at either end.
#[test]
fn energy_scale_is_floored_by_the_weight_times_the_size() {
    use axion_model::measure::{Energy, exchange_scale};
    let mut b = ModelBuilder::new();
    let ball = |name: &str, at: Vector3<f64>, m: f64| {
        BodyDesc::dynamic(name)
            .at(at)
            .mass(m, Vector3::zeros(), Matrix3::identity() * 0.1)
    };
    b.add_body(ball("a", Vector3::zeros(), 2.0)).unwrap();
    b.add_body(ball("b", Vector3::new(3.0, 4.0, 0.0), 3.0))
        .unwrap();
    b.add_body(BodyDesc::fixed("ground").at(Vector3::new(100.0, 0.0, 0.0)))
        .unwrap();
    let model = b.build().unwrap();
    let floor = exchange_scale(&model);
    assert!((floor - 5.0 * 9.81 * 5.0).abs() < 1e-12, "{floor}");
    let still = Energy {
        kinetic: 0.0,
        potential: 1e-10,
    };
    assert_eq!(still.scale(&still, floor), floor);
    let moving = Energy {
        kinetic: 300.0,
        potential: -50.0,
    };
    assert_eq!(still.scale(&moving, floor), 350.0);
}
