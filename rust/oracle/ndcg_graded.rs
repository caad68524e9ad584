//! Graded NDCG ("ndcg@k:graded", "ndcg:graded"): the loss 1 - NDCG@k with the gain 2^grade - 1
//! of the metric, paired with the graded partial-order feature map. Exact.
//!
//! Grades. A document's grade is its label when it is relevant (label above the relevance
//! threshold) and 0 otherwise, the convention of `svmmap.metrics` (rust/metrics.rs), so that
//! the loss at w is 1 - the NDCG@k that the metrics report, and SVM^map's -1/+1 labels act as
//! 0/1. Gain 2^grade - 1, discount D(r) = 1/log2(2 + r) at the 0-based rank r (trec_eval's and
//! LETOR's, `Discount::Log2`), zero from rank K = min(k, n) on. DCG* (the ideal DCG) is that of
//! the query's grades sorted in descending order, cut at K as well, as the metrics do:
//!
//!   Delta(ybar) = 1 - DCG@K(ybar) / DCG*@K.
//!
//! A relevant label must be > 0 (a positive gain) and at most `metrics::MAX_EXP_GRADE` (2^label
//! overflows beyond); `check_grades` refuses other labels with one error naming the loss and
//! the label. A query is usable when it has two distinct grades and DCG* > 0, that is a
//! relevant document and a document of another grade (relevant or not).
//!
//! Feature map. With Z the number of pairs (i, j) of different grades, i above j in grade,
//!
//!   Psi(y) = 1/Z sum_{grade_i > grade_j} y_ij (x_i - x_j),   y_ij = +1 when i is ranked above j,
//!
//! which is Psi_po on binary grades (Z = P N). w.Psi(ybar) is then 1/Z times the sum over every
//! pair of documents of different grades of s_above - s_below, whichever of the two has the
//! higher grade; deltaPsi = Psi(y*) - Psi(ybar) = sum_i c_i x_i with
//! c_i = 2/Z (#lower-grade documents ranked above i - #higher-grade documents ranked below i).
//! The oracle maximizes H(ybar) = Delta(ybar) + w.Psi(ybar) - w.Psi(y*).
//!
//! Algorithm (exact; G = the query's distinct grades, n_g documents of grade g):
//!
//! 1. Within one grade, documents come in descending score order in some argmax. Exchanging two
//!    of them leaves Delta alone, and a higher position has at least as many documents of
//!    other grades below it and at most as many above, so the rearrangement inequality puts the
//!    higher score there. A ranking is thus an interleaving of G score-sorted lists, and the
//!    ranks 0..K are described by how many documents of each list they hold, c = (c_0, ...).
//! 2. Every pair of documents of different grades is settled when the upper one is placed.
//!    Placing document d of grade g at the next rank r = sum c puts it above every document not
//!    yet placed, and adds -gain_g D(r) / DCG* + 1/Z sum_{h != g} [(n_h - c_h) s_d - S_h(c_h)],
//!    with S_h(c) the sum of the scores of list h from position c on: O(1) per transition once
//!    the totals over h of the state are known (O(G) per state).
//! 3. From rank K on the loss is zero, so the documents left are best sorted by score (each
//!    pair of different grades among them then adds |s_i - s_j| / Z, its most). The bottom term
//!    B(c) = 1/Z sum_{g < h} T_gh(c_g, c_h), T_gh(a, b) = sum_{i >= a in g, j >= b in h}
//!    |s_i - s_j|, is tabled for a, b <= K by the recurrence T(a, b) = T(a + 1, b) +
//!    sum_{j >= b} |s_g[a] - s_h[j]|, each sum by a binary search in list h and its prefix
//!    sums (the table's last row by the same recurrence over b).
//! 4. A dynamic program over the states c with c_g <= min(n_g, K) and sum c <= K (stored in a
//!    mixed-radix array of S = prod_g (min(n_g, K) + 1) entries, visited in index order, in
//!    which a state's predecessors c - e_g come first) gives the best value V(c) of filling
//!    ranks 0..sum c; the argmax is the state with sum c = K that maximizes V(c) + B(c) (the
//!    full state when K = n, where B = 0). Its ranking is read back from the stored last moves,
//!    followed by the rest sorted by score (on equal scores the higher grade first, so that the
//!    result does not depend on the order of listing), and gives Delta and the coefficients.
//!
//! Cost O(n log n + G S + G^2 min(k, n)^2 log n), S <= (k + 1)^G; without a cutoff (K = n)
//! S = prod_g (n_g + 1) <= C(n + G, G), so "ndcg:graded" is practical for short queries or few
//! grades only, and the work guard (`work::check_query_labels`, from `extra_work_labels`) refuses
//! a query on which the work would exceed the budget of every oracle (`work::WORK_BUDGET`),
//! pointing at "ndcg@10:graded".
//!
//! As in every oracle, documents of one grade that tie in score share the mean of their
//! coefficients (`average_ties`); on binary labels the hinge equals that of "ndcg@k" (the
//! coefficients may differ where several rankings are optimal).

use crate::error::{Error, Result};
use crate::metrics::MAX_EXP_GRADE;
use crate::oracle::interface::Oracle;
use crate::oracle::ndcg::Discount;
use crate::oracle::sorting::{average_ties, descending_key, sort_descending};

#[derive(Debug, Clone, Copy, Default)]
pub struct GradedNdcgOracle {
    /// Ranks from k on earn nothing; None means no cutoff.
    pub cutoff: Option<usize>,
}

thread_local! {
    /// The dynamic program's values and last moves, per thread (see `argmax_grades`).
    static STATES: std::cell::RefCell<(Vec<f64>, Vec<u8>)> = std::cell::RefCell::default();
}

/// The most states whose arrays a thread keeps between queries: 11^5, every state of five
/// grades at the cutoff 10.
const KEPT_STATES: usize = 161_051;

/// The grade of a document: its label when relevant, else 0 (the metrics' convention).
#[inline]
fn grade(label: f64, relevant: bool) -> f64 {
    if relevant {
        label
    } else {
        0.0
    }
}

/// The distinct grades of a query in ascending order and how many documents have each.
fn grade_counts(labels: &[f64], relevant: &[bool]) -> (Vec<f64>, Vec<usize>) {
    let mut grades: Vec<f64> = labels
        .iter()
        .zip(relevant)
        .map(|(&l, &r)| grade(l, r))
        .collect();
    grades.sort_unstable_by(f64::total_cmp);
    let mut distinct: Vec<f64> = Vec::new();
    let mut counts: Vec<usize> = Vec::new();
    for g in grades {
        if distinct.last() == Some(&g) {
            *counts.last_mut().expect("a count per grade") += 1;
        } else {
            distinct.push(g);
            counts.push(1);
        }
    }
    (distinct, counts)
}

/// The steps of the dynamic program (step 4 of the module comment: G per state, for S
/// states) and of the bottom tables (step 3) for the given grade counts and cutoff K.
fn work_of(counts: &[usize], k: usize) -> f64 {
    let n: usize = counts.iter().sum();
    let g = counts.len() as f64;
    let states: f64 = counts.iter().map(|&c| (c.min(k) + 1) as f64).product();
    let tables = if k < n {
        g * g * ((k + 1) as f64).powi(2) * (n.max(2) as f64).log2()
    } else {
        0.0
    };
    g * states + tables
}

impl GradedNdcgOracle {
    /// K for a query of n documents.
    fn depth(&self, n: usize) -> usize {
        self.cutoff.map_or(n, |k| k.min(n))
    }

    /// The argmax for per-document grades; returns Delta and fills `coef`. A query with fewer
    /// than two grades or without a positive gain has no violated constraint: Delta 0, c = 0.
    fn argmax_grades(&self, scores: &[f64], grades: &[f64], coef: &mut [f64]) -> f64 {
        coef.iter_mut().for_each(|c| *c = 0.0);
        let Some(q) = self.graded_query(scores, grades) else {
            return 0.0;
        };
        let (top, cut) = self.best_top(&q);
        let n_grades = q.sizes.len();
        let mut ranking = top;
        let mut rest: Vec<usize> = (0..n_grades)
            .flat_map(|g| q.lists[g][cut[g]..].iter().copied())
            .collect();
        // Descending score, the higher grade first on equal scores, then the lists' order.
        rest.sort_by(|&a, &b| {
            descending_key(scores[a])
                .cmp(&descending_key(scores[b]))
                .then(q.level[b].cmp(&q.level[a]))
        });
        ranking.extend_from_slice(&rest);

        // Delta and c_i = 2/Z (#lower grade above i - #higher grade below i).
        let mut dcg = 0.0;
        for (r, &i) in ranking[..q.k].iter().enumerate() {
            dcg += q.gain[q.level[i]] * q.discount[r];
        }
        let mut seen = vec![0usize; n_grades];
        for &i in &ranking {
            let g = q.level[i];
            let lower_above: usize = seen[..g].iter().sum();
            let higher_below: usize = (g + 1..n_grades).map(|h| q.sizes[h] - seen[h]).sum();
            coef[i] = 2.0 * q.inv_z * (lower_above as f64 - higher_below as f64);
            seen[g] += 1;
        }
        for list in &q.lists {
            average_ties(list, scores, coef);
        }
        1.0 - dcg * q.inv_ideal
    }

    /// A query's documents by grade, with what the program needs of them; None when it has
    /// no violated constraint (fewer than two grades, no positive gain).
    fn graded_query(&self, scores: &[f64], grades: &[f64]) -> Option<GradedQuery> {
        let n = scores.len();
        let mut distinct: Vec<f64> = grades.to_vec();
        distinct.sort_unstable_by(f64::total_cmp);
        distinct.dedup();
        let n_grades = distinct.len();
        let top_gain = distinct.last().map_or(0.0, |&g| g.exp2() - 1.0);
        if n_grades < 2 || top_gain.is_nan() || top_gain <= 0.0 {
            return None;
        }
        let level: Vec<usize> = grades
            .iter()
            .map(|g| distinct.partition_point(|d| d < g))
            .collect();
        let gain: Vec<f64> = distinct.iter().map(|g| g.exp2() - 1.0).collect();
        // The documents of each grade by descending score (ties by index, as every oracle).
        let mut order: Vec<usize> = (0..n).collect();
        sort_descending(&mut order, scores);
        let mut lists: Vec<Vec<usize>> = vec![Vec::new(); n_grades];
        for &i in &order {
            lists[level[i]].push(i);
        }
        let sizes: Vec<usize> = lists.iter().map(Vec::len).collect();
        let k = self.depth(n);
        let discount: Vec<f64> = (0..k).map(|r| Discount::Log2.at(r)).collect();
        // DCG*: the grades in descending order over ranks 0..K.
        let mut ideal = 0.0;
        let mut r = 0;
        'fill: for g in (0..n_grades).rev() {
            for _ in 0..sizes[g] {
                if r == k {
                    break 'fill;
                }
                ideal += gain[g] * discount[r];
                r += 1;
            }
        }
        if ideal.is_nan() || ideal <= 0.0 {
            return None;
        }
        let same: usize = sizes.iter().map(|&m| m * m).sum();
        let list_scores: Vec<Vec<f64>> = lists
            .iter()
            .map(|l| l.iter().map(|&i| scores[i]).collect())
            .collect();
        // suffix[g][c] = S_g(c), the sum of list g's scores from position c on.
        let suffix: Vec<Vec<f64>> = list_scores
            .iter()
            .map(|s| {
                let mut out = vec![0.0; s.len() + 1];
                for c in (0..s.len()).rev() {
                    out[c] = out[c + 1] + s[c];
                }
                out
            })
            .collect();
        let caps: Vec<usize> = sizes.iter().map(|&m| m.min(k)).collect();
        Some(GradedQuery {
            n,
            k,
            level,
            gain,
            lists,
            sizes,
            discount,
            inv_ideal: 1.0 / ideal,
            // 1/Z, with Z = (n^2 - sum n_g^2) / 2 the pairs of different grades.
            inv_z: 2.0 / (n * n - same) as f64,
            list_scores,
            suffix,
            caps,
        })
    }

    /// The dynamic program over the grade counts of ranks 0..K: the documents of those ranks
    /// in rank order, and how many of each grade's list they take.
    fn best_top(&self, q: &GradedQuery) -> (Vec<usize>, Vec<usize>) {
        let (n, k, caps) = (q.n, q.k, &q.caps);
        let n_grades = q.sizes.len();
        let clipped = k < n;
        // The work guard (`work::check_labels`, run on every query before training or a hinge)
        // refuses queries with more states than a call may take, long before these products
        // overflow or the grades outnumber the moves a byte can store; a query that reached
        // here unchecked fails loudly instead of wrapping around.
        assert!(
            n_grades <= usize::from(u8::MAX),
            "{}: {n_grades} grades in one query (the work guard refuses them)",
            self.name()
        );
        let mut stride = vec![1usize; n_grades + 1];
        for g in 0..n_grades {
            stride[g + 1] = stride[g].checked_mul(caps[g] + 1).unwrap_or_else(|| {
                panic!(
                    "{}: too many states (the work guard refuses them)",
                    self.name()
                )
            });
        }
        let tables = if clipped {
            bottom_tables(&q.list_scores, caps)
        } else {
            Vec::new()
        };
        // The bottom term B(c) of a state with sum c = K.
        let bottom = |c: &[usize]| -> f64 {
            let mut total = 0.0;
            let mut t = 0;
            for g in 0..n_grades {
                for h in g + 1..n_grades {
                    total += tables[t][c[g] * (caps[h] + 1) + c[h]];
                    t += 1;
                }
            }
            total * q.inv_z
        };

        // The dynamic program over the valid states in index order (an odometer whose digit
        // g is c_g; a digit that would pass its cap or make sum c exceed K rolls over).
        // The state arrays are reused from query to query on each thread: every valid state is
        // written before it is read (its predecessors come first in index order), so they
        // need no clearing, and allocating them afresh (zeroed pages over the whole mixed-radix
        // range, most of which the valid states do not touch) cost more than the program.
        let n_states = stride[n_grades];
        let (mut value, mut last) = STATES.with(|cell| std::mem::take(&mut *cell.borrow_mut()));
        if value.len() < n_states {
            value.resize(n_states, 0.0);
            last.resize(n_states, u8::MAX);
        }
        value[0] = 0.0;
        let mut c = vec![0usize; n_grades];
        let mut placed = 0usize;
        let mut index = 0usize;
        let mut best: Option<(f64, usize)> = None;
        loop {
            if placed > 0 {
                let (v, arg) = q.best_move(&c, placed, index, &stride, &value);
                value[index] = v;
                last[index] = arg;
            }
            if placed == k {
                let total = if clipped {
                    value[index] + bottom(&c)
                } else {
                    value[index]
                };
                if best.is_none_or(|(b, _)| total > b) {
                    best = Some((total, index));
                }
            }
            // Next state.
            let mut g = 0;
            loop {
                if g == n_grades {
                    break;
                }
                if c[g] < caps[g] && placed < k {
                    c[g] += 1;
                    placed += 1;
                    index += stride[g];
                    break;
                }
                placed -= c[g];
                index -= c[g] * stride[g];
                c[g] = 0;
                g += 1;
            }
            if g == n_grades {
                break;
            }
        }
        let (_, mut index) = best.expect("a state fills ranks 0..K");

        // The ranking: ranks 0..K from the last moves.
        let cut: Vec<usize> = (0..n_grades)
            .map(|g| index / stride[g] % (caps[g] + 1))
            .collect();
        let mut c = cut.clone();
        let mut top = vec![0usize; k];
        for r in (0..k).rev() {
            let g = last[index] as usize;
            c[g] -= 1;
            top[r] = q.lists[g][c[g]];
            index -= stride[g];
        }
        // A thread keeps the arrays of at most `KEPT_STATES` states (about 2.4 MB), so that one
        // long query does not leave its program's memory behind.
        if value.capacity() <= KEPT_STATES {
            STATES.with(|cell| *cell.borrow_mut() = (value, last));
        }
        (top, cut)
    }
}

/// A query's documents by grade and what the program of `argmax_grades` needs of them.
struct GradedQuery {
    n: usize,
    /// The cutoff, clipped to n.
    k: usize,
    /// Every document's grade, as an index into the distinct grades (ascending).
    level: Vec<usize>,
    gain: Vec<f64>,
    /// The documents of each grade by descending score.
    lists: Vec<Vec<usize>>,
    sizes: Vec<usize>,
    discount: Vec<f64>,
    inv_ideal: f64,
    inv_z: f64,
    list_scores: Vec<Vec<f64>>,
    /// suffix[g][c]: the sum of list g's scores from position c on.
    suffix: Vec<Vec<f64>>,
    /// How many of each grade ranks 0..K can hold: min(n_g, K).
    caps: Vec<usize>,
}

impl GradedQuery {
    /// The best last move into the state with counts `c` (`placed` documents, at `index`):
    /// its value and the grade of the document placed last at rank placed - 1.
    fn best_move(
        &self,
        c: &[usize],
        placed: usize,
        index: usize,
        stride: &[usize],
        value: &[f64],
    ) -> (f64, u8) {
        // Totals over every grade of the documents not placed and of their scores.
        let unplaced = self.n - placed;
        let unplaced_sum: f64 = (0..c.len()).map(|h| self.suffix[h][c[h]]).sum();
        let r = placed - 1;
        let (mut v, mut arg) = (f64::NEG_INFINITY, u8::MAX);
        for g in 0..c.len() {
            if c[g] == 0 {
                continue;
            }
            let s_d = self.list_scores[g][c[g] - 1];
            let others = (unplaced - (self.sizes[g] - c[g])) as f64;
            let others_sum = unplaced_sum - self.suffix[g][c[g]];
            let step = -self.gain[g] * self.discount[r] * self.inv_ideal
                + (others * s_d - others_sum) * self.inv_z;
            let candidate = value[index - stride[g]] + step;
            if candidate > v {
                v = candidate;
                arg = g as u8;
            }
        }
        (v, arg)
    }
}

/// T_gh(a, b) = sum_{i >= a in list g, j >= b in list h} |s_i - s_j| for a <= caps[g],
/// b <= caps[h], one table per pair g < h (in the order (0,1), (0,2), ..., (1,2), ...), row a
/// at a * (caps[h] + 1).
fn bottom_tables(list_scores: &[Vec<f64>], caps: &[usize]) -> Vec<Vec<f64>> {
    // prefix[g][j] = sum of list g's first j scores.
    let prefix: Vec<Vec<f64>> = list_scores
        .iter()
        .map(|s| {
            let mut out = Vec::with_capacity(s.len() + 1);
            let mut sum = 0.0;
            out.push(0.0);
            for &v in s {
                sum += v;
                out.push(sum);
            }
            out
        })
        .collect();
    // sum_{j >= b in list h} |x - s_j|: the scores of list h are descending, those above x
    // come first.
    let spread = |x: f64, h: usize, b: usize| -> f64 {
        let s = &list_scores[h];
        let p = &prefix[h];
        let m = s.len();
        let q = s.partition_point(|&v| v > x).max(b);
        (p[q] - p[b]) - (q - b) as f64 * x + (m - q) as f64 * x - (p[m] - p[q])
    };
    let n_grades = list_scores.len();
    let mut tables = Vec::new();
    for g in 0..n_grades {
        for h in g + 1..n_grades {
            let (rows, cols) = (caps[g] + 1, caps[h] + 1);
            let mut t = vec![0.0; rows * cols];
            let a_last = caps[g];
            // Row caps[g]: the corner by direct sums, then b downwards.
            let corner: f64 = list_scores[g][a_last..]
                .iter()
                .map(|&x| spread(x, h, caps[h]))
                .sum();
            t[a_last * cols + caps[h]] = corner;
            for b in (0..caps[h]).rev() {
                t[a_last * cols + b] =
                    t[a_last * cols + b + 1] + spread(list_scores[h][b], g, a_last);
            }
            for a in (0..a_last).rev() {
                for b in 0..cols {
                    t[a * cols + b] = t[(a + 1) * cols + b] + spread(list_scores[g][a], h, b);
                }
            }
            tables.push(t);
        }
    }
    tables
}

impl Oracle for GradedNdcgOracle {
    fn name(&self) -> String {
        match self.cutoff {
            Some(k) => format!("ndcg@{k}:graded"),
            None => "ndcg:graded".to_string(),
        }
    }

    /// Binary relevance: grades 1 and 0.
    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
        let grades: Vec<f64> = relevant.iter().map(|&r| f64::from(u8::from(r))).collect();
        self.argmax_grades(scores, &grades, coef)
    }

    fn argmax_labels(
        &self,
        scores: &[f64],
        labels: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        let grades: Vec<f64> = labels
            .iter()
            .zip(relevant)
            .map(|(&l, &r)| grade(l, r))
            .collect();
        self.argmax_grades(scores, &grades, coef)
    }

    /// Two distinct grades and a positive ideal DCG (a relevant document with a positive gain).
    fn usable(&self, labels: &[f64], relevant: &[bool]) -> bool {
        let (distinct, _) = grade_counts(labels, relevant);
        distinct.len() >= 2 && distinct.last().is_some_and(|&g| g > 0.0)
    }

    fn graded(&self) -> bool {
        true
    }

    /// The least work of a usable query of `n_docs` documents: two grades, one document of
    /// one of them. The length alone does not bound the work from above (it grows with the
    /// number of grades and their sizes), so the guard (`work::check_query_len`) refuses only
    /// the lengths on which no query could be done, and `work::check_query_labels` checks
    /// every query with its own grades.
    fn extra_work(&self, n_docs: usize) -> f64 {
        if n_docs < 2 {
            return 0.0;
        }
        work_of(&[n_docs - 1, 1], self.depth(n_docs))
    }

    /// With a cutoff, the binary NDCG@k (O(n log n + k^2)); without one, the graded loss at
    /// the cutoff 10, as LETOR reports NDCG@10, then the binary NDCG.
    fn cheaper(&self) -> Vec<String> {
        match self.cutoff {
            Some(k) => vec![format!("ndcg@{k}")],
            None => vec!["ndcg@10:graded".to_string(), "ndcg".to_string()],
        }
    }

    fn check_grades(&self, labels: &[f64], relevant: &[bool]) -> Result<()> {
        for (&label, &r) in labels.iter().zip(relevant) {
            if r && !(label > 0.0 && label <= MAX_EXP_GRADE) {
                return Err(Error::param(
                    &format!("the labels of loss={:?}", self.name()),
                    &format!(
                        "in (0, {MAX_EXP_GRADE}] on relevant documents: its gain 2^label - 1 \
                         must be positive and finite (set relevance_threshold to 0 or more, or \
                         shift the labels)"
                    ),
                    format!("a relevant document with label {label}"),
                ));
            }
        }
        Ok(())
    }

    /// The program keeps a value (8 bytes) and a move (1 byte) per state; within the work
    /// budget that can still be hundreds of megabytes (two grades without a cutoff), which
    /// must fit beside what the rest of training holds.
    fn check_memory(&self, labels: &[f64], relevant: &[bool]) -> Result<()> {
        let (_, counts) = grade_counts(labels, relevant);
        let n = labels.len();
        let states: f64 = counts
            .iter()
            .map(|&c| (c.min(self.depth(n)) + 1) as f64)
            .product();
        crate::runtime::memory::check_call((states * 9.0) as u64, || {
            (
                format!(
                    "{:?} on a query of {n} documents with {} grades",
                    self.name(),
                    counts.len()
                ),
                match self.cutoff {
                    None => "use \"ndcg@10:graded\"".to_string(),
                    Some(_) => "use a smaller cutoff".to_string(),
                },
            )
        })
    }

    fn extra_work_labels(&self, labels: &[f64], relevant: &[bool]) -> f64 {
        let (_, counts) = grade_counts(labels, relevant);
        work_of(&counts, self.depth(labels.len()))
    }
}

#[cfg(test)]
mod tests;
