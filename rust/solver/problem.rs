//! The training problem on this machine and the cuts it gives.
//!
//! `RankingProblem` prepares the training queries once: relevance and labels in grouped order,
//! which queries can contribute constraints (the rule is `oracle::usable`) and the
//! optional per-query weights. `RankingProblem::cut_sums` is the oracle pass: at w it scores
//! every document (X w), runs the oracle of every slack group on every usable query in parallel
//! and returns, per group, sum_q Delta_q and sum_q deltaPsi_q = X^T c of the most violated
//! constraints, in one pass over X. `CutSource` is what the cutting-plane methods ask for cuts
//! (the averages over the n usable queries, see mod.rs); `QueryCuts` is its implementation on
//! one machine.
//!
//! Sums over queries are taken in fixed blocks of queries added in order, so the result is the
//! same for any number of threads.

use rayon::prelude::*;
use std::ops::Range;

use crate::data::{QueryGroups, RowMatrix};
use crate::error::{Error, Result};
use crate::oracle::{Oracle, QueryCounts, QueryUse, Sorted};

/// Where cutting planes come from. `cuts(w)` returns, for every slack group, the averaged cut
/// (b, g) = (1/n sum_q Delta_q(ybar_q), 1/n sum_q deltaPsi_q(ybar_q)) of the most violated
/// constraints at w (with several cut blocks, one such cut per block, whose sum over the blocks
/// is that cut). The local implementation is `QueryCuts`; a distributed one may sum the
/// parts of several machines.
pub trait CutSource {
    /// Dimension of w.
    fn dim(&self) -> usize;
    /// Number of slack groups (losses with separate slacks).
    fn n_groups(&self) -> usize;
    /// Number of cut blocks: `cuts` returns n_blocks * n_groups cuts, block k's group s at
    /// index k * n_groups + s, each the block's part of the group's risk (its Delta and
    /// deltaPsi summed over the block's queries, divided by n of all blocks).
    fn n_blocks(&self) -> usize {
        1
    }
    fn cuts(&mut self, w: &[f64]) -> Result<Vec<(f64, Vec<f64>)>>;
}

/// Training queries prepared once: binary relevance in grouped order and which queries have
/// both relevant and non-relevant documents.
pub struct RankingProblem<'a, M: RowMatrix + ?Sized> {
    x: &'a M,
    groups: &'a QueryGroups,
    relevant: Vec<bool>,
    /// The labels in grouped order, for graded losses (`Oracle::argmax_labels`).
    labels: Vec<f64>,
    usable: Vec<bool>,
    /// Usable only by some losses (see `admit`), which are asked query by query.
    partial: Vec<bool>,
    /// Per-query weights s_q in grouped order (`set_weights`); None is s_q = 1 for every query.
    weights: Option<Vec<f64>>,
    /// The first query of each cut block (`split_into_blocks`); [0] is one block, the 1-slack
    /// model.
    block_starts: Vec<usize>,
    pub counts: QueryCounts,
}

impl<'a, M: RowMatrix + ?Sized> RankingProblem<'a, M> {
    pub fn new(x: &'a M, labels: &[f64], groups: &'a QueryGroups, threshold: f64) -> Result<Self> {
        let n_rows = x.n_rows();
        if labels.len() != n_rows || groups.n_rows() != n_rows {
            return Err(Error::input(format!(
                "X has {n_rows} rows but y has {} and qid {} entries",
                labels.len(),
                groups.n_rows()
            )));
        }
        if let Some(r) = labels.iter().position(|v| !v.is_finite()) {
            return Err(Error::input(format!(
                "y[{r}] is {}: labels must be finite numbers",
                labels[r]
            )));
        }
        let relevant: Vec<bool> = groups
            .order
            .iter()
            .map(|&r| labels[r] > threshold)
            .collect();
        let labels: Vec<f64> = groups.order.iter().map(|&r| labels[r]).collect();
        let rule = QueryUse::of(&labels, &relevant, &groups.bounds, &[]);
        Ok(RankingProblem {
            x,
            groups,
            relevant,
            labels,
            usable: rule.usable,
            partial: rule.partial,
            weights: None,
            block_starts: vec![0],
            counts: rule.counts,
        })
    }

    /// Cuts the queries into `n_blocks` consecutive blocks of about equal numbers of usable
    /// queries (at most one block per usable query; `options::PER_QUERY` asks for exactly
    /// that), each of which gets its own cut per slack group in `cut_sums`. The risk is the
    /// sum of the blocks' risks, so the objective is unchanged; the cutting-plane model of a
    /// sum of block risks, each with its own slack, is tighter than that of their total (the
    /// multi-cut or disaggregated model; with one block per query it is the n-slack model of
    /// Joachims, Finley and Yu 2009, whose optimum the 1-slack model shares). Call after
    /// `admit`, which decides which queries are usable.
    pub fn split_into_blocks(&mut self, n_blocks: usize) {
        let n_usable = self.usable.iter().filter(|&&u| u).count();
        let k = n_blocks.clamp(1, n_usable.max(1));
        let mut starts = vec![0];
        let mut seen = 0;
        for (q, &usable) in self.usable.iter().enumerate() {
            if !usable {
                continue;
            }
            // The i-th usable query (from 0) belongs to block floor(i k / n_usable); a block
            // starts at its first usable query (the first block at query 0).
            let block = seen * k / n_usable;
            if block == starts.len() {
                starts.push(q);
            }
            seen += 1;
        }
        self.block_starts = starts;
    }

    /// The number of cut blocks (`split_into_blocks`).
    pub fn n_blocks(&self) -> usize {
        self.block_starts.len()
    }

    /// Weights the queries (one weight per query of `groups`, in its order): the objective
    /// becomes 1/2 ||w||^2 + C/n sum_q s_q xi_q, so each query's Delta_q and deltaPsi_q enter
    /// the cut multiplied by s_q. n still counts the usable queries, so weights of 1 give the
    /// unweighted problem (bit for bit: products with 1.0 are exact), and a query of weight 0
    /// contributes no constraint but still counts in n.
    pub fn set_weights(&mut self, weights: &[f64]) -> Result<()> {
        let n_queries = self.groups.n_queries();
        if weights.len() != n_queries {
            return Err(Error::input(format!(
                "sample_weight has {} query weights but there are {n_queries} queries",
                weights.len()
            )));
        }
        if let Some(q) = weights.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(Error::input(format!(
                "query weight {q} is {}: weights must be finite numbers >= 0",
                weights[q]
            )));
        }
        self.weights = Some(weights.to_vec());
        Ok(())
    }

    /// Also lets the queries without a relevant or without a non-relevant document contribute
    /// to the losses among `oracles` that can use them (`Oracle::usable`: "pairwise" uses every
    /// query with two distinct labels), and counts them in n. Queries with both kinds of
    /// documents are usable by every loss, so binary losses see no change.
    pub fn admit(&mut self, oracles: &[&dyn Oracle]) {
        let rule = QueryUse::of(&self.labels, &self.relevant, &self.groups.bounds, oracles);
        self.usable = rule.usable;
        self.partial = rule.partial;
        self.counts = rule.counts;
    }

    /// Asks every oracle whether it accepts every query's labels (`oracle::check_labels`: the
    /// graded NDCG refuses relevant labels without a positive finite gain, and queries whose
    /// grades would make one call too costly), before any work starts.
    pub fn check_labels(&self, oracles: &[&dyn Oracle]) -> Result<()> {
        crate::oracle::check_labels(oracles, &self.labels, &self.relevant, &self.groups.bounds)
    }

    /// For each cut block and oracle, sum_q Delta_q and sum_q deltaPsi_q over the block's usable
    /// queries at w (not divided by n, so that parts of a data set can be added up), block k's
    /// oracle s at index k * n_oracles + s. With one block (the default), one sum per oracle.
    ///
    /// One pass over X: each query's rows are scored, the oracles run, and the query's
    /// coefficients are added into the cut while its rows are still in cache, so that an
    /// iteration reads X from memory once where X w followed by X^T c would read it twice.
    /// Queries are cut into consecutive blocks whose boundaries depend only on the problem's
    /// shape (and end at the cut blocks' boundaries); each block is summed serially and the
    /// blocks are added in order, so the result does not depend on the number of threads.
    pub fn cut_sums(&self, w: &[f64], oracles: &[&dyn Oracle]) -> Vec<(f64, Vec<f64>)> {
        let groups = self.groups;
        // Sums are kept in the matrix's accumulator space (X^T c itself for dense and CSR
        // matrices, histograms of bin codes for binned ones) and finished once at the end.
        let d = self.x.acc_len();
        let prepared = self.x.prepare(w);
        let blocks = split_at(
            query_blocks(&groups.bounds, d * oracles.len().max(1)),
            &self.block_starts,
        );
        let zero_sums =
            || -> Vec<(f64, Vec<f64>)> { oracles.iter().map(|_| (0.0, vec![0.0; d])).collect() };
        let partials: Vec<(usize, CutSums)> = blocks
            .into_par_iter()
            .map(|(cut_block, queries)| {
                let mut sums = zero_sums();
                let mut scores = Vec::new();
                let mut coef = Vec::new();
                let (mut nonzero, mut alphas) = (Vec::new(), Vec::new());
                // Losses with separate slacks that sort the query (map, ndcg, mrr, roc)
                // share one sort, and every query of the block reuses its buffers.
                let mut sorted = Sorted::default();
                for q in queries {
                    // A user interrupt stops the pass between queries; the caller's
                    // per-iteration hook then reports it (the partial cut is never used).
                    let weight = self.weights.as_ref().map_or(1.0, |s| s[q]);
                    if !self.usable[q] || weight == 0.0 || crate::runtime::cancel::requested() {
                        continue;
                    }
                    let rows = groups.rows(q);
                    let span = groups.bounds[q]..groups.bounds[q + 1];
                    let (relevant, labels) = (&self.relevant[span.clone()], &self.labels[span]);
                    scores.clear();
                    scores.extend(rows.iter().map(|&r| self.x.row_score(r, w, &prepared)));
                    let mut is_sorted = false;
                    for (oracle, (b, g)) in oracles.iter().zip(sums.iter_mut()) {
                        if self.partial[q] && !oracle.usable(labels, relevant) {
                            continue;
                        }
                        coef.clear();
                        coef.resize(rows.len(), 0.0);
                        let delta = if oracle.sorts() {
                            if !is_sorted {
                                sorted.fill(&scores, relevant);
                                is_sorted = true;
                            }
                            oracle.argmax_sorted(&sorted, &scores, labels, relevant, &mut coef)
                        } else {
                            oracle.argmax_labels(&scores, labels, relevant, &mut coef)
                        };
                        *b += weight * delta;
                        // Rows with a zero coefficient are skipped: they add nothing, except that
                        // 0 x_r could turn a -0.0 entry into +0.0. Every row is written and
                        // only the nonzero ones are kept (the count advances by 0 or 1), which
                        // avoids a branch that sparse coefficients (mrr) would mispredict.
                        nonzero.resize(rows.len(), 0);
                        alphas.resize(rows.len(), 0.0);
                        let mut kept = 0;
                        for (&r, &c) in rows.iter().zip(&coef) {
                            // SAFETY: kept <= the index of this row < rows.len(), the length
                            // of both buffers (the bounds checks cost as much as the loop).
                            unsafe {
                                *nonzero.get_unchecked_mut(kept) = r;
                                *alphas.get_unchecked_mut(kept) = weight * c;
                            }
                            kept += usize::from(c != 0.0);
                        }
                        self.x.accumulate_rows(&nonzero[..kept], &alphas[..kept], g);
                    }
                }
                (cut_block, sums)
            })
            .collect();
        let mut totals: Vec<CutSums> = (0..self.n_blocks()).map(|_| zero_sums()).collect();
        for (cut_block, part) in partials {
            for ((b, g), (pb, pg)) in totals[cut_block].iter_mut().zip(part) {
                *b += pb;
                for (o, v) in g.iter_mut().zip(pg) {
                    *o += v;
                }
            }
        }
        totals
            .into_iter()
            .flatten()
            .map(|(b, g)| (b, self.x.finish(g)))
            .collect()
    }
}

/// The query ranges of `ranges` split where a cut block starts (`starts`, the first query of
/// each block, starting with 0), each with the index of the cut block that holds it. With the
/// one block [0], the ranges themselves.
fn split_at(ranges: Vec<Range<usize>>, starts: &[usize]) -> Vec<(usize, Range<usize>)> {
    let mut out = Vec::with_capacity(ranges.len() + starts.len());
    for range in ranges {
        let mut block = starts.partition_point(|&s| s <= range.start) - 1;
        let mut from = range.start;
        while from < range.end {
            let to = starts
                .get(block + 1)
                .map_or(range.end, |&s| s.min(range.end));
            out.push((block, from..to));
            from = to;
            block += 1;
        }
    }
    out
}

/// One (sum_q Delta_q, sum_q deltaPsi_q) pair per oracle.
type CutSums = Vec<(f64, Vec<f64>)>;

/// Rows per query block in `cut_sums`: enough work per block to amortize its partial sums,
/// and blocks enough for load balance on many cores.
const BLOCK_ROWS: usize = 4096;
/// Upper bound on the number of query blocks (and so of partial sums kept at once).
const MAX_BLOCKS: usize = 1024;
/// Upper bound on the memory of the partial sums, in f64 values (32 MiB).
const PARTIAL_BUDGET: usize = 1 << 22;

/// Consecutive query ranges of about equal row counts. Their number depends only on the row
/// count and on `width`, the f64 values of one block's partial sums, never on the threads.
fn query_blocks(bounds: &[usize], width: usize) -> Vec<Range<usize>> {
    let n_queries = bounds.len() - 1;
    let n_rows = bounds[n_queries];
    let k = (PARTIAL_BUDGET / width.max(1))
        .min(MAX_BLOCKS)
        .min(n_rows.div_ceil(BLOCK_ROWS))
        .clamp(1, n_queries.max(1));
    let mut blocks = Vec::with_capacity(k);
    let mut start = 0;
    for i in 1..=k {
        // The block ends at the first query that ends at or beyond i/k of the rows.
        let target = i * n_rows / k;
        let end = if i == k {
            n_queries
        } else {
            bounds
                .partition_point(|&b| b < target)
                .clamp(start, n_queries)
        };
        if end > start {
            blocks.push(start..end);
            start = end;
        }
    }
    blocks
}

/// The cuts of a `RankingProblem` on this machine.
pub struct QueryCuts<'a, 'b, M: RowMatrix + ?Sized> {
    pub problem: RankingProblem<'a, M>,
    pub oracles: &'b [&'b dyn Oracle],
}

impl<M: RowMatrix + ?Sized> CutSource for QueryCuts<'_, '_, M> {
    fn dim(&self) -> usize {
        self.problem.x.n_cols()
    }
    fn n_groups(&self) -> usize {
        self.oracles.len()
    }
    fn n_blocks(&self) -> usize {
        self.problem.n_blocks()
    }
    fn cuts(&mut self, w: &[f64]) -> Result<Vec<(f64, Vec<f64>)>> {
        let inv_n = 1.0 / self.problem.counts.usable as f64;
        Ok(self
            .problem
            .cut_sums(w, self.oracles)
            .into_iter()
            .map(|(b, mut g)| {
                g.iter_mut().for_each(|v| *v *= inv_n);
                (b * inv_n, g)
            })
            .collect())
    }
}

#[cfg(test)]
pub(crate) mod tests;
