//! Rows solved together in one implicit step of one body hanging on the world (dense
//! Newton, see `common::OneBody`): drives converge to the implicit PD law, servos
//! settle on their targets, contacts stop a falling body exactly at the surface or
//! bounce it with the requested restitution.

mod common;

use axion_constraints::contact::{ContactPoint, VelocityContact, normal_row, normal_row_velocity};
use axion_constraints::drive::{CoordinateKind, Drive, DriveMode, coordinate};
use axion_constraints::joint::{Joint, JointFrames, JointKind};
use axion_constraints::row::Row;
use axion_math::{MassProperties, Pose, Twist, UnitAxis, twist, wrap_angle};
use common::OneBody;
use nalgebra::{Vector3, Vector6};

/// The static world (parent of every joint here, body `a` of every contact).
fn world() -> Pose {
    Pose::identity()
}

struct Servo {
    joint: Joint,
    axis: UnitAxis,
    kind: CoordinateKind,
    body: OneBody,
    pose: Pose,
}

/// Canonical scene 6 (docs/canonical-scenes.md): a 10 kg bar 1 m × 0.2 × 0.2 on a
/// revolute joint at one end (about z, at the world origin), or a 10 kg cube on a
/// prismatic joint along x; no gravity.
fn servo(revolute: bool) -> Servo {
    let (size, child_anchor, kind, joint_kind) = if revolute {
        (
            Vector3::new(1.0, 0.2, 0.2),
            Vector3::new(-0.5, 0.0, 0.0),
            CoordinateKind::Angle,
            JointKind::Revolute {
                axis: UnitAxis::z(),
            },
        )
    } else {
        (
            Vector3::new(1.0, 1.0, 1.0),
            Vector3::zeros(),
            CoordinateKind::Displacement,
            JointKind::Prismatic {
                axis: UnitAxis::x(),
            },
        )
    };
    let frames = JointFrames::at_anchors(Vector3::zeros(), child_anchor).unwrap();
    Servo {
        joint: Joint::new(joint_kind, frames, 0.0).unwrap(),
        axis: if revolute {
            UnitAxis::z()
        } else {
            UnitAxis::x()
        },
        kind,
        body: OneBody {
            mass: MassProperties::solid_box(10.0, size).unwrap(),
            gravity: Vector3::zeros(),
        },
        pose: Pose::translation(-child_anchor.x, 0.0, 0.0),
    }
}

impl Servo {
    fn q(&self, pose: &Pose) -> f64 {
        coordinate(self.kind, &self.joint.frames, &self.axis, &world(), pose).value
    }

    /// One step; returns (pose⁺, u⁺, drive force, max joint error).
    fn step(&self, drive: &Drive, pose: &Pose, u: &Twist, h: f64) -> (Pose, Twist, f64, f64) {
        let start = self.q(pose);
        let zero = Vector6::zeros();
        let n = self.joint.row_count();
        let res = self.body.step(pose, u, h, n + 1, |q, uu, lambda| {
            let mut rows: Vec<Row> = Vec::new();
            self.joint.rows(&world(), q, &lambda[..n], h, &mut rows);
            let c = coordinate(self.kind, &self.joint.frames, &self.axis, &world(), q);
            rows.push(drive.row(self.kind, &c, start, &zero, uu, lambda[n], h));
            rows.into_iter().map(|r| (r, r.jacobian.body_b)).collect()
        });
        assert!(
            res.residual < 1e-11,
            "Newton did not converge: {} after {}",
            res.residual,
            res.iterations
        );
        let mut errors = Vec::new();
        self.joint.position_rows(&world(), &res.pose, &mut errors);
        let joint_error = errors.iter().map(|r| r.error.abs()).fold(0.0, f64::max);
        (res.pose, res.velocity, res.lambda[n], joint_error)
    }
}

/// The converged drive force is the implicit PD law on the end-of-step state plus the
/// feed-forward force τ: λ = τ − ke (q⁺ − q*) − kd ((q⁺ − q⁻)/h − q̇*), or
/// λ = τ − ke (q̇⁺ − q̇*), or λ = τ for a force drive.
#[test]
fn converged_drive_force_is_the_implicit_pd_law() {
    for revolute in [true, false] {
        let s = servo(revolute);
        let h = 1.0 / 60.0;
        let u0 = if revolute {
            twist(Vector3::new(0.0, 0.3, 0.0), Vector3::new(0.0, 0.0, 0.6))
        } else {
            twist(Vector3::new(0.4, 0.0, 0.0), Vector3::zeros())
        };
        for drive in [
            Drive::position(1.2, 0.3, 1000.0, 100.0).unwrap(),
            Drive::velocity(1.0, 1000.0).unwrap(),
            Drive::position(1.2, 0.3, 1000.0, 100.0)
                .unwrap()
                .with_feedforward(40.0)
                .unwrap(),
            Drive::velocity(1.0, 1000.0)
                .unwrap()
                .with_feedforward(-25.0)
                .unwrap(),
            Drive::force(7.5).unwrap(),
        ] {
            let (pose, u, lambda, joint_error) = s.step(&drive, &s.pose, &u0, h);
            let (q0, q1) = (s.q(&s.pose), s.q(&pose));
            let q_dot = coordinate(s.kind, &s.joint.frames, &s.axis, &world(), &pose)
                .jacobian
                .dot(&Vector6::zeros(), &u);
            let law = drive.feedforward()
                + match drive.mode() {
                    DriveMode::Position {
                        target,
                        target_velocity,
                    } => {
                        -drive.ke() * (q1 - target) - drive.kd() * ((q1 - q0) / h - target_velocity)
                    }
                    DriveMode::Velocity { target_velocity } => {
                        -drive.ke() * (q_dot - target_velocity)
                    }
                    DriveMode::Force => 0.0,
                    DriveMode::Armature => unreachable!("no armature among the cases"),
                };
            assert!(
                (lambda - law).abs() <= 1e-8 * law.abs().max(1.0),
                "revolute {revolute}: λ = {lambda}, PD law {law}"
            );
            assert!(joint_error < 1e-10, "joint error {joint_error}");
            // The drive really moved the joint (not a trivially zero force).
            assert!(law.abs() > 1.0);
        }
    }
}

/// Canonical scene 6: after 100 steps of 1/60 s the position servo is within 0.01 of
/// π/2 rad (or 1 m) and the velocity servo within 0.01 of 1 rad/s (or 0.5 m/s).
#[test]
fn servos_reach_their_targets() {
    let h = 1.0 / 60.0;
    for revolute in [true, false] {
        let s = servo(revolute);
        let (target, target_velocity) = if revolute {
            (std::f64::consts::FRAC_PI_2, 1.0)
        } else {
            (1.0, 0.5)
        };
        let (ke_vel, ke_pos) = if revolute {
            (1000.0, 1000.0)
        } else {
            (100.0, 500.0)
        };
        let kd_pos = if revolute { 100.0 } else { 50.0 };
        for drive in [
            Drive::position(target, 0.0, ke_pos, kd_pos).unwrap(),
            Drive::velocity(target_velocity, ke_vel).unwrap(),
        ] {
            let (mut pose, mut u) = (s.pose, Vector6::zeros());
            let mut worst_joint = 0.0f64;
            for _ in 0..100 {
                let (p, v, _, e) = s.step(&drive, &pose, &u, h);
                (pose, u, worst_joint) = (p, v, worst_joint.max(e));
            }
            let c = coordinate(s.kind, &s.joint.frames, &s.axis, &world(), &pose);
            match drive.mode() {
                DriveMode::Position { target, .. } => {
                    let err = if revolute {
                        wrap_angle(c.value - target)
                    } else {
                        c.value - target
                    };
                    assert!(
                        err.abs() < 0.01,
                        "revolute {revolute}: position error {err}"
                    );
                }
                DriveMode::Velocity { target_velocity } => {
                    let err = c.jacobian.dot(&Vector6::zeros(), &u) - target_velocity;
                    assert!(
                        err.abs() < 0.01,
                        "revolute {revolute}: velocity error {err}"
                    );
                }
                DriveMode::Force | DriveMode::Armature => unreachable!("the cases are servos"),
            }
            assert!(worst_joint < 1e-9, "joint error {worst_joint}");
        }
    }
}

fn ball(radius: f64) -> (OneBody, ContactPoint) {
    let body = OneBody {
        mass: MassProperties::solid_sphere(1.0, radius).unwrap(),
        gravity: Vector3::new(0.0, 0.0, -9.81),
    };
    // Body a is the ground plane z = 0, body b the ball (its centre, thickness r); the
    // normal points from b to a, i.e. down.
    let contact = ContactPoint::new(
        -Vector3::z(),
        Vector3::zeros(),
        Vector3::zeros(),
        0.0,
        radius,
    )
    .unwrap();
    (body, contact)
}

/// Position level: a ball that would sink 2 cm into the ground in one step ends the
/// step exactly on the surface (gap ≈ ε²/(2 r_n λ) ≈ 0) with a repulsive force; a ball
/// moving away gets no force and flies freely.
#[test]
fn position_level_contact_stops_a_ball_at_the_surface() {
    let (body, contact) = ball(0.5);
    let h = 0.01;
    let eps_sq = axion_constraints::contact::DEFAULT_FB_EPS_SQ;
    let w_n = contact
        .normal_jacobian(&world(), &Pose::identity())
        .effective_inverse_mass(
            &MassProperties::infinite(),
            &world().rotation,
            &body.mass,
            &Pose::identity().rotation,
        );
    assert!(
        (w_n - 1.0).abs() < 1e-12,
        "a point at the centre of a 1 kg ball: w_n = 1/m"
    );
    for (gap0, vz) in [(0.01, -3.0), (0.0, 0.0), (-0.003, 0.0), (0.01, 2.0)] {
        let pose = Pose::translation(0.3, -0.2, 0.5 + gap0);
        let u = twist(Vector3::new(0.1, 0.0, vz), Vector3::zeros());
        let rows = |q: &Pose, _u: &Twist, l: &[f64]| {
            let r = normal_row(
                contact.gap(&world(), q),
                &contact.normal_jacobian(&world(), q),
                l[0],
                w_n,
                h,
                eps_sq,
            );
            vec![(r.row, r.force_jacobian.body_b)]
        };
        let res = body.step(&pose, &u, h, 1, rows);
        assert!(
            res.residual < 1e-11,
            "Newton did not converge: {}",
            res.residual
        );
        let gap = contact.gap(&world(), &res.pose);
        let free_gap = gap0 + h * (vz - 9.81 * h);
        if free_gap < 0.0 {
            assert!(
                gap.abs() < 1e-9,
                "gap after the step {gap} (would have been {free_gap})"
            );
            assert!(res.lambda[0] > 0.0);
            // The impulse is exactly what removes the approach: m Δv_z = h(λ − m g).
            let dv = res.velocity[2] - vz;
            assert!((dv - h * (res.lambda[0] - 9.81)).abs() < 1e-9);
        } else {
            assert!(
                (gap - free_gap).abs() < 1e-9 && res.lambda[0].abs() < 1e-6,
                "free flight: gap {gap} vs {free_gap}, λ {}",
                res.lambda[0]
            );
        }
    }
}

/// Velocity level with restitution e: a ball hitting the ground at 2 m/s leaves at 2e.
#[test]
fn velocity_level_contact_bounces_with_the_restitution() {
    let (body, contact) = ball(0.5);
    let h = 0.01;
    for e in [0.0, 0.5, 1.0] {
        let material = VelocityContact::new(e, 0.2).unwrap();
        let pose = Pose::translation(0.0, 0.0, 0.5);
        let u = twist(Vector3::new(0.0, 0.0, -2.0), Vector3::zeros());
        let j = contact.normal_jacobian(&world(), &pose);
        let bias = material.bias(
            contact.gap(&world(), &pose),
            j.dot(&Vector6::zeros(), &u),
            h,
        );
        let w_n = j.effective_inverse_mass(
            &MassProperties::infinite(),
            &world().rotation,
            &body.mass,
            &pose.rotation,
        );
        let rows = |_q: &Pose, uu: &Twist, l: &[f64]| {
            let r = normal_row_velocity(&j, &Vector6::zeros(), uu, bias, l[0], w_n, h, 1e-12);
            vec![(r.row, r.force_jacobian.body_b)]
        };
        let res = body.step(&pose, &u, h, 1, rows);
        assert!(res.residual < 1e-11);
        assert!(
            (res.velocity[2] - 2.0 * e).abs() < 1e-6,
            "e = {e}: leaves at {}",
            res.velocity[2]
        );
    }
}
