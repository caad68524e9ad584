//! A compressed-sparse-row matrix borrowed from scipy.sparse's arrays, checked once.

use crate::data::kernels::first_non_finite;
use crate::data::matrix::{RowMatrix, Scalar, SparseIndex};
use crate::error::{Error, Result};

/// A compressed-sparse-row matrix with the arrays of scipy.sparse.csr_matrix.
#[derive(Clone, Copy)]
pub struct CsrView<'a, T, I> {
    indptr: &'a [I],
    indices: &'a [I],
    data: &'a [T],
    n_rows: usize,
    n_cols: usize,
}

impl<'a, T: Scalar, I: SparseIndex> CsrView<'a, T, I> {
    /// Checks that the arrays describe a valid CSR matrix with finite values, so that row
    /// operations later need no bounds checks beyond the slices'.
    pub fn new(
        indptr: &'a [I],
        indices: &'a [I],
        data: &'a [T],
        n_rows: usize,
        n_cols: usize,
    ) -> Result<Self> {
        if indptr.len() != n_rows + 1 {
            return Err(Error::input(format!(
                "CSR indptr must have n_rows + 1 = {} entries, got {}",
                n_rows + 1,
                indptr.len()
            )));
        }
        if indices.len() != data.len() {
            return Err(Error::input(format!(
                "CSR indices and data differ in length: {} and {}",
                indices.len(),
                data.len()
            )));
        }
        let mut prev = 0usize;
        for (row, p) in indptr.iter().enumerate() {
            let p = p.to_usize().unwrap_or(usize::MAX);
            if p < prev || p > data.len() || (row == 0 && p != 0) {
                return Err(Error::input(format!(
                    "CSR indptr is not a non-decreasing sequence from 0 to {} (entry {row})",
                    data.len()
                )));
            }
            prev = p;
        }
        if prev != data.len() {
            return Err(Error::input(format!(
                "CSR indptr ends at {prev} but there are {} stored values",
                data.len()
            )));
        }
        if let Some(pos) = indices
            .iter()
            .position(|i| i.to_usize().is_none_or(|i| i >= n_cols))
        {
            return Err(Error::input(format!(
                "CSR column index at position {pos} is outside 0..{n_cols}"
            )));
        }
        if let Some(pos) = first_non_finite(data) {
            // Named by its row and column, as a dense X's value is ("X[4, 1] is NaN"), so that
            // the Python layer can put the name of the argument the user passed in front of it
            // (`eval_set[0] X[4, 1]`); indptr was checked above, so its row is found by bisection.
            let row = indptr[1..].partition_point(|p| p.to_usize().is_some_and(|p| p <= pos));
            let col = indices[pos].to_usize().unwrap_or(usize::MAX);
            return Err(Error::input(format!(
                "X[{row}, {col}] (stored value {pos} of the sparse matrix) is {}: features must be \
                 finite numbers",
                data[pos].to_f64()
            )));
        }
        Ok(CsrView {
            indptr,
            indices,
            data,
            n_rows,
            n_cols,
        })
    }

    /// Checks the lengths only: for arrays that `new` accepted before and that have not changed
    /// since (a partition of a distributed fit, checked once when it was prepared). Reading
    /// stays memory-safe whatever the arrays hold (every index is bounds-checked).
    pub fn known_valid(
        indptr: &'a [I],
        indices: &'a [I],
        data: &'a [T],
        n_rows: usize,
        n_cols: usize,
    ) -> Result<Self> {
        if indptr.len() != n_rows + 1 || indices.len() != data.len() {
            return Err(Error::input(format!(
                "CSR arrays of {} row pointers and {} / {} indices and values do not fit {n_rows} rows",
                indptr.len(),
                indices.len(),
                data.len()
            )));
        }
        Ok(CsrView {
            indptr,
            indices,
            data,
            n_rows,
            n_cols,
        })
    }

    #[inline(always)]
    fn range(&self, row: usize) -> std::ops::Range<usize> {
        // Validated in `new`, so the conversions cannot fail.
        let lo = self.indptr[row].to_usize().unwrap_or(0);
        let hi = self.indptr[row + 1].to_usize().unwrap_or(0);
        lo..hi
    }
}

impl<T: Scalar, I: SparseIndex> RowMatrix for CsrView<'_, T, I> {
    fn n_rows(&self) -> usize {
        self.n_rows
    }
    fn n_cols(&self) -> usize {
        self.n_cols
    }
    #[inline]
    fn row_dot(&self, row: usize, w: &[f64]) -> f64 {
        let r = self.range(row);
        let mut acc = 0.0;
        for (&j, &v) in self.indices[r.clone()].iter().zip(&self.data[r]) {
            acc += v.to_f64() * w[j.to_usize().unwrap_or(0)];
        }
        acc
    }
    #[inline]
    fn row_axpy(&self, row: usize, alpha: f64, out: &mut [f64]) {
        let r = self.range(row);
        for (&j, &v) in self.indices[r.clone()].iter().zip(&self.data[r]) {
            out[j.to_usize().unwrap_or(0)] += alpha * v.to_f64();
        }
    }
}
