//! The Newton step of one world.
//!
//! Unknowns: the velocities $u^+$ of the dynamic bodies (6 each) and the multipliers
//! $\lambda$ of every row (joint rows, drive rows, three rows per contact, one per active
//! joint limit). Residuals:
//! $$h_{dyn} = \tilde M(\theta^+)u^+ - \tilde M(\theta^-)u^- - h f_{ext} - h\sum_i F_i^\top\lambda_i,
//!   \qquad h_i \text{ from } \texttt{axion-constraints},$$
//! with $q^+ = q^- \oplus h\thinspace G\thinspace \bar u$ ($\bar u = u^+$, or $\tfrac12(u^- + u^+)$ for the
//! energy–momentum scheme). The momentum form $\tilde M(\theta^+)u^+ - \tilde M(\theta^-)u^-$
//! has no explicit gyroscopic term and conserves angular momentum exactly.
//!
//! Each iteration solves the full (non-symmetric) Newton system
//! $$\begin{bmatrix} \tilde M + D\thinspace \partial\phi/\partial u - h K\thinspace \partial q/\partial u & -hF^\top \\
//!   J & hC + \delta \end{bmatrix}\begin{bmatrix}\Delta u \\ \Delta\lambda\end{bmatrix}
//!   = -\begin{bmatrix} h_{dyn} \\ h_c\end{bmatrix}$$
//! where $D = I_w\operatorname{skew}(\omega) - \operatorname{skew}(I_w\omega)$ is the derivative of
//! $I_w(\theta)\omega$ under a rotation of the body, $K$ the geometric stiffness,
//! $\partial\phi/\partial u = h s J_l(h s\thinspace \omega)$ (the left Jacobian of the exponential
//! map, $s = 1$ or $\tfrac12$) and $\delta$ a tiny regularisation. The rows are
//! eliminated group by group onto the bodies' velocities and the reduced system is
//! factorized by sparse LU ([`crate::reduced`]). Then a backtracking line search on the
//! merit $\tfrac12|F|^2$, $F$ being every residual in m/s.

use axion_collision::Contact;
use axion_constraints::PositionRow;
use axion_constraints::contact::{
    BAUMGARTE, DEFAULT_FB_EPS_SQ, VelocityContact, compliant_normal_row, normal_row,
    normal_row_velocity,
};
use axion_constraints::drive::{CoordinateKind, DriveMode, coordinate_stiffness};
use axion_constraints::friction::projection;
use axion_constraints::{RowJacobian, velocity_row};
use axion_math::{Pose, Twist, angular, integrate, left_jacobian, linear, twist};
use axion_model::{Control, JointRange, Model, StepStats};
use faer::sparse::Pair;
use nalgebra::{Matrix3, Matrix6, Vector2, Vector3, Vector6};

use crate::reduced::{BodyMatrix, GroupSystem, ReducedLu, RowGroup};
use crate::settings::{Integrator, SolverSettings};
use crate::sparse::{PatternSink, Sink, SparseLu, ValueSink};

/// Index maps of a model: which bodies have unknowns, where rows live.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Layout {
    /// Body → dynamic index.
    pub dyn_index: Vec<Option<usize>>,
    /// Dynamic index → body.
    pub dyn_bodies: Vec<usize>,
    /// Bodies (parent, child) of every row, joint rows then drive rows.
    pub row_bodies: Vec<(Option<usize>, usize)>,
    /// Number of joint rows.
    pub joint_rows: usize,
}

impl Layout {
    pub fn new(model: &Model) -> Self {
        let mut dyn_index = Vec::with_capacity(model.bodies().len());
        let mut dyn_bodies = Vec::new();
        for (b, body) in model.bodies().iter().enumerate() {
            if body.is_dynamic() {
                dyn_index.push(Some(dyn_bodies.len()));
                dyn_bodies.push(b);
            } else {
                dyn_index.push(None);
            }
        }
        let mut row_bodies = Vec::with_capacity(model.joint_row_count() + model.drives().len());
        for j in model.joints() {
            for _ in 0..j.joint.row_count() {
                row_bodies.push((j.parent.map(|p| p.0), j.child.0));
            }
        }
        for d in model.drives() {
            let j = &model.joints()[d.joint.0];
            row_bodies.push((j.parent.map(|p| p.0), j.child.0));
        }
        Self {
            dyn_index,
            dyn_bodies,
            row_bodies,
            joint_rows: model.joint_row_count(),
        }
    }

    /// Dynamic index of an optional body.
    fn dynamic(&self, body: Option<usize>) -> Option<usize> {
        body.and_then(|b| self.dyn_index[b])
    }
}

/// Everything fixed during one world's step.
pub(crate) struct StepInput<'a> {
    pub model: &'a Model,
    pub layout: &'a Layout,
    pub settings: &'a SolverSettings,
    pub h: f64,
    /// Start-of-step COM poses and velocities of all bodies.
    pub q0: &'a [Pose],
    pub u0: &'a [Twist],
    pub control: &'a Control,
    pub world: usize,
    /// Contacts found at the start-of-step poses.
    pub contacts: &'a [Contact],
    /// Per contact, the normal velocity its restitution reflects (m/s, < 0 approaching).
    pub approach: &'a [f64],
    /// Joint limits that may be reached in this step.
    pub limits: &'a [ActiveLimit],
    /// The integrator of this step (backward Euler whenever there are contacts or
    /// active limits).
    pub integrator: Integrator,
    /// Full steps in a row without a new lowest merit after which the attempt ends,
    /// unconverged (0: never; [`SolverSettings::abandon_after`]).
    pub abandon_after: usize,
}

/// One side of a joint's range, close enough at the start of the step to be reached.
/// Its row is a position-level contact row on the joint coordinate: the gap
/// $g = \sigma\thinspace(q_{rel}(q^+) - b)$ with $\sigma = +1$ at the lower bound and $-1$ at
/// the upper, $q_{rel}$ the coordinate measured from the range's reference
/// ([`JointRange::relative`]) and $b$ the bound measured the same way; the force
/// $\lambda \ge 0$ acts along $\sigma J_q(q^-)$.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ActiveLimit {
    /// The joint.
    pub joint: usize,
    /// Its range.
    pub range: JointRange,
    /// $+1$: lower bound; $-1$: upper bound.
    pub side: f64,
    /// The force direction $\sigma J_q(q^-)$.
    pub force: RowJacobian,
}

impl ActiveLimit {
    /// The limits of `model` within `margin` (rad or m) plus two steps of the joint's
    /// speed, at poses `q` with velocities `u`.
    pub fn find(model: &Model, q: &[Pose], u: &[Twist], h: f64, margin: f64) -> Vec<Self> {
        let mut found = Vec::new();
        for (j, mj) in model.joints().iter().enumerate() {
            let Some(range) = mj.range() else { continue };
            let parent = mj.parent.map(|p| p.0);
            let c = mj.coordinate_at(range.coordinate, &range.axis, q);
            let speed = c
                .jacobian
                .dot(&parent.map_or(Twist::zeros(), |p| u[p]), &u[mj.child.0])
                .abs();
            for side in [1.0, -1.0] {
                let limit = Self {
                    joint: j,
                    range,
                    side,
                    force: c.jacobian * side,
                };
                if limit.gap(c.value) <= margin + 2.0 * h * speed {
                    found.push(limit);
                }
            }
        }
        found
    }

    /// $g = \sigma\thinspace(q_{rel} - b)$ for the coordinate `value` (rad or m).
    pub fn gap(&self, value: f64) -> f64 {
        let r = &self.range;
        let bound = if self.side > 0.0 { r.lower } else { r.upper };
        self.side * (r.relative(value) - (bound - r.reference()))
    }
}

/// A full step whose merit exceeds the step's starting merit by this factor is refused
/// as exploding (that iteration backtracks instead). Semismooth iterates legitimately
/// pass through merits 10⁶–10⁸ times the start: redundant sticking contacts (the two
/// side wheels of a turning skid-steer, on one axle line) get internal forces of
/// $\delta/\varepsilon_t$ from a velocity inconsistency $\delta$, which is how the step
/// finds out that one of them slips. Measured on the turning skid-steer at h = 0.05:
/// with 10⁶ and Armijo backtracking after the 10th iteration, 40/60 steps converged and
/// it turned 3.42 rad in 3 s (h = 0.01: 4.66 rad); with 10⁹ and full steps throughout,
/// 49/60 and 4.67 rad — and 60/60 once contacts persisted under the rolling wheels and
/// sticking rows were regularised (then in the matrix only, 10⁻⁷; now
/// [`SolverSettings::friction_creep`]).
const EXPLOSION: f64 = 1e9;

/// Full semismooth steps can fall into a cycle: a few iterates, each one's Newton step
/// leading to the next and the last back to the first (a foot's heel and toe trading
/// friction states, one at the edge of its cone, the other outside it: two iterates;
/// laikago's landing at h = 0.0092 s: four, one of them with a merit of 7·10⁵). The
/// merits then repeat ([`cycle`]), and the trial force's $\hat\rho$ of every friction row
/// is multiplied by this for the rest of the step: which side of a cone's edge the
/// trial force $\lambda_t - \hat\rho v_t$ falls on changes, the cycle's active sets change
/// with it, and the residual's zeros — Coulomb's law holding — do not depend on
/// $\hat\rho$ but through the creep: a sticking row slips at $c\lambda_t/\hat\rho$, so
/// each factor 0.3 makes it creep 3.3 times faster in that attempt. Measured on the
/// robots of docs/robots.md (docs/step.md, "A step solved again").
const CYCLE_RHO: f64 = 0.3;

/// A full step that raises the merit more than this factor (to above
/// [`EXPLOSION_FLOOR`]) with the friction residual its largest block is a friction
/// jump ([`friction_jump`]). Near a solution a Newton step that moves the undetermined
/// internal friction force of two sticking contacts by $\hat\rho\,\delta v/c$ (a velocity
/// mismatch $\delta v$ between them over the creep $c$) throws a contact far outside its
/// cone: the a1's landing went from merits of $10^{-7}$ to 36 and back, step after
/// step. Such a step is not taken; $\hat\rho$'s factor drops to
/// $c/c_{fallback}$ ([`jump_rho`]) and the direction is computed again from the same
/// iterate; once the attempt converges, [`POLISH`] takes it back to the step's own
/// creep. Measured on limp drops of eleven corpus robots at h = 0.005, 0.01 and 0.02
/// (docs/benchmarks.md, sixth sitting of 2026-11-28): $10^4$ with the friction test,
/// against $10^3$–$10^6$ and any block.
const JUMP: f64 = 1e4;

/// The most full Newton iterations that take an attempt converged after a friction
/// jump ([`JUMP`], with the fallback creep's slip) back to the step's own creep; where
/// they do not converge, the attempt keeps its solution with the larger creep, as the
/// retry with [`SolverSettings::fallback_creep`] would. A cube set down sticking on a
/// slope then creeps at the solver's creep from its first step on
/// (`crates/axion/tests/joint_space.rs`). Over 24 limp drops each at h = 0.01
/// (docs/benchmarks.md, sixth sitting of 2026-11-28), 2 iterations polished 16 of the
/// a1's 243 such attempts, 448 of humanoid.urdf's 505 and 230 of laikago's 272; 8 took
/// the a1 back to the iterations it had without the jump rule (5.14 against 5.17 a
/// step over 96 drops).
const POLISH: usize = 2;

/// Whether the full step from `now` to `next` was a friction jump ([`JUMP`]).
fn friction_jump(now: &Eval, next: &Eval) -> bool {
    next.merit.is_finite()
        && next.merit > JUMP * now.merit
        && next.merit > EXPLOSION_FLOOR
        && next.friction_norm > next.contact_norm.max(next.dyn_norm)
}

/// The factor on $\hat\rho$ after a friction jump ([`JUMP`]): `friction_creep /
/// fallback_creep`. A sticking row then slips at $c\lambda_t/(f\hat\rho) =
/// c_{fallback}\lambda_t/\hat\rho$, the creep a failed step is solved again with
/// ([`SolverSettings::fallback_creep`]); `None` (no such step) where the
/// fallback creep is not the larger one or the creep is zero (exact Coulomb sticking).
fn jump_rho(settings: &SolverSettings) -> Option<f64> {
    let (creep, fallback) = (settings.friction_creep, settings.fallback_creep);
    (creep > 0.0 && fallback > creep).then(|| creep / fallback)
}

/// The longest cycle [`cycle`] looks for (iterates). Measured on the limp drops of
/// a1, aliengo, laikago, mini_cheetah and humanoid.urdf at 42 step sizes each
/// (docs/step.md, "A step solved again"): cycles of 3–6 iterates held steps that a
/// two-cycle rule let wander to the iteration limit.
const LONGEST_CYCLE: usize = 6;

/// The merits [`cycle`] looks at: two rounds of the longest cycle.
const CYCLE_MERITS: usize = 2 * LONGEST_CYCLE;

/// Whether the last merits (oldest first) end in a cycle of $p$ = 2 to
/// [`LONGEST_CYCLE`] iterates: each of the last $p$ within 1 % of the one $p$ iterations
/// before it, and not all of them within 1 % of their neighbours (a plateau or a slow
/// descent is not a cycle). Merits not yet seen are NaN, which matches nothing.
fn cycle(m: &[f64; CYCLE_MERITS]) -> bool {
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-2 * a.max(b);
    let n = m.len();
    (2..=LONGEST_CYCLE).any(|p| {
        (1..=p).all(|i| same(m[n - i], m[n - i - p]))
            && (1..p).any(|i| !same(m[n - i], m[n - i - 1]))
    })
}

/// The starting merit [`EXPLOSION`] multiplies is at least this ((m/s)²: residuals of
/// 1 mm/s): a step warm-started next to its solution (merit 10⁻²⁰) may still pass
/// through merits of 10⁻¹⁰ on its way, as semismooth iterates do, without being
/// refused as exploding.
const EXPLOSION_FLOOR: f64 = 1e-6;

/// The share of each tolerance a chord step ending a step's Newton iteration is
/// expected to reach ([`chord_expected`]). A full Newton iteration ending a step
/// usually lands far inside the tolerances (quadratic convergence); a chord step lands
/// about where it was predicted. With the margin at 1 the torque-free body of the
/// scene tests drifted from its angular momentum by 3.6e-9 over 1000 steps at
/// h = 0.01 (1.3e-14 without chord steps; the test allows 1e-9), with 1e-2 by 8e-11
/// (docs/step.md, "Chord steps"). The prediction leaves out the chord solve's own
/// rounding (it skips iterative refinement); a chord step is taken only where the
/// residual it reaches converges, so that costs at most a wasted solve.
const CHORD_MARGIN: f64 = 1e-2;

/// An inexact Newton direction far from the solution: the linear solve's iterative
/// refinement ([`ReducedLu::solve_to`]) stops once the unreduced system's residual is
/// below $\eta = \min(\kappa\lvert F\rvert, \eta_{max})$ times its right-hand side
/// ($\lvert F\rvert = \sqrt{2m}$ of the iterate's merit $m$, in m/s; this is
/// $\kappa$ in s/m, and $\eta_{max}$ is [`MOST_INEXACT`]), rather than below
/// [`crate::reduced::REFINED`]. A forcing term $\eta_k = O(\lvert F_k\rvert)$ keeps
/// Newton's quadratic local convergence (Dembo, Eisenstat and Steihaug, 1982, for smooth
/// systems; Martínez and Qi, 1995, for strongly semismooth ones): the last iterations,
/// where $\lvert F\rvert$ is below $10^{-6}$ m/s, are refined as before, and the
/// converged iterate meets the same tolerances. Far from it the first solve (residuals
/// of $10^{-10}$–$10^{-6}$ of the right-hand side) usually needs no correction.
/// Measured on 24 runs of the limp drops of eight corpus robots (docs/benchmarks.md,
/// fourth sitting of 2026-11-28): 3–6 % less time a step where landings take many
/// factorized iterations (the a1, aliengo, laikago, mini_cheetah, humanoid.urdf), the
/// mean iterations a step within 1.3 % (the a1 4.659 → 4.670, mini_cheetah 2.520 →
/// 2.548, r2d2 1.172 → 1.157); criterion, the a1's nominal drop 116.8 → 113.0 µs a
/// step, the chain of 50 running 97.4 → 94.5 µs, and r2d2 and humanoid.xml, whose
/// nominal paths moved, 4–5 % slower.
const INEXACT_FORCING: f64 = 1e-6;

/// The largest relative residual an inexact Newton direction is left with
/// ([`INEXACT_FORCING`]).
const MOST_INEXACT: f64 = 1e-3;

/// The most chord steps a step starts with ([`WorldSolver::solve`]).
const START_CHORDS: usize = 3;

/// A chord step starting a step is followed by another while each contracts the merit
/// by this factor (the residual's norm tenfold): the kept factors are then close to
/// this step's Newton matrix, and a chord step costs a solve and an evaluation where a
/// full iteration assembles and factorizes the system. Measured on the chain of 50 and
/// the corpus robots (docs/step.md, "Chord steps on kept factors").
const CHORD_CONTRACTION: f64 = 1e-2;

/// Whether a chord step — the direction from the factors of the last Newton iteration,
/// at `now`, reached from an iterate of merit `before` — is expected to converge.
///
/// Near a solution Newton's residual contracts quadratically, $|F_{k+1}| \approx
/// \tfrac12 c\thinspace|F_k|^2$ with $c \approx |F''|\thinspace|J^{-1}|^2$, so the last
/// step's contraction $s = |F_{k+1}|/|F_k| = \sqrt{m_{k+1}/m_k}$ (of the merits
/// $m = \tfrac12|F|^2$) measures $c$. A chord step from $x_{k+1}$ with the Jacobian of $x_k$ leaves
/// $F_{k+2} \approx (J_{k+1} - J_k)\Delta x_{k+1} \approx c\thinspace|F_k|\thinspace
/// |F_{k+1}| = 2s\thinspace|F_{k+1}|$; it is tried where $2s$ times each residual norm is
/// within [`CHORD_MARGIN`] of that norm's tolerance. It costs a solve with kept factors
/// and an evaluation instead of assembling and factorizing the system once more; where
/// it does not converge, the full Newton iteration follows from where it started.
fn chord_expected(now: &Eval, before: f64, settings: &SolverSettings) -> bool {
    let factor = 2.0 * (now.merit / before).sqrt();
    let within = |norm: f64, tolerance: f64| factor * norm <= CHORD_MARGIN * tolerance;
    factor < 1.0
        && within(now.dyn_norm, settings.velocity_tolerance)
        && within(now.drive_norm, settings.velocity_tolerance)
        && within(now.contact_norm, settings.contact_tolerance)
        && within(now.friction_norm, settings.contact_tolerance)
        && within(now.joint_norm, settings.position_tolerance)
}

/// Per-contact quantities fixed for the step, at the start-of-step poses.
struct ContactConst {
    /// Normal and tangent Jacobians (force directions, and the velocity-level rows).
    normal: RowJacobian,
    tangents: [RowJacobian; 2],
    /// Effective inverse masses $J\tilde M^{-1}J^\top$ of the normal and tangent rows.
    w_n: f64,
    w_t: Vector2<f64>,
    /// Velocity bias of a bouncing (velocity-level) contact; `None`: position level.
    bias: Option<f64>,
    /// The gap a position-level contact must reach at the end of the step
    /// ([`recovery_target`]): 0, or less where it starts deeper than one step's recovery.
    target_gap: f64,
}

/// What a position-level constraint with value `start` at the start of the step must
/// reach at its end when it may move by at most `bound` (recovery speed × h): 0 if it can
/// get there, else `start` moved towards 0 by `bound`,
/// $$c_{target} = c^- - \operatorname{clamp}(c^-, -b, b).$$
/// One-sided constraints (gaps) pass `min(start, 0)`: an open gap targets 0.
fn recovery_target(start: f64, bound: f64) -> f64 {
    start - start.clamp(-bound, bound)
}

/// Derived per-step constants.
struct Constants {
    momentum0: Vec<Vector6<f64>>,
    impulse: Vec<Vector6<f64>>,
    gyration: Vec<f64>,
    drive_start: Vec<f64>,
}

/// One linearised row at an iterate.
#[derive(Clone, Copy, Debug)]
struct RowEval {
    residual: f64,
    /// $\partial h_i/\partial u^+$, or, where `chained`, $\partial h_i/\partial q^+$ of
    /// a position-level row ([`WorldSolver::row_jacobian`] chains it through the pose
    /// map when a Newton system is assembled, not at every evaluation).
    jacobian: RowJacobian,
    chained: bool,
    /// Force direction $F_i$ at the force pose.
    force: RowJacobian,
    compliance: f64,
}

/// Residuals of one iterate.
struct Eval {
    /// Off-diagonal multiplier couplings (row, coupled row, value) of friction rows.
    couplings: Vec<(usize, usize, f64)>,
    contact_norm: f64,
    friction_norm: f64,
    poses: Vec<Pose>,
    /// The poses the forces act at, where they are not `poses` (the energy–momentum
    /// scheme's midpoint; `None` under backward Euler).
    force_poses: Option<Vec<Pose>>,
    /// Per dynamic body, the angular velocity $\bar\omega$ the poses were integrated
    /// with ([`PoseMaps`] are computed from it only when a Newton system is assembled).
    omega: Vec<Vector3<f64>>,
    rows: Vec<RowEval>,
    dynamics: Vec<Vector6<f64>>,
    merit: f64,
    dyn_norm: f64,
    joint_norm: f64,
    drive_norm: f64,
}

/// Body `b`'s pose in `poses`, `world` for `None`, by reference (no copy).
fn pose_or<'a>(poses: &'a [Pose], b: Option<usize>, world: &'a Pose) -> &'a Pose {
    b.map_or(world, |b| &poses[b])
}

/// Per dynamic body, $\partial\phi/\partial\omega^+$ of the end pose's rotation, and of the
/// force pose's where that differs ([`WorldSolver::pose_maps`]).
struct PoseMaps {
    rotation: Vec<Matrix3<f64>>,
    force: Option<Vec<Matrix3<f64>>>,
}

/// How [`WorldSolver::newton`] steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Steps {
    /// Full semismooth steps, refused only where they explode; ended, unconverged, after
    /// `abandon_after` of them in a row without a new lowest merit (0: never).
    Full { abandon_after: usize },
    /// Steps damped by Armijo backtracking.
    Damped,
}

/// Velocities and multipliers.
#[derive(Clone)]
struct Iterate {
    u: Vec<Twist>,
    lambda: Vec<f64>,
}

impl Iterate {
    /// This iterate moved by `alpha` times `dx = [Δu; Δλ]`.
    fn advanced(&self, dx: &[f64], alpha: f64) -> Self {
        let (du, dl) = dx.split_at(6 * self.u.len());
        Self {
            u: self
                .u
                .iter()
                .zip(du.chunks_exact(6))
                .map(|(u, d)| u + Vector6::from_column_slice(d) * alpha)
                .collect(),
            lambda: self
                .lambda
                .iter()
                .zip(dl)
                .map(|(l, d)| l + d * alpha)
                .collect(),
        }
    }
}

/// Output of a world's step.
pub(crate) struct WorldResult {
    pub poses: Vec<Pose>,
    pub velocities: Vec<Twist>,
    pub lambda: Vec<f64>,
    pub stats: StepStats,
    /// Whether chord steps at the start of the step (on factors kept from an earlier
    /// step) were tried, and if so whether the first converged or contracted the merit
    /// by [`CHORD_CONTRACTION`].
    pub chord: Option<bool>,
}

/// Scale factors of the end pose and the force pose: $q^+ = q^- \oplus h s\thinspace G\bar u$,
/// force pose $= q^- \oplus h s_f\thinspace G\bar u$, and $\partial\bar u/\partial u^+$.
fn scheme(integrator: Integrator) -> (f64, f64, f64) {
    match integrator {
        Integrator::BackwardEuler => (1.0, 1.0, 1.0),
        Integrator::EnergyMomentum => (1.0, 0.5, 0.5),
    }
}

/// Per-world solver: input, constants, reusable buffers.
pub(crate) struct WorldSolver<'a> {
    input: StepInput<'a>,
    /// Bodies of every row: the model's, three per contact (normal, two tangents), one
    /// per active limit.
    row_bodies: Vec<(Option<usize>, usize)>,
    contacts: Vec<ContactConst>,
    /// Per active limit, its force direction $\sigma J_q(q^-)$, effective inverse mass and
    /// target gap ([`recovery_target`]).
    limits: Vec<(RowJacobian, f64, f64)>,
    /// Per joint row, the error it must reach at the end of the step
    /// ([`recovery_target`] of its start violation $c(q^-) + \varepsilon\lambda^-$); set by
    /// [`solve`](Self::solve) from the warm-start multipliers.
    joint_target: Vec<f64>,
    /// Per joint row, its function and Jacobian at the start of the step (the rows of a
    /// velocity-level joint, [`axion_constraints::velocity_row`]); set with the targets.
    joint_start: Vec<PositionRow>,
    /// The rows in the groups the Newton system is reduced by ([`crate::reduced`]), and
    /// each row's group.
    groups: Vec<RowGroup>,
    row_group: Vec<usize>,
    constants: Constants,
    position_rows: Vec<axion_constraints::PositionRow>,
    force_rows: Vec<axion_constraints::PositionRow>,
    /// Factor on every friction row's trial-force $\hat\rho$ ([`CYCLE_RHO`]): 1 until
    /// the iteration is caught in a cycle.
    rho_factor: f64,
    /// `rho_factor` before a friction jump lowered it ([`JUMP`]), if one did.
    before_jump: Option<f64>,
    /// Each group's part of the Newton system, refilled by every iteration
    /// ([`WorldSolver::group_systems`]; kept to reuse its memory).
    systems: Vec<GroupSystem>,
}

impl<'a> WorldSolver<'a> {
    pub fn new(input: StepInput<'a>) -> Self {
        let model = input.model;
        let h = input.h;
        let g = model.gravity();
        let wrenches = input.control.world_wrenches(input.world);
        let nd = input.layout.dyn_bodies.len();
        let mut constants = Constants {
            momentum0: Vec::with_capacity(nd),
            impulse: Vec::with_capacity(nd),
            gyration: Vec::with_capacity(nd),
            drive_start: Vec::with_capacity(model.drives().len()),
        };
        for &b in &input.layout.dyn_bodies {
            let body = &model.bodies()[b];
            let m = body.mass.mass();
            constants
                .momentum0
                .push(body.mass.momentum(&input.q0[b].rotation, &input.u0[b]));
            constants
                .impulse
                .push((twist(g * m, Vector3::zeros()) + wrenches[b]) * h);
            constants.gyration.push(body.mass.radius_of_gyration());
        }
        let drives = input.control.world_drives(input.world);
        for (d, drive) in model.drives().iter().zip(drives) {
            let j = &model.joints()[d.joint.0];
            let c = j.coordinate_at(d.coordinate, &d.axis, input.q0);
            constants.drive_start.push(if drive.starts_from_rate() {
                let u_parent = j.parent.map_or(Twist::zeros(), |p| input.u0[p.0]);
                c.jacobian.dot(&u_parent, &input.u0[j.child.0])
            } else {
                c.value
            });
        }
        let mut row_bodies = Vec::with_capacity(
            input.layout.row_bodies.len() + 3 * input.contacts.len() + input.limits.len(),
        );
        row_bodies.extend_from_slice(&input.layout.row_bodies);
        let mass_of = |b: usize| &model.bodies()[b].mass;
        let mut contacts = Vec::with_capacity(input.contacts.len());
        for (c, &approach) in input.contacts.iter().zip(input.approach) {
            let (a, b) = (c.body_a.0, c.body_b.0);
            let (qa, qb) = (&input.q0[a], &input.q0[b]);
            let w = |j: &RowJacobian| {
                j.effective_inverse_mass(mass_of(a), &qa.rotation, mass_of(b), &qb.rotation)
            };
            // Forces act where the bodies touch at q⁻ (`touching`); the gap is that of
            // `point` at the iterate (a rolling cylinder's point reaches `touching` at q⁺).
            let normal = c.touching.normal_jacobian(qa, qb);
            let tangents = [c.frame.t1, c.frame.t2].map(|t| c.touching.jacobian_along(qa, qb, &t));
            let bias = (c.restitution > 0.0).then(|| {
                VelocityContact::new(c.restitution, BAUMGARTE)
                    .expect("validated restitution")
                    .bias(c.gap, approach, h)
            });
            let start_gap = c.touching.gap(qa, qb).min(0.0);
            contacts.push(ContactConst {
                w_n: w(&normal),
                w_t: Vector2::new(w(&tangents[0]), w(&tangents[1])),
                normal,
                tangents,
                bias,
                target_gap: recovery_target(start_gap, input.settings.recovery_speed * h),
            });
            for _ in 0..3 {
                row_bodies.push((Some(a), b));
            }
        }
        let mut limits = Vec::with_capacity(input.limits.len());
        let world_mass = axion_math::MassProperties::infinite();
        for l in input.limits {
            let mj = &model.joints()[l.joint];
            let (parent, child) = (mj.parent.map(|p| p.0), mj.child.0);
            let qp = parent.map_or(Pose::identity(), |p| input.q0[p]);
            let force = l.force;
            let w = force.effective_inverse_mass(
                parent.map_or(&world_mass, mass_of),
                &qp.rotation,
                mass_of(child),
                &input.q0[child].rotation,
            );
            let start = mj.coordinate_at(l.range.coordinate, &l.range.axis, input.q0);
            let speed = match l.range.coordinate {
                CoordinateKind::Angle => input.settings.recovery_rate,
                CoordinateKind::Displacement => input.settings.recovery_speed,
            };
            let target = recovery_target(l.gap(start.value).min(0.0), speed * h);
            limits.push((force, w, target));
            row_bodies.push((parent, child));
        }
        let joint_rows = input.layout.joint_rows;
        let (groups, row_group) = row_groups(
            input.layout,
            &row_bodies,
            input.layout.row_bodies.len(),
            contacts.len(),
        );
        Self {
            input,
            row_bodies,
            contacts,
            limits,
            groups,
            row_group,
            constants,
            joint_target: vec![0.0; joint_rows],
            joint_start: Vec::with_capacity(joint_rows),
            position_rows: Vec::with_capacity(6),
            force_rows: Vec::with_capacity(6),
            rho_factor: 1.0,
            before_jump: None,
            systems: Vec::new(),
        }
    }

    fn body_velocity(&self, it: &Iterate, b: usize) -> Twist {
        self.input.layout.dyn_index[b].map_or(Twist::zeros(), |k| it.u[k])
    }

    /// Residuals at an iterate.
    fn evaluate(&mut self, it: &Iterate) -> Eval {
        let inp = &self.input;
        let (model, layout, h) = (inp.model, inp.layout, inp.h);
        let (s, s_force, s_bar) = scheme(inp.integrator);
        let mut poses = inp.q0.to_vec();
        let mut force_poses = (s_force != s).then(|| inp.q0.to_vec());
        let mut omega = Vec::with_capacity(layout.dyn_bodies.len());
        for (k, &b) in layout.dyn_bodies.iter().enumerate() {
            let u_bar = inp.u0[b] * (1.0 - s_bar) + it.u[k] * s_bar;
            poses[b] = integrate(&inp.q0[b], &u_bar, h * s);
            if let Some(f) = &mut force_poses {
                f[b] = integrate(&inp.q0[b], &u_bar, h * s_force);
            }
            omega.push(angular(&u_bar));
        }
        let world = Pose::identity();

        let mut rows = Vec::with_capacity(self.row_bodies.len());
        for mj in model.joints() {
            let (parent, child) = (mj.parent.map(|p| p.0), mj.child.0);
            if let Some(baumgarte) = mj.joint.baumgarte {
                let u_parent = parent.map_or(Twist::zeros(), |p| self.body_velocity(it, p));
                let u_child = self.body_velocity(it, child);
                for r in mj.first_row..mj.first_row + mj.joint.row_count() {
                    let start = &self.joint_start[r];
                    let row = velocity_row(
                        start,
                        &u_parent,
                        &u_child,
                        it.lambda[r],
                        mj.joint.compliance,
                        baumgarte,
                        h,
                    );
                    rows.push(RowEval {
                        residual: row.residual,
                        jacobian: row.jacobian,
                        chained: false,
                        force: start.jacobian,
                        compliance: row.compliance,
                    });
                }
                continue;
            }
            self.position_rows.clear();
            mj.joint.position_rows(
                pose_or(&poses, parent, &world),
                &poses[child],
                &mut self.position_rows,
            );
            let forces = match &force_poses {
                None => &self.position_rows,
                Some(fp) => {
                    self.force_rows.clear();
                    mj.joint.position_rows(
                        pose_or(fp, parent, &world),
                        &fp[child],
                        &mut self.force_rows,
                    );
                    &self.force_rows
                }
            };
            for (i, (p, f)) in self.position_rows.iter().zip(forces).enumerate() {
                let lambda = it.lambda[mj.first_row + i];
                let target = PositionRow {
                    error: p.error - self.joint_target[mj.first_row + i],
                    jacobian: p.jacobian,
                };
                let row = axion_constraints::compliant_row(&target, lambda, mj.joint.compliance, h);
                rows.push(RowEval {
                    residual: row.residual,
                    jacobian: p.jacobian,
                    chained: true,
                    force: f.jacobian,
                    compliance: row.compliance,
                });
            }
        }
        let drives = inp.control.world_drives(inp.world);
        for (d, md) in model.drives().iter().enumerate() {
            let mj = &model.joints()[md.joint.0];
            let (parent, child) = (mj.parent.map(|p| p.0), mj.child.0);
            let coord = mj.coordinate_at(md.coordinate, &md.axis, &poses);
            let force = match &force_poses {
                None => coord.jacobian,
                Some(fp) => mj.coordinate_at(md.coordinate, &md.axis, fp).jacobian,
            };
            let u_parent = parent.map_or(Twist::zeros(), |p| self.body_velocity(it, p));
            let u_child = self.body_velocity(it, child);
            let lambda = it.lambda[layout.joint_rows + d];
            let row = drives[d].row(
                md.coordinate,
                &coord,
                self.constants.drive_start[d],
                &u_parent,
                &u_child,
                lambda,
                h,
            );
            // A saturated drive holds λ = ±F, a force drive λ = τ: their rows do not
            // depend on the motion.
            let moves = drives[d].moves_with_motion(
                md.coordinate,
                &coord,
                self.constants.drive_start[d],
                &u_parent,
                &u_child,
                h,
            );
            let (jacobian, chained) = match drives[d].mode() {
                DriveMode::Position { .. } if moves => (coord.jacobian, true),
                DriveMode::Velocity { .. } | DriveMode::Armature if moves => {
                    (coord.jacobian, false)
                }
                _ => (RowJacobian::zeros(), false),
            };
            rows.push(RowEval {
                residual: row.residual,
                jacobian,
                chained,
                force,
                compliance: row.compliance,
            });
        }

        let mut couplings = Vec::with_capacity(6 * self.contacts.len());
        let (mut contact_norm, mut friction_norm) = (0.0f64, 0.0f64);
        let first_contact_row = rows.len();
        for (k, (c, cc)) in inp.contacts.iter().zip(&self.contacts).enumerate() {
            let (a, b) = (c.body_a.0, c.body_b.0);
            let (ua, ub) = (self.body_velocity(it, a), self.body_velocity(it, b));
            let r = first_contact_row + 3 * k;
            let lambda_n = it.lambda[r];
            let normal = match cc.bias {
                Some(bias) => {
                    let nr = normal_row_velocity(
                        &cc.normal,
                        &ua,
                        &ub,
                        bias,
                        lambda_n,
                        cc.w_n,
                        h,
                        DEFAULT_FB_EPS_SQ,
                    );
                    RowEval {
                        residual: nr.row.residual,
                        jacobian: nr.row.jacobian,
                        chained: false,
                        force: cc.normal,
                        compliance: nr.row.compliance,
                    }
                }
                None => {
                    let gap = c.point.gap(&poses[a], &poses[b]);
                    let exact = c.point.normal_jacobian(&poses[a], &poses[b]);
                    let nr = compliant_normal_row(
                        gap - cc.target_gap,
                        &exact,
                        lambda_n,
                        cc.w_n,
                        h,
                        inp.settings.contact_smoothing,
                        inp.settings.contact_compliance,
                    );
                    RowEval {
                        residual: nr.row.residual,
                        jacobian: nr.row.jacobian,
                        chained: true,
                        force: cc.normal,
                        compliance: nr.row.compliance,
                    }
                }
            };
            contact_norm = contact_norm.max(normal.residual.abs());
            rows.push(normal);
            // Friction: the projection residual with creep and its generalized Jacobian,
            // rows scaled by 1/ρ (m/s).
            let lambda_t = Vector2::new(it.lambda[r + 1], it.lambda[r + 2]);
            let v_t = Vector2::new(cc.tangents[0].dot(&ua, &ub), cc.tangents[1].dot(&ua, &ub));
            let eval = projection::evaluate_with_creep(
                &c.cone,
                &lambda_t,
                lambda_n,
                &v_t,
                // ρ̂ ∝ 1/w: the trial force's ρ̂ times `rho_factor`.
                &(cc.w_t / self.rho_factor),
                h,
                inp.settings.friction_creep,
            );
            let lin = projection::rows(&eval, &cc.tangents);
            for i in 0..2 {
                let residual = eval.residual_velocity()[i];
                friction_norm = friction_norm.max(residual.abs());
                rows.push(RowEval {
                    residual,
                    jacobian: lin.jacobian[i] * (1.0 / eval.rho),
                    chained: false,
                    force: cc.tangents[i],
                    compliance: lin.d_lambda_t[(i, i)] / (eval.rho * h),
                });
                couplings.push((r + 1 + i, r + 2 - i, lin.d_lambda_t[(i, 1 - i)] / eval.rho));
                couplings.push((r + 1 + i, r, lin.d_lambda_n[i] / eval.rho));
            }
        }

        // Joint limits: position-level contact rows on the joint coordinate.
        let first_limit_row = rows.len();
        for (i, (l, &(force, w, target))) in inp.limits.iter().zip(&self.limits).enumerate() {
            let mj = &model.joints()[l.joint];
            let c = mj.coordinate_at(l.range.coordinate, &l.range.axis, &poses);
            let exact = c.jacobian * l.side;
            let lambda = it.lambda[first_limit_row + i];
            let nr = normal_row(
                l.gap(c.value) - target,
                &exact,
                lambda,
                w,
                h,
                DEFAULT_FB_EPS_SQ,
            );
            contact_norm = contact_norm.max(nr.row.residual.abs());
            rows.push(RowEval {
                residual: nr.row.residual,
                jacobian: nr.row.jacobian,
                chained: true,
                force,
                compliance: nr.row.compliance,
            });
        }

        let mut dynamics: Vec<Vector6<f64>> = layout
            .dyn_bodies
            .iter()
            .enumerate()
            .map(|(k, &b)| {
                model.bodies()[b]
                    .mass
                    .momentum(&poses[b].rotation, &it.u[k])
                    - self.constants.momentum0[k]
                    - self.constants.impulse[k]
            })
            .collect();
        for ((row, &(parent, child)), &lambda) in rows.iter().zip(&self.row_bodies).zip(&it.lambda)
        {
            if let Some(k) = layout.dynamic(parent) {
                dynamics[k] -= row.force.body_a * (h * lambda);
            }
            if let Some(k) = layout.dynamic(Some(child)) {
                dynamics[k] -= row.force.body_b * (h * lambda);
            }
        }

        let mut merit = 0.0;
        let mut dyn_norm: f64 = 0.0;
        for (k, &b) in layout.dyn_bodies.iter().enumerate() {
            let dv = model.bodies()[b]
                .mass
                .inverse_apply(&poses[b].rotation, &dynamics[k]);
            let (lin, ang) = (linear(&dv), angular(&dv) * self.constants.gyration[k]);
            merit += lin.norm_squared() + ang.norm_squared();
            dyn_norm = dyn_norm.max(lin.amax()).max(ang.amax());
        }
        let mut joint_norm: f64 = 0.0;
        let mut drive_norm: f64 = 0.0;
        for (r, row) in rows.iter().enumerate() {
            merit += row.residual * row.residual;
            if r < layout.joint_rows {
                joint_norm = joint_norm.max((row.residual * h).abs());
            } else if r < first_contact_row {
                drive_norm = drive_norm.max(row.residual.abs());
            }
        }
        Eval {
            couplings,
            contact_norm,
            friction_norm,
            poses,
            force_poses,
            omega,
            rows,
            dynamics,
            merit: 0.5 * merit,
            dyn_norm,
            joint_norm,
            drive_norm,
        }
    }

    /// Whether every residual block is within its tolerance (and the iterate finite: the
    /// norms' `max` would pass over a NaN).
    fn converged(&self, e: &Eval) -> bool {
        let st = self.input.settings;
        e.merit.is_finite()
            && e.dyn_norm <= st.velocity_tolerance
            && e.drive_norm <= st.velocity_tolerance
            && e.contact_norm <= st.contact_tolerance
            && e.friction_norm <= st.contact_tolerance
            && e.joint_norm <= st.position_tolerance
    }

    /// Per dynamic body, how the end pose's rotation and the force pose's move with the
    /// body's $\omega^+$: $\partial\phi/\partial\omega^+ = J_l(h s\bar\omega)\,h s\bar s$
    /// ([`left_jacobian`]), and the same with $s_F$ where the forces act elsewhere (for
    /// the geometric stiffness).
    fn pose_maps(&self, e: &Eval) -> PoseMaps {
        let h = self.input.h;
        let (s, s_force, s_bar) = scheme(self.input.integrator);
        let map = |s: f64| -> Vec<Matrix3<f64>> {
            (e.omega.iter())
                .map(|w| left_jacobian(&(w * (h * s))) * (h * s * s_bar))
                .collect()
        };
        PoseMaps {
            rotation: map(s),
            // Read only by the geometric stiffness.
            force: (e.force_poses.as_ref())
                .filter(|_| self.input.settings.geometric_stiffness)
                .map(|_| map(s_force)),
        }
    }

    /// The body block of the Newton matrix: $\tilde M(\theta^+) + D\thinspace\partial\phi/\partial u$
    /// per body and the geometric stiffness $-h K_{ij}\thinspace\partial\delta q_j/\partial u_j$.
    fn body_matrix(&self, it: &Iterate, e: &Eval, maps: &PoseMaps) -> BodyMatrix {
        let inp = &self.input;
        let (model, layout, h, st) = (inp.model, inp.layout, inp.h, inp.settings);
        let (_, s_force, s_bar) = scheme(inp.integrator);
        let nd = layout.dyn_bodies.len();
        let mut diag: Vec<Matrix6<f64>> = Vec::with_capacity(nd);
        for (k, &b) in layout.dyn_bodies.iter().enumerate() {
            let mass = &model.bodies()[b].mass;
            let iw = mass.world_inertia(&e.poses[b].rotation);
            let w = angular(&it.u[k]);
            let d = iw * w.cross_matrix() - (iw * w).cross_matrix();
            let mut m = Matrix6::zeros();
            m.fixed_view_mut::<3, 3>(0, 0).fill_diagonal(mass.mass());
            m.fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&(iw + d * maps.rotation[k]));
            diag.push(m);
        }
        // At most the two couplings (parent–child, child–parent) of every joint.
        let mut cross: Vec<(usize, usize, Matrix6<f64>)> =
            Vec::with_capacity(if st.geometric_stiffness {
                2 * model.joints().len()
            } else {
                0
            });
        if st.geometric_stiffness {
            let force_poses = e.force_poses.as_ref().unwrap_or(&e.poses);
            let force_maps = maps.force.as_ref().unwrap_or(&maps.rotation);
            let world = Pose::identity();
            // K_ij ∂δq_j/∂u_j, with the pose map block-diagonal: h s_F s̄ on the linear
            // part, ∂φ/∂ω on the angular part (two 3 × 3 products, not a 6 × 6 one).
            let chain = |block: &Matrix6<f64>, k: usize| {
                let mut p = *block * (h * s_force * s_bar);
                let map = &force_maps[k];
                for r in [0, 3] {
                    p.fixed_view_mut::<3, 3>(r, 3)
                        .copy_from(&(block.fixed_view::<3, 3>(r, 3) * map));
                }
                p
            };
            for mj in model.joints() {
                let (parent, child) = (mj.parent.map(|p| p.0), mj.child.0);
                let n = mj.joint.row_count();
                let lambda = &it.lambda[mj.first_row..mj.first_row + n];
                let (pp, pc) = (pose_or(force_poses, parent, &world), &force_poses[child]);
                // A velocity-level joint's forces act along J(q⁻): no stiffness.
                let mut k = if n > 0 && mj.joint.baumgarte.is_none() {
                    mj.joint.stiffness(pp, pc, lambda)
                } else {
                    axion_constraints::Stiffness::zeros()
                };
                for d in [mj.drive, mj.damper, mj.armature].into_iter().flatten() {
                    let md = &model.drives()[d.0];
                    let l = it.lambda[layout.joint_rows + d.0];
                    k += coordinate_stiffness(md.coordinate, &mj.joint.frames, &md.axis, pp, pc, l);
                }
                let bodies = [layout.dynamic(parent), layout.dynamic(Some(child))];
                for i in 0..2 {
                    for j in 0..2 {
                        if let (Some(bi), Some(bj)) = (bodies[i], bodies[j]) {
                            let block = chain(&k.blocks[i][j], bj) * -h;
                            if bi == bj {
                                diag[bi] += block;
                            } else {
                                cross.push((bi, bj, block));
                            }
                        }
                    }
                }
            }
        }
        BodyMatrix {
            diagonal: diag,
            cross,
        }
    }

    /// One side of `row`'s $\partial h_i/\partial u^+$, on dynamic body `k`: `block` as
    /// it is, or for a position-level row ($h_i = c_i(q^+)/h + \dots$) chained through
    /// the pose map: linear part $s\bar s$, angular part $(\partial\phi/\partial\omega)^\top
    /// J_{ang}/h$ (the map's $h$ and the row's $1/h$ cancel in the linear part).
    fn row_jacobian(
        &self,
        maps: &PoseMaps,
        row: &RowEval,
        block: &Vector6<f64>,
        k: usize,
    ) -> Vector6<f64> {
        if !row.chained {
            return *block;
        }
        let (s, _, s_bar) = scheme(self.input.integrator);
        twist(
            linear(block) * (s * s_bar),
            maps.rotation[k].transpose() * angular(block) / self.input.h,
        )
    }

    /// Fills `systems` with each row group's $G_g$, $hF_g$ and $D_g$ ([`crate::reduced`]): a row's
    /// $\partial h_i/\partial u^+$, its force direction times $h$, and on the diagonal
    /// $hC_i + \delta h w_i$ ($w_i = J_i\tilde M^{-1}J_i^\top$) plus the friction rows'
    /// couplings.
    fn group_systems(&self, e: &Eval, maps: &PoseMaps, systems: &mut Vec<GroupSystem>) {
        let inp = &self.input;
        let (model, layout, h) = (inp.model, inp.layout, inp.h);
        // Per dynamic body, 1/m and R I⁻¹ Rᵀ at q⁺, for every row's w_i.
        let inverse: Vec<(f64, Matrix3<f64>)> = layout
            .dyn_bodies
            .iter()
            .map(|&b| {
                let mass = &model.bodies()[b].mass;
                (
                    mass.inv_mass(),
                    mass.world_inv_inertia(&e.poses[b].rotation),
                )
            })
            .collect();
        systems.clear();
        systems.resize_with(self.groups.len(), GroupSystem::new);
        for (g, s) in self.groups.iter().zip(systems.iter_mut()) {
            let (parent, child) = self.row_bodies[g.first];
            for i in 0..g.len {
                let row = &e.rows[g.first + i];
                let mut w = 0.0;
                for (slot, (body, jac, force)) in [
                    (parent, &row.jacobian.body_a, &row.force.body_a),
                    (Some(child), &row.jacobian.body_b, &row.force.body_b),
                ]
                .into_iter()
                .enumerate()
                {
                    if let Some(k) = layout.dynamic(body) {
                        let jac = &self.row_jacobian(maps, row, jac, k);
                        s.set_row(i, slot, jac, &(force * h));
                        let (inv_mass, inv_inertia) = &inverse[k];
                        let a = angular(jac);
                        w += inv_mass * linear(jac).norm_squared() + a.dot(&(inv_inertia * a));
                    }
                }
                s.diagonal[(i, i)] = h * row.compliance + inp.settings.regularization * h * w;
            }
        }
        for &(r, c, value) in &e.couplings {
            let g = self.row_group[r];
            debug_assert_eq!(g, self.row_group[c], "couplings stay within a group");
            let first = self.groups[g].first;
            systems[g].diagonal[(r - first, c - first)] += value;
        }
    }

    /// The Newton direction `[Δu; Δλ]`, or `None` if the linear solve failed.
    fn direction(
        &mut self,
        it: &Iterate,
        e: &Eval,
        slot: &mut Option<ReducedLu>,
    ) -> Option<Vec<f64>> {
        let maps = self.pose_maps(e);
        let a = self.body_matrix(it, e, &maps);
        let nd = self.input.layout.dyn_bodies.len();
        let lu = slot.get_or_insert_with(|| {
            let cross: Vec<(usize, usize)> = a.cross.iter().map(|&(i, j, _)| (i, j)).collect();
            let bodies = self.input.model.bodies();
            let massless: Vec<bool> = (self.input.layout.dyn_bodies.iter())
                .map(|&b| bodies[b].mass.is_massless())
                .collect();
            ReducedLu::new(
                nd,
                &self.groups,
                &cross,
                &massless,
                self.input.settings.tree_solve,
            )
        });
        let mut systems = std::mem::take(&mut self.systems);
        self.group_systems(e, &maps, &mut systems);
        let (b_u, b_g) = self.right_hand_side(e);
        let tolerance = (INEXACT_FORCING * (2.0 * e.merit).sqrt()).min(MOST_INEXACT);
        let solved = lu.solve_to(&a, &self.groups, &systems, &b_u, &b_g, tolerance);
        self.systems = systems;
        let (du, dl) = solved.ok()?;
        Some(self.joined(du, &dl))
    }

    /// A chord step: the direction from the factors the world last computed, kept in
    /// `lu` (by its last full Newton iteration: in this step, or some steps before for a
    /// step with the same rows), and the iterate it reaches with its residuals; `None`
    /// where `lu` keeps no factors. A body at rest or creeping changes so little from
    /// one step to the next, and an iterate converging quadratically so little from the
    /// last ([`chord_expected`]), that this direction is Newton's to many digits, for
    /// one solve with kept factors instead of assembling and factorizing the system
    /// ([`SolverSettings::reuse_factors`]); a moving body's is close enough to contract
    /// the merit a hundredfold ([`CHORD_CONTRACTION`]).
    fn chord_step(
        &mut self,
        it: &Iterate,
        e: &Eval,
        lu: &mut ReducedLu,
    ) -> Option<(Iterate, Eval)> {
        let (b_u, b_g) = self.right_hand_side(e);
        let (du, dl) = lu.solve_again(&self.groups, &b_u, &b_g)?;
        let dx = self.joined(du, &dl);
        let trial = it.advanced(&dx, 1.0);
        let te = self.evaluate(&trial);
        Some((trial, te))
    }

    /// The Newton system's right-hand side $-F$: the bodies' and each group's.
    fn right_hand_side(&self, e: &Eval) -> (Vec<f64>, Vec<Vector6<f64>>) {
        let mut b_u = Vec::with_capacity(6 * e.dynamics.len());
        b_u.extend(e.dynamics.iter().flat_map(|d| d.iter().map(|x| -x)));
        let b_g = self
            .groups
            .iter()
            .map(|g| {
                let mut b = Vector6::zeros();
                for i in 0..g.len {
                    b[i] = -e.rows[g.first + i].residual;
                }
                b
            })
            .collect();
        (b_u, b_g)
    }

    /// `[Δu; Δλ]` from the bodies' part and each group's.
    fn joined(&self, du: Vec<f64>, dl: &[Vector6<f64>]) -> Vec<f64> {
        let mut dx = du;
        dx.reserve(self.row_bodies.len());
        for (g, d) in self.groups.iter().zip(dl) {
            dx.extend(d.iter().take(g.len));
        }
        dx
    }

    /// Each joint row's target error: [`recovery_target`] of its violation at the start
    /// of the step, $c(q^-) + \varepsilon\lambda^-$ with the warm-start multiplier (a
    /// compliant joint deflected by its load is not violated).
    fn set_joint_targets(&mut self, warm_lambda: &[f64]) {
        let inp = &self.input;
        let (q0, st, h) = (inp.q0, inp.settings, inp.h);
        self.joint_start.clear();
        for mj in inp.model.joints() {
            let parent = mj.parent.map_or(Pose::identity(), |p| q0[p.0]);
            self.position_rows.clear();
            mj.joint
                .position_rows(&parent, &q0[mj.child.0], &mut self.position_rows);
            self.joint_start.extend_from_slice(&self.position_rows);
            for (i, p) in self.position_rows.iter().enumerate() {
                let r = mj.first_row + i;
                let speed = if mj.joint.row_is_positional(i) {
                    st.recovery_speed
                } else {
                    st.recovery_rate
                };
                let start = p.error + mj.joint.compliance * warm_lambda[r];
                self.joint_target[r] = recovery_target(start, speed * h);
            }
        }
    }

    /// Puts each sliding contact's friction force at a Newton trial back onto its cone
    /// where the step left it outside ([`projection::onto_cone_after_step`]): contacts
    /// whose force was on the boundary of their cone at `from` (docs/step.md, "Back
    /// onto the cone"). Measured on limp drops of the corpus robots (docs/benchmarks.md,
    /// seventh sitting of 2026-11-28): over 4 × 96 drops of the a1 at h = 0.01, 11.6 %
    /// fewer iterations a step, humanoid.urdf 27–32 % fewer over 2 × 96.
    fn onto_cones_after_step(&self, from: &Iterate, trial: &mut Iterate) {
        // The model's rows (joints, then drives) come first, then each contact's three.
        let first = self.input.layout.row_bodies.len();
        for (k, c) in self.input.contacts.iter().enumerate() {
            let r = first + 3 * k;
            let force = |it: &Iterate| {
                (
                    it.lambda[r],
                    Vector2::new(it.lambda[r + 1], it.lambda[r + 2]),
                )
            };
            let (before, after) = (force(from), force(trial));
            let back = projection::onto_cone_after_step(
                &c.cone,
                (before.0, &before.1),
                (after.0, &after.1),
            );
            if let Some(t) = back {
                trial.lambda[r + 1] = t.x;
                trial.lambda[r + 2] = t.y;
            }
        }
    }

    /// $u = u^-$; the model's rows start from `warm_lambda`, contact rows from zero.
    fn initial_iterate(&self, warm_lambda: &[f64]) -> Iterate {
        let mut lambda = warm_lambda.to_vec();
        lambda.resize(self.row_bodies.len(), 0.0);
        Iterate {
            u: self
                .input
                .layout
                .dyn_bodies
                .iter()
                .map(|&b| self.input.u0[b])
                .collect(),
            lambda,
        }
    }

    /// Runs Newton from `u⁻` and the warm-start multipliers, after chord steps with the
    /// kept factors if `reuse` (the step continues the previous one with the same rows,
    /// [`SolverSettings::reuse_factors`]): each taken if it converges or lowers the
    /// merit, another tried while each contracts it by [`CHORD_CONTRACTION`], at most
    /// [`START_CHORDS`]; keeps the best iterate.
    /// `lu` holds the factorization of this row pattern, built on first need (a step
    /// that converges from its warm start never analyses its pattern).
    pub fn solve(
        &mut self,
        warm_lambda: &[f64],
        reuse: bool,
        lu: &mut Option<ReducedLu>,
        projection: Option<&mut SparseLu>,
    ) -> WorldResult {
        let st = *self.input.settings;
        self.set_joint_targets(warm_lambda);
        let mut it = self.initial_iterate(warm_lambda);
        let mut e = self.evaluate(&it);
        let mut stats = StepStats {
            iterations: 0,
            chord_steps: 0,
            converged: false,
            dynamics: 0.0,
            joints: 0.0,
            drives: 0.0,
            backtracks: 0,
            failed_solves: 0,
            contacts: 0.0,
            friction: 0.0,
            contact_count: self.contacts.len(),
            substeps: 1,
            fallback_creep: false,
        };
        let mut chord = None;
        let kept = lu.as_mut().filter(|lu| lu.keeps_factors());
        if let Some(lu) = kept.filter(|_| reuse && !self.converged(&e)) {
            let mut contracting = false;
            for n in 0..START_CHORDS.min(st.max_iterations) {
                let Some((trial, te)) = self.chord_step(&it, &e, lu) else {
                    break;
                };
                let converged = self.converged(&te);
                if !converged && (te.merit >= e.merit || !te.merit.is_finite()) {
                    break;
                }
                let contracted = te.merit <= CHORD_CONTRACTION * e.merit;
                if n == 0 {
                    contracting = converged || contracted;
                }
                stats.iterations += 1;
                stats.chord_steps += 1;
                (it, e) = (trial, te);
                if converged || !contracted {
                    break;
                }
            }
            chord = Some(contracting);
        }
        // Full semismooth steps first (with contacts); if they stall or wander without
        // converging, Armijo-damped Newton from the best iterate with the iterations left
        // (docs/step.md, "A way back from a failed landing") — unless the attempt was
        // abandoned for its retry (`StepInput::abandon_after`).
        let steps = if self.contacts.is_empty() {
            Steps::Damped
        } else {
            Steps::Full {
                abandon_after: self.input.abandon_after,
            }
        };
        let left = st.max_iterations.saturating_sub(stats.iterations);
        let (mut it, mut final_eval, abandoned) = self.newton(it, e, lu, &mut stats, left, steps);
        let damped = steps != Steps::Damped && !abandoned && !self.converged(&final_eval);
        if damped && stats.iterations < st.max_iterations {
            let left = st.max_iterations - stats.iterations;
            (it, final_eval, _) = self.newton(it, final_eval, lu, &mut stats, left, Steps::Damped);
        }
        // Converged after a friction jump, with the fallback creep's slip: polished back
        // to the step's own creep where a few full iterations from there converge.
        if let Some(rho) = self.before_jump.filter(|_| self.converged(&final_eval)) {
            let jumped_rho = std::mem::replace(&mut self.rho_factor, rho);
            let e = self.evaluate(&it);
            let left = st.max_iterations.saturating_sub(stats.iterations);
            let polish = Steps::Full { abandon_after: 0 };
            let (polished, pe, _) =
                self.newton(it.clone(), e, lu, &mut stats, left.min(POLISH), polish);
            if self.converged(&pe) {
                (it, final_eval) = (polished, pe);
            } else {
                self.rho_factor = jumped_rho;
            }
        }
        stats.converged = self.converged(&final_eval);
        stats.dynamics = final_eval.dyn_norm;
        stats.joints = final_eval.joint_norm;
        stats.drives = final_eval.drive_norm;
        stats.contacts = final_eval.contact_norm;
        stats.friction = final_eval.friction_norm;
        if let Some(plu) = projection {
            self.project_velocities(&mut it, &final_eval, plu);
        }
        let mut velocities = self.input.u0.to_vec();
        for (k, &b) in self.input.layout.dyn_bodies.iter().enumerate() {
            velocities[b] = it.u[k];
        }
        WorldResult {
            poses: final_eval.poses,
            velocities,
            lambda: it.lambda,
            stats,
            chord,
        }
    }

    /// Newton iterations from `(it, e)` until converged or `max_iterations` more (counted
    /// in `stats`), with full steps (refused only when they explode) or with Armijo
    /// backtracking, the last one a chord step where [`chord_expected`] says it
    /// converges; returns the last iterate if converged, else the best by merit, and
    /// whether the full steps were abandoned ([`Steps::Full`]).
    fn newton(
        &mut self,
        mut it: Iterate,
        mut e: Eval,
        lu: &mut Option<ReducedLu>,
        stats: &mut StepStats,
        max_iterations: usize,
        steps: Steps,
    ) -> (Iterate, Eval, bool) {
        let st = *self.input.settings;
        let (full_steps, abandon_after) = match steps {
            Steps::Full { abandon_after } => (true, abandon_after),
            Steps::Damped => (false, 0),
        };
        // Full steps in a row that have not lowered the best merit.
        let mut since_best = 0;
        let mut abandoned = false;
        let limit = stats.iterations + max_iterations;
        // With contacts the semismooth step is taken in full (docs/step.md: a line search
        // on ½|F|² stalls it on coplanar sliding contacts); only non-finite or exploding
        // trials are refused (that iteration backtracks instead). Joint-only systems use
        // the Armijo backtracking.
        let merit_limit = EXPLOSION * e.merit.max(EXPLOSION_FLOOR);
        let mut best = (it.clone(), e.merit);
        // The last merits of full steps, newest last, to see a cycle.
        let mut recent = [f64::NAN; CYCLE_MERITS];
        // The merit before the last full Newton iteration (for chord_expected).
        let mut before: Option<f64> = None;
        while !self.converged(&e) && stats.iterations < limit {
            if full_steps && cycle(&recent) {
                self.rho_factor *= CYCLE_RHO;
                e = self.evaluate(&it);
                recent = [f64::NAN; CYCLE_MERITS];
                before = None;
            }
            let kept = lu.as_mut().filter(|lu| lu.keeps_factors());
            let chord = kept
                .filter(|_| st.reuse_factors && before.is_some_and(|m| chord_expected(&e, m, &st)));
            let step = chord.and_then(|lu| self.chord_step(&it, &e, lu));
            if let Some((trial, te)) = step.filter(|(_, te)| self.converged(te)) {
                stats.iterations += 1;
                stats.chord_steps += 1;
                (it, e) = (trial, te);
                break;
            }
            before = Some(e.merit);
            let Some(dx) = self.direction(&it, &e, lu) else {
                stats.failed_solves += 1;
                break;
            };
            stats.iterations += 1;
            let trial_at = |alpha: f64| it.advanced(&dx, alpha);
            // Backtracking (Armijo on ½|F|², whose slope along the Newton step is −|F|²).
            let mut alpha = 1.0;
            let mut chosen: Option<(Iterate, Eval)> = None;
            // The backtracking's first trial (the full step) where it is already evaluated.
            let mut refused = None;
            if full_steps {
                let mut trial = trial_at(1.0);
                self.onto_cones_after_step(&it, &mut trial);
                let te = self.evaluate(&trial);
                let lower_rho = jump_rho(&st).filter(|&f| f < self.rho_factor);
                let first_jump = self.before_jump.is_none() && friction_jump(&e, &te);
                if let Some(f) = lower_rho.filter(|_| first_jump) {
                    // Not taken: the direction again, from here, with the smaller ρ̂.
                    self.before_jump = Some(self.rho_factor);
                    self.rho_factor = f;
                    e = self.evaluate(&it);
                    recent = [f64::NAN; CYCLE_MERITS];
                    before = None;
                    continue;
                }
                if te.merit.is_finite() && te.merit < merit_limit {
                    it = trial;
                    e = te;
                    recent.rotate_left(1);
                    recent[CYCLE_MERITS - 1] = e.merit;
                    if e.merit < best.1 {
                        best = (it.clone(), e.merit);
                        since_best = 0;
                    } else {
                        since_best += 1;
                        if since_best == abandon_after {
                            abandoned = true;
                            break;
                        }
                    }
                    continue;
                }
                // An exploding full step: backtrack this iteration instead.
                refused = Some((trial, te));
            }
            for attempt in 0..=st.max_backtracks {
                let (trial, te) = match refused.take() {
                    Some(full) => full,
                    None => {
                        let trial = trial_at(alpha);
                        let te = self.evaluate(&trial);
                        (trial, te)
                    }
                };
                let better = chosen.as_ref().is_none_or(|(_, ce)| te.merit < ce.merit);
                let accept = te.merit <= (1.0 - 1e-4 * alpha) * e.merit;
                if better && te.merit.is_finite() {
                    chosen = Some((trial, te));
                }
                if accept {
                    break;
                }
                if attempt < st.max_backtracks {
                    stats.backtracks += 1;
                }
                alpha *= 0.5;
            }
            match chosen {
                Some((trial, te)) if te.merit < e.merit => {
                    it = trial;
                    e = te;
                }
                // No step length reduces the residual: the iteration has stalled.
                _ => break,
            }
            if e.merit < best.1 {
                best = (it.clone(), e.merit);
            }
        }
        // Return the best iterate (by merit) seen.
        // A converged iterate is returned as it is; otherwise the one with the smallest
        // merit (a converged iterate can have a larger merit than an unconverged one:
        // the merit sums all blocks, convergence bounds each).
        if !self.converged(&e) && best.1 < e.merit {
            let e = self.evaluate(&best.0);
            (best.0, e, abandoned)
        } else {
            (it, e, abandoned)
        }
    }

    /// Emits the velocity-projection matrix
    /// $\begin{bmatrix}\tilde M & J^\top & J_a^\top \\\\ J & -\delta & 0 \\\\ J_a & 0 & -A^{-1}\end{bmatrix}$
    /// over the joint rows $J$ and the armature rows $J_a$ (energy–momentum scheme):
    /// eliminating the armature rows leaves the metric $\tilde M + J_a^\top A J_a$, the
    /// kinetic energy with the armatures $A$ of [`Self::projection_rows`].
    fn assemble_projection(&self, e: &Eval, rows: &[ProjectionRow], sink: &mut impl Sink) {
        let inp = &self.input;
        let layout = inp.layout;
        for (k, &b) in layout.dyn_bodies.iter().enumerate() {
            let mass = &inp.model.bodies()[b].mass;
            let mut m = Matrix6::zeros();
            m.fixed_view_mut::<3, 3>(0, 0).fill_diagonal(mass.mass());
            m.fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&mass.world_inertia(&e.poses[b].rotation));
            emit_block(sink, 6 * k, 6 * k, &m);
        }
        for (r, row) in rows.iter().enumerate() {
            let col = 6 * layout.dyn_bodies.len() + r;
            let mut w = 0.0;
            for (body, block) in [
                (row.bodies.0, &row.jacobian.body_a),
                (Some(row.bodies.1), &row.jacobian.body_b),
            ] {
                if let Some(k) = layout.dynamic(body) {
                    for c in 0..6 {
                        sink.push(6 * k + c, col, block[c]);
                        sink.push(col, 6 * k + c, block[c]);
                    }
                    let b = layout.dyn_bodies[k];
                    w += block.dot(
                        &inp.model.bodies()[b]
                            .mass
                            .inverse_apply(&e.poses[b].rotation, block),
                    );
                }
            }
            let diagonal = match row.armature {
                Some(a) => -1.0 / a,
                None => -inp.settings.regularization * w,
            };
            sink.push(col, col, diagonal);
        }
    }

    /// The rows of the velocity projection at the end pose: the joints' velocity
    /// Jacobians, then the coordinate Jacobian of every armature
    /// ([`axion_model::ModelJoint::armature`]).
    fn projection_rows(&mut self, e: &Eval) -> Vec<ProjectionRow> {
        let inp = &self.input;
        let mut out = Vec::with_capacity(inp.layout.joint_rows);
        for mj in inp.model.joints() {
            let parent = mj.parent.map_or(Pose::identity(), |p| e.poses[p.0]);
            self.position_rows.clear();
            mj.joint
                .position_rows(&parent, &e.poses[mj.child.0], &mut self.position_rows);
            out.extend(self.position_rows.iter().map(|r| ProjectionRow {
                jacobian: r.jacobian,
                bodies: (mj.parent.map(|p| p.0), mj.child.0),
                armature: None,
            }));
        }
        for mj in inp.model.joints() {
            let Some(d) = mj.armature else {
                continue;
            };
            let md = &inp.model.drives()[d.0];
            let c = mj.coordinate_at(md.coordinate, &md.axis, &e.poses);
            out.push(ProjectionRow {
                jacobian: c.jacobian,
                bodies: (mj.parent.map(|p| p.0), mj.child.0),
                armature: Some(md.initial.ke()),
            });
        }
        out
    }

    /// The pattern of the projection matrix.
    pub fn projection_pattern(&mut self) -> Vec<Pair<usize, usize>> {
        let it = self.initial_iterate(&vec![0.0; self.input.layout.row_bodies.len()]);
        let e = self.evaluate(&it);
        let rows = self.projection_rows(&e);
        let mut p = PatternSink::default();
        self.assemble_projection(&e, &rows, &mut p);
        p.0
    }

    /// $u \leftarrow u + \Delta u$ with $\tilde M\Delta u + J^\top\mu + J_a^\top\mu_a = 0$,
    /// $J(u + \Delta u) = 0$, $\mu_a = A J_a\Delta u$: the closest velocity (in kinetic
    /// energy, the armatures' included) that satisfies the joints' velocity constraints.
    /// It can only remove kinetic energy.
    fn project_velocities(&mut self, it: &mut Iterate, e: &Eval, lu: &mut SparseLu) {
        let layout = self.input.layout;
        if layout.joint_rows == 0 {
            return;
        }
        let rows = self.projection_rows(e);
        let mut values = ValueSink::default();
        self.assemble_projection(e, &rows, &mut values);
        let nd = layout.dyn_bodies.len();
        let mut rhs = vec![0.0; 6 * nd + rows.len()];
        for (r, row) in rows
            .iter()
            .enumerate()
            .filter(|(_, row)| row.armature.is_none())
        {
            let u_parent = row
                .bodies
                .0
                .map_or(Twist::zeros(), |p| self.body_velocity(it, p));
            rhs[6 * nd + r] = -row
                .jacobian
                .dot(&u_parent, &self.body_velocity(it, row.bodies.1));
        }
        if lu.solve(&values.0, &mut rhs).is_ok() {
            for (k, u) in it.u.iter_mut().enumerate() {
                *u += Vector6::from_column_slice(&rhs[6 * k..6 * k + 6]);
            }
        }
    }
}

/// A row of the velocity projection: its Jacobian, its bodies (parent, child), and the
/// armature $a$ of an armature row (`None`: a joint row).
struct ProjectionRow {
    jacobian: RowJacobian,
    bodies: (Option<usize>, usize),
    armature: Option<f64>,
}

fn emit_block(sink: &mut impl Sink, row0: usize, col0: usize, m: &Matrix6<f64>) {
    for c in 0..6 {
        for r in 0..6 {
            sink.push(row0 + r, col0 + c, m[(r, c)]);
        }
    }
}

/// The row groups of a step: the rows of each contact stay together (their friction
/// rows are coupled to the normal row), every other row is a unit of its own, and
/// consecutive units on the same two bodies share a group of at most
/// [`GROUP_ROWS`](crate::reduced::GROUP_ROWS) rows (a joint's rows; several contacts of one pair).
/// `first_contact` is the first contact row, `contacts` their number. Returns the
/// groups and each row's group.
fn row_groups(
    layout: &Layout,
    row_bodies: &[(Option<usize>, usize)],
    first_contact: usize,
    contacts: usize,
) -> (Vec<RowGroup>, Vec<usize>) {
    let mut groups: Vec<RowGroup> = Vec::new();
    let mut row_group = Vec::with_capacity(row_bodies.len());
    let mut r = 0;
    while r < row_bodies.len() {
        let in_contact = (first_contact..first_contact + 3 * contacts).contains(&r);
        let len = if in_contact { 3 } else { 1 };
        let (parent, child) = row_bodies[r];
        let bodies = [layout.dynamic(parent), layout.dynamic(Some(child))];
        let g = RowGroup::add_unit(&mut groups, r, len, bodies, |g| {
            row_bodies[g.first] == row_bodies[r]
        });
        row_group.extend(std::iter::repeat_n(g, len));
        r += len;
    }
    (groups, row_group)
}

#[cfg(test)]
mod tests {
    use super::{CYCLE_MERITS, cycle, jump_rho};
    use crate::SolverSettings;
    use axion_constraints::friction::FrictionCone;
    use axion_constraints::friction::projection::{self, SlipState};
    use nalgebra::Vector2;

    /// After a friction jump a sticking row creeps as with the fallback creep: its
    /// residual in m/s with $\hat\rho$ times `jump_rho` and the creep is the one with
    /// $\hat\rho$ and the fallback creep, on round and elliptic cones; no such factor
    /// without creep or without a larger fallback.
    #[test]
    fn a_jump_leaves_sticking_rows_the_fallback_creep() {
        let settings = SolverSettings::default();
        let f = jump_rho(&settings).expect("the defaults retry with more creep");
        let (lambda_t, lambda_n) = (Vector2::new(1.0, -2.0), 10.0);
        let (v_t, w_t, h) = (Vector2::new(3e-7, -1e-7), Vector2::new(0.5, 0.7), 0.01);
        for cone in [
            FrictionCone::isotropic(0.8).unwrap(),
            FrictionCone::elliptic(0.9, 0.4).unwrap(),
        ] {
            let lowered = projection::evaluate_with_creep(
                &cone,
                &lambda_t,
                lambda_n,
                &v_t,
                &(w_t / f),
                h,
                settings.friction_creep,
            );
            let fallback = projection::evaluate_with_creep(
                &cone,
                &lambda_t,
                lambda_n,
                &v_t,
                &w_t,
                h,
                settings.fallback_creep,
            );
            assert_eq!(lowered.state, SlipState::Stick);
            assert_eq!(fallback.state, SlipState::Stick);
            let (a, b) = (lowered.residual_velocity(), fallback.residual_velocity());
            // h_f = λ_t − y cancels about six digits of |λ_t| (the residuals are 10⁻⁶ of it).
            assert!((a - b).norm() <= 1e-9 * b.norm(), "{a} against {b}");
            // Without the creep's share the residuals would be the slip alone.
            assert!((b - v_t).norm() > 1e-3 * b.norm());
        }
        let exact = SolverSettings {
            friction_creep: 0.0,
            ..settings
        };
        assert_eq!(jump_rho(&exact), None);
        let no_retry = SolverSettings {
            fallback_creep: settings.friction_creep,
            ..settings
        };
        assert_eq!(jump_rho(&no_retry), None);
    }

    /// `merits` as the newest of a history, NaN before them.
    fn history(merits: &[f64]) -> [f64; CYCLE_MERITS] {
        let mut m = [f64::NAN; CYCLE_MERITS];
        m[CYCLE_MERITS - merits.len()..].copy_from_slice(merits);
        m
    }

    /// A cycle is merits repeating after 2 to 6 iterates; a plateau, a descent, a
    /// single repeat or the first iterations (not two rounds yet) are not.
    #[test]
    fn cycles_are_told_from_plateaus_and_descents() {
        assert!(cycle(&history(&[1.86, 3.06e-2, 1.86, 3.05e-2])));
        assert!(cycle(&history(&[0.2064, 1.04, 0.2066, 1.04])));
        // laikago's landing at h = 0.0092 s: four iterates.
        let four = [6.171e-2, 7.405e5, 1.457, 6.975e-1];
        assert!(cycle(&history(&[four, four].concat())));
        assert!(!cycle(&history(&[four.as_slice(), &four[..3]].concat())));
        let six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert!(cycle(&history(&[six, six].concat())));
        // Seven iterates are longer than the longest cycle looked for.
        let seven = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        assert!(!cycle(&history(&[seven.as_slice(), &seven[..5]].concat())));
        assert!(!cycle(&history(&[1.0; CYCLE_MERITS])));
        let descent: Vec<f64> = (0..CYCLE_MERITS).map(|k| 0.5f64.powi(k as i32)).collect();
        assert!(!cycle(&history(&descent)));
        let slow: Vec<f64> = (0..CYCLE_MERITS).map(|k| 1.0 - 1e-3 * k as f64).collect();
        assert!(!cycle(&history(&slow)));
        assert!(!cycle(&history(&[1.0, 2.0])));
        assert!(!cycle(&history(&[1.0, 2.0, 1.5, 2.0])));
    }
}
