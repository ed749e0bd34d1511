//! URDF robots shipped in examples/robots: the skid-steer drives straight with equal
//! wheel speeds and turns with unequal ones; the cartpole behaves like the built-in one.

use std::collections::HashMap;

use axion::prelude::*;
use axion::{BodyId, DriveId, Geometry, RobotOptions, import_urdf, scenes};
use nalgebra::{Isometry3, Vector3};

fn robot(file: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/robots")
            .join(file),
    )
    .unwrap()
}

/// The skid-steer (`scenes::skid_steer`) at the given wheel speeds (left, right, rear);
/// returns the simulator and the chassis id.
fn skid_steer(speeds: [f64; 3], h: f64) -> (Simulator, BodyId) {
    let model = scenes::skid_steer(speeds).unwrap();
    let chassis = model.body_id("chassis").unwrap();
    (
        Simulator::new(model, 1, h, BackendChoice::Cpu).unwrap(),
        chassis,
    )
}

fn yaw(sim: &Simulator, body: BodyId) -> f64 {
    let (_, _, yaw) = sim
        .state()
        .body_pose(sim.model(), 0, body)
        .rotation
        .euler_angles();
    yaw
}

/// Runs `steps` and returns the heading change, unwrapped step by step.
fn run_heading(sim: &mut Simulator, body: BodyId, steps: usize) -> (f64, axion::RunSummary) {
    let mut heading = 0.0;
    let mut last = yaw(sim, body);
    let summary = sim
        .run_with(steps, |s| {
            let now = yaw(s, body);
            heading += axion::math::wrap_angle(now - last);
            last = now;
        })
        .unwrap();
    (heading, summary)
}

/// Straight: no heading change. Turning (the wheels skid): the heading stays below the
/// no-slip bound, every step converges, and h = 0.05 turns by the same angle as
/// h = 0.01 within 5 % (unconverged steps had made it 27 % smaller; docs/step.md).
#[test]
fn skid_steer_drives_straight_and_turns() {
    let mut headings = Vec::new();
    for h in [0.01, 0.05] {
        let steps = (3.0 / h) as usize;
        let (mut straight, chassis) = skid_steer([4.0, 4.0, 4.0], h);
        let (heading, s) = run_heading(&mut straight, chassis, steps);
        let p = straight
            .state()
            .body_pose(straight.model(), 0, chassis)
            .translation
            .vector;
        println!(
            "skid-steer straight h = {h}: moved {:.3} m along x, {:.2e} m across, heading {:.2e} rad, {:.2} it/step, {}/{} converged, joint error {:.1e} m",
            p.x,
            p.y,
            heading,
            s.mean_iterations,
            s.converged_steps,
            s.steps,
            straight.joint_errors(0).position
        );
        // Rolling without slip would give ω r t = 4.32 m.
        assert!(p.x > 3.0 && p.x < 4.4, "moved {}", p.x);
        assert!(heading.abs() < 1f64.to_radians() && p.y.abs() < 0.05);

        let (mut turning, chassis) = skid_steer([2.0, 6.0, 4.0], h);
        let (heading, s) = run_heading(&mut turning, chassis, steps);
        // Without slip the side wheels would turn it at r (ω_r − ω_l) / track = 2 rad/s.
        let ideal = 0.36 * 4.0 / 0.72 * 3.0;
        println!(
            "skid-steer turning h = {h}: heading {heading:.3} rad after 3 s (no-slip bound {ideal:.1} rad), {:.2} it/step, {}/{} converged",
            s.mean_iterations, s.converged_steps, s.steps
        );
        assert!(heading > 0.2 && heading < ideal, "heading {heading}");
        assert!(turning.joint_errors(0).position < 1e-6);
        assert_eq!(s.converged_steps, s.steps, "h = {h}");
        headings.push(heading);
    }
    assert!(
        (headings[1] / headings[0] - 1.0).abs() < 0.05,
        "headings {headings:?}"
    );
}

/// Rolling wheels keep their radius (docs/step.md, "Rolling ahead"): the skid-steer
/// driving straight at h = 0.01, 0.02 and 0.05; over its second and third second every
/// wheel centre stays within 1e-4 m of the radius 0.36 m above the ground. With contact
/// points fixed to the wheel at the start of each step (points that roll up by
/// r(1 − cos hω) during the step) the axles sat 0.29 mm low at h = 0.01.
#[test]
fn rolling_wheels_keep_their_radius() {
    for h in [0.01, 0.02, 0.05] {
        let (mut sim, _) = skid_steer([4.0, 4.0, 4.0], h);
        let wheels: Vec<BodyId> = ["left_wheel", "right_wheel", "rear_wheel"]
            .iter()
            .map(|w| sim.model().body_id(w).unwrap())
            .collect();
        let settle = (1.0 / h).round() as usize;
        let mut worst: f64 = 0.0;
        let mut k = 0;
        let summary = sim
            .run_with((3.0 / h).round() as usize, |s| {
                k += 1;
                if k > settle {
                    for &w in &wheels {
                        let z = s.state().com_pose(0, w).translation.vector.z;
                        worst = worst.max((z - 0.36).abs());
                    }
                }
            })
            .unwrap();
        println!(
            "skid-steer rolling straight, h = {h}: wheel centres within {worst:.2e} m of their radius, {}/{} converged, {:.2} it/step",
            summary.converged_steps, summary.steps, summary.mean_iterations
        );
        assert!(worst < 1e-4, "h = {h}: {worst:.3e} m");
        assert_eq!(summary.converged_steps, summary.steps, "h = {h}");
    }
}

#[test]
fn urdf_cartpole_matches_the_built_in_one() {
    let mut b = ModelBuilder::new();
    let options = RobotOptions {
        fixed_base: true,
        drives: HashMap::from([(
            "slider".to_string(),
            DriveDesc::Velocity {
                target: 1.0,
                ke: 1000.0,
            },
        )]),
        ..Default::default()
    };
    let imported = import_urdf(&robot("cartpole.urdf"), &options, &mut b).unwrap();
    let model = b.build().unwrap();
    let cart = imported.links["cart"];
    assert_eq!(model.bodies()[cart.0].mass.mass(), 240.0);
    assert!(
        (model.bodies()[imported.links["pole"].0].com - Vector3::new(0.0, 0.0, -1.0)).norm()
            < 1e-12
    );
    let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::Cpu).unwrap();
    sim.run(200).unwrap();
    let y0 = sim.state().com_pose(0, cart).translation.vector.y;
    sim.run(600).unwrap();
    let mean = (sim.state().com_pose(0, cart).translation.vector.y - y0) / 6.0;
    println!(
        "URDF cartpole: mean cart velocity {mean:.5} m/s, joint error {:.1e} m",
        sim.joint_errors(0).position
    );
    assert!((mean - 1.0).abs() < 0.01 && sim.joint_errors(0).position < 1e-6);
    assert!(sim.control().drive(0, DriveId(0)).ke() == 1000.0);
}

#[test]
fn urdf_errors_name_the_problem() {
    let mut b = ModelBuilder::new();
    let bad = |text: &str| {
        import_urdf(text, &RobotOptions::default(), &mut ModelBuilder::new())
            .unwrap_err()
            .to_string()
    };
    assert!(bad("<robot name=\"r\"><link name=\"a\"").contains("not a readable XML file"));
    let two_roots = "<robot name=\"r\"><link name=\"a\"/><link name=\"b\"/></robot>";
    assert!(bad(two_roots).contains("one root link"));
    let mesh = "<robot name=\"r\"><link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial><collision><geometry><mesh filename=\"a.stl\"/></geometry></collision></link></robot>";
    assert!(bad(mesh).contains("collision mesh \"a.stl\""));
    // A root without mass is bolted to the world, and the import says so.
    let massless = "<robot name=\"r\"><link name=\"a\"/></robot>";
    let imported =
        import_urdf(massless, &RobotOptions::default(), &mut ModelBuilder::new()).unwrap();
    assert!(imported.fixed_base);
    let warning = imported.warnings[0].to_string();
    assert!(
        warning.contains("\"a\" has no mass") && warning.contains("fixed base"),
        "{warning}"
    );
    let unknown_drive = RobotOptions {
        drives: HashMap::from([(
            "nope".to_string(),
            DriveDesc::Velocity {
                target: 1.0,
                ke: 1.0,
            },
        )]),
        fixed_base: true,
        ..Default::default()
    };
    let err = import_urdf(&robot("cartpole.urdf"), &unknown_drive, &mut b)
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"nope\""), "{err}");
}

const INERTIAL: &str = "<inertial><mass value=\"2\"/><inertia ixx=\"0.1\" ixy=\"0\" ixz=\"0\" iyy=\"0.1\" iyz=\"0\" izz=\"0.1\"/></inertial>";

/// A floating arm with the usual massless frames: `base_footprint` (root) fixed under
/// `base_link`, and a `tool0` frame with a sphere fixed at the arm's end.
fn arm_with_frames() -> String {
    format!(
        "<robot name=\"arm\">
          <link name=\"base_footprint\"/>
          <link name=\"base_link\">{INERTIAL}<collision><geometry><box size=\"0.4 0.4 0.2\"/></geometry></collision></link>
          <link name=\"arm\">{INERTIAL}</link>
          <link name=\"tool0\"><collision><origin xyz=\"0 0 0.05\"/><geometry><sphere radius=\"0.05\"/></geometry></collision></link>
          <joint name=\"footprint\" type=\"fixed\"><parent link=\"base_footprint\"/><child link=\"base_link\"/><origin xyz=\"0 0 0.1\"/></joint>
          <joint name=\"shoulder\" type=\"revolute\"><parent link=\"base_link\"/><child link=\"arm\"/><origin xyz=\"0 0 0.1\" rpy=\"0.3 0 0\"/><axis xyz=\"0 1 0\"/></joint>
          <joint name=\"flange\" type=\"fixed\"><parent link=\"arm\"/><child link=\"tool0\"/><origin xyz=\"0.5 0 0\" rpy=\"0 0.2 0\"/></joint>
        </robot>"
    )
}

/// The same robot written without the massless frames: the base pose moved up by the
/// footprint joint, the sphere placed on the arm through the flange joint by hand.
fn arm_without_frames() -> String {
    let flange = Isometry3::translation(0.5, 0.0, 0.0)
        * nalgebra::UnitQuaternion::from_euler_angles(0.0, 0.2, 0.0)
        * Isometry3::translation(0.0, 0.0, 0.05);
    let (p, (r, pch, y)) = (flange.translation.vector, flange.rotation.euler_angles());
    format!(
        "<robot name=\"arm\">
          <link name=\"base_link\">{INERTIAL}<collision><geometry><box size=\"0.4 0.4 0.2\"/></geometry></collision></link>
          <link name=\"arm\">{INERTIAL}<collision><origin xyz=\"{} {} {}\" rpy=\"{r} {pch} {y}\"/><geometry><sphere radius=\"0.05\"/></geometry></collision></link>
          <joint name=\"shoulder\" type=\"revolute\"><parent link=\"base_link\"/><child link=\"arm\"/><origin xyz=\"0 0 0.1\" rpy=\"0.3 0 0\"/><axis xyz=\"0 1 0\"/></joint>
        </robot>",
        p.x, p.y, p.z
    )
}

/// Massless frame links are merged into the bodies they are fixed to, and the robot
/// moves exactly like the one written without them.
#[test]
fn massless_frames_merge_into_their_bodies() {
    let base = Isometry3::translation(0.0, 0.0, 1.0);
    let import = |text: &str, base_pose: Isometry3<f64>| {
        let mut b = ModelBuilder::new();
        let options = RobotOptions {
            base_pose,
            ..Default::default()
        };
        let imported = import_urdf(text, &options, &mut b).unwrap();
        (b.build().unwrap(), imported)
    };
    let (merged, imported) = import(&arm_with_frames(), base);
    let (plain, _) = import(
        &arm_without_frames(),
        base * Isometry3::translation(0.0, 0.0, 0.1),
    );
    assert_eq!(merged.bodies().len(), 2);
    assert_eq!(merged.joints().len(), 1);
    assert_eq!(imported.merged_joints.len(), 2);
    assert_eq!(imported.links["tool0"], imported.links["arm"]);
    assert_eq!(
        imported.links["base_footprint"],
        imported.links["base_link"]
    );
    let footprint = imported.frames["base_footprint"].translation.vector;
    assert!((footprint - Vector3::new(0.0, 0.0, -0.1)).norm() < 1e-15);

    let mut a = Simulator::new(merged, 1, 0.01, BackendChoice::Cpu).unwrap();
    let mut b = Simulator::new(plain, 1, 0.01, BackendChoice::Cpu).unwrap();
    a.run(100).unwrap();
    b.run(100).unwrap();
    for body in 0..2 {
        let (pa, pb) = (
            a.state().com_pose(0, BodyId(body)),
            b.state().com_pose(0, BodyId(body)),
        );
        assert!(
            (pa.translation.vector - pb.translation.vector).norm() < 1e-12
                && pa.rotation.angle_to(&pb.rotation) < 1e-12,
            "body {body}: {pa} vs {pb}"
        );
    }
}

/// A scene joint that names a merged link is anchored at that link's frame.
#[test]
fn scene_joints_can_hang_from_merged_frames() {
    let dir = std::env::temp_dir().join(format!("axion-merged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("arm.urdf"), arm_with_frames()).unwrap();
    // tool0 in the world at the initial pose: base (z 1) · footprint (z 0.1) ·
    // shoulder · flange.
    let tool0 = Isometry3::translation(0.0, 0.0, 1.2)
        * nalgebra::UnitQuaternion::from_euler_angles(0.3, 0.0, 0.0)
        * Isometry3::translation(0.5, 0.0, 0.0);
    let p = tool0.translation.vector;
    let scene = format!(
        "[[robots]]\nurdf = \"arm.urdf\"\nposition = [0, 0, 1]\n\n[[joints]]\nname = \"pin\"\ntype = \"ball\"\nchild = \"tool0\"\nparent_anchor = [{}, {}, {}]\n",
        p.x, p.y, p.z
    );
    let scene = axion::parse_scene_in(&scene, &dir).unwrap();
    let sim = Simulator::new(scene.model, 1, 0.01, BackendChoice::Cpu).unwrap();
    assert!(
        sim.joint_errors(0).position < 1e-12,
        "{:?}",
        sim.joint_errors(0)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn massless_links_that_would_move_are_refused() {
    let text = arm_with_frames().replace(
        &format!("<link name=\"arm\">{INERTIAL}</link>"),
        "<link name=\"arm\"/>",
    );
    let err = import_urdf(&text, &RobotOptions::default(), &mut ModelBuilder::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"arm\"") && err.contains("shoulder"), "{err}");
    let drive_on_merged = RobotOptions {
        drives: HashMap::from([(
            "flange".to_string(),
            DriveDesc::Velocity {
                target: 1.0,
                ke: 1.0,
            },
        )]),
        ..Default::default()
    };
    let err = import_urdf(
        &arm_with_frames(),
        &drive_on_merged,
        &mut ModelBuilder::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("\"flange\"") && err.contains("merged"),
        "{err}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256)))]

    /// Mutated URDFs — a character replaced, a line dropped, a number made NaN or
    /// negative, the text cut — are imported or refused with an error, and whatever is
    /// imported can be stepped: never a panic.
    #[test]
    fn mutated_urdfs_never_panic(
        file in 0usize..3,
        at in proptest::prelude::any::<proptest::sample::Index>(),
        with in proptest::char::range(' ', '~'),
        how in 0u8..4,
    ) {
        let text = match file {
            0 => robot("skid_steer.urdf"),
            1 => robot("cartpole.urdf"),
            _ => arm_with_frames(),
        };
        let mutated: String = match how {
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
            2 => {
                // Replace the i-th quoted number by NaN, a negative value or zero.
                let numbers: Vec<usize> = text.match_indices("=\"").map(|(i, _)| i + 2).filter(|&i| text[i..].starts_with(|c: char| c.is_ascii_digit() || c == '-')).collect();
                let start = numbers[at.index(numbers.len())];
                let end = start + text[start..].find('"').unwrap();
                let value = ["nan", "-1", "0", "1e308"][usize::from(with as u8) % 4];
                format!("{}{value}{}", &text[..start], &text[end..])
            }
            _ => text.chars().take(at.index(text.len())).collect(),
        };
        let mut b = ModelBuilder::new();
        if import_urdf(&mutated, &RobotOptions::default(), &mut b).is_ok()
            && let Ok(model) = b.build()
            && let Ok(mut sim) = Simulator::new(model, 1, 0.01, BackendChoice::Cpu)
        {
            let _ = sim.step();
        }
    }
}

/// `<limit>` and `<dynamics>` are kept with the joints (the solver enforces the range
/// and applies the damping), and inconsistent ones are refused with the joint's name.
#[test]
fn urdf_limits_and_dynamics_are_kept() {
    let mut b = ModelBuilder::new();
    let bolted = RobotOptions {
        fixed_base: true,
        ..Default::default()
    };
    let imported = import_urdf(&robot("cartpole.urdf"), &bolted, &mut b).unwrap();
    let model = b.build().unwrap();
    let limited: Vec<_> = model.joints().iter().filter_map(|j| j.limits).collect();
    assert!(
        limited
            .iter()
            .any(|l| (l.lower, l.upper, l.effort, l.velocity) == (-10.0, 10.0, 1000.0, 5.0))
    );
    assert!(!imported.joints.is_empty());

    let with_dynamics = arm_with_frames().replace(
        "<axis xyz=\"0 1 0\"/>",
        "<axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1.5\" effort=\"20\" velocity=\"3\"/><dynamics damping=\"0.7\" friction=\"0.1\"/>",
    );
    let mut b = ModelBuilder::new();
    import_urdf(&with_dynamics, &RobotOptions::default(), &mut b).unwrap();
    let model = b.build().unwrap();
    let shoulder = &model.joints()[0];
    assert_eq!(
        shoulder.limits.map(|l| (l.lower, l.upper)),
        Some((-1.0, 1.5))
    );
    assert_eq!(
        shoulder.dynamics.map(|d| (d.damping, d.friction)),
        Some((0.7, 0.1))
    );

    let inverted = with_dynamics.replace("lower=\"-1\" upper=\"1.5\"", "lower=\"2\" upper=\"1\"");
    let err = import_urdf(
        &inverted,
        &RobotOptions::default(),
        &mut ModelBuilder::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("\"shoulder\"") && err.contains("above upper"),
        "{err}"
    );
}

/// Writes a box of half extents `h` as an STL file (12 triangles, outward normals).
fn write_box_stl(path: &std::path::Path, h: [f32; 3]) {
    let corner = |i: usize| {
        stl_io::Vertex::new([
            if i & 1 == 0 { -h[0] } else { h[0] },
            if i & 2 == 0 { -h[1] } else { h[1] },
            if i & 4 == 0 { -h[2] } else { h[2] },
        ])
    };
    // Each face as two counter-clockwise triangles seen from outside.
    let faces = [
        [0, 2, 3, 1], // -z
        [4, 5, 7, 6], // +z
        [0, 1, 5, 4], // -y
        [2, 6, 7, 3], // +y
        [0, 4, 6, 2], // -x
        [1, 3, 7, 5], // +x
    ];
    let triangles: Vec<stl_io::Triangle> = faces
        .iter()
        .flat_map(|f| [[f[0], f[1], f[2]], [f[0], f[2], f[3]]])
        .map(|t| stl_io::Triangle {
            normal: stl_io::Normal::new([0.0, 0.0, 0.0]),
            vertices: t.map(corner),
        })
        .collect();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut file = std::fs::File::create(path).unwrap();
    stl_io::write_stl(&mut file, triangles.iter()).unwrap();
}

/// An STL collision mesh (scaled) on a moving link becomes its convex hull, and the
/// brick it describes comes to rest on the ground at its scaled half height; on a
/// static root it stays a triangle mesh. Other formats and missing files are refused.
#[test]
fn urdf_stl_meshes_collide() {
    let dir = std::env::temp_dir().join(format!("axion-stl-{}", std::process::id()));
    write_box_stl(&dir.join("bricks/meshes/brick.stl"), [0.1, 0.1, 0.05]);
    let urdf = |mesh: &str| {
        format!(
            "<robot name=\"brick\"><link name=\"brick\">{INERTIAL}<collision><geometry><mesh filename=\"{mesh}\" scale=\"2 1 1\"/></geometry></collision></link></robot>"
        )
    };
    std::fs::write(
        dir.join("brick.urdf"),
        urdf("package://bricks/meshes/brick.stl"),
    )
    .unwrap();
    let scene = "[simulation]\ndt = 0.01\n\n[[bodies]]\nname = \"ground\"\nkind = \"static\"\nshapes = [{ type = \"half-space\", normal = [0, 0, 1] }]\n\n[[robots]]\nurdf = \"brick.urdf\"\nposition = [0, 0, 0.3]\n";
    let scene = axion::parse_scene_in(scene, &dir).unwrap();
    let brick = &scene.model.bodies()[1];
    let Geometry::ConvexHull { points } = &brick.shapes[0].geometry else {
        panic!("expected a convex hull, got {:?}", brick.shapes[0].geometry)
    };
    assert_eq!(points.len(), 8);
    assert!(points.iter().all(|p| (p.x.abs() - 0.2).abs() < 1e-7));
    let mut sim = Simulator::new(scene.model, 1, 0.01, BackendChoice::Cpu).unwrap();
    sim.run(150).unwrap();
    let z = sim.state().com_pose(0, BodyId(1)).translation.z;
    assert!((z - 0.05).abs() < 1e-6, "brick rests at z = {z}");
    assert!(sim.last_report().all_converged());

    let options = |fixed_base| RobotOptions {
        fixed_base,
        file: Some(dir.join("brick.urdf")),
        ..Default::default()
    };
    let mut b = ModelBuilder::new();
    import_urdf(&urdf("bricks/meshes/brick.stl"), &options(true), &mut b).unwrap();
    let model = b.build().unwrap();
    assert!(matches!(
        &model.bodies()[0].shapes[0].geometry,
        Geometry::TriMesh { indices, .. } if indices.len() == 12
    ));
    let refused = |mesh: &str, options: &RobotOptions| {
        import_urdf(&urdf(mesh), options, &mut ModelBuilder::new())
            .unwrap_err()
            .to_string()
    };
    std::fs::write(dir.join("brick.dae"), "<COLLADA/>").unwrap();
    let err = refused("brick.dae", &options(false));
    assert!(
        err.contains("brick.urdf:1:") && err.contains("brick.dae"),
        "{err}"
    );
    let err = refused("nowhere.stl", &options(false));
    assert!(
        err.contains("not found; tried") && err.contains("nowhere.stl"),
        "{err}"
    );
    let err = refused("brick.stl", &RobotOptions::default());
    assert!(
        err.contains("collision mesh \"brick.stl\": not found"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A ball dropped on a resting ball lands on it, unless the pair is excluded with
/// `ModelBuilder::exclude_collision`: then it falls through to the ground.
#[test]
fn excluded_pairs_pass_through_each_other() {
    let rest_height = |exclude: bool| {
        let mut b = ModelBuilder::new();
        let ground = axion::ShapeDesc::from_geometry(Geometry::HalfSpace {
            normal: Vector3::z(),
        });
        b.add_body(axion::BodyDesc::fixed("ground").shape(ground))
            .unwrap();
        let ball = |name: &str, z: f64| {
            axion::BodyDesc::dynamic(name)
                .at(Vector3::new(0.0, 0.0, z))
                .shape(axion::ShapeDesc::new(axion::Shape::Sphere { radius: 0.1 }))
        };
        let lower = b.add_body(ball("lower", 0.1)).unwrap();
        let upper = b.add_body(ball("upper", 0.35)).unwrap();
        if exclude {
            b.exclude_collision(lower, upper).unwrap();
        }
        let mut sim = Simulator::new(b.build().unwrap(), 1, 0.01, BackendChoice::Cpu).unwrap();
        sim.run(100).unwrap();
        sim.state().com_pose(0, upper).translation.z
    };
    assert!((rest_height(false) - 0.3).abs() < 1e-4);
    assert!((rest_height(true) - 0.1).abs() < 1e-4);
}

/// MJCF collision filters as MuJoCo reads them (contype₁ & conaffinity₂ or contype₂ &
/// conaffinity₁): a ball with the default bits lands on the floor plane and rests at its
/// radius; with conaffinity 0 on the ball it still lands (its contype meets the floor's
/// conaffinity); with both its bits 0 it collides with nothing and falls through.
#[test]
fn mjcf_balls_land_as_their_contact_bits_say() {
    let height = |bits: &str| {
        let text = format!(
            "<mujoco><worldbody><geom type=\"plane\" size=\"1 1 0.1\"/>\
             <body pos=\"0 0 0.5\"><freejoint/><geom size=\"0.1\" {bits}/></body></worldbody></mujoco>"
        );
        let mut b = ModelBuilder::new();
        let imported = axion::import_mjcf(&text, &RobotOptions::default(), &mut b).unwrap();
        let ball = imported.links["body1"];
        let mut sim = Simulator::new(b.build().unwrap(), 1, 0.01, BackendChoice::Cpu).unwrap();
        sim.run(100).unwrap();
        sim.state().com_pose(0, ball).translation.z
    };
    assert!((height("") - 0.1).abs() < 1e-4);
    assert!((height("conaffinity=\"0\"") - 0.1).abs() < 1e-4);
    assert!(height("contype=\"0\" conaffinity=\"0\"") < -1.0);
}
