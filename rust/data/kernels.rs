//! The arithmetic of the matrices, in a fixed order so that results are bit for bit the same
//! on every CPU and for any number of threads: the lane kernels of dense rows (dot product and
//! axpy, with copies compiled for AVX2 chosen at run time), and the parallel kernels over all
//! rows (`matvec`, `first_non_finite`), cut into chunks by the problem's shape alone and
//! combined in chunk order, so that rayon decides only which thread computes which chunk.

use rayon::prelude::*;

use crate::data::matrix::{RowMatrix, Scalar};

/// Rows per chunk for row-parallel loops that write disjoint outputs.
const ROW_CHUNK: usize = 2048;

/// Position of the first value that is NaN or infinite.
pub fn first_non_finite<T: Scalar>(data: &[T]) -> Option<usize> {
    data.par_chunks(1 << 16)
        .enumerate()
        .find_map_first(|(c, chunk)| {
            chunk
                .iter()
                .position(|v| !v.to_f64().is_finite())
                .map(|p| c * (1 << 16) + p)
        })
}

/// out[r] = x_r . w for every row r. Stops early (leaving `out` partly filled) when the user
/// interrupts; the caller checks `cancel::check` afterwards.
pub fn matvec<M: RowMatrix + ?Sized>(x: &M, w: &[f64], out: &mut [f64]) {
    let prepared = x.prepare(w);
    out.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            if crate::runtime::cancel::requested() {
                return;
            }
            let base = c * ROW_CHUNK;
            for (i, o) in chunk.iter_mut().enumerate() {
                *o = x.row_score(base + i, w, &prepared);
            }
        });
}

/// out[i] = x_{rows[i]} . w: `matvec` at the given rows alone, each score the same function of
/// its row as `matvec`'s (so bit for bit the value a prediction of every row gives there), for
/// a search that scores a split's validation rows of a matrix that holds other rows too. The
/// rows must be below `x.n_rows()` (the caller checks them).
pub fn matvec_rows<M: RowMatrix + ?Sized>(x: &M, w: &[f64], rows: &[usize], out: &mut [f64]) {
    let prepared = x.prepare(w);
    out.par_chunks_mut(ROW_CHUNK)
        .zip(rows.par_chunks(ROW_CHUNK))
        .for_each(|(chunk, at)| {
            if crate::runtime::cancel::requested() {
                return;
            }
            for (o, &r) in chunk.iter_mut().zip(at) {
                *o = x.row_score(r, w, &prepared);
            }
        });
}

/// Rows of X summed in row order per chunk, so that a long X^T v checks for Ctrl-C between
/// chunks (a few milliseconds each) without a row-index vector as long as X.
const TRANSPOSE_CHUNK: usize = 4096;

/// X^T v: the rows of X weighted by `v` (one value per row) and summed, in row order on one
/// thread, so that the sum does not depend on the thread count. Every form of X (dense, CSR,
/// bin codes) goes through its own `accumulate_rows`, the kernel of the cut sums. The output is
/// allocated fallibly (an error where NumPy's BLAS product exits the interpreter when its work
/// buffer cannot be had), and Ctrl-C is checked between chunks.
pub fn transpose_dot<M: RowMatrix + ?Sized>(m: &M, v: &[f64]) -> crate::Result<Vec<f64>> {
    let (n, d) = (m.n_rows(), m.n_cols());
    if v.len() != n {
        return Err(crate::error::Error::input(format!(
            "v has {} values, but X has {n} rows",
            v.len()
        )));
    }
    // A matrix accumulates in its own form (bin codes: a histogram of the codes, turned into
    // the indicator columns by `finish`).
    let what = format!("X^T v over {d} columns");
    let mut acc = crate::runtime::memory::zeros(m.acc_len(), &what)?;
    let mut rows = Vec::with_capacity(TRANSPOSE_CHUNK.min(n));
    let mut start = 0;
    while start < n {
        let end = (start + TRANSPOSE_CHUNK).min(n);
        rows.clear();
        rows.extend(start..end);
        m.accumulate_rows(&rows, &v[start..end], &mut acc);
        crate::runtime::cancel::check()?;
        start = end;
    }
    Ok(m.finish(acc))
}

/// Rows per chunk of `column_moments`.
const MOMENTS_CHUNK: usize = 4096;

/// The mean and the variance of every column of a dense row-major matrix of `n_cols` columns
/// (over the rows, dividing by their number). Each chunk of rows sums the deviations from the
/// first row and their squares in f64, and the chunks are added in their order, so the result
/// does not depend on the thread count; measuring from the first row keeps a column whose
/// values are large and close together (a PageRank near 10^6) from losing its variance to
/// cancellation in E[x^2] - E[x]^2. Stops early when the user interrupts (the caller checks
/// `cancel::check` afterwards).
pub fn column_moments<T: Scalar>(data: &[T], n_cols: usize) -> (Vec<f64>, Vec<f64>) {
    if n_cols == 0 || data.len() < n_cols {
        return (vec![0.0; n_cols], vec![0.0; n_cols]);
    }
    let n_rows = data.len() / n_cols;
    let origin: Vec<f64> = data[..n_cols].iter().map(|v| v.to_f64()).collect();
    let partials: Vec<(Vec<f64>, Vec<f64>)> = data[..n_rows * n_cols]
        .par_chunks(MOMENTS_CHUNK * n_cols)
        .map(|chunk| {
            let mut sums = vec![0.0; n_cols];
            let mut squares = vec![0.0; n_cols];
            if crate::runtime::cancel::requested() {
                return (sums, squares);
            }
            for row in chunk.chunks_exact(n_cols) {
                // Zipped slices of one length, so that the loop compiles without bounds
                // checks and vectorizes (indexing took twice as long).
                for (((v, o), s), q) in row
                    .iter()
                    .zip(&origin)
                    .zip(sums.iter_mut())
                    .zip(squares.iter_mut())
                {
                    let d = v.to_f64() - o;
                    *s += d;
                    *q += d * d;
                }
            }
            (sums, squares)
        })
        .collect();
    let mut sums = vec![0.0; n_cols];
    let mut squares = vec![0.0; n_cols];
    for (s, q) in &partials {
        for j in 0..n_cols {
            sums[j] += s[j];
            squares[j] += q[j];
        }
    }
    let n = n_rows as f64;
    let shift: Vec<f64> = sums.iter().map(|s| s / n).collect();
    let variances = shift
        .iter()
        .zip(&squares)
        .map(|(m, q)| (q / n - m * m).max(0.0))
        .collect();
    let means = shift.iter().zip(&origin).map(|(m, o)| o + m).collect();
    (means, variances)
}

/// `accumulate_rows` of a dense matrix whose row r is `row(r)`: four rows per sweep of `acc`
/// (then two, then one), each entry seeing the additions `axpy_lanes` would make one row after
/// the other.
#[inline(always)]
pub(crate) fn accumulate_rows_blocked<'a, T: Scalar>(
    row: impl Fn(usize) -> &'a [T],
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
                row(rows[k]),
                row(rows[k + 1]),
                row(rows[k + 2]),
                row(rows[k + 3]),
            ],
            acc,
        );
        k += 4;
    }
    while k + 1 < n {
        axpy2_lanes(
            alphas[k],
            row(rows[k]),
            alphas[k + 1],
            row(rows[k + 1]),
            acc,
        );
        k += 2;
    }
    if k < n {
        axpy_lanes(alphas[k], row(rows[k]), acc);
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
pub(crate) mod simd {
    use super::{accumulate_rows_blocked, axpy_lanes, dot_lanes, Scalar};

    /// Whether this CPU has AVX2 (the standard library caches the answer).
    #[inline(always)]
    pub(crate) fn has_avx2() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
    }

    /// `dot_lanes` compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn dot_lanes_avx2<T: Scalar>(x: &[T], w: &[f64]) -> f64 {
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
    pub(crate) unsafe fn dot_f32_avx2(x: &[f32], w: &[f64]) -> f64 {
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
    pub(crate) unsafe fn accumulate_rows_avx2<'a, T: Scalar>(
        row: impl Fn(usize) -> &'a [T],
        rows: &[usize],
        alphas: &[f64],
        acc: &mut [f64],
    ) {
        accumulate_rows_blocked(row, rows, alphas, acc)
    }

    /// `axpy_lanes` compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn axpy_lanes_avx2<T: Scalar>(alpha: f64, x: &[T], out: &mut [f64]) {
        axpy_lanes(alpha, x, out)
    }
}

/// Dot product in eight lanes: lane j sums the products at positions j, j + 8, j + 16 ...,
/// and the lanes are added in a fixed tree. Independent lanes let the compiler use vector
/// registers; the fixed association keeps scores identical from run to run.
#[inline(always)]
pub(crate) fn dot_lanes<T: Scalar>(x: &[T], w: &[f64]) -> f64 {
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
pub(crate) fn axpy_lanes<T: Scalar>(alpha: f64, x: &[T], out: &mut [f64]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o += alpha * v.to_f64();
    }
}

/// The kernels' tests' numbers: xorshift64 from `seed`, uniform in [-0.5, 0.5), the same
/// sequence on every platform.
#[cfg(test)]
pub(crate) fn uniform_in_half(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a two-pass reference (the mean first, then the squared deviations from it),
    /// on columns of every kind: constant, centred, and large values close together (where
    /// E[x^2] - E[x]^2 in f64 would lose the variance); bit for bit the same on 1 and 3
    /// threads.
    #[test]
    fn column_moments_are_the_mean_and_variance_for_any_thread_count() {
        use crate::runtime::pool::with_threads;
        let mut next = crate::data::kernels::uniform_in_half(0x9e37_79b9_7f4a_7c15u64);
        let (n_rows, n_cols) = (3 * MOMENTS_CHUNK + 17, 4);
        let mut data = Vec::with_capacity(n_rows * n_cols);
        for _ in 0..n_rows {
            data.extend([7.0, next(), 1e6 + 1e-3 * next(), 1e3 * next()]);
        }
        let one = with_threads(1, || column_moments(&data, n_cols)).unwrap();
        let three = with_threads(3, || column_moments(&data, n_cols)).unwrap();
        assert_eq!(one, three);
        let (means, variances) = one;
        for j in 0..n_cols {
            let column: Vec<f64> = data.iter().skip(j).step_by(n_cols).copied().collect();
            let mean = column.iter().sum::<f64>() / n_rows as f64;
            let variance = column.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n_rows as f64;
            assert!(
                (means[j] - mean).abs() <= 1e-12 * (1.0 + mean.abs()),
                "column {j}: mean {} against {mean}",
                means[j]
            );
            assert!(
                (variances[j] - variance).abs() <= 1e-9 * variance,
                "column {j}: variance {} against {variance}",
                variances[j]
            );
        }
        assert_eq!((means[0], variances[0]), (7.0, 0.0));
        assert_eq!(column_moments::<f64>(&[], 3), (vec![0.0; 3], vec![0.0; 3]));
    }

    #[test]
    fn lane_kernels_compute_the_dot_product_and_axpy() {
        let mut next = crate::data::kernels::uniform_in_half(0x2545_f491_4f6c_dd1du64);
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
}
