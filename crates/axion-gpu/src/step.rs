//! Rust twin of `shaders/step.wgsl` and the `step_*.wgsl` files beside it: the
//! implicit Newton step of a batch of worlds with joints, drives, contacts and
//! friction, and the packing of a [`Model`] into the kernels' buffers.
//!
//! A step is a sequence of dispatches, each with one invocation per world:
//! `step_begin` (start from $u^-$ and the previous multipliers, detect contacts,
//! evaluate), then `max_iterations` times (twice that with a second attempt,
//! `GpuSettings::fallback_creep`) `step_factor` (set up the linear system; on a model
//! whose rows lie on its tree, factorize it along the tree: `crate::tree`),
//! `step_direction` (the tree's backward sweep, or the Krylov solve of the Schur system,
//! continued by `step_direction_more` in chunks that stay inside lavapipe's loop budget,
//! see `Packed::linear_chunk`), `step_update` (velocity steps) and `step_search` (step
//! length), then `step_finish` (write the state). A world that has converged, stalled
//! or failed does nothing in the later dispatches, and the iterations' dispatches are
//! indirect: a world still active asks for its next iteration's workgroups
//! (`next_dispatch`), so once every world of a chunk has stopped the remaining
//! iterations run zero workgroups. (An earlier version ran the whole Newton loop in one
//! kernel, and lavapipe lost iterates on the 20-link chain, and again the velocity steps
//! when they followed the Schur solve in one kernel on stacks of 8 boxes: both fit its
//! loop budget; long kernels also risk the watchdogs of desktop GPUs.)
//!
//! # The equations (the same discrete system as `axion-cpu`, backward Euler)
//!
//! Unknowns: velocities $u^+$ of the dynamic bodies and multipliers $\lambda$ of every
//! row (joint rows, then one row per drive). Poses follow the velocities,
//! $q^+ = q^- \oplus h\thinspace G\thinspace u^+$ (exponential map, renormalised). Residuals:
//! $$h_{dyn} = \tilde M(\theta^+)u^+ - \tilde M(\theta^-)u^- - h f_{ext} - h\sum_i J_i^\top\lambda_i,\qquad
//!   h_i = \frac{c_i(q^+) + \varepsilon\lambda_i}{h}\ \text{(joints)},\qquad
//!   h_i = \alpha h(\lambda_i - \ell_i)\ \text{(drives)},$$
//! ($\ell_i$ the drive's PD or velocity law), with the rows of `axion-constraints` (point, angle, axis-alignment and slide locks;
//! revolute and prismatic coordinates) evaluated at $q^+$.
//!
//! # Contacts
//!
//! Pairs of shapes that may touch are listed here (`contact_pairs`), each with a fixed
//! number of contact slots of three rows (normal, two friction rows) after the drive
//! rows; `step_begin` fills the slots from the narrow phase (`narrow.wgsl`) at $q^-$
//! within the speculative margin. A slot's normal, points and force Jacobians $J_n$,
//! $J_{t_1}$, $J_{t_2}$ are fixed for the step, as on the CPU; the gap $g(q^+)$ is
//! re-evaluated at every iterate. Normal: $h_n = \phi/h$ with
//! $\phi = \mathrm{FB}(g, \lambda_n; h^2 w_n)$, entered in the Schur system divided by
//! $\partial_g\phi$ (Jacobian $J_n$, compliance $\partial_\lambda\phi/(h^2\partial_g\phi)$).
//! A pair with restitution $e > 0$ has velocity-level normal rows instead,
//! $\phi = \mathrm{FB}(J_n u^+ + b, \lambda_n; h w_n)$ with the bias $b$ of
//! `axion_constraints::contact::VelocityContact::bias` (the approach velocity kept by a
//! contact that persists in its slot, as the CPU's persistence keeps it).
//! Friction: the symmetric linearisation of `axion_constraints::friction::symmetric`
//! (stick rows with compliance $10^{-6}/(\hat\rho h)$; slipping: the force along the
//! slip fixed, one row across it), decided on the current iterate; with
//! `GpuSettings::slip_coupling` the fixed force along the slip follows the normal force,
//! $\Delta\hat\lambda_{\hat y} = R - \hat y\cdot\hat\lambda + \mu\Delta\lambda_n$, and every
//! world solves the then non-symmetric Schur system by ORTHOMIN(2). Rows whose step is
//! prescribed (separated contacts, the slip direction, empty slots) are *fixed*: their
//! steps move to the right-hand side and the Schur operator skips them. With contacts
//! the first 12 iterations take full steps (as on the CPU, docs/step.md), later ones
//! backtrack, and an unconverged step returns its best iterate. `docs/gpu.md` has the
//! details and the parity figures.
//!
//! # Joint limits
//!
//! Each finite bound of a joint's enforced range ([`axion_model::ModelJoint::range`])
//! has a slot of one row after the contact rows. As on the CPU it is a unilateral row
//! on the gap $g = \sigma(q_{rel}(q^+) - b)$ ($\sigma = +1$ at the lower bound, $-1$ at
//! the upper; angles measured from the range's middle, wrapped), with its force
//! $\sigma J_q(q^-)$ and $w = J M^{-1} J^\top$ fixed for the step, active when the gap at
//! $q^-$ is within the contact margin plus two steps of the joint's speed; it takes the
//! contact normal's Fischer–Burmeister row. Its force stays in the state between steps
//! (the CPU's warm start of a limit that stays active).
//!
//! # The Newton iteration
//!
//! Each iteration solves the linear system
//! $$\begin{bmatrix}\hat M & -hF^\top \\\\ J & hC\end{bmatrix}
//!   \begin{bmatrix}\Delta u \\\\ \Delta\lambda\end{bmatrix}
//!   = -\begin{bmatrix}h_{dyn} \\\\ h_c\end{bmatrix},$$
//! $J$ the rows' velocity Jacobians, $F$ their force Jacobians at $q^+$ ($F = J$ but for
//! the slip coupling), $C$ the compliances with the regularisation $\delta = 10^{-6}w_i$
//! on row $i$ ($w_i = J_i\hat M^{-1}J_i^\top$).
//!
//! **Along the tree** (`GpuSettings::tree_solve`, on models whose rows all lie on the
//! tree of bodies: robots on the ground) the system is solved directly, with $\hat M$
//! the mass matrix with the gyroscopic term and every block of the joints' and drives'
//! geometric stiffness, own and coupling (`crate::tree` has the elimination): the
//! direction is the CPU's full Newton direction up to f32 rounding, but for the left
//! Jacobian of the exponential map.
//!
//! **Otherwise** it is reduced to the Schur system
//! $$\big(J\hat M^{-1}F^\top + C\big)\Delta\lambda = \frac{J\hat M^{-1}h_{dyn} - h_c}{h},\qquad
//!   \Delta u = \hat M^{-1}\big(hF^\top\Delta\lambda - h_{dyn}\big),$$
//! with $\hat M$ block diagonal per body: $m I$ and
//! $I_w(\theta^+) - h^2\operatorname{sym}(K_{bb})$, $K_{bb}$ the geometric stiffness of
//! the rows' torques on their own body (used where the sum is positive definite). The
//! coupling of a joint's two bodies through $K$ and the rotation of $I_w$ are left out
//! of this matrix (not of the residual): the
//! iteration converges to the same solution, linearly instead of quadratically. The
//! Schur matrix is never assembled: $A x$ is a gather over the body → rows adjacency,
//! $t_b = \hat M_b^{-1}\sum_{i \ni b} F_{i,b}^\top x_i$, then
//! $y_i = J_{i,a}t_a + J_{i,b}t_b + C_i x_i$. It is solved by the conjugate residual
//! method (ORTHOMIN(2) where slip coupling makes it non-symmetric) with the Jacobi
//! preconditioner $P_i = 1/(w_i + C_i)$, from $\Delta\lambda = 0$, until
//! $\lVert r\rVert \le \text{tol}\thinspace\lVert b\rVert$.
//!
//! A backtracking line search (Armijo on the merit $\tfrac12\lVert F\rVert^2$, $F$ = every
//! residual in m/s as on the CPU) makes each accepted iterate better than the last, so
//! the iterate returned is the best one seen; the iteration stops when converged, at
//! the iteration cap, or when no step length reduces the merit.
//!
//! # Storage
//!
//! Every per-world array is interleaved (element `slot` of world `w` at
//! `slot * worlds + w`). Per world: state $(q, u, \lambda)$ (stays on the device
//! between steps), control (wrenches, drive modes, targets, gains), scratch, and
//! `STATS` statistics ([`crate::layout`]).

use axion_constraints::drive::{CoordinateKind, DriveMode};
use axion_constraints::joint::JointKind;
use axion_math::{orthobasis, pose_coords};
use axion_model::{Body, BodyId, Control, Geometry, Model, Shape, ShapeDesc, State};
use nalgebra::{Isometry3, Matrix3, Translation3, Vector3};
use std::ops::Range;

use crate::error::GpuError;
use crate::kinematics::QUAT_WGSL;
use crate::layout::*;
use crate::narrow::{NARROW_WGSL, shape_code};
use crate::tree::{RowOwner, TreePlan};

/// The step kernel's WGSL files of the top-level `shaders/` folder (each needs
/// [`QUAT_WGSL`], [`NARROW_WGSL`] and the shared constants before it): `step.wgsl`
/// (uniform block, buffers, scratch accessors, residuals, the kernels) and the files that
/// mirror `axion-constraints`: joints, drives, contacts with friction, joint limits,
/// geometric stiffness, and the linear solve.
pub const STEP_WGSL: [(&str, &str); 8] = [
    ("step.wgsl", include_str!("../../../shaders/step.wgsl")),
    (
        "step_joints.wgsl",
        include_str!("../../../shaders/step_joints.wgsl"),
    ),
    (
        "step_drives.wgsl",
        include_str!("../../../shaders/step_drives.wgsl"),
    ),
    (
        "step_contacts.wgsl",
        include_str!("../../../shaders/step_contacts.wgsl"),
    ),
    (
        "step_limits.wgsl",
        include_str!("../../../shaders/step_limits.wgsl"),
    ),
    (
        "step_stiffness.wgsl",
        include_str!("../../../shaders/step_stiffness.wgsl"),
    ),
    (
        "step_linear.wgsl",
        include_str!("../../../shaders/step_linear.wgsl"),
    ),
    (
        "step_tree.wgsl",
        include_str!("../../../shaders/step_tree.wgsl"),
    ),
];

/// The complete step module: the shared constants and the scratch layout
/// ([`crate::layout`]), [`QUAT_WGSL`],
/// [`NARROW_WGSL`] (contact detection) and the files of [`STEP_WGSL`], each after a
/// comment naming it.
pub fn step_source() -> String {
    let mut source = crate::layout::wgsl_constants();
    source.push_str("\n// ---- the scratch layout (layout.rs) ----\n");
    source.push_str(&crate::layout::wgsl_scratch());
    for (name, text) in [("quat.wgsl", QUAT_WGSL), ("narrow.wgsl", NARROW_WGSL)]
        .into_iter()
        .chain(STEP_WGSL)
    {
        source.push_str(&format!("\n// ---- shaders/{name} ----\n{text}"));
    }
    source
}

/// Loop passes that lavapipe (Mesa's llvmpipe, `LP_MAX_TGSI_LOOP_ITERATIONS`) allows
/// one kernel invocation, counted over all of its loops together.
pub const LOOP_BUDGET: usize = 65535;

/// Declares [`Params`] and, for the test that compares it with `step.wgsl`, the offset
/// of each of its members by name.
macro_rules! params {
    ($($(#[$doc:meta])* $name:ident: $ty:ty,)*) => {
        /// The kernels' uniform block: `Params` in `step.wgsl`, member by member, with
        /// the same names at the same offsets (tested against the WGSL struct).
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub(crate) struct Params {
            $($(#[$doc])* pub $name: $ty,)*
        }
        /// Each member of [`Params`] and its offset (bytes).
        #[cfg(test)]
        const PARAMS_MEMBERS: &[(&str, usize)] =
            &[$((stringify!($name), std::mem::offset_of!(Params, $name))),*];
    };
}

params! {
    /// Worlds of the chunk.
    worlds: u32,
    bodies: u32,
    joints: u32,
    drives: u32,
    rows: u32,
    joint_rows: u32,
    /// Newton iterations at most.
    max_newton: u32,
    /// Linear-solver iterations at most.
    max_linear: u32,
    max_backtracks: u32,
    /// 1: the geometric stiffness in the bodies' blocks.
    geometric_stiffness: u32,
    drive_base_u: u32,
    rowbody_base_u: u32,
    adj_offset_base_u: u32,
    adj_base_u: u32,
    joint_base_f: u32,
    scratch_slots: u32,
    pairs: u32,
    pair_base_u: u32,
    pair_base_f: u32,
    contact_row0: u32,
    /// The step (s), written before every run of steps.
    h: f32,
    velocity_tolerance: f32,
    position_tolerance: f32,
    linear_tolerance: f32,
    gravity: [f32; 3],
    regularization: f32,
    /// Contact margin (m).
    contact_margin: f32,
    /// Contact tolerance (m/s).
    contact_tolerance: f32,
    /// Fischer–Burmeister ε² (m²).
    fb_eps_sq: f32,
    /// Linear-solver iterations per dispatch ([`Packed::linear_chunk`]).
    linear_chunk: u32,
    /// Joint-limit slots: count, first word in `model_u`, first float in `model_f`,
    /// first row.
    limits: [u32; 4],
    /// [`GpuSettings::friction_creep`](crate::GpuSettings::friction_creep) and
    /// [`GpuSettings::fallback_creep`](crate::GpuSettings::fallback_creep).
    friction_creep: f32,
    fallback_creep: f32,
    /// Attempts at a step: 2 where a step that does not converge is solved again, 1
    /// where not.
    attempts: u32,
    /// Padding to the next 16-byte boundary.
    pad0: u32,
    /// The solve along the tree ([`crate::tree`]): bodies of its plan (0: the Newton
    /// system is not solved along the tree, but by the Schur system's Krylov solve),
    /// groups, and the first words of the bodies and groups in `model_u`.
    tree: [u32; 4],
    /// The first words of the plan's entries and of its joints' tree sides in
    /// `model_u` ([`TreePlan::pack`]), the scratch floats of its factors (allocated
    /// whether or not it is used), and 1 where each group's solve is refined
    /// ([`Packed::tree_refined`]), else 0.
    tree_more: [u32; 4],
}

/// A model packed for the kernel.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Packed {
    pub model_f: Vec<f32>,
    pub model_u: Vec<u32>,
    pub bodies: usize,
    pub joints: usize,
    pub drives: usize,
    pub rows: usize,
    pub joint_rows: usize,
    pub drive_base_u: usize,
    pub rowbody_base_u: usize,
    pub adj_offset_base_u: usize,
    pub adj_base_u: usize,
    pub joint_base_f: usize,
    /// Contact pairs, each with contact slots of three rows (normal, two friction rows)
    /// after the drive rows: as many slots as its narrow phase has points at most.
    pub pairs: usize,
    /// Contact slots of all pairs.
    pub slots: usize,
    pub pair_base_u: usize,
    pub pair_base_f: usize,
    /// Joint-limit slots (one row each, after the contact rows): one per finite bound
    /// of each joint's enforced range.
    pub limits: usize,
    pub limit_base_u: usize,
    pub limit_base_f: usize,
    pub gravity: [f32; 3],
    /// The elimination along the bodies' tree ([`crate::tree`]).
    pub tree: TreePlan,
    /// First words of the tree plan's bodies, groups, entries and joint sides in
    /// `model_u`.
    pub tree_base_u: [usize; 4],
}

impl Packed {
    /// The layout of one world's scratch.
    pub fn scratch(&self) -> Scratch {
        Scratch::new(ScratchCounts {
            bodies: self.bodies,
            rows: self.rows,
            drives: self.drives,
            limits: self.limits,
            slots: self.slots,
            tree: self.tree.floats,
        })
    }
    /// Scratch slots per world.
    pub fn scratch_slots(&self) -> usize {
        self.scratch().total
    }
    /// Linear-solver iterations per dispatch (`linear_iterate` in `step_linear.wgsl`).
    ///
    /// lavapipe counts the passes of all loops of one kernel invocation against one
    /// budget of [`LOOP_BUDGET`] and runs every loop for a single pass once it is spent.
    /// One iteration of either solver makes at most $24R + 3B + 16$ loop passes ($R$
    /// rows, $B$ bodies): about ten loops over the rows and one Schur product (its
    /// gather over the body → rows adjacency of at most $2R$ entries, its loops over the
    /// bodies and rows), plus, for a conjugate residual restart, two more Schur products
    /// and three loops over the rows. A dispatch spends half the budget on iterations,
    /// leaving the other half for the first dispatch's set-up (fewer than twenty loops
    /// over the rows). At least one iteration per dispatch.
    ///
    /// An adapter without a loop budget (`budget` false: hardware) runs the whole solve,
    /// `max_linear` iterations and the pass that ends it, in one dispatch.
    pub fn linear_chunk(&self, budget: bool, max_linear: usize) -> usize {
        if !budget {
            return max_linear + 1;
        }
        let per_iteration = 24 * self.rows + 3 * self.bodies + 16;
        (LOOP_BUDGET / 2 / per_iteration).max(1)
    }
    /// Whether the Newton system is solved along the model's tree ([`crate::tree`]):
    /// every row lies on it ([`TreePlan::direct`]) and, on an adapter with a loop budget
    /// (`budget`: lavapipe), the factorization fits it, [refined](Self::tree_refined)
    /// or not.
    pub fn tree_fits(&self, budget: bool) -> bool {
        self.tree.direct && (!budget || self.within_budget(self.tree_refined(budget)))
    }
    /// Whether each group's solve along the tree is refined once against its $S$
    /// ([`crate::tree`], "One refinement of each group's solve"): always without a
    /// loop budget; with one (lavapipe), where the refined factorization fits it.
    pub fn tree_refined(&self, budget: bool) -> bool {
        !budget || self.within_budget(true)
    }
    /// Whether the factorization with the set-up before it (`step_factor`: at most about
    /// $24R + 8B$ passes) takes at most half of lavapipe's loop budget, and the backward
    /// sweep a quarter.
    fn within_budget(&self, refined: bool) -> bool {
        let factor = self
            .tree
            .factor_passes(self.bodies, self.joints + self.drives, refined);
        factor + 24 * self.rows + 8 * self.bodies <= LOOP_BUDGET / 2
            && self.tree.backward_passes(refined) <= LOOP_BUDGET / 4
    }
    /// The first contact row (after the joint and drive rows).
    pub fn contact_row0(&self) -> usize {
        self.joint_rows + self.drives
    }
    /// The first joint-limit row (after the contact rows).
    pub fn limit_row0(&self) -> usize {
        self.contact_row0() + 3 * self.slots
    }
    /// Whether the model has unilateral rows (contacts or joint limits): its kernels
    /// are compiled with the `CONTACTS` code.
    pub fn unilateral(&self) -> bool {
        self.pairs > 0 || self.limits > 0
    }
    /// State slots per world: $q$ (7 per body), $u$ (6 per body), $\lambda$.
    pub fn state_slots(&self) -> usize {
        13 * self.bodies + self.rows
    }
    /// Control slots per world: a wrench per body, five numbers per drive.
    pub fn control_slots(&self) -> usize {
        6 * self.bodies + CONTROL_DRIVE * self.drives
    }
}

/// $\sqrt{\max_i I_{b,ii}/m}$, as on the CPU: turns angular velocity errors into m/s.
fn radius_of_gyration(body: &Body) -> f64 {
    let i = body.mass.inertia();
    (i[(0, 0)].max(i[(1, 1)]).max(i[(2, 2)]) / body.mass.mass()).sqrt()
}

fn push_matrix(out: &mut Vec<f32>, m: &Matrix3<f64>) {
    // Column-major, as WGSL's mat3x3 constructor from columns expects.
    out.extend(m.iter().map(|&x| x as f32));
}

/// A shape pair that may touch, in the kernel's order: shape `shape_a` of body `a`
/// and shape `shape_b` of body `b`, the contact normal pointing from b to a.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pair {
    a: usize,
    shape_a: usize,
    b: usize,
    shape_b: usize,
    /// Narrow-phase kinds of the two shapes.
    kinds: (u32, u32),
}

impl Pair {
    /// Contact slots: the most points its narrow phase returns.
    fn slots(&self) -> usize {
        match self.kinds {
            (_, HALF_SPACE) => 4,
            (BOX, BOX) | (CYLINDER, BOX | CYLINDER) => 8,
            (CYLINDER, CAPSULE) => 3,
            (CAPSULE, BOX) => 2,
            _ => 1,
        }
    }
}

/// Orders two shapes of kinds `(first, second)` for the kernel, or `None` if it has no
/// narrow phase for them: any solid on a half-space (half-space second), sphere–sphere,
/// sphere–box, sphere–capsule and sphere–cylinder (sphere first), capsule–capsule,
/// capsule–box (capsule first), box–box, and cylinder–box, cylinder–capsule and
/// cylinder–cylinder (cylinder first). `true`: swap them.
fn pair_order(first: u32, second: u32) -> Option<bool> {
    match (first, second) {
        (HALF_SPACE, HALF_SPACE) => None,
        (HALF_SPACE, _) => Some(true),
        (_, HALF_SPACE) => Some(false),
        (SPHERE, SPHERE | BOX | CAPSULE | CYLINDER)
        | (CAPSULE, CAPSULE | BOX)
        | (BOX, BOX)
        | (CYLINDER, BOX | CAPSULE | CYLINDER) => Some(false),
        (BOX | CAPSULE | CYLINDER, SPHERE) | (BOX, CAPSULE | CYLINDER) | (CAPSULE, CYLINDER) => {
            Some(true)
        }
        _ => None,
    }
}

/// The model's contact pairs, or [`GpuError::UnsupportedModel`] naming what the kernel
/// cannot run: any pair of collidable shapes that may touch and has no narrow phase on
/// the device (see [`pair_order`]).
fn contact_pairs(model: &Model) -> Result<Vec<Pair>, GpuError> {
    let excluded = model.collision_exclusions();
    let shapes: Vec<(usize, usize, &axion_model::CollisionFilter)> = model
        .bodies()
        .iter()
        .enumerate()
        .flat_map(|(b, body)| {
            body.shapes
                .iter()
                .enumerate()
                .filter_map(move |(k, s)| s.collision.as_ref().map(|f| (b, k, f)))
        })
        .collect();
    let mut pairs = Vec::new();
    for (n, &(a, ka, fa)) in shapes.iter().enumerate() {
        for &(b, kb, fb) in &shapes[n + 1..] {
            let both_static = !model.bodies()[a].is_dynamic() && !model.bodies()[b].is_dynamic();
            if a == b || both_static || !fa.allows(fb) || excluded.excludes(a, b) {
                continue;
            }
            if kinematically_apart(model, (a, ka), (b, kb)) {
                continue;
            }
            let desc = |b: usize, k: usize| &model.bodies()[b].shapes[k];
            let name = |b: usize| &model.bodies()[b].name;
            let code = |b: usize, k: usize| shape_code(&desc(b, k).geometry).map(|c| c.0);
            let kinds = code(a, ka).zip(code(b, kb));
            let order = kinds.and_then(|(x, y)| pair_order(x, y).map(|swap| (swap, x, y)));
            let Some((swap, x, y)) = order else {
                return Err(GpuError::UnsupportedModel {
                    reason: format!(
                        "shape {ka} ({}) of body '{}' and shape {kb} ({}) of body '{}' may \
                         collide; the GPU's narrow phase has the pairs of spheres, boxes, \
                         capsules, cylinders and half-spaces only so far (give the shapes \
                         `collision(None)` or use the CPU backend)",
                        desc(a, ka).geometry.name(),
                        name(a),
                        desc(b, kb).geometry.name(),
                        name(b)
                    ),
                });
            };
            pairs.push(if swap {
                Pair {
                    a: b,
                    shape_a: kb,
                    b: a,
                    shape_b: ka,
                    kinds: (y, x),
                }
            } else {
                Pair {
                    a,
                    shape_a: ka,
                    b,
                    shape_b: kb,
                    kinds: (x, y),
                }
            });
        }
    }
    Ok(pairs)
}

/// Shapes of two bodies closer than this (m) in every joint configuration are treated as
/// possibly touching by [`kinematically_apart`] (joint errors, rounding).
const APART_CLEARANCE: f64 = 1e-3;

/// Half width of a solid along unit `u` (shape frame): its support $h(u)$.
fn half_width(shape: &Shape, u: &Vector3<f64>) -> f64 {
    match *shape {
        Shape::Sphere { radius } => radius,
        Shape::Box { half_extents: e } => e.dot(&u.abs()),
        Shape::Capsule {
            radius,
            half_length,
        } => radius + half_length * u.z.abs(),
        Shape::Cylinder {
            radius,
            half_length,
        } => half_length * u.z.abs() + radius * (1.0 - u.z * u.z).max(0.0).sqrt(),
    }
}

/// Whether shape `ka` of body `a` and shape `kb` of body `b` can never touch: both
/// bodies hang from the same parent (or the world) by revolute, ball or fixed joints, so
/// each shape stays inside a volume fixed in the parent's frame, and the two volumes
/// are apart by more than [`APART_CLEARANCE`] along some direction. A shape on a
/// revolute joint keeps its extent along the joint axis $a$: the interval
/// $p\cdot a + c\cdot a_c \pm h(a_c)$ ($p$ the anchor in the parent's frame, $c$ the shape's
/// centre from the child's anchor, $a_c$ the axis in the child's and $h$ the shape's
/// half width); along any other direction its volume is bounded by the sphere of radius
/// $\lvert c\rvert + h_{max}$ about the anchor. The directions tried are the two joint axes and
/// the line between the anchors. (The wheels of a robot, coaxial or in a row, never
/// meet; the CPU finds no contact between them either, and the device needs no narrow
/// phase for the pair.)
fn kinematically_apart(model: &Model, (a, ka): (usize, usize), (b, kb): (usize, usize)) -> bool {
    /// A shape's swept volume: anchor in the parent's frame, the joint axis (parent
    /// frame) with the shape's interval along it relative to the anchor, and the radius
    /// of the bounding sphere about the anchor.
    struct Swept {
        anchor: Vector3<f64>,
        axis: Option<(Vector3<f64>, f64, f64)>,
        reach: f64,
    }
    let swept = |body: usize, k: usize| -> Option<(Option<BodyId>, Swept)> {
        let joint = model.joints().iter().find(|j| j.child.0 == body)?;
        let desc = &model.bodies()[body].shapes[k];
        let Geometry::Solid(shape) = desc.geometry else {
            return None;
        };
        let frames = &joint.joint.frames;
        let pose = shape_pose(&model.bodies()[body], desc);
        let c = pose.translation.vector - frames.child.translation.vector;
        let extent = match shape {
            Shape::Sphere { radius } => radius,
            Shape::Box { half_extents: e } => e.norm(),
            Shape::Capsule {
                radius,
                half_length,
            } => radius + half_length,
            Shape::Cylinder {
                radius,
                half_length,
            } => radius.hypot(half_length),
        };
        let axis = match joint.joint.kind {
            JointKind::Revolute { axis } => {
                let a_c = frames.child.rotation * axis.vector();
                let h = half_width(&shape, &(pose.rotation.inverse() * a_c));
                let mid = c.dot(&a_c);
                Some((frames.parent.rotation * axis.vector(), mid - h, mid + h))
            }
            JointKind::Ball | JointKind::Fixed => None,
            JointKind::Prismatic { .. } | JointKind::Free => return None,
        };
        Some((
            joint.parent,
            Swept {
                anchor: frames.parent.translation.vector,
                axis,
                reach: c.norm() + extent,
            },
        ))
    };
    let (Some((pa, sa)), Some((pb, sb))) = (swept(a, ka), swept(b, kb)) else {
        return false;
    };
    if pa != pb {
        return false;
    }
    let interval = |s: &Swept, d: &Vector3<f64>| {
        let at = s.anchor.dot(d);
        match s.axis {
            Some((axis, lo, hi)) if axis.dot(d) > 1.0 - 1e-9 => (at + lo, at + hi),
            Some((axis, lo, hi)) if axis.dot(d) < -1.0 + 1e-9 => (at - hi, at - lo),
            _ => (at - s.reach, at + s.reach),
        }
    };
    let between = sb.anchor - sa.anchor;
    let mut directions: Vec<Vector3<f64>> =
        [sa.axis, sb.axis].iter().flatten().map(|x| x.0).collect();
    if between.norm() > 0.0 {
        directions.push(between.normalize());
    }
    directions.iter().any(|d| {
        let ((lo_a, hi_a), (lo_b, hi_b)) = (interval(&sa, d), interval(&sb, d));
        lo_b - hi_a > APART_CLEARANCE || lo_a - hi_b > APART_CLEARANCE
    })
}

/// Whether a drive has a force limit the kernel would have to apply: any finite limit
/// but a force drive's (it runs at zero force, `GpuBackend::advance` refuses others,
/// and a limit never binds there).
pub(crate) fn limit_unsupported(drive: &axion_constraints::drive::Drive) -> bool {
    drive.max_force().is_finite() && drive.mode() != DriveMode::Force
}

/// Refuses models the kernel cannot run (see [`contact_pairs`]).
pub(crate) fn check_supported(model: &Model) -> Result<(), GpuError> {
    if let Some(f) = model.bodies().iter().find(|b| b.mass.is_massless()) {
        return Err(GpuError::UnsupportedModel {
            reason: format!(
                "body {:?} is a massless frame of a compound joint, which the GPU backend does not implement yet; use the CPU backend",
                f.name
            ),
        });
    }
    if let Some(j) = model.joints().iter().find(|j| j.joint.baumgarte.is_some()) {
        return Err(GpuError::UnsupportedModel {
            reason: format!(
                "joint {:?} is velocity-level (Baumgarte), which the GPU backend does not implement; its joints are position-level: use the CPU backend",
                j.name
            ),
        });
    }
    if let Some(d) = model
        .drives()
        .iter()
        .find(|d| limit_unsupported(&d.initial))
    {
        return Err(GpuError::UnsupportedModel {
            reason: format!(
                "the drive of joint {:?} has a force limit (an effort rating), which the GPU backend does not implement yet; use the CPU backend",
                model.joints()[d.joint.0].name
            ),
        });
    }
    contact_pairs(model).map(|_| ())
}

/// A shape's pose relative to its body's centre of mass.
fn shape_pose(body: &Body, shape: &ShapeDesc) -> Isometry3<f64> {
    Translation3::from(-body.com) * shape.local_pose
}

/// Packs a contact pair. `model_u`: bodies a and b, the two shape kinds, anisotropy
/// (0 none, 1 on a, 2 on b), first slot, slots, 0. `model_f`: for a then b the shape's
/// pose relative to its body's centre of mass (7) and its parameters (3, see
/// [`shape_code`]);
/// the combined coefficients $(\mu_1, \mu_2)$, the anisotropy axis in its body's frame
/// (3) and the restitution (the larger of the two, as on the CPU), padded to
/// [`PAIR_F`]. Materials combine as on the CPU
/// ([`Material::combined_friction`](axion_model::Material::combined_friction)); without
/// anisotropy $\mu_1 = \mu_2$.
fn push_pair(
    model: &Model,
    pair: &Pair,
    first_slot: usize,
    model_u: &mut Vec<u32>,
    model_f: &mut Vec<f32>,
) {
    let (body_a, body_b) = (&model.bodies()[pair.a], &model.bodies()[pair.b]);
    let (sa, sb) = (&body_a.shapes[pair.shape_a], &body_b.shapes[pair.shape_b]);
    let (mu, aniso) = sa.material.combined_friction(&sb.material);
    let (side, mu_perp, axis) = match aniso {
        Some((side, an)) => (side as u32 + 1, an.friction_perp, an.axis),
        None => (0, mu, Vector3::zeros()),
    };
    let words = [
        pair.a as u32,
        pair.b as u32,
        pair.kinds.0,
        pair.kinds.1,
        side,
        first_slot as u32,
        pair.slots() as u32,
        0,
    ];
    debug_assert_eq!(words.len(), PAIR_U);
    model_u.extend(words);
    let start = model_f.len();
    for (body, shape) in [(body_a, sa), (body_b, sb)] {
        model_f.extend(
            pose_coords(&shape_pose(body, shape))
                .iter()
                .map(|&x| x as f32),
        );
        let (_, parameters) =
            shape_code(&shape.geometry).expect("contact_pairs keeps coded shapes");
        model_f.extend(parameters.map(|x| x as f32));
    }
    model_f.extend([mu as f32, mu_perp as f32]);
    model_f.extend(axis.iter().map(|&x| x as f32));
    model_f.push(sa.material.restitution.max(sb.material.restitution) as f32);
    model_f.resize(start + PAIR_F, 0.0);
}

/// Packs bodies, joints (those with rows), drives, row bodies and the body → rows
/// adjacency.
pub(crate) fn pack(model: &Model) -> Result<Packed, GpuError> {
    let pairs = contact_pairs(model)?;
    let mut model_f = Vec::new();
    for body in model.bodies() {
        if body.is_dynamic() {
            model_f.push(body.mass.mass() as f32);
            model_f.push(body.mass.inv_mass() as f32);
            push_matrix(&mut model_f, body.mass.inertia());
            push_matrix(&mut model_f, body.mass.inv_inertia());
            model_f.push(radius_of_gyration(body) as f32);
            model_f.push(1.0);
        } else {
            model_f.extend([0.0; 22]);
        }
        model_f.extend([0.0; BODY_F - 22]);
    }
    let joint_base_f = model_f.len();
    let mut model_u = Vec::new();
    let mut gpu_joint = vec![None; model.joints().len()];
    let mut joints = 0;
    let mut row_bodies = Vec::new();
    let mut owners = Vec::new();
    for (ji, mj) in model.joints().iter().enumerate() {
        let j = &mj.joint;
        let (kind, axis) = match j.kind {
            JointKind::Revolute { axis } => (REVOLUTE, axis.vector()),
            JointKind::Prismatic { axis } => (PRISMATIC, axis.vector()),
            JointKind::Ball => (BALL, Vector3::zeros()),
            JointKind::Fixed => (FIXED, Vector3::zeros()),
            JointKind::Free => continue,
        };
        let (b1, b2) = if axis == Vector3::zeros() {
            (Vector3::zeros(), Vector3::zeros())
        } else {
            orthobasis(&axis)
        };
        for frame in [&j.frames.parent, &j.frames.child] {
            model_f.extend(pose_coords(frame).iter().map(|&x| x as f32));
        }
        for v in [axis, b1, b2] {
            model_f.extend(v.iter().map(|&x| x as f32));
        }
        model_f.push(j.compliance as f32);
        let parent = mj.parent.map_or(NONE, |p| p.0 as u32);
        model_u.extend([kind, parent, mj.child.0 as u32, mj.first_row as u32]);
        model_u.extend([0; JOINT_U - 4]);
        for _ in 0..j.row_count() {
            row_bodies.push((parent, mj.child.0 as u32));
            owners.push(RowOwner::Joint(ji));
        }
        gpu_joint[ji] = Some(joints as u32);
        joints += 1;
    }
    let drive_base_u = model_u.len();
    for d in model.drives() {
        let mj = &model.joints()[d.joint.0];
        let index = gpu_joint[d.joint.0].ok_or_else(|| GpuError::UnsupportedModel {
            reason: format!("drive on joint '{}' which has no rows", mj.name),
        })?;
        let coordinate = match d.coordinate {
            CoordinateKind::Angle => ANGLE,
            CoordinateKind::Displacement => DISPLACEMENT,
        };
        model_u.extend([index, coordinate, 0, 0]);
        debug_assert_eq!(DRIVE_U, 4);
        row_bodies.push((mj.parent.map_or(NONE, |p| p.0 as u32), mj.child.0 as u32));
        owners.push(RowOwner::Joint(d.joint.0));
    }
    let pair_base_u = model_u.len();
    let pair_base_f = model_f.len();
    let mut slot_pairs = Vec::new();
    for (p, pair) in pairs.iter().enumerate() {
        push_pair(model, pair, slot_pairs.len(), &mut model_u, &mut model_f);
        for _ in 0..pair.slots() {
            owners.extend([RowOwner::Slot(slot_pairs.len()); 3]);
            slot_pairs.push(p as u32);
            for _ in 0..3 {
                row_bodies.push((pair.a as u32, pair.b as u32));
            }
        }
    }
    model_u.extend(&slot_pairs);
    // Joint limits: one slot per finite bound of an enforced range (model_u: joint,
    // coordinate ANGLE / DISPLACEMENT, side 0 lower / 1 upper; model_f: the bound
    // measured from the range's reference, the reference).
    let limit_base_u = model_u.len();
    let limit_base_f = model_f.len();
    let mut limits = 0;
    for (ji, mj) in model.joints().iter().enumerate() {
        let (Some(range), Some(index)) = (mj.range(), gpu_joint[ji]) else {
            continue;
        };
        let coordinate = match range.coordinate {
            CoordinateKind::Angle => ANGLE,
            CoordinateKind::Displacement => DISPLACEMENT,
        };
        for (side, bound) in [(0u32, range.lower), (1, range.upper)] {
            if !bound.is_finite() {
                continue;
            }
            model_u.extend([index, coordinate, side, 0]);
            model_f.extend([(bound - range.reference()) as f32, range.reference() as f32]);
            row_bodies.push((mj.parent.map_or(NONE, |p| p.0 as u32), mj.child.0 as u32));
            owners.push(RowOwner::Joint(ji));
            limits += 1;
        }
    }
    debug_assert_eq!(model_u.len(), limit_base_u + LIMIT_U * limits);
    let rowbody_base_u = model_u.len();
    for &(a, b) in &row_bodies {
        model_u.extend([a, b]);
    }
    // Body → rows adjacency (CSR), rows in increasing order: a fixed gather order.
    let bodies = model.bodies().len();
    let mut adjacency: Vec<Vec<(u32, u32)>> = vec![Vec::new(); bodies];
    for (i, &(a, b)) in row_bodies.iter().enumerate() {
        for (side, body) in [(0u32, a), (1, b)] {
            if body != NONE && model.bodies()[body as usize].is_dynamic() {
                adjacency[body as usize].push((i as u32, side));
            }
        }
    }
    let adj_offset_base_u = model_u.len();
    let mut offset = 0u32;
    for list in &adjacency {
        model_u.push(offset);
        offset += list.len() as u32;
    }
    model_u.push(offset);
    let adj_base_u = model_u.len();
    for list in &adjacency {
        for &(i, side) in list {
            model_u.extend([i, side]);
        }
    }
    debug_assert_eq!(
        model_f.len(),
        bodies * BODY_F + joints * JOINT_F + pairs.len() * PAIR_F + limits * LIMIT_F
    );
    let tree = TreePlan::new(model, &row_bodies, &owners);
    let joint_bodies: Vec<(u32, u32)> = model
        .joints()
        .iter()
        .filter(|mj| !matches!(mj.joint.kind, JointKind::Free))
        .map(|mj| (mj.parent.map_or(NONE, |p| p.0 as u32), mj.child.0 as u32))
        .collect();
    let tree_base_u = tree.pack(&joint_bodies, &mut model_u);
    let g = model.gravity();
    Ok(Packed {
        model_f,
        model_u,
        bodies,
        joints,
        drives: model.drives().len(),
        rows: row_bodies.len(),
        joint_rows: model.joint_row_count(),
        drive_base_u,
        rowbody_base_u,
        adj_offset_base_u,
        adj_base_u,
        joint_base_f,
        pairs: pairs.len(),
        slots: slot_pairs.len(),
        pair_base_u,
        pair_base_f,
        limits,
        limit_base_u,
        limit_base_f,
        gravity: [g.x as f32, g.y as f32, g.z as f32],
        tree,
        tree_base_u,
    })
}

/// Interleaves per-world slot vectors of the worlds `worlds` (one chunk of a batch):
/// element `slot` of world `worlds.start + k` at `slot * worlds.len() + k`.
pub(crate) fn interleave(
    worlds: Range<usize>,
    slots: usize,
    mut fill: impl FnMut(usize, &mut Vec<f32>),
) -> Vec<f32> {
    let n = worlds.len();
    let mut out = vec![0.0f32; n * slots];
    let mut one = Vec::with_capacity(slots);
    for (k, w) in worlds.enumerate() {
        one.clear();
        fill(w, &mut one);
        debug_assert_eq!(one.len(), slots);
        for (s, &x) in one.iter().enumerate() {
            out[s * n + k] = x;
        }
    }
    out
}

/// The state buffer's contents for the worlds `worlds` of `state`: per world $q$, $u$,
/// then joint and drive forces, and zero contact forces (an uploaded state starts
/// without warm-started contacts).
pub(crate) fn pack_state(p: &Packed, state: &State, worlds: Range<usize>) -> Vec<f32> {
    interleave(worlds, p.state_slots(), |w, out| {
        for q in state.world_poses(w) {
            out.extend(pose_coords(q).iter().map(|&x| x as f32));
        }
        for u in state.world_velocities(w) {
            out.extend(u.iter().map(|&x| x as f32));
        }
        out.extend(state.joint_forces(w).iter().map(|&x| x as f32));
        out.extend(state.drive_forces(w).iter().map(|&x| x as f32));
        out.resize(p.state_slots(), 0.0);
    })
}

/// Writes a state buffer's contents, the worlds `worlds`, back into `state`.
pub(crate) fn unpack_state(p: &Packed, data: &[f32], state: &mut State, worlds: Range<usize>) {
    let n = worlds.len();
    for (k, w) in worlds.enumerate() {
        let at = |s: usize| f64::from(data[s * n + k]);
        let world = state.world_mut(w);
        for (b, q) in world.poses.iter_mut().enumerate() {
            let c: [f64; 7] = std::array::from_fn(|i| at(7 * b + i));
            *q = axion_math::Pose::from_parts(
                nalgebra::Translation3::new(c[0], c[1], c[2]),
                nalgebra::UnitQuaternion::new_normalize(nalgebra::Quaternion::new(
                    c[6], c[3], c[4], c[5],
                )),
            );
        }
        for (b, u) in world.velocities.iter_mut().enumerate() {
            for i in 0..6 {
                u[i] = at(7 * p.bodies + 6 * b + i);
            }
        }
        let base = 13 * p.bodies;
        for (i, l) in world.joint_forces.iter_mut().enumerate() {
            *l = at(base + i);
        }
        for (d, l) in world.drive_forces.iter_mut().enumerate() {
            *l = at(base + p.joint_rows + d);
        }
    }
}

/// The control buffer's contents for the worlds `worlds` of `control`: per world the
/// wrenches, then per drive (mode, target, target velocity, $k_e$, $k_d$), the mode one
/// of `MODE_POSITION`, `MODE_VELOCITY`, `MODE_FORCE` (zero: a row $\lambda = 0$ that
/// moves nothing) and `MODE_ARMATURE` ($k_e$ = the armature) as a float.
pub(crate) fn pack_control(p: &Packed, control: &Control, worlds: Range<usize>) -> Vec<f32> {
    interleave(worlds, p.control_slots(), |w, out| {
        for f in control.world_wrenches(w) {
            out.extend(f.iter().map(|&x| x as f32));
        }
        for d in control.world_drives(w) {
            let (mode, target, velocity) = match d.mode() {
                DriveMode::Position {
                    target,
                    target_velocity,
                } => (MODE_POSITION, target, target_velocity),
                DriveMode::Velocity { target_velocity } => (MODE_VELOCITY, 0.0, target_velocity),
                // `GpuBackend::advance` refuses a force that is not zero.
                DriveMode::Force => (MODE_FORCE, 0.0, 0.0),
                DriveMode::Armature => (MODE_ARMATURE, 0.0, 0.0),
            };
            out.extend([
                mode as f32,
                target as f32,
                velocity as f32,
                d.ke() as f32,
                d.kd() as f32,
            ]);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinematics::validate_wgsl;

    #[test]
    fn step_is_valid_wgsl_with_the_rust_layout() {
        let module = validate_wgsl(&step_source());
        for name in [
            "step_begin",
            "step_factor",
            "step_direction",
            "step_direction_more",
            "step_update",
            "step_search",
            "step_finish",
            "probe_rows",
        ] {
            let entry = module
                .entry_points
                .iter()
                .find(|e| e.name == name)
                .unwrap_or_else(|| panic!("entry point `{name}`"));
            assert_eq!(entry.workgroup_size, [WORKGROUP, 1, 1]);
        }
        // The uniform block has the Rust struct's size and members: the same names at
        // the same offsets, in the same order.
        let params = module
            .global_variables
            .iter()
            .find(|(_, g)| g.name.as_deref() == Some("P"))
            .expect("uniform P")
            .1;
        let ty = &module.types[params.ty].inner;
        assert_eq!(
            ty.size(module.to_ctx()) as usize,
            std::mem::size_of::<Params>()
        );
        let naga::TypeInner::Struct { members, .. } = ty else {
            panic!("P is not a struct");
        };
        let wgsl: Vec<(&str, usize)> = members
            .iter()
            .map(|m| (m.name.as_deref().unwrap_or("?"), m.offset as usize))
            .collect();
        assert_eq!(wgsl, PARAMS_MEMBERS);
    }

    #[test]
    fn packing_counts_rows_and_adjacency() {
        let model = axion::scenes::chain(axion::scenes::ChainOptions {
            links: 3,
            ..Default::default()
        })
        .unwrap();
        let p = pack(&model).unwrap();
        assert_eq!((p.bodies, p.joints, p.rows, p.joint_rows), (3, 3, 15, 15));
        // Each link is the child of one joint and (except the last) the parent of the
        // next: 5 + 10 + 10 adjacency entries.
        let offsets = &p.model_u[p.adj_offset_base_u..p.adj_offset_base_u + 4];
        assert_eq!(offsets, &[0, 10, 20, 25]);
    }
}
