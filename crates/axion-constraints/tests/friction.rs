//! Friction: limits of the reference's fixed point, exactness of the projection
//! residual on Coulomb-consistent pairs, its generalized Jacobian, and the symmetric
//! slip-row variant against the semismooth step.

mod common;

use axion_constraints::friction::fixed_point::{self, FixedPointSettings};
use axion_constraints::friction::projection::{self, SlipState};
use axion_constraints::friction::symmetric::{self, SymmetricFriction};
use axion_constraints::friction::{FrictionCone, TangentFrame};
use common::*;
use nalgebra::{Vector2, Vector3};
use proptest::prelude::*;

fn vec2(range: f64) -> impl Strategy<Value = Vector2<f64>> {
    prop::array::uniform2(-range..range).prop_map(Vector2::from)
}

fn unit2() -> impl Strategy<Value = Vector2<f64>> {
    (0.0f64..std::f64::consts::TAU).prop_map(|a| Vector2::new(a.cos(), a.sin()))
}

fn cone() -> impl Strategy<Value = FrictionCone> {
    prop_oneof![
        (0.05f64..2.0).prop_map(|m| FrictionCone::isotropic(m).unwrap()),
        (0.05f64..2.0, 0.05f64..2.0).prop_map(|(a, b)| FrictionCone::elliptic(a, b).unwrap()),
    ]
}

/// The force of maximal dissipation on the boundary of the (elliptic) cone opposing
/// slip `v`: λ_i = −λ_n μ_i² v_i / √Σ μ_j² v_j².
fn max_dissipation(cone: &FrictionCone, v: &Vector2<f64>, lambda_n: f64) -> Vector2<f64> {
    let mu = cone.coefficients();
    let m2 = mu.component_mul(&mu);
    let weighted = m2.component_mul(v);
    -weighted * (lambda_n / (m2.component_mul(&v.component_mul(v)).sum()).sqrt())
}

proptest! {
    #![proptest_config(config())]

    /// Sliding limit: one fixed-point update from any force inside the cone gives
    /// λ_t = −v/w → −μλ_n v̂ as the three small ratios of the formula vanish:
    /// rL/d (cone slack against slip, L = μλ_n h, d = h|v|), ε_w h/(rL) (the
    /// denominator guard) and ε_d/d² (the slip floor). Here each is ≤ 1e-5 (which takes
    /// a fast slip, |v| ≥ 1e4 m/s, because ε_w is absolute), so the error is ≤ 1e-4.
    /// μλ_n ≥ 1 N keeps w ≈ |v|/(μλ_n) below the clamp w_max = 1e5.
    #[test]
    fn fixed_point_sliding_limit(
        mu in 0.1f64..1.5, lambda_n in 10.0f64..100.0, dir in unit2(), speed in 1e4f64..5e4,
        inside in 0.0f64..0.99, prev_dir in unit2(), h in 1e-3f64..0.05,
    ) {
        let cone = FrictionCone::isotropic(mu).unwrap();
        let l = mu * lambda_n * h;
        let v = dir * speed;
        // Effective inverse mass with r·L = 1e5 · ε_w h, so rL/d = 0.1 h / (h |v|) ≤ 1e-5.
        let r = 1e5 * FixedPointSettings::default().denominator_eps * h / l;
        let prev = prev_dir * (inside * mu * lambda_n);
        let w = fixed_point::weights(&cone, &v, &prev, lambda_n, &Vector2::new(r, r), h, &FixedPointSettings::default());
        prop_assert!(w.x == w.y && w.x > 0.0 && w.x < 1e5, "w = {w}");
        let lambda = -v / w.x;
        let coulomb = -dir * (mu * lambda_n);
        prop_assert!((lambda - coulomb).norm() <= 1e-4 * mu * lambda_n, "λ = {lambda}, Coulomb {coulomb}");
    }

    /// Sticking limit: with slack in the cone (P < L) and vanishing slip, w → 0:
    /// for v = 0 and slip floor d = δ, w ≤ δ/(L − P), so v_t = −wλ_t → 0.
    #[test]
    fn fixed_point_sticking_limit(
        mu in 0.1f64..1.5, lambda_n in 1.0f64..100.0, used in 0.0f64..0.9, prev_dir in unit2(),
        r in 1e-3f64..10.0, log_delta in -12.0f64..-4.0, h in 1e-3f64..0.05,
    ) {
        let cone = FrictionCone::isotropic(mu).unwrap();
        let delta = 10f64.powf(log_delta);
        let settings = FixedPointSettings { slip_eps_sq: delta * delta, ..Default::default() };
        let prev = prev_dir * (used * mu * lambda_n);
        let w = fixed_point::weights(&cone, &Vector2::zeros(), &prev, lambda_n, &Vector2::new(r, r), h, &settings);
        let slack = h * mu * lambda_n * (1.0 - used);
        prop_assert!(w.x >= 0.0 && w.x <= delta / slack * (1.0 + 1e-9), "w = {}, bound {}", w.x, delta / slack);
    }

    /// With μ₁ = μ₂ the elliptic formulas are the isotropic ones, bit for bit.
    #[test]
    fn anisotropic_reduces_to_isotropic(
        mu in 0.0f64..2.0, v in vec2(3.0), lam in vec2(20.0), lambda_n in -5.0f64..50.0,
        wt in prop::array::uniform2(0.01f64..5.0), h in 1e-3f64..0.1,
    ) {
        let iso = FrictionCone::isotropic(mu).unwrap();
        let ell = FrictionCone::elliptic(mu, mu).unwrap();
        let wt = Vector2::from(wt);
        let s = FixedPointSettings::default();
        prop_assert_eq!(
            fixed_point::weights(&iso, &v, &lam, lambda_n, &wt, h, &s),
            fixed_point::weights(&ell, &v, &lam, lambda_n, &wt, h, &s)
        );
        prop_assert_eq!(projection::evaluate(&iso, &lam, lambda_n, &v, &wt, h), projection::evaluate(&ell, &lam, lambda_n, &v, &wt, h));
        // And the isotropic projection is the textbook one: λ − Π_{|·|≤μλn}(λ − ρv), ρ = 2/(h(w₁+w₂)).
        let rho = 2.0 / (h * (wt.x + wt.y));
        let y = lam - v * rho;
        let radius = mu * lambda_n.max(0.0);
        let proj = if y.norm() <= radius { y } else { y * (radius / y.norm()) };
        let eval = projection::evaluate(&iso, &lam, lambda_n, &v, &wt, h);
        prop_assert!((eval.residual - (lam - proj)).norm() <= 1e-9 * (1.0 + lam.norm() + rho * v.norm()));
    }

    /// The projection residual is zero exactly on Coulomb-consistent pairs: sticking
    /// (v = 0, force inside the cone) or slipping (force of maximal dissipation on the
    /// boundary, against v) — for isotropic and elliptic cones.
    #[test]
    fn projection_residual_vanishes_on_coulomb_pairs(
        cone in cone(), lambda_n in 0.1f64..50.0, dir in unit2(), inside in 0.0f64..0.999,
        v in vec2(3.0), wt in prop::array::uniform2(0.01f64..5.0), h in 1e-3f64..0.1,
    ) {
        let wt = Vector2::from(wt);
        let sc = cone.scaling();
        let stick_force = sc.force_from_scaled(&(dir * (inside * sc.mu * lambda_n)));
        let stick = projection::evaluate(&cone, &stick_force, lambda_n, &Vector2::zeros(), &wt, h);
        prop_assert_eq!(stick.state, SlipState::Stick);
        prop_assert!(stick.residual.norm() <= 1e-12 * lambda_n, "stick residual {}", stick.residual);
        prop_assume!(v.norm() > 1e-3);
        let slip_force = max_dissipation(&cone, &v, lambda_n);
        let slip = projection::evaluate(&cone, &slip_force, lambda_n, &v, &wt, h);
        let slipping = matches!(slip.state, SlipState::Slip { .. });
        prop_assert!(slipping, "a Coulomb slip pair must be classified as slipping");
        prop_assert!(slip.residual.norm() <= 1e-12 * lambda_n * (1.0 + cone.coefficients().max()), "slip residual {}", slip.residual);
    }

    /// A contact whose force was on its cone's boundary (sliding) and whose Newton
    /// trial force left the trial's cone is put back on that cone's boundary, its
    /// direction kept (the elliptic boundary (λ₁/μ₁)² + (λ₂/μ₂)² = λ_n², the direction
    /// in the scaled variables); a contact that was inside its cone, a trial within its
    /// cone and a non-positive normal force are left as they are.
    #[test]
    fn a_sliding_force_is_put_back_onto_its_cone(
        cone in cone(), before_n in 0.1f64..50.0, before_dir in unit2(), inside in 0.0f64..0.99,
        trial_n in 0.1f64..50.0, trial_dir in unit2(), outside in 1.0001f64..100.0,
    ) {
        let sc = cone.scaling();
        let on_cone = |n: f64, dir: &Vector2<f64>, k: f64| sc.force_from_scaled(&(dir * (k * sc.mu * n)));
        let boundary = on_cone(before_n, &before_dir, 1.0);
        let trial = on_cone(trial_n, &trial_dir, outside);
        let back = projection::onto_cone_after_step(&cone, (before_n, &boundary), (trial_n, &trial));
        let back = back.expect("a sliding contact's trial outside its cone is corrected");
        let mu = cone.coefficients();
        let on = (back.x / mu.x).powi(2) + (back.y / mu.y).powi(2);
        prop_assert!((on.sqrt() - trial_n).abs() <= 1e-12 * trial_n, "not on the boundary: {} vs {trial_n}", on.sqrt());
        let (scaled, wanted) = (sc.force_to_scaled(&back), sc.force_to_scaled(&trial));
        prop_assert!(scaled.perp(&wanted).abs() <= 1e-12 * scaled.norm() * wanted.norm() && scaled.dot(&wanted) > 0.0);
        // Inside its cone before: a sticking contact's force may leave it.
        let sticking = on_cone(before_n, &before_dir, inside);
        prop_assert_eq!(projection::onto_cone_after_step(&cone, (before_n, &sticking), (trial_n, &trial)), None);
        // A trial within its cone, or without a positive normal force, is kept.
        let within = on_cone(trial_n, &trial_dir, inside);
        prop_assert_eq!(projection::onto_cone_after_step(&cone, (before_n, &boundary), (trial_n, &within)), None);
        prop_assert_eq!(projection::onto_cone_after_step(&cone, (before_n, &boundary), (-trial_n, &trial)), None);
        prop_assert_eq!(projection::onto_cone_after_step(&cone, (0.0, &Vector2::zeros()), (trial_n, &trial)), None);
    }

    /// With creep c an isotropic contact sticks with slip v = −c λ_t/ρ (its residual
    /// vanishes there and nowhere else along v), slips exactly as without creep on the
    /// cone's boundary once the slip is faster than the fastest creep, c μ λ_n / ρ
    /// (slower slips on the boundary are creep), and its Jacobian is the derivative of the residual away from the
    /// stick–slip boundary (central differences to 1e-6 relative).
    #[test]
    fn friction_creep_sticks_with_a_proportional_slip(
        mu in 0.05f64..2.0, lambda_n in 0.1f64..50.0, dir in unit2(), inside in 0.0f64..0.9,
        v in vec2(3.0), wt in prop::array::uniform2(0.01f64..5.0), h in 1e-3f64..0.1,
        creep in 1e-8f64..1e-2, dv in vec2(1.0), dl in vec2(1.0), dn in -1.0f64..1.0,
    ) {
        let cone = FrictionCone::isotropic(mu).unwrap();
        let wt = Vector2::from(wt);
        let rho = projection::evaluate(&cone, &Vector2::zeros(), lambda_n, &Vector2::zeros(), &wt, h).rho;
        let stick_force = dir * (inside * mu * lambda_n);
        let creep_slip = -stick_force * (creep / rho);
        let stick = projection::evaluate_with_creep(&cone, &stick_force, lambda_n, &creep_slip, &wt, h, creep);
        prop_assert_eq!(stick.state, SlipState::Stick);
        prop_assert!(stick.residual.norm() <= 1e-12 * (1.0 + lambda_n), "stick residual {}", stick.residual);
        let off = projection::evaluate_with_creep(&cone, &stick_force, lambda_n, &(creep_slip * 2.0 + dir * 1e-9), &wt, h, creep);
        prop_assert!(off.residual.norm() > 0.0);
        prop_assume!(v.norm() > 1e-2 && rho * v.norm() > 1.01 * creep * mu * lambda_n);
        let slip_force = max_dissipation(&cone, &v, lambda_n);
        let slip = projection::evaluate_with_creep(&cone, &slip_force, lambda_n, &v, &wt, h, creep);
        prop_assert!(slip.residual.norm() <= 1e-12 * lambda_n * (1.0 + mu), "slip residual {}", slip.residual);
        let d = 1e-7 * (1.0 + lambda_n);
        for (lam, vel) in [(stick_force, creep_slip), (slip_force, v)] {
            let eval = projection::evaluate_with_creep(&cone, &lam, lambda_n, &vel, &wt, h, creep);
            let at = |s: f64| projection::evaluate_with_creep(&cone, &(lam + dl * s), lambda_n + dn * s, &(vel + dv * s), &wt, h, creep).residual;
            let fd = (at(d) - at(-d)) / (2.0 * d);
            let analytic = eval.d_velocity * dv + eval.d_lambda_t * dl + eval.d_lambda_n * dn;
            let scale = 1.0 + eval.d_velocity.norm() * dv.norm() + dl.norm() + dn.abs() * mu;
            prop_assert!((fd - analytic).norm() <= 1e-6 * scale, "{:?}: fd {fd} vs analytic {analytic}", eval.state);
        }
    }

    /// ρ̂ follows the iterate on elliptic cones (`trial_inverse_mass`), yet at a
    /// Coulomb-consistent pair the Jacobian at fixed ρ̂ is the derivative of the full
    /// residual: central differences of `evaluate` in v_t, λ_t and λ_n agree to 1e-6
    /// relative, sticking (v = 0, inside the cone) and slipping (maximal dissipation).
    #[test]
    fn projection_jacobian_is_exact_at_coulomb_pairs(
        cone in cone(), lambda_n in 0.1f64..50.0, dir in unit2(), inside in 0.0f64..0.99,
        v in vec2(3.0), wt in prop::array::uniform2(0.01f64..5.0), h in 1e-3f64..0.1,
        dv in vec2(1.0), dl in vec2(1.0), dn in -1.0f64..1.0,
    ) {
        let wt = Vector2::from(wt);
        let sc = cone.scaling();
        prop_assume!(v.norm() > 1e-2);
        let d = 1e-7 * (1.0 + lambda_n);
        // On an elliptic cone ρ̂ follows the direction of λ̂; where the sticking force is
        // not large against the difference step, the two points of the central
        // difference see different directions and the difference measures a mean of
        // two ρ̂, not the derivative (a failure at |λ̂| ≈ 6e-7 N against a 1.5e-7 N step).
        prop_assume!(inside * sc.mu * lambda_n >= 1e-3 * (1.0 + lambda_n));
        let stick_force = sc.force_from_scaled(&(dir * (inside * sc.mu * lambda_n)));
        let slip_force = max_dissipation(&cone, &v, lambda_n);
        for (lam, vel) in [(stick_force, Vector2::zeros()), (slip_force, v)] {
            let eval = projection::evaluate(&cone, &lam, lambda_n, &vel, &wt, h);
            let at = |s: f64| projection::evaluate(&cone, &(lam + dl * s), lambda_n + dn * s, &(vel + dv * s), &wt, h).residual;
            let fd = (at(d) - at(-d)) / (2.0 * d);
            let analytic = eval.d_velocity * dv + eval.d_lambda_t * dl + eval.d_lambda_n * dn;
            let scale = 1.0 + eval.d_velocity.norm() * dv.norm() + dl.norm() + dn.abs() * sc.mu * sc.s.max();
            prop_assert!((fd - analytic).norm() <= 1e-6 * scale, "{:?}: fd {fd} vs analytic {analytic}", eval.state);
        }
    }

    /// A force outside the cone gives a residual of at least the violation, in the
    /// scaled norm, whatever the slip: |ĥ| ≥ |λ̂| − μ_g λ_n. A sticking force with slip
    /// is not a root either.
    #[test]
    fn projection_residual_sees_cone_violations(
        cone in cone(), lambda_n in 0.1f64..50.0, dir in unit2(), excess in 1.001f64..10.0,
        v in vec2(3.0), wt in prop::array::uniform2(0.01f64..5.0), h in 1e-3f64..0.1,
    ) {
        let wt = Vector2::from(wt);
        let sc = cone.scaling();
        let scaled = dir * (excess * sc.mu * lambda_n);
        let force = sc.force_from_scaled(&scaled);
        let eval = projection::evaluate(&cone, &force, lambda_n, &v, &wt, h);
        let violation = scaled.norm() - sc.mu * lambda_n;
        prop_assert!(sc.force_to_scaled(&eval.residual).norm() >= violation * (1.0 - 1e-9), "residual {} < violation {violation}", eval.residual);
        prop_assume!(v.norm() > 1e-3);
        let inside = sc.force_from_scaled(&(dir * (0.5 * sc.mu * lambda_n)));
        prop_assert!(projection::evaluate(&cone, &inside, lambda_n, &v, &wt, h).residual.norm() > 0.0);
    }

    /// The generalized Jacobian is the derivative of the residual (at the iterate's ρ̂)
    /// away from the cone boundary (where the projection is smooth): central differences
    /// in u (through v_t = J_t u), λ_t and λ_n. Tolerance 1e-6 relative.
    #[test]
    fn projection_jacobian_matches_finite_differences(
        cone in cone(), lam in vec2(30.0), lambda_n in 0.1f64..50.0,
        pa in pose(1.0), pb in pose(1.0), n in axis(), la in vec3(1.0), lb in vec3(1.0),
        ua in twist6(2.0), ub in twist6(2.0), du_a in twist6(1.0), du_b in twist6(1.0),
        dl in vec2(1.0), dn in -1.0f64..1.0, h in 1e-3f64..0.1,
    ) {
        let c = axion_constraints::contact::ContactPoint::new(n.vector(), la, lb, 0.0, 0.0).unwrap();
        let frame = TangentFrame::new(&n.vector(), None);
        let jt = [c.jacobian_along(&pa, &pb, &frame.t1), c.jacobian_along(&pa, &pb, &frame.t2)];
        let mp = axion_math::MassProperties::solid_box(2.0, Vector3::new(1.0, 0.4, 0.2)).unwrap();
        let wt = Vector2::new(
            jt[0].effective_inverse_mass(&mp, &pa.rotation, &mp, &pb.rotation),
            jt[1].effective_inverse_mass(&mp, &pa.rotation, &mp, &pb.rotation),
        );
        let v = Vector2::new(jt[0].dot(&ua, &ub), jt[1].dot(&ua, &ub));
        let eval = projection::evaluate(&cone, &lam, lambda_n, &v, &wt, h);
        let f = |ua: &axion_math::Twist, ub: &axion_math::Twist, lam: &Vector2<f64>, ln: f64| {
            let v = Vector2::new(jt[0].dot(ua, ub), jt[1].dot(ua, ub));
            projection::evaluate_with_rho(&cone, lam, ln, &v, eval.rho)
        };
        // Stay away from the boundary |ŷ| = R, where the projection has a kink.
        let sc = cone.scaling();
        let y = sc.force_to_scaled(&lam) - sc.velocity_to_scaled(&v) * eval.rho;
        let radius = sc.mu * lambda_n;
        prop_assume!((y.norm() - radius).abs() > 1e-3 * (1.0 + radius + y.norm()));
        let rows = projection::rows(&eval, &jt);
        let d = 1e-6;
        let scale = 1.0 + eval.residual.norm() + eval.rho * (du_a.norm() + du_b.norm()) * (jt[0].norm() + jt[1].norm()) + dl.norm() + dn.abs() * sc.mu;
        let fd = (f(&(ua + du_a * d), &(ub + du_b * d), &(lam + dl * d), lambda_n + dn * d).residual
            - f(&(ua - du_a * d), &(ub - du_b * d), &(lam - dl * d), lambda_n - dn * d).residual) / (2.0 * d);
        let analytic = Vector2::new(rows.jacobian[0].dot(&du_a, &du_b), rows.jacobian[1].dot(&du_a, &du_b))
            + rows.d_lambda_t * dl + rows.d_lambda_n * dn;
        prop_assert!((fd - analytic).norm() <= 1e-6 * scale, "fd {fd} vs analytic {analytic}");
    }

    /// The symmetric variant is the semismooth step with the ∂R/∂λ_n coupling dropped,
    /// for any creep c (zero included): any Δu with the slip row's Δλ̂_e and the
    /// prescribed force step along ŷ satisfies the linearised projection equations
    /// h_f + ∂h/∂u Δu + ∂h/∂λ_t Δλ_t = 0 exactly. A stick decision gives the
    /// projection's stick rows divided by ρ: residual v̂ + ε_t λ̂, compliance ε_t/h,
    /// with ε_t = c/ρ.
    #[test]
    fn symmetric_variant_solves_the_semismooth_equations(
        cone in cone(), lam in vec2(30.0), lambda_n in 0.1f64..50.0,
        pa in pose(1.0), pb in pose(1.0), n in axis(), la in vec3(1.0),
        ua in twist6(2.0), ub in twist6(2.0), du_a in twist6(1.0), du_b in twist6(1.0), h in 1e-3f64..0.1,
        creep in prop_oneof![Just(0.0), 1e-8f64..1e-2],
    ) {
        let c = axion_constraints::contact::ContactPoint::new(n.vector(), la, Vector3::zeros(), 0.0, 0.0).unwrap();
        let frame = TangentFrame::new(&n.vector(), None);
        let jt = [c.jacobian_along(&pa, &pb, &frame.t1), c.jacobian_along(&pa, &pb, &frame.t2)];
        let wt = Vector2::new(0.7, 1.3);
        let v = Vector2::new(jt[0].dot(&ua, &ub), jt[1].dot(&ua, &ub));
        let eval = projection::evaluate_with_creep(&cone, &lam, lambda_n, &v, &wt, h, creep);
        let rows = projection::rows(&eval, &jt);
        let linearised = |dlam: &Vector2<f64>| {
            eval.residual + Vector2::new(rows.jacobian[0].dot(&du_a, &du_b), rows.jacobian[1].dot(&du_a, &du_b)) + rows.d_lambda_t * dlam
        };
        match symmetric::linearize(&cone, &lam, lambda_n, &v, &wt, &jt, h, creep) {
            SymmetricFriction::Slip { fixed_step, across } => {
                let mut dlam = fixed_step;
                if let Some(row) = across {
                    // Row equation: J Δu + h C Δμ = −residual.
                    let dmu = -(row.row.residual + row.row.jacobian.dot(&du_a, &du_b)) / (h * row.row.compliance);
                    prop_assume!(row.row.compliance > 1e-9 * row.row.jacobian.norm());
                    dlam += row.force_direction * dmu;
                }
                let lin = linearised(&dlam);
                let scale = eval.residual.norm() + eval.rho * (jt[0].norm() + jt[1].norm()) * (du_a.norm() + du_b.norm()) + dlam.norm() + 1.0;
                prop_assert!(lin.norm() <= 1e-9 * scale, "linearised residual {lin}");
            }
            SymmetricFriction::Stick(rows) => {
                prop_assert_eq!(eval.state, SlipState::Stick);
                for (i, r) in rows.iter().enumerate() {
                    let eps = creep / eval.rho;
                    let scaled_v = cone.scaling().velocity_to_scaled(&v)[i];
                    prop_assert!((r.row.residual - (scaled_v + eps * r.multiplier)).abs() <= 1e-12 * (1.0 + r.row.residual.abs()));
                    prop_assert!((r.row.compliance * h - eps).abs() <= 1e-15 * (1.0 + eps));
                }
            }
        }
    }
}

/// Tangents are a right-handed frame around the normal, and an anisotropy axis is
/// followed unless it is (nearly) parallel to the normal.
#[test]
fn tangent_frames() {
    let n = Vector3::new(0.0, 0.0, 1.0);
    let plain = TangentFrame::new(&n, None);
    assert!((plain.t1.cross(&plain.t2) - n).norm() < 1e-15 && plain.aligned);
    let axis = Vector3::new(1.0, 1.0, 5.0);
    let f = TangentFrame::new(&n, Some(&axis));
    assert!(f.aligned);
    assert!((f.t1 - Vector3::new(1.0, 1.0, 0.0).normalize()).norm() < 1e-15);
    assert!((f.t1.cross(&f.t2) - n).norm() < 1e-15);
    let parallel = TangentFrame::new(&n, Some(&Vector3::new(0.0, 1e-6, 1.0)));
    assert!(!parallel.aligned);
}

/// A cone given a new coefficient keeps its shape: isotropic stays isotropic, an
/// elliptic one keeps its ratio, and a negative coefficient is refused.
#[test]
fn a_cone_with_a_new_coefficient_keeps_its_shape() {
    let iso = FrictionCone::isotropic(0.5)
        .unwrap()
        .with_coefficient(0.8)
        .unwrap();
    assert_eq!(iso.coefficients(), nalgebra::Vector2::new(0.8, 0.8));
    let ell = FrictionCone::elliptic(0.4, 0.1)
        .unwrap()
        .with_coefficient(0.8)
        .unwrap();
    assert!((ell.coefficients() - nalgebra::Vector2::new(0.8, 0.2)).norm() < 1e-15);
    let from_zero = FrictionCone::elliptic(0.0, 0.3)
        .unwrap()
        .with_coefficient(0.6)
        .unwrap();
    assert_eq!(from_zero.coefficients(), nalgebra::Vector2::new(0.6, 0.6));
    assert!(
        FrictionCone::isotropic(0.5)
            .unwrap()
            .with_coefficient(-0.1)
            .is_err()
    );
    assert!(
        FrictionCone::isotropic(0.5)
            .unwrap()
            .with_coefficient(f64::NAN)
            .is_err()
    );
}
