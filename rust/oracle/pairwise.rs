//! The graded pairwise loss of SVM^rank (Joachims 2002; 1-slack form and O(n log n) argmax of
//! Joachims, "Training linear SVMs in linear time", KDD 2006, section on ordinal regression).
//!
//! Pairs. For one query with labels l (any real numbers, compared as they are: the relevance
//! threshold plays no part), P_q = {(i, j) : l_i > l_j} holds every pair of documents with
//! different labels, so a label-2 document must beat label-1 and label-0 ones and a label-1
//! document label-0 ones; M = |P_q|. `loss="roc"` counts only the pairs across the relevance
//! threshold; on binary labels the two coincide.
//!
//! Structure. As in Joachims' 1-slack formulation, an output is any subset of swapped pairs,
//! c in {0, 1}^M, not only a ranking: with binary labels every argmax subset is realized by a
//! ranking (roc.rs), but with three levels it need not be (scores 0.4, 0, -0.4 for labels
//! 2, 1, 0 swap the pairs (2,1) and (1,0) but not (2,0)), and the subsets are what makes the
//! 1-slack problem equal to the pairwise SVM that SVM^rank solves. Then
//!
//!   "pairwise":       Delta(c) = 1/M sum c_ij,  w.deltaPsi(c) = 2/M sum c_ij (s_i - s_j),
//!                     H = 1/M sum_{P_q} max(0, 1 - 2 (s_i - s_j)),
//!   "pairwise:count": Delta(c) = sum c_ij,      w.deltaPsi(c) = sum c_ij (s_i - s_j),
//!                     H = sum_{P_q} max(0, 1 - (s_i - s_j)).
//!
//! "pairwise" is Psi_po's convention (Psi = 1/M sum y_ij (x_i - x_j) with y_ij = +-1 and the
//! fraction of swapped pairs as loss), so that it equals "roc" on binary labels and its C means
//! what C means for the other losses. "pairwise:count" is Psi = 1/2 sum y_ij (x_i - x_j) with
//! the count of swapped pairs, the scaling of SVM^rank's default loss (-l 1), whose C it shares
//! (see README, "Graded pairs").
//!
//! Argmax. H is a sum over pairs, so c_ij = 1 exactly when the pair's term is positive,
//! s_i - s_j < m with m = 1/2 ("pairwise") or 1 ("count"). Document i's coefficient in
//! deltaPsi = sum_i coef_i x_i is scale * (a_i - b_i), with a_i the swapped pairs in which i is
//! the better document and b_i those in which it is the worse one. With the documents sorted by
//! descending score, the j swapped below a given i form a prefix of that order that grows as
//! s_i falls, and the i swapped above a given j a suffix that shrinks as s_j falls; two pointers
//! walk the order once each and counts per label level (a Fenwick tree over the levels) give
//! a_i and b_j, O(n log n) in all. The swap test is the one expression `s_i - s_j < m` for both
//! counts, so that they agree under rounding. Documents of one level with equal scores get
//! equal counts, so the cut does not depend on the order in which they are listed
//! (`average_ties` is applied all the same, as in every oracle).

use crate::oracle::interface::Oracle;
use crate::oracle::sorting::{average_ties, sort_descending};

#[derive(Debug, Clone, Copy, Default)]
pub struct PairwiseOracle {
    /// Count swapped pairs (SVM^rank's scaling) instead of taking their fraction.
    pub count: bool,
}

/// Counts per label level with prefix sums in O(log L) (a Fenwick tree).
struct LevelCounts {
    tree: Vec<usize>,
}

impl LevelCounts {
    fn new(levels: usize) -> Self {
        LevelCounts {
            tree: vec![0; levels + 1],
        }
    }

    fn add(&mut self, level: usize) {
        let mut i = level + 1;
        while i < self.tree.len() {
            self.tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }

    /// The documents counted so far with a level below `level`.
    fn below(&self, level: usize) -> usize {
        let mut i = level;
        let mut total = 0;
        while i > 0 {
            total += self.tree[i];
            i -= i & i.wrapping_neg();
        }
        total
    }
}

/// The number of distinct labels and each document's level among them (0 = lowest).
fn label_levels(labels: &[f64]) -> (usize, Vec<usize>) {
    let mut distinct: Vec<f64> = labels.to_vec();
    distinct.sort_unstable_by(f64::total_cmp);
    distinct.dedup();
    let levels = labels
        .iter()
        .map(|l| distinct.partition_point(|d| d < l))
        .collect();
    (distinct.len(), levels)
}

/// Whether a query has two documents with different labels.
pub(crate) fn has_two_labels(labels: &[f64]) -> bool {
    labels
        .split_first()
        .is_some_and(|(first, rest)| rest.iter().any(|l| l != first))
}

impl PairwiseOracle {
    /// The swap threshold m: a pair's term u - k (s_i - s_j) is positive below u / k.
    fn margin(&self) -> f64 {
        if self.count {
            1.0
        } else {
            0.5
        }
    }

    /// Delta(c) of the most violated pair subset; fills `coef`.
    fn argmax_graded(&self, scores: &[f64], labels: &[f64], coef: &mut [f64]) -> f64 {
        let (n_levels, level) = label_levels(labels);
        self.argmax_levels(scores, n_levels, &level, coef)
    }

    /// The argmax with the labels given as levels 0..n_levels (0 = lowest).
    fn argmax_levels(
        &self,
        scores: &[f64],
        n_levels: usize,
        level: &[usize],
        coef: &mut [f64],
    ) -> f64 {
        let n = scores.len();
        let mut per_level = vec![0usize; n_levels];
        for &l in level {
            per_level[l] += 1;
        }
        let same: usize = per_level.iter().map(|&k| k * k).sum();
        let m_pairs = (n * n - same) / 2;
        let m = self.margin();
        let scale = if self.count {
            1.0
        } else {
            2.0 / m_pairs as f64
        };
        let mut order: Vec<usize> = (0..n).collect();
        sort_descending(&mut order, scores);

        // a_i: the j of lower level with s_i - s_j < m form a prefix of `order` that grows as
        // s_i falls.
        let mut seen = LevelCounts::new(n_levels);
        let mut next = 0;
        let mut swapped = 0usize;
        for &i in &order {
            while next < n && scores[i] - scores[order[next]] < m {
                seen.add(level[order[next]]);
                next += 1;
            }
            let a = seen.below(level[i]);
            swapped += a;
            coef[i] = a as f64;
        }
        // b_j: the i of higher level with s_i - s_j < m form a suffix of `order` that shrinks
        // as s_j falls; `kept` counts the prefix before it.
        let mut kept = LevelCounts::new(n_levels);
        let mut higher_total = vec![0usize; n_levels];
        let mut acc = 0;
        for l in (0..n_levels).rev() {
            higher_total[l] = acc;
            acc += per_level[l];
        }
        let mut first = 0;
        let mut kept_count = 0;
        for &j in &order {
            while first < n && scores[order[first]] - scores[j] >= m {
                kept.add(level[order[first]]);
                kept_count += 1;
                first += 1;
            }
            let kept_higher = kept_count - kept.below(level[j] + 1);
            let b = higher_total[level[j]] - kept_higher;
            coef[j] = scale * (coef[j] - b as f64);
        }
        // Tied documents of one level already get equal counts; averaging them as every oracle
        // does (`average_ties`, in the same order as roc.rs) keeps the rule explicit and makes
        // binary labels give roc.rs's cut to the bit. It needs `order` split by level: a
        // counting sort keeps the score order within each level, and level l starts after the
        // documents of the higher levels, at higher_total[l].
        let mut next_slot = higher_total.clone();
        let mut by_level = vec![0usize; n];
        for &i in &order {
            by_level[next_slot[level[i]]] = i;
            next_slot[level[i]] += 1;
        }
        for l in (0..n_levels).rev() {
            let first = higher_total[l];
            average_ties(&by_level[first..first + per_level[l]], scores, coef);
        }
        // The same operations as roc.rs for Delta, too.
        if self.count {
            swapped as f64
        } else {
            swapped as f64 / m_pairs as f64
        }
    }
}

impl Oracle for PairwiseOracle {
    fn name(&self) -> String {
        if self.count {
            "pairwise:count".to_string()
        } else {
            "pairwise".to_string()
        }
    }

    /// Binary relevance is the special case of two levels (relevant = 1), with no need to
    /// sort the labels.
    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
        let level: Vec<usize> = relevant.iter().map(|&r| usize::from(r)).collect();
        self.argmax_levels(scores, 2, &level, coef)
    }

    fn argmax_labels(
        &self,
        scores: &[f64],
        labels: &[f64],
        _relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        self.argmax_graded(scores, labels, coef)
    }

    fn usable(&self, labels: &[f64], _relevant: &[bool]) -> bool {
        has_two_labels(labels)
    }

    fn graded(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::interface::{dot, Oracle};
    use crate::oracle::roc::RocOracle;
    use crate::oracle::testing::{brute_force_pair_subsets, pairwise_hinge_by_pairs};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A query of n documents with labels in 0..levels (at least two distinct) and scores that
    /// tie about half of the time.
    fn random_graded<R: Rng>(rng: &mut R, n: usize, levels: u32) -> (Vec<f64>, Vec<f64>) {
        loop {
            let tied = rng.random_bool(0.5);
            let scores: Vec<f64> = (0..n)
                .map(|_| {
                    if tied {
                        rng.random_range(0..4) as f64 * 0.25
                    } else {
                        rng.random_range(-1.5..1.5)
                    }
                })
                .collect();
            let labels: Vec<f64> = (0..n).map(|_| rng.random_range(0..levels) as f64).collect();
            if has_two_labels(&labels) {
                return (scores, labels);
            }
        }
    }

    #[test]
    fn matches_brute_force_over_pair_subsets() {
        let mut rng = ChaCha8Rng::seed_from_u64(2006);
        for trial in 0..600 {
            // Up to 15 pairs (2^15 subsets) for every tenth query, 10 pairs otherwise.
            let n = if trial % 10 == 0 {
                6
            } else {
                rng.random_range(2..=5)
            };
            let levels = [2, 3, 4, 6][trial % 4];
            let (scores, labels) = random_graded(&mut rng, n, levels);
            for count in [false, true] {
                let oracle = PairwiseOracle { count };
                let mut coef = vec![0.0; n];
                let delta = oracle.argmax_graded(&scores, &labels, &mut coef);
                let h = delta - dot(&coef, &scores);
                let brute = brute_force_pair_subsets(&scores, &labels, count);
                assert!(
                    (h - brute).abs() < 1e-12,
                    "count {count} scores {scores:?} labels {labels:?}: oracle {h}, brute {brute}"
                );
            }
        }
    }

    #[test]
    fn coefficients_are_the_pair_sums_on_larger_queries() {
        // On queries too long to enumerate, Delta and every coefficient against the O(n^2)
        // sum over pairs, with many levels (up to one per document) and many ties.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for trial in 0..200 {
            let n = rng.random_range(2..=60);
            let levels = [2, 3, 5, 60][trial % 4];
            let (scores, labels) = random_graded(&mut rng, n, levels);
            for count in [false, true] {
                let mut coef = vec![0.0; n];
                let delta = PairwiseOracle { count }.argmax_graded(&scores, &labels, &mut coef);
                let (d2, c2) = pairwise_hinge_by_pairs(&scores, &labels, count);
                assert!((delta - d2).abs() < 1e-12, "{delta} vs {d2}");
                for (u, v) in coef.iter().zip(&c2) {
                    assert!((u - v).abs() < 1e-12, "{u} vs {v}");
                }
            }
        }
    }

    #[test]
    fn equals_roc_on_binary_labels() {
        let mut rng = ChaCha8Rng::seed_from_u64(2005);
        for _ in 0..300 {
            let n = rng.random_range(2..=30);
            let (scores, labels) = random_graded(&mut rng, n, 2);
            let relevant: Vec<bool> = labels.iter().map(|&l| l > 0.0).collect();
            let mut c1 = vec![0.0; n];
            let mut c2 = vec![0.0; n];
            let d1 = PairwiseOracle::default().argmax(&scores, &relevant, &mut c1);
            let d2 = RocOracle.argmax(&scores, &relevant, &mut c2);
            // Bit for bit, so that "pairwise" trains the same model as "roc" on binary labels.
            assert_eq!(d1, d2);
            assert_eq!(c1, c2);
        }
    }

    #[test]
    fn three_levels_by_hand() {
        // Labels 2, 1, 0 with scores 0.4, 0, -0.4. Differences s_i - s_j: (2,1) 0.4 and (1,0)
        // 0.4 are below 1/2 and swapped, (2,0) 0.8 is not. M = 3, Delta = 2/3,
        // H = (1 - 0.8 + 1 - 0.8) / 3 = 0.4/3. Coefficients 2/3 (a - b): label 2: a = 1, b = 0;
        // label 1: a = 1, b = 1; label 0: a = 0, b = 1. No ranking swaps exactly these pairs.
        let scores = [0.4, 0.0, -0.4];
        let labels = [2.0, 1.0, 0.0];
        let mut coef = [0.0; 3];
        let delta = PairwiseOracle::default().argmax_graded(&scores, &labels, &mut coef);
        assert!((delta - 2.0 / 3.0).abs() < 1e-15);
        let expected = [2.0 / 3.0, 0.0, -2.0 / 3.0];
        for (u, v) in coef.iter().zip(expected) {
            assert!((u - v).abs() < 1e-15);
        }
        let h = delta - dot(&coef, &scores);
        assert!((h - 0.4 / 3.0).abs() < 1e-12, "{h}");
        // Counted (margin 1): every pair is swapped, H = 0.6 + 0.6 + 0.2 = 1.4.
        let delta = PairwiseOracle { count: true }.argmax_graded(&scores, &labels, &mut coef);
        assert_eq!(delta, 3.0);
        assert!((delta - dot(&coef, &scores) - 1.4).abs() < 1e-12);
    }

    #[test]
    fn usable_queries_need_two_labels() {
        let o = PairwiseOracle::default();
        assert!(o.usable(&[1.0, 2.0], &[true, true]));
        assert!(!o.usable(&[2.0, 2.0], &[true, true]));
        assert!(o.usable(&[0.0, 1.0], &[false, true]));
    }
}
