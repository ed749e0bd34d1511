// Joint limits: the unilateral rows on a joint's coordinate. Part of the step module
// (see step.rs, `step_source`).

// ---- joint limits ---------------------------------------------------------------------
//
// Limit slot k (one per finite bound of a joint's range, after the contact rows): joint,
// coordinate (ANGLE, DISPLACEMENT), side (0 lower, 1 upper) in model_u; the bound b
// and the reference r (the middle of an angle range, 0 for a displacement) in model_f,
// b measured from r. As on the CPU (axion-cpu's ActiveLimit) its row is a unilateral
// row on the gap g = σ (q_rel − b), σ = +1 at the lower bound and −1 at the upper,
// q_rel = wrap(q − r) for an angle and q for a displacement; its force σ J_q(q⁻) and
// w = J M̃⁻¹ Jᵀ are fixed at the start of the step. A limit is active in a step if its
// gap at q⁻ is within the contact margin plus two steps of the joint's speed; an
// inactive one has a zero row whose force is set to zero.

fn limit_u(k: u32, at: u32) -> u32 {
    return model_u[P.limits.y + k * LIMIT_U + at];
}

struct LimitGap {
    gap: f32,
    sigma: f32,
    c: Coord,
}

// The gap of limit slot k at the current poses, with σ and the coordinate.
fn limit_gap(k: u32) -> LimitGap {
    let angle = limit_u(k, 1u) == ANGLE;
    let c = coordinate(limit_u(k, 0u), angle);
    let sigma = select(1.0, -1.0, limit_u(k, 2u) == 1u);
    let bound = model_f[P.limits.z + k * LIMIT_F];
    var rel = c.value;
    if angle {
        rel = wrap_angle(c.value - model_f[P.limits.z + k * LIMIT_F + 1u]);
    }
    return LimitGap(sigma * (rel - bound), sigma, c);
}

// At the start of a step (poses q⁻, velocities u⁻): which limits are active, their
// force rows σ J_q(q⁻) and w = Σ_b (m_b⁻¹|J_lin|² + J_angᵀ I_w,b(θ⁻)⁻¹ J_ang).
fn detect_limits() {
    for (var k = 0u; k < P.limits.x; k++) {
        let lg = limit_gap(k);
        let c = lg.c;
        let i = P.limits.w + k;
        let j = limit_u(k, 0u);
        let pj = joint_parent(j);
        let cj = joint_child(j);
        let speed = abs(dot(c.al, vel_lin(pj)) + dot(c.aa, vel_ang(pj)) + dot(c.bl, vel_lin(cj))
            + dot(c.ba, vel_ang(cj)));
        let reached = lg.gap <= P.contact_margin + 2.0 * P.h * speed;
        let s = select(0.0, lg.sigma, reached);
        set_jac(i, c.al * s, c.aa * s, c.bl * s, c.ba * s);
        var w = 0.0;
        for (var side = 0u; side < 2u; side++) {
            let b = row_body(i, side);
            if body_dynamic(b) {
                let jl = jac_lin(i, side);
                let ja = jac_ang(i, side);
                w += dot(jl, jl) * body_inv_mass(b) + dot(ja, inverse_ang(b, start_pose(b).q, ja));
            }
        }
        sset(s_lim + 2u * k, select(0.0, 1.0, reached));
        sset(s_lim + 2u * k + 1u, w);
    }
}

// The rows of the limits at the current iterate: (merit, largest |h_i|).
fn limit_rows() -> vec2<f32> {
    var out = vec2<f32>(0.0);
    for (var k = 0u; k < P.limits.x; k++) {
        let i = P.limits.w + k;
        if sget(s_lim + 2u * k) < 0.5 {
            sset(s_mu + i, 0.0);
            fix_row(i, -sget(s_l + i));
            continue;
        }
        let res = unilateral_row(i, limit_gap(k).gap, P.h * P.h * sget(s_lim + 2u * k + 1u), false);
        out = vec2<f32>(out.x + res * res, max(out.y, abs(res)));
    }
    return out;
}
