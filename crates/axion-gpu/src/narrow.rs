//! Rust twin of `shaders/narrow.wgsl`: the narrow phase of a sphere, box, capsule or
//! cylinder against a static half-space $n \cdot p = d$, in f32, and a probe kernel that
//! evaluates it on a batch of inputs so that tests can compare it with
//! `axion-collision`. The step kernel detects its contacts with the same WGSL
//! function at the start of every step.
//!
//! Points kept are those with gap $g \le$ margin:
//!
//! | shape | points (core, world frame) | gap |
//! |---|---|---|
//! | sphere, radius $r$ | the centre $x$ | $n \cdot x - d - r$ |
//! | box, half extents $e$ | with $m = R^\top n$: the 4 corners $x + R c$ of the face $k = \arg\max_i \lvert m_i\rvert$, $c_k = -\operatorname{sign}(m_k)\thinspace e_k$, $c_j = \pm e_j$ otherwise | $n \cdot p - d$ |
//! | capsule, radius $r$, half length $l$ along local $z$ | $x \pm l R \hat z$ | $n \cdot p - d - r$ |
//! | cylinder, radius $r$, half length $l$ along local $z$ | with $m = -R^\top n$ and $u$ the unit of $(m_x, m_y)$ ($\hat x$ below $10^{-6}$): if $\lvert m_z\rvert < 0.5$ the side line's ends $x + R(r u, \pm l)$, else the cap's rim points $x + R(r v, \operatorname{sign}(m_z)\thinspace l)$, $v$ = $u$ turned by 0°, 90°, 180°, 270° | $n \cdot p - d$ |

//!
//! Pairs of solids (`shape_manifold`, evaluated by [`run_pair_probe`]) give a manifold:
//! a normal from b towards a and up to `MANIFOLD_POINTS` (8) pairs of core points. For a
//! cylinder against a box, a capsule's core or a cylinder, the signed distance is
//! $\sigma = \max_{\lvert n\rvert = 1} s(n)$ with
//! $s(n) = n \cdot (x_a - x_b) - h_a(n) - h_b(n)$ and the support radii
//! $h(n) = r\lvert\hat a \times n\rvert + l\lvert\hat a \cdot n\rvert$ (cylinder),
//! $\sum_i e_i \lvert u_i \cdot n\rvert$ (box): every $s(n)$ is a lower bound, so the
//! device takes the best over candidate directions that include every pair of
//! supporting features (faces, caps, side against edge or corner, rim against corner,
//! rim against line or rim by a root search of $(q - \pi(q)) \cdot \hat t$ along the
//! rim); `docs/gpu.md` lists them.

use axion_math::{Pose, pose_coords};
use axion_model::{Geometry, Shape};
use nalgebra::Vector3;

use crate::context::GpuContext;
use crate::error::GpuError;
use crate::kinematics::QUAT_WGSL;
use crate::layout::*;

/// `shaders/narrow.wgsl`: the half-space narrow phase (needs [`QUAT_WGSL`] before it;
/// the step kernel includes it).
pub const NARROW_WGSL: &str = include_str!("../../../shaders/narrow.wgsl");

/// `shaders/narrow_probe.wgsl`: the probe kernel of [`NARROW_WGSL`], for the tests.
pub const NARROW_PROBE_WGSL: &str = include_str!("../../../shaders/narrow_probe.wgsl");

/// The complete narrow-phase probe module: the shared constants ([`crate::layout`]),
/// [`QUAT_WGSL`], [`NARROW_WGSL`] and
/// [`NARROW_PROBE_WGSL`].
pub fn narrow_source() -> String {
    let shared = crate::layout::wgsl_constants();
    format!("{shared}\n{QUAT_WGSL}\n{NARROW_WGSL}\n{NARROW_PROBE_WGSL}")
}

/// The WGSL narrow phase's code of a geometry, `(kind, parameters)`: sphere (0, r),
/// box (1, half extents), capsule (2, r, l), cylinder (3, r, l), half-space (4, unit
/// normal in the shape frame); `None` for geometries it does not handle.
pub(crate) fn shape_code(g: &Geometry) -> Option<(u32, [f64; 3])> {
    Some(match *g {
        Geometry::Solid(Shape::Sphere { radius }) => (SPHERE, [radius, 0.0, 0.0]),
        Geometry::Solid(Shape::Box { half_extents: e }) => (BOX, [e.x, e.y, e.z]),
        Geometry::Solid(Shape::Capsule {
            radius,
            half_length,
        }) => (CAPSULE, [radius, half_length, 0.0]),
        Geometry::Solid(Shape::Cylinder {
            radius,
            half_length,
        }) => (CYLINDER, [radius, half_length, 0.0]),
        Geometry::HalfSpace { normal } => {
            let n = normal.normalize();
            (HALF_SPACE, [n.x, n.y, n.z])
        }
        _ => return None,
    })
}

/// One half-space query: a plane, a shape at a COM pose, a margin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaneQuery {
    /// Unit outward normal $n$ of the half-space.
    pub normal: Vector3<f64>,
    /// Offset $d$: the plane is $n \cdot p = d$.
    pub offset: f64,
    /// The shape.
    pub shape: Shape,
    /// Pose of the shape's centre.
    pub pose: Pose,
    /// Speculative margin (m).
    pub margin: f64,
}

/// One contact point found on the device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanePoint {
    /// Point on the shape's core (centre, segment end or box corner), world frame.
    pub core: [f32; 3],
    /// Gap $g$ (m; negative: penetration).
    pub gap: f32,
}

/// Evaluates the WGSL half-space narrow phase on every query (one invocation each).
pub fn run_plane_probe(
    ctx: &GpuContext,
    queries: &[PlaneQuery],
) -> Result<Vec<Vec<PlanePoint>>, GpuError> {
    if queries.is_empty() {
        return Ok(Vec::new());
    }
    let mut data = Vec::with_capacity(NARROW_IN * queries.len());
    for q in queries {
        let (kind, par) = shape_code(&Geometry::Solid(q.shape)).expect("every solid has a code");
        data.extend(q.normal.iter().map(|&x| x as f32));
        data.push(q.offset as f32);
        data.push(kind as f32);
        data.extend(par.iter().map(|&x| x as f32));
        data.extend(pose_coords(&q.pose).iter().map(|&x| x as f32));
        data.push(q.margin as f32);
    }
    let floats = ctx.run_probe_kernel(
        "narrow_probe",
        &narrow_source(),
        "probe_plane",
        &data,
        NARROW_OUT * queries.len(),
        queries.len(),
    )?;
    Ok(floats
        .chunks_exact(NARROW_OUT)
        .map(|c| {
            let count = (c[0] as usize).min(4);
            (0..count)
                .map(|k| {
                    let p = &c[1 + 4 * k..5 + 4 * k];
                    PlanePoint {
                        core: [p[0], p[1], p[2]],
                        gap: p[3],
                    }
                })
                .collect()
        })
        .collect())
}

/// One query of a shape pair: shape a at `pose_a` against shape b at `pose_b` (shape
/// poses, not body poses), within `margin`.
#[derive(Clone, Debug, PartialEq)]
pub struct PairQuery {
    /// Shape a (a solid).
    pub a: Geometry,
    /// Pose of shape a.
    pub pose_a: Pose,
    /// Shape b (a solid or a half-space).
    pub b: Geometry,
    /// Pose of shape b.
    pub pose_b: Pose,
    /// Speculative margin (m).
    pub margin: f64,
}

/// A manifold found on the device: normal from b towards a, thicknesses, and pairs of
/// core points (world frame) whose gap $n\cdot(p_a - p_b) - t_a - t_b$ is at most the
/// margin.
#[derive(Clone, Debug, PartialEq)]
pub struct PairManifold {
    /// Unit normal from b towards a.
    pub normal: [f32; 3],
    /// $(t_a, t_b)$: the radius of a sphere (its core point is its centre), else 0.
    pub thickness: [f32; 2],
    /// (point on a, point on b) per contact.
    pub points: Vec<([f32; 3], [f32; 3])>,
}

/// Evaluates the WGSL narrow phase `shape_manifold` on every pair query (one invocation
/// each); a pair without a device narrow phase gives an empty manifold.
pub fn run_pair_probe(
    ctx: &GpuContext,
    queries: &[PairQuery],
) -> Result<Vec<PairManifold>, GpuError> {
    if queries.is_empty() {
        return Ok(Vec::new());
    }
    let mut data = Vec::with_capacity(PAIR_IN * queries.len());
    for q in queries {
        for (g, pose) in [(&q.a, &q.pose_a), (&q.b, &q.pose_b)] {
            let (kind, par) = shape_code(g).unwrap_or((u32::MAX, [0.0; 3]));
            data.push(kind as f32);
            data.extend(par.iter().map(|&x| x as f32));
            data.extend(pose_coords(pose).iter().map(|&x| x as f32));
        }
        data.extend([q.margin as f32, 0.0]);
    }
    let floats = ctx.run_probe_kernel(
        "pair_probe",
        &narrow_source(),
        "probe_pair",
        &data,
        PAIR_OUT * queries.len(),
        queries.len(),
    )?;
    Ok(floats
        .chunks_exact(PAIR_OUT)
        .map(|c| PairManifold {
            normal: [c[1], c[2], c[3]],
            thickness: [c[4], c[5]],
            points: (0..(c[0] as usize).min(MANIFOLD_POINTS))
                .map(|k| {
                    let p = &c[6 + 6 * k..12 + 6 * k];
                    ([p[0], p[1], p[2]], [p[3], p[4], p[5]])
                })
                .collect(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinematics::validate_wgsl;

    #[test]
    fn narrow_wgsl_is_valid_wgsl() {
        let module = validate_wgsl(&narrow_source());
        let probe = module
            .entry_points
            .iter()
            .find(|e| e.name == "probe_plane")
            .expect("entry point `probe_plane`");
        assert_eq!(probe.workgroup_size, [crate::layout::WORKGROUP, 1, 1]);
        assert!(module.entry_points.iter().any(|e| e.name == "probe_pair"));
    }
}
