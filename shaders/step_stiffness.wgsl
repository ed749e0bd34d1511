// Geometric stiffness (axion-constraints' `stiffness`): the angular diagonal blocks of
// the rows' torques on their own bodies. Part of the step module (see step.rs,
// `step_source`).

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
