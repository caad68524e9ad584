//! The NDCG oracles with Psi_po (Chakrabarti et al. 2008, section 3.4): clipped at rank k
//! ("ndcg@k") and not clipped ("ndcg", their SVMndcg-nc).
//!
//! Relevance is binary, so with D the discount (0 from rank k on when clipped),
//!
//!   Delta = 1 - sum_{relevant at rank r} D(r) / DCG*,   DCG* = sum_{r < min(P, k)} D(r).
//!
//! The loss depends only on which ranks hold relevant documents, so the argmax is an
//! interleaving of the two score-sorted lists (interleave.rs); with above[g] the non-relevant
//! documents above relevant g (0-based everything, rank of g = g + above[g]),
//!
//!   H = 1 + sum_g f_g(above[g]),   f_g(a) = -D(g + a) / DCG* + h_g(a),
//!   h_g(a) = 2 / (P N) sum_{b < a} (s-_b - s+_g),
//!
//! maximized over non-decreasing `above`. h_g is concave with its peak at
//! a*_g = #{b : s-_b > s+_g}, which does not decrease with g.
//!
//! No clip. With D(r) = 1/log2(2 + r) every f_g is concave (D is convex), so Yue et al.'s
//! per-non-relevant decomposition applies, with the loss side of F_j(i) telescoping to
//! (D(i + j) - D(P + j)) / DCG*, and the divide and conquer of interleave.rs is exact.
//! Chakrabarti's discount is flat over the first two ranks, so it is convex only from rank 1
//! on: we solve the two cases "relevant 0 at rank 0" (all o_j >= 1) and "non-relevant 0 above
//! every relevant document" (o_0 = 0); within each, every increment used comes from ranks >= 1,
//! where the loss is concave, and the better case is the argmax.
//!
//! Clip at k (the dynamic program of Chakrabarti's Figure 2 with Facts 3.3 and 3.4, in our
//! words). Relevant documents ranked in the top k form a prefix 0..m of the relevant list,
//! m <= min(P, k). For them, f_g mixes loss and score; the best prefix placement is a DP over
//! g with states a <= k - 1 - g and a running maximum over a' <= a (monotonicity), O(k^2). The
//! others, g >= m, have D = 0 and need a_m >= k - m; each then sits at its own constrained peak
//! max(a*_g, k - m), which is non-decreasing, so their best total Out(m) does not depend on the
//! prefix and takes O(log P) with prefix sums and a binary search. The argmax is the best m.
//! Total O(n log n + k^2).
//!
//! As in every oracle, documents of one class that tie in score share the mean of their
//! coefficients (`average_ties`).

use crate::oracle::interface::Oracle;
use crate::oracle::interleave::{
    above_from_positions, encode_po, positions_fast, positions_greedy, release_if_large,
    ScoreTerms, SeparableLoss, Sorted,
};
use crate::oracle::map::MapAlgorithm;

/// The position discount of NDCG (as a function of the 0-based rank r).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Discount {
    /// 1/log2(2 + r), i.e. 1/log2(1 + rank) with 1-based ranks (trec_eval, svmmap.metrics).
    #[default]
    Log2,
    /// Chakrabarti et al.'s D(r): 1 for r = 0, 1 and 1/log2(1 + r) for r >= 2 (Jarvelin and
    /// Kekalainen's original discount with base 2).
    Paper,
}

impl Discount {
    #[inline]
    pub fn at(self, r: usize) -> f64 {
        match self {
            Discount::Log2 => 1.0 / ((r + 2) as f64).log2(),
            Discount::Paper if r <= 1 => 1.0,
            Discount::Paper => 1.0 / ((r + 1) as f64).log2(),
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct NdcgOracle {
    /// Ranks from k on earn nothing; None means no clip.
    pub cutoff: Option<usize>,
    pub discount: Discount,
}

/// l_g(a) = -D(g + a) / DCG*.
struct DiscountLoss<'a> {
    d: &'a [f64],
    p: usize,
    inv_ideal: f64,
}

impl SeparableLoss for DiscountLoss<'_> {
    #[inline]
    fn increase(&self, g: usize, j: usize) -> f64 {
        (self.d[g + j] - self.d[g + j + 1]) * self.inv_ideal
    }

    #[inline]
    fn increase_from(&self, i: usize, j: usize) -> f64 {
        (self.d[i + j] - self.d[self.p + j]) * self.inv_ideal
    }
}

impl Oracle for NdcgOracle {
    fn name(&self) -> String {
        let mut name = match self.cutoff {
            Some(k) => format!("ndcg@{k}"),
            None => "ndcg".to_string(),
        };
        if self.discount == Discount::Paper {
            name.push_str(":paper");
        }
        name
    }

    /// The clipped dynamic program's k^2 when the cutoff k is below the query's length (the
    /// cutoff is not applied otherwise, and the oracle is O(n log n)).
    fn extra_work(&self, n_docs: usize) -> f64 {
        match self.cutoff {
            Some(k) if k < n_docs => (k as f64) * (k as f64),
            _ => 0.0,
        }
    }

    /// NDCG without a cutoff, with the same discount (O(n log n)).
    fn cheaper(&self) -> Vec<String> {
        let base = "ndcg".to_string();
        match self.discount {
            Discount::Paper => vec![base + ":paper"],
            Discount::Log2 => vec![base],
        }
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
        let total = p + n;
        let clip = self.cutoff.filter(|&k| k < total);
        let k = clip.unwrap_or(total);
        BUFFERS.with(|cell| {
            let buffers = &mut *cell.borrow_mut();
            let QueryBuffers {
                d,
                above,
                clip: clip_buffers,
            } = buffers;
            // d[r] for r = 0..=total, zero from the cutoff on.
            d.clear();
            d.extend((0..=total).map(|r| if r < k { self.discount.at(r) } else { 0.0 }));
            let ideal: f64 = d[..p.min(k)].iter().sum();
            let inv_ideal = 1.0 / ideal;
            match clip {
                Some(k) => clipped_positions(sorted, d, inv_ideal, k, clip_buffers, above),
                None => {
                    let loss = DiscountLoss { d, p, inv_ideal };
                    let opt = if self.discount == Discount::Log2 {
                        if MapAlgorithm::Auto.resolve(p) == MapAlgorithm::Greedy {
                            positions_greedy(&loss, sorted)
                        } else {
                            positions_fast(&loss, &ScoreTerms::new(sorted), 0, 0)
                        }
                    } else {
                        let terms = ScoreTerms::new(sorted);
                        let first_on_top = positions_fast(&loss, &terms, 1, 0);
                        let first_below = positions_fast(&loss, &terms, 0, 1);
                        if terms.total(&loss, &first_below) > terms.total(&loss, &first_on_top) {
                            first_below
                        } else {
                            first_on_top
                        }
                    };
                    *above = above_from_positions(&opt, p);
                }
            }
            encode_po(sorted, above, coef);
            sorted.average_ties(scores, coef);
            let dcg: f64 = above.iter().enumerate().map(|(g, &a)| d[g + a]).sum();
            buffers.release_if_large();
            1.0 - dcg * inv_ideal
        })
    }
}

/// One query's working arrays, kept per thread so that a pass over many queries does not
/// allocate them for each (with a cutoff the DP's own arrays are small, and allocating them
/// cost more than filling them).
#[derive(Default)]
struct QueryBuffers {
    d: Vec<f64>,
    above: Vec<usize>,
    clip: ClipBuffers,
}

impl QueryBuffers {
    fn release_if_large(&mut self) {
        let clip = &mut self.clip;
        for buffer in [
            &mut self.d,
            &mut clip.neg_prefix,
            &mut clip.pos_prefix,
            &mut clip.peak_suffix,
            &mut clip.value,
            &mut clip.next,
        ] {
            release_if_large(buffer);
        }
        for buffer in [&mut self.above, &mut clip.peak, &mut clip.best_arg] {
            release_if_large(buffer);
        }
    }
}

thread_local! {
    static BUFFERS: std::cell::RefCell<QueryBuffers> = std::cell::RefCell::default();
}

/// The arrays of `clipped_positions`.
#[derive(Default)]
struct ClipBuffers {
    neg_prefix: Vec<f64>,
    pos_prefix: Vec<f64>,
    peak: Vec<usize>,
    peak_suffix: Vec<f64>,
    /// Row g of the backtrack at g * stride.
    best_arg: Vec<usize>,
    value: Vec<f64>,
    next: Vec<f64>,
}

/// `prefix[a]` = the sum of `values[..a]`, for a = 0..=len.
fn prefix_sums(values: &[f64], prefix: &mut Vec<f64>) {
    prefix.clear();
    prefix.push(0.0);
    let mut sum = 0.0;
    for &v in values {
        sum += v;
        prefix.push(sum);
    }
}

/// peak[g] = a*_g = #{b : s-_b > s+_g}, non-decreasing in g (both score lists descending).
fn peaks(sp: &[f64], sn: &[f64], peak: &mut Vec<usize>) {
    peak.clear();
    let mut b = 0;
    for &s_pos in sp {
        while b < sn.len() && sn[b] > s_pos {
            b += 1;
        }
        peak.push(b);
    }
}

/// above[g] of the clipped argmax by the prefix DP plus the closed-form tail (module comment),
/// into `above`.
fn clipped_positions(
    sorted: &Sorted,
    d: &[f64],
    inv_ideal: f64,
    k: usize,
    buffers: &mut ClipBuffers,
    above: &mut Vec<usize>,
) {
    let (sp, sn) = (&sorted.sp, &sorted.sn);
    let (p, n) = (sp.len(), sn.len());
    let scale = 2.0 / (p as f64 * n as f64);
    let ClipBuffers {
        neg_prefix,
        pos_prefix,
        peak,
        peak_suffix,
        best_arg,
        value,
        next,
    } = buffers;
    // neg_prefix[a] = sum_{b < a} s-_b; pos_prefix[g] = sum_{g' < g} s+_g'.
    prefix_sums(sn, neg_prefix);
    prefix_sums(sp, pos_prefix);
    let (neg_prefix, pos_prefix) = (&*neg_prefix, &*pos_prefix);
    let h = |g: usize, a: usize| scale * (neg_prefix[a] - a as f64 * sp[g]);
    peaks(sp, sn, peak);
    let peak = &*peak;
    // peak_suffix[g] = sum_{g' >= g} h_g'(a*_g').
    peak_suffix.clear();
    peak_suffix.resize(p + 1, 0.0);
    for g in (0..p).rev() {
        peak_suffix[g] = peak_suffix[g + 1] + h(g, peak[g]);
    }
    let peak_suffix = &*peak_suffix;
    // Out(m): goods m.. out of the top k, each at max(a*_g, k - m); None when infeasible.
    let out = |m: usize| -> Option<f64> {
        if m == p {
            return Some(0.0);
        }
        let lower = k - m;
        if lower > n {
            return None;
        }
        // Goods m..t sit at the lower bound, goods t.. at their peaks.
        let t = m + peak[m..].partition_point(|&a| a < lower);
        let at_lower = scale
            * ((t - m) as f64 * neg_prefix[lower] - lower as f64 * (pos_prefix[t] - pos_prefix[m]));
        Some(at_lower + peak_suffix[t])
    };

    let rows = p.min(k);
    let f = |g: usize, a: usize| -d[g + a] * inv_ideal + h(g, a);
    // value[a] = V_g(a); best_arg[g * stride + a] = argmax_{a' <= a} V_{g-1}(a') for the
    // backtrack (row 0 is not used).
    let stride = n.min(k - 1) + 1;
    best_arg.clear();
    best_arg.resize(rows * stride, 0);
    value.clear();
    let mut best_total = out(0).map(|v| (v, 0usize, 0usize));
    for g in 0..rows {
        let width = n.min(k - 1 - g) + 1;
        next.clear();
        if g == 0 {
            next.extend((0..width).map(|a| f(0, a)));
        } else {
            let (mut run, mut run_arg) = (f64::NEG_INFINITY, 0usize);
            let args = &mut best_arg[g * stride..g * stride + width];
            for ((a, &previous), arg) in value[..width].iter().enumerate().zip(args) {
                if previous > run {
                    run = previous;
                    run_arg = a;
                }
                *arg = run_arg;
                next.push(f(g, a) + run);
            }
        }
        std::mem::swap(value, next);
        // m = g + 1 goods in the top k: the prefix ends at g.
        let (arg, v) =
            value
                .iter()
                .copied()
                .enumerate()
                .fold(
                    (0, f64::NEG_INFINITY),
                    |acc, (a, v)| if v > acc.1 { (a, v) } else { acc },
                );
        if let Some(tail) = out(g + 1) {
            if best_total.is_none_or(|(best, _, _)| v + tail > best) {
                best_total = Some((v + tail, g + 1, arg));
            }
        }
    }
    let (_, m, last) = best_total.expect("m = min(P, k) is always feasible");
    above.clear();
    above.resize(p, 0);
    if m > 0 {
        above[m - 1] = last;
        for g in (1..m).rev() {
            above[g - 1] = best_arg[g * stride + above[g]];
        }
    }
    for g in m..p {
        above[g] = peak[g].max(k - m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::hinge;
    use crate::oracle::testing::{
        brute_force_hinge, log2_discount, ndcg_loss, paper_discount, random_query_with,
    };
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn check(oracle: NdcgOracle, seed: u64, cases: usize) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let d: fn(usize) -> f64 = match oracle.discount {
            Discount::Log2 => log2_discount,
            Discount::Paper => paper_discount,
        };
        for trial in 0..cases {
            let n = rng.random_range(2..=7);
            // One relevant, all but one relevant, or any number.
            let count = match trial % 4 {
                0 => Some(1),
                1 => Some(n - 1),
                _ => None,
            };
            let (scores, relevant) = random_query_with(&mut rng, n, count);
            let mut coef = vec![0.0; n];
            let h = hinge(&oracle, &scores, &relevant, &mut coef);
            let brute = brute_force_hinge(&scores, &relevant, |ranked| {
                ndcg_loss(ranked, oracle.cutoff, d)
            });
            assert!(
                (h - brute).abs() < 1e-10,
                "{} scores {scores:?} relevant {relevant:?}: oracle {h}, brute force {brute}",
                oracle.name()
            );
        }
    }

    #[test]
    fn matches_brute_force_for_every_cutoff_and_discount() {
        // Cutoffs 1..4 are shorter than most lists; 9 is longer than every list (2..=7 documents).
        for (i, cutoff) in [None, Some(1), Some(2), Some(3), Some(4), Some(9)]
            .into_iter()
            .enumerate()
        {
            for discount in [Discount::Log2, Discount::Paper] {
                check(NdcgOracle { cutoff, discount }, 34 + i as u64, 700);
            }
        }
    }

    #[test]
    fn large_queries_agree_with_the_unclipped_dp() {
        // With k = the list length the clipped DP solves the unclipped problem; it must agree
        // with the per-non-relevant decomposition (both discounts) on queries too long to
        // enumerate.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for trial in 0..200 {
            let n = rng.random_range(2..120);
            let tied = trial % 2 == 0;
            let scores: Vec<f64> = (0..n)
                .map(|_| {
                    if tied {
                        rng.random_range(0..4) as f64 * 0.02
                    } else {
                        rng.random_range(-0.3..0.3)
                    }
                })
                .collect();
            let mut relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.3)).collect();
            relevant[0] = true;
            relevant[n - 1] = false;
            for discount in [Discount::Log2, Discount::Paper] {
                let mut c = vec![0.0; n];
                let unclipped = hinge(
                    &NdcgOracle {
                        cutoff: None,
                        discount,
                    },
                    &scores,
                    &relevant,
                    &mut c,
                );
                let sorted = Sorted::new(&scores, &relevant);
                let d: Vec<f64> = (0..=n)
                    .map(|r| if r < n { discount.at(r) } else { 0.0 })
                    .collect();
                let p = sorted.p();
                let inv_ideal = 1.0 / d[..p].iter().sum::<f64>();
                let mut above = Vec::new();
                let mut buffers = ClipBuffers::default();
                clipped_positions(&sorted, &d, inv_ideal, n, &mut buffers, &mut above);
                encode_po(&sorted, &above, &mut c);
                let dcg: f64 = above.iter().enumerate().map(|(g, &a)| d[g + a]).sum();
                let dp = 1.0 - dcg * inv_ideal - crate::oracle::interface::dot(&c, &scores);
                assert!(
                    (unclipped - dp).abs() < 1e-10,
                    "{discount:?}: {unclipped} vs {dp}"
                );
            }
        }
    }

    #[test]
    fn ndcg_at_one_with_zero_scores() {
        // w = 0: only Delta counts. With k = 1 any ranking with a non-relevant document first
        // has NDCG@1 = 0, so the hinge is 1.
        let relevant = [true, false, true, false, false];
        let mut coef = [0.0; 5];
        let oracle = NdcgOracle {
            cutoff: Some(1),
            discount: Discount::Log2,
        };
        assert!((hinge(&oracle, &[0.0; 5], &relevant, &mut coef) - 1.0).abs() < 1e-15);
    }
}
