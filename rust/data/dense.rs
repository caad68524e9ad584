//! A dense row-major matrix borrowed from the caller, checked once, whose row operations are
//! the lane kernels of `kernels` (the AVX2 copies when the CPU has AVX2).

#[cfg(target_arch = "x86_64")]
use crate::data::kernels::simd;
use crate::data::kernels::{accumulate_rows_blocked, axpy_lanes, dot_lanes, first_non_finite};
use crate::data::matrix::{RowMatrix, Scalar};
use crate::error::{Error, Result};

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
        if let Some(pos) = first_non_finite(data) {
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

    /// Checks the shape only: for values that `new` accepted before and that have not changed
    /// since (a partition of a distributed fit, checked once when it was prepared and read at
    /// every iteration; see rust/python/partition.rs). A non-finite value would only make the
    /// objective non-finite, which the solver reports.
    pub fn known_finite(data: &'a [T], n_rows: usize, n_cols: usize) -> Result<Self> {
        if n_rows.checked_mul(n_cols) != Some(data.len()) {
            return Err(Error::input(format!(
                "dense matrix of shape ({n_rows}, {n_cols}) needs {} values, got {}",
                n_rows as u128 * n_cols as u128,
                data.len()
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
            return unsafe { simd::accumulate_rows_avx2(|r| self.row(r), rows, alphas, acc) };
        }
        accumulate_rows_blocked(|r| self.row(r), rows, alphas, acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adding rows four, two or one at a time must give, bit for bit, the sums of adding them
    /// one by one with `axpy_lanes` (the order of additions per entry is the same; only the
    /// sweeps differ). The counts cover every mix of blocks.
    #[test]
    fn rows_accumulated_in_blocks_equal_rows_added_one_by_one() {
        let mut next = crate::data::kernels::uniform_in_half(0x51_7cc1_b727_220au64);
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
            accumulate_rows_blocked(|r| x.row(r), &rows, &alphas, &mut portable);
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
        let mut next = crate::data::kernels::uniform_in_half(0x9e37_79b9_7f4a_7c15u64);
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
