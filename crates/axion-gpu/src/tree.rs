//! Rust twin of `shaders/step_tree.wgsl`: the plan by which the kernels solve each
//! Newton iteration's linear system directly along the model's tree of bodies, and the
//! loop passes that costs.
//!
//! # The system
//!
//! With $x = h\thinspace\Delta\lambda$ the Newton system of a step (`step.rs`) is, unreduced,
//! $$\hat M\thinspace\Delta u - F^\top x = -h'_{dyn},\qquad J\thinspace\Delta u + C x = -h_c,$$
//! $J$ the rows' velocity Jacobians, $F$ their force Jacobians ($F = J$ but where a
//! fixed slip row is coupled to its contact's normal row, whose force then carries
//! $\mu$ times the slip direction: `GpuSettings::slip_coupling`), $C$ the compliances
//! with the regularisation, and $\hat M$ the mass matrix with the joints' and drives'
//! geometric stiffness $K$ (as the CPU's Newton matrix): per body
//! $\hat M_{bb} = \mathrm{diag}(m I,\ I_w + hD) - h^2K_{bb}$ with the gyroscopic term
//! $D = I_w[\omega]_\times - [I_w\omega]_\times$, and for a joint between a body $c$ and
//! its tree parent $p$ the off-diagonal blocks $-N_{cp} = -h^2K_{cp}$ and
//! $-N_{pc} = -h^2K_{pc}$. Its graph is the robot's: a joint's rows (with its drive and
//! limit rows) and its stiffness link its two bodies; a contact with the ground or
//! another static body touches one body. On a tree of bodies it is eliminated from the
//! leaves to the root exactly, with $6\times6$ and small dense blocks only — Baraff's
//! linear-time elimination generalised to non-symmetric rows and couplings, in
//! *mobility* form so that every block stays the size of an inverse mass, never of a
//! penalty $1/C$.
//!
//! # Forward sweep, per body $b$ (children first)
//!
//! Once a child $c$ is eliminated,
//! $\Delta u_c = \Phi_c(F_{e,c}^\top x_e + N_{cb}\Delta u_b) + v_c$ ($e$ the group of
//! rows of the joint to $b$). Substituting it gives $b$ the block and right-hand side
//! $$M'_b = \hat M_{bb} - \sum_c N_{bc}\Phi_c N_{cb},\qquad
//!   v_b = M_b'^{-1}\Big(-h'_{dyn,b} + \sum_c N_{bc} v_c\Big),$$
//! and each child's group the Jacobians on $b$
//! $J'_{e,b} = J_{e,b} + J_{e,c}\Phi_c N_{cb}$ and
//! $F'^\top_{e,b} = F^\top_{e,b} + N_{bc}\Phi_c F^\top_{e,c}$. The relation
//! $\Delta u_b = \Phi_b f + v_b$ between $b$'s velocity step and the forces $f$ of rows
//! not yet eliminated starts at $\Phi_b = M_b'^{-1}$ ($6\times6$, by its $3\times3$
//! blocks: the closed-form inverse of the translational block, Gauss–Jordan with
//! pivoting for the Schur complement, which stays backward stable on a point mass on a
//! lever). Each *group* of rows at $b$ — the rows of a joint to a child, or rows that
//! touch $b$ and static bodies only (a contact slot, a joint to the world) — is then
//! eliminated in turn:
//! $$S_g = J_{g,b}\Phi_b F_{g,b}^\top + D_g,\qquad
//!   D_g = J_{g,c}\Phi_c F_{g,c}^\top + C_g\ \ (\text{or } C_g \text{ without a child}),$$
//! $$e_g = r_g - J_{g,b}v_b - J_{g,c}v_c,\qquad P_g = \Phi_b F_{g,b}^\top S_g^{-1},\qquad
//!   Q_g = J_{g,b}\Phi_b,$$
//! $$v_b \leftarrow v_b + P_g e_g,\qquad \Phi_b \leftarrow \Phi_b - P_g Q_g$$
//! ($J$, $F$ on $b$ being $J'$, $F'$ for a child's group; $r_g = -h_c$). $\Phi_b$ ends as
//! the mobility of $b$ with everything below it attached and pressed: the inverse of its
//! articulated inertia. The factorization and this sweep are one pass (`tree_factor`,
//! kernel `step_factor`), once per Newton iteration.
//!
//! # Backward sweep, per body (roots first)
//!
//! With $f$ the force on $b$ from above — $F^\top x$ of its parent's group on $b$'s side
//! plus the coupling $N_{bp}\Delta u_p$ (zero at a root) — $\Delta u_b = \Phi_b f + v_b$,
//! and the groups at $b$ in reverse order give
//! $$x_g = S_g^{-1}\big(e_g - Q_g f\big),\qquad f \leftarrow f + F_{g,b}^\top x_g$$
//! (`tree_backward`, kernel `step_direction`): the Newton direction, $\Delta u$ and
//! $\Delta\lambda$, without an iteration.
//!
//! # One refinement of each group's solve
//!
//! $S_g^{-1}$ is formed by Gauss–Jordan, and a product with an inverse is not backward
//! stable: its residual grows with the condition of $S_g$ (a fixed joint's six rows, a
//! drive's on a light link). So $P_g$ and each $x_g$ are refined once against $S_g$,
//! kept for it: $P \leftarrow P + (\Phi F^\top - PS)S^{-1}$ and
//! $x \leftarrow x + S^{-1}(r - Sx)$, in f32 (`Packed::tree_refined`: always on hardware,
//! and under lavapipe's loop budget where the refined factorization fits it; the others
//! are solved along the tree unrefined). On lavapipe this took the solve's
//! backward error after 40 steps from 6.7e-6 to 9.0e-7 on a chain with every kind of
//! joint and from 2.4e-5 to 5.9e-7 on the pendulum's point mass (`tests/tree.rs`); an
//! NVIDIA H200 had measured 1.7e-5 and 7.1e-5 without it.
//!
//! Rows fixed at the iterate (separated contacts, a slip's force, empty slots, inactive
//! limits) are masked out: their step is on the right-hand side, in $h'_{dyn}$. The plan
//! is `TreePlan::direct` only where every row lies in a group: no contact between two
//! dynamic bodies, no joint closing a loop, no joint with more rows than the group
//! bound `TREE_GROUP_MAX` (12). Elsewhere — and with `GpuSettings::tree_solve` off, in
//! a Newton iteration where a block is singular or not finite in f32, while a world's
//! slip coupling is lagged, and on lavapipe for a model whose factorization would not
//! fit one invocation's loop budget (`Packed::tree_fits`) — the Schur system
//! $(JM^{-1}F^\top + C)\Delta\lambda = b$ is solved by the Krylov method instead.
//!
//! # Why direct
//!
//! The Krylov solve with a Jacobi preconditioner needs many iterations on a robot (mass
//! ratios of 1000, long chains) and in f32 its directions were not good enough: measured
//! on lavapipe (four worlds, 0.5 s), a1's drop converged in 72 % of its steps at 12
//! Newton iterations each on average. Solved along the tree every step converges, at
//! 4.3 iterations; with the stiffness on each body's own block only (no couplings $N$),
//! 45 of its 50 steps, at 10.6 (docs/gpu.md, which also has the roles of the friction
//! creep and of the second attempt).

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
    /// for a group with a child its rows' $J'$ and $F'$ on the local body
    /// ($n\times6$ each, the direct solve's), and $S$ ($n\times n$, which each solve
    /// with $S^{-1}$ is refined against).
    pub fn floats(n: usize, child: bool) -> usize {
        1 + 13 * n + 2 * n * n + if child { 12 * n } else { 0 }
    }
}

/// The elimination order and groups of a model (empty: no rows on a tree).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TreePlan {
    /// Every dynamic body (the backward sweep writes each one's velocity step), every
    /// child before its parent, each with the group that joins it to its parent (eliminated at the
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
        let mut parent = vec![None; n_bodies];
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
                        parent[other] = Some(b);
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
            if let Some(p) = parent[b] {
                children[p].push(b);
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
        plan.parent = parent;
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
    /// `Packed::linear_chunk`), with $n$ a group's rows:
    /// * per body of the plan about 80: its $6\times6$ block inverted by $3\times3$
    ///   blocks, one of them by Gauss–Jordan ($3^3 + 2.5\cdot3^2$ passes with the pivot
    ///   search), and the loop over its groups;
    /// * per group $n^3 + 6n^2 + 8n + 8$: the inverse of $S$ by Gauss–Jordan
    ///   ($n^3 + 2.5n^2 + n$ with the pivot search), $S$ and $P$ ($n^2 + n$ each), $Q$
    ///   (with $P$'s refinement where `refined`: $n^2$ more), loading the rows, counting
    ///   the free ones, the update of $\Phi$ and the forward sweep ($n$, $n$, $n$ and
    ///   $2n$), and where `refined` $P$'s residual ($n^2 + n$);
    /// * per group with a child $n^2 + 4n + 4$: its $D$ and its rows' $J'$ and $F'$;
    /// * the body matrices: a pass per body of the model (`bodies`), per joint and per
    ///   drive (`stiffness_terms`), with 16 more for each term's own loops.
    pub fn factor_passes(&self, bodies: usize, stiffness_terms: usize, refined: bool) -> usize {
        let groups: usize = self
            .groups
            .iter()
            .map(|g| {
                let n = g.rows.len();
                n * n * n + 6 * n * n + 8 * n + 8 + if refined { 2 * n * n + n } else { 0 }
            })
            .sum();
        let edges: usize = self
            .groups
            .iter()
            .filter(|g| g.child.is_some())
            .map(|g| g.rows.len() * g.rows.len() + 4 * g.rows.len() + 4)
            .sum();
        80 * self.bodies.len() + groups + edges + bodies + 17 * stiffness_terms + 16
    }

    /// An upper bound on the loop passes of one backward sweep (`tree_backward`,
    /// step_tree.wgsl): per body of the plan a few, and per group of $n$ rows
    /// $n^2 + 4n + 4$ (its right-hand side $e - Qf$, $x = S^{-1}(e - Qf)$, the force it
    /// passes on, and the parent group's force on its child), and $2n^2 + 2n$ more where
    /// `refined` (the residual and the refinement of $x$).
    pub fn backward_passes(&self, refined: bool) -> usize {
        let groups: usize = self
            .groups
            .iter()
            .map(|g| {
                let n = g.rows.len();
                n * n + 4 * n + 4 + if refined { 2 * n * n + 2 * n } else { 0 }
            })
            .sum();
        4 * self.bodies.len() + groups + 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::pack;
    use axion::scenes;
    use axion_model::{BodyDesc, JointDesc, JointType, ModelBuilder};
    use nalgebra::{Matrix3, Vector3};

    /// Checks the invariants every plan has: every dynamic body once, each after its
    /// children; each row in at most one group, at most `TREE_GROUP_MAX` to a group;
    /// the scratch floats summed from the groups.
    fn check_plan(model: &Model, plan: &TreePlan, rows: usize) {
        let order: Vec<usize> = plan.bodies.iter().map(|b| b.0).collect();
        let dynamic: Vec<usize> = (0..model.bodies().len())
            .filter(|&b| model.bodies()[b].is_dynamic())
            .collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, dynamic, "every dynamic body once");
        let at = |b: usize| order.iter().position(|&x| x == b).unwrap();
        for &b in &order {
            if let Some(p) = plan.parent[b] {
                assert!(
                    at(b) < at(p),
                    "body {b} is eliminated before its parent {p}"
                );
            }
        }
        let mut seen = vec![false; rows];
        let mut floats = 0;
        for g in &plan.groups {
            assert!(!g.rows.is_empty() && g.rows.len() <= TREE_GROUP_MAX);
            for &(i, _) in &g.rows {
                assert!(!seen[i as usize], "row {i} in two groups");
                seen[i as usize] = true;
            }
            assert_eq!(g.offset, floats);
            floats += Group::floats(g.rows.len(), g.child.is_some());
        }
        assert_eq!(plan.floats, floats);
        assert_eq!(plan.direct, seen.iter().all(|&s| s));
    }

    #[test]
    fn robots_and_chains_are_solved_along_their_tree() {
        for model in [
            scenes::chain(scenes::ChainOptions::default()).unwrap(),
            scenes::skid_steer([2.0, 6.0, 4.0]).unwrap(),
            scenes::cartpole(1.0).unwrap(),
        ] {
            let p = pack(&model).unwrap();
            check_plan(&model, &p.tree, p.rows);
            assert!(p.tree.direct);
        }
    }

    /// Without a loop budget every chain is solved along its tree with each group's solve
    /// refined; under lavapipe's budget, as the chain grows, first refined, then
    /// unrefined (the refinement's loops no longer fit: the corpus's minitaur is such a
    /// model), then by the Krylov solve, each for a range of lengths.
    #[test]
    fn the_loop_budget_drops_the_refinement_before_the_tree() {
        let mut kinds = Vec::new();
        for links in 1..=100 {
            let chain = scenes::chain(scenes::ChainOptions {
                links,
                ..Default::default()
            })
            .unwrap();
            let p = pack(&chain).unwrap();
            assert!(p.tree_fits(false) && p.tree_refined(false), "{links} links");
            let kind = match (p.tree_fits(true), p.tree_refined(true)) {
                (true, true) => "refined",
                (true, false) => "unrefined",
                (false, _) => "krylov",
            };
            if kinds.last() != Some(&kind) {
                kinds.push(kind);
            }
        }
        assert_eq!(kinds, ["refined", "unrefined", "krylov"]);
    }

    /// Contacts between two dynamic bodies (a stack of boxes) and a joint that closes a
    /// loop leave rows off the tree: the Krylov solve then takes the system.
    #[test]
    fn rows_off_the_tree_are_not_solved_along_it() {
        let stack = scenes::stack(3).unwrap();
        let p = pack(&stack).unwrap();
        check_plan(&stack, &p.tree, p.rows);
        assert!(!p.tree.direct, "contacts between boxes are off the tree");

        // Three links hinged in a chain from the world, the last hinged back to the
        // first: a loop.
        let mut b = ModelBuilder::new();
        let mut links = Vec::new();
        for k in 0..3 {
            let at = Vector3::new(k as f64, 0.0, 0.0);
            let body = BodyDesc::dynamic(format!("link {k}")).at(at).mass(
                1.0,
                Vector3::zeros(),
                Matrix3::identity() * 0.1,
            );
            links.push(b.add_body(body).unwrap());
        }
        let hinge = || JointType::Revolute { axis: Vector3::z() };
        let mut parent = None;
        for (k, &link) in links.iter().enumerate() {
            b.add_joint(JointDesc::new(format!("joint {k}"), hinge(), parent, link))
                .unwrap();
            parent = Some(link);
        }
        b.add_joint(JointDesc::new("closing", hinge(), Some(links[2]), links[0]))
            .unwrap();
        let looped = b.build().unwrap();
        let p = pack(&looped).unwrap();
        check_plan(&looped, &p.tree, p.rows);
        assert!(!p.tree.direct, "the closing joint is off the tree");
        let in_groups: usize = p.tree.groups.iter().map(|g| g.rows.len()).sum();
        assert_eq!(
            in_groups,
            p.rows - 5,
            "all but the closing hinge's five rows"
        );
    }
}
