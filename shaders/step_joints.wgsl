// The joints' position-level rows (axion-constraints' `joint`): anchors and frames of a
// joint at the current poses, the point, angle, axis-alignment and slide locks, and the
// rows of each joint kind. Part of the step module (see step.rs, `step_source`).

// World quantities of a joint: frames X_wp = q_P X_p, X_wc = q_C X_c, lever arms
// r_p = p_p − x_P, r_c = p_c − x_C and the anchor separation d = p_c − p_p, summed as
// (x_C − x_P) + (r_c − r_p): the body positions' difference is about a link long and
// exact for nearby bodies, so d's rounding scales with the links, not with how far the
// joint is from the origin (f32 rounds a position 2.5 m out to 3e-7 m, a seventh of the
// default position tolerance).
struct Geo {
    fp_q: vec4<f32>,
    fc_q: vec4<f32>,
    r_p: vec3<f32>,
    r_c: vec3<f32>,
    d: vec3<f32>,
}

fn joint_geo(j: u32) -> Geo {
    let pp = pose(joint_parent(j));
    let pc = pose(joint_child(j));
    let r_p = quat_rotate(pp.q, jf3(j, 0u));
    let r_c = quat_rotate(pc.q, jf3(j, 7u));
    let fp_q = quat_mul(pp.q, jf4(j, 3u));
    let fc_q = quat_mul(pc.q, jf4(j, 10u));
    let d = (pc.x - pp.x) + (r_c - r_p);
    return Geo(fp_q, fc_q, r_p, r_c, d);
}

struct PosRow {
    err: f32,
    al: vec3<f32>,
    aa: vec3<f32>,
    bl: vec3<f32>,
    ba: vec3<f32>,
}

// The unit vector e_k (k < 3), without indexing a vector by a runtime value.
fn unit_axis(k: u32) -> vec3<f32> {
    return vec3<f32>(f32(k == 0u), f32(k == 1u), f32(k == 2u));
}

// Point lock along world e: c = d·e, J_p = (−e, −r_p × e), J_c = (e, r_c × e).
fn point_lock(g: Geo, e: vec3<f32>) -> PosRow {
    return PosRow(dot(g.d, e), -e, -cross(g.r_p, e), e, cross(g.r_c, e));
}

// Angle lock about parent-frame axis k: θ_rel = θ_wp⁻¹ ⊗ θ_wc = (w, v), s = sign w,
// c = 2 s v_k, J_c = (0, s R_wp (w e_k + v × e_k)), J_p = −J_c.
fn angle_lock(g: Geo, k: u32) -> PosRow {
    let rel = quat_mul(quat_conj(g.fp_q), g.fc_q);
    var s = 1.0;
    if rel.w < 0.0 {
        s = -1.0;
    }
    let e = unit_axis(k);
    let axis = quat_rotate(g.fp_q, (e * rel.w + cross(rel.xyz, e)) * s);
    let z = vec3<f32>(0.0);
    return PosRow(2.0 * s * dot(rel.xyz, e), z, -axis, z, axis);
}

// Axis alignment: a_c = R_wc a, b_p = R_wp b, c = a_c·b_p, n = a_c × b_p,
// J_c = (0, n), J_p = (0, −n).
fn axis_alignment(g: Geo, a: vec3<f32>, b: vec3<f32>) -> PosRow {
    let a_c = quat_rotate(g.fc_q, a);
    let b_p = quat_rotate(g.fp_q, b);
    let n = cross(a_c, b_p);
    let z = vec3<f32>(0.0);
    return PosRow(dot(a_c, b_p), z, -n, z, n);
}

// Slide lock along n = R_wp b: c = d·n, J_c = (n, r_c × n), J_p = (−n, −(r_p + d) × n).
fn slide_lock(g: Geo, b: vec3<f32>) -> PosRow {
    let n = quat_rotate(g.fp_q, b);
    return PosRow(dot(g.d, n), -n, -cross(g.r_p + g.d, n), n, cross(g.r_c, n));
}

// Row k of joint j (k < its row count).
fn joint_row(j: u32, g: Geo, k: u32) -> PosRow {
    let kind = joint_kind(j);
    if kind == REVOLUTE {
        if k < 3u {
            return point_lock(g, unit_axis(k));
        }
        return axis_alignment(g, joint_axis(j), jf3(j, 17u + 3u * (k - 3u)));
    }
    if kind == PRISMATIC {
        if k < 2u {
            return slide_lock(g, jf3(j, 17u + 3u * k));
        }
        return angle_lock(g, k - 2u);
    }
    if kind == BALL || k < 3u {
        return point_lock(g, unit_axis(k));
    }
    return angle_lock(g, k - 3u);
}

fn joint_row_count(j: u32) -> u32 {
    let kind = joint_kind(j);
    if kind == REVOLUTE || kind == PRISMATIC {
        return 5u;
    }
    if kind == BALL {
        return 3u;
    }
    return 6u;
}

// Joint rows (all of them, at the current poses): h_i = (c + ε λ)/h, C_i = ε/h²;
// adds their squares to the merit and their largest |c + ε λ| to the joint norm.
fn joint_rows(h: f32, ev: ptr<function, Eval>) {
    for (var j = 0u; j < P.joints; j++) {
        let g = joint_geo(j);
        let eps = joint_compliance(j);
        let first = joint_first_row(j);
        for (var k = 0u; k < joint_row_count(j); k++) {
            let i = first + k;
            let row = joint_row(j, g, k);
            let res = (row.err + eps * sget(s_l + i)) / h;
            set_jac(i, row.al, row.aa, row.bl, row.ba);
            sset(s_res + i, res);
            sset(s_creg + i, eps / (h * h));
            sset(s_mu + i, sget(s_l + i));
            sset(s_fix + i, 0.0);
            (*ev).merit += res * res;
            (*ev).joint_norm = max((*ev).joint_norm, abs(res * h));
        }
    }
}
