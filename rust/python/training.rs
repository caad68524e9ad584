//! Training bindings: the local fit, the cut sums of one partition and the cutting-plane loop
//! over cuts computed in Python (distributed training), with the per-iteration hook.

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::arrays::*;
use super::config::{threads_of, TrainConfig};
use super::detach;
use super::results::{record_dict, FitSummary, ProblemSummary};
use crate::data::{QueryGroups, RowMatrix};
use crate::error::Error;
use crate::oracle;
use crate::oracle::{QueryCounts, QueryUse};
use crate::runtime::pool::with_threads;
use crate::solver::{self, Control, CutSource, IterationRecord};

/// The per-iteration hook handed to the solver: stops on Ctrl-C (the cancellation flag set by
/// `detach`), refuses to grow the working set beyond the memory available (each cut is a dense
/// vector of `dim` numbers per slack group), and calls the Python callback (if any) with the
/// iteration's record; a true return value stops training. A Python exception is kept in
/// `error`, so the caller can re-raise it unchanged. With `with_coef`, the record also holds
/// the iterate w as "coef" (the estimator scores its validation sets with it).
pub(super) fn progress_hook<'a>(
    callback: &'a Option<Py<PyAny>>,
    error: &'a mut Option<PyErr>,
    dim: usize,
    n_groups: usize,
    with_coef: bool,
) -> impl FnMut(&IterationRecord, &[f64]) -> crate::Result<Control> + 'a {
    move |r: &IterationRecord, w: &[f64]| {
        crate::runtime::cancel::check()?;
        crate::runtime::memory::check_working_set(dim, n_groups)?;
        let Some(cb) = callback else {
            return Ok(Control::Continue);
        };
        Python::attach(|py| {
            let outcome = record_dict(py, r)
                .and_then(|record| {
                    if with_coef {
                        record.set_item("coef", PyArray1::from_slice(py, w))?;
                    }
                    cb.call1(py, (record,))
                })
                .and_then(|v| v.is_truthy(py));
            match outcome {
                Ok(true) => Ok(Control::Stop),
                Ok(false) => Ok(Control::Continue),
                Err(e) => {
                    let msg = e.to_string();
                    *error = Some(e);
                    Err(Error::Interrupted(msg))
                }
            }
        })
    }
}

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
/// score each C before deciding whether to fit larger ones.
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
    let start = warm_state.as_ref().map(|s| s.state.clone());
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
    start: Option<solver::WarmStart>,
    callback: Option<Py<PyAny>>,
    with_coef: bool,
    method: &str,
    query_weights: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<(Bound<'py, PyList>, Option<solver::WarmStart>)> {
    if let Some(base) = &config.latent {
        return Err(PyValueError::new_err(format!(
            "fit_path solves convex problems; a latent-target loss is trained in CCCP rounds of \
             {base:?} by svmmap._training (SVMMap.fit, svmmap learn, SVMMapCV)"
        )));
    }
    let (x, labels, groups) = training_data(x, &y, &qid_codes, n_queries)?;
    let weights = match &query_weights {
        Some(a) => Some(slice(a, "query_weights")?),
        None => None,
    };
    let oracles = config.oracles()?;
    // The cutting-plane method is an internal switch (benchmarks/solver.py times the plain one).
    let mut options = config.options.clone();
    options.method = solver::Method::from_name(method)?;
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
        out.append((PyArray1::from_vec(py, w), fit_summary(py, &s)?))?;
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
) -> PyResult<Bound<'py, PyArray1<u8>>> {
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
    Ok(PyArray1::from_vec(py, kinds))
}

/// scikit-learn's n_jobs as the core's thread count (0: one per core).
#[pyfunction]
pub(super) fn n_threads(n_jobs: &Bound<'_, PyAny>) -> PyResult<usize> {
    threads_of(n_jobs)
}

/// Cuts computed in Python, e.g. on the machines that hold the parts of a data set:
/// `source(w)` returns, for every part, one (sum_q Delta_q, sum_q deltaPsi_q) pair per slack
/// group over the part's usable queries, not divided by n. The parts are added in the order
/// given (so the cut does not depend on which machine answered first) and divided by n, the
/// usable queries of the whole data set.
pub(super) struct PyCutSource {
    source: Py<PyAny>,
    dim: usize,
    n_groups: usize,
    inv_n: f64,
    error: Option<PyErr>,
}

impl PyCutSource {
    fn call(&self, py: Python<'_>, w: &[f64]) -> PyResult<Vec<(f64, Vec<f64>)>> {
        py.check_signals()?;
        let result = self.source.bind(py).call1((PyArray1::from_slice(py, w),))?;
        let shape_error = || {
            PyValueError::new_err(format!(
                "the cut source must return, for every part, a list of {} (float, float64 array \
                 of length {}) pairs",
                self.n_groups, self.dim
            ))
        };
        let mut cuts: Vec<(f64, Vec<f64>)> = (0..self.n_groups)
            .map(|_| (0.0, vec![0.0; self.dim]))
            .collect();
        for part in result.try_iter().map_err(|_| shape_error())? {
            let part = part?;
            let mut n_seen = 0;
            for (s, item) in part.try_iter().map_err(|_| shape_error())?.enumerate() {
                let (b, g): (f64, PyReadonlyArray1<'_, f64>) =
                    item?.extract().map_err(|_| shape_error())?;
                let g = g.as_slice().map_err(|_| shape_error())?;
                if s >= self.n_groups || g.len() != self.dim {
                    return Err(shape_error());
                }
                let (total_b, total_g) = &mut cuts[s];
                *total_b += b;
                for (t, v) in total_g.iter_mut().zip(g) {
                    *t += v;
                }
                n_seen += 1;
            }
            if n_seen != self.n_groups {
                return Err(shape_error());
            }
        }
        for (b, g) in cuts.iter_mut() {
            *b *= self.inv_n;
            for v in g.iter_mut() {
                *v *= self.inv_n;
            }
        }
        if let Some((s, _)) = cuts
            .iter()
            .enumerate()
            .find(|(_, (b, g))| !b.is_finite() || g.iter().any(|v| !v.is_finite()))
        {
            return Err(PyValueError::new_err(format!(
                "the cut source returned a non-finite value for loss {s}"
            )));
        }
        Ok(cuts)
    }
}

impl CutSource for PyCutSource {
    fn dim(&self) -> usize {
        self.dim
    }
    fn n_groups(&self) -> usize {
        self.n_groups
    }
    fn cuts(&mut self, w: &[f64]) -> crate::Result<Vec<(f64, Vec<f64>)>> {
        Python::attach(|py| match self.call(py, w) {
            Ok(cuts) => Ok(cuts),
            Err(e) => {
                let msg = e.to_string();
                self.error = Some(e);
                Err(Error::Interrupted(msg))
            }
        })
    }
}

/// Runs the cutting-plane loop on cuts computed by the Python callable `cut_source(w)` (see
/// `PyCutSource`), e.g. over the partitions of a distributed data set. `problem` holds the query
/// counts of the whole data set: n of C/n is its `used`, and it is copied into the summary.
/// The callback (if any) gets every iteration's record, with the iterate w as "coef" when
/// `with_coef` (as `fit_path`'s: validation sets score it). Returns (coef, FitSummary).
#[pyfunction]
#[pyo3(signature = (cut_source, dim, config, problem, callback=None, with_coef=false))]
pub(super) fn solve<'py>(
    py: Python<'py>,
    cut_source: Py<PyAny>,
    dim: usize,
    config: PyRef<'py, TrainConfig>,
    problem: PyRef<'py, ProblemSummary>,
    callback: Option<Py<PyAny>>,
    with_coef: bool,
) -> PyResult<(Bound<'py, PyArray1<f64>>, FitSummary)> {
    let (w, summary, _) = solve_from(
        py, cut_source, dim, &config, &problem, callback, with_coef, None,
    )?;
    Ok((w, summary))
}

/// `solve` started from `warm` (None: from scratch), also returning the final state, from
/// which a solve of the same problem at another C, or of a shifted one
/// (`WarmState.shifted`), can start. Returns (coef, FitSummary, WarmState).
#[pyfunction]
#[pyo3(signature = (cut_source, dim, config, problem, warm=None, callback=None))]
pub(super) fn solve_warm<'py>(
    py: Python<'py>,
    cut_source: Py<PyAny>,
    dim: usize,
    config: PyRef<'py, TrainConfig>,
    problem: PyRef<'py, ProblemSummary>,
    warm: Option<PyRef<'py, WarmState>>,
    callback: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, FitSummary, WarmState)> {
    let warm = warm.as_ref().map(|state| &state.state);
    let (w, summary, state) = solve_from(
        py, cut_source, dim, &config, &problem, callback, false, warm,
    )?;
    let state = state
        .ok_or_else(|| PyValueError::new_err("a warm start needs the OCAS method (the default)"))?;
    Ok((w, summary, WarmState { state }))
}

/// Where a solve of `solve_warm` may start (`solver::WarmStart`): the final working set and
/// iterate of a solve, opaque to Python.
#[pyclass(module = "svmmap._core", frozen)]
pub struct WarmState {
    state: solver::WarmStart,
}

#[pymethods]
impl WarmState {
    /// The state for the problem whose every cut is this one's with `delta` added to its g
    /// (in the units of the solver's cuts: a source's sums times 1/n); see
    /// `solver::WarmStart::shifted`.
    fn shifted(&self, delta: PyReadonlyArray1<'_, f64>) -> PyResult<WarmState> {
        let delta = slice(&delta, "delta")?;
        Ok(WarmState {
            state: self.state.shifted(delta)?,
        })
    }
}

#[allow(clippy::too_many_arguments)]
fn solve_from<'py>(
    py: Python<'py>,
    cut_source: Py<PyAny>,
    dim: usize,
    config: &TrainConfig,
    problem: &ProblemSummary,
    callback: Option<Py<PyAny>>,
    with_coef: bool,
    warm: Option<&solver::WarmStart>,
) -> PyResult<(
    Bound<'py, PyArray1<f64>>,
    FitSummary,
    Option<solver::WarmStart>,
)> {
    if dim == 0 {
        return Err(PyValueError::new_err("dim must be at least 1, got 0"));
    }
    let opts = &config.options;
    problem.counts.require_usable(opts.relevance_threshold)?;
    let mut source = PyCutSource {
        source: cut_source,
        dim,
        n_groups: config.groups.len(),
        inv_n: 1.0 / problem.counts.usable as f64,
        error: None,
    };
    let mut callback_error: Option<PyErr> = None;
    let result = detach(py, || {
        let n_groups = source.n_groups;
        let mut on_iteration =
            progress_hook(&callback, &mut callback_error, dim, n_groups, with_coef);
        crate::runtime::memory::check_working_set(dim, n_groups)?;
        solver::solve_from(&mut source, opts, warm, &mut on_iteration)
    });
    let (w, s, state) = match result {
        Ok(v) => v,
        Err(e) => {
            return Err(source
                .error
                .take()
                .or_else(|| callback_error.take())
                .unwrap_or_else(|| PyErr::from(e)))
        }
    };
    Ok((
        PyArray1::from_vec(py, w),
        FitSummary::new(py, &s, problem.counts)?,
        state,
    ))
}
