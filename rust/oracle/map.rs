//! The MAP oracle of Yue et al. 2007 (Algorithm 2).
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
//! Documents of one relevance class that tie in score share the mean of their coefficients
//! (`average_ties`), so the cut does not depend on the order the documents were listed in.

use super::{average_ties, split_sorted, Oracle};

/// Which exact algorithm computes the MAP argmax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MapAlgorithm {
    /// Algorithm 2 as published: O(P N) after sorting.
    #[default]
    Greedy,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct MapOracle {
    pub algorithm: MapAlgorithm,
}

impl Oracle for MapOracle {
    fn name(&self) -> String {
        "map".to_string()
    }

    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
        let (pos, neg) = split_sorted(scores, relevant);
        let sp: Vec<f64> = pos.iter().map(|&i| scores[i]).collect();
        let sn: Vec<f64> = neg.iter().map(|&i| scores[i]).collect();
        let opt = match self.algorithm {
            MapAlgorithm::Greedy => positions_greedy(&sp, &sn),
        };
        let loss = encode(&pos, &neg, &opt, coef);
        average_ties(&pos, scores, coef);
        average_ties(&neg, scores, coef);
        loss
    }
}

/// o_j (0-based: the index into the sorted relevant list of the first relevant document below
/// non-relevant j, P meaning below all of them) by Algorithm 2.
pub fn positions_greedy(sp: &[f64], sn: &[f64]) -> Vec<usize> {
    let p = sp.len();
    let pn = (p * sn.len()) as f64;
    let inv_p = 1.0 / p as f64;
    sn.iter()
        .enumerate()
        .map(|(j, &s_neg)| {
            let jj = (j + 1) as f64;
            let (mut acc, mut best, mut opt) = (0.0f64, 0.0f64, p);
            for k in (0..p).rev() {
                let kk = (k + 1) as f64;
                acc += inv_p * kk / ((jj + kk) * (jj + kk - 1.0)) - 2.0 * (sp[k] - s_neg) / pn;
                if acc > best {
                    best = acc;
                    opt = k;
                }
            }
            opt
        })
        .collect()
}

/// Turns the positions o_j into Delta_map = 1 - AP and the coefficients of deltaPsi_po:
/// c = 2 (#non-relevant above) / (P N) for a relevant document and
/// c = -2 (#relevant below) / (P N) for a non-relevant one.
pub fn encode(pos: &[usize], neg: &[usize], opt: &[usize], coef: &mut [f64]) -> f64 {
    let p = pos.len();
    let scale = 2.0 / (p * neg.len()) as f64;
    // above[k] = number of non-relevant documents ranked above relevant k.
    let mut above = vec![0usize; p + 1];
    for &o in opt {
        above[o] += 1;
    }
    for k in 1..=p {
        above[k] += above[k - 1];
    }
    let mut ap = 0.0;
    for (k, &doc) in pos.iter().enumerate() {
        ap += (k + 1) as f64 / (k + 1 + above[k]) as f64;
        coef[doc] = scale * above[k] as f64;
    }
    for (&doc, &o) in neg.iter().zip(opt) {
        coef[doc] = -scale * (p - o) as f64;
    }
    1.0 - ap / p as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::testing::{brute_force_hinge, random_query};
    use crate::oracle::{dot, hinge};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn greedy_matches_brute_force_on_random_queries() {
        let oracle = MapOracle::default();
        let mut rng = ChaCha8Rng::seed_from_u64(20070723);
        let mut checked = 0;
        while checked < 1500 {
            let n = rng.random_range(2..=7);
            let (scores, relevant) = random_query(&mut rng, n);
            if relevant.iter().all(|&r| r) || !relevant.iter().any(|&r| r) {
                continue;
            }
            let mut coef = vec![0.0; n];
            let h = hinge(&oracle, &scores, &relevant, &mut coef);
            let brute = brute_force_hinge(&scores, &relevant, crate::oracle::testing::map_loss);
            assert!(
                (h - brute).abs() < 1e-10,
                "scores {scores:?} relevant {relevant:?}: oracle {h}, brute force {brute}"
            );
            checked += 1;
        }
    }

    #[test]
    fn permuting_documents_permutes_the_coefficients() {
        let oracle = MapOracle::default();
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
        let mut coef = [0.0; 4];
        let h = hinge(&MapOracle::default(), &scores, &relevant, &mut coef);
        assert!((h - 4.0 / 3.0).abs() < 1e-12, "{h}");
        let loss = MapOracle::default().argmax(&scores, &relevant, &mut coef);
        assert!((loss - 2.0 / 3.0).abs() < 1e-12);
        assert!((loss - dot(&coef, &scores) - h).abs() < 1e-12);
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
            let mut coef = vec![0.0; n];
            let loss = MapOracle::default().argmax(&vec![0.0; n], &relevant, &mut coef);
            assert!((loss - (1.0 - worst_ap)).abs() < 1e-12);
        }
    }
}
