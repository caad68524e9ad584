//! DORM, Le & Smola's "Direct Optimization of Ranking Measures" (2007), as Chakrabarti et al.
//! (2008, sections 3.1.3 and 3.5) compare against it.
//!
//! Feature map: phi_dorm(x, y) = sum_i A(y(i)) x_i, with y(i) the 0-based rank of document i
//! and the decay profile A(r) = 1/sqrt(1 + r), set to 0 from rank `depth` on when a depth is
//! given (Chakrabarti et al. cut it at 30). Loss: Delta = 1 - NDCG@k with binary gains and the
//! discount D(r) = 1/log2(2 + r) (0 from rank k on).
//!
//! Target ranking. phi_dorm, unlike Psi_po, tells apart the orders within the relevant and
//! within the non-relevant documents, and the labels do not fix those orders. We take as y* the
//! label-consistent ranking that is best for the current scores (relevant documents by
//! descending score, then the others by descending score), so that a correctly separated query
//! costs nothing whatever the order inside each class. The price is that the hinge
//! max_y [Delta + w.phi(y)] - max_{y* consistent} w.phi(y*) is a difference of convex functions
//! of w: training DORM is a local method, unlike the other losses.
//!
//! Loss-augmented inference. Delta + w.phi(y) = 1 + sum_i [A(y(i)) s_i - z_i D(y(i)) / DCG*],
//! a linear assignment of documents to ranks. Only the first m = max(k, depth) ranks carry a
//! non-zero value (all n without cutoff or depth); the documents left over take the other ranks
//! in any order. So the oracle solves an m x n assignment by the Hungarian method (shortest
//! augmenting paths with potentials), O(m^2 n) time and O(n) memory: O(n^3) for "dorm", the
//! reason DORM is slow on long queries.

use crate::oracle::interface::Oracle;
use crate::oracle::interleave::split_sorted;
use crate::oracle::sorting::average_ties;

#[derive(Debug, Clone, Copy, Default)]
pub struct DormOracle {
    /// NDCG cutoff k (None: all ranks).
    pub cutoff: Option<usize>,
    /// A(r) = 0 for r >= depth (None: the decay never stops).
    pub depth: Option<usize>,
}

impl DormOracle {
    /// The decay profile A(r).
    pub fn decay(&self, r: usize) -> f64 {
        if self.depth.is_some_and(|d| r >= d) {
            0.0
        } else {
            1.0 / ((1 + r) as f64).sqrt()
        }
    }
}

impl Oracle for DormOracle {
    fn name(&self) -> String {
        let mut name = match self.cutoff {
            Some(k) => format!("dorm@{k}"),
            None => "dorm".to_string(),
        };
        if let Some(d) = self.depth {
            name.push_str(&format!(":depth={d}"));
        }
        name
    }

    /// The assignment of the first m = max(k, depth) ranks: m^2 n (n^3 without a cutoff and
    /// depth, or with a depth of n or more).
    fn extra_work(&self, n_docs: usize) -> f64 {
        let n = n_docs as f64;
        let k = self.cutoff.unwrap_or(n_docs).min(n_docs);
        let depth = self.depth.unwrap_or(n_docs).min(n_docs);
        let m = k.max(depth) as f64;
        m * m * n
    }

    /// A depth of 3k (k = 10 without a cutoff), then NDCG@k through its O(n log n) oracle.
    fn cheaper(&self) -> Vec<String> {
        let k = self.cutoff.unwrap_or(10);
        vec![format!("dorm@{k}:depth={}", 3 * k), format!("ndcg@{k}")]
    }

    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
        let n = scores.len();
        let k = self.cutoff.unwrap_or(n).min(n);
        let depth = self.depth.unwrap_or(n).min(n);
        let m = k.max(depth);
        let discount = |r: usize| {
            if r < k {
                1.0 / ((r + 2) as f64).log2()
            } else {
                0.0
            }
        };
        let (pos, neg) = split_sorted(scores, relevant);
        let ideal: f64 = (0..pos.len().min(k)).map(discount).sum();
        // value(r, i) = A(r) s_i - z_i D(r) / DCG*, maximized: minimize its negative.
        let decay: Vec<f64> = (0..m).map(|r| self.decay(r)).collect();
        let gain: Vec<f64> = (0..m).map(|r| discount(r) / ideal).collect();
        // Columns in a canonical order (relevant, then non-relevant, each by descending
        // score): when several assignments are optimal, the one found then depends only on the
        // scores and labels, not on the order the caller listed the documents in.
        let canonical: Vec<usize> = pos.iter().chain(&neg).copied().collect();
        let doc_of_rank: Vec<usize> = assign(m, n, |r, c| {
            let i = canonical[c];
            let loss = if relevant[i] { gain[r] } else { 0.0 };
            loss - decay[r] * scores[i]
        })
        .into_iter()
        .map(|c| canonical[c])
        .collect();
        // deltaPsi = phi(y*) - phi(ybar): c_i = A(rank in y*) - A(rank in ybar).
        for (r, &doc) in pos.iter().chain(&neg).enumerate() {
            coef[doc] = self.decay(r);
        }
        let mut dcg = 0.0;
        for (r, &doc) in doc_of_rank.iter().enumerate() {
            coef[doc] -= decay[r];
            if relevant[doc] {
                dcg += gain[r];
            }
        }
        // Tied documents of one class have identical rows in the assignment (and in y*).
        average_ties(&pos, scores, coef);
        average_ties(&neg, scores, coef);
        1.0 - dcg
    }
}

/// Minimum-cost assignment of `rows` rows to distinct columns among `cols >= rows`, with
/// cost(row, col) computed on demand: returns the column of every row.
///
/// The Hungarian method in its shortest-augmenting-path form (Kuhn 1955, Munkres 1957; see
/// Ahuja, Magnanti and Orlin, Network Flows, ch. 12): rows join one at a time; each join grows
/// a Dijkstra-like tree over the columns on reduced costs cost - u_row - v_col >= 0 until it
/// reaches a free column, updating the potentials so that the matched edges keep reduced cost
/// 0, then flips the path. Each join takes O(rows * cols), so O(rows^2 cols) in all.
pub fn assign(rows: usize, cols: usize, cost: impl Fn(usize, usize) -> f64) -> Vec<usize> {
    assert!(rows <= cols, "assign needs rows <= cols");
    // Index 0 of the column arrays is a virtual column holding the row being added; rows are
    // numbered from 1 in `row_of` so that 0 means "free".
    let mut u = vec![0.0f64; rows + 1];
    let mut v = vec![0.0f64; cols + 1];
    let mut row_of = vec![0usize; cols + 1];
    let mut via = vec![0usize; cols + 1];
    let mut min_reduced = vec![f64::INFINITY; cols + 1];
    let mut in_tree = vec![false; cols + 1];
    for row in 1..=rows {
        row_of[0] = row;
        let mut col = 0;
        min_reduced.fill(f64::INFINITY);
        in_tree.fill(false);
        loop {
            in_tree[col] = true;
            let i = row_of[col];
            let mut delta = f64::INFINITY;
            let mut next = 0;
            for j in 1..=cols {
                if in_tree[j] {
                    continue;
                }
                let reduced = cost(i - 1, j - 1) - u[i] - v[j];
                if reduced < min_reduced[j] {
                    min_reduced[j] = reduced;
                    via[j] = col;
                }
                if min_reduced[j] < delta {
                    delta = min_reduced[j];
                    next = j;
                }
            }
            for j in 0..=cols {
                if in_tree[j] {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else {
                    min_reduced[j] -= delta;
                }
            }
            col = next;
            if row_of[col] == 0 {
                break;
            }
        }
        // Flip the alternating path back to the virtual column.
        while col != 0 {
            let prev = via[col];
            row_of[col] = row_of[prev];
            col = prev;
        }
    }
    let mut col_of_row = vec![0usize; rows];
    for j in 1..=cols {
        if row_of[j] != 0 {
            col_of_row[row_of[j] - 1] = j - 1;
        }
    }
    col_of_row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::hinge;
    use crate::oracle::testing::{
        brute_force_max, for_each_permutation, log2_discount, ndcg_loss, random_query_with,
    };
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn assignment_matches_enumeration() {
        let mut rng = ChaCha8Rng::seed_from_u64(1955);
        for _ in 0..300 {
            let cols = rng.random_range(1..=7);
            let rows = rng.random_range(1..=cols);
            let cost: Vec<Vec<f64>> = (0..rows)
                .map(|_| {
                    (0..cols)
                        .map(|_| rng.random_range(-5..5) as f64 * 0.5)
                        .collect()
                })
                .collect();
            let got = assign(rows, cols, |i, j| cost[i][j]);
            let mut seen = vec![false; cols];
            for &c in &got {
                assert!(!seen[c], "column used twice");
                seen[c] = true;
            }
            let total: f64 = (0..rows).map(|i| cost[i][got[i]]).sum();
            let mut best = f64::INFINITY;
            for_each_permutation(cols, |perm| {
                best = best.min((0..rows).map(|i| cost[i][perm[i]]).sum());
            });
            assert!((total - best).abs() < 1e-12, "{total} vs {best}");
        }
    }

    #[test]
    fn matches_brute_force() {
        let mut rng = ChaCha8Rng::seed_from_u64(2007);
        for (cutoff, depth) in [
            (None, None),
            (Some(2), None),
            (Some(2), Some(3)),
            (None, Some(2)),
        ] {
            let oracle = DormOracle { cutoff, depth };
            for trial in 0..400 {
                let n = rng.random_range(2..=6);
                let count = match trial % 4 {
                    0 => Some(1),
                    1 => Some(n - 1),
                    _ => None,
                };
                let (scores, relevant) = random_query_with(&mut rng, n, count);
                let score_of = |perm: &[usize]| -> f64 {
                    perm.iter()
                        .enumerate()
                        .map(|(r, &d)| oracle.decay(r) * scores[d])
                        .sum()
                };
                // The best label-consistent ranking: every relevant document first.
                let p = relevant.iter().filter(|&&r| r).count();
                let target = brute_force_max(n, |perm| {
                    if perm[..p].iter().all(|&d| relevant[d]) {
                        score_of(perm)
                    } else {
                        f64::NEG_INFINITY
                    }
                });
                let brute = brute_force_max(n, |perm| {
                    let ranked: Vec<bool> = perm.iter().map(|&d| relevant[d]).collect();
                    ndcg_loss(&ranked, cutoff, log2_discount) + score_of(perm) - target
                });
                let mut coef = vec![0.0; n];
                let h = hinge(&oracle, &scores, &relevant, &mut coef);
                assert!(
                    (h - brute).abs() < 1e-10,
                    "{} scores {scores:?} relevant {relevant:?}: {h} vs {brute}",
                    oracle.name()
                );
            }
        }
    }
}
