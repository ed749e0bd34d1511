//! Compound joints: several joints between two bodies, chained through massless frames
//! ([`BodyKind::Frame`], MuJoCo's bodies with several joints). The frames add no
//! inertia: a body on a planar root moves exactly as a free body does in its plane,
//! three hinges through one point hold a body as a ball joint does, and the
//! energy–momentum scheme keeps the energy of a pendulum on two hinges. Joints that
//! leave the frames free to move on their own are refused.

use axion::math::twist;
use axion::prelude::*;
use axion::{BodyKind, ControlError, ModelError};
use nalgebra::{Isometry3, Matrix3, Vector3};

const H: f64 = 0.01;

/// A body of mass 2 kg, principal inertia (0.1, 0.2, 0.3) kg m², centre of mass off its
/// origin, at `origin`.
fn payload(origin: Vector3<f64>) -> BodyDesc {
    BodyDesc::dynamic("payload").at(origin).mass(
        2.0,
        Vector3::new(0.1, 0.0, -0.05),
        Matrix3::from_diagonal(&Vector3::new(0.1, 0.2, 0.3)),
    )
}

/// `payload` hanging from the world through `joints` (kinds, in order) all anchored at
/// `anchor` (world), with a massless frame between each two; every frame starts at the
/// payload's pose, as MuJoCo composes a body's joints.
fn chain(joints: &[JointType], anchor: Vector3<f64>, body: BodyDesc) -> ModelBuilder {
    let mut b = ModelBuilder::new();
    let origin = body.pose;
    let local = origin.inverse() * Isometry3::translation(anchor.x, anchor.y, anchor.z);
    let mut above: Option<BodyId> = None;
    let mut above_frame = Isometry3::translation(anchor.x, anchor.y, anchor.z);
    for (k, kind) in joints.iter().enumerate() {
        let below = if k + 1 == joints.len() {
            b.add_body(body.clone()).unwrap()
        } else {
            b.add_body(BodyDesc::frame(format!("frame {k}")).pose(origin))
                .unwrap()
        };
        b.add_joint(
            JointDesc::new(format!("j{k}"), *kind, above, below).frames(above_frame, local),
        )
        .unwrap();
        above = Some(below);
        above_frame = local;
    }
    b
}

fn simulate(model: axion::Model, settings: SolverSettings, steps: usize) -> Simulator {
    let mut sim = Simulator::new(model, 1, H, BackendChoice::CpuWith(settings)).unwrap();
    let summary = sim.run(steps).unwrap();
    assert_eq!(summary.converged_steps, steps, "every step converges");
    sim
}

/// Two slides (x, z) and a hinge (y) from the world: every motion in the x–z plane is
/// allowed and the frames carry no mass, so the payload moves exactly as a free body
/// started in that plane: its centre falls as backward Euler's
/// $v_{n+1} = v_n - g h$, $z_{n+1} = z_n + h v_{n+1}$, and it spins at a constant rate
/// about its principal axis y.
#[test]
fn a_planar_root_moves_as_a_free_body() {
    let start = twist(Vector3::new(0.7, 0.0, 1.5), Vector3::new(0.0, 3.0, 0.0));
    let body = payload(Vector3::new(0.0, 0.0, 1.0)).velocity(start);
    let joints = [
        JointType::Prismatic { axis: Vector3::x() },
        JointType::Prismatic { axis: Vector3::z() },
        JointType::Revolute { axis: Vector3::y() },
    ];
    let model = chain(&joints, Vector3::new(0.0, 0.0, 1.0), body.clone())
        .build()
        .unwrap();
    let frames: Vec<&str> = model
        .bodies()
        .iter()
        .filter(|b| b.kind == BodyKind::Frame)
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(frames, ["frame 0", "frame 1"]);
    assert!(
        model
            .bodies()
            .iter()
            .all(|b| b.kind != BodyKind::Frame || b.mass.mass() == 0.0)
    );
    let payload_id = model.body_id("payload").unwrap();
    let c0 = model.bodies()[payload_id.0].initial_pose.translation.vector;
    let steps = 100;
    let sim = simulate(model, SolverSettings::default(), steps);

    let mut free = ModelBuilder::new();
    free.add_body(body).unwrap();
    let free = simulate(free.build().unwrap(), SolverSettings::default(), steps);

    let (mut x, mut z, mut vz) = (c0.x, c0.z, 1.5);
    for _ in 0..steps {
        vz -= 9.81 * H;
        x += 0.7 * H;
        z += vz * H;
    }
    let ours = sim.state().com_pose(0, payload_id);
    let alone = free.state().com_pose(0, BodyId(0));
    let u = sim.state().world_velocities(0)[payload_id.0];
    println!(
        "centre ({:.12}, {:.12}) vs backward Euler ({x:.12}, {z:.12}); spin {:.12} rad/s",
        ours.translation.x, ours.translation.z, u[4]
    );
    assert!((ours.translation.x - x).abs() < 1e-9);
    assert!((ours.translation.z - z).abs() < 1e-9);
    assert!(ours.translation.y.abs() < 1e-12);
    assert!((u[4] - 3.0).abs() < 1e-9, "spin {}", u[4]);
    assert!((ours.translation.vector - alone.translation.vector).norm() < 1e-9);
    assert!(ours.rotation.angle_to(&alone.rotation) < 1e-9);
}

/// Three hinges through one point (axes x, y, z) allow every rotation about it: the
/// payload swings exactly as on a ball joint at that point (same steps, same state, to
/// the solver's tolerance), while its middle hinge stays far from gimbal lock.
#[test]
fn three_hinges_through_a_point_are_a_ball_joint() {
    let start = twist(Vector3::zeros(), Vector3::new(1.0, -0.5, 2.0));
    let body = payload(Vector3::new(0.2, 0.1, 0.5)).velocity(start);
    let anchor = Vector3::new(0.0, 0.0, 1.0);
    let hinges =
        [Vector3::x(), Vector3::y(), Vector3::z()].map(|axis| JointType::Revolute { axis });
    let compound = chain(&hinges, anchor, body.clone()).build().unwrap();
    let ball = chain(&[JointType::Ball], anchor, body).build().unwrap();
    let (c, b) = (
        compound.body_id("payload").unwrap(),
        ball.body_id("payload").unwrap(),
    );
    let steps = 80;
    let compound = simulate(compound, SolverSettings::default(), steps);
    let ball = simulate(ball, SolverSettings::default(), steps);
    let (pc, pb) = (compound.state().com_pose(0, c), ball.state().com_pose(0, b));
    let travelled = (pb.translation.vector - Vector3::new(0.3, 0.1, 0.45)).norm();
    let gap = (pc.translation.vector - pb.translation.vector).norm();
    println!("centres {gap:.2e} m apart after travelling {travelled:.3} m");
    assert!(travelled > 0.1, "the payload swings");
    assert!(gap < 1e-8, "centres {gap} m apart");
    assert!(pc.rotation.angle_to(&pb.rotation) < 1e-8);
    assert!(compound.joint_errors(0).position < 1e-9);
}

/// The largest energy drift $|E_n - E_0|$ and kinetic energy over 2 s of a payload
/// hanging 0.6 m below two perpendicular hinges through one point (a universal joint),
/// started swinging about both, stepped at `h` with `integrator`.
fn universal_joint_pendulum(h: f64, integrator: Integrator) -> (f64, f64) {
    let anchor = Vector3::new(0.0, 0.0, 1.0);
    let body = payload(Vector3::new(0.0, 0.0, 0.4));
    let centre = body.pose * nalgebra::Point3::new(0.1, 0.0, -0.05);
    let spin = Vector3::new(2.0, 1.0, 0.0);
    let start = twist(spin.cross(&(centre.coords - anchor)), spin);
    let hinges = [Vector3::x(), Vector3::y()].map(|axis| JointType::Revolute { axis });
    let model = chain(&hinges, anchor, body.velocity(start))
        .build()
        .unwrap();
    let settings = SolverSettings {
        integrator,
        ..Default::default()
    };
    let mut sim = Simulator::new(model, 1, h, BackendChoice::CpuWith(settings)).unwrap();
    let e0 = sim.energy(0);
    let (mut drift, mut kinetic): (f64, f64) = (0.0, e0.kinetic);
    for _ in 0..(2.0 / h).round() as usize {
        assert!(sim.step().unwrap().worlds[0].converged);
        let e = sim.energy(0);
        drift = drift.max((e.total() - e0.total()).abs());
        kinetic = kinetic.max(e.kinetic);
    }
    (drift, kinetic)
}

/// The energy–momentum scheme keeps a universal-joint pendulum's energy (frames have
/// none) as it keeps a ball joint's: its drift is below 1e-4 of the largest kinetic
/// energy, falls as $h^2$ (halving h divides it by more than 3) and is a small part of
/// what backward Euler dissipates.
#[test]
fn energy_momentum_keeps_a_universal_joint_pendulum_energy() {
    let (drift, kinetic) = universal_joint_pendulum(0.01, Integrator::EnergyMomentum);
    let (half, _) = universal_joint_pendulum(0.005, Integrator::EnergyMomentum);
    let (lost, _) = universal_joint_pendulum(0.01, Integrator::BackwardEuler);
    println!(
        "energy drift {:.2e} of the largest kinetic energy {kinetic:.3} J at h = 0.01, {:.2e} at h = 0.005; backward Euler {:.2e}",
        drift / kinetic,
        half / kinetic,
        lost / kinetic
    );
    assert!(drift < 1e-4 * kinetic, "drift {drift} J");
    assert!(drift > 3.0 * half, "drift {drift} J at h, {half} J at h/2");
    assert!(
        drift < 1e-2 * lost,
        "drift {drift} J, backward Euler {lost} J"
    );
}

/// Frames whose motion the joints do not fix are refused: two parallel hinges through
/// one point (the frame could turn alone); so are a frame with a shape, a frame with
/// two child joints, and a mass given to a frame.
#[test]
fn frames_the_joints_leave_free_are_refused() {
    let anchor = Vector3::new(0.0, 0.0, 1.0);
    let body = payload(Vector3::new(0.0, 0.0, 0.5));
    let parallel = [JointType::Revolute { axis: Vector3::y() }; 2];
    match chain(&parallel, anchor, body.clone()).build() {
        Err(ModelError::DependentFrameJoints { joints, frames }) => {
            assert_eq!(joints, ["j0", "j1"]);
            assert_eq!(frames, ["frame 0"]);
        }
        other => panic!("{other:?}"),
    }
    // The same hinges 0.3 m apart: a two-link planar arm with a massless middle link.
    let mut b = ModelBuilder::new();
    let f = b.add_body(BodyDesc::frame("link")).unwrap();
    let p = b.add_body(body.clone()).unwrap();
    let hinge = JointType::Revolute { axis: Vector3::y() };
    b.add_joint(JointDesc::new("a", hinge, None, f)).unwrap();
    b.add_joint(JointDesc::new("b", hinge, Some(f), p).frames(
        Isometry3::translation(0.3, 0.0, 0.0),
        Isometry3::translation(0.3, 0.0, -0.5),
    ))
    .unwrap();
    let arm = b.build().unwrap();
    let mut sim = Simulator::new(arm, 1, H, BackendChoice::Cpu).unwrap();
    assert_eq!(sim.run(50).unwrap().converged_steps, 50);
    assert!(sim.joint_errors(0).position < 1e-9);
    match sim
        .control_mut()
        .set_body_mass(0, f, Some(1.0))
        .unwrap_err()
    {
        ControlError::FrameBody { body } => assert_eq!(body, f.0),
        other => panic!("{other:?}"),
    }

    let shaped = BodyDesc::frame("f").shape(ShapeDesc::new(Shape::Sphere { radius: 0.1 }));
    assert!(matches!(
        ModelBuilder::new().add_body(shaped),
        Err(ModelError::FrameWithMass { .. })
    ));
    let mut b = ModelBuilder::new();
    let f = b.add_body(BodyDesc::frame("fork")).unwrap();
    let l = b.add_body(payload(Vector3::zeros())).unwrap();
    let mut r = payload(Vector3::zeros());
    r.name = "other".into();
    let r = b.add_body(r).unwrap();
    b.add_joint(JointDesc::new("up", hinge, None, f)).unwrap();
    b.add_joint(JointDesc::new(
        "left",
        JointType::Revolute { axis: Vector3::x() },
        Some(f),
        l,
    ))
    .unwrap();
    b.add_joint(JointDesc::new(
        "right",
        JointType::Revolute { axis: Vector3::z() },
        Some(f),
        r,
    ))
    .unwrap();
    match b.build() {
        Err(ModelError::FrameJoints {
            body,
            parents,
            children,
        }) => assert_eq!((body.as_str(), parents, children), ("fork", 1, 2)),
        other => panic!("{other:?}"),
    }
}

/// The two bodies at the ends of a chain of frames never collide, as a joint's two
/// bodies do not, unless the top is static (a planar root's torso lands on the world's
/// floor, as in MuJoCo).
#[test]
fn the_ends_of_a_chain_do_not_collide_unless_static() {
    let hinges = [Vector3::x(), Vector3::y()].map(|axis| JointType::Revolute { axis });
    let mut b = ModelBuilder::new();
    let top = b.add_body(payload(Vector3::new(0.0, 0.0, 1.0))).unwrap();
    let mut below = payload(Vector3::new(0.0, 0.0, 0.5));
    below.name = "below".into();
    let f = b
        .add_body(BodyDesc::frame("cross").at(Vector3::new(0.0, 0.0, 0.5)))
        .unwrap();
    let c = b.add_body(below).unwrap();
    b.add_joint(JointDesc::new("a", hinges[0], Some(top), f).frames(
        Isometry3::translation(0.0, 0.0, -0.25),
        Isometry3::translation(0.0, 0.0, 0.25),
    ))
    .unwrap();
    b.add_joint(JointDesc::new("b", hinges[1], Some(f), c).frames(
        Isometry3::translation(0.0, 0.0, 0.25),
        Isometry3::translation(0.0, 0.0, 0.25),
    ))
    .unwrap();
    let model = b.build().unwrap();
    assert!(model.collision_excluded(top, c));

    let mut b = ModelBuilder::new();
    let ground = b.add_body(BodyDesc::fixed("ground")).unwrap();
    let f = b
        .add_body(BodyDesc::frame("slider").at(Vector3::new(0.0, 0.0, 1.0)))
        .unwrap();
    let payload = b.add_body(payload(Vector3::new(0.0, 0.0, 1.0))).unwrap();
    let at = Isometry3::translation(0.0, 0.0, 1.0);
    b.add_joint(
        JointDesc::new(
            "x",
            JointType::Prismatic { axis: Vector3::x() },
            Some(ground),
            f,
        )
        .frames(at, Isometry3::identity()),
    )
    .unwrap();
    b.add_joint(JointDesc::new("y", hinges[1], Some(f), payload))
        .unwrap();
    let model = b.build().unwrap();
    assert!(!model.collision_excluded(ground, payload));
}
