//! A binned feature matrix stored as one bin code per (document, base feature), read as the
//! indicator matrix of `crate::binning::transform` without ever building it.
//!
//! Base feature f with K_f thresholds owns indicator columns start_f .. start_f + K_f (the
//! indicators 1[x > k_t]) and, with a missing indicator, column start_f + K_f. A document's code
//! for f is the number of thresholds strictly below its value, 0..=K_f, which is the number of
//! leading indicators it sets; a missing value has the code K_f + 1 and sets only the missing
//! column. So the view's columns, and the model's weights, are exactly those of the indicator
//! matrix.
//!
//! Two kernels make an iteration one pass over the codes (the histogram method of
//! gradient-boosting libraries applied to a linear model on the indicators):
//! - scoring: per w, a table per feature with T_f[b] = w[start_f] + ... + w[start_f + b - 1]
//!   (and T_f[K_f + 1] = the missing column's weight), so a score is sum_f T_f[code_f] instead of
//!   a sum over up to K_f columns;
//! - X^T c: per feature, the histogram of c over the codes, turned into the columns by a suffix
//!   sum (column start_f + t gets the sum of c over the codes above t), once per cut.
//!
//! Pairwise interactions (GA2M) are further code columns after the base features' (see
//! `BinLayout::with_pairs`). A pair p on coarse bins of two features, with a and b coarse
//! thresholds, has the code c = ci (b + 1) + cj for coarse codes ci in 0..=a and cj in 0..=b,
//! and owns the a b columns of the 2-D cumulative indicators 1[ci >= s and cj >= t] for s in
//! 1..=a, t in 1..=b (column start_p + (s - 1) b + (t - 1)): the 2-D analogue of the threshold
//! indicators, so that the model is a sum of per-feature steps and per-pair step surfaces. A
//! document missing either feature has the code (a + 1)(b + 1), which sets no column. The same
//! two kernels apply: the pair's table is the 2-D prefix sum of its weights (one slot per code),
//! and its columns of X^T c the 2-D suffix sums of its histogram.

use rayon::prelude::*;

use crate::binning::thresholds::{Missing, Thresholds};
use crate::data::matrix::RowMatrix;
use crate::error::{Error, Result};

/// Unsigned integer types that hold bin codes.
pub trait Code: Copy + Send + Sync + Default + 'static {
    const MAX: usize;
    fn from_usize(v: usize) -> Self;
    fn to_usize(self) -> usize;
}

impl Code for u8 {
    const MAX: usize = u8::MAX as usize;
    #[inline(always)]
    fn from_usize(v: usize) -> Self {
        v as u8
    }
    #[inline(always)]
    fn to_usize(self) -> usize {
        self as usize
    }
}

impl Code for u16 {
    const MAX: usize = u16::MAX as usize;
    #[inline(always)]
    fn from_usize(v: usize) -> Self {
        v as u16
    }
    #[inline(always)]
    fn to_usize(self) -> usize {
        self as usize
    }
}

/// Where every base feature's and pair's columns and table slots begin.
#[derive(Debug, Clone, PartialEq)]
pub struct BinLayout {
    /// Number of thresholds of every base feature.
    pub counts: Vec<usize>,
    /// First indicator column of every base feature, then of every pair.
    pub starts: Vec<usize>,
    /// First slot of every base feature in a table or histogram (codes 0..=K_f, then the
    /// missing code), then of every pair (its (a + 1)(b + 1) cells, then its missing code), and
    /// the total number of slots at the end.
    pub slots: Vec<usize>,
    /// The coarse threshold counts (a, b) of every pair, after the base features.
    pub grids: Vec<(usize, usize)>,
    pub n_cols: usize,
    pub missing: Missing,
}

impl BinLayout {
    pub fn new(th: &Thresholds, missing: Missing) -> Self {
        let extra = usize::from(missing == Missing::Indicator);
        let counts: Vec<usize> = th.offsets.windows(2).map(|w| w[1] - w[0]).collect();
        let (n_cols, starts) = th.columns(missing);
        let mut slots = Vec::with_capacity(counts.len() + 1);
        let mut at = 0;
        for &k in &counts {
            slots.push(at);
            at += k + 1 + extra;
        }
        slots.push(at);
        BinLayout {
            counts,
            starts,
            slots,
            grids: Vec::new(),
            n_cols,
            missing,
        }
    }

    /// The layout of the base features of `th` followed by pairs with the coarse threshold
    /// counts `grids` (see the top of this file): pair p's columns follow all the base
    /// features' columns and the earlier pairs', and so do its slots.
    pub fn with_pairs(th: &Thresholds, missing: Missing, grids: &[(usize, usize)]) -> Self {
        let mut layout = Self::new(th, missing);
        let mut at = layout.slots.pop().unwrap_or(0);
        for &(a, b) in grids {
            layout.starts.push(layout.n_cols);
            layout.slots.push(at);
            layout.n_cols += a * b;
            at += (a + 1) * (b + 1) + 1;
        }
        layout.slots.push(at);
        layout.grids = grids.to_vec();
        layout
    }

    /// Number of base features.
    pub fn n_features(&self) -> usize {
        self.counts.len()
    }

    /// Number of code columns: the base features, then the pairs.
    pub fn n_code_columns(&self) -> usize {
        self.counts.len() + self.grids.len()
    }

    /// The largest code column `f` can have: K_f (K_f + 1 with a missing indicator) for a base
    /// feature, the missing code (a + 1)(b + 1) for a pair.
    pub fn code_limit(&self, f: usize) -> usize {
        let extra = usize::from(self.missing == Missing::Indicator);
        match f.checked_sub(self.counts.len()) {
            None => self.counts[f] + extra,
            Some(p) => {
                let (a, b) = self.grids[p];
                (a + 1) * (b + 1)
            }
        }
    }

    /// The largest code any column can have (0 without columns).
    pub fn max_code(&self) -> usize {
        (0..self.n_code_columns())
            .map(|f| self.code_limit(f))
            .max()
            .unwrap_or(0)
    }

    /// The score table of `prepare` (see the top of this file).
    pub fn table(&self, w: &[f64]) -> Vec<f64> {
        let mut table = vec![0.0; self.slots[self.n_code_columns()]];
        for f in 0..self.n_features() {
            let (k, c, s) = (self.counts[f], self.starts[f], self.slots[f]);
            let mut run = 0.0;
            for b in 1..=k {
                run += w[c + b - 1];
                table[s + b] = run;
            }
            if self.missing == Missing::Indicator {
                table[s + k + 1] = w[c + k];
            }
        }
        for (p, &(a, b)) in self.grids.iter().enumerate() {
            let f = self.n_features() + p;
            let (c, s) = (self.starts[f], self.slots[f]);
            // T[ci][cj] = T[ci - 1][cj] + (w[ci][1] + ... + w[ci][cj]): row by row, so that
            // every entry is a sum of weights without a subtraction. Row 0, column 0 and the
            // missing code stay 0.
            for ci in 1..=a {
                let mut run = 0.0;
                for cj in 1..=b {
                    run += w[c + (ci - 1) * b + (cj - 1)];
                    table[s + ci * (b + 1) + cj] = table[s + (ci - 1) * (b + 1) + cj] + run;
                }
            }
        }
        table
    }

    /// The columns of X^T c from a histogram of c over the codes (the `finish` step).
    pub fn columns_from_histogram(&self, hist: &[f64]) -> Vec<f64> {
        let mut g = vec![0.0; self.n_cols];
        for f in 0..self.n_features() {
            let (k, c, s) = (self.counts[f], self.starts[f], self.slots[f]);
            let mut run = 0.0;
            for b in (1..=k).rev() {
                run += hist[s + b];
                g[c + b - 1] = run;
            }
            if self.missing == Missing::Indicator {
                g[c + k] = hist[s + k + 1];
            }
        }
        for (p, &(a, b)) in self.grids.iter().enumerate() {
            let f = self.n_features() + p;
            let (c, s) = (self.starts[f], self.slots[f]);
            // G[s][t] = G[s + 1][t] + (H[s][t] + ... + H[s][b]) over the cells with ci >= s
            // and cj >= t; the histogram's missing slot reaches no column.
            for si in (1..=a).rev() {
                let mut run = 0.0;
                for t in (1..=b).rev() {
                    run += hist[s + si * (b + 1) + t];
                    let below = if si < a { g[c + si * b + (t - 1)] } else { 0.0 };
                    g[c + (si - 1) * b + (t - 1)] = below + run;
                }
            }
        }
        g
    }

    /// Where pair p's code sets its columns: (first column, b, ci, cj), the columns
    /// first + s b + t for s < ci and t < cj; ci = 0 for the missing code, which sets none.
    #[inline]
    fn pair_cells(&self, p: usize, code: usize) -> (usize, usize, usize, usize) {
        let (a, b) = self.grids[p];
        let c = self.starts[self.n_features() + p];
        if code > a * (b + 1) + b {
            return (c, b, 0, 0);
        }
        (c, b, code / (b + 1), code % (b + 1))
    }
}

/// Row-major bin codes of shape (n_rows, n_features) with their thresholds, as a `RowMatrix`
/// over the indicator columns.
pub struct BinnedView<'a, C> {
    codes: &'a [C],
    n_rows: usize,
    layout: BinLayout,
}

/// Rows per chunk of the parallel code check.
const CHECK_ROWS: usize = 4096;

impl<'a, C: Code> BinnedView<'a, C> {
    /// Checks the shape and that every code is one its feature can have.
    pub fn new(
        codes: &'a [C],
        n_rows: usize,
        n_features: usize,
        th: &Thresholds,
        missing: Missing,
    ) -> Result<Self> {
        Self::with_pairs(codes, n_rows, n_features, th, missing, &[])
    }

    /// `new` for codes with `grids.len()` pair columns after the `n_features` base features
    /// (see `BinLayout::with_pairs`).
    pub fn with_pairs(
        codes: &'a [C],
        n_rows: usize,
        n_features: usize,
        th: &Thresholds,
        missing: Missing,
        grids: &[(usize, usize)],
    ) -> Result<Self> {
        if th.n_features() != n_features {
            return Err(Error::input(format!(
                "the bin codes have {n_features} features, but their thresholds are for {}",
                th.n_features()
            )));
        }
        let width = n_features + grids.len();
        if n_rows.checked_mul(width) != Some(codes.len()) {
            return Err(Error::input(format!(
                "bin codes of shape ({n_rows}, {width}) need {} values, got {}",
                n_rows as u128 * width as u128,
                codes.len()
            )));
        }
        let layout = BinLayout::with_pairs(th, missing, grids);
        let extra = usize::from(missing == Missing::Indicator);
        let limits: Vec<usize> = (0..width).map(|f| layout.code_limit(f)).collect();
        if width > 0 {
            let bad = codes
                .par_chunks(CHECK_ROWS * width)
                .enumerate()
                .find_map_first(|(c, chunk)| {
                    chunk.iter().enumerate().find_map(|(i, v)| {
                        let f = i % width;
                        (v.to_usize() > limits[f])
                            .then(|| (c * CHECK_ROWS + i / width, f, v.to_usize()))
                    })
                });
            if let Some((r, f, v)) = bad {
                if f >= n_features {
                    let (a, b) = grids[f - n_features];
                    return Err(Error::input(format!(
                        "bin code {v} at row {r}, pair {} is out of range: the pair has {a} x \
                         {b} coarse thresholds, so its codes are 0..={}",
                        f - n_features,
                        (a + 1) * (b + 1)
                    )));
                }
                let k = layout.counts[f];
                let what = if extra == 1 {
                    format!("0..={k} (and {} for a missing value)", k + 1)
                } else {
                    format!("0..={k}")
                };
                return Err(Error::input(format!(
                    "bin code {v} at row {r}, feature {f} is out of range: feature {f} has {k} \
                     thresholds, so its codes are {what}"
                )));
            }
        }
        Ok(BinnedView {
            codes,
            n_rows,
            layout,
        })
    }

    #[inline(always)]
    fn row(&self, row: usize) -> &'a [C] {
        let d = self.layout.n_code_columns();
        &self.codes[row * d..(row + 1) * d]
    }

    pub fn layout(&self) -> &BinLayout {
        &self.layout
    }
}

impl<C: Code> RowMatrix for BinnedView<'_, C> {
    fn n_rows(&self) -> usize {
        self.n_rows
    }
    fn n_cols(&self) -> usize {
        self.layout.n_cols
    }
    /// The sum of the weights of the set columns, column by column (for callers without a
    /// table; `row_score` is the fast way).
    fn row_dot(&self, row: usize, w: &[f64]) -> f64 {
        let l = &self.layout;
        let (codes, n_base) = (self.row(row), l.n_features());
        let mut acc = 0.0;
        for (f, code) in codes[..n_base].iter().enumerate() {
            let (k, c) = (l.counts[f], l.starts[f]);
            let code = code.to_usize();
            if code > k {
                acc += w[c + k];
            } else {
                for v in &w[c..c + code] {
                    acc += v;
                }
            }
        }
        for (p, code) in codes[n_base..].iter().enumerate() {
            let (c, b, ci, cj) = l.pair_cells(p, code.to_usize());
            for s in 0..ci {
                for v in &w[c + s * b..c + s * b + cj] {
                    acc += v;
                }
            }
        }
        acc
    }
    fn row_axpy(&self, row: usize, alpha: f64, out: &mut [f64]) {
        let l = &self.layout;
        let (codes, n_base) = (self.row(row), l.n_features());
        for (f, code) in codes[..n_base].iter().enumerate() {
            let (k, c) = (l.counts[f], l.starts[f]);
            let code = code.to_usize();
            if code > k {
                out[c + k] += alpha;
            } else {
                for o in &mut out[c..c + code] {
                    *o += alpha;
                }
            }
        }
        for (p, code) in codes[n_base..].iter().enumerate() {
            let (c, b, ci, cj) = l.pair_cells(p, code.to_usize());
            for s in 0..ci {
                for o in &mut out[c + s * b..c + s * b + cj] {
                    *o += alpha;
                }
            }
        }
    }
    fn prepare(&self, w: &[f64]) -> Vec<f64> {
        self.layout.table(w)
    }
    #[inline]
    fn row_score(&self, row: usize, _w: &[f64], table: &[f64]) -> f64 {
        // Four accumulators (features j, j + 4, ...) added in a fixed order: independent
        // chains of additions, where one chain would wait for every addition in turn.
        const LANES: usize = 4;
        let codes = self.row(row);
        let slots = &self.layout.slots[..codes.len()];
        let mut acc = [0.0f64; LANES];
        let mut c = codes.chunks_exact(LANES);
        let mut s = slots.chunks_exact(LANES);
        for (cs, ss) in (&mut c).zip(&mut s) {
            for l in 0..LANES {
                acc[l] += table[ss[l] + cs[l].to_usize()];
            }
        }
        let mut tail = 0.0;
        for (code, slot) in c.remainder().iter().zip(s.remainder()) {
            tail += table[slot + code.to_usize()];
        }
        ((acc[0] + acc[1]) + (acc[2] + acc[3])) + tail
    }
    fn acc_len(&self) -> usize {
        self.layout.slots[self.layout.n_code_columns()]
    }
    #[inline]
    fn row_accumulate(&self, row: usize, alpha: f64, hist: &mut [f64]) {
        for (s, code) in self.layout.slots.iter().zip(self.row(row)) {
            hist[s + code.to_usize()] += alpha;
        }
    }
    fn finish(&self, hist: Vec<f64>) -> Vec<f64> {
        self.layout.columns_from_histogram(&hist)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_codes_are_rejected() {
        // Feature 0 has thresholds {0.5, 2}, feature 1 {10}: codes 0..=2 and 0..=1 (plus 3
        // and 2 for a missing value with a missing indicator).
        let th = Thresholds::new(vec![0.5, 2.0, 10.0], vec![0, 2, 3]).unwrap();
        let ok: [u8; 4] = [2, 1, 0, 0];
        assert!(BinnedView::new(&ok, 2, 2, &th, Missing::Error).is_ok());
        let bad: [u8; 4] = [2, 1, 0, 2];
        let err = BinnedView::new(&bad, 2, 2, &th, Missing::Error)
            .err()
            .unwrap();
        assert!(err.to_string().contains("row 1, feature 1"), "{err}");
        assert!(BinnedView::new(&bad, 2, 2, &th, Missing::Indicator).is_ok());
        assert!(BinnedView::new(&ok, 1, 2, &th, Missing::Error).is_err());
        assert!(BinnedView::new(&ok, 2, 3, &th, Missing::Error).is_err());
    }

    #[test]
    fn table_and_histogram_by_hand() {
        // Feature 0 thresholds {0.5, 2} (columns 0, 1, missing column 2), feature 1 threshold
        // {10} (column 3, missing column 4). w = (1, 2, 4, 8, 16): table of feature 0 is
        // T[0] = 0, T[1] = 1, T[2] = 1 + 2 = 3, T[missing] = 4; of feature 1: 0, 8, 16.
        let th = Thresholds::new(vec![0.5, 2.0, 10.0], vec![0, 2, 3]).unwrap();
        let layout = BinLayout::new(&th, Missing::Indicator);
        let w = [1.0, 2.0, 4.0, 8.0, 16.0];
        assert_eq!(layout.table(&w), vec![0.0, 1.0, 3.0, 4.0, 0.0, 8.0, 16.0]);
        // Histogram of feature 0 over codes 0, 1, 2, missing = (a, b, c, m) gives columns
        // (b + c, c, m); of feature 1 over 0, 1, missing = (p, q, r) gives (q, r).
        let hist = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        assert_eq!(
            layout.columns_from_histogram(&hist),
            vec![6.0, 4.0, 8.0, 32.0, 64.0]
        );
    }

    #[test]
    fn pair_table_and_histogram_by_hand() {
        // One base feature with threshold {1} (column 0, codes 0..=1, slots 0..=1) and one pair
        // with a = 2, b = 1: codes ci * 2 + cj for ci in 0..=2, cj in 0..=1 (0..=5), missing
        // code 6; columns 1 + (s - 1) * 1 + (t - 1): (s, t) = (1, 1) -> 1, (2, 1) -> 2.
        let th = Thresholds::new(vec![1.0], vec![0, 1]).unwrap();
        let layout = BinLayout::with_pairs(&th, Missing::Error, &[(2, 1)]);
        assert_eq!(layout.n_cols, 3);
        assert_eq!(layout.slots, vec![0, 2, 9]);
        // w = (1, 2, 4): T[ci][cj] = sum of w(s, t) over s <= ci, t <= cj; the cells with
        // cj = 1: ci = 1 -> w(1,1) = 2, ci = 2 -> 2 + 4 = 6; cj = 0 and the missing code: 0.
        let t = layout.table(&[1.0, 2.0, 4.0]);
        assert_eq!(t, vec![0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 6.0, 0.0]);
        // Histogram over the pair's codes 0..=5 and missing = (h0 .. h6): column (1, 1) sums
        // the cells with ci >= 1 and cj >= 1 (codes 3 and 5), column (2, 1) code 5 only.
        let hist = [0.0, 0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        assert_eq!(
            layout.columns_from_histogram(&hist),
            vec![0.0, 8.0 + 32.0, 32.0]
        );
        // A code above the missing code is refused, and the missing code sets nothing.
        let codes: [u8; 4] = [1, 6, 0, 7];
        assert!(BinnedView::with_pairs(&codes, 2, 1, &th, Missing::Error, &[(2, 1)]).is_err());
        let view =
            BinnedView::with_pairs(&codes[..2], 1, 1, &th, Missing::Error, &[(2, 1)]).unwrap();
        assert_eq!(view.row_dot(0, &[1.0, 2.0, 4.0]), 1.0);
    }

    #[test]
    fn pair_kernels_equal_the_cell_indicators() {
        use rand::{Rng, SeedableRng};
        use rand_chacha::ChaCha8Rng;
        // Two base features (thresholds 3 and 2, with missing indicators) and pairs of grids
        // (2, 3) and (1, 1); random codes, including the pairs' missing codes. The indicator
        // matrix is written from the definition: base feature f sets its first `code` columns
        // (or only its missing column), a pair sets (s, t) when ci >= s and cj >= t.
        let th = Thresholds::new(vec![0.0, 1.0, 2.0, 0.0, 1.0], vec![0, 3, 5]).unwrap();
        let grids = [(2, 3), (1, 1)];
        let layout = BinLayout::with_pairs(&th, Missing::Indicator, &grids);
        let n = 200;
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut codes: Vec<u8> = Vec::new();
        let mut dense = vec![vec![0.0f64; layout.n_cols]; n];
        for row in dense.iter_mut() {
            for f in 0..4 {
                let code = rng.random_range(0..=layout.code_limit(f));
                codes.push(code as u8);
                let c = layout.starts[f];
                if f < 2 {
                    let k = layout.counts[f];
                    if code > k {
                        row[c + k] = 1.0;
                    } else {
                        row[c..c + code].iter_mut().for_each(|v| *v = 1.0);
                    }
                } else {
                    let (a, b) = grids[f - 2];
                    if code < (a + 1) * (b + 1) {
                        let (ci, cj) = (code / (b + 1), code % (b + 1));
                        for s in 1..=a {
                            for t in 1..=b {
                                if ci >= s && cj >= t {
                                    row[c + (s - 1) * b + (t - 1)] = 1.0;
                                }
                            }
                        }
                    }
                }
            }
        }
        let view = BinnedView::with_pairs(&codes, n, 2, &th, Missing::Indicator, &grids).unwrap();
        assert_eq!(view.n_cols(), 5 + 2 + 6 + 1);
        let w: Vec<f64> = (0..layout.n_cols)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let table = view.prepare(&w);
        let mut hist = vec![0.0; view.acc_len()];
        let (mut expect_g, mut axpy) = (vec![0.0; layout.n_cols], vec![0.0; layout.n_cols]);
        for (r, x) in dense.iter().enumerate() {
            let expect: f64 = x.iter().zip(&w).map(|(a, b)| a * b).sum();
            assert!(
                (view.row_score(r, &w, &table) - expect).abs() < 1e-12,
                "row {r}"
            );
            assert!((view.row_dot(r, &w) - expect).abs() < 1e-12, "row {r}");
            let alpha = r as f64 - 50.0;
            view.row_accumulate(r, alpha, &mut hist);
            view.row_axpy(r, alpha, &mut axpy);
            for (g, v) in expect_g.iter_mut().zip(x) {
                *g += alpha * v;
            }
        }
        let g = view.finish(hist);
        for j in 0..layout.n_cols {
            assert!((g[j] - expect_g[j]).abs() < 1e-9, "column {j}");
            assert!((axpy[j] - expect_g[j]).abs() < 1e-9, "column {j}");
        }
    }
}
