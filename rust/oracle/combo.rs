//! SVM-combo (Chakrabarti et al. 2008, section 3.7): several losses in one model.
//!
//! Separate slacks (the default of `SVMMap(loss=[...])`) need no oracle of their own: the
//! solver keeps one slack group per loss, each with its own cap C, and so minimizes
//!
//!   1/2 |w|^2 + sum_l C/n sum_q H_{q,l}(w),   H_{q,l} = max_y Delta_l + w.Psi_l(y) - w.Psi_l(y*),
//!
//! each loss with its own feature map (Psi_po, or phi_mrr for MRR).
//!
//! Shared slack asserts the constraints of every loss against one slack per query,
//! xi_q >= Delta_l(y) - w.deltaPsi_l(y) for all l and y, so OP 1 becomes
//!
//!   1/2 |w|^2 + C/n sum_q max_l H_{q,l}(w),
//!
//! and the most violated constraint of a query is that of the loss with the largest hinge.
//! `SharedSlack` runs every component oracle and keeps that one (the first on ties, up to
//! rounding); the components that sort the query share one sort.

use crate::oracle::interface::{dot, Oracle};
use crate::oracle::interleave::Sorted;

pub struct SharedSlack {
    parts: Vec<Box<dyn Oracle>>,
}

impl SharedSlack {
    pub fn new(parts: Vec<Box<dyn Oracle>>) -> Self {
        SharedSlack { parts }
    }

    /// Runs `run` on every component (it returns (hinge, Delta), or None for a component that
    /// cannot use the query) and keeps in `coef` the coefficients of the largest hinge.
    /// Returns its Delta (0 when no component ran).
    fn best_part(
        &self,
        n_docs: usize,
        coef: &mut [f64],
        mut run: impl FnMut(&dyn Oracle, &mut [f64]) -> Option<(f64, f64)>,
    ) -> f64 {
        let mut trial = vec![0.0; n_docs];
        let mut best: Option<(f64, f64)> = None; // (hinge, Delta)
        for part in &self.parts {
            let Some((h, delta)) = run(part.as_ref(), &mut trial) else {
                continue;
            };
            // Hinges equal up to rounding count as a tie (the first loss wins), so that the
            // choice does not depend on the order in which the dot products were summed.
            if best.is_none_or(|(bh, _)| h > bh + 1e-12 * (1.0 + bh.abs())) {
                best = Some((h, delta));
                coef.copy_from_slice(&trial);
            }
        }
        best.map_or(0.0, |(_, delta)| delta)
    }
}

impl Oracle for SharedSlack {
    fn name(&self) -> String {
        let names: Vec<String> = self.parts.iter().map(|p| p.name()).collect();
        format!("max({})", names.join(","))
    }

    fn parts(&self) -> Vec<&dyn Oracle> {
        self.parts.iter().map(|p| p.as_ref()).collect()
    }

    fn extra_work_labels(&self, labels: &[f64], relevant: &[bool]) -> f64 {
        self.parts
            .iter()
            .map(|p| p.extra_work_labels(labels, relevant))
            .sum()
    }

    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
        let sorted = self.sorts().then(|| Sorted::new(scores, relevant));
        self.best_part(scores.len(), coef, |part, trial| {
            let delta = match &sorted {
                Some(s) if part.sorts() => part.argmax_sorted(s, scores, &[], relevant, trial),
                _ => part.argmax(scores, relevant, trial),
            };
            Some((delta - dot(trial, scores), delta))
        })
    }

    /// As `argmax`, over the components that can use the query (a graded "pairwise" part can
    /// use a query whose documents are all relevant; the binary parts cannot).
    fn argmax_labels(
        &self,
        scores: &[f64],
        labels: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        match self.sorts() {
            true => self.argmax_sorted(
                &Sorted::new(scores, relevant),
                scores,
                labels,
                relevant,
                coef,
            ),
            false => self.best_part(scores.len(), coef, |part, trial| {
                part.usable(labels, relevant).then(|| {
                    let delta = part.argmax_labels(scores, labels, relevant, trial);
                    (delta - dot(trial, scores), delta)
                })
            }),
        }
    }

    fn sorts(&self) -> bool {
        self.parts.iter().any(|p| p.sorts())
    }

    fn argmax_sorted(
        &self,
        sorted: &Sorted,
        scores: &[f64],
        labels: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        self.best_part(scores.len(), coef, |part, trial| {
            part.usable(labels, relevant).then(|| {
                let delta = part.argmax_sorted(sorted, scores, labels, relevant, trial);
                (delta - dot(trial, scores), delta)
            })
        })
    }

    fn usable(&self, labels: &[f64], relevant: &[bool]) -> bool {
        self.parts.iter().any(|p| p.usable(labels, relevant))
    }

    fn graded(&self) -> bool {
        self.parts.iter().any(|p| p.graded())
    }
}

#[cfg(test)]
mod tests {
    use crate::oracle::testing::{
        brute_force_hinge, brute_force_max, log2_discount, map_loss, ndcg_loss, phi_mrr_gap,
        random_query_with, rr_loss,
    };
    use crate::oracle::{from_name, hinge};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn a_loss_twice_in_a_shared_slack_is_refused() {
        for spelled in [
            "max(map,map)",
            "max(ndcg@10, mrr@3,ndcg@10)",
            "max( map ,map)",
        ] {
            let err = from_name(spelled).err().expect(spelled).to_string();
            assert!(err.contains("appears twice"), "{spelled}: {err}");
        }
        // Different cutoffs are different losses.
        assert!(from_name("max(ndcg@10,ndcg@5)").is_ok());
    }

    #[test]
    fn shared_slack_takes_the_largest_component_hinge() {
        // Brute force: the most violated constraint over every loss and every ranking.
        let oracle = from_name("max(map,ndcg@2,mrr@2)").unwrap();
        assert_eq!(oracle.name(), "max(map,ndcg@2,mrr@2)");
        let mut rng = ChaCha8Rng::seed_from_u64(37);
        for trial in 0..600 {
            let n = rng.random_range(2..=7);
            let count = match trial % 4 {
                0 => Some(1),
                1 => Some(n - 1),
                _ => None,
            };
            let (scores, relevant) = random_query_with(&mut rng, n, count);
            let map = brute_force_hinge(&scores, &relevant, map_loss);
            let ndcg =
                brute_force_hinge(&scores, &relevant, |r| ndcg_loss(r, Some(2), log2_discount));
            let mrr = brute_force_max(n, |perm| {
                let ranked: Vec<bool> = perm.iter().map(|&d| relevant[d]).collect();
                rr_loss(&ranked, Some(2)) + phi_mrr_gap(&scores, &relevant, perm)
            });
            let expected = map.max(ndcg).max(mrr);
            let mut coef = vec![0.0; n];
            let h = hinge(oracle.as_ref(), &scores, &relevant, &mut coef);
            assert!((h - expected).abs() < 1e-10, "{h} vs {expected}");
        }
    }
}
