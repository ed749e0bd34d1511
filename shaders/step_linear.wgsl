// The linear solve: the matrix-free Schur operator, the preconditioned conjugate
// residual (ORTHOMIN(2) with slip coupling) split over dispatches, and the velocity
// steps. Part of the step module (see step.rs, `step_source`).

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

// The Newton direction, first part (kernel `step_factor`): the fixed rows' steps Δλ_f
// are moved to the right-hand side, h'_dyn = h_dyn − h J_fᵀ Δλ_f, the Schur system
// A Δλ = (J M⁻¹ h'_dyn − h_c)/h of the other rows is set up (right-hand side, the
// regularisation δ, the Jacobi preconditioner), and on a model whose rows all lie on
// its tree the whole Newton system is factorized along it (`tree_factor`; ST_TREE says
// whether that succeeded).
fn prepare_direction() {
    let h = P.h;
    // With the slip force's coupling lagged (a coupled iteration that stalled), the Krylov
    // solve (`search`, `has_couplings`): the lagged form is a fixed-point iteration on
    // the slip force that the exact steps along the tree overshoot.
    let tree = tree_on() && !(CONTACTS && status(ST_LAGGED) > 0.5);
    accumulate_stiffness(tree);
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
        if CONTACTS && sget(s_fix + i) > 0.5 {
            sset(s_rhs + i, 0.0);
            sset(s_pre + i, 0.0);
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
    }
    set_status(ST_TREE, select(0.0, 1.0, tree && tree_factor()));
}

// The Newton direction, second part (kernel `step_direction`): along the tree where it
// was factorized (`tree_backward`: Δu and Δλ at once), else the Schur system solved
// from Δλ = 0 by the Jacobi-preconditioned conjugate residual, or ORTHOMIN with
// SLIP_COUPLING (into s_x; see `update` for the rest).
fn solve() {
    if status(ST_TREE) > 0.5 {
        tree_backward();
        set_status(ST_LIN_IT, 1.0);
        set_status(ST_LIN_DONE, 1.0);
        return;
    }
    for (var i = 0u; i < P.rows; i++) {
        sset(s_x + i, 0.0);
        sset(s_r + i, sget(s_rhs + i));
        sset(s_z + i, sget(s_pre + i) * sget(s_rhs + i));
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
        ask_dispatch(P.max_newton * P.attempts + k * continuations() + next - 1u);
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

// The Newton direction, third part: the fixed rows' steps join the solution,
// Δu = M⁻¹(h Jᵀ Δλ − h_dyn) over all rows (unless the solve along the tree gave it),
// and friction steps, solved along the basis
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
    // The solve along the tree has the velocity steps already.
    let direct = status(ST_TREE) > 0.5;
    for (var b = 0u; b < P.bodies; b++) {
        if !body_dynamic(b) {
            continue;
        }
        if !direct {
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
            sset3(s_du + 6u * b, (fl - sget3(s_hd + 6u * b)) * body_inv_mass(b));
            sset3(s_du + 6u * b + 3u, minv_ang(b, fa - sget3(s_hd + 6u * b + 3u)));
        }
        let dul = sget3(s_du + 6u * b);
        let dua = sget3(s_du + 6u * b + 3u);
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
