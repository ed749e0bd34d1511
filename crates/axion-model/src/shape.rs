//! Solid shapes and the mass properties they give a body.

use nalgebra::{Isometry3, Matrix3, Vector3};
use std::f64::consts::PI;

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
            let ok = v.is_finite() && (v > 0.0 || (what == "half length" && v == 0.0));
            if !ok {
                return Err(format!(
                    "{} {what} must be positive and finite, got {v}",
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

/// A shape placed on a body with a density.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeDesc {
    /// The geometry.
    pub shape: Shape,
    /// Pose of the shape in the body's reference frame.
    pub local_pose: Isometry3<f64>,
    /// Density in kg/m³ (used when the body's mass is not given).
    pub density: f64,
}

impl ShapeDesc {
    /// A shape at the body origin with density 1000 kg/m³ (water).
    pub fn new(shape: Shape) -> Self {
        Self {
            shape,
            local_pose: Isometry3::identity(),
            density: 1000.0,
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
}

/// Mass, centre of mass and inertia about it of a union of shapes (parallel-axis
/// theorem: $I = \sum_s R_s I_s R_s^\top + m_s(|d_s|^2 I - d_s d_s^\top)$, $d_s$ from the
/// common centre of mass), in the body frame. `None` for zero total mass.
pub fn combined_mass(shapes: &[ShapeDesc]) -> Option<(f64, Vector3<f64>, Matrix3<f64>)> {
    let masses: Vec<f64> = shapes
        .iter()
        .map(|s| s.density * s.shape.volume())
        .collect();
    let total: f64 = masses.iter().sum();
    if total <= 0.0 {
        return None;
    }
    let com = shapes
        .iter()
        .zip(&masses)
        .map(|(s, m)| s.local_pose.translation.vector * *m)
        .sum::<Vector3<f64>>()
        / total;
    let inertia = shapes
        .iter()
        .zip(&masses)
        .fold(Matrix3::zeros(), |acc, (s, &m)| {
            let r = s.local_pose.rotation.to_rotation_matrix().into_inner();
            let d = s.local_pose.translation.vector - com;
            acc + r * s.shape.unit_inertia(m) * r.transpose()
                + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * m
        });
    Some((total, com, inertia))
}
