// The implicit Newton step of axion-rs for joints and drives, one invocation per world
// in each of four kernels (step_begin, step_direction, step_search, step_finish;
// crates/axion-gpu/src/step.rs is the twin and documents the equations), plus
// probe_rows, which evaluates the rows for the tests. Needs quat.wgsl prepended.
//
// Every per-world array is interleaved: element `slot` of world `w` lives at
// `slot * worlds + w`, so that neighbouring invocations read neighbouring words.
// Per-world sums run in a fixed order inside one invocation and the body → rows
// adjacency is a gather, so results do not depend on scheduling: reruns are bitwise
// identical and a world's result does not depend on how many worlds run beside it.

struct Params {
    worlds: u32,
    bodies: u32,
    joints: u32,
    drives: u32,
    rows: u32,
    joint_rows: u32,
    max_newton: u32,
    max_linear: u32,
    max_backtracks: u32,
    geometric_stiffness: u32,
    drive_base_u: u32,
    rowbody_base_u: u32,
    adj_offset_base_u: u32,
    adj_base_u: u32,
    joint_base_f: u32,
    scratch_slots: u32,
    h: f32,
    velocity_tolerance: f32,
    position_tolerance: f32,
    linear_tolerance: f32,
    gravity: vec3<f32>,
    regularization: f32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> model_f: array<f32>;
@group(0) @binding(2) var<storage, read> model_u: array<u32>;
@group(0) @binding(3) var<storage, read_write> state: array<f32>;
@group(0) @binding(4) var<storage, read> control: array<f32>;
@group(0) @binding(5) var<storage, read_write> scratch: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;

const NONE: u32 = 0xffffffffu;
const BODY_F: u32 = 24u;
const JOINT_F: u32 = 24u;
const JOINT_U: u32 = 8u;
const DRIVE_U: u32 = 4u;
const CONTROL_DRIVE: u32 = 5u;

const REVOLUTE: u32 = 0u;
const PRISMATIC: u32 = 1u;
const BALL: u32 = 2u;
const FIXED: u32 = 3u;

const PI: f32 = 3.14159265358979;

var<private> wid: u32;
// Scratch slot bases (per-body sections: 6 or 7 or 9 slots per body; per-row: 1 or 12).
var<private> s_pose: u32;
var<private> s_u: u32;
var<private> s_uc: u32;
var<private> s_du: u32;
var<private> s_hd: u32;
var<private> s_dv: u32;
var<private> s_t: u32;
var<private> s_minv: u32;
var<private> s_kang: u32;
var<private> s_l: u32;
var<private> s_lc: u32;
var<private> s_x: u32;
var<private> s_jac: u32;
var<private> s_res: u32;
var<private> s_creg: u32;
var<private> s_pre: u32;
var<private> s_rhs: u32;
var<private> s_r: u32;
var<private> s_z: u32;
var<private> s_p: u32;
var<private> s_ap: u32;
var<private> s_az: u32;
var<private> s_y: u32;
var<private> s_xb: u32;
var<private> s_dstart: u32;

// Keep in sync with `Packed::scratch_slots`, `slot_jac` and `slot_res` in step.rs.
fn layout_scratch() {
    let b = P.bodies;
    let r = P.rows;
    var o = 0u;
    s_pose = o; o += 7u * b;
    s_u = o; o += 6u * b;
    s_uc = o; o += 6u * b;
    s_du = o; o += 6u * b;
    s_hd = o; o += 6u * b;
    s_dv = o; o += 6u * b;
    s_t = o; o += 6u * b;
    s_minv = o; o += 9u * b;
    s_kang = o; o += 9u * b;
    s_l = o; o += r;
    s_lc = o; o += r;
    s_x = o; o += r;
    s_jac = o; o += 12u * r;
    s_res = o; o += r;
    s_creg = o; o += r;
    s_pre = o; o += r;
    s_rhs = o; o += r;
    s_r = o; o += r;
    s_z = o; o += r;
    s_p = o; o += r;
    s_ap = o; o += r;
    s_az = o; o += r;
    s_y = o; o += r;
    s_xb = o; o += r;
    s_dstart = o;
}

// ---- interleaved accessors -------------------------------------------------------

fn si(slot: u32) -> u32 {
    return slot * P.worlds + wid;
}
fn sget(slot: u32) -> f32 {
    return scratch[si(slot)];
}
fn sset(slot: u32, v: f32) {
    scratch[si(slot)] = v;
}
fn sget3(slot: u32) -> vec3<f32> {
    return vec3<f32>(sget(slot), sget(slot + 1u), sget(slot + 2u));
}
fn sset3(slot: u32, v: vec3<f32>) {
    sset(slot, v.x);
    sset(slot + 1u, v.y);
    sset(slot + 2u, v.z);
}
fn sget_mat(slot: u32) -> mat3x3<f32> {
    return mat3x3<f32>(sget3(slot), sget3(slot + 3u), sget3(slot + 6u));
}
fn sset_mat(slot: u32, m: mat3x3<f32>) {
    sset3(slot, m[0]);
    sset3(slot + 3u, m[1]);
    sset3(slot + 6u, m[2]);
}
fn stget(slot: u32) -> f32 {
    return state[slot * P.worlds + wid];
}
fn stset(slot: u32, v: f32) {
    state[slot * P.worlds + wid] = v;
}
fn ctl(slot: u32) -> f32 {
    return control[slot * P.worlds + wid];
}

// ---- model -------------------------------------------------------------------------

fn body_mass(b: u32) -> f32 {
    return model_f[b * BODY_F];
}
fn body_inv_mass(b: u32) -> f32 {
    return model_f[b * BODY_F + 1u];
}
fn body_mat(b: u32, at: u32) -> mat3x3<f32> {
    let o = b * BODY_F + at;
    return mat3x3<f32>(
        vec3<f32>(model_f[o], model_f[o + 1u], model_f[o + 2u]),
        vec3<f32>(model_f[o + 3u], model_f[o + 4u], model_f[o + 5u]),
        vec3<f32>(model_f[o + 6u], model_f[o + 7u], model_f[o + 8u]),
    );
}
fn body_inertia(b: u32) -> mat3x3<f32> {
    return body_mat(b, 2u);
}
fn body_inv_inertia(b: u32) -> mat3x3<f32> {
    return body_mat(b, 11u);
}
fn body_gyration(b: u32) -> f32 {
    return model_f[b * BODY_F + 20u];
}
fn body_dynamic(b: u32) -> bool {
    return b != NONE && model_f[b * BODY_F + 21u] > 0.5;
}

fn jf3(j: u32, at: u32) -> vec3<f32> {
    let o = P.joint_base_f + j * JOINT_F + at;
    return vec3<f32>(model_f[o], model_f[o + 1u], model_f[o + 2u]);
}
fn jf4(j: u32, at: u32) -> vec4<f32> {
    let o = P.joint_base_f + j * JOINT_F + at;
    return vec4<f32>(model_f[o], model_f[o + 1u], model_f[o + 2u], model_f[o + 3u]);
}
fn joint_axis(j: u32) -> vec3<f32> {
    return jf3(j, 14u);
}
fn joint_compliance(j: u32) -> f32 {
    return model_f[P.joint_base_f + j * JOINT_F + 23u];
}
fn joint_kind(j: u32) -> u32 {
    return model_u[j * JOINT_U];
}
fn joint_parent(j: u32) -> u32 {
    return model_u[j * JOINT_U + 1u];
}
fn joint_child(j: u32) -> u32 {
    return model_u[j * JOINT_U + 2u];
}
fn joint_first_row(j: u32) -> u32 {
    return model_u[j * JOINT_U + 3u];
}
fn row_body(i: u32, side: u32) -> u32 {
    return model_u[P.rowbody_base_u + 2u * i + side];
}

// ---- state of the current iterate -----------------------------------------------

fn start_pose(b: u32) -> PoseF {
    let o = 7u * b;
    return PoseF(
        vec3<f32>(stget(o), stget(o + 1u), stget(o + 2u)),
        vec4<f32>(stget(o + 3u), stget(o + 4u), stget(o + 5u), stget(o + 6u)),
    );
}
fn start_lin(b: u32) -> vec3<f32> {
    let o = 7u * P.bodies + 6u * b;
    return vec3<f32>(stget(o), stget(o + 1u), stget(o + 2u));
}
fn start_ang(b: u32) -> vec3<f32> {
    let o = 7u * P.bodies + 6u * b + 3u;
    return vec3<f32>(stget(o), stget(o + 1u), stget(o + 2u));
}
fn pose(b: u32) -> PoseF {
    if b == NONE {
        return PoseF(vec3<f32>(0.0), vec4<f32>(0.0, 0.0, 0.0, 1.0));
    }
    let o = s_pose + 7u * b;
    return PoseF(sget3(o), vec4<f32>(sget3(o + 3u), sget(o + 6u)));
}
fn vel_lin(b: u32) -> vec3<f32> {
    if !body_dynamic(b) {
        return vec3<f32>(0.0);
    }
    return sget3(s_u + 6u * b);
}
fn vel_ang(b: u32) -> vec3<f32> {
    if !body_dynamic(b) {
        return vec3<f32>(0.0);
    }
    return sget3(s_u + 6u * b + 3u);
}

// ---- rows ----------------------------------------------------------------------------

// Jacobian row i: (a_lin, a_ang, b_lin, b_ang), 12 slots.
fn set_jac(i: u32, al: vec3<f32>, aa: vec3<f32>, bl: vec3<f32>, ba: vec3<f32>) {
    let o = s_jac + 12u * i;
    sset3(o, al);
    sset3(o + 3u, aa);
    sset3(o + 6u, bl);
    sset3(o + 9u, ba);
}
fn jac_lin(i: u32, side: u32) -> vec3<f32> {
    return sget3(s_jac + 12u * i + 6u * side);
}
fn jac_ang(i: u32, side: u32) -> vec3<f32> {
    return sget3(s_jac + 12u * i + 6u * side + 3u);
}

// World quantities of a joint: frames X_wp = q_P X_p, X_wc = q_C X_c, lever arms
// r_p = p_p − x_P, r_c = p_c − x_C and the anchor separation d = p_c − p_p.
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
    let d = (pc.x + r_c) - (pp.x + r_p);
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
    return model_u[P.drive_base_u + d * DRIVE_U + 1u] == 0u;
}

// ---- mass matrix ------------------------------------------------------------------------

// M̃(θ) u = (m v, R I_b Rᵀ ω).
fn momentum_ang(b: u32, q: vec4<f32>, w: vec3<f32>) -> vec3<f32> {
    return quat_rotate(q, body_inertia(b) * quat_rotate(quat_conj(q), w));
}
// M̃(θ)⁻¹ f = (f/m, R I_b⁻¹ Rᵀ τ).
fn inverse_ang(b: u32, q: vec4<f32>, t: vec3<f32>) -> vec3<f32> {
    return quat_rotate(q, body_inv_inertia(b) * quat_rotate(quat_conj(q), t));
}

// ---- residuals -------------------------------------------------------------------------

struct Eval {
    merit: f32,
    dyn_norm: f32,
    joint_norm: f32,
    drive_norm: f32,
}

// Finite test on the bits: WGSL lets compilers assume that floats are never NaN or
// infinite, so `x != x` and comparisons cannot be trusted to find them.
fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

fn amax3(v: vec3<f32>) -> f32 {
    let a = abs(v);
    return max(a.x, max(a.y, a.z));
}

// Poses q⁺ = q⁻ ⊕ h G u⁺, every row (residual, force Jacobian, compliance), the
// dynamics residual h_dyn = M̃(θ⁺)u⁺ − M̃(θ⁻)u⁻ − h f − h Σ J_iᵀλ_i and the norms.
fn evaluate() -> Eval {
    let h = P.h;
    for (var b = 0u; b < P.bodies; b++) {
        var p = start_pose(b);
        if body_dynamic(b) {
            p = integrate_pose(p, sget3(s_u + 6u * b), sget3(s_u + 6u * b + 3u), h);
        }
        sset3(s_pose + 7u * b, p.x);
        sset3(s_pose + 7u * b + 3u, p.q.xyz);
        sset(s_pose + 7u * b + 6u, p.q.w);
    }
    var ev = Eval(0.0, 0.0, 0.0, 0.0);
    // Joint rows: h_i = (c + ε λ)/h, C_i = ε/h².
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
            ev.merit += res * res;
            ev.joint_norm = max(ev.joint_norm, abs(res * h));
        }
    }
    // Drive rows: h = α h (λ − law), C = α.
    for (var d = 0u; d < P.drives; d++) {
        let j = drive_joint(d);
        let angle = drive_is_angle(d);
        let c = coordinate(j, angle);
        let i = P.joint_rows + d;
        let cb = 6u * P.bodies + CONTROL_DRIVE * d;
        let mode = ctl(cb);
        let q_target = ctl(cb + 1u);
        let target_vel = ctl(cb + 2u);
        let ke = ctl(cb + 3u);
        let kd = ctl(cb + 4u);
        var alpha: f32;
        var law: f32;
        if mode < 0.5 {
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
            let pj = joint_parent(j);
            let cj = joint_child(j);
            let qdot = dot(c.al, vel_lin(pj)) + dot(c.aa, vel_ang(pj)) + dot(c.bl, vel_lin(cj))
                + dot(c.ba, vel_ang(cj));
            law = -ke * (qdot - target_vel);
        }
        let res = alpha * h * (sget(s_l + i) - law);
        set_jac(i, c.al, c.aa, c.bl, c.ba);
        sset(s_res + i, res);
        sset(s_creg + i, alpha);
        ev.merit += res * res;
        ev.drive_norm = max(ev.drive_norm, abs(res));
    }
    // Dynamics, gathered per body over its rows.
    for (var b = 0u; b < P.bodies; b++) {
        if !body_dynamic(b) {
            continue;
        }
        let m = body_mass(b);
        let q = pose(b).q;
        let q0 = start_pose(b).q;
        let u = sget3(s_u + 6u * b);
        let w = sget3(s_u + 6u * b + 3u);
        let f_ext = vec3<f32>(ctl(6u * b), ctl(6u * b + 1u), ctl(6u * b + 2u));
        let t_ext = vec3<f32>(ctl(6u * b + 3u), ctl(6u * b + 4u), ctl(6u * b + 5u));
        var hl = m * (u - start_lin(b)) - h * (m * P.gravity + f_ext);
        var ha = momentum_ang(b, q, w) - momentum_ang(b, q0, start_ang(b)) - h * t_ext;
        let a0 = model_u[P.adj_offset_base_u + b];
        let a1 = model_u[P.adj_offset_base_u + b + 1u];
        for (var a = a0; a < a1; a++) {
            let i = model_u[P.adj_base_u + 2u * a];
            let side = model_u[P.adj_base_u + 2u * a + 1u];
            let hl_i = h * sget(s_l + i);
            hl -= hl_i * jac_lin(i, side);
            ha -= hl_i * jac_ang(i, side);
        }
        sset3(s_hd + 6u * b, hl);
        sset3(s_hd + 6u * b + 3u, ha);
        let dvl = hl * body_inv_mass(b);
        let dva = inverse_ang(b, q, ha);
        sset3(s_dv + 6u * b, dvl);
        sset3(s_dv + 6u * b + 3u, dva);
        let gy = body_gyration(b);
        ev.merit += dot(dvl, dvl) + gy * gy * dot(dva, dva);
        ev.dyn_norm = max(ev.dyn_norm, max(amax3(dvl), gy * amax3(dva)));
    }
    ev.merit *= 0.5;
    return ev;
}

fn converged(e: Eval) -> bool {
    return e.dyn_norm <= P.velocity_tolerance && e.drive_norm <= P.velocity_tolerance
        && e.joint_norm <= P.position_tolerance;
}

// ---- geometric stiffness (angular diagonal blocks) ------------------------------------

fn outer3(a: vec3<f32>, b: vec3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(a * b.x, a * b.y, a * b.z);
}
fn skew3(v: vec3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(
        vec3<f32>(0.0, v.z, -v.y),
        vec3<f32>(-v.z, 0.0, v.x),
        vec3<f32>(v.y, -v.x, 0.0),
    );
}
fn ident3() -> mat3x3<f32> {
    return mat3x3<f32>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0));
}
// r eᵀ − (e·r) I: how the torque r × (λ e) turns under a rotation of r.
fn lever(r: vec3<f32>, e: vec3<f32>) -> mat3x3<f32> {
    return outer3(r, e) - dot(e, r) * ident3();
}
fn add_kang(b: u32, m: mat3x3<f32>) {
    if !body_dynamic(b) {
        return;
    }
    let o = s_kang + 9u * b;
    sset_mat(o, sget_mat(o) + m);
}

// ∂τ/∂φ of each row's torque on its own body (axion-constraints' stiffness blocks,
// angular–angular, same body), summed per body.
fn accumulate_stiffness() {
    for (var b = 0u; b < P.bodies; b++) {
        sset_mat(s_kang + 9u * b, mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0)));
    }
    for (var j = 0u; j < P.joints; j++) {
        let g = joint_geo(j);
        let kind = joint_kind(j);
        let pj = joint_parent(j);
        let cj = joint_child(j);
        let first = joint_first_row(j);
        for (var k = 0u; k < joint_row_count(j); k++) {
            let lam = sget(s_l + first + k);
            let point = kind != PRISMATIC && k < 3u;
            var ang_k = NONE;
            if kind == PRISMATIC && k >= 2u {
                ang_k = k - 2u;
            }
            if kind == FIXED && k >= 3u {
                ang_k = k - 3u;
            }
            if point {
                let e = unit_axis(k);
                add_kang(cj, lambda_scale(lever(g.r_c, e), lam));
                add_kang(pj, lambda_scale(lever(g.r_p, e), -lam));
            } else if kind == REVOLUTE {
                let a_c = quat_rotate(g.fc_q, joint_axis(j));
                let b_p = quat_rotate(g.fp_q, jf3(j, 17u + 3u * (k - 3u)));
                let dd = dot(a_c, b_p);
                add_kang(cj, lambda_scale(outer3(a_c, b_p) - dd * ident3(), lam));
                add_kang(pj, lambda_scale(dd * ident3() - outer3(b_p, a_c), -lam));
            } else if kind == PRISMATIC && k < 2u {
                let n = quat_rotate(g.fp_q, jf3(j, 17u + 3u * k));
                add_kang(cj, lambda_scale(lever(g.r_c, n), lam));
                add_kang(pj, lambda_scale(skew3(g.r_p + g.d) * skew3(n), lam));
            } else if ang_k != NONE {
                let rel = quat_mul(quat_conj(g.fp_q), g.fc_q);
                var s = 1.0;
                if rel.w < 0.0 {
                    s = -1.0;
                }
                let e = unit_axis(ang_k);
                let r = quat_matrix(g.fp_q);
                let gw = r * ((e * rel.w + cross(rel.xyz, e)) * s);
                let m = outer3(e, rel.xyz) + skew3(e) * (rel.w * ident3() - skew3(rel.xyz));
                let a = r * m * transpose(r) * (0.5 * s);
                add_kang(cj, lambda_scale(a, -lam));
                add_kang(pj, lambda_scale(a - skew3(gw), -lam));
            }
        }
    }
}

fn lambda_scale(m: mat3x3<f32>, s: f32) -> mat3x3<f32> {
    return m * s;
}

// Inverse of a symmetric positive definite 3×3 matrix, or a zero matrix if it is not.
fn spd_inverse(m: mat3x3<f32>) -> mat3x3<f32> {
    let m11 = m[0][0];
    let m2 = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    let m3 = determinant(m);
    if !(m11 > 0.0 && m2 > 0.0 && m3 > 0.0) {
        return mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    }
    let c0 = cross(m[1], m[2]);
    let c1 = cross(m[2], m[0]);
    let c2 = cross(m[0], m[1]);
    return transpose(mat3x3<f32>(c0, c1, c2)) * (1.0 / m3);
}

// The angular block of the Newton matrix's body diagonal: I_w(θ⁺) − h² sym(K_bb),
// inverted; falls back to I_w⁻¹ where the sum is not positive definite.
fn prepare_mass() {
    let h = P.h;
    for (var b = 0u; b < P.bodies; b++) {
        if !body_dynamic(b) {
            continue;
        }
        let q = pose(b).q;
        let r = quat_matrix(q);
        let iw_inv = r * body_inv_inertia(b) * transpose(r);
        var inv = iw_inv;
        if P.geometric_stiffness != 0u {
            let iw = r * body_inertia(b) * transpose(r);
            let k = sget_mat(s_kang + 9u * b);
            let sym = (k + transpose(k)) * 0.5;
            let cand = spd_inverse(iw - sym * (h * h));
            if cand[0][0] > 0.0 {
                inv = cand;
            }
        }
        sset_mat(s_minv + 9u * b, inv);
    }
}

fn minv_ang(b: u32, t: vec3<f32>) -> vec3<f32> {
    return sget_mat(s_minv + 9u * b) * t;
}

// ---- matrix-free Schur operator -------------------------------------------------------

// dst = (J M⁻¹ Jᵀ + C + δ) src, with t_b = M_b⁻¹ Σ_{rows i of b} J_{i,b}ᵀ src_i gathered
// over the body → rows adjacency.
fn apply_schur(src: u32, dst: u32) {
    for (var b = 0u; b < P.bodies; b++) {
        if !body_dynamic(b) {
            continue;
        }
        var fl = vec3<f32>(0.0);
        var fa = vec3<f32>(0.0);
        let a0 = model_u[P.adj_offset_base_u + b];
        let a1 = model_u[P.adj_offset_base_u + b + 1u];
        for (var a = a0; a < a1; a++) {
            let i = model_u[P.adj_base_u + 2u * a];
            let side = model_u[P.adj_base_u + 2u * a + 1u];
            let x = sget(src + i);
            fl += x * jac_lin(i, side);
            fa += x * jac_ang(i, side);
        }
        sset3(s_t + 6u * b, fl * body_inv_mass(b));
        sset3(s_t + 6u * b + 3u, minv_ang(b, fa));
    }
    for (var i = 0u; i < P.rows; i++) {
        var v = sget(s_creg + i) * sget(src + i);
        for (var side = 0u; side < 2u; side++) {
            let b = row_body(i, side);
            if body_dynamic(b) {
                v += dot(jac_lin(i, side), sget3(s_t + 6u * b))
                    + dot(jac_ang(i, side), sget3(s_t + 6u * b + 3u));
            }
        }
        sset(dst + i, v);
    }
}

fn dot_rows(a: u32, b: u32) -> f32 {
    var s = 0.0;
    for (var i = 0u; i < P.rows; i++) {
        s += sget(a + i) * sget(b + i);
    }
    return s;
}

// w_i = J_i M⁻¹ J_iᵀ for row i (with the Newton matrix's body blocks).
fn row_weight(i: u32) -> f32 {
    var w = 0.0;
    for (var side = 0u; side < 2u; side++) {
        let b = row_body(i, side);
        if body_dynamic(b) {
            let jl = jac_lin(i, side);
            let ja = jac_ang(i, side);
            w += dot(jl, jl) * body_inv_mass(b) + dot(ja, minv_ang(b, ja));
        }
    }
    return w;
}

// The Newton direction: Schur system A Δλ = (J M⁻¹ h_dyn − h_c)/h solved by Jacobi-
// preconditioned conjugate residual from Δλ = 0, then Δu = M⁻¹(h Jᵀ Δλ − h_dyn).
// Returns false on a non-finite result.
fn direction() -> bool {
    let h = P.h;
    accumulate_stiffness();
    prepare_mass();
    for (var i = 0u; i < P.rows; i++) {
        // rhs and preconditioner; C_i gets the regularisation δ w_i.
        var jdv = 0.0;
        for (var side = 0u; side < 2u; side++) {
            let b = row_body(i, side);
            if body_dynamic(b) {
                let dvl = sget3(s_hd + 6u * b) * body_inv_mass(b);
                let dva = minv_ang(b, sget3(s_hd + 6u * b + 3u));
                jdv += dot(jac_lin(i, side), dvl) + dot(jac_ang(i, side), dva);
            }
        }
        sset(s_rhs + i, (jdv - sget(s_res + i)) / h);
        let w = row_weight(i);
        let c = sget(s_creg + i) + P.regularization * w;
        sset(s_creg + i, c);
        let diag = w + c;
        var pre = 0.0;
        if diag > 0.0 {
            pre = 1.0 / diag;
        }
        sset(s_pre + i, pre);
        sset(s_x + i, 0.0);
        sset(s_r + i, sget(s_rhs + i));
        sset(s_z + i, pre * sget(s_rhs + i));
    }
    let bb = dot_rows(s_rhs, s_rhs);
    if bb > 0.0 {
        apply_schur(s_z, s_az);
        for (var i = 0u; i < P.rows; i++) {
            sset(s_p + i, sget(s_z + i));
            sset(s_ap + i, sget(s_az + i));
        }
        var rho = dot_rows(s_z, s_az);
        let tol2 = P.linear_tolerance * P.linear_tolerance * bb;
        // The iterate of smallest recurrence residual is kept: in f32 the residual
        // stagnates near rounding level and later iterates only add noise.
        var best = bb;
        for (var i = 0u; i < P.rows; i++) {
            sset(s_xb + i, 0.0);
        }
        for (var it = 0u; it < P.max_linear; it++) {
            for (var i = 0u; i < P.rows; i++) {
                sset(s_y + i, sget(s_pre + i) * sget(s_ap + i));
            }
            let yap = dot_rows(s_y, s_ap);
            var alpha = 0.0;
            if yap > 0.0 {
                alpha = rho / yap;
            }
            if !(alpha > 0.0 && finite(alpha)) {
                break;
            }
            for (var i = 0u; i < P.rows; i++) {
                sset(s_x + i, sget(s_x + i) + alpha * sget(s_p + i));
                sset(s_r + i, sget(s_r + i) - alpha * sget(s_ap + i));
                sset(s_z + i, sget(s_z + i) - alpha * sget(s_y + i));
            }
            let rr = dot_rows(s_r, s_r);
            if !finite(rr) {
                break;
            }
            if rr < best {
                best = rr;
                for (var i = 0u; i < P.rows; i++) {
                    sset(s_xb + i, sget(s_x + i));
                }
            }
            if rr <= tol2 {
                break;
            }
            apply_schur(s_z, s_az);
            let rho_new = dot_rows(s_z, s_az);
            var beta = 0.0;
            if rho > 0.0 {
                beta = rho_new / rho;
            }
            rho = rho_new;
            for (var i = 0u; i < P.rows; i++) {
                sset(s_p + i, sget(s_z + i) + beta * sget(s_p + i));
                sset(s_ap + i, sget(s_az + i) + beta * sget(s_ap + i));
            }
        }
        for (var i = 0u; i < P.rows; i++) {
            sset(s_x + i, sget(s_xb + i));
        }
    }
    var ok = true;
    for (var i = 0u; i < P.rows; i++) {
        if !finite(sget(s_x + i)) {
            ok = false;
        }
    }
    for (var b = 0u; b < P.bodies; b++) {
        if !body_dynamic(b) {
            continue;
        }
        var fl = vec3<f32>(0.0);
        var fa = vec3<f32>(0.0);
        let a0 = model_u[P.adj_offset_base_u + b];
        let a1 = model_u[P.adj_offset_base_u + b + 1u];
        for (var a = a0; a < a1; a++) {
            let i = model_u[P.adj_base_u + 2u * a];
            let side = model_u[P.adj_base_u + 2u * a + 1u];
            let x = h * sget(s_x + i);
            fl += x * jac_lin(i, side);
            fa += x * jac_ang(i, side);
        }
        let dul = (fl - sget3(s_hd + 6u * b)) * body_inv_mass(b);
        let dua = minv_ang(b, fa - sget3(s_hd + 6u * b + 3u));
        sset3(s_du + 6u * b, dul);
        sset3(s_du + 6u * b + 3u, dua);
        if !(finite(dot(dul, dul)) && finite(dot(dua, dua))) {
            ok = false;
        }
    }
    return ok;
}

// ---- the step -------------------------------------------------------------------------

// u ← u_c + α Δu, λ ← λ_c + α Δλ.
fn set_trial(alpha: f32) {
    for (var k = 0u; k < 6u * P.bodies; k++) {
        sset(s_u + k, sget(s_uc + k) + alpha * sget(s_du + k));
    }
    for (var i = 0u; i < P.rows; i++) {
        sset(s_l + i, sget(s_lc + i) + alpha * sget(s_x + i));
    }
}

// Per-world Newton status, in the `stats` buffer (interleaved like everything else).
const ST_ITERATIONS: u32 = 0u;
const ST_CONVERGED: u32 = 1u;
const ST_DYNAMICS: u32 = 2u;
const ST_JOINTS: u32 = 3u;
const ST_DRIVES: u32 = 4u;
const ST_BACKTRACKS: u32 = 5u;
const ST_FAILED: u32 = 6u;
const ST_MERIT: u32 = 7u;
const ST_ACTIVE: u32 = 8u;

fn status(slot: u32) -> f32 {
    return stats[slot * P.worlds + wid];
}
fn set_status(slot: u32, v: f32) {
    stats[slot * P.worlds + wid] = v;
}
fn store_eval(e: Eval) {
    set_status(ST_DYNAMICS, e.dyn_norm);
    set_status(ST_JOINTS, e.joint_norm);
    set_status(ST_DRIVES, e.drive_norm);
    set_status(ST_MERIT, e.merit);
    set_status(ST_CONVERGED, select(0.0, 1.0, converged(e)));
}

// Sets up the invocation's world; false for the padding invocations of the last group.
fn enter(gid: vec3<u32>) -> bool {
    wid = gid.x;
    if wid >= P.worlds {
        return false;
    }
    layout_scratch();
    return true;
}

// The step is four kernels, dispatched in this order by the host: `step_begin`, then
// `max_newton` times `step_direction` and `step_search`, then `step_finish`. A world
// that has converged, stalled or failed stays inactive in the later dispatches.

// Starts from u⁻ and the previous step's multipliers; evaluates the residuals.
@compute @workgroup_size(64)
fn step_begin(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) {
        return;
    }
    for (var k = 0u; k < 6u * P.bodies; k++) {
        sset(s_u + k, stget(7u * P.bodies + k));
        sset(s_du + k, 0.0);
    }
    for (var i = 0u; i < P.rows; i++) {
        sset(s_l + i, stget(13u * P.bodies + i));
    }
    // Drive coordinates at the start of the step (for the damping term).
    for (var b = 0u; b < P.bodies; b++) {
        let p = start_pose(b);
        sset3(s_pose + 7u * b, p.x);
        sset3(s_pose + 7u * b + 3u, p.q.xyz);
        sset(s_pose + 7u * b + 6u, p.q.w);
    }
    for (var d = 0u; d < P.drives; d++) {
        sset(s_dstart + d, coordinate(drive_joint(d), drive_is_angle(d)).value);
    }
    let e = evaluate();
    store_eval(e);
    set_status(ST_ITERATIONS, 0.0);
    set_status(ST_BACKTRACKS, 0.0);
    set_status(ST_FAILED, 0.0);
    set_status(ST_ACTIVE, select(1.0, 0.0, converged(e) || P.max_newton == 0u));
}

// The Newton direction of an active world (the residuals of its current iterate are
// in scratch); saves the current iterate.
@compute @workgroup_size(64)
fn step_direction(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) || status(ST_ACTIVE) < 0.5 {
        return;
    }
    if !direction() {
        set_status(ST_FAILED, status(ST_FAILED) + 1.0);
        set_status(ST_ACTIVE, 0.0);
        return;
    }
    set_status(ST_ITERATIONS, status(ST_ITERATIONS) + 1.0);
    for (var k = 0u; k < 6u * P.bodies; k++) {
        sset(s_uc + k, sget(s_u + k));
    }
    for (var i = 0u; i < P.rows; i++) {
        sset(s_lc + i, sget(s_l + i));
    }
}

// Backtracking line search along the direction (Armijo on the merit ½|F|²): each
// accepted iterate is better than the last, so the final iterate is the best one
// seen. A world stops when converged, at the iteration cap, or when no step length
// reduces the merit (stalled: it keeps its current iterate).
@compute @workgroup_size(64)
fn step_search(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) || status(ST_ACTIVE) < 0.5 {
        return;
    }
    let merit = status(ST_MERIT);
    var alpha = 1.0;
    var backtracks = status(ST_BACKTRACKS);
    for (var k = 0u; k <= P.max_backtracks; k++) {
        set_trial(alpha);
        let trial = evaluate();
        if finite(trial.merit) && trial.merit <= (1.0 - 1e-4 * alpha) * merit {
            store_eval(trial);
            set_status(ST_BACKTRACKS, backtracks);
            let done = converged(trial) || status(ST_ITERATIONS) >= f32(P.max_newton);
            set_status(ST_ACTIVE, select(1.0, 0.0, done));
            return;
        }
        if k < P.max_backtracks {
            backtracks += 1.0;
        }
        alpha *= 0.5;
    }
    set_status(ST_BACKTRACKS, backtracks);
    set_trial(0.0);
    store_eval(evaluate());
    set_status(ST_ACTIVE, 0.0);
}

// Writes the end-of-step state (static bodies keep their poses).
@compute @workgroup_size(64)
fn step_finish(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) {
        return;
    }
    for (var k = 0u; k < 7u * P.bodies; k++) {
        stset(k, sget(s_pose + k));
    }
    for (var k = 0u; k < 6u * P.bodies; k++) {
        stset(7u * P.bodies + k, sget(s_u + k));
    }
    for (var i = 0u; i < P.rows; i++) {
        stset(13u * P.bodies + i, sget(s_l + i));
    }
}

// For the tests: every joint row c(q) and drive coordinate q at the state's poses,
// with their Jacobians, into the residual and Jacobian slots of scratch.
@compute @workgroup_size(64)
fn probe_rows(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) {
        return;
    }
    for (var b = 0u; b < P.bodies; b++) {
        let p = start_pose(b);
        sset3(s_pose + 7u * b, p.x);
        sset3(s_pose + 7u * b + 3u, p.q.xyz);
        sset(s_pose + 7u * b + 6u, p.q.w);
    }
    for (var j = 0u; j < P.joints; j++) {
        let g = joint_geo(j);
        let first = joint_first_row(j);
        for (var k = 0u; k < joint_row_count(j); k++) {
            let row = joint_row(j, g, k);
            sset(s_res + first + k, row.err);
            set_jac(first + k, row.al, row.aa, row.bl, row.ba);
        }
    }
    for (var d = 0u; d < P.drives; d++) {
        let c = coordinate(drive_joint(d), drive_is_angle(d));
        sset(s_res + P.joint_rows + d, c.value);
        set_jac(P.joint_rows + d, c.al, c.aa, c.bl, c.ba);
    }
}
