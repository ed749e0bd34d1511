// The Newton system of a model whose rows all lie on its tree of bodies, factorized
// along the tree and solved directly, with every block of the joints' geometric
// stiffness (crates/axion-gpu/src/tree.rs is the twin and has the equations; the host
// builds the plan: bodies children first, each with its groups of rows). Part of the
// step module (see step.rs, `step_source`).

// A twist-sized vector: linear and angular parts.
struct Six {
    l: vec3<f32>,
    a: vec3<f32>,
}

fn dot6(a: Six, b: Six) -> f32 {
    return dot(a.l, b.l) + dot(a.a, b.a);
}
// a + s b
fn axpy6(a: Six, s: f32, b: Six) -> Six {
    return Six(a.l + s * b.l, a.a + s * b.a);
}
fn zero6() -> Six {
    return Six(vec3<f32>(0.0), vec3<f32>(0.0));
}
fn sget6(slot: u32) -> Six {
    return Six(sget3(slot), sget3(slot + 3u));
}
fn sset6(slot: u32, v: Six) {
    sset3(slot, v.l);
    sset3(slot + 3u, v.a);
}
fn sget_block(slot: u32) -> Block6 {
    return Block6(sget_mat(slot), sget_mat(slot + 9u), sget_mat(slot + 18u), sget_mat(slot + 27u));
}
fn sset_block(slot: u32, m: Block6) {
    sset_mat(slot, m.ll);
    sset_mat(slot + 9u, m.la);
    sset_mat(slot + 18u, m.al);
    sset_mat(slot + 27u, m.aa);
}
// M x
fn block_times(m: Block6, x: Six) -> Six {
    return Six(m.ll * x.l + m.la * x.a, m.al * x.l + m.aa * x.a);
}
// (x M)ᵀ for a row x
fn times_block(x: Six, m: Block6) -> Six {
    return Six(
        transpose(m.ll) * x.l + transpose(m.al) * x.a,
        transpose(m.la) * x.l + transpose(m.aa) * x.a,
    );
}
// a b
fn block_mul(a: Block6, b: Block6) -> Block6 {
    return Block6(
        a.ll * b.ll + a.la * b.al,
        a.ll * b.la + a.la * b.aa,
        a.al * b.ll + a.aa * b.al,
        a.al * b.la + a.aa * b.aa,
    );
}
// x yᵀ for columns x, y
fn outer6(x: Six, y: Six) -> Block6 {
    return Block6(outer3(x.l, y.l), outer3(x.l, y.a), outer3(x.a, y.l), outer3(x.a, y.a));
}

// The mobility Φ of the body being eliminated.
var<private> mob: Block6;
// A group's S (row-major) and its inverse as Gauss–Jordan forms it (also the 3 × 3
// Schur complement of a body's block, `pivoted_inverse3`); in the backward sweep, a
// group's x and the residual r − S x of its refinement.
var<private> tree_s: array<f32, TREE_GROUP_MAX * TREE_GROUP_MAX>;
var<private> tree_inv: array<f32, TREE_GROUP_MAX * TREE_GROUP_MAX>;
// A group's rows on the local body: J, Φ Fᵀ (then the residual Φ Fᵀ − P S of P's
// refinement), J Φ, P, and 1 where a row is fixed; and a solve's e − Q f.
var<private> tree_j: array<Six, TREE_GROUP_MAX>;
var<private> tree_pf: array<Six, TREE_GROUP_MAX>;
var<private> tree_q: array<Six, TREE_GROUP_MAX>;
var<private> tree_p: array<Six, TREE_GROUP_MAX>;
var<private> tree_fixed: array<f32, TREE_GROUP_MAX>;
var<private> tree_r: array<f32, TREE_GROUP_MAX>;

// Whether the Newton system is solved along the tree (the model's rows all lie on it).
fn tree_on() -> bool {
    return P.tree.x > 0u;
}
// Whether each group's solve is refined once against its S (always on hardware; on
// lavapipe where the refined factorization fits the loop budget: Packed::tree_refined).
fn tree_refined() -> bool {
    return P.tree_more.w != 0u;
}
// Word k of body t of the plan: body, parent group (or NONE), first group, groups.
fn tree_body(t: u32, k: u32) -> u32 {
    return model_u[P.tree.z + TREE_BODY_U * t + k];
}
// Word k of group g: rows, first entry, child (or NONE), scratch offset.
fn tree_group(g: u32, k: u32) -> u32 {
    return model_u[P.tree.w + TREE_GROUP_U * g + k];
}
fn entry_row(e: u32) -> u32 {
    return model_u[P.tree_more.x + 2u * e];
}
// The side (0 or 1) of the entry's row on which the group's local body is.
fn entry_side(e: u32) -> u32 {
    return model_u[P.tree_more.x + 2u * e + 1u];
}
// The side (0 parent, 1 child) of joint j that is the tree's child of the other, or
// NONE where the joint does not join two bodies of the plan.
fn joint_tree_child(j: u32) -> u32 {
    return model_u[P.tree_more.y + j];
}
// A group's factors in scratch (tree::Group::floats): an active flag, then Q (n × 6),
// P (6 × n), S⁻¹ (n × n, the child's D until the group is factorized), e (n), for a
// group with a child its rows' J' and F' on the local body (n × 6 each), and S (n × n).
fn group_base(g: u32) -> u32 {
    return s_tree + tree_group(g, 3u);
}
fn group_q(g: u32, k: u32) -> u32 {
    return group_base(g) + 1u + 6u * k;
}
fn group_p(g: u32, n: u32, k: u32) -> u32 {
    return group_base(g) + 1u + 6u * n + 6u * k;
}
fn group_s(g: u32, n: u32) -> u32 {
    return group_base(g) + 1u + 12u * n;
}
fn group_e(g: u32, n: u32) -> u32 {
    return group_base(g) + 1u + 12u * n + n * n;
}
fn group_jf(g: u32, n: u32, k: u32) -> u32 {
    return group_base(g) + 1u + 13u * n + n * n + 12u * k;
}
// The group's S itself (n × n, row-major), after J' and F' where it has a child: each
// solve with S⁻¹ is refined once against it.
fn group_sk(g: u32, n: u32) -> u32 {
    return group_base(g) + 1u + 13u * n + n * n + select(0u, 12u * n, tree_group(g, 2u) != NONE);
}

fn row_fixed(i: u32) -> bool {
    return CONTACTS && sget(s_fix + i) > 0.5;
}
fn jac_six(i: u32, side: u32) -> Six {
    return Six(jac_lin(i, side), jac_ang(i, side));
}
// Row i's force Jacobian F_i on one side: J_i, plus d J_{i+1} where row i + 1 is fixed
// and coupled to it (the slip force following the normal force, `couple_to_previous`),
// as `apply_schur` gathers it.
fn force_six(i: u32, side: u32) -> Six {
    var f = jac_six(i, side);
    if SLIP_COUPLING && i + 1u < P.rows && sget(s_fix + i + 1u) > 0.5 {
        f = axpy6(f, sget(s_cpl + i + 1u), jac_six(i + 1u, side));
    }
    return f;
}
// A group's row k on its local body: J and F (J' and F' of a group with a child, which
// carry the child's stiffness coupling).
fn group_jac(g: u32, n: u32, k: u32) -> Six {
    if tree_group(g, 2u) != NONE {
        return sget6(group_jf(g, n, k));
    }
    let e = tree_group(g, 1u) + k;
    return jac_six(entry_row(e), entry_side(e));
}
fn group_force(g: u32, n: u32, k: u32) -> Six {
    if tree_group(g, 2u) != NONE {
        return sget6(group_jf(g, n, k) + 6u);
    }
    let e = tree_group(g, 1u) + k;
    return force_six(entry_row(e), entry_side(e));
}

// Fills tree_j (J), tree_pf (Φ Fᵀ) and tree_fixed for group g's rows on the local
// body, or on the child's (`child_side`, with the child's Φ in `mob`).
fn load_rows(g: u32, child_side: bool) {
    let n = tree_group(g, 0u);
    let e0 = tree_group(g, 1u);
    for (var k = 0u; k < n; k++) {
        let i = entry_row(e0 + k);
        if row_fixed(i) {
            tree_j[k] = zero6();
            tree_pf[k] = zero6();
            tree_fixed[k] = 1.0;
        } else if child_side {
            let side = 1u - entry_side(e0 + k);
            tree_j[k] = jac_six(i, side);
            tree_pf[k] = block_times(mob, force_six(i, side));
            tree_fixed[k] = 0.0;
        } else {
            tree_j[k] = group_jac(g, n, k);
            tree_pf[k] = block_times(mob, group_force(g, n, k));
            tree_fixed[k] = 0.0;
        }
    }
}

// Factorizes the Newton system along the tree with the forward sweep of its solve
// (tree.rs, "Forward sweep"); false if a block is singular or a factor is not finite (the
// linear solve then falls back on the Schur system's Krylov solve for this Newton
// iteration).
fn tree_factor() -> bool {
    for (var t = 0u; t < P.tree.x; t++) {
        let b = tree_body(t, 0u);
        if !direct_body(t) {
            return false;
        }
        var v = sget6(s_tv + 6u * b);
        let g0 = tree_body(t, 2u);
        for (var g = g0; g < g0 + tree_body(t, 3u); g++) {
            if !factor_group(g) {
                return false;
            }
            v = forward_group(g, v);
        }
        sset6(s_tv + 6u * b, v);
        sset_block(s_tphi + 36u * b, mob);
        let up = tree_body(t, 1u);
        if up != NONE {
            child_block(up);
        }
    }
    return true;
}

// D = J_c Φ_c F_cᵀ + C of the group joining the body just eliminated (the child, Φ its
// final mobility) to its parent, into the group's S slot; zero on fixed rows.
fn child_block(g: u32) {
    load_rows(g, true);
    let n = tree_group(g, 0u);
    let e0 = tree_group(g, 1u);
    let s = group_s(g, n);
    for (var k = 0u; k < n; k++) {
        let creg = (1.0 - tree_fixed[k]) * sget(s_creg + entry_row(e0 + k));
        for (var l = 0u; l < n; l++) {
            sset(s + k * n + l, dot6(tree_j[k], tree_pf[l]) + select(0.0, creg, k == l));
        }
    }
}

// Eliminates group g at the local body: S = J Φ Fᵀ + D (D the child's block, or the
// rows' compliances), P = Φ Fᵀ S⁻¹, Q = J Φ, Φ ← Φ − P Q. A fixed row's S row and
// column are the identity's, so its P and Q are zero and its solution is zero.
fn factor_group(g: u32) -> bool {
    load_rows(g, false);
    let n = tree_group(g, 0u);
    let e0 = tree_group(g, 1u);
    let child = tree_group(g, 2u);
    let base = group_base(g);
    var free = 0.0;
    for (var k = 0u; k < n; k++) {
        free += 1.0 - tree_fixed[k];
    }
    sset(base, select(0.0, 1.0, free > 0.0));
    if free == 0.0 {
        return true;
    }
    let s = group_s(g, n);
    let sk = group_sk(g, n);
    let refined = tree_refined();
    for (var k = 0u; k < n; k++) {
        let creg = sget(s_creg + entry_row(e0 + k));
        for (var l = 0u; l < n; l++) {
            var v = dot6(tree_j[k], tree_pf[l]);
            if child != NONE {
                v += sget(s + k * n + l);
            } else if k == l {
                v += creg;
            }
            if k == l && tree_fixed[k] > 0.5 {
                v = 1.0;
            }
            tree_s[k * n + l] = v;
            if refined {
                sset(sk + k * n + l, v);
            }
        }
    }
    if !tree_invert(n) {
        return false;
    }
    // P = Φ Fᵀ S⁻¹ (S⁻¹ stored in the S slot on the way), where refined once more:
    // P ← P + (Φ Fᵀ − P S) S⁻¹, the residual in tree_pf.
    for (var k = 0u; k < n; k++) {
        var p = zero6();
        for (var l = 0u; l < n; l++) {
            let v = tree_inv[l * n + k];
            p = axpy6(p, v, tree_pf[l]);
            sset(s + l * n + k, v);
        }
        tree_p[k] = p;
    }
    if refined {
        for (var k = 0u; k < n; k++) {
            var r = tree_pf[k];
            for (var l = 0u; l < n; l++) {
                r = axpy6(r, -sget(sk + l * n + k), tree_p[l]);
            }
            tree_pf[k] = r;
        }
    }
    var ok = true;
    for (var k = 0u; k < n; k++) {
        var p = tree_p[k];
        if refined {
            for (var l = 0u; l < n; l++) {
                p = axpy6(p, tree_inv[l * n + k], tree_pf[l]);
            }
        }
        let q = times_block(tree_j[k], mob);
        tree_q[k] = q;
        tree_p[k] = p;
        ok = ok && finite(dot6(p, p)) && finite(dot6(q, q));
        sset6(group_p(g, n, k), p);
        sset6(group_q(g, k), q);
    }
    for (var k = 0u; k < n; k++) {
        mob = block_axpy(mob, -1.0, outer6(tree_p[k], tree_q[k]));
    }
    return ok;
}

// The forward sweep through group g at its local body with velocity v (the part of
// Δu_b not yet explained by the forces left): e_g = r_g − J_{g,b} v − J_{g,c} v_c with
// the rows' right-hand side r = −h_c, and returns v + P_g e_g.
fn forward_group(g: u32, v: Six) -> Six {
    if sget(group_base(g)) < 0.5 {
        return v;
    }
    let n = tree_group(g, 0u);
    let e0 = tree_group(g, 1u);
    let child = tree_group(g, 2u);
    let e = group_e(g, n);
    var vc = zero6();
    if child != NONE {
        vc = sget6(s_tv + 6u * child);
    }
    for (var k = 0u; k < n; k++) {
        let i = entry_row(e0 + k);
        var ek = 0.0;
        if !row_fixed(i) {
            ek = -sget(s_res + i) - dot6(group_jac(g, n, k), v);
            if child != NONE {
                ek -= dot6(jac_six(i, 1u - entry_side(e0 + k)), vc);
            }
        }
        sset(e + k, ek);
    }
    var out = v;
    for (var k = 0u; k < n; k++) {
        out = axpy6(out, sget(e + k), sget6(group_p(g, n, k)));
    }
    return out;
}

// The backward sweep through the groups of body t of the plan, in reverse order, with f
// the force on the body from above (its parent's group and the parent's stiffness
// coupling): x_g = S_g⁻¹(e_g − Q_g f), Δλ = x_g / h into s_x, f += F_{g,b}ᵀ x_g.
fn backward_groups(t: u32, f_up: Six) {
    var f = f_up;
    let g0 = tree_body(t, 2u);
    for (var g = g0 + tree_body(t, 3u); g > g0; g--) {
        let gg = g - 1u;
        if sget(group_base(gg)) < 0.5 {
            continue;
        }
        let n = tree_group(gg, 0u);
        let e0 = tree_group(gg, 1u);
        let e = group_e(gg, n);
        let s = group_s(gg, n);
        let sk = group_sk(gg, n);
        for (var k = 0u; k < n; k++) {
            tree_r[k] = sget(e + k) - dot6(sget6(group_q(gg, k)), f);
        }
        // x = S⁻¹ r, where refined once more: x ← x + S⁻¹ (r − S x) (x in tree_s, the
        // residual in tree_inv).
        for (var k = 0u; k < n; k++) {
            var x = 0.0;
            for (var l = 0u; l < n; l++) {
                x += sget(s + k * n + l) * tree_r[l];
            }
            tree_s[k] = x;
        }
        let refined = tree_refined();
        if refined {
            for (var k = 0u; k < n; k++) {
                var d = tree_r[k];
                for (var l = 0u; l < n; l++) {
                    d -= sget(sk + k * n + l) * tree_s[l];
                }
                tree_inv[k] = d;
            }
        }
        for (var k = 0u; k < n; k++) {
            var x = tree_s[k];
            if refined {
                for (var l = 0u; l < n; l++) {
                    x += sget(s + k * n + l) * tree_inv[l];
                }
            }
            let i = entry_row(e0 + k);
            if row_fixed(i) {
                x = 0.0;
            }
            sset(s_x + i, x / P.h);
            f = axpy6(f, x, group_force(gg, n, k));
        }
    }
}

// The force on body t's body from its parent's group: Σ F_{k,b}ᵀ x_k over that group's
// rows on the child's side, x = h Δλ.
fn force_from_parent(t: u32) -> Six {
    var f = zero6();
    let up = tree_body(t, 1u);
    if up != NONE && sget(group_base(up)) > 0.5 {
        let e0 = tree_group(up, 1u);
        for (var k = 0u; k < tree_group(up, 0u); k++) {
            let i = entry_row(e0 + k);
            if !row_fixed(i) {
                f = axpy6(f, sget(s_x + i) * P.h, force_six(i, 1u - entry_side(e0 + k)));
            }
        }
    }
    return f;
}

// The inverse of a 3 × 3 matrix by Gauss–Jordan with partial pivoting (backward
// stable, where the adjugate's error grows with the condition: the angular block of a
// point mass on a lever, inertia 10⁻⁶ kg·m² less h² times its stiffness, lost 10⁻⁴ of
// the solve's backward error to it); a zero matrix where it is singular.
fn pivoted_inverse3(m: mat3x3<f32>) -> mat3x3<f32> {
    for (var r = 0u; r < 3u; r++) {
        for (var c = 0u; c < 3u; c++) {
            tree_s[3u * r + c] = m[c][r];
        }
    }
    if !tree_invert(3u) {
        return zero3();
    }
    var inv = zero3();
    for (var r = 0u; r < 3u; r++) {
        for (var c = 0u; c < 3u; c++) {
            inv[c][r] = tree_inv[3u * r + c];
        }
    }
    return inv;
}

// tree_inv ← tree_s⁻¹ (n × n) by Gauss–Jordan with partial pivoting (tree_s is
// destroyed); false if a pivot is zero or not finite.
fn tree_invert(n: u32) -> bool {
    for (var k = 0u; k < n * n; k++) {
        tree_inv[k] = select(0.0, 1.0, k % (n + 1u) == 0u);
    }
    for (var c = 0u; c < n; c++) {
        var p = c;
        var best = abs(tree_s[c * n + c]);
        for (var r = c + 1u; r < n; r++) {
            let v = abs(tree_s[r * n + c]);
            if v > best {
                best = v;
                p = r;
            }
        }
        if !(best > 1e-30 && finite(best)) {
            return false;
        }
        let d = 1.0 / tree_s[p * n + c];
        for (var j = 0u; j < n; j++) {
            let sp = tree_s[p * n + j];
            let ip = tree_inv[p * n + j];
            tree_s[p * n + j] = tree_s[c * n + j];
            tree_inv[p * n + j] = tree_inv[c * n + j];
            tree_s[c * n + j] = sp * d;
            tree_inv[c * n + j] = ip * d;
        }
        for (var r = 0u; r < n; r++) {
            let f = tree_s[r * n + c];
            if r == c || f == 0.0 {
                continue;
            }
            for (var j = 0u; j < n; j++) {
                tree_s[r * n + j] -= f * tree_s[c * n + j];
                tree_inv[r * n + j] -= f * tree_inv[c * n + j];
            }
        }
    }
    return true;
}

// ---- the direct solve ------------------------------------------------------------------
//
// The unreduced Newton system, with every block of the joints' geometric stiffness:
// M̂ Δu − Fᵀ x = −h'_dyn, J Δu + C x = −h_c with x = h Δλ (tree.rs). M̂ has each body's
// block M̂_bb = [m I, 0; 0, I_w(θ⁺) + h D] − h² K_bb (D = I_w [ω]× − [I_w ω]×, the
// turning of I_w ω) and, for a joint between a body c and its tree parent p, the blocks
// −N_cp = −h² K_cp and −N_pc = −h² K_pc. Eliminating c leaves
// Δu_c = Φ_c (F_{e,c}ᵀ x_e + N_cp Δu_p) + v_c, which gives p the block
// M̂_pp − N_pc Φ_c N_cp, the right-hand side N_pc v_c, and its group e the Jacobians
// J'_{e,p} = J_{e,p} + J_{e,c} Φ_c N_cp and F'_{e,p}ᵀ = F_{e,p}ᵀ + N_pc Φ_c F_{e,c}ᵀ.

// M̂_bb of every body (s_tm) and the couplings of each body to its tree parent (s_tn:
// N_{b,parent}, then N_{parent,b}) at the current iterate without the stiffness, which
// `accumulate_stiffness` then adds (`add_stiffness`: the joints' rows and their drives',
// as the CPU's Newton matrix).
fn tree_body_matrices() {
    let h = P.h;
    for (var b = 0u; b < P.bodies; b++) {
        if !body_dynamic(b) {
            continue;
        }
        let r = quat_matrix(pose(b).q);
        let iw = r * body_inertia(b) * transpose(r);
        let w = vel_ang(b);
        let d = iw * skew3(w) - skew3(iw * w);
        sset_block(s_tm + 36u * b, Block6(ident3() * body_mass(b), zero3(), zero3(), iw + d * h));
        sset_block(s_tn + 72u * b, zero_block());
        sset_block(s_tn + 72u * b + 36u, zero_block());
    }
}

// Adds −h² K of rows of joint j to its bodies' blocks, and h² K to the coupling of its
// tree child to its tree parent.
fn add_stiffness(j: u32, k: JointK) {
    let hh = P.h * P.h;
    let p = joint_parent(j);
    let c = joint_child(j);
    if body_dynamic(p) {
        sset_block(s_tm + 36u * p, block_axpy(sget_block(s_tm + 36u * p), -hh, k.pp));
    }
    if body_dynamic(c) {
        sset_block(s_tm + 36u * c, block_axpy(sget_block(s_tm + 36u * c), -hh, k.cc));
    }
    let side = joint_tree_child(j);
    if side == NONE {
        return;
    }
    // The tree child's coupling to its parent, then the parent's to it.
    var tc = c;
    var up = k.cp;
    var down = k.pc;
    if side == 0u {
        tc = p;
        up = k.pc;
        down = k.cp;
    }
    let o = s_tn + 72u * tc;
    sset_block(o, block_axpy(sget_block(o), hh, up));
    sset_block(o + 36u, block_axpy(sget_block(o + 36u), hh, down));
}

// Body t of the plan in the direct solve: its block with the children's couplings,
// M' = M̂_bb − Σ_c N_bc Φ_c N_cb, inverted into `mob`; its velocity before its groups,
// v = Φ(−h'_dyn,b + Σ_c N_bc v_c), into s_tv; each child group's J' and F'. False if M'
// is singular.
fn direct_body(t: u32) -> bool {
    let b = tree_body(t, 0u);
    var m = sget_block(s_tm + 36u * b);
    var g = Six(-sget3(s_hdf + 6u * b), -sget3(s_hdf + 6u * b + 3u));
    let g0 = tree_body(t, 2u);
    for (var gi = g0; gi < g0 + tree_body(t, 3u); gi++) {
        let c = tree_group(gi, 2u);
        if c == NONE {
            continue;
        }
        let phi_c = sget_block(s_tphi + 36u * c);
        let n_cb = sget_block(s_tn + 72u * c);
        let n_bc = sget_block(s_tn + 72u * c + 36u);
        let nphi = block_mul(n_bc, phi_c);
        m = block_axpy(m, -1.0, block_mul(nphi, n_cb));
        g = axpy6(g, 1.0, block_times(n_bc, sget6(s_tv + 6u * c)));
        // J'_k = J_{k,b} + (J_{k,c} Φ_c) N_cb, F'_kᵀ = F_{k,b}ᵀ + N_bc Φ_c F_{k,c}ᵀ.
        let n = tree_group(gi, 0u);
        let e0 = tree_group(gi, 1u);
        for (var k = 0u; k < n; k++) {
            let i = entry_row(e0 + k);
            let side = entry_side(e0 + k);
            let jc_phi = times_block(jac_six(i, 1u - side), phi_c);
            let jp = axpy6(jac_six(i, side), 1.0, times_block(jc_phi, n_cb));
            let fp = axpy6(force_six(i, side), 1.0, block_times(nphi, force_six(i, 1u - side)));
            sset6(group_jf(gi, n, k), jp);
            sset6(group_jf(gi, n, k) + 6u, fp);
        }
    }
    // M'⁻¹ by its 3 × 3 blocks (few loop passes, for lavapipe's loop budget): with the Schur
    // complement T = D − C A⁻¹ B of the translational block A (m I unless a prismatic
    // joint couples it), [A B; C D]⁻¹ = [A⁻¹ + A⁻¹B T⁻¹C A⁻¹, −A⁻¹B T⁻¹; −T⁻¹C A⁻¹, T⁻¹].
    let ai = inverse3(m.ll);
    let ti = pivoted_inverse3(m.aa - m.al * ai * m.la);
    let aib = ai * m.la;
    let cai = m.al * ai;
    mob = Block6(ai + aib * ti * cai, aib * ti * -1.0, ti * cai * -1.0, ti);
    if !(finite(determinant(ai)) && finite(determinant(ti)) && determinant(ai) != 0.0
        && determinant(ti) != 0.0) {
        return false;
    }
    let v = block_times(mob, g);
    sset6(s_tv + 6u * b, v);
    return finite(dot6(v, v));
}

// The direct solve's backward sweep, roots first: each body's Δu = Φ_b f + v_b (f the
// force from its parent's group and the parent's coupling N_bp Δu_p), into s_du, and
// every row's Δλ = x/h, into s_x.
fn tree_backward() {
    for (var t = P.tree.x; t > 0u; t--) {
        let tt = t - 1u;
        let b = tree_body(tt, 0u);
        var f = force_from_parent(tt);
        let up = tree_body(tt, 1u);
        if up != NONE {
            let p = tree_group_parent(up);
            f = axpy6(f, 1.0, block_times(sget_block(s_tn + 72u * b), sget6(s_du + 6u * p)));
        }
        let du = axpy6(sget6(s_tv + 6u * b), 1.0, block_times(sget_block(s_tphi + 36u * b), f));
        sset6(s_du + 6u * b, du);
        backward_groups(tt, f);
    }
}

// The local body of a group with a child: the child's tree parent.
fn tree_group_parent(g: u32) -> u32 {
    let e = tree_group(g, 1u);
    return row_body(entry_row(e), entry_side(e));
}
