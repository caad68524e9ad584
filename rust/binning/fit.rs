//! Fitting the thresholds of every feature of a dense matrix (quantile or uniform), in parallel
//! over column groups, each column's thresholds independent of the thread that fits it.

use rayon::prelude::*;

use crate::binning::checks::{bad_value_error, check_shape, first_bad};
use crate::binning::order::{Bucketed, OrderKey, OrderedValues, SortedSlice, BUCKETS};
use crate::binning::thresholds::{Missing, Strategy, Thresholds};
use crate::data::matrix::Scalar;
use crate::error::Result;

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

/// Rows of a column group staged at a time by `fit_group`.
const STAGE_ROWS: usize = 4096;

/// The thresholds of columns `j0..j1` of a dense row-major matrix, from their non-NaN values.
#[allow(clippy::too_many_arguments)]
fn fit_group<T: Scalar, K: OrderKey>(
    x: &[T],
    n_rows: usize,
    n_cols: usize,
    rows: Option<&[usize]>,
    (j0, j1): (usize, usize),
    buf: &mut ColumnBuffers<K>,
    n_thresholds: usize,
    strategy: Strategy,
) -> Vec<Vec<f64>> {
    // The rows fitted on: all of them, or the given subset (in its order).
    let n_used = rows.map_or(n_rows, <[usize]>::len);
    buf.keys.resize_with(j1 - j0, Vec::new);
    for keys in &mut buf.keys {
        keys.clear();
        keys.resize(n_used, K::default());
    }
    // The group's values are first copied out of a block of rows (a short loop, so that the
    // processor has many rows' cache misses in flight), then turned into keys column by column
    // from the copy in cache. Every value is written (NaN as a key above every number's), and
    // NaN keys are dropped after.
    const BLOCK: usize = STAGE_ROWS;
    let g = j1 - j0;
    let mut stage: Vec<[T; COLUMN_GROUP]> = Vec::with_capacity(BLOCK);
    let mut any_nan = false;
    let row_of = |i: usize| {
        let r = rows.map_or(i, |rows| rows[i]);
        &x[r * n_cols..(r + 1) * n_cols]
    };
    for b in 0..n_used.div_ceil(BLOCK) {
        // A tall group takes seconds; Ctrl-C stops it here (the caller reports it).
        if crate::runtime::cancel::requested() {
            return Vec::new();
        }
        let block = b * BLOCK..((b + 1) * BLOCK).min(n_used);
        stage.clear();
        if g == COLUMN_GROUP {
            stage.extend(
                block.map(|i| {
                    <[T; COLUMN_GROUP]>::try_from(&row_of(i)[j0..j1]).expect("a full group")
                }),
            );
        } else {
            stage.extend(block.map(|i| {
                let row = row_of(i);
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
    fit_rows(x, n_rows, n_cols, None, n_thresholds, strategy, missing)
}

/// [`fit`] on the rows `rows` of the matrix alone (all rows when None), without a copy of
/// them: the thresholds are those `fit` gives on the matrix of those rows, bit for bit (each
/// column's fit reads its values in the order given). A search fits each split's binning so on
/// the one matrix it searches on. The rows must be below `n_rows`; every value of the matrix is
/// checked, as `fit` checks its own.
pub fn fit_rows<T: Scalar>(
    x: &[T],
    n_rows: usize,
    n_cols: usize,
    rows: Option<&[usize]>,
    n_thresholds: usize,
    strategy: Strategy,
    missing: Missing,
) -> Result<Thresholds> {
    check_shape(x, n_rows, n_cols)?;
    if let Some((r, c, v)) = first_bad(x, n_cols, missing) {
        return Err(bad_value_error(r, c, v));
    }
    if let Some(&r) = rows.and_then(|rows| rows.iter().find(|&&r| r >= n_rows)) {
        return Err(crate::error::Error::input(format!(
            "row {r} is outside the {n_rows} rows of the matrix to fit thresholds on"
        )));
    }
    // From here on, `n_rows` counts the rows fitted on, as `fit` on their copy counts them.
    let n_all = n_rows;
    let n_rows = rows.map_or(n_all, <[usize]>::len);
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
    // Each worker holds a key per row for each column of its group, and the sort of a column
    // needs as much again: guarded by `check_call`, since under an address-space limit these
    // buffers fail well below `check`'s floor, and a failed allocation aborts the process.
    // Besides, whatever the number of rows, each worker's counting sort holds `starts` and
    // `next` (a usize per bucket), `sorted` and `non_empty`, and `fit_group` its staging block:
    // over a megabyte per worker, which aborted small fits under a memory limit when left out.
    let key_bytes = if is_f32 { 4 } else { 8 };
    let fixed_per_worker = crate::runtime::memory::bytes_of(3 * BUCKETS + 1, 8)
        .saturating_add(BUCKETS as u64)
        .saturating_add(crate::runtime::memory::bytes_of(
            STAGE_ROWS * COLUMN_GROUP,
            std::mem::size_of::<T>(),
        ));
    crate::runtime::memory::check_call(
        crate::runtime::memory::bytes_of(n_rows, key_bytes)
            .saturating_mul(group as u64 + 1)
            .saturating_add(fixed_per_worker)
            .saturating_mul(workers as u64),
        || {
            (
                format!("fitting thresholds on {n_rows} rows with {workers} thread(s)"),
                "fit the binner on a sample of the rows, or with fewer threads (n_jobs)"
                    .to_string(),
            )
        },
    )?;
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
                        n_all,
                        n_cols,
                        rows,
                        groups[g],
                        &mut buf32,
                        n_thresholds,
                        strategy,
                    )
                } else {
                    fit_group(
                        x,
                        n_all,
                        n_cols,
                        rows,
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
}
