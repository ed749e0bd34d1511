// The implicit Newton step of axion-rs for joints, drives, contacts and friction, one
// invocation per world in each of four kernels (step_begin, step_direction,
// step_search, step_finish; crates/axion-gpu/src/step.rs is the twin and documents the
// equations), plus probe_rows, which evaluates the rows for the tests. Needs quat.wgsl
// and narrow.wgsl prepended.
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
    pairs: u32,
    pair_base_u: u32,
    pair_base_f: u32,
    contact_row0: u32,
    h: f32,
    velocity_tolerance: f32,
    position_tolerance: f32,
    linear_tolerance: f32,
    gravity: vec3<f32>,
    regularization: f32,
    contact_margin: f32,
    contact_tolerance: f32,
    fb_eps_sq: f32,
    // Linear-solver iterations per dispatch (see `linear_iterate`).
    linear_chunk: u32,
    // Joint-limit slots: count, first word in model_u, first float in model_f, first row.
    limits: vec4<u32>,
}

// Whether the model has contact pairs or joint limits (unilateral rows): a pipeline
// constant, so that models without run kernels without that code (lavapipe ran the
// pendulum 3–7 times slower with it compiled in but never executed).
override CONTACTS: bool = true;
// GpuSettings::slip_coupling (see `couple_to_previous`).
override SLIP_COUPLING: bool = false;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> model_f: array<f32>;
@group(0) @binding(2) var<storage, read> model_u: array<u32>;
@group(0) @binding(3) var<storage, read_write> state: array<f32>;
@group(0) @binding(4) var<storage, read> control: array<f32>;
@group(0) @binding(5) var<storage, read_write> scratch: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;
// The indirect dispatch arguments (x, y, z workgroups) of the Newton iterations' kernels,
// one triple per iteration, then one per `step_direction_more` of each iteration
// (`ask_dispatch`): a world that stays active asks for all of its chunk's workgroups in
// its next iteration, a world whose linear solve goes on for the next continuation
// (atomicMax of one value for every world, so the result does not depend on the order).
// The host clears them before each step; a dispatch that no world needs has zero
// workgroups. Two buffers take turns, one read as the arguments while the other is
// written (`Chunk` in backend.rs).
@group(1) @binding(0) var<storage, read_write> next_dispatch: array<atomic<u32>>;

const NONE: u32 = 0xffffffffu;
// Invocations per workgroup (`WORKGROUP` in step.rs).
const WORKGROUP: u32 = 64u;
const BODY_F: u32 = 24u;
const JOINT_F: u32 = 24u;
const JOINT_U: u32 = 8u;
const DRIVE_U: u32 = 4u;
const CONTROL_DRIVE: u32 = 5u;
const PAIR_U: u32 = 8u;
const PAIR_F: u32 = 28u;
const CONTACT_S: u32 = 36u;
const LIMIT_U: u32 = 4u;
const LIMIT_F: u32 = 2u;
const HALF_SPACE: u32 = 4u;
// Offsets in a contact slot: active flag, normal n (from b to a), the contact points
// relative to the COMs in body axes and the thicknesses (p_a, t_a, p_b, t_b), tangents
// t1 and t2, μ_g, the scaling s (2), lever arms ρ = R(θ⁻) p of a and b, effective
// inverse masses (w_n, w_t1, w_t2), friction basis e1 (2) of the current iterate; the
// start-of-step gap g⁻, the approach velocity, the velocity bias b and whether the
// normal row is velocity-level (restitution).
const C_ACTIVE: u32 = 0u;
const C_N: u32 = 1u;
const C_PA: u32 = 4u;
const C_TA: u32 = 7u;
const C_PB: u32 = 8u;
const C_TB: u32 = 11u;
const C_T1: u32 = 12u;
const C_T2: u32 = 15u;
const C_MU: u32 = 18u;
const C_S: u32 = 19u;
const C_RHOA: u32 = 21u;
const C_RHOB: u32 = 24u;
const C_W: u32 = 27u;
const C_E: u32 = 30u;
const C_GAP0: u32 = 32u;
const C_APPROACH: u32 = 33u;
const C_BIAS: u32 = 34u;
const C_BOUNCE: u32 = 35u;
// Contact persistence and restitution (axion-cpu, axion-constraints' contact::OPEN_GAP):
// a contact persists from the previous step in its slot if the normals are within
// PERSIST_COS and a lever arm (world axes) moved less than PERSIST_DISTANCE; one that
// was still open (g⁻ > OPEN_GAP) keeps its approach velocity. A bouncing contact removes
// BAUMGARTE of a penetration per step.
const PERSIST_DISTANCE: f32 = 5e-3;
const PERSIST_COS: f32 = 0.99;
const OPEN_GAP: f32 = 1e-6;
const BAUMGARTE: f32 = 0.2;
// friction::symmetric and friction::projection of axion-constraints.
const STICK_REGULARIZATION: f32 = 1e-6;
const KAPPA_MIN: f32 = 1e-9;
const SLIP_BAND: f32 = 1e-6;
// Below this ∂φ/∂g a contact's normal force step is fixed (see `evaluate`).
const FB_FIX_BELOW: f32 = 1e-3;

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
var<private> s_hdf: u32;
var<private> s_mu: u32;
var<private> s_fix: u32;
var<private> s_fixv: u32;
var<private> s_con: u32;
var<private> s_ub: u32;
var<private> s_lb: u32;
var<private> s_lim: u32;
var<private> s_cpl: u32;

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
    s_dstart = o; o += P.drives;
    s_hdf = o; o += 6u * b;
    s_mu = o; o += r;
    s_fix = o; o += r;
    s_fixv = o; o += r;
    s_ub = o; o += 6u * b;
    s_lb = o; o += r;
    s_lim = o; o += 2u * P.limits.x;
    s_cpl = o; o += r;
    s_con = o;
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
    return model_u[P.drive_base_u + d * DRIVE_U + 1u] == 0u;
}

// ---- contacts ---------------------------------------------------------------------------

// Pair p: bodies a and b, shape kinds (0 sphere, 1 box, 2 capsule, 3 cylinder,
// 4 half-space; see step.rs), anisotropy (0 none, 1 on a, 2 on b), first slot, slots.
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
            let vn = dot(m.n, vel_lin(a) + cross(vel_ang(a), rho_a) - vel_lin(b) - cross(vel_ang(b), rho_b));
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
            sset3(c + C_PA, quat_rotate(quat_conj(pa.q), rho_a));
            sset(c + C_TA, m.ta);
            sset3(c + C_PB, quat_rotate(quat_conj(pb.q), rho_b));
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
        let surface_a = pa.x + quat_rotate(pa.q, sget3(c + C_PA)) - n * sget(c + C_TA);
        let surface_b = pb.x + quat_rotate(pb.q, sget3(c + C_PB)) + n * sget(c + C_TB);
        res_n = unilateral_row(i, dot(n, surface_a - surface_b), h * h * w.x, false);
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
    let y = lam - v * rho_t;
    let radius = sget(c + C_MU) * max(lam_n, 0.0);
    let y_norm = length(y);
    var residual: vec2<f32>;
    if radius > 0.0 && y_norm < radius * (1.0 - SLIP_BAND) {
        // Stick: rows v̂_k + ε λ̂_k with ε = 1e-6/ρ̂, compliance ε/h.
        let eps = STICK_REGULARIZATION / rho_t;
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
        residual = s * v;
    } else {
        // Slip along ŷ, κ = R/|y|: the force along ŷ is set (Δλ̂_ŷ = R − ŷ·λ̂); one row
        // across it, e·λ̂/(ρ̂κ) with compliance (1 − κ)/(ρ̂κ h); below KAPPA_MIN the
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
            sset(s_creg + i + 2u, max((1.0 - kappa) / rk, 0.0) / h);
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

// ---- joint limits ---------------------------------------------------------------------
//
// Limit slot k (one per finite bound of a joint's range, after the contact rows): joint,
// coordinate (0 angle, 1 displacement), side (0 lower, 1 upper) in model_u; the bound b
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
    let angle = limit_u(k, 1u) == 0u;
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
    contact_norm: f32,
    friction_norm: f32,
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

// Poses q⁺ = q⁻ ⊕ h G u⁺, every row (residual, force Jacobian, compliance, the
// multiplier μ_i its Jacobian carries, fixed force steps), the dynamics residual
// h_dyn = M̃(θ⁺)u⁺ − M̃(θ⁻)u⁻ − h f − h Σ J_iᵀμ_i and the norms.
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
    var ev = Eval(0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
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
            sset(s_mu + i, sget(s_l + i));
            sset(s_fix + i, 0.0);
            ev.merit += res * res;
            ev.joint_norm = max(ev.joint_norm, abs(res * h));
        }
    }
    // Drive rows: h = α h (λ − law), C = α; a force drive's row is λ = τ (α = 1/h).
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
        var moves = true;
        if mode > 2.5 {
            // Armature a = ke: λ = −a (q̇⁺ − q̇⁻)/h, α = 1/a; s_dstart holds q̇⁻.
            alpha = 1.0 / ke;
            law = -ke * (coordinate_rate(j, c) - sget(s_dstart + d)) / h;
        } else if mode > 1.5 {
            // Force mode with τ = 0 (the host refuses others): λ = 0, decoupled.
            alpha = 1.0 / h;
            law = 0.0;
            moves = false;
        } else if mode < 0.5 {
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
        ev.merit += res * res;
        ev.drive_norm = max(ev.drive_norm, abs(res));
    }
    for (var k = 0u; CONTACTS && k < contact_slots(); k++) {
        let cn = contact_rows(k);
        ev.merit += cn.merit;
        ev.contact_norm = max(ev.contact_norm, cn.normal);
        ev.friction_norm = max(ev.friction_norm, cn.friction);
    }
    if CONTACTS {
        let lr = limit_rows();
        ev.merit += lr.x;
        ev.contact_norm = max(ev.contact_norm, lr.y);
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
            let hl_i = h * sget(s_mu + i);
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
        && e.joint_norm <= P.position_tolerance && e.contact_norm <= P.contact_tolerance
        && e.friction_norm <= P.contact_tolerance;
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

// dst = (J M⁻¹ Fᵀ + C + δ) src, with t_b = M_b⁻¹ Σ_{rows i of b} J_{i,b}ᵀ x_i gathered
// over the body → rows adjacency: x_i = src_i for a free row, and for a fixed row its
// coupling to the previous one (zero without SLIP_COUPLING). Without couplings F = J and
// the operator is symmetric.
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
            var x = sget(src + i);
            if SLIP_COUPLING && sget(s_fix + i) > 0.5 {
                x = coupled_entry(src, i);
            }
            fl += x * jac_lin(i, side);
            fa += x * jac_ang(i, side);
        }
        sset3(s_t + 6u * b, fl * body_inv_mass(b));
        sset3(s_t + 6u * b + 3u, minv_ang(b, fa));
    }
    for (var i = 0u; i < P.rows; i++) {
        if CONTACTS && sget(s_fix + i) > 0.5 {
            sset(dst + i, 0.0);
            continue;
        }
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

// The Newton direction, first part: the fixed rows' steps Δλ_f are moved to the
// right-hand side, h'_dyn = h_dyn − h J_fᵀ Δλ_f, and the Schur system
// A Δλ = (J M⁻¹ h'_dyn − h_c)/h of the other rows is solved from Δλ = 0 by
// Jacobi-preconditioned conjugate residual, or ORTHOMIN with SLIP_COUPLING (into s_x;
// see `update` for the rest).
fn solve() {
    let h = P.h;
    accumulate_stiffness();
    prepare_mass();
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
            if CONTACTS && sget(s_fix + i) > 0.5 {
                let side = model_u[P.adj_base_u + 2u * a + 1u];
                let x = h * sget(s_fixv + i);
                fl += x * jac_lin(i, side);
                fa += x * jac_ang(i, side);
            }
        }
        sset3(s_hdf + 6u * b, sget3(s_hd + 6u * b) - fl);
        sset3(s_hdf + 6u * b + 3u, sget3(s_hd + 6u * b + 3u) - fa);
    }
    for (var i = 0u; i < P.rows; i++) {
        sset(s_x + i, 0.0);
        if CONTACTS && sget(s_fix + i) > 0.5 {
            sset(s_rhs + i, 0.0);
            sset(s_pre + i, 0.0);
            sset(s_r + i, 0.0);
            sset(s_z + i, 0.0);
            continue;
        }
        // rhs and preconditioner; C_i gets the regularisation δ w_i.
        var jdv = 0.0;
        for (var side = 0u; side < 2u; side++) {
            let b = row_body(i, side);
            if body_dynamic(b) {
                let dvl = sget3(s_hdf + 6u * b) * body_inv_mass(b);
                let dva = minv_ang(b, sget3(s_hdf + 6u * b + 3u));
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
        sset(s_r + i, sget(s_rhs + i));
        sset(s_z + i, pre * sget(s_rhs + i));
    }
    let bb = dot_rows(s_rhs, s_rhs);
    set_status(ST_LIN_IT, 0.0);
    set_status(ST_LIN_DONE, select(1.0, 0.0, bb > 0.0));
    set_status(ST_LIN_TOL, P.linear_tolerance * P.linear_tolerance * bb);
    if bb > 0.0 && !SLIP_COUPLING {
        conjugate_residual_start(bb);
    }
    linear_iterate();
}

// The linear solve runs at most `P.linear_chunk` iterations per dispatch and goes on in
// the next `step_direction_more`, its scalars in the world's statistics (ST_LIN_*) and
// its vectors in scratch. lavapipe (llvmpipe) counts the iterations of all loops of one
// kernel invocation against one budget of 65535 and cuts every later loop to a single
// pass once it is spent; the host sizes the chunk so that a dispatch stays inside it
// (`linear_chunk` in backend.rs), and `check_loops` reports a kernel that did not.
fn linear_iterate() {
    for (var k = 0u; k < P.linear_chunk; k++) {
        if status(ST_LIN_DONE) > 0.5 {
            return;
        }
        let it = u32(status(ST_LIN_IT));
        var done = it >= P.max_linear;
        if !done {
            set_status(ST_LIN_IT, f32(it + 1u));
            if SLIP_COUPLING {
                done = orthomin_iteration(it);
            } else {
                done = conjugate_residual_iteration(it);
            }
        }
        if done {
            set_status(ST_LIN_DONE, 1.0);
            if !SLIP_COUPLING {
                // The conjugate residual's result is its best iterate.
                for (var i = 0u; i < P.rows; i++) {
                    sset(s_x + i, sget(s_xb + i));
                }
            }
            return;
        }
    }
    // Not done after `(j + 1) chunk` iterations (this was dispatch j of the Newton
    // iteration, `step_direction` being dispatch 0): ask for continuation j + 1 =
    // it / chunk, at most `continuations()` of them (the cap ends the solve before).
    let next = u32(status(ST_LIN_IT)) / P.linear_chunk;
    if next >= 1u && next <= continuations() {
        let k = u32(status(ST_ITERATIONS));
        ask_dispatch(P.max_newton + k * continuations() + next - 1u);
    }
}

// The `step_direction_more` dispatches of a Newton iteration: ⌈(cap + 1) / chunk⌉ − 1,
// enough for the cap's iterations and the pass that ends the solve
// (`Batch::continuations` in backend.rs).
fn continuations() -> u32 {
    return (P.max_linear + P.linear_chunk) / P.linear_chunk - 1u;
}

// Jacobi-preconditioned conjugate residual for the symmetric Schur system, from x = 0
// with r = rhs and z = K r prepared by `solve`; the iterate of smallest recurrence
// residual is the result, in s_x (`linear_iterate`). Its start: p = z, Ap = Az.
// Every CR_RESTART iterations the conjugate residual restarts from its best iterate
// with the true residual r = rhs − A x_b, which the f32 recurrence drifts away from as
// the directions lose their conjugacy. Measured on lavapipe over 50 steps with a cap of
// 40 iterations: the three-body cylinder stack took 49 Newton iterations with restarts
// and 86 without. It does not make long solves safe: with a cap of 200 the 10-box
// pyramid converged in 26 of 50 steps with restarts and 1 without (40: every step).
const CR_RESTART: u32 = 20u;
fn conjugate_residual_restart() {
    apply_schur(s_xb, s_az);
    var rr = 0.0;
    for (var i = 0u; i < P.rows; i++) {
        let r = sget(s_rhs + i) - sget(s_az + i);
        sset(s_x + i, sget(s_xb + i));
        sset(s_r + i, r);
        sset(s_z + i, sget(s_pre + i) * r);
        rr += r * r;
    }
    conjugate_residual_start(rr);
}

fn conjugate_residual_start(bb: f32) {
    apply_schur(s_z, s_az);
    for (var i = 0u; i < P.rows; i++) {
        sset(s_p + i, sget(s_z + i));
        sset(s_ap + i, sget(s_az + i));
        sset(s_xb + i, sget(s_x + i));
    }
    set_status(ST_LIN_RHO, dot_rows(s_z, s_az));
    // The iterate of smallest recurrence residual is kept: in f32 the residual
    // stagnates near rounding level and later iterates only add noise.
    set_status(ST_LIN_BEST, bb);
}

// One conjugate residual iteration; true when the solve has ended (converged, or a
// breakdown: a non-positive or non-finite step).
fn conjugate_residual_iteration(it: u32) -> bool {
    if it > 0u && it % CR_RESTART == 0u {
        conjugate_residual_restart();
    }
    var yap = 0.0;
    for (var i = 0u; i < P.rows; i++) {
        let y = sget(s_pre + i) * sget(s_ap + i);
        sset(s_y + i, y);
        yap += y * sget(s_ap + i);
    }
    let rho = status(ST_LIN_RHO);
    var alpha = 0.0;
    if yap > 0.0 {
        alpha = rho / yap;
    }
    if !(alpha > 0.0 && finite(alpha)) {
        return true;
    }
    let rr = advance_iterate(alpha, s_p, s_ap, s_y);
    if !finite(rr) {
        return true;
    }
    if rr < status(ST_LIN_BEST) {
        set_status(ST_LIN_BEST, rr);
        for (var i = 0u; i < P.rows; i++) {
            sset(s_xb + i, sget(s_x + i));
        }
    }
    if rr <= status(ST_LIN_TOL) {
        return true;
    }
    apply_schur(s_z, s_az);
    let rho_new = dot_rows(s_z, s_az);
    var beta = 0.0;
    if rho > 0.0 {
        beta = rho_new / rho;
    }
    set_status(ST_LIN_RHO, rho_new);
    for (var i = 0u; i < P.rows; i++) {
        sset(s_p + i, sget(s_z + i) + beta * sget(s_p + i));
        sset(s_ap + i, sget(s_az + i) + beta * sget(s_ap + i));
    }
    return false;
}

// One step of length α along p: x ← x + α p, r ← r − α Ap and, for the conjugate
// residual (y ≠ NONE, y = K Ap), z ← z − α y; returns the new |r|².
fn advance_iterate(alpha: f32, p: u32, ap: u32, y: u32) -> f32 {
    var rr = 0.0;
    for (var i = 0u; i < P.rows; i++) {
        sset(s_x + i, sget(s_x + i) + alpha * sget(p + i));
        let r = sget(s_r + i) - alpha * sget(ap + i);
        sset(s_r + i, r);
        rr += r * r;
        if y != NONE {
            sset(s_z + i, sget(s_z + i) - alpha * sget(y + i));
        }
    }
    return rr;
}

// Truncated generalised conjugate residual, ORTHOMIN(2), for the Schur system of kernels
// compiled with SLIP_COUPLING (non-symmetric where a slip force is coupled), in every
// world whether coupled or not; iteration `it` (direction slot it mod 3). From x = 0
// with r = rhs: each direction starts from p = K r (K the Jacobi
// preconditioner) and is made K-orthogonal in its image to the last two,
// Ap ← Ap − Σ_j β_j Ap_j with β_j = (Ap, K Ap_j)/(Ap_j, K Ap_j) (p alike); the step
// α = (r, K Ap)/(Ap, K Ap) minimises the residual's K-norm along it, so that norm never
// grows, whatever the operator. On a symmetric operator the directions are, in exact
// arithmetic, those of the conjugate residual method; in f32 they are not (docs/gpu.md:
// the stack of 10 boxes). Result in s_x.
fn orthomin_iteration(it: u32) -> bool {
    let slot = it % 3u;
    let p = orthomin_direction(slot);
    let ap = orthomin_image(slot);
    for (var i = 0u; i < P.rows; i++) {
        sset(p + i, sget(s_pre + i) * sget(s_r + i));
    }
    apply_schur(p, ap);
    for (var j = 1u; j <= min(it, 2u); j++) {
        let o = (slot + 3u - j) % 3u;
        let po = orthomin_direction(o);
        let apo = orthomin_image(o);
        let beta = dot_weighted(ap, apo) / status(ST_LIN_NORM + o);
        for (var i = 0u; i < P.rows; i++) {
            sset(p + i, sget(p + i) - beta * sget(po + i));
            sset(ap + i, sget(ap + i) - beta * sget(apo + i));
        }
    }
    let nn = dot_weighted(ap, ap);
    let alpha = dot_weighted(s_r, ap) / nn;
    if !(nn > 0.0 && alpha != 0.0 && finite(alpha)) {
        return true;
    }
    set_status(ST_LIN_NORM + slot, nn);
    let rr = advance_iterate(alpha, p, ap, NONE);
    return !finite(rr) || rr <= status(ST_LIN_TOL);
}

// ORTHOMIN's direction k ∈ {0, 1, 2} and its image under the Schur operator.
fn orthomin_direction(k: u32) -> u32 {
    return select(select(s_z, s_y, k == 1u), s_p, k == 0u);
}
fn orthomin_image(k: u32) -> u32 {
    return select(select(s_xb, s_az, k == 1u), s_ap, k == 0u);
}

// Σ_i a_i K_i b_i.
fn dot_weighted(a: u32, b: u32) -> f32 {
    var s = 0.0;
    for (var i = 0u; i < P.rows; i++) {
        s += sget(a + i) * sget(s_pre + i) * sget(b + i);
    }
    return s;
}

// The Newton direction, second part: the fixed rows' steps join the solution,
// Δu = M⁻¹(h Jᵀ Δλ − h_dyn) over all rows, and friction steps, solved along the basis
// (e1, e2) of their contact, become tangent-frame forces Δλ_t = S(e1 Δ1 + e2 Δ2).
// Returns false on a non-finite result.
fn update() -> bool {
    let h = P.h;
    for (var i = 0u; i < P.rows; i++) {
        if CONTACTS && sget(s_fix + i) > 0.5 {
            var step = sget(s_fixv + i);
            if SLIP_COUPLING {
                step += coupled_entry(s_x, i);
            }
            sset(s_x + i, step);
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
    for (var k = 0u; CONTACTS && k < contact_slots(); k++) {
        let c = contact_slot(k);
        let i = contact_row(k) + 1u;
        let e1 = vec2<f32>(sget(c + C_E), sget(c + C_E + 1u));
        let e2 = vec2<f32>(-e1.y, e1.x);
        let s = vec2<f32>(sget(c + C_S), sget(c + C_S + 1u));
        let step = s * (e1 * sget(s_x + i) + e2 * sget(s_x + i + 1u));
        sset(s_x + i, step.x);
        sset(s_x + i + 1u, step.y);
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
const ST_CONTACTS: u32 = 9u;
const ST_FRICTION: u32 = 10u;
const ST_COUNT: u32 = 11u;
const ST_MERIT0: u32 = 12u;
const ST_BEST: u32 = 13u;
// 1 once a world lags the slip force's coupling to the normal force (`couple_to_previous`).
const ST_LAGGED: u32 = 14u;
// The linear solve between dispatches (`linear_iterate`): iterations done, whether it
// has ended, the squared tolerance on |r|², the conjugate residual's ρ = (z, Az) and
// smallest |r|², ORTHOMIN's three (Ap_k, K Ap_k).
const ST_LIN_IT: u32 = 15u;
const ST_LIN_DONE: u32 = 16u;
const ST_LIN_TOL: u32 = 17u;
const ST_LIN_RHO: u32 = 18u;
const ST_LIN_BEST: u32 = 19u;
const ST_LIN_NORM: u32 = 20u;
// 1 once a kernel found its loops cut short (`check_loops`); cleared only by an upload,
// since every later step starts from the wrong state.
const ST_TRUNCATED: u32 = 23u;

// With contacts, a full step is refused only when its merit exceeds the step's first
// merit by this factor (or is not finite), as on the CPU.
const EXPLOSION: f32 = 1e9;
const FULL_STEPS: f32 = 12.0;

// Marks the world active or not for its next Newton iteration; an active world asks
// for that iteration's dispatch (triple `iterations done` of next_dispatch).
fn set_active(on: bool) {
    set_status(ST_ACTIVE, select(0.0, 1.0, on));
    if on {
        ask_dispatch(u32(status(ST_ITERATIONS)));
    }
}
// Asks for all of the chunk's workgroups in the dispatch of triple `slot` of
// next_dispatch: slot k is Newton iteration k's, slot max_newton + k c + j − 1 its j-th
// `step_direction_more` (c = continuations()).
fn ask_dispatch(slot: u32) {
    let at = 3u * slot;
    atomicMax(&next_dispatch[at], (P.worlds + WORKGROUP - 1u) / WORKGROUP);
    atomicMax(&next_dispatch[at + 1u], 1u);
    atomicMax(&next_dispatch[at + 2u], 1u);
}
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
    set_status(ST_CONTACTS, e.contact_norm);
    set_status(ST_FRICTION, e.friction_norm);
    set_status(ST_MERIT, e.merit);
    set_status(ST_CONVERGED, select(0.0, 1.0, converged(e)));
}

// lavapipe (llvmpipe) counts the passes of all loops of one kernel invocation against a
// single budget of 65535 and, once it is spent, runs every later loop for one pass only
// (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS): the results are then wrong, and since SIMD lanes
// share the count, they depend on the worlds beside. Every kernel ends with this check:
// a loop of two passes that ran one marks the step (`GpuError::LoopBudget` on the host).
// Hardware drivers have no such budget and never mark it.
fn check_loops() {
    var passes = 0u;
    // The bound is not a constant, so that the compiler cannot unroll the loop.
    for (var k = 0u; k < 2u + (P.worlds >> 31u); k++) {
        passes += 1u;
    }
    if passes != 2u {
        set_status(ST_TRUNCATED, 1.0);
    }
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

// The step is six kernels, dispatched in this order by the host: `step_begin`, then
// `max_newton` times `step_direction` (and `step_direction_more` as often as the linear
// iteration cap needs), `step_update` and `step_search`, then `step_finish`. A world
// that has converged, stalled or failed stays inactive in the
// later dispatches. The iterations are dispatched indirectly, with the workgroups the
// still active worlds asked for (set_active): none once every world has stopped.

// Starts from u⁻ and the previous step's multipliers; evaluates the residuals.
@compute @workgroup_size(WORKGROUP)
fn step_begin(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) {
        return;
    }
    start_iterate();
    set_status(ST_LAGGED, 0.0);
    for (var k = 0u; k < 6u * P.bodies; k++) {
        sset(s_du + k, 0.0);
    }
    // Drive coordinates at the start of the step (for the damping term).
    for (var b = 0u; b < P.bodies; b++) {
        let p = start_pose(b);
        sset3(s_pose + 7u * b, p.x);
        sset3(s_pose + 7u * b + 3u, p.q.xyz);
        sset(s_pose + 7u * b + 6u, p.q.w);
    }
    for (var d = 0u; d < P.drives; d++) {
        let c = coordinate(drive_joint(d), drive_is_angle(d));
        // An armature (mode 3) starts from the joint's rate, every other drive from its
        // coordinate.
        if ctl(6u * P.bodies + CONTROL_DRIVE * d) > 2.5 {
            sset(s_dstart + d, coordinate_rate(drive_joint(d), c));
        } else {
            sset(s_dstart + d, c.value);
        }
    }
    var count = 0u;
    if CONTACTS {
        count = detect_contacts();
        detect_limits();
    }
    set_status(ST_COUNT, f32(count));
    let e = evaluate();
    store_eval(e);
    set_status(ST_MERIT0, e.merit);
    if CONTACTS {
        keep_best(e.merit);
    }
    set_status(ST_ITERATIONS, 0.0);
    set_status(ST_BACKTRACKS, 0.0);
    set_status(ST_FAILED, 0.0);
    set_active(!converged(e) && P.max_newton > 0u);
    check_loops();
}

// The Schur solve of an active world's Newton direction (the residuals of its current
// iterate are in scratch): its set-up and first `P.linear_chunk` iterations.
@compute @workgroup_size(WORKGROUP)
fn step_direction(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) || status(ST_ACTIVE) < 0.5 {
        return;
    }
    solve();
    check_loops();
}

// The Schur solve's next `P.linear_chunk` iterations, dispatched with the workgroups of
// the worlds whose solve went on (`linear_iterate`); a world beside them whose solve
// has ended returns at once.
@compute @workgroup_size(WORKGROUP)
fn step_direction_more(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) || status(ST_ACTIVE) < 0.5 || status(ST_LIN_DONE) > 0.5 {
        return;
    }
    linear_iterate();
    check_loops();
}

// The rest of the direction (a kernel of its own: after the conjugate residual loop in
// one kernel, the body velocity steps read back as zero on a stack of 8 boxes on
// lavapipe, its loop budget spent, see `check_loops`); saves the current iterate.
@compute @workgroup_size(WORKGROUP)
fn step_update(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) || status(ST_ACTIVE) < 0.5 {
        return;
    }
    if !update() {
        set_status(ST_FAILED, status(ST_FAILED) + 1.0);
        set_active(false);
        check_loops();
        return;
    }
    set_status(ST_ITERATIONS, status(ST_ITERATIONS) + 1.0);
    for (var k = 0u; k < 6u * P.bodies; k++) {
        sset(s_uc + k, sget(s_u + k));
    }
    for (var i = 0u; i < P.rows; i++) {
        sset(s_lc + i, sget(s_l + i));
    }
    check_loops();
}

// The best iterate (smallest merit) of a step with contacts, in s_ub and s_lb.
fn keep_best(merit: f32) {
    set_status(ST_BEST, merit);
    for (var k = 0u; k < 6u * P.bodies; k++) {
        sset(s_ub + k, sget(s_u + k));
    }
    for (var i = 0u; i < P.rows; i++) {
        sset(s_lb + i, sget(s_l + i));
    }
}

// Stores an accepted iterate's evaluation and decides whether the world goes on. With
// contacts, a world that stops unconverged returns to its best iterate, as on the CPU
// (a converged iterate is kept as it is).
fn accept(e: Eval, stalled: bool) {
    store_eval(e);
    let done = stalled || converged(e) || status(ST_ITERATIONS) >= f32(P.max_newton);
    set_active(!done);
    if !CONTACTS {
        return;
    }
    if e.merit < status(ST_BEST) {
        keep_best(e.merit);
    } else if done && !converged(e) && status(ST_BEST) < e.merit {
        for (var k = 0u; k < 6u * P.bodies; k++) {
            sset(s_u + k, sget(s_ub + k));
        }
        for (var i = 0u; i < P.rows; i++) {
            sset(s_l + i, sget(s_lb + i));
        }
        store_eval(evaluate());
    }
}

// The step along the direction. With contacts (as on the CPU, docs/step.md) the full step
// is taken unless its merit is not finite or exceeds EXPLOSION times the step's first
// merit; joint-only systems, and an exploding step, use a backtracking line search
// (Armijo on the merit ½|F|²), whose accepted iterates each improve on the last. A world
// stops when converged, at the iteration cap, or when no step length reduces the merit
// (stalled: it keeps its current iterate).
@compute @workgroup_size(WORKGROUP)
fn step_search(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) || status(ST_ACTIVE) < 0.5 {
        return;
    }
    search();
    check_loops();
}

fn search() {
    let full_steps = CONTACTS && status(ST_ITERATIONS) <= FULL_STEPS;
    if full_steps {
        set_trial(1.0);
        let trial = evaluate();
        if finite(trial.merit) && trial.merit < EXPLOSION * status(ST_MERIT0) {
            accept(trial, false);
            return;
        }
    }
    let merit = status(ST_MERIT);
    var alpha = 1.0;
    var backtracks = status(ST_BACKTRACKS);
    for (var k = 0u; k <= P.max_backtracks; k++) {
        set_trial(alpha);
        let trial = evaluate();
        if finite(trial.merit) && trial.merit <= (1.0 - 1e-4 * alpha) * merit {
            set_status(ST_BACKTRACKS, backtracks);
            accept(trial, false);
            return;
        }
        if k < P.max_backtracks {
            backtracks += 1.0;
        }
        alpha *= 0.5;
    }
    set_status(ST_BACKTRACKS, backtracks);
    if CONTACTS && !full_steps {
        set_trial(1.0);
        let trial = evaluate();
        if finite(trial.merit) && trial.merit < EXPLOSION * status(ST_MERIT0) {
            accept(trial, false);
            return;
        }
    }
    set_trial(0.0);
    let current = evaluate();
    if CONTACTS && status(ST_LAGGED) < 0.5 && has_couplings() {
        // The coupled iteration stalled: with statically indeterminate contacts (four
        // corners of a box) the coupling can make the Schur system nearly singular in a
        // way the symmetric one is not. Start the step again from its first iterate
        // with the coupling lagged.
        set_status(ST_LAGGED, 1.0);
        start_iterate();
        accept(evaluate(), false);
        return;
    }
    accept(current, true);
}

// The step's first iterate: the velocities and multipliers of the state (warm start).
fn start_iterate() {
    for (var k = 0u; k < 6u * P.bodies; k++) {
        sset(s_u + k, stget(7u * P.bodies + k));
    }
    for (var i = 0u; i < P.rows; i++) {
        sset(s_l + i, stget(13u * P.bodies + i));
    }
}

// Writes the end-of-step state (static bodies keep their poses).
@compute @workgroup_size(WORKGROUP)
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
    check_loops();
}

// For the tests: every joint row c(q) and drive coordinate q at the state's poses,
// with their Jacobians, into the residual and Jacobian slots of scratch.
@compute @workgroup_size(WORKGROUP)
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
