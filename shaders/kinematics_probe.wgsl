// Evaluates the kinematics of quat.wgsl on a batch of inputs, for the property tests
// against axion-math (crates/axion-gpu/src/kinematics.rs is its twin).
//
// Input i, PROBE_IN = 17 floats: pose (x, θx, θy, θz, θw), twist (v, ω), step h, vector r.
// Output i, PROBE_OUT = 14 floats: integrate(pose, twist, h) (7), ½[0,ω]⊗θ (4), R(θ) r (3).

@group(0) @binding(0) var<storage, read> probe_in: array<f32>;
@group(0) @binding(1) var<storage, read_write> probe_out: array<f32>;

@compute @workgroup_size(WORKGROUP)
fn probe(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= arrayLength(&probe_out) / PROBE_OUT {
        return;
    }
    let b = i * PROBE_IN;
    let x = vec3<f32>(probe_in[b], probe_in[b + 1u], probe_in[b + 2u]);
    let q = vec4<f32>(probe_in[b + 3u], probe_in[b + 4u], probe_in[b + 5u], probe_in[b + 6u]);
    let v = vec3<f32>(probe_in[b + 7u], probe_in[b + 8u], probe_in[b + 9u]);
    let w = vec3<f32>(probe_in[b + 10u], probe_in[b + 11u], probe_in[b + 12u]);
    let h = probe_in[b + 13u];
    let r = vec3<f32>(probe_in[b + 14u], probe_in[b + 15u], probe_in[b + 16u]);
    let p = integrate_pose(PoseF(x, q), v, w, h);
    let rate = quat_rate(q, w);
    let rr = quat_rotate(q, r);
    let o = i * PROBE_OUT;
    probe_out[o] = p.x.x;
    probe_out[o + 1u] = p.x.y;
    probe_out[o + 2u] = p.x.z;
    probe_out[o + 3u] = p.q.x;
    probe_out[o + 4u] = p.q.y;
    probe_out[o + 5u] = p.q.z;
    probe_out[o + 6u] = p.q.w;
    probe_out[o + 7u] = rate.x;
    probe_out[o + 8u] = rate.y;
    probe_out[o + 9u] = rate.z;
    probe_out[o + 10u] = rate.w;
    probe_out[o + 11u] = rr.x;
    probe_out[o + 12u] = rr.y;
    probe_out[o + 13u] = rr.z;
}
