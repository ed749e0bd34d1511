//! Solver settings.

/// How positions follow velocities within a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Integrator {
    /// $q^+ = q^- \oplus h\thinspace G\thinspace u^+$, forces at $q^+$: stable at any step, dissipative
    /// (a pendulum loses energy). The default.
    #[default]
    BackwardEuler,
    /// Trapezoidal energy–momentum scheme: $q^+ = q^- \oplus h\thinspace G\thinspace \bar u$,
    /// $\bar u = \tfrac12(u^- + u^+)$, constraint forces at the midpoint pose, then a
    /// projection of $u^+$ onto the joints' velocity constraints. Keeps the energy of
    /// joint-only systems (contacts would bounce elastically: not for them).
    EnergyMomentum,
}

/// Newton settings of the CPU backend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverSettings {
    /// Time discretisation.
    pub integrator: Integrator,
    /// Most Newton iterations (linear solves) per attempt at a step (a step split in
    /// sub-steps, [`split_depth`](Self::split_depth), makes more than one attempt).
    pub max_iterations: usize,
    /// Converged when the dynamics and drive residuals are below this (m/s).
    pub velocity_tolerance: f64,
    /// … the contact and friction residuals below this (m/s; a slip-velocity error of
    /// 1e-8 m/s is 0.1 µm over 10 s, while the semismooth iteration can hover at
    /// 1e-10 between stick and slip on redundant contacts) …
    pub contact_tolerance: f64,
    /// … and every joint error $|c + \varepsilon\lambda|$ is below this (m or rad).
    pub position_tolerance: f64,
    /// Most step halvings of the line search per iteration.
    pub max_backtracks: usize,
    /// Relative diagonal added to constraint rows of the Newton matrix only
    /// ($10^{-10} h w_i$, $w_i = J_i\tilde M^{-1}J_i^\top$): keeps redundant rows solvable,
    /// does not change the solution.
    pub regularization: f64,
    /// Include the geometric stiffness $\partial(J^\top\lambda)/\partial q$ in the Newton
    /// matrix (leave on: without it a heavy body on light links diverges).
    pub geometric_stiffness: bool,
    /// Contacts are looked for this far apart (m), plus two steps of the fastest body's
    /// travel, so that a falling body meets the ground in the step it reaches it.
    pub contact_margin: f64,
    /// Of the contacts found within [`contact_margin`](Self::contact_margin), those within
    /// this distance (m), plus the same two steps of travel, become rows of the step's
    /// Newton system. The others are checked at the end of the step: where one has come
    /// within half this distance, the step is solved again with every contact found, so a
    /// contact the step reaches is never left out. A contact that stays apart carries no
    /// force but the smoothing's float, $\varepsilon^2/(2r_n g)$, which changes its bodies'
    /// velocities by $\varepsilon^2/(2hg)$ in a step ($5\cdot10^{-8}$ m/s at a millimetre,
    /// h = 0.01; none with [`contact_smoothing`](Self::contact_smoothing) 0). Fewer rows make each Newton iteration cheaper: a robot lying on its
    /// links has box corners a centimetre or two off the ground (measured in
    /// docs/benchmarks.md). At or above `contact_margin`, or not above zero, every
    /// contact found is a row.
    pub row_margin: f64,
    /// The smoothing $\varepsilon^2$ (m², `≥ 0`) of the position-level contact normal
    /// rows' Fischer–Burmeister function: a contact pressed by $\lambda_n$ floats
    /// $\varepsilon^2/(2h^2w_n\lambda_n)$ above its surface, and the forces of redundant
    /// contacts are unique (docs/constraints.md, "Contact normal").
    /// [`DEFAULT_CONTACT_SMOOTHING`] by default. With a
    /// [`contact_compliance`](Self::contact_compliance), 0 is the plain function.
    pub contact_smoothing: f64,
    /// The compliance $\kappa$ (dimensionless, `≥ 0`) of the position-level contact
    /// normal rows (`axion_constraints::contact::compliant_normal_row`): a pressed
    /// contact sinks by $\kappa h^2 w_n\lambda_n$, $\kappa$ times the displacement its
    /// force causes in one step ($10^{-11}$ m for a body resting on one contact at
    /// $h$ = 0.01 with $\kappa = 10^{-8}$), and its row keeps the compliance $\kappa w_n$
    /// at any load. 0 (the default) leaves the rows to the smoothing alone. With
    /// `contact_smoothing` 0 and $\kappa = 10^{-8}$ ([`COMPLIANT_CONTACTS`]) a landing
    /// step no longer needs an iteration for each doubling of a new contact's force, and
    /// a resting robot starts its steps nearer their solution: over 240 limp drops at
    /// $h$ = 0.01 the minitaur took half the iterations, the a1 15 % fewer, and spirit40
    /// 29 % more (docs/benchmarks.md, "Third sitting of 2026-11-29"). The GPU backend
    /// keeps the smoothed rows.
    pub contact_compliance: f64,
    /// Creep $c$ of sticking friction (dimensionless, `≥ 0`): a sticking contact slips at
    /// $c\thinspace\lambda_t/\rho$, $c$ times the velocity change its friction force causes in
    /// one step (`axion_constraints::friction::projection`). It makes the forces of
    /// redundant sticking contacts unique (a box's four corners, two points of a link
    /// lying on the ground); without it the Newton iteration can wander along their
    /// undetermined internal forces. Measured on the robots of docs/robots.md.
    pub friction_creep: f64,
    /// Most speed (m/s) at which a distance violated at the start of a step — a
    /// penetration, a joint's anchors apart, a prismatic joint past its range — is
    /// removed: the step asks for the violation less `recovery_speed · h`, not for zero,
    /// so overlapping bodies separate at this speed instead of being thrown apart in one
    /// step. A constraint satisfied at the start of the step (within one step's
    /// recovery) is asked for exactly, so resting and steady-state results do not
    /// depend on it.
    pub recovery_speed: f64,
    /// The same for angles (rad/s): a joint's axes out of line, a hinge past its range.
    pub recovery_rate: f64,
    /// Start each contact's forces from those of the matching contact of the previous
    /// step (same bodies, points within 5 mm): fewer Newton iterations on resting
    /// contacts (measured in docs/benchmarks.md). A landing's warm start can also lead
    /// the iteration astray (the impact forces of the step before, far from this
    /// step's): a step that does not converge, also with
    /// [`fallback_creep`](Self::fallback_creep), is solved once more from zero contact
    /// and limit forces before it is split ([`split_depth`](Self::split_depth)).
    pub contact_persistence: bool,
    /// In a step that continues one with the same rows (contacts and active limits),
    /// first take chord steps: the Newton direction from the factors the world last
    /// computed (kept along the bodies' tree, `axion_cpu::tree`). One that converges
    /// ends the step; one that lowers the merit $\tfrac12|F|^2$ starts the step's Newton
    /// iteration, and another follows while each contracts it a hundredfold (three at
    /// most); one that does not is dropped. A robot at rest or creeping barely changes its Newton
    /// matrix from one step to the next, so a chord step usually converges at the cost
    /// of one solve and one residual; a moving one's changes by a few per cent a step,
    /// so its chord steps leave one full iteration to do instead of two or three. Each
    /// counts as an iteration ([`axion_model::StepStats::chord_steps`]).
    /// Within a step, the last iteration is a chord step too where the quadratic
    /// contraction of the iterations before it says one will converge (the factors of
    /// the iteration before are kept). `false` assembles and factorizes the system
    /// every iteration.
    pub reuse_factors: bool,
    /// Solve each Newton system along the bodies' tree (`axion_cpu::tree`) when the
    /// rows joining dynamic bodies form a forest (a robot without self-collision on
    /// static ground), instead of by sparse LU: the same direction in linear time.
    /// `false` always uses the sparse LU (for comparison; docs/benchmarks.md).
    pub tree_solve: bool,
    /// A step that does not converge is solved again from the same start with this creep
    /// of sticking friction in place of [`friction_creep`](Self::friction_creep) (if it
    /// is larger), and the result kept if it converges. A landing's redundant sticking
    /// contacts (a foot's sphere and its link's box, both on the ground) leave the
    /// iteration a nearly free internal mode of friction forces, along which it
    /// wanders from one edge of a friction cone to another; a larger creep ties that
    /// mode down, at the cost of a slip of $c$ times the velocity change the friction
    /// forces cause in a step — 3 µm/s for a box held on a 20° slope at $h$ = 0.01 with
    /// $c = 10^{-4}$ — in the steps that need it. Measured on the robots of
    /// docs/robots.md (docs/step.md, "A step solved again"). Equal to `friction_creep`
    /// (or smaller) never retries so. Within an attempt, a full Newton step whose
    /// friction residual jumps (its merit 10⁴-fold) is not taken, and the iteration goes
    /// on with sticking rows creeping at this creep's rate; its solution is then taken
    /// back to `friction_creep` where two more iterations converge (docs/step.md,
    /// "Jumps").
    pub fallback_creep: f64,
    /// A step solved with [`fallback_creep`](Self::fallback_creep) (a second attempt,
    /// or a step started so) that converged in more than [`CREEP_KEPT_ABOVE`] iterations
    /// makes the world's next step start with that creep, in place of
    /// [`friction_creep`](Self::friction_creep), and without the second attempt with
    /// it: a landing's steps that need the larger creep come in runs, and each of
    /// them would otherwise fail a first attempt before its retry converges. A step
    /// that converges with the larger creep within [`CREEP_KEPT_ABOVE`] iterations ends
    /// the run: the next starts with `friction_creep` again. `false` starts every step
    /// with `friction_creep` (the larger creep then only in steps that fail without
    /// it). Measured on the robots of docs/robots.md: the a1 dropped limp takes 8 %
    /// fewer iterations a step, humanoid.urdf 5–9 %, and 7–19 % of their steps keep
    /// the larger creep instead of 1–5 % (docs/benchmarks.md, "Starting with the
    /// fallback creep").
    pub keep_fallback_creep: bool,
    /// The second attempts at a step that did not converge (with
    /// [`fallback_creep`](Self::fallback_creep), and from zero contact forces) are
    /// solved with the contacts' compliance in place of their smoothing
    /// ([`compliant_contacts`](Self::compliant_contacts)): a pressed contact of such a
    /// step sinks by $10^{-8}h^2w_n\lambda_n$ instead of floating by
    /// $\varepsilon^2/(2h^2w_n\lambda_n)$. The failed first attempts are mostly landings
    /// where new contacts' forces must grow by orders of magnitude, which the smoothed
    /// rows do one doubling an iteration (docs/constraints.md, "Contact normal"); the
    /// compliant rows converge where they did not. Over 240 limp drops of each corpus
    /// robot, the a1 took 14 % fewer iterations a step at $h$ = 0.01 and 2 % fewer at
    /// 0.005 and 0.02, and none of its steps was left unconverged (53 were before, at
    /// 0.005 and 0.01); the seven others moved by −2 to +2 %, the minitaur, spirit40
    /// and r2d2, whose first attempts do not fail, not at all (docs/benchmarks.md,
    /// "Third sitting of 2026-11-29"). `false` retries with the step's own contact
    /// rows.
    pub compliant_retries: bool,
    /// A first attempt at a step that a compliant retry follows (with
    /// [`compliant_retries`](Self::compliant_retries) and the larger
    /// [`fallback_creep`](Self::fallback_creep); not a step that starts with that creep)
    /// is ended once this many of its full Newton steps in a row have not lowered the
    /// lowest merit it has reached, without the damped iterations that would follow, and
    /// the step goes to that retry; 0 never ends one early. Such an attempt is a landing
    /// wandering (its merit climbing to $10^3$ and back), which before ran to
    /// [`max_iterations`](Self::max_iterations) while the compliant retry converges it in
    /// a handful of iterations. The default [`ABANDON_AFTER`].
    pub abandon_after: usize,
    /// A step that does not converge (also with
    /// [`fallback_creep`](Self::fallback_creep), and from zero contact forces,
    /// [`contact_persistence`](Self::contact_persistence)) is solved again as two steps
    /// of $h/2$, from the same start, each of them split again while this allows ($2^d$
    /// sub-steps at most); the split result is kept if every sub-step converges, else
    /// the whole step's.
    /// Backward Euler over the sub-steps is as exact a step as the whole one (every
    /// constraint holds at the end of each), only finer. Nonsmooth events — a landing's
    /// new contacts, a slip starting — can leave the semismooth iteration of a large step
    /// without a way to its solution; a shorter step usually has one. The step's
    /// statistics count the sub-steps ([`axion_model::StepStats::substeps`]) and every
    /// iteration of every attempt, and the contacts the world reports afterwards are
    /// those of its last sub-step. 0 never splits; values above [`MAX_SPLIT_DEPTH`] act
    /// as it.
    pub split_depth: usize,
    /// Blocks of worlds stepped in parallel (on rayon's thread pool, one thread per
    /// core unless `RAYON_NUM_THREADS` says otherwise): 0 (the default) makes one block
    /// per available core, 1 steps every world on the calling thread; never more blocks
    /// than worlds. Every world is solved on its own, so the results are bitwise
    /// identical for any value.
    pub threads: usize,
}

/// [`SolverSettings::abandon_after`]'s default: a first attempt ends after 4 full steps
/// in a row without a new lowest merit. Over 240 limp drops of each corpus robot at
/// $h$ = 0.01 (raised by 0–239 µm), iterations a step: the a1 3.283 → 3.036, aliengo
/// 3.440 → 3.288, laikago 4.768 → 4.440, mini_cheetah 2.204 → 2.110, humanoid.urdf
/// 8.192 → 7.508; the a1 at $h$ = 0.005 3.276 → 3.001 and at 0.02 5.305 → 5.129; the
/// minitaur, spirit40, r2d2, ant.xml and humanoid.xml within 0.2 %, half_cheetah.xml
/// 1 % more; every step converged. Other counts did worse on the a1 (2: 10 % more
/// iterations than never ending; 3, 5, 6, 8, 12: 1–4 % more than 4). The price: more
/// steps end with the fallback creep (the a1 5313 → 6267 of 48 000, humanoid.urdf
/// 10 550 → 20 114) — docs/benchmarks.md, "Fourth sitting of 2026-11-29".
pub const ABANDON_AFTER: usize = 4;

/// [`SolverSettings::keep_fallback_creep`]: a step solved with the fallback creep
/// that converged in more than this many iterations makes the next start with it.
/// Smaller values keep the larger creep in more steps (2: the a1 saved a little more,
/// humanoid.urdf kept it in half its steps), 0 lost iterations on the a1, the aliengo
/// and mini_cheetah (docs/benchmarks.md).
pub const CREEP_KEPT_ABOVE: usize = 4;

/// Default [`SolverSettings::fallback_creep`].
pub const FALLBACK_CREEP: f64 = 1e-4;

/// Default [`SolverSettings::contact_smoothing`] (and the GPU backend's).
pub use axion_constraints::contact::DEFAULT_FB_EPS_SQ as DEFAULT_CONTACT_SMOOTHING;

/// The compliance [`SolverSettings::contact_compliance`] that replaces the smoothing in
/// [`SolverSettings::compliant_contacts`].
pub const COMPLIANT_CONTACTS: f64 = 1e-8;

/// The deepest [`SolverSettings::split_depth`] that acts.
pub use axion_model::MAX_SPLIT_DEPTH;

/// Default [`SolverSettings::friction_creep`] (and the GPU backend's).
pub use axion_constraints::friction::projection::FRICTION_CREEP;

impl SolverSettings {
    /// These settings with contacts regularised by the compliance
    /// [`COMPLIANT_CONTACTS`] in place of the smoothing ([`Self::contact_compliance`]).
    pub fn compliant_contacts(self) -> Self {
        Self {
            contact_smoothing: 0.0,
            contact_compliance: COMPLIANT_CONTACTS,
            ..self
        }
    }
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            integrator: Integrator::BackwardEuler,
            max_iterations: 30,
            velocity_tolerance: 1e-10,
            contact_tolerance: 1e-8,
            position_tolerance: 1e-11,
            max_backtracks: 8,
            regularization: 1e-10,
            geometric_stiffness: true,
            contact_margin: 0.02,
            row_margin: 0.002,
            contact_smoothing: DEFAULT_CONTACT_SMOOTHING,
            contact_compliance: 0.0,
            friction_creep: FRICTION_CREEP,
            recovery_speed: 0.5,
            recovery_rate: 2.0,
            contact_persistence: true,
            reuse_factors: true,
            tree_solve: true,
            fallback_creep: FALLBACK_CREEP,
            keep_fallback_creep: true,
            compliant_retries: true,
            abandon_after: ABANDON_AFTER,
            split_depth: 3,
            threads: 0,
        }
    }
}
