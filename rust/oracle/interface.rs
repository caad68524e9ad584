//! The contract every loss implements (`Oracle`) and what is defined by it alone: the usable-
//! query rule of the binary losses (`QueryKind`), one query's hinge and the query-length check.

use crate::data::QueryGroups;
use crate::error::{Error, Result};
use crate::oracle::build::from_name;
use crate::oracle::interleave::Sorted;
use crate::oracle::registry::{lookup, LossSpec};

/// One query's loss-augmented argmax.
pub trait Oracle: Send + Sync {
    /// The loss name as the user spells it ("map", ...).
    fn name(&self) -> String;

    /// Finds ybar for a query whose documents have the given scores and binary relevance.
    /// The query has at least one relevant and one non-relevant document. `coef` has the
    /// query's length; the oracle overwrites it with the coefficients of deltaPsi(ybar).
    /// Returns Delta(y*, ybar).
    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64;

    /// `argmax` for a loss that reads the graded labels (the query's labels in the same order
    /// as `scores`) as well as the binary relevance derived from them. Binary losses keep this
    /// default, which ignores the labels. The query is one that `usable` accepts.
    fn argmax_labels(
        &self,
        scores: &[f64],
        labels: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        let _ = labels;
        self.argmax(scores, relevant, coef)
    }

    /// Whether the oracle starts from the query's documents split by relevance and sorted by
    /// descending score (`Sorted`); a combination of such losses sorts each query once for all
    /// of them (`argmax_sorted`).
    fn sorts(&self) -> bool {
        false
    }

    /// `argmax_labels` given `sorted = Sorted::new(scores, relevant)`, so that several
    /// oracles run on one query share its sort. The result is the same as `argmax_labels`'s;
    /// the default ignores `sorted`.
    fn argmax_sorted(
        &self,
        sorted: &Sorted,
        scores: &[f64],
        labels: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        let _ = sorted;
        self.argmax_labels(scores, labels, relevant, coef)
    }

    /// Whether a query with these labels has a constraint that can be violated. By default,
    /// `QueryKind::of` (a relevant and a non-relevant document); such a query is usable by
    /// every loss, and a graded loss ("pairwise") may accept more (any two distinct labels).
    fn usable(&self, labels: &[f64], relevant: &[bool]) -> bool {
        let _ = labels;
        QueryKind::of(relevant) == QueryKind::Usable
    }

    /// Whether `usable` accepts more than the binary rule (a graded loss), so that the error
    /// when no query is usable can say so (`oracle::usable::QueryCounts`).
    fn graded(&self) -> bool {
        false
    }

    /// The steps of one call on a query of `n_docs` documents beyond the O(n log n) of its
    /// sort, read from the cost the registry states for the loss (`LossInfo::cost`), in the
    /// worst case over the labels: P N for Algorithm 2 alone, k^2 for NDCG's clipped dynamic
    /// program, m^2 n for DORM's assignment. The O(n log n) and O(n) oracles keep the default,
    /// 0: their time is that of reading the query, and they accept any length.
    fn extra_work(&self, n_docs: usize) -> f64 {
        let _ = n_docs;
        0.0
    }

    /// Loss names that compute this loss (or the nearest one) at a lower cost, the most
    /// faithful first; the first that a query is cheap enough for is the fix
    /// `check_query_len` names.
    fn cheaper(&self) -> Vec<String> {
        Vec::new()
    }

    /// Refuses, before any work starts, a query on which one call of this oracle would take
    /// more than `WORK_BUDGET` steps (`check_work`, the one guard of every oracle); a
    /// combination asks each of its parts.
    fn check_query_len(&self, n_docs: usize) -> Result<()> {
        check_work(self, n_docs)
    }

    /// The steps of one call on a query with these labels, for a loss whose cost depends on
    /// them as well as on the length (the graded NDCG's grows with the number of grades). By
    /// default the length decides.
    fn extra_work_labels(&self, labels: &[f64], relevant: &[bool]) -> f64 {
        let _ = relevant;
        self.extra_work(labels.len())
    }

    /// Refuses, before any work starts, one query's labels that the loss cannot grade, or on
    /// which one call would exceed `WORK_BUDGET` (`check_work_at` with `extra_work_labels`).
    /// Binary losses read no labels and accept every query (their length is checked by
    /// `check_query_len`); a combination asks each of its parts.
    fn check_labels(&self, labels: &[f64], relevant: &[bool]) -> Result<()> {
        let _ = (labels, relevant);
        Ok(())
    }
}

/// The most steps one oracle call may take beyond its sort: those of DORM's O(n^3) assignment
/// on 500 documents (500^3), about 0.3 s per call on one core, and a training run makes one
/// call per query and iteration. It is the limit DORM had alone before every oracle's cost
/// was guarded.
pub const WORK_BUDGET: f64 = 1.25e8;

/// The cost guard of every oracle: refuses a query of `n_docs` documents when the oracle's
/// `extra_work` there exceeds `WORK_BUDGET`, naming the loss's stated cost and the first of
/// its `cheaper` names that the query is cheap enough for.
pub fn check_work<O: Oracle + ?Sized>(oracle: &O, n_docs: usize) -> Result<()> {
    check_work_at(oracle, n_docs, oracle.extra_work(n_docs), |o| {
        o.extra_work(n_docs)
    })
}

/// `check_work` for a query of `n_docs` documents on which `oracle` takes `work` steps; a
/// `cheaper` name is the fix when `work_of` (its work on the same query) is within budget.
pub fn check_work_at<O: Oracle + ?Sized>(
    oracle: &O,
    n_docs: usize,
    work: f64,
    work_of: impl Fn(&dyn Oracle) -> f64,
) -> Result<()> {
    if work <= WORK_BUDGET {
        return Ok(());
    }
    let name = oracle.name();
    let cost = LossSpec::parse(&name)
        .and_then(|spec| lookup(spec.base))
        .map_or("", |info| info.cost);
    // The cheaper names in order, then theirs (NDCG@k with a huge k leads on to NDCG).
    let mut candidates = oracle.cheaper();
    let mut fix = None;
    let mut next = 0;
    while fix.is_none() && next < candidates.len() && next < 16 {
        if let Ok(o) = from_name(&candidates[next]) {
            if work_of(o.as_ref()) <= WORK_BUDGET {
                fix = Some(candidates[next].clone());
            } else {
                candidates.extend(o.cheaper());
            }
        }
        next += 1;
    }
    let fix = match fix {
        Some(f) => format!("use {f:?}"),
        None => "use shorter queries".to_string(),
    };
    Err(Error::param(
        "loss",
        &format!(
            "a loss whose oracle takes at most {WORK_BUDGET:.3e} steps per query and \
             iteration; this data has a query of {n_docs} documents, on which {name:?} (cost \
             {cost}) takes about {work:.3e}: {fix}"
        ),
        format!("{name:?}"),
    ))
}

/// Asks every oracle whether it accepts the labels of every query (`Oracle::check_labels`):
/// `labels` and `relevant` in grouped order, query q spanning `bounds[q]..bounds[q + 1]`.
pub fn check_labels(
    oracles: &[&dyn Oracle],
    labels: &[f64],
    relevant: &[bool],
    bounds: &[usize],
) -> Result<()> {
    bounds.windows(2).try_for_each(|span| {
        let span = span[0]..span[1];
        oracles
            .iter()
            .try_for_each(|o| o.check_labels(&labels[span.clone()], &relevant[span.clone()]))
    })
}

/// Asks every oracle whether it accepts the longest query of `groups`.
pub fn check_query_lens(oracles: &[&dyn Oracle], groups: &QueryGroups) -> Result<()> {
    let longest = (0..groups.n_queries())
        .map(|q| groups.bounds[q + 1] - groups.bounds[q])
        .max()
        .unwrap_or(0);
    oracles.iter().try_for_each(|o| o.check_query_len(longest))
}

/// What a query can contribute to training, by its documents' binary relevance. This is the
/// one place the rule of the binary losses lives: a query gives a constraint (and a non-zero
/// hinge) only when it has at least one relevant and one non-relevant document, since otherwise
/// every ranking of it is equally right. `Oracle::usable` defaults to it (a graded loss such as
/// "pairwise" accepts more), and the query counts the estimators report (`QueryCounts`,
/// `ProblemSummary`) are by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryKind {
    Usable,
    NoRelevant,
    AllRelevant,
}

impl QueryKind {
    pub fn of(relevant: &[bool]) -> Self {
        let p = relevant.iter().filter(|&&r| r).count();
        if p == 0 {
            QueryKind::NoRelevant
        } else if p == relevant.len() {
            QueryKind::AllRelevant
        } else {
            QueryKind::Usable
        }
    }
}

/// The value max_y Delta(y*, y) + w.Psi(y) - w.Psi(y*) for one query, through `oracle`.
/// It is non-negative because y = y* is a candidate.
pub fn hinge(oracle: &dyn Oracle, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
    let loss = oracle.argmax(scores, relevant, coef);
    loss - dot(coef, scores)
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
