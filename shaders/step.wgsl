// The implicit Newton step of axion-rs for joints, drives, contacts and friction, one
// invocation per world in each of four kernels (step_begin, step_direction,
// step_search, step_finish; crates/axion-gpu/src/step.rs is the twin and documents the
// equations), plus probe_rows, which evaluates the rows for the tests. The step module
// is this file and, after it, step_joints, step_drives, step_contacts, step_limits,
// step_stiffness and step_linear.wgsl (the rows, geometric stiffness and linear solve,
// split as axion-constraints is); quat.wgsl, narrow.wgsl and the shared constants come
// before (step.rs, `step_source`).
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
    // GpuSettings::friction_creep and fallback_creep (see `contact_rows`, `accept`).
    friction_creep: f32,
    fallback_creep: f32,
    // Attempts at a step: 2 with a second attempt (`accept`), else 1.
    attempts: u32,
    pad0: u32,
    // The tree's plan (step_tree.wgsl): its bodies (0: the Newton system is not solved
    // along the tree), groups, first words of the bodies and groups in model_u;
    tree: vec4<u32>,
    // first words of its entries and of its joints' tree sides in model_u, scratch
    // floats of its factors, 1 where each group's solve is refined against its S.
    tree_more: vec4<u32>,
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

// WORKGROUP, NONE, the strides of the packed model (BODY_F, JOINT_F, JOINT_U, DRIVE_U,
// CONTROL_DRIVE, PAIR_U, PAIR_F, CONTACT_S, LIMIT_U, LIMIT_F), the shape and joint
// kinds, the coordinate codes (ANGLE, DISPLACEMENT), the drive modes (MODE_*) and the
// statistics slots (ST_*) are declared in front of this file from
// crates/axion-gpu/src/layout.rs.

// The contact-slot offsets (C_*), and the CPU's contact and friction constants
// (PERSIST_DISTANCE, PERSIST_COS, OPEN_GAP, BAUMGARTE, KAPPA_MIN,
// SLIP_BAND) come from layout.rs as well.

// Below this ∂φ/∂g a contact's normal force step is fixed (see `evaluate`).
const FB_FIX_BELOW: f32 = 1e-3;

const PI: f32 = 3.14159265358979;

var<private> wid: u32;
// The scratch sections s_pose … s_con and layout_scratch() are written in front of
// this file from layout.rs (`Scratch`).

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
    // The size of the dynamics residual's terms in its velocity units (`evaluate`).
    dyn_scale: f32,
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

// Writes the poses into s_pose: the start-of-step poses q⁻, or with `advance` those of
// the current iterate, q⁺ = q⁻ ⊕ h G u⁺ (static bodies stay where they are).
fn set_poses(advance: bool) {
    for (var b = 0u; b < P.bodies; b++) {
        var p = start_pose(b);
        if advance && body_dynamic(b) {
            p = integrate_pose(p, sget3(s_u + 6u * b), sget3(s_u + 6u * b + 3u), P.h);
        }
        sset3(s_pose + 7u * b, p.x);
        sset3(s_pose + 7u * b + 3u, p.q.xyz);
        sset(s_pose + 7u * b + 6u, p.q.w);
    }
}

// Poses q⁺ = q⁻ ⊕ h G u⁺, every row (residual, force Jacobian, compliance, the
// multiplier μ_i its Jacobian carries, fixed force steps), the dynamics residual
// h_dyn = M̃(θ⁺)u⁺ − M̃(θ⁻)u⁻ − h f − h Σ J_iᵀμ_i, the norms and the size of the
// dynamics residual's terms (the scale of its rounding, docs/gpu.md, "f32 tolerances").
fn evaluate() -> Eval {
    let h = P.h;
    set_poses(true);
    var ev = Eval(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    joint_rows(h, &ev);
    drive_rows(h, &ev);
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
        let l1 = momentum_ang(b, q, w);
        let l0 = momentum_ang(b, q0, start_ang(b));
        let f_h = h * (m * P.gravity + f_ext);
        var hl = m * (u - start_lin(b)) - f_h;
        var ha = l1 - l0 - h * t_ext;
        // The sizes of the terms, |·| per component, summed.
        var sl = m * (abs(u) + abs(start_lin(b))) + abs(f_h);
        var sa = abs(l1) + abs(l0) + abs(h * t_ext);
        let a0 = model_u[P.adj_offset_base_u + b];
        let a1 = model_u[P.adj_offset_base_u + b + 1u];
        for (var a = a0; a < a1; a++) {
            let i = model_u[P.adj_base_u + 2u * a];
            let side = model_u[P.adj_base_u + 2u * a + 1u];
            let hl_i = h * sget(s_mu + i);
            let jl = jac_lin(i, side);
            let ja = jac_ang(i, side);
            hl -= hl_i * jl;
            ha -= hl_i * ja;
            sl += abs(hl_i * jl);
            sa += abs(hl_i * ja);
        }
        sset3(s_hd + 6u * b, hl);
        sset3(s_hd + 6u * b + 3u, ha);
        let dvl = hl * body_inv_mass(b);
        let dva = inverse_ang(b, q, ha);
        sset3(s_dv + 6u * b, dvl);
        sset3(s_dv + 6u * b + 3u, dva);
        // The angular part in the kinetic-energy norm, √(dvaᵀ I_w dva / m).
        let gy = body_gyration(b);
        ev.merit += dot(dvl, dvl) + gy * gy * dot(dva, dva);
        ev.dyn_norm = max(ev.dyn_norm, max(amax3(dvl), gy * amax3(dva)));
        // The terms' size in the same units: an error e with |e| ≤ ε sa per component
        // becomes at most |I_w⁻¹| ε sa, |I_w⁻¹| the entries' magnitudes of R I_b⁻¹ Rᵀ.
        let r = quat_matrix(q);
        let iw = r * body_inv_inertia(b) * transpose(r);
        let iw_abs = mat3x3<f32>(abs(iw[0]), abs(iw[1]), abs(iw[2]));
        ev.dyn_scale = max(ev.dyn_scale, max(amax3(sl) * body_inv_mass(b), gy * amax3(iw_abs * sa)));
    }
    ev.merit *= 0.5;
    return ev;
}

// The dynamics residual's attainable accuracy in f32, in units of the size of its terms
// (`Eval::dyn_scale`): ROUNDING_FLOOR unit roundoffs (2⁻²⁴). A landing's contact and
// joint impulses on a light link can sum to terms of 2000 m/s in the residual's units,
// whose rounding (1.2e-4 m/s) exceeds the velocity tolerance of 1e-4 m/s.
const ROUNDING_FLOOR: f32 = 4.0 * 5.9604645e-8;

fn converged(e: Eval) -> bool {
    let dyn_tolerance = max(P.velocity_tolerance, ROUNDING_FLOOR * e.dyn_scale);
    return e.dyn_norm <= dyn_tolerance && e.drive_norm <= P.velocity_tolerance
        && e.joint_norm <= P.position_tolerance && e.contact_norm <= P.contact_tolerance
        && e.friction_norm <= P.contact_tolerance;
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

// Per-world Newton status is in the `stats` buffer (interleaved like everything else),
// at the slots ST_* declared with the other shared numbers (crates/axion-gpu/src/layout.rs).

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
// next_dispatch: slot k is Newton iteration k's (of max_newton × attempts in all), slot
// max_newton × attempts + k c + j − 1 its j-th `step_direction_more`
// (c = continuations()).
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

// The step is seven kernels, dispatched in this order by the host: `step_begin`, then
// `max_newton` × `attempts` times `step_factor`, `step_direction` (and
// `step_direction_more` as often as the linear iteration cap needs), `step_update` and
// `step_search`, then `step_finish`. A world that has converged, stalled or failed
// stays inactive in the later dispatches. The iterations are dispatched indirectly, with
// the workgroups the still active worlds asked for (set_active): none once every world
// has stopped.

// The step's first iterate (u⁻ and the previous step's multipliers), the drives'
// coordinates at its start and, with contacts, the contacts and joint limits in reach;
// returns the active contact slots.
fn begin_rows() -> u32 {
    start_iterate();
    set_status(ST_LAGGED, 0.0);
    for (var k = 0u; k < 6u * P.bodies; k++) {
        sset(s_du + k, 0.0);
    }
    // Drive coordinates at the start of the step (for the damping term).
    set_poses(false);
    for (var d = 0u; d < P.drives; d++) {
        let c = coordinate(drive_joint(d), drive_is_angle(d));
        // An armature starts from the joint's rate, every other drive from its
        // coordinate.
        if u32(ctl(6u * P.bodies + CONTROL_DRIVE * d)) == MODE_ARMATURE {
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
    return count;
}

// Starts from u⁻ and the previous step's multipliers; evaluates the residuals.
@compute @workgroup_size(WORKGROUP)
fn step_begin(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) {
        return;
    }
    set_status(ST_ATTEMPT, 0.0);
    set_status(ST_COUNT, f32(begin_rows()));
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

// The Schur system of an active world's Newton direction (the residuals of its current
// iterate are in scratch): its set-up and its factorization along the tree.
@compute @workgroup_size(WORKGROUP)
fn step_factor(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) || status(ST_ACTIVE) < 0.5 {
        return;
    }
    prepare_direction();
    check_loops();
}

// The Schur solve of an active world's Newton direction: its first `P.linear_chunk`
// iterations.
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
// (a converged iterate is kept as it is); its first attempt is then solved again from
// the step's start with zero contact and limit forces and the fallback creep (`creep`;
// the CPU's last attempt before splitting, docs/step.md, "A step solved again"), for
// another `max_newton` iterations, full steps first; if that one fails too, the first
// attempt's best iterate is kept, as on the CPU. (One call site of `evaluate` here and
// one in `search`: lavapipe's compiler inlines every call, and more copies of the
// residuals made the kernel's compilation take minutes.)
fn accept(e: Eval, stalled: bool) {
    store_eval(e);
    let cap = status(ST_ATTEMPT) + f32(P.max_newton);
    let done = stalled || converged(e) || status(ST_ITERATIONS) >= cap;
    set_active(!done);
    if !CONTACTS {
        return;
    }
    if e.merit < status(ST_BEST) {
        keep_best(e.merit);
    }
    if !done || converged(e) {
        return;
    }
    let retry = status(ST_ATTEMPT) < 0.5 && P.attempts > 1u;
    if retry {
        copy_iterate(s_ub, s_lb, s_ub0, s_lb0);
        set_status(ST_ATTEMPT, status(ST_ITERATIONS));
        set_status(ST_LAGGED, 0.0);
        start_iterate();
        // From zero contact and limit forces (the CPU's last attempt before it splits
        // the step): a landing's warm-started forces can hold the iteration away from
        // the solution.
        for (var i = P.contact_row0; i < P.rows; i++) {
            sset(s_l + i, 0.0);
        }
    } else if status(ST_ATTEMPT) > 0.5 {
        set_status(ST_ATTEMPT, 0.0);
        copy_iterate(s_ub0, s_lb0, s_u, s_l);
    } else if status(ST_BEST) < e.merit {
        copy_iterate(s_ub, s_lb, s_u, s_l);
    } else {
        return;
    }
    let f = evaluate();
    store_eval(f);
    if retry {
        set_status(ST_MERIT0, f.merit);
        keep_best(f.merit);
        set_active(!converged(f));
    }
}

// Copies the velocities and multipliers at `u_from`, `l_from` to `u_to`, `l_to`.
fn copy_iterate(u_from: u32, l_from: u32, u_to: u32, l_to: u32) {
    for (var k = 0u; k < 6u * P.bodies; k++) {
        sset(u_to + k, sget(u_from + k));
    }
    for (var i = 0u; i < P.rows; i++) {
        sset(l_to + i, sget(l_from + i));
    }
}

// Newton iterations of the current attempt.
fn attempt_iterations() -> f32 {
    return status(ST_ITERATIONS) - status(ST_ATTEMPT);
}

// The friction creep of the current attempt.
fn creep() -> f32 {
    return select(P.friction_creep, P.fallback_creep, status(ST_ATTEMPT) > 0.5);
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
    let full_steps = CONTACTS && attempt_iterations() <= FULL_STEPS;
    let merit = status(ST_MERIT);
    let b = P.max_backtracks;
    var backtracks = status(ST_BACKTRACKS);
    // The trials in order, each one evaluation (one call site, see `accept`): 0 the full
    // step while full steps are taken; 1 … b + 1 Armijo's α = 1, ½, …; b + 2 the full
    // step after the backtracks; b + 3 the current iterate (stalled); b + 4 the step's
    // first iterate with the coupling lagged.
    var accepted = Eval(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    var stalled = false;
    for (var t = 0u; t <= b + 4u; t++) {
        if (t == 0u && !full_steps) || (t == b + 2u && !(CONTACTS && !full_steps)) {
            continue;
        }
        var alpha = 1.0;
        if t >= 1u && t <= b + 1u {
            alpha = exp2(-f32(t - 1u));
        } else if t == b + 3u {
            alpha = 0.0;
        }
        if t == b + 4u {
            // The coupled iteration stalled: with statically indeterminate contacts (four
            // corners of a box) the coupling can make the Schur system nearly singular in a
            // way the symmetric one is not. Start the step again from its first iterate
            // with the coupling lagged.
            set_status(ST_LAGGED, 1.0);
            start_iterate();
        } else {
            set_trial(alpha);
        }
        let trial = evaluate();
        var ok = finite(trial.merit);
        if t >= 1u && t <= b + 1u {
            ok = ok && trial.merit <= (1.0 - 1e-4 * alpha) * merit;
            if !ok && t <= b {
                backtracks += 1.0;
            }
        } else if t == 0u || t == b + 2u {
            ok = ok && trial.merit < EXPLOSION * status(ST_MERIT0);
        } else if t == b + 3u {
            // Stalled: the current iterate, unless the coupled iteration starts again.
            ok = !(CONTACTS && status(ST_LAGGED) < 0.5 && has_couplings());
            stalled = true;
        } else {
            stalled = false;
            ok = true;
        }
        if ok {
            accepted = trial;
            break;
        }
    }
    set_status(ST_BACKTRACKS, backtracks);
    accept(accepted, stalled);
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
    record_run();
    check_loops();
}

// Adds the finished step to the run statistics (ST_RUN_*), which the host clears before
// each run of at most RUN_FLAG_SLOTS * RUN_FLAG_BITS steps: iterations summed and their
// maximum, the steps finished, and one bit per step that did not converge.
fn record_run() {
    let iterations = status(ST_ITERATIONS);
    set_status(ST_RUN_ITERATIONS, status(ST_RUN_ITERATIONS) + iterations);
    set_status(ST_RUN_MAX, max(status(ST_RUN_MAX), iterations));
    let k = u32(status(ST_RUN_STEPS));
    set_status(ST_RUN_STEPS, f32(k + 1u));
    if status(ST_CONVERGED) < 0.5 && k < RUN_FLAG_SLOTS * RUN_FLAG_BITS {
        let slot = ST_RUN_UNCONVERGED + k / RUN_FLAG_BITS;
        set_status(slot, f32(u32(status(slot)) | (1u << (k % RUN_FLAG_BITS))));
    }
}

// For the tests: every joint row c(q) and drive coordinate q at the state's poses,
// with their Jacobians, into the residual and Jacobian slots of scratch.
@compute @workgroup_size(WORKGROUP)
fn probe_rows(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) {
        return;
    }
    set_poses(false);
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

// For the tests, in two dispatches around a write of the host: `probe_detect` detects
// the contacts and joint limits at the state's poses and velocities (u⁻) as
// `step_begin` does; the host then writes an iterate (u⁺ in s_u, λ in s_l), and
// `probe_unilateral` evaluates the contact and limit rows there, as `evaluate` does.
@compute @workgroup_size(WORKGROUP)
fn probe_detect(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) {
        return;
    }
    start_iterate();
    set_poses(false);
    detect_contacts();
    detect_limits();
}

@compute @workgroup_size(WORKGROUP)
fn probe_unilateral(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) {
        return;
    }
    set_poses(true);
    for (var k = 0u; k < contact_slots(); k++) {
        contact_rows(k);
    }
    limit_rows();
}

// For the tests: the Newton system of a step's first iteration from the state, set up
// as `step_begin` and `step_factor` do, and where it is solved along the tree
// (ST_TREE), its solution Δu (s_du) and Δλ (s_x), with the system itself in scratch
// (the rows' J, C and residuals, h'_dyn in s_hdf, M̂_bb in s_tm, the couplings in s_tn).
@compute @workgroup_size(WORKGROUP)
fn probe_tree(@builtin(global_invocation_id) gid: vec3<u32>) {
    if !enter(gid) {
        return;
    }
    begin_rows();
    evaluate();
    prepare_direction();
    if status(ST_TREE) > 0.5 {
        tree_backward();
    }
}
