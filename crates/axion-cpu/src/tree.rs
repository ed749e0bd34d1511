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

use nalgebra::{DMatrix, DVector, Matrix6, Vector6, linalg::LU};

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
            let n = 6 + l.rows;
            let mut k = DMatrix::zeros(n, n);
            let mut up = DMatrix::zeros(n, 6);
            let mut down = DMatrix::zeros(6, n);
            k.fixed_view_mut::<6, 6>(0, 0).copy_from(&diagonal[l.body]);
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
            diagonal[l.parent] -= &down * &x;
            blocks.push(Block { lu, x, down });
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

/// One link's factorized block: the LU of $K_b$, $X_b = K_b^{-1}C_{bp}$ and $C_{pb}$.
struct Block {
    lu: LU<f64, nalgebra::Dyn, nalgebra::Dyn>,
    x: DMatrix<f64>,
    down: DMatrix<f64>,
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
        let mut ys = Vec::with_capacity(self.blocks.len());
        for (l, b) in self.tree.links.iter().zip(&self.blocks) {
            let mut r = DVector::zeros(6 + l.rows);
            r.fixed_rows_mut::<6>(0).copy_from(&r_u[l.body]);
            let mut i = 6;
            for &(g, _) in &l.groups {
                let len = groups[g].len;
                r.rows_mut(i, len).copy_from(&b_g[g].rows(0, len));
                i += len;
            }
            let y = b.lu.solve(&r).ok_or(SolveFailure::Singular)?;
            r_u[l.parent] -= Vector6::from_iterator((&b.down * &y).iter().copied());
            ys.push(y);
        }
        let mut du = r_u;
        for (&r, lu) in self.tree.roots.iter().zip(&self.roots) {
            du[r] = lu.solve(&du[r]).ok_or(SolveFailure::Singular)?;
        }
        for ((l, b), y) in self.tree.links.iter().zip(&self.blocks).zip(&ys).rev() {
            let x = y - &b.x * du[l.parent];
            du[l.body] = x.fixed_rows::<6>(0).into_owned();
            let mut i = 6;
            for &(g, _) in &l.groups {
                let len = groups[g].len;
                dl[g] = Vector6::zeros();
                dl[g].rows_mut(0, len).copy_from(&x.rows(i, len));
                i += len;
            }
        }
        Ok(du)
    }
}
