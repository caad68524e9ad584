//! The contract every loss implements (`Oracle`) and what is defined by it alone: the usable-
//! query rule of the binary losses (`QueryKind`) and one query's hinge. An oracle states its
//! cost (`extra_work`, `cheaper`); the guard that refuses a query beyond the budget reads the
//! registry and builds the cheaper losses, so it sits above every oracle (work.rs).

use crate::error::Result;
use crate::oracle::interleave::Sorted;

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
    /// 0: their time is that of reading the query, and they accept any length. The guard
    /// (`work::check_query_len`) refuses a query on which this exceeds `work::WORK_BUDGET`.
    fn extra_work(&self, n_docs: usize) -> f64 {
        let _ = n_docs;
        0.0
    }

    /// Loss names that compute this loss (or the nearest one) at a lower cost, the most
    /// faithful first; the first that a query is cheap enough for is the fix the guard's
    /// error names.
    fn cheaper(&self) -> Vec<String> {
        Vec::new()
    }

    /// The steps of one call on a query with these labels, for a loss whose cost depends on
    /// them as well as on the length (the graded NDCG's grows with the number of grades). By
    /// default the length decides.
    fn extra_work_labels(&self, labels: &[f64], relevant: &[bool]) -> f64 {
        let _ = relevant;
        self.extra_work(labels.len())
    }

    /// The losses a combination runs (a maximum's parts, a weighted loss's loss), which the
    /// guard asks in its place; empty for a single loss.
    fn parts(&self) -> Vec<&dyn Oracle> {
        Vec::new()
    }

    /// Refuses one query's labels that the loss cannot grade (the graded NDCG's gain must be
    /// positive and finite). Binary losses read no labels and accept every query. The guard
    /// (`work::check_query_labels`) asks this first, then checks the work.
    fn check_grades(&self, labels: &[f64], relevant: &[bool]) -> Result<()> {
        let _ = (labels, relevant);
        Ok(())
    }

    /// Refuses one query whose call would need more memory than is available (the graded
    /// NDCG's states), asked by the guard after the work is checked.
    fn check_memory(&self, labels: &[f64], relevant: &[bool]) -> Result<()> {
        let _ = (labels, relevant);
        Ok(())
    }
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
