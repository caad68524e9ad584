//! The MRR oracle with Chakrabarti et al.'s feature map phi_mrr (2008, sections 3.1.2 and 3.6).
//!
//! phi_mrr(x, y) = sum_{b non-relevant above g0(y)} (x_b - x_g0(y)), where g0(y) is the first
//! relevant document of y; phi_mrr(x, y*) = 0 and the map is not scaled (one relevant document
//! takes part, and the sum soft-counts the non-relevant documents above it). With r the 0-based
//! rank of g0, Delta = 1 - 1/(1 + r) when r < k and 1 otherwise (k = infinity without cutoff).
//!
//! H(y) = Delta(r) + sum_{b above g0} (s_b - s_g0). For a fixed r, H is largest when the r
//! non-relevant documents above g0 are those with the highest scores and g0 is the relevant
//! document with the lowest score (what follows g0 does not matter), so
//!
//!   H(r) = Delta(r) + S(r) - r s_min,   S(r) = sum of the r highest non-relevant scores.
//!
//! The oracle evaluates r = 0 .. min(k, N+1) - 1 and, for r >= k where Delta = 1, the best r of
//! the concave S(r) - r s_min, which is max(k, #{b : s_b > s_min}) (when at most N). The
//! coefficients of deltaPsi = -phi_mrr(ybar) are r for g0 and -1 for each b above it.

use crate::oracle::interface::Oracle;
use crate::oracle::interleave::Sorted;
use crate::oracle::sorting::{average_ties, sort_descending};

#[derive(Debug, Clone, Copy, Default)]
pub struct MrrOracle {
    /// Ranks from k on earn nothing; None means no cutoff.
    pub cutoff: Option<usize>,
}

impl Oracle for MrrOracle {
    fn name(&self) -> String {
        match self.cutoff {
            Some(k) => format!("mrr@{k}"),
            None => "mrr".to_string(),
        }
    }

    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
        let mut neg: Vec<usize> = (0..relevant.len()).filter(|&i| !relevant[i]).collect();
        sort_descending(&mut neg, scores);
        self.argmax_neg(&neg, true, scores, relevant, coef)
    }

    fn sorts(&self) -> bool {
        true
    }

    fn argmax_sorted(
        &self,
        sorted: &Sorted,
        scores: &[f64],
        _labels: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        // `Sorted` orders the non-relevant documents as `sort_descending` does.
        self.argmax_neg(&sorted.neg, sorted.neg_ties(), scores, relevant, coef)
    }
}

impl MrrOracle {
    /// The argmax given the non-relevant documents in descending score order (equal scores
    /// by index); `neg_ties` is false only when no two of them have equal scores.
    fn argmax_neg(
        &self,
        neg: &[usize],
        neg_ties: bool,
        scores: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        // The relevant document with the lowest score (the last in index order among equals).
        let mut g0 = usize::MAX;
        for (i, &r) in relevant.iter().enumerate() {
            if r && (g0 == usize::MAX || scores[i] <= scores[g0]) {
                g0 = i;
            }
        }
        let s_min = scores[g0];
        let n = neg.len();
        let k = self.cutoff.unwrap_or(usize::MAX);
        let delta = |r: usize| {
            if r < k {
                1.0 - 1.0 / (1 + r) as f64
            } else {
                1.0
            }
        };
        // Scan r = 0.. while Delta still grows with r, tracking S(r) - r s_min.
        let (mut best_r, mut best) = (0usize, 0.0f64);
        let mut gap = 0.0; // S(r) - r s_min
        let mut peak = 0; // #{b : s_b > s_min}
        for r in 1..=n {
            let s = scores[neg[r - 1]];
            if s > s_min {
                peak = r;
            }
            gap += s - s_min;
            if r >= k {
                break;
            }
            let v = delta(r) + gap;
            if v > best {
                best = v;
                best_r = r;
            }
        }
        if k <= n {
            // Delta = 1 from rank k on; S(r) - r s_min is concave with its peak at
            // max(k, #{b : s_b > s_min}).
            while peak < n && scores[neg[peak]] > s_min {
                peak += 1;
            }
            let r = peak.max(k);
            let v = 1.0 + neg[..r].iter().map(|&b| scores[b] - s_min).sum::<f64>();
            if v > best {
                best_r = r;
            }
        }
        coef.fill(0.0);
        for &b in &neg[..best_r] {
            coef[b] = -1.0;
        }
        // Any relevant document with the lowest score can play g0: they share its coefficient,
        // and tied non-relevant documents at the boundary share theirs (`average_ties`).
        let lowest = relevant
            .iter()
            .zip(scores)
            .filter(|&(&r, &s)| r && s == s_min)
            .count();
        for (c, (&r, &s)) in coef.iter_mut().zip(relevant.iter().zip(scores)) {
            if r && s == s_min {
                *c = best_r as f64 / lowest as f64;
            }
        }
        if neg_ties {
            average_ties(neg, scores, coef);
        }
        delta(best_r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::hinge;
    use crate::oracle::testing::{brute_force_max, phi_mrr_gap, random_query_with, rr_loss};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn matches_brute_force_for_every_cutoff() {
        let mut rng = ChaCha8Rng::seed_from_u64(36);
        for cutoff in [None, Some(1), Some(2), Some(3), Some(5), Some(9)] {
            let oracle = MrrOracle { cutoff };
            for trial in 0..800 {
                let n = rng.random_range(2..=7);
                let count = match trial % 4 {
                    0 => Some(1),
                    1 => Some(n - 1),
                    _ => None,
                };
                let (scores, relevant) = random_query_with(&mut rng, n, count);
                let mut coef = vec![0.0; n];
                let h = hinge(&oracle, &scores, &relevant, &mut coef);
                let brute = brute_force_max(n, |perm| {
                    let ranked: Vec<bool> = perm.iter().map(|&d| relevant[d]).collect();
                    rr_loss(&ranked, cutoff) + phi_mrr_gap(&scores, &relevant, perm)
                });
                assert!(
                    (h - brute).abs() < 1e-12,
                    "{cutoff:?} scores {scores:?} relevant {relevant:?}: oracle {h}, brute {brute}"
                );
            }
        }
    }

    #[test]
    fn by_hand() {
        // Relevant scores 0.5 and 0.0 (s_min = 0), non-relevant 0.3, 0.2, -1.
        // No cutoff: H(0) = 0; H(1) = 1/2 + 0.3 = 0.8; H(2) = 2/3 + 0.5 = 1.1667;
        // H(3) = 3/4 + 0.5 - 1 = 0.25. The best is r = 2 with Delta = 2/3.
        // mrr@1: H(0) = 0, and for r >= 1 Delta = 1 and the best is r = max(1, 2) = 2:
        // 1 + 0.5 = 1.5.
        let scores = [0.5, 0.3, 0.0, 0.2, -1.0];
        let relevant = [true, false, true, false, false];
        let mut coef = [0.0; 5];
        let delta = MrrOracle { cutoff: None }.argmax(&scores, &relevant, &mut coef);
        assert!((delta - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(coef, [0.0, -1.0, 2.0, -1.0, 0.0]);
        let h = hinge(
            &MrrOracle { cutoff: Some(1) },
            &scores,
            &relevant,
            &mut coef,
        );
        assert!((h - 1.5).abs() < 1e-12, "{h}");
    }
}
