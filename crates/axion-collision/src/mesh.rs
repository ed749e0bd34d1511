//! Triangle meshes of shapes for pictures and animations (not for collision).

use axion_math::orthobasis;
use axion_model::{Geometry, Shape};
use nalgebra::{Point3, Vector3};
use parry3d_f64::math::Vector as PVector;
use parry3d_f64::shape::{Ball, Capsule, ConvexPolyhedron, Cuboid, Cylinder};

use crate::convert::{from_parry_vector, height_field_mesh, shape_offset};

/// Half the side of the square drawn for a half-space (m): a half-space is infinite,
/// its picture is a 40 m × 40 m square through the shape frame's origin.
pub const HALF_SPACE_DRAWN_HALF_SIDE: f64 = 20.0;

/// A triangle mesh in the frame of the geometry it draws.
#[derive(Clone, Debug, PartialEq)]
pub struct VisualMesh {
    /// Vertex positions (m).
    pub positions: Vec<Point3<f64>>,
    /// Triangles, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

impl VisualMesh {
    /// Smallest and largest coordinate of the vertices.
    pub fn bounds(&self) -> (Point3<f64>, Point3<f64>) {
        let mut lo = Point3::from(Vector3::repeat(f64::INFINITY));
        let mut hi = Point3::from(Vector3::repeat(f64::NEG_INFINITY));
        for p in &self.positions {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        (lo, hi)
    }
}

/// The triangle mesh that draws `geometry`: parry's tessellations of the primitives
/// (spheres and capsules with 24 × 16 facets, cylinders with 32 sides), the hull of a
/// convex hull, the mesh itself, the grid of a height field, and a square for a
/// half-space. Errors are the same as when the shape is built for collision.
pub fn visual_mesh(geometry: &Geometry) -> Result<VisualMesh, String> {
    let (points, triangles): (Vec<PVector>, Vec<[u32; 3]>) = match geometry {
        Geometry::Solid(Shape::Sphere { radius }) => Ball::new(*radius).to_trimesh(24, 16),
        Geometry::Solid(Shape::Box { half_extents: e }) => {
            Cuboid::new(PVector::new(e.x, e.y, e.z)).to_trimesh()
        }
        Geometry::Solid(Shape::Capsule {
            radius,
            half_length,
        }) => Capsule::new_z(*half_length, *radius).to_trimesh(24, 16),
        Geometry::Solid(Shape::Cylinder {
            radius,
            half_length,
        }) => Cylinder::new(*half_length, *radius).to_trimesh(32),
        Geometry::HalfSpace { normal } => return Ok(half_space_square(normal)),
        Geometry::ConvexHull { points } => {
            let pts: Vec<PVector> = points.iter().map(crate::to_parry_vector).collect();
            ConvexPolyhedron::from_convex_hull(&pts)
                .ok_or("the convex hull of these points is degenerate (flat or empty)")?
                .to_trimesh()
        }
        Geometry::TriMesh { vertices, indices } => (
            vertices.iter().map(crate::to_parry_vector).collect(),
            indices.clone(),
        ),
        Geometry::HeightField {
            heights,
            rows,
            cols,
            spacing,
        } => height_field_mesh(heights, *rows, *cols, *spacing),
    };
    let offset = shape_offset(geometry);
    Ok(VisualMesh {
        positions: points
            .iter()
            .map(|p| offset * Point3::from(from_parry_vector(p)))
            .collect(),
        triangles,
    })
}

/// A square of side $2L$ through the origin, normal to `normal`, facing it.
fn half_space_square(normal: &Vector3<f64>) -> VisualMesh {
    let n = normal.normalize();
    let (t1, t2) = orthobasis(&n);
    let l = HALF_SPACE_DRAWN_HALF_SIDE;
    let corner = |a: f64, b: f64| Point3::from(t1 * a * l + t2 * b * l);
    VisualMesh {
        positions: vec![
            corner(-1.0, -1.0),
            corner(1.0, -1.0),
            corner(1.0, 1.0),
            corner(-1.0, 1.0),
        ],
        // t1 × t2 = n, so (t1, t2) order is counter-clockwise seen from the normal side.
        triangles: vec![[0, 1, 2], [0, 2, 3]],
    }
}
