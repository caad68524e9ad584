//! The cutting-plane loop over cuts computed in Python (distributed training, `svmmap.dask`):
//! `solve` and `solve_warm`, the source that sums the parts' cuts, and the opaque warm state.

use super::ndbuf::{from_slice, from_vec, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::arrays::slice;
use super::config::TrainConfig;
use super::detach;
use super::results::{progress_hook, FitSummary, ProblemSummary};
use crate::error::Error;
use crate::solver::{self, CutSource};

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
        let result = self.source.bind(py).call1((from_slice(py, w)?,))?;
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
        let mut n_parts = 0;
        for part in result.try_iter().map_err(|_| shape_error())? {
            let part = part?;
            n_parts += 1;
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
        // No part is no data, not a zero risk: summing none made w = 0 "converged" with a
        // primal objective of 0 whatever the problem was.
        if n_parts == 0 {
            return Err(PyValueError::new_err(format!(
                "the cut source returned no part: it must return, for every part, a list of {} \
                 (float, float64 array of length {}) pairs, and at least one part",
                self.n_groups, self.dim
            )));
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
) -> PyResult<(Bound<'py, PyAny>, FitSummary)> {
    let (w, summary, _) = solve_from(
        py, cut_source, dim, &config, &problem, callback, with_coef, None,
    )?;
    Ok((w, summary))
}

/// `solve` started from `warm` (None: from scratch), also returning the final state, from
/// which a solve of the same problem at another C, or of a shifted one
/// (`WarmState.shifted`), can start. Returns (coef, FitSummary, WarmState). The state must
/// come from this cut source's problem (or its shift): its cuts bound only that problem's risk,
/// and a cut source has no identity to check, so a state of another problem gives a wrong fit
/// certified as converged. `fit_path_from`, whose problem is known, refuses such a state.
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
) -> PyResult<(Bound<'py, PyAny>, FitSummary, WarmState)> {
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
    pub(super) state: solver::WarmStart,
}

#[pymethods]
impl WarmState {
    /// The bytes the state holds (its cuts, dual variables and iterate): a C path's states keep
    /// their cuts in f32 (see `solver::WarmStart`).
    #[getter]
    fn nbytes(&self) -> usize {
        self.state.nbytes()
    }

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
) -> PyResult<(Bound<'py, PyAny>, FitSummary, Option<solver::WarmStart>)> {
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
        from_vec(py, w)?,
        FitSummary::new(py, &s, problem.counts)?,
        state,
    ))
}
