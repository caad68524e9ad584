//! The local fit: one model per C of a path on a matrix the core borrows (`fit_path`,
//! `fit_path_from`). The per-iteration hook that every training binding hands the solver is in
//! `results.rs`, with the records it passes.
//! The query counts are in `queries.rs`, the loop over cuts computed in Python in `solve.rs`.

use super::ndbuf::{from_vec, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::arrays::*;
use super::config::TrainConfig;
use super::results::{progress_hook, FitSummary};
use super::solve::WarmState;
use crate::data::{QueryGroups, RowMatrix};
use crate::oracle;
use crate::oracle::QueryCounts;
use crate::runtime::pool::with_threads;
use crate::solver::{self, Control, IterationRecord};

/// The arrays of a training call as the core borrows them: the matrix (its values are checked
/// when a fit runs on it), the labels and the query groups of `qid_codes`. The labels and the
/// codes have one entry per row of the matrix; a code of -1 leaves its row out of training
/// (`QueryGroups::from_codes`), so that a split of a search trains on its rows of the one
/// matrix instead of a copy of them.
pub(super) fn training_data<'py, 'a>(
    x: &Bound<'py, PyAny>,
    y: &'a PyReadonlyArray1<'py, f64>,
    qid_codes: &PyReadonlyArray1<'py, i64>,
    n_queries: usize,
) -> PyResult<(Matrix<'py>, &'a [f64], QueryGroups)> {
    Ok((
        Matrix::extract(x)?,
        slice(y, "y")?,
        groups(qid_codes, n_queries)?,
    ))
}

/// Runs `fit` on the checked matrix `x` with the GIL released, on `n_threads` threads, handing
/// it the per-iteration hook of `callback` (`progress_hook`, whose memory check counts `cuts`
/// cuts per iteration, with the iterate when `with_coef`). An exception the callback raised
/// propagates as itself, not as the core's error that stopped the fit.
pub(super) fn run_fit<R: Send>(
    py: Python<'_>,
    x: &Matrix<'_>,
    n_threads: usize,
    callback: &Option<Py<PyAny>>,
    (cuts, with_coef): (usize, bool),
    fit: impl FnOnce(
            &dyn RowMatrix,
            &mut dyn FnMut(&IterationRecord, &[f64]) -> crate::Result<Control>,
        ) -> crate::Result<R>
        + Send,
) -> PyResult<R> {
    let mut callback_error: Option<PyErr> = None;
    let result = x.run(py, n_threads, |m| {
        let mut on_iteration =
            progress_hook(callback, &mut callback_error, m.n_cols(), cuts, with_coef);
        with_threads(n_threads, || fit(m, &mut on_iteration))?
    });
    result.map_err(|e| callback_error.take().unwrap_or(e))
}

/// Trains one model per C of `cs` (default: `config`'s own C alone), in the order given, on
/// one problem prepared once; with `warm`, each C starts from the final working set and iterate
/// of the C before it (see `solver::WarmStart`). Optional per-query weights
/// (`query_weights[code]`, see `RankingProblem::set_weights`). The callback (if any) gets every
/// iteration's record, with the iterate w as "coef" when `with_coef`; a true return value stops
/// training. Returns [(coef, FitSummary)], one per C.
///
/// `y` and `qid_codes` have one entry per row of `x`; rows of code -1 are in no query and so
/// take no part in training, which is then bit for bit training on the other rows alone (taken
/// in row order), with `n_queries` their queries.
#[pyfunction]
#[pyo3(signature = (x, y, qid_codes, n_queries, config, cs=None, warm=true, callback=None, with_coef=false, method="ocas", query_weights=None))]
// A Python signature: the arguments are the keyword arguments the callers pass.
#[allow(clippy::too_many_arguments)]
pub(super) fn fit_path<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    config: PyRef<'py, TrainConfig>,
    cs: Option<Vec<f64>>,
    warm: bool,
    callback: Option<Py<PyAny>>,
    with_coef: bool,
    method: &str,
    query_weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Bound<'py, PyList>> {
    let (path, _) = path_from(
        py,
        x,
        y,
        qid_codes,
        n_queries,
        &config,
        cs,
        warm,
        None,
        callback,
        with_coef,
        method,
        query_weights,
    )?;
    Ok(path)
}

/// `fit_path` with warm starts, its first C started from `warm_state` (the state a path of the
/// same data and config returned; None: from scratch). Returns ([(coef, FitSummary)], the
/// WarmState its last C ended in): a path fitted in pieces this way gives the models of the
/// path fitted in one `fit_path` call bit for bit, so that a caller (SVMMapCV's search) can
/// score each C before deciding whether to fit larger ones. A state of another problem (other
/// losses, labels, queries, query weights, threshold or number of features) is refused.
#[pyfunction]
#[pyo3(signature = (x, y, qid_codes, n_queries, config, cs, warm_state=None, query_weights=None))]
#[allow(clippy::too_many_arguments)]
pub(super) fn fit_path_from<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    config: PyRef<'py, TrainConfig>,
    cs: Vec<f64>,
    warm_state: Option<PyRef<'py, WarmState>>,
    query_weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<(Bound<'py, PyList>, WarmState)> {
    let start = warm_state.as_ref().map(|s| &s.state);
    let (path, state) = path_from(
        py,
        x,
        y,
        qid_codes,
        n_queries,
        &config,
        Some(cs),
        true,
        start,
        None,
        false,
        "ocas",
        query_weights,
    )?;
    let state =
        state.ok_or_else(|| PyValueError::new_err("the path ended without a warm state"))?;
    Ok((path, WarmState { state }))
}

/// The body of `fit_path` and `fit_path_from`.
#[allow(clippy::too_many_arguments)]
fn path_from<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    config: &TrainConfig,
    cs: Option<Vec<f64>>,
    warm: bool,
    start: Option<&solver::WarmStart>,
    callback: Option<Py<PyAny>>,
    with_coef: bool,
    method: &str,
    query_weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<(Bound<'py, PyList>, Option<solver::WarmStart>)> {
    if let Some(base) = &config.latent {
        return Err(PyValueError::new_err(format!(
            "fit_path solves convex problems; a latent-target loss is trained in CCCP rounds of \
             {base:?} by svmmap._fit.training (SVMMap.fit, svmmap learn, SVMMapCV)"
        )));
    }
    let (x, labels, groups) = training_data(x, &y, &qid_codes, n_queries)?;
    let weights = match &query_weights {
        Some(a) => Some(slice(a, "query_weights")?),
        None => None,
    };
    let oracles = config.oracles()?;
    // The cutting-plane method is an internal switch (benchmarks/solver.py times the plain one).
    let method = solver::Method::from_name(method)?;
    // The method is no parameter of the table, so the copy checks nothing again.
    let options = config.options.with(|o| o.method = method)?;
    let cs = cs.unwrap_or_else(|| vec![options.c]);
    let opts = &options;
    let hook = (
        opts.max_cuts_per_iteration(oracles.len(), n_queries),
        with_coef,
    );
    let (path, state) = run_fit(
        py,
        &x,
        config.n_threads,
        &callback,
        hook,
        |m, on_iteration| {
            let refs: Vec<&dyn oracle::Oracle> = oracles.iter().map(|o| o.as_ref()).collect();
            solver::train_path_from(
                m,
                labels,
                &groups,
                weights,
                &refs,
                opts,
                &cs,
                warm,
                start,
                on_iteration,
            )
        },
    )?;
    let out = PyList::empty(py);
    for (w, s) in path {
        out.append((from_vec(py, w)?, fit_summary(py, &s)?))?;
    }
    Ok((out, state))
}

pub(super) fn fit_summary(py: Python<'_>, s: &solver::Summary) -> PyResult<FitSummary> {
    let counts = QueryCounts {
        usable: s.n_queries,
        no_relevant: s.n_skipped_no_relevant,
        all_relevant: s.n_skipped_all_relevant,
        ..QueryCounts::default()
    };
    FitSummary::new(py, s, counts)
}
