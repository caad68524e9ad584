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

/// Where every base feature's columns and table slots begin.
#[derive(Debug, Clone, PartialEq)]
pub struct BinLayout {
    /// Number of thresholds of every feature.
    pub counts: Vec<usize>,
    /// First indicator column of every feature.
    pub starts: Vec<usize>,
    /// First slot of every feature in a table or histogram (codes 0..=K_f, then the missing
    /// code), and the total number of slots at the end.
    pub slots: Vec<usize>,
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
            n_cols,
            missing,
        }
    }

    pub fn n_features(&self) -> usize {
        self.counts.len()
    }

    /// The largest code any feature can have (0 without features).
    pub fn max_code(&self) -> usize {
        let extra = usize::from(self.missing == Missing::Indicator);
        self.counts.iter().map(|k| k + extra).max().unwrap_or(0)
    }

    /// The score table of `prepare` (see the top of this file).
    pub fn table(&self, w: &[f64]) -> Vec<f64> {
        let mut table = vec![0.0; self.slots[self.n_features()]];
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
        g
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
        if th.n_features() != n_features {
            return Err(Error::input(format!(
                "the bin codes have {n_features} features, but their thresholds are for {}",
                th.n_features()
            )));
        }
        if n_rows.checked_mul(n_features) != Some(codes.len()) {
            return Err(Error::input(format!(
                "bin codes of shape ({n_rows}, {n_features}) need {} values, got {}",
                n_rows as u128 * n_features as u128,
                codes.len()
            )));
        }
        let layout = BinLayout::new(th, missing);
        let extra = usize::from(missing == Missing::Indicator);
        if n_features > 0 {
            let bad = codes
                .par_chunks(CHECK_ROWS * n_features)
                .enumerate()
                .find_map_first(|(c, chunk)| {
                    chunk.iter().enumerate().find_map(|(i, v)| {
                        let f = i % n_features;
                        (v.to_usize() > layout.counts[f] + extra)
                            .then(|| (c * CHECK_ROWS + i / n_features, f, v.to_usize()))
                    })
                });
            if let Some((r, f, v)) = bad {
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
        let d = self.layout.n_features();
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
        let mut acc = 0.0;
        for (f, code) in self.row(row).iter().enumerate() {
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
        acc
    }
    fn row_axpy(&self, row: usize, alpha: f64, out: &mut [f64]) {
        let l = &self.layout;
        for (f, code) in self.row(row).iter().enumerate() {
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
        self.layout.slots[self.layout.n_features()]
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
}
