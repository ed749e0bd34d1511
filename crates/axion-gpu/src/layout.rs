//! One source for the numbers the kernels and the host must agree on: each is a Rust
//! constant here, and [`wgsl_constants`] writes the same table as WGSL `const`
//! declarations in front of the shaders ([`crate::step::step_source`],
//! [`crate::narrow::narrow_source`]), which declare none of them themselves. The
//! kernels' uniform block is checked member by member instead
//! (`step::Params`).

/// Declares each constant in Rust (of its type) and lists it in [`SHARED`] for WGSL
/// (`u32`).
macro_rules! shared {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $value:expr;)*) => {
        $($(#[$doc])* pub(crate) const $name: $ty = $value;)*
        /// Every constant of this module by name, as [`wgsl_constants`] declares them.
        pub(crate) const SHARED: &[(&str, u64)] = &[$((stringify!($name), $name as u64)),*];
    };
}

shared! {
    /// Invocations per workgroup of every kernel (`@workgroup_size`).
    WORKGROUP: u32 = 64;
    /// No body, joint or drive (the world, an unused slot).
    NONE: u32 = u32::MAX;
    /// Points of a contact manifold at most.
    MANIFOLD_POINTS: usize = 8;
    // The probe kernels' records (`kinematics_probe.wgsl`, `narrow_probe.wgsl`).
    /// Floats per input of `kinematics_probe.wgsl`.
    PROBE_IN: usize = 17;
    /// Floats per output of `kinematics_probe.wgsl`.
    PROBE_OUT: usize = 14;
    /// Floats per input of `probe_plane`.
    NARROW_IN: usize = 16;
    /// Floats per output of `probe_plane`.
    NARROW_OUT: usize = 17;
    /// Floats per input of `probe_pair`.
    PAIR_IN: usize = 24;
    /// Floats per output of `probe_pair`.
    PAIR_OUT: usize = 54;
    // Shape kinds of the narrow phase (`shape_code`).
    /// A sphere (parameters: radius).
    SPHERE: u32 = 0;
    /// A box (parameters: half extents).
    BOX: u32 = 1;
    /// A capsule along z (parameters: radius, half length).
    CAPSULE: u32 = 2;
    /// A cylinder along z (parameters: radius, half length).
    CYLINDER: u32 = 3;
    /// A half-space (parameters: its unit normal in the shape frame).
    HALF_SPACE: u32 = 4;
    // Joint kinds of the packed model (`step::pack`; free joints have no rows).
    /// A revolute joint.
    REVOLUTE: u32 = 0;
    /// A prismatic joint.
    PRISMATIC: u32 = 1;
    /// A ball joint.
    BALL: u32 = 2;
    /// A fixed joint.
    FIXED: u32 = 3;
    // The coordinate of a drive or a joint limit.
    /// An angle (rad).
    ANGLE: u32 = 0;
    /// A displacement (m).
    DISPLACEMENT: u32 = 1;
    // Drive modes in the control buffer (`step::pack_control`).
    /// Position target with stiffness and damping.
    MODE_POSITION: u32 = 0;
    /// Velocity target.
    MODE_VELOCITY: u32 = 1;
    /// A force (only zero runs on the device).
    MODE_FORCE: u32 = 2;
    /// Armature.
    MODE_ARMATURE: u32 = 3;
    // Strides of the packed model and control (`step::pack`).
    /// Floats per body in `model_f`.
    BODY_F: usize = 24;
    /// Floats per joint in `model_f`.
    JOINT_F: usize = 24;
    /// Words per joint in `model_u`.
    JOINT_U: usize = 8;
    /// Words per drive in `model_u`.
    DRIVE_U: usize = 4;
    /// Floats per drive in the control buffer.
    CONTROL_DRIVE: usize = 5;
    /// Words per contact pair in `model_u` (`step::push_pair`).
    PAIR_U: usize = 8;
    /// Floats per contact pair in `model_f` (`step::push_pair`).
    PAIR_F: usize = 28;
    /// Scratch floats per contact slot (the `C_*` offsets of `step.wgsl`).
    CONTACT_S: usize = 36;
    /// Words per joint-limit slot in `model_u`: joint, coordinate, side, 0.
    LIMIT_U: usize = 4;
    /// Floats per joint-limit slot in `model_f`: bound, reference.
    LIMIT_F: usize = 2;
    // Per-world statistics in the `stats` buffer (interleaved: slot `s` of world `w` of
    // a chunk at `s * worlds + w`).
    /// Newton iterations of the last step.
    ST_ITERATIONS: usize = 0;
    /// 1 when the last step converged.
    ST_CONVERGED: usize = 1;
    /// Dynamics residual (m/s).
    ST_DYNAMICS: usize = 2;
    /// Joint residual (m or rad).
    ST_JOINTS: usize = 3;
    /// Drive residual (m/s or rad/s).
    ST_DRIVES: usize = 4;
    /// Line-search halvings of the last step.
    ST_BACKTRACKS: usize = 5;
    /// Linear solves that failed in the last step.
    ST_FAILED: usize = 6;
    /// Merit of the current iterate.
    ST_MERIT: usize = 7;
    /// 1 while the world takes part in the next Newton iteration.
    ST_ACTIVE: usize = 8;
    /// Contact and range residual (m/s or rad/s).
    ST_CONTACTS: usize = 9;
    /// Friction residual (m/s).
    ST_FRICTION: usize = 10;
    /// Active contact slots.
    ST_COUNT: usize = 11;
    /// The step's first merit.
    ST_MERIT0: usize = 12;
    /// The best merit of the step.
    ST_BEST: usize = 13;
    /// 1 once a world lags the slip force's coupling to the normal force
    /// (`couple_to_previous`).
    ST_LAGGED: usize = 14;
    /// The linear solve between dispatches (`linear_iterate`): iterations done.
    ST_LIN_IT: usize = 15;
    /// Whether the linear solve has ended.
    ST_LIN_DONE: usize = 16;
    /// The squared tolerance on |r|².
    ST_LIN_TOL: usize = 17;
    /// The conjugate residual's ρ = (z, Az).
    ST_LIN_RHO: usize = 18;
    /// The smallest |r|².
    ST_LIN_BEST: usize = 19;
    /// ORTHOMIN's three (Ap_k, K Ap_k).
    ST_LIN_NORM: usize = 20;
    /// 1 once a kernel found its loops cut short (`check_loops`); cleared only by an
    /// upload, since every later step starts from the wrong state.
    ST_TRUNCATED: usize = 23;
    // Statistics of a run of steps (`record_run`), cleared by the host before each run
    // of at most RUN_BLOCK steps.
    /// Newton iterations summed over the run's steps.
    ST_RUN_ITERATIONS: usize = 24;
    /// The largest Newton iteration count of the run's steps.
    ST_RUN_MAX: usize = 25;
    /// Steps finished in the run.
    ST_RUN_STEPS: usize = 26;
    /// First of `RUN_FLAG_SLOTS` slots of bits, one per step of the run, set where the
    /// step did not converge: `RUN_FLAG_BITS` to a slot, an integer exact in f32.
    ST_RUN_UNCONVERGED: usize = 27;
    /// Slots of [`ST_RUN_UNCONVERGED`].
    RUN_FLAG_SLOTS: usize = 8;
    /// Bits per slot of [`ST_RUN_UNCONVERGED`] (f32 holds integers below 2²⁴ exactly).
    RUN_FLAG_BITS: usize = 24;
    /// Statistics per world.
    STATS: usize = 35;
}

/// The longest run the device records the convergence of step by step: the host reads
/// the run statistics back at least this often.
pub(crate) const RUN_BLOCK: usize = RUN_FLAG_SLOTS * RUN_FLAG_BITS;

// The bits of a slot are an integer that f32 holds exactly (below 2²⁴).
const _: () = assert!(RUN_FLAG_BITS <= 24);

/// The WGSL declarations of the shared constants: `const NAME: u32 = valueu;`, one per line.
pub fn wgsl_constants() -> String {
    SHARED
        .iter()
        .map(|(name, value)| format!("const {name}: u32 = {value}u;\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn statistics_slots_are_distinct_and_fit() {
        let single = [
            ST_ITERATIONS,
            ST_CONVERGED,
            ST_DYNAMICS,
            ST_JOINTS,
            ST_DRIVES,
            ST_BACKTRACKS,
            ST_FAILED,
            ST_MERIT,
            ST_ACTIVE,
            ST_CONTACTS,
            ST_FRICTION,
            ST_COUNT,
            ST_MERIT0,
            ST_BEST,
            ST_LAGGED,
            ST_LIN_IT,
            ST_LIN_DONE,
            ST_LIN_TOL,
            ST_LIN_RHO,
            ST_LIN_BEST,
            ST_TRUNCATED,
            ST_RUN_ITERATIONS,
            ST_RUN_MAX,
            ST_RUN_STEPS,
        ];
        let mut used: Vec<usize> = single.to_vec();
        used.extend(ST_LIN_NORM..ST_LIN_NORM + 3);
        used.extend(ST_RUN_UNCONVERGED..ST_RUN_UNCONVERGED + RUN_FLAG_SLOTS);
        let distinct: HashSet<usize> = used.iter().copied().collect();
        assert_eq!(distinct.len(), used.len(), "two statistics share a slot");
        assert_eq!(*distinct.iter().max().unwrap() + 1, STATS);
    }

    #[test]
    fn names_are_unique_wgsl_identifiers() {
        let names: HashSet<&str> = SHARED.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.len(), SHARED.len());
        let source = wgsl_constants();
        assert_eq!(source.lines().count(), SHARED.len());
        assert!(source.contains("const ST_TRUNCATED: u32 = 23u;\n"));
        assert!(source.contains("const HALF_SPACE: u32 = 4u;\n"));
    }
}
