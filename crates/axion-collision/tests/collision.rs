//! Collision detection against analytic answers and parry's own single-contact query.

use axion_collision::{CollisionWorld, Contact, to_parry_pose};
use axion_model::*;
use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use proptest::prelude::*;

fn world_with(shapes: Vec<(BodyDesc, ShapeDesc)>) -> (Model, CollisionWorld) {
    let mut b = ModelBuilder::new();
    for (desc, shape) in shapes {
        b.add_body(desc.shape(shape)).unwrap();
    }
    let model = b.build().unwrap();
    let world = CollisionWorld::new(&model).unwrap();
    (model, world)
}

fn com_poses(model: &Model) -> Vec<axion_math::Pose> {
    model.bodies().iter().map(|b| b.initial_pose).collect()
}

fn ground() -> (BodyDesc, ShapeDesc) {
    (
        BodyDesc::fixed("ground"),
        ShapeDesc::from_geometry(Geometry::HalfSpace {
            normal: Vector3::z(),
        }),
    )
}

fn detect(model: &Model, world: &CollisionWorld, margin: f64) -> Vec<Contact> {
    let mut out = Vec::new();
    let stats = world.detect(&com_poses(model), margin, &mut out);
    assert_eq!(stats.contacts, out.len());
    out
}

#[test]
fn sphere_above_the_ground_has_one_contact_at_its_height() {
    let ball = BodyDesc::dynamic("ball").at(Vector3::new(0.3, -0.2, 0.55));
    let (model, world) = world_with(vec![
        ground(),
        (ball, ShapeDesc::new(Shape::Sphere { radius: 0.5 })),
    ]);
    let contacts = detect(&model, &world, 0.1);
    assert_eq!(contacts.len(), 1);
    let c = &contacts[0];
    let poses = com_poses(&model);
    let (pa, pb) = (poses[c.body_a.0], poses[c.body_b.0]);
    assert!((c.gap - 0.05).abs() < 1e-12 && (c.point.gap(&pa, &pb) - 0.05).abs() < 1e-12);
    // The normal points from b to a; the sphere is stored as its centre and radius.
    let n = if c.body_a.0 == 1 {
        Vector3::z()
    } else {
        -Vector3::z()
    };
    assert!((c.point.normal - n).norm() < 1e-12);
    let t = if c.body_a.0 == 1 {
        c.point.thickness_a
    } else {
        c.point.thickness_b
    };
    assert_eq!(t, 0.5);
    // Out of the margin: nothing.
    assert!(detect(&model, &world, 0.01).is_empty());
}

#[test]
fn box_on_the_ground_has_a_four_point_manifold() {
    let tilt = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 0.3);
    let cube = BodyDesc::dynamic("cube").pose(Isometry3::from_parts(
        Vector3::new(1.0, 2.0, 0.5 + 1e-3).into(),
        tilt,
    ));
    let (model, world) = world_with(vec![
        ground(),
        (
            cube,
            ShapeDesc::new(Shape::Box {
                half_extents: Vector3::repeat(0.5),
            }),
        ),
    ]);
    let contacts = detect(&model, &world, 0.05);
    assert_eq!(contacts.len(), 4, "{contacts:#?}");
    let poses = com_poses(&model);
    for c in &contacts {
        assert!((c.gap - 1e-3).abs() < 1e-9, "gap {}", c.gap);
        assert!((c.point.gap(&poses[c.body_a.0], &poses[c.body_b.0]) - 1e-3).abs() < 1e-9);
        assert_eq!(c.cone.coefficients(), nalgebra::Vector2::new(0.5, 0.5));
    }
    // The four points are the bottom corners.
    let mut corners: Vec<Vector3<f64>> = contacts
        .iter()
        .map(|c| {
            if c.body_a.0 == 1 {
                c.point.local_a
            } else {
                c.point.local_b
            }
        })
        .collect();
    corners.sort_by(|a, b| (a.x, a.y).partial_cmp(&(b.x, b.y)).unwrap());
    for c in corners {
        assert!(
            (c.x.abs() - 0.5).abs() < 1e-9
                && (c.y.abs() - 0.5).abs() < 1e-9
                && (c.z + 0.5).abs() < 1e-9,
            "{c}"
        );
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        (0.1f64..1.0).prop_map(|radius| Shape::Sphere { radius }),
        prop::array::uniform3(0.1f64..1.0).prop_map(|e| Shape::Box {
            half_extents: Vector3::from(e)
        }),
        (0.1f64..0.5, 0.1f64..1.0).prop_map(|(radius, half_length)| Shape::Capsule {
            radius,
            half_length
        }),
        (0.1f64..0.8, 0.1f64..1.0).prop_map(|(radius, half_length)| Shape::Cylinder {
            radius,
            half_length
        }),
    ]
}

fn pose(range: f64) -> impl Strategy<Value = Isometry3<f64>> {
    (
        prop::array::uniform3(-range..range),
        prop::array::uniform3(-3.0f64..3.0),
    )
        .prop_map(|(t, r)| Isometry3::new(Vector3::from(t), Vector3::from(r)))
}

/// A cylinder lying on its side on a tilted box's top face: each contact's normal is the
/// face's own normal and its gap the axis height above the face less the radius, both to
/// rounding (parry's cylinder–box manifold alone tilts the normal by up to 4e-6 rad, and
/// a rolling cylinder's gap with it: docs/step.md, "Rolling ahead").
#[test]
fn a_cylinder_on_a_box_face_takes_the_face_normal() {
    let tilt = UnitQuaternion::from_euler_angles(0.2, -0.1, 0.7);
    let slab = Isometry3::from_parts(Vector3::new(0.4, -0.3, 0.2).into(), tilt);
    let (radius, gap) = (0.3, 2e-3);
    for spin in [0.0, 0.37, 1.9] {
        // Axis along the slab's y, turned about it by `spin` (the rim points move).
        let lying =
            UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2)
                * UnitQuaternion::from_axis_angle(&Vector3::z_axis(), spin);
        let centre = Vector3::new(0.7, 0.2, 0.05 + radius + gap);
        let box_body = (
            BodyDesc::fixed("slab").pose(slab),
            ShapeDesc::new(Shape::Box {
                half_extents: Vector3::new(2.0, 1.0, 0.05),
            }),
        );
        let can = (
            BodyDesc::dynamic("can").pose(slab * Isometry3::from_parts(centre.into(), lying)),
            ShapeDesc::new(Shape::Cylinder {
                radius,
                half_length: 0.1,
            }),
        );
        // Either shape first: the normal points out of the first one's body.
        for (shapes, can_index) in [
            (vec![box_body.clone(), can.clone()], 1),
            (vec![can, box_body], 0),
        ] {
            let (model, world) = world_with(shapes);
            let contacts = detect(&model, &world, 0.01);
            assert!(!contacts.is_empty());
            let poses = com_poses(&model);
            let up = tilt * Vector3::z();
            for c in &contacts {
                let n = if c.body_a.0 == can_index { up } else { -up };
                assert!(
                    (c.point.normal - n).norm() < 1e-14,
                    "spin {spin}: normal {} off by {:.1e}",
                    c.point.normal,
                    (c.point.normal - n).norm()
                );
                assert!(
                    (c.gap - gap).abs() < 1e-14,
                    "spin {spin}: gap {} vs {gap}",
                    c.gap
                );
                let again = c.point.gap(&poses[c.body_a.0], &poses[c.body_b.0]);
                assert!(
                    (again - gap).abs() < 1e-14,
                    "spin {spin}: re-evaluated gap {again}"
                );
            }
        }
    }
}

/// 256 cases per property, or `PROPTEST_CASES` when set.
fn config() -> ProptestConfig {
    ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(256),
    )
}

proptest! {
    #![proptest_config(config())]

    /// On random pairs of primitives: every normal is unit length; every contact's gap,
    /// re-evaluated from its body-local points, is the gap parry reported; moving body
    /// `a` along the normal opens the gap by exactly that distance; and (guarding the
    /// pipeline's checks of parry's manifold against its closest points) the deepest
    /// contact's gap is parry's single-contact distance within 1e-5 m + 1e-4 × depth (the
    /// two parry algorithms differ by a few µm on curved pairs such as capsule–cylinder,
    /// and relatively on deep overlaps, which a stepped simulation never reaches).
    #[test]
    fn manifolds_agree_with_parry(sa in shape(), sb in shape(), pa in pose(1.0), pb in pose(1.0)) {
        let (model, world) = world_with(vec![
            (BodyDesc::dynamic("a").pose(pa), ShapeDesc::new(sa)),
            (BodyDesc::dynamic("b").pose(pb), ShapeDesc::new(sb)),
        ]);
        let margin = 0.2;
        let contacts = detect(&model, &world, margin);
        let poses = com_poses(&model);
        let ((ga, qa), (gb, qb)) = (placed(&sa, &poses[0]), placed(&sb, &poses[1]));
        let reference = parry3d_f64::query::contact(&qa, ga.as_ref(), &qb, gb.as_ref(), margin).unwrap();
        match reference {
            None => prop_assert!(contacts.iter().all(|c| c.gap > margin - 1e-6), "contacts beyond parry's: {contacts:?}"),
            Some(r) => {
                prop_assert!(!contacts.is_empty(), "parry finds a contact at {} but the manifold is empty", r.dist);
                let deepest = contacts.iter().map(|c| c.gap).fold(f64::INFINITY, f64::min);
                let tolerance = 1e-5 + 1e-4 * (-r.dist).max(0.0);
                prop_assert!((deepest - r.dist).abs() < tolerance, "deepest manifold gap {deepest} vs parry {}", r.dist);
            }
        }
        for c in &contacts {
            prop_assert!((c.point.normal.norm() - 1.0).abs() < 1e-12);
            let (qa, qb) = (poses[c.body_a.0], poses[c.body_b.0]);
            prop_assert!((c.point.gap(&qa, &qb) - c.gap).abs() < 1e-9, "re-evaluated gap {} vs {}", c.point.gap(&qa, &qb), c.gap);
            let moved = nalgebra::Translation3::from(c.point.normal * 0.01) * qa;
            prop_assert!((c.point.gap(&moved, &qb) - c.gap - 0.01).abs() < 1e-9);
        }
    }

    /// A box or a ball near a tilted half-space: the deepest contact's gap is the
    /// analytic one (the lowest of the box's eight corners, the ball's centre less its
    /// radius, measured along the half-space's normal), and there is none where that is
    /// beyond the margin. The pipeline takes parry's manifold of these pairs without
    /// checking it against parry's closest points (`manifold_is_exact`): this holds it to
    /// the geometry instead.
    #[test]
    fn a_half_space_meets_the_lowest_corner_of_a_box_or_a_ball(
        solid in prop_oneof![
            (0.05f64..0.5).prop_map(|radius| Shape::Sphere { radius }),
            prop::array::uniform3(0.02f64..0.5).prop_map(|e| Shape::Box { half_extents: Vector3::from(e) }),
        ],
        tilt in prop::array::uniform3(-0.5f64..0.5),
        turn in prop::array::uniform3(-3.0f64..3.0),
        centre in prop::array::uniform3(-1.0f64..1.0),
        height in -0.01f64..0.15,
    ) {
        let ground_pose = Isometry3::new(Vector3::zeros(), Vector3::from(tilt));
        let normal = ground_pose.rotation * Vector3::z();
        let rotation = UnitQuaternion::new(Vector3::from(turn));
        // The solid's lowest point `height` above the plane.
        let lowest = |p: &Vector3<f64>| match solid {
            Shape::Sphere { radius } => normal.dot(p) - radius,
            Shape::Box { half_extents: e } => (0..8)
                .map(|k| {
                    let corner = Vector3::new(
                        if k & 1 == 0 { e.x } else { -e.x },
                        if k & 2 == 0 { e.y } else { -e.y },
                        if k & 4 == 0 { e.z } else { -e.z },
                    );
                    normal.dot(&(p + rotation * corner))
                })
                .fold(f64::INFINITY, f64::min),
            _ => unreachable!("a box or a ball"),
        };
        let start = Vector3::from(centre);
        let position = start + normal * (height - lowest(&start));
        let (model, world) = world_with(vec![
            (BodyDesc::fixed("ground").pose(ground_pose), ShapeDesc::from_geometry(Geometry::HalfSpace { normal: Vector3::z() })),
            (BodyDesc::dynamic("solid").pose(Isometry3::from_parts(position.into(), rotation)), ShapeDesc::new(solid)),
        ]);
        let margin = 0.1;
        let contacts = detect(&model, &world, margin);
        let expected = lowest(&position);
        if expected > margin {
            prop_assert!(contacts.is_empty(), "contacts beyond the margin: {contacts:?}");
        } else {
            let deepest = contacts.iter().map(|c| c.gap).fold(f64::INFINITY, f64::min);
            prop_assert!((deepest - expected).abs() < 1e-9, "deepest gap {deepest} vs {expected}");
        }
    }

    /// Sweep and prune finds exactly the overlapping pairs a brute-force loop finds.
    #[test]
    fn broad_phase_matches_brute_force(shapes in prop::collection::vec((shape(), pose(4.0)), 2..30)) {
        let (model, world) = world_with(
            shapes.iter().enumerate().map(|(i, (s, p))| (BodyDesc::dynamic(format!("b{i}")).pose(*p), ShapeDesc::new(*s))).collect(),
        );
        let poses = com_poses(&model);
        let margin = 0.05;
        let mut found = world.candidate_pairs(&poses, margin);
        found.sort();
        let aabbs: Vec<_> = shapes.iter().zip(&poses).map(|((s, _), q)| {
            let (g, p) = placed(s, q);
            g.compute_aabb(&p)
        }).collect();
        let mut brute = Vec::new();
        for i in 0..aabbs.len() {
            for j in i + 1..aabbs.len() {
                let (a, b) = (&aabbs[i], &aabbs[j]);
                let gap = (0..3).map(|k| (a.mins[k] - b.maxs[k]).max(b.mins[k] - a.maxs[k])).fold(f64::NEG_INFINITY, f64::max);
                if gap <= 2.0 * margin {
                    brute.push((i, j));
                }
            }
        }
        prop_assert_eq!(found, brute);
    }
}

/// The same parry shape the collision world builds, placed at `pose` (cylinders turned
/// from parry's y axis to our z axis).
fn placed(
    s: &Shape,
    pose: &Isometry3<f64>,
) -> (parry3d_f64::shape::SharedShape, parry3d_f64::math::Pose) {
    use parry3d_f64::shape::SharedShape;
    let turn = Isometry3::rotation(Vector3::x() * std::f64::consts::FRAC_PI_2);
    match *s {
        Shape::Sphere { radius } => (SharedShape::ball(radius), to_parry_pose(pose)),
        Shape::Box { half_extents: e } => (SharedShape::cuboid(e.x, e.y, e.z), to_parry_pose(pose)),
        Shape::Capsule {
            radius,
            half_length,
        } => (
            SharedShape::capsule_z(half_length, radius),
            to_parry_pose(pose),
        ),
        Shape::Cylinder {
            radius,
            half_length,
        } => (
            SharedShape::cylinder(half_length, radius),
            to_parry_pose(&(pose * turn)),
        ),
    }
}

#[test]
fn filters_exclude_jointed_bodies_groups_and_static_pairs() {
    let sphere = || ShapeDesc::new(Shape::Sphere { radius: 0.5 });
    let mut b = ModelBuilder::new();
    let a = b.add_body(BodyDesc::dynamic("a").shape(sphere())).unwrap();
    let c = b
        .add_body(
            BodyDesc::dynamic("c")
                .at(Vector3::new(0.8, 0.0, 0.0))
                .shape(sphere()),
        )
        .unwrap();
    let lonely = CollisionFilter { groups: 2, mask: 2 };
    b.add_body(
        BodyDesc::dynamic("d")
            .at(Vector3::new(-0.8, 0.0, 0.0))
            .shape(sphere().collision(Some(lonely))),
    )
    .unwrap();
    b.add_body(BodyDesc::fixed("wall1").shape(sphere()))
        .unwrap();
    b.add_body(
        BodyDesc::fixed("wall2")
            .at(Vector3::new(0.1, 0.0, 0.0))
            .shape(sphere()),
    )
    .unwrap();
    let model_free = b.clone().build().unwrap();
    b.add_joint(JointDesc::new("link", JointType::Ball, Some(a), c))
        .unwrap();
    let model_jointed = b.build().unwrap();
    let pairs = |m: &Model| {
        let mut p = CollisionWorld::new(m)
            .unwrap()
            .candidate_pairs(&com_poses(m), 0.0);
        p.sort();
        p
    };
    // a–c overlap; d is in its own group; the walls are both static.
    assert_eq!(
        pairs(&model_free),
        vec![(0, 1), (0, 3), (0, 4), (1, 3), (1, 4)]
    );
    assert_eq!(pairs(&model_jointed), vec![(0, 3), (0, 4), (1, 3), (1, 4)]);
}

#[test]
fn anisotropic_material_sets_the_tangent_frame_and_cone() {
    let material = Material {
        friction: 2.0,
        restitution: 0.0,
        anisotropy: Some(Anisotropy {
            axis: Vector3::y(),
            friction_perp: 0.02,
        }),
    };
    let cube = BodyDesc::dynamic("cube").at(Vector3::new(0.0, 0.0, 0.1));
    let slippery_ground = (
        BodyDesc::fixed("ground"),
        ShapeDesc::from_geometry(Geometry::HalfSpace {
            normal: Vector3::z(),
        })
        .material(Material {
            friction: 0.0,
            ..Default::default()
        }),
    );
    let (model, world) = world_with(vec![
        slippery_ground,
        (
            cube,
            ShapeDesc::new(Shape::Box {
                half_extents: Vector3::repeat(0.1),
            })
            .material(material),
        ),
    ]);
    for c in detect(&model, &world, 0.01) {
        assert!(c.frame.aligned && (c.frame.t1 - Vector3::y()).norm() < 1e-12);
        assert_eq!(c.cone.coefficients(), nalgebra::Vector2::new(1.0, 0.01));
    }
}

#[test]
fn meshes_and_height_fields_collide() {
    // A flat 3×3 height field at z = 0 under a sphere, and a convex hull (a tetrahedron).
    let field = Geometry::HeightField {
        heights: vec![0.0; 9],
        rows: 3,
        cols: 3,
        spacing: (1.0, 1.0),
    };
    let ball = BodyDesc::dynamic("ball").at(Vector3::new(1.0, 1.0, 0.52));
    let (model, world) = world_with(vec![
        (BodyDesc::fixed("terrain"), ShapeDesc::from_geometry(field)),
        (ball, ShapeDesc::new(Shape::Sphere { radius: 0.5 })),
    ]);
    let contacts = detect(&model, &world, 0.05);
    assert!(!contacts.is_empty());
    assert!(
        contacts.iter().all(|c| (c.gap - 0.02).abs() < 1e-9),
        "{contacts:?}"
    );
    let tetra = Geometry::ConvexHull {
        points: vec![Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()],
    };
    let body = BodyDesc::dynamic("tetra")
        .at(Vector3::new(0.0, 0.0, 0.01))
        .mass(1.0, Vector3::zeros(), nalgebra::Matrix3::identity() * 0.1);
    let (model, world) = world_with(vec![ground(), (body, ShapeDesc::from_geometry(tetra))]);
    let contacts = detect(&model, &world, 0.05);
    assert!(
        !contacts.is_empty() && contacts.iter().all(|c| (c.gap - 0.01).abs() < 1e-9),
        "{contacts:?}"
    );
    // A degenerate hull (all points on a line) is a typed error naming the body, given
    // by the model builder before collision ever sees it.
    let flat = Geometry::ConvexHull {
        points: (0..4).map(|i| Vector3::x() * i as f64).collect(),
    };
    let err = ModelBuilder::new()
        .add_body(BodyDesc::fixed("flat").shape(ShapeDesc::from_geometry(flat)))
        .expect_err("degenerate hull");
    assert!(err.to_string().contains("flat"), "{err}");
}

proptest! {
    #![proptest_config(config())]

    /// Equal boxes stacked face to face, offset by rounding-sized amounts (as a resting
    /// stack is): all four shared corners are contacts at the gap, whatever the
    /// offsets' signs (parry's clipping alone drops one for some of them).
    #[test]
    fn stacked_equal_boxes_touch_at_four_corners(
        dx in -1e-15f64..1e-15,
        dy in -1e-15f64..1e-15,
        gap in -1e-10f64..1e-10,
        angle in -1e-14f64..1e-14,
    ) {
        let cube = Shape::Box { half_extents: Vector3::repeat(0.5) };
        let top = BodyDesc::dynamic("top").pose(Isometry3::from_parts(
            Vector3::new(dx, dy, 1.5 + gap).into(),
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), angle),
        ));
        let (model, world) = world_with(vec![
            (BodyDesc::dynamic("bottom").at(Vector3::new(0.0, 0.0, 0.5)), ShapeDesc::new(cube)),
            (top, ShapeDesc::new(cube)),
        ]);
        let contacts = detect(&model, &world, 0.02);
        prop_assert_eq!(contacts.len(), 4, "{:?}", contacts);
        for c in &contacts {
            prop_assert!((c.gap - gap).abs() < 1e-12, "gap {} vs {}", c.gap, gap);
            let corner = c.point.local_b;
            prop_assert!((corner.x.abs() - 0.5).abs() < 1e-9 && (corner.y.abs() - 0.5).abs() < 1e-9);
        }
    }
}
