//! The 1-slack cutting-plane algorithm (Joachims, Finley, Yu 2009), stabilized as in OCAS
//! (Franc and Sonnenburg 2009), for the structural SVM of Yue et al. 2007, OP 1 with margin
//! rescaling.
//!
//! Problem. With n = the training queries that have both a relevant and a non-relevant document,
//!
//!   min_w  P(w) = 1/2 ||w||^2 + sum_s C_s * 1/n sum_q H_{q,s}(w),
//!   H_{q,s}(w) = max_y Delta_s(y_q, y) + w.Psi_s(x_q, y) - w.Psi_s(x_q, y_q) >= 0,
//!
//! one term s per slack group (one group for SVM^map; several for SVM-combo with separate
//! slacks). With one group and C_s = C this is OP 1: C/n sum_q xi_q, so C means what it means
//! in SVM^map.
//!
//! Cuts. Each oracle pass scores every document (X w), runs the oracle of every group on every
//! query in parallel (both in one pass over X, see `cut_sums`), and averages the results into
//! one cut per group, b = 1/n sum_q Delta_q and g = 1/n sum_q deltaPsi_q = X^T c / n, whose
//! violation b - w.g equals 1/n sum_q H_q(w), so P(w) is known exactly at every point where
//! the oracles ran. The working-set dual (dual_qp.rs) is a lower bound on min P; training stops
//! when the gap P(w) - D(a) is at most eps * sum_s C_s, i.e. when no cut is violated by more
//! than eps beyond the working set's slack (SVM^struct's criterion), so the returned w is
//! within eps * sum_s C_s of the optimum whatever path led to it.
//!
//! Method (`Method::Ocas`, the default). The plain cutting plane (Joachims, Finley, Yu 2009)
//! moves to the working set's optimum w_c at every iteration; when the features' scales differ
//! by orders of magnitude or C is large, w_c jumps far from the optimum and the iteration count
//! follows the O(C R^2 / eps) bound. OCAS (Franc and Sonnenburg, "Optimized cutting plane
//! algorithm for large-scale risk minimization", JMLR 10, 2009) keeps a best-so-far iterate w_b
//! and takes its cuts near it. Here, at every iteration: the oracles run at w_c; when
//! P(w_c) < P(w_b) (a serious step, as in bundle methods) w_c becomes w_b; otherwise (a null
//! step) the oracles also run at w_b + mu (w_c - w_b) (OCAS's cut selection; mu is 0.1, or
//! less when w_c overshoots by much, see `null_step_fraction`), whose point becomes w_b if
//! it is better, and both cuts join the working set, unless P(w_c) exceeds P(w_b) by less
//! than the current gap (`NULL_STEP_MARGIN`), where the cut at w_c alone is kept. After a
//! null step at both points, the next iterations run the oracles only near w_b (one pass
//! instead of two, and OCAS's own choice of a single cut) for as long as that point does not
//! improve on w_b and its cut is violated at w_c by more than eps beyond the working set's
//! slack, the condition under which each cut raises the dual by a bounded amount; otherwise
//! w_c is evaluated again. Measured on 84 fits (MQ2008 Fold 1 normalized and with rescaled
//! columns, make_ranking; seven losses; C = 0.01 to 10^4): 18.4 s -> 11.2 s in all, the
//! separate-slack SVM-combo on make_ranking(400, 100, 30) at C = 1 from 103 passes to 15,
//! and no fit on the normalized MQ2008 folds needs more than 15% more passes. OCAS's exact
//! line search on the segment is replaced by the best of these points: for the 1-slack risk
//! it needs every query's breakpoints, and a line search through
//! the cutting-plane model that cost one or two more oracle passes per iteration needed more
//! passes for the same accuracy (measured while developing this, without the margin, on
//! MQ2008 Fold 1 with rescaled columns at C = 10^4: 202 iterations / 403 passes with one
//! line-search pass, 112 / 334 with two, 115 / 229 with none). Serious steps cost one pass
//! like the plain method, so easy problems (normalized features, small C) keep its pass count.
//! The duality gap is P(w_b) minus the best working-set dual seen: it only shrinks, and
//! convergence is that of the plain method, whose cut at w_c is always
//! added. The working-set QP is solved by an exact active-set method warm-started from the
//! previous optimum (`WorkingSet::solve_active_set`), with SMO as the fallback.
//!
//! `Method::Plain` keeps the plain cutting plane with the SMO + polish QP, for comparison.
//!
//! Returns w, the primal and dual objectives, the gap, the iteration count and the cut counts.
//! Sums over queries are taken in fixed blocks of queries added in order, so the result is the
//! same for any number of threads.

use rayon::prelude::*;
use std::ops::Range;
use std::time::Instant;

use super::dual_qp::{dot, Cut, WorkingSet};
use crate::data::{QueryGroups, RowMatrix};
use crate::error::{Error, Result};
use crate::oracle::{Oracle, QueryKind, Sorted};

/// The working-set QP is solved to this fraction of `eps` (see `solve`).
const QP_TOL_FACTOR: f64 = 1e-9;
/// An active-set solution that misses QP_TOL_FACTOR by rounding is accepted at this fraction
/// of `eps` (see `solve_ocas`).
const QP_LOOSE_FACTOR: f64 = 1e-6;
/// Where OCAS takes its cut after a null step: w_b + OCAS_MU (w_c - w_b) (Franc and
/// Sonnenburg 2009 use 0.1). On MQ2008 Fold 1 with rescaled columns at C = 10^4, 0.05 took
/// about as many iterations, 0.2 40% more and 0.3 75% more.
const OCAS_MU: f64 = 0.1;
/// The smallest fraction `null_step_fraction` returns.
const MIN_NULL_STEP_FRACTION: f64 = 0.01;
/// After a null step by at most this many times the duality gap, P(w_c) - P(w_b) <=
/// NULL_STEP_MARGIN (P(w_b) - D), no cut is taken near w_b. On the five MQ2008 folds at C = 1
/// and 10 this keeps the passes of the plain method (with 0 OCAS took up to 20% more), and
/// on rescaled columns at C = 10^4 it costs 20% more iterations (137 instead of 115); at 2 the
/// rescaled fold needs 4 times as many.
const NULL_STEP_MARGIN: f64 = 1.0;

#[derive(Debug, Clone)]
pub struct Options {
    /// The regularization trade-off of OP 1 (per slack group).
    pub c: f64,
    /// Tolerance on the violation of the most violated constraint, in slack units.
    pub eps: f64,
    /// Maximum number of cutting-plane iterations (oracle passes).
    pub max_iter: usize,
    /// Cuts whose dual variable stayed zero for this many iterations are dropped.
    pub max_idle: usize,
    /// A document is relevant when its label is above this value.
    pub relevance_threshold: f64,
    /// The outer method (internal: the plain method is kept for comparison).
    pub method: Method,
}

/// The outer loop of the solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// The 1-slack cutting plane of Joachims et al. 2009 with the SMO + polish QP: each
    /// iterate is the working set's optimum.
    Plain,
    /// The OCAS-style stabilized cutting plane with a line search and the active-set QP (see
    /// the top of this file).
    #[default]
    Ocas,
}

impl Method {
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "plain" => Ok(Method::Plain),
            "ocas" => Ok(Method::Ocas),
            _ => Err(Error::param("method", "'plain' or 'ocas'", name)),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            c: 1.0,
            eps: 1e-3,
            max_iter: 10_000,
            max_idle: 50,
            relevance_threshold: 0.0,
            method: Method::default(),
        }
    }
}

impl Options {
    pub fn validate(&self) -> Result<()> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(Error::param("C", "a finite number > 0", self.c));
        }
        if !(self.eps.is_finite() && self.eps > 0.0) {
            return Err(Error::param("eps", "a finite number > 0", self.eps));
        }
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", "an integer >= 1", self.max_iter));
        }
        if !self.relevance_threshold.is_finite() {
            return Err(Error::param(
                "relevance_threshold",
                "a finite number",
                self.relevance_threshold,
            ));
        }
        Ok(())
    }
}

/// What one iteration measured, for progress reports and the training history.
#[derive(Debug, Clone, PartialEq)]
pub struct IterationRecord {
    pub iteration: usize,
    /// P(w) at this iteration's w.
    pub primal: f64,
    /// D(a) of the working set that produced w (0 at the first iteration).
    pub dual: f64,
    pub gap: f64,
    /// Average Delta over the training queries of the new cut(s), summed over groups.
    pub loss: f64,
    /// Cuts in the working set and those with a positive dual variable, before this
    /// iteration's cut is added.
    pub n_cuts: usize,
    pub n_active: usize,
    /// Seconds since training started.
    pub seconds: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Converged,
    MaxIter,
    Callback,
}

/// What a progress callback asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

#[derive(Debug, Clone)]
pub struct Summary {
    pub primal: f64,
    pub dual: f64,
    pub gap: f64,
    pub n_iter: usize,
    pub n_cuts: usize,
    pub n_active: usize,
    pub stop: StopReason,
    /// Oracle passes over the data (one per iteration for the plain method, one or two for
    /// OCAS).
    pub n_evals: usize,
    /// Seconds spent in the working-set QP.
    pub qp_seconds: f64,
    /// Working-set QPs that the exact method did not solve and coordinate ascent (SMO) solved
    /// instead: slow on ill-conditioned working sets, so a count above 0 explains a large QP
    /// share.
    pub qp_fallbacks: usize,
    pub n_queries: usize,
    pub n_skipped_no_relevant: usize,
    pub n_skipped_all_relevant: usize,
    pub history: Vec<IterationRecord>,
}

/// Where cutting planes come from. `cuts(w)` returns, for every slack group, the averaged cut
/// (b, g) = (1/n sum_q Delta_q(ybar_q), 1/n sum_q deltaPsi_q(ybar_q)) of the most violated
/// constraints at w. The local implementation is `QueryCuts`; a distributed one may sum the
/// parts of several machines.
pub trait CutSource {
    /// Dimension of w.
    fn dim(&self) -> usize;
    /// Number of slack groups (losses with separate slacks).
    fn n_groups(&self) -> usize;
    fn cuts(&mut self, w: &[f64]) -> Result<Vec<(f64, Vec<f64>)>>;
}

/// How many queries can contribute constraints, and why the others cannot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueryCounts {
    pub usable: usize,
    pub no_relevant: usize,
    pub all_relevant: usize,
}

impl QueryCounts {
    /// Counts one query of the given kind.
    pub fn add(&mut self, kind: QueryKind) {
        match kind {
            QueryKind::Usable => self.usable += 1,
            QueryKind::NoRelevant => self.no_relevant += 1,
            QueryKind::AllRelevant => self.all_relevant += 1,
        }
    }

    /// The counts of several parts of a data set, added up.
    pub fn merged(parts: &[QueryCounts]) -> QueryCounts {
        parts
            .iter()
            .fold(QueryCounts::default(), |a, b| QueryCounts {
                usable: a.usable + b.usable,
                no_relevant: a.no_relevant + b.no_relevant,
                all_relevant: a.all_relevant + b.all_relevant,
            })
    }

    pub fn total(&self) -> usize {
        self.usable + self.no_relevant + self.all_relevant
    }

    /// Training needs at least one usable query; the error says how the others failed.
    pub fn require_usable(&self, threshold: f64) -> Result<()> {
        if self.usable == 0 {
            return Err(Error::NoUsableQueries {
                n_queries: self.total(),
                no_relevant: self.no_relevant,
                all_relevant: self.all_relevant,
                threshold,
            });
        }
        Ok(())
    }
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
        let mut counts = QueryCounts::default();
        let usable = (0..groups.n_queries())
            .map(|q| {
                let kind = QueryKind::of(&relevant[groups.bounds[q]..groups.bounds[q + 1]]);
                counts.add(kind);
                kind == QueryKind::Usable
            })
            .collect();
        let n_queries = groups.n_queries();
        Ok(RankingProblem {
            x,
            groups,
            relevant,
            labels: groups.order.iter().map(|&r| labels[r]).collect(),
            usable,
            partial: vec![false; n_queries],
            weights: None,
            counts,
        })
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
        let groups = self.groups;
        for q in 0..groups.n_queries() {
            let span = groups.bounds[q]..groups.bounds[q + 1];
            let (labels, relevant) = (&self.labels[span.clone()], &self.relevant[span]);
            if self.usable[q] || !oracles.iter().any(|o| o.usable(labels, relevant)) {
                continue;
            }
            self.usable[q] = true;
            self.partial[q] = true;
            self.counts.usable += 1;
            if relevant.iter().any(|&r| r) {
                self.counts.all_relevant -= 1;
            } else {
                self.counts.no_relevant -= 1;
            }
        }
    }

    /// For each oracle, sum_q Delta_q and sum_q deltaPsi_q over the usable queries at w (not
    /// divided by n, so that parts of a data set can be added up).
    ///
    /// One pass over X: each query's rows are scored, the oracles run, and the query's
    /// coefficients are added into the cut while its rows are still in cache, so that an
    /// iteration reads X from memory once where X w followed by X^T c would read it twice.
    /// Queries are cut into consecutive blocks whose boundaries depend only on the problem's
    /// shape; each block is summed serially and the blocks are added in order, so the result
    /// does not depend on the number of threads.
    pub fn cut_sums(&self, w: &[f64], oracles: &[&dyn Oracle]) -> Vec<(f64, Vec<f64>)> {
        let groups = self.groups;
        // Sums are kept in the matrix's accumulator space (X^T c itself for dense and CSR
        // matrices, histograms of bin codes for binned ones) and finished once at the end.
        let d = self.x.acc_len();
        let prepared = self.x.prepare(w);
        let blocks = query_blocks(&groups.bounds, d * oracles.len().max(1));
        let zero_sums =
            || -> Vec<(f64, Vec<f64>)> { oracles.iter().map(|_| (0.0, vec![0.0; d])).collect() };
        let partials: Vec<Vec<(f64, Vec<f64>)>> = blocks
            .into_par_iter()
            .map(|queries| {
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
                sums
            })
            .collect();
        let mut total = zero_sums();
        for part in partials {
            for ((b, g), (pb, pg)) in total.iter_mut().zip(part) {
                *b += pb;
                for (o, v) in g.iter_mut().zip(pg) {
                    *o += v;
                }
            }
        }
        total
            .into_iter()
            .map(|(b, g)| (b, self.x.finish(g)))
            .collect()
    }
}

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

/// Trains w on the rows of `x` grouped by `groups`, with one slack group per oracle.
pub fn train<M: RowMatrix + ?Sized>(
    x: &M,
    labels: &[f64],
    groups: &QueryGroups,
    oracles: &[&dyn Oracle],
    opts: &Options,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Vec<f64>, Summary)> {
    let mut path = train_path(
        x,
        labels,
        groups,
        None,
        oracles,
        opts,
        &[opts.c],
        false,
        on_iteration,
    )?;
    Ok(path.pop().expect("one C was given"))
}

/// Trains w for every C of `cs` in the order given (the other options from `opts`), on one
/// problem prepared once, with per-query `weights` (see `RankingProblem::set_weights`; None:
/// unweighted). With `warm`, each C starts from the final working set and iterate of the one
/// before (see `WarmStart`); without, every C is solved from scratch, exactly as `train` does.
/// `on_iteration` sees the iterations of every C in turn.
#[allow(clippy::too_many_arguments)]
pub fn train_path<M: RowMatrix + ?Sized>(
    x: &M,
    labels: &[f64],
    groups: &QueryGroups,
    weights: Option<&[f64]>,
    oracles: &[&dyn Oracle],
    opts: &Options,
    cs: &[f64],
    warm: bool,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<Vec<(Vec<f64>, Summary)>> {
    opts.validate()?;
    if cs.is_empty() {
        return Err(Error::param("Cs", "a non-empty list of numbers > 0", "[]"));
    }
    let all: Vec<Options> = cs.iter().map(|&c| Options { c, ..opts.clone() }).collect();
    for o in &all {
        o.validate()?;
    }
    if oracles.is_empty() {
        return Err(Error::input("at least one loss is needed"));
    }
    crate::oracle::check_query_lens(oracles, groups)?;
    crate::runtime::memory::check_working_set(x.n_cols(), oracles.len())?;
    let mut problem = RankingProblem::new(x, labels, groups, opts.relevance_threshold)?;
    problem.admit(oracles);
    if let Some(s) = weights {
        problem.set_weights(s)?;
    }
    let counts = problem.counts;
    counts.require_usable(opts.relevance_threshold)?;
    let mut source = QueryCuts { problem, oracles };
    let mut out = Vec::with_capacity(cs.len());
    let mut state: Option<WarmStart> = None;
    for o in &all {
        let start = if warm { state.as_ref() } else { None };
        let (w, mut summary, last) = solve_from(&mut source, o, start, on_iteration)?;
        summary.n_queries = counts.usable;
        summary.n_skipped_no_relevant = counts.no_relevant;
        summary.n_skipped_all_relevant = counts.all_relevant;
        out.push((w, summary));
        state = last;
    }
    Ok(out)
}

fn out_of_range(iteration: usize, what: &str) -> Error {
    Error::Numerical(format!(
        "training stopped at iteration {iteration}: {what} is not a finite float64 number; \
         feature values are too large for float64 arithmetic (squares of feature values, \
         summed over the features, must stay below 1.8e308): scale the features"
    ))
}

/// The cutting-plane loop on any source of cuts (the query counts of the summary are left 0).
pub fn solve(
    source: &mut dyn CutSource,
    opts: &Options,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Vec<f64>, Summary)> {
    let (w, summary, _) = solve_from(source, opts, None, on_iteration)?;
    Ok((w, summary))
}

/// Where a solve of the same problem at another C may start: the final working set (cuts and
/// dual variables) and iterate of a solve at `c`.
///
/// Why this is exact. Each cut (b_j, g_j) is an average of the oracles' constraints, and
/// b_j - w.g_j <= the risk at w whatever C is, so the cuts of a solve at C stay valid lower
/// bounds of the risk at C'; only the dual's caps sum_j a_j <= C change, and a C'/C is feasible
/// for them. The working set's dual at C' therefore still bounds min P from below, and the
/// stopping test P(w_b) - D <= eps C' certifies the result exactly as in a cold start. The
/// iterate w_b keeps its risk, so P at C' is known there without an oracle pass:
/// P'(w_b) = 1/2 ||w_b||^2 + C' risk(w_b).
///
/// Why the iterate matters. With the cuts alone, the first iterate is the optimum of the old
/// cuts' model at C', which overshoots where the model is flat; OCAS then starts its
/// stabilization from there. Starting w_b at the previous optimum keeps the stabilization
/// centre where the risk is known, and the first proposal w_c is judged against it. On
/// MQ2008 Fold 1 over C = 0.01, 0.1, ..., 1000 (each C from the one before): 98 oracle passes
/// instead of 169 for cold starts (benchmarks/cv_path.py --path), where seeding the cuts
/// alone took 128 when this was developed (and 31 iterations
/// at C = 100, more than the cold start's 20); with the columns rescaled as in
/// benchmarks/solver.py, 242 passes instead of 759, and 384 with the cuts alone. Every cut is
/// handed on, the inactive ones too: keeping only the active cuts made the QPs smaller but
/// took about 20% more passes (benchmarks/cv_path.py).
#[derive(Debug, Clone)]
pub struct WarmStart {
    c: f64,
    cuts: Vec<Cut>,
    alpha: Vec<f64>,
    w: Vec<f64>,
    /// sum_s max(0, b_s - w.g_s) of the cuts taken at w: the risk at w, summed over groups.
    risk: f64,
}

/// `solve`, optionally started from `warm` (OCAS only), also returning the state a solve at
/// another C can start from (None from the plain method).
pub fn solve_from(
    source: &mut dyn CutSource,
    opts: &Options,
    warm: Option<&WarmStart>,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Vec<f64>, Summary, Option<WarmStart>)> {
    match opts.method {
        Method::Plain if warm.is_some() => Err(Error::input(
            "a warm start needs the OCAS method, got the plain cutting plane",
        )),
        Method::Plain => {
            let (w, summary) = solve_plain(source, opts, on_iteration)?;
            Ok((w, summary, None))
        }
        Method::Ocas => {
            let (w, summary, state) = solve_ocas(source, opts, warm, on_iteration)?;
            Ok((w, summary, Some(state)))
        }
    }
}

/// The plain 1-slack cutting plane (the method before OCAS, kept for comparison).
fn solve_plain(
    source: &mut dyn CutSource,
    opts: &Options,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Vec<f64>, Summary)> {
    opts.validate()?;
    let d = source.dim();
    let n_groups = source.n_groups();
    let c_total = opts.c * n_groups as f64;
    // The outer stopping test would be satisfied by a QP solved to eps/100, but a loosely
    // solved QP makes w, and with it every later cut, depend on the rounding of the cuts: on
    // MQ2008, summing the same cut in another order (as on several machines) moved the final
    // w by up to 1e-2 with eps/100. Solved to QP_TOL_FACTOR * eps (or to its rounding floor,
    // see WorkingSet::solve), w is a continuous function of the cuts, and such differences
    // stay at the 1e-11 level. The exact solve on the support (WorkingSet::polish) reaches
    // that precision at almost no cost; SMO to this tolerance is the fallback.
    let qp_tol = opts.eps * QP_TOL_FACTOR;

    let start = Instant::now();
    let mut ws = WorkingSet::new(d, vec![opts.c; n_groups]);
    let mut w = vec![0.0; d];
    let mut progress = Progress::new(opts.max_iter);
    let mut qp_seconds = 0.0;
    let mut qp_fallbacks = 0;

    for iteration in 1..=opts.max_iter {
        let new_cuts = source.cuts(&w)?;
        if new_cuts.len() != n_groups || new_cuts.iter().any(|(_, g)| g.len() != d) {
            return Err(Error::input(format!(
                "a cut source returned {} cuts for {n_groups} slack groups (dimension {d})",
                new_cuts.len()
            )));
        }
        let mut violation_total = 0.0;
        let mut loss_total = 0.0;
        let mut cuts = Vec::with_capacity(n_groups);
        for (s, (b, g)) in new_cuts.into_iter().enumerate() {
            // The Gram matrix holds g.g; if it overflows, every later number is inf or NaN.
            if !(b.is_finite() && dot(&g, &g).is_finite()) {
                return Err(out_of_range(iteration, "the new cutting plane"));
            }
            violation_total += opts.c * (b - dot(&w, &g)).max(0.0);
            loss_total += b;
            cuts.push(Cut { g, b, group: s });
        }
        let primal = 0.5 * dot(&w, &w) + violation_total;
        if !primal.is_finite() {
            return Err(out_of_range(iteration, "the primal objective"));
        }
        let dual = ws.dual_objective();
        let record = IterationRecord {
            iteration,
            primal,
            dual,
            gap: primal - dual,
            loss: loss_total,
            n_cuts: ws.len(),
            n_active: ws.n_active(),
            seconds: start.elapsed().as_secs_f64(),
        };
        // The hook also sees the w the record was measured at (for validation scores).
        if progress.report(record, &w, opts.eps * c_total, on_iteration)? {
            break;
        }
        for cut in cuts {
            ws.add(cut);
        }
        // Locate the optimum's support with SMO, then solve the optimality conditions on it
        // exactly; only when that fails (a wrong support, collinear cuts) does SMO continue
        // to the tight tolerance, which is slower on ill-conditioned working sets.
        let max_steps = 100_000 + 1_000 * ws.len();
        let qp_start = Instant::now();
        ws.solve(opts.eps / 100.0, max_steps);
        if !ws.polish(qp_tol) {
            qp_fallbacks += 1;
            ws.solve(qp_tol, max_steps);
        }
        qp_seconds += qp_start.elapsed().as_secs_f64();
        w = ws.weights();
        if w.iter().any(|v| !v.is_finite()) {
            return Err(out_of_range(iteration, "the weight vector"));
        }
        ws.drop_idle(opts.max_idle);
    }

    let n_evals = progress.history.len();
    Ok((w, progress.summary(&ws, n_evals, qp_seconds, qp_fallbacks)))
}

/// The iterations reported so far and why the loop stopped; shared by both outer methods.
struct Progress {
    max_iter: usize,
    history: Vec<IterationRecord>,
    stop: StopReason,
}

impl Progress {
    fn new(max_iter: usize) -> Self {
        Progress {
            max_iter,
            history: Vec::new(),
            stop: StopReason::MaxIter,
        }
    }

    /// Hands an iteration's record (measured at `w`) to the hook and keeps it; true when
    /// training stops here: the gap is within `tolerance`, the hook asked to stop, or this was
    /// the last iteration allowed.
    fn report(
        &mut self,
        record: IterationRecord,
        w: &[f64],
        tolerance: f64,
        on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
    ) -> Result<bool> {
        let control = on_iteration(&record, w)?;
        let (gap, iteration) = (record.gap, record.iteration);
        self.history.push(record);
        if gap <= tolerance {
            self.stop = StopReason::Converged;
        } else if control == Control::Stop {
            self.stop = StopReason::Callback;
        } else if iteration < self.max_iter {
            return Ok(false);
        }
        Ok(true)
    }

    /// The summary of a finished loop (query counts are filled in by `train`).
    fn summary(
        self,
        ws: &WorkingSet,
        n_evals: usize,
        qp_seconds: f64,
        qp_fallbacks: usize,
    ) -> Summary {
        let last = self
            .history
            .last()
            .expect("max_iter >= 1 was validated")
            .clone();
        Summary {
            primal: last.primal,
            dual: last.dual,
            gap: last.gap,
            n_iter: last.iteration,
            n_cuts: ws.len(),
            n_active: ws.n_active(),
            stop: self.stop,
            n_evals,
            qp_seconds,
            qp_fallbacks,
            n_queries: 0,
            n_skipped_no_relevant: 0,
            n_skipped_all_relevant: 0,
            history: self.history,
        }
    }
}

/// The cuts of every group at `w` and the primal objective there.
struct Evaluation {
    cuts: Vec<Cut>,
    primal: f64,
    loss: f64,
    /// sum_s max(0, b_s - w.g_s): the risk at w, without the factor C.
    risk: f64,
}

fn evaluate(source: &mut dyn CutSource, w: &[f64], c: f64, iteration: usize) -> Result<Evaluation> {
    let d = source.dim();
    let n_groups = source.n_groups();
    let new_cuts = source.cuts(w)?;
    if new_cuts.len() != n_groups || new_cuts.iter().any(|(_, g)| g.len() != d) {
        return Err(Error::input(format!(
            "a cut source returned {} cuts for {n_groups} slack groups (dimension {d})",
            new_cuts.len()
        )));
    }
    let mut violation_total = 0.0;
    let mut risk = 0.0;
    let mut loss = 0.0;
    let mut cuts = Vec::with_capacity(n_groups);
    for (s, (b, g)) in new_cuts.into_iter().enumerate() {
        if !(b.is_finite() && dot(&g, &g).is_finite()) {
            return Err(out_of_range(iteration, "the new cutting plane"));
        }
        let violation = (b - dot(w, &g)).max(0.0);
        violation_total += c * violation;
        risk += violation;
        loss += b;
        cuts.push(Cut { g, b, group: s });
    }
    let primal = 0.5 * dot(w, w) + violation_total;
    if !primal.is_finite() {
        return Err(out_of_range(iteration, "the primal objective"));
    }
    Ok(Evaluation {
        cuts,
        primal,
        loss,
        risk,
    })
}

/// OCAS (see the top of this file): the working set's optimum w_c is only a proposal; the
/// iterate w_b moves to the best point found by a line search from w_b towards w_c, and cuts
/// are taken at w_c and at that point.
fn solve_ocas(
    source: &mut dyn CutSource,
    opts: &Options,
    warm: Option<&WarmStart>,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Vec<f64>, Summary, WarmStart)> {
    opts.validate()?;
    let d = source.dim();
    let n_groups = source.n_groups();
    let c_total = opts.c * n_groups as f64;
    let qp_tol = opts.eps * QP_TOL_FACTOR;

    let start = Instant::now();
    let mut ws = WorkingSet::new(d, vec![opts.c; n_groups]);
    let mut w_c = vec![0.0; d];
    // The iterate w_b, P(w_b) and the risk at w_b.
    let mut best: Option<(Vec<f64>, f64, f64)> = None;
    let mut progress = Progress::new(opts.max_iter);
    let mut n_evals = 0;
    let mut qp_seconds = 0.0;
    let mut qp_fallbacks = 0;
    // Every working set's D(a) is a lower bound of min P, so the best one seen is kept.
    let mut dual = 0.0f64;

    if let Some(warm) = warm {
        if warm.w.len() != d
            || warm
                .cuts
                .iter()
                .any(|c| c.g.len() != d || c.group >= n_groups)
        {
            return Err(Error::input(
                "a warm start must come from a solve of the same problem",
            ));
        }
        // The old dual variables scaled to the new caps are feasible (see `WarmStart`).
        let scale = opts.c / warm.c;
        let alpha = warm.alpha.iter().map(|a| a * scale).collect();
        ws = WorkingSet::with_cuts(d, vec![opts.c; n_groups], warm.cuts.clone(), alpha);
        let qp_start = Instant::now();
        qp_fallbacks += usize::from(solve_qp(&mut ws, opts.eps, qp_tol));
        qp_seconds += qp_start.elapsed().as_secs_f64();
        w_c = ws.weights();
        dual = ws.dual_objective_at(&w_c).max(0.0);
        let primal = 0.5 * dot(&warm.w, &warm.w) + opts.c * warm.risk;
        best = Some((warm.w.clone(), primal, warm.risk));
    }

    // Set after a null step at both w_c and the point near w_b: then the next iterations
    // evaluate only the point near w_b (see the top of this file).
    let mut near_only = false;
    let mut mu_null = OCAS_MU;

    for iteration in 1..=opts.max_iter {
        let mut new_cuts = Vec::new();
        let loss;
        // Before the first evaluation there is no iterate: an infinite P(w_b) makes the first
        // step a serious one, to w_c.
        let (w_b, p_b, r_b) = best
            .take()
            .unwrap_or_else(|| (w_c.clone(), f64::INFINITY, 0.0));
        if near_only {
            let w_m = towards(&w_b, &w_c, mu_null);
            let at_m = evaluate(source, &w_m, opts.c, iteration)?;
            n_evals += 1;
            loss = at_m.loss;
            let improves = at_m.primal < p_b;
            // The cutting-plane bound needs each iteration's cut to be violated at w_c by
            // more than eps beyond the working set's slack; a cut near w_b need not be,
            // and then the next iteration evaluates w_c again.
            near_only = !improves && cuts_off(&ws, &at_m.cuts, &w_c, opts.eps);
            best = Some(if improves {
                (w_m, at_m.primal, at_m.risk)
            } else {
                (w_b, p_b, r_b)
            });
            new_cuts.extend(at_m.cuts);
        } else {
            let at_c = evaluate(source, &w_c, opts.c, iteration)?;
            n_evals += 1;
            loss = at_c.loss;
            if at_c.primal >= p_b && at_c.primal - p_b <= NULL_STEP_MARGIN * (p_b - dual) {
                // A null step by less than the gap: the model is accurate at w_c, whose cut
                // is kept, and a pass near w_b would not pay for itself.
                best = Some((w_b, p_b, r_b));
            } else if at_c.primal < p_b {
                // A serious step: w_c improves on w_b and becomes the iterate.
                best = Some((w_c.clone(), at_c.primal, at_c.risk));
            } else {
                // A null step: the next cut is taken near w_b, where it tells the most
                // about the neighbourhood of the iterate (OCAS's cut selection).
                mu_null = null_step_fraction(p_b - ws.dual_objective_at(&w_c), at_c.primal - p_b);
                let w_m = towards(&w_b, &w_c, mu_null);
                let at_m = evaluate(source, &w_m, opts.c, iteration)?;
                n_evals += 1;
                best = Some(if at_m.primal < p_b {
                    (w_m, at_m.primal, at_m.risk)
                } else {
                    near_only = true;
                    (w_b, p_b, r_b)
                });
                new_cuts.extend(at_m.cuts);
            }
            new_cuts.extend(at_c.cuts);
        }
        let (w_b, p_b, _) = best.as_ref().expect("set above");
        let primal = *p_b;
        let record = IterationRecord {
            iteration,
            primal,
            dual,
            gap: primal - dual,
            loss,
            n_cuts: ws.len(),
            n_active: ws.n_active(),
            seconds: start.elapsed().as_secs_f64(),
        };
        // The hook sees the iterate w_b, at which the record's primal was measured.
        if progress.report(record, w_b, opts.eps * c_total, on_iteration)? {
            break;
        }
        for cut in new_cuts {
            ws.add(cut);
        }
        let qp_start = Instant::now();
        qp_fallbacks += usize::from(solve_qp(&mut ws, opts.eps, qp_tol));
        qp_seconds += qp_start.elapsed().as_secs_f64();
        w_c = ws.weights();
        if w_c.iter().any(|v| !v.is_finite()) {
            return Err(out_of_range(iteration, "the weight vector"));
        }
        dual = dual.max(ws.dual_objective_at(&w_c));
        ws.drop_idle(opts.max_idle);
    }

    let (w, _, risk) = best.expect("set at the first iteration");
    let state = WarmStart {
        c: opts.c,
        cuts: ws.cuts().to_vec(),
        alpha: ws.alpha().to_vec(),
        w: w.clone(),
        risk,
    };
    Ok((
        w,
        progress.summary(&ws, n_evals, qp_seconds, qp_fallbacks),
        state,
    ))
}

/// Where the cut after a null step is taken, as a fraction mu of the way from w_b to w_c:
/// the minimizer of the parabola through P(w_b) with the model's slope -`predicted` (the
/// decrease the working set predicts at w_c, P(w_b) - D) and through P(w_c) = P(w_b) +
/// `rise`, which is predicted / (2 (predicted + rise)), clipped to
/// [MIN_NULL_STEP_FRACTION, OCAS_MU]. When w_c overshoots by much (rise >> predicted, as at
/// the tie point w = 0 of SVM-combo's first iterations, where the model is poor) the cut is
/// taken close to w_b, where it is a subgradient of the kink; otherwise at OCAS's 0.1.
fn null_step_fraction(predicted: f64, rise: f64) -> f64 {
    let predicted = predicted.max(0.0);
    let t = predicted / (2.0 * (predicted + rise.max(0.0)));
    if t.is_finite() {
        t.clamp(MIN_NULL_STEP_FRACTION, OCAS_MU)
    } else {
        OCAS_MU
    }
}

/// w_b + mu (w_c - w_b).
fn towards(w_b: &[f64], w_c: &[f64], mu: f64) -> Vec<f64> {
    w_b.iter().zip(w_c).map(|(b, c)| b + mu * (c - b)).collect()
}

/// Whether one of `cuts` is violated at w_c by more than `eps` beyond its group's slack in
/// the working set (whose last solve gave w_c), the condition under which adding it raises
/// the working set's dual optimum by a bounded amount.
fn cuts_off(ws: &WorkingSet, cuts: &[Cut], w_c: &[f64], eps: f64) -> bool {
    let slacks = ws.slacks();
    cuts.iter()
        .any(|cut| cut.b - dot(&cut.g, w_c) > slacks[cut.group] + eps)
}

/// OCAS's working-set QP: the exact active-set method, with SMO as the fallback. Returns
/// whether the fallback ran.
fn solve_qp(ws: &mut WorkingSet, eps: f64, qp_tol: f64) -> bool {
    let max_steps = 100_000 + 1_000 * ws.len();
    let ok = ws.solve_active_set(qp_tol, 10 * ws.len() + 100);
    // Rounding can keep the active-set solution of a badly conditioned working set a
    // little above QP_TOL_FACTOR; it is kept when it is within QP_LOOSE_FACTOR * eps, far
    // below what the outer loop can see, rather than handed to the slow SMO.
    if !ok && !ws.is_optimal(eps * QP_LOOSE_FACTOR) {
        ws.solve(eps / 100.0, max_steps);
        if !ws.polish(qp_tol) {
            ws.solve(qp_tol, max_steps);
        }
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrView, DenseView};
    use crate::oracle::from_name;
    use crate::runtime::pool::with_threads;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A data set of `n_queries` queries of 1 to 300 documents (shuffled rows, so that queries
    /// are not contiguous), with values whose sums are sensitive to the association order.
    fn problem(seed: u64, n_queries: usize, d: usize) -> (Vec<f64>, Vec<f64>, Vec<i64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut codes = Vec::new();
        for q in 0..n_queries {
            let size = rng.random_range(1..300);
            codes.extend(std::iter::repeat_n(q as i64, size));
        }
        // Fisher-Yates shuffle of the rows' queries.
        for i in (1..codes.len()).rev() {
            codes.swap(i, rng.random_range(0..=i));
        }
        let n = codes.len();
        let x = (0..n * d)
            .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-3..4)))
            .collect();
        let labels = (0..n).map(|_| rng.random_range(0..3) as f64).collect();
        (x, labels, codes)
    }

    /// The cut sums computed the plain way: all scores first, then the oracle per query, then
    /// X^T c by rows in order.
    fn two_pass(
        x: &dyn RowMatrix,
        labels: &[f64],
        groups: &QueryGroups,
        w: &[f64],
        oracle: &dyn Oracle,
    ) -> (f64, Vec<f64>) {
        let d = x.n_cols();
        let scores: Vec<f64> = (0..x.n_rows()).map(|r| x.row_dot(r, w)).collect();
        let (mut b, mut g) = (0.0, vec![0.0; d]);
        for q in 0..groups.n_queries() {
            let rows = groups.rows(q);
            let s: Vec<f64> = rows.iter().map(|&r| scores[r]).collect();
            let rel: Vec<bool> = rows.iter().map(|&r| labels[r] > 0.0).collect();
            let p = rel.iter().filter(|&&v| v).count();
            if p == 0 || p == rel.len() {
                continue;
            }
            let mut c = vec![0.0; rows.len()];
            b += oracle.argmax(&s, &rel, &mut c);
            for (&r, &ci) in rows.iter().zip(&c) {
                x.row_axpy(r, ci, &mut g);
            }
        }
        (b, g)
    }

    #[test]
    fn cut_sums_equal_the_two_pass_computation_and_ignore_the_thread_count() {
        let d = 7;
        let (data, labels, codes) = problem(3, 400, d);
        let n = labels.len();
        let groups = QueryGroups::from_codes(&codes, 400).unwrap();
        let x = DenseView::new(&data, n, d).unwrap();
        let w: Vec<f64> = (0..d).map(|j| (j as f64 - 3.0) * 0.37).collect();
        let names = ["map", "ndcg@10", "mrr@5"];
        let owned: Vec<_> = names.iter().map(|l| from_name(l).unwrap()).collect();
        let oracles: Vec<&dyn Oracle> = owned.iter().map(|o| o.as_ref()).collect();
        let problem = RankingProblem::new(&x, &labels, &groups, 0.0).unwrap();
        let one = with_threads(1, || problem.cut_sums(&w, &oracles)).unwrap();
        for threads in [2, 3, 8] {
            let other = with_threads(threads, || problem.cut_sums(&w, &oracles)).unwrap();
            assert_eq!(one, other, "{threads} threads");
        }
        for (oracle, (b, g)) in oracles.iter().zip(&one) {
            let (b2, g2) = two_pass(&x, &labels, &groups, &w, *oracle);
            assert!(
                (b - b2).abs() <= 1e-9 * b2.abs().max(1.0),
                "{}",
                oracle.name()
            );
            let scale = g2.iter().map(|v| v.abs()).fold(1.0, f64::max);
            for (u, v) in g.iter().zip(&g2) {
                assert!(
                    (u - v).abs() <= 1e-9 * scale,
                    "{}: {u} vs {v}",
                    oracle.name()
                );
            }
        }
    }

    #[test]
    fn losses_that_share_a_sort_get_the_cuts_they_get_alone() {
        // Features of few integer values and integer weights, so that many scores tie (and
        // -0.0 meets 0.0): the shared sort must order them exactly as each oracle alone does.
        let d = 5;
        let (mut data, labels, codes) = problem(11, 300, d);
        for v in data.iter_mut() {
            *v = (v.signum() * v.abs().min(2.0)).round();
        }
        let n = labels.len();
        let groups = QueryGroups::from_codes(&codes, 300).unwrap();
        let x = DenseView::new(&data, n, d).unwrap();
        let w = [1.0, -1.0, 0.0, 2.0, -0.0];
        let names = [
            "map",
            "ndcg@10",
            "mrr@5",
            "roc",
            "pairwise",
            "max(map,mrr@3)",
            "mrr",
        ];
        let owned: Vec<_> = names.iter().map(|l| from_name(l).unwrap()).collect();
        let oracles: Vec<&dyn Oracle> = owned.iter().map(|o| o.as_ref()).collect();
        let mut problem = RankingProblem::new(&x, &labels, &groups, 0.0).unwrap();
        problem.admit(&oracles);
        let together = problem.cut_sums(&w, &oracles);
        for (oracle, cut) in oracles.iter().zip(&together) {
            let alone = problem.cut_sums(&w, &[*oracle]);
            assert_eq!(&alone[0], cut, "{}", oracle.name());
        }
    }

    #[test]
    fn sparse_and_dense_views_give_the_same_cut() {
        let d = 5;
        let (mut data, labels, codes) = problem(11, 60, d);
        // Zero out most values, so that the CSR matrix is really sparse.
        for (i, v) in data.iter_mut().enumerate() {
            if i % 3 != 0 {
                *v = 0.0;
            }
        }
        let n = labels.len();
        let (mut indptr, mut indices, mut values) = (vec![0i64], Vec::new(), Vec::new());
        for r in 0..n {
            for j in 0..d {
                if data[r * d + j] != 0.0 {
                    indices.push(j as i64);
                    values.push(data[r * d + j]);
                }
            }
            indptr.push(indices.len() as i64);
        }
        let groups = QueryGroups::from_codes(&codes, 60).unwrap();
        let dense = DenseView::new(&data, n, d).unwrap();
        let csr = CsrView::new(&indptr, &indices, &values, n, d).unwrap();
        let w = vec![0.5, -1.0, 0.25, 2.0, -0.125];
        let map = from_name("map").unwrap();
        let oracles = [map.as_ref()];
        let a = RankingProblem::new(&dense, &labels, &groups, 0.0)
            .unwrap()
            .cut_sums(&w, &oracles);
        let b = RankingProblem::new(&csr, &labels, &groups, 0.0)
            .unwrap()
            .cut_sums(&w, &oracles);
        assert_eq!(a[0].0, b[0].0);
        for (u, v) in a[0].1.iter().zip(&b[0].1) {
            assert!((u - v).abs() <= 1e-12 * u.abs().max(1.0));
        }
    }

    /// A warm-started path must give, at every C, a model certified within eps C of the
    /// optimum like a cold solve: the two objectives then differ by at most eps C (each is at
    /// most eps C above the common optimum), and the two weight vectors by at most
    /// sqrt(2 (gap_cold + gap_warm)) (P is 1-strongly convex, so P(w) - P* >= |w - w*|^2 / 2).
    #[test]
    fn warm_started_path_is_certified_like_cold_solves() {
        let d = 6;
        let (data, labels, codes) = problem(21, 80, d);
        let n = labels.len();
        let groups = QueryGroups::from_codes(&codes, 80).unwrap();
        let x = DenseView::new(&data, n, d).unwrap();
        let map = from_name("map").unwrap();
        let oracles = [map.as_ref()];
        let opts = Options::default();
        let cs = [0.01, 0.1, 1.0, 10.0, 100.0];
        let run = |warm: bool| {
            train_path(
                &x,
                &labels,
                &groups,
                None,
                &oracles,
                &opts,
                &cs,
                warm,
                &mut |_, _| Ok(Control::Continue),
            )
            .unwrap()
        };
        let (cold, warm) = (run(false), run(true));
        for ((c, (wc, sc)), (ww, sw)) in cs.iter().zip(&cold).zip(&warm) {
            assert_eq!(sc.stop, StopReason::Converged);
            assert_eq!(sw.stop, StopReason::Converged);
            assert!(sw.gap <= opts.eps * c, "C={c}: gap {}", sw.gap);
            assert!((sw.primal - sc.primal).abs() <= opts.eps * c, "C={c}");
            let dist = wc.iter().zip(ww).map(|(a, b)| (a - b).powi(2)).sum::<f64>();
            assert!(
                dist.sqrt() <= (2.0 * (sc.gap + sw.gap)).sqrt() + 1e-12,
                "C={c}"
            );
        }
        // The first C has nothing to start from: it is the cold solve, bit for bit.
        assert_eq!(cold[0].0, warm[0].0);
        // A single cold C is what `train` returns.
        let alone = train(
            &x,
            &labels,
            &groups,
            &oracles,
            &Options {
                c: cs[2],
                ..opts.clone()
            },
            &mut |_, _| Ok(Control::Continue),
        )
        .unwrap();
        assert_eq!(alone.0, cold[2].0);
        assert_eq!(alone.1.n_iter, cold[2].1.n_iter);
    }

    #[test]
    fn weights_of_one_give_the_unweighted_model_bit_for_bit() {
        let d = 5;
        let (data, labels, codes) = problem(8, 50, d);
        let n = labels.len();
        let groups = QueryGroups::from_codes(&codes, 50).unwrap();
        let x = DenseView::new(&data, n, d).unwrap();
        let map = from_name("map").unwrap();
        let oracles = [map.as_ref()];
        let opts = Options {
            c: 10.0,
            ..Options::default()
        };
        let ones = vec![1.0; 50];
        let run = |weights: Option<&[f64]>| {
            train_path(
                &x,
                &labels,
                &groups,
                weights,
                &oracles,
                &opts,
                &[opts.c],
                false,
                &mut |_, _| Ok(Control::Continue),
            )
            .unwrap()
            .pop()
            .unwrap()
        };
        let (plain, weighted) = (run(None), run(Some(&ones)));
        assert_eq!(plain.0, weighted.0);
        assert_eq!(plain.1.primal.to_bits(), weighted.1.primal.to_bits());
        // Doubling every weight doubles the risk, which is the problem at 2C.
        let twos = vec![2.0; 50];
        let doubled = run(Some(&twos));
        let at_2c = train_path(
            &x,
            &labels,
            &groups,
            None,
            &oracles,
            &Options {
                c: 20.0,
                ..opts.clone()
            },
            &[20.0],
            false,
            &mut |_, _| Ok(Control::Continue),
        )
        .unwrap()
        .pop()
        .unwrap();
        assert!((doubled.1.primal - at_2c.1.primal).abs() <= 20.0 * opts.eps);
    }

    #[test]
    fn bad_weights_are_refused() {
        let (data, labels, codes) = problem(2, 5, 3);
        let groups = QueryGroups::from_codes(&codes, 5).unwrap();
        let x = DenseView::new(&data, labels.len(), 3).unwrap();
        let mut p = RankingProblem::new(&x, &labels, &groups, 0.0).unwrap();
        assert!(p.set_weights(&[1.0; 4]).is_err());
        assert!(p.set_weights(&[1.0, 1.0, -1.0, 1.0, 1.0]).is_err());
        assert!(p.set_weights(&[1.0, f64::NAN, 1.0, 1.0, 1.0]).is_err());
        assert!(p.set_weights(&[1.0, 0.0, 1.0, 1.0, 3.5]).is_ok());
    }

    #[test]
    fn query_blocks_cover_every_query_once_in_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for case in 0..200 {
            let n_queries = rng.random_range(0..300);
            let mut bounds = vec![0usize];
            for _ in 0..n_queries {
                let size = if case % 4 == 0 {
                    rng.random_range(0..20_000)
                } else {
                    rng.random_range(0..40)
                };
                bounds.push(bounds.last().unwrap() + size);
            }
            let width = [1, 136, 1 << 20, 1 << 23][case % 4];
            let blocks = query_blocks(&bounds, width);
            let mut next = 0;
            for b in &blocks {
                assert_eq!(b.start, next);
                assert!(b.end > b.start);
                next = b.end;
            }
            assert_eq!(next, n_queries);
            assert!(blocks.len() <= MAX_BLOCKS);
            assert!(blocks.len() * width <= PARTIAL_BUDGET.max(width));
        }
    }
}
