//! Rust twin of `shaders/quat.wgsl` (quaternions, $G(q)$, pose integration in f32) and
//! of `shaders/kinematics_probe.wgsl`, the kernel that evaluates them on a batch of
//! inputs so that tests can compare them with `axion-math`.
//!
//! The WGSL functions and the `axion-math` functions they mirror:
//!
//! | WGSL | formula | axion-math |
//! |---|---|---|
//! | `quat_mul` | $a\otimes b$ | nalgebra's product |
//! | `quat_rotate` | $R(\theta)\thinspace v = v + 2w(\mathbf u\times v) + 2\mathbf u\times(\mathbf u\times v)$ | `UnitQuaternion * Vector3` |
//! | `quat_rate` | $\dot\theta = \tfrac12[0,\omega]\otimes\theta = Q(\theta)\thinspace\omega$ | [`axion_math::quaternion_rate`] |
//! | `quat_exp` | $\operatorname{Exp}(\phi) = (\sin\tfrac{\lvert\phi\rvert}2\thinspace\hat\phi, \cos\tfrac{\lvert\phi\rvert}2)$ | [`axion_math::exp_map`] |
//! | `integrate_pose` | $x^+ = x + hv$, $\theta^+ = \operatorname{Exp}(h\omega)\otimes\theta$, renormalised | [`axion_math::integrate`] |

use axion_math::{Pose, Twist, angular, linear, pose_coords};
use nalgebra::Vector3;

use crate::context::GpuContext;
use crate::error::GpuError;
use crate::layout::*;

/// `shaders/quat.wgsl`: the library every kernel is prefixed with.
pub const QUAT_WGSL: &str = include_str!("../../../shaders/quat.wgsl");
/// `shaders/kinematics_probe.wgsl`: the probe kernel (needs [`QUAT_WGSL`] before it).
pub const PROBE_WGSL: &str = include_str!("../../../shaders/kinematics_probe.wgsl");

/// The complete probe module: [`QUAT_WGSL`] followed by [`PROBE_WGSL`].
pub fn probe_source() -> String {
    let shared = crate::layout::wgsl_constants();
    format!("{shared}\n{QUAT_WGSL}\n{PROBE_WGSL}")
}

/// One probe input: a pose, a twist, a step and a vector to rotate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeInput {
    /// Pose $q = (x, \theta)$.
    pub pose: Pose,
    /// Twist $u = (v, \omega)$.
    pub twist: Twist,
    /// Step $h$.
    pub h: f64,
    /// A vector to rotate by $\theta$.
    pub vector: Vector3<f64>,
}

/// What the device computed for one [`ProbeInput`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeOutput {
    /// `integrate(pose, twist, h)` as 7 coordinates $(x, \theta_x, \theta_y, \theta_z, \theta_w)$.
    pub integrated: [f32; 7],
    /// $\tfrac12[0,\omega]\otimes\theta$, $(x, y, z, w)$.
    pub rate: [f32; 4],
    /// $R(\theta)\thinspace r$.
    pub rotated: [f32; 3],
}

/// Evaluates the WGSL kinematics on every input (one invocation each).
pub fn run_probe(ctx: &GpuContext, inputs: &[ProbeInput]) -> Result<Vec<ProbeOutput>, GpuError> {
    if inputs.is_empty() {
        return Ok(Vec::new());
    }
    let mut data = Vec::with_capacity(PROBE_IN * inputs.len());
    for p in inputs {
        data.extend(pose_coords(&p.pose).iter().map(|&x| x as f32));
        data.extend(linear(&p.twist).iter().map(|&x| x as f32));
        data.extend(angular(&p.twist).iter().map(|&x| x as f32));
        data.push(p.h as f32);
        data.extend(p.vector.iter().map(|&x| x as f32));
    }
    let floats = ctx.run_probe_kernel(
        "kinematics_probe",
        &probe_source(),
        "probe",
        &data,
        PROBE_OUT * inputs.len(),
        inputs.len(),
    )?;
    Ok(floats
        .chunks_exact(PROBE_OUT)
        .map(|c| ProbeOutput {
            integrated: [c[0], c[1], c[2], c[3], c[4], c[5], c[6]],
            rate: [c[7], c[8], c[9], c[10]],
            rotated: [c[11], c[12], c[13]],
        })
        .collect())
}

/// Parses and validates a WGSL module with naga (no adapter needed).
#[cfg(test)]
pub(crate) fn validate_wgsl(source: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("WGSL does not parse:\n{}", e.emit_to_string(source)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("WGSL does not validate: {e:?}"));
    module
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quat_wgsl_is_valid_wgsl() {
        let module = validate_wgsl(QUAT_WGSL);
        assert!(module.entry_points.is_empty(), "a library, no kernels");
        for f in [
            "quat_mul",
            "quat_rotate",
            "quat_rate",
            "quat_exp",
            "integrate_pose",
        ] {
            assert!(
                module
                    .functions
                    .iter()
                    .any(|(_, g)| g.name.as_deref() == Some(f)),
                "{f} missing"
            );
        }
    }

    #[test]
    fn kinematics_probe_is_valid_wgsl() {
        let module = validate_wgsl(&probe_source());
        let probe = module
            .entry_points
            .iter()
            .find(|e| e.name == "probe")
            .expect("entry point `probe`");
        assert_eq!(probe.workgroup_size, [crate::layout::WORKGROUP, 1, 1]);
    }
}
