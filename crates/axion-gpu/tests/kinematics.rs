//! The WGSL kinematics (`shaders/quat.wgsl` through `kinematics_probe.wgsl`) against
//! `axion-math` on random inputs.
//!
//! Tolerances (ε = 2⁻²³ ≈ 1.19e-7, the f32 machine epsilon):
//! * position $x + hv$: inputs are rounded to f32 (½ε each) and one multiply-add
//!   rounds once more: $|\Delta x| \le 4ε(|x| + h|v|)$ + the f32 rounding of h.
//! * quaternions (unit, components ≤ 1): the rounded inputs, the exponential map's
//!   sine and cosine, one Hamilton product (4 terms) and the normalisation add up to a
//!   few ε; we allow 2e-6 (≈ 17ε). Vulkan's precision rules let `sin`/`cos` err by up
//!   to 2⁻¹¹ on some hardware; lavapipe and current desktop GPUs are far better.
//! * rotated vectors: a quaternion rotation is two cross products: $4ε|r|$ +
//!   the rounding of θ, we allow $16ε(1 + |r|)$.

mod common;

use axion_gpu::kinematics::{ProbeInput, run_probe};
use axion_math::{Pose, integrate, pose_coords, quaternion_rate, twist};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use proptest::prelude::*;

const EPS: f64 = f32::EPSILON as f64;

fn vector(range: f64) -> impl Strategy<Value = Vector3<f64>> {
    prop::array::uniform3(-range..range).prop_map(Vector3::from)
}

fn input() -> impl Strategy<Value = ProbeInput> {
    (
        vector(10.0),
        prop::array::uniform4(-1.0f64..1.0),
        vector(5.0),
        vector(20.0),
        0.001f64..0.1,
        vector(3.0),
    )
        .prop_filter_map("non-degenerate quaternion", |(x, q, v, w, h, r)| {
            let quat = nalgebra::Quaternion::new(q[3], q[0], q[1], q[2]);
            (quat.norm() > 0.1).then(|| ProbeInput {
                pose: Isometry3::from_parts(
                    Translation3::from(x),
                    UnitQuaternion::new_normalize(quat),
                ),
                twist: twist(v, w),
                h,
                vector: r,
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn kinematics_match_axion_math(inputs in prop::collection::vec(input(), 64..256)) {
        let Some(ctx) = common::context() else { return Ok(()) };
        let outputs = run_probe(&ctx, &inputs).unwrap();
        prop_assert_eq!(outputs.len(), inputs.len());
        for (i, o) in inputs.iter().zip(&outputs) {
            let expected: Pose = integrate(&i.pose, &i.twist, i.h);
            let c = pose_coords(&expected);
            let x0 = i.pose.translation.vector;
            let v = axion_math::linear(&i.twist);
            for k in 0..3 {
                let tol = 4.0 * EPS * (x0[k].abs() + i.h * v[k].abs() + 1e-3);
                prop_assert!((f64::from(o.integrated[k]) - c[k]).abs() <= tol,
                    "x[{}]: {} vs {}", k, o.integrated[k], c[k]);
            }
            for k in 3..7 {
                prop_assert!((f64::from(o.integrated[k]) - c[k]).abs() <= 2e-6,
                    "θ[{}]: {} vs {}", k, o.integrated[k], c[k]);
            }
            let rate = quaternion_rate(&i.pose.rotation, &axion_math::angular(&i.twist));
            let w = axion_math::angular(&i.twist);
            for (k, e) in [rate.i, rate.j, rate.k, rate.w].iter().enumerate() {
                let tol = 8.0 * EPS * (1.0 + w.norm());
                prop_assert!((f64::from(o.rate[k]) - e).abs() <= tol,
                    "rate[{}]: {} vs {}", k, o.rate[k], e);
            }
            let r = i.pose.rotation * i.vector;
            for k in 0..3 {
                let tol = 16.0 * EPS * (1.0 + i.vector.norm());
                prop_assert!((f64::from(o.rotated[k]) - r[k]).abs() <= tol,
                    "R r[{}]: {} vs {}", k, o.rotated[k], r[k]);
            }
        }
    }
}

/// Integration keeps the quaternion at unit norm to f32 rounding, even for large
/// rotations per step.
#[test]
fn integrated_quaternions_are_unit() {
    let Some(ctx) = common::context() else { return };
    let inputs: Vec<ProbeInput> = (0..500)
        .map(|k| {
            let t = k as f64 * 0.37;
            ProbeInput {
                pose: Isometry3::new(Vector3::zeros(), Vector3::new(t.sin(), t.cos(), 0.3 * t)),
                twist: twist(Vector3::zeros(), Vector3::new(30.0 * t.cos(), -7.0, 12.0)),
                h: 0.1,
                vector: Vector3::x(),
            }
        })
        .collect();
    for o in run_probe(&ctx, &inputs).unwrap() {
        let n: f64 = o.integrated[3..]
            .iter()
            .map(|&x| f64::from(x).powi(2))
            .sum::<f64>();
        assert!((n.sqrt() - 1.0).abs() <= 4.0 * EPS, "|θ| = {}", n.sqrt());
    }
}
