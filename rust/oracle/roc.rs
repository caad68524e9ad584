//! The ROC-area oracle (Joachims 2005), with Psi_po scaled by 1/(P N).
//!
//! Delta_roc(y*, y) = 1/(P N) sum_{g rel, b non-rel} (1 - y_gb) / 2 is the fraction of swapped
//! pairs, and w.Psi_po(y) - w.Psi_po(y*) = 1/(P N) sum_{g,b} (y_gb - 1)(s_g - s_b). Both are sums
//! over pairs, so H = 1/(P N) sum_{g,b} [(1 - y_gb)/2 + (y_gb - 1)(s_g - s_b)] is maximized pair
//! by pair: swap (y_gb = -1, contributing 1 - 2 (s_g - s_b)) exactly when s_g - s_b < 1/2
//! (Chakrabarti et al. eq. 8). These choices form a ranking: sort relevant documents by
//! s - 1/4 and non-relevant ones by s + 1/4, relevant first on ties. Counting the swapped
//! pairs of every document is a merge of the two sorted lists, O(n log n) in all.

use crate::oracle::interface::Oracle;
use crate::oracle::interleave::Sorted;

#[derive(Debug, Clone, Copy, Default)]
pub struct RocOracle;

/// Whether the pair (relevant with score sg, non-relevant with score sb) is swapped in the
/// argmax. One expression for both directions keeps the two counts consistent under rounding.
#[inline]
fn swapped(sg: f64, sb: f64) -> bool {
    sg - sb < 0.5
}

impl Oracle for RocOracle {
    fn name(&self) -> String {
        "roc".to_string()
    }

    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
        self.argmax_sorted(&Sorted::new(scores, relevant), scores, &[], relevant, coef)
    }

    fn sorts(&self) -> bool {
        true
    }

    fn argmax_sorted(
        &self,
        sorted: &Sorted,
        scores: &[f64],
        _labels: &[f64],
        _relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        let (p, n) = (sorted.p(), sorted.n());
        let scale = 2.0 / (p as f64 * n as f64);
        // For relevant g in descending score order the swapped non-relevant documents are a
        // growing prefix of the sorted non-relevant list.
        let mut total = 0usize;
        let mut b = 0;
        for (&doc, &sg) in sorted.pos.iter().zip(&sorted.sp) {
            while b < n && swapped(sg, sorted.sn[b]) {
                b += 1;
            }
            total += b;
            coef[doc] = scale * b as f64;
        }
        fill_negatives(sorted, scale, coef);
        // Tied documents of one class already get equal counts; this keeps the rule explicit.
        sorted.average_ties(scores, coef);
        total as f64 / (p * n) as f64
    }
}

/// c_b = -2 #{g : swapped(s_g, s_b)} / (P N). For non-relevant b in descending score order the
/// swapped relevant documents are a shrinking suffix of the relevant list (a higher s_b is
/// swapped with more of them), so one pointer walks the relevant list once.
fn fill_negatives(sorted: &Sorted, scale: f64, coef: &mut [f64]) {
    let p = sorted.p();
    // first_swapped = the smallest g with swapped(s+_g, s_b); relevant g' >= it are swapped too.
    let mut first_swapped = 0;
    for (&doc, &sb) in sorted.neg.iter().zip(&sorted.sn) {
        while first_swapped < p && !swapped(sorted.sp[first_swapped], sb) {
            first_swapped += 1;
        }
        coef[doc] = -scale * (p - first_swapped) as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::hinge;
    use crate::oracle::testing::{brute_force_hinge, random_query_with, roc_loss};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn matches_brute_force_on_random_queries() {
        let mut rng = ChaCha8Rng::seed_from_u64(2005);
        for trial in 0..1500 {
            let n = rng.random_range(2..=7);
            let k = match trial % 4 {
                0 => Some(1),
                1 => Some(n - 1),
                _ => None,
            };
            let (scores, relevant) = random_query_with(&mut rng, n, k);
            let mut coef = vec![0.0; n];
            let h = hinge(&RocOracle, &scores, &relevant, &mut coef);
            let brute = brute_force_hinge(&scores, &relevant, roc_loss);
            assert!(
                (h - brute).abs() < 1e-12,
                "scores {scores:?} relevant {relevant:?}: oracle {h}, brute force {brute}"
            );
            // Both sides count the same swapped pairs.
            let p = relevant.iter().filter(|&&r| r).count() as f64;
            let pn2 = p * (n as f64 - p) / 2.0;
            let from_rel: f64 = (0..n).filter(|&i| relevant[i]).map(|i| coef[i] * pn2).sum();
            let from_neg: f64 = (0..n)
                .filter(|&i| !relevant[i])
                .map(|i| -coef[i] * pn2)
                .sum();
            assert!((from_rel - from_neg).abs() < 1e-9);
        }
    }

    #[test]
    fn pairs_closer_than_one_half_are_swapped() {
        // Relevant scores 1.0 and 0.2, non-relevant 0.6 and 0.0. Differences s_g - s_b:
        // (1.0, 0.6) = 0.4 < 1/2: swapped, contributes 1 - 0.8 = 0.2;
        // (1.0, 0.0) = 1.0: kept; (0.2, 0.6) = -0.4: swapped, 1 + 0.8 = 1.8;
        // (0.2, 0.0) = 0.2: swapped, 1 - 0.4 = 0.6. H = (0.2 + 1.8 + 0.6) / 4 = 0.65,
        // Delta = 3/4.
        let scores = [1.0, 0.6, 0.2, 0.0];
        let relevant = [true, false, true, false];
        let mut coef = [0.0; 4];
        let delta = RocOracle.argmax(&scores, &relevant, &mut coef);
        assert!((delta - 0.75).abs() < 1e-15);
        let h = hinge(&RocOracle, &scores, &relevant, &mut coef);
        assert!((h - 0.65).abs() < 1e-12, "{h}");
    }
}
