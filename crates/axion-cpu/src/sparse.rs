//! Sparse LU with the symbolic analysis done once per sparsity pattern.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::lu::{NumericLu, SymbolicLu, factorize_symbolic_lu};
use faer::sparse::{Argsort, Pair, SparseColMat, SymbolicSparseColMat};
use faer::{Conj, MatMut, Par};

/// Records the (row, column) of every value an assembly emits, or the values
/// themselves, so one walk over the model defines both the pattern and the numbers.
pub trait Sink {
    /// One entry; duplicates are summed.
    fn push(&mut self, row: usize, col: usize, value: f64);
}

/// Collects the pattern.
#[derive(Default)]
pub struct PatternSink(pub Vec<Pair<usize, usize>>);

impl Sink for PatternSink {
    fn push(&mut self, row: usize, col: usize, _value: f64) {
        self.0.push(Pair { row, col });
    }
}

/// Collects the values, in pattern order.
#[derive(Default)]
pub struct ValueSink(pub Vec<f64>);

impl Sink for ValueSink {
    fn push(&mut self, _row: usize, _col: usize, value: f64) {
        self.0.push(value);
    }
}

/// Why a linear solve failed.
#[derive(Debug, Clone, PartialEq)]
pub enum SolveFailure {
    /// The factorization found no pivot (a singular matrix).
    Singular,
    /// The solution contains NaN or infinity.
    NonFinite,
}

/// A square sparse matrix pattern with its symbolic LU; refactorizes new values on the
/// same pattern without repeating the ordering and symbolic analysis.
pub struct SparseLu {
    pattern: SymbolicSparseColMat<usize>,
    argsort: Argsort<usize>,
    symbolic: SymbolicLu<usize>,
    numeric: NumericLu<usize, f64>,
    factor_scratch: MemBuffer,
    solve_scratch: MemBuffer,
    entries: usize,
}

impl SparseLu {
    /// Analyses an `n × n` pattern (COLAMD ordering, symbolic factorization).
    ///
    /// # Panics
    /// If the pattern is malformed (an index out of range): a bug in the assembly.
    pub fn new(n: usize, pattern: &[Pair<usize, usize>]) -> Self {
        let (sym, argsort) = SymbolicSparseColMat::try_new_from_indices(n, n, pattern)
            .expect("valid sparsity pattern");
        // faer's own choice between its simplicial and supernodal factorizations
        // (simplicial on the sizes measured). Forcing the supernodal one, whose supernodes
        // take the reduced system's dense 6 × 6 blocks whole, was measured 2026-11-25:
        // chains 8–15 % and the a1, spirit40 and humanoid drops 20–34 % faster per step,
        // but its rounding leaves one CPU step of a cylinder landing on a box
        // unconverged after 30 iterations (the friction iteration there is chaotic,
        // docs/step.md), so it waits for that to be fixed (docs/benchmarks.md).
        let symbolic = factorize_symbolic_lu(sym.as_ref(), Default::default())
            .expect("symbolic LU of a valid pattern");
        let factor_scratch = MemBuffer::new(
            symbolic.factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default()),
        );
        let solve_scratch = MemBuffer::new(symbolic.solve_in_place_scratch::<f64>(1, Par::Seq));
        Self {
            pattern: sym,
            argsort,
            symbolic,
            numeric: NumericLu::new(),
            factor_scratch,
            solve_scratch,
            entries: pattern.len(),
        }
    }

    /// Number of entries the pattern was built from (before merging duplicates).
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Factorizes the matrix with `values` (in pattern order) and solves `A x = rhs` in
    /// place, single-threaded.
    pub fn solve(&mut self, values: &[f64], rhs: &mut [f64]) -> Result<(), SolveFailure> {
        self.with_factors(values, |solve| solve(rhs))
    }

    /// Factorizes the matrix with `values` (in pattern order) and hands `f` a solver
    /// with these factors: each call solves `A x = rhs` in place, single-threaded.
    pub fn with_factors<R>(
        &mut self,
        values: &[f64],
        f: impl FnOnce(
            &mut dyn FnMut(&mut [f64]) -> Result<(), SolveFailure>,
        ) -> Result<R, SolveFailure>,
    ) -> Result<R, SolveFailure> {
        let a = SparseColMat::new_from_argsort(self.pattern.clone(), &self.argsort, values)
            .expect("values match the pattern");
        let lu = self
            .symbolic
            .factorize_numeric_lu(
                &mut self.numeric,
                a.as_ref(),
                Par::Seq,
                MemStack::new(&mut self.factor_scratch),
                Default::default(),
            )
            .map_err(|_| SolveFailure::Singular)?;
        let scratch = &mut self.solve_scratch;
        f(&mut |rhs: &mut [f64]| {
            let n = rhs.len();
            lu.solve_in_place_with_conj(
                Conj::No,
                MatMut::from_column_major_slice_mut(rhs, n, 1),
                Par::Seq,
                MemStack::new(scratch),
            );
            if rhs.iter().all(|x| x.is_finite()) {
                Ok(())
            } else {
                Err(SolveFailure::NonFinite)
            }
        })
    }
}
