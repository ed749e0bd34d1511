//! The half-space narrow phase of `shaders/narrow.wgsl` against `axion-collision`'s
//! `detect` (parry, f64) for spheres, boxes, capsules and cylinders at random poses over a
//! ground of random normal: the same number of points, the same gaps and core points.
//!
//! Tolerance: a gap or point is a rotation, a dot product and a few sums of
//! quantities of size ≤ L = 1 + the largest coordinate (m); each rounds by ε = 2⁻²³
//! relative and the inputs were rounded to f32 first: we allow 64 ε L. Cases where a
//! point's gap is within 1e-4 m of the margin (f32 and f64 may keep different sets)
//! or where a box has two faces almost equally opposed to the normal (either face is
//! a valid manifold) or a cylinder's axis is within 1e-3 of switching between side and
//! cap (|m_z| = 0.5) or of the plane's normal (the cap's points turn freely) are
//! excluded.

mod common;

use axion_collision::{CollisionWorld, Contact};
use axion_gpu::narrow::{PairQuery, PlaneQuery, run_pair_probe, run_plane_probe};
use axion_math::Pose;
use axion_model::{BodyDesc, Geometry, ModelBuilder, Shape, ShapeDesc};
use nalgebra::{Isometry3, Quaternion, UnitQuaternion, Vector3};

const EPS: f64 = f32::EPSILON as f64;
const MARGIN: f64 = 0.05;

/// A small deterministic generator (splitmix64), uniform in [lo, hi).
struct Rng(u64);

impl Rng {
    fn next(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        lo + (hi - lo) * (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn rotation(&mut self) -> UnitQuaternion<f64> {
        loop {
            let q = Quaternion::new(
                self.next(-1.0, 1.0),
                self.next(-1.0, 1.0),
                self.next(-1.0, 1.0),
                self.next(-1.0, 1.0),
            );
            if q.norm() > 0.1 {
                return UnitQuaternion::new_normalize(q);
            }
        }
    }
}

/// The CPU's contacts of `shape` at `pose` over the half-space with `normal` through
/// the origin: (core point on the shape, world frame; gap), sorted by gap.
fn cpu_points(normal: Vector3<f64>, shape: Shape, pose: Pose) -> Vec<(Vector3<f64>, f64)> {
    let mut b = ModelBuilder::new();
    b.add_body(
        BodyDesc::fixed("ground").shape(ShapeDesc::from_geometry(Geometry::HalfSpace { normal })),
    )
    .unwrap();
    b.add_body(
        BodyDesc::dynamic("body")
            .mass(1.0, Vector3::zeros(), shape.unit_inertia(1.0))
            .shape(ShapeDesc::new(shape)),
    )
    .unwrap();
    let model = b.build().unwrap();
    let world = CollisionWorld::new(&model).unwrap();
    let mut contacts: Vec<Contact> = Vec::new();
    world.detect(&[Isometry3::identity(), pose], MARGIN, &mut contacts);
    let mut points: Vec<_> = contacts
        .iter()
        .map(|c| {
            assert_eq!(c.body_a.0, 1, "the normal points into the shape");
            assert!(
                (c.point.normal - normal).norm() < 1e-9,
                "normal {}",
                c.point.normal
            );
            (
                (pose * nalgebra::Point3::from(c.point.local_a)).coords,
                c.gap,
            )
        })
        .collect();
    points.sort_by(|a, b| a.1.total_cmp(&b.1));
    points
}

#[test]
fn half_space_contacts_match_the_cpu() {
    let Some(ctx) = common::context() else {
        return;
    };
    let mut rng = Rng(7);
    let mut queries = Vec::new();
    while queries.len() < 600 {
        let normal = Vector3::new(rng.next(-0.5, 0.5), rng.next(-0.5, 0.5), 1.0).normalize();
        let shape = match queries.len() % 4 {
            0 => Shape::Sphere {
                radius: rng.next(0.05, 0.6),
            },
            1 => Shape::Box {
                half_extents: Vector3::new(
                    rng.next(0.05, 0.6),
                    rng.next(0.05, 0.6),
                    rng.next(0.05, 0.6),
                ),
            },
            2 => Shape::Capsule {
                radius: rng.next(0.05, 0.4),
                half_length: rng.next(0.05, 0.6),
            },
            _ => Shape::Cylinder {
                radius: rng.next(0.05, 0.6),
                half_length: rng.next(0.05, 0.6),
            },
        };
        let rotation = if rng.next(0.0, 1.0) < 0.2 {
            UnitQuaternion::identity()
        } else {
            rng.rotation()
        };
        let centre = Vector3::new(
            rng.next(-2.0, 2.0),
            rng.next(-2.0, 2.0),
            rng.next(-0.3, 0.9),
        );
        let pose = Isometry3::from_parts(centre.into(), rotation);
        if let Shape::Box { .. } = shape {
            let local = rotation.inverse() * normal;
            let mut a: Vec<f64> = local.iter().map(|x| x.abs()).collect();
            a.sort_by(f64::total_cmp);
            if a[2] - a[1] < 1e-3 {
                continue;
            }
        }
        if let Shape::Cylinder { .. } = shape {
            let m = -(rotation.inverse() * normal);
            if (m.z.abs() - 0.5).abs() < 1e-3 || m.xy().norm() < 1e-3 {
                continue;
            }
        }
        queries.push(PlaneQuery {
            normal,
            offset: 0.0,
            shape,
            pose,
            margin: MARGIN,
        });
    }
    let gpu = run_plane_probe(&ctx, &queries).unwrap();
    let (mut compared, mut points) = (0, 0);
    for (q, found) in queries.iter().zip(&gpu) {
        let cpu = cpu_points(q.normal, q.shape, q.pose);
        let mut dev: Vec<_> = found.clone();
        dev.sort_by(|a, b| a.gap.total_cmp(&b.gap));
        let near_margin = cpu.iter().any(|p| (p.1 - MARGIN).abs() < 1e-4)
            || dev.iter().any(|p| (f64::from(p.gap) - MARGIN).abs() < 1e-4);
        if near_margin {
            continue;
        }
        let l = 1.0 + q.pose.translation.vector.amax() + 1.0;
        assert_eq!(dev.len(), cpu.len(), "{q:?}: GPU {dev:?}, CPU {cpu:?}");
        for (d, (p, g)) in dev.iter().zip(&cpu) {
            assert!(
                (f64::from(d.gap) - g).abs() <= 64.0 * EPS * l,
                "{q:?}: gap GPU {} CPU {g}",
                d.gap
            );
            let core = Vector3::new(d.core[0], d.core[1], d.core[2]).cast::<f64>();
            // Points of equal gap (a face parallel to the plane) may come in any order.
            let nearest = cpu
                .iter()
                .filter(|c| (c.1 - g).abs() <= 128.0 * EPS * l)
                .map(|c| (c.0 - core).norm())
                .fold(f64::INFINITY, f64::min);
            assert!(
                nearest <= 64.0 * EPS * l,
                "{q:?}: core point {core} is {nearest} m from the CPU's ({p})"
            );
        }
        compared += 1;
        points += dev.len();
    }
    eprintln!(
        "compared {compared} of {} cases, {points} points",
        queries.len()
    );
    assert!(compared > 500 && points > 300, "too few cases compared");
}

/// A CPU contact: normal from b to a, point on a, point on b, gap.
type CpuContact = (Vector3<f64>, Vector3<f64>, Vector3<f64>, f64);

/// The CPU's contacts of solid `a` at `pose_a` with solid `b` at `pose_b` (two free
/// bodies whose centres of mass are the shape frames) within the margin, as (normal
/// from b to a, point on a, point on b, gap), core points in the world frame.
fn cpu_pair(a: Shape, pose_a: Pose, b: Shape, pose_b: Pose) -> Vec<CpuContact> {
    let mut builder = ModelBuilder::new();
    for (name, shape) in [("a", a), ("b", b)] {
        builder
            .add_body(
                BodyDesc::dynamic(name)
                    .mass(1.0, Vector3::zeros(), shape.unit_inertia(1.0))
                    .shape(ShapeDesc::new(shape)),
            )
            .unwrap();
    }
    let model = builder.build().unwrap();
    let world = CollisionWorld::new(&model).unwrap();
    let mut contacts: Vec<Contact> = Vec::new();
    let poses = [pose_a, pose_b];
    world.detect(&poses, MARGIN, &mut contacts);
    // parry's manifolds can carry points beyond the margin (the far corners of a face):
    // those are not contacts of the device's narrow phase.
    contacts
        .iter()
        .filter(|c| c.gap <= MARGIN)
        .map(|c| {
            let on = |body: usize, local: &Vector3<f64>| {
                (poses[body] * nalgebra::Point3::from(*local)).coords
            };
            let (pa, pb) = (
                on(c.body_a.0, &c.point.local_a),
                on(c.body_b.0, &c.point.local_b),
            );
            if c.body_a.0 == 0 {
                (c.point.normal, pa, pb, c.gap)
            } else {
                (-c.point.normal, pb, pa, c.gap)
            }
        })
        .collect()
}

/// Inner and outer radius of a solid about its centre (m): the largest ball inside
/// it (a cylinder's: min(r, l), ignoring the corner) and the smallest ball around it.
fn radii(s: &Shape) -> (f64, f64) {
    match *s {
        Shape::Sphere { radius } => (radius, radius),
        Shape::Box { half_extents: e } => (e.min(), e.norm()),
        Shape::Capsule {
            radius,
            half_length,
        } => (radius, radius + half_length),
        Shape::Cylinder {
            radius,
            half_length,
        } => (radius.min(half_length), radius.hypot(half_length)),
    }
}

/// A centre for shape a near shape b (at the origin) along unit `direction`: at a
/// distance between 0.9 × the sum of their inner radii and the sum of their outer radii
/// plus the margin.
fn near_contact_centre(
    rng: &mut Rng,
    a: &Shape,
    b: &Shape,
    direction: Vector3<f64>,
) -> Vector3<f64> {
    let ((ia, oa), (ib, ob)) = (radii(a), radii(b));
    direction * rng.next(0.9 * (ia + ib), oa + ob + MARGIN)
}

/// How much farther (m) the device may place separated boxes than their distance (see
/// `pair_contacts_match_the_cpu`).
const SEPARATED_SLACK: f64 = 2e-3;

/// A random solid of the pair probe: sphere or box.
fn solid(rng: &mut Rng, sphere: bool) -> Shape {
    if sphere {
        Shape::Sphere {
            radius: rng.next(0.1, 0.7),
        }
    } else {
        Shape::Box {
            half_extents: Vector3::new(rng.next(0.1, 0.7), rng.next(0.1, 0.7), rng.next(0.1, 0.7)),
        }
    }
}

/// Sphere–sphere, sphere–box and box–box manifolds of `narrow.wgsl` against
/// `axion-collision` at random poses near contact: the deepest gap and its normal agree
/// to f32 rounding (64 ε L) wherever the CPU's gap is the exact signed distance, that
/// is for spheres and for penetrating boxes (where the separating-axis depth equals
/// parry's EPA depth). For separated boxes the device's points are the incident face's
/// vertices clipped to the reference face, whose gaps can differ from the distance
/// (the closest feature may lie outside the reference face, or the best separating axis
/// may not be the closest direction): it may find a speculative contact the CPU does
/// not, it must never miss one, and its deepest gap is at most [`SEPARATED_SLACK`]
/// above the distance. Aligned boxes (a fifth of the box cases) meeting
/// face to face give the same number of points as on the CPU. (Parallel edges side by
/// side get one point on the device, at their closest points, where parry gives the two
/// ends of their overlap.)
#[test]
fn pair_contacts_match_the_cpu() {
    let Some(ctx) = common::context() else {
        return;
    };
    let mut rng = Rng(11);
    let (mut queries, mut shapes) = (Vec::new(), Vec::new());
    while queries.len() < 600 {
        let kind = queries.len() % 3;
        let a = solid(&mut rng, kind < 2);
        let b = solid(&mut rng, kind == 0);
        let aligned = kind == 2 && rng.next(0.0, 1.0) < 0.2;
        let rotation = |rng: &mut Rng| {
            if aligned {
                UnitQuaternion::identity()
            } else {
                rng.rotation()
            }
        };
        let pose_b = Isometry3::from_parts(Vector3::zeros().into(), rotation(&mut rng));
        let direction = rng.rotation() * Vector3::z();
        let centre = near_contact_centre(&mut rng, &a, &b, direction);
        let pose_a = Isometry3::from_parts(centre.into(), rotation(&mut rng));
        let cpu = cpu_pair(a, pose_a, b, pose_b);
        let deepest = cpu.iter().map(|c| c.3).fold(f64::INFINITY, f64::min);
        // Near contact, not deeply interpenetrating, not at the margin's edge.
        let near = cpu.is_empty() || (deepest > -0.05 && (deepest - MARGIN).abs() > 1e-4);
        if !near || (cpu.is_empty() && rng.next(0.0, 1.0) < 0.9) {
            continue;
        }
        let geometry = |s: Shape| Geometry::Solid(s);
        queries.push(PairQuery {
            a: geometry(a),
            pose_a,
            b: geometry(b),
            pose_b,
            margin: MARGIN,
        });
        shapes.push((kind, aligned, cpu));
    }
    let gpu = run_pair_probe(&ctx, &queries).unwrap();
    let (mut compared, mut face_counts) = (0, 0);
    for (q, (m, (kind, aligned, cpu))) in queries.iter().zip(gpu.iter().zip(&shapes)) {
        let n = Vector3::new(m.normal[0], m.normal[1], m.normal[2]).cast::<f64>();
        let gaps: Vec<f64> = m
            .points
            .iter()
            .map(|(pa, pb)| {
                let d = Vector3::new(pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]).cast::<f64>();
                n.dot(&d) - f64::from(m.thickness[0] + m.thickness[1])
            })
            .collect();
        let dev = gaps.iter().copied().fold(f64::INFINITY, f64::min);
        let deepest = cpu.iter().map(|c| c.3).fold(f64::INFINITY, f64::min);
        let l = 2.0 + q.pose_a.translation.vector.amax();
        let tol = 64.0 * EPS * l;
        let exact = *kind < 2 || deepest < -1e-3;
        if !m.points.is_empty() {
            // The f64 arbiter: no sampled direction separates more than the device's
            // normal (box–box: beyond its edge-axis preference, 1e-3 of the larger box,
            // or, apart, the slack of its face axes); no point is deeper than s(n), and
            // the deepest is s(n) for spheres (box–box: its deepest corner may be
            // clipped away).
            let (s_dev, sampled) = arbiter(q, &n);
            let scale = match (solid_of(&q.a), solid_of(&q.b)) {
                (Shape::Box { half_extents: x }, Shape::Box { half_extents: y }) => {
                    x.max().max(y.max())
                }
                _ => 0.0,
            };
            let allowed = if exact { 1e-3 * scale } else { SEPARATED_SLACK };
            assert!(
                sampled <= s_dev + tol + allowed
                    && dev >= s_dev - tol
                    && (*kind == 2 || (dev - s_dev).abs() <= tol),
                "{q:?}: GPU gap {dev}, its normal separates {s_dev}, sampling finds {sampled}"
            );
        }
        if cpu.is_empty() {
            assert!(
                m.points.is_empty() || (*kind == 2 && dev > -tol),
                "{q:?}: the GPU finds {dev} where the CPU finds nothing"
            );
            continue;
        }
        assert!(
            !m.points.is_empty(),
            "{q:?}: the GPU misses the CPU's {cpu:?}"
        );
        if exact {
            assert!(
                (dev - deepest).abs() <= tol,
                "{q:?}: deepest gap GPU {dev} CPU {deepest}"
            );
            let normal = cpu.iter().min_by(|x, y| x.3.total_cmp(&y.3)).unwrap().0;
            assert!(
                normal.dot(&n) > 1.0 - 1e-4,
                "{q:?}: normal GPU {n} CPU {normal}"
            );
        } else {
            assert!(
                dev <= deepest + SEPARATED_SLACK,
                "{q:?}: GPU {dev} CPU {deepest}"
            );
        }
        let face_to_face = cpu.iter().all(|c| c.0.amax() > 1.0 - 1e-9);
        if *aligned && face_to_face {
            assert_eq!(m.points.len(), cpu.len(), "{q:?}: GPU {m:?} CPU {cpu:?}");
            face_counts += 1;
        }
        compared += 1;
    }
    eprintln!(
        "compared {compared} of {} pair cases ({face_counts} aligned boxes)",
        queries.len()
    );
    assert!(compared > 400 && face_counts > 10, "too few cases compared");
}

/// A random capsule of the pair probe.
fn capsule(rng: &mut Rng) -> Shape {
    Shape::Capsule {
        radius: rng.next(0.05, 0.4),
        half_length: rng.next(0.1, 0.7),
    }
}

/// Sphere–capsule, capsule–capsule and capsule–box manifolds of `narrow.wgsl` against
/// `axion-collision` at random poses near contact (a third each). Each device narrow
/// phase of a capsule measures the exact distance of its core segment (closest points,
/// or separating axes where the core is inside the box), so the deepest gap agrees to
/// f32 rounding (64 ε L) wherever the CPU's is exact too — the capsule pairs, and
/// capsule–box up to the CPU's 1e-5 m closest-point slack — and the normal to 1e-4. For
/// sphere–capsule and non-parallel capsule pairs the core points agree too (parallel
/// segments have a line of closest points, of which each side takes one). The
/// thickness is the sphere's or capsule's radius.
#[test]
fn capsule_and_cylinder_pair_contacts_match_the_cpu() {
    let Some(ctx) = common::context() else {
        return;
    };
    let mut rng = Rng(23);
    let (mut queries, mut cases) = (Vec::new(), Vec::new());
    while queries.len() < 800 {
        let kind = queries.len() % 4;
        // Half of the spheres against cylinders are small enough for their centres to
        // sink inside (the push-out branch).
        let a = match kind {
            0 => solid(&mut rng, true),
            3 if rng.next(0.0, 1.0) < 0.5 => Shape::Sphere {
                radius: rng.next(0.01, 0.04),
            },
            3 => solid(&mut rng, true),
            _ => capsule(&mut rng),
        };
        let b = match kind {
            2 => solid(&mut rng, false),
            3 => Shape::Cylinder {
                radius: rng.next(0.1, 0.6),
                half_length: rng.next(0.1, 0.6),
            },
            _ => capsule(&mut rng),
        };
        let pose_b = Isometry3::from_parts(Vector3::zeros().into(), rng.rotation());
        let direction = rng.rotation() * Vector3::z();
        let centre = near_contact_centre(&mut rng, &a, &b, direction);
        let pose_a = Isometry3::from_parts(centre.into(), rng.rotation());
        let cpu = cpu_pair(a, pose_a, b, pose_b);
        let deepest = cpu.iter().map(|c| c.3).fold(f64::INFINITY, f64::min);
        let near = cpu.is_empty() || (deepest > -0.05 && (deepest - MARGIN).abs() > 1e-4);
        if !near || (cpu.is_empty() && rng.next(0.0, 1.0) < 0.9) {
            continue;
        }
        // Core directions of the capsules (their local z axes), to tell parallel pairs.
        let axis = |s: &Shape, p: &Pose| match s {
            Shape::Capsule { .. } => Some(p.rotation * Vector3::z()),
            _ => None,
        };
        let parallel = match (axis(&a, &pose_a), axis(&b, &pose_b)) {
            (Some(u), Some(v)) => u.cross(&v).norm() < 1e-2,
            _ => false,
        };
        queries.push(PairQuery {
            a: Geometry::Solid(a),
            pose_a,
            b: Geometry::Solid(b),
            pose_b,
            margin: MARGIN,
        });
        cases.push((kind, parallel, a, cpu));
    }
    let gpu = run_pair_probe(&ctx, &queries).unwrap();
    let (mut compared, mut points) = (0, 0);
    for (q, (m, (kind, parallel, a, cpu))) in queries.iter().zip(gpu.iter().zip(&cases)) {
        let n = Vector3::new(m.normal[0], m.normal[1], m.normal[2]).cast::<f64>();
        let v = |p: [f32; 3]| Vector3::new(p[0], p[1], p[2]).cast::<f64>();
        let thickness = f64::from(m.thickness[0] + m.thickness[1]);
        let gaps: Vec<f64> = m
            .points
            .iter()
            .map(|(pa, pb)| n.dot(&(v(*pa) - v(*pb))) - thickness)
            .collect();
        let dev = gaps.iter().copied().fold(f64::INFINITY, f64::min);
        let deepest = cpu.iter().map(|c| c.3).fold(f64::INFINITY, f64::min);
        let l = 2.0 + q.pose_a.translation.vector.amax();
        let tol = 64.0 * EPS * l;
        if !m.points.is_empty() {
            // The f64 arbiter: the gap is s(n) and no sampled direction separates more
            // (capsule–box: beyond its edge-axis preference, 1e-3 of the larger size).
            let (s_dev, sampled) = arbiter(q, &n);
            let allowed = match (solid_of(&q.a), solid_of(&q.b)) {
                (Shape::Capsule { half_length, .. }, Shape::Box { half_extents: e }) => {
                    1e-3 * half_length.max(e.max())
                }
                _ => 0.0,
            };
            assert!(
                sampled <= s_dev + tol + allowed && (dev - s_dev).abs() <= tol,
                "{q:?}: GPU gap {dev}, its normal separates {s_dev}, sampling finds {sampled}"
            );
        }
        if cpu.is_empty() {
            assert!(
                m.points.is_empty() || dev > MARGIN - tol,
                "{q:?}: the GPU finds {dev} where the CPU finds nothing"
            );
            continue;
        }
        assert!(
            !m.points.is_empty(),
            "{q:?}: the GPU misses the CPU's {cpu:?}"
        );
        if let Shape::Capsule { radius, .. } | Shape::Sphere { radius } = *a {
            assert!(
                (f64::from(m.thickness[0]) - radius).abs() <= EPS * radius,
                "{q:?}: thickness {:?}",
                m.thickness
            );
        }
        let cpu_deepest = cpu.iter().min_by(|x, y| x.3.total_cmp(&y.3)).unwrap();
        let slack = tol
            + if *kind == 2 {
                1e-5 * (1.0 - 10.0 * deepest)
            } else {
                0.0
            };
        assert!(
            (dev - deepest).abs() <= slack,
            "{q:?}: deepest gap GPU {dev} CPU {deepest}"
        );
        assert!(
            cpu_deepest.0.dot(&n) > 1.0 - 1e-4,
            "{q:?}: normal GPU {n} CPU {}",
            cpu_deepest.0
        );
        if *kind != 2 && !parallel {
            let (pa, pb) = (v(m.points[0].0), v(m.points[0].1));
            assert!(
                (pa - cpu_deepest.1).norm() <= tol && (pb - cpu_deepest.2).norm() <= tol,
                "{q:?}: core points GPU {pa}, {pb} CPU {}, {}",
                cpu_deepest.1,
                cpu_deepest.2
            );
            points += 1;
        }
        compared += 1;
    }
    eprintln!(
        "compared {compared} of {} capsule and cylinder cases ({points} with their core points)",
        queries.len()
    );
    assert!(compared > 550 && points > 400, "too few cases compared");
}

/// A random cylinder of the pair probe.
fn cylinder(rng: &mut Rng) -> Shape {
    Shape::Cylinder {
        radius: rng.next(0.1, 0.6),
        half_length: rng.next(0.1, 0.6),
    }
}

/// Support radius $h(n) = \max_{p} n \cdot (p - x)$ of a solid about its centre $x$, in
/// f64: $r\lvert\hat a \times n\rvert + l\lvert\hat a \cdot n\rvert$ for a cylinder
/// (axis $\hat a$ = the pose's $\hat z$), $\sum_i e_i \lvert u_i \cdot n\rvert$ for a box,
/// $l\lvert\hat a \cdot n\rvert$ for a capsule's core.
fn support_radius(shape: &Shape, pose: &Pose, n: &Vector3<f64>) -> f64 {
    let local = pose.rotation.inverse() * n;
    match *shape {
        Shape::Cylinder {
            radius,
            half_length,
        } => radius * local.xy().norm() + half_length * local.z.abs(),
        Shape::Box { half_extents: e } => e.dot(&local.abs()),
        Shape::Capsule { half_length, .. } => half_length * local.z.abs(),
        Shape::Sphere { .. } => 0.0,
    }
}

/// The separation $s(n) = n \cdot (x_a - x_b) - h_a(n) - h_b(n) - t_a - t_b$ of solid a
/// from solid b along the unit $n$ (from b towards a), f64; $t$ the radius of a sphere
/// or capsule. At most the signed distance, which is its maximum over $n$.
fn separation(a: &Shape, pose_a: &Pose, b: &Shape, pose_b: &Pose, n: &Vector3<f64>) -> f64 {
    let thickness = |s: &Shape| match *s {
        Shape::Sphere { radius } | Shape::Capsule { radius, .. } => radius,
        _ => 0.0,
    };
    n.dot(&(pose_a.translation.vector - pose_b.translation.vector))
        - support_radius(a, pose_a, n)
        - support_radius(b, pose_b, n)
        - thickness(a)
        - thickness(b)
}

/// The solid of a pair query's side.
fn solid_of(g: &Geometry) -> Shape {
    match g {
        Geometry::Solid(s) => *s,
        _ => unreachable!("pair probes of solids"),
    }
}

/// The f64 arbiter of a device manifold with normal `n`: ($s(n)$, the best sampled
/// separation of the pair).
fn arbiter(q: &PairQuery, n: &Vector3<f64>) -> (f64, f64) {
    let (a, b) = (solid_of(&q.a), solid_of(&q.b));
    let s = |n: &Vector3<f64>| separation(&a, &q.pose_a, &b, &q.pose_b, n);
    (s(n), sampled_separation(&s))
}

/// Signed distance of point `p` (world) from the surface of a solid (a capsule's core
/// segment), f64.
fn surface_distance(shape: &Shape, pose: &Pose, p: &Vector3<f64>) -> f64 {
    let local = pose.inverse_transform_vector(&(p - pose.translation.vector));
    let boxed = |d: Vector3<f64>| {
        let outside = d.map(|x| x.max(0.0)).norm();
        outside + d.max().min(0.0)
    };
    match *shape {
        Shape::Cylinder {
            radius,
            half_length,
        } => {
            let d = nalgebra::Vector2::new(local.xy().norm() - radius, local.z.abs() - half_length);
            d.map(|x| x.max(0.0)).norm() + d.max().min(0.0)
        }
        Shape::Box { half_extents: e } => boxed(local.abs() - e),
        Shape::Capsule { half_length, .. } => {
            let z = local.z.clamp(-half_length, half_length);
            (local - Vector3::new(0.0, 0.0, z)).norm()
        }
        Shape::Sphere { .. } => local.norm(),
    }
}

/// The cylinder-pair cases of [`cylinder_pair_contacts_match_the_cpu`]: `count` random
/// near-contact poses of a cylinder against a box, a capsule and a cylinder in turn, with
/// the CPU's contacts. `extreme`: thin coins, rods and slabs, a third of the rotations
/// whole quarter turns (axes parallel or perpendicular), and penetrations to 0.15 m.
fn cylinder_pair_cases(
    seed: u64,
    count: usize,
    extreme: bool,
) -> (Vec<PairQuery>, Vec<CylinderCase>) {
    let mut rng = Rng(seed);
    let (mut queries, mut cases) = (Vec::new(), Vec::new());
    let quarter_turns = |rng: &mut Rng| {
        let k = |rng: &mut Rng| (rng.next(0.0, 4.0).floor()) * std::f64::consts::FRAC_PI_2;
        UnitQuaternion::from_euler_angles(k(rng), k(rng), k(rng))
    };
    let shape = |rng: &mut Rng, kind: usize| -> Shape {
        if !extreme {
            return match kind {
                0 => solid(rng, false),
                1 => capsule(rng),
                _ => cylinder(rng),
            };
        }
        let pick = rng.next(0.0, 3.0).floor();
        match kind {
            0 if pick == 0.0 => Shape::Box {
                half_extents: Vector3::new(
                    rng.next(0.3, 1.0),
                    rng.next(0.3, 1.0),
                    rng.next(0.005, 0.03),
                ),
            },
            0 => solid(rng, false),
            1 if pick == 0.0 => Shape::Capsule {
                radius: rng.next(0.005, 0.03),
                half_length: rng.next(0.3, 1.0),
            },
            1 => capsule(rng),
            _ if pick == 0.0 => Shape::Cylinder {
                radius: rng.next(0.2, 0.8),
                half_length: rng.next(0.005, 0.03),
            },
            _ if pick == 1.0 => Shape::Cylinder {
                radius: rng.next(0.01, 0.05),
                half_length: rng.next(0.5, 1.0),
            },
            _ => cylinder(rng),
        }
    };
    let deepest_allowed = if extreme { -0.15 } else { -0.05 };
    while queries.len() < count {
        let kind = queries.len() % 3;
        let a = shape(&mut rng, 2);
        let b = shape(&mut rng, kind);
        let rotation = |rng: &mut Rng| {
            if extreme && rng.next(0.0, 1.0) < 0.33 {
                quarter_turns(rng)
            } else {
                rng.rotation()
            }
        };
        let pose_b = Isometry3::from_parts(Vector3::zeros().into(), rotation(&mut rng));
        let direction = rotation(&mut rng) * Vector3::z();
        let centre = near_contact_centre(&mut rng, &a, &b, direction);
        let pose_a = Isometry3::from_parts(centre.into(), rotation(&mut rng));
        let cpu = cpu_pair(a, pose_a, b, pose_b);
        let deepest = cpu.iter().map(|c| c.3).fold(f64::INFINITY, f64::min);
        let near = cpu.is_empty() || (deepest > deepest_allowed && (deepest - MARGIN).abs() > 1e-4);
        if !near || (cpu.is_empty() && rng.next(0.0, 1.0) < 0.9) {
            continue;
        }
        queries.push(PairQuery {
            a: Geometry::Solid(a),
            pose_a,
            b: Geometry::Solid(b),
            pose_b,
            margin: MARGIN,
        });
        cases.push((kind, a, b, cpu));
    }
    (queries, cases)
}

/// A case of the cylinder-pair probe: kind (0 box, 1 capsule, 2 cylinder), shapes a and
/// b, the CPU's contacts.
type CylinderCase = (usize, Shape, Shape, Vec<CpuContact>);

/// Cylinder–box, cylinder–capsule and cylinder–cylinder manifolds of `narrow.wgsl`
/// against `axion-collision` at random poses near contact (a third each).
///
/// The separation of a along the unit $n$ (from b to a),
/// $s(n) = n \cdot (x_a - x_b) - h_a(n) - h_b(n)$, is at most the signed distance, which
/// is its maximum over $n$; the device takes the best of its candidate directions, the
/// CPU parry's EPA (checked by its closest points to $10^{-5}$ m). So, in f64:
/// * the device's deepest gap equals the CPU's to f32 rounding (64 ε L) plus that
///   slack, and its normal separates at least as much as the CPU's (to 64 ε L):
///   $s(n_{dev}) \ge s(n_{cpu})$ — where the two normals differ, the device's is the
///   better one;
/// * the normals agree to $1 - n_{dev} \cdot n_{cpu} \le 10^{-4}$;
/// * every device point lies on its shape's surface (the capsule's: on its core) to
///   64 ε L;
/// * the f64 arbiter of [`check_cylinder_pairs`] holds, and the CPU is consistent in
///   every case.
///
/// The largest differences are printed.
#[test]
fn cylinder_pair_contacts_match_the_cpu() {
    let Some(ctx) = common::context() else {
        return;
    };
    let (queries, cases) = cylinder_pair_cases(31, 900, false);
    let (compared, inconsistent, worst) = check_cylinder_pairs(&ctx, &queries, &cases, true);
    eprintln!(
        "compared {compared:?} of {} (cylinder–box, –capsule, –cylinder), the CPU \
         inconsistent in {inconsistent}; largest |gap difference|, angle between the \
         normals, s(n_cpu) − s(n_dev): {worst:?}",
        queries.len()
    );
    assert!(compared.iter().all(|&c| c > 200), "too few cases compared");
    assert_eq!(inconsistent, 0, "the CPU is exact on these cases");
}

/// [`cylinder_pair_contacts_match_the_cpu`] on thin coins, rods and slabs, with a third
/// of the rotations whole quarter turns (parallel and perpendicular axes, the
/// degenerate cross products) and penetrations to 0.15 m.
#[test]
fn extreme_cylinder_pairs_match_the_cpu() {
    let Some(ctx) = common::context() else {
        return;
    };
    let (queries, cases) = cylinder_pair_cases(37, 900, true);
    let (compared, inconsistent, worst) = check_cylinder_pairs(&ctx, &queries, &cases, false);
    eprintln!(
        "compared {compared:?} of {} extreme cases, the CPU inconsistent in \
         {inconsistent}; largest |gap difference|, angle between the normals, \
         s(n_cpu) − s(n_dev): {worst:?}",
        queries.len()
    );
    assert!(compared.iter().all(|&c| c > 200), "too few cases compared");
}

/// The best separation $\max_n s(n)$ found by sampling: 4000 directions spread over
/// the sphere (Fibonacci lattice), then the 8 best refined by a pattern search in their
/// tangent planes (steps halved from 0.05 rad to 1e-9 rad). A lower bound of the
/// signed distance, independent of both backends.
fn sampled_separation(s: &dyn Fn(&Vector3<f64>) -> f64) -> f64 {
    let count = 4000;
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let mut samples: Vec<(f64, Vector3<f64>)> = (0..count)
        .map(|i| {
            let z = 1.0 - 2.0 * (i as f64 + 0.5) / count as f64;
            let r = (1.0 - z * z).sqrt();
            let phi = golden * i as f64;
            let n = Vector3::new(r * phi.cos(), r * phi.sin(), z);
            (s(&n), n)
        })
        .collect();
    samples.sort_by(|x, y| y.0.total_cmp(&x.0));
    let mut best = f64::NEG_INFINITY;
    for &(mut value, mut n) in samples.iter().take(8) {
        let mut step = 0.05;
        while step > 1e-9 {
            let t1 = n
                .cross(&Vector3::x())
                .try_normalize(1e-3)
                .unwrap_or_else(|| n.cross(&Vector3::y()).normalize());
            let t2 = n.cross(&t1);
            let mut moved = false;
            for (da, db) in [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)] {
                let m = (n + (t1 * da + t2 * db) * step).normalize();
                let v = s(&m);
                if v > value {
                    (value, n, moved) = (v, m, true);
                }
            }
            if !moved {
                step *= 0.5;
            }
        }
        best = best.max(value);
    }
    best
}

/// Checks the device's cylinder-pair manifolds (see
/// [`cylinder_pair_contacts_match_the_cpu`]; every tolerance below includes the
/// device's face preference, 1e-5 of the largest dimension). Besides the CPU, an f64
/// arbiter: the device's deepest gap equals $s(n_{dev})$ to 64 ε L, and no sampled
/// direction ([`sampled_separation`]) separates more than $n_{dev}$ by more than 64 ε L. The CPU
/// is compared where it is consistent (its deepest gap is $s(n_{cpu})$ within its
/// slack); where it is not, the device's normal must separate at least as much as the
/// CPU's. Returns the cases compared with the CPU per kind, the CPU's inconsistent
/// cases, and per kind the largest |gap difference|, angle between the normals and
/// $s(n_{cpu}) - s(n_{dev})$.
fn check_cylinder_pairs(
    ctx: &axion_gpu::GpuContext,
    queries: &[PairQuery],
    cases: &[CylinderCase],
    normals_agree: bool,
) -> ([usize; 3], usize, [[f64; 3]; 3]) {
    let gpu = run_pair_probe(ctx, queries).unwrap();
    let mut compared = [0; 3];
    let mut inconsistent = 0;
    let mut worst = [[0.0f64; 3]; 3];
    for (q, (m, (kind, a, b, cpu))) in queries.iter().zip(gpu.iter().zip(cases)) {
        let n = Vector3::new(m.normal[0], m.normal[1], m.normal[2]).cast::<f64>();
        let v = |p: [f32; 3]| Vector3::new(p[0], p[1], p[2]).cast::<f64>();
        let thickness = f64::from(m.thickness[0] + m.thickness[1]);
        let dev = m
            .points
            .iter()
            .map(|(pa, pb)| n.dot(&(v(*pa) - v(*pb))) - thickness)
            .fold(f64::INFINITY, f64::min);
        let deepest = cpu.iter().map(|c| c.3).fold(f64::INFINITY, f64::min);
        let l = 2.0 + q.pose_a.translation.vector.amax();
        let tol = 64.0 * EPS * l;
        // The device keeps a face or cap direction unless another separates more by
        // 1e-5 of the largest dimension.
        let largest = |s: &Shape| match *s {
            Shape::Box { half_extents: e } => e.max(),
            Shape::Capsule { half_length, .. } => half_length,
            Shape::Cylinder {
                radius,
                half_length,
            } => radius.max(half_length),
            Shape::Sphere { radius } => radius,
        };
        let bias = 1e-5 * largest(a).max(largest(b));
        let slack = tol + bias + 1e-5 * (1.0 - 10.0 * deepest.min(0.0));
        let b_thickness = match *b {
            Shape::Capsule { radius, .. } => radius,
            _ => 0.0,
        };
        let separation = |n: &Vector3<f64>| separation(a, &q.pose_a, b, &q.pose_b, n);
        let sampled = sampled_separation(&separation);
        let cpu_deepest = cpu.iter().min_by(|x, y| x.3.total_cmp(&y.3));
        let cpu_consistent = cpu_deepest.is_none_or(|c| (separation(&c.0) - c.3).abs() <= slack);
        if !cpu_consistent {
            inconsistent += 1;
        }
        if m.points.is_empty() {
            assert!(
                sampled > MARGIN - tol && (cpu.is_empty() || !cpu_consistent),
                "{q:?}: the GPU finds nothing, the CPU {cpu:?}, sampling {sampled}"
            );
            continue;
        }
        assert!(
            m.thickness[0] == 0.0 && (f64::from(m.thickness[1]) - b_thickness).abs() <= EPS,
            "{q:?}: thickness {:?}",
            m.thickness
        );
        for (pa, pb) in &m.points {
            let (da, db) = (
                surface_distance(a, &q.pose_a, &v(*pa)),
                surface_distance(b, &q.pose_b, &v(*pb)),
            );
            assert!(
                da.abs() <= tol && db.abs() <= tol,
                "{q:?}: point off the surfaces by {da}, {db}: {m:?} CPU {cpu:?}"
            );
        }
        let s_dev = separation(&n);
        assert!(
            (dev - s_dev).abs() <= tol && sampled <= s_dev + tol + bias,
            "{q:?}: GPU gap {dev}, its normal separates {s_dev}, sampling finds {sampled}: {m:?}"
        );
        let Some(cpu_deepest) = cpu_deepest else {
            assert!(
                dev > MARGIN - tol - bias,
                "{q:?}: the GPU finds {dev} where the CPU finds nothing"
            );
            continue;
        };
        let better = separation(&cpu_deepest.0) - s_dev;
        assert!(
            better <= tol + bias,
            "{q:?}: the CPU's normal {} separates {better} m more than the GPU's {n}",
            cpu_deepest.0
        );
        if !cpu_consistent {
            continue;
        }
        assert!(
            (dev - deepest).abs() <= slack,
            "{q:?}: deepest gap GPU {dev} CPU {deepest}"
        );
        assert!(
            !normals_agree || cpu_deepest.0.dot(&n) > 1.0 - 1e-4,
            "{q:?}: normal GPU {n} CPU {}",
            cpu_deepest.0
        );
        let w = &mut worst[*kind];
        w[0] = w[0].max((dev - deepest).abs());
        w[1] = w[1].max(cpu_deepest.0.cross(&n).norm().asin());
        w[2] = w[2].max(better);
        compared[*kind] += 1;
    }
    (compared, inconsistent, worst)
}

/// Resting contact of cylinders with boxes, capsules and cylinders, 1 mm deep, at
/// random turns about the vertical: a face manifold with every point at gap −1 mm
/// (to 64 ε L), on both surfaces, normal ±ẑ:
/// * a cylinder standing on a box's top face: its cap square, 4 points;
/// * a cylinder lying on it: the ends of its side line, 2 points;
/// * a small box on a standing cylinder's cap (inside its inscribed square): the box's
///   4 bottom corners;
/// * a capsule lying on a cylinder's cap: the 2 ends of its core;
/// * a coin on a larger coin: the smaller cap square clipped against the larger one,
///   4 to 8 points;
/// * a cylinder lying on a parallel one, a capsule lying along one: the 2 ends of the
///   overlap of the side lines (or core).
///
/// The CPU (parry's polygonal features, its cap squares turned otherwise) finds as
/// many points in all but the coin, plus at most one (its EPA point), all at −1 mm.
#[test]
fn cylinder_resting_manifolds() {
    let Some(ctx) = common::context() else {
        return;
    };
    let depth = 1e-3;
    let mut rng = Rng(41);
    let upright = |rng: &mut Rng, x: Vector3<f64>| {
        Isometry3::from_parts(
            x.into(),
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), rng.next(0.0, 6.3)),
        )
    };
    let lying = |rng: &mut Rng, x: Vector3<f64>| {
        upright(rng, x)
            * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 0.5 * std::f64::consts::PI)
    };
    let table = Shape::Box {
        half_extents: Vector3::new(0.6, 0.6, 0.1),
    };
    let drum = Shape::Cylinder {
        radius: 0.2,
        half_length: 0.3,
    };
    // (name, a, pose a, b, pose b, normal from b to a, points).
    let mut cases = Vec::new();
    for _ in 0..8 {
        let origin = Isometry3::identity();
        cases.push((
            "standing on a box",
            drum,
            upright(&mut rng, Vector3::new(0.1, -0.05, 0.4 - depth)),
            table,
            origin,
            1.0,
            4..=4,
        ));
        cases.push((
            "lying on a box",
            drum,
            lying(&mut rng, Vector3::new(0.0, 0.1, 0.3 - depth)),
            table,
            origin,
            1.0,
            2..=2,
        ));
        let block = Shape::Box {
            half_extents: Vector3::new(0.1, 0.1, 0.05),
        };
        let pedestal = Shape::Cylinder {
            radius: 0.3,
            half_length: 0.3,
        };
        cases.push((
            "box on a cap",
            pedestal,
            upright(&mut rng, Vector3::zeros()),
            block,
            upright(&mut rng, Vector3::new(0.02, 0.03, 0.35 - depth)),
            -1.0,
            4..=4,
        ));
        let pin = Shape::Capsule {
            radius: 0.05,
            half_length: 0.1,
        };
        cases.push((
            "capsule on a cap",
            pedestal,
            upright(&mut rng, Vector3::zeros()),
            pin,
            lying(&mut rng, Vector3::new(-0.03, 0.01, 0.35 - depth)),
            -1.0,
            2..=2,
        ));
        let coin = |radius| Shape::Cylinder {
            radius,
            half_length: 0.05,
        };
        // Parallel side lines: the ends of their overlap.
        let yaw = upright(&mut rng, Vector3::zeros());
        let along = |x: Vector3<f64>| {
            Isometry3::from_parts(x.into(), yaw.rotation)
                * UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 0.5 * std::f64::consts::PI)
        };
        let log = Shape::Cylinder {
            radius: 0.15,
            half_length: 0.5,
        };
        cases.push((
            "log on a log",
            drum,
            along(Vector3::new(0.0, 0.0, 0.35 - depth)),
            log,
            along(Vector3::zeros()),
            1.0,
            2..=2,
        ));
        cases.push((
            "capsule along a log",
            log,
            along(Vector3::zeros()),
            pin,
            along(Vector3::new(0.0, 0.0, 0.2 - depth)) * Isometry3::translation(0.0, 0.0, 0.1),
            -1.0,
            2..=2,
        ));
        cases.push((
            "coin on a coin",
            coin(0.2),
            upright(&mut rng, Vector3::new(0.01, 0.0, 0.1 - depth)),
            coin(0.25),
            upright(&mut rng, Vector3::zeros()),
            1.0,
            4..=8,
        ));
    }
    let queries: Vec<PairQuery> = cases
        .iter()
        .map(|&(_, a, pose_a, b, pose_b, ..)| PairQuery {
            a: Geometry::Solid(a),
            pose_a,
            b: Geometry::Solid(b),
            pose_b,
            margin: MARGIN,
        })
        .collect();
    let gpu = run_pair_probe(&ctx, &queries).unwrap();
    let tol = 64.0 * EPS * 2.0;
    for ((name, a, pose_a, b, pose_b, up, count), m) in cases.iter().zip(&gpu) {
        let v = |p: [f32; 3]| Vector3::new(p[0], p[1], p[2]).cast::<f64>();
        let n = v(m.normal);
        assert!((n - Vector3::z() * *up).norm() <= tol, "{name}: normal {n}");
        assert!(count.contains(&m.points.len()), "{name}: {m:?}");
        let thickness = f64::from(m.thickness[0] + m.thickness[1]);
        for (pa, pb) in &m.points {
            let gap = n.dot(&(v(*pa) - v(*pb))) - thickness;
            let (da, db) = (
                surface_distance(a, pose_a, &v(*pa)),
                surface_distance(b, pose_b, &v(*pb)),
            );
            assert!(
                (gap + depth).abs() <= tol && da.abs() <= tol && db.abs() <= tol,
                "{name}: gap {gap}, off the surfaces by {da}, {db}: {m:?}"
            );
        }
        let cpu = cpu_pair(*a, *pose_a, *b, *pose_b);
        // parry's clipped features plus, at most, its EPA point (the same gap).
        assert!(
            name.starts_with("coin") || (m.points.len()..=m.points.len() + 1).contains(&cpu.len()),
            "{name}: GPU {m:?} CPU {cpu:?}"
        );
        assert!(
            cpu.iter().all(|c| (c.3 + depth).abs() <= 1e-9),
            "{name}: CPU {cpu:?}"
        );
    }
}
