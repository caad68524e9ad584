//! All PyO3 code. Each binding borrows the numpy buffers, builds a view, releases the GIL,
//! calls the core and converts its error. Nothing here computes anything itself.

use numpy::ndarray::Array2;
use numpy::{PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::binning;
use crate::data::reader::{read_letor, FromF64, LetorData, ReadOptions};
use crate::data::{CsrView, DenseView, QueryGroups, RowMatrix, Scalar, SparseIndex};
use crate::error::Error;
use crate::metrics::{self, Conventions, Gain, Metric, Ties};
use crate::model::ModelFile;
use crate::oracle;
use crate::parallel::{matvec, with_threads};
use crate::solver::{
    self, Control, CutSource, IterationRecord, Options, QueryCounts, RankingProblem, StopReason,
    Summary,
};

create_exception!(
    _core,
    DataFormatError,
    PyValueError,
    "A data file could not be parsed; the message names the file, the line and the field."
);
create_exception!(
    _core,
    ModelFormatError,
    PyValueError,
    "A model file is truncated, corrupted, of another format or of an unsupported version."
);

create_exception!(
    _core,
    InternalError,
    PyRuntimeError,
    "A bug in svmmap: a panic inside the Rust core was caught at the boundary. Please report it."
);

/// Releases the GIL and runs `f`, turning a panic in it (or in a rayon worker it waits for)
/// into `Error::Internal`, so that no panic crosses into Python. Every call into the core goes
/// through here (a test in guard.rs checks that this file has no other `py.detach`).
fn detach<R: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> crate::Result<R> + Send,
) -> crate::Result<R> {
    py.detach(|| crate::guard::catch_panics(f))
}

fn to_py(err: Error) -> PyErr {
    match err {
        Error::Internal(_) => InternalError::new_err(err.to_string()),
        Error::Parse { .. } => DataFormatError::new_err(err.to_string()),
        Error::Io {
            ref path,
            ref source,
        } => {
            let errno = source.raw_os_error().unwrap_or(0);
            let kind = source.kind();
            let message = source.to_string();
            let path = path.clone();
            if kind == std::io::ErrorKind::NotFound {
                pyo3::exceptions::PyFileNotFoundError::new_err((errno, message, path))
            } else {
                PyOSError::new_err((errno, message, path))
            }
        }
        Error::Model(_) => ModelFormatError::new_err(err.to_string()),
        _ => PyValueError::new_err(err.to_string()),
    }
}

/// A feature matrix as handed over by the Python layer: a C-contiguous 2-D float array, or the
/// tuple (data, indices, indptr, n_rows, n_cols) of a CSR matrix.
enum Matrix<'py> {
    DenseF64(PyReadonlyArray2<'py, f64>),
    DenseF32(PyReadonlyArray2<'py, f32>),
    Csr {
        data: Floats<'py>,
        indices: Ints<'py>,
        indptr: Ints<'py>,
        shape: (usize, usize),
    },
}

enum Floats<'py> {
    F64(PyReadonlyArray1<'py, f64>),
    F32(PyReadonlyArray1<'py, f32>),
}

enum Ints<'py> {
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

fn slice<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>, what: &str) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| PyValueError::new_err(format!("{what} must be a contiguous array")))
}

impl<'py> Matrix<'py> {
    fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(t) = obj.cast::<PyTuple>() {
            let (data, indices, indptr, n_rows, n_cols): (
                Bound<'py, PyAny>,
                Bound<'py, PyAny>,
                Bound<'py, PyAny>,
                usize,
                usize,
            ) = t.extract()?;
            let data = if let Ok(a) = data.extract() {
                Floats::F64(a)
            } else {
                Floats::F32(data.extract().map_err(|_| {
                    PyValueError::new_err("sparse X.data must be float32 or float64")
                })?)
            };
            let ints = |o: Bound<'py, PyAny>, what: &str| -> PyResult<Ints<'py>> {
                if let Ok(a) = o.extract() {
                    Ok(Ints::I32(a))
                } else {
                    Ok(Ints::I64(o.extract().map_err(|_| {
                        PyValueError::new_err(format!("sparse X.{what} must be int32 or int64"))
                    })?))
                }
            };
            return Ok(Matrix::Csr {
                data,
                indices: ints(indices, "indices")?,
                indptr: ints(indptr, "indptr")?,
                shape: (n_rows, n_cols),
            });
        }
        if let Ok(a) = obj.extract() {
            return Ok(Matrix::DenseF64(a));
        }
        if let Ok(a) = obj.extract() {
            return Ok(Matrix::DenseF32(a));
        }
        Err(PyValueError::new_err(
            "X must be a 2-D float32 or float64 array or a CSR matrix",
        ))
    }

    fn n_rows(&self) -> usize {
        match self {
            Matrix::DenseF64(a) => a.shape()[0],
            Matrix::DenseF32(a) => a.shape()[0],
            Matrix::Csr { shape, .. } => shape.0,
        }
    }

    /// Builds the view and runs `f` on it with the GIL released.
    fn run<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&dyn RowMatrix) -> crate::Result<R> + Send,
    ) -> PyResult<R> {
        fn dense<'a, T: Scalar + numpy::Element>(
            a: &'a PyReadonlyArray2<'_, T>,
        ) -> PyResult<(&'a [T], usize, usize)> {
            // as_slice also accepts Fortran order, whose memory would be read as the transpose.
            if !a.is_c_contiguous() {
                return Err(PyValueError::new_err(
                    "X must be a C-contiguous (row-major) array",
                ));
            }
            let s = a
                .as_slice()
                .map_err(|_| PyValueError::new_err("X must be C-contiguous"))?;
            Ok((s, a.shape()[0], a.shape()[1]))
        }
        fn csr<R: Send, T: Scalar + numpy::Element, I: SparseIndex + numpy::Element>(
            py: Python<'_>,
            data: &PyReadonlyArray1<'_, T>,
            indices: &PyReadonlyArray1<'_, I>,
            indptr: &PyReadonlyArray1<'_, I>,
            shape: (usize, usize),
            f: impl FnOnce(&dyn RowMatrix) -> crate::Result<R> + Send,
        ) -> PyResult<R> {
            let (d, i, p) = (
                slice(data, "X.data")?,
                slice(indices, "X.indices")?,
                slice(indptr, "X.indptr")?,
            );
            detach(py, || f(&CsrView::new(p, i, d, shape.0, shape.1)?)).map_err(to_py)
        }
        match self {
            Matrix::DenseF64(a) => {
                let (s, n, d) = dense(a)?;
                detach(py, || f(&DenseView::new(s, n, d)?)).map_err(to_py)
            }
            Matrix::DenseF32(a) => {
                let (s, n, d) = dense(a)?;
                detach(py, || f(&DenseView::new(s, n, d)?)).map_err(to_py)
            }
            Matrix::Csr {
                data,
                indices,
                indptr,
                shape,
            } => match (data, indices, indptr) {
                (Floats::F64(d), Ints::I32(i), Ints::I32(p)) => csr(py, d, i, p, *shape, f),
                (Floats::F64(d), Ints::I64(i), Ints::I64(p)) => csr(py, d, i, p, *shape, f),
                (Floats::F32(d), Ints::I32(i), Ints::I32(p)) => csr(py, d, i, p, *shape, f),
                (Floats::F32(d), Ints::I64(i), Ints::I64(p)) => csr(py, d, i, p, *shape, f),
                _ => Err(PyValueError::new_err(
                    "sparse X.indices and X.indptr must have the same integer type",
                )),
            },
        }
    }
}

fn groups(codes: &PyReadonlyArray1<'_, i64>, n_queries: usize) -> PyResult<QueryGroups> {
    QueryGroups::from_codes(slice(codes, "qid codes")?, n_queries).map_err(to_py)
}

fn record_dict<'py>(py: Python<'py>, r: &IterationRecord) -> PyResult<Bound<'py, PyDict>> {
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
fn progress_hook<'a>(
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
#[pyo3(signature = (x, y, qid_codes, n_queries, losses, c, eps, max_iter, relevance_threshold, n_threads, callback=None, method="ocas"))]
#[allow(clippy::too_many_arguments)]
fn fit<'py>(
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
    method: &str,
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
        method: solver::Method::from_name(method).map_err(to_py)?,
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
fn solve_summary_dict<'py>(
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
    summary.set_item("n_evals", s.n_evals)?;
    summary.set_item("qp_seconds", s.qp_seconds)?;
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

fn counts_dict<'py>(py: Python<'py>, c: &QueryCounts) -> PyResult<Bound<'py, PyDict>> {
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
fn cut_sums<'py>(
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
struct PyCutSource {
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
fn solve<'py>(
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

/// Scores every row: X . coef.
#[pyfunction]
fn predict<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    coef: PyReadonlyArray1<'py, f64>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let x = Matrix::extract(x)?;
    let w = slice(&coef, "coef")?;
    let n = x.n_rows();
    let scores = x.run(py, |m| {
        if m.n_cols() != w.len() {
            return Err(Error::input(format!(
                "X has {} features, but the model was trained with {}",
                m.n_cols(),
                w.len()
            )));
        }
        let mut out = vec![0.0; n];
        with_threads(n_threads, || matvec(m, w, &mut out))?;
        Ok(out)
    })?;
    Ok(PyArray1::from_vec(py, scores))
}

/// One query's loss-augmented argmax: returns (Delta, coefficients of deltaPsi).
#[pyfunction]
fn oracle_argmax<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    relevant: PyReadonlyArray1<'py, bool>,
    loss: &str,
) -> PyResult<(f64, Bound<'py, PyArray1<f64>>)> {
    let s = slice(&scores, "scores")?;
    let r = slice(&relevant, "relevant")?;
    if s.len() != r.len() {
        return Err(PyValueError::new_err(format!(
            "scores has {} entries but relevant has {}",
            s.len(),
            r.len()
        )));
    }
    if !r.iter().any(|&v| v) || r.iter().all(|&v| v) {
        return Err(PyValueError::new_err(
            "the query needs at least one relevant and one non-relevant document",
        ));
    }
    if let Some(i) = s.iter().position(|v| !v.is_finite()) {
        return Err(PyValueError::new_err(format!("scores[{i}] is not finite")));
    }
    let o = oracle::from_name(loss).map_err(to_py)?;
    let mut coef = vec![0.0; s.len()];
    let delta = detach(py, || Ok(o.argmax(s, r, &mut coef))).map_err(to_py)?;
    Ok((delta, PyArray1::from_vec(py, coef)))
}

/// (value, grad, per_query) of `structured_hinge`.
type HingeTuple<'py> = (f64, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// The structural hinge of every query through the given losses (added up: separate slacks),
/// summed, with its gradient with respect to the scores. Returns (value, grad, per_query).
#[pyfunction]
#[pyo3(signature = (scores, labels, qid_codes, n_queries, losses, relevance_threshold, n_threads))]
#[allow(clippy::too_many_arguments)]
fn structured_hinge<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    labels: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    losses: Vec<String>,
    relevance_threshold: f64,
    n_threads: usize,
) -> PyResult<HingeTuple<'py>> {
    let (s, l) = (slice(&scores, "scores")?, slice(&labels, "labels")?);
    let groups = groups(&qid_codes, n_queries)?;
    let oracles = losses
        .iter()
        .map(|name| oracle::from_name(name))
        .collect::<crate::Result<Vec<_>>>()
        .map_err(to_py)?;
    let result = detach(py, || {
        let refs: Vec<&dyn oracle::Oracle> = oracles.iter().map(|o| o.as_ref()).collect();
        let run = || oracle::hinge::structured_hinge(s, l, &groups, &refs, relevance_threshold);
        // A training loop may call this thousands of times: the global pool avoids
        // starting threads on every call unless a thread count is asked for.
        if n_threads == 0 {
            run()
        } else {
            with_threads(n_threads, run)?
        }
    })
    .map_err(to_py)?;
    Ok((
        result.value,
        PyArray1::from_vec(py, result.grad),
        PyArray1::from_vec(py, result.per_query),
    ))
}

/// A metric on every query (NaN where it is undefined).
#[pyfunction]
#[pyo3(signature = (metric, y_true, y_score, qid_codes, n_queries, ties, gain, relevance_threshold, n_relevant=None))]
#[allow(clippy::too_many_arguments)]
fn evaluate<'py>(
    py: Python<'py>,
    metric: &str,
    y_true: PyReadonlyArray1<'py, f64>,
    y_score: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    ties: &str,
    gain: &str,
    relevance_threshold: f64,
    n_relevant: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let metric = Metric::parse(metric).map_err(to_py)?;
    let conv = Conventions {
        ties: match ties {
            "pessimistic" => Ties::Pessimistic,
            "input" => Ties::InputOrder,
            other => {
                return Err(to_py(Error::param(
                    "ties",
                    "\"pessimistic\" or \"input\"",
                    format!("{other:?}"),
                )))
            }
        },
        gain: match gain {
            "exp" => Gain::Exponential,
            "linear" => Gain::Linear,
            other => {
                return Err(to_py(Error::param(
                    "gain",
                    "\"exp\" or \"linear\"",
                    format!("{other:?}"),
                )))
            }
        },
        relevance_threshold,
    };
    let groups = groups(&qid_codes, n_queries)?;
    let (t, s) = (slice(&y_true, "y_true")?, slice(&y_score, "y_score")?);
    let nr = match &n_relevant {
        Some(a) => Some(slice(a, "n_relevant")?),
        None => None,
    };
    let values =
        detach(py, || metrics::evaluate(metric, s, t, &groups, &conv, nr)).map_err(to_py)?;
    Ok(PyArray1::from_vec(py, values))
}

fn letor_dict<'py, T: FromF64 + numpy::Element>(
    py: Python<'py>,
    data: LetorData<T>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let n = data.n_rows();
    let nf = data.n_features;
    let dense_complete = data.is_dense_complete();
    d.set_item("n_features", nf)?;
    d.set_item("qid_names", data.qid_names)?;
    d.set_item("comments", data.comments)?;
    d.set_item("labels", PyArray1::from_vec(py, data.labels))?;
    d.set_item("qid_codes", PyArray1::from_vec(py, data.qid_codes))?;
    d.set_item("line_numbers", PyArray1::from_vec(py, data.line_numbers))?;
    if dense_complete {
        // Every row lists features 1..d in order: the values are the dense matrix already.
        let arr = Array2::from_shape_vec((n, nf), data.values)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        d.set_item("dense", PyArray2::from_owned_array(py, arr))?;
    } else {
        d.set_item("indptr", PyArray1::from_vec(py, data.indptr))?;
        d.set_item("indices", PyArray1::from_vec(py, data.indices))?;
        d.set_item("values", PyArray1::from_vec(py, data.values))?;
    }
    Ok(d)
}

/// Reads a LETOR/svmlight file. Returns a dict with "labels", "qid_codes", "qid_names",
/// "n_features", "line_numbers", "comments" and either "dense" or "indptr"/"indices"/"values".
#[pyfunction]
#[pyo3(signature = (path, dtype="float64", n_features=None, keep_comments=false, n_threads=0))]
fn read_letor_file<'py>(
    py: Python<'py>,
    path: &str,
    dtype: &str,
    n_features: Option<usize>,
    keep_comments: bool,
    n_threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = ReadOptions {
        n_features,
        keep_comments,
    };
    match dtype {
        "float64" => {
            let data = detach(py, || {
                with_threads(n_threads, || read_letor::<f64>(path, &opts))?
            })
            .map_err(to_py)?;
            letor_dict(py, data)
        }
        "float32" => {
            let data = detach(py, || {
                with_threads(n_threads, || read_letor::<f32>(path, &opts))?
            })
            .map_err(to_py)?;
            letor_dict(py, data)
        }
        other => Err(PyValueError::new_err(format!(
            "dtype must be float32 or float64, got {other}"
        ))),
    }
}

/// Reads and checks a model file; returns its JSON text.
#[pyfunction]
fn load_model_json(py: Python<'_>, path: &str) -> PyResult<String> {
    detach(py, || ModelFile::load(path).and_then(|m| m.to_json())).map_err(to_py)
}

/// Checks a model's JSON text and writes it atomically.
#[pyfunction]
fn save_model_json(py: Python<'_>, path: &str, text: &str) -> PyResult<()> {
    detach(py, || {
        ModelFile::from_json(text, path).and_then(|m| m.save(path))
    })
    .map_err(to_py)
}

/// Writes bytes to `path` atomically (temporary file, fsync, rename).
#[pyfunction]
fn write_atomic(py: Python<'_>, path: &str, data: &[u8]) -> PyResult<()> {
    detach(py, || crate::model::write_atomic(path, data)).map_err(to_py)
}

/// `write_atomic` that calls `before_rename()` once the data is on disk and before the rename,
/// so that tests can kill the process at that point; an exception from it aborts the write.
#[pyfunction]
fn _debug_write_atomic(
    py: Python<'_>,
    path: &str,
    data: &[u8],
    before_rename: Py<PyAny>,
) -> PyResult<()> {
    let mut raised: Option<PyErr> = None;
    let result = detach(py, || {
        crate::model::write_atomic_then(path, data, &mut || {
            Python::attach(|py| before_rename.call0(py).map(|_| ())).map_err(|e| {
                let message = e.to_string();
                raised = Some(e);
                Error::Interrupted(message)
            })
        })
    });
    match (result, raised) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(to_py(e)),
    }
}

/// Panics on purpose inside the guarded boundary, on the calling thread (place="caller") or
/// in a rayon worker (place="worker"), so that tests can check that no panic reaches Python.
#[pyfunction]
fn _debug_panic(py: Python<'_>, place: &str) -> PyResult<()> {
    detach(py, || crate::guard::debug_panic(place)).map_err(to_py)
}

/// A dense float matrix for binning, where NaN may mark missing values (so it is not checked
/// for finiteness here, unlike `Matrix`).
enum DenseFloats<'py> {
    F64(PyReadonlyArray2<'py, f64>),
    F32(PyReadonlyArray2<'py, f32>),
}

impl<'py> DenseFloats<'py> {
    fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = obj.extract() {
            return Ok(DenseFloats::F64(a));
        }
        obj.extract().map(DenseFloats::F32).map_err(|_| {
            PyValueError::new_err("X must be a 2-D float32 or float64 array for binning")
        })
    }

    /// Runs `f` on (values, n_rows, n_cols) with the GIL released.
    fn run<R: Send>(
        &self,
        py: Python<'_>,
        f64_fn: impl FnOnce(&[f64], usize, usize) -> crate::Result<R> + Send,
        f32_fn: impl FnOnce(&[f32], usize, usize) -> crate::Result<R> + Send,
    ) -> PyResult<R> {
        let contiguous = || PyValueError::new_err("X must be C-contiguous");
        match self {
            DenseFloats::F64(a) => {
                let (n, d) = (a.shape()[0], a.shape()[1]);
                // as_slice also accepts Fortran order, whose memory would be read transposed.
                if !a.is_c_contiguous() {
                    return Err(contiguous());
                }
                let s = a.as_slice().map_err(|_| contiguous())?;
                detach(py, || f64_fn(s, n, d)).map_err(to_py)
            }
            DenseFloats::F32(a) => {
                let (n, d) = (a.shape()[0], a.shape()[1]);
                if !a.is_c_contiguous() {
                    return Err(contiguous());
                }
                let s = a.as_slice().map_err(|_| contiguous())?;
                detach(py, || f32_fn(s, n, d)).map_err(to_py)
            }
        }
    }
}

fn thresholds_from(
    values: &PyReadonlyArray1<'_, f64>,
    offsets: &PyReadonlyArray1<'_, i64>,
) -> PyResult<binning::Thresholds> {
    let offsets = slice(offsets, "threshold offsets")?
        .iter()
        .map(|&o| {
            usize::try_from(o)
                .map_err(|_| PyValueError::new_err(format!("threshold offset {o} is negative")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    binning::Thresholds::new(slice(values, "thresholds")?.to_vec(), offsets).map_err(to_py)
}

/// Concatenated thresholds and the offsets of every column's block.
type ThresholdArrays<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<i64>>);

/// Fits binning thresholds per column. Returns (values, offsets): column j's sorted thresholds
/// are values[offsets[j]:offsets[j + 1]].
#[pyfunction]
fn bin_fit<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    n_thresholds: usize,
    strategy: &str,
    missing: &str,
    n_threads: usize,
) -> PyResult<ThresholdArrays<'py>> {
    let strategy = binning::Strategy::parse(strategy).map_err(to_py)?;
    let missing = binning::Missing::parse(missing).map_err(to_py)?;
    let x = DenseFloats::extract(x)?;
    let th = x.run(
        py,
        |s, n, d| {
            with_threads(n_threads, || {
                binning::fit(s, n, d, n_thresholds, strategy, missing)
            })?
        },
        |s, n, d| {
            with_threads(n_threads, || {
                binning::fit(s, n, d, n_thresholds, strategy, missing)
            })?
        },
    )?;
    let offsets: Vec<i64> = th.offsets.iter().map(|&o| o as i64).collect();
    Ok((
        PyArray1::from_vec(py, th.values),
        PyArray1::from_vec(py, offsets),
    ))
}

/// The indicator features of a dense matrix: returns (indptr, indices, n_cols) of a CSR matrix
/// whose stored values are all 1, with int32 index arrays when they fit and int64 otherwise.
#[pyfunction]
fn bin_transform<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    values: PyReadonlyArray1<'py, f64>,
    offsets: PyReadonlyArray1<'py, i64>,
    missing: &str,
    n_threads: usize,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, usize)> {
    let missing = binning::Missing::parse(missing).map_err(to_py)?;
    let th = thresholds_from(&values, &offsets)?;
    let x = DenseFloats::extract(x)?;
    let n_rows = match &x {
        DenseFloats::F64(a) => a.shape()[0],
        DenseFloats::F32(a) => a.shape()[0],
    };
    // Every row sets at most one column per output column, so this bounds the stored values.
    let (n_out, _) = th.columns(missing);
    let small = n_rows
        .checked_mul(n_out)
        .is_some_and(|nnz| nnz <= i32::MAX as usize);
    if small {
        let out = x.run(
            py,
            |s, n, d| {
                with_threads(n_threads, || {
                    binning::transform::<_, i32>(s, n, d, &th, missing)
                })?
            },
            |s, n, d| {
                with_threads(n_threads, || {
                    binning::transform::<_, i32>(s, n, d, &th, missing)
                })?
            },
        )?;
        Ok((
            PyArray1::from_vec(py, out.indptr).into_any(),
            PyArray1::from_vec(py, out.indices).into_any(),
            out.n_cols,
        ))
    } else {
        let out = x.run(
            py,
            |s, n, d| {
                with_threads(n_threads, || {
                    binning::transform::<_, i64>(s, n, d, &th, missing)
                })?
            },
            |s, n, d| {
                with_threads(n_threads, || {
                    binning::transform::<_, i64>(s, n, d, &th, missing)
                })?
            },
        )?;
        Ok((
            PyArray1::from_vec(py, out.indptr).into_any(),
            PyArray1::from_vec(py, out.indices).into_any(),
            out.n_cols,
        ))
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DataFormatError", m.py().get_type::<DataFormatError>())?;
    m.add("ModelFormatError", m.py().get_type::<ModelFormatError>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    crate::guard::install_quiet_hook();
    m.add_function(wrap_pyfunction!(_debug_panic, m)?)?;
    m.add_function(wrap_pyfunction!(_debug_write_atomic, m)?)?;
    m.add("MODEL_FORMAT_VERSION", crate::model::FORMAT_VERSION)?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(predict, m)?)?;
    m.add_function(wrap_pyfunction!(oracle_argmax, m)?)?;
    m.add_function(wrap_pyfunction!(structured_hinge, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(read_letor_file, m)?)?;
    m.add_function(wrap_pyfunction!(load_model_json, m)?)?;
    m.add_function(wrap_pyfunction!(save_model_json, m)?)?;
    m.add_function(wrap_pyfunction!(write_atomic, m)?)?;
    m.add_function(wrap_pyfunction!(bin_fit, m)?)?;
    m.add_function(wrap_pyfunction!(bin_transform, m)?)?;
    m.add_function(wrap_pyfunction!(cut_sums, m)?)?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    Ok(())
}
