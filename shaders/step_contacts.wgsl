// Contacts and friction (axion-constraints' `contact` and `friction`): contact pairs
// and slots, detection and persistence, the Fischer–Burmeister normal rows and the
// friction rows. Part of the step module (see step.rs, `step_source`).

// Pair p: bodies a and b, shape kinds (SPHERE, BOX, CAPSULE, CYLINDER, HALF_SPACE), anisotropy (0 none, 1 on a, 2 on b), first slot, slots.
fn pair_u(p: u32, at: u32) -> u32 {
    return model_u[P.pair_base_u + p * PAIR_U + at];
}
fn pf(p: u32, at: u32) -> f32 {
    return model_f[P.pair_base_f + p * PAIR_F + at];
}
fn pf3(p: u32, at: u32) -> vec3<f32> {
    return vec3<f32>(pf(p, at), pf(p, at + 1u), pf(p, at + 2u));
}
// The world pose of side `side` (0: a, 1: b) of pair p: body pose ∘ shape pose.
fn pair_shape_pose(p: u32, side: u32, body: PoseF) -> PoseF {
    let o = 10u * side;
    return PoseF(
        body.x + quat_rotate(body.q, pf3(p, o)),
        quat_mul(body.q, vec4<f32>(pf3(p, o + 3u), pf(p, o + 6u))),
    );
}
// The pair of contact slot k (model_u lists them after the pairs).
fn slot_pair(k: u32) -> u32 {
    return model_u[P.pair_base_u + P.pairs * PAIR_U + k];
}
// Contact slot k's scratch, and its first row.
fn contact_slot(k: u32) -> u32 {
    return s_con + CONTACT_S * k;
}
fn contact_row(k: u32) -> u32 {
    return P.contact_row0 + 3u * k;
}
fn contact_slots() -> u32 {
    return (P.limits.w - P.contact_row0) / 3u;
}

// The tangent frame (t1, t2) with t1 × t2 = n and the cone scaling of a pair
// (friction::TangentFrame and FrictionCone::scaling of axion-constraints): along the
// anisotropy axis a (world) projected on the contact plane when |a − (a·n)n|² ≥ 1e-8,
// with μ = (μ1, μ2); otherwise orthobasis(n) and the isotropic μ1. Scaled variables
// λ̂ = λ/s, v̂ = s v with μ_g = √(μ1 μ2), s = μ/μ_g (μ floored at 1e-9 max μ).
struct Frame {
    t1: vec3<f32>,
    t2: vec3<f32>,
    mu: f32,
    s: vec2<f32>,
}

fn contact_frame(p: u32, n: vec3<f32>, qa: vec4<f32>, qb: vec4<f32>) -> Frame {
    var t1 = orthobasis_first(n);
    var mu = vec2<f32>(pf(p, 20u), pf(p, 20u));
    let side = pair_u(p, 4u);
    if side != 0u {
        let a = quat_rotate(select(qb, qa, side == 1u), pf3(p, 22u));
        let at = a - n * dot(a, n);
        if dot(at, at) >= 1e-8 {
            t1 = normalize(at);
            mu.y = pf(p, 21u);
        }
    }
    let top = max(mu.x, mu.y);
    var s = vec2<f32>(1.0);
    var mu_g = top;
    if mu.x != mu.y {
        let floored = max(mu, vec2<f32>(1e-9 * top));
        mu_g = sqrt(floored.x * floored.y);
        s = floored / mu_g;
    }
    return Frame(t1, cross(n, t1), mu_g, s);
}

// J M̃(θ⁻)⁻¹ Jᵀ of a contact row along e: body a with (e, ρ_a × e), body b with
// (−e, −ρ_b × e) (static bodies add nothing).
fn effective_inverse_mass(a: u32, qa: vec4<f32>, rho_a: vec3<f32>, b: u32, qb: vec4<f32>, rho_b: vec3<f32>, e: vec3<f32>) -> f32 {
    var w = 0.0;
    if body_dynamic(a) {
        let ang = cross(rho_a, e);
        w += dot(e, e) * body_inv_mass(a) + dot(ang, inverse_ang(a, qa, ang));
    }
    if body_dynamic(b) {
        let ang = cross(rho_b, e);
        w += dot(e, e) * body_inv_mass(b) + dot(ang, inverse_ang(b, qb, ang));
    }
    return w;
}

// The manifold of pair p at the start-of-step poses (narrow.wgsl).
fn pair_manifold(p: u32, pa: PoseF, pb: PoseF, margin: f32) -> Manifold {
    return shape_manifold(
        pair_u(p, 2u),
        pf3(p, 7u),
        pair_shape_pose(p, 0u, pa),
        pair_u(p, 3u),
        pf3(p, 17u),
        pair_shape_pose(p, 1u, pb),
        margin,
    );
}

// A cylinder's contact point rolled ahead (axion-collision's roll_ahead; docs/step.md,
// "Rolling ahead"): pw, a point of the cylinder whose world shape pose is s (axis z,
// radius r) touching towards the unit direction `toward`, becomes the material point at
// the same height along the axis whose azimuth is that of `toward` turned by `turn`
// (the turn of that direction over the step as the cylinder sees it). pw stays where it
// is not on the side surface or rim at the azimuth of `toward`, or `toward` runs along
// the axis.
fn roll_ahead(pw: vec3<f32>, toward: vec3<f32>, s: PoseF, r: f32, turn: vec4<f32>) -> vec3<f32> {
    let inv = quat_conj(s.q);
    let p = quat_rotate(inv, pw - s.x);
    let now = quat_rotate(inv, toward).xy;
    let ahead = quat_rotate(inv, quat_rotate(turn, toward)).xy;
    let at = length(p.xy);
    // p carries the f32 rounding of world coordinates: the tolerance grows with |x|.
    if abs(at - r) > ROLL_ON_SIDE * max(r, length(s.x)) || length(now) < ROLL_MIN_RADIAL || length(ahead) < ROLL_MIN_RADIAL {
        return pw;
    }
    let e = p.xy / at;
    let f = normalize(now);
    if dot(e, f) <= 0.0 || abs(e.x * f.y - e.y * f.x) > ROLL_AZIMUTH {
        return pw;
    }
    return s.x + quat_rotate(s.q, vec3<f32>(normalize(ahead) * r, p.z));
}

// Contact detection at the start-of-step poses (in s_pose) and velocities: for each
// pair its narrow phase within the speculative margin P.contact_margin + 2 h max|v|, as
// on the CPU. Slot k of a pair gets the k-th point; the step's constants are stored in
// it. Warm start: a slot keeps its normal force, and its friction force is carried
// over in world axes into the new tangent frame; an empty slot's forces are zero.
// Returns the number of contacts.
fn detect_contacts() -> u32 {
    var speed = 0.0;
    for (var b = 0u; b < P.bodies; b++) {
        if body_dynamic(b) {
            speed = max(speed, length(sget3(s_u + 6u * b)));
        }
    }
    let margin = P.contact_margin + 2.0 * P.h * speed;
    var count = 0u;
    for (var p = 0u; p < P.pairs; p++) {
        let a = pair_u(p, 0u);
        let b = pair_u(p, 1u);
        let pa = pose(a);
        let pb = pose(b);
        var m = pair_manifold(p, pa, pb, margin);
        let fr = contact_frame(p, m.n, pa.q, pb.q);
        let first = pair_u(p, 5u);
        for (var k = 0u; k < pair_u(p, 6u); k++) {
            let c = contact_slot(first + k);
            let i = contact_row(first + k);
            let old = sget(s_l + i + 1u) * sget3(c + C_T1) + sget(s_l + i + 2u) * sget3(c + C_T2);
            if k >= m.count {
                sset(c + C_ACTIVE, 0.0);
                sset(s_l + i, 0.0);
                sset(s_l + i + 1u, 0.0);
                sset(s_l + i + 2u, 0.0);
                continue;
            }
            count += 1u;
            let rho_a = m.pa[k] - pa.x;
            let rho_b = m.pb[k] - pb.x;
            // Restitution: the velocity bias of VelocityContact::bias (axion-constraints),
            // b = g⁻/h if g⁻ > OPEN_GAP, else β g⁻/h + e min(v_n, 0), v_n the approach velocity:
            // the normal velocity at u⁻, or the smaller of it and the one kept by a
            // persisting contact that was still open.
            let v_rel = vel_lin(a) + cross(vel_ang(a), rho_a) - vel_lin(b) - cross(vel_ang(b), rho_b);
            let vn = dot(m.n, v_rel);
            let kept = sget(c + C_ACTIVE) > 0.5 && dot(sget3(c + C_N), m.n) > PERSIST_COS
                && (length(sget3(c + C_RHOA) - rho_a) < PERSIST_DISTANCE
                || length(sget3(c + C_RHOB) - rho_b) < PERSIST_DISTANCE);
            var approach = vn;
            if kept && sget(c + C_GAP0) > OPEN_GAP {
                approach = min(sget(c + C_APPROACH), vn);
            }
            let gap0 = dot(m.n, m.pa[k] - m.pb[k]) - m.ta - m.tb;
            let e = pf(p, 25u);
            var bias = gap0 / P.h;
            if gap0 <= OPEN_GAP {
                bias = BAUMGARTE * gap0 / P.h + e * min(approach, 0.0);
            }
            sset(c + C_GAP0, gap0);
            sset(c + C_APPROACH, approach);
            sset(c + C_BIAS, bias);
            sset(c + C_BOUNCE, select(0.0, 1.0, e > 0.0));
            sset(c + C_ACTIVE, 1.0);
            sset3(c + C_N, m.n);
            // The points whose gap the rows keep (C_PA, C_PB): a cylinder's rolled
            // ahead where the contact does not slide (CollisionWorld::detect_ahead);
            // forces act at the touching points (C_RHOA, C_RHOB).
            var roll_a = m.pa[k];
            var roll_b = m.pb[k];
            // The device orders its pairs with a cylinder first (step.rs, pair_order),
            // so only side a can roll: against a half-space, or a box's face (its
            // outward normal n in the box's frame along an axis within ROLL_AZIMUTH).
            var face = pair_u(p, 3u) == HALF_SPACE;
            if pair_u(p, 2u) == CYLINDER && pair_u(p, 3u) == BOX {
                let nl = abs(quat_rotate(quat_conj(pair_shape_pose(p, 1u, pb).q), m.n));
                let top = max(nl.x, max(nl.y, nl.z));
                face = sqrt(max(dot(nl, nl) - top * top, 0.0)) <= ROLL_AZIMUTH * top;
            }
            if pair_u(p, 2u) == CYLINDER && face && length(v_rel - m.n * dot(m.n, v_rel)) <= ROLL_SLIP {
                let turn = quat_mul(quat_exp(-P.h * vel_ang(a)), quat_exp(P.h * vel_ang(b)));
                let moved = roll_ahead(roll_a, -m.n, pair_shape_pose(p, 0u, pa), pf(p, 7u), turn);
                let shift = moved - roll_a;
                roll_b += shift - m.n * dot(m.n, shift);
                roll_a = moved;
            }
            sset3(c + C_PA, quat_rotate(quat_conj(pa.q), roll_a - pa.x));
            sset(c + C_TA, m.ta);
            sset3(c + C_PB, quat_rotate(quat_conj(pb.q), roll_b - pb.x));
            sset(c + C_TB, m.tb);
            sset3(c + C_T1, fr.t1);
            sset3(c + C_T2, fr.t2);
            sset(c + C_MU, fr.mu);
            sset(c + C_S, fr.s.x);
            sset(c + C_S + 1u, fr.s.y);
            sset3(c + C_RHOA, rho_a);
            sset3(c + C_RHOB, rho_b);
            sset(c + C_W, effective_inverse_mass(a, pa.q, rho_a, b, pb.q, rho_b, m.n));
            sset(c + C_W + 1u, effective_inverse_mass(a, pa.q, rho_a, b, pb.q, rho_b, fr.t1));
            sset(c + C_W + 2u, effective_inverse_mass(a, pa.q, rho_a, b, pb.q, rho_b, fr.t2));
            sset(s_l + i + 1u, dot(old, fr.t1));
            sset(s_l + i + 2u, dot(old, fr.t2));
        }
    }
    return count;
}

// Smoothed, scaled Fischer–Burmeister function (axion_math::fischer_burmeister_scaled):
// φ(a, b) = a + r b − √(a² + r²b² + ε²), with its partial derivatives.
struct Fb {
    value: f32,
    d_a: f32,
    d_b: f32,
}

fn fischer_burmeister(a: f32, b: f32, r: f32, eps_sq: f32) -> Fb {
    let rb = r * b;
    let n = sqrt(a * a + rb * rb + eps_sq);
    if n == 0.0 {
        let d = 1.0 - 0.70710677;
        return Fb(0.0, d, r * d);
    }
    let sum = a + rb;
    var value = sum - n;
    if sum > 0.0 {
        // The same value without cancellation.
        value = (2.0 * a * rb - eps_sq) / (sum + n);
    }
    return Fb(value, 1.0 - a / n, r * (1.0 - rb / n));
}

// Marks row i as fixed: its multiplier changes by `step` in the next Newton
// direction, outside the Schur system (plus `s_cpl` times the previous row's change,
// which `couple_to_previous` may set).
fn fix_row(i: u32, step: f32) {
    sset(s_fix + i, 1.0);
    sset(s_fixv + i, step);
    if SLIP_COUPLING {
        sset(s_cpl + i, 0.0);
    }
    sset(s_res + i, 0.0);
    sset(s_creg + i, 0.0);
}

// A unilateral row i (a contact's normal, a joint limit), φ = FB(a, λ; r), with J M̃⁻¹ Jᵀ
// = w at q⁻:
// * position level: a = g the gap at the current iterate, r = h² w, residual h_i = φ/h;
// * velocity level (restitution): a = J u⁺ + b, r = h w, residual h_i = φ.
// The row is divided by ∂φ/∂a so that its gradient is the force Jacobian (symmetric):
// residual h_i/∂_aφ, compliance ∂_λφ/(h² ∂_aφ) (position) or ∂_λφ/(h ∂_aφ) (velocity).
// A row with ∂_aφ below FB_FIX_BELOW (separated, no force) has its force step fixed at
// −φ/∂_λφ. Returns h_i.
fn unilateral_row(i: u32, a: f32, r: f32, velocity: bool) -> f32 {
    let h = P.h;
    let lam = sget(s_l + i);
    let fb = fischer_burmeister(a, lam, r, P.fb_eps_sq);
    var res = fb.value / h;
    var creg = fb.d_b / (h * h * fb.d_a);
    if velocity {
        res = fb.value;
        creg = fb.d_b / (h * fb.d_a);
    }
    sset(s_mu + i, lam);
    if fb.d_a > FB_FIX_BELOW {
        sset(s_fix + i, 0.0);
        sset(s_res + i, res / fb.d_a);
        sset(s_creg + i, creg);
    } else {
        fix_row(i, -fb.value / fb.d_b);
    }
    return res;
}

// Fixed row i's step follows the previous row's: Δλ_i = s_fixv_i + d Δλ_{i−1}. For the
// force along the slip, Δλ̂_ŷ = R − ŷ·λ̂ + μ Δλ_n (d = ∂R/∂λ_n = μ, the semismooth step's
// coupling; the symmetric friction form of docs/constraints.md drops it, and then the
// slip force lags the normal force by one iterate, which diverges when the friction
// forces shift the normal loads, as on the skid-steer's wheels at h = 0.05). If row i − 1
// is fixed as well the coupling folds into the fixed step; otherwise the Schur operator
// is no longer symmetric, which is why kernels compiled with SLIP_COUPLING solve with
// ORTHOMIN. A world whose coupled iteration stalls (see `step_search`) lags the coupling
// for the rest of the step.
fn couple_to_previous(i: u32, d: f32) {
    if !SLIP_COUPLING || status(ST_LAGGED) > 0.5 {
        return;
    }
    if sget(s_fix + i - 1u) > 0.5 {
        sset(s_fixv + i, sget(s_fixv + i) + d * sget(s_fixv + i - 1u));
    } else {
        sset(s_cpl + i, d);
    }
}

// Whether a fixed row's step follows another row's at the current iterate.
fn has_couplings() -> bool {
    var any = false;
    for (var i = 0u; SLIP_COUPLING && i < P.rows; i++) {
        any = any || (sget(s_fix + i) > 0.5 && sget(s_cpl + i) != 0.0);
    }
    return any;
}

// A fixed row's contribution to a Schur product's force gather: its coupling to the
// previous row times that row's entry of `src` (s_cpl is written and read only with
// SLIP_COUPLING).
fn coupled_entry(src: u32, i: u32) -> f32 {
    if !SLIP_COUPLING {
        return 0.0;
    }
    let d = sget(s_cpl + i);
    if d == 0.0 {
        return 0.0;
    }
    return d * sget(src + i - 1u);
}

// A friction row of slot c along the scaled direction e: Jacobian eᵀ Ĵ_t with
// Ĵ_t = (s1 J_t1; s2 J_t2), multiplier e·λ̂.
fn friction_jacobian(i: u32, c: u32, e: vec2<f32>, lam: vec2<f32>) {
    let dir = sget3(c + C_T1) * (e.x * sget(c + C_S)) + sget3(c + C_T2) * (e.y * sget(c + C_S + 1u));
    contact_jacobian(i, c, dir);
    sset(s_mu + i, dot(e, lam));
    sset(s_fix + i, 0.0);
}

// J along world direction d of slot c: ((d, ρ_a × d), (−d, −ρ_b × d)).
fn contact_jacobian(i: u32, c: u32, d: vec3<f32>) {
    set_jac(i, d, cross(sget3(c + C_RHOA), d), -d, -cross(sget3(c + C_RHOB), d));
}

struct ContactNorms {
    merit: f32,
    normal: f32,
    friction: f32,
}

// Rows of contact slot k at the current iterate: the normal row and the symmetric
// friction rows (friction::symmetric of axion-constraints; see step.rs).
fn contact_rows(k: u32) -> ContactNorms {
    let h = P.h;
    let c = contact_slot(k);
    let i = contact_row(k);
    if sget(c + C_ACTIVE) < 0.5 {
        let z = vec3<f32>(0.0);
        for (var r = 0u; r < 3u; r++) {
            set_jac(i + r, z, z, z, z);
            sset(s_mu + i + r, 0.0);
            fix_row(i + r, -sget(s_l + i + r));
        }
        return ContactNorms(0.0, 0.0, 0.0);
    }
    let p = slot_pair(k);
    let a = pair_u(p, 0u);
    let b = pair_u(p, 1u);
    let pa = pose(a);
    let pb = pose(b);
    let n = sget3(c + C_N);
    let w = sget3(c + C_W);
    let rho_a = sget3(c + C_RHOA);
    let rho_b = sget3(c + C_RHOB);
    let vrel = vel_lin(a) + cross(vel_ang(a), rho_a) - vel_lin(b) - cross(vel_ang(b), rho_b);
    // Normal: a unilateral row with force Jacobian J_n, on the gap g(q⁺) (its gradient
    // at q⁺ approximated by J_n at q⁻), or on J_n u⁺ + b for a bouncing contact.
    let lam_n = sget(s_l + i);
    contact_jacobian(i, c, n);
    var res_n: f32;
    if sget(c + C_BOUNCE) > 0.5 {
        res_n = unilateral_row(i, dot(n, vrel) + sget(c + C_BIAS), h * w.x, true);
    } else {
        // Surface points' separation, summed as (x_a − x_b) + (lever arms) as the joints'
        // anchors are (`joint_geo`): rounding that scales with the bodies' distance, not
        // with their distance from the origin.
        let arms_a = quat_rotate(pa.q, sget3(c + C_PA)) - n * sget(c + C_TA);
        let arms_b = quat_rotate(pb.q, sget3(c + C_PB)) + n * sget(c + C_TB);
        let gap = dot(n, (pa.x - pb.x) + (arms_a - arms_b));
        res_n = unilateral_row(i, gap, h * h * w.x, false);
    }
    // Friction, decided on the current iterate in scaled variables.
    let t1 = sget3(c + C_T1);
    let t2 = sget3(c + C_T2);
    let v_t = vec2<f32>(dot(t1, vrel), dot(t2, vrel));
    let s = vec2<f32>(sget(c + C_S), sget(c + C_S + 1u));
    let lam = vec2<f32>(sget(s_l + i + 1u), sget(s_l + i + 2u)) / s;
    let v = v_t * s;
    // Trial inverse mass r̂ (ConeScaling::trial_inverse_mass): the balanced mean, and
    // on elliptic cones at least the effective inverse mass along the push direction.
    let s2 = s * s;
    var r_hat = 0.5 * dot(s2, w.yz) * sqrt(min(s2.x, s2.y) / max(s2.x, s2.y));
    if s.x != s.y {
        var dir = vec2<f32>(0.0);
        if dot(lam, lam) > 0.0 {
            dir = normalize(lam);
        } else if dot(v, v) > 0.0 {
            dir = normalize(v);
        }
        r_hat = max(r_hat, dot(dir * dir * s2, w.yz));
    }
    let rho_t = 1.0 / (h * r_hat);
    let creep = creep();
    let y = lam * (1.0 - creep) - v * rho_t;
    let radius = sget(c + C_MU) * max(lam_n, 0.0);
    let y_norm = length(y);
    var residual: vec2<f32>;
    if radius > 0.0 && y_norm < radius * (1.0 - SLIP_BAND) {
        // Stick: rows v̂_k + ε λ̂_k with ε = c/ρ̂ (c the creep), compliance ε/h.
        let eps = creep / rho_t;
        let e1 = vec2<f32>(1.0, 0.0);
        let e2 = vec2<f32>(0.0, 1.0);
        friction_jacobian(i + 1u, c, e1, lam);
        friction_jacobian(i + 2u, c, e2, lam);
        sset(s_res + i + 1u, v.x + eps * lam.x);
        sset(s_res + i + 2u, v.y + eps * lam.y);
        sset(s_creg + i + 1u, eps / h);
        sset(s_creg + i + 2u, eps / h);
        sset(c + C_E, 1.0);
        sset(c + C_E + 1u, 0.0);
        residual = s * (v + eps * lam);
    } else {
        // Slip along ŷ, κ = R/|y|: the force along ŷ is set (Δλ̂_ŷ = R − ŷ·λ̂); one row
        // across it, e·λ̂/(ρ̂κ) with compliance (1 − κ(1 − c))/(ρ̂κ h); below KAPPA_MIN the
        // force across is set to zero as well.
        var dir = vec2<f32>(1.0, 0.0);
        var kappa = 0.0;
        if y_norm > 0.0 {
            dir = y / y_norm;
            kappa = radius / y_norm;
        }
        let e = vec2<f32>(-dir.y, dir.x);
        friction_jacobian(i + 1u, c, dir, lam);
        friction_jacobian(i + 2u, c, e, lam);
        fix_row(i + 1u, radius - dot(dir, lam));
        if lam_n > 0.0 {
            couple_to_previous(i + 1u, sget(c + C_MU));
        }
        if kappa < KAPPA_MIN {
            fix_row(i + 2u, -dot(e, lam));
        } else {
            let rk = rho_t * kappa;
            sset(s_res + i + 2u, dot(e, lam) / rk);
            sset(s_creg + i + 2u, max((1.0 - kappa * (1.0 - creep)) / rk, 0.0) / h);
        }
        sset(c + C_E, dir.x);
        sset(c + C_E + 1u, dir.y);
        residual = s * (lam - dir * radius) / rho_t;
    }
    return ContactNorms(
        res_n * res_n + dot(residual, residual),
        abs(res_n),
        max(abs(residual.x), abs(residual.y)),
    );
}
