//! The joint rows and drive coordinates of `shaders/step.wgsl` against
//! `axion-constraints` at random frames, axes and poses (the joints need not hold).
//!
//! Tolerance: every value is a short chain of f32 rotations, cross and dot products
//! of quantities of size ≤ L = 1 + the largest coordinate (m) in the scene; each step
//! rounds by ε = 2⁻²³ relative, and the f64 inputs were rounded to f32 first. We allow
//! 64 ε L (≈ 8e-6 m at L = 1) for errors and Jacobian entries. Relative rotations
//! whose scalar part is within 1e-3 of zero are excluded: there the angle lock's
//! short-way sign may flip between f32 and f64. Hinge angles are compared modulo 2π.
//! The hinge coordinate's Jacobian divides by $w^2 + s^2$ (relative rotation
//! $(w, \mathbf v)$, $s = \mathbf v\cdot a$), which amplifies rounding where the joint
//! is turned far off its axis: that row's tolerance is divided by $w^2 + s^2$ too (a
//! case at $w^2 + s^2 \approx 0.01$ differed by 3.4e-5 relative).

mod common;

use common::rotation;

use axion_constraints::PositionRow;
use axion_constraints::drive::{CoordinateKind, coordinate};
use axion_gpu::GpuSettings;
use axion_math::{Pose, wrap_angle};
use axion_model::{BodyId, DriveDesc, JointDesc, JointType, Model, ModelBuilder, State};
use nalgebra::{Isometry3, Vector3};
use proptest::prelude::*;

const EPS: f64 = f32::EPSILON as f64;
const WORLDS: usize = 16;

fn pose(range: f64) -> impl Strategy<Value = Pose> {
    (prop::array::uniform3(-range..range), rotation())
        .prop_map(|(x, r)| Isometry3::from_parts(Vector3::from(x).into(), r))
}

/// A model: a dynamic parent, and a child joined to it by a joint of `kind` (0
/// revolute, 1 prismatic, 2 ball, 3 fixed) with random frames, axis and compliance;
/// revolute and prismatic joints carry a position drive.
fn model(kind: usize, frames: (Pose, Pose), axis: Vector3<f64>) -> Model {
    let mut b = ModelBuilder::new();
    let (parent, child) = common::parent_and_child(&mut b);
    let ty = match kind {
        0 => JointType::Revolute { axis },
        1 => JointType::Prismatic { axis },
        2 => JointType::Ball,
        _ => JointType::Fixed,
    };
    let mut joint = JointDesc::new("joint", ty, Some(parent), child).frames(frames.0, frames.1);
    if kind < 2 {
        joint = joint.drive(DriveDesc::Position {
            target: 0.3,
            target_velocity: 0.0,
            ke: 100.0,
            kd: 10.0,
        });
    }
    b.add_joint(joint).unwrap();
    b.build().unwrap()
}

fn close(gpu: f32, cpu: f64, scale: f64) -> bool {
    (f64::from(gpu) - cpu).abs() <= 64.0 * EPS * scale
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn rows_match_axion_constraints(
        kind in 0usize..4,
        frames in (pose(1.0), pose(1.0)),
        axis in prop::array::uniform3(-1.0f64..1.0)
            .prop_filter("non-zero axis", |a| Vector3::from(*a).norm() > 0.1),
        poses in prop::collection::vec((pose(3.0), pose(3.0)), WORLDS),
    ) {
        if common::skipped() {
            return Ok(());
        }
        let model = model(kind, frames, Vector3::from(axis));
        let mj = &model.joints()[0];
        let mut state = State::new(&model, WORLDS).unwrap();
        let mut kept = Vec::new();
        for (w, (pp, pc)) in poses.iter().enumerate() {
            state.set_body_pose(&model, w, BodyId(0), *pp);
            state.set_body_pose(&model, w, BodyId(1), *pc);
            let rel = (pp * mj.joint.frames.parent).rotation.inverse()
                * (pc * mj.joint.frames.child).rotation;
            if rel.w.abs() > 1e-3 {
                kept.push(w);
            }
        }
        let mut gpu = common::backend(&model, WORLDS, GpuSettings::default()).unwrap();
        let probes = gpu.probe_rows(&model, &state).unwrap();
        for w in kept {
            // The poses the kernel saw: the state rounded to f32 and back.
            let (pp, pc) = (state.com_pose(w, BodyId(0)), state.com_pose(w, BodyId(1)));
            let scale = 1.0
                + [pp.translation.vector.amax(), pc.translation.vector.amax()]
                    .iter()
                    .fold(2.0f64, |a, b| a.max(*b));
            let mut rows: Vec<PositionRow> = Vec::new();
            mj.joint.position_rows(&pp, &pc, &mut rows);
            let mut expected: Vec<(f64, [f64; 12], f64)> = rows
                .iter()
                .map(|r| {
                    let mut j = [0.0; 12];
                    j[..6].copy_from_slice(r.jacobian.body_a.as_slice());
                    j[6..].copy_from_slice(r.jacobian.body_b.as_slice());
                    (r.error, j, scale)
                })
                .collect();
            for d in model.drives() {
                let mut c = coordinate(d.coordinate, &mj.joint.frames, &d.axis, &pp, &pc);
                if d.coordinate == CoordinateKind::Angle {
                    // 2 atan2(s, w) jumps by 4π where s changes sign with w < 0: compare
                    // the GPU's angle on the branch nearest to it.
                    let gpu_value = f64::from(probes[w][rows.len()].value);
                    c.value = gpu_value + wrap_angle(c.value - gpu_value);
                }
                let mut j = [0.0; 12];
                j[..6].copy_from_slice(c.jacobian.body_a.as_slice());
                j[6..].copy_from_slice(c.jacobian.body_b.as_slice());
                let conditioning = match d.coordinate {
                    CoordinateKind::Angle => {
                        let rel = (pp * mj.joint.frames.parent).rotation.inverse()
                            * (pc * mj.joint.frames.child).rotation;
                        let s = rel.imag().dot(&d.axis.vector());
                        1.0 / (rel.w * rel.w + s * s)
                    }
                    CoordinateKind::Displacement => 1.0,
                };
                expected.push((c.value, j, scale * conditioning));
            }
            prop_assert_eq!(probes[w].len(), expected.len());
            for (i, (got, (value, jac, scale))) in probes[w].iter().zip(&expected).enumerate() {
                let scale = *scale;
                prop_assert!(close(got.value, *value, scale),
                    "kind {} world {} row {}: value {} vs {}", kind, w, i, got.value, value);
                for (k, (g, e)) in got.jacobian.iter().zip(jac).enumerate() {
                    prop_assert!(close(*g, *e, scale),
                        "kind {} world {} row {} J[{}]: {} vs {}", kind, w, i, k, g, e);
                }
            }
        }
    }
}
