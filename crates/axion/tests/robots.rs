//! URDF robots shipped in examples/robots: the skid-steer drives straight with equal
//! wheel speeds and turns with unequal ones; the cartpole behaves like the built-in one.

use std::collections::HashMap;

use axion::prelude::*;
use axion::{BodyId, DriveId, Geometry, Material, UrdfOptions, import_urdf};
use nalgebra::{Isometry3, Vector3};

fn robot(file: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/robots")
            .join(file),
    )
    .unwrap()
}

/// The skid-steer on the ground (μ 0.7) with velocity drives (ke 150) at the given
/// wheel speeds (left, right, rear); returns the simulator and the chassis id.
fn skid_steer(speeds: [f64; 3], h: f64) -> (Simulator, BodyId) {
    let mut b = ModelBuilder::new();
    let ground = ShapeDesc::from_geometry(Geometry::HalfSpace {
        normal: Vector3::z(),
    })
    .material(Material {
        friction: 0.7,
        ..Default::default()
    });
    b.add_body(BodyDesc::fixed("ground").shape(ground)).unwrap();
    let drives: HashMap<String, DriveDesc> = ["left_joint", "right_joint", "rear_joint"]
        .iter()
        .zip(speeds)
        .map(|(j, w)| {
            (
                j.to_string(),
                DriveDesc::Velocity {
                    target: w,
                    ke: 150.0,
                },
            )
        })
        .collect();
    let options = UrdfOptions {
        base_pose: Isometry3::translation(0.0, 0.0, 0.361),
        drives,
        friction: 0.7,
        ..Default::default()
    };
    let imported = import_urdf(&robot("skid_steer.urdf"), &options, &mut b).unwrap();
    let chassis = imported.links["chassis"];
    (
        Simulator::new(b.build().unwrap(), 1, h, BackendChoice::Cpu).unwrap(),
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

#[test]
fn skid_steer_drives_straight_and_turns() {
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
    }
}

#[test]
fn urdf_cartpole_matches_the_built_in_one() {
    let mut b = ModelBuilder::new();
    let options = UrdfOptions {
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
        import_urdf(text, &UrdfOptions::default(), &mut ModelBuilder::new())
            .unwrap_err()
            .to_string()
    };
    assert!(bad("<robot name=\"r\"><link name=\"a\"").contains("invalid URDF"));
    let two_roots = "<robot name=\"r\"><link name=\"a\"/><link name=\"b\"/></robot>";
    assert!(bad(two_roots).contains("one root link"));
    let mesh = "<robot name=\"r\"><link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial><collision><geometry><mesh filename=\"a.stl\"/></geometry></collision></link></robot>";
    assert!(bad(mesh).contains("collision mesh \"a.stl\""));
    let massless = "<robot name=\"r\"><link name=\"a\"/></robot>";
    assert!(bad(massless).contains("\"a\"") && bad(massless).contains("mass"));
    let unknown_drive = UrdfOptions {
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
