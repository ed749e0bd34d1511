//! Property tests of the rigid-body math: kinematic map, integration, inertia, bases,
//! NCP functions, and the errors bad inputs get.

use axion_math::*;
use nalgebra::{Matrix3, SVector, UnitQuaternion, Vector3, Vector6};
use proptest::prelude::*;

fn vec3(range: f64) -> impl Strategy<Value = Vector3<f64>> {
    prop::array::uniform3(-range..range).prop_map(Vector3::from)
}

fn rotation() -> impl Strategy<Value = UnitQuaternion<f64>> {
    prop::array::uniform4(-1.0f64..1.0)
        .prop_filter("non-degenerate quaternion", |q| {
            q.iter().map(|x| x * x).sum::<f64>() > 1e-3
        })
        .prop_map(|q| {
            UnitQuaternion::new_normalize(nalgebra::Quaternion::new(q[0], q[1], q[2], q[3]))
        })
}

fn pose() -> impl Strategy<Value = Pose> {
    (vec3(5.0), rotation()).prop_map(|(t, r)| Pose::from_parts(t.into(), r))
}

fn twist6(range: f64) -> impl Strategy<Value = Vector6<f64>> {
    (vec3(range), vec3(range)).prop_map(|(v, w)| twist(v, w))
}

/// Pose coordinates with the quaternion sign fixed to match `reference` (q and −q are
/// the same rotation; finite differences need a continuous chart).
fn coords_near(pose: &Pose, reference: &Pose) -> SVector<f64, 7> {
    let mut c = pose_coords(pose);
    if pose.rotation.coords.dot(&reference.rotation.coords) < 0.0 {
        for k in 3..7 {
            c[k] = -c[k];
        }
    }
    c
}

proptest! {
    /// G(q) is the derivative of pose integration: (q ⊕ εu − q ⊕ −εu)/2ε = G(q) u.
    /// Step 1e-5: truncation ~1e-10, rounding ~1e-11; tolerance 1e-8.
    #[test]
    fn kinematic_map_is_the_derivative_of_integration(q in pose(), u in twist6(3.0)) {
        let eps = 1e-5;
        let plus = coords_near(&integrate(&q, &u, eps), &q);
        let minus = coords_near(&integrate(&q, &u, -eps), &q);
        let fd = (plus - minus) / (2.0 * eps);
        let g = kinematic_map(&q) * u;
        prop_assert!((fd - g).norm() <= 1e-8 * (1.0 + u.norm()), "fd {fd} vs G u {g}");
    }

    /// Gᵀ applied matrix-free equals the transpose of G, and the quaternion rate equals Q ω.
    #[test]
    fn transpose_and_rate_agree_with_the_matrix(q in pose(), gvec in prop::array::uniform7(-3.0f64..3.0), w in vec3(3.0)) {
        let g7 = SVector::<f64, 7>::from(gvec);
        let dense = kinematic_map(&q).transpose() * g7;
        prop_assert!((kinematic_map_transpose(&q, &g7) - dense).norm() < 1e-14);
        let rate = quaternion_rate(&q.rotation, &w).coords;
        prop_assert!((rate - quaternion_rate_matrix(&q.rotation) * w).norm() < 1e-14);
        // A unit quaternion's rate is tangent to the unit sphere.
        prop_assert!(rate.dot(&q.rotation.coords).abs() < 1e-14);
    }

    /// Integrating a constant ω for N steps gives Exp(Tω)·θ₀ (the exponential map is
    /// exact for constant world-frame ω). Tolerance: N · 1e-15 of rounding, N ≤ 1000.
    #[test]
    fn constant_rate_integration_is_exact(q in pose(), w in vec3(10.0), steps in 1usize..1000, h in 1e-3f64..0.1) {
        let u = twist(Vector3::new(1.0, -2.0, 0.5), w);
        let mut p = q;
        for _ in 0..steps {
            p = integrate(&p, &u, h);
        }
        let t = h * steps as f64;
        let exact = exp_map(&(w * t)) * q.rotation;
        prop_assert!(p.rotation.angle_to(&exact) <= 2e-15 * steps as f64 + 1e-14,
            "angle error {}", p.rotation.angle_to(&exact));
        let dx = p.translation.vector - q.translation.vector - Vector3::new(1.0, -2.0, 0.5) * t;
        prop_assert!(dx.norm() <= 1e-15 * steps as f64 * (1.0 + q.translation.vector.norm()) * 10.0);
    }

    /// The left Jacobian is the derivative of Exp as a world rotation:
    /// Exp(φ + εδ)·Exp(φ)⁻¹ ≈ Exp(ε J_l(φ) δ). Checked by central differences (step 1e-6,
    /// tolerance 1e-8), including |φ| below the series threshold.
    #[test]
    fn left_jacobian_is_the_derivative_of_exp(phi in vec3(3.0), small in any::<bool>(), d in vec3(1.0)) {
        let phi = if small { phi * 1e-5 } else { phi };
        let eps = 1e-6;
        let base = exp_map(&phi);
        let rot = |s: f64| rotation_between(&base, &exp_map(&(phi + d * s)));
        let fd = (rot(eps) - rot(-eps)) / (2.0 * eps);
        prop_assert!((fd - left_jacobian(&phi) * d).norm() <= 1e-8 * (1.0 + d.norm()), "fd {fd} vs {}", left_jacobian(&phi) * d);
    }

    /// World inertia is R I Rᵀ, its inverse is the inverse, and M̃⁻¹ undoes M̃.
    #[test]
    fn world_inertia_and_inverse(r in rotation(), m in 0.1f64..100.0, size in prop::array::uniform3(0.05f64..3.0), u in twist6(5.0)) {
        let mp = MassProperties::solid_box(m, Vector3::from(size)).unwrap();
        let iw = mp.world_inertia(&r);
        prop_assert!((iw * mp.world_inv_inertia(&r) - Matrix3::identity()).norm() < 1e-9);
        prop_assert!((iw - iw.transpose()).norm() < 1e-12 * iw.norm());
        let back = mp.inverse_apply(&r, &mp.momentum(&r, &u));
        prop_assert!((back - u).norm() <= 1e-9 * (1.0 + u.norm()));
        // Kinetic energy does not depend on the orientation for a world-frame twist
        // rotated with the body.
        let u_body = twist(r.inverse() * linear(&u), r.inverse() * angular(&u));
        let e_world = mp.kinetic_energy(&r, &u);
        let e_body = mp.kinetic_energy(&UnitQuaternion::identity(), &u_body);
        prop_assert!((e_world - e_body).abs() <= 1e-9 * (1.0 + e_world));
    }

    /// orthobasis(n) completes n to a right-handed orthonormal frame.
    #[test]
    fn orthobasis_is_orthonormal_and_right_handed(v in vec3(1.0)) {
        prop_assume!(v.norm() > 1e-3);
        let n = v.normalize();
        let (b1, b2) = orthobasis(&n);
        prop_assert!((b1.norm() - 1.0).abs() < 1e-14 && (b2.norm() - 1.0).abs() < 1e-14);
        prop_assert!(b1.dot(&n).abs() < 1e-14 && b2.dot(&n).abs() < 1e-14 && b1.dot(&b2).abs() < 1e-14);
        prop_assert!((b1.cross(&b2) - n).norm() < 1e-14);
        // A validated axis keeps the same basis for its normalized direction.
        let axis = UnitAxis::normalize(v).expect("non-zero");
        prop_assert_eq!(axis.basis(), orthobasis(&axis.vector()));
    }

    /// wrap_angle returns the representative in [−π, π).
    #[test]
    fn wrap_angle_range(x in -100.0f64..100.0) {
        let w = wrap_angle(x);
        prop_assert!((-std::f64::consts::PI..std::f64::consts::PI).contains(&w));
        let k = (x - w) / std::f64::consts::TAU;
        prop_assert!((k - k.round()).abs() < 1e-9);
    }

    /// Fischer–Burmeister roots are exactly the complementary pairs 0 ≤ a ⊥ b ≥ 0.
    #[test]
    fn fb_roots_are_complementary_pairs(a in -10.0f64..10.0, b in -10.0f64..10.0, which in 0u8..3) {
        // Construct complementary pairs exactly, and generic pairs.
        let (a, b) = match which {
            0 => (a.abs(), 0.0),
            1 => (0.0, b.abs()),
            _ => (a, b),
        };
        let complementary = a >= 0.0 && b >= 0.0 && a * b == 0.0;
        let phi = fischer_burmeister(a, b);
        if complementary {
            prop_assert_eq!(phi, 0.0);
        } else {
            prop_assert!(phi != 0.0, "phi({a}, {b}) = 0 for a non-complementary pair");
            // Sign: positive when both are positive, negative when either is negative.
            prop_assert_eq!(phi > 0.0, a > 0.0 && b > 0.0);
        }
    }

    /// The scaled smoothed FB's derivatives match central differences (away from the
    /// corner, where N = √(a²+r²b²+ε²) ≥ 1e-3; tolerance 1e-7 relative).
    #[test]
    fn fb_derivatives_match_finite_differences(a in -5.0f64..5.0, b in -5.0f64..5.0, r in 0.01f64..10.0, eps_sq in 0.0f64..1e-2) {
        let f = fischer_burmeister_scaled(a, b, r, eps_sq);
        let n = (a * a + r * r * b * b + eps_sq).sqrt();
        prop_assume!(n > 1e-3);
        let d = 1e-6;
        let fa = (fischer_burmeister_scaled(a + d, b, r, eps_sq).value - fischer_burmeister_scaled(a - d, b, r, eps_sq).value) / (2.0 * d);
        let fb = (fischer_burmeister_scaled(a, b + d, r, eps_sq).value - fischer_burmeister_scaled(a, b - d, r, eps_sq).value) / (2.0 * d);
        prop_assert!((fa - f.d_a).abs() <= 1e-7 * (1.0 + f.d_a.abs()) / n.min(1.0), "d_a {} vs fd {}", f.d_a, fa);
        prop_assert!((fb - f.d_b).abs() <= 1e-7 * (1.0 + r) / n.min(1.0), "d_b {} vs fd {}", f.d_b, fb);
        // The value agrees with the defining formula (the cancellation-free branch is
        // only a rewriting).
        let direct = a + r * b - n;
        prop_assert!((f.value - direct).abs() <= 1e-12 * (a.abs() + r * b.abs() + n));
    }

    /// The smoothed form tends to the plain one: 0 ≤ φ₀ − φ_ε ≤ ε, so φ_ε → φ₀ as ε → 0.
    #[test]
    fn smoothed_fb_tends_to_plain(a in -5.0f64..5.0, b in -5.0f64..5.0, r in 0.01f64..10.0, log_eps in -12.0f64..0.0) {
        let eps = 10f64.powf(log_eps);
        let plain = fischer_burmeister_scaled(a, b, r, 0.0).value;
        let smooth = fischer_burmeister_scaled(a, b, r, eps * eps).value;
        let gap = plain - smooth;
        prop_assert!(gap >= -1e-15 * (1.0 + a.abs() + r * b.abs()));
        prop_assert!(gap <= eps * (1.0 + 1e-12) + 1e-15 * (1.0 + a.abs() + r * b.abs()));
        // Plain scaled FB with r = 1 is the plain function.
        prop_assert_eq!(fischer_burmeister_scaled(a, b, 1.0, 0.0).value, fischer_burmeister(a, b));
    }
}

/// 10⁶ random steps keep |θ| = 1 to 1e-12.
#[test]
fn integration_keeps_unit_quaternions_over_a_million_steps() {
    // A fixed-seed xorshift so the test is reproducible and needs no dependency.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut pose = Pose::identity();
    let mut worst: f64 = 0.0;
    for _ in 0..1_000_000 {
        let u = twist(
            Vector3::new(next(), next(), next()),
            Vector3::new(next(), next(), next()) * 20.0,
        );
        pose = integrate(&pose, &u, 0.01 * (1.0 + next()));
        worst = worst.max((pose.rotation.quaternion().norm() - 1.0).abs());
    }
    assert!(worst <= 1e-12, "largest |θ| deviation {worst:e}");
}

#[test]
fn bad_inputs_get_typed_errors() {
    use MathError::*;
    assert!(matches!(
        UnitAxis::new(Vector3::zeros()),
        Err(ZeroLength { .. })
    ));
    assert!(matches!(
        UnitAxis::new(Vector3::new(f64::NAN, 0.0, 1.0)),
        Err(NonFinite { .. })
    ));
    assert!(matches!(
        UnitAxis::new(Vector3::new(0.7, 0.7, 0.0)),
        Err(NotUnit { .. })
    ));
    assert!(UnitAxis::normalize(Vector3::new(0.7, 0.7, 0.0)).is_ok());
    assert!(matches!(
        MassProperties::new(0.0, Matrix3::identity()),
        Err(NonPositiveMass { .. })
    ));
    assert!(matches!(
        MassProperties::new(-1.0, Matrix3::identity()),
        Err(NonPositiveMass { .. })
    ));
    assert!(matches!(
        MassProperties::new(f64::NAN, Matrix3::identity()),
        Err(NonFinite { .. })
    ));
    assert!(matches!(
        MassProperties::new(1.0, Matrix3::from_diagonal_element(f64::INFINITY)),
        Err(NonFinite { .. })
    ));
    assert!(matches!(
        MassProperties::new(1.0, Matrix3::from_diagonal(&Vector3::new(1.0, -1.0, 1.0))),
        Err(NonPositiveInertia { .. })
    ));
    assert!(matches!(
        MassProperties::new(
            1.0,
            Matrix3::new(1.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
        ),
        Err(InertiaNotSymmetric { .. })
    ));
    assert!(matches!(
        MassProperties::new(1.0, Matrix3::from_diagonal(&Vector3::new(1.0, 1.0, 3.0))),
        Err(InertiaTriangleInequality { .. })
    ));
    assert!(matches!(
        pose_from_coords(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0]),
        Err(NotUnit { .. })
    ));
    assert!(matches!(
        pose_from_coords(&[f64::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
        Err(NonFinite { .. })
    ));
    // Messages name the quantity.
    let msg = MassProperties::new(-2.0, Matrix3::identity())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("mass") && msg.contains("-2"), "{msg}");
}

#[test]
fn box_inertia_matches_the_textbook_formula() {
    let mp = MassProperties::solid_box(12.0, Vector3::new(1.0, 2.0, 3.0)).unwrap();
    let expect = Matrix3::from_diagonal(&Vector3::new(4.0 + 9.0, 1.0 + 9.0, 1.0 + 4.0));
    assert!((mp.inertia() - expect).norm() < 1e-12);
    assert!((mp.inv_mass() - 1.0 / 12.0).abs() < 1e-15);
    let static_body = MassProperties::infinite();
    assert_eq!(
        static_body.inverse_apply(&UnitQuaternion::identity(), &Vector6::repeat(1.0)),
        Vector6::zeros()
    );
}
