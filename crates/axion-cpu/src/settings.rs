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
    /// Most Newton iterations (linear solves) per step.
    pub max_iterations: usize,
    /// Converged when the dynamics and drive residuals are below this (m/s).
    pub velocity_tolerance: f64,
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
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            integrator: Integrator::BackwardEuler,
            max_iterations: 30,
            velocity_tolerance: 1e-10,
            position_tolerance: 1e-11,
            max_backtracks: 8,
            regularization: 1e-10,
            geometric_stiffness: true,
        }
    }
}
