//! The traits every feature matrix implements: the element types (`Scalar`, `SparseIndex`)
//! and the row operations the solver needs (`RowMatrix`).

/// Element types a feature matrix may hold. Arithmetic is always carried out in f64.
pub trait Scalar: Copy + Send + Sync + 'static {
    fn to_f64(self) -> f64;
    /// The slice itself when the type is f32, for kernels written for f32 (default: None).
    #[inline(always)]
    fn as_f32(_values: &[Self]) -> Option<&[f32]> {
        None
    }
}

impl Scalar for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn as_f32(values: &[Self]) -> Option<&[f32]> {
        Some(values)
    }
}

impl Scalar for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
}

/// Integer types scipy.sparse uses for `indptr` and `indices`.
pub trait SparseIndex: Copy + Send + Sync + 'static {
    /// The value as usize, or None when it is negative.
    fn to_usize(self) -> Option<usize>;
}

impl SparseIndex for i32 {
    #[inline(always)]
    fn to_usize(self) -> Option<usize> {
        usize::try_from(self).ok()
    }
}

impl SparseIndex for i64 {
    #[inline(always)]
    fn to_usize(self) -> Option<usize> {
        usize::try_from(self).ok()
    }
}

/// A matrix whose rows are documents. The solver needs only two row operations, `row_dot` and
/// `row_axpy`; the other methods let a matrix stored in another form (bin codes, see
/// [`BinnedView`](crate::data::binned_view::BinnedView)) score rows and accumulate X^T c faster than column by column. Their defaults
/// are the two row operations themselves, so that dense and CSR matrices keep their arithmetic.
pub trait RowMatrix: Sync {
    fn n_rows(&self) -> usize;
    fn n_cols(&self) -> usize;
    /// x_row . w
    fn row_dot(&self, row: usize, w: &[f64]) -> f64;
    /// out += alpha * x_row
    fn row_axpy(&self, row: usize, alpha: f64, out: &mut [f64]);

    /// Whatever scoring many rows at one w needs, computed once per w (default: nothing).
    fn prepare(&self, _w: &[f64]) -> Vec<f64> {
        Vec::new()
    }
    /// x_row . w, given `prepared = self.prepare(w)` (default: `row_dot`).
    #[inline]
    fn row_score(&self, row: usize, w: &[f64], _prepared: &[f64]) -> f64 {
        self.row_dot(row, w)
    }
    /// Length of the accumulator of `row_accumulate` (default: `n_cols`, the accumulator is
    /// X^T c itself).
    fn acc_len(&self) -> usize {
        self.n_cols()
    }
    /// Adds alpha * x_row to an accumulator of length `acc_len` (default: `row_axpy`).
    #[inline]
    fn row_accumulate(&self, row: usize, alpha: f64, acc: &mut [f64]) {
        self.row_axpy(row, alpha, acc)
    }
    /// `row_accumulate(rows[k], alphas[k], acc)` for k = 0, 1, ... in this order (default: one
    /// by one). A matrix may add several rows in one sweep of `acc`, but every entry must see
    /// the same additions in the same order, so that the sums are bit for bit the same.
    fn accumulate_rows(&self, rows: &[usize], alphas: &[f64], acc: &mut [f64]) {
        for (&r, &a) in rows.iter().zip(alphas) {
            self.row_accumulate(r, a, acc);
        }
    }
    /// The sum of alpha * x_row (length `n_cols`) from a sum of accumulators (default: the
    /// accumulator itself). Must be linear, so that accumulators may be added before it.
    fn finish(&self, acc: Vec<f64>) -> Vec<f64> {
        acc
    }
}
