//! The Newton system reduced to the bodies' velocities.
//!
//! The Newton matrix has a body block $A$ ($6n_d$ velocities) and one row per
//! constraint; rows couple only within their group (a contact's normal and friction
//! rows, or the rows of one joint), so the row block $D$ is block diagonal:
//! $$\begin{bmatrix} A & -hF^\top \\ G & D \end{bmatrix}
//!   \begin{bmatrix}\Delta u \\ \Delta\lambda\end{bmatrix} =
//!   \begin{bmatrix} b_u \\ b_\lambda\end{bmatrix}.$$
//! Each group $g$ is eliminated on its own,
//! $\Delta\lambda_g = D_g^{-1}(b_g - G_g\Delta u)$, which leaves the body system
//! $$\Big(A + h\sum_g F_g^\top D_g^{-1} G_g\Big)\Delta u = b_u + h\sum_g F_g^\top D_g^{-1} b_g,$$
//! whose blocks couple only bodies that share a group or a joint. Its size is the
//! number of velocities and its entries grow linearly with the groups, however many
//! contacts press the same bodies together (a pile of overlapping bodies fills a
//! sparse LU of the whole system in: every contact is coupled to every other of its
//! bodies).
//!
//! $D_g$ has no zero pivot: every row carries the Newton matrix's regularisation
//! $\delta h w_i > 0$, and Fischer–Burmeister and friction rows have
//! $\partial\phi/\partial\lambda \ge 0$ with $\partial\phi/\partial\lambda$ and
//! $\partial\phi/\partial u$ never both zero. For a hard row (an active contact, a
//! joint) $D_g$ is that tiny regularisation and $h F_g^\top D_g^{-1} G_g$ a stiff
//! penalty-like block: its rounding is removed by iterative refinement on
//! the unreduced system ([`ReducedLu::solve`]).
//!
//! Where the groups joining two dynamic bodies link them into a forest,
//! [`crate::tree`] keeps those groups' rows as unknowns and eliminates along the
//! tree instead; only the groups on one body are reduced as above.

use std::collections::HashMap;

use faer::sparse::Pair;
use nalgebra::{Matrix6, SMatrix, Vector6};

use crate::sparse::{SolveFailure, SparseLu};
use crate::tree::{Tree, inverse_pivoted};

/// Most steps of iterative refinement per solve ([`ReducedLu::solve`]).
pub const MAX_REFINEMENTS: usize = 4;

/// Residual of the unreduced system, relative to its right-hand side, below which
/// iterative refinement stops ([`ReducedLu::solve`]). One refinement step usually takes
/// the reduced solve's $10^{-8}$–$10^{-6}$ to $10^{-15}$–$10^{-13}$; a second one from there
/// gains nothing a Newton step can use (it changed the direction by $10^{-16}$ of its size
/// on the chain of 50 links) and costs another solve.
pub const REFINED: f64 = 1e-12;

/// A solve along the tree ([`crate::tree`]) whose iterative refinement ends — stalled,
/// or after [`MAX_REFINEMENTS`] — with the unreduced system's residual above its
/// tolerance and above this share of its right-hand side has lost the solution: the
/// system is solved again by the sparse LU, which pivots across the whole system
/// ([`ReducedLu::solve_to`]). Hard rows nearly redundant with each other, reduced onto
/// one body, can cancel the digits of a link's block: one drawn system
/// (`tree_solve_is_backward_stable_with_redundant_rows`, 19 bodies) stalled at 147 times
/// its right-hand side where the sparse LU's refinement reached 4·10⁻⁶. Over 48 limp
/// drops at h = 0.01 each (docs/benchmarks.md, first sitting of 2026-11-29) the
/// aliengo's solves lost 33 systems (first residuals up to 9·10⁵ times the right-hand
/// side, each correction gaining about a hundredfold), the a1's 1, and humanoid.urdf's,
/// laikago's and mini_cheetah's none; the 252 other refinements of the a1 that stalled
/// did so below 10⁻⁷ of the right-hand side, at the rounding of hard rows.
pub const LOST: f64 = 1e-6;

/// Most rows in one group.
pub const GROUP_ROWS: usize = 6;

/// $G_g$ or $hF_g$ of one group: a row per constraint row (unused rows zero), six
/// columns per body slot (the rows' parent, then their child).
pub type GroupJacobian = SMatrix<f64, GROUP_ROWS, 12>;

/// Which rows form a group and which dynamic bodies (indices among the dynamic
/// bodies) they act on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowGroup {
    pub first: usize,
    pub len: usize,
    pub bodies: [Option<usize>; 2],
}

impl RowGroup {
    /// Adds a unit of `len` rows from row `first` on `bodies` (rows that must stay
    /// together: one, or a contact's three) to `groups`: to the last group if
    /// `same_bodies` says its rows act on the same two bodies and it stays within
    /// [`GROUP_ROWS`] rows, else as a group of its own. Returns the unit's group.
    pub fn add_unit(
        groups: &mut Vec<RowGroup>,
        first: usize,
        len: usize,
        bodies: [Option<usize>; 2],
        same_bodies: impl FnOnce(&RowGroup) -> bool,
    ) -> usize {
        match groups.last_mut() {
            Some(g) if g.len + len <= GROUP_ROWS && same_bodies(g) => g.len += len,
            _ => groups.push(RowGroup { first, len, bodies }),
        }
        groups.len() - 1
    }
}

/// One group's part of the Newton system (see the module doc).
pub struct GroupSystem {
    /// $G_g$.
    pub jacobian: GroupJacobian,
    /// $hF_g$.
    pub force: GroupJacobian,
    /// $D_g$, the identity on unused rows.
    pub diagonal: Matrix6<f64>,
}

impl GroupSystem {
    /// A group without rows yet: $G_g = hF_g = 0$, $D_g = I$ (unused rows stay so).
    pub fn new() -> Self {
        Self {
            jacobian: GroupJacobian::zeros(),
            force: GroupJacobian::zeros(),
            diagonal: Matrix6::identity(),
        }
    }

    /// Sets row `i`'s entries for body `slot` (0 the parent, 1 the child): its
    /// Jacobian and $h$ times its force direction.
    pub fn set_row(
        &mut self,
        i: usize,
        slot: usize,
        jacobian: &Vector6<f64>,
        h_force: &Vector6<f64>,
    ) {
        self.jacobian
            .fixed_view_mut::<1, 6>(i, 6 * slot)
            .copy_from(&jacobian.transpose());
        self.force
            .fixed_view_mut::<1, 6>(i, 6 * slot)
            .copy_from(&h_force.transpose());
    }
}

impl GroupSystem {
    /// $G_g x$ for the bodies' entries `x`: the Jacobian times both slots' six entries
    /// (zero for an absent slot), or times the one slot's alone for a group on one body
    /// (a contact with static ground) — the same sums, as the other slot's products
    /// are exact zeros, at half the work.
    fn times(&self, bodies: [Option<usize>; 2], x: &[f64]) -> Vector6<f64> {
        match bodies {
            [Some(k), None] => self.jacobian.fixed_columns::<6>(0) * block(x, k),
            [None, Some(k)] => self.jacobian.fixed_columns::<6>(6) * block(x, k),
            _ => self.jacobian * slots(x, bodies),
        }
    }
}

impl Default for GroupSystem {
    fn default() -> Self {
        Self::new()
    }
}

/// The body block $A$ of the Newton matrix: one block per dynamic body and the
/// couplings of jointed bodies (geometric stiffness), `(row body, column body, block)`.
pub struct BodyMatrix {
    pub diagonal: Vec<Matrix6<f64>>,
    pub cross: Vec<(usize, usize, Matrix6<f64>)>,
}

impl BodyMatrix {
    /// $y \mathrel{-}= A x$.
    fn subtract_product(&self, x: &[f64], y: &mut [f64]) {
        for (k, m) in self.diagonal.iter().enumerate() {
            sub_block(y, k, &(m * block(x, k)));
        }
        for (i, j, m) in &self.cross {
            sub_block(y, *i, &(m * block(x, *j)));
        }
    }
}

/// $D_g^{-1}$ of a group of `N` rows by Gauss–Jordan elimination
/// ([`inverse_pivoted`]), its 3 × 3 diagonal blocks one by one where nothing couples
/// them: a group of two contacts on the same bodies ([`RowGroup::add_unit`]), whose
/// friction rows couple only to their own contact's rows. Elimination with partial
/// pivoting never mixes the blocks of a block-diagonal matrix (a zero is never the
/// larger pivot, a zero multiplier updates nothing), so the inverse is the same, bit for
/// bit, as the whole block's, for less than half its work: two 3 × 3 eliminations
/// instead of one over rows of six (docs/benchmarks.md, first sitting of 2026-11-29).
fn group_inverse<const N: usize>(d: &SMatrix<f64, N, N>) -> Option<SMatrix<f64, N, N>> {
    let blocks = N / 3;
    // The size first (known when this is compiled): a smaller group is not scanned.
    if !N.is_multiple_of(3)
        || blocks < 2
        || (0..N).any(|i| (0..N).any(|j| i / 3 != j / 3 && d[(i, j)] != 0.0))
    {
        return inverse_pivoted(d);
    }
    let mut inverse = SMatrix::<f64, N, N>::zeros();
    for b in 0..blocks {
        let block = inverse_pivoted(&d.fixed_view::<3, 3>(3 * b, 3 * b).into_owned())?;
        inverse
            .fixed_view_mut::<3, 3>(3 * b, 3 * b)
            .copy_from(&block);
    }
    Some(inverse)
}

/// A 6 × 6 block per pair of a group's body slots (row slot, column slot).
type SlotBlocks = [[Matrix6<f64>; 2]; 2];

/// A group's row block eliminated onto its bodies: $D_g^{-1}$ and $X_g = D_g^{-1}G_g$
/// (zero in the columns of a slot without a dynamic body), both on the group's rows
/// alone (zero beyond them). $D_g^{-1}$ is inverted outright by Gauss–Jordan elimination
/// with partial pivoting (`crate::tree::inverse_pivoted`), as [`crate::tree`] inverts the
/// Schur complements of links with other than five rows: a solve with it is one small
/// product, and in a full solve its rounding is removed with the rest by iterative
/// refinement ([`ReducedLu::solve`]).
struct Eliminated {
    d_inv: Matrix6<f64>,
    x: GroupJacobian,
}

impl Eliminated {
    /// Eliminates group `g` (its system `s`); also returns its update $hF_g^\top X_g$ of
    /// the body blocks, the 6 × 6 block of each pair of slots (zero where a slot has no
    /// dynamic body).
    fn new(g: &RowGroup, s: &GroupSystem) -> Result<(Self, SlotBlocks), SolveFailure> {
        match g.len {
            1 => Self::sized::<1>(g, s),
            2 => Self::sized::<2>(g, s),
            3 => Self::sized::<3>(g, s),
            4 => Self::sized::<4>(g, s),
            5 => Self::sized::<5>(g, s),
            _ => Self::sized::<GROUP_ROWS>(g, s),
        }
    }

    /// [`Eliminated::new`] for a group of `N` rows: its blocks' first `N` rows, in
    /// matrices of that size (a contact's three rows, not six with identity padding).
    fn sized<const N: usize>(
        g: &RowGroup,
        s: &GroupSystem,
    ) -> Result<(Self, SlotBlocks), SolveFailure> {
        let d_inv = group_inverse(&s.diagonal.fixed_view::<N, N>(0, 0).into_owned())
            .ok_or(SolveFailure::Singular)?;
        let mut x = GroupJacobian::zeros();
        for (i, bi) in g.bodies.iter().enumerate() {
            if bi.is_some() {
                x.fixed_view_mut::<N, 6>(0, 6 * i)
                    .copy_from(&(d_inv * s.jacobian.fixed_view::<N, 6>(0, 6 * i)));
            }
        }
        let mut update = [[Matrix6::zeros(); 2]; 2];
        for (i, bi) in g.bodies.iter().enumerate() {
            for (j, bj) in g.bodies.iter().enumerate() {
                if bi.is_some() && bj.is_some() {
                    update[i][j] = s.force.fixed_view::<N, 6>(0, 6 * i).transpose()
                        * x.fixed_view::<N, 6>(0, 6 * j);
                }
            }
        }
        let mut padded = Matrix6::zeros();
        padded.fixed_view_mut::<N, N>(0, 0).copy_from(&d_inv);
        Ok((Self { d_inv: padded, x }, update))
    }

    /// First half of a solve: $y_g = D_g^{-1}b_g$, and $hF_g^\top y_g$ added to the
    /// bodies' right-hand side `du`.
    fn forward(
        &self,
        force: &GroupJacobian,
        g: &RowGroup,
        b: &Vector6<f64>,
        du: &mut [f64],
    ) -> Vector6<f64> {
        let y = self.d_inv * b;
        add_slots(du, g.bodies, &force.tr_mul(&y));
        y
    }

    /// Second half, once $\Delta u$ is known: $\Delta\lambda_g = y_g - X_g\Delta u$.
    fn back(&self, y: &Vector6<f64>, g: &RowGroup, du: &[f64]) -> Vector6<f64> {
        y - self.x * slots(du, g.bodies)
    }
}

/// The body system's block pattern and its sparse LU.
struct SparseBodies {
    lu: SparseLu,
    /// (row body, column body) of every stored block, in value order; the bodies'
    /// diagonal blocks first.
    blocks: Vec<(usize, usize)>,
    /// Per group, the stored block of each (slot, slot) pair.
    group_blocks: Vec<[[Option<usize>; 2]; 2]>,
    /// The stored block of each cross coupling (in the order given to [`ReducedLu::new`]).
    cross_blocks: Vec<usize>,
}

impl SparseBodies {
    fn new(nd: usize, groups: &[RowGroup], cross: &[(usize, usize)]) -> Self {
        let mut blocks: Vec<(usize, usize)> = (0..nd).map(|k| (k, k)).collect();
        let mut index: HashMap<(usize, usize), usize> =
            blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let mut block_of = |pair: (usize, usize)| {
            *index.entry(pair).or_insert_with(|| {
                blocks.push(pair);
                blocks.len() - 1
            })
        };
        let cross_blocks = cross.iter().map(|&p| block_of(p)).collect();
        let group_blocks = groups
            .iter()
            .map(|g| {
                g.bodies
                    .map(|bi| g.bodies.map(|bj| Some(block_of((bi?, bj?)))))
            })
            .collect();
        let mut pattern = Vec::with_capacity(36 * blocks.len());
        for &(bi, bj) in &blocks {
            for c in 0..6 {
                for r in 0..6 {
                    pattern.push(Pair {
                        row: 6 * bi + r,
                        col: 6 * bj + c,
                    });
                }
            }
        }
        Self {
            lu: SparseLu::new(6 * nd, &pattern),
            blocks,
            group_blocks,
            cross_blocks,
        }
    }
}

/// A group on one body, eliminated onto it before the tree is factorized
/// ([`crate::tree`]). Both its slots, where it has two, move that body, so its blocks
/// are kept summed over them: $D_g^{-1}$, $X_g = D_g^{-1}G_g$ and $hF_g$ as 6 × 6 blocks
/// (the group's rows; zero below them), half the size of the two-slot blocks of
/// [`Eliminated`], and overwritten in place by each factorization.
struct Local {
    group: usize,
    /// Its dynamic body (`None`: rows between static bodies, solved on their own).
    body: Option<usize>,
    d_inv: Matrix6<f64>,
    x: Matrix6<f64>,
    force: Matrix6<f64>,
}

impl Local {
    /// Group `group` (`g`) on its one body, not yet eliminated.
    fn new(group: usize, g: &RowGroup) -> Self {
        Self {
            group,
            body: g.bodies.into_iter().flatten().next(),
            d_inv: Matrix6::identity(),
            x: Matrix6::zeros(),
            force: Matrix6::zeros(),
        }
    }

    /// Eliminates the group (`g`, its system `s`) in place; returns its update
    /// $hF_g^\top X_g$ of its body's block.
    fn eliminate(&mut self, g: &RowGroup, s: &GroupSystem) -> Result<Matrix6<f64>, SolveFailure> {
        match g.len {
            1 => self.sized::<1>(g, s),
            2 => self.sized::<2>(g, s),
            3 => self.sized::<3>(g, s),
            4 => self.sized::<4>(g, s),
            5 => self.sized::<5>(g, s),
            _ => self.sized::<GROUP_ROWS>(g, s),
        }
    }

    /// [`Local::eliminate`] for a group of `N` rows, in matrices of that size.
    fn sized<const N: usize>(
        &mut self,
        g: &RowGroup,
        s: &GroupSystem,
    ) -> Result<Matrix6<f64>, SolveFailure> {
        let d_inv = group_inverse(&s.diagonal.fixed_view::<N, N>(0, 0).into_owned())
            .ok_or(SolveFailure::Singular)?;
        let (mut jacobian, mut force) = (SMatrix::<f64, N, 6>::zeros(), SMatrix::zeros());
        for (i, _) in g.bodies.iter().enumerate().filter(|(_, b)| b.is_some()) {
            jacobian += s.jacobian.fixed_view::<N, 6>(0, 6 * i);
            force += s.force.fixed_view::<N, 6>(0, 6 * i);
        }
        let x = d_inv * jacobian;
        for (block, part) in [(&mut self.x, x), (&mut self.force, force)] {
            block.fill(0.0);
            block.fixed_rows_mut::<N>(0).copy_from(&part);
        }
        self.d_inv.fill(0.0);
        self.d_inv.fixed_view_mut::<N, N>(0, 0).copy_from(&d_inv);
        Ok(force.transpose() * x)
    }

    /// First half of a solve: $y_g = D_g^{-1}b_g$, and $hF_g^\top y_g$ added to the
    /// body's right-hand side in `du`.
    fn forward(&self, b: &Vector6<f64>, du: &mut [f64]) -> Vector6<f64> {
        let y = self.d_inv * b;
        if let Some(k) = self.body {
            sub_block(du, k, &(-self.force.tr_mul(&y)));
        }
        y
    }

    /// Second half, once $\Delta u$ is known: $\Delta\lambda_g = y_g - X_g\Delta u$.
    fn back(&self, y: &Vector6<f64>, du: &[f64]) -> Vector6<f64> {
        self.body.map_or(*y, |k| y - self.x * block(du, k))
    }
}

/// The tree and the factors of its last factorization.
struct TreeBodies {
    tree: Tree,
    local: Vec<Local>,
    /// Whether `tree` and `local` hold a factorization.
    factorized: bool,
    /// The sparse LU of the same pattern, built the first time a solve along the tree
    /// loses its solution ([`LOST`]).
    fallback: Option<Box<SparseBodies>>,
    /// Workspaces, kept between solves: the body blocks with the local groups eliminated
    /// onto them, the local groups' $y_g$, the bodies' right-hand sides.
    diagonal: Vec<Matrix6<f64>>,
    ys: Vec<Vector6<f64>>,
    r_u: Vec<Vector6<f64>>,
}

impl TreeBodies {
    /// One solve with the last factors (see [`crate::tree`]): the local groups'
    /// right-hand sides reduced onto their bodies, the tree solved, their $\Delta\lambda_g$
    /// recovered.
    fn solve(
        &mut self,
        groups: &[RowGroup],
        b_u: &[f64],
        b_g: &[Vector6<f64>],
    ) -> Result<(Vec<f64>, Vec<Vector6<f64>>), SolveFailure> {
        let mut du = b_u.to_vec();
        self.ys.clear();
        for l in &self.local {
            self.ys.push(l.forward(&b_g[l.group], &mut du));
        }
        self.r_u.clear();
        self.r_u.extend((0..du.len() / 6).map(|k| block(&du, k)));
        let mut dl = vec![Vector6::zeros(); groups.len()];
        self.tree.solve(&mut self.r_u, groups, b_g, &mut dl)?;
        for (d, r) in du.chunks_exact_mut(6).zip(&self.r_u) {
            d.copy_from_slice(r.as_slice());
        }
        for (l, y) in self.local.iter().zip(&self.ys) {
            dl[l.group] = l.back(y, &du);
        }
        Ok((du, dl))
    }
}

/// How the body system is factorized: along the bodies' forest, or by sparse LU.
enum Structure {
    Tree(Box<TreeBodies>),
    Sparse(Box<SparseBodies>),
}

/// The Newton system's factorization for one row pattern, reused while the groups'
/// bodies stay the same: along the tree ([`crate::tree`]) where the bodies form a
/// forest, else every group eliminated onto the bodies and the body system factorized
/// by sparse LU (see the module doc).
pub struct ReducedLu {
    structure: Structure,
}

impl ReducedLu {
    /// The factorization for `nd` dynamic bodies (`massless` says which are massless
    /// frames), these groups and these body couplings; along the tree if `along_tree`
    /// and the bodies form a forest.
    pub fn new(
        nd: usize,
        groups: &[RowGroup],
        cross: &[(usize, usize)],
        massless: &[bool],
        along_tree: bool,
    ) -> Self {
        let tree = along_tree
            .then(|| Tree::new(nd, groups, cross, massless))
            .flatten();
        Self {
            structure: match tree {
                Some(tree) => Structure::Tree(Box::new(TreeBodies {
                    local: (tree.local_groups().iter())
                        .map(|&g| Local::new(g, &groups[g]))
                        .collect(),
                    tree,
                    factorized: false,
                    fallback: None,
                    diagonal: Vec::with_capacity(nd),
                    ys: Vec::new(),
                    r_u: Vec::with_capacity(nd),
                })),
                None => Structure::Sparse(Box::new(SparseBodies::new(nd, groups, cross))),
            },
        }
    }

    /// Whether the system is solved along the bodies' tree.
    pub fn along_tree(&self) -> bool {
        matches!(self.structure, Structure::Tree(_))
    }

    /// Whether the factors of the last [`ReducedLu::solve`] are kept for
    /// [`ReducedLu::solve_again`].
    pub fn keeps_factors(&self) -> bool {
        matches!(&self.structure, Structure::Tree(t) if t.factorized)
    }

    /// Forgets the factors of the last [`ReducedLu::solve`] (kept for
    /// [`ReducedLu::solve_again`]): the analysis is kept, the factors are not this
    /// system's (a factorization taken over from another world).
    pub fn forget_factors(&mut self) {
        if let Structure::Tree(t) = &mut self.structure {
            t.factorized = false;
        }
    }

    /// Solves a Newton system with the factors of the last [`ReducedLu::solve`] (same
    /// groups, new right-hand sides), without refinement: a chord step, for a system
    /// that has barely changed since. `None` where there are no such factors (none yet,
    /// the last factorization failed, or the system is not solved along a tree: faer's
    /// sparse factors are not kept).
    pub fn solve_again(
        &mut self,
        groups: &[RowGroup],
        b_u: &[f64],
        b_g: &[Vector6<f64>],
    ) -> Option<(Vec<f64>, Vec<Vector6<f64>>)> {
        match &mut self.structure {
            Structure::Tree(t) if t.factorized => t.solve(groups, b_u, b_g).ok(),
            _ => None,
        }
    }

    /// Solves the Newton system: returns $\Delta u$ and, per group, $\Delta\lambda_g$
    /// (its first `len` entries are the group's rows). `b_g` holds each group's
    /// right-hand side (zero on unused rows).
    ///
    /// Iterative refinement follows the solve: the residual of the unreduced
    /// system at the solution is solved for with the same factors and added, while it
    /// at least halves and is above [`REFINED`] times the right-hand side (at most
    /// [`MAX_REFINEMENTS`] times; [`ReducedLu::solve_to`] stops at a larger residual).
    /// A correction is taken to contract the residual by
    /// the first residual's relative size $\rho = |r_0|/|b|$ (a heuristic: $\rho$ bounds
    /// the factors' relative error from below, not above); where that predicts
    /// $\rho|r|$ below a tenth of [`REFINED`]$\,|b|$, the refinement ends without
    /// computing the residual again to confirm it. Measured on the chain of 50 links:
    /// first residuals of $10^{-10}$–$10^{-6}$, one correction from any $\rho \le 3\cdot10^{-7}$
    /// landed at $10^{-15}$–$10^{-13}$. The penalty-like blocks of hard rows are about
    /// $1/\delta = 10^{10}$ times the bodies' masses, so the reduced solve alone can leave
    /// relative errors near $\epsilon/\delta \approx 10^{-6}$; refined, the direction is as
    /// accurate as a solve of the unreduced system. One step was not always enough: a
    /// cylinder landing flat on a box then needed more than 30 Newton iterations where
    /// two or more steps (and the unreduced LU) need 12–15. A solve along the tree whose
    /// refinement stalls far above that ([`LOST`]) is done again by the sparse LU, and
    /// its factors are not kept for [`ReducedLu::solve_again`].
    pub fn solve(
        &mut self,
        a: &BodyMatrix,
        groups: &[RowGroup],
        systems: &[GroupSystem],
        b_u: &[f64],
        b_g: &[Vector6<f64>],
    ) -> Result<(Vec<f64>, Vec<Vector6<f64>>), SolveFailure> {
        self.solve_to(a, groups, systems, b_u, b_g, REFINED)
    }

    /// [`ReducedLu::solve`] with the refinement ending where the unreduced system's
    /// residual is below `tolerance` times its right-hand side (or [`REFINED`] times
    /// it, whichever is larger): an inexact Newton direction, for an iterate far from
    /// its solution (`crate::newton`'s `INEXACT_FORCING`).
    pub fn solve_to(
        &mut self,
        a: &BodyMatrix,
        groups: &[RowGroup],
        systems: &[GroupSystem],
        b_u: &[f64],
        b_g: &[Vector6<f64>],
        tolerance: f64,
    ) -> Result<(Vec<f64>, Vec<Vector6<f64>>), SolveFailure> {
        let system = Unreduced {
            a,
            groups,
            systems,
            tolerance: tolerance.max(REFINED),
        };
        match &mut self.structure {
            Structure::Tree(t) => {
                t.factorized = false;
                t.diagonal.clear();
                t.diagonal.extend_from_slice(&a.diagonal);
                for l in &mut t.local {
                    let update = l.eliminate(&groups[l.group], &systems[l.group])?;
                    if let Some(k) = l.body {
                        t.diagonal[k] += update;
                    }
                }
                t.tree.factorize(&mut t.diagonal, a, groups, systems)?;
                let refined = system.refine(b_u, b_g, |b_u, b_g| t.solve(groups, b_u, b_g))?;
                if !refined.lost {
                    t.factorized = true;
                    return Ok((refined.du, refined.dl));
                }
                // The tree's factors are not kept for chord steps: they lost this system.
                let sparse = t.fallback.get_or_insert_with(|| {
                    let cross: Vec<_> = a.cross.iter().map(|&(i, j, _)| (i, j)).collect();
                    Box::new(SparseBodies::new(a.diagonal.len(), groups, &cross))
                });
                sparse.solve(&system, b_u, b_g)
            }
            Structure::Sparse(sparse) => sparse.solve(&system, b_u, b_g),
        }
    }
}

impl SparseBodies {
    /// Solves the Newton system `system` with right-hand sides `b_u`, `b_g`: every group
    /// eliminated onto its bodies, the body system factorized by sparse LU, refined.
    fn solve(
        &mut self,
        system: &Unreduced,
        b_u: &[f64],
        b_g: &[Vector6<f64>],
    ) -> Result<(Vec<f64>, Vec<Vector6<f64>>), SolveFailure> {
        let (a, groups, systems) = (system.a, system.groups, system.systems);
        let mut values = vec![Matrix6::zeros(); self.blocks.len()];
        values[..a.diagonal.len()].copy_from_slice(&a.diagonal);
        for (&k, (_, _, m)) in self.cross_blocks.iter().zip(&a.cross) {
            values[k] += m;
        }
        // Per group: D_g⁻¹, X_g = D_g⁻¹ G_g, and A += hF_gᵀ X_g.
        let mut eliminated = Vec::with_capacity(systems.len());
        for ((g, s), blocks) in groups.iter().zip(systems).zip(&self.group_blocks) {
            let (e, update) = Eliminated::new(g, s)?;
            for (i, row) in blocks.iter().enumerate() {
                for (j, k) in row.iter().enumerate() {
                    if let Some(k) = k {
                        values[*k] += update[i][j];
                    }
                }
            }
            eliminated.push(e);
        }
        let flat: Vec<f64> = values.iter().flat_map(|m| m.iter().copied()).collect();
        self.lu.with_factors(&flat, |solve_bodies| {
            // Δλ_g = D_g⁻¹ b_g − X_g Δu after (A + Σ hF_gᵀX_g) Δu = b_u + Σ hF_gᵀ D_g⁻¹ b_g.
            let refined = system.refine(b_u, b_g, |b_u, b_g| {
                let mut du = b_u.to_vec();
                let mut y = Vec::with_capacity(b_g.len());
                for (((g, s), e), b) in groups.iter().zip(systems).zip(&eliminated).zip(b_g) {
                    y.push(e.forward(&s.force, g, b, &mut du));
                }
                solve_bodies(&mut du)?;
                let dl = y
                    .iter()
                    .zip(&eliminated)
                    .zip(groups)
                    .map(|((yg, e), g)| e.back(yg, g, &du))
                    .collect::<Vec<_>>();
                Ok((du, dl))
            })?;
            Ok((refined.du, refined.dl))
        })
    }
}

/// A refined solution ([`Unreduced::refine`]).
struct Refined {
    du: Vec<f64>,
    dl: Vec<Vector6<f64>>,
    /// Whether the refinement ended (stalled, or after [`MAX_REFINEMENTS`]) with its last
    /// residual above its tolerance and above [`LOST`] times the right-hand side.
    lost: bool,
}

/// The unreduced Newton system, for the residuals of iterative refinement.
struct Unreduced<'a> {
    a: &'a BodyMatrix,
    groups: &'a [RowGroup],
    systems: &'a [GroupSystem],
    /// The residual, relative to the right-hand side, at which the refinement stops:
    /// [`REFINED`] or larger.
    tolerance: f64,
}

impl Unreduced<'_> {
    /// `solve` (one solve with the factors) followed by iterative refinement on this
    /// system down to its tolerance ([`ReducedLu::solve`], [`ReducedLu::solve_to`]).
    fn refine(
        &self,
        b_u: &[f64],
        b_g: &[Vector6<f64>],
        mut solve: impl FnMut(
            &[f64],
            &[Vector6<f64>],
        ) -> Result<(Vec<f64>, Vec<Vector6<f64>>), SolveFailure>,
    ) -> Result<Refined, SolveFailure> {
        let (mut du, mut dl) = solve(b_u, b_g)?;
        let size = |u: &[f64], g: &[Vector6<f64>]| {
            g.iter()
                .map(|v| v.amax())
                .chain(u.iter().map(|x| x.abs()))
                .fold(0.0f64, f64::max)
        };
        let scale = size(b_u, b_g);
        let mut previous = f64::INFINITY;
        // The first residual's relative size: the rate a correction is taken to contract
        // the residual by.
        let mut rate = None;
        let mut lost = false;
        for _ in 0..MAX_REFINEMENTS {
            // Residual of the unreduced system: r_u = b_u − A Δu + Σ hF_gᵀ Δλ_g,
            // r_g = b_g − G_g Δu − D_g Δλ_g.
            let mut r_u = b_u.to_vec();
            self.a.subtract_product(&du, &mut r_u);
            let mut r_g = Vec::with_capacity(self.groups.len());
            for ((g, s), (dlg, b)) in self.groups.iter().zip(self.systems).zip(dl.iter().zip(b_g)) {
                for (i, k) in g.bodies.iter().enumerate() {
                    if let Some(k) = k {
                        let force = s.force.fixed_columns::<6>(6 * i);
                        sub_block(&mut r_u, *k, &(-force.tr_mul(dlg)));
                    }
                }
                r_g.push(b - s.times(g.bodies, &du) - s.diagonal * dlg);
            }
            let r = size(&r_u, &r_g);
            let reached = r <= self.tolerance * scale;
            // Lost unless a correction from here reaches the tolerance after all.
            lost = !reached && r > LOST * scale;
            if reached || r > 0.5 * previous {
                break;
            }
            previous = r;
            let (cu, cl) = solve(&r_u, &r_g)?;
            du.iter_mut().zip(&cu).for_each(|(d, c)| *d += c);
            dl.iter_mut().zip(&cl).for_each(|(d, c)| *d += c);
            // The next residual is taken to be about r·rate: below the tolerance with a
            // tenfold margin, it is not computed to confirm it.
            let rate = *rate.get_or_insert(r / scale);
            if r * rate <= 0.1 * self.tolerance * scale {
                lost = false;
                break;
            }
        }
        Ok(Refined { du, dl, lost })
    }
}

/// Body `k`'s six entries of `x`.
fn block(x: &[f64], k: usize) -> Vector6<f64> {
    Vector6::from_column_slice(&x[6 * k..6 * k + 6])
}

fn sub_block(y: &mut [f64], k: usize, v: &Vector6<f64>) {
    y[6 * k..6 * k + 6]
        .iter_mut()
        .zip(v.iter())
        .for_each(|(y, v)| *y -= v);
}

/// The twelve entries of the two slots' bodies (zero for an absent one).
fn slots(x: &[f64], bodies: [Option<usize>; 2]) -> SMatrix<f64, 12, 1> {
    let mut out = SMatrix::<f64, 12, 1>::zeros();
    for (i, b) in bodies.iter().enumerate() {
        if let Some(k) = b {
            out.fixed_rows_mut::<6>(6 * i).copy_from(&block(x, *k));
        }
    }
    out
}

/// `y[slots] += v`.
fn add_slots(y: &mut [f64], bodies: [Option<usize>; 2], v: &SMatrix<f64, 12, 1>) {
    for (i, b) in bodies.iter().enumerate() {
        if let Some(k) = b {
            sub_block(y, *k, &(-v.fixed_rows::<6>(6 * i)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::group_inverse;
    use crate::tree::inverse_pivoted;
    use nalgebra::{Matrix3, Matrix6};
    use proptest::prelude::*;

    proptest! {
        /// Two contacts' 3 × 3 blocks (each with a normal row coupled to nothing, a
        /// first pivot down to 1e-12 as a hard contact's, friction rows coupled to the
        /// normal force) inverted one by one are the whole block's Gauss–Jordan
        /// inverse, bit for bit; one entry coupling the two contacts sends the block
        /// whole to Gauss–Jordan.
        #[test]
        fn a_group_of_two_contacts_is_inverted_block_by_block(
            entries in prop::collection::vec(-1.0f64..1.0, 18),
            hard in -12.0f64..0.0,
            (i, j) in (0usize..3, 3usize..6),
            coupling in -1.0f64..1.0,
        ) {
            let contact = |e: &[f64]| {
                let mut m = Matrix3::from_column_slice(&e[..9]) + Matrix3::identity();
                m[(0, 0)] = 10f64.powf(hard);
                m[(0, 1)] = 0.0;
                m[(0, 2)] = 0.0;
                m
            };
            let mut d = Matrix6::zeros();
            d.fixed_view_mut::<3, 3>(0, 0).copy_from(&contact(&entries[..9]));
            d.fixed_view_mut::<3, 3>(3, 3).copy_from(&contact(&entries[9..]));
            prop_assert_eq!(group_inverse(&d), inverse_pivoted(&d));
            let blocks = inverse_pivoted(&d.fixed_view::<3, 3>(0, 0).into_owned());
            prop_assert_eq!(
                group_inverse(&d).map(|inv| inv.fixed_view::<3, 3>(0, 0).into_owned()),
                blocks
            );
            let (i, j) = if coupling > 0.0 { (i, j) } else { (j, i) };
            d[(i, j)] = coupling;
            prop_assert_eq!(group_inverse(&d), inverse_pivoted(&d));
        }
    }
}
