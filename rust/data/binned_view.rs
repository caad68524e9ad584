//! `BinnedView`: bin codes read as the indicator matrix whose layout `crate::data::binned`
//! describes, through tables and histograms.
//!
//! The codes are one row-major array of every code column (the base features', then the
//! pairs'), or two: the base features' codes and the pairs' codes beside them, each of its own
//! width (`BinnedView::split`). A GA2M's pairs on grids of up to 33 x 33 cells need u16 codes
//! while its base features' fit in u8, so one array of u16 codes would spend half its bytes on
//! zeros. Both forms read the code columns in one order, the combined column index j = 0, 1,
//! ... over the base features and then the pairs, and every row sum adds the same terms in the
//! same order whichever form holds them, so that fits and predictions are the same bit for bit
//! (`crate::data::binned_split` tests it).

use rayon::prelude::*;

use crate::binning::thresholds::{Missing, Thresholds};
use crate::data::binned::{BinLayout, Code};
use crate::data::matrix::RowMatrix;
use crate::error::{Error, Result};

/// Row-major bin codes with their thresholds, as a `RowMatrix` over the indicator columns: the
/// first `split` code columns of every row in `base` (all of them in the one-array form), the
/// others in `pairs`.
pub struct BinnedView<'a, B, P = B> {
    base: &'a [B],
    pairs: &'a [P],
    /// Code columns a row in `base` and in `pairs`.
    split: usize,
    pair_width: usize,
    n_rows: usize,
    layout: BinLayout,
}

/// Rows per chunk of the parallel code check.
const CHECK_ROWS: usize = 4096;

/// Accumulators of `row_score`: features j, j + 4, ... are added into one of four, in a fixed
/// order; independent chains of additions, where one chain would wait for every addition in
/// turn.
const LANES: usize = 4;

/// The first code in row-major order that is above its column's limit in `codes` (`width` code
/// columns a row, the first of them the combined column `first`): (row, column, code). A row
/// is compared with the limits whole, without a branch per code, and searched only when one
/// of its codes is out of range.
fn first_bad<C: Code>(
    codes: &[C],
    width: usize,
    first: usize,
    limits: &[usize],
) -> Option<(usize, usize, usize)> {
    if width == 0 {
        return None;
    }
    let limits = &limits[first..first + width];
    codes
        .par_chunks(CHECK_ROWS * width)
        .enumerate()
        .find_map_first(|(c, chunk)| {
            chunk.chunks_exact(width).enumerate().find_map(|(r, row)| {
                let over = |(v, &limit): (&C, &usize)| v.to_usize() > limit;
                if !row.iter().zip(limits).fold(false, |bad, x| bad | over(x)) {
                    return None;
                }
                let j = row.iter().zip(limits).position(over)?;
                Some((c * CHECK_ROWS + r, first + j, row[j].to_usize()))
            })
        })
}

/// The error of code `v` at row `r`, code column `f`, out of its range.
fn code_error(layout: &BinLayout, (r, f, v): (usize, usize, usize)) -> Error {
    let n_features = layout.n_features();
    if f >= n_features {
        let (a, b) = layout.grids[f - n_features];
        return Error::input(format!(
            "bin code {v} at row {r}, pair {} is out of range: the pair has {a} x {b} coarse \
             thresholds, so its codes are 0..={}",
            f - n_features,
            (a + 1) * (b + 1)
        ));
    }
    let k = layout.counts[f];
    let what = if layout.missing == Missing::Indicator {
        format!("0..={k} (and {} for a missing value)", k + 1)
    } else {
        format!("0..={k}")
    };
    Error::input(format!(
        "bin code {v} at row {r}, feature {f} is out of range: feature {f} has {k} thresholds, \
         so its codes are {what}"
    ))
}

/// The error of `codes` whose length is not `n_rows` rows of `width`; `what` names the array.
fn check_len(what: &str, len: usize, n_rows: usize, width: usize) -> Result<()> {
    if n_rows.checked_mul(width) != Some(len) {
        return Err(Error::input(format!(
            "{what} of shape ({n_rows}, {width}) need {} values, got {len}",
            n_rows as u128 * width as u128,
        )));
    }
    Ok(())
}

/// Adds the terms of `codes`, the combined code columns `first ..`, to their lanes (column j
/// to lane j % LANES), each lane in increasing j: the columns before the first multiple of
/// LANES one by one, then whole groups of LANES. Every column must be below the last multiple
/// of LANES of the row (the rest is `row_score`'s tail).
#[inline(always)]
fn add_lanes<C: Code>(
    acc: &mut [f64; LANES],
    first: usize,
    codes: &[C],
    slots: &[usize],
    table: &[f64],
) {
    let lead = ((LANES - first % LANES) % LANES).min(codes.len());
    for i in 0..lead {
        acc[(first + i) % LANES] += table[slots[i] + codes[i].to_usize()];
    }
    let mut c = codes[lead..].chunks_exact(LANES);
    let mut s = slots[lead..].chunks_exact(LANES);
    for (cs, ss) in (&mut c).zip(&mut s) {
        for l in 0..LANES {
            acc[l] += table[ss[l] + cs[l].to_usize()];
        }
    }
    for (l, (code, slot)) in c.remainder().iter().zip(s.remainder()).enumerate() {
        acc[l] += table[slot + code.to_usize()];
    }
}

/// Adds `alpha` to the histogram slot of every code: slot `slots[i] + codes[i]`.
#[inline(always)]
fn add_at<C: Code>(slots: &[usize], codes: &[C], alpha: f64, hist: &mut [f64]) {
    for (s, code) in slots.iter().zip(codes) {
        hist[s + code.to_usize()] += alpha;
    }
}

/// Calls `each` with every range of indicator columns that `codes` (the combined code columns
/// `first ..` of one row) set, in column order: a base feature's leading indicators or its
/// missing column, a pair's set cells row by row.
#[inline(always)]
fn set_ranges<C: Code>(
    l: &BinLayout,
    first: usize,
    codes: &[C],
    mut each: impl FnMut(std::ops::Range<usize>),
) {
    let n_base = l.n_features();
    for (i, code) in codes.iter().enumerate() {
        let (f, code) = (first + i, code.to_usize());
        if f < n_base {
            let (k, c) = (l.counts[f], l.starts[f]);
            each(if code > k {
                c + k..c + k + 1
            } else {
                c..c + code
            });
        } else {
            let (c, b, ci, cj) = l.pair_cells(f - n_base, code);
            for s in 0..ci {
                each(c + s * b..c + s * b + cj);
            }
        }
    }
}

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
    /// (see `BinLayout::with_pairs`), all in one array.
    pub fn with_pairs(
        codes: &'a [C],
        n_rows: usize,
        n_features: usize,
        th: &Thresholds,
        missing: Missing,
        grids: &[(usize, usize)],
    ) -> Result<Self> {
        Self::split((codes, &[]), n_rows, n_features, th, missing, grids)
    }
}

impl<'a, B: Code, P: Code> BinnedView<'a, B, P> {
    /// `with_pairs` for the base features' codes (n_rows, n_features) and the pairs' codes
    /// (n_rows, grids.len()) in two arrays, each of its own code type; an empty pair array
    /// stands for codes in one array (`base` holds every code column). Checks the thresholds
    /// against `n_features`, the arrays' lengths, and every code against its column's limit,
    /// reporting the first bad code in row order of the combined columns.
    pub fn split(
        (base, pairs): (&'a [B], &'a [P]),
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
        // Without rows both splits read nothing, and the lengths are 0 either way.
        let split = if pairs.is_empty() { width } else { n_features };
        check_len("bin codes", base.len(), n_rows, split)?;
        check_len("pair codes", pairs.len(), n_rows, width - split)?;
        let layout = BinLayout::with_pairs(th, missing, grids);
        let limits: Vec<usize> = (0..width).map(|f| layout.code_limit(f)).collect();
        let bad = [
            first_bad(base, split, 0, &limits),
            first_bad(pairs, width - split, split, &limits),
        ];
        if let Some(bad) = bad.into_iter().flatten().min() {
            return Err(code_error(&layout, bad));
        }
        Ok(BinnedView {
            base,
            pairs,
            split,
            pair_width: width - split,
            n_rows,
            layout,
        })
    }

    /// Row `row`'s codes: those in `base`, then those in `pairs`.
    #[inline(always)]
    fn row(&self, row: usize) -> (&'a [B], &'a [P]) {
        let (s, p) = (self.split, self.pair_width);
        (
            &self.base[row * s..(row + 1) * s],
            &self.pairs[row * p..(row + 1) * p],
        )
    }

    pub fn layout(&self) -> &BinLayout {
        &self.layout
    }
}

impl<B: Code, P: Code> RowMatrix for BinnedView<'_, B, P> {
    fn n_rows(&self) -> usize {
        self.n_rows
    }
    fn n_cols(&self) -> usize {
        self.layout.n_cols
    }
    /// The sum of the weights of the set columns, column by column (for callers without a
    /// table; `row_score` is the fast way).
    fn row_dot(&self, row: usize, w: &[f64]) -> f64 {
        let (base, pairs) = self.row(row);
        let mut acc = 0.0;
        let mut add = |r: std::ops::Range<usize>| {
            for v in &w[r] {
                acc += v;
            }
        };
        set_ranges(&self.layout, 0, base, &mut add);
        set_ranges(&self.layout, base.len(), pairs, &mut add);
        acc
    }
    fn row_axpy(&self, row: usize, alpha: f64, out: &mut [f64]) {
        let (base, pairs) = self.row(row);
        let mut add = |r: std::ops::Range<usize>| {
            for o in &mut out[r] {
                *o += alpha;
            }
        };
        set_ranges(&self.layout, 0, base, &mut add);
        set_ranges(&self.layout, base.len(), pairs, &mut add);
    }
    fn prepare(&self, w: &[f64]) -> Vec<f64> {
        self.layout.table(w)
    }
    #[inline]
    fn row_score(&self, row: usize, _w: &[f64], table: &[f64]) -> f64 {
        let (base, pairs) = self.row(row);
        let (nb, d) = (base.len(), base.len() + pairs.len());
        let slots = &self.layout.slots[..d];
        // Columns 0..full go to the lanes, the last d % LANES to the tail, in column order.
        let full = d - d % LANES;
        let (in_base, in_pairs) = (nb.min(full), full.saturating_sub(nb));
        let mut acc = [0.0f64; LANES];
        add_lanes(&mut acc, 0, &base[..in_base], &slots[..in_base], table);
        let pair_slots = &slots[nb..];
        add_lanes(
            &mut acc,
            nb,
            &pairs[..in_pairs],
            &pair_slots[..in_pairs],
            table,
        );
        let mut tail = 0.0;
        for (code, slot) in base[in_base..].iter().zip(&slots[in_base..nb]) {
            tail += table[slot + code.to_usize()];
        }
        for (code, slot) in pairs[in_pairs..].iter().zip(&pair_slots[in_pairs..]) {
            tail += table[slot + code.to_usize()];
        }
        ((acc[0] + acc[1]) + (acc[2] + acc[3])) + tail
    }
    fn acc_len(&self) -> usize {
        self.layout.slots[self.layout.n_code_columns()]
    }
    #[inline]
    fn row_accumulate(&self, row: usize, alpha: f64, hist: &mut [f64]) {
        let (base, pairs) = self.row(row);
        let (base_slots, pair_slots) = self.layout.slots.split_at(base.len());
        add_at(base_slots, base, alpha, hist);
        add_at(pair_slots, pairs, alpha, hist);
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
    fn pair_codes_above_the_missing_code_are_refused() {
        // One base feature with threshold {1} (codes 0..=1) and one pair with a = 2, b = 1
        // (codes 0..=5, missing code 6): a code above the missing code is refused, and the
        // missing code sets nothing (the row's weight is the base feature's alone).
        let th = Thresholds::new(vec![1.0], vec![0, 1]).unwrap();
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
