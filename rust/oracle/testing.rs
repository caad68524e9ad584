//! Brute-force references for the oracle tests: enumerate every ranking of a small query.
//! Written from the definitions (DESIGN.md section 1 and the papers), sharing no code with the
//! oracles. A ranking is a permutation listing documents from the top (0-based ranks).
//!
//! The feature `fuzzing` builds this module outside of tests for `fuzzing.rs`, which needs only
//! the MAP reference; the other references are then unused, which is expected.
#![cfg_attr(not(test), allow(dead_code))]

use rand::Rng;

/// A random query of n documents whose scores contain ties about half of the time.
pub fn random_query<R: Rng>(rng: &mut R, n: usize) -> (Vec<f64>, Vec<bool>) {
    let tied = rng.random_bool(0.5);
    let scores = (0..n)
        .map(|_| {
            if tied {
                rng.random_range(0..3) as f64 * 0.25
            } else {
                rng.random_range(-1.0..1.0)
            }
        })
        .collect();
    let frac = rng.random_range(0.1..0.9);
    let relevant = (0..n).map(|_| rng.random_bool(frac)).collect();
    (scores, relevant)
}

/// A random query of n documents with exactly `n_relevant` relevant ones (or a random count
/// when None), ties about half of the time; the cases the issue names (one relevant, all but
/// one relevant) are drawn on purpose by the callers.
pub fn random_query_with<R: Rng>(
    rng: &mut R,
    n: usize,
    n_relevant: Option<usize>,
) -> (Vec<f64>, Vec<bool>) {
    let (scores, _) = random_query(rng, n);
    let k = n_relevant.unwrap_or_else(|| rng.random_range(1..n));
    let mut relevant = vec![false; n];
    let mut placed = 0;
    while placed < k {
        let i = rng.random_range(0..n);
        if !relevant[i] {
            relevant[i] = true;
            placed += 1;
        }
    }
    (scores, relevant)
}

/// Whether a query has both a relevant and a non-relevant document.
pub fn usable(relevant: &[bool]) -> bool {
    relevant.iter().any(|&r| r) && !relevant.iter().all(|&r| r)
}

/// 1 - AP of a ranking given as the relevance of its documents from the top.
pub fn map_loss(ranked: &[bool]) -> f64 {
    let total = ranked.iter().filter(|&&r| r).count() as f64;
    let mut hits = 0.0;
    let mut ap = 0.0;
    for (i, &r) in ranked.iter().enumerate() {
        if r {
            hits += 1.0;
            ap += hits / (i + 1) as f64;
        }
    }
    1.0 - ap / total
}

/// The fraction of (relevant, non-relevant) pairs ranked the wrong way round.
pub fn roc_loss(ranked: &[bool]) -> f64 {
    let p = ranked.iter().filter(|&&r| r).count();
    let n = ranked.len() - p;
    let mut negatives_above = 0;
    let mut swapped = 0;
    for &r in ranked {
        if r {
            swapped += negatives_above;
        } else {
            negatives_above += 1;
        }
    }
    swapped as f64 / (p * n) as f64
}

/// 1 - NDCG@k with binary gains and the discount `d(rank)` (0-based rank), where k = None
/// means no cutoff.
pub fn ndcg_loss(ranked: &[bool], k: Option<usize>, d: impl Fn(usize) -> f64) -> f64 {
    let k = k.unwrap_or(usize::MAX);
    let p = ranked.iter().filter(|&&r| r).count();
    let dcg: f64 = (0..ranked.len().min(k))
        .filter(|&r| ranked[r])
        .map(&d)
        .sum();
    let ideal: f64 = (0..p.min(k)).map(&d).sum();
    1.0 - dcg / ideal
}

/// 1/log2(2 + r), the default discount at 0-based rank r.
pub fn log2_discount(r: usize) -> f64 {
    1.0 / ((r + 2) as f64).log2()
}

/// Chakrabarti et al.'s D(i): 1 for 0-based ranks 0 and 1, 1/log2(1 + i) after.
pub fn paper_discount(r: usize) -> f64 {
    if r <= 1 {
        1.0
    } else {
        1.0 / ((r + 1) as f64).log2()
    }
}

/// 1 - RR@k: 1 - 1/(1 + r) for the first relevant document at 0-based rank r < k, else 1.
pub fn rr_loss(ranked: &[bool], k: Option<usize>) -> f64 {
    let k = k.unwrap_or(usize::MAX);
    match ranked.iter().position(|&r| r) {
        Some(r) if r < k => 1.0 - 1.0 / (1 + r) as f64,
        _ => 1.0,
    }
}

/// Calls `f` with every permutation of 0..n (Heap's algorithm).
pub fn for_each_permutation(n: usize, mut f: impl FnMut(&[usize])) {
    let mut perm: Vec<usize> = (0..n).collect();
    let mut c = vec![0usize; n];
    f(&perm);
    let mut i = 0;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                perm.swap(0, i);
            } else {
                perm.swap(c[i], i);
            }
            f(&perm);
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
}

/// The maximum of `value(perm)` over every ranking of n documents.
pub fn brute_force_max(n: usize, mut value: impl FnMut(&[usize]) -> f64) -> f64 {
    let mut best = f64::NEG_INFINITY;
    for_each_permutation(n, |perm| {
        let v = value(perm);
        if v > best {
            best = v;
        }
    });
    best
}

/// w.Psi_po(y) - w.Psi_po(y*) for the ranking `perm`, with
/// Psi_po(y) = 1/(P N) sum_{i rel, j non-rel} y_ij (x_i - x_j).
pub fn psi_po_gap(scores: &[f64], relevant: &[bool], perm: &[usize]) -> f64 {
    let n = scores.len();
    let p = relevant.iter().filter(|&&r| r).count();
    let mut rank = vec![0usize; n];
    for (r, &doc) in perm.iter().enumerate() {
        rank[doc] = r;
    }
    let mut gap = 0.0;
    for i in (0..n).filter(|&i| relevant[i]) {
        for j in (0..n).filter(|&j| !relevant[j]) {
            let y_ij = if rank[i] < rank[j] { 1.0 } else { -1.0 };
            gap += (y_ij - 1.0) * (scores[i] - scores[j]);
        }
    }
    gap / (p * (n - p)) as f64
}

/// w.phi_mrr(y) - w.phi_mrr(y*) for the ranking `perm`: phi_mrr(y) sums x_b - x_g0 over the
/// non-relevant b ranked above the first relevant document g0, and phi_mrr(y*) = 0.
pub fn phi_mrr_gap(scores: &[f64], relevant: &[bool], perm: &[usize]) -> f64 {
    let first = perm
        .iter()
        .position(|&d| relevant[d])
        .expect("a relevant document");
    let g0 = perm[first];
    perm[..first].iter().map(|&b| scores[b] - scores[g0]).sum()
}

/// max over all rankings y of loss(y) + w.Psi_po(y) - w.Psi_po(y*).
pub fn brute_force_hinge(scores: &[f64], relevant: &[bool], loss: impl Fn(&[bool]) -> f64) -> f64 {
    brute_force_max(scores.len(), |perm| {
        let ranked: Vec<bool> = perm.iter().map(|&d| relevant[d]).collect();
        loss(&ranked) + psi_po_gap(scores, relevant, perm)
    })
}

/// The pairs (i, j) with labels[i] > labels[j], the pairs of the graded pairwise loss.
pub fn graded_pairs(labels: &[f64]) -> Vec<(usize, usize)> {
    let n = labels.len();
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in 0..n {
            if labels[i] > labels[j] {
                pairs.push((i, j));
            }
        }
    }
    pairs
}

/// The graded pairwise hinge by enumerating every subset c of swapped pairs (Joachims 2006's
/// 1-slack constraints): max_c sum_{c_ij = 1} [u - k (s_i - s_j)], with u = 1/M, k = 2/M
/// (fraction of swapped pairs, Psi_po's scale) or u = 1, k = 1 (count, SVM^rank's scale).
pub fn brute_force_pair_subsets(scores: &[f64], labels: &[f64], count: bool) -> f64 {
    let pairs = graded_pairs(labels);
    let m = pairs.len() as f64;
    let (u, k) = if count {
        (1.0, 1.0)
    } else {
        (1.0 / m, 2.0 / m)
    };
    let mut best = f64::NEG_INFINITY;
    for subset in 0u64..(1u64 << pairs.len()) {
        let mut value = 0.0;
        for (bit, &(i, j)) in pairs.iter().enumerate() {
            if subset >> bit & 1 == 1 {
                value += u - k * (scores[i] - scores[j]);
            }
        }
        best = best.max(value);
    }
    best
}

/// Delta and the deltaPsi coefficients of the most violated pair subset, pair by pair in
/// O(n^2): a pair is swapped when its term u - k (s_i - s_j) is positive, i.e. when
/// s_i - s_j < u / k; it adds u to Delta, k to coef_i and -k to coef_j.
pub fn pairwise_hinge_by_pairs(scores: &[f64], labels: &[f64], count: bool) -> (f64, Vec<f64>) {
    let pairs = graded_pairs(labels);
    let m = pairs.len() as f64;
    let (u, k) = if count {
        (1.0, 1.0)
    } else {
        (1.0 / m, 2.0 / m)
    };
    let threshold = if count { 1.0 } else { 0.5 };
    let mut delta = 0.0;
    let mut coef = vec![0.0; scores.len()];
    let mut swapped = 0usize;
    for &(i, j) in &pairs {
        if scores[i] - scores[j] < threshold {
            swapped += 1;
            coef[i] += k;
            coef[j] -= k;
        }
    }
    delta += swapped as f64 * u;
    (delta, coef)
}

/// 1 - NDCG@k with the gain 2^grade - 1 and the discount 1/log2(2 + r) (0-based rank r), for a
/// ranking given as its documents' grades from the top; the ideal DCG sorts the same grades.
/// k = None means no cutoff.
pub fn graded_ndcg_loss(ranked: &[f64], k: Option<usize>) -> f64 {
    let k = k.unwrap_or(usize::MAX).min(ranked.len());
    let dcg_of = |grades: &[f64]| -> f64 {
        grades[..k]
            .iter()
            .enumerate()
            .map(|(r, &g)| (g.exp2() - 1.0) * log2_discount(r))
            .sum()
    };
    let mut ideal = ranked.to_vec();
    ideal.sort_by(|a, b| b.total_cmp(a));
    1.0 - dcg_of(ranked) / dcg_of(&ideal)
}

/// w.Psi(y) - w.Psi(y*) for the graded partial order: Psi(y) = 1/Z sum over pairs with
/// grades[i] > grades[j] of y_ij (x_i - x_j), Z the number of such pairs.
pub fn graded_psi_gap(scores: &[f64], grades: &[f64], perm: &[usize]) -> f64 {
    let n = scores.len();
    let mut rank = vec![0usize; n];
    for (r, &doc) in perm.iter().enumerate() {
        rank[doc] = r;
    }
    let pairs = graded_pairs(grades);
    let mut gap = 0.0;
    for &(i, j) in &pairs {
        let y_ij = if rank[i] < rank[j] { 1.0 } else { -1.0 };
        gap += (y_ij - 1.0) * (scores[i] - scores[j]);
    }
    gap / pairs.len() as f64
}

/// max over all rankings of graded_ndcg_loss + graded_psi_gap.
pub fn brute_force_graded_ndcg_hinge(scores: &[f64], grades: &[f64], k: Option<usize>) -> f64 {
    brute_force_max(scores.len(), |perm| {
        let ranked: Vec<f64> = perm.iter().map(|&d| grades[d]).collect();
        graded_ndcg_loss(&ranked, k) + graded_psi_gap(scores, grades, perm)
    })
}
