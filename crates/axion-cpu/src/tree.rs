//! The Newton system solved along the bodies' tree.
//!
//! When the rows that join two dynamic bodies (a joint's, its drive's and range's, a
//! contact between two bodies) and the bodies' stiffness couplings link them into a
//! forest — a robot without self-collision, its base free or bolted, standing on
//! static ground — the Newton system of [`crate::reduced`] is factorized by block
//! elimination along that forest, with no fill and no sparse bookkeeping.
//!
//! Rows on one dynamic body (contacts with the static ground, joints to the world)
//! are eliminated onto that body's block first, as in [`crate::reduced`]. Every other
//! body $b$ has a parent $p$ in the forest and forms one dense block with the rows
//! joining it to $p$ (Baraff's ordering, generalised to non-symmetric rows):
//! $$K_b = \begin{bmatrix} A_{bb} & -hF_{b}^\top \\\\ G_{b} & D \end{bmatrix},\qquad
//!   K_b \begin{bmatrix}\Delta u_b \\\\ \Delta\lambda_{bp}\end{bmatrix} +
//!   C_{bp}\Delta u_p = r_b,\qquad
//!   C_{bp} = \begin{bmatrix} A_{bp} \\\\ G_{p} \end{bmatrix},\quad
//!   C_{pb} = \begin{bmatrix} A_{pb} & -hF_{p}^\top \end{bmatrix},$$
//! where $G_b, hF_b$ are the rows' columns of $b$ and $G_p, hF_p$ those of $p$, and $D$
//! the rows' block ($D_g$ of each group on the diagonal). Leaves first, each block is
//! factorized and eliminated onto its parent, $A_{pp} \mathrel{-}= C_{pb}K_b^{-1}C_{bp}$;
//! a root's block is $A_{rr}$ alone. Keeping the joint's rows as unknowns beside their
//! child is what makes this elimination stable: eliminating a child body straight onto
//! its parent through a hard joint's reduced penalty block $hF^\top D^{-1}G$
//! ($D \approx 10^{-10}$) subtracts two blocks of size $1/\delta$ to get one of the size
//! of the masses, and loses every digit. $K_b$ is factorized body first
//! (`LinkBlock`): its pivots are the body's mass $A_{bb}$ and the Schur complement
//! $D + G_bA_{bb}^{-1}hF_b^\top$, the inverse inertia the joint sees, and the block passed
//! up is the child's articulated inertia seen through the joint. A massless frame has
//! no $A_{bb}$ to pivot on; its block is factorized whole by LU with partial pivoting
//! (`PivotedBlock`).
//!
//! The forward pass solves $K_b y_b = r_b$ and subtracts $C_{pb}y_b$ from the parent's
//! right-hand side; after the roots, the backward pass sets
//! $x_b = y_b - K_b^{-1}C_{bp}\Delta u_p$. The work is linear in the bodies; a graph
//! with a loop (a closed chain, contacts between the links of one robot, a pile of
//! bodies) is left to the sparse LU.

use std::ops::SubAssign;

use nalgebra::allocator::Allocator;
use nalgebra::{
    Const, DMatrix, DVector, DefaultAllocator, Dim, DimMin, Dyn, Matrix6, OMatrix, OVector,
    SMatrix, U1, U3, U5, U6, Vector6, linalg::LU,
};

use crate::reduced::{BodyMatrix, GroupSystem, RowGroup};
use crate::sparse::SolveFailure;

/// A dynamic body's place in the forest: its parent and what joins them.
#[derive(Clone, Debug, PartialEq)]
struct Link {
    body: usize,
    parent: usize,
    /// The groups between `body` and `parent`, with `body`'s slot in each.
    groups: Vec<(usize, usize)>,
    /// Their rows in all.
    rows: usize,
    /// Indices into [`BodyMatrix::cross`] of the blocks $(b, p)$, then of $(p, b)$.
    cross_up: Vec<usize>,
    cross_down: Vec<usize>,
    /// Whether `body` is a massless frame (its block is always pivoted whole).
    massless: bool,
}

impl Link {
    /// Its block's unknowns, padding included: the body's six and the rows'.
    fn unknowns(&self) -> usize {
        6 + self.block_rows()
    }

    /// Its rows as its block holds them: a revolute or prismatic joint's five, up to
    /// [`SMALL`] padded to that, more as they are.
    fn block_rows(&self) -> usize {
        if self.rows == FIVE_ROWS {
            FIVE_ROWS
        } else {
            self.rows.max(SMALL)
        }
    }
}

/// The forest of a row pattern (see the module doc); `None` from [`Tree::new`] when the
/// bodies' graph has a loop.
pub struct Tree {
    /// Non-root bodies, children before their parents.
    links: Vec<Link>,
    roots: Vec<usize>,
    /// Groups on one dynamic body (or on a body and itself), eliminated onto it first.
    local: Vec<usize>,
    /// The factors of the last [`Tree::factorize`]: each link's block, each root's LU.
    blocks: Vec<Block>,
    root_lu: Vec<LU<f64, U6, U6>>,
    /// Where each link's unknowns start in `z`, the solves' workspace.
    offsets: Vec<usize>,
    z: Vec<f64>,
}

/// Whether a group joins two different dynamic bodies (an edge of the forest).
fn joins(g: &RowGroup) -> Option<(usize, usize)> {
    match g.bodies {
        [Some(a), Some(b)] if a != b => Some((a, b)),
        _ => None,
    }
}

impl Tree {
    /// The forest of `nd` dynamic bodies joined by these groups and body couplings
    /// (`(row body, column body)` of each [`BodyMatrix::cross`] block), or `None` if
    /// they close a loop; `massless` says which bodies are massless frames (their links
    /// are pivoted whole).
    pub fn new(
        nd: usize,
        groups: &[RowGroup],
        cross: &[(usize, usize)],
        massless: &[bool],
    ) -> Option<Self> {
        let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); nd];
        let mut root_of: Vec<usize> = (0..nd).collect();
        fn find(root_of: &mut [usize], mut k: usize) -> usize {
            while root_of[k] != k {
                root_of[k] = root_of[root_of[k]];
                k = root_of[k];
            }
            k
        }
        let pairs = groups
            .iter()
            .filter_map(joins)
            .chain(cross.iter().copied().filter(|(a, b)| a != b));
        for (a, b) in pairs {
            if neighbours[a].contains(&b) {
                continue;
            }
            let (ra, rb) = (find(&mut root_of, a), find(&mut root_of, b));
            if ra == rb {
                return None;
            }
            root_of[ra] = rb;
            neighbours[a].push(b);
            neighbours[b].push(a);
        }
        // Breadth first from each component's first body; reversed, children come first.
        let mut parent: Vec<Option<usize>> = vec![None; nd];
        let mut seen = vec![false; nd];
        let mut visit = Vec::with_capacity(nd);
        let mut roots = Vec::new();
        for r in 0..nd {
            if seen[r] {
                continue;
            }
            seen[r] = true;
            roots.push(r);
            let start = visit.len();
            visit.push(r);
            let mut next = start;
            while next < visit.len() {
                let b = visit[next];
                next += 1;
                for &c in &neighbours[b] {
                    if !seen[c] {
                        seen[c] = true;
                        parent[c] = Some(b);
                        visit.push(c);
                    }
                }
            }
        }
        let mut links: Vec<Link> = visit
            .iter()
            .rev()
            .filter_map(|&b| {
                parent[b].map(|p| Link {
                    body: b,
                    parent: p,
                    groups: Vec::new(),
                    rows: 0,
                    cross_up: Vec::new(),
                    cross_down: Vec::new(),
                    massless: massless[b],
                })
            })
            .collect();
        let mut link_of = vec![usize::MAX; nd];
        for (i, l) in links.iter().enumerate() {
            link_of[l.body] = i;
        }
        let mut local = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            match joins(g) {
                Some((a, b)) => {
                    let (child, slot) = if parent[a] == Some(b) { (a, 0) } else { (b, 1) };
                    let link = &mut links[link_of[child]];
                    link.groups.push((gi, slot));
                    link.rows += g.len;
                }
                None => local.push(gi),
            }
        }
        for (ci, &(a, b)) in cross.iter().enumerate() {
            if a == b {
                continue;
            }
            if parent[a] == Some(b) {
                links[link_of[a]].cross_up.push(ci);
            } else {
                links[link_of[b]].cross_down.push(ci);
            }
        }
        let blocks = links.iter().map(Block::for_link).collect();
        let mut offsets = vec![0];
        for l in &links {
            offsets.push(offsets[offsets.len() - 1] + l.unknowns());
        }
        Some(Self {
            z: vec![0.0; offsets[links.len()]],
            offsets,
            blocks,
            root_lu: Vec::with_capacity(roots.len()),
            links,
            roots,
            local,
        })
    }

    /// The groups eliminated onto their one body before the tree is factorized.
    pub fn local_groups(&self) -> &[usize] {
        &self.local
    }

    /// Factorizes the body system along the tree: `diagonal` is $A$'s diagonal with the
    /// local groups already eliminated onto it (used up: the links are eliminated onto
    /// it).
    pub fn factorize(
        &mut self,
        diagonal: &mut [Matrix6<f64>],
        a: &BodyMatrix,
        groups: &[RowGroup],
        systems: &[GroupSystem],
    ) -> Result<(), SolveFailure> {
        for (l, block) in self.links.iter().zip(&mut self.blocks) {
            let update = block.factor(l, (&diagonal[l.body], a, groups, systems))?;
            diagonal[l.parent] -= update;
        }
        self.root_lu.clear();
        self.root_lu
            .extend(self.roots.iter().map(|&r| diagonal[r].lu()));
        Ok(())
    }

    /// Solves the body system with the link groups' rows as unknowns, with the factors
    /// of the last [`Tree::factorize`]: `r_u` is the bodies' right-hand side with the
    /// local groups already eliminated onto it, and becomes $\Delta u$; `b_g` is every
    /// group's; writes the link groups' $\Delta\lambda_g$ into `dl` (the local groups'
    /// entries are left as they are).
    pub fn solve(
        &mut self,
        r_u: &mut [Vector6<f64>],
        groups: &[RowGroup],
        b_g: &[Vector6<f64>],
        dl: &mut [Vector6<f64>],
    ) -> Result<(), SolveFailure> {
        // Each link's r_b, then y_b, then x_b, in its stretch of z.
        for (i, (l, b)) in self.links.iter().zip(&self.blocks).enumerate() {
            let z = &mut self.z[self.offsets[i]..self.offsets[i + 1]];
            z.fill(0.0);
            z[..6].copy_from_slice(r_u[l.body].as_slice());
            let mut at = 6;
            for &(g, _) in &l.groups {
                let len = groups[g].len;
                z[at..at + len].copy_from_slice(&b_g[g].as_slice()[..len]);
                at += len;
            }
            r_u[l.parent] -= b.forward(z)?;
        }
        for (&r, lu) in self.roots.iter().zip(&self.root_lu) {
            if !lu.solve_mut(&mut r_u[r]) {
                return Err(SolveFailure::Singular);
            }
        }
        for (i, (l, b)) in self.links.iter().zip(&self.blocks).enumerate().rev() {
            let z = &mut self.z[self.offsets[i]..self.offsets[i + 1]];
            b.back(z, &r_u[l.parent]);
            r_u[l.body] = Vector6::from_column_slice(&z[..6]);
            let mut at = 6;
            for &(g, _) in &l.groups {
                let len = groups[g].len;
                dl[g] = Vector6::zeros();
                dl[g].as_mut_slice()[..len].copy_from_slice(&z[at..at + len]);
                at += len;
            }
        }
        Ok(())
    }
}

/// Most rows of a link held in fixed-size matrices (a joint with its drive or range);
/// a link with more rows has heap-allocated blocks. A link with fewer is padded with
/// identity rows (unknowns that stay zero), except one of [`FIVE_ROWS`] rows, held at
/// its size.
const SMALL: usize = 6;

/// The rows of a revolute or prismatic joint without a drive or an active range (a
/// limp robot's links, the chain's): their blocks are held at that size
/// (`LinkBlock<U5>`), a sixth of the padded blocks' rows fewer in every product of a
/// factorization (measured on the chain of 50: 44 → 40 µs a factorization).
const FIVE_ROWS: usize = 5;

/// A body, the groups joining it to its parent and what [`LinkBlock::factor`] reads:
/// the body's diagonal block and the Newton system's blocks.
type LinkInputs<'a> = (
    &'a Matrix6<f64>,
    &'a BodyMatrix,
    &'a [RowGroup],
    &'a [GroupSystem],
);

/// A link's blocks of the Newton matrix (see the module doc), its rows padded to `M`
/// (identity on $D$'s unused rows, zero elsewhere): $B_b = -hF_b^\top$,
/// $B_p = -hF_p^\top$, $G_b$, $G_p$, $D$, and the stiffness couplings $A_{bp}$, $A_{pb}$.
struct LinkRows<M: Dim>
where
    DefaultAllocator: Allocator<M, M> + Allocator<U6, M> + Allocator<M, U6>,
{
    b_b: OMatrix<f64, U6, M>,
    b_p: OMatrix<f64, U6, M>,
    g: OMatrix<f64, M, U6>,
    g_p: OMatrix<f64, M, U6>,
    d: OMatrix<f64, M, M>,
    a_bp: Matrix6<f64>,
    a_pb: Matrix6<f64>,
}

impl<M: Dim> LinkRows<M>
where
    DefaultAllocator: Allocator<M, M> + Allocator<U6, M> + Allocator<M, U6>,
{
    /// Link `l`'s blocks with `m` rows (at least its own).
    fn gather(m: M, l: &Link, inputs: LinkInputs) -> Self {
        let mut rows = Self::zeros(m);
        rows.fill(l, inputs);
        rows
    }

    /// Blocks of `m` rows, not yet gathered.
    fn zeros(m: M) -> Self {
        Self {
            b_b: OMatrix::zeros_generic(U6, m),
            b_p: OMatrix::zeros_generic(U6, m),
            g: OMatrix::zeros_generic(m, U6),
            g_p: OMatrix::zeros_generic(m, U6),
            d: OMatrix::identity_generic(m, m),
            a_bp: Matrix6::zeros(),
            a_pb: Matrix6::zeros(),
        }
    }

    /// Gathers link `l`'s blocks in place, over those of its last gathering (or
    /// [`LinkRows::zeros`]): every gathering writes the same entries, the rows of its
    /// groups and their blocks of $D$, so the others (the padding, $D$ between two
    /// groups) keep the zeros and the identity they were created with. $G_p$, which
    /// [`LinkBlock::factor`] turns into $G_p - G_bx'$ in place, is zeroed first: its
    /// padding stays zero whatever that product held (a NaN from a failed iterate would
    /// otherwise stay in the padding of every later factorization).
    fn fill(&mut self, l: &Link, (_, a, groups, systems): LinkInputs) {
        self.g_p.fill(0.0);
        let mut r = 0;
        for &(gi, slot) in &l.groups {
            let (s, len) = (&systems[gi], groups[gi].len);
            let (own, other) = (6 * slot, 6 * (1 - slot));
            for i in 0..len {
                for c in 0..6 {
                    self.b_b[(c, r + i)] = -s.force[(i, own + c)];
                    self.b_p[(c, r + i)] = -s.force[(i, other + c)];
                    self.g[(r + i, c)] = s.jacobian[(i, own + c)];
                    self.g_p[(r + i, c)] = s.jacobian[(i, other + c)];
                }
                for j in 0..len {
                    self.d[(r + i, r + j)] = s.diagonal[(i, j)];
                }
            }
            r += len;
        }
        self.a_bp.fill(0.0);
        for &c in &l.cross_up {
            self.a_bp += a.cross[c].2;
        }
        self.a_pb.fill(0.0);
        for &c in &l.cross_down {
            self.a_pb += a.cross[c].2;
        }
    }
}

/// The block of a link whose body has no mass (a massless frame of a compound joint,
/// [`axion_math::MassProperties::massless`]) or whose body block $A_{bb}$ is singular:
/// the whole $K_b$ factorized by LU with partial pivoting, which pivots on the joint's
/// rows where the body has no mass; $X_b = K_b^{-1}C_{bp}$ and $C_{pb}$ as in
/// [`LinkBlock`]. Eliminating a massless body first would subtract
/// $A_{bb}^{-1}$-sized terms from each other in every solve and lose their digits.
struct PivotedBlock {
    lu: LU<f64, Dyn, Dyn>,
    x: DMatrix<f64>,
    down: DMatrix<f64>,
}

impl PivotedBlock {
    /// A block for link `l`, not yet factorized.
    fn empty(l: &Link) -> Self {
        let n = 6 + l.rows;
        Self {
            lu: DMatrix::identity(n, n).lu(),
            x: DMatrix::zeros(n, 6),
            down: DMatrix::zeros(6, n),
        }
    }

    /// Factorizes link `l`'s block into `block`; returns $C_{pb}K_b^{-1}C_{bp}$.
    fn factor(
        block: &mut Block,
        l: &Link,
        inputs: LinkInputs,
    ) -> Result<Matrix6<f64>, SolveFailure> {
        let (b, update) = Self::new(l, inputs)?;
        *block = Block::Pivoted(b);
        Ok(update)
    }

    /// Factorizes link `l`'s block; also returns $C_{pb}K_b^{-1}C_{bp}$.
    fn new(l: &Link, inputs: LinkInputs) -> Result<(Self, Matrix6<f64>), SolveFailure> {
        let rows = LinkRows::gather(Dyn(l.rows), l, inputs);
        let n = 6 + l.rows;
        let mut k = DMatrix::zeros(n, n);
        k.fixed_view_mut::<6, 6>(0, 0).copy_from(inputs.0);
        k.view_mut((0, 6), (6, l.rows)).copy_from(&rows.b_b);
        k.view_mut((6, 0), (l.rows, 6)).copy_from(&rows.g);
        k.view_mut((6, 6), (l.rows, l.rows)).copy_from(&rows.d);
        let mut up = DMatrix::zeros(n, 6);
        up.fixed_view_mut::<6, 6>(0, 0).copy_from(&rows.a_bp);
        up.view_mut((6, 0), (l.rows, 6)).copy_from(&rows.g_p);
        let mut down = DMatrix::zeros(6, n);
        down.fixed_view_mut::<6, 6>(0, 0).copy_from(&rows.a_pb);
        down.view_mut((0, 6), (6, l.rows)).copy_from(&rows.b_p);
        let lu = k.lu();
        let x = lu.solve(&up).ok_or(SolveFailure::Singular)?;
        let update = Matrix6::from_iterator((&down * &x).iter().copied());
        Ok((Self { lu, x, down }, update))
    }

    /// Forward pass on the link's unknowns (body then rows, `6 + rows` of them):
    /// $K_b^{-1}r_b$ in place; returns $C_{pb}$ times it.
    fn forward(&self, z: &mut [f64]) -> Result<Vector6<f64>, SolveFailure> {
        let mut v = DVector::from_column_slice(z);
        if !self.lu.solve_mut(&mut v) {
            return Err(SolveFailure::Singular);
        }
        z.copy_from_slice(v.as_slice());
        Ok(Vector6::from_iterator((&self.down * v).iter().copied()))
    }

    /// Backward pass: $x_b = y_b - X_b\Delta u_p$, in place.
    fn back(&self, z: &mut [f64], du_parent: &Vector6<f64>) {
        for (z, d) in z.iter_mut().zip((&self.x * du_parent).iter()) {
            *z -= d;
        }
    }
}

/// One link's factorized block (see the module doc), eliminated body first:
/// with $B_b = -hF_b^\top$, $V = A_{bb}^{-1}B_b$ and the rows' Schur complement
/// $S = D - G_bV = D + G_bA_{bb}^{-1}hF_b^\top$,
/// $$K_b^{-1}\begin{bmatrix}r\\\\ s\end{bmatrix} = \begin{bmatrix}x' - Vy\\\\ y\end{bmatrix},
///   \qquad x' = A_{bb}^{-1}r,\quad y = S^{-1}(s - G_bx').$$
/// These are the pivots of the block's LU in the module doc's order, without the
/// pivot search over the whole block (and the rows padded to six, a revolute or
/// prismatic joint's held at five, not the whole block to twelve): $A_{bb}$ is a body's
/// articulated mass matrix, with its one-body groups' penalty-like blocks
/// $hF_g^\top D_g^{-1}G_g$ (a foot pressed by hard contacts), inverted outright
/// (through its 3 × 3 blocks, [`inverse_by_blocks`], or by Gauss–Jordan elimination
/// with partial pivoting, [`inverse_pivoted`], where those blocks are ill-conditioned or
/// would grow) — a 6 × 6 product is cheaper than the triangular solves, and the
/// rounding of an ill-conditioned $A_{bb}$ is removed with the rest by iterative
/// refinement ([`crate::reduced::ReducedLu::solve`]; the tests hold the refined solve
/// backward stable with hard contacts) — and $S$ is
/// the inverse inertia its joint sees, inverted outright too: by the same block
/// formula where it has [`FIVE_ROWS`] (a 3 × 3 and a 2 × 2 pivot block) and passes its
/// guards, else by [`inverse_pivoted`] (it is as singular as the joint's rows are
/// redundant; a singular one sends the block to [`PivotedBlock`]), for the
/// same reason: the chord steps' solves with kept factors are matrix products. `M` is
/// the link's row dimension ([`FIVE_ROWS`] or [`SMALL`] on the stack, or dynamic).
struct LinkBlock<M: DimMin<M, Output = M>>
where
    DefaultAllocator: Allocator<M, M> + Allocator<U6, M> + Allocator<M, U6> + Allocator<M>,
{
    /// $A_{bb}^{-1}$.
    a_inv: Matrix6<f64>,
    /// $V = A_{bb}^{-1}B_b$.
    v: OMatrix<f64, U6, M>,
    /// $S^{-1}$: by [`inverse_by_blocks`] for five rows, else by [`inverse_pivoted`].
    s_inv: OMatrix<f64, M, M>,
    /// $X_b = K_b^{-1}C_{bp}$: its body rows and its constraint rows.
    x_body: Matrix6<f64>,
    x_rows: OMatrix<f64, M, U6>,
    /// The link's blocks, gathered in place by each factorization: the solves read
    /// $G_b$ and $C_{pb} = [A_{pb}\;\; -hF_p^\top]$ from them.
    rows: LinkRows<M>,
}

impl<M: DimMin<M, Output = M>> LinkBlock<M>
where
    DefaultAllocator:
        Allocator<M, M> + Allocator<U6, M> + Allocator<M, U6> + Allocator<M> + Allocator<M, U3>,
{
    /// A block of `m` rows, not yet factorized.
    fn empty(m: M) -> Self {
        Self {
            a_inv: Matrix6::identity(),
            v: OMatrix::zeros_generic(U6, m),
            s_inv: OMatrix::identity_generic(m, m),
            x_body: Matrix6::zeros(),
            x_rows: OMatrix::zeros_generic(m, U6),
            rows: LinkRows::zeros(m),
        }
    }

    /// Factorizes link `l`'s block in place; returns $C_{pb}K_b^{-1}C_{bp}$, to
    /// subtract from the parent's block.
    fn factor(&mut self, l: &Link, inputs: LinkInputs) -> Result<Matrix6<f64>, SolveFailure> {
        self.a_inv = inverse_by_blocks::<6, 3>(inputs.0)
            .or_else(|| inverse_pivoted::<U6>(inputs.0))
            .ok_or(SolveFailure::Singular)?;
        self.rows.fill(l, inputs);
        let rows = &mut self.rows;
        self.v = self.a_inv * &rows.b_b;
        let s = &rows.d - &rows.g * &self.v;
        let m = s.shape_generic().0;
        let by_blocks = match s.nrows() {
            5 => inverse_by_blocks::<5, 2>(&SMatrix::from_iterator(s.iter().copied()))
                .map(|inv| OMatrix::from_iterator_generic(m, m, inv.iter().copied())),
            _ => None,
        };
        self.s_inv = by_blocks
            .or_else(|| inverse_pivoted(&s))
            .ok_or(SolveFailure::Singular)?;
        // X_b = K_b⁻¹ [A_bp; G_p]: x' = A_bb⁻¹A_bp, Y = S⁻¹(G_p − G_b x'), X = x' − V Y.
        // A revolute, ball or fixed joint's stiffness couples the two bodies' rotations
        // only (its torques' arms and axes turn with them, its forces do not): then only
        // the angular columns of x' and the angular rows of A_pb X are not zero, and only
        // they are computed (the same numbers, without the products with zeros). G_p is
        // not read after this: it becomes G_p − G_b x' in place (LinkRows::fill zeroes it
        // again).
        let angular = angular_only(&rows.a_bp) && angular_only(&rows.a_pb);
        let mut x_first = Matrix6::zeros();
        if angular {
            let x_ang = self.a_inv.fixed_columns::<3>(3) * rows.a_bp.fixed_view::<3, 3>(3, 3);
            x_first.fixed_columns_mut::<3>(3).copy_from(&x_ang);
            let update = &rows.g * x_ang;
            rows.g_p.fixed_columns_mut::<3>(3).sub_assign(&update);
        } else {
            x_first = self.a_inv * rows.a_bp;
            let update = &rows.g * x_first;
            rows.g_p -= update;
        }
        self.x_rows = &self.s_inv * &rows.g_p;
        self.x_body = x_first - &self.v * &self.x_rows;
        let mut coupled = Matrix6::zeros();
        if angular {
            coupled
                .fixed_rows_mut::<3>(3)
                .copy_from(&(rows.a_pb.fixed_view::<3, 3>(3, 3) * self.x_body.fixed_rows::<3>(3)));
        } else {
            coupled = rows.a_pb * self.x_body;
        }
        Ok(coupled + &rows.b_p * &self.x_rows)
    }

    /// Forward pass on the link's unknowns `z` (the body's six, then the rows' `M`):
    /// $r_b$ in place becomes $K_b^{-1}r_b$; returns $C_{pb}$ times it.
    fn forward(&self, z: &mut [f64]) -> Result<Vector6<f64>, SolveFailure> {
        let (body, rows) = z.split_at_mut(6);
        let x = self.a_inv * Vector6::from_column_slice(body);
        let m = self.rows.g.shape_generic().0;
        let rows = &mut rows[..m.value()];
        let mut r = OVector::<f64, M>::from_column_slice_generic(m, U1, rows);
        r -= &self.rows.g * x;
        let y = &self.s_inv * r;
        let x = x - &self.v * &y;
        body.copy_from_slice(x.as_slice());
        rows.copy_from_slice(y.as_slice());
        Ok(self.rows.a_pb * x + &self.rows.b_p * y)
    }

    /// Backward pass: $x_b = y_b - X_b\Delta u_p$, in place.
    fn back(&self, z: &mut [f64], du_parent: &Vector6<f64>) {
        let (body, rows) = z.split_at_mut(6);
        for (z, d) in body.iter_mut().zip((self.x_body * du_parent).iter()) {
            *z -= d;
        }
        for (z, d) in rows.iter_mut().zip((&self.x_rows * du_parent).iter()) {
            *z -= d;
        }
    }
}

/// Whether a stiffness coupling acts on the angular parts alone: its linear rows and
/// columns are zero.
fn angular_only(m: &Matrix6<f64>) -> bool {
    m.fixed_rows::<3>(0).iter().all(|&x| x == 0.0)
        && m.fixed_view::<3, 3>(3, 0).iter().all(|&x| x == 0.0)
}

/// The largest product of the condition numbers of the two pivot blocks (the leading
/// 3 × 3 and the trailing Schur complement) that [`inverse_by_blocks`] inverts
/// outright: each explicit inverse loses its block's condition number in digits, and
/// the Schur complement carries the first one's into the second, so (with
/// [`MAX_BLOCK_GROWTH`]) a block inverse is good to about $10^{-10}$ before the solve's
/// iterative refinement.
const MAX_BLOCK_CONDITION: f64 = 1e6;

/// The largest $\lVert RP^{-1}Q\rVert_F / \lVert S\rVert_F$ [`inverse_by_blocks`] accepts:
/// the Schur complement's update may not be much larger than the block it updates,
/// or $P^{-1} + XT^{-1}Y$ cancels two large terms ($A = \begin{bmatrix}\varepsilon I & I\\\\
/// I & I\end{bmatrix}$ has well-conditioned blocks and loses $1/\varepsilon$ that way). A
/// symmetric positive definite $A$ — a body's mass matrix — has $RP^{-1}Q \preceq S$
/// and always passes.
const MAX_BLOCK_GROWTH: f64 = 10.0;

/// $A^{-1}$ of an $N\times N$ matrix through its leading 3 × 3 and trailing $D\times D$
/// blocks ($N = 3 + D$: a body block's 6, a five-row link's 5),
/// $A = \begin{bmatrix}P & Q\\\\ R & S\end{bmatrix}$: with $X = P^{-1}Q$, $Y = RP^{-1}$ and
/// the Schur complement $T = S - RX$,
/// $$A^{-1} = \begin{bmatrix}P^{-1} + XT^{-1}Y & -XT^{-1}\\\\ -T^{-1}Y & T^{-1}\end{bmatrix}.$$
/// `None` where the product of the condition numbers $\kappa(P)\thinspace\kappa(T)$
/// ($\kappa(M) = \lVert M\rVert_F\lVert M^{-1}\rVert_F$) is above [`MAX_BLOCK_CONDITION`]
/// or the update $RX$ outgrows $S$ ([`MAX_BLOCK_GROWTH`]): there the pivots of partial
/// pivoting are needed.
fn inverse_by_blocks<const N: usize, const D: usize>(
    a: &SMatrix<f64, N, N>,
) -> Option<SMatrix<f64, N, N>>
where
    Const<D>: DimMin<Const<D>, Output = Const<D>>,
{
    const { assert!(N == 3 + D, "a 3 × 3 leading block") };
    /// The inverse and its condition number.
    fn inverse<const K: usize>(m: &SMatrix<f64, K, K>) -> Option<(SMatrix<f64, K, K>, f64)>
    where
        Const<K>: DimMin<Const<K>, Output = Const<K>>,
    {
        let inv = m.try_inverse()?;
        Some((inv, (m.norm_squared() * inv.norm_squared()).sqrt()))
    }
    let p = a.fixed_view::<3, 3>(0, 0);
    let q = a.fixed_view::<3, D>(0, 3);
    let r = a.fixed_view::<D, 3>(3, 0);
    let s = a.fixed_view::<D, D>(3, 3);
    let (p_inv, kappa_p) = inverse::<3>(&p.into_owned())?;
    // κ(T) ≥ 1 (‖I‖ ≤ ‖T‖‖T⁻¹‖): a leading block past the bound alone is refused before
    // the Schur complement is formed (a body pressed by hard contacts).
    if kappa_p > MAX_BLOCK_CONDITION {
        return None;
    }
    let x = p_inv * q;
    let y = r * p_inv;
    let update = r * x;
    let (t_inv, kappa_t) = inverse::<D>(&(s - update))?;
    let accept =
        kappa_p * kappa_t <= MAX_BLOCK_CONDITION && update.norm() <= MAX_BLOCK_GROWTH * s.norm();
    accept.then(|| {
        let xt = x * t_inv;
        let mut out = SMatrix::<f64, N, N>::zeros();
        out.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(p_inv + xt * y));
        out.fixed_view_mut::<3, D>(0, 3).copy_from(&(-xt));
        out.fixed_view_mut::<D, 3>(3, 0).copy_from(&(-(t_inv * y)));
        out.fixed_view_mut::<D, D>(3, 3).copy_from(&t_inv);
        out
    })
}

/// $A^{-1}$ by Gauss–Jordan elimination with partial pivoting: column $k$'s pivot is
/// the largest $\lvert a_{ik}\rvert$, $i \ge k$; its row is divided by it and
/// subtracted from every other row, on $A$ (square) and on the identity alongside.
/// `None` where a pivot is zero or the inverse is not finite (a NaN or an infinity
/// anywhere in $A$, or growth that overflows): its callers then report the block
/// singular, as they do for a zero pivot. Its forward error is bounded like that of the
/// inverse through an LU with partial pivoting, about $u\,\kappa(A)$ (the tests hold
/// the two inverses together), in one elimination instead of a factorization and $n$
/// pairs of triangular solves. On the a1's drop, where nearly half the body blocks come
/// here (those pressed by hard contacts) and every contact's $D_g$, nalgebra's LU and
/// its solves took about 12 % of the time and this elimination takes 7–8 %
/// (docs/benchmarks.md, "The small explicit inverses by Gauss–Jordan").
pub(crate) fn inverse_pivoted<D: Dim>(a: &OMatrix<f64, D, D>) -> Option<OMatrix<f64, D, D>>
where
    DefaultAllocator: Allocator<D, D>,
{
    debug_assert!(a.is_square(), "a square matrix");
    let (n, d) = (a.nrows(), a.shape_generic().0);
    let mut m = a.clone();
    let mut inv = OMatrix::identity_generic(d, d);
    for k in 0..n {
        let mut p = k;
        for i in k + 1..n {
            if m[(i, k)].abs() > m[(p, k)].abs() {
                p = i;
            }
        }
        let pivot = m[(p, k)];
        if pivot == 0.0 || !pivot.is_finite() {
            return None;
        }
        m.swap_rows(k, p);
        inv.swap_rows(k, p);
        let scale = 1.0 / pivot;
        for j in k..n {
            m[(k, j)] *= scale;
        }
        for j in 0..n {
            inv[(k, j)] *= scale;
        }
        for i in (0..n).filter(|&i| i != k) {
            let f = m[(i, k)];
            if f != 0.0 {
                for j in k..n {
                    m[(i, j)] -= f * m[(k, j)];
                }
                for j in 0..n {
                    inv[(i, j)] -= f * inv[(k, j)];
                }
            }
        }
    }
    inv.iter().all(|x: &f64| x.is_finite()).then_some(inv)
}

/// A link's block: fixed-size ([`SMALL`] rows, padded, or [`FIVE_ROWS`]) or dynamic.
#[expect(
    clippy::large_enum_variant,
    reason = "the fixed-size blocks are the common case and live inline in one Vec"
)]
enum Block {
    Small(LinkBlock<U6>),
    Five(LinkBlock<U5>),
    Large(LinkBlock<Dyn>),
    Pivoted(PivotedBlock),
}

impl Block {
    /// An empty block: pivoted for a massless body, else eliminated body first,
    /// fixed-size if the link's rows fit.
    fn for_link(l: &Link) -> Self {
        if l.massless {
            Block::Pivoted(PivotedBlock::empty(l))
        } else if l.rows == FIVE_ROWS {
            Block::Five(LinkBlock::empty(U5))
        } else if l.rows <= SMALL {
            Block::Small(LinkBlock::empty(U6))
        } else {
            Block::Large(LinkBlock::empty(Dyn(l.rows)))
        }
    }

    /// Factorizes link `l`'s block, body first, or whole ([`PivotedBlock`]) if its body
    /// is massless or its body block singular in this factorization (the next one tries
    /// body first again: the choice depends on this system alone, not on the block's
    /// history); returns $C_{pb}K_b^{-1}C_{bp}$.
    fn factor(&mut self, l: &Link, inputs: LinkInputs) -> Result<Matrix6<f64>, SolveFailure> {
        let body_first = match self {
            Block::Small(b) => b.factor(l, inputs),
            Block::Five(b) => b.factor(l, inputs),
            Block::Large(b) => b.factor(l, inputs),
            Block::Pivoted(_) if l.massless => return PivotedBlock::factor(self, l, inputs),
            Block::Pivoted(_) => {
                *self = Block::for_link(l);
                return self.factor(l, inputs);
            }
        };
        match body_first {
            // Singular after all (stiffness beyond the body's mass): pivot the whole block.
            Err(SolveFailure::Singular) => PivotedBlock::factor(self, l, inputs),
            other => other,
        }
    }

    /// The forward pass of the link's block on its unknowns ([`Link::unknowns`]).
    fn forward(&self, z: &mut [f64]) -> Result<Vector6<f64>, SolveFailure> {
        match self {
            Block::Small(b) => b.forward(z),
            Block::Five(b) => b.forward(z),
            Block::Large(b) => b.forward(z),
            Block::Pivoted(b) => b.forward(&mut z[..b.x.nrows()]),
        }
    }

    /// The backward pass of the link's block on its unknowns.
    fn back(&self, z: &mut [f64], du_parent: &Vector6<f64>) {
        match self {
            Block::Small(b) => b.back(z, du_parent),
            Block::Five(b) => b.back(z, du_parent),
            Block::Large(b) => b.back(z, du_parent),
            Block::Pivoted(b) => b.back(&mut z[..b.x.nrows()], du_parent),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_BLOCK_CONDITION, inverse_by_blocks, inverse_pivoted};
    use nalgebra::{DMatrix, Matrix3, Matrix6, SMatrix};
    use proptest::prelude::*;

    /// $\lVert M\rVert_F\lVert M^{-1}\rVert_F$.
    fn condition<const N: usize>(m: &SMatrix<f64, N, N>) -> f64 {
        m.norm() * m.try_inverse().expect("invertible").norm()
    }

    /// $\kappa(P)\thinspace\kappa(T)$ of `a`'s leading 3 × 3 block and its Schur
    /// complement.
    fn pivot_conditions<const N: usize>(a: &SMatrix<f64, N, N>) -> f64 {
        let a = a.resize(N, N, 0.0);
        let p: Matrix3<f64> = a.fixed_view::<3, 3>(0, 0).into_owned();
        let rp = a.view((3, 0), (N - 3, 3)) * p.try_inverse().expect("invertible");
        let t = a.view((3, 3), (N - 3, N - 3)) - rp * a.view((0, 3), (3, N - 3));
        let kappa_t = t.norm() * t.try_inverse().expect("invertible").norm();
        condition(&p) * kappa_t
    }

    /// Where it inverts, the block formula's inverse is one: $AA^{-1} = I$ and LU's
    /// inverse to the rounding of two explicit inverses compounding,
    /// $c\thinspace u\thinspace\kappa(P)\thinspace\kappa(T)$ with a margin $c = 60$ (ten
    /// times the largest dimension, chosen, not derived; LU's own inverse is off by up to
    /// $u\thinspace\kappa(A)$), with $\kappa(P)\thinspace\kappa(T)$ within
    /// [`MAX_BLOCK_CONDITION`].
    fn check_inverse<const N: usize>(
        a: &SMatrix<f64, N, N>,
        inverse: Option<SMatrix<f64, N, N>>,
    ) -> Result<(), TestCaseError> {
        if let Some(inv) = inverse {
            let pivots = pivot_conditions(a);
            prop_assert!(pivots <= MAX_BLOCK_CONDITION * (1.0 + 1e-8));
            let bound = 60.0 * f64::EPSILON * pivots;
            let err = (a * inv - SMatrix::<f64, N, N>::identity()).norm();
            prop_assert!(err <= bound, "AA⁻¹ − I: {err:e}, bound {bound:e}");
            let lu = a.try_inverse().expect("invertible where the blocks are");
            let lu_err = f64::EPSILON * condition(a);
            prop_assert!((inv - lu).norm() <= (bound + lu_err) * lu.norm());
        }
        Ok(())
    }

    proptest! {
        /// [`check_inverse`] on a link's body block: 6 × 6, entries in [−1, 1] plus a
        /// shift on the diagonal.
        #[test]
        fn block_inverse_is_the_inverse(
            entries in prop::collection::vec(-1.0f64..1.0, 36),
            shift in 0.0f64..4.0,
        ) {
            let a = Matrix6::from_column_slice(&entries) + Matrix6::identity() * shift;
            check_inverse(&a, inverse_by_blocks::<6, 3>(&a))?;
        }

        /// [`check_inverse`] on a five-row link's Schur complement: 5 × 5, a 2 × 2
        /// trailing block.
        #[test]
        fn five_row_block_inverse_is_the_inverse(
            entries in prop::collection::vec(-1.0f64..1.0, 25),
            shift in 0.0f64..4.0,
        ) {
            let a = SMatrix::<f64, 5, 5>::from_column_slice(&entries)
                + SMatrix::<f64, 5, 5>::identity() * shift;
            check_inverse(&a, inverse_by_blocks::<5, 2>(&a))?;
        }

        /// Gauss–Jordan's inverse is one: $AA^{-1} = I$ to $c\thinspace u\thinspace
        /// \kappa(A)$ and LU's inverse to the two inverses' rounding, $2c\thinspace
        /// u\thinspace\kappa(A)$ relative, with $c = 10n$ (as above: chosen, not
        /// derived), on 6 × 6 matrices that need row exchanges (a large entry off the
        /// diagonal, a first pivot down to 1e-10, log-uniform) and may be nearly
        /// singular (no shift).
        #[test]
        fn pivoted_inverse_is_the_inverse(
            entries in prop::collection::vec(-1.0f64..1.0, 81),
            n in 1usize..=9,
            shift in 0.0f64..4.0,
            far in 1.0f64..1e4,
            small_exponent in -10.0f64..0.0,
        ) {
            // Every size it inverts: a group's D_g (1–6 rows), a body block (6), a
            // link's Schur complement (up to nine rows here).
            let mut a = DMatrix::from_column_slice(n, n, &entries[..n * n])
                + DMatrix::identity(n, n) * shift;
            a[(n - 1, 0)] *= far;
            a[(0, 0)] *= 10f64.powf(small_exponent);
            if let Some(lu) = a.clone().try_inverse() {
                let kappa = a.norm() * lu.norm();
                let bound = 60.0 * f64::EPSILON * kappa;
                let inv = inverse_pivoted(&a).expect("invertible where LU inverts");
                let err = (&a * &inv - DMatrix::identity(n, n)).norm();
                prop_assert!(err <= bound, "AA⁻¹ − I: {err:e}, bound {bound:e}");
                prop_assert!((&inv - &lu).norm() <= 2.0 * bound * lu.norm());
            }
        }

        /// A symmetric positive definite matrix (a body's mass matrix) is never refused
        /// for growth: $RP^{-1}Q \preceq S$. Where its pivot blocks are within
        /// [`MAX_BLOCK_CONDITION`], it is inverted by blocks.
        #[test]
        fn positive_definite_matrices_are_inverted_by_blocks(
            entries in prop::collection::vec(-1.0f64..1.0, 36),
            shift in 0.05f64..2.0,
        ) {
            let b = Matrix6::from_column_slice(&entries);
            let a = b * b.transpose() + Matrix6::identity() * shift;
            if pivot_conditions(&a) <= MAX_BLOCK_CONDITION * (1.0 - 1e-8) {
                prop_assert!(inverse_by_blocks::<6, 3>(&a).is_some());
            }
        }
    }

    /// A singular leading block sends the matrix to partial pivoting even where the whole
    /// is well conditioned (a permutation), and so does a nearly singular Schur
    /// complement.
    #[test]
    fn singular_blocks_are_refused() {
        let mut p = Matrix6::zeros();
        for i in 0..3 {
            p[(i, i + 3)] = 1.0;
            p[(i + 3, i)] = 1.0;
        }
        assert!(p.try_inverse().is_some());
        assert!(inverse_by_blocks::<6, 3>(&p).is_none());
        let mut t = Matrix6::identity();
        t[(5, 5)] = 1e-14;
        assert!(inverse_by_blocks::<6, 3>(&t).is_none());
        assert!(inverse_by_blocks::<6, 3>(&Matrix6::identity()).is_some());
    }

    /// A matrix with a zero column, or a NaN anywhere, has no inverse by Gauss–Jordan;
    /// a permutation (each column's one entry reached by a row exchange) has its
    /// transpose, exactly, at any size.
    #[test]
    fn pivoted_inverse_refuses_singular_matrices() {
        let mut singular = Matrix6::identity();
        singular[(2, 2)] = 0.0;
        assert!(inverse_pivoted(&singular).is_none());
        for (i, j) in [(4, 1), (0, 5), (3, 3)] {
            let mut nan = Matrix6::identity();
            nan[(i, j)] = f64::NAN;
            assert!(inverse_pivoted(&nan).is_none(), "NaN at ({i}, {j})");
        }
        let mut p = nalgebra::DMatrix::zeros(7, 7);
        for i in 0..7 {
            p[(i, (i + 3) % 7)] = 1.0;
        }
        assert_eq!(inverse_pivoted(&p), Some(p.transpose()));
    }

    /// $\begin{bmatrix}\varepsilon I & I\\\\ I & I\end{bmatrix}$: both pivot blocks are
    /// well conditioned ($\kappa(P) = \kappa(T) = 3$), the whole too ($\kappa \approx 9$),
    /// but $P^{-1} + XT^{-1}Y$ would cancel two terms of size $1/\varepsilon$ (an error of
    /// about $10^{-8}$ at $\varepsilon = 10^{-8}$, measured): refused for growth.
    #[test]
    fn growth_is_refused() {
        let mut a = Matrix6::identity();
        for i in 0..3 {
            a[(i, i)] = 1e-8;
            a[(i, i + 3)] = 1.0;
            a[(i + 3, i)] = 1.0;
        }
        assert!(condition(&a) < 20.0);
        assert!(pivot_conditions(&a) < 10.0);
        assert!(inverse_by_blocks::<6, 3>(&a).is_none());
    }
}
