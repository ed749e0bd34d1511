//! # axion-collision
//!
//! Finds the contacts of a world once per step, at the start-of-step poses $q^-$,
//! within a speculative margin, and turns them into the fixed
//! [`ContactPoint`]s the solver re-evaluates at every iterate (as the reference
//! implementation does):
//!
//! * **shapes** come from the model ([`axion_model::Geometry`]): sphere, box, capsule,
//!   cylinder, half-space, convex hull, triangle mesh, height field (meshed);
//! * **broad phase**: sweep and prune of world AABBs along x (and every finite shape
//!   against every half-space), no all-pairs loop;
//! * **narrow phase**: contact *manifolds* from parry3d-f64 (a box on a plane or on a box
//!   gets up to 4 points, not 1), converted to body-local points relative to each
//!   centre of mass; spheres and capsules keep their core point and radius as thickness
//!   so that rolling does not change the gap;
//! * **filtering**: shapes of one body, two static bodies, a joint's parent and child,
//!   and [`CollisionFilter`] groups;
//! * **materials**: friction $\mu = \tfrac12(\mu_a + \mu_b)$ (the reference's rule),
//!   anisotropic along a shape's axis, restitution $\max(e_a, e_b)$.
//!
//! There is no capacity limit: every contact found is returned and counted in
//! [`DetectionStats`].

mod convert;
mod mesh;

use axion_constraints::contact::{
    ContactPoint, ROLL_AZIMUTH, ROLL_MIN_RADIAL, ROLL_ON_SIDE, ROLL_SLIP,
};
use axion_constraints::friction::{FrictionCone, TangentFrame};
use axion_math::Pose;
use axion_math::{Twist, angular, exp_map, linear};
use axion_model::{BodyId, CollisionFilter, Geometry, Material, Model, Shape};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use parry3d_f64::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};
use parry3d_f64::shape::SharedShape;
use thiserror::Error;

pub use convert::{from_parry_vector, to_parry_pose, to_parry_vector};
pub use mesh::{HALF_SPACE_DRAWN_HALF_SIDE, VisualMesh, visual_mesh};

/// How far (m) parry's closest-points query and its contact manifold may disagree on a
/// pair's deepest point before the query's point is used (the two algorithms differ by
/// a few µm on curved pairs; the slack grows by 10 × the penetration depth).
const CLOSEST_POINT_SLACK: f64 = 1e-5;

/// Two contacts of one pair closer than this (m) on both bodies are one contact.
const DUPLICATE_DISTANCE: f64 = 1e-6;

/// A shape the collision library cannot use.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("body {body:?}, shape {index}: {reason}")]
pub struct CollisionError {
    /// The body.
    pub body: String,
    /// Index of the shape on the body.
    pub index: usize,
    /// What is wrong.
    pub reason: String,
}

/// One collidable shape of the world.
#[derive(Clone)]
struct Collider {
    body: usize,
    static_body: bool,
    /// Pose of the (parry) shape relative to the body's centre-of-mass frame.
    local: Isometry3<f64>,
    shape: SharedShape,
    /// Radius around a core point or segment (sphere, capsule): contact points are
    /// stored on the core with this thickness.
    core_radius: Option<f64>,
    /// Outward normal of a half-space, in the shape frame.
    half_space: Option<Vector3<f64>>,
    /// Radius of a cylinder (parry's, along its y axis): its rim and side points roll
    /// ahead ([`roll_ahead`]).
    cylinder_radius: Option<f64>,
    material: Material,
    filter: CollisionFilter,
}

impl Collider {
    /// Whether a contact whose outward normal on this shape is `n` (shape frame) lies on
    /// a face fixed to it: a half-space, or a box's face (to within [`ROLL_AZIMUTH`]
    /// rad). Only there does the normal turn with this body alone; against a curved
    /// shape, an edge or a corner it also turns as the bodies move around each other,
    /// which rolling ahead does not follow.
    fn face_fixed(&self, n: &Vector3<f64>) -> bool {
        self.half_space.is_some()
            || (self.shape.as_cuboid().is_some() && box_face(n, ROLL_AZIMUTH).is_some())
    }
}

/// One contact, fixed for the step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Body the normal points into.
    pub body_a: BodyId,
    /// Body the normal points out of.
    pub body_b: BodyId,
    /// Normal, body-local points and thicknesses (see [`ContactPoint`]) of the points
    /// whose gap the step keeps non-negative at $q^+$: on a rolling cylinder the
    /// material point that will face the other body then
    /// ([`detect_ahead`](CollisionWorld::detect_ahead)), elsewhere where the bodies touch.
    pub point: ContactPoint,
    /// Where the bodies touch at the poses of the detection: the contact's forces act
    /// there (their lever arms at $q^-$). The same as `point` except on a rolling
    /// cylinder, whose rolled point reaches this place at $q^+$.
    pub touching: ContactPoint,
    /// Combined friction cone in [`frame`](Self::frame).
    pub cone: FrictionCone,
    /// Tangent frame (along the anisotropy axis, if any).
    pub frame: TangentFrame,
    /// Combined restitution.
    pub restitution: f64,
    /// Gap at detection (m; negative: penetration).
    pub gap: f64,
}

/// What a detection did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DetectionStats {
    /// Shape pairs that passed the broad phase and filters.
    pub pairs: usize,
    /// Contacts returned.
    pub contacts: usize,
}

/// The collidable shapes of a model and the pairs that must not collide.
#[derive(Clone)]
pub struct CollisionWorld {
    colliders: Vec<Collider>,
    /// Body pairs that never collide ([`Model::collision_excluded`]).
    excluded: axion_model::CollisionExclusions,
}

impl CollisionWorld {
    /// Builds the parry shapes of every collidable shape of `model`.
    pub fn new(model: &Model) -> Result<Self, CollisionError> {
        let mut colliders = Vec::new();
        for (b, body) in model.bodies().iter().enumerate() {
            for (index, desc) in body.shapes.iter().enumerate() {
                let Some(filter) = desc.collision else {
                    continue;
                };
                let error = |reason: String| CollisionError {
                    body: body.name.clone(),
                    index,
                    reason,
                };
                let (shape, offset, core_radius) = convert::shape(&desc.geometry).map_err(error)?;
                colliders.push(Collider {
                    body: b,
                    static_body: !body.is_dynamic(),
                    local: Translation3::from(-body.com) * desc.local_pose * offset,
                    shape,
                    core_radius,
                    half_space: match desc.geometry {
                        Geometry::HalfSpace { normal } => Some(normal.normalize()),
                        _ => None,
                    },
                    cylinder_radius: match desc.geometry {
                        Geometry::Solid(Shape::Cylinder { radius, .. }) => Some(radius),
                        _ => None,
                    },
                    material: desc.material,
                    filter,
                });
            }
        }
        let excluded = model.collision_exclusions().clone();
        Ok(Self {
            colliders,
            excluded,
        })
    }

    /// Number of collidable shapes.
    pub fn len(&self) -> usize {
        self.colliders.len()
    }

    /// Whether there is nothing to collide.
    pub fn is_empty(&self) -> bool {
        self.colliders.is_empty()
    }

    fn may_collide(&self, i: usize, j: usize) -> bool {
        let (a, b) = (&self.colliders[i], &self.colliders[j]);
        a.body != b.body
            && !(a.static_body && b.static_body)
            && a.filter.allows(&b.filter)
            && !self.excluded.excludes(a.body, b.body)
    }

    /// Candidate pairs `(i, j)`, `i < j`, whose AABBs (grown by `margin`) overlap:
    /// sweep and prune along x for finite shapes, every finite shape against every
    /// half-space it may reach. Filters applied.
    pub fn candidate_pairs(&self, poses: &[Pose], margin: f64) -> Vec<(usize, usize)> {
        let mut boxes = Vec::with_capacity(self.colliders.len());
        let mut half_spaces = Vec::new();
        for (i, c) in self.colliders.iter().enumerate() {
            if c.half_space.is_some() {
                half_spaces.push(i);
            } else {
                let (mins, maxs) = world_box(c.shape.as_ref(), &(poses[c.body] * c.local));
                let m = parry3d_f64::math::Vector::splat(margin);
                boxes.push((i, mins - m, maxs + m));
            }
        }
        boxes.sort_by(|a, b| a.1.x.total_cmp(&b.1.x));
        // Room for every shape against one half-space (a robot on the ground).
        let mut pairs = Vec::with_capacity(boxes.len());
        for (k, (i, min_i, max_i)) in boxes.iter().enumerate() {
            for (j, min_j, max_j) in &boxes[k + 1..] {
                if min_j.x > max_i.x {
                    break;
                }
                let overlap = min_i.y <= max_j.y
                    && min_j.y <= max_i.y
                    && min_i.z <= max_j.z
                    && min_j.z <= max_i.z;
                if overlap && self.may_collide(*i, *j) {
                    pairs.push(((*i).min(*j), (*i).max(*j)));
                }
            }
        }
        for &h in &half_spaces {
            let hc = &self.colliders[h];
            let plane = poses[hc.body] * hc.local;
            let normal = plane.rotation * hc.half_space.unwrap_or_else(Vector3::z);
            let origin = plane.translation.vector;
            for (i, min, max) in &boxes {
                // Lowest corner of the AABB along the normal.
                let corner = Vector3::new(
                    if normal.x > 0.0 { min.x } else { max.x },
                    if normal.y > 0.0 { min.y } else { max.y },
                    if normal.z > 0.0 { min.z } else { max.z },
                );
                if (corner - origin).dot(&normal) <= 0.0 && self.may_collide(h, *i) {
                    pairs.push((h.min(*i), h.max(*i)));
                }
            }
        }
        pairs
    }

    /// Every contact between shapes closer than `margin` at the COM poses `poses`
    /// (indexed by body), appended to `out`, with every point where it touches at
    /// `poses` (nothing rolls ahead: [`detect_ahead`](Self::detect_ahead) without
    /// `ahead`).
    pub fn detect(&self, poses: &[Pose], margin: f64, out: &mut Vec<Contact>) -> DetectionStats {
        self.detect_ahead(poses, None, margin, out)
    }

    /// As [`detect`](Self::detect), for a step of `h` from bodies moving at
    /// `velocities` (world twists, indexed by body) in `ahead`: the contact point of a
    /// cylinder's rim or side is the material point that will face the other body at
    /// the end of the step if both keep turning as they do, so that a rolling wheel's
    /// gap is that of its lowest point at $q^+$, not of a point that rolled away from
    /// the ground during the step (docs/step.md, "Rolling ahead"). Only against a
    /// half-space's or a box's face (elsewhere the normal also turns as the bodies move
    /// around each other), and only where the contact does not slide at the start of
    /// the step (by more than [`ROLL_SLIP`]): along a sliding line contact the rolled
    /// points would leave the load split between its ends to the contacts' smoothing.
    pub fn detect_ahead(
        &self,
        poses: &[Pose],
        ahead: Option<(&[Twist], f64)>,
        margin: f64,
        out: &mut Vec<Contact>,
    ) -> DetectionStats {
        let pairs = self.candidate_pairs(poses, margin);
        let dispatcher = DefaultQueryDispatcher;
        let mut manifolds: Vec<ContactManifold<(), ()>> = Vec::new();
        let mut stats = DetectionStats {
            pairs: pairs.len(),
            contacts: 0,
        };
        let mut raw = Vec::new();
        for (i, j) in pairs {
            // Shape 1 is body b (the normal points out of it), shape 2 is body a.
            let (cb, ca) = (&self.colliders[i], &self.colliders[j]);
            let pose_b = poses[cb.body] * cb.local;
            let pose_a = poses[ca.body] * ca.local;
            let pos12 = to_parry_pose(&(pose_b.inverse() * pose_a));
            manifolds.clear();
            let mut workspace = None;
            if dispatcher
                .contact_manifolds(
                    &pos12,
                    cb.shape.as_ref(),
                    ca.shape.as_ref(),
                    margin,
                    &mut manifolds,
                    &mut workspace,
                )
                .is_err()
            {
                // Every pair of our geometries is supported by parry.
                continue;
            }
            raw.clear();
            for manifold in &manifolds {
                // Points and normals of a composite shape (mesh) are in its part's frame.
                let part = |sub: Option<parry3d_f64::math::Pose>, whole: Isometry3<f64>| {
                    sub.map_or(whole, |p| whole * convert::from_parry_pose(&p))
                };
                let subs = manifold.subshape_poses.as_deref();
                raw.extend(manifold.points.iter().map(|point| RawPoint {
                    pose_b: part(subs.and_then(|s| s.pos1), pose_b),
                    pose_a: part(subs.and_then(|s| s.pos2), pose_a),
                    p_b: from_parry_vector(&point.local_p1),
                    p_a: from_parry_vector(&point.local_p2),
                    n_b: from_parry_vector(&manifold.local_n1),
                    n_a: from_parry_vector(&manifold.local_n2),
                    dist: point.dist,
                }));
            }
            if let (Some(box_b), Some(box_a)) = (cb.shape.as_cuboid(), ca.shape.as_cuboid()) {
                let e_b = from_parry_vector(&box_b.half_extents);
                let e_a = from_parry_vector(&box_a.half_extents);
                complete_face_corners(&mut raw, (pose_b, e_b), (pose_a, e_a), margin);
            }
            // parry's closest points (GJK/EPA) check the manifold. Its box–box manifold can
            // miss a separated edge–edge feature within the margin (no point, or only
            // farther ones): the closest point is added. On rare penetrating box pairs it
            // takes a non-minimal axis and reports points deeper than the bodies overlap:
            // the manifold is then replaced by the closest point for this step. A
            // half-space's manifold with a box or a ball holds the deepest point exactly
            // ([`manifold_is_exact`]): it is not checked.
            let deepest = raw.iter().map(|r| r.dist).fold(f64::INFINITY, f64::min);
            let closest = (!manifold_is_exact(cb.shape.as_ref(), ca.shape.as_ref()))
                .then(|| {
                    parry3d_f64::query::contact(
                        &parry3d_f64::math::Pose::IDENTITY,
                        cb.shape.as_ref(),
                        &pos12,
                        ca.shape.as_ref(),
                        margin,
                    )
                })
                .and_then(Result::ok)
                .flatten();
            if let Some(c) = closest {
                let slack = CLOSEST_POINT_SLACK * (1.0 + 10.0 * (-c.dist).max(0.0));
                if deepest < c.dist - slack {
                    raw.clear();
                }
                if raw.is_empty() || c.dist < deepest - CLOSEST_POINT_SLACK {
                    let to_a = pose_b.inverse() * pose_a;
                    raw.push(RawPoint {
                        pose_b,
                        pose_a,
                        p_b: from_parry_vector(&c.point1),
                        p_a: (to_a.inverse()
                            * nalgebra::Point3::from(from_parry_vector(&c.point2)))
                        .coords,
                        n_b: from_parry_vector(&c.normal1),
                        n_a: to_a.rotation.inverse() * from_parry_vector(&c.normal2),
                        dist: c.dist,
                    });
                }
            }
            // On a box's face a cylinder's contact takes the face's normal (after the check
            // against parry's closest points, which compares parry with parry).
            match (cb.shape.as_cuboid(), ca.shape.as_cuboid()) {
                (Some(cuboid), None) if ca.cylinder_radius.is_some() => {
                    let e = from_parry_vector(&cuboid.half_extents);
                    raw.iter_mut().for_each(|r| r.onto_face_of_b(&e));
                }
                (None, Some(cuboid)) if cb.cylinder_radius.is_some() => {
                    let e = from_parry_vector(&cuboid.half_extents);
                    raw.iter_mut().for_each(|r| {
                        r.swap();
                        r.onto_face_of_b(&e);
                        r.swap();
                    });
                }
                _ => {}
            }
            // Manifolds of coincident faces report each corner twice (once per face):
            // keep one contact per point.
            let first = out.len();
            for r in &raw {
                let contact = self.contact(cb, ca, poses, ahead, r);
                let duplicate = out[first..].iter().any(|c: &Contact| {
                    (c.point.local_a - contact.point.local_a).norm() < DUPLICATE_DISTANCE
                        && (c.point.local_b - contact.point.local_b).norm() < DUPLICATE_DISTANCE
                });
                if !duplicate {
                    out.push(contact);
                    stats.contacts += 1;
                }
            }
        }
        stats
    }
}

/// The corners of the axis-aligned box around `shape` at `pose` (world frame). A
/// cylinder's is in closed form: with its axis $\hat a$ (parry's local $y$ turned into
/// the world), half height $h$ and radius $r$, it reaches $h\lvert a_i\rvert +
/// r\sqrt{1 - a_i^2}$ from the centre along world axis $i$ (the axis' ends, and the rim's
/// farthest point along $i$). parry computes it from six support points, which cost the
/// a1 at rest 6.5 % of its step (its hips are cylinders); the box is the same.
fn world_box(
    shape: &dyn parry3d_f64::shape::Shape,
    pose: &Isometry3<f64>,
) -> (parry3d_f64::math::Vector, parry3d_f64::math::Vector) {
    match shape.as_cylinder() {
        Some(cylinder) => {
            let axis = pose.rotation * Vector3::y();
            let reach = axis.map(|a| {
                cylinder.half_height * a.abs() + cylinder.radius * (1.0 - a * a).max(0.0).sqrt()
            });
            let centre = pose.translation.vector;
            (
                to_parry_vector(&(centre - reach)),
                to_parry_vector(&(centre + reach)),
            )
        }
        None => {
            let aabb = shape.compute_aabb(&to_parry_pose(pose));
            (aabb.mins, aabb.maxs)
        }
    }
}

/// Whether parry's contact manifold of two shapes holds their deepest point exactly, so
/// that its closest-points query has nothing to check ([`CollisionWorld::detect_ahead`]):
/// a half-space against a ball (one point, the ball's centre less its radius along the
/// normal) or a box (the vertices within the margin of the box's face most aligned with
/// the half-space's inward normal — the deepest vertex lies on that face). Measured on
/// the corpus robots whose feet or links are boxes and spheres on the ground (the a1,
/// minitaur, aliengo, laikago, mini_cheetah, humanoid.urdf, spirit40, vision60; 2-s
/// drops at h = 0.01 and 0.02, 16 600 such pairs): the query never disagreed with the
/// manifold by more than its slack. The a1 at rest after its drop: 26.7–27.1 µs a
/// step with the query, 26.2–26.6 µs without (a throw-away loop, two runs each).
fn manifold_is_exact(
    s1: &dyn parry3d_f64::shape::Shape,
    s2: &dyn parry3d_f64::shape::Shape,
) -> bool {
    let solid =
        |s: &dyn parry3d_f64::shape::Shape| s.as_ball().is_some() || s.as_cuboid().is_some();
    (s1.as_halfspace().is_some() && solid(s2)) || (s2.as_halfspace().is_some() && solid(s1))
}

/// A contact as parry reports it: points and outward normals in each shape's frame.
struct RawPoint {
    pose_b: Isometry3<f64>,
    pose_a: Isometry3<f64>,
    p_b: Vector3<f64>,
    p_a: Vector3<f64>,
    n_b: Vector3<f64>,
    n_a: Vector3<f64>,
    dist: f64,
}

impl RawPoint {
    /// Exchanges the roles of the two shapes (the normal then points the other way).
    fn swap(&mut self) {
        std::mem::swap(&mut self.pose_a, &mut self.pose_b);
        std::mem::swap(&mut self.p_a, &mut self.p_b);
        std::mem::swap(&mut self.n_a, &mut self.n_b);
    }

    /// Puts a contact of a cylinder (shape a) on a box's face (shape b, half extents
    /// `e`) on that face exactly, where its normal is the face's to within
    /// [`ROLL_AZIMUTH`] rad (where the cylinder rolls ahead, [`Collider::face_fixed`]).
    ///
    /// parry's cylinder–box normals are tilted from the face's by up to $4\cdot10^{-6}$
    /// rad, and the gap of a cylinder rolling over the face was measured along that tilted
    /// line (docs/step.md, "Rolling ahead", for what it cost). With the face $(k, s)$
    /// (outward normal $s\hat e_k$ in b's frame) and the cylinder's point $p$ in b's
    /// frame, the normal is $s\hat e_k$, the foot on the face is $f = p$ with
    /// $f_k = s e_k$, and the gap is $s p_k - e_k$; the cylinder's point stays (its support
    /// point along the normal to within the tilt's second order).
    fn onto_face_of_b(&mut self, e: &Vector3<f64>) {
        let Some((k, s)) = box_face(&self.n_b, ROLL_AZIMUTH) else {
            return;
        };
        let a_in_b = self.pose_b.inverse() * self.pose_a;
        let p = (a_in_b * nalgebra::Point3::from(self.p_a)).coords;
        self.n_b = Vector3::zeros();
        self.n_b[k] = s;
        self.n_a = -(a_in_b.rotation.inverse() * self.n_b);
        self.p_b = p;
        self.p_b[k] = s * e[k];
        self.dist = s * p[k] - e[k];
    }
}

/// The face of a box whose outward unit normal is `n` (box frame), if `n` is one to
/// within `tolerance` rad: its axis and side.
fn box_face(n: &Vector3<f64>, tolerance: f64) -> Option<(usize, f64)> {
    let k = n.iamax();
    let off_axis = (n.norm_squared() - n[k] * n[k]).max(0.0).sqrt();
    (off_axis <= tolerance * n[k].abs()).then_some((k, n[k].signum()))
}

/// Completes a face–face box manifold with the face corners parry's clipping can drop.
///
/// parry clips the two faces with strict sign tests; when corners of the two faces
/// coincide (equal boxes stacked exactly), rounding can put a shared corner outside
/// both faces and that corner gets no contact, so a resting box loses a support for a
/// step. When the manifold normal is a face normal of both boxes, every corner of
/// each face that lies over the other face (to $10^{-9}$ of its size) within the margin
/// is added: for a corner $v$ of box a's face, in box b's frame, the gap is
/// $d = s v_k - e_k$ for b's face $(k, s)$ with half extents $e$, and its foot on that
/// face is $v - d s \hat e_k$. Points parry already has are merged later as duplicates.
fn complete_face_corners(
    raw: &mut Vec<RawPoint>,
    (pose_b, e_b): (Isometry3<f64>, Vector3<f64>),
    (pose_a, e_a): (Isometry3<f64>, Vector3<f64>),
    margin: f64,
) {
    let Some(first) = raw.first() else {
        return;
    };
    let (n_b, n_a) = (first.n_b, first.n_a);
    let (Some(face_b), Some(face_a)) = (box_face(&n_b, 1e-9), box_face(&n_a, 1e-9)) else {
        return;
    };
    let a_in_b = pose_b.inverse() * pose_a;
    let corners = |(k, s): (usize, f64), e: &Vector3<f64>| {
        let (i, j) = ((k + 1) % 3, (k + 2) % 3);
        [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)].map(|(u, w)| {
            let mut v = Vector3::zeros();
            v[k] = s * e[k];
            v[i] = u * e[i];
            v[j] = w * e[j];
            v
        })
    };
    // Corner `v` (frame of box `from`) over the face (k, s) of box `onto` (half extents
    // e): its gap and its foot on that face, both in `onto`'s frame.
    let over = |v: Vector3<f64>, (k, s): (usize, f64), e: &Vector3<f64>| {
        let tol = 1e-9 * e.max();
        let d = s * v[k] - e[k];
        let inside = (0..3).all(|m| m == k || v[m].abs() <= e[m] + tol);
        (inside && d <= margin && d >= -e[k]).then(|| {
            let mut foot = v;
            foot[k] -= s * d;
            (d, foot)
        })
    };
    let point = |pose: &Isometry3<f64>, v: Vector3<f64>| (pose * nalgebra::Point3::from(v)).coords;
    let b_in_a = a_in_b.inverse();
    let mut added = Vec::new();
    for v_a in corners(face_a, &e_a) {
        if let Some((dist, foot)) = over(point(&a_in_b, v_a), face_b, &e_b) {
            added.push((foot, v_a, dist));
        }
    }
    for v_b in corners(face_b, &e_b) {
        if let Some((dist, foot)) = over(point(&b_in_a, v_b), face_a, &e_a) {
            added.push((v_b, foot, dist));
        }
    }
    raw.extend(added.into_iter().map(|(p_b, p_a, dist)| RawPoint {
        pose_b,
        pose_a,
        p_b,
        p_a,
        n_b,
        n_a,
        dist,
    }));
}

impl CollisionWorld {
    /// Converts a raw point between shape `cb` (body b) and `ca` (body a) into a
    /// [`Contact`]: world normal from b to a, points relative to each COM (moved to the
    /// core of a sphere or capsule, with its radius as thickness; rolled ahead on a
    /// cylinder when `ahead` gives the bodies' twists and the step).
    fn contact(
        &self,
        cb: &Collider,
        ca: &Collider,
        poses: &[Pose],
        ahead: Option<(&[Twist], f64)>,
        raw: &RawPoint,
    ) -> Contact {
        let normal = (raw.pose_b.rotation * raw.n_b).normalize();
        let core = |p: Vector3<f64>, n: Vector3<f64>, radius: Option<f64>| match radius {
            Some(r) => (p - n * r, r),
            None => (p, 0.0),
        };
        let (mut p_b, t_b) = core(raw.p_b, raw.n_b, cb.core_radius);
        let (mut p_a, t_a) = core(raw.p_a, raw.n_a, ca.core_radius);
        let local = |body: usize, shape_pose: &Isometry3<f64>, p: Vector3<f64>| {
            let world = shape_pose * nalgebra::Point3::from(p);
            poses[body].rotation.inverse() * (world.coords - poses[body].translation.vector)
        };
        let touching = ContactPoint {
            normal,
            local_a: local(ca.body, &raw.pose_a, p_a),
            local_b: local(cb.body, &raw.pose_b, p_b),
            thickness_a: t_a,
            thickness_b: t_b,
        };
        let cylinder = ca.cylinder_radius.is_some() || cb.cylinder_radius.is_some();
        let rolling = ahead.filter(|(velocities, _)| {
            if !cylinder {
                return false;
            }
            let (ra, rb) = touching.lever_arms(&poses[ca.body], &poses[cb.body]);
            let at = |u: &Twist, arm: Vector3<f64>| linear(u) + angular(u).cross(&arm);
            let v = at(&velocities[ca.body], ra) - at(&velocities[cb.body], rb);
            (v - normal * normal.dot(&v)).norm() <= ROLL_SLIP
        });
        if let Some((velocities, h)) = rolling {
            // The side that rolls (at most one: a cylinder rolls only against a
            // half-space's or a box's face), its rolled point and that point's world
            // displacement across the normal, which moves the foot on the other body
            // with it (the gap along the normal is unchanged). The direction towards the other body turns over the
            // step, as the cylinder sees it, by Exp(−h ω_self) Exp(h ω_other) (world).
            let roll = |this: &Collider,
                        other: &Collider,
                        p: &Vector3<f64>,
                        n,
                        pose: &Isometry3<f64>,
                        n_other| {
                let r = this.cylinder_radius.filter(|_| other.face_fixed(n_other))?;
                let turn = exp_map(&(-h * angular(&velocities[this.body])))
                    * exp_map(&(h * angular(&velocities[other.body])));
                let moved = roll_ahead(p, n, r, &pose.rotation, &turn)?;
                let d = pose.rotation * (moved - p);
                Some((moved, d - normal * normal.dot(&d)))
            };
            if let Some((moved, shift)) = roll(ca, cb, &p_a, &raw.n_a, &raw.pose_a, &raw.n_b) {
                p_b += raw.pose_b.rotation.inverse() * shift;
                p_a = moved;
            } else if let Some((moved, shift)) = roll(cb, ca, &p_b, &raw.n_b, &raw.pose_b, &raw.n_a)
            {
                p_a += raw.pose_a.rotation.inverse() * shift;
                p_b = moved;
            }
        }
        let point = ContactPoint {
            local_a: local(ca.body, &raw.pose_a, p_a),
            local_b: local(cb.body, &raw.pose_b, p_b),
            ..touching
        };
        let (cone, frame) = combine_friction(ca, cb, &poses[ca.body], &poses[cb.body], &normal);
        Contact {
            body_a: BodyId(ca.body),
            body_b: BodyId(cb.body),
            point,
            touching,
            cone,
            frame,
            restitution: ca.material.restitution.max(cb.material.restitution),
            gap: raw.dist,
        }
    }
}

/// The material point of a cylinder (radius `r`, parry's frame: axis y) that will face
/// the other body at the end of the step, for a contact point `p` on its side surface
/// or rim whose outward contact normal is `n` (both in the shape frame, whose world
/// rotation is `rotation`), when the direction towards the other body turns by `turn`
/// (world frame) as seen from the cylinder.
///
/// A point of the side surface or of a rim faces direction $m$ when its azimuth about the
/// axis is that of $m$'s radial part $(m_x, m_z)$: with $m^+ = R^\top\,\mathrm{turn}\,R\,n$,
/// the point is $(r\,\hat m^+_x,\ p_y,\ r\,\hat m^+_z)$ — same height along the axis, azimuth
/// turned with the step. A wheel rolling at $\omega$ has its lowest point at $q^+$
/// $h\omega$ ahead of its lowest point at $q^-$; a point fixed at $q^-$'s lowest point
/// would lift by $r(1 - \cos h\omega)$ during the step and let the wheel sink by as much.
/// What is left is the change of the turn during the step: $r(1 - \cos(h\,\Delta\omega))$.
///
/// `None` (keep `p`) where `p` is not the support point in the normal's azimuth (a
/// point of a cap's face, or a cap's rim point other than the lowest) or where the
/// normal runs along the axis (standing on a cap).
fn roll_ahead(
    p: &Vector3<f64>,
    n: &Vector3<f64>,
    r: f64,
    rotation: &UnitQuaternion<f64>,
    turn: &UnitQuaternion<f64>,
) -> Option<Vector3<f64>> {
    let radial = |v: &Vector3<f64>| nalgebra::Vector2::new(v.x, v.z);
    let (at, now) = (radial(p), radial(n));
    let on_side = (at.norm() - r).abs() <= ROLL_ON_SIDE * r;
    let facing = now.norm() >= ROLL_MIN_RADIAL && {
        let (a, b) = (at.normalize(), now.normalize());
        a.dot(&b) > 0.0 && a.perp(&b).abs() <= ROLL_AZIMUTH
    };
    if !(on_side && facing) {
        return None;
    }
    let ahead = radial(&(rotation.inverse() * (turn * (rotation * n))));
    (ahead.norm() >= ROLL_MIN_RADIAL).then(|| {
        let u = ahead.normalize() * r;
        Vector3::new(u.x, p.y, u.y)
    })
}

/// The combined cone and tangent frame of a contact ([`Material::combined_friction`]):
/// the first anisotropic shape (a, then b) sets the axis, unless the axis is (nearly)
/// along the normal.
fn combine_friction(
    a: &Collider,
    b: &Collider,
    pose_a: &Pose,
    pose_b: &Pose,
    normal: &Vector3<f64>,
) -> (FrictionCone, TangentFrame) {
    let (mu, aniso) = a.material.combined_friction(&b.material);
    if let Some((side, an)) = aniso {
        let pose = if side == 0 { pose_a } else { pose_b };
        let axis_world = pose.rotation * an.axis;
        let frame = TangentFrame::new(normal, Some(&axis_world));
        if frame.aligned {
            let cone = FrictionCone::elliptic(mu, an.friction_perp)
                .expect("validated non-negative coefficients");
            return (cone, frame);
        }
    }
    let cone = FrictionCone::isotropic(mu).expect("validated non-negative coefficients");
    (cone, TangentFrame::new(normal, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A cylinder's box in closed form is parry's (from support points), to rounding.
        #[test]
        fn a_cylinder_box_is_parrys(
            radius in 0.01f64..1.0,
            half_height in 0.01f64..1.0,
            turn in prop::array::uniform3(-3.2f64..3.2),
            at in prop::array::uniform3(-5.0f64..5.0),
        ) {
            let shape = SharedShape::cylinder(half_height, radius);
            let pose = Isometry3::new(Vector3::from(at), Vector3::from(turn));
            let (mins, maxs) = world_box(shape.as_ref(), &pose);
            let parry = shape.compute_aabb(&to_parry_pose(&pose));
            let off = (from_parry_vector(&(mins - parry.mins)).amax())
                .max(from_parry_vector(&(maxs - parry.maxs)).amax());
            prop_assert!(off < 1e-12, "off by {off:e}");
        }
    }
}
