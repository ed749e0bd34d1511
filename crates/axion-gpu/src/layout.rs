//! One source for the numbers the kernels and the host must agree on: each is a Rust
//! constant here, and [`wgsl_constants`] writes the same table as WGSL `const`
//! declarations in front of the shaders ([`crate::step::step_source`],
//! [`crate::narrow::narrow_source`]), which declare none of them themselves. The
//! kernels' uniform block is checked member by member instead
//! (`step::Params`), and the scratch layout is written from one table (`Scratch`,
//! [`wgsl_scratch`]).

use axion_constraints::contact;
use axion_constraints::friction::{projection, symmetric};

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
    // A contact slot in the scratch: active flag, normal n (from b to a), the contact
    // points relative to the centres of mass in body axes and the thicknesses (p_a,
    // t_a, p_b, t_b; a rolling cylinder's rolled point, whose gap the rows keep),
    // tangents t1 and t2, μ_g, the cone scaling s (2), lever arms ρ of a and b where the
    // bodies touch at θ⁻ (R(θ⁻) p except on a rolled point; the forces act there),
    // effective inverse masses (w_n, w_t1, w_t2), the friction direction e1 (2) of the
    // current iterate; the start-of-step gap g⁻, the approach
    // velocity, the velocity bias b and whether the normal row is velocity-level.
    /// Contact slot: 1 when it holds a contact this step.
    C_ACTIVE: usize = 0;
    /// Contact slot: the normal $n$ (3).
    C_N: usize = 1;
    /// Contact slot: $p_a$ (3).
    C_PA: usize = 4;
    /// Contact slot: $t_a$.
    C_TA: usize = 7;
    /// Contact slot: $p_b$ (3).
    C_PB: usize = 8;
    /// Contact slot: $t_b$.
    C_TB: usize = 11;
    /// Contact slot: $t_1$ (3).
    C_T1: usize = 12;
    /// Contact slot: $t_2$ (3).
    C_T2: usize = 15;
    /// Contact slot: $\mu_g$.
    C_MU: usize = 18;
    /// Contact slot: the cone scaling $s$ (2).
    C_S: usize = 19;
    /// Contact slot: $\rho_a$ (3).
    C_RHOA: usize = 21;
    /// Contact slot: $\rho_b$ (3).
    C_RHOB: usize = 24;
    /// Contact slot: $w_n, w_{t1}, w_{t2}$.
    C_W: usize = 27;
    /// Contact slot: the friction direction of the current iterate (2).
    C_E: usize = 30;
    /// Contact slot: the start-of-step gap $g^-$.
    C_GAP0: usize = 32;
    /// Contact slot: the approach velocity.
    C_APPROACH: usize = 33;
    /// Contact slot: the velocity bias $b$.
    C_BIAS: usize = 34;
    /// Contact slot: 1 when the normal row is velocity-level (restitution).
    C_BOUNCE: usize = 35;
    /// Scratch floats per contact slot.
    CONTACT_S: usize = 36;
    /// Scratch floats per joint-limit slot: active, $w$.
    LIMIT_S: usize = 2;
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
    /// 1 when the current Newton iteration's factorization along the tree succeeded
    /// (`tree_factor`); the direction is then its backward sweep, not the Krylov solve.
    ST_TREE: usize = 35;
    /// 0 in the first attempt at a step; in the second (`accept`), the Newton iterations
    /// the first one took (at least 1), from which the second's cap and count start.
    ST_ATTEMPT: usize = 36;
    /// Statistics per world.
    STATS: usize = 37;
    // The factorization along the tree (`tree.rs`, `step_tree.wgsl`).
    /// Rows of one group of the tree's elimination at most.
    TREE_GROUP_MAX: usize = 12;
    /// Words per body of the tree's plan in `model_u`: body, parent group, first group,
    /// groups.
    TREE_BODY_U: usize = 4;
    /// Words per group of the tree's plan in `model_u`: rows, first entry, child,
    /// scratch offset.
    TREE_GROUP_U: usize = 4;
}

/// The f32 constants of the kernels that are the CPU's numbers (axion-constraints),
/// declared by [`wgsl_constants`] as well.
const PHYSICS: &[(&str, f64)] = &[
    ("PERSIST_DISTANCE", contact::PERSIST_DISTANCE),
    ("PERSIST_COS", contact::PERSIST_COS),
    ("OPEN_GAP", contact::OPEN_GAP),
    ("BAUMGARTE", contact::BAUMGARTE),
    ("KAPPA_MIN", symmetric::KAPPA_MIN),
    ("SLIP_BAND", projection::SLIP_BAND),
    ("ROLL_ON_SIDE", contact::ROLL_ON_SIDE),
    ("ROLL_AZIMUTH", contact::ROLL_AZIMUTH),
    ("ROLL_MIN_RADIAL", contact::ROLL_MIN_RADIAL),
    ("ROLL_SLIP", contact::ROLL_SLIP),
];

/// What a section of the scratch counts its entries per.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Per {
    /// Per body.
    Body,
    /// Per row (joints, drives, contacts, limits).
    Row,
    /// Per drive.
    Drive,
    /// Per joint-limit slot.
    Limit,
    /// Per contact slot.
    Slot,
    /// Per float of the tree's factors (`tree::TreePlan::floats`).
    Tree,
}

/// Declares [`Scratch`], the first slot of each section of a world's scratch, and
/// [`SCRATCH`], the table [`wgsl_scratch`] writes `layout_scratch` from.
macro_rules! scratch {
    ($($(#[$doc:meta])* $name:ident: $per:ident * $count:expr;)*) => {
        /// The first slot of each section of one world's scratch (`s_<name>` in the
        /// kernels), and the slots in all.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) struct Scratch {
            $($(#[$doc])* pub $name: usize,)*
            /// Slots per world.
            pub total: usize,
        }

        /// Every section in order: name, entries per counted thing, what it counts.
        pub(crate) const SCRATCH: &[(&str, usize, Per)] =
            &[$((stringify!($name), $count, Per::$per)),*];

        impl Scratch {
            /// The layout for `counts` (bodies, rows, drives, limit slots, contact slots).
            pub fn new(counts: ScratchCounts) -> Self {
                let mut at = 0;
                $(
                    let $name = at;
                    at += $count * counts.of(Per::$per);
                )*
                Self { $($name,)* total: at }
            }
        }
    };
}

/// The counts a [`Scratch`] layout depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScratchCounts {
    pub bodies: usize,
    pub rows: usize,
    pub drives: usize,
    pub limits: usize,
    pub slots: usize,
    pub tree: usize,
}

impl ScratchCounts {
    fn of(&self, per: Per) -> usize {
        match per {
            Per::Body => self.bodies,
            Per::Row => self.rows,
            Per::Drive => self.drives,
            Per::Limit => self.limits,
            Per::Slot => self.slots,
            Per::Tree => self.tree,
        }
    }
}

scratch! {
    /// Poses of the current iterate (7 per body: position, quaternion x, y, z, w).
    pose: Body * 7;
    /// Velocities $u$ of the current iterate.
    u: Body * 6;
    /// Velocities of the last accepted iterate (the line search's start).
    uc: Body * 6;
    /// The Newton direction $\Delta u$.
    du: Body * 6;
    /// The dynamics residual $h_{dyn}$.
    hd: Body * 6;
    /// $\tilde M^{-1} h_{dyn}$.
    dv: Body * 6;
    /// A temporary of the Schur product ($\tilde M^{-1} J^\top x$).
    t: Body * 6;
    /// The inverse angular mass in world axes (3 × 3).
    minv: Body * 9;
    /// The geometric stiffness of the angular block (3 × 3).
    kang: Body * 9;
    /// Multipliers $\lambda$ of the current iterate.
    l: Row * 1;
    /// Multipliers of the last accepted iterate.
    lc: Row * 1;
    /// The linear solve's unknown $\Delta\lambda$.
    x: Row * 1;
    /// Row Jacobians: parent (linear, angular), child (linear, angular).
    jac: Row * 12;
    /// Row residuals.
    res: Row * 1;
    /// Row compliances.
    creg: Row * 1;
    /// The Jacobi preconditioner.
    pre: Row * 1;
    /// The Schur system's right-hand side.
    rhs: Row * 1;
    /// The linear solver's vectors ($r, z, p, Ap, Az, y$) and its best $x$.
    r: Row * 1;
    z: Row * 1;
    p: Row * 1;
    ap: Row * 1;
    az: Row * 1;
    y: Row * 1;
    xb: Row * 1;
    /// Each drive's coordinate (or rate, for an armature) at the start of the step.
    dstart: Drive * 1;
    /// The dynamics residual less the fixed rows' forces.
    hdf: Body * 6;
    /// The multiplier each row's Jacobian carries into the dynamics.
    mu: Row * 1;
    /// 1 where a row's step is fixed, and that step.
    fix: Row * 1;
    fixv: Row * 1;
    /// The best iterate of a step with contacts: velocities and multipliers.
    ub: Body * 6;
    lb: Row * 1;
    /// The best iterate of a step's first attempt, kept while it is solved again.
    ub0: Body * 6;
    lb0: Row * 1;
    /// Per joint-limit slot: active (1 or 0) and $w = J\tilde M^{-1}J^\top$.
    lim: Limit * LIMIT_S;
    /// A fixed row's coupling to the previous row (`couple_to_previous`).
    cpl: Row * 1;
    /// The contact slots (`CONTACT_S` floats each, at the `C_*` offsets).
    con: Slot * CONTACT_S;
    /// The factors of the tree's groups (`tree::Group::floats` each).
    tree: Tree * 1;
    /// Each body's velocity $v_b$ in a solve along the tree.
    tv: Body * 6;
    /// The direct solve along the tree: each body's Newton block $\hat M_{bb}$, its
    /// couplings to its tree parent ($N_{b,p}$, $N_{p,b}$) and its final mobility $\Phi_b$
    /// (6 × 6 each, by 3 × 3 blocks).
    tm: Body * 36;
    tn: Body * 72;
    tphi: Body * 36;
}

/// The WGSL of the scratch layout: a private `s_<name>` per section of `SCRATCH` and
/// `layout_scratch()`, which sets them from the counts in the uniform block.
pub fn wgsl_scratch() -> String {
    let mut vars = String::new();
    let mut body = String::from("fn layout_scratch() {\n    var o = 0u;\n");
    for (name, count, per) in SCRATCH {
        let of = match per {
            Per::Body => "P.bodies",
            Per::Row => "P.rows",
            Per::Drive => "P.drives",
            Per::Limit => "P.limits.x",
            Per::Slot => "contact_slots()",
            Per::Tree => "P.tree_more.z",
        };
        vars.push_str(&format!("var<private> s_{name}: u32;\n"));
        body.push_str(&format!("    s_{name} = o;\n    o += {count}u * {of};\n"));
    }
    body.push_str("}\n");
    vars + &body
}

/// The longest run the device records the convergence of step by step: the host reads
/// the run statistics back at least this often.
pub(crate) const RUN_BLOCK: usize = RUN_FLAG_SLOTS * RUN_FLAG_BITS;

// The contact slot's last offset is its last float.
const _: () = assert!(C_BOUNCE + 1 == CONTACT_S);

// The bits of a slot are an integer that f32 holds exactly (below 2²⁴).
const _: () = assert!(RUN_FLAG_BITS <= 24);

/// The WGSL declarations of the shared constants, one per line: `const NAME: u32 =
/// valueu;` for the integers above, `const NAME: f32 = value;` (rounded to f32) for the CPU's
/// physical constants.
pub fn wgsl_constants() -> String {
    let integers = SHARED
        .iter()
        .map(|(name, value)| format!("const {name}: u32 = {value}u;\n"));
    let floats = PHYSICS
        .iter()
        .map(|(name, value)| format!("const {name}: f32 = {:e};\n", *value as f32));
    integers.chain(floats).collect()
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
            ST_TREE,
            ST_ATTEMPT,
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
        assert_eq!(source.lines().count(), SHARED.len() + PHYSICS.len());
        assert!(source.contains("const OPEN_GAP: f32 = 1e-6;\n"));
        assert!(source.contains("const PERSIST_COS: f32 = 9.9e-1;\n"));
        assert!(source.contains("const ST_TRUNCATED: u32 = 23u;\n"));
        assert!(source.contains("const HALF_SPACE: u32 = 4u;\n"));
    }
}
