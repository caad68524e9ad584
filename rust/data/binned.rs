//! A binned feature matrix stored as one bin code per (document, base feature), read as the
//! indicator matrix of `crate::binning::transform` without ever building it: the codes' types
//! and their layout (which columns and table slots every code column owns) are here, the view
//! that reads the codes (`BinnedView`) is in `crate::data::binned_view`.
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

use crate::binning::thresholds::{Missing, Thresholds};

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
    pub fn pair_cells(&self, p: usize, code: usize) -> (usize, usize, usize, usize) {
        let (a, b) = self.grids[p];
        let c = self.starts[self.n_features() + p];
        if code > a * (b + 1) + b {
            return (c, b, 0, 0);
        }
        (c, b, code / (b + 1), code % (b + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
