//! Query-grouped views of a feature matrix (dense row-major or CSR), borrowed, never copied.

pub mod binned;
pub mod reader;

pub use binned::BinnedView;

use crate::error::{Error, Result};

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
/// [`BinnedView`]) score rows and accumulate X^T c faster than column by column. Their defaults
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

/// A dense row-major (C-ordered) matrix.
#[derive(Clone, Copy)]
pub struct DenseView<'a, T> {
    data: &'a [T],
    n_rows: usize,
    n_cols: usize,
}

impl<'a, T: Scalar> DenseView<'a, T> {
    /// Checks the shape and that every value is finite.
    pub fn new(data: &'a [T], n_rows: usize, n_cols: usize) -> Result<Self> {
        if n_rows.checked_mul(n_cols) != Some(data.len()) {
            return Err(Error::input(format!(
                "dense matrix of shape ({n_rows}, {n_cols}) needs {} values, got {}",
                n_rows as u128 * n_cols as u128,
                data.len()
            )));
        }
        if let Some(pos) = crate::parallel::first_non_finite(data) {
            return Err(Error::input(format!(
                "X[{}, {}] is {}: features must be finite numbers",
                pos / n_cols.max(1),
                pos % n_cols.max(1),
                data[pos].to_f64()
            )));
        }
        Ok(DenseView {
            data,
            n_rows,
            n_cols,
        })
    }

    #[inline(always)]
    pub fn row(&self, row: usize) -> &'a [T] {
        &self.data[row * self.n_cols..(row + 1) * self.n_cols]
    }
}

impl<T: Scalar> RowMatrix for DenseView<'_, T> {
    fn n_rows(&self) -> usize {
        self.n_rows
    }
    fn n_cols(&self) -> usize {
        self.n_cols
    }
    #[inline]
    fn row_dot(&self, row: usize, w: &[f64]) -> f64 {
        #[cfg(target_arch = "x86_64")]
        if simd::has_avx2() {
            let x = self.row(row);
            // SAFETY: the CPU supports AVX2 (checked at run time).
            return unsafe {
                match T::as_f32(x) {
                    Some(x32) => simd::dot_f32_avx2(x32, w),
                    None => simd::dot_lanes_avx2(x, w),
                }
            };
        }
        dot_lanes(self.row(row), w)
    }
    #[inline]
    fn row_axpy(&self, row: usize, alpha: f64, out: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if simd::has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked at run time).
            return unsafe { simd::axpy_lanes_avx2(alpha, self.row(row), out) };
        }
        axpy_lanes(alpha, self.row(row), out)
    }
    /// Four rows per sweep of `acc` (then two, then one): entry j becomes
    /// (((acc_j + a x_j) + b y_j) + c z_j) + e v_j, the additions `row_axpy` would make one
    /// after the other, with a quarter of the loads and stores of `acc`.
    fn accumulate_rows(&self, rows: &[usize], alphas: &[f64], acc: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if simd::has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked at run time).
            return unsafe { simd::accumulate_rows_avx2(self, rows, alphas, acc) };
        }
        accumulate_rows_blocked(self, rows, alphas, acc)
    }
}

#[inline(always)]
fn accumulate_rows_blocked<T: Scalar>(
    x: &DenseView<'_, T>,
    rows: &[usize],
    alphas: &[f64],
    acc: &mut [f64],
) {
    let n = rows.len().min(alphas.len());
    let mut k = 0;
    while k + 3 < n {
        axpy4_lanes(
            [alphas[k], alphas[k + 1], alphas[k + 2], alphas[k + 3]],
            [
                x.row(rows[k]),
                x.row(rows[k + 1]),
                x.row(rows[k + 2]),
                x.row(rows[k + 3]),
            ],
            acc,
        );
        k += 4;
    }
    while k + 1 < n {
        axpy2_lanes(
            alphas[k],
            x.row(rows[k]),
            alphas[k + 1],
            x.row(rows[k + 1]),
            acc,
        );
        k += 2;
    }
    if k < n {
        axpy_lanes(alphas[k], x.row(rows[k]), acc);
    }
}

/// Copies of the lane kernels compiled for AVX2, chosen at run time.
///
/// The wheel is built for baseline x86-64 (SSE2), so the portable kernels use 128-bit vectors.
/// These are the very same source, inlined into functions compiled with AVX2 enabled, so that
/// the compiler may use 256-bit vectors for the same lanes. FMA is deliberately not enabled:
/// without it, and without licence to reassociate, every product is rounded and added in the
/// same order as in the portable kernels, so results are bit-identical on every CPU.
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{accumulate_rows_blocked, axpy_lanes, dot_lanes, DenseView, Scalar};

    /// Whether this CPU has AVX2 (the standard library caches the answer).
    #[inline(always)]
    pub(super) fn has_avx2() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
    }

    /// `dot_lanes` compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn dot_lanes_avx2<T: Scalar>(x: &[T], w: &[f64]) -> f64 {
        dot_lanes(x, w)
    }

    /// `dot_lanes` for f32 rows, written with AVX2 intrinsics: one 256-bit register holds
    /// lanes 0-3 and another lanes 4-7, so each product is added to the lane `dot_lanes` adds
    /// it to, in the same order, and the lanes and the tail are summed as there. (Compiled from
    /// the portable source, the lanes are paired across registers with shuffles that cost
    /// about as much as the arithmetic.)
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn dot_f32_avx2(x: &[f32], w: &[f64]) -> f64 {
        use std::arch::x86_64::{
            _mm256_add_pd, _mm256_castps256_ps128, _mm256_cvtps_pd, _mm256_extractf128_ps,
            _mm256_loadu_pd, _mm256_loadu_ps, _mm256_mul_pd, _mm256_setzero_pd, _mm256_storeu_pd,
        };
        const LANES: usize = 8;
        let n = x.len().min(w.len());
        let split = n / LANES * LANES;
        let (mut low, mut high) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        let mut k = 0;
        while k < split {
            // SAFETY: k + 8 <= split <= the length of both slices.
            let (xs, w_low, w_high) = unsafe {
                (
                    _mm256_loadu_ps(x.as_ptr().add(k)),
                    _mm256_loadu_pd(w.as_ptr().add(k)),
                    _mm256_loadu_pd(w.as_ptr().add(k + 4)),
                )
            };
            let x_low = _mm256_cvtps_pd(_mm256_castps256_ps128(xs));
            let x_high = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(xs));
            low = _mm256_add_pd(low, _mm256_mul_pd(x_low, w_low));
            high = _mm256_add_pd(high, _mm256_mul_pd(x_high, w_high));
            k += LANES;
        }
        let mut acc = [0.0f64; LANES];
        // SAFETY: `acc` has room for the two registers' eight values.
        unsafe {
            _mm256_storeu_pd(acc.as_mut_ptr(), low);
            _mm256_storeu_pd(acc.as_mut_ptr().add(4), high);
        }
        let mut tail = 0.0;
        for (a, b) in x[split..n].iter().zip(&w[split..n]) {
            tail += *a as f64 * b;
        }
        (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))) + tail
    }

    /// `accumulate_rows_blocked` compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn accumulate_rows_avx2<T: Scalar>(
        x: &DenseView<'_, T>,
        rows: &[usize],
        alphas: &[f64],
        acc: &mut [f64],
    ) {
        accumulate_rows_blocked(x, rows, alphas, acc)
    }

    /// `axpy_lanes` compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn axpy_lanes_avx2<T: Scalar>(alpha: f64, x: &[T], out: &mut [f64]) {
        axpy_lanes(alpha, x, out)
    }
}

/// Dot product in eight lanes: lane j sums the products at positions j, j + 8, j + 16 ...,
/// and the lanes are added in a fixed tree. Independent lanes let the compiler use vector
/// registers; the fixed association keeps scores identical from run to run.
#[inline(always)]
fn dot_lanes<T: Scalar>(x: &[T], w: &[f64]) -> f64 {
    const LANES: usize = 8;
    let n = x.len().min(w.len());
    let split = n / LANES * LANES;
    let (x_body, x_tail) = x[..n].split_at(split);
    let (w_body, w_tail) = w[..n].split_at(split);
    let mut acc = [0.0f64; LANES];
    for (xs, ws) in x_body.chunks_exact(LANES).zip(w_body.chunks_exact(LANES)) {
        for j in 0..LANES {
            acc[j] += xs[j].to_f64() * ws[j];
        }
    }
    let mut tail = 0.0;
    for (a, b) in x_tail.iter().zip(w_tail) {
        tail += a.to_f64() * b;
    }
    (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))) + tail
}

/// out += alpha * x, then out += beta * y, entry by entry in one sweep.
#[inline(always)]
fn axpy2_lanes<T: Scalar>(alpha: f64, x: &[T], beta: f64, y: &[T], out: &mut [f64]) {
    for ((o, &u), &v) in out.iter_mut().zip(x).zip(y) {
        *o = (*o + alpha * u.to_f64()) + beta * v.to_f64();
    }
}

/// out += a[0] x[0], then a[1] x[1], a[2] x[2] and a[3] x[3], element by element: entry j
/// becomes (((out_j + a0 x0_j) + a1 x1_j) + a2 x2_j) + a3 x3_j, the additions four calls of
/// `axpy_lanes` would make, with a quarter of the loads and stores of `out`.
#[inline(always)]
fn axpy4_lanes<T: Scalar>(a: [f64; 4], x: [&[T]; 4], out: &mut [f64]) {
    let n = out.len().min(x.iter().map(|r| r.len()).min().unwrap_or(0));
    let (out, [x0, x1, x2, x3]) = (&mut out[..n], x.map(|r| &r[..n]));
    for j in 0..n {
        out[j] = (((out[j] + a[0] * x0[j].to_f64()) + a[1] * x1[j].to_f64())
            + a[2] * x2[j].to_f64())
            + a[3] * x3[j].to_f64();
    }
}

/// out += alpha * x, element by element.
#[inline(always)]
fn axpy_lanes<T: Scalar>(alpha: f64, x: &[T], out: &mut [f64]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o += alpha * v.to_f64();
    }
}

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
        if let Some(pos) = crate::parallel::first_non_finite(data) {
            return Err(Error::input(format!(
                "stored value {pos} of the sparse matrix is {}: features must be finite numbers",
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

/// Rows grouped by query. Queries are numbered 0..n_queries in the order of their codes
/// (the caller's sorted unique qids); inside a query, rows keep the caller's order, which
/// makes the grouping a stable sort.
#[derive(Debug, Clone)]
pub struct QueryGroups {
    /// Row indices in grouped order.
    pub order: Vec<usize>,
    /// Query q owns `order[bounds[q]..bounds[q + 1]]`.
    pub bounds: Vec<usize>,
}

impl QueryGroups {
    /// Groups rows by integer query codes in `0..n_queries` with a counting sort (stable).
    pub fn from_codes(codes: &[i64], n_queries: usize) -> Result<Self> {
        // Every query needs a row; this also keeps an absurd count from being allocated.
        if n_queries > codes.len() {
            return Err(Error::input(format!(
                "{n_queries} queries for {} rows: every query needs at least one row",
                codes.len()
            )));
        }
        let mut counts = vec![0usize; n_queries + 1];
        for (row, &c) in codes.iter().enumerate() {
            let c = usize::try_from(c)
                .ok()
                .filter(|&c| c < n_queries)
                .ok_or_else(|| {
                    Error::input(format!(
                        "query code {c} of row {row} is outside 0..{n_queries}"
                    ))
                })?;
            counts[c + 1] += 1;
        }
        for q in 0..n_queries {
            counts[q + 1] += counts[q];
        }
        let bounds = counts.clone();
        let mut next = counts;
        let mut order = vec![0usize; codes.len()];
        for (row, &c) in codes.iter().enumerate() {
            let c = c as usize;
            order[next[c]] = row;
            next[c] += 1;
        }
        Ok(QueryGroups { order, bounds })
    }

    /// Rows of consecutive runs: each maximal run of equal qids is a query, as in a LETOR file.
    pub fn contiguous(sizes: &[usize]) -> Self {
        let mut bounds = Vec::with_capacity(sizes.len() + 1);
        bounds.push(0);
        for s in sizes {
            bounds.push(bounds.last().copied().unwrap_or(0) + s);
        }
        let n = bounds.last().copied().unwrap_or(0);
        QueryGroups {
            order: (0..n).collect(),
            bounds,
        }
    }

    pub fn n_queries(&self) -> usize {
        self.bounds.len() - 1
    }

    pub fn n_rows(&self) -> usize {
        self.order.len()
    }

    /// The rows of query q, in the caller's order.
    #[inline]
    pub fn rows(&self, q: usize) -> &[usize] {
        &self.order[self.bounds[q]..self.bounds[q + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_kernels_compute_the_dot_product_and_axpy() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for n in [0usize, 1, 7, 8, 9, 46, 136, 1001] {
            let x64: Vec<f64> = (0..n)
                .map(|i| next() * 10f64.powi((i % 9) as i32 - 4))
                .collect();
            let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
            let w: Vec<f64> = (0..n).map(|_| next()).collect();
            let plain: f64 = x64.iter().zip(&w).map(|(a, b)| a * b).sum();
            assert!((dot_lanes(&x64, &w) - plain).abs() <= 1e-12 * (1.0 + plain.abs()) * n as f64);
            let plain32: f64 = x32.iter().zip(&w).map(|(&a, b)| a as f64 * b).sum();
            assert!(
                (dot_lanes(&x32, &w) - plain32).abs() <= 1e-12 * (1.0 + plain32.abs()) * n as f64
            );
            let mut out = w.clone();
            axpy_lanes(0.37, &x32, &mut out);
            for ((o, &v), &x) in out.iter().zip(&w).zip(&x32) {
                assert_eq!(*o, v + 0.37 * x as f64);
            }
        }
    }

    /// Adding rows four, two or one at a time must give, bit for bit, the sums of adding them
    /// one by one with `axpy_lanes` (the order of additions per entry is the same; only the
    /// sweeps differ). The counts cover every mix of blocks.
    #[test]
    fn rows_accumulated_in_blocks_equal_rows_added_one_by_one() {
        let mut state = 0x51_7cc1_b727_220au64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let (n_rows, d) = (41, 37);
        let data: Vec<f32> = (0..n_rows * d)
            .map(|i| (next() * 10f64.powi((i % 7) as i32 - 3)) as f32)
            .collect();
        let x = DenseView::new(&data, n_rows, d).unwrap();
        for count in [0usize, 1, 2, 3, 4, 5, 6, 7, 8, 17, 40] {
            let rows: Vec<usize> = (0..count).map(|k| (k * 7 + 3) % n_rows).collect();
            let alphas: Vec<f64> = (0..count).map(|_| next() * 1e4).collect();
            let start: Vec<f64> = (0..d).map(|_| next()).collect();
            let mut one_by_one = start.clone();
            for (&r, &a) in rows.iter().zip(&alphas) {
                axpy_lanes(a, x.row(r), &mut one_by_one);
            }
            let mut portable = start.clone();
            accumulate_rows_blocked(&x, &rows, &alphas, &mut portable);
            let mut dispatched = start.clone();
            x.accumulate_rows(&rows, &alphas, &mut dispatched);
            let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&portable), bits(&one_by_one), "{count} rows");
            assert_eq!(bits(&dispatched), bits(&one_by_one), "{count} rows");
        }
    }

    /// The AVX2 copies must give the portable kernels' results bit for bit (a fused
    /// multiply-add or another association would change the last bits of some of these sums,
    /// whose terms span nine orders of magnitude and both signs).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_kernels_equal_the_portable_ones_bit_for_bit() {
        if !simd::has_avx2() {
            return;
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for n in (0usize..40).chain([46, 136, 137, 1001]) {
            for _ in 0..20 {
                let x64: Vec<f64> = (0..n)
                    .map(|i| next() * 10f64.powi((i % 9) as i32 - 4))
                    .collect();
                let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
                let w: Vec<f64> = (0..n).map(|_| next() * 1e3).collect();
                // SAFETY: AVX2 was detected above.
                let (a64, a32) = unsafe {
                    (
                        simd::dot_lanes_avx2(&x64, &w),
                        simd::dot_lanes_avx2(&x32, &w),
                    )
                };
                assert_eq!(a64.to_bits(), dot_lanes(&x64, &w).to_bits(), "n {n}");
                assert_eq!(a32.to_bits(), dot_lanes(&x32, &w).to_bits(), "n {n}");
                // SAFETY: as above.
                let f32_kernel = unsafe { simd::dot_f32_avx2(&x32, &w) };
                assert_eq!(f32_kernel.to_bits(), dot_lanes(&x32, &w).to_bits(), "n {n}");
                // Rows as the matrix hands them out, through the dispatch of row_dot.
                if n > 0 {
                    let m = DenseView::new(&x32, 1, n).unwrap();
                    assert_eq!(m.row_dot(0, &w).to_bits(), dot_lanes(&x32, &w).to_bits());
                }
                let alpha = next();
                let (mut p, mut q) = (w.clone(), w.clone());
                axpy_lanes(alpha, &x32, &mut p);
                // SAFETY: as above.
                unsafe { simd::axpy_lanes_avx2(alpha, &x32, &mut q) };
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&p), bits(&q), "n {n}");
            }
        }
    }
}
