//! One part of a data set trained on several machines (`svmmap.dask`), prepared once where it
//! lives: its feature matrix checked, its query groups, the oracles of the configuration and
//! the query counts. Each iteration's cut sums (`Partition.cut_sums`) then only read the
//! matrix once in the oracle pass, instead of rebuilding the configuration, the oracles and
//! the groups and checking every value again.

use super::ndbuf::{from_vec, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::arrays::*;
use super::config::TrainConfig;
use super::results::ProblemSummary;
use crate::data::QueryGroups;
use crate::error::Error;
use crate::oracle::{self, Oracle, QueryCounts};
use crate::runtime::pool::with_threads;
use crate::solver::RankingProblem;

/// A prepared partition: built once per partition on the worker that holds it, then asked
/// for the cut sums at every iteration. It keeps references to the caller's arrays (the
/// `CoreMatrix`, the labels, the query codes), which must not change while it is used.
#[pyclass(module = "svmmap._core", frozen)]
pub struct Partition {
    x: Py<PyAny>,
    y: Py<PyAny>,
    qid_codes: Py<PyAny>,
    config: Py<TrainConfig>,
    groups: QueryGroups,
    oracles: Vec<Box<dyn Oracle>>,
    threshold: f64,
    counts: QueryCounts,
    n_cols: usize,
}

#[pymethods]
impl Partition {
    /// Checks the partition's matrix (every value), labels and query codes, and counts its
    /// usable queries with the losses of `config`.
    #[new]
    fn new(
        py: Python<'_>,
        x: Bound<'_, PyAny>,
        y: Bound<'_, PyAny>,
        qid_codes: Bound<'_, PyAny>,
        n_queries: usize,
        config: Bound<'_, TrainConfig>,
    ) -> PyResult<Self> {
        let matrix = Matrix::extract(&x)?;
        let labels_array: PyReadonlyArray1<'_, f64> = y.extract()?;
        let codes_array: PyReadonlyArray1<'_, i64> = qid_codes.extract()?;
        let labels = slice(&labels_array, "y")?;
        let groups = groups(&codes_array, n_queries)?;
        let cfg = config.borrow();
        let oracles = cfg.oracles()?;
        let threshold = cfg.options.relevance_threshold;
        let (counts, n_cols) = matrix.run(py, cfg.n_threads, |m| {
            let mut problem = RankingProblem::new(m, labels, &groups, threshold)?;
            let refs: Vec<&dyn Oracle> = oracles.iter().map(|o| o.as_ref()).collect();
            problem.admit(&refs);
            oracle::check_query_lens(&refs, &groups)?;
            problem.check_labels(&refs)?;
            Ok((problem.counts, m.n_cols()))
        })?;
        drop(cfg);
        Ok(Partition {
            x: x.unbind(),
            y: y.unbind(),
            qid_codes: qid_codes.unbind(),
            config: config.unbind(),
            groups,
            oracles,
            threshold,
            counts,
            n_cols,
        })
    }

    /// The partition's query counts (with the losses of its configuration).
    #[getter]
    fn counts(&self) -> ProblemSummary {
        ProblemSummary {
            counts: self.counts,
        }
    }

    /// For every slack group, (sum_q Delta_q, sum_q deltaPsi_q) over the partition's usable
    /// queries at `w` (not divided by n), on `n_threads` threads (0: one per core).
    fn cut_sums<'py>(
        &self,
        py: Python<'py>,
        w: PyReadonlyArray1<'py, f64>,
        n_threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let w = slice(&w, "w")?;
        if w.len() != self.n_cols {
            return Err(PyErr::from(Error::input(format!(
                "w has {} entries but X has {} features",
                w.len(),
                self.n_cols
            ))));
        }
        let matrix = Matrix::extract(self.x.bind(py))?;
        let labels_array: PyReadonlyArray1<'_, f64> = self.y.bind(py).extract()?;
        let labels = slice(&labels_array, "y")?;
        let (groups, oracles, threshold) = (&self.groups, &self.oracles, self.threshold);
        // The values were checked when the partition was prepared.
        let sums = matrix.run_checked(py, Check::Shape, n_threads, |m| {
            let mut problem = RankingProblem::new(m, labels, groups, threshold)?;
            let refs: Vec<&dyn Oracle> = oracles.iter().map(|o| o.as_ref()).collect();
            problem.admit(&refs);
            with_threads(n_threads, || problem.cut_sums(w, &refs))
        })?;
        let out = PyList::empty(py);
        for (b, g) in sums {
            out.append((b, from_vec(py, g)?))?;
        }
        Ok(out)
    }

    // Pickling (a partition moved to another worker) prepares it again from its arrays.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Py<PyAny>, Bound<'py, PyTuple>)> {
        let args = PyTuple::new(
            py,
            [
                self.x.clone_ref(py),
                self.y.clone_ref(py),
                self.qid_codes.clone_ref(py),
                self.groups
                    .n_queries()
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
                self.config.clone_ref(py).into_any(),
            ],
        )?;
        Ok((py.get_type::<Partition>().into_any().unbind(), args))
    }
}
