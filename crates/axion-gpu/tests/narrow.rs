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
use axion_gpu::narrow::{PlaneQuery, run_plane_probe};
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
