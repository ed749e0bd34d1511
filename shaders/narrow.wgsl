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


// ---- pairs of dynamic shapes ------------------------------------------------------
//
// A manifold: the normal n from shape b towards shape a, the thicknesses (t_a, t_b)
// (radius of a sphere or capsule, else 0) and up to 8 pairs of core points (world frame) whose
// gap n·(p_a − p_b) − t_a − t_b is at most the margin.
//
// * sphere a – sphere b: the centres, n along x_a − x_b (ẑ if they coincide);
// * sphere a – box b: the sphere's centre c and the point q of the box closest to it,
//   n = (c − q)/|c − q|; a centre inside the box is pushed out through the face of
//   least depth (q on that face);
// * box a – box b: separating axes (3 + 3 face normals, 9 edge cross products; an edge
//   axis is taken only if it separates more than the best face axis by 1e-3 of the
//   larger box). Face axis: the incident face of the other box (the most opposed to
//   the axis) is clipped against the side planes of the reference face
//   (Sutherland–Hodgman, at most 8 vertices, 1e-5 of the larger box tolerance so that
//   coincident corners are kept); each vertex within the margin gives a contact with
//   its foot on the reference face; separated boxes whose faces do not overlap get
//   their closest points instead. Edge axis: the closest points of the two edges.
// * sphere a – capsule b: the centre and its closest point on the core segment, as
//   two spheres; capsule a – capsule b: the closest points of the core segments (one
//   point, as on the CPU), as two spheres;
// * capsule a – box b: see capsule_box;
// * sphere a – cylinder b: the centre and the cylinder's closest point (see
//   sphere_cylinder).

const MANIFOLD_POINTS: u32 = 8u;

struct Manifold {
    count: u32,
    n: vec3<f32>,
    ta: f32,
    tb: f32,
    pa: array<vec3<f32>, 8>,
    pb: array<vec3<f32>, 8>,
}

fn empty_manifold(n: vec3<f32>, ta: f32, tb: f32) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    m.n = n;
    m.ta = ta;
    m.tb = tb;
    return m;
}

// Adds a point pair unless a kept one lies within `tol` of it on both shapes.
fn manifold_push(m: ptr<function, Manifold>, pa: vec3<f32>, pb: vec3<f32>, tol: f32) {
    for (var k = 0u; k < (*m).count; k++) {
        if length((*m).pa[k] - pa) <= tol && length((*m).pb[k] - pb) <= tol {
            return;
        }
    }
    if (*m).count < MANIFOLD_POINTS {
        (*m).pa[(*m).count] = pa;
        (*m).pb[(*m).count] = pb;
        (*m).count = (*m).count + 1u;
    }
}

fn sphere_sphere(xa: vec3<f32>, ra: f32, xb: vec3<f32>, rb: f32, margin: f32) -> Manifold {
    let d = xa - xb;
    let dist = length(d);
    var n = vec3<f32>(0.0, 0.0, 1.0);
    if dist > 0.0 {
        n = d / dist;
    }
    var m = empty_manifold(n, ra, rb);
    if dist - ra - rb <= margin {
        manifold_push(&m, xa, xb, 0.0);
    }
    return m;
}

// Box b: centre xb, rotation rb (columns: axes), half extents e.
fn sphere_box(xa: vec3<f32>, ra: f32, xb: vec3<f32>, rb: mat3x3<f32>, e: vec3<f32>, margin: f32) -> Manifold {
    let c = transpose(rb) * (xa - xb);
    var q = clamp(c, -e, e);
    var nl: vec3<f32>;
    var gap: f32;
    let out = c - q;
    let dist = length(out);
    if dist > 0.0 {
        nl = out / dist;
        gap = dist - ra;
    } else {
        // Inside: the face of least depth e_k − |c_k|.
        let depth = e - abs(c);
        var k = 0u;
        if depth.y < depth[k] {
            k = 1u;
        }
        if depth.z < depth[k] {
            k = 2u;
        }
        var s = 1.0;
        if c[k] < 0.0 {
            s = -1.0;
        }
        nl = vec3<f32>(0.0);
        nl[k] = s;
        q[k] = s * e[k];
        gap = -depth[k] - ra;
    }
    return sphere_on_surface(xa, ra, xb, rb, q, nl, gap, margin);
}

// The manifold of sphere a (centre xa, radius ra) whose closest surface point of solid
// b (centre xb, rotation rb) is q with outward normal nl (both in b's frame) at gap
// `gap`: one contact (xa, xb + rb q) if within the margin.
fn sphere_on_surface(xa: vec3<f32>, ra: f32, xb: vec3<f32>, rb: mat3x3<f32>, q: vec3<f32>, nl: vec3<f32>, gap: f32, margin: f32) -> Manifold {
    var m = empty_manifold(rb * nl, ra, 0.0);
    if gap <= margin {
        manifold_push(&m, xa, xb + rb * q, 0.0);
    }
    return m;
}

// Cylinder b: centre xb, rotation rb, radius r and half length l along its local z.
// With c the sphere's centre in b's frame, ρ = |(c_x, c_y)|: outside, q clamps ρ to r
// (along (c_x, c_y)/ρ) and c_z to ±l, n = (c − q)/|c − q|; inside, the centre leaves
// through the surface of least depth, the cap (l − |c_z|) or the side (r − ρ; along x̂
// when ρ = 0), with q on it and n its outward normal.
fn sphere_cylinder(xa: vec3<f32>, ra: f32, xb: vec3<f32>, rb: mat3x3<f32>, r: f32, l: f32, margin: f32) -> Manifold {
    let c = transpose(rb) * (xa - xb);
    let rho = length(c.xy);
    var radial = vec2<f32>(1.0, 0.0);
    if rho > 0.0 {
        radial = c.xy / rho;
    }
    var q = vec3<f32>(c.xy, clamp(c.z, -l, l));
    if rho > r {
        q = vec3<f32>(radial * r, q.z);
    }
    let out = c - q;
    let dist = length(out);
    if dist > 0.0 {
        return sphere_on_surface(xa, ra, xb, rb, q, out / dist, dist - ra, margin);
    }
    let cap = l - abs(c.z);
    let side = r - rho;
    if cap < side {
        let s = sign_or_one(c.z);
        return sphere_on_surface(xa, ra, xb, rb, vec3<f32>(c.xy, s * l), vec3<f32>(0.0, 0.0, s), -cap - ra, margin);
    }
    return sphere_on_surface(xa, ra, xb, rb, vec3<f32>(radial * r, c.z), vec3<f32>(radial, 0.0), -side - ra, margin);
}

struct Obb {
    c: vec3<f32>,
    r: mat3x3<f32>,
    e: vec3<f32>,
}

// Half width of box b along unit l.
fn obb_radius(b: Obb, l: vec3<f32>) -> f32 {
    return b.e.x * abs(dot(b.r[0], l)) + b.e.y * abs(dot(b.r[1], l)) + b.e.z * abs(dot(b.r[2], l));
}

// How far apart the boxes are along unit l (negative: overlap).
fn obb_separation(a: Obb, b: Obb, l: vec3<f32>) -> f32 {
    return abs(dot(l, a.c - b.c)) - obb_radius(a, l) - obb_radius(b, l);
}

fn sign_or_one(x: f32) -> f32 {
    return select(1.0, -1.0, x < 0.0);
}

// Keeps the part of polygon `poly` (n vertices) where dot(p − o, dir) ≤ limit.
fn clip_polygon(poly: ptr<function, array<vec3<f32>, 8>>, n: u32, o: vec3<f32>, dir: vec3<f32>, limit: f32) -> u32 {
    var out: array<vec3<f32>, 8>;
    var m = 0u;
    for (var k = 0u; k < n; k++) {
        let p = (*poly)[k];
        let q = (*poly)[(k + 1u) % n];
        let dp = dot(p - o, dir) - limit;
        let dq = dot(q - o, dir) - limit;
        if dp <= 0.0 && m < 8u {
            out[m] = p;
            m += 1u;
        }
        if ((dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0)) && m < 8u {
            out[m] = p + (q - p) * (dp / (dp - dq));
            m += 1u;
        }
    }
    for (var k = 0u; k < m; k++) {
        (*poly)[k] = out[k];
    }
    return m;
}

// Edge ia of box a against edge ib of box b along the unit separating axis l (either
// sign): the edge of a nearest b and the edge of b nearest a, their closest points
// (the lines' closest points clamped to the edges), one contact if its gap along l
// (oriented from b to a) is within the margin.
fn edge_contact(a: Obb, ia: u32, b: Obb, ib: u32, axis: vec3<f32>, margin: f32) -> Manifold {
    var l = axis;
    if dot(l, a.c - b.c) < 0.0 {
        l = -l;
    }
    var pa0 = a.c;
    var pb0 = b.c;
    for (var k = 0u; k < 3u; k++) {
        if k != ia {
            pa0 -= a.r[k] * (a.e[k] * sign_or_one(dot(a.r[k], l)));
        }
        if k != ib {
            pb0 += b.r[k] * (b.e[k] * sign_or_one(dot(b.r[k], l)));
        }
    }
    let da = a.r[ia];
    let db = b.r[ib];
    let w = pa0 - pb0;
    let c = dot(da, db);
    let den = 1.0 - c * c;
    var s = 0.0;
    if den > 1e-12 {
        s = (c * dot(db, w) - dot(da, w)) / den;
    }
    s = clamp(s, -a.e[ia], a.e[ia]);
    let t = clamp(dot(db, w + da * s), -b.e[ib], b.e[ib]);
    s = clamp(dot(da, pb0 + db * t - pa0), -a.e[ia], a.e[ia]);
    let ca = pa0 + da * s;
    let cb = pb0 + db * t;
    var m = empty_manifold(l, 0.0, 0.0);
    if dot(l, ca - cb) <= margin {
        manifold_push(&m, ca, cb, 0.0);
    }
    return m;
}

fn box_box(a: Obb, b: Obb, margin: f32) -> Manifold {
    let scale = max(max(max(a.e.x, a.e.y), a.e.z), max(max(b.e.x, b.e.y), b.e.z));
    var best = -3.4e38;
    var kind = 0u;
    var ia = 0u;
    var ib = 0u;
    for (var k = 0u; k < 3u; k++) {
        let sa = obb_separation(a, b, a.r[k]);
        if sa > best {
            best = sa;
            kind = 0u;
            ia = k;
        }
    }
    for (var k = 0u; k < 3u; k++) {
        let sb = obb_separation(a, b, b.r[k]);
        if sb > best {
            best = sb;
            kind = 1u;
            ib = k;
        }
    }
    let face_best = best;
    var edge_axis = vec3<f32>(0.0);
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) {
            let l = cross(a.r[i], b.r[j]);
            let len = length(l);
            if len < 1e-5 {
                continue;
            }
            let s = obb_separation(a, b, l / len);
            if s > best && s > face_best + 1e-3 * scale {
                best = s;
                kind = 2u;
                ia = i;
                ib = j;
                edge_axis = l / len;
            }
        }
    }
    if best > margin {
        return empty_manifold(vec3<f32>(0.0, 0.0, 1.0), 0.0, 0.0);
    }
    if kind == 2u {
        return edge_contact(a, ia, b, ib, edge_axis, margin);
    }
    // Face axis: reference box `rf` (its face k), incident box `inc`.
    var rf = a;
    var inc = b;
    var k = ia;
    if kind == 1u {
        rf = b;
        inc = a;
        k = ib;
    }
    var nref = rf.r[k];
    if dot(nref, inc.c - rf.c) < 0.0 {
        nref = -nref;
    }
    // Incident face: the face of `inc` whose outward normal is most opposed to nref.
    var mk = 0u;
    for (var j = 1u; j < 3u; j++) {
        if abs(dot(inc.r[j], nref)) > abs(dot(inc.r[mk], nref)) {
            mk = j;
        }
    }
    let ic = inc.c - inc.r[mk] * (inc.e[mk] * sign_or_one(dot(inc.r[mk], nref)));
    let iu = inc.r[(mk + 1u) % 3u] * inc.e[(mk + 1u) % 3u];
    let iv = inc.r[(mk + 2u) % 3u] * inc.e[(mk + 2u) % 3u];
    var poly: array<vec3<f32>, 8>;
    poly[0] = ic - iu - iv;
    poly[1] = ic + iu - iv;
    poly[2] = ic + iu + iv;
    poly[3] = ic - iu + iv;
    let m = face_contacts(rf, k, nref, &poly, 4u, kind == 1u, margin, 1e-5 * scale);
    if m.count == 0u && best > 0.0 {
        return closest_boxes(a, b, margin);
    }
    return m;
}

// The incident polygon `poly` (n vertices) clipped against the side planes of face k of
// the reference box rf (outward normal nref), with `tol` of slack so that coincident
// corners are kept: each vertex p within the margin of the face gives a contact with
// its foot p − ((p − f)·nref) nref on the face (f the face's centre). Normal from b to
// a: nref when the incident shape is a.
fn face_contacts(rf: Obb, k: u32, nref: vec3<f32>, poly: ptr<function, array<vec3<f32>, 8>>, n: u32, incident_is_a: bool, margin: f32, tol: f32) -> Manifold {
    let fc = rf.c + nref * rf.e[k];
    let ku = (k + 1u) % 3u;
    let kv = (k + 2u) % 3u;
    var count = n;
    count = clip_polygon(poly, count, fc, rf.r[ku], rf.e[ku] + tol);
    count = clip_polygon(poly, count, fc, -rf.r[ku], rf.e[ku] + tol);
    count = clip_polygon(poly, count, fc, rf.r[kv], rf.e[kv] + tol);
    count = clip_polygon(poly, count, fc, -rf.r[kv], rf.e[kv] + tol);
    var m = empty_manifold(select(-nref, nref, incident_is_a), 0.0, 0.0);
    for (var v = 0u; v < count; v++) {
        let p = (*poly)[v];
        let depth = dot(p - fc, nref);
        if depth <= margin {
            let foot = p - nref * depth;
            if incident_is_a {
                manifold_push(&m, p, foot, tol);
            } else {
                manifold_push(&m, foot, p, tol);
            }
        }
    }
    return m;
}

// The point of box b closest to p.
fn obb_project(b: Obb, p: vec3<f32>) -> vec3<f32> {
    let local = clamp(transpose(b.r) * (p - b.c), -b.e, b.e);
    return b.c + b.r * local;
}

// Separated boxes whose faces do not overlap along the best axis (parallel edges side
// by side, a corner near an edge): the closest points by alternating projections
// (16 rounds; exact after one or two for parallel edges), one contact if within the
// margin, normal along their difference.
fn closest_boxes(a: Obb, b: Obb, margin: f32) -> Manifold {
    var pb = b.c;
    var pa = obb_project(a, pb);
    for (var k = 0u; k < 16u; k++) {
        pb = obb_project(b, pa);
        pa = obb_project(a, pb);
    }
    let d = pa - pb;
    let dist = length(d);
    var m = empty_manifold(vec3<f32>(0.0, 0.0, 1.0), 0.0, 0.0);
    if dist > 0.0 && dist <= margin {
        m.n = d / dist;
        manifold_push(&m, pa, pb, 0.0);
    }
    return m;
}

// ---- capsules: a core segment c ± d (d = l R ẑ, l the half length) and a radius ----

// The half vector d = l R ẑ of a capsule's core segment (par: radius, half length).
fn capsule_half(s: PoseF, par: vec3<f32>) -> vec3<f32> {
    return quat_rotate(s.q, vec3<f32>(0.0, 0.0, par.y));
}

// The point of segment c ± d closest to p: c + t d, t = clamp((p − c)·d / d·d, −1, 1).
fn segment_closest(c: vec3<f32>, d: vec3<f32>, p: vec3<f32>) -> vec3<f32> {
    let dd = dot(d, d);
    var t = 0.0;
    if dd > 0.0 {
        t = clamp(dot(p - c, d) / dd, -1.0, 1.0);
    }
    return c + d * t;
}

// Closest points of segments ca ± da and cb ± db: with p = ca − da + 2s da and
// q = cb − db + 2t db, the unclamped minimiser of |p − q|² solves
// s = (b f − c e)/(a e − b²) (a = |2da|², e = |2db|², b = 2da·2db, c = 2da·r, f = 2db·r,
// r = (ca − da) − (cb − db)); s is clamped to [0, 1], t = (b s + f)/e, and when t
// leaves [0, 1] it is clamped and s recomputed. Parallel segments (a e − b² ≤ 1e-6 a e)
// start from s = 0 (Ericson's rule; parry's too, but with the shapes the other way
// round, so for parallel capsules the two backends may pick different points of the
// line of closest points).
fn segments_closest(ca: vec3<f32>, da: vec3<f32>, cb: vec3<f32>, db: vec3<f32>) -> array<vec3<f32>, 2> {
    let d1 = 2.0 * da;
    let d2 = 2.0 * db;
    let p1 = ca - da;
    let p2 = cb - db;
    let r = p1 - p2;
    let a = dot(d1, d1);
    let e = dot(d2, d2);
    let f = dot(d2, r);
    var s = 0.0;
    var t = 0.0;
    if a <= 1e-12 && e <= 1e-12 {
        s = 0.0;
    } else if a <= 1e-12 {
        t = clamp(f / e, 0.0, 1.0);
    } else {
        let c = dot(d1, r);
        if e <= 1e-12 {
            s = clamp(-c / a, 0.0, 1.0);
        } else {
            let b = dot(d1, d2);
            let den = a * e - b * b;
            if den > 1e-6 * a * e {
                s = clamp((b * f - c * e) / den, 0.0, 1.0);
            }
            t = (b * s + f) / e;
            if t < 0.0 {
                t = 0.0;
                s = clamp(-c / a, 0.0, 1.0);
            } else if t > 1.0 {
                t = 1.0;
                s = clamp((b - c) / a, 0.0, 1.0);
            }
        }
    }
    return array<vec3<f32>, 2>(p1 + d1 * s, p2 + d2 * t);
}

// Closest points of segment c ± d and box b, in the box's frame: t minimises the
// convex, C¹ function f(t) = |p(t) − clamp(p(t), −e, e)|² over [−1, 1], with
// p(t) = Rᵀ(c − x_b) + t Rᵀd; f′(t)/2 = (p − clamp p)·Rᵀd is nondecreasing, so its root
// is bisected (32 halvings, below f32 resolution). Returns (p(t), clamp p(t)).
fn segment_box_closest(c: vec3<f32>, d: vec3<f32>, b: Obb) -> array<vec3<f32>, 2> {
    let rt = transpose(b.r);
    let p0 = rt * (c - b.c);
    let dl = rt * d;
    var lo = -1.0;
    var hi = 1.0;
    let p_lo = p0 - dl;
    let p_hi = p0 + dl;
    if dot(p_lo - clamp(p_lo, -b.e, b.e), dl) >= 0.0 {
        hi = -1.0;
    } else if dot(p_hi - clamp(p_hi, -b.e, b.e), dl) <= 0.0 {
        lo = 1.0;
    } else {
        for (var k = 0u; k < 32u; k++) {
            let t = 0.5 * (lo + hi);
            let p = p0 + dl * t;
            if dot(p - clamp(p, -b.e, b.e), dl) < 0.0 {
                lo = t;
            } else {
                hi = t;
            }
        }
    }
    let p = p0 + dl * (0.5 * (lo + hi));
    return array<vec3<f32>, 2>(p, clamp(p, -b.e, b.e));
}

// Capsule a (core ca ± da, radius ra) against box b. Gaps count the radius (the margin
// is widened by ra, the thickness is ra).
// * Core segment apart from the box (distance above 1e-6 of the larger extent): their
//   closest points (segment_box_closest). If the box's point lies inside a face (one
//   local coordinate clamped), the segment is clipped against that face's side planes
//   (at most 2 points, feet on the face, the closest point among them; a capsule lying
//   on the face gets both ends); otherwise (an edge or corner) the closest points
//   alone, normal along their difference.
// * Core segment inside the box: the segment is treated as a box of half extents
//   (0, 0, l), so the separating axes are the box's 3 face normals and the 3 cross
//   products of its edges with the segment (the face normals of their Minkowski
//   difference); an edge axis is taken only if it separates more than the best face
//   axis by 1e-3 of the larger extent. Face axis: the segment clipped against the
//   face as above; edge axis: the closest points of the box's edge and the segment.
fn capsule_box(ca: vec3<f32>, da: vec3<f32>, ra: f32, b: Obb, margin: f32) -> Manifold {
    let l = length(da);
    let reach = margin + ra;
    let scale = max(max(max(b.e.x, b.e.y), b.e.z), l);
    let tol = 1e-5 * scale;
    var poly: array<vec3<f32>, 8>;
    poly[0] = ca - da;
    poly[1] = ca + da;
    var m = empty_manifold(vec3<f32>(0.0, 0.0, 1.0), ra, 0.0);
    let closest = segment_box_closest(ca, da, b);
    let delta = closest[0] - closest[1];
    let dist = length(delta);
    if dist > 1e-6 * scale {
        if dist > reach {
            return m;
        }
        let outside = vec3<u32>(delta != vec3<f32>(0.0));
        if outside.x + outside.y + outside.z == 1u {
            let k = select(select(0u, 1u, outside.y == 1u), 2u, outside.z == 1u);
            let nref = b.r[k] * sign_or_one(delta[k]);
            m = face_contacts(b, k, nref, &poly, 2u, true, reach, tol);
        } else {
            m.n = b.r * (delta / dist);
            manifold_push(&m, b.c + b.r * closest[0], b.c + b.r * closest[1], 0.0);
        }
        m.ta = ra;
        return m;
    }
    var u = vec3<f32>(0.0);
    if l > 0.0 {
        u = da / l;
    }
    let seg = Obb(ca, mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), u), vec3<f32>(0.0, 0.0, l));
    var best = -3.4e38;
    var k = 0u;
    for (var j = 0u; j < 3u; j++) {
        let s = obb_separation(seg, b, b.r[j]);
        if s > best {
            best = s;
            k = j;
        }
    }
    let face_best = best;
    var edge = 3u;
    var edge_axis = vec3<f32>(0.0);
    for (var j = 0u; j < 3u; j++) {
        let x = cross(u, b.r[j]);
        let len = length(x);
        if len < 1e-5 {
            continue;
        }
        let s = obb_separation(seg, b, x / len);
        if s > best && s > face_best + 1e-3 * scale {
            best = s;
            edge = j;
            edge_axis = x / len;
        }
    }
    if edge < 3u {
        m = edge_contact(seg, 2u, b, edge, edge_axis, reach);
    } else {
        var nref = b.r[k];
        if dot(nref, ca - b.c) < 0.0 {
            nref = -nref;
        }
        m = face_contacts(b, k, nref, &poly, 2u, true, reach, tol);
    }
    m.ta = ra;
    return m;
}

// The manifold of shape a (kind ka, parameters par_a, pose sa) against shape b; kinds 0
// sphere, 1 box, 2 capsule, 3 cylinder, 4 half-space (parameters: its unit normal in
// the shape frame; the plane passes through the frame's origin). The pairs: any solid
// on a half-space (b), sphere–sphere, sphere–box, sphere–capsule and sphere–cylinder
// (a the sphere), capsule–capsule, capsule–box (a the capsule), box–box; others (the
// other cylinder pairs) give no points (the host refuses them).
fn shape_manifold(ka: u32, par_a: vec3<f32>, sa: PoseF, kb: u32, par_b: vec3<f32>, sb: PoseF, margin: f32) -> Manifold {
    if kb == 4u {
        let n = normalize(quat_rotate(sb.q, par_b));
        var pts = plane_points(n, dot(n, sb.x), ka, par_a, sa.x, sa.q, margin);
        var thickness = 0.0;
        if ka == 0u || ka == 2u {
            thickness = par_a.x;
        }
        var m = empty_manifold(n, thickness, 0.0);
        for (var k = 0u; k < pts.count; k++) {
            // The foot of the surface point on the plane.
            let core = pts.p[k].xyz;
            manifold_push(&m, core, core - n * (pts.p[k].w + thickness), 0.0);
        }
        return m;
    }
    if ka == 0u && kb == 0u {
        return sphere_sphere(sa.x, par_a.x, sb.x, par_b.x, margin);
    }
    if ka == 0u && kb == 1u {
        return sphere_box(sa.x, par_a.x, sb.x, quat_matrix(sb.q), par_b, margin);
    }
    if ka == 0u && kb == 3u {
        return sphere_cylinder(sa.x, par_a.x, sb.x, quat_matrix(sb.q), par_b.x, par_b.y, margin);
    }
    if ka == 0u && kb == 2u {
        let q = segment_closest(sb.x, capsule_half(sb, par_b), sa.x);
        return sphere_sphere(sa.x, par_a.x, q, par_b.x, margin);
    }
    if ka == 2u && kb == 2u {
        let p = segments_closest(sa.x, capsule_half(sa, par_a), sb.x, capsule_half(sb, par_b));
        return sphere_sphere(p[0], par_a.x, p[1], par_b.x, margin);
    }
    if ka == 2u && kb == 1u {
        return capsule_box(sa.x, capsule_half(sa, par_a), par_a.x, Obb(sb.x, quat_matrix(sb.q), par_b), margin);
    }
    if ka == 1u && kb == 1u {
        return box_box(Obb(sa.x, quat_matrix(sa.q), par_a), Obb(sb.x, quat_matrix(sb.q), par_b), margin);
    }
    return empty_manifold(vec3<f32>(0.0, 0.0, 1.0), 0.0, 0.0);
}
