use super::*;
use crate::data::{CsrView, DenseView};
use crate::oracle::from_name;
use crate::runtime::pool::with_threads;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A data set of `n_queries` queries of 1 to 300 documents (shuffled rows, so that queries
/// are not contiguous), with values whose sums are sensitive to the association order.
pub(crate) fn problem(seed: u64, n_queries: usize, d: usize) -> (Vec<f64>, Vec<f64>, Vec<i64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut codes = Vec::new();
    for q in 0..n_queries {
        let size = rng.random_range(1..300);
        codes.extend(std::iter::repeat_n(q as i64, size));
    }
    // Fisher-Yates shuffle of the rows' queries.
    for i in (1..codes.len()).rev() {
        codes.swap(i, rng.random_range(0..=i));
    }
    let n = codes.len();
    let x = (0..n * d)
        .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-3..4)))
        .collect();
    let labels = (0..n).map(|_| rng.random_range(0..3) as f64).collect();
    (x, labels, codes)
}

/// The cut sums computed the plain way: all scores first, then the oracle per query, then
/// X^T c by rows in order.
fn two_pass(
    x: &dyn RowMatrix,
    labels: &[f64],
    groups: &QueryGroups,
    w: &[f64],
    oracle: &dyn Oracle,
) -> (f64, Vec<f64>) {
    let d = x.n_cols();
    let scores: Vec<f64> = (0..x.n_rows()).map(|r| x.row_dot(r, w)).collect();
    let (mut b, mut g) = (0.0, vec![0.0; d]);
    for q in 0..groups.n_queries() {
        let rows = groups.rows(q);
        let s: Vec<f64> = rows.iter().map(|&r| scores[r]).collect();
        let rel: Vec<bool> = rows.iter().map(|&r| labels[r] > 0.0).collect();
        let p = rel.iter().filter(|&&v| v).count();
        if p == 0 || p == rel.len() {
            continue;
        }
        let mut c = vec![0.0; rows.len()];
        b += oracle.argmax(&s, &rel, &mut c);
        for (&r, &ci) in rows.iter().zip(&c) {
            x.row_axpy(r, ci, &mut g);
        }
    }
    (b, g)
}

#[test]
fn cut_sums_equal_the_two_pass_computation_and_ignore_the_thread_count() {
    let d = 7;
    let (data, labels, codes) = problem(3, 400, d);
    let n = labels.len();
    let groups = QueryGroups::from_codes(&codes, 400).unwrap();
    let x = DenseView::new(&data, n, d).unwrap();
    let w: Vec<f64> = (0..d).map(|j| (j as f64 - 3.0) * 0.37).collect();
    let names = ["map", "ndcg@10", "mrr@5"];
    let owned: Vec<_> = names.iter().map(|l| from_name(l).unwrap()).collect();
    let oracles: Vec<&dyn Oracle> = owned.iter().map(|o| o.as_ref()).collect();
    let problem = RankingProblem::new(&x, &labels, &groups, 0.0).unwrap();
    let one = with_threads(1, || problem.cut_sums(&w, &oracles)).unwrap();
    for threads in [2, 3, 8] {
        let other = with_threads(threads, || problem.cut_sums(&w, &oracles)).unwrap();
        assert_eq!(one, other, "{threads} threads");
    }
    for (oracle, (b, g)) in oracles.iter().zip(&one) {
        let (b2, g2) = two_pass(&x, &labels, &groups, &w, *oracle);
        assert!(
            (b - b2).abs() <= 1e-9 * b2.abs().max(1.0),
            "{}",
            oracle.name()
        );
        let scale = g2.iter().map(|v| v.abs()).fold(1.0, f64::max);
        for (u, v) in g.iter().zip(&g2) {
            assert!(
                (u - v).abs() <= 1e-9 * scale,
                "{}: {u} vs {v}",
                oracle.name()
            );
        }
    }
}

#[test]
fn losses_that_share_a_sort_get_the_cuts_they_get_alone() {
    // Features of few integer values and integer weights, so that many scores tie (and
    // -0.0 meets 0.0): the shared sort must order them exactly as each oracle alone does.
    let d = 5;
    let (mut data, labels, codes) = problem(11, 300, d);
    for v in data.iter_mut() {
        *v = (v.signum() * v.abs().min(2.0)).round();
    }
    let n = labels.len();
    let groups = QueryGroups::from_codes(&codes, 300).unwrap();
    let x = DenseView::new(&data, n, d).unwrap();
    let w = [1.0, -1.0, 0.0, 2.0, -0.0];
    let names = [
        "map",
        "ndcg@10",
        "mrr@5",
        "roc",
        "pairwise",
        "max(map,mrr@3)",
        "mrr",
    ];
    let owned: Vec<_> = names.iter().map(|l| from_name(l).unwrap()).collect();
    let oracles: Vec<&dyn Oracle> = owned.iter().map(|o| o.as_ref()).collect();
    let mut problem = RankingProblem::new(&x, &labels, &groups, 0.0).unwrap();
    problem.admit(&oracles);
    let together = problem.cut_sums(&w, &oracles);
    for (oracle, cut) in oracles.iter().zip(&together) {
        let alone = problem.cut_sums(&w, &[*oracle]);
        assert_eq!(&alone[0], cut, "{}", oracle.name());
    }
}

#[test]
fn sparse_and_dense_views_give_the_same_cut() {
    let d = 5;
    let (mut data, labels, codes) = problem(11, 60, d);
    // Zero out most values, so that the CSR matrix is really sparse.
    for (i, v) in data.iter_mut().enumerate() {
        if i % 3 != 0 {
            *v = 0.0;
        }
    }
    let n = labels.len();
    let (mut indptr, mut indices, mut values) = (vec![0i64], Vec::new(), Vec::new());
    for r in 0..n {
        for j in 0..d {
            if data[r * d + j] != 0.0 {
                indices.push(j as i64);
                values.push(data[r * d + j]);
            }
        }
        indptr.push(indices.len() as i64);
    }
    let groups = QueryGroups::from_codes(&codes, 60).unwrap();
    let dense = DenseView::new(&data, n, d).unwrap();
    let csr = CsrView::new(&indptr, &indices, &values, n, d).unwrap();
    let w = vec![0.5, -1.0, 0.25, 2.0, -0.125];
    let map = from_name("map").unwrap();
    let oracles = [map.as_ref()];
    let a = RankingProblem::new(&dense, &labels, &groups, 0.0)
        .unwrap()
        .cut_sums(&w, &oracles);
    let b = RankingProblem::new(&csr, &labels, &groups, 0.0)
        .unwrap()
        .cut_sums(&w, &oracles);
    assert_eq!(a[0].0, b[0].0);
    for (u, v) in a[0].1.iter().zip(&b[0].1) {
        assert!((u - v).abs() <= 1e-12 * u.abs().max(1.0));
    }
}

/// With cut blocks, each block's cut is the sum over its own queries (computed here one
/// query at a time), the blocks hold about equal numbers of usable queries in order, and
/// the sums do not depend on the thread count.
#[test]
fn blocks_split_the_cut_by_consecutive_queries() {
    let d = 4;
    let n_queries = 90;
    let (data, labels, codes) = problem(13, n_queries, d);
    let n = labels.len();
    let groups = QueryGroups::from_codes(&codes, n_queries).unwrap();
    let x = DenseView::new(&data, n, d).unwrap();
    let w = vec![0.3, -0.7, 1.1, 0.05];
    let owned: Vec<_> = ["map", "ndcg@5"]
        .iter()
        .map(|l| from_name(l).unwrap())
        .collect();
    let oracles: Vec<&dyn Oracle> = owned.iter().map(|o| o.as_ref()).collect();
    let mut problem = RankingProblem::new(&x, &labels, &groups, 0.0).unwrap();
    let usable: Vec<usize> = (0..n_queries).filter(|&q| problem.usable[q]).collect();
    let per_query: Vec<Vec<(f64, Vec<f64>)>> = (0..n_queries)
        .map(|q| {
            let mut alone = RankingProblem::new(&x, &labels, &groups, 0.0).unwrap();
            for (r, u) in alone.usable.iter_mut().enumerate() {
                *u = *u && r == q;
            }
            alone.cut_sums(&w, &oracles)
        })
        .collect();
    for k in [1, 4, 7, usable.len(), usable.len() + 10] {
        problem.split_into_blocks(k);
        let k_eff = k.min(usable.len());
        assert_eq!(problem.n_blocks(), k_eff);
        let one = with_threads(1, || problem.cut_sums(&w, &oracles)).unwrap();
        let two = with_threads(2, || problem.cut_sums(&w, &oracles)).unwrap();
        assert_eq!(one, two, "{k} blocks");
        assert_eq!(one.len(), k_eff * oracles.len());
        // Block i holds the usable queries of ranks i*n/k .. (i+1)*n/k (by hand).
        for block in 0..k_eff {
            let lo = (block * usable.len()).div_ceil(k_eff);
            let hi = ((block + 1) * usable.len()).div_ceil(k_eff);
            for s in 0..oracles.len() {
                let (b, g) = &one[block * oracles.len() + s];
                let mut want_b = 0.0;
                let mut want_g = vec![0.0; d];
                for &q in &usable[lo..hi] {
                    want_b += per_query[q][s].0;
                    for (o, v) in want_g.iter_mut().zip(&per_query[q][s].1) {
                        *o += v;
                    }
                }
                assert!((b - want_b).abs() <= 1e-9 * want_b.abs().max(1.0));
                let scale = want_g.iter().map(|v| v.abs()).fold(1.0, f64::max);
                for (u, v) in g.iter().zip(&want_g) {
                    assert!((u - v).abs() <= 1e-9 * scale, "{k} blocks: {u} vs {v}");
                }
            }
        }
    }
}

#[test]
fn bad_weights_are_refused() {
    let (data, labels, codes) = problem(2, 5, 3);
    let groups = QueryGroups::from_codes(&codes, 5).unwrap();
    let x = DenseView::new(&data, labels.len(), 3).unwrap();
    let mut p = RankingProblem::new(&x, &labels, &groups, 0.0).unwrap();
    assert!(p.set_weights(&[1.0; 4]).is_err());
    assert!(p.set_weights(&[1.0, 1.0, -1.0, 1.0, 1.0]).is_err());
    assert!(p.set_weights(&[1.0, f64::NAN, 1.0, 1.0, 1.0]).is_err());
    assert!(p.set_weights(&[1.0, 0.0, 1.0, 1.0, 3.5]).is_ok());
}

#[test]
fn query_blocks_cover_every_query_once_in_order() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for case in 0..200 {
        let n_queries = rng.random_range(0..300);
        let mut bounds = vec![0usize];
        for _ in 0..n_queries {
            let size = if case % 4 == 0 {
                rng.random_range(0..20_000)
            } else {
                rng.random_range(0..40)
            };
            bounds.push(bounds.last().unwrap() + size);
        }
        let width = [1, 136, 1 << 20, 1 << 23][case % 4];
        let blocks = query_blocks(&bounds, width);
        let mut next = 0;
        for b in &blocks {
            assert_eq!(b.start, next);
            assert!(b.end > b.start);
            next = b.end;
        }
        assert_eq!(next, n_queries);
        assert!(blocks.len() <= MAX_BLOCKS);
        assert!(blocks.len() * width <= PARTIAL_BUDGET.max(width));
    }
}
