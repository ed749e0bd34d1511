//! Rust twin of `shaders/step_tree.wgsl`: the plan by which the kernels factorize each
//! Newton iteration's Schur system along the model's tree of bodies, and the loop
//! passes that costs.
//!
//! # What is factorized
//!
//! The Schur system of a Newton iteration (`step.rs`) is
//! $A\thinspace\Delta\lambda = b$ with $A = J\hat M^{-1}F^\top + C$: $J$ the rows' velocity
//! Jacobians, $F$ their force Jacobians ($F = J$ but where a fixed slip row is coupled
//! to its contact's normal row, whose force then carries $\mu$ times the slip
//! direction: `GpuSettings::slip_coupling`), $\hat M$ block diagonal per body and $C$
//! the rows' compliances with the regularisation. With $y = \hat M^{-1}F^\top x$ it is
//! the unreduced system
//! $$\hat M y - F^\top x = 0,\qquad J y + C x = r,$$
//! whose graph is the robot's: a joint's rows (with its drive and limit rows) link its
//! two bodies, a contact with the ground or another static body touches one body. On
//! a tree of bodies it is eliminated from the leaves to the roots exactly, with
//! $6\times6$ and small dense blocks only (a block form of Baraff's linear-time
//! elimination, in *mobility* form so that every block stays the size of an inverse
//! mass, never of a penalty $1/C$).
//!
//! **Forward, per body $b$** (children first): the relation
//! $y_b = \Phi_b f + v_b$ between $b$'s velocity and the forces $f$ of the rows not yet
//! eliminated starts at $\Phi_b = \hat M_b^{-1}$, $v_b = 0$. Each *group* of rows at
//! $b$ — the rows of a joint to a child $c$ (whose own relation is final), or rows that
//! touch $b$ and static bodies only (a contact slot, a joint to the world) — is
//! eliminated in turn:
//! $$S_g = J_{g,b}\Phi_b F_{g,b}^\top + D_g,\qquad
//!   D_g = J_{g,c}\Phi_c F_{g,c}^\top + C_g\ \ (\text{or } C_g \text{ without a child}),$$
//! $$e_g = r_g - J_{g,b}v_b - J_{g,c}v_c,\qquad P_g = \Phi_b F_{g,b}^\top S_g^{-1},\qquad
//!   Q_g = J_{g,b}\Phi_b,$$
//! $$v_b \leftarrow v_b + P_g e_g,\qquad \Phi_b \leftarrow \Phi_b - P_g Q_g .$$
//! ($\Phi_b$ becomes the mobility of $b$ with everything below it attached and pressed:
//! the articulated-body inertia's inverse, bounded by $\hat M_b^{-1}$.)
//!
//! **Backward, per body** (roots first): with $f$ the force of the group towards the
//! parent, $F^\top x$ of its rows on $b$'s side (zero at a root), the groups at $b$ in
//! reverse order give
//! $$x_g = S_g^{-1}\big(e_g - Q_g f\big),\qquad f \leftarrow f + F_{g,b}^\top x_g .$$
//!
//! The factorization ($S_g^{-1}$, $P_g$, $Q_g$) is done once per Newton iteration
//! (`tree_factor`, kernel `step_factor`); a solve (`tree_apply`) is the two sweeps
//! over the rows. Rows fixed at the iterate (separated contacts, a slip's force, empty
//! slots, inactive limits) are masked out: their step is on the right-hand side, as in
//! the Krylov solve. Rows the plan leaves out — contacts between two dynamic bodies, a
//! joint that closes a loop, a joint whose rows exceed [`TREE_GROUP_MAX`] — keep the
//! Jacobi preconditioner's diagonal.
//!
//! # How it is used
//!
//! As the preconditioner $K$ of the linear solve (conjugate residual, ORTHOMIN(2) with
//! slip coupling): on a model whose rows all lie on its tree (a robot on the ground
//! without self-collision) $K = A^{-1}$ up to f32 rounding, so the first Krylov step is
//! the Newton direction and the next ones refine it, as iterative refinement would; with
//! rows off the tree the Krylov method handles their coupling.

use axion_model::Model;

use crate::layout::{NONE, TREE_BODY_U, TREE_GROUP_MAX, TREE_GROUP_U};

/// Which of the model's things a row belongs to (`step::pack` lists them in row order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum RowOwner {
    /// A joint's row, or a drive or limit row of that joint (the model's joint index).
    Joint(usize),
    /// A row of contact slot `k` (three per slot).
    Slot(usize),
}

/// A group of rows eliminated together at one body (its `local` body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    /// The rows and the side (0 or 1) of each on which the local body is.
    pub rows: Vec<(u32, u32)>,
    /// The child at the rows' other side, for the rows of a joint between two dynamic
    /// bodies; `None` for rows that touch the local body and static bodies only.
    pub child: Option<usize>,
    /// First scratch float of the group's factors, relative to the tree section.
    pub offset: usize,
}

impl Group {
    /// Scratch floats of a group of `n` rows: an active flag, $Q$ ($n\times6$), $P$
    /// ($6\times n$), $S^{-1}$ ($n\times n$; the child's $D$ before that) and $e$ ($n$),
    /// and for a group with a child its rows' $J'$ and $F'$ on the local body
    /// ($n\times6$ each, the direct solve's).
    pub fn floats(n: usize, child: bool) -> usize {
        1 + 13 * n + n * n + if child { 12 * n } else { 0 }
    }
}

/// The elimination order and groups of a model (empty: no rows on a tree).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TreePlan {
    /// The dynamic bodies that have groups or a parent, every child before its
    /// parent, each with the group that joins it to its parent (eliminated at the
    /// parent) and its own groups (indices into `groups`, in elimination order).
    pub bodies: Vec<(usize, Option<usize>, std::ops::Range<usize>)>,
    pub groups: Vec<Group>,
    /// Scratch floats of all groups.
    pub floats: usize,
    /// Each body's parent in the tree.
    pub parent: Vec<Option<usize>>,
    /// Whether every row lies in a group (no contact between two dynamic bodies, no
    /// joint closing a loop): the Newton system is then solved directly along the tree.
    pub direct: bool,
}

/// Union–find over the dynamic bodies.
fn root_of(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

impl TreePlan {
    /// The plan for `model`, whose rows join the bodies `row_bodies` (side 0, side 1;
    /// [`NONE`] for the world) and belong to `owners`.
    ///
    /// Tree edges are the joints between two dynamic bodies, merged per pair of bodies,
    /// taken in the model's joint order while they close no loop and their rows fit in
    /// [`TREE_GROUP_MAX`]. Each connected part is rooted at its lowest-numbered body
    /// that is no tree joint's child (a robot's base). Rows touching one dynamic body
    /// form groups at it: a contact slot's three rows, or a joint's rows to the world in
    /// groups of at most [`TREE_GROUP_MAX`].
    pub fn new(model: &Model, row_bodies: &[(u32, u32)], owners: &[RowOwner]) -> Self {
        let n_bodies = model.bodies().len();
        let dynamic = |b: u32| b != NONE && model.bodies()[b as usize].is_dynamic();
        // Rows of each pair of dynamic bodies joined by joints, in joint order.
        let mut pairs: Vec<((usize, usize), Vec<u32>)> = Vec::new();
        let mut leaf: Vec<Vec<(RowOwner, u32, u32)>> = vec![Vec::new(); n_bodies];
        for (i, (&(a, b), &owner)) in row_bodies.iter().zip(owners).enumerate() {
            match (dynamic(a), dynamic(b)) {
                (true, true) => {
                    if let RowOwner::Joint(_) = owner {
                        let key = (a.min(b) as usize, a.max(b) as usize);
                        match pairs.iter_mut().find(|(k, _)| *k == key) {
                            Some((_, rows)) => rows.push(i as u32),
                            None => pairs.push((key, vec![i as u32])),
                        }
                    }
                }
                (true, false) => leaf[a as usize].push((owner, i as u32, 0)),
                (false, true) => leaf[b as usize].push((owner, i as u32, 1)),
                (false, false) => {}
            }
        }
        let mut uf: Vec<usize> = (0..n_bodies).collect();
        let mut edges: Vec<(usize, usize, Vec<u32>)> = Vec::new();
        for ((a, b), rows) in pairs {
            if rows.len() > TREE_GROUP_MAX {
                continue;
            }
            let (ra, rb) = (root_of(&mut uf, a), root_of(&mut uf, b));
            if ra != rb {
                uf[ra] = rb;
                edges.push((a, b, rows));
            }
        }
        // A joint's child: the body on side 1 of its rows.
        let mut is_child = vec![false; n_bodies];
        for (_, _, rows) in &edges {
            is_child[row_bodies[rows[0] as usize].1 as usize] = true;
        }
        let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); n_bodies];
        for (e, (a, b, _)) in edges.iter().enumerate() {
            neighbours[*a].push(e);
            neighbours[*b].push(e);
        }
        // Breadth-first from the roots: parents before children.
        let mut seen = vec![false; n_bodies];
        let mut order = Vec::new();
        let mut parent_edge = vec![None; n_bodies];
        let candidates = (0..n_bodies)
            .filter(|&b| !is_child[b])
            .chain(0..n_bodies)
            .filter(|&b| model.bodies()[b].is_dynamic());
        for root in candidates {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            let start = order.len();
            order.push(root);
            let mut k = start;
            while k < order.len() {
                let b = order[k];
                for &e in &neighbours[b] {
                    let (x, y, _) = &edges[e];
                    let other = if *x == b { *y } else { *x };
                    if !seen[other] {
                        seen[other] = true;
                        parent_edge[other] = Some(e);
                        order.push(other);
                    }
                }
                k += 1;
            }
        }
        // Children before parents; groups at each body: its children's edges, then its
        // rows to static bodies.
        let mut plan = TreePlan::default();
        let mut edge_group = vec![None; edges.len()];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n_bodies];
        for &b in &order {
            if let Some(e) = parent_edge[b] {
                let (x, y, _) = &edges[e];
                children[if *x == b { *y } else { *x }].push(b);
            }
        }
        for &b in order.iter().rev() {
            let first = plan.groups.len();
            for &c in &children[b] {
                let e = parent_edge[c].expect("a child has a parent edge");
                let rows = edges[e]
                    .2
                    .iter()
                    .map(|&i| (i, u32::from(row_bodies[i as usize].1 == b as u32)))
                    .collect();
                edge_group[e] = Some(plan.groups.len());
                plan.push(rows, Some(c));
            }
            // A joint's rows (with its drive and limit rows) together, a slot's three.
            let mut own = std::mem::take(&mut leaf[b]);
            own.sort_by_key(|&(o, i, _)| (o, i));
            for part in own.chunk_by(|x, y| x.0 == y.0) {
                for rows in part.chunks(TREE_GROUP_MAX) {
                    plan.push(rows.iter().map(|&(_, i, side)| (i, side)).collect(), None);
                }
            }
            let groups = first..plan.groups.len();
            plan.bodies.push((b, parent_edge[b], groups));
        }
        // The parent edge's group index (known once the parent was reached).
        for entry in &mut plan.bodies {
            entry.1 = entry
                .1
                .map(|e| edge_group[e].expect("edge grouped at its parent"));
        }
        plan.parent = parent_edge
            .iter()
            .enumerate()
            .map(|(b, e)| {
                e.map(|e| {
                    if edges[e].0 == b {
                        edges[e].1
                    } else {
                        edges[e].0
                    }
                })
            })
            .collect();
        plan.direct = plan.rows() == row_bodies.len();
        plan
    }

    fn push(&mut self, rows: Vec<(u32, u32)>, child: Option<usize>) {
        let offset = self.floats;
        self.floats += Group::floats(rows.len(), child.is_some());
        self.groups.push(Group {
            rows,
            child,
            offset,
        });
    }

    /// Rows in the plan's groups.
    pub fn rows(&self) -> usize {
        self.groups.iter().map(|g| g.rows.len()).sum()
    }

    /// The plan packed into `model_u` words: the bodies ([`TREE_BODY_U`] each: body,
    /// parent group or [`NONE`], first group, group count), the groups
    /// ([`TREE_GROUP_U`] each: rows, first entry, child or [`NONE`], scratch offset),
    /// the entries (row, side of the local body) and, for each joint of the kernels
    /// (its bodies `joints`, [`NONE`] for the world), the side (0 parent, 1 child)
    /// that is the tree child of the other, or [`NONE`]. Returns the first word of each
    /// of the four lists.
    pub fn pack(&self, joints: &[(u32, u32)], out: &mut Vec<u32>) -> [usize; 4] {
        let bodies = out.len();
        const _: () = assert!(TREE_BODY_U == 4 && TREE_GROUP_U == 4);
        for (b, up, groups) in &self.bodies {
            out.extend([
                *b as u32,
                up.map_or(NONE, |g| g as u32),
                groups.start as u32,
                groups.len() as u32,
            ]);
        }
        let groups = out.len();
        let mut entry = 0;
        for g in &self.groups {
            out.extend([
                g.rows.len() as u32,
                entry as u32,
                g.child.map_or(NONE, |c| c as u32),
                g.offset as u32,
            ]);
            entry += g.rows.len();
        }
        let entries = out.len();
        for g in &self.groups {
            for &(i, side) in &g.rows {
                out.extend([i, side]);
            }
        }
        let sides = out.len();
        let parent = |b: u32| self.parent.get(b as usize).copied().flatten();
        for &(p, c) in joints {
            out.push(if p != NONE && parent(c) == Some(p as usize) {
                1
            } else if p != NONE && parent(p) == Some(c as usize) {
                0
            } else {
                NONE
            });
        }
        [bodies, groups, entries, sides]
    }

    /// An upper bound on the loop passes of `tree_factor` (step_tree.wgsl) for one
    /// invocation, counted as lavapipe does (each pass of each loop; see
    /// `Packed::linear_chunk`): per body about 80 (its $6\times6$ block is inverted by
    /// $3\times3$ blocks, one of them by Gauss–Jordan), per group of $n$ rows
    /// $8 + 6n + 4n^2 + n^3$ (the rows, $S$, its inverse with pivot search, the
    /// products, the forward sweep) and per parent edge $2 + 3n + n^2$ for $D$, $J'$ and
    /// $F'$; and per joint a pass of the body matrices.
    pub fn factor_passes(&self, joints: usize) -> usize {
        let groups: usize = self
            .groups
            .iter()
            .map(|g| {
                let n = g.rows.len();
                8 + 6 * n + 4 * n * n + n * n * n
            })
            .sum();
        let edges: usize = self
            .groups
            .iter()
            .filter(|g| g.child.is_some())
            .map(|g| 2 + 3 * g.rows.len() + g.rows.len() * g.rows.len())
            .sum();
        80 * self.bodies.len() + groups + edges + 2 * joints + 16
    }

    /// An upper bound on the loop passes of one `tree_apply` (step_tree.wgsl): a pass
    /// over every row (the diagonal for the rows off the tree), and per group of $n$
    /// rows $6n + n^2$ over both sweeps.
    pub fn apply_passes(&self, rows: usize) -> usize {
        let groups: usize = self
            .groups
            .iter()
            .map(|g| 4 + 8 * g.rows.len() + g.rows.len() * g.rows.len())
            .sum();
        rows + 4 * self.bodies.len() + groups + 16
    }
}
