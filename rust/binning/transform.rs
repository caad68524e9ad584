//! The transform of a dense matrix by fitted thresholds: to the indicator features as the index
//! arrays of a CSR matrix (`transform`), or to one bin code per value for a `BinnedView`
//! (`codes`). Rows are processed in parallel in fixed chunks, so the output does not depend on
//! the number of threads.

use rayon::prelude::*;

use crate::binning::checks::{bad_value_error, check_shape, first_bad};
use crate::binning::thresholds::{Missing, Thresholds};
use crate::data::binned::{BinLayout, Code};
use crate::data::matrix::Scalar;
use crate::error::{Error, Result};

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
    use crate::binning::fit::fit;
    use crate::binning::thresholds::Strategy;
    use crate::data::binned_view::BinnedView;
    use crate::data::csr::CsrView;
    use crate::data::matrix::RowMatrix;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

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

    // The bin codes of `codes` read through a `BinnedView` must be the indicator matrix of
    // `transform`: these tests check the view's kernels against the CSR indicators. They live
    // here, not beside `BinnedView`, because the view's file must not import the transform,
    // which imports the view's layout.

    /// Random values with ties, NaN and a constant column, their thresholds, codes and CSR
    /// indicators (from the independent CSR transform).
    fn case(seed: u64, missing: Missing) -> (Thresholds, Vec<u8>, Indicators<i64>, usize, usize) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (n, d) = (300, 5);
        let x: Vec<f64> = (0..n * d)
            .map(|i| match i % d {
                0 => 3.0,                           // constant
                1 => rng.random_range(0..4) as f64, // few distinct values
                2 if missing == Missing::Indicator && rng.random_range(0..5) == 0 => f64::NAN,
                _ => rng.random_range(-1.0..1.0),
            })
            .collect();
        let th = fit(&x, n, d, 7, Strategy::Quantile, missing).unwrap();
        let codes: Vec<u8> = codes(&x, n, d, &th, missing).unwrap();
        let ind = transform(&x, n, d, &th, missing).unwrap();
        (th, codes, ind, n, d)
    }

    #[test]
    fn kernels_equal_the_indicator_sums() {
        for (seed, missing) in [(1, Missing::Error), (2, Missing::Indicator)] {
            let (th, codes, ind, n, d) = case(seed, missing);
            let ones = vec![1.0f64; ind.indices.len()];
            let csr = CsrView::new(&ind.indptr, &ind.indices, &ones, n, ind.n_cols).unwrap();
            let view = BinnedView::new(&codes, n, d, &th, missing).unwrap();
            assert_eq!(view.n_cols(), ind.n_cols);
            let mut rng = ChaCha8Rng::seed_from_u64(seed + 10);
            let w: Vec<f64> = (0..ind.n_cols)
                .map(|_| rng.random_range(-1.0..1.0))
                .collect();
            let table = view.prepare(&w);
            let c: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let (mut g_csr, mut g_naive) = (vec![0.0; ind.n_cols], vec![0.0; ind.n_cols]);
            let mut hist = vec![0.0; view.acc_len()];
            for (r, &cr) in c.iter().enumerate() {
                let expect = csr.row_dot(r, &w);
                assert!(
                    (view.row_score(r, &w, &table) - expect).abs() < 1e-12,
                    "row {r}"
                );
                assert!((view.row_dot(r, &w) - expect).abs() < 1e-12, "row {r}");
                csr.row_axpy(r, cr, &mut g_csr);
                view.row_axpy(r, cr, &mut g_naive);
                view.row_accumulate(r, cr, &mut hist);
            }
            let g = view.finish(hist);
            for j in 0..ind.n_cols {
                assert!((g[j] - g_csr[j]).abs() < 1e-10, "column {j}");
                assert!((g_naive[j] - g_csr[j]).abs() < 1e-10, "column {j}");
            }
        }
    }

    #[test]
    fn cut_sums_on_codes_equal_those_on_indicators_for_any_thread_count() {
        use crate::data::groups::QueryGroups;
        use crate::oracle::{from_name, Oracle};
        use crate::runtime::pool::with_threads;
        use crate::solver::RankingProblem;
        let (th, codes, ind, n, d) = case(3, Missing::Indicator);
        let ones = vec![1.0f64; ind.indices.len()];
        let csr = CsrView::new(&ind.indptr, &ind.indices, &ones, n, ind.n_cols).unwrap();
        let view = BinnedView::new(&codes, n, d, &th, Missing::Indicator).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let qids: Vec<i64> = (0..n as i64).map(|r| r / 12).collect();
        let groups = QueryGroups::from_codes(&qids, n.div_ceil(12)).unwrap();
        let labels: Vec<f64> = (0..n).map(|_| rng.random_range(0..3) as f64).collect();
        let w: Vec<f64> = (0..ind.n_cols)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let owned: Vec<_> = ["map", "ndcg@10"]
            .iter()
            .map(|l| from_name(l).unwrap())
            .collect();
        let oracles: Vec<&dyn Oracle> = owned.iter().map(|o| o.as_ref()).collect();
        let on_csr = RankingProblem::new(&csr, &labels, &groups, 0.0)
            .unwrap()
            .cut_sums(&w, &oracles);
        let problem = RankingProblem::new(&view, &labels, &groups, 0.0).unwrap();
        let one = with_threads(1, || problem.cut_sums(&w, &oracles)).unwrap();
        let three = with_threads(3, || problem.cut_sums(&w, &oracles)).unwrap();
        assert_eq!(one, three);
        for ((b, g), (b2, g2)) in one.iter().zip(&on_csr) {
            assert!((b - b2).abs() < 1e-10);
            for (u, v) in g.iter().zip(g2) {
                assert!((u - v).abs() < 1e-10, "{u} vs {v}");
            }
        }
    }
}
