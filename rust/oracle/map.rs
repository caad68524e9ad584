//! The MAP oracle of Yue et al. 2007: Algorithm 2, and an exact O(n log n) version of it.
//!
//! With relevant documents sorted by score (s+_1 >= ... >= s+_P) and non-relevant ones likewise
//! (s-_1 >= ... >= s-_N), the argmax ranking is an interleaving of the two lists (Observation 1)
//! described by o_j, the first relevant document ranked below the j-th non-relevant one. Moving
//! non-relevant j from below relevant k to above it changes H by
//!
//!   delta_j(k, k+1) = 1/P * k / ((j+k)(j+k-1)) - 2 (s+_k - s-_j) / (P N)        (paper eq. 5)
//!
//! (the first term is the drop of Prec@k from k/(k+j-1) to k/(k+j), divided by P). Algorithm 2
//! picks o_j = argmax_k sum_{k' >= k} delta_j(k', k'+1) for each j independently; Theorem 2
//! shows the choices are monotone in j, hence feasible and optimal. We break ties in the argmax
//! towards the lowest position (the largest k), which keeps the choices monotone.
//!
//! The fast version evaluates delta_j(i, P+1) in O(1). With 0-based g and j, the loss side is
//!
//!   1/P sum_{m=i+1}^{P} m / ((m+j)(m+j+1))
//!     = 1/P [ H(P+j) - H(i+j) - (j+1) (1/(i+j+1) - 1/(P+j+1)) ]
//!
//! (write m/((m+j)(m+j+1)) = 1/(m+j) - (j+1) [1/(m+j) - 1/(m+j+1)] and sum; H are harmonic
//! numbers), and the score side is -2/(P N) (sum_{g >= i} s+_g - (P - i) s-_j) from suffix
//! sums. Because the largest argmax is monotone in j, divide and conquer over j with shrinking
//! ranges of i finds all of them in O(P log N + N) after the O(n log n) sort (interleave.rs).
//!
//! Documents of one relevance class that tie in score share the mean of their coefficients
//! (`average_ties`), so the cut does not depend on the order the documents were listed in.

use crate::oracle::interface::Oracle;
use crate::oracle::interleave::{
    above_from_positions_into, encode_po, harmonic_prefix, positions_fast_into,
    positions_greedy_into, release_if_large, ScoreTerms, SearchStack, SeparableLoss, Sorted,
};
use std::borrow::Cow;

/// Which exact algorithm computes the MAP argmax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MapAlgorithm {
    /// Algorithm 2 as published: O(P N) after sorting.
    Greedy,
    /// Divide and conquer over the monotone positions: O(P log N + N) after sorting.
    Fast,
    /// Greedy when the query has at most `GREEDY_MAX_RELEVANT` relevant documents, Fast
    /// otherwise (the crossover measured by `cargo bench --bench oracles`, see the README).
    #[default]
    Auto,
}

/// Up to this many relevant documents Algorithm 2's tight O(P N) loop is as fast as the divide
/// and conquer (within the noise of `cargo bench --bench oracles`, where both are dominated by
/// the sort); from 8 on the divide and conquer wins at every size measured (README).
pub const GREEDY_MAX_RELEVANT: usize = 4;

#[derive(Debug, Clone, Copy, Default)]
pub struct MapOracle {
    pub algorithm: MapAlgorithm,
}

/// l_g(a) = -(g+1) / (g+1+a) / P: minus relevant g's precision at its rank, over P.
pub(crate) struct ApLoss {
    inv_p: f64,
    p: usize,
    harmonic: Cow<'static, [f64]>,
}

impl ApLoss {
    pub fn new(p: usize, n: usize, with_harmonic: bool) -> Self {
        ApLoss {
            inv_p: 1.0 / p as f64,
            p,
            harmonic: if with_harmonic {
                harmonic_prefix(p + n)
            } else {
                Cow::Borrowed(&[])
            },
        }
    }
}

impl SeparableLoss for ApLoss {
    #[inline]
    fn increase(&self, g: usize, j: usize) -> f64 {
        let k = (g + 1) as f64;
        let jj = j as f64;
        self.inv_p * k / ((k + jj) * (k + jj + 1.0))
    }

    #[inline]
    fn increase_from(&self, i: usize, j: usize) -> f64 {
        let h = &self.harmonic;
        let p = self.p;
        let j1 = (j + 1) as f64;
        self.inv_p
            * ((h[p + j] - h[i + j]) - j1 * (1.0 / (i + j + 1) as f64 - 1.0 / (p + j + 1) as f64))
    }
}

impl MapAlgorithm {
    /// The algorithm `Auto` resolves to for a query with `p` relevant documents.
    pub fn resolve(self, p: usize) -> MapAlgorithm {
        match self {
            MapAlgorithm::Auto if p <= GREEDY_MAX_RELEVANT => MapAlgorithm::Greedy,
            MapAlgorithm::Auto => MapAlgorithm::Fast,
            other => other,
        }
    }
}

impl Oracle for MapOracle {
    fn name(&self) -> String {
        match self.algorithm {
            MapAlgorithm::Greedy => "map-greedy",
            MapAlgorithm::Fast => "map-fast",
            MapAlgorithm::Auto => "map",
        }
        .to_string()
    }

    /// Algorithm 2's O(P N) loop, at most (n/2)^2 over the labels when it is the only
    /// algorithm; `Auto` runs it only when P <= 4 (O(n)), so that it adds no more than a sort.
    fn extra_work(&self, n_docs: usize) -> f64 {
        match self.algorithm {
            MapAlgorithm::Greedy => (n_docs / 2) as f64 * n_docs.div_ceil(2) as f64,
            MapAlgorithm::Auto | MapAlgorithm::Fast => 0.0,
        }
    }

    /// The same loss and cutting planes through `Auto`, which picks the O(n log n) divide
    /// and conquer on queries with more than 4 relevant documents.
    fn cheaper(&self) -> Vec<String> {
        vec!["map".to_string()]
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
        BUFFERS.with(|cell| {
            let buffers = &mut *cell.borrow_mut();
            positions_into(sorted, self.algorithm, buffers);
            let MapBuffers { opt, above, .. } = buffers;
            above_from_positions_into(opt, sorted.p(), above);
            encode_po(sorted, above, coef);
            sorted.average_ties(scores, coef);
            let loss = loss_from_above(above);
            buffers.release_if_large();
            loss
        })
    }
}

/// One query's working arrays, kept per thread so that a pass over many queries does not
/// allocate them for each.
#[derive(Default)]
pub(crate) struct MapBuffers {
    opt: Vec<usize>,
    above: Vec<usize>,
    suffix: Vec<f64>,
    stack: SearchStack,
}

impl MapBuffers {
    fn release_if_large(&mut self) {
        release_if_large(&mut self.opt);
        release_if_large(&mut self.above);
        release_if_large(&mut self.suffix);
        release_if_large(&mut self.stack);
    }
}

thread_local! {
    static BUFFERS: std::cell::RefCell<MapBuffers> = std::cell::RefCell::default();
}

/// o_j of the MAP argmax by the chosen algorithm.
#[cfg(test)]
pub(crate) fn positions(sorted: &Sorted, algorithm: MapAlgorithm) -> Vec<usize> {
    let mut buffers = MapBuffers::default();
    positions_into(sorted, algorithm, &mut buffers);
    buffers.opt
}

/// `positions` into `buffers.opt`.
fn positions_into(sorted: &Sorted, algorithm: MapAlgorithm, buffers: &mut MapBuffers) {
    let (p, n) = (sorted.p(), sorted.n());
    match algorithm.resolve(p) {
        MapAlgorithm::Greedy => {
            positions_greedy_into(&ApLoss::new(p, n, false), sorted, &mut buffers.opt)
        }
        _ => {
            let loss = ApLoss::new(p, n, true);
            let terms = ScoreTerms::with_buffer(sorted, std::mem::take(&mut buffers.suffix));
            positions_fast_into(&loss, &terms, 0, 0, &mut buffers.opt, &mut buffers.stack);
            buffers.suffix = terms.into_buffer();
        }
    }
}

/// Delta_map = 1 - AP of the interleaving with `above[g]` non-relevant documents above good g.
pub(crate) fn loss_from_above(above: &[usize]) -> f64 {
    let ap: f64 = above
        .iter()
        .enumerate()
        .map(|(g, &a)| (g + 1) as f64 / (g + 1 + a) as f64)
        .sum();
    1.0 - ap / above.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::hinge;
    use crate::oracle::interface::dot;
    use crate::oracle::testing::{brute_force_hinge, map_loss, random_query, usable};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn both_algorithms_match_brute_force_on_random_queries() {
        let mut rng = ChaCha8Rng::seed_from_u64(20070723);
        let mut checked = 0;
        while checked < 1500 {
            let n = rng.random_range(2..=7);
            let (scores, relevant) = random_query(&mut rng, n);
            if !usable(&relevant) {
                continue;
            }
            let brute = brute_force_hinge(&scores, &relevant, map_loss);
            for algorithm in [MapAlgorithm::Greedy, MapAlgorithm::Fast] {
                let mut coef = vec![0.0; n];
                let h = hinge(&MapOracle { algorithm }, &scores, &relevant, &mut coef);
                assert!(
                    (h - brute).abs() < 1e-10,
                    "{algorithm:?} scores {scores:?} relevant {relevant:?}: oracle {h}, brute force {brute}"
                );
            }
            checked += 1;
        }
    }

    #[test]
    fn fast_equals_greedy_on_large_random_queries() {
        // The closed form of delta_j(i, P+1) and the divide and conquer must reproduce
        // Algorithm 2: the same hinge value and, without ties in the scores, the same positions.
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        for trial in 0..300 {
            let n = rng.random_range(2..600);
            let frac = [0.02, 0.2, 0.5, 0.9][trial % 4];
            let tied = trial % 3 == 0;
            let scores: Vec<f64> = (0..n)
                .map(|_| {
                    if tied {
                        rng.random_range(0..5) as f64 * 0.1
                    } else {
                        rng.random_range(-2.0..2.0)
                    }
                })
                .collect();
            let mut relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(frac)).collect();
            relevant[0] = true;
            relevant[n - 1] = false;
            let sorted = Sorted::new(&scores, &relevant);
            let greedy = positions(&sorted, MapAlgorithm::Greedy);
            let fast = positions(&sorted, MapAlgorithm::Fast);
            let (mut cg, mut cf) = (vec![0.0; n], vec![0.0; n]);
            let hg = hinge(
                &MapOracle {
                    algorithm: MapAlgorithm::Greedy,
                },
                &scores,
                &relevant,
                &mut cg,
            );
            let hf = hinge(
                &MapOracle {
                    algorithm: MapAlgorithm::Fast,
                },
                &scores,
                &relevant,
                &mut cf,
            );
            assert!((hg - hf).abs() < 1e-10 * (1.0 + hg.abs()), "{hg} vs {hf}");
            if !tied {
                assert_eq!(greedy, fast, "trial {trial}");
            }
        }
    }

    #[test]
    fn closed_form_equals_the_sum() {
        // increase_from(i, j) must equal the plain sum of increase(g, j) over g >= i.
        let loss = ApLoss::new(7, 9, true);
        for j in 0..9 {
            for i in 0..=7 {
                let sum: f64 = (i..7).map(|g| loss.increase(g, j)).sum();
                assert!(
                    (loss.increase_from(i, j) - sum).abs() < 1e-15,
                    "i {i} j {j}"
                );
            }
        }
    }

    #[test]
    fn permuting_documents_permutes_the_coefficients() {
        for algorithm in [MapAlgorithm::Greedy, MapAlgorithm::Fast] {
            let oracle = MapOracle { algorithm };
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            for _ in 0..300 {
                let n = rng.random_range(2..12);
                let (scores, mut relevant) = random_query(&mut rng, n);
                relevant[0] = true;
                relevant[n - 1] = false;
                let mut coef = vec![0.0; n];
                let loss = oracle.argmax(&scores, &relevant, &mut coef);
                let mut perm: Vec<usize> = (0..n).collect();
                perm.reverse();
                perm.rotate_left(rng.random_range(0..n));
                let s2: Vec<f64> = perm.iter().map(|&i| scores[i]).collect();
                let r2: Vec<bool> = perm.iter().map(|&i| relevant[i]).collect();
                let mut c2 = vec![0.0; n];
                let loss2 = oracle.argmax(&s2, &r2, &mut c2);
                assert!((loss - loss2).abs() < 1e-12);
                for (k, &i) in perm.iter().enumerate() {
                    assert!((c2[k] - coef[i]).abs() < 1e-12, "{scores:?} {relevant:?}");
                }
            }
        }
    }

    #[test]
    fn one_relevant_document_is_placed_optimally() {
        // One relevant document scored 0 among three non-relevant ones scored 1, 0, -1.
        // P = 1, N = 3. Putting it at rank r (r-1 negatives above) gives Delta = 1 - 1/r and
        // w.(Psi(y) - Psi(y*)) = -2/3 * sum over negatives above of (0 - s_j).
        // r = 1: 0. r = 2 (neg 1 above): 1/2 - 2/3*(0-1) = 1/2 + 2/3 = 7/6.
        // r = 3: 2/3 + 2/3*(1 + 0) = 4/3. r = 4: 3/4 + 2/3*(1 + 0 - 1) = 3/4.
        // The maximum is 4/3 with the relevant document third.
        let scores = [0.0, 1.0, 0.0, -1.0];
        let relevant = [true, false, false, false];
        for algorithm in [MapAlgorithm::Greedy, MapAlgorithm::Fast] {
            let oracle = MapOracle { algorithm };
            let mut coef = [0.0; 4];
            let h = hinge(&oracle, &scores, &relevant, &mut coef);
            assert!((h - 4.0 / 3.0).abs() < 1e-12, "{h}");
            let loss = oracle.argmax(&scores, &relevant, &mut coef);
            assert!((loss - 2.0 / 3.0).abs() < 1e-12);
            assert!((loss - dot(&coef, &scores) - h).abs() < 1e-12);
        }
    }

    #[test]
    fn zero_scores_put_every_non_relevant_first() {
        // With w = 0 only Delta counts, so the argmax is the worst ranking.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..50 {
            let n = rng.random_range(2..40);
            let mut relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.3)).collect();
            relevant[0] = true;
            relevant[n - 1] = false;
            let p = relevant.iter().filter(|&&r| r).count();
            let neg = n - p;
            let worst_ap: f64 =
                (1..=p).map(|k| k as f64 / (k + neg) as f64).sum::<f64>() / p as f64;
            for algorithm in [MapAlgorithm::Greedy, MapAlgorithm::Fast] {
                let mut coef = vec![0.0; n];
                let loss = MapOracle { algorithm }.argmax(&vec![0.0; n], &relevant, &mut coef);
                assert!((loss - (1.0 - worst_ap)).abs() < 1e-12);
            }
        }
    }
}
