// Geometric stiffness (axion-constraints' `stiffness`): how the joints' forces turn when
// their bodies move, K_ij = ∂(F_iᵀλ)/∂δq_j for the joint's parent (0) and child (1).
// The Schur operator keeps each body's own angular block, symmetrized; the direct solve
// along the tree takes every block (both from `accumulate_stiffness`). Part of the step
// module (see step.rs, `step_source`).

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
fn zero3() -> mat3x3<f32> {
    return mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
}
// r eᵀ − (e·r) I: how the torque r × (λ e) turns under a rotation of r.
fn lever(r: vec3<f32>, e: vec3<f32>) -> mat3x3<f32> {
    return outer3(r, e) - dot(e, r) * ident3();
}

// A 6 × 6 block by its 3 × 3 blocks [ll la; al aa]: rows force then torque (or linear
// then angular velocity), columns linear then angular.
struct Block6 {
    ll: mat3x3<f32>,
    la: mat3x3<f32>,
    al: mat3x3<f32>,
    aa: mat3x3<f32>,
}
fn zero_block() -> Block6 {
    return Block6(zero3(), zero3(), zero3(), zero3());
}
// a + s b
fn block_axpy(a: Block6, s: f32, b: Block6) -> Block6 {
    return Block6(a.ll + b.ll * s, a.la + b.la * s, a.al + b.al * s, a.aa + b.aa * s);
}

// A joint's stiffness blocks K_ij (i the body whose force turns, j the one that moves;
// p the parent, c the child).
struct JointK {
    pp: Block6,
    pc: Block6,
    cp: Block6,
    cc: Block6,
}

// K of joint j's rows at the current iterate (multipliers λ, poses), as
// axion-constraints' `Joint::stiffness`: every row set is linear in its multipliers'
// direction, so each is evaluated once with the multipliers folded into it.
fn joint_stiffness(j: u32) -> JointK {
    let g = joint_geo(j);
    let kind = joint_kind(j);
    let first = joint_first_row(j);
    var k = JointK(zero_block(), zero_block(), zero_block(), zero_block());
    var angles = NONE;
    if kind == PRISMATIC {
        // Slide locks along n = R_wp b, b = b1 λ0 + b2 λ1.
        let b = jf3(j, 17u) * sget(s_l + first) + jf3(j, 20u) * sget(s_l + first + 1u);
        k = slide_stiffness(g, b);
        angles = first + 2u;
    } else {
        // Point locks (ball, revolute, fixed), e = (λ0, λ1, λ2): only the torques turn.
        let e = vec3<f32>(sget(s_l + first), sget(s_l + first + 1u), sget(s_l + first + 2u));
        k.cc.aa += lever(g.r_c, e);
        k.pp.aa -= lever(g.r_p, e);
        if kind == REVOLUTE {
            // Axis alignments, b = b1 λ3 + b2 λ4: the torque n = a_c × b_p turns.
            let b = jf3(j, 17u) * sget(s_l + first + 3u) + jf3(j, 20u) * sget(s_l + first + 4u);
            let a_c = quat_rotate(g.fc_q, joint_axis(j));
            let b_p = quat_rotate(g.fp_q, b);
            let dd = dot(a_c, b_p);
            let dn_c = outer3(a_c, b_p) - dd * ident3();
            let dn_p = dd * ident3() - outer3(b_p, a_c);
            k.cc.aa += dn_c;
            k.cp.aa += dn_p;
            k.pc.aa -= dn_c;
            k.pp.aa -= dn_p;
        }
        if kind == FIXED {
            angles = first + 3u;
        }
    }
    if angles != NONE {
        // Angle locks, e = (λ_k): the torque g = s R_wp (w e + v × e) turns with
        // ∂g/∂φ_c = −A, ∂g/∂φ_p = A − skew(g).
        let e = vec3<f32>(sget(s_l + angles), sget(s_l + angles + 1u), sget(s_l + angles + 2u));
        let rel = quat_mul(quat_conj(g.fp_q), g.fc_q);
        let s = select(1.0, -1.0, rel.w < 0.0);
        let r = quat_matrix(g.fp_q);
        let gw = r * ((e * rel.w + cross(rel.xyz, e)) * s);
        let m = outer3(e, rel.xyz) + skew3(e) * (rel.w * ident3() - skew3(rel.xyz));
        let a = r * m * transpose(r) * (0.5 * s);
        let dg_c = a * -1.0;
        let dg_p = a - skew3(gw);
        k.cc.aa += dg_c;
        k.cp.aa += dg_p;
        k.pc.aa -= dg_c;
        k.pp.aa -= dg_p;
    }
    return k;
}

// K of a slide lock's force λ n at the child's anchor, n = R_wp b turning with the parent
// (b carries λ; D = p_c − x_P): axion-constraints' `slide_lock_stiffness`.
fn slide_stiffness(g: Geo, b: vec3<f32>) -> JointK {
    var k = JointK(zero_block(), zero_block(), zero_block(), zero_block());
    let n = quat_rotate(g.fp_q, b);
    let nx = skew3(n);
    let lv = lever(g.r_c, n);
    k.cp.la -= nx;
    k.cc.aa += lv;
    k.cp.aa -= skew3(g.r_c) * nx;
    k.pp.la += nx;
    k.pc.al += nx;
    k.pp.al -= nx;
    k.pc.aa -= lv;
    k.pp.aa += skew3(g.r_p + g.d) * nx;
    return k;
}

// K of drive d's row at the current iterate (axion-constraints' `coordinate_stiffness`):
// a slider's force along a_w = R_wp a is a slide lock's; a hinge's torque ±λ a_w,
// a_w = R_wp ℓ(Q), turns with δa_w = −a_w× δφ_p + P(δφ_c − δφ_p), P = R_wp ∂ℓ/∂ε R_wpᵀ
// (Q = R_wpᵀ R_wc = (w, v), s = v·a, d = w² + s², ℓ = (w² a + w v × a + s v)/d).
fn drive_stiffness(d: u32) -> JointK {
    let lam = sget(s_l + P.joint_rows + d);
    var k = JointK(zero_block(), zero_block(), zero_block(), zero_block());
    if lam == 0.0 {
        return k;
    }
    let j = drive_joint(d);
    let g = joint_geo(j);
    let a = joint_axis(j);
    if !drive_is_angle(d) {
        return slide_stiffness(g, a * lam);
    }
    let rel = quat_mul(quat_conj(g.fp_q), g.fc_q);
    let w = rel.w;
    let v = rel.xyz;
    let s = dot(v, a);
    let den = w * w + s * s;
    let r = quat_matrix(g.fp_q);
    var local = a;
    var p = zero3();
    if den > 1e-30 {
        let l = (a * (w * w) + cross(v, a) * w + v * s) / den;
        let dl_dw = (a * (2.0 * w) + cross(v, a) - l * (2.0 * w)) / den;
        let dl_dv = (skew3(a) * -w + outer3(v, a) + ident3() * s - outer3(l, a) * (2.0 * s))
            * (1.0 / den);
        let d_eps = outer3(dl_dw, v * -0.5) + dl_dv * ((ident3() * w - skew3(v)) * 0.5);
        local = l;
        p = r * d_eps * transpose(r);
    }
    let cr = skew3(r * local);
    k.cc.aa += p * lam;
    k.cp.aa -= (cr + p) * lam;
    k.pc.aa -= p * lam;
    k.pp.aa += (cr + p) * lam;
    return k;
}

fn add_kang(b: u32, m: mat3x3<f32>) {
    if !body_dynamic(b) {
        return;
    }
    let o = s_kang + 9u * b;
    sset_mat(o, sget_mat(o) + m);
}

// Each body's own angular block of the joints' stiffness, summed per body (for the
// Schur operator's M̂, `prepare_mass`), and with `tree` the matrices of the solve along
// the tree (`tree_body_matrices`) from the same evaluation of each joint's stiffness.
fn accumulate_stiffness(tree: bool) {
    for (var b = 0u; b < P.bodies; b++) {
        sset_mat(s_kang + 9u * b, zero3());
    }
    let blocks = tree && P.geometric_stiffness != 0u;
    if tree {
        tree_body_matrices();
    }
    for (var j = 0u; j < P.joints; j++) {
        let k = joint_stiffness(j);
        add_kang(joint_child(j), k.cc.aa);
        add_kang(joint_parent(j), k.pp.aa);
        if blocks {
            add_stiffness(j, k);
        }
    }
    if blocks {
        for (var d = 0u; d < P.drives; d++) {
            add_stiffness(drive_joint(d), drive_stiffness(d));
        }
    }
}

// Inverse of a 3×3 matrix by its adjugate, or a zero matrix where the determinant is
// zero or not finite.
fn inverse3(m: mat3x3<f32>) -> mat3x3<f32> {
    let d = determinant(m);
    if !(d != 0.0 && finite(d)) {
        return zero3();
    }
    let adj = mat3x3<f32>(cross(m[1], m[2]), cross(m[2], m[0]), cross(m[0], m[1]));
    return transpose(adj) * (1.0 / d);
}

// Inverse of a symmetric positive definite 3×3 matrix, or a zero matrix if it is not.
fn spd_inverse(m: mat3x3<f32>) -> mat3x3<f32> {
    let m11 = m[0][0];
    let m2 = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    let m3 = determinant(m);
    if !(m11 > 0.0 && m2 > 0.0 && m3 > 0.0) {
        return zero3();
    }
    let c0 = cross(m[1], m[2]);
    let c1 = cross(m[2], m[0]);
    let c2 = cross(m[0], m[1]);
    return transpose(mat3x3<f32>(c0, c1, c2)) * (1.0 / m3);
}

// The angular block of the Schur operator's body diagonal: I_w(θ⁺) − h² sym(K_bb),
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
