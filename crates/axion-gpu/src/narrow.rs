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

use axion_math::{Pose, pose_coords};
use axion_model::Shape;
use nalgebra::Vector3;

use crate::context::GpuContext;
use crate::error::GpuError;
use crate::kinematics::QUAT_WGSL;

/// `shaders/narrow.wgsl`: the half-space narrow phase (needs [`QUAT_WGSL`] before it;
/// the step kernel includes it).
pub const NARROW_WGSL: &str = include_str!("../../../shaders/narrow.wgsl");

/// `shaders/narrow_probe.wgsl`: the probe kernel of [`NARROW_WGSL`], for the tests.
pub const NARROW_PROBE_WGSL: &str = include_str!("../../../shaders/narrow_probe.wgsl");

/// The complete narrow-phase probe module: [`QUAT_WGSL`], [`NARROW_WGSL`] and
/// [`NARROW_PROBE_WGSL`].
pub fn narrow_source() -> String {
    format!("{QUAT_WGSL}\n{NARROW_WGSL}\n{NARROW_PROBE_WGSL}")
}

const IN: usize = 16;
const OUT: usize = 17;

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
    let mut data = Vec::with_capacity(IN * queries.len());
    for q in queries {
        let (kind, par) = match q.shape {
            Shape::Sphere { radius } => (0.0, [radius, 0.0, 0.0]),
            Shape::Box { half_extents: e } => (1.0, [e.x, e.y, e.z]),
            Shape::Capsule {
                radius,
                half_length,
            } => (2.0, [radius, half_length, 0.0]),
            Shape::Cylinder {
                radius,
                half_length,
            } => (3.0, [radius, half_length, 0.0]),
        };
        data.extend(q.normal.iter().map(|&x| x as f32));
        data.push(q.offset as f32);
        data.push(kind);
        data.extend(par.iter().map(|&x| x as f32));
        data.extend(pose_coords(&q.pose).iter().map(|&x| x as f32));
        data.push(q.margin as f32);
    }
    let floats = ctx.run_probe_kernel(
        "narrow_probe",
        &narrow_source(),
        "probe_plane",
        &data,
        OUT * queries.len(),
        queries.len(),
    )?;
    Ok(floats
        .chunks_exact(OUT)
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
        assert_eq!(probe.workgroup_size, [64, 1, 1]);
    }
}
