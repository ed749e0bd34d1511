//! The GPU step against the CPU reference on the contact scenes (canonical scenes 1, 4,
//! 5, 8 and 9 of docs/canonical-scenes.md: drop, incline, stacks, mass ratio, pyramid;
//! and the thrown and anisotropic boxes), the skid-steer robot and capsule scenes.

mod common;

use axion::scenes;
use axion_gpu::GpuSettings;
use axion_model::{
    Backend, BodyDesc, BodyId, Control, Geometry, Material, Model, ModelBuilder, Shape, ShapeDesc,
    State,
};
use nalgebra::{Isometry3, UnitQuaternion, Vector3};

#[test]
fn drop_matches_cpu() {
    let model = scenes::drop(0.0).unwrap();
    for h in [0.01, 0.05] {
        if let Some(p) = common::run(&format!("drop h={h}"), &model, h, 1.0) {
            common::check(&p, "drop");
        }
    }
}

/// Canonical scene 1 with restitution e = 0.5 (velocity-level contact rows): the ball
/// lands, rebounds and lands again within 2 s on the GPU as on the CPU.
#[test]
fn bouncing_ball_matches_cpu() {
    let model = scenes::drop(0.5).unwrap();
    for h in [0.01, 0.05] {
        if let Some(p) = common::run(&format!("bouncing ball h={h}"), &model, h, 2.0) {
            println!("  ball at z = {:.6} m", p.final_positions[1][2]);
            common::check(&p, "bouncing ball");
        }
    }
}

/// An uploaded state starts without the previous steps' contacts: a bouncing ball
/// stepped until just before it lands (its contact found, still open, with the approach
/// velocity kept for the bounce), then replaced by a ball resting on the ground at the
/// same place, stays at rest (a kept approach velocity would throw it up at 2.7 m/s).
#[test]
fn an_uploaded_state_forgets_the_previous_contacts() {
    let model = scenes::drop(0.5).unwrap();
    let Some(mut gpu) = common::backend(&model, 1, GpuSettings::default()) else {
        return;
    };
    let control = Control::new(&model, 1);
    let mut state = State::new(&model, 1).unwrap();
    for _ in 0..54 {
        let r = gpu.step(&model, &mut state, &control, 0.01).unwrap();
        assert!(r.all_converged());
    }
    let ball = BodyId(1);
    let gap = state.com_pose(0, ball).translation.z - 0.5;
    assert!(gap > 0.01 && gap < 0.1, "not about to land: gap {gap}");
    let mut resting = State::new(&model, 1).unwrap();
    resting.set_body_pose(&model, 0, ball, Isometry3::translation(0.0, 0.0, 0.5));
    for _ in 0..10 {
        gpu.step(&model, &mut resting, &control, 0.01).unwrap();
        let z = resting.com_pose(0, ball).translation.z;
        assert!((z - 0.5).abs() < 1e-5, "the resting ball moved to z = {z}");
    }
}

#[test]
fn incline_matches_cpu() {
    for deg in [20.0f64, 35.0] {
        let model = scenes::incline(deg.to_radians(), 0.5).unwrap();
        for h in [0.01, 0.05] {
            if let Some(p) = common::run(&format!("incline {deg}° h={h}"), &model, h, 1.0) {
                println!("  cube at x = {:.6} m", p.final_positions[1][0]);
                common::check(&p, "incline");
            }
        }
    }
}

#[test]
fn thrown_box_matches_cpu() {
    let model = scenes::thrown_box(3.0, 0.5).unwrap();
    for h in [0.01, 0.05] {
        if let Some(p) = common::run(&format!("thrown box h={h}"), &model, h, 1.0) {
            println!("  cube at x = {:.6} m", p.final_positions[1][0]);
            common::check(&p, "thrown box");
        }
    }
}

/// With the slip coupling lagged (`slip_coupling` off: the symmetric friction form, a
/// slipping contact's force following its normal force one iterate late, solved by the
/// conjugate residual method) the boxes that slide end where the CPU's do, every step
/// converged: the cube on the 35° incline, the thrown box (it stops) and the
/// anisotropic cube pushed along its slippery axis, at h = 0.01 and 0.05 (the lagged
/// column of docs/gpu.md's table).
#[test]
fn lagged_slip_coupling_matches_cpu_on_sliding_boxes() {
    let anisotropic = scenes::anisotropic_box().unwrap();
    let mut push = Control::new(&anisotropic, 1);
    push.set_wrench(0, BodyId(1), Vector3::x() * 5.0, Vector3::zeros());
    let incline = scenes::incline(35f64.to_radians(), 0.5).unwrap();
    let thrown = scenes::thrown_box(3.0, 0.5).unwrap();
    for (name, model, control) in [
        ("incline 35°", &incline, Control::new(&incline, 1)),
        ("thrown box", &thrown, Control::new(&thrown, 1)),
        ("anisotropic box pushed along axis 0", &anisotropic, push),
    ] {
        for h in [0.01, 0.05] {
            let name = format!("{name}, lagged, h={h}");
            if let Some(p) = common::run_with(&name, model, &control, common::lagged(), h, 1.0) {
                common::check(&p, &name);
            }
        }
    }
}

/// The 100:1 anisotropic cube pushed with 5 N: along its grippy axis it sticks, along
/// its slippery axis it slides; the GPU decides the same and ends where the CPU does.
#[test]
fn anisotropic_box_matches_cpu() {
    let model = scenes::anisotropic_box().unwrap();
    for (axis, what) in [(0, "slides"), (1, "sticks")] {
        let mut control = Control::new(&model, 1);
        let mut force = Vector3::zeros();
        force[axis] = 5.0;
        control.set_wrench(0, BodyId(1), force, Vector3::zeros());
        for h in [0.01, 0.05] {
            let name = format!("anisotropic box pushed along axis {axis} ({what}) h={h}");
            if let Some(p) = common::run_controlled(&name, &model, &control, h, 1.0) {
                println!("  cube at {:?}", p.final_positions[1]);
                common::check(&p, &name);
            }
        }
    }
}

/// Canonical scenes 4, 8 and 9: stacks of 5 and 10 unit cubes, the 1000:1 mass ratio
/// and the 10-box pyramid stay where they are on the GPU as on the CPU.
#[test]
fn stacks_match_cpu() {
    for (name, model) in [
        ("stack of 5", scenes::stack(5).unwrap()),
        ("stack of 10", scenes::stack(10).unwrap()),
        ("mass ratio 1000:1", scenes::mass_ratio().unwrap()),
        ("pyramid of 10", scenes::pyramid(1).unwrap()),
    ] {
        for h in [0.01, 0.05] {
            let name = format!("{name} h={h}");
            if let Some(p) = common::run(&name, &model, h, 1.0) {
                println!("  lowest box at {:?}", p.final_positions[1]);
                common::check(&p, &name);
            }
        }
    }
}

/// A cylinder rolling on its side (`scenes::rolling_cylinder`, 2 m/s) at h = 0.02 and
/// 0.05 for 2 s: its contact points roll ahead on the device as on the CPU (docs/step.md,
/// "Rolling ahead"), so its axis stays within 1e-4 m of its radius at every step (with
/// points fixed to it for the step it would sit r(1 − cos hω) low, 2.7 mm at h = 0.02),
/// every step converges, and it ends where the CPU's does.
#[test]
fn rolling_cylinder_keeps_its_radius() {
    for h in [0.02f64, 0.05] {
        let model = scenes::rolling_cylinder(2.0).unwrap();
        let can = model.body_id("can").unwrap();
        let name = format!("rolling cylinder h={h}");
        let Some(mut gpu) = common::backend(&model, 1, GpuSettings::default()) else {
            return;
        };
        let mut state = State::new(&model, 1).unwrap();
        let control = Control::new(&model, 1);
        let mut height: f64 = 0.0;
        for _ in 0..(2.0 / h).round() as usize {
            let report = gpu.step(&model, &mut state, &control, h).unwrap();
            assert!(report.all_converged(), "{name}");
            let z = state.com_pose(0, can).translation.vector.z;
            height = height.max((z - scenes::ROLLING_RADIUS).abs());
        }
        println!("  {name}: the axis within {height:.2e} m of its radius on the device");
        assert!(height < 1e-4, "{name}: {height:.3e} m");
        if let Some(p) = common::run(&name, &model, h, 2.0) {
            common::check(&p, &name);
        }
    }
}

/// The skid-steer robot of `examples/robots` (cylinder wheels with velocity drives on
/// the ground; the geometry of their joints keeps the wheels apart, so no wheel–wheel
/// narrow phase is needed), driving straight and turning with skidding wheels for 1 s
/// at h = 0.01: the chassis follows the CPU's within 1 mm and 1 mrad. Measured on
/// lavapipe (2026-11-24): every step converges and every body agrees within 3.1e-5 m and
/// 9.1e-5 rad (with the slip coupling lagged, `slip_coupling` off, one turning step of
/// 100 reached the iteration cap, and driving straight a side wheel's spin differed by
/// 0.027 rad); the counts are printed.
#[test]
fn skid_steer_chassis_matches_cpu() {
    for (what, speeds) in [("straight", [4.0, 4.0, 4.0]), ("turning", [2.0, 6.0, 4.0])] {
        let model = scenes::skid_steer(speeds).unwrap();
        let chassis = model.body_id("chassis").unwrap().0;
        let name = format!("skid-steer {what} h=0.01");
        if let Some(p) = common::run(&name, &model, 0.01, 1.0) {
            let (dx, dtheta) = p.body_differences[chassis];
            println!("  chassis |Δx| {dx:.2e} m, |Δθ| {dtheta:.2e} rad");
            assert!(
                dx <= 1e-3 && dtheta <= 1e-3,
                "{name}: chassis differs by {dx} m, {dtheta} rad"
            );
            assert_eq!(p.contact_count_differs, 0, "{name}");
        }
    }
}

/// The skid-steer at h = 0.05 driving straight and turning: every step converges and
/// the chassis follows the CPU's within 1 mm and 1 mrad. Its wheels' contacts touch
/// one dynamic body each, so the device solves the Newton system along the robot's tree
/// (`GpuSettings::tree_solve`); with the Krylov solve of the Schur complement the
/// turning robot converged 11 of 20 steps, its wheel joints' orientation stuck at
/// 3–6e-6 rad against the 2e-6 tolerance (docs/gpu.md).
#[test]
fn skid_steer_matches_cpu_at_large_steps() {
    for (what, speeds) in [("straight", [4.0, 4.0, 4.0]), ("turning", [2.0, 6.0, 4.0])] {
        let model = scenes::skid_steer(speeds).unwrap();
        let chassis = model.body_id("chassis").unwrap().0;
        let name = format!("skid-steer {what} h=0.05");
        let control = Control::new(&model, 1);
        let settings = GpuSettings::default();
        if let Some(p) = common::run_with(&name, &model, &control, settings, 0.05, 1.0) {
            let (dx, dtheta) = p.body_differences[chassis];
            println!("  chassis |Δx| {dx:.2e} m, |Δθ| {dtheta:.2e} rad");
            assert!(
                dx <= 1e-3 && dtheta <= 1e-3,
                "{name}: chassis differs by {dx} m, {dtheta} rad"
            );
            assert_eq!(p.converged, p.steps, "{name}: unconverged steps");
        }
    }
}

/// The material of the capsule and cylinder scenes: μ = 0.5, no bounce.
const MATERIAL: Material = Material {
    friction: 0.5,
    restitution: 0.0,
    anisotropy: None,
};

/// A body of `mass` kg with one `shape` (μ = 0.5), its centre at `at`, turned by
/// `rotation`.
fn solid(
    name: &str,
    shape: Shape,
    mass: f64,
    at: Vector3<f64>,
    rotation: UnitQuaternion<f64>,
) -> BodyDesc {
    BodyDesc::dynamic(name)
        .pose(Isometry3::from_parts(at.into(), rotation))
        .mass(mass, Vector3::zeros(), shape.unit_inertia(mass))
        .shape(ShapeDesc::new(shape).material(MATERIAL))
}

/// A model of `bodies` over a ground plane (μ = 0.5).
fn on_ground(bodies: Vec<BodyDesc>) -> Model {
    let mut b = ModelBuilder::new();
    let ground = ShapeDesc::from_geometry(Geometry::HalfSpace {
        normal: Vector3::z(),
    })
    .material(MATERIAL);
    b.add_body(BodyDesc::fixed("ground").shape(ground)).unwrap();
    for body in bodies {
        b.add_body(body).unwrap();
    }
    b.build().unwrap()
}

/// Capsules and cylinders on the device (sphere–capsule, capsule–capsule, capsule–box,
/// sphere–cylinder, both on the ground) for 1 s against the CPU, at h = 0.01 and 0.05:
/// * a ball dropped off-centre onto a capsule lying on the ground slides off its side;
/// * a ball dropped off-centre onto a cylinder lying on the ground slides off its side;
/// * a capsule dropped crosswise onto another one;
/// * a tilted capsule dropped onto a box lying on the ground lands on one end and comes
///   to rest lying on the box's top face.
///
/// Positions agree within 1 mm and every step converges. The contact counts are printed,
/// not compared: parry's capsule–box manifold keeps the far end of a tilted capsule
/// (beyond the margin) and the closest point beside the two ends of a lying one, which
/// the device does not produce.
///
/// With the slip coupling lagged (`slip_coupling` off), at h = 0.05 the capsule's flat
/// landing on the box left the GPU's Newton iteration stuck in two steps (contact
/// residual 0.26 m/s, 1.9 mm off the CPU after 1 s): the slip force lagged the normal
/// force (∂R/∂λ_n). With the coupling, the default, every step converges (2.4e-6 m).
#[test]
fn capsules_and_cylinders_match_cpu() {
    let capsule = |radius, half_length| Shape::Capsule {
        radius,
        half_length,
    };
    let about = |axis: Vector3<f64>, angle: f64| {
        UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle)
    };
    let lying = about(Vector3::y(), std::f64::consts::FRAC_PI_2);
    let slab = Shape::Box {
        half_extents: Vector3::new(0.6, 0.4, 0.2),
    };
    let scenes = [
        (
            "capsule dropped on a box",
            &[0.01, 0.05][..],
            on_ground(vec![
                solid(
                    "slab",
                    slab,
                    4.0,
                    Vector3::new(0.0, 0.0, 0.2),
                    UnitQuaternion::identity(),
                ),
                solid(
                    "capsule",
                    capsule(0.1, 0.3),
                    1.0,
                    Vector3::new(0.1, 0.05, 0.75),
                    about(Vector3::new(0.1, 1.0, 0.0), 1.0),
                ),
            ]),
        ),
        (
            "ball dropped on a capsule",
            &[0.01, 0.05][..],
            on_ground(vec![
                solid(
                    "log",
                    capsule(0.2, 0.5),
                    3.0,
                    Vector3::new(0.0, 0.0, 0.2),
                    lying,
                ),
                solid(
                    "ball",
                    Shape::Sphere { radius: 0.15 },
                    0.5,
                    Vector3::new(0.2, 0.2, 0.8),
                    UnitQuaternion::identity(),
                ),
            ]),
        ),
        (
            "ball dropped on a cylinder lying on the ground",
            &[0.01, 0.05][..],
            on_ground(vec![
                solid(
                    "drum",
                    Shape::Cylinder {
                        radius: 0.3,
                        half_length: 0.4,
                    },
                    5.0,
                    Vector3::new(0.0, 0.0, 0.3),
                    lying,
                ),
                solid(
                    "ball",
                    Shape::Sphere { radius: 0.1 },
                    0.5,
                    Vector3::new(0.1, 0.2, 0.9),
                    UnitQuaternion::identity(),
                ),
            ]),
        ),
        (
            "crossed capsules",
            &[0.01, 0.05][..],
            on_ground(vec![
                solid(
                    "lower",
                    capsule(0.15, 0.5),
                    2.0,
                    Vector3::new(0.0, 0.0, 0.15),
                    lying,
                ),
                solid(
                    "upper",
                    capsule(0.1, 0.4),
                    1.0,
                    Vector3::new(0.1, 0.05, 0.6),
                    about(Vector3::x(), 1.45),
                ),
            ]),
        ),
    ];
    for (name, steps, model) in &scenes {
        for &h in *steps {
            let name = format!("{name} h={h}");
            if let Some(p) = common::run(&name, model, h, 1.0) {
                println!("  bodies at {:?}", p.final_positions);
                common::check_motion(&p, &name);
            }
        }
    }
}

/// Cylinders against boxes, capsules and cylinders on the device for 1 s against the
/// CPU:
/// * a cylinder dropped tilted by 0.05 rad onto a box lying on the ground lands on its
///   rim and comes to rest standing on its cap (h = 0.01; at h = 0.05, and at larger
///   tilts, the CPU reference itself leaves steps unconverged, on a half-space too);
/// * a cylinder dropped lying, one end 0.1 rad lower, onto the box;
/// * a box dropped onto a standing cylinder's cap;
/// * a capsule dropped across a cylinder lying on the ground rolls off its side;
/// * a cylinder dropped along a lying one, parallel and off-centre, lands on its side
///   line (two points, the ends of the overlap) and rolls off (skewed by 0.02 rad, the
///   CPU reference leaves steps unconverged at h = 0.01);
/// * a coin dropped off-centre onto a larger coin lying on the ground (h = 0.01; at
///   h = 0.05 the CPU reference leaves steps unconverged).
///
/// Positions and orientations agree within 1 mm and 1 mrad and every step converges.
/// The contact counts are printed, not compared: parry adds its EPA point to the
/// clipped features of a resting cylinder.
///
/// With the slip coupling lagged (`slip_coupling` off) the cylinder's flat landing on
/// the box left one step of 100 unconverged on the device (step 48: contact residual
/// 6.7e-3 m/s after 30 iterations, where the CPU needs 25), as for the capsule above.
#[test]
fn cylinder_pairs_match_cpu() {
    let cylinder = |radius, half_length| Shape::Cylinder {
        radius,
        half_length,
    };
    let about = |axis: Vector3<f64>, angle: f64| {
        UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle)
    };
    let upright = UnitQuaternion::identity();
    let lying = about(Vector3::y(), std::f64::consts::FRAC_PI_2);
    // A 4 kg box lying on the ground and a 1 kg can above it, turned by `rotation`.
    let can_over_slab = |rotation| {
        on_ground(vec![
            solid(
                "slab",
                Shape::Box {
                    half_extents: Vector3::new(0.6, 0.4, 0.2),
                },
                4.0,
                Vector3::new(0.0, 0.0, 0.2),
                upright,
            ),
            solid(
                "can",
                cylinder(0.12, 0.2),
                1.0,
                Vector3::new(0.1, 0.05, 0.75),
                rotation,
            ),
        ])
    };
    let scenes = [
        (
            "cylinder dropped tilted on a box",
            &[0.01][..],
            can_over_slab(about(Vector3::new(1.0, 0.3, 0.0), 0.05)),
        ),
        (
            "cylinder dropped lying on a box",
            &[0.01, 0.05][..],
            can_over_slab(lying * about(Vector3::x(), 0.1)),
        ),
        (
            "box dropped on a standing cylinder",
            &[0.01, 0.05][..],
            on_ground(vec![
                solid(
                    "pedestal",
                    cylinder(0.3, 0.25),
                    5.0,
                    Vector3::new(0.0, 0.0, 0.25),
                    upright,
                ),
                solid(
                    "block",
                    Shape::Box {
                        half_extents: Vector3::new(0.12, 0.1, 0.06),
                    },
                    0.8,
                    Vector3::new(0.05, -0.03, 0.7),
                    about(Vector3::z(), 0.3),
                ),
            ]),
        ),
        (
            "capsule dropped across a lying cylinder",
            &[0.01, 0.05][..],
            on_ground(vec![
                solid(
                    "drum",
                    cylinder(0.3, 0.4),
                    5.0,
                    Vector3::new(0.0, 0.0, 0.3),
                    lying,
                ),
                solid(
                    "pin",
                    Shape::Capsule {
                        radius: 0.06,
                        half_length: 0.3,
                    },
                    0.5,
                    Vector3::new(0.12, 0.1, 0.9),
                    about(Vector3::new(1.0, 0.2, 0.0), 1.4),
                ),
            ]),
        ),
        (
            "log dropped along a lying log",
            &[0.01, 0.05][..],
            on_ground(vec![
                solid(
                    "lower",
                    cylinder(0.2, 0.5),
                    4.0,
                    Vector3::new(0.0, 0.0, 0.2),
                    lying,
                ),
                solid(
                    "upper",
                    cylinder(0.12, 0.4),
                    1.0,
                    Vector3::new(0.05, 0.03, 0.6),
                    lying,
                ),
            ]),
        ),
        (
            "coin dropped on a coin",
            &[0.01][..],
            on_ground(vec![
                solid(
                    "base",
                    cylinder(0.3, 0.05),
                    3.0,
                    Vector3::new(0.0, 0.0, 0.05),
                    upright,
                ),
                solid(
                    "coin",
                    cylinder(0.15, 0.04),
                    0.5,
                    Vector3::new(0.08, 0.0, 0.3),
                    about(Vector3::x(), 0.1),
                ),
            ]),
        ),
    ];
    for (name, steps, model) in &scenes {
        for &h in *steps {
            let name = format!("{name} h={h}");
            if let Some(p) = common::run(&name, model, h, 1.0) {
                println!("  bodies at {:?}", p.final_positions);
                common::check_motion(&p, &name);
            }
        }
    }
}
