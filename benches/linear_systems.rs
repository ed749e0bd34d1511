//! Five ways to solve a Newton iteration of a chain, timed on the same Jacobians:
//!
//! * `tree`: block elimination along the chain, each body with the rows joining it to
//!   its parent, then iterative refinement — what `axion-cpu` does on a tree
//!   (`axion_cpu::tree`);
//! * `reduced_lu`: the joint rows eliminated onto the bodies' velocities, the body
//!   system M̃ − h²K + h Jᵀ D⁻¹ J (D the rows' diagonal) by sparse LU, with iterative
//!   refinement — what `axion-cpu` does on graphs with loops (`axion_cpu::reduced`);
//! * `kkt_lu`: the full system [[M̃ − h²K, −hJᵀ], [J, hC]] with the geometric stiffness
//!   K by sparse LU — what `axion-cpu` did before;
//! * `kkt_ldlt`: that system symmetrised (the symmetric part of K, −hJ below the
//!   diagonal) by sparse LDLᵀ with dynamic regularisation;
//! * `schur_llt`: the Schur complement J M̃⁻¹ Jᵀ + C by sparse Cholesky, then
//!   Δu = M̃⁻¹(…) — only possible when the velocity block is block-diagonal, i.e.
//!   *without* geometric stiffness.
//!
//! All include assembling the values and reuse their symbolic analysis.
//! `cargo bench --bench linear_systems`

use std::hint::black_box;

use axion::prelude::*;
use axion::scenes::{ChainOptions, chain};
use axion_constraints::RowJacobian;
use axion_cpu::reduced::{BodyMatrix, GroupSystem, ReducedLu, RowGroup};
use axion_cpu::sparse::SparseLu;
use axion_math::Pose;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::cholesky::{LltRef, SymbolicCholesky, factorize_symbolic_cholesky};
use faer::sparse::{Pair, SparseColMat, SymbolicSparseColMat};
use faer::{Conj, MatMut, Par, Side};
use nalgebra::{Matrix6, Vector6};

const H: f64 = 0.01;
const REG: f64 = 1e-10;

/// Joint rows (bodies, Jacobian), geometric stiffness and mass blocks of a chain after
/// 10 steps of its motion (so that forces and stiffness are those of a real solve).
struct Problem {
    n_bodies: usize,
    rows: Vec<(Option<usize>, usize, RowJacobian)>,
    /// Stiffness blocks −h² K_ij between (and on) bodies.
    stiffness: Vec<(usize, usize, Matrix6<f64>)>,
    mass: Vec<Matrix6<f64>>,
    inv_mass: Vec<Matrix6<f64>>,
}

fn problem(links: usize) -> Problem {
    let model = chain(ChainOptions {
        links,
        ..Default::default()
    })
    .expect("built-in scene");
    let mut sim = Simulator::new(model.clone(), 1, H, BackendChoice::Cpu).expect("simulator");
    sim.run(10).expect("steps");
    let poses: Vec<Pose> = sim.state().world_poses(0).to_vec();
    let lambda = sim.state().joint_forces(0);
    let mut rows = Vec::new();
    let mut stiffness = Vec::new();
    let mut buf = Vec::new();
    for j in model.joints() {
        buf.clear();
        let parent = j.parent.map_or(Pose::identity(), |p| poses[p.0]);
        j.joint.position_rows(&parent, &poses[j.child.0], &mut buf);
        rows.extend(
            buf.iter()
                .map(|r| (j.parent.map(|p| p.0), j.child.0, r.jacobian)),
        );
        let k = j.joint.stiffness(
            &parent,
            &poses[j.child.0],
            &lambda[j.first_row..j.first_row + buf.len()],
        );
        let bodies = [j.parent.map(|p| p.0), Some(j.child.0)];
        for a in 0..2 {
            for b in 0..2 {
                if let (Some(x), Some(y)) = (bodies[a], bodies[b]) {
                    stiffness.push((x, y, k.blocks[a][b] * (-H * H)));
                }
            }
        }
    }
    let block = |b: &axion_model::Body, q: &Pose, inverse: bool| {
        let mut m = Matrix6::zeros();
        let (lin, ang) = if inverse {
            (b.mass.inv_mass(), b.mass.world_inv_inertia(&q.rotation))
        } else {
            (b.mass.mass(), b.mass.world_inertia(&q.rotation))
        };
        m.fixed_view_mut::<3, 3>(0, 0).fill_diagonal(lin);
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&ang);
        m
    };
    Problem {
        n_bodies: poses.len(),
        mass: model
            .bodies()
            .iter()
            .zip(&poses)
            .map(|(b, q)| block(b, q, false))
            .collect(),
        inv_mass: model
            .bodies()
            .iter()
            .zip(&poses)
            .map(|(b, q)| block(b, q, true))
            .collect(),
        rows,
        stiffness,
    }
}

/// Emits the KKT matrix (pattern or values) in a fixed order.
fn kkt(p: &Problem, out: &mut Vec<(usize, usize, f64)>) {
    out.clear();
    let nb = p.n_bodies;
    let blocks = p
        .mass
        .iter()
        .enumerate()
        .map(|(b, m)| (b, b, *m))
        .chain(p.stiffness.iter().copied());
    for (x, y, m) in blocks {
        for c in 0..6 {
            for r in 0..6 {
                out.push((6 * x + r, 6 * y + c, m[(r, c)]));
            }
        }
    }
    for (i, (parent, child, j)) in p.rows.iter().enumerate() {
        let col = 6 * nb + i;
        for (body, block) in [(*parent, &j.body_a), (Some(*child), &j.body_b)] {
            if let Some(b) = body {
                for c in 0..6 {
                    out.push((6 * b + c, col, -H * block[c]));
                    out.push((col, 6 * b + c, block[c]));
                }
            }
        }
        out.push((col, col, REG));
    }
}

/// Emits the lower triangle of the symmetrised KKT [[M̃ − h² K_sym, −hJᵀ], [−hJ, −hδ]].
fn kkt_sym(p: &Problem, out: &mut Vec<(usize, usize, f64)>) {
    out.clear();
    let nb = p.n_bodies;
    for (b, m) in p.mass.iter().enumerate() {
        for c in 0..6 {
            for r in c..6 {
                out.push((6 * b + r, 6 * b + c, m[(r, c)]));
            }
        }
    }
    for &(x, y, m) in &p.stiffness {
        let sym = (m + m.transpose()) * 0.5;
        for c in 0..6 {
            for r in 0..6 {
                if 6 * x + r >= 6 * y + c {
                    out.push((
                        6 * x + r,
                        6 * y + c,
                        if x == y { sym[(r, c)] } else { m[(r, c)] },
                    ));
                }
            }
        }
    }
    for (i, (parent, child, j)) in p.rows.iter().enumerate() {
        let col = 6 * nb + i;
        for (body, block) in [(*parent, &j.body_a), (Some(*child), &j.body_b)] {
            if let Some(b) = body {
                for c in 0..6 {
                    out.push((col, 6 * b + c, -H * block[c]));
                }
            }
        }
        out.push((col, col, -H * REG));
    }
}

/// Emits the lower triangle of J M̃⁻¹ Jᵀ + C (pattern or values).
fn schur(p: &Problem, touching: &[Vec<(usize, Vector6<f64>)>], out: &mut Vec<(usize, usize, f64)>) {
    out.clear();
    for (i, _) in p.rows.iter().enumerate() {
        out.push((i, i, REG));
    }
    for (b, rows) in touching.iter().enumerate() {
        for &(r, jr) in rows {
            let w = p.inv_mass[b] * jr;
            for &(s, js) in rows {
                if s >= r {
                    out.push((s, r, js.dot(&w)));
                }
            }
        }
    }
}

/// The joint rows in groups of one joint (consecutive rows on the same two bodies).
fn groups(p: &Problem) -> Vec<RowGroup> {
    let mut out: Vec<RowGroup> = Vec::new();
    for (i, (parent, child, _)) in p.rows.iter().enumerate() {
        let bodies = [*parent, Some(*child)];
        RowGroup::add_unit(&mut out, i, 1, bodies, |g| g.bodies == bodies);
    }
    out
}

/// The reduced system's inputs: the body block and each group's G, hF and D.
fn reduced(p: &Problem, groups: &[RowGroup]) -> (BodyMatrix, Vec<GroupSystem>) {
    let mut a = BodyMatrix {
        diagonal: p.mass.clone(),
        cross: Vec::new(),
    };
    for &(x, y, m) in &p.stiffness {
        if x == y {
            a.diagonal[x] += m;
        } else {
            a.cross.push((x, y, m));
        }
    }
    let systems = groups
        .iter()
        .map(|g| {
            let mut s = GroupSystem::new();
            for i in 0..g.len {
                let (parent, _, j) = &p.rows[g.first + i];
                if parent.is_some() {
                    s.set_row(i, 0, &j.body_a, &(j.body_a * H));
                }
                s.set_row(i, 1, &j.body_b, &(j.body_b * H));
                s.diagonal[(i, i)] = REG;
            }
            s
        })
        .collect();
    (a, systems)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("newton_linear_solve");
    for links in [10, 100, 1000] {
        let p = problem(links);
        let nb = p.n_bodies;
        let nr = p.rows.len();
        let mut entries = Vec::new();

        let row_groups = groups(&p);
        let cross: Vec<(usize, usize)> = reduced(&p, &row_groups)
            .0
            .cross
            .iter()
            .map(|&(x, y, _)| (x, y))
            .collect();
        for (name, along_tree) in [("tree", true), ("reduced_lu", false)] {
            let mut rlu = ReducedLu::new(nb, &row_groups, &cross, &vec![false; nb], along_tree);
            group.bench_with_input(BenchmarkId::new(name, links), &links, |b, _| {
                b.iter(|| {
                    let (a, systems) = reduced(&p, &row_groups);
                    let b_u = vec![1.0; 6 * nb];
                    let b_g = vec![Vector6::repeat(1.0); row_groups.len()];
                    let (du, _) = rlu
                        .solve(&a, &row_groups, &systems, &b_u, &b_g)
                        .expect("non-singular");
                    black_box(du[0])
                })
            });
        }

        kkt(&p, &mut entries);
        let pattern: Vec<Pair<usize, usize>> = entries
            .iter()
            .map(|&(row, col, _)| Pair { row, col })
            .collect();
        let mut lu = SparseLu::new(6 * nb + nr, &pattern);
        group.bench_with_input(BenchmarkId::new("kkt_lu", links), &links, |b, _| {
            b.iter(|| {
                kkt(&p, &mut entries);
                let values: Vec<f64> = entries.iter().map(|e| e.2).collect();
                let mut rhs = vec![1.0; 6 * nb + nr];
                lu.solve(&values, &mut rhs).expect("non-singular");
                black_box(rhs[0])
            })
        });

        kkt_sym(&p, &mut entries);
        let pattern: Vec<Pair<usize, usize>> = entries
            .iter()
            .map(|&(row, col, _)| Pair { row, col })
            .collect();
        let n = 6 * nb + nr;
        let (ksym, kargsort) =
            SymbolicSparseColMat::try_new_from_indices(n, n, &pattern).expect("pattern");
        let ksymbolic: SymbolicCholesky<usize> = factorize_symbolic_cholesky(
            ksym.as_ref(),
            Side::Lower,
            Default::default(),
            Default::default(),
        )
        .expect("symbolic");
        let signs: Vec<i8> = (0..n).map(|i| if i < 6 * nb { 1 } else { -1 }).collect();
        let mut kl_values = vec![0.0; ksymbolic.len_val()];
        let mut kfstack = MemBuffer::new(
            ksymbolic.factorize_numeric_ldlt_scratch::<f64>(Par::Seq, Default::default()),
        );
        let mut ksstack = MemBuffer::new(ksymbolic.solve_in_place_scratch::<f64>(1, Par::Seq));
        group.bench_with_input(BenchmarkId::new("kkt_ldlt", links), &links, |b, _| {
            b.iter(|| {
                kkt_sym(&p, &mut entries);
                let values: Vec<f64> = entries.iter().map(|e| e.2).collect();
                let a = SparseColMat::new_from_argsort(ksym.clone(), &kargsort, &values)
                    .expect("values");
                let reg = faer::linalg::cholesky::ldlt::factor::LdltRegularization {
                    dynamic_regularization_signs: Some(&signs),
                    dynamic_regularization_delta: 1e-12,
                    dynamic_regularization_epsilon: 1e-14,
                };
                ksymbolic
                    .factorize_numeric_ldlt(
                        &mut kl_values,
                        a.as_ref(),
                        Side::Lower,
                        reg,
                        Par::Seq,
                        MemStack::new(&mut kfstack),
                        Default::default(),
                    )
                    .expect("quasi-definite");
                let mut rhs = vec![1.0; n];
                faer::sparse::linalg::cholesky::LdltRef::new(&ksymbolic, &kl_values)
                    .solve_in_place_with_conj(
                        Conj::No,
                        MatMut::from_column_major_slice_mut(&mut rhs, n, 1),
                        Par::Seq,
                        MemStack::new(&mut ksstack),
                    );
                black_box(rhs[0])
            })
        });

        let mut touching = vec![Vec::new(); nb];
        for (i, (parent, child, j)) in p.rows.iter().enumerate() {
            if let Some(pb) = parent {
                touching[*pb].push((i, j.body_a));
            }
            touching[*child].push((i, j.body_b));
        }
        schur(&p, &touching, &mut entries);
        let pattern: Vec<Pair<usize, usize>> = entries
            .iter()
            .map(|&(row, col, _)| Pair { row, col })
            .collect();
        let (sym, argsort) =
            SymbolicSparseColMat::try_new_from_indices(nr, nr, &pattern).expect("pattern");
        let symbolic: SymbolicCholesky<usize> = factorize_symbolic_cholesky(
            sym.as_ref(),
            Side::Lower,
            Default::default(),
            Default::default(),
        )
        .expect("symbolic");
        let mut l_values = vec![0.0; symbolic.len_val()];
        let mut fstack = MemBuffer::new(
            symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
        );
        let mut sstack = MemBuffer::new(symbolic.solve_in_place_scratch::<f64>(1, Par::Seq));
        group.bench_with_input(BenchmarkId::new("schur_llt", links), &links, |b, _| {
            b.iter(|| {
                schur(&p, &touching, &mut entries);
                let values: Vec<f64> = entries.iter().map(|e| e.2).collect();
                let a =
                    SparseColMat::new_from_argsort(sym.clone(), &argsort, &values).expect("values");
                symbolic
                    .factorize_numeric_llt(
                        &mut l_values,
                        a.as_ref(),
                        Side::Lower,
                        Default::default(),
                        Par::Seq,
                        MemStack::new(&mut fstack),
                        Default::default(),
                    )
                    .expect("positive definite");
                let mut rhs = vec![1.0; nr];
                LltRef::new(&symbolic, &l_values).solve_in_place_with_conj(
                    Conj::No,
                    MatMut::from_column_major_slice_mut(&mut rhs, nr, 1),
                    Par::Seq,
                    MemStack::new(&mut sstack),
                );
                // Back-substitution Δu = M̃⁻¹ Jᵀ Δλ (the cheap part).
                let mut du = vec![Vector6::zeros(); nb];
                for (i, (parent, child, j)) in p.rows.iter().enumerate() {
                    if let Some(pb) = parent {
                        du[*pb] += p.inv_mass[*pb] * j.body_a * rhs[i];
                    }
                    du[*child] += p.inv_mass[*child] * j.body_b * rhs[i];
                }
                black_box(du[0][0])
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
