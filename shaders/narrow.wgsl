// Narrow phase against a static half-space (crates/axion-gpu/src/narrow.rs is its twin):
// the contact points of a sphere, a box or a capsule (in its COM frame, pose x, θ)
// with the plane n·p = d, those whose gap is at most the speculative margin.
//
// * sphere (radius r): one point, the centre, gap n·x − d − r, thickness r;
// * box (half extents e): the corners of the face whose outward normal is most
//   opposed to n (axis k = argmax |(Rᵀn)_k|, side s = −sign (Rᵀn)_k), at most 4;
// * capsule (radius r, half length l along the local z axis): the two end points of
//   its core segment x ± l R ẑ, gap n·p − d − r each, thickness r;
// * cylinder (radius r, half length l along the local z axis), with m = −Rᵀn (towards
//   the plane, local) and u the unit of (m_x, m_y) (x̂ when that is below 1e-6): if
//   |m_z| < 0.5 the two ends (r u, ±l) of the side line nearest the plane, otherwise
//   the 4 rim points (r v, sign(m_z) l) of the cap facing the plane, v = u turned by
//   0°, 90°, 180°, 270° (the first is the cap's lowest point).
//
// Used by step.wgsl (contact detection at the start of a step) and by the probe
// kernel of narrow_probe.wgsl.

struct PlanePoints {
    count: u32,
    // Core points (world frame) and their gaps in w.
    p: array<vec4<f32>, 4>,
}

fn plane_keep(acc: ptr<function, PlanePoints>, point: vec3<f32>, gap: f32, margin: f32) {
    if gap <= margin && (*acc).count < 4u {
        (*acc).p[(*acc).count] = vec4<f32>(point, gap);
        (*acc).count = (*acc).count + 1u;
    }
}

fn plane_points(n: vec3<f32>, d: f32, kind: u32, par: vec3<f32>, x: vec3<f32>, q: vec4<f32>, margin: f32) -> PlanePoints {
    var acc: PlanePoints;
    acc.count = 0u;
    if kind == 0u {
        plane_keep(&acc, x, dot(n, x) - d - par.x, margin);
    } else if kind == 1u {
        let r = quat_matrix(q);
        let nl = transpose(r) * n;
        var k = 0u;
        if abs(nl.y) > abs(nl[k]) {
            k = 1u;
        }
        if abs(nl.z) > abs(nl[k]) {
            k = 2u;
        }
        let i = (k + 1u) % 3u;
        let j = (k + 2u) % 3u;
        var c = vec3<f32>(0.0);
        c[k] = -sign(nl[k]) * par[k];
        for (var corner = 0u; corner < 4u; corner++) {
            c[i] = select(-par[i], par[i], (corner & 1u) != 0u);
            c[j] = select(-par[j], par[j], (corner & 2u) != 0u);
            let p = x + r * c;
            plane_keep(&acc, p, dot(n, p) - d, margin);
        }
    } else if kind == 2u {
        let axis = quat_rotate(q, vec3<f32>(0.0, 0.0, par.y));
        for (var end = 0u; end < 2u; end++) {
            let p = x + select(-axis, axis, end == 1u);
            plane_keep(&acc, p, dot(n, p) - d - par.x, margin);
        }
    } else {
        let r = quat_matrix(q);
        let dl = -(transpose(r) * n);
        var u = vec2<f32>(1.0, 0.0);
        let radial = length(dl.xy);
        if radial > 1e-6 {
            u = dl.xy / radial;
        }
        if abs(dl.z) < 0.5 {
            for (var end = 0u; end < 2u; end++) {
                let p = x + r * vec3<f32>(par.x * u, select(-par.y, par.y, end == 1u));
                plane_keep(&acc, p, dot(n, p) - d, margin);
            }
        } else {
            let z = select(-par.y, par.y, dl.z > 0.0);
            var v = u;
            for (var k = 0u; k < 4u; k++) {
                let p = x + r * vec3<f32>(par.x * v, z);
                plane_keep(&acc, p, dot(n, p) - d, margin);
                v = vec2<f32>(-v.y, v.x);
            }
        }
    }
    return acc;
}

