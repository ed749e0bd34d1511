// Quaternion and pose kinematics in f32: the WGSL twin of axion-math's `pose` and
// `kinematics` modules. A library (no entry point): kernels are built by prepending it.
//
// Quaternions are vec4<f32> stored (x, y, z, w) like nalgebra; a pose is a COM position
// and a unit quaternion. Angular velocities are in the world frame.

// Hamilton product a ⊗ b.
fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz),
        a.w * b.w - dot(a.xyz, b.xyz),
    );
}

// Conjugate (the inverse of a unit quaternion).
fn quat_conj(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

// R(q) v = v + 2w (u × v) + 2 u × (u × v), u = q.xyz.
fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

// Quaternion rate θ̇ = ½ [0, ω] ⊗ θ (world-frame ω, left multiplication): the
// angular block Q(θ) ω of the kinematic map G(q).
fn quat_rate(q: vec4<f32>, omega: vec3<f32>) -> vec4<f32> {
    return 0.5 * quat_mul(vec4<f32>(omega, 0.0), q);
}

// Exp(φ) = (sin(|φ|/2) φ/|φ|, cos(|φ|/2)); sin(a/2)/a by its series below a = 1e-4,
// where the quotient would lose the sign of a zero rotation.
fn quat_exp(phi: vec3<f32>) -> vec4<f32> {
    let a = length(phi);
    var s: f32;
    if a < 1e-4 {
        s = 0.5 - a * a / 48.0;
    } else {
        s = sin(0.5 * a) / a;
    }
    return vec4<f32>(phi * s, cos(0.5 * a));
}

// Pose integration over h with constant velocity (v, ω):
// x⁺ = x + h v, θ⁺ = Exp(h ω) ⊗ θ, renormalised (axion_math::integrate).
struct PoseF {
    x: vec3<f32>,
    q: vec4<f32>,
}

fn integrate_pose(p: PoseF, v: vec3<f32>, omega: vec3<f32>, h: f32) -> PoseF {
    let q = quat_mul(quat_exp(omega * h), p.q);
    return PoseF(p.x + v * h, normalize(q));
}

// The rotation matrix R(q) as three columns.
fn quat_matrix(q: vec4<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(
        quat_rotate(q, vec3<f32>(1.0, 0.0, 0.0)),
        quat_rotate(q, vec3<f32>(0.0, 1.0, 0.0)),
        quat_rotate(q, vec3<f32>(0.0, 0.0, 1.0)),
    );
}
