//! Conversions between nalgebra (our math) and glam (parry's), and our geometry to
//! parry shapes.

use axion_model::{Geometry, Shape};
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use parry3d_f64::math::{Pose as PPose, Rotation as PRotation, Vector as PVector};
use parry3d_f64::shape::SharedShape;

/// nalgebra → parry vector.
pub fn to_parry_vector(v: &Vector3<f64>) -> PVector {
    PVector::new(v.x, v.y, v.z)
}

/// parry → nalgebra vector.
pub fn from_parry_vector(v: &PVector) -> Vector3<f64> {
    Vector3::new(v.x, v.y, v.z)
}

/// nalgebra → parry pose.
pub fn to_parry_pose(p: &Isometry3<f64>) -> PPose {
    let q = p.rotation.coords;
    PPose::from_parts(
        to_parry_vector(&p.translation.vector),
        PRotation::from_xyzw(q.x, q.y, q.z, q.w),
    )
}

/// parry → nalgebra pose.
pub(crate) fn from_parry_pose(p: &PPose) -> Isometry3<f64> {
    let r = p.rotation;
    Isometry3::from_parts(
        Translation3::from(from_parry_vector(&p.translation)),
        UnitQuaternion::new_normalize(Quaternion::new(r.w, r.x, r.y, r.z)),
    )
}

/// The parry shape of a geometry, the pose of that shape in the geometry's frame, and
/// the core radius for spheres and capsules.
pub(crate) fn shape(g: &Geometry) -> Result<(SharedShape, Isometry3<f64>, Option<f64>), String> {
    let id = Isometry3::identity();
    Ok(match g {
        Geometry::Solid(Shape::Sphere { radius }) => {
            (SharedShape::ball(*radius), id, Some(*radius))
        }
        Geometry::Solid(Shape::Box { half_extents: e }) => {
            (SharedShape::cuboid(e.x, e.y, e.z), id, None)
        }
        Geometry::Solid(Shape::Capsule {
            radius,
            half_length,
        }) => (
            SharedShape::capsule_z(*half_length, *radius),
            id,
            Some(*radius),
        ),
        Geometry::Solid(Shape::Cylinder {
            radius,
            half_length,
        }) => (
            SharedShape::cylinder(*half_length, *radius),
            shape_offset(g),
            None,
        ),
        Geometry::HalfSpace { normal } => (
            SharedShape::halfspace(to_parry_vector(&normal.normalize())),
            id,
            None,
        ),
        Geometry::ConvexHull { points } => {
            let pts: Vec<PVector> = points.iter().map(to_parry_vector).collect();
            let hull = SharedShape::convex_hull(&pts)
                .ok_or("the convex hull of these points is degenerate (flat or empty)")?;
            (hull, id, None)
        }
        Geometry::TriMesh { vertices, indices } => {
            let v: Vec<PVector> = vertices.iter().map(to_parry_vector).collect();
            let mesh = SharedShape::trimesh(v, indices.clone())
                .map_err(|e| format!("invalid triangle mesh: {e:?}"))?;
            (mesh, id, None)
        }
        Geometry::HeightField {
            heights,
            rows,
            cols,
            spacing,
        } => {
            let (vertices, indices) = height_field_mesh(heights, *rows, *cols, *spacing);
            let mesh = SharedShape::trimesh(vertices, indices)
                .map_err(|e| format!("invalid height field: {e:?}"))?;
            (mesh, id, None)
        }
    })
}

/// The pose of parry's shape in the geometry's frame: identity except for cylinders,
/// which run along parry's y axis and along our z: turn y into z.
pub(crate) fn shape_offset(g: &Geometry) -> Isometry3<f64> {
    match g {
        Geometry::Solid(Shape::Cylinder { .. }) => {
            Isometry3::rotation(Vector3::x() * std::f64::consts::FRAC_PI_2)
        }
        _ => Isometry3::identity(),
    }
}

/// A height field as a triangle mesh, two triangles per cell, facing +z.
pub(crate) fn height_field_mesh(
    heights: &[f64],
    rows: usize,
    cols: usize,
    spacing: (f64, f64),
) -> (Vec<PVector>, Vec<[u32; 3]>) {
    let vertices = (0..rows)
        .flat_map(|i| (0..cols).map(move |j| (i, j)))
        .map(|(i, j)| {
            PVector::new(
                i as f64 * spacing.0,
                j as f64 * spacing.1,
                heights[i * cols + j],
            )
        })
        .collect();
    let at = |i: usize, j: usize| (i * cols + j) as u32;
    let mut indices = Vec::with_capacity(2 * (rows - 1) * (cols - 1));
    for i in 0..rows - 1 {
        for j in 0..cols - 1 {
            indices.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            indices.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    (vertices, indices)
}
