//! Training bindings: the local fit, the cut sums of one partition and the cutting-plane loop
//! over cuts computed in Python (distributed training), with the per-iteration hook.

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::arrays::*;
use super::{detach, to_py};
use crate::error::Error;
use crate::oracle;
use crate::parallel::with_threads;
use crate::solver::{
    self, Control, CutSource, IterationRecord, Options, QueryCounts, RankingProblem, StopReason,
    Summary,
};

pub(super) fn record_dict<'py>(
    py: Python<'py>,
    r: &IterationRecord,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("iteration", r.iteration)?;
    d.set_item("primal", r.primal)?;
    d.set_item("dual", r.dual)?;
    d.set_item("gap", r.gap)?;
    d.set_item("loss", r.loss)?;
    d.set_item("n_cuts", r.n_cuts)?;
    d.set_item("n_active", r.n_active)?;
    d.set_item("seconds", r.seconds)?;
    Ok(d)
}

/// The per-iteration hook handed to the solver: checks for Ctrl-C and calls the Python
/// callback (if any) with the iteration's record; a true return value stops training. A
/// Python exception is kept in `error`, so the caller can re-raise it unchanged.
pub(super) fn progress_hook<'a>(
    callback: &'a Option<Py<PyAny>>,
    error: &'a mut Option<PyErr>,
) -> impl FnMut(&IterationRecord) -> crate::Result<Control> + 'a {
    move |r: &IterationRecord| {
        Python::attach(|py| {
            let outcome = py.check_signals().and_then(|_| match callback {
                Some(cb) => cb
                    .call1(py, (record_dict(py, r)?,))
                    .and_then(|v| v.is_truthy(py)),
                None => Ok(false),
            });
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

/// Trains a linear ranker. Returns (coef, summary dict).
#[pyfunction]
#[pyo3(signature = (x, y, qid_codes, n_queries, losses, c, eps, max_iter, relevance_threshold, n_threads, callback=None))]
#[allow(clippy::too_many_arguments)]
pub(super) fn fit<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    losses: Vec<String>,
    c: f64,
    eps: f64,
    max_iter: usize,
    relevance_threshold: f64,
    n_threads: usize,
    callback: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyDict>)> {
    let x = Matrix::extract(x)?;
    let labels = slice(&y, "y")?;
    let groups = groups(&qid_codes, n_queries)?;
    let oracles = losses
        .iter()
        .map(|l| oracle::from_name(l))
        .collect::<crate::Result<Vec<_>>>()
        .map_err(to_py)?;
    let opts = Options {
        c,
        eps,
        max_iter,
        relevance_threshold,
        ..Options::default()
    };
    let mut callback_error: Option<PyErr> = None;
    let result = x.run(py, |m| {
        let refs: Vec<&dyn oracle::Oracle> = oracles.iter().map(|o| o.as_ref()).collect();
        let mut on_iteration = progress_hook(&callback, &mut callback_error);
        with_threads(n_threads, || {
            solver::train(m, labels, &groups, &refs, &opts, &mut on_iteration)
        })?
    });
    let (w, s) = match result {
        Ok(v) => v,
        Err(e) => return Err(callback_error.take().unwrap_or(e)),
    };
    let counts = QueryCounts {
        usable: s.n_queries,
        no_relevant: s.n_skipped_no_relevant,
        all_relevant: s.n_skipped_all_relevant,
    };
    let summary = solve_summary_dict(py, &s, counts)?;
    Ok((PyArray1::from_vec(py, w), summary))
}

/// The summary of a `solver::solve` run as a dict (the keys of `fit`'s summary; the query
/// counts are those of the whole data set, given by the caller).
pub(super) fn solve_summary_dict<'py>(
    py: Python<'py>,
    s: &Summary,
    counts: QueryCounts,
) -> PyResult<Bound<'py, PyDict>> {
    let summary = PyDict::new(py);
    summary.set_item("primal", s.primal)?;
    summary.set_item("dual", s.dual)?;
    summary.set_item("gap", s.gap)?;
    summary.set_item("n_iter", s.n_iter)?;
    summary.set_item("n_cuts", s.n_cuts)?;
    summary.set_item("n_active", s.n_active)?;
    summary.set_item(
        "stop",
        match s.stop {
            StopReason::Converged => "converged",
            StopReason::MaxIter => "max_iter",
            StopReason::Callback => "callback",
        },
    )?;
    summary.set_item("n_queries", counts.usable)?;
    summary.set_item("n_skipped_no_relevant", counts.no_relevant)?;
    summary.set_item("n_skipped_all_relevant", counts.all_relevant)?;
    let history = PyList::empty(py);
    for r in &s.history {
        history.append(record_dict(py, r)?)?;
    }
    summary.set_item("history", history)?;
    Ok(summary)
}

pub(super) fn counts_dict<'py>(py: Python<'py>, c: &QueryCounts) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("usable", c.usable)?;
    d.set_item("no_relevant", c.no_relevant)?;
    d.set_item("all_relevant", c.all_relevant)?;
    Ok(d)
}

/// The cut sums of one part of a data set at `w`, for training on several machines: for
/// every loss, (sum_q Delta_q, sum_q deltaPsi_q) over the part's usable queries (not divided
/// by n), and the part's query counts {"usable", "no_relevant", "all_relevant"}.
#[pyfunction]
#[pyo3(signature = (x, y, qid_codes, n_queries, w, losses, relevance_threshold, n_threads))]
#[allow(clippy::too_many_arguments)]
pub(super) fn cut_sums<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    w: PyReadonlyArray1<'py, f64>,
    losses: Vec<String>,
    relevance_threshold: f64,
    n_threads: usize,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
    let x = Matrix::extract(x)?;
    let labels = slice(&y, "y")?;
    let groups = groups(&qid_codes, n_queries)?;
    let w = slice(&w, "w")?;
    if !relevance_threshold.is_finite() {
        return Err(to_py(Error::param(
            "relevance_threshold",
            "a finite number",
            relevance_threshold,
        )));
    }
    let oracles = losses
        .iter()
        .map(|l| oracle::from_name(l))
        .collect::<crate::Result<Vec<_>>>()
        .map_err(to_py)?;
    if oracles.is_empty() {
        return Err(to_py(Error::input("at least one loss is needed")));
    }
    let (sums, counts) = x.run(py, |m| {
        if m.n_cols() != w.len() {
            return Err(Error::input(format!(
                "w has {} entries but X has {} features",
                w.len(),
                m.n_cols()
            )));
        }
        let problem = RankingProblem::new(m, labels, &groups, relevance_threshold)?;
        let refs: Vec<&dyn oracle::Oracle> = oracles.iter().map(|o| o.as_ref()).collect();
        let sums = with_threads(n_threads, || problem.cut_sums(w, &refs))?;
        Ok((sums, problem.counts))
    })?;
    let out = PyList::empty(py);
    for (b, g) in sums {
        out.append((b, PyArray1::from_vec(py, g)))?;
    }
    Ok((out, counts_dict(py, &counts)?))
}

/// Cuts computed by a Python callable: `source(w)` returns one (b, g) pair per slack group,
/// b = 1/n sum_q Delta_q and g = 1/n sum_q deltaPsi_q (a float64 array of length `dim`).
pub(super) struct PyCutSource {
    source: Py<PyAny>,
    dim: usize,
    n_groups: usize,
    error: Option<PyErr>,
}

impl PyCutSource {
    fn call(&self, py: Python<'_>, w: &[f64]) -> PyResult<Vec<(f64, Vec<f64>)>> {
        py.check_signals()?;
        let result = self.source.bind(py).call1((PyArray1::from_slice(py, w),))?;
        let shape_error = || {
            PyValueError::new_err(format!(
                "the cut source must return a list of {} (float, float64 array of length {}) pairs",
                self.n_groups, self.dim
            ))
        };
        let mut cuts = Vec::with_capacity(self.n_groups);
        for item in result.try_iter().map_err(|_| shape_error())? {
            let (b, g): (f64, PyReadonlyArray1<'_, f64>) =
                item?.extract().map_err(|_| shape_error())?;
            let g = g.as_slice().map_err(|_| shape_error())?;
            if g.len() != self.dim {
                return Err(shape_error());
            }
            cuts.push((b, g.to_vec()));
        }
        if cuts.len() != self.n_groups {
            return Err(shape_error());
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
/// `PyCutSource`), e.g. summed over the partitions of a distributed data set. `counts` (the
/// query counts of the whole data set) are copied into the summary. Returns (coef, summary).
#[pyfunction]
#[pyo3(signature = (cut_source, dim, n_groups, c, eps, max_iter, counts, callback=None))]
#[allow(clippy::too_many_arguments)]
pub(super) fn solve<'py>(
    py: Python<'py>,
    cut_source: Py<PyAny>,
    dim: usize,
    n_groups: usize,
    c: f64,
    eps: f64,
    max_iter: usize,
    counts: (usize, usize, usize),
    callback: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyDict>)> {
    if dim == 0 || n_groups == 0 {
        return Err(PyValueError::new_err(format!(
            "dim and n_groups must be at least 1, got {dim} and {n_groups}"
        )));
    }
    let opts = Options {
        c,
        eps,
        max_iter,
        ..Options::default()
    };
    let mut source = PyCutSource {
        source: cut_source,
        dim,
        n_groups,
        error: None,
    };
    let mut callback_error: Option<PyErr> = None;
    let result = detach(py, || {
        let mut on_iteration = progress_hook(&callback, &mut callback_error);
        solver::solve(&mut source, &opts, &mut on_iteration)
    });
    let (w, s) = match result {
        Ok(v) => v,
        Err(e) => {
            return Err(source
                .error
                .take()
                .or_else(|| callback_error.take())
                .unwrap_or_else(|| to_py(e)))
        }
    };
    let counts = QueryCounts {
        usable: counts.0,
        no_relevant: counts.1,
        all_relevant: counts.2,
    };
    Ok((
        PyArray1::from_vec(py, w),
        solve_summary_dict(py, &s, counts)?,
    ))
}
