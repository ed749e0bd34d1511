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
//! $$K_b = \begin{bmatrix} A_{bb} & -hF_{b}^\top \\ G_{b} & D \end{bmatrix},\qquad
//!   K_b \begin{bmatrix}\Delta u_b \\ \Delta\lambda_{bp}\end{bmatrix} +
//!   C_{bp}\Delta u_p = r_b,\qquad
//!   C_{bp} = \begin{bmatrix} A_{bp} \\ G_{p} \end{bmatrix},\quad
//!   C_{pb} = \begin{bmatrix} A_{pb} & -hF_{p}^\top \end{bmatrix},$$
//! where $G_b, hF_b$ are the rows' columns of $b$ and $G_p, hF_p$ those of $p$, and $D$
//! the rows' block ($D_g$ of each group on the diagonal). Leaves first, each block is
//! factorized by LU with partial pivoting and eliminated onto its parent,
//! $A_{pp} \mathrel{-}= C_{pb}K_b^{-1}C_{bp}$; a root's block is $A_{rr}$ alone.
//! Keeping the joint's rows as unknowns beside their child is what makes this
//! elimination stable: eliminating a child body straight onto its parent through a hard
//! joint's reduced penalty block $hF^\top D^{-1}G$ ($D \approx 10^{-10}$) subtracts two
//! blocks of size $1/\delta$ to get one of the size of the masses, and loses every digit.
//! Here $K_b$'s pivots are a body's mass and $D + G_bA_{bb}^{-1}hF_b^\top$, the inverse
//! inertia the joint sees, and the block passed up is the child's articulated inertia
//! seen through the joint.
//!
//! The forward pass solves $K_b y_b = r_b$ and subtracts $C_{pb}y_b$ from the parent's
//! right-hand side; after the roots, the backward pass sets
//! $x_b = y_b - K_b^{-1}C_{bp}\Delta u_p$. The work is linear in the bodies; a graph
//! with a loop (a closed chain, contacts between the links of one robot, a pile of
//! bodies) is left to the sparse LU.

use nalgebra::allocator::Allocator;
use nalgebra::{
    DefaultAllocator, DimMin, Dyn, Matrix6, OMatrix, OVector, U6, U12, Vector6, linalg::LU,
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
}

/// The forest of a row pattern (see the module doc); `None` from [`Tree::new`] when the
/// bodies' graph has a loop.
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    /// Non-root bodies, children before their parents.
    links: Vec<Link>,
    roots: Vec<usize>,
    /// Groups on one dynamic body (or on a body and itself), eliminated onto it first.
    local: Vec<usize>,
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
    /// they close a loop.
    pub fn new(nd: usize, groups: &[RowGroup], cross: &[(usize, usize)]) -> Option<Self> {
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
        Some(Self {
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
    /// local groups already eliminated onto it.
    pub fn factorize(
        &self,
        mut diagonal: Vec<Matrix6<f64>>,
        a: &BodyMatrix,
        groups: &[RowGroup],
        systems: &[GroupSystem],
    ) -> Result<TreeFactors<'_>, SolveFailure> {
        let mut blocks = Vec::with_capacity(self.links.len());
        for l in &self.links {
            let inputs = (&diagonal[l.body], a, groups, systems);
            let (block, update) = if 6 + l.rows <= SMALL {
                let (b, u) = LinkBlock::new(U12, l, inputs)?;
                (Block::Small(b), u)
            } else {
                let (b, u) = LinkBlock::new(Dyn(6 + l.rows), l, inputs)?;
                (Block::Large(b), u)
            };
            diagonal[l.parent] -= update;
            blocks.push(block);
        }
        let roots = self
            .roots
            .iter()
            .map(|&r| diagonal[r].lu())
            .collect::<Vec<_>>();
        Ok(TreeFactors {
            tree: self,
            blocks,
            roots,
        })
    }
}

/// Most unknowns of a link block held in fixed-size matrices (a body and up to six
/// rows: a joint with its drive or range); larger blocks are heap-allocated. A smaller
/// block is padded with identity rows (unknowns that stay zero).
const SMALL: usize = 12;

/// A body, the groups joining it to its parent and what [`LinkBlock::new`] reads:
/// the body's diagonal block and the Newton system's blocks.
type LinkInputs<'a> = (
    &'a Matrix6<f64>,
    &'a BodyMatrix,
    &'a [RowGroup],
    &'a [GroupSystem],
);

/// One link's factorized block: the LU of $K_b$, $X_b = K_b^{-1}C_{bp}$ and $C_{pb}$,
/// of dimension `D` ([`SMALL`] on the stack, or dynamic).
struct LinkBlock<D: DimMin<D, Output = D>>
where
    DefaultAllocator: Allocator<D, D> + Allocator<D, U6> + Allocator<U6, D> + Allocator<D>,
{
    lu: LU<f64, D, D>,
    x: OMatrix<f64, D, U6>,
    down: OMatrix<f64, U6, D>,
}

impl<D: DimMin<D, Output = D>> LinkBlock<D>
where
    DefaultAllocator: Allocator<D, D> + Allocator<D, U6> + Allocator<U6, D> + Allocator<D>,
{
    /// Factorizes link `l`'s block of dimension `n` (at least 6 + its rows); also
    /// returns $C_{pb}K_b^{-1}C_{bp}$, to subtract from the parent's block.
    fn new(
        n: D,
        l: &Link,
        (diagonal, a, groups, systems): LinkInputs,
    ) -> Result<(Self, Matrix6<f64>), SolveFailure> {
        let mut k = OMatrix::<f64, D, D>::identity_generic(n, n);
        let mut up = OMatrix::<f64, D, U6>::zeros_generic(n, U6);
        let mut down = OMatrix::<f64, U6, D>::zeros_generic(U6, n);
        k.fixed_view_mut::<6, 6>(0, 0).copy_from(diagonal);
        for &c in &l.cross_up {
            let mut v = up.fixed_view_mut::<6, 6>(0, 0);
            v += &a.cross[c].2;
        }
        for &c in &l.cross_down {
            let mut v = down.fixed_view_mut::<6, 6>(0, 0);
            v += &a.cross[c].2;
        }
        let mut r = 6;
        for &(g, slot) in &l.groups {
            let (s, len) = (&systems[g], groups[g].len);
            let other = 6 * (1 - slot);
            k.view_mut((0, r), (6, len))
                .copy_from(&-s.force.view((0, 6 * slot), (len, 6)).transpose());
            k.view_mut((r, 0), (len, 6))
                .copy_from(&s.jacobian.view((0, 6 * slot), (len, 6)));
            k.view_mut((r, r), (len, len))
                .copy_from(&s.diagonal.view((0, 0), (len, len)));
            up.view_mut((r, 0), (len, 6))
                .copy_from(&s.jacobian.view((0, other), (len, 6)));
            down.view_mut((0, r), (6, len))
                .copy_from(&-s.force.view((0, other), (len, 6)).transpose());
            r += len;
        }
        let lu = k.lu();
        let x = lu.solve(&up).ok_or(SolveFailure::Singular)?;
        let update = &down * &x;
        Ok((Self { lu, x, down }, update))
    }

    /// Forward pass: `y` holds $r_b$ and becomes $K_b^{-1}r_b$; returns $C_{pb}y_b$.
    fn forward(&self, y: &mut [f64]) -> Result<Vector6<f64>, SolveFailure> {
        let (n, _) = self.x.shape_generic();
        let mut v = OVector::<f64, D>::from_column_slice_generic(n, nalgebra::U1, y);
        if !self.lu.solve_mut(&mut v) {
            return Err(SolveFailure::Singular);
        }
        y.copy_from_slice(v.as_slice());
        Ok(&self.down * v)
    }

    /// Backward pass: $x_b = y_b - X_b\Delta u_p$, in place.
    fn back(&self, y: &mut [f64], du_parent: &Vector6<f64>) {
        for (y, d) in y.iter_mut().zip((&self.x * du_parent).iter()) {
            *y -= d;
        }
    }
}

/// A link's block, fixed-size or dynamic.
#[expect(
    clippy::large_enum_variant,
    reason = "the fixed-size blocks are the common case and live inline in one Vec"
)]
enum Block {
    Small(LinkBlock<U12>),
    Large(LinkBlock<Dyn>),
}

impl Block {
    fn forward(&self, y: &mut [f64]) -> Result<Vector6<f64>, SolveFailure> {
        match self {
            Block::Small(b) => b.forward(y),
            Block::Large(b) => b.forward(y),
        }
    }

    fn back(&self, y: &mut [f64], du_parent: &Vector6<f64>) {
        match self {
            Block::Small(b) => b.back(y, du_parent),
            Block::Large(b) => b.back(y, du_parent),
        }
    }

    /// Its unknowns, padding included.
    fn size(&self) -> usize {
        match self {
            Block::Small(_) => SMALL,
            Block::Large(b) => b.x.nrows(),
        }
    }
}

/// The factors of one Newton matrix along its tree.
pub struct TreeFactors<'t> {
    tree: &'t Tree,
    blocks: Vec<Block>,
    roots: Vec<LU<f64, nalgebra::U6, nalgebra::U6>>,
}

impl TreeFactors<'_> {
    /// Solves the body system with the link groups' rows as unknowns: `r_u` is the
    /// bodies' right-hand side with the local groups already eliminated onto it,
    /// `b_g` every group's; returns $\Delta u$ and writes the link groups' $\Delta\lambda_g$
    /// into `dl` (the local groups' entries are left as they are).
    pub fn solve(
        &self,
        mut r_u: Vec<Vector6<f64>>,
        groups: &[RowGroup],
        b_g: &[Vector6<f64>],
        dl: &mut [Vector6<f64>],
    ) -> Result<Vec<Vector6<f64>>, SolveFailure> {
        // Each link's r_b, then y_b, then x_b, one after the other.
        let mut offsets = Vec::with_capacity(self.blocks.len() + 1);
        offsets.push(0);
        for b in &self.blocks {
            offsets.push(offsets[offsets.len() - 1] + b.size());
        }
        let mut ys = vec![0.0; offsets[self.blocks.len()]];
        for (i, (l, b)) in self.tree.links.iter().zip(&self.blocks).enumerate() {
            let y = &mut ys[offsets[i]..offsets[i + 1]];
            y[..6].copy_from_slice(r_u[l.body].as_slice());
            let mut at = 6;
            for &(g, _) in &l.groups {
                let len = groups[g].len;
                y[at..at + len].copy_from_slice(&b_g[g].as_slice()[..len]);
                at += len;
            }
            r_u[l.parent] -= b.forward(y)?;
        }
        let mut du = r_u;
        for (&r, lu) in self.tree.roots.iter().zip(&self.roots) {
            du[r] = lu.solve(&du[r]).ok_or(SolveFailure::Singular)?;
        }
        for (i, (l, b)) in self.tree.links.iter().zip(&self.blocks).enumerate().rev() {
            let x = &mut ys[offsets[i]..offsets[i + 1]];
            b.back(x, &du[l.parent]);
            du[l.body] = Vector6::from_column_slice(&x[..6]);
            let mut at = 6;
            for &(g, _) in &l.groups {
                let len = groups[g].len;
                dl[g] = Vector6::zeros();
                dl[g].as_mut_slice()[..len].copy_from_slice(&x[at..at + len]);
                at += len;
            }
        }
        Ok(du)
    }
}
