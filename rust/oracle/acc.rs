//! The classification loss of the SVM_acc baselines (Yue et al. 2007, section 5.2), written as
//! a structural SVM with a decomposable loss (Joachims 2005) so that the same engine trains it.
//!
//! Outputs are labelings y' in {-1, +1}^m of the query's m documents (y_i = +1 for a relevant
//! document), with
//!
//!   Delta(y, y') = 1/m sum_i cost_i [y'_i != y_i],   Psi(x, y') = 1/(2m) sum_i cost_i y'_i x_i,
//!
//! cost_i = 1, or for acc2 cost_i = #non-relevant / #relevant of the query for relevant
//! documents (SVM^light's -j cost ratio). Everything decomposes over documents, so the argmax
//! flips exactly the documents with 1 - y_i s_i > 0 and the query's hinge is the weighted mean
//! classification hinge 1/m sum_i cost_i max(0, 1 - y_i s_i). With the whole training set as
//! one query and a constant feature for the bias, OP 1 is then the linear SVM
//! min 1/2 |w|^2 + C/m sum_i cost_i max(0, 1 - y_i (w.x_i + b)) (bias regularized, as in
//! liblinear).

use crate::oracle::interface::Oracle;

#[derive(Debug, Clone, Copy, Default)]
pub struct AccOracle {
    /// Weigh relevant documents by #non-relevant / #relevant (acc2).
    pub balanced: bool,
}

impl Oracle for AccOracle {
    fn name(&self) -> String {
        if self.balanced { "acc2" } else { "acc" }.to_string()
    }

    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
        let m = scores.len() as f64;
        let p = relevant.iter().filter(|&&r| r).count() as f64;
        let positive_cost = if self.balanced { (m - p) / p } else { 1.0 };
        let mut delta = 0.0;
        for ((c, &s), &r) in coef.iter_mut().zip(scores).zip(relevant) {
            let (y, cost) = if r { (1.0, positive_cost) } else { (-1.0, 1.0) };
            if 1.0 - y * s > 0.0 {
                delta += cost;
                *c = cost * y / m;
            } else {
                *c = 0.0;
            }
        }
        delta / m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::hinge;
    use crate::oracle::testing::random_query_with;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn matches_enumeration_of_all_labelings() {
        let mut rng = ChaCha8Rng::seed_from_u64(1998);
        for balanced in [false, true] {
            for _ in 0..500 {
                let m = rng.random_range(2..=8);
                let (mut scores, relevant) = random_query_with(&mut rng, m, None);
                scores.iter_mut().for_each(|s| *s *= 3.0);
                let p = relevant.iter().filter(|&&r| r).count() as f64;
                let cost = |r: bool| {
                    if r && balanced {
                        (m as f64 - p) / p
                    } else {
                        1.0
                    }
                };
                // max over y' of Delta + w.Psi(y') - w.Psi(y), by enumeration.
                let mut brute = f64::NEG_INFINITY;
                for mask in 0u32..(1 << m) {
                    let mut v = 0.0;
                    for i in 0..m {
                        let y = if relevant[i] { 1.0 } else { -1.0 };
                        let y_new = if mask >> i & 1 == 1 { -y } else { y };
                        if y_new != y {
                            v += cost(relevant[i]);
                        }
                        v += cost(relevant[i]) * (y_new - y) * scores[i] / 2.0;
                    }
                    brute = brute.max(v / m as f64);
                }
                let mut coef = vec![0.0; m];
                let h = hinge(&AccOracle { balanced }, &scores, &relevant, &mut coef);
                assert!((h - brute).abs() < 1e-12, "{h} vs {brute}");
            }
        }
    }

    #[test]
    fn balanced_costs_by_hand() {
        // One relevant (score 0.5) and three non-relevant (scores 2, -2, 0) documents.
        // Hinges: relevant 1 - 0.5 = 0.5 with cost 3/1; non-relevant 1 + 2 = 3, 0, 1 + 0 = 1.
        // acc: (0.5 + 3 + 1) / 4 = 1.125; acc2: (1.5 + 3 + 1) / 4 = 1.375.
        let scores = [0.5, 2.0, -2.0, 0.0];
        let relevant = [true, false, false, false];
        let mut coef = [0.0; 4];
        let h = hinge(
            &AccOracle { balanced: false },
            &scores,
            &relevant,
            &mut coef,
        );
        assert!((h - 1.125).abs() < 1e-15);
        let h = hinge(&AccOracle { balanced: true }, &scores, &relevant, &mut coef);
        assert!((h - 1.375).abs() < 1e-15);
    }
}
