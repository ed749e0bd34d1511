// The probe kernel of narrow.wgsl (needs quat.wgsl and narrow.wgsl before it): the
// half-space narrow phase evaluated on a batch of inputs, for the tests.
//
// Probe input i, NARROW_IN = 16 floats: n (3), d, kind (SPHERE, BOX, CAPSULE, CYLINDER),
// parameters (3: r | e | r, l | r, l), x (3), θ (x, y, z, w), margin.
// Probe output i, NARROW_OUT = 17 floats: count, then 4 × (core point (3), gap).
//
// probe_pair, input i, PAIR_IN = 24 floats: for a then b the kind, parameters (3), pose (x (3),
// θ (x, y, z, w)), then the margin and a pad. Output i, PAIR_OUT = 54 floats: count, normal (3),
// thicknesses (t_a, t_b), then 8 × (core point on a (3), core point on b (3)).

@group(0) @binding(0) var<storage, read> narrow_in: array<f32>;
@group(0) @binding(1) var<storage, read_write> narrow_out: array<f32>;

@compute @workgroup_size(WORKGROUP)
fn probe_plane(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= arrayLength(&narrow_out) / NARROW_OUT {
        return;
    }
    let b = i * NARROW_IN;
    let n = vec3<f32>(narrow_in[b], narrow_in[b + 1u], narrow_in[b + 2u]);
    let d = narrow_in[b + 3u];
    let kind = u32(narrow_in[b + 4u]);
    let par = vec3<f32>(narrow_in[b + 5u], narrow_in[b + 6u], narrow_in[b + 7u]);
    let x = vec3<f32>(narrow_in[b + 8u], narrow_in[b + 9u], narrow_in[b + 10u]);
    let q = vec4<f32>(narrow_in[b + 11u], narrow_in[b + 12u], narrow_in[b + 13u], narrow_in[b + 14u]);
    let margin = narrow_in[b + 15u];
    let pts = plane_points(n, d, kind, par, x, q, margin);
    let o = i * NARROW_OUT;
    narrow_out[o] = f32(pts.count);
    for (var c = 0u; c < 4u; c++) {
        for (var e = 0u; e < 4u; e++) {
            narrow_out[o + 1u + 4u * c + e] = pts.p[c][e];
        }
    }
}

@compute @workgroup_size(WORKGROUP)
fn probe_pair(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= arrayLength(&narrow_out) / PAIR_OUT {
        return;
    }
    var side: array<PoseF, 2>;
    var par: array<vec3<f32>, 2>;
    var kind: array<u32, 2>;
    for (var s = 0u; s < 2u; s++) {
        let b = i * PAIR_IN + 11u * s;
        kind[s] = u32(narrow_in[b]);
        par[s] = vec3<f32>(narrow_in[b + 1u], narrow_in[b + 2u], narrow_in[b + 3u]);
        side[s] = PoseF(
            vec3<f32>(narrow_in[b + 4u], narrow_in[b + 5u], narrow_in[b + 6u]),
            vec4<f32>(narrow_in[b + 7u], narrow_in[b + 8u], narrow_in[b + 9u], narrow_in[b + 10u]),
        );
    }
    let margin = narrow_in[i * PAIR_IN + 22u];
    var m = shape_manifold(kind[0], par[0], side[0], kind[1], par[1], side[1], margin);
    let o = i * PAIR_OUT;
    narrow_out[o] = f32(m.count);
    for (var e = 0u; e < 3u; e++) {
        narrow_out[o + 1u + e] = m.n[e];
    }
    narrow_out[o + 4u] = m.ta;
    narrow_out[o + 5u] = m.tb;
    for (var c = 0u; c < MANIFOLD_POINTS; c++) {
        for (var e = 0u; e < 3u; e++) {
            narrow_out[o + 6u + 6u * c + e] = m.pa[c][e];
            narrow_out[o + 9u + 6u * c + e] = m.pb[c][e];
        }
    }
}
