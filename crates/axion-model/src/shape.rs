//! Solid shapes and the mass properties they give a body.

use nalgebra::{Isometry3, Matrix3, Vector3};
use std::f64::consts::PI;

/// The largest dimension of a solid (m). Collision detection squares and multiplies
/// lengths; far beyond any robot's scale its arithmetic overflows (parry's EPA fails
/// on a 10³⁰⁸ m cylinder), so larger solids are refused.
pub const MAX_SHAPE_SIZE: f64 = 1e6;

/// A solid primitive in its own frame (capsules and cylinders along local z).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// Sphere of `radius`.
    Sphere {
        /// m.
        radius: f64,
    },
    /// Box with half side lengths `half_extents`.
    Box {
        /// m.
        half_extents: Vector3<f64>,
    },
    /// Capsule: a segment of length `2·half_length` along z swept by `radius`.
    Capsule {
        /// m.
        radius: f64,
        /// m.
        half_length: f64,
    },
    /// Cylinder of `radius` and length `2·half_length` along z.
    Cylinder {
        /// m.
        radius: f64,
        /// m.
        half_length: f64,
    },
}

impl Shape {
    /// A short name for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Shape::Sphere { .. } => "sphere",
            Shape::Box { .. } => "box",
            Shape::Capsule { .. } => "capsule",
            Shape::Cylinder { .. } => "cylinder",
        }
    }

    /// Checks every dimension is finite and positive.
    pub fn validate(&self) -> Result<(), String> {
        let dims: Vec<(&str, f64)> = match *self {
            Shape::Sphere { radius } => vec![("radius", radius)],
            Shape::Box { half_extents } => vec![
                ("half extent x", half_extents.x),
                ("half extent y", half_extents.y),
                ("half extent z", half_extents.z),
            ],
            Shape::Capsule {
                radius,
                half_length,
            }
            | Shape::Cylinder {
                radius,
                half_length,
            } => {
                vec![("radius", radius), ("half length", half_length)]
            }
        };
        for (what, v) in dims {
            // A capsule of half length 0 is a sphere; a cylinder needs a height (−0.0
            // compares equal to 0, so the sign is no way around it).
            let zero_ok = what == "half length" && matches!(self, Shape::Capsule { .. });
            let ok = v.is_finite() && (v > 0.0 || (zero_ok && v == 0.0));
            if !ok {
                return Err(format!(
                    "{} {what} must be positive and finite, got {v}",
                    self.name()
                ));
            }
            if v > MAX_SHAPE_SIZE {
                return Err(format!(
                    "{} {what} is {v} m, more than the {MAX_SHAPE_SIZE} m collision detection handles",
                    self.name()
                ));
            }
        }
        Ok(())
    }

    /// Volume in m³.
    pub fn volume(&self) -> f64 {
        match *self {
            Shape::Sphere { radius } => 4.0 / 3.0 * PI * radius.powi(3),
            Shape::Box { half_extents } => 8.0 * half_extents.x * half_extents.y * half_extents.z,
            Shape::Capsule {
                radius,
                half_length,
            } => PI * radius * radius * 2.0 * half_length + 4.0 / 3.0 * PI * radius.powi(3),
            Shape::Cylinder {
                radius,
                half_length,
            } => PI * radius * radius * 2.0 * half_length,
        }
    }

    /// Inertia about the shape's centre, in its frame, for mass `m` (uniform density).
    pub fn unit_inertia(&self, m: f64) -> Matrix3<f64> {
        let diag = match *self {
            Shape::Sphere { radius } => Vector3::repeat(0.4 * m * radius * radius),
            Shape::Box { half_extents: e } => {
                Vector3::new(
                    e.y * e.y + e.z * e.z,
                    e.x * e.x + e.z * e.z,
                    e.x * e.x + e.y * e.y,
                ) * (m / 3.0)
            }
            Shape::Cylinder {
                radius: r,
                half_length: l,
            } => {
                let perp = m * (3.0 * r * r + 4.0 * l * l) / 12.0;
                Vector3::new(perp, perp, 0.5 * m * r * r)
            }
            Shape::Capsule {
                radius: r,
                half_length: l,
            } => {
                // Cylinder plus two hemispheres (each with its centroid 3r/8 from its flat face).
                let v_cyl = PI * r * r * 2.0 * l;
                let v_hemi = 2.0 / 3.0 * PI * r.powi(3);
                let rho = m / (v_cyl + 2.0 * v_hemi);
                let (m_cyl, m_hemi) = (rho * v_cyl, rho * v_hemi);
                let axial = 0.5 * m_cyl * r * r + 2.0 * 0.4 * m_hemi * r * r;
                let c = 3.0 * r / 8.0;
                let hemi_perp_own = 0.4 * m_hemi * r * r - m_hemi * c * c;
                let perp = m_cyl * (3.0 * r * r + 4.0 * l * l) / 12.0
                    + 2.0 * (hemi_perp_own + m_hemi * (l + c) * (l + c));
                Vector3::new(perp, perp, axial)
            }
        };
        Matrix3::from_diagonal(&diag)
    }
}

/// Any collision geometry: a solid primitive (which also gives mass), or a shape whose
/// mass is not computed (a static half-space, meshes, height fields).
#[derive(Clone, Debug, PartialEq)]
pub enum Geometry {
    /// A solid primitive.
    Solid(Shape),
    /// Everything below the plane through the frame origin with outward `normal`
    /// (local frame): the ground. Static bodies only.
    HalfSpace {
        /// Outward normal (any non-zero length).
        normal: Vector3<f64>,
    },
    /// The convex hull of `points` (at least 4, not coplanar).
    ConvexHull {
        /// Points in the shape frame.
        points: Vec<Vector3<f64>>,
    },
    /// A triangle mesh (a surface: it has no inside).
    TriMesh {
        /// Vertices in the shape frame.
        vertices: Vec<Vector3<f64>>,
        /// Triangles, counter-clockwise seen from outside.
        indices: Vec<[u32; 3]>,
    },
    /// A height field over the shape frame's x–y plane: `heights[i * cols + j]` is the
    /// z of the grid point $(i \Delta x, j \Delta y)$ for `i < rows`, `j < cols`.
    HeightField {
        /// Row-major heights (m).
        heights: Vec<f64>,
        /// Number of grid rows (along x), at least 2.
        rows: usize,
        /// Number of grid columns (along y), at least 2.
        cols: usize,
        /// Grid spacing $(\Delta x, \Delta y)$ (m).
        spacing: (f64, f64),
    },
}

impl Geometry {
    /// A short name for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Geometry::Solid(s) => s.name(),
            Geometry::HalfSpace { .. } => "half-space",
            Geometry::ConvexHull { .. } => "convex hull",
            Geometry::TriMesh { .. } => "triangle mesh",
            Geometry::HeightField { .. } => "height field",
        }
    }

    /// Checks sizes, finiteness and index ranges (degenerate hulls are found when the
    /// collision world is built).
    pub fn validate(&self) -> Result<(), String> {
        let finite = |v: &Vector3<f64>| v.iter().all(|x| x.is_finite());
        match self {
            Geometry::Solid(s) => s.validate(),
            Geometry::HalfSpace { normal } => {
                if finite(normal) && normal.norm() > f64::EPSILON {
                    Ok(())
                } else {
                    Err(format!(
                        "half-space normal must be finite and non-zero, got {normal:?}"
                    ))
                }
            }
            Geometry::ConvexHull { points } => {
                if points.len() < 4 || !points.iter().all(finite) {
                    Err(format!(
                        "convex hull needs at least 4 finite points, got {}",
                        points.len()
                    ))
                } else if spans_volume(points) {
                    Ok(())
                } else {
                    Err("convex hull points are coplanar (the hull would be flat)".into())
                }
            }
            Geometry::TriMesh { vertices, indices } => {
                if !vertices.iter().all(finite) {
                    return Err("triangle mesh has a non-finite vertex".into());
                }
                if indices.is_empty() {
                    return Err("triangle mesh has no triangles".into());
                }
                match indices
                    .iter()
                    .flatten()
                    .find(|&&i| i as usize >= vertices.len())
                {
                    Some(i) => Err(format!(
                        "triangle mesh index {i} out of range ({} vertices)",
                        vertices.len()
                    )),
                    None => Ok(()),
                }
            }
            Geometry::HeightField {
                heights,
                rows,
                cols,
                spacing,
            } => {
                if *rows < 2 || *cols < 2 || heights.len() != rows * cols {
                    Err(format!(
                        "height field of {rows}×{cols} needs {} heights, got {}",
                        rows * cols,
                        heights.len()
                    ))
                } else if !heights.iter().all(|h| h.is_finite()) {
                    Err("height field has a non-finite height".into())
                } else if !(spacing.0 > 0.0
                    && spacing.1 > 0.0
                    && spacing.0.is_finite()
                    && spacing.1.is_finite())
                {
                    Err(format!(
                        "height field spacing must be positive, got {spacing:?}"
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// Anisotropic friction: coefficient `friction` along `axis` (body frame, projected on
/// the contact plane) and `friction_perp` across it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Anisotropy {
    /// Direction of the first coefficient, in the body frame.
    pub axis: Vector3<f64>,
    /// Coefficient across the axis.
    pub friction_perp: f64,
}

/// Surface material of a shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Coulomb coefficient μ ≥ 0 (along the anisotropy axis if there is one).
    pub friction: f64,
    /// Coefficient of restitution in [0, 1] (0: no bounce).
    pub restitution: f64,
    /// Optional anisotropy.
    pub anisotropy: Option<Anisotropy>,
}

impl Material {
    /// The friction of a contact between this shape's material (shape a) and `other`'s
    /// (shape b), the rule of both backends: $\mu = \tfrac12(\mu_a + \mu_b)$; if a shape
    /// is anisotropic (a first, then b), which one (0: a, 1: b) and its anisotropy with
    /// the combined coefficient across the axis, $\tfrac12(\mu_\perp + \mu_{other})$ ($\mu$
    /// is then the coefficient along the axis).
    pub fn combined_friction(&self, other: &Material) -> (f64, Option<(usize, Anisotropy)>) {
        let mean = |x: f64, y: f64| 0.5 * (x + y);
        let mu = mean(self.friction, other.friction);
        let aniso = [(0, self, other), (1, other, self)]
            .into_iter()
            .find_map(|(side, m, o)| {
                m.anisotropy.map(|an| {
                    (
                        side,
                        Anisotropy {
                            axis: an.axis,
                            friction_perp: mean(an.friction_perp, o.friction),
                        },
                    )
                })
            });
        (mu, aniso)
    }
}

impl Default for Material {
    /// μ = 0.5, no bounce, isotropic.
    fn default() -> Self {
        Self {
            friction: 0.5,
            restitution: 0.0,
            anisotropy: None,
        }
    }
}

/// Which shapes may touch: two shapes collide when each one's `groups` meets the
/// other's `mask` (bitwise). Shapes of one body, and of a joint's parent and child,
/// never collide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollisionFilter {
    /// Groups the shape belongs to.
    pub groups: u32,
    /// Groups the shape collides with.
    pub mask: u32,
}

impl Default for CollisionFilter {
    /// Group 1, collides with everything; against MJCF geoms it is MuJoCo's default
    /// geom, `contype = conaffinity = 1` (see [`CollisionFilter::mujoco`]), so a ground
    /// added under a Gym model (`contype="1" conaffinity="0"`) holds it up, as in MuJoCo.
    fn default() -> Self {
        Self {
            groups: Self::mujoco(1, 1).groups,
            mask: u32::MAX,
        }
    }
}

impl CollisionFilter {
    /// MuJoCo's filter: two geoms collide when `contype₁ & conaffinity₂` or
    /// `contype₂ & conaffinity₁` is non-zero. With the two 16-bit masks side by side,
    /// `groups = contype | conaffinity << 16` and `mask = conaffinity | contype << 16`,
    /// [`CollisionFilter::allows`] says the same: $g_1 \mathbin{\&} m_2$ holds
    /// `contype₁ & conaffinity₂` in its low half and `conaffinity₁ & contype₂` in its
    /// high half, and $g_2 \mathbin{\&} m_1$ the same two swapped.
    pub const fn mujoco(contype: u16, conaffinity: u16) -> Self {
        let (t, a) = (contype as u32, conaffinity as u32);
        Self {
            groups: t | (a << 16),
            mask: a | (t << 16),
        }
    }

    /// Whether shapes with these filters may collide.
    pub fn allows(&self, other: &CollisionFilter) -> bool {
        self.groups & other.mask != 0 && other.groups & self.mask != 0
    }
}

/// Whether `points` span a volume: with $p_1$ the point farthest from $p_0$, $p_2$ the
/// one farthest from the line $p_0 p_1$ and $n = (p_1 - p_0) \times (p_2 - p_0)$, some
/// point lies off the plane, $|n \cdot (p - p_0)| > 10^{-9} |n| d$, where $d = |p_1 - p_0|$.
fn spans_volume(points: &[Vector3<f64>]) -> bool {
    let p0 = points[0];
    let farthest = |f: &dyn Fn(&Vector3<f64>) -> f64| {
        points
            .iter()
            .copied()
            .max_by(|a, b| f(a).total_cmp(&f(b)))
            .unwrap_or(p0)
    };
    let p1 = farthest(&|p| (p - p0).norm());
    let d = (p1 - p0).norm();
    let p2 = farthest(&|p| (p - p0).cross(&(p1 - p0)).norm());
    let n = (p1 - p0).cross(&(p2 - p0));
    d > 0.0
        && points
            .iter()
            .any(|p| n.dot(&(p - p0)).abs() > 1e-9 * n.norm() * d)
}

/// A shape placed on a body: geometry, pose, density, material, collision filter.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeDesc {
    /// The geometry.
    pub geometry: Geometry,
    /// Pose of the shape in the body's reference frame.
    pub local_pose: Isometry3<f64>,
    /// Density in kg/m³ (used when the body's mass is not given; solids only).
    pub density: f64,
    /// Surface material.
    pub material: Material,
    /// Collision filter, or `None` for a shape that never collides (mass or looks only).
    pub collision: Option<CollisionFilter>,
}

impl ShapeDesc {
    /// A solid at the body origin, density 1000 kg/m³, default material, colliding.
    pub fn new(shape: Shape) -> Self {
        Self::from_geometry(Geometry::Solid(shape))
    }

    /// Any geometry at the body origin, density 1000 kg/m³, default material, colliding.
    pub fn from_geometry(geometry: Geometry) -> Self {
        Self {
            geometry,
            local_pose: Isometry3::identity(),
            density: 1000.0,
            material: Material::default(),
            collision: Some(CollisionFilter::default()),
        }
    }

    /// Sets the pose in the body frame.
    pub fn at(mut self, local_pose: Isometry3<f64>) -> Self {
        self.local_pose = local_pose;
        self
    }

    /// Sets the density.
    pub fn density(mut self, density: f64) -> Self {
        self.density = density;
        self
    }

    /// Sets the material.
    pub fn material(mut self, material: Material) -> Self {
        self.material = material;
        self
    }

    /// Sets the collision filter (`None`: never collides).
    pub fn collision(mut self, filter: Option<CollisionFilter>) -> Self {
        self.collision = filter;
        self
    }
}

/// Mass, centre of mass and inertia about it of the solids among `shapes`, in the body
/// frame ([`axion_math::combine_parts`] of each solid's $m_s$, centre and
/// $R_s I_s R_s^\top$). `None` for zero total mass.
pub fn combined_mass(shapes: &[ShapeDesc]) -> Option<(f64, Vector3<f64>, Matrix3<f64>)> {
    let parts: Vec<_> = shapes
        .iter()
        .filter_map(|s| match s.geometry {
            Geometry::Solid(shape) => {
                let m = s.density * shape.volume();
                let r = s.local_pose.rotation.to_rotation_matrix().into_inner();
                Some((
                    m,
                    s.local_pose.translation.vector,
                    r * shape.unit_inertia(m) * r.transpose(),
                ))
            }
            _ => None,
        })
        .collect();
    axion_math::combine_parts(&parts)
}
