//! A loss with a weight: Chakrabarti et al.'s SVM-combo (section 3.7) gives every loss l its own
//! trade-off C_l. Spelled "0.1*ndcg@10" (the Python API also takes `{"ndcg@10": 0.1}`), it is
//! the loss lambda * Delta_l with the feature map lambda * Psi_l, so its hinge is lambda times
//! the loss's hinge:
//!
//!   max_y lambda (Delta_l(y) + w.Psi_l(y) - w.Psi_l(y*)) = lambda H_l(w),   lambda > 0,
//!
//! whose maximizer is the loss's own (scaling by lambda > 0 keeps the argmax). With separate
//! slacks, 1/2 |w|^2 + sum_l C/n sum_q lambda_l H_{q,l} is Chakrabarti's objective with
//! C_l = lambda_l C; with a shared slack the maximum is over the weighted hinges.

use crate::oracle::interface::Oracle;
use crate::oracle::interleave::Sorted;

pub struct Weighted {
    weight: f64,
    inner: Box<dyn Oracle>,
}

impl Weighted {
    /// `weight` must be finite and > 0 (checked by the caller, `build::from_name`).
    pub fn new(weight: f64, inner: Box<dyn Oracle>) -> Self {
        Weighted { weight, inner }
    }

    fn scaled(&self, delta: f64, coef: &mut [f64]) -> f64 {
        for c in coef.iter_mut() {
            *c *= self.weight;
        }
        delta * self.weight
    }
}

impl Oracle for Weighted {
    fn name(&self) -> String {
        format!("{}*{}", self.weight, self.inner.name())
    }

    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
        let delta = self.inner.argmax(scores, relevant, coef);
        self.scaled(delta, coef)
    }

    fn argmax_labels(
        &self,
        scores: &[f64],
        labels: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        let delta = self.inner.argmax_labels(scores, labels, relevant, coef);
        self.scaled(delta, coef)
    }

    fn sorts(&self) -> bool {
        self.inner.sorts()
    }

    fn argmax_sorted(
        &self,
        sorted: &Sorted,
        scores: &[f64],
        labels: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        let delta = self
            .inner
            .argmax_sorted(sorted, scores, labels, relevant, coef);
        self.scaled(delta, coef)
    }

    fn usable(&self, labels: &[f64], relevant: &[bool]) -> bool {
        self.inner.usable(labels, relevant)
    }

    fn graded(&self) -> bool {
        self.inner.graded()
    }

    fn parts(&self) -> Vec<&dyn Oracle> {
        vec![self.inner.as_ref()]
    }

    fn extra_work_labels(&self, labels: &[f64], relevant: &[bool]) -> f64 {
        self.inner.extra_work_labels(labels, relevant)
    }
}

#[cfg(test)]
mod tests {
    use crate::oracle::from_name;
    use crate::oracle::interface::hinge;
    use crate::oracle::testing::{brute_force_hinge, map_loss};
    use rand::{Rng, SeedableRng};

    #[test]
    fn a_weighted_loss_has_the_weighted_hinge_and_the_same_argmax() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let plain = from_name("map").unwrap();
        let weighted = from_name("0.25*map").unwrap();
        assert_eq!(weighted.name(), "0.25*map");
        for _ in 0..200 {
            let n = rng.random_range(2..7);
            let scores: Vec<f64> = (0..n)
                .map(|_| (rng.random_range(-3..4) as f64) / 2.0)
                .collect();
            let mut relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.4)).collect();
            relevant[0] = true;
            relevant[1] = false;
            let (mut c1, mut c2) = (vec![0.0; n], vec![0.0; n]);
            let h1 = hinge(plain.as_ref(), &scores, &relevant, &mut c1);
            let h2 = hinge(weighted.as_ref(), &scores, &relevant, &mut c2);
            // By brute force over every ranking, the weighted hinge is a quarter of MAP's.
            let brute = brute_force_hinge(&scores, &relevant, map_loss);
            assert!((h1 - brute).abs() <= 1e-9, "{h1} {brute}");
            assert!((h2 - 0.25 * brute).abs() <= 1e-9, "{h2} {brute}");
            for (a, b) in c1.iter().zip(&c2) {
                assert_eq!(0.25 * a, *b);
            }
        }
    }

    #[test]
    fn weights_must_be_finite_and_positive() {
        for bad in [
            "0*map", "-1*map", "inf*map", "nan*map", "x*map", "*map", "1*",
        ] {
            assert!(from_name(bad).is_err(), "{bad}");
        }
        assert!(from_name(" 2 * ndcg@10 ").is_ok());
        // One weight per loss: a second one is refused, not multiplied in.
        for bad in ["2*3*ndcg@10", "1*1*map", " 2 * 0.5 * map"] {
            assert!(from_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_loss_is_listed_once_whatever_its_weights() {
        use crate::oracle::{from_groups, LossTerm};
        let term = |spelled: &str| LossTerm::parse(spelled).unwrap();
        // Every spelling of one loss twice, in separate slacks and in a shared one.
        let twice = [
            ("map", "1*map"),
            ("map", "0.5*map"),
            ("2*map", " map "),
            ("ndcg@10", "0.1*ndcg@10"),
        ];
        for (a, b) in twice {
            let separate = vec![vec![term(a)], vec![term(b)]];
            assert!(from_groups(&separate).is_err(), "{a} {b}");
            let shared = vec![vec![term(a), term(b)]];
            assert!(from_groups(&shared).is_err(), "{a} {b}");
            assert!(from_name(&format!("max({a},{b})")).is_err(), "{a} {b}");
        }
        let distinct = vec![vec![term("map")], vec![term("0.1*ndcg@10")]];
        assert!(from_groups(&distinct).is_ok());
        // The structured form is the spelled one: (0.1, "ndcg@10") is "0.1*ndcg@10".
        assert_eq!(
            term("0.1*ndcg@10"),
            LossTerm {
                weight: 0.1,
                name: "ndcg@10".to_string()
            }
        );
        assert_eq!(term(" map "), LossTerm::plain("map"));
    }
}
