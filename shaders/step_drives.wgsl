// The drives (axion-constraints' `drive`): a joint's coordinate and its rate, and the
// drive rows of each mode. Part of the step module (see step.rs, `step_source`).

// Joint coordinate of a drive: value and the child's Jacobian blocks (the parent's are
// their negatives).
struct Coord {
    value: f32,
    al: vec3<f32>,
    aa: vec3<f32>,
    bl: vec3<f32>,
    ba: vec3<f32>,
}

// Revolute: θ_rel = (w, v), s = v·a, q = 2 atan2(s, w),
// J_c = (0, R_wp (w² a + w v × a + s v)/(w² + s²)), J_p = −J_c.
// Prismatic: a_w = R_wp a, q = d·a_w, J_c = (a_w, r_c × a_w), J_p = (−a_w, −(r_p + d) × a_w).
fn coordinate(j: u32, angle: bool) -> Coord {
    let g = joint_geo(j);
    let a = joint_axis(j);
    let z = vec3<f32>(0.0);
    if angle {
        let rel = quat_mul(quat_conj(g.fp_q), g.fc_q);
        let w = rel.w;
        let v = rel.xyz;
        let s = dot(v, a);
        let den = w * w + s * s;
        var local = a;
        if den > 1e-30 {
            local = (a * (w * w) + cross(v, a) * w + v * s) / den;
        }
        let aw = quat_rotate(g.fp_q, local);
        return Coord(2.0 * atan2(s, w), z, -aw, z, aw);
    }
    let aw = quat_rotate(g.fp_q, a);
    return Coord(dot(g.d, aw), -aw, -cross(g.r_p + g.d, aw), aw, cross(g.r_c, aw));
}

// The rate q̇ = J u of joint j's coordinate c at the current velocities.
fn coordinate_rate(j: u32, c: Coord) -> f32 {
    let pj = joint_parent(j);
    let cj = joint_child(j);
    return dot(c.al, vel_lin(pj)) + dot(c.aa, vel_ang(pj)) + dot(c.bl, vel_lin(cj))
        + dot(c.ba, vel_ang(cj));
}

// Wraps an angle difference to [−π, π).
fn wrap_angle(x: f32) -> f32 {
    let t = 2.0 * PI;
    var w = x + PI - t * floor((x + PI) / t) - PI;
    if w >= PI {
        w -= t;
    }
    return w;
}

fn drive_joint(d: u32) -> u32 {
    return model_u[P.drive_base_u + d * DRIVE_U];
}
fn drive_is_angle(d: u32) -> bool {
    return model_u[P.drive_base_u + d * DRIVE_U + 1u] == ANGLE;
}

// Drive rows: h = α h (λ − law), C = α; a force drive's row is λ = τ (α = 1/h). Adds
// their squares to the merit and the largest to the drive norm.
fn drive_rows(h: f32, ev: ptr<function, Eval>) {
    for (var d = 0u; d < P.drives; d++) {
        let j = drive_joint(d);
        let angle = drive_is_angle(d);
        let c = coordinate(j, angle);
        let i = P.joint_rows + d;
        let cb = 6u * P.bodies + CONTROL_DRIVE * d;
        let mode = u32(ctl(cb));
        let q_target = ctl(cb + 1u);
        let target_vel = ctl(cb + 2u);
        let ke = ctl(cb + 3u);
        let kd = ctl(cb + 4u);
        var alpha: f32;
        var law: f32;
        var moves = true;
        if mode == MODE_ARMATURE {
            // Armature a = ke: λ = −a (q̇⁺ − q̇⁻)/h, α = 1/a; s_dstart holds q̇⁻.
            alpha = 1.0 / ke;
            law = -ke * (coordinate_rate(j, c) - sget(s_dstart + d)) / h;
        } else if mode == MODE_FORCE {
            // Force mode with τ = 0 (the host refuses others): λ = 0, decoupled.
            alpha = 1.0 / h;
            law = 0.0;
            moves = false;
        } else if mode == MODE_POSITION {
            alpha = 1.0 / (h * h * ke + h * kd);
            var dq = c.value - q_target;
            var dstart = c.value - sget(s_dstart + d);
            if angle {
                dq = wrap_angle(dq);
                dstart = wrap_angle(dstart);
            }
            law = -ke * dq - kd * (dstart / h - target_vel);
        } else {
            alpha = 1.0 / (h * ke);
            law = -ke * (coordinate_rate(j, c) - target_vel);
        }
        let res = alpha * h * (sget(s_l + i) - law);
        if moves {
            set_jac(i, c.al, c.aa, c.bl, c.ba);
        } else {
            let z = vec3<f32>(0.0);
            set_jac(i, z, z, z, z);
        }
        sset(s_res + i, res);
        sset(s_creg + i, alpha);
        sset(s_mu + i, sget(s_l + i));
        sset(s_fix + i, 0.0);
        (*ev).merit += res * res;
        (*ev).drive_norm = max((*ev).drive_norm, abs(res));
    }
}
