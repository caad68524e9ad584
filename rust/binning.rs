//! Feature binning (Yue et al. 2007, section 4.2): per base feature f, a sorted set of thresholds
//! K_f fitted on training data, and the indicator features 1[f(d|q) > k] for every k in K_f.
//!
//! With a linear model on the indicators, each base feature contributes a piecewise-constant
//! score: the sum of the weights of the thresholds that its value exceeds. The thresholds are
//! placed in the gaps between distinct training values, so that a training value never sits
//! on a threshold and the indicators of the training data do not depend on rounding.
//!
//! Missing values (NaN) are either an error or, with [`Missing::Indicator`], get one extra
//! indicator per base feature; a missing value then sets none of its feature's threshold
//! indicators. This is how a document that a retrieval run did not return is represented.
//!
//! The output is a CSR matrix in feature-major column order: the columns of feature 0 (its
//! thresholds in increasing order, then its missing indicator if any), then those of feature 1,
//! and so on. Rows list their columns in increasing order.

use rayon::prelude::*;

use crate::data::binned::{BinLayout, Code};
use crate::data::Scalar;
use crate::error::{Error, Result};

/// How thresholds are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Equal-frequency bins over the training values (the default): where many documents have
    /// nearly the same value, thresholds are dense; where values are sparse, they are far apart.
    Quantile,
    /// Evenly spaced thresholds strictly between the smallest and largest training value.
    Uniform,
}

impl Strategy {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "quantile" => Ok(Strategy::Quantile),
            "uniform" => Ok(Strategy::Uniform),
            other => Err(Error::param(
                "strategy",
                "\"quantile\" or \"uniform\"",
                format!("{other:?}"),
            )),
        }
    }
}

/// What a NaN feature value means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// NaN is an error.
    Error,
    /// NaN marks a missing value, encoded by one extra indicator column per base feature.
    Indicator,
}

impl Missing {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "error" => Ok(Missing::Error),
            "indicator" => Ok(Missing::Indicator),
            other => Err(Error::param(
                "missing",
                "\"error\" or \"indicator\"",
                format!("{other:?}"),
            )),
        }
    }

    fn extra_columns(self) -> usize {
        match self {
            Missing::Error => 0,
            Missing::Indicator => 1,
        }
    }
}

/// The thresholds of every base feature, concatenated: feature j owns
/// `values[offsets[j]..offsets[j + 1]]`, sorted increasingly without duplicates.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    pub values: Vec<f64>,
    pub offsets: Vec<usize>,
}

impl Thresholds {
    /// Checks that the arrays describe sorted, finite, duplicate-free thresholds per feature.
    pub fn new(values: Vec<f64>, offsets: Vec<usize>) -> Result<Self> {
        if offsets.first() != Some(&0) || offsets.last() != Some(&values.len()) {
            return Err(Error::input(format!(
                "threshold offsets must run from 0 to the number of thresholds ({}), got {:?}..{:?}",
                values.len(),
                offsets.first(),
                offsets.last()
            )));
        }
        for (j, w) in offsets.windows(2).enumerate() {
            if w[0] > w[1] {
                return Err(Error::input(format!(
                    "threshold offsets must not decrease (feature {j}: {} then {})",
                    w[0], w[1]
                )));
            }
            let k = &values[w[0]..w[1]];
            if let Some(i) = k.iter().position(|v| !v.is_finite()) {
                return Err(Error::input(format!(
                    "threshold {i} of feature {j} is {}: thresholds must be finite",
                    k[i]
                )));
            }
            if let Some(i) = k.windows(2).position(|p| p[0] >= p[1]) {
                return Err(Error::input(format!(
                    "thresholds of feature {j} must increase strictly, got {} then {}",
                    k[i],
                    k[i + 1]
                )));
            }
        }
        Ok(Thresholds { values, offsets })
    }

    pub fn n_features(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn feature(&self, j: usize) -> &[f64] {
        &self.values[self.offsets[j]..self.offsets[j + 1]]
    }

    /// Number of output columns, and the first column of every feature's block.
    pub fn columns(&self, missing: Missing) -> (usize, Vec<usize>) {
        let extra = missing.extra_columns();
        let starts: Vec<usize> = (0..self.n_features())
            .map(|j| self.offsets[j] + j * extra)
            .collect();
        (self.values.len() + self.n_features() * extra, starts)
    }
}

/// The value halfway between `a < b`, or `a` when no float lies strictly between them.
/// Either way `a <= k < b`, so 1[a > k] = 0 and 1[b > k] = 1.
fn gap_threshold(a: f64, b: f64) -> f64 {
    let mid = a / 2.0 + b / 2.0;
    if mid > a && mid < b {
        mid
    } else {
        a
    }
}

/// Thresholds for one feature from its finite training values, sorted increasingly.
///
/// Quantile strategy: when the values have at most `n_thresholds + 1` distinct values, every
/// gap between consecutive distinct values gets a threshold, so the indicators lose nothing
/// (they determine the value's rank among the training values). Otherwise the sorted values
/// are cut into equal-frequency bins from the bottom up: with t thresholds left and r values
/// above the last cut, the next bin would end after ceil(r / (t + 1)) more values. A cut can
/// only go between two distinct values, so it goes to the nearer end of the run of equal
/// values that the ideal end falls into (the upper end on a tie). A large run of equal values
/// (a point mass, such as the many zero scores of a sparse feature) thus forms a bin of its
/// own and the remaining thresholds spread over the other values. Fitting stops when only the
/// run of the largest value is left.
pub fn fit_sorted(sorted: &[f64], n_thresholds: usize, strategy: Strategy) -> Vec<f64> {
    let m = sorted.len();
    if m == 0 || n_thresholds == 0 || sorted[0] == sorted[m - 1] {
        return Vec::new();
    }
    match strategy {
        Strategy::Uniform => {
            let (lo, hi) = (sorted[0], sorted[m - 1]);
            let t = n_thresholds as f64 + 1.0;
            let mut out: Vec<f64> = (1..=n_thresholds)
                .map(|i| lo + (hi - lo) * (i as f64 / t))
                .filter(|&k| k > lo && k < hi)
                .collect();
            out.dedup();
            out
        }
        Strategy::Quantile => {
            // Start index of every run of equal values.
            let mut run_starts = vec![0usize];
            run_starts.extend((1..m).filter(|&i| sorted[i] != sorted[i - 1]));
            if run_starts.len() - 1 <= n_thresholds {
                return run_starts
                    .windows(2)
                    .map(|w| gap_threshold(sorted[w[0]], sorted[w[1]]))
                    .collect();
            }
            let mut out = Vec::with_capacity(n_thresholds);
            let mut pos = 0usize;
            let mut left = n_thresholds;
            while left > 0 {
                let remaining = m - pos;
                let ideal = pos + remaining.div_ceil(left + 1);
                // The run of equal values that holds the ideal bin's last value.
                let v = sorted[ideal - 1];
                let run_start = sorted.partition_point(|&u| u < v);
                let run_end = sorted.partition_point(|&u| u <= v);
                let below_is_possible = run_start > pos;
                let cut =
                    if run_end >= m || (below_is_possible && ideal - run_start < run_end - ideal) {
                        if !below_is_possible {
                            break;
                        }
                        run_start
                    } else {
                        run_end
                    };
                out.push(gap_threshold(sorted[cut - 1], sorted[cut]));
                pos = cut;
                left -= 1;
            }
            out
        }
    }
}

/// Position of the first value that is infinite, or NaN when NaN is not allowed, as
/// (row, column, value).
fn first_bad<T: Scalar>(x: &[T], n_cols: usize, missing: Missing) -> Option<(usize, usize, f64)> {
    const CHUNK: usize = 1 << 16;
    x.par_chunks(CHUNK)
        .enumerate()
        .find_map_first(|(c, chunk)| {
            chunk.iter().enumerate().find_map(|(i, v)| {
                let v = v.to_f64();
                let bad = v.is_infinite() || (v.is_nan() && missing == Missing::Error);
                bad.then(|| {
                    let pos = c * CHUNK + i;
                    (pos / n_cols, pos % n_cols, v)
                })
            })
        })
}

fn bad_value_error(row: usize, col: usize, v: f64) -> Error {
    if v.is_nan() {
        Error::input(format!(
            "X[{row}, {col}] is NaN: missing values need missing=\"indicator\" \
             (one extra indicator per base feature), otherwise features must be finite numbers"
        ))
    } else {
        Error::input(format!(
            "X[{row}, {col}] is {v}: features must be finite numbers (NaN marks a missing value \
             with missing=\"indicator\")"
        ))
    }
}

fn check_shape<T>(x: &[T], n_rows: usize, n_cols: usize) -> Result<()> {
    if n_rows.checked_mul(n_cols) != Some(x.len()) {
        return Err(Error::input(format!(
            "dense matrix of shape ({n_rows}, {n_cols}) needs {} values, got {}",
            n_rows as u128 * n_cols as u128,
            x.len()
        )));
    }
    Ok(())
}

/// The bits of a non-NaN float as an unsigned integer of the same order (-0.0 before 0.0, as
/// f64::total_cmp orders them): the sign bit is flipped for positive values and every bit for
/// negative ones.
#[inline]
fn order_key(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

#[inline]
fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The bits of a non-NaN f32 as an unsigned integer of the same order (see `order_key`).
#[inline]
fn order_key32(v: f32) -> u32 {
    let b = v.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | (1 << 31)
    }
}

#[inline]
fn from_order_key32(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & !(1 << 31) } else { !k })
}

/// Unsigned keys for `radix_sort`.
trait RadixKey: Copy + Ord + Default {
    const BITS: usize;
    fn digit(self, shift: usize, mask: usize) -> usize;
}

impl RadixKey for u32 {
    const BITS: usize = 32;
    #[inline(always)]
    fn digit(self, shift: usize, mask: usize) -> usize {
        ((self >> shift) as usize) & mask
    }
}

impl RadixKey for u64 {
    const BITS: usize = 64;
    #[inline(always)]
    fn digit(self, shift: usize, mask: usize) -> usize {
        ((self >> shift) as usize) & mask
    }
}

/// Sorts integer keys by least-significant-digit radix sort, 11 bits per pass. A pass whose
/// digit is the same for every key is skipped, so keys of a narrow range need fewer passes.
/// Linear time, where a comparison sort of the millions of values of a large training set's
/// column costs n log n comparisons; f32 data is sorted as 32-bit keys (three passes over half
/// the bytes of 64-bit ones).
fn radix_sort<K: RadixKey>(keys: &mut Vec<K>, scratch: &mut Vec<K>) {
    const BITS: usize = 11;
    const BUCKETS: usize = 1 << BITS;
    let digits = K::BITS.div_ceil(BITS);
    let n = keys.len();
    if n < 256 {
        keys.sort_unstable();
        return;
    }
    // The counts of every digit in one read of the keys.
    let mut counts = vec![[0usize; BUCKETS]; digits];
    for &k in keys.iter() {
        for (d, c) in counts.iter_mut().enumerate() {
            c[k.digit(d * BITS, BUCKETS - 1)] += 1;
        }
    }
    scratch.clear();
    scratch.resize(n, K::default());
    let other = scratch;
    for (d, c) in counts.iter_mut().enumerate() {
        let shift = d * BITS;
        if c[keys[0].digit(shift, BUCKETS - 1)] == n {
            continue;
        }
        let mut at = 0;
        for slot in c.iter_mut() {
            let here = *slot;
            *slot = at;
            at += here;
        }
        for &k in keys.iter() {
            let b = k.digit(shift, BUCKETS - 1);
            other[c[b]] = k;
            c[b] += 1;
        }
        std::mem::swap(keys, other);
    }
}

/// Fits the thresholds of every column of a dense row-major matrix (NaN values, allowed only
/// with `Missing::Indicator`, are left out of the fit). Columns are fitted in parallel.
pub fn fit<T: Scalar>(
    x: &[T],
    n_rows: usize,
    n_cols: usize,
    n_thresholds: usize,
    strategy: Strategy,
    missing: Missing,
) -> Result<Thresholds> {
    check_shape(x, n_rows, n_cols)?;
    if let Some((r, c, v)) = first_bad(x, n_cols, missing) {
        return Err(bad_value_error(r, c, v));
    }
    // Quantile thresholds lie between distinct values, so a column has fewer than its rows;
    // uniform ones are placed whether data lies between them or not, so all may be kept.
    let per_column = match strategy {
        Strategy::Quantile => n_thresholds.min(n_rows),
        Strategy::Uniform => n_thresholds,
    };
    crate::memory::check(
        crate::memory::bytes_of(per_column, 8).saturating_mul(n_cols as u64),
        || {
            (
                format!("fitting {n_thresholds} thresholds for each of {n_cols} features"),
                "lower n_thresholds".to_string(),
            )
        },
    )?;
    // Each worker reuses its buffers from column to column: allocating them per column made
    // the allocator keep the freed buffers of every thread resident (measured: 150 MB more peak
    // memory on 235,000 rows) and fault fresh pages in again.
    // f32 values are exact as f32 after `to_f64`, so they are sorted as 32-bit keys.
    let is_f32 = std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>();
    let per_feature: Vec<Vec<f64>> = (0..n_cols)
        .into_par_iter()
        .map_init(
            || (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new()),
            |(keys, scratch, keys32, scratch32, col), j| {
                if crate::cancel::requested() {
                    return Vec::new();
                }
                let values = (0..n_rows)
                    .map(|i| x[i * n_cols + j].to_f64())
                    .filter(|v| !v.is_nan());
                col.clear();
                if is_f32 {
                    keys32.clear();
                    keys32.extend(values.map(|v| order_key32(v as f32)));
                    radix_sort(keys32, scratch32);
                    col.extend(keys32.iter().map(|&k| f64::from(from_order_key32(k))));
                } else {
                    keys.clear();
                    keys.extend(values.map(order_key));
                    radix_sort(keys, scratch);
                    col.extend(keys.iter().map(|&k| from_order_key(k)));
                }
                fit_sorted(col, n_thresholds, strategy)
            },
        )
        .collect();
    crate::cancel::check()?;
    let mut offsets = Vec::with_capacity(n_cols + 1);
    offsets.push(0);
    let mut values = Vec::new();
    for k in per_feature {
        values.extend(k);
        offsets.push(values.len());
    }
    Thresholds::new(values, offsets)
}

/// Integer types of scipy.sparse index arrays that the transform can write.
pub trait IndexInt: Copy + Send + Sync + Default + 'static {
    const MAX: usize;
    fn from_usize(v: usize) -> Self;
}

impl IndexInt for i32 {
    const MAX: usize = i32::MAX as usize;
    #[inline(always)]
    fn from_usize(v: usize) -> Self {
        v as i32
    }
}

impl IndexInt for i64 {
    const MAX: usize = i64::MAX as usize;
    #[inline(always)]
    fn from_usize(v: usize) -> Self {
        v as i64
    }
}

/// The indicator matrix as the index arrays of a CSR matrix whose stored values are all 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Indicators<I> {
    pub indptr: Vec<I>,
    pub indices: Vec<I>,
    pub n_cols: usize,
}

const ROW_CHUNK: usize = 1024;

/// Writes the columns set in one row and returns how many there are; `out` is None when only
/// counting.
#[inline]
fn bin_row<T: Scalar, I: IndexInt>(
    row: &[T],
    th: &Thresholds,
    starts: &[usize],
    mut out: Option<&mut [I]>,
) -> usize {
    let mut n = 0;
    for (j, v) in row.iter().enumerate() {
        let v = v.to_f64();
        let k = th.feature(j);
        let (first, count) = if v.is_nan() {
            // Validated beforehand: NaN occurs only with a missing indicator, the block's last column.
            (starts[j] + k.len(), 1)
        } else {
            (starts[j], k.partition_point(|&t| t < v))
        };
        if let Some(o) = out.as_deref_mut() {
            for (slot, c) in o[n..n + count].iter_mut().zip(first..first + count) {
                *slot = I::from_usize(c);
            }
        }
        n += count;
    }
    n
}

/// The indicator features 1[x_ij > k] for every threshold k of feature j (plus 1[x_ij is NaN]
/// with `Missing::Indicator`) of a dense row-major matrix. Rows are processed in parallel in
/// fixed chunks, so the output does not depend on the number of threads.
pub fn transform<T: Scalar, I: IndexInt>(
    x: &[T],
    n_rows: usize,
    n_cols: usize,
    th: &Thresholds,
    missing: Missing,
) -> Result<Indicators<I>> {
    check_shape(x, n_rows, n_cols)?;
    if th.n_features() != n_cols {
        return Err(Error::input(format!(
            "X has {n_cols} features, but the binning was fitted with {}",
            th.n_features()
        )));
    }
    if let Some((r, c, v)) = first_bad(x, n_cols, missing) {
        return Err(bad_value_error(r, c, v));
    }
    let (n_out, starts) = th.columns(missing);
    if n_out > I::MAX {
        return Err(Error::input(format!(
            "{n_out} indicator columns do not fit the index type"
        )));
    }
    let row = |i: usize| &x[i * n_cols..(i + 1) * n_cols];

    let mut counts = vec![0usize; n_rows];
    counts
        .par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            if crate::cancel::requested() {
                return;
            }
            for (i, n) in chunk.iter_mut().enumerate() {
                *n = bin_row::<T, I>(row(c * ROW_CHUNK + i), th, &starts, None);
            }
        });
    crate::cancel::check()?;
    let mut indptr = Vec::with_capacity(n_rows + 1);
    let mut total = 0usize;
    indptr.push(I::from_usize(0));
    let mut bounds = Vec::with_capacity(n_rows + 1);
    bounds.push(0usize);
    for n in &counts {
        total += n;
        if total > I::MAX {
            return Err(Error::input(format!(
                "the indicator matrix has more than {} stored values; use 64-bit indices",
                I::MAX
            )));
        }
        indptr.push(I::from_usize(total));
        bounds.push(total);
    }

    crate::memory::check(
        crate::memory::bytes_of(total, std::mem::size_of::<I>()),
        || {
            (
                format!("the indicator matrix of {n_rows} rows ({total} stored values)"),
                "use fewer thresholds, transform the rows in batches, or train on the features \
                 themselves"
                    .to_string(),
            )
        },
    )?;
    let mut indices = vec![I::default(); total];
    // Cut the output into the slices of the row chunks, then fill them in parallel.
    let mut pieces = Vec::with_capacity(n_rows.div_ceil(ROW_CHUNK));
    let mut rest: &mut [I] = &mut indices;
    for c in 0..n_rows.div_ceil(ROW_CHUNK) {
        let lo = c * ROW_CHUNK;
        let hi = (lo + ROW_CHUNK).min(n_rows);
        let (piece, tail) = rest.split_at_mut(bounds[hi] - bounds[lo]);
        pieces.push((lo, hi, piece));
        rest = tail;
    }
    pieces.into_par_iter().for_each(|(lo, hi, piece)| {
        if crate::cancel::requested() {
            return;
        }
        let mut at = 0;
        for i in lo..hi {
            at += bin_row(row(i), th, &starts, Some(&mut piece[at..]));
        }
    });
    crate::cancel::check()?;
    Ok(Indicators {
        indptr,
        indices,
        n_cols: n_out,
    })
}

/// The bin code of every value of a dense row-major matrix (see `crate::data::binned`): the
/// number of its feature's thresholds strictly below it, or, for NaN with
/// `Missing::Indicator`, the number of thresholds plus one. Checks the values as `transform`
/// does, with the same messages. Rows are processed in parallel in fixed chunks.
pub fn codes<T: Scalar, C: Code>(
    x: &[T],
    n_rows: usize,
    n_cols: usize,
    th: &Thresholds,
    missing: Missing,
) -> Result<Vec<C>> {
    check_shape(x, n_rows, n_cols)?;
    if th.n_features() != n_cols {
        return Err(Error::input(format!(
            "X has {n_cols} features, but the binning was fitted with {}",
            th.n_features()
        )));
    }
    let layout = BinLayout::new(th, missing);
    if layout.max_code() > C::MAX {
        return Err(Error::input(format!(
            "bin codes up to {} do not fit the code type (at most {})",
            layout.max_code(),
            C::MAX
        )));
    }
    if let Some((r, c, v)) = first_bad(x, n_cols, missing) {
        return Err(bad_value_error(r, c, v));
    }
    crate::memory::check(
        crate::memory::bytes_of(x.len(), std::mem::size_of::<C>()),
        || {
            (
                format!("the bin codes of {n_rows} rows and {n_cols} features"),
                "transform the rows in batches".to_string(),
            )
        },
    )?;
    let mut out = vec![C::default(); x.len()];
    if n_cols == 0 {
        return Ok(out);
    }
    out.par_chunks_mut(ROW_CHUNK * n_cols)
        .zip(x.par_chunks(ROW_CHUNK * n_cols))
        .for_each(|(o, xs)| {
            if crate::cancel::requested() {
                return;
            }
            for (o_row, x_row) in o.chunks_exact_mut(n_cols).zip(xs.chunks_exact(n_cols)) {
                for (j, (slot, v)) in o_row.iter_mut().zip(x_row).enumerate() {
                    let v = v.to_f64();
                    let k = th.feature(j);
                    // Validated beforehand: NaN occurs only with a missing indicator.
                    let code = if v.is_nan() {
                        k.len() + 1
                    } else {
                        k.partition_point(|&t| t < v)
                    };
                    *slot = C::from_usize(code);
                }
            }
        });
    crate::cancel::check()?;
    Ok(out)
}

/// Bytes per bin code: 1 when every code fits a u8, 2 when it fits a u16; an error beyond.
pub fn code_width(th: &Thresholds, missing: Missing) -> Result<usize> {
    let max = BinLayout::new(th, missing).max_code();
    if max <= u8::MAX as usize {
        Ok(1)
    } else if max <= u16::MAX as usize {
        Ok(2)
    } else {
        Err(Error::input(format!(
            "a feature has {} thresholds, more than bin codes hold (65535 with the missing \
             code); use fewer thresholds or the indicator output",
            th.offsets
                .windows(2)
                .map(|w| w[1] - w[0])
                .max()
                .unwrap_or(0)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_distinct_values_get_every_gap() {
        // Distinct values 0, 1, 3: the gaps are (0, 1) and (1, 3), midpoints 0.5 and 2.
        let k = fit_sorted(&[0.0, 0.0, 1.0, 3.0, 3.0], 50, Strategy::Quantile);
        assert_eq!(k, vec![0.5, 2.0]);
        assert!(fit_sorted(&[2.0, 2.0], 5, Strategy::Quantile).is_empty());
        assert!(fit_sorted(&[], 5, Strategy::Quantile).is_empty());
    }

    #[test]
    fn equal_frequency_bins_by_hand() {
        // Values 0..=9 (ten distinct), 3 thresholds. Bin 1: ceil(10/4) = 3 values {0,1,2},
        // cut at 2.5. Then 7 values left, 2 thresholds: ceil(7/3) = 3 values {3,4,5}, cut at
        // 5.5. Then 4 left, 1 threshold: ceil(4/2) = 2 values {6,7}, cut at 7.5.
        let v: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(fit_sorted(&v, 3, Strategy::Quantile), vec![2.5, 5.5, 7.5]);
    }

    #[test]
    fn a_point_mass_takes_one_bin() {
        // Six zeros then 1, 2, 3, 4 (five distinct values), 2 thresholds. Bin 1: ceil(10/3) = 4
        // values, all zeros, extended to the end of the zero run: cut at 0.5. Then 4 left, one
        // threshold: ceil(4/2) = 2 values {1, 2}: cut at 2.5.
        let v = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(fit_sorted(&v, 2, Strategy::Quantile), vec![0.5, 2.5]);
    }

    #[test]
    fn cuts_go_to_the_nearer_end_of_a_run() {
        // Values 0, 1, eight 2s, 5 (four distinct, 11 values), 2 thresholds. The first bin would
        // end after ceil(11/3) = 4 values, inside the run of 2s at indices 2..10; its lower end
        // (2 values from the ideal end) is nearer than its upper end (6 away): cut at index 2,
        // threshold (1 + 2)/2 = 1.5. Then 9 values are left and one threshold: the ideal end is
        // after ceil(9/2) = 5 more values (last value at index 6), again inside the run 2..10 whose lower end
        // is the last cut, so the cut goes after the run: (2 + 5)/2 = 3.5.
        let mut v = vec![0.0, 1.0];
        v.extend([2.0; 8]);
        v.push(5.0);
        assert_eq!(fit_sorted(&v, 2, Strategy::Quantile), vec![1.5, 3.5]);
        // Values 0, 1, eight 2s with one threshold: the ideal end after 5 values falls into the
        // run of the largest value, so the cut goes below it, at 1.5.
        let mut v = vec![0.0, 1.0];
        v.extend([2.0; 8]);
        assert_eq!(fit_sorted(&v, 1, Strategy::Quantile), vec![1.5]);
        // Values 0, eight 1s, 2, 3 (11 values) with two thresholds: the first ideal end, after
        // ceil(11/3) = 4 values, falls into the run of 1s at indices 1..9, whose lower end is 3
        // away and upper end 5 away: cut at 0.5. The next ideal end, after 1 + ceil(10/2) = 6
        // values, lies in the same run, whose lower end is the last cut: cut after it, at 1.5.
        let mut v = vec![0.0];
        v.extend([1.0; 8]);
        v.extend([2.0, 3.0]);
        assert_eq!(fit_sorted(&v, 2, Strategy::Quantile), vec![0.5, 1.5]);
    }

    #[test]
    fn uniform_thresholds_by_hand() {
        // Range [0, 4] with 3 thresholds: 1, 2, 3.
        let k = fit_sorted(&[0.0, 0.5, 4.0], 3, Strategy::Uniform);
        assert_eq!(k, vec![1.0, 2.0, 3.0]);
    }

    #[test]
    fn adjacent_floats_get_the_lower_value_as_threshold() {
        let a = 1.0f64;
        let b = f64::from_bits(a.to_bits() + 1);
        assert_eq!(fit_sorted(&[a, b], 4, Strategy::Quantile), vec![a]);
    }

    #[test]
    fn transform_by_hand() {
        // Feature 0 thresholds {0.5, 2}, feature 1 thresholds {10}; with missing indicators the
        // columns are f0>0.5, f0>2, f0 missing, f1>10, f1 missing (5 columns).
        let th = Thresholds::new(vec![0.5, 2.0, 10.0], vec![0, 2, 3]).unwrap();
        let x = [
            1.0,
            20.0, // f0 > 0.5 only; f1 > 10 -> columns 0, 3
            f64::NAN,
            0.0, // f0 missing; f1 below -> column 2
            2.0,
            f64::NAN, // 2 > 0.5 but not > 2; f1 missing -> columns 0, 4
        ];
        let out: Indicators<i32> = transform(&x, 3, 2, &th, Missing::Indicator).unwrap();
        assert_eq!(out.n_cols, 5);
        assert_eq!(out.indptr, vec![0, 2, 3, 5]);
        assert_eq!(out.indices, vec![0, 3, 2, 0, 4]);
        let err = transform::<f64, i32>(&x, 3, 2, &th, Missing::Error).unwrap_err();
        assert!(err.to_string().contains("X[1, 0] is NaN"), "{err}");
    }

    #[test]
    fn transform_is_independent_of_chunking() {
        // More rows than one chunk, so that the parallel fill is exercised across chunks.
        let n = 3 * ROW_CHUNK + 17;
        let x: Vec<f64> = (0..2 * n).map(|i| ((i * 7919) % 101) as f64).collect();
        let th = fit(&x, n, 2, 10, Strategy::Quantile, Missing::Error).unwrap();
        let out: Indicators<i64> = transform(&x, n, 2, &th, Missing::Error).unwrap();
        let (_, starts) = th.columns(Missing::Error);
        for i in 0..n {
            let lo = out.indptr[i] as usize;
            let hi = out.indptr[i + 1] as usize;
            let mut expect = Vec::new();
            for j in 0..2 {
                for (t, &k) in th.feature(j).iter().enumerate() {
                    if x[i * 2 + j] > k {
                        expect.push((starts[j] + t) as i64);
                    }
                }
            }
            assert_eq!(&out.indices[lo..hi], &expect[..], "row {i}");
        }
    }

    #[test]
    fn radix_sort_orders_floats_as_total_cmp() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for n in [0usize, 1, 255, 256, 5000] {
            let mut v: Vec<f64> = (0..n)
                .map(|i| match i % 7 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => rng.random_range(-3..3) as f64,
                    3 => f64::from(rng.random_range(-1.0f32..1.0)),
                    4 => f64::MAX * if i % 2 == 0 { 1.0 } else { -1.0 },
                    _ => rng.random_range(-1e300..1e300) * 1e-290,
                })
                .collect();
            let mut keys: Vec<u64> = v.iter().map(|&x| order_key(x)).collect();
            radix_sort(&mut keys, &mut Vec::new());
            let sorted: Vec<f64> = keys.into_iter().map(from_order_key).collect();
            let mut v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            let mut keys32: Vec<u32> = v32.iter().map(|&x| order_key32(x)).collect();
            radix_sort(&mut keys32, &mut Vec::new());
            let sorted32: Vec<f32> = keys32.into_iter().map(from_order_key32).collect();
            v.sort_unstable_by(f64::total_cmp);
            v32.sort_unstable_by(f32::total_cmp);
            let bits = |a: &[f64]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let bits32 = |a: &[f32]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&sorted), bits(&v), "n = {n}");
            assert_eq!(bits32(&sorted32), bits32(&v32), "n = {n}");
        }
    }

    #[test]
    fn bad_thresholds_are_rejected() {
        assert!(Thresholds::new(vec![1.0, 1.0], vec![0, 2]).is_err());
        assert!(Thresholds::new(vec![1.0], vec![0, 2]).is_err());
        assert!(Thresholds::new(vec![f64::INFINITY], vec![0, 1]).is_err());
    }
}
