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
    fit_ordered(&mut SortedSlice(sorted), n_thresholds, strategy)
}

/// Read access to one feature's training values in increasing order, by rank. The quantile
/// fit reads a few hundred ranks of a column of millions of values, so an implementation
/// need not sort the whole column (see [`Bucketed`]).
trait OrderedValues {
    fn len(&self) -> usize;
    /// The value of rank `i`.
    fn at(&mut self, i: usize) -> f64;
    /// The ranks `start..end` of the run of values equal to the value of rank `i` (with
    /// -0.0 equal to 0.0, as f64 comparison has them).
    fn run_of(&mut self, i: usize) -> (usize, usize);
    /// The first value of every run of equal values, in increasing order, when there are at
    /// most `k` runs; `None` when there are more.
    fn run_firsts_up_to(&mut self, k: usize) -> Option<Vec<f64>>;
}

struct SortedSlice<'a>(&'a [f64]);

impl OrderedValues for SortedSlice<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn at(&mut self, i: usize) -> f64 {
        self.0[i]
    }
    fn run_of(&mut self, i: usize) -> (usize, usize) {
        let v = self.0[i];
        (
            self.0.partition_point(|&u| u < v),
            self.0.partition_point(|&u| u <= v),
        )
    }
    fn run_firsts_up_to(&mut self, k: usize) -> Option<Vec<f64>> {
        run_firsts(self.0.iter().copied(), k)
    }
}

/// The first value of every run of equal values of an increasing sequence, or `None` when
/// there are more than `k` runs (stopping there).
fn run_firsts(values: impl Iterator<Item = f64>, k: usize) -> Option<Vec<f64>> {
    let mut out: Vec<f64> = Vec::new();
    for v in values {
        if out.last() != Some(&v) {
            if out.len() == k {
                return None;
            }
            out.push(v);
        }
    }
    Some(out)
}

fn fit_ordered<S: OrderedValues>(
    sorted: &mut S,
    n_thresholds: usize,
    strategy: Strategy,
) -> Vec<f64> {
    let m = sorted.len();
    if m == 0 || n_thresholds == 0 || sorted.at(0) == sorted.at(m - 1) {
        return Vec::new();
    }
    match strategy {
        Strategy::Uniform => {
            let (lo, hi) = (sorted.at(0), sorted.at(m - 1));
            let t = n_thresholds as f64 + 1.0;
            let mut out: Vec<f64> = (1..=n_thresholds)
                .map(|i| lo + (hi - lo) * (i as f64 / t))
                .filter(|&k| k > lo && k < hi)
                .collect();
            out.dedup();
            out
        }
        Strategy::Quantile => {
            if let Some(firsts) = sorted.run_firsts_up_to(n_thresholds + 1) {
                return firsts
                    .windows(2)
                    .map(|w| gap_threshold(w[0], w[1]))
                    .collect();
            }
            let mut out = Vec::with_capacity(n_thresholds);
            let mut pos = 0usize;
            let mut left = n_thresholds;
            // A cut may sort a bucket of a long column; Ctrl-C stops between cuts (the
            // caller reports it and drops the thresholds).
            while left > 0 && !crate::runtime::cancel::requested() {
                let remaining = m - pos;
                let ideal = pos + remaining.div_ceil(left + 1);
                // The run of equal values that holds the ideal bin's last value.
                let (run_start, run_end) = sorted.run_of(ideal - 1);
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
                out.push(gap_threshold(sorted.at(cut - 1), sorted.at(cut)));
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
    let nan_is_bad = missing == Missing::Error;
    // Non-short-circuit operators, so that the scan below compiles without branches.
    let is_bad = |v: f64| (v.abs() == f64::INFINITY) | (v.is_nan() & nan_is_bad);
    x.par_chunks(CHUNK)
        .enumerate()
        .find_map_first(|(c, chunk)| {
            // A branch-free scan of the chunk (vectorized) before looking for the position.
            if !chunk.iter().fold(false, |any, v| any | is_bad(v.to_f64())) {
                return None;
            }
            chunk.iter().enumerate().find_map(|(i, v)| {
                let v = v.to_f64();
                is_bad(v).then(|| {
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
    // Branch-free: the mask is all ones for a negative value and the sign bit otherwise (a
    // branch on the sign is mispredicted on every other value of a symmetric feature).
    let b = v.to_bits();
    b ^ ((((b as i64) >> 63) as u64) | (1 << 63))
}

#[inline]
fn from_order_key(k: u64) -> f64 {
    f64::from_bits(k ^ (((!k as i64 >> 63) as u64) | (1 << 63)))
}

/// The bits of a non-NaN f32 as an unsigned integer of the same order (see `order_key`).
#[inline]
fn order_key32(v: f32) -> u32 {
    let b = v.to_bits();
    b ^ ((((b as i32) >> 31) as u32) | (1 << 31))
}

#[inline]
fn from_order_key32(k: u32) -> f32 {
    f32::from_bits(k ^ (((!k as i32 >> 31) as u32) | (1 << 31)))
}

/// Order keys of one float type (`order_key32` of f32 values, `order_key` of f64 values).
trait OrderKey: Copy + Ord + Default + Send {
    /// The key written for NaN, above the key of every number (and never `of` a number).
    const NAN: Self;
    fn of(v: f64) -> Self;
    fn value(self) -> f64;
    /// A bucket among `BUCKETS`, non-decreasing in the value: the top 16 bits of the value's
    /// f32 order key, with -0.0 taken as 0.0 so that a run of equal values (zeros of either
    /// sign included) lies in one bucket.
    fn bucket(self) -> usize;
}

/// Number of buckets of [`OrderKey::bucket`]: 8 exponent and 7 mantissa bits of an f32, so a
/// bucket spans under 1% of its values' magnitude.
const BUCKETS: usize = 1 << 16;

/// `order_key32(-0.0)`.
const NEGATIVE_ZERO_KEY32: u32 = 0x7FFF_FFFF;

#[inline]
fn bucket_of_f32(v: f32) -> usize {
    // Adding 0.0 turns -0.0 into 0.0 and leaves every other value unchanged.
    (order_key32(v + 0.0) >> 16) as usize
}

impl OrderKey for u32 {
    const NAN: Self = u32::MAX;
    #[inline]
    fn of(v: f64) -> Self {
        order_key32(v as f32)
    }
    #[inline]
    fn value(self) -> f64 {
        f64::from(from_order_key32(self))
    }
    #[inline]
    fn bucket(self) -> usize {
        // -0.0 has the key just below 0.0's; moved up to it, as `bucket_of_f32` does.
        ((self + u32::from(self == NEGATIVE_ZERO_KEY32)) >> 16) as usize
    }
}

impl OrderKey for u64 {
    const NAN: Self = u64::MAX;
    #[inline]
    fn of(v: f64) -> Self {
        order_key(v)
    }
    #[inline]
    fn value(self) -> f64 {
        from_order_key(self)
    }
    #[inline]
    fn bucket(self) -> usize {
        // Rounding to f32 is monotone, so buckets are ordered as the f64 values.
        bucket_of_f32(from_order_key(self) as f32)
    }
}

/// One column's values grouped into [`BUCKETS`] value ranges by a counting sort, each range
/// sorted only when a rank inside it is read. Two passes over the column and a sort of the few
/// buckets that hold the quantile fit's cuts, where a full sort of millions of values is
/// several passes (`Binner.fit` on the MSLR-WEB30K shape spent most of its time sorting).
/// A column whose values fall into only a few buckets is sorted in full when the fit needs
/// every run of equal values.
struct Bucketed<'a, K> {
    keys: &'a mut [K],
    /// `starts[b]..starts[b + 1]` are the ranks of bucket `b`.
    starts: &'a [usize],
    sorted: &'a mut [bool],
    /// The buckets that hold at least one value, in increasing order.
    non_empty: &'a [usize],
}

impl<K: OrderKey> Bucketed<'_, K> {
    fn bucket_of_rank(&self, i: usize) -> usize {
        // The last bucket starting at or before rank i; empty buckets start where the next
        // one does, so it is the one that holds rank i.
        self.starts.partition_point(|&s| s <= i) - 1
    }

    fn sorted_bucket(&mut self, b: usize) -> (usize, &[K]) {
        let (lo, hi) = (self.starts[b], self.starts[b + 1]);
        if !self.sorted[b] {
            self.keys[lo..hi].sort_unstable();
            self.sorted[b] = true;
        }
        (lo, &self.keys[lo..hi])
    }
}

impl<K: OrderKey> OrderedValues for Bucketed<'_, K> {
    fn len(&self) -> usize {
        self.keys.len()
    }
    fn at(&mut self, i: usize) -> f64 {
        let b = self.bucket_of_rank(i);
        let (lo, keys) = self.sorted_bucket(b);
        keys[i - lo].value()
    }
    fn run_of(&mut self, i: usize) -> (usize, usize) {
        let v = self.at(i);
        let b = self.bucket_of_rank(i);
        let (lo, keys) = self.sorted_bucket(b);
        (
            lo + keys.partition_point(|k| k.value() < v),
            lo + keys.partition_point(|k| k.value() <= v),
        )
    }
    fn run_firsts_up_to(&mut self, k: usize) -> Option<Vec<f64>> {
        // Each run lies in one bucket, so more non-empty buckets than k means more runs.
        if self.non_empty.len() > k {
            return None;
        }
        for i in 0..self.non_empty.len() {
            self.sorted_bucket(self.non_empty[i]);
        }
        run_firsts(self.keys.iter().map(|k| k.value()), k)
    }
}

/// Per-worker buffers of [`fit_group`], reused from column group to column group.
#[derive(Default)]
struct ColumnBuffers<K> {
    /// The order keys of each column of the group, in row order.
    keys: Vec<Vec<K>>,
    grouped: Vec<K>,
    starts: Vec<usize>,
    next: Vec<usize>,
    sorted: Vec<bool>,
    non_empty: Vec<usize>,
}

/// Columns read together: a row's values of the group share one or two cache lines, where a
/// column read alone fetches a whole 64-byte cache line for each 4-byte value (reading the
/// columns one by one moves about 16 times the bytes of a float32 X through memory).
const COLUMN_GROUP: usize = 8;

/// The thresholds of columns `j0..j1` of a dense row-major matrix, from their non-NaN values.
#[allow(clippy::too_many_arguments)]
fn fit_group<T: Scalar, K: OrderKey>(
    x: &[T],
    n_rows: usize,
    n_cols: usize,
    (j0, j1): (usize, usize),
    buf: &mut ColumnBuffers<K>,
    n_thresholds: usize,
    strategy: Strategy,
) -> Vec<Vec<f64>> {
    buf.keys.resize_with(j1 - j0, Vec::new);
    for keys in &mut buf.keys {
        keys.clear();
        keys.resize(n_rows, K::default());
    }
    // The group's values are first copied out of a block of rows (a short loop, so that the
    // processor has many rows' cache misses in flight), then turned into keys column by column
    // from the copy in cache. Every value is written (NaN as a key above every number's), and
    // NaN keys are dropped after.
    const BLOCK: usize = 4096;
    let g = j1 - j0;
    let mut stage: Vec<[T; COLUMN_GROUP]> = Vec::with_capacity(BLOCK);
    let mut any_nan = false;
    for (b, rows) in x[..n_rows * n_cols].chunks(BLOCK * n_cols).enumerate() {
        // A tall group takes seconds; Ctrl-C stops it here (the caller reports it).
        if crate::runtime::cancel::requested() {
            return Vec::new();
        }
        stage.clear();
        if g == COLUMN_GROUP {
            stage.extend(
                rows.chunks_exact(n_cols)
                    .map(|row| <[T; COLUMN_GROUP]>::try_from(&row[j0..j1]).expect("a full group")),
            );
        } else {
            stage.extend(rows.chunks_exact(n_cols).map(|row| {
                let mut lane = [row[j0]; COLUMN_GROUP];
                lane[..g].copy_from_slice(&row[j0..j1]);
                lane
            }));
        }
        for (c, keys) in buf.keys.iter_mut().enumerate() {
            let out = &mut keys[b * BLOCK..b * BLOCK + stage.len()];
            for (key, lane) in out.iter_mut().zip(&stage) {
                let v = lane[c].to_f64();
                any_nan |= v.is_nan();
                *key = if v.is_nan() { K::NAN } else { K::of(v) };
            }
        }
    }
    if any_nan {
        for keys in &mut buf.keys {
            keys.retain(|&k| k != K::NAN);
        }
    }
    let mut keys = std::mem::take(&mut buf.keys);
    let out = keys
        .iter()
        .take_while(|_| !crate::runtime::cancel::requested())
        .map(|k| fit_column(k, buf, n_thresholds, strategy))
        .collect();
    buf.keys = std::mem::take(&mut keys);
    out
}

/// The thresholds of one column from the order keys of its non-NaN values, as `fit_sorted`
/// places them on the sorted column.
fn fit_column<K: OrderKey>(
    keys: &[K],
    buf: &mut ColumnBuffers<K>,
    n_thresholds: usize,
    strategy: Strategy,
) -> Vec<f64> {
    let ColumnBuffers {
        grouped,
        starts,
        next,
        sorted,
        non_empty,
        ..
    } = buf;
    // Counting sort by bucket: counts, their prefix sums, then every key to its bucket.
    starts.clear();
    starts.resize(BUCKETS + 1, 0);
    // Ctrl-C is looked at every million values: a pass over a column of tens of millions
    // takes most of a second.
    const CHECK: usize = 1 << 20;
    for chunk in keys.chunks(CHECK) {
        if crate::runtime::cancel::requested() {
            return Vec::new();
        }
        for k in chunk {
            starts[k.bucket() + 1] += 1;
        }
    }
    non_empty.clear();
    non_empty.extend((0..BUCKETS).filter(|&b| starts[b + 1] > 0));
    for b in 0..BUCKETS {
        starts[b + 1] += starts[b];
    }
    next.clear();
    next.extend_from_slice(&starts[..BUCKETS]);
    grouped.clear();
    grouped.resize(keys.len(), K::default());
    for chunk in keys.chunks(CHECK) {
        if crate::runtime::cancel::requested() {
            return Vec::new();
        }
        for &k in chunk {
            let b = k.bucket();
            grouped[next[b]] = k;
            next[b] += 1;
        }
    }
    sorted.clear();
    sorted.resize(BUCKETS, false);
    let mut column = Bucketed {
        keys: grouped,
        starts,
        sorted,
        non_empty,
    };
    fit_ordered(&mut column, n_thresholds, strategy)
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
    crate::runtime::memory::check(
        crate::runtime::memory::bytes_of(per_column, 8).saturating_mul(n_cols as u64),
        || {
            (
                format!("fitting {n_thresholds} thresholds for each of {n_cols} features"),
                "lower n_thresholds".to_string(),
            )
        },
    )?;
    // Each worker reuses its buffers from column group to column group: allocating them per
    // group (rayon's `map_init` makes them per split of the work, not per thread) made the
    // allocator keep the freed buffers of every thread resident (measured: 150 MB more peak
    // memory on 235,000 rows) and fault fresh pages in again. So the groups are dealt out to
    // the workers in turn; each column's thresholds do not depend on which worker fits it.
    // f32 values are exact as f32 after `to_f64`, so they are ordered by 32-bit keys.
    let is_f32 = std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>();
    // Smaller groups when there are few columns (run fusion's handful of runs), so that every
    // thread gets one.
    let threads = rayon::current_num_threads().max(1);
    let group = n_cols.div_ceil(threads).clamp(1, COLUMN_GROUP);
    let groups: Vec<(usize, usize)> = (0..n_cols)
        .step_by(group)
        .map(|j0| (j0, (j0 + group).min(n_cols)))
        .collect();
    let workers = rayon::current_num_threads().clamp(1, groups.len().max(1));
    let mut per_group: Vec<(usize, Vec<Vec<f64>>)> = (0..workers)
        .into_par_iter()
        .flat_map_iter(|worker| {
            let (mut buf32, mut buf64) = (
                ColumnBuffers::<u32>::default(),
                ColumnBuffers::<u64>::default(),
            );
            let mut out = Vec::new();
            for g in (worker..groups.len()).step_by(workers) {
                if crate::runtime::cancel::requested() {
                    break;
                }
                let fitted = if is_f32 {
                    fit_group(
                        x,
                        n_rows,
                        n_cols,
                        groups[g],
                        &mut buf32,
                        n_thresholds,
                        strategy,
                    )
                } else {
                    fit_group(
                        x,
                        n_rows,
                        n_cols,
                        groups[g],
                        &mut buf64,
                        n_thresholds,
                        strategy,
                    )
                };
                out.push((g, fitted));
            }
            out
        })
        .collect();
    per_group.sort_unstable_by_key(|&(g, _)| g);
    let per_feature = per_group.into_iter().flat_map(|(_, k)| k);
    crate::runtime::cancel::check()?;
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
            if crate::runtime::cancel::requested() {
                return;
            }
            for (i, n) in chunk.iter_mut().enumerate() {
                *n = bin_row::<T, I>(row(c * ROW_CHUNK + i), th, &starts, None);
            }
        });
    crate::runtime::cancel::check()?;
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

    crate::runtime::memory::check(
        crate::runtime::memory::bytes_of(total, std::mem::size_of::<I>()),
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
        if crate::runtime::cancel::requested() {
            return;
        }
        let mut at = 0;
        for i in lo..hi {
            at += bin_row(row(i), th, &starts, Some(&mut piece[at..]));
        }
    });
    crate::runtime::cancel::check()?;
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
    crate::runtime::memory::check(
        crate::runtime::memory::bytes_of(x.len(), std::mem::size_of::<C>()),
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
            if crate::runtime::cancel::requested() {
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
    crate::runtime::cancel::check()?;
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

    /// A column of `n` values of one of several shapes: ties, zeros of both signs, a point
    /// mass, few distinct values, a range narrower than one bucket, extreme magnitudes.
    fn column(kind: usize, n: usize, rng: &mut impl rand::Rng) -> Vec<f64> {
        (0..n)
            .map(|i| match kind {
                0 => rng.random_range(-3..4) as f64,
                1 => [0.0, -0.0][i % 2] * if rng.random_bool(0.5) { 1.0 } else { 0.0 },
                2 => {
                    if rng.random_bool(0.8) {
                        [0.0, -0.0][i % 3 % 2]
                    } else {
                        rng.random_range(-1.0..1.0)
                    }
                }
                3 => 1.0 + rng.random_range(0..2000) as f64 * 1e-6,
                4 => 1.0 + rng.random_range(0.0..1e-3),
                5 => rng.random_range(-1e300..1e300) * 10f64.powi(-rng.random_range(0..600)),
                6 => [f64::MAX, -f64::MAX, 1e-310, -1e-310, 0.0][rng.random_range(0..5)],
                _ => rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-3..4)),
            })
            .collect()
    }

    #[test]
    fn bucketed_fit_equals_the_fit_on_the_sorted_column() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let bits = |a: &[f64]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for kind in 0..8 {
            for n in [0usize, 1, 2, 7, 300, 20_000] {
                let col = column(kind, n, &mut rng);
                let col32: Vec<f32> = col.iter().map(|&v| v as f32).collect();
                for n_thresholds in [1, 3, 50, 255] {
                    for strategy in [Strategy::Quantile, Strategy::Uniform] {
                        let mut sorted = col.clone();
                        sorted.sort_unstable_by(f64::total_cmp);
                        let expect = fit_sorted(&sorted, n_thresholds, strategy);
                        let got = fit(&col, n, 1, n_thresholds, strategy, Missing::Error).unwrap();
                        assert_eq!(
                            bits(got.feature(0)),
                            bits(&expect),
                            "f64 {kind} {n} {n_thresholds}"
                        );
                        if col32.iter().any(|v| v.is_infinite()) {
                            continue;
                        }
                        let mut sorted32: Vec<f64> = col32.iter().map(|&v| f64::from(v)).collect();
                        sorted32.sort_unstable_by(f64::total_cmp);
                        let expect = fit_sorted(&sorted32, n_thresholds, strategy);
                        let got =
                            fit(&col32, n, 1, n_thresholds, strategy, Missing::Error).unwrap();
                        assert_eq!(
                            bits(got.feature(0)),
                            bits(&expect),
                            "f32 {kind} {n} {n_thresholds}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn bad_thresholds_are_rejected() {
        assert!(Thresholds::new(vec![1.0, 1.0], vec![0, 2]).is_err());
        assert!(Thresholds::new(vec![1.0], vec![0, 2]).is_err());
        assert!(Thresholds::new(vec![f64::INFINITY], vec![0, 1]).is_err());
    }
}
