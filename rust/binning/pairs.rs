//! The 2-D histograms that pair selection (FAST, Lou, Caruana, Gehrke and Hooker, KDD 2013)
//! reads: for every candidate pair (i, j) of base features, the sum of a per-document residual
//! and the number of documents in every cell of the two features' coarse bins. The selection
//! itself (cell means, the reduction of the squared residual, the ranking of pairs) is cheap on
//! these histograms and lives in Python (`svmmap._fit.pairs`); this pass over the documents, once
//! per pair, is the part that costs O(n_docs x n_pairs).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use crate::error::{Error, Result};

/// The histograms of `pairs` over the coarse codes.
///
/// `coarse` holds the coarse code of every (feature, document) in feature-major order (feature
/// f's codes are `coarse[f * n_rows .. (f + 1) * n_rows]`), each below `sizes[f]`. Pair p =
/// (i, j) gets the block of `sizes[i] * sizes[j]` cells, cell ci * sizes[j] + cj, at the sum of
/// the earlier blocks' sizes. Returns the per-cell sums of `residual` and the per-cell counts.
/// Every pair's sums are added in row order on one thread, so the result does not depend on
/// the number of threads.
///
/// `deadline` (a search's time budget): once it has passed, the pairs not yet started are
/// skipped and the scan returns `None`, within one pair's pass over the rows per thread, as
/// it stops on Ctrl-C; histograms of a part of the pairs would rank only those, so none are
/// returned. Without a deadline, or before it, the result is the same as without one.
pub fn pair_histograms(
    coarse: &[u8],
    n_rows: usize,
    sizes: &[usize],
    pairs: &[(usize, usize)],
    residual: &[f64],
    deadline: Option<Instant>,
) -> Result<Option<(Vec<f64>, Vec<f64>)>> {
    let d = sizes.len();
    if coarse.len() != d * n_rows || residual.len() != n_rows {
        return Err(Error::input(format!(
            "pair histograms need {d} x {n_rows} coarse codes and {n_rows} residuals, got {} \
             and {}",
            coarse.len(),
            residual.len()
        )));
    }
    for (f, &size) in sizes.iter().enumerate() {
        let col = &coarse[f * n_rows..(f + 1) * n_rows];
        if let Some(r) = col.iter().position(|&c| usize::from(c) >= size) {
            return Err(Error::input(format!(
                "coarse code {} of feature {f} at row {r} is not below its size {size}",
                col[r]
            )));
        }
    }
    let mut offsets = Vec::with_capacity(pairs.len() + 1);
    let mut at = 0usize;
    for &(i, j) in pairs {
        if i >= d || j >= d || i == j {
            return Err(Error::input(format!(
                "pair ({i}, {j}) must name two different features below {d}"
            )));
        }
        offsets.push(at);
        at += sizes[i] * sizes[j];
    }
    offsets.push(at);
    let late = AtomicBool::new(false);
    let blocks: Vec<(Vec<f64>, Vec<f64>)> = pairs
        .par_iter()
        .map(|&(i, j)| {
            // Ctrl-C: every pair left is skipped (empty), and the call fails below, so that
            // a scan of many pairs stops within one pair's pass over the rows. The deadline
            // is read beside it, once a pair: a clock read of tens of nanoseconds against a
            // pass over the rows (25,000 of them for a half of the selection's sample).
            if crate::runtime::cancel::requested() || late.load(Ordering::Relaxed) {
                return (Vec::new(), Vec::new());
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                late.store(true, Ordering::Relaxed);
                return (Vec::new(), Vec::new());
            }
            let (ci, cj) = (
                &coarse[i * n_rows..(i + 1) * n_rows],
                &coarse[j * n_rows..(j + 1) * n_rows],
            );
            let width = sizes[j];
            let mut sums = vec![0.0; sizes[i] * width];
            let mut counts = vec![0u32; sizes[i] * width];
            for ((&a, &b), &r) in ci.iter().zip(cj).zip(residual) {
                let cell = usize::from(a) * width + usize::from(b);
                sums[cell] += r;
                counts[cell] += 1;
            }
            (sums, counts.into_iter().map(f64::from).collect())
        })
        .collect();
    crate::runtime::cancel::check()?;
    if late.into_inner() {
        return Ok(None);
    }
    let (mut sums, mut counts) = (Vec::with_capacity(at), Vec::with_capacity(at));
    for (s, c) in blocks {
        sums.extend(s);
        counts.extend(c);
    }
    Ok(Some((sums, counts)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_by_hand() {
        // Three documents, features 0 (sizes 2) and 1 (size 3) and 2 (size 2):
        // f0 codes (0, 1, 1), f1 codes (2, 0, 2), f2 codes (1, 1, 0); residuals (1, 2, 4).
        // Pair (0, 1): cells ci * 3 + cj: doc 0 -> 2, doc 1 -> 3, doc 2 -> 5.
        // Pair (2, 0): cells ci * 2 + cj: doc 0 -> 2, doc 1 -> 3, doc 2 -> 1.
        let coarse = [0, 1, 1, 2, 0, 2, 1, 1, 0];
        let (s, c) = pair_histograms(
            &coarse,
            3,
            &[2, 3, 2],
            &[(0, 1), (2, 0)],
            &[1.0, 2.0, 4.0],
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(s, vec![0.0, 0.0, 1.0, 2.0, 0.0, 4.0, 0.0, 4.0, 1.0, 2.0]);
        assert_eq!(c, vec![0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0]);
        assert!(pair_histograms(&coarse, 3, &[2, 2, 2], &[(0, 1)], &[1.0; 3], None).is_err());
        assert!(pair_histograms(&coarse, 3, &[2, 3, 2], &[(1, 1)], &[1.0; 3], None).is_err());
    }

    #[test]
    fn every_block_equals_a_direct_count() {
        use rand::{Rng, SeedableRng};
        use rand_chacha::ChaCha8Rng;
        // 12 features of different sizes, every pair (i, j) and (j, i), on the threads of the
        // parallel pass; each block is checked against a direct count.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (n, d) = (500, 12);
        let sizes: Vec<usize> = (0..d).map(|f| 2 + f % 5).collect();
        let mut coarse = vec![0u8; d * n];
        for f in 0..d {
            for r in 0..n {
                coarse[f * n + r] = rng.random_range(0..sizes[f]) as u8;
            }
        }
        let residual: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let pairs: Vec<(usize, usize)> = (0..d)
            .flat_map(|i| (0..d).filter(move |&j| j != i).map(move |j| (i, j)))
            .collect();
        let (sums, counts) = pair_histograms(&coarse, n, &sizes, &pairs, &residual, None)
            .unwrap()
            .unwrap();
        let mut at = 0;
        for &(i, j) in &pairs {
            let mut s = vec![0.0; sizes[i] * sizes[j]];
            let mut c = vec![0.0; sizes[i] * sizes[j]];
            for r in 0..n {
                let cell =
                    usize::from(coarse[i * n + r]) * sizes[j] + usize::from(coarse[j * n + r]);
                s[cell] += residual[r];
                c[cell] += 1.0;
            }
            assert_eq!(&sums[at..at + s.len()], &s[..], "pair ({i}, {j})");
            assert_eq!(&counts[at..at + c.len()], &c[..], "pair ({i}, {j})");
            at += s.len();
        }
        assert_eq!(at, sums.len());
    }

    #[test]
    fn a_passed_deadline_returns_no_histograms_and_a_later_one_changes_nothing() {
        // Two features of sizes 2 and 2 over four documents, one pair. A deadline already
        // passed stops the scan before its first pair: no histograms, rather than the
        // histograms of a part of the pairs. A deadline an hour away is never reached, so the
        // histograms are those of the call without one.
        let coarse = [0, 1, 0, 1, 1, 1, 0, 0];
        let residual = [1.0, 2.0, 3.0, 4.0];
        let past = Instant::now();
        let cut = pair_histograms(&coarse, 4, &[2, 2], &[(0, 1)], &residual, Some(past)).unwrap();
        assert!(cut.is_none());
        let later = Instant::now() + std::time::Duration::from_secs(3600);
        let full = pair_histograms(&coarse, 4, &[2, 2], &[(0, 1)], &residual, Some(later));
        // Cells ci * 2 + cj: doc 0 (0, 1) -> 1, doc 1 (1, 1) -> 3, doc 2 (0, 0) -> 0,
        // doc 3 (1, 0) -> 2.
        let (sums, counts) = full.unwrap().unwrap();
        assert_eq!(sums, vec![3.0, 1.0, 4.0, 2.0]);
        assert_eq!(counts, vec![1.0; 4]);
    }
}
