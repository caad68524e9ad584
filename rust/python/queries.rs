//! Which queries of a data set can take part in training (the usable-query rule of
//! `oracle::QueryUse`), and scikit-learn's n_jobs as the core's thread count.

use super::ndbuf::{from_vec, PyReadonlyArray1};
use pyo3::prelude::*;

use super::arrays::*;
use super::config::TrainConfig;
use super::params::threads_of;
use super::results::ProblemSummary;
use crate::error::Error;
use crate::oracle;
use crate::oracle::QueryUse;

/// The usable-query rule (`oracle::QueryUse`) applied to a data set: labels and relevance in
/// grouped order, with the oracles of `config` (none: the binary rule alone).
fn query_use(
    y: &PyReadonlyArray1<'_, f64>,
    qid_codes: &PyReadonlyArray1<'_, i64>,
    n_queries: usize,
    relevance_threshold: f64,
    config: Option<&TrainConfig>,
) -> PyResult<QueryUse> {
    let labels = slice(y, "y")?;
    let groups = groups(qid_codes, n_queries)?;
    if labels.len() != groups.n_rows() {
        return Err(PyErr::from(Error::input(format!(
            "y has {} entries but qid {}",
            labels.len(),
            groups.n_rows()
        ))));
    }
    let oracles = match config {
        Some(c) => c.oracles()?,
        None => Vec::new(),
    };
    let refs: Vec<&dyn oracle::Oracle> = oracles.iter().map(|o| o.as_ref()).collect();
    let grouped: Vec<f64> = groups.order.iter().map(|&r| labels[r]).collect();
    let relevant: Vec<bool> = grouped.iter().map(|&l| l > relevance_threshold).collect();
    Ok(QueryUse::of(&grouped, &relevant, &groups.bounds, &refs))
}

/// The query counts of a data set (which queries can contribute to training). With `config`,
/// a query without a relevant or without a non-relevant document counts as usable when one of
/// its losses can use it (the graded "pairwise" loss uses any two distinct labels), as the
/// training problem admits it; without, the binary rule alone.
#[pyfunction]
#[pyo3(signature = (y, qid_codes, n_queries, relevance_threshold, config=None))]
pub(super) fn problem_summary(
    y: PyReadonlyArray1<'_, f64>,
    qid_codes: PyReadonlyArray1<'_, i64>,
    n_queries: usize,
    relevance_threshold: f64,
    config: Option<PyRef<'_, TrainConfig>>,
) -> PyResult<ProblemSummary> {
    let rule = query_use(
        &y,
        &qid_codes,
        n_queries,
        relevance_threshold,
        config.as_deref(),
    )?;
    Ok(ProblemSummary {
        counts: rule.counts,
    })
}

/// The binary kind of every query (0: a relevant and a non-relevant document, 1: no relevant
/// document, 2: only relevant documents), in the order of the query codes.
#[pyfunction]
pub(super) fn query_kinds<'py>(
    py: Python<'py>,
    y: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    relevance_threshold: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let rule = query_use(&y, &qid_codes, n_queries, relevance_threshold, None)?;
    let kinds: Vec<u8> = rule
        .kinds
        .iter()
        .map(|k| match k {
            oracle::QueryKind::Usable => 0,
            oracle::QueryKind::NoRelevant => 1,
            oracle::QueryKind::AllRelevant => 2,
        })
        .collect();
    from_vec(py, kinds)
}

/// scikit-learn's n_jobs as the core's thread count (0: one per core).
#[pyfunction]
pub(super) fn n_threads(n_jobs: &Bound<'_, PyAny>) -> PyResult<usize> {
    threads_of(n_jobs)
}
