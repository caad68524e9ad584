//! Typed results: the problem summary (query counts, `ProblemSummary`), the fit summary
//! (`FitSummary`), and the iteration records, with the per-iteration hook that hands them to
//! Python (`progress_hook`, shared by `training.rs` and `solve.rs`).

use super::ndbuf::from_slice;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::error::Error;
use crate::oracle::QueryCounts;
use crate::solver::{Control, IterationRecord, Summary};

/// How many queries of a data set can contribute to training, and why the others cannot (the
/// rule is `oracle::usable`). Local, distributed and baseline training report these.
#[pyclass(module = "svmmap._core", frozen, eq)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ProblemSummary {
    pub(super) counts: QueryCounts,
}

#[pymethods]
impl ProblemSummary {
    #[new]
    #[pyo3(signature = (*, used=0, no_relevant=0, all_relevant=0, graded=false))]
    fn new(used: usize, no_relevant: usize, all_relevant: usize, graded: bool) -> Self {
        ProblemSummary {
            counts: QueryCounts {
                usable: used,
                no_relevant,
                all_relevant,
                graded,
            },
        }
    }

    /// Queries with a relevant and a non-relevant document: the n of C/n.
    #[getter]
    fn used(&self) -> usize {
        self.counts.usable
    }
    #[getter]
    fn no_relevant(&self) -> usize {
        self.counts.no_relevant
    }
    #[getter]
    fn all_relevant(&self) -> usize {
        self.counts.all_relevant
    }
    #[getter]
    fn skipped(&self) -> usize {
        self.counts.no_relevant + self.counts.all_relevant
    }
    #[getter]
    fn total(&self) -> usize {
        self.counts.total()
    }

    /// The summary of several parts of one data set.
    #[staticmethod]
    fn merge(parts: Vec<PyRef<'_, ProblemSummary>>) -> Self {
        let counts: Vec<QueryCounts> = parts.iter().map(|p| p.counts).collect();
        ProblemSummary {
            counts: QueryCounts::merged(&counts),
        }
    }

    /// Raises the core's error when no query can contribute to training.
    fn require_usable(&self, relevance_threshold: f64) -> PyResult<()> {
        self.counts
            .require_usable(relevance_threshold)
            .map_err(PyErr::from)
    }

    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        let d = PyDict::new(py);
        d.set_item("used", self.counts.usable)?;
        d.set_item("no_relevant", self.counts.no_relevant)?;
        d.set_item("all_relevant", self.counts.all_relevant)?;
        d.set_item("graded", self.counts.graded)?;
        Ok((PyTuple::empty(py), d))
    }

    fn __getstate__(&self, py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    fn __repr__(&self) -> String {
        format!(
            "ProblemSummary(used={}, no_relevant={}, all_relevant={})",
            self.counts.usable, self.counts.no_relevant, self.counts.all_relevant
        )
    }
}

/// The outcome of a cutting-plane run. `working_set` counts the cuts held by the QP at the
/// last iteration and `active_cuts` those with a positive dual variable (the estimators'
/// `n_cuts_`); each history record is a dict with the keys of `IterationRecord` in `_core.pyi`
/// (there, "n_cuts" is the working set and "n_active" the active cuts).
#[pyclass(module = "svmmap._core", frozen)]
pub struct FitSummary {
    #[pyo3(get)]
    primal: f64,
    #[pyo3(get)]
    dual: f64,
    #[pyo3(get)]
    gap: f64,
    #[pyo3(get)]
    n_iter: usize,
    #[pyo3(get)]
    working_set: usize,
    #[pyo3(get)]
    active_cuts: usize,
    /// Oracle passes over the data (an OCAS iteration may take two).
    #[pyo3(get)]
    n_evals: usize,
    /// The duality gap below which training stops: eps times the sum of the slack groups' C.
    #[pyo3(get)]
    tolerance: f64,
    /// Seconds spent in the working-set QP.
    #[pyo3(get)]
    qp_seconds: f64,
    /// Working-set QPs the exact method left to coordinate ascent (SMO), which is slow on
    /// ill-conditioned working sets.
    #[pyo3(get)]
    qp_fallbacks: usize,
    #[pyo3(get)]
    stop: &'static str,
    #[pyo3(get)]
    problem: ProblemSummary,
    #[pyo3(get)]
    history: Py<PyList>,
}

impl FitSummary {
    pub(super) fn new(py: Python<'_>, s: &Summary, counts: QueryCounts) -> PyResult<Self> {
        let history = PyList::empty(py);
        for r in &s.history {
            history.append(record_dict(py, r)?)?;
        }
        Ok(FitSummary {
            primal: s.primal,
            dual: s.dual,
            gap: s.gap,
            n_iter: s.n_iter,
            working_set: s.n_cuts,
            active_cuts: s.n_active,
            n_evals: s.n_evals,
            tolerance: s.tolerance,
            qp_seconds: s.qp_seconds,
            qp_fallbacks: s.qp_fallbacks,
            stop: s.stop.name(),
            problem: ProblemSummary { counts },
            history: history.unbind(),
        })
    }
}

#[pymethods]
impl FitSummary {
    fn __repr__(&self) -> String {
        format!(
            "FitSummary(stop={:?}, n_iter={}, primal={}, gap={}, active_cuts={}, problem={})",
            self.stop,
            self.n_iter,
            self.primal,
            self.gap,
            self.active_cuts,
            self.problem.__repr__()
        )
    }
}

/// One iteration's record as the dict the callbacks and `history_` see (keys of
/// `IterationRecord` in `_core.pyi`).
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
                        record.set_item("coef", from_slice(py, w)?)?;
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
