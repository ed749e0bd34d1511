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
    if kind == SPHERE {
        plane_keep(&acc, x, dot(n, x) - d - par.x, margin);
    } else if kind == BOX {
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
    } else if kind == CAPSULE {
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
//   sphere_cylinder);
// * cylinder a – box, capsule or cylinder b: see cylinder_pair.

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
    var poly: array<vec3<f32>, 8>;
    let count = obb_face_toward(inc, -nref, &poly);
    let m = face_contacts(rf, k, nref, &poly, count, kind == 1u, margin, 1e-5 * scale);
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

// ---- cylinders against boxes, capsules and cylinders ------------------------------
//
// Cylinder a (centre c, unit axis â, radius r, half length l) against a box or a
// capsule's core segment (an Obb of half extents (0, 0, l)) or another cylinder b.
// Along a unit n (from b towards a) the two are apart by
//   s(n) = n·(c_a − c_b) − h_a(n) − h_b(n),
// with the support radii h(n) = r|â × n| + l|â·n| (cylinder) and Σ e_i|u_i·n| (box).
// Every s(n) is a lower bound of the signed distance σ (the separation when apart,
// minus the penetration depth when overlapping), and σ = max_n s(n), attained where
// the supporting features of a and b face each other. So σ and its normal are the
// best s(n) over candidate directions that include every such pair of features:
// * the box's face normals and the cylinder's axis (faces and caps);
// * â × u_k (the cylinder's side against a box edge), and for each box corner v the
//   direction from v to the axis, ⊥ â (side against corner), and from v to the rim
//   point at v's azimuth on the cap facing v (rim against corner);
// * a rim against a line (a box edge, the other cylinder's axis) or against the other
//   cylinder's rim: the rim angles θ where q(θ) = cap centre + r(cos θ ê1 + sin θ ê2)
//   is nearest or farthest from the line or circle, i.e. the roots of
//   F(θ) = (q − π(q))·t̂(θ) (π the closest point of the target, t̂ the rim's unit
//   tangent): sign changes among 24 samples, each bisected 24 times; the candidate
//   is t̂ × (the target's tangent at π(q)), ⊥ both features, and q − π(q).
// Each candidate is tried with both signs. Directions of a face or cap are preferred
// unless another separates more by 1e-5 of the largest dimension (an edge direction
// can equal a face normal, e.g. â × u_j for a cylinder lying on face k), so that
// resting contact keeps a face manifold.
//
// Points: if a face or cap direction won, its face is the reference (a box face, or a
// cap as its inscribed square turned to the contact's azimuth, as parry does) and the
// other shape's feature towards it (the cylinder's side line or cap square, as on a
// half-space; the box's face; the capsule's core) is clipped against it
// (face_contacts). Otherwise, or when the clipping keeps nothing as deep as σ, the
// supporting features along n (a rim point or side line; a box corner, edge or the
// core segment) give one contact at their closest points, moved along n so that its
// gap is σ, or, for two nearly parallel segments, the ends of their overlap
// (cyl_pair_support_contacts).

struct Cyl {
    c: vec3<f32>,
    a: vec3<f32>,
    r: f32,
    l: f32,
}

// A unit vector ⊥ unit n (the first of the tangent basis of a contact normal).
fn orthobasis_first(n: vec3<f32>) -> vec3<f32> {
    let a = abs(n);
    var v = vec3<f32>(0.0, 0.0, 1.0);
    if a.x <= a.y && a.x <= a.z {
        v = vec3<f32>(1.0, 0.0, 0.0);
    } else if a.y <= a.z {
        v = vec3<f32>(0.0, 1.0, 0.0);
    }
    return normalize(cross(n, v));
}

// h(n) = r|â × n| + l|â·n| (|â × n| rather than √(1 − (â·n)²), which loses √ε near the
// axis).
fn cyl_radius(c: Cyl, n: vec3<f32>) -> f32 {
    return c.r * length(cross(c.a, n)) + c.l * abs(dot(c.a, n));
}

// The unit azimuth of m about the axis, (m − (m·â)â)/|…|, or a fixed one ⊥ â when m is
// within 1e-6 of the axis. The projection is applied twice: once, its rounding leaves
// an axial part of about ε/|…|, which would lift a rim point off the cap.
fn cyl_azimuth(c: Cyl, m: vec3<f32>) -> vec3<f32> {
    var p = m - c.a * dot(c.a, m);
    p -= c.a * dot(c.a, p);
    let len = length(p);
    if len > 1e-6 * length(m) {
        return p / len;
    }
    return orthobasis_first(c.a);
}

// Cylinder a against b: an Obb (box, or a capsule's core) or a cylinder.
struct CylPair {
    a: Cyl,
    obb: Obb,
    cyl: Cyl,
    b_is_cyl: bool,
}

fn cyl_pair_separation(p: CylPair, n: vec3<f32>) -> f32 {
    if p.b_is_cyl {
        return dot(n, p.a.c - p.cyl.c) - cyl_radius(p.a, n) - cyl_radius(p.cyl, n);
    }
    return dot(n, p.a.c - p.obb.c) - cyl_radius(p.a, n) - obb_radius(p.obb, n);
}

// The best separations and normals of the face and cap directions (class 0; `face`:
// 0–2 the box's face axis, 3 a's cap, 4 b's cap) and of the others (class 1).
struct SepBest {
    s: array<f32, 2>,
    n: array<vec3<f32>, 2>,
    face: u32,
}

fn sep_consider(p: CylPair, best: ptr<function, SepBest>, dir: vec3<f32>, rank: u32, face: u32) {
    let len = length(dir);
    if !(len > 1e-12) {
        return;
    }
    for (var k = 0u; k < 2u; k++) {
        let n = dir * (select(1.0, -1.0, k == 1u) / len);
        let s = cyl_pair_separation(p, n);
        if s > (*best).s[rank] {
            (*best).s[rank] = s;
            (*best).n[rank] = n;
            if rank == 0u {
                (*best).face = face;
            }
        }
    }
}

// A target of the rim search: the line through p along unit u, or (circle) the circle
// of centre p, unit axis u and radius r.
struct RimTarget {
    p: vec3<f32>,
    u: vec3<f32>,
    r: f32,
    circle: bool,
}

fn target_closest(t: RimTarget, q: vec3<f32>) -> vec3<f32> {
    let w = q - t.p;
    if !t.circle {
        return t.p + t.u * dot(w, t.u);
    }
    let radial = w - t.u * dot(w, t.u);
    let len = length(radial);
    var dir = orthobasis_first(t.u);
    if len > 0.0 {
        dir = radial / len;
    }
    return t.p + dir * t.r;
}

// F(θ) = (q(θ) − π(q(θ)))·t̂(θ) on the rim of centre o, radius r, basis (e1, e2).
fn rim_slope(o: vec3<f32>, e1: vec3<f32>, e2: vec3<f32>, r: f32, t: RimTarget, th: f32) -> f32 {
    let q = o + (e1 * cos(th) + e2 * sin(th)) * r;
    return dot(q - target_closest(t, q), e2 * cos(th) - e1 * sin(th));
}

// The candidates of the rim of cylinder c on the cap at side `side` (±1) against t.
fn rim_search(p: CylPair, best: ptr<function, SepBest>, c: Cyl, side: f32, t: RimTarget) {
    let o = c.c + c.a * (side * c.l);
    let e1 = orthobasis_first(c.a);
    let e2 = cross(c.a, e1);
    let dth = 6.2831853 / 24.0;
    let first = rim_slope(o, e1, e2, c.r, t, 0.0);
    var prev = first;
    for (var i = 1u; i <= 24u; i++) {
        let th = dth * f32(i);
        // The last sample is the first again: F(2π) evaluated in f32 (sin 2π ≠ 0) can
        // differ in sign from F(0) and hide a root at θ = 0.
        var f = first;
        if i < 24u {
            f = rim_slope(o, e1, e2, c.r, t, th);
        }
        if (prev < 0.0) != (f < 0.0) {
            var lo = th - dth;
            var hi = th;
            let below = prev < 0.0;
            for (var k = 0u; k < 24u; k++) {
                let mid = 0.5 * (lo + hi);
                if (rim_slope(o, e1, e2, c.r, t, mid) < 0.0) == below {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let root = 0.5 * (lo + hi);
            let q = o + (e1 * cos(root) + e2 * sin(root)) * c.r;
            let tangent = e2 * cos(root) - e1 * sin(root);
            let x = target_closest(t, q);
            var along = t.u;
            if t.circle {
                along = cross(t.u, x - t.p);
            }
            sep_consider(p, best, cross(tangent, along), 1u, 0u);
            sep_consider(p, best, q - x, 1u, 0u);
        }
        prev = f;
    }
}

// Whether corner bits `bits` (bit k: + side along axis k) name a distinct corner of
// b (no + side along an axis of zero extent).
fn obb_corner_used(b: Obb, bits: u32) -> bool {
    for (var k = 0u; k < 3u; k++) {
        if (bits & (1u << k)) != 0u && b.e[k] == 0.0 {
            return false;
        }
    }
    return true;
}

fn obb_corner(b: Obb, bits: u32) -> vec3<f32> {
    var v = b.c;
    for (var k = 0u; k < 3u; k++) {
        v += b.r[k] * (b.e[k] * select(-1.0, 1.0, (bits & (1u << k)) != 0u));
    }
    return v;
}

// No candidate yet.
fn sep_best_empty() -> SepBest {
    var best: SepBest;
    best.s = array<f32, 2>(-3.4e38, -3.4e38);
    best.face = 3u;
    return best;
}

fn cyl_obb_best(p: CylPair) -> SepBest {
    var best = sep_best_empty();
    let a = p.a;
    let b = p.obb;
    // A core segment's axis is no face.
    let faces = select(1u, 0u, b.e.x > 0.0 || b.e.y > 0.0);
    sep_consider(p, &best, a.a, 0u, 3u);
    for (var k = 0u; k < 3u; k++) {
        if b.e[k] > 0.0 {
            sep_consider(p, &best, b.r[k], faces, k);
            sep_consider(p, &best, cross(a.a, b.r[k]), 1u, 0u);
        }
    }
    for (var bits = 0u; bits < 8u; bits++) {
        if !obb_corner_used(b, bits) {
            continue;
        }
        let v = obb_corner(b, bits);
        let w = a.c - v;
        sep_consider(p, &best, w - a.a * dot(a.a, w), 1u, 0u);
        let o = a.c + a.a * (sign_or_one(dot(a.a, v - a.c)) * a.l);
        sep_consider(p, &best, o + cyl_azimuth(a, v - o) * a.r - v, 1u, 0u);
    }
    // Edges along axis k: the corners with bit k clear, their line along u_k.
    for (var k = 0u; k < 3u; k++) {
        if b.e[k] == 0.0 {
            continue;
        }
        for (var bits = 0u; bits < 8u; bits++) {
            if (bits & (1u << k)) != 0u || !obb_corner_used(b, bits) {
                continue;
            }
            let t = RimTarget(obb_corner(b, bits), b.r[k], 0.0, false);
            rim_search(p, &best, a, 1.0, t);
            rim_search(p, &best, a, -1.0, t);
        }
    }
    return best;
}

fn cyl_cyl_best(p: CylPair) -> SepBest {
    var best = sep_best_empty();
    let a = p.a;
    let b = p.cyl;
    sep_consider(p, &best, a.a, 0u, 3u);
    sep_consider(p, &best, b.a, 0u, 4u);
    sep_consider(p, &best, cross(a.a, b.a), 1u, 0u);
    let w = a.c - b.c;
    sep_consider(p, &best, w - a.a * dot(a.a, w), 1u, 0u);
    for (var i = 0u; i < 2u; i++) {
        let side = select(-1.0, 1.0, i == 1u);
        rim_search(p, &best, a, side, RimTarget(b.c, b.a, 0.0, false));
        rim_search(p, &best, b, side, RimTarget(a.c, a.a, 0.0, false));
        for (var j = 0u; j < 2u; j++) {
            let cap = b.c + b.a * (select(-1.0, 1.0, j == 1u) * b.l);
            rim_search(p, &best, a, side, RimTarget(cap, b.a, b.r, true));
        }
    }
    return best;
}

// The feature of cylinder c towards unit m, as on a half-space: the side line's ends
// at m's azimuth u if |â·m| < 0.5, else the cap's rim points at u turned by 0°, 90°,
// 180°, 270°. Returns the number of points.
fn cyl_feature(c: Cyl, m: vec3<f32>, poly: ptr<function, array<vec3<f32>, 8>>) -> u32 {
    let u = cyl_azimuth(c, m) * c.r;
    let am = dot(c.a, m);
    if abs(am) < 0.5 {
        (*poly)[0] = c.c + u - c.a * c.l;
        (*poly)[1] = c.c + u + c.a * c.l;
        return 2u;
    }
    let o = c.c + c.a * (sign_or_one(am) * c.l);
    let w = cross(c.a, u);
    (*poly)[0] = o + u;
    (*poly)[1] = o + w;
    (*poly)[2] = o - u;
    (*poly)[3] = o - w;
    return 4u;
}

// The cap square of cylinder c towards m (the points of cyl_feature) as face 2 of an
// Obb: axes (u ± w)/√2 and â, half extents (r/√2, r/√2, l).
fn cap_square(c: Cyl, m: vec3<f32>) -> Obb {
    let u = cyl_azimuth(c, m);
    let w = cross(c.a, u);
    let h = 0.70710678 * c.r;
    return Obb(c.c, mat3x3<f32>((u + w) * 0.70710678, (w - u) * 0.70710678, c.a), vec3<f32>(h, h, c.l));
}

// The face of box b whose outward normal is most aligned with unit m (the ends of a
// core segment, e = (0, 0, l)), as a polygon. Returns the number of points.
fn obb_face_toward(b: Obb, m: vec3<f32>, poly: ptr<function, array<vec3<f32>, 8>>) -> u32 {
    if b.e.x == 0.0 && b.e.y == 0.0 {
        (*poly)[0] = b.c - b.r[2] * b.e.z;
        (*poly)[1] = b.c + b.r[2] * b.e.z;
        return 2u;
    }
    var k = 0u;
    for (var j = 1u; j < 3u; j++) {
        if abs(dot(b.r[j], m)) > abs(dot(b.r[k], m)) {
            k = j;
        }
    }
    let fc = b.c + b.r[k] * (b.e[k] * sign_or_one(dot(b.r[k], m)));
    let iu = b.r[(k + 1u) % 3u] * b.e[(k + 1u) % 3u];
    let iv = b.r[(k + 2u) % 3u] * b.e[(k + 2u) % 3u];
    (*poly)[0] = fc - iu - iv;
    (*poly)[1] = fc + iu - iv;
    (*poly)[2] = fc + iu + iv;
    (*poly)[3] = fc - iu + iv;
    return 4u;
}

// The supporting feature of cylinder c along unit m as a segment (centre, half
// vector): the side line at m's azimuth when |â·m| < 1e-5, else the rim point.
fn cyl_support_segment(c: Cyl, m: vec3<f32>) -> array<vec3<f32>, 2> {
    let am = dot(c.a, m);
    let side = c.c + cyl_azimuth(c, m) * c.r;
    if abs(am) < 1e-5 {
        return array<vec3<f32>, 2>(side, c.a * c.l);
    }
    return array<vec3<f32>, 2>(side + c.a * (sign_or_one(am) * c.l), vec3<f32>(0.0));
}

// The supporting feature of box b along unit m as a segment: the corner Σ sign(u_k·m)
// e_k u_k, or the edge through it along the axis k of least |u_k·m| when that is below
// 1e-5 (axes of zero extent skipped).
fn obb_support_segment(b: Obb, m: vec3<f32>) -> array<vec3<f32>, 2> {
    var v = b.c;
    var k = 3u;
    for (var j = 0u; j < 3u; j++) {
        let d = dot(b.r[j], m);
        v += b.r[j] * (b.e[j] * sign_or_one(d));
        if b.e[j] > 0.0 && abs(d) < 1e-5 && (k == 3u || abs(d) < abs(dot(b.r[k], m))) {
            k = j;
        }
    }
    if k == 3u {
        return array<vec3<f32>, 2>(v, vec3<f32>(0.0));
    }
    let hv = b.r[k] * b.e[k];
    return array<vec3<f32>, 2>(v - hv * sign_or_one(dot(b.r[k], m)), hv);
}

// The contacts of the supporting features along n: one at their closest points, the
// point on b moved along n so that the gap is σ. When both features are segments within
// 1e-3 rad of parallel (a side line against a box edge, a core or another side line),
// the ends of their overlap along a's segment come first, each with the closest point
// of b's segment and its own gap, and the closest points follow only if these are
// not as deep as σ (segments crossing at a small angle).
fn cyl_pair_support_contacts(p: CylPair, n: vec3<f32>, sigma: f32, m: ptr<function, Manifold>, tol: f32) {
    let fa = cyl_support_segment(p.a, -n);
    var fb: array<vec3<f32>, 2>;
    if p.b_is_cyl {
        fb = cyl_support_segment(p.cyl, n);
    } else {
        fb = obb_support_segment(p.obb, n);
    }
    let la = length(fa[1]);
    let lb = length(fb[1]);
    if la > 0.0 && lb > 0.0 && length(cross(fa[1], fb[1])) < 1e-3 * la * lb {
        let u = fa[1] / la;
        let t0 = dot(fb[0] - fb[1] - fa[0], u);
        let t1 = dot(fb[0] + fb[1] - fa[0], u);
        let lo = max(min(t0, t1), -la);
        let hi = min(max(t0, t1), la);
        var deepest = 3.4e38;
        for (var k = 0u; k < 2u && lo <= hi; k++) {
            let pa = fa[0] + u * select(lo, hi, k == 1u);
            let pb = segment_closest(fb[0], fb[1], pa);
            deepest = min(deepest, dot(n, pa - pb));
            manifold_push(m, pa, pb, tol);
        }
        if deepest <= sigma + tol {
            return;
        }
    }
    let cl = segments_closest(fa[0], fa[1], fb[0], fb[1]);
    manifold_push(m, cl[0], cl[1] + n * (dot(n, cl[0] - cl[1]) - sigma), tol);
}

// Cylinder a against box, capsule core (thickness tb, margin widened by it) or
// cylinder b (see the section's head).
fn cylinder_pair(p: CylPair, tb: f32, margin: f32) -> Manifold {
    var best: SepBest;
    var scale = max(p.a.r, p.a.l);
    if p.b_is_cyl {
        best = cyl_cyl_best(p);
        scale = max(scale, max(p.cyl.r, p.cyl.l));
    } else {
        best = cyl_obb_best(p);
        scale = max(scale, max(max(p.obb.e.x, p.obb.e.y), p.obb.e.z));
    }
    let reach = margin + tb;
    var rank = 0u;
    if best.s[1] > best.s[0] + 1e-5 * scale {
        rank = 1u;
    }
    let sigma = best.s[rank];
    let n = best.n[rank];
    var m = empty_manifold(n, 0.0, tb);
    if sigma > reach {
        return m;
    }
    if rank == 0u {
        var poly: array<vec3<f32>, 8>;
        let tol = 1e-5 * scale;
        if best.face < 3u {
            let count = cyl_feature(p.a, -n, &poly);
            m = face_contacts(p.obb, best.face, n, &poly, count, true, reach, tol);
        } else if best.face == 3u {
            var count: u32;
            if p.b_is_cyl {
                count = cyl_feature(p.cyl, n, &poly);
            } else {
                count = obb_face_toward(p.obb, n, &poly);
            }
            m = face_contacts(cap_square(p.a, -n), 2u, -n, &poly, count, false, reach, tol);
        } else {
            let count = cyl_feature(p.a, -n, &poly);
            m = face_contacts(cap_square(p.cyl, n), 2u, n, &poly, count, true, reach, tol);
        }
        m.n = n;
        m.tb = tb;
        var deepest = 3.4e38;
        for (var k = 0u; k < m.count; k++) {
            deepest = min(deepest, dot(n, m.pa[k] - m.pb[k]));
        }
        if deepest <= sigma + tol {
            return m;
        }
    }
    // A full clipped manifold gives up its last point to the deepest.
    m.count = min(m.count, MANIFOLD_POINTS - 1u);
    cyl_pair_support_contacts(p, n, sigma, &m, 1e-5 * scale);
    return m;
}

// The manifold of shape a (kind ka, parameters par_a, pose sa) against shape b; kinds
// SPHERE, BOX, CAPSULE, CYLINDER, HALF_SPACE (parameters: its unit normal in the shape
// frame; the plane passes through the frame's origin). The pairs: any solid
// on a half-space (b), sphere–sphere, sphere–box, sphere–capsule and sphere–cylinder
// (a the sphere), capsule–capsule, capsule–box (a the capsule), box–box, cylinder–box,
// cylinder–capsule and cylinder–cylinder (a the cylinder); others give no points (the
// host refuses them).
fn shape_manifold(ka: u32, par_a: vec3<f32>, sa: PoseF, kb: u32, par_b: vec3<f32>, sb: PoseF, margin: f32) -> Manifold {
    if kb == HALF_SPACE {
        let n = normalize(quat_rotate(sb.q, par_b));
        var pts = plane_points(n, dot(n, sb.x), ka, par_a, sa.x, sa.q, margin);
        var thickness = 0.0;
        if ka == SPHERE || ka == CAPSULE {
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
    if ka == SPHERE && kb == SPHERE {
        return sphere_sphere(sa.x, par_a.x, sb.x, par_b.x, margin);
    }
    if ka == SPHERE && kb == BOX {
        return sphere_box(sa.x, par_a.x, sb.x, quat_matrix(sb.q), par_b, margin);
    }
    if ka == SPHERE && kb == CYLINDER {
        return sphere_cylinder(sa.x, par_a.x, sb.x, quat_matrix(sb.q), par_b.x, par_b.y, margin);
    }
    if ka == SPHERE && kb == CAPSULE {
        let q = segment_closest(sb.x, capsule_half(sb, par_b), sa.x);
        return sphere_sphere(sa.x, par_a.x, q, par_b.x, margin);
    }
    if ka == CAPSULE && kb == CAPSULE {
        let p = segments_closest(sa.x, capsule_half(sa, par_a), sb.x, capsule_half(sb, par_b));
        return sphere_sphere(p[0], par_a.x, p[1], par_b.x, margin);
    }
    if ka == CAPSULE && kb == BOX {
        return capsule_box(sa.x, capsule_half(sa, par_a), par_a.x, Obb(sb.x, quat_matrix(sb.q), par_b), margin);
    }
    if ka == BOX && kb == BOX {
        return box_box(Obb(sa.x, quat_matrix(sa.q), par_a), Obb(sb.x, quat_matrix(sb.q), par_b), margin);
    }
    if ka == CYLINDER && (kb == BOX || kb == CAPSULE || kb == CYLINDER) {
        var p: CylPair;
        p.a = Cyl(sa.x, quat_rotate(sa.q, vec3<f32>(0.0, 0.0, 1.0)), par_a.x, par_a.y);
        p.b_is_cyl = kb == CYLINDER;
        var tb = 0.0;
        if kb == CYLINDER {
            p.cyl = Cyl(sb.x, quat_rotate(sb.q, vec3<f32>(0.0, 0.0, 1.0)), par_b.x, par_b.y);
        } else if kb == CAPSULE {
            p.obb = Obb(sb.x, mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), quat_rotate(sb.q, vec3<f32>(0.0, 0.0, 1.0))), vec3<f32>(0.0, 0.0, par_b.y));
            tb = par_b.x;
        } else {
            p.obb = Obb(sb.x, quat_matrix(sb.q), par_b);
        }
        return cylinder_pair(p, tb, margin);
    }
    return empty_manifold(vec3<f32>(0.0, 0.0, 1.0), 0.0, 0.0);
}
