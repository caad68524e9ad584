//! Interleavings of the relevant and the non-relevant documents, shared by the oracles that use
//! the partial-order feature map Psi_po (map, ndcg, roc).
//!
//! Notation (0-based throughout). The relevant documents ("goods") are sorted by descending
//! score, s+_0 >= ... >= s+_{P-1}; so are the non-relevant ones, s-_0 >= ... >= s-_{N-1}.
//! When the loss depends only on which ranks hold relevant documents (MAP, NDCG, ROC area,
//! RR), some argmax ranking keeps both lists in score order (Yue et al. Observation 1: among
//! rankings with the same relevance pattern, sorting each class by score maximizes w.Psi_po, by
//! the rearrangement inequality). Such a ranking is described either by
//!
//! - `above[g]`, the number of non-relevant documents ranked above good g (non-decreasing), or
//! - `o[j]`, the index of the first good ranked below non-relevant j (P when none is; non-
//!   decreasing), Yue et al.'s o_j.
//!
//! Relative to the ideal ranking, moving non-relevant j above goods i..P-1 changes
//! H = Delta + w.Psi(y) - w.Psi(y*) by
//!
//!   F_j(i) = sum_{g=i}^{P-1} [l_g(j+1) - l_g(j)] - 2 / (P N) sum_{g=i}^{P-1} (s+_g - s-_j),
//!
//! where l_g(a) is the loss contribution of good g with a non-relevant documents above it
//! (the loss must be such a sum over goods: "separable"). Then H(o) = sum_j F_j(o_j) for every
//! non-decreasing o, because the non-relevant documents above good g are exactly j < above[g].
//! When every l_g is concave in a (its increments do not grow), the largest argmax of F_j is
//! non-decreasing in j (Yue et al. Lemma 1 and Theorem 2, whose proof only uses concavity and
//! the score order), so maximizing each F_j on its own gives a feasible, hence optimal, o.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::oracle::sorting::{average_ties, descending_key, sort_descending};

/// The documents of one query split by relevance, each class sorted by descending score.
/// Equal scores keep index order, so the result never depends on the sort's internals.
///
/// A `Sorted` can be refilled for the next query (`fill`), so that a pass over
/// many queries reuses its buffers instead of allocating them per query.
#[derive(Debug, Clone, Default)]
pub struct Sorted {
    pub pos: Vec<usize>,
    pub neg: Vec<usize>,
    pub sp: Vec<f64>,
    pub sn: Vec<f64>,
    /// Whether two documents of the class have equal scores (`average_ties`).
    pos_ties: bool,
    neg_ties: bool,
    /// Each class's documents as packed keys (see `fill`), the sort's working buffers.
    keys_pos: Vec<u64>,
    keys_neg: Vec<u64>,
}

impl Sorted {
    pub fn new(scores: &[f64], relevant: &[bool]) -> Self {
        let mut sorted = Sorted::default();
        sorted.fill(scores, relevant);
        sorted
    }

    /// Sorts the query given by `scores` and `relevant` into `self`: each class by
    /// descending score, equal scores by index.
    ///
    /// The order is that of the pairs (descending_key(score), index), but the sort moves one
    /// u64 per document instead of a pair: the key's low `b` bits are replaced by the index,
    /// where `b` bits hold every index of the query (7 for 120 documents). Packed keys order
    /// the documents exactly when no two keys differ only in their low `b` bits; the runs of
    /// packed keys whose high bits are equal are sorted again by their full pairs, so the
    /// result is the pairs' order in every case (scores within 2^b units in the last place
    /// of each other are rare, and a run is usually two documents).
    pub fn fill(&mut self, scores: &[f64], relevant: &[bool]) {
        let bits = usize::BITS - scores.len().saturating_sub(1).leading_zeros();
        let high = u64::MAX.checked_shl(bits).unwrap_or(0);
        // Every key is written to both classes and only the count of its own class advances,
        // which avoids a branch on relevance that mixed classes would mispredict half the time.
        let n = scores.len();
        assert_eq!(relevant.len(), n, "one relevance flag per score");
        self.keys_pos.clear();
        self.keys_pos.resize(n, 0);
        self.keys_neg.clear();
        self.keys_neg.resize(n, 0);
        let (mut n_pos, mut n_neg) = (0, 0);
        for (i, (&score, &rel)) in scores.iter().zip(relevant).enumerate() {
            let key = (descending_key(score) & high) | i as u64;
            self.keys_pos[n_pos] = key;
            self.keys_neg[n_neg] = key;
            n_pos += usize::from(rel);
            n_neg += usize::from(!rel);
        }
        self.keys_pos.truncate(n_pos);
        self.keys_neg.truncate(n_neg);
        for (keys, idx, values) in [
            (&mut self.keys_pos, &mut self.pos, &mut self.sp),
            (&mut self.keys_neg, &mut self.neg, &mut self.sn),
        ] {
            keys.sort_unstable();
            idx.clear();
            idx.extend(keys.iter().map(|&k| (k & !high) as usize));
            sort_runs(keys, high, idx, scores);
            values.clear();
            values.extend(idx.iter().map(|&i| scores[i]));
        }
        // Equal scores are adjacent in the sorted lists.
        let tied = |values: &[f64]| values.windows(2).any(|pair| pair[0] == pair[1]);
        self.pos_ties = tied(&self.sp);
        self.neg_ties = tied(&self.sn);
    }

    /// `average_ties` over both classes: the coefficients of documents of one class with
    /// equal scores are replaced by their mean (a class without equal scores is left as is,
    /// which is what `average_ties` would do with it).
    pub fn average_ties(&self, scores: &[f64], coef: &mut [f64]) {
        if self.pos_ties {
            average_ties(&self.pos, scores, coef);
        }
        if self.neg_ties {
            average_ties(&self.neg, scores, coef);
        }
    }

    /// Whether two non-relevant documents have equal scores.
    pub fn neg_ties(&self) -> bool {
        self.neg_ties
    }

    pub fn p(&self) -> usize {
        self.pos.len()
    }

    pub fn n(&self) -> usize {
        self.neg.len()
    }
}

/// Sorts again, by (descending_key(score), index), each run of `keys` (sorted packed keys,
/// see `Sorted::fill`) whose bits under `high` are all equal, in the same places of `idx`.
/// A run of equal scores is already in index order, the pairs' order, and is left as it is.
fn sort_runs(keys: &[u64], high: u64, idx: &mut [usize], scores: &[f64]) {
    let pair = |i: usize| (descending_key(scores[i]), i);
    let mut start = 0;
    for end in 1..=keys.len() {
        if end < keys.len() && (keys[end] ^ keys[start]) & high == 0 {
            continue;
        }
        let run = &mut idx[start..end];
        if !run.windows(2).all(|w| pair(w[0]) < pair(w[1])) {
            sort_descending(run, scores);
        }
        start = end;
    }
}

/// above[g] = #{j : o[j] <= g}, the non-relevant documents ranked above good g.
pub(crate) fn above_from_positions(opt: &[usize], p: usize) -> Vec<usize> {
    let mut above = Vec::new();
    above_from_positions_into(opt, p, &mut above);
    above
}

/// `above_from_positions` into `above`.
pub(crate) fn above_from_positions_into(opt: &[usize], p: usize, above: &mut Vec<usize>) {
    above.clear();
    above.resize(p + 1, 0);
    for &o in opt {
        above[o] += 1;
    }
    for g in 1..=p {
        above[g] += above[g - 1];
    }
    above.truncate(p);
}

/// Fills the coefficients of deltaPsi_po = Psi_po(y*) - Psi_po(ybar) for the interleaving given
/// by `above` (non-decreasing): c = 2 above[g] / (P N) for good g, and
/// c = -2 #{goods below} / (P N) for a non-relevant document, since each inverted pair (g, j)
/// turns y_gj from +1 to -1 and so contributes 2 (x_g - x_j) / (P N) to deltaPsi.
pub(crate) fn encode_po(sorted: &Sorted, above: &[usize], coef: &mut [f64]) {
    let (p, n) = (sorted.p(), sorted.n());
    let scale = 2.0 / (p as f64 * n as f64);
    for (&doc, &a) in sorted.pos.iter().zip(above) {
        coef[doc] = scale * a as f64;
    }
    // Goods with above[g] <= j are ranked above non-relevant j; `g` counts them.
    let mut g = 0;
    for (j, &doc) in sorted.neg.iter().enumerate() {
        while g < p && above[g] <= j {
            g += 1;
        }
        coef[doc] = -scale * (p - g) as f64;
    }
}

/// A loss that is a sum over goods of l_g(above[g]) (see the module comment).
pub(crate) trait SeparableLoss {
    /// l_g(j + 1) - l_g(j).
    fn increase(&self, g: usize, j: usize) -> f64;
    /// sum_{g=i}^{P-1} [l_g(j + 1) - l_g(j)], in O(1).
    fn increase_from(&self, i: usize, j: usize) -> f64;
}

/// The score side of F_j(i): -2 / (P N) sum_{g >= i} (s+_g - s-_j), from suffix sums of s+.
pub(crate) struct ScoreTerms<'a> {
    sn: &'a [f64],
    /// suffix[i] = sum_{g >= i} s+_g, with suffix[P] = 0.
    suffix: Vec<f64>,
    scale: f64,
}

impl<'a> ScoreTerms<'a> {
    pub fn new(sorted: &'a Sorted) -> Self {
        Self::with_buffer(sorted, Vec::new())
    }

    /// `new`, with the suffix sums in `buffer` (`into_buffer` gives it back).
    pub fn with_buffer(sorted: &'a Sorted, mut suffix: Vec<f64>) -> Self {
        let p = sorted.p();
        suffix.clear();
        suffix.resize(p + 1, 0.0);
        for g in (0..p).rev() {
            suffix[g] = suffix[g + 1] + sorted.sp[g];
        }
        ScoreTerms {
            sn: &sorted.sn,
            suffix,
            scale: 2.0 / (p as f64 * sorted.n() as f64),
        }
    }

    fn p(&self) -> usize {
        self.suffix.len() - 1
    }

    pub fn into_buffer(self) -> Vec<f64> {
        self.suffix
    }

    /// F_j(i) for a separable loss.
    #[inline]
    pub fn value<L: SeparableLoss>(&self, loss: &L, i: usize, j: usize) -> f64 {
        let count = (self.p() - i) as f64;
        loss.increase_from(i, j) - self.scale * (self.suffix[i] - count * self.sn[j])
    }

    /// H(o) = sum_j F_j(o_j).
    pub fn total<L: SeparableLoss>(&self, loss: &L, opt: &[usize]) -> f64 {
        opt.iter()
            .enumerate()
            .map(|(j, &i)| self.value(loss, i, j))
            .sum()
    }
}

/// o_j by Yue et al.'s Algorithm 2: for every non-relevant j on its own, the largest argmax
/// of F_j, accumulating F_j(i) from i = P down. O(P N).
pub(crate) fn positions_greedy<L: SeparableLoss>(loss: &L, sorted: &Sorted) -> Vec<usize> {
    let mut opt = Vec::new();
    positions_greedy_into(loss, sorted, &mut opt);
    opt
}

/// `positions_greedy` into `opt`.
pub(crate) fn positions_greedy_into<L: SeparableLoss>(
    loss: &L,
    sorted: &Sorted,
    opt: &mut Vec<usize>,
) {
    let (sp, sn) = (&sorted.sp, &sorted.sn);
    let p = sp.len();
    let scale = 2.0 / (p as f64 * sn.len() as f64);
    opt.clear();
    opt.extend(sn.iter().enumerate().map(|(j, &s_neg)| {
        let (mut acc, mut best, mut arg) = (0.0f64, 0.0f64, p);
        for g in (0..p).rev() {
            acc += loss.increase(g, j) - scale * (sp[g] - s_neg);
            if acc > best {
                best = acc;
                arg = g;
            }
        }
        arg
    }));
}

/// The same largest argmaxes, found by divide and conquer over j: since they are non-decreasing
/// in j, the argmax for the middle j splits the range of i left to search for the j below and
/// above it. Each level of the recursion scans at most P + (its number of j) values of i, each
/// in O(1), so the total is O(P log N + N); a range of j whose range of i has shrunk to one
/// value is filled without evaluating anything.
///
/// `lowest` restricts every o_j to lowest..=P; the first `fixed` non-relevant documents get
/// o_j = 0 (they are ranked above every good). Both serve losses that are concave only from
/// the second rank on (ndcg.rs).
pub(crate) fn positions_fast<L: SeparableLoss>(
    loss: &L,
    terms: &ScoreTerms<'_>,
    lowest: usize,
    fixed: usize,
) -> Vec<usize> {
    let mut opt = Vec::new();
    positions_fast_into(loss, terms, lowest, fixed, &mut opt, &mut Vec::new());
    opt
}

/// The ranges `positions_fast` has left to search: (j range, i range).
pub(crate) type SearchStack = Vec<(usize, usize, usize, usize)>;

/// `positions_fast` into `opt`, with `stack` as its working space.
pub(crate) fn positions_fast_into<L: SeparableLoss>(
    loss: &L,
    terms: &ScoreTerms<'_>,
    lowest: usize,
    fixed: usize,
    opt: &mut Vec<usize>,
    stack: &mut SearchStack,
) {
    let n = terms.sn.len();
    let p = terms.p();
    opt.clear();
    opt.resize(n, 0);
    let fixed = fixed.min(n);
    // An explicit stack of (j range, i range) keeps the depth independent of N.
    stack.clear();
    stack.push((fixed, n, lowest.min(p), p));
    while let Some((jlo, jhi, ilo, ihi)) = stack.pop() {
        if jlo >= jhi {
            continue;
        }
        if ilo == ihi {
            // Only one position is left for the whole range: no need to evaluate anything.
            // With few relevant documents this settles most of the j quickly.
            opt[jlo..jhi].fill(ilo);
            continue;
        }
        let mid = jlo + (jhi - jlo) / 2;
        let mut best_i = ihi;
        let mut best = terms.value(loss, ihi, mid);
        for i in (ilo..ihi).rev() {
            let v = terms.value(loss, i, mid);
            if v > best {
                best = v;
                best_i = i;
            }
        }
        opt[mid] = best_i;
        stack.push((jlo, mid, ilo, best_i));
        stack.push((mid + 1, jhi, best_i, ihi));
    }
}

/// Per-thread working arrays of the oracles (map.rs, ndcg.rs) are reused from query to query;
/// one grown past this many entries by a long query is released after it, so that a thread
/// does not keep the memory of the longest query it ever met.
const KEPT_BUFFER_LEN: usize = 1 << 16;

/// Releases `buffer` when a long query grew it past `KEPT_BUFFER_LEN` entries.
pub(crate) fn release_if_large<T>(buffer: &mut Vec<T>) {
    if buffer.capacity() > KEPT_BUFFER_LEN {
        *buffer = Vec::new();
    }
}

/// Harmonic numbers up to this index are computed once and shared (32 KiB), so that queries
/// of up to this many documents, nearly all of them, do not sum them again at every pass.
const SHARED_HARMONIC: usize = 4095;

/// H(0..=n), borrowed from the shared table when n is within it. Entry i of
/// `harmonic_numbers(n)` depends only on i (the sums run upwards), so the table's prefix is
/// `harmonic_numbers(n)` bit for bit.
pub(crate) fn harmonic_prefix(n: usize) -> Cow<'static, [f64]> {
    static TABLE: OnceLock<Vec<f64>> = OnceLock::new();
    if n <= SHARED_HARMONIC {
        Cow::Borrowed(&TABLE.get_or_init(|| harmonic_numbers(SHARED_HARMONIC))[..=n])
    } else {
        Cow::Owned(harmonic_numbers(n))
    }
}

/// Harmonic numbers H(0..=n), summed with Kahan compensation so that differences of large
/// ones keep their accuracy.
pub(crate) fn harmonic_numbers(n: usize) -> Vec<f64> {
    let mut h = Vec::with_capacity(n + 1);
    h.push(0.0);
    let (mut sum, mut carry) = (0.0f64, 0.0f64);
    for i in 1..=n {
        let term = 1.0 / i as f64 - carry;
        let next = sum + term;
        carry = (next - sum) - term;
        sum = next;
        h.push(sum);
    }
    h
}

/// Indices of the relevant and of the non-relevant documents, each sorted by descending score.
/// Equal scores keep index order, so the result never depends on the sort's internals.
pub(crate) fn split_sorted(scores: &[f64], relevant: &[bool]) -> (Vec<usize>, Vec<usize>) {
    let sorted = Sorted::new(scores, relevant);
    (sorted.pos, sorted.neg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_counts_inverted_pairs() {
        // Goods g0 (doc 0), g1 (doc 2); non-relevant j0 (doc 1), j1 (doc 3). above = [1, 2]:
        // ranking j0 g0 j1 g1. Inverted pairs: (g0,j0), (g1,j0), (g1,j1). P N = 4.
        // c_g0 = 2*1/4, c_g1 = 2*2/4; j0 has 2 goods below: -2*2/4; j1 has 1: -2/4.
        let sorted = Sorted::new(&[4.0, 3.0, 2.0, 1.0], &[true, false, true, false]);
        let mut coef = [0.0; 4];
        encode_po(&sorted, &[1, 2], &mut coef);
        assert_eq!(coef, [0.5, -1.0, 1.0, -0.5]);
        assert_eq!(above_from_positions(&[0, 1], 2), vec![1, 2]);
    }

    #[test]
    fn shared_harmonic_numbers_equal_fresh_ones_bit_for_bit() {
        for n in (0..50).chain([4094, 4095, 4096, 5000]) {
            let shared: Vec<u64> = harmonic_prefix(n).iter().map(|v| v.to_bits()).collect();
            let fresh: Vec<u64> = harmonic_numbers(n).iter().map(|v| v.to_bits()).collect();
            assert_eq!(shared, fresh, "n {n}");
        }
    }

    #[test]
    fn only_buffers_grown_past_the_limit_are_released() {
        let mut small: Vec<f64> = Vec::with_capacity(KEPT_BUFFER_LEN);
        release_if_large(&mut small);
        assert_eq!(small.capacity(), KEPT_BUFFER_LEN);
        let mut large: Vec<f64> = vec![0.0; KEPT_BUFFER_LEN + 1];
        release_if_large(&mut large);
        assert_eq!(large.capacity(), 0);
    }

    #[test]
    fn harmonic_numbers_by_hand() {
        let h = harmonic_numbers(4);
        let expected = [0.0, 1.0, 1.5, 1.5 + 1.0 / 3.0, 1.5 + 1.0 / 3.0 + 0.25];
        for (a, b) in h.iter().zip(expected) {
            assert!((a - b).abs() < 1e-15);
        }
    }
}

/// The order of `split_sorted`, `sort_descending` and `Sorted` against its definition.
#[cfg(test)]
mod order_tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The order split_sorted must give, by the definition: indices sorted with total_cmp on
    /// descending scores, the two zeros being one score, equal scores by index.
    fn by_definition(scores: &[f64], relevant: &[bool], want: bool) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..scores.len()).filter(|&i| relevant[i] == want).collect();
        let zero_is_zero = |s: f64| if s == 0.0 { 0.0 } else { s };
        idx.sort_by(|&a, &b| {
            zero_is_zero(scores[b])
                .total_cmp(&zero_is_zero(scores[a]))
                .then(a.cmp(&b))
        });
        idx
    }

    #[test]
    fn split_sorted_orders_scores_a_few_units_in_the_last_place_apart() {
        // Sorted::fill sorts keys whose low bits hold the document's index (7 bits for up to
        // 128 documents, 9 for 300), and sorts again the runs that agree above those bits.
        // Scores that differ only in those low bits, equal ones mixed in, in both signs and
        // around zero, must still come out in the definition's order.
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        for case in 0..400 {
            // Lengths at the edges of the index's bits (128 documents need 7, 129 need 8).
            let n = [128, 129, 256, 257]
                .get(case / 5)
                .copied()
                .unwrap_or(rng.random_range(2..300));
            let base: f64 = [1.0, -1.0, 0.0, 3.5e-300, -2.0e10][case % 5];
            let scores: Vec<f64> = (0..n)
                .map(|_| {
                    let ulps = rng.random_range(-600i64..600);
                    let mut v = base;
                    for _ in 0..ulps.unsigned_abs() {
                        v = if ulps > 0 { v.next_up() } else { v.next_down() };
                    }
                    if rng.random_bool(0.2) {
                        base
                    } else {
                        v
                    }
                })
                .collect();
            let relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.4)).collect();
            let (pos, neg) = split_sorted(&scores, &relevant);
            assert_eq!(pos, by_definition(&scores, &relevant, true), "case {case}");
            assert_eq!(neg, by_definition(&scores, &relevant, false), "case {case}");
        }
    }

    #[test]
    fn split_sorted_orders_as_total_cmp_with_ties_by_index() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Few distinct values, so that ties are frequent, and the values total_cmp orders
        // specially: both zeros, infinities, NaNs of both signs, subnormals.
        let special = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MIN_POSITIVE / 4.0,
            -f64::MIN_POSITIVE / 4.0,
            f64::MAX,
            f64::MIN,
        ];
        for case in 0..500 {
            let n = rng.random_range(0..60);
            let scores: Vec<f64> = (0..n)
                .map(|_| match rng.random_range(0..4) {
                    0 => special[rng.random_range(0..special.len())],
                    1 => rng.random_range(-3..3) as f64,
                    _ => rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-5..5)),
                })
                .collect();
            let relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.4)).collect();
            let (pos, neg) = split_sorted(&scores, &relevant);
            assert_eq!(pos, by_definition(&scores, &relevant, true), "case {case}");
            assert_eq!(neg, by_definition(&scores, &relevant, false), "case {case}");
            let mut all: Vec<usize> = (0..n).rev().collect();
            sort_descending(&mut all, &scores);
            assert_eq!(
                all,
                by_definition(&scores, &vec![true; n], true),
                "case {case}"
            );
        }
    }

    #[test]
    fn sorted_average_ties_skips_only_classes_without_equal_scores() {
        // `Sorted::average_ties` skips a class in which no two scores compare equal; it must
        // give what `average_ties` on both classes gives, with -0.0 = 0.0 (equal, different
        // sort keys) and NaN (never equal) among the scores.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for case in 0..2000 {
            let n = rng.random_range(1..40);
            let pool = [0.0, -0.0, f64::NAN, 1.5, -2.0];
            let scores: Vec<f64> = (0..n)
                .map(|_| match rng.random_range(0..3) {
                    0 => pool[rng.random_range(0..pool.len())],
                    _ => rng.random_range(-1.0..1.0),
                })
                .collect();
            let relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.5)).collect();
            let coef: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let sorted = Sorted::new(&scores, &relevant);
            let mut expected = coef.clone();
            average_ties(&sorted.pos, &scores, &mut expected);
            average_ties(&sorted.neg, &scores, &mut expected);
            let mut got = coef.clone();
            sorted.average_ties(&scores, &mut got);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&expected), "case {case}");
        }
    }

    #[test]
    fn a_refilled_sorted_equals_a_fresh_one() {
        // A pass refills one `Sorted` query after query; nothing of a longer or differently
        // split query may remain in it.
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut sorted = Sorted::default();
        for case in 0..400 {
            let n = rng.random_range(0..300);
            let scores: Vec<f64> = (0..n)
                .map(|_| match rng.random_range(0..3) {
                    0 => rng.random_range(-3..3) as f64,
                    1 => [f64::NAN, -0.0, 0.0, f64::INFINITY][rng.random_range(0..4)],
                    _ => rng.random_range(-1.0..1.0),
                })
                .collect();
            let relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.4)).collect();
            sorted.fill(&scores, &relevant);
            let (pos, neg) = (
                by_definition(&scores, &relevant, true),
                by_definition(&scores, &relevant, false),
            );
            assert_eq!(sorted.pos, pos, "case {case}");
            assert_eq!(sorted.neg, neg, "case {case}");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let sp: Vec<f64> = pos.iter().map(|&i| scores[i]).collect();
            let sn: Vec<f64> = neg.iter().map(|&i| scores[i]).collect();
            assert_eq!(bits(&sorted.sp), bits(&sp), "case {case}");
            assert_eq!(bits(&sorted.sn), bits(&sn), "case {case}");
        }
    }
}
