//! What a user reads and sets per world: joint coordinates and rates, drive targets in
//! their own mode, and the physical parameters a batch varies (friction, body masses).

use axion::prelude::*;
use axion::scenes::{self, ServoJoint};
use axion::{ControlError, DriveId, JointId};
use nalgebra::Vector3;

/// The pendulum's hinge angle is the geometric angle of its rod, and the rate the
/// simulator reports is the one its positions move at: backward Euler turns a hinge by
/// exactly $h\,\dot q^+$ per step.
#[test]
fn a_hinge_reports_its_angle_and_the_rate_it_moves_at() {
    let h = 0.01;
    let mut sim = Simulator::new(scenes::pendulum().unwrap(), 1, h, BackendChoice::Cpu).unwrap();
    let joint = JointId(0);
    let start = sim.joint_motion(0, joint).unwrap();
    assert!(start.position.abs() < 1e-15 && start.velocity.abs() < 1e-15);
    let mut previous = start.position;
    for _ in 0..60 {
        sim.step().unwrap();
        let now = sim.joint_motion(0, joint).unwrap();
        // The ball hangs at (cos q, 0, -sin q) for a fall about +y (q > 0 downwards).
        let p = sim.state().com_pose(0, BodyId(0)).translation.vector;
        let geometric = (-p.z).atan2(p.x);
        assert!(
            (now.position - geometric).abs() < 1e-9,
            "angle {} against the rod's {geometric}",
            now.position
        );
        let moved = (now.position - previous) / h;
        assert!(
            (moved - now.velocity).abs() < 1e-7,
            "the angle moved at {moved} rad/s, the rate says {}",
            now.velocity
        );
        previous = now.position;
    }
    assert!(previous > 0.5, "the pendulum fell: {previous} rad");
}

/// A velocity drive takes a velocity target (and reaches it); a position target given
/// to it is refused with a message naming the right form, not silently read as 0.
#[test]
fn drive_targets_are_set_in_their_own_mode() {
    let drive = DriveDesc::Velocity {
        target: 0.0,
        ke: 1e4,
    };
    let model = scenes::servo(ServoJoint::Prismatic, drive).unwrap();
    let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::Cpu).unwrap();
    let d = sim
        .model()
        .drive_id("servo")
        .expect("the servo joint's drive");
    let err = sim
        .control_mut()
        .set_position_target(0, d, 4.0, 0.0)
        .unwrap_err();
    assert!(matches!(
        err,
        ControlError::WrongDriveMode {
            mode: "velocity",
            ..
        }
    ));
    assert!(err.to_string().contains("set_velocity_target"), "{err}");
    sim.control_mut().set_velocity_target(0, d, 4.0).unwrap();
    sim.run(100).unwrap();
    let motion = sim.joint_motion(0, JointId(0)).unwrap();
    // Implicit drive, ke = 1e4 on a 10 kg cube: the lag is 4 e^{-t ke/m}, nil after 1 s.
    assert!((motion.velocity - 4.0).abs() < 1e-6, "{}", motion.velocity);
    assert!(sim.drive_force(0, d).abs() < 1e-3);
    let out = sim.control_mut().set_velocity_target(1, d, 1.0);
    assert!(matches!(
        out,
        Err(ControlError::OutOfRange { what: "world", .. })
    ));
    let out = sim.control_mut().set_velocity_target(0, DriveId(3), 1.0);
    assert!(matches!(
        out,
        Err(ControlError::OutOfRange { what: "drive", .. })
    ));
    assert!(
        sim.control_mut()
            .set_velocity_target(0, d, f64::NAN)
            .is_err()
    );
}

/// A cube set down sticking on a 30° slope (μ = 0.95) creeps only at the solver's creep
/// from its first step on: that step's iteration has a friction jump (docs/step.md, "Jumps"),
/// which lets it converge with the fallback creep's slip, 100 times faster, and then
/// polishes the result back to the step's own creep. Without the polish the cube slid
/// 9.6e-8 m in 0.5 s, twice the bound of twice the steady creep.
#[test]
fn a_cube_set_down_on_a_slope_creeps_at_the_solvers_creep() {
    let angle: f64 = 30f64.to_radians();
    let h = 0.01;
    let mut sim = Simulator::new(
        scenes::incline(angle, 0.95).unwrap(),
        1,
        h,
        BackendChoice::Cpu,
    )
    .unwrap();
    let cube = sim.model().body_id("cube").unwrap();
    let start = sim.state().world_poses(0)[cube.0].translation.vector.x;
    let steps = 50;
    let summary = sim.run(steps).unwrap();
    assert_eq!(summary.converged_steps, steps);
    let creep = axion::FRICTION_CREEP * h * 9.81 * angle.sin();
    let speed = sim.state().velocity(0, cube)[0];
    // Four sticking corners creep at c·h·g sin θ; with the uphill ones at the edge of
    // their cones the downhill ones carry more and creep up to twice as fast.
    assert!(
        (creep * (1.0 - 1e-3)..2.0 * creep).contains(&speed),
        "creeping at {speed}, not within [{creep}, twice that]"
    );
    let slid = sim.state().world_poses(0)[cube.0].translation.vector.x - start;
    let bound = 2.0 * creep * steps as f64 * h;
    assert!(
        (0.0..bound).contains(&slid),
        "slid {slid} m, more than {bound} m"
    );
}

/// Per-world friction: on a 0.3 rad slope (tan = 0.309) the world given μ = 0.2 slides
/// at g(sin θ − μ cos θ) while the world keeping the model's μ = 0.5 sticks — creeping,
/// as sticking contacts do, at c·h·g sin θ: each of the four corners slips at
/// c λ_t h r_t with r_t = 1/m + (a²/2)/(m a²/6) = 4/m and carries λ_t = m g sin θ / 4.
#[test]
fn per_world_friction_decides_who_slides() {
    let angle: f64 = 0.3;
    let h = 0.01;
    let model = scenes::incline(angle, 0.5).unwrap();
    let mut sim = Simulator::new(model, 2, h, BackendChoice::Cpu).unwrap();
    sim.control_mut().set_friction(0, Some(0.2)).unwrap();
    let cube = sim.model().body_id("cube").unwrap();
    let steps = 100;
    let summary = sim.run(steps).unwrap();
    assert_eq!(summary.converged_steps, steps);
    let speed = |w: usize| sim.state().velocity(w, cube)[0];
    let a = 9.81 * (angle.sin() - 0.2 * angle.cos());
    let t = steps as f64 * h;
    assert!(
        (speed(0) - a * t).abs() < 1e-6 * a * t,
        "{} vs {}",
        speed(0),
        a * t
    );
    let creep = axion::FRICTION_CREEP * h * 9.81 * angle.sin();
    assert!(
        (speed(1) - creep).abs() < 1e-3 * creep,
        "μ = 0.5 holds, creeping at {} (expected {creep})",
        speed(1)
    );
    assert!(matches!(
        sim.control_mut().set_friction(0, Some(-0.1)),
        Err(ControlError::Value(_))
    ));
}

/// Per-world mass on the sliding cube: a constant force gives the velocity $F t / m$
/// of each world's own mass.
#[test]
fn per_world_mass_sets_the_acceleration() {
    let (t, h) = (0.5, 0.01);
    let model = scenes::servo(
        ServoJoint::Prismatic,
        DriveDesc::Velocity {
            target: 0.0,
            ke: 1e-9,
        },
    )
    .unwrap();
    let mut sim = Simulator::new(model, 2, h, BackendChoice::Cpu).unwrap();
    let body = sim.model().body_id("body").unwrap();
    sim.control_mut()
        .set_body_mass(1, body, Some(25.0))
        .unwrap();
    for w in 0..2 {
        sim.control_mut()
            .set_wrench(w, body, Vector3::x() * 30.0, Vector3::zeros());
    }
    sim.run((t / h) as usize).unwrap();
    for (w, m) in [(0, 10.0), (1, 25.0)] {
        let rate = sim.joint_motion(w, JointId(0)).unwrap().velocity;
        let expected = 30.0 * t / m;
        let kinetic = sim.energy(w).kinetic;
        assert!(
            (kinetic - 0.5 * m * rate * rate).abs() < 1e-9 * kinetic,
            "world {w}: the energy counts its own mass: {kinetic}"
        );
        assert!(
            (rate - expected).abs() < 1e-9,
            "world {w}: {rate} against {expected}"
        );
    }
}

/// Per-world mass scales the inertia with it: the hinged bar made 2.5 times heavier
/// and turned by a 2.5 times larger torque moves exactly as the original (the discrete
/// equations are homogeneous in mass and force), while the same torque on the heavier
/// bar turns it about 2.5 times slower.
#[test]
fn per_world_mass_scales_the_inertia_with_it() {
    let (t, h) = (0.5, 0.01);
    let model = scenes::servo(
        ServoJoint::Revolute,
        DriveDesc::Velocity {
            target: 0.0,
            ke: 1e-9,
        },
    )
    .unwrap();
    let mut sim = Simulator::new(model, 3, h, BackendChoice::Cpu).unwrap();
    let body = sim.model().body_id("body").unwrap();
    for (w, mass, torque) in [(0, None, 3.0), (1, Some(25.0), 7.5), (2, Some(25.0), 3.0)] {
        sim.control_mut().set_body_mass(w, body, mass).unwrap();
        sim.control_mut()
            .set_wrench(w, body, Vector3::zeros(), Vector3::z() * torque);
    }
    sim.run((t / h) as usize).unwrap();
    let q = |w| sim.joint_motion(w, JointId(0)).unwrap();
    let (a, b, c) = (q(0), q(1), q(2));
    assert!(
        (a.position - b.position).abs() < 1e-9 && (a.velocity - b.velocity).abs() < 1e-9,
        "{a:?} against {b:?}"
    );
    // τ t / (I_zz + m d²), I_zz = m (1 + 0.04)/12, d = 0.5: 0.4455 and 0.1782 rad/s;
    // the step's discretisation leaves a relative 2e-4.
    let ratio = a.velocity / c.velocity;
    assert!((ratio - 2.5).abs() < 1e-3, "{ratio}");
}

/// A mass is refused for a static body, and when it is not positive or not finite.
#[test]
fn impossible_parameters_are_refused() {
    let model = scenes::incline(0.1, 0.5).unwrap();
    let mut sim = Simulator::new(model, 1, 0.01, BackendChoice::Cpu).unwrap();
    let ground = BodyId(0);
    let cube = sim.model().body_id("cube").unwrap();
    let c = sim.control_mut();
    assert!(matches!(
        c.set_body_mass(0, ground, Some(2.0)),
        Err(ControlError::StaticBody { body: 0 })
    ));
    for bad in [0.0, -1.0, f64::INFINITY] {
        assert!(c.set_body_mass(0, cube, Some(bad)).is_err(), "{bad}");
    }
    assert!(c.set_body_mass(0, cube, Some(2.0)).is_ok());
    assert!(c.has_parameters());
    c.set_body_mass(0, cube, None).unwrap();
    assert!(!c.has_parameters());
}

/// A drive limited to 20 N (an actuator's effort) pushing the 10 kg cube towards 4 m/s
/// with a stiff gain: saturated, it accelerates the cube at exactly F/m = 2 m/s² and
/// reads 20 N; it reaches its target later and then holds it with no force. The limit
/// survives a change of target.
#[test]
fn a_force_limited_drive_pushes_with_its_limit_until_it_catches_up() {
    let h = 0.01;
    let model = {
        let mut b = ModelBuilder::new();
        b.gravity(Vector3::zeros()).unwrap();
        let cube = b
            .add_body(BodyDesc::dynamic("cube").mass(
                10.0,
                Vector3::zeros(),
                nalgebra::Matrix3::identity(),
            ))
            .unwrap();
        b.add_joint(
            JointDesc::new(
                "slider",
                JointType::Prismatic { axis: Vector3::x() },
                None,
                cube,
            )
            .limits(axion::JointLimits {
                lower: f64::NEG_INFINITY,
                upper: f64::INFINITY,
                effort: 20.0,
                velocity: f64::INFINITY,
            })
            .drive(DriveDesc::Velocity {
                target: 4.0,
                ke: 1e4,
            }),
        )
        .unwrap();
        b.build().unwrap()
    };
    assert_eq!(model.drives()[0].initial.max_force(), 20.0);
    let mut sim = Simulator::new(model, 1, h, BackendChoice::Cpu).unwrap();
    let d = DriveId(0);
    sim.run(100).unwrap();
    let m = sim.joint_motion(0, JointId(0)).unwrap();
    assert!(
        (m.velocity - 2.0).abs() < 1e-9,
        "F t / m = 2 m/s after 1 s: {}",
        m.velocity
    );
    assert!(
        (sim.drive_force(0, d) - 20.0).abs() < 1e-9,
        "{}",
        sim.drive_force(0, d)
    );
    sim.run(200).unwrap();
    let m = sim.joint_motion(0, JointId(0)).unwrap();
    assert!((m.velocity - 4.0).abs() < 1e-9, "{}", m.velocity);
    assert!(sim.drive_force(0, d).abs() < 1e-6);
    // Backwards to -4 m/s: 8 m/s at 2 m/s² takes 4 s; after 1 s, 2 m/s.
    sim.control_mut().set_velocity_target(0, d, -4.0).unwrap();
    assert_eq!(sim.control().drive(0, d).max_force(), 20.0);
    sim.run(100).unwrap();
    let m = sim.joint_motion(0, JointId(0)).unwrap();
    assert!((m.velocity - 2.0).abs() < 1e-9, "{}", m.velocity);
    assert!((sim.drive_force(0, d) + 20.0).abs() < 1e-9);
}

/// A position drive whose PD law asks for more than the limit holds the bar's angle
/// against a larger torque only up to the limit: the 3 N·m load of a drive limited to
/// 5 N·m is held, a 7 N·m load is not.
#[test]
fn a_force_limited_position_drive_holds_only_what_it_can() {
    let h = 0.01;
    let drive = DriveDesc::Position {
        target: 0.0,
        target_velocity: 0.0,
        ke: 1e4,
        kd: 100.0,
    };
    let model = scenes::servo(ServoJoint::Revolute, drive).unwrap();
    for (torque, held) in [(3.0, true), (7.0, false)] {
        let mut sim = Simulator::new(model.clone(), 1, h, BackendChoice::Cpu).unwrap();
        let d = DriveId(0);
        let limited = sim.control().drive(0, d).with_max_force(5.0).unwrap();
        sim.control_mut().set_drive(0, d, limited).unwrap();
        sim.control_mut()
            .set_wrench(0, BodyId(0), Vector3::zeros(), Vector3::z() * torque);
        sim.run(200).unwrap();
        let m = sim.joint_motion(0, JointId(0)).unwrap();
        let force = sim.drive_force(0, d);
        if held {
            // Within the step's tolerances (1e-10 m/s on the drive and dynamics rows):
            // 1e-10 (h ke + kd) = 2e-8 N·m on the drive law, 1e-10 I/h = 3.4e-8 N·m on
            // the balance of torques about the hinge.
            assert!(
                m.velocity.abs() < 1e-9 && (force + torque).abs() < 5.4e-8,
                "{m:?}, {force}"
            );
        } else {
            assert!((force + 5.0).abs() < 1e-9, "saturated at -5 N·m: {force}");
            assert!(m.velocity > 0.5, "the 2 N·m excess turns the bar: {m:?}");
        }
    }
}
