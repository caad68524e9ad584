//! Binning bindings: the binner's configuration (`BinnerConfig`, validated here once), threshold
//! fitting, the indicator transform and bin codes.

use super::ndbuf::{from_vec, from_vec_shaped, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString, PyTuple};

use super::arrays::*;
use super::detach;
use super::params::{param_error, Arg};
use crate::binning;
use crate::error::Error;
use crate::runtime::pool::with_threads;

/// A core parameter error in the words of the Python API, with the value as Python spells it.
fn in_python_words(err: Error, value: &Bound<'_, PyAny>) -> PyErr {
    match err {
        Error::InvalidParameter { name, expected, .. } => param_error(&name, &expected, value),
        other => other.into(),
    }
}

/// A named choice (strategy, missing, output), parsed by the core. A value that is not a
/// string is refused with the core's words for an unknown name ("" names nothing).
fn choice<T>(value: &Bound<'_, PyAny>, parse: impl Fn(&str) -> crate::Result<T>) -> PyResult<T> {
    let text = value
        .cast::<PyString>()
        .map(|s| s.to_string())
        .unwrap_or_default();
    parse(&text).map_err(|e| in_python_words(e, value))
}

/// The number of thresholds as the core's `usize`: a value that is no integer (a bool, a float,
/// a string) or is below 1 becomes 0 and one beyond `usize` becomes `usize::MAX`, so that
/// `BinnerConfig::validate` refuses each with the words for its case.
fn threshold_count(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    if value.is_instance_of::<PyBool>() {
        return Ok(0);
    }
    match value.extract::<i64>() {
        Ok(n) if n < 1 => Ok(0),
        Ok(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(value.py()) => {
            Ok(if value.gt(0)? { usize::MAX } else { 0 })
        }
        Err(_) => Ok(0),
    }
}

/// Everything that decides a binning besides the data, validated once on construction:
/// n_thresholds, strategy, missing and output. Immutable; its defaults (`BinnerConfig.DEFAULTS`,
/// owned by `binning::BinnerConfig::default()`) are the defaults of every binner.
#[pyclass(name = "BinnerConfig", module = "svmmap._core", frozen)]
pub struct PyBinnerConfig {
    pub(super) config: binning::BinnerConfig,
}

/// The keyword arguments of a configuration, as `DEFAULTS` and `kwargs()` show them.
fn kwargs_of<'py>(py: Python<'py>, c: &binning::BinnerConfig) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("n_thresholds", c.n_thresholds)?;
    d.set_item("strategy", c.strategy.name())?;
    d.set_item("missing", c.missing.name())?;
    d.set_item("output", c.output.name())?;
    Ok(d)
}

#[pymethods]
impl PyBinnerConfig {
    /// Keyword arguments only; a parameter left out takes its default (`DEFAULTS`), and every
    /// given value (None included) is checked, in the order of the signature.
    #[new]
    #[pyo3(signature = (*, n_thresholds=Arg::Default, strategy=Arg::Default, missing=Arg::Default, output=Arg::Default))]
    fn new(
        n_thresholds: Arg<'_>,
        strategy: Arg<'_>,
        missing: Arg<'_>,
        output: Arg<'_>,
    ) -> PyResult<Self> {
        let mut config = binning::BinnerConfig::default();
        if let Some(v) = n_thresholds.given() {
            config.n_thresholds = threshold_count(v)?;
            config.validate().map_err(|e| in_python_words(e, v))?;
        }
        if let Some(v) = strategy.given() {
            config.strategy = choice(v, binning::Strategy::parse)?;
        }
        if let Some(v) = missing.given() {
            config.missing = choice(v, binning::Missing::parse)?;
        }
        if let Some(v) = output.given() {
            config.output = choice(v, binning::Output::parse)?;
        }
        config.validate()?;
        Ok(PyBinnerConfig { config })
    }

    /// The default of every parameter, as the binners' signatures show them.
    #[classattr]
    #[allow(non_snake_case)]
    fn DEFAULTS(py: Python<'_>) -> PyResult<Py<PyDict>> {
        Ok(kwargs_of(py, &binning::BinnerConfig::default())?.unbind())
    }

    #[getter]
    fn n_thresholds(&self) -> usize {
        self.config.n_thresholds
    }
    #[getter]
    fn strategy(&self) -> &'static str {
        self.config.strategy.name()
    }
    #[getter]
    fn missing(&self) -> &'static str {
        self.config.missing.name()
    }
    #[getter]
    fn output(&self) -> &'static str {
        self.config.output.name()
    }

    /// The keyword arguments that rebuild this configuration.
    fn kwargs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        kwargs_of(py, &self.config)
    }

    // Pickling (e.g. to Dask workers) rebuilds the configuration from its keyword arguments.
    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        Ok((PyTuple::empty(py), self.kwargs(py)?))
    }

    fn __getstate__(&self, py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyBinnerConfig>()
            .is_ok_and(|o| o.get().config == self.config)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("BinnerConfig(**{})", self.kwargs(py)?.repr()?))
    }
}

/// Concatenated thresholds and the offsets of every column's block.
pub(super) type ThresholdArrays<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

/// Fits binning thresholds per column (the configuration's n_thresholds, strategy and missing),
/// on the rows `rows` of `x` alone when given (as on `x[rows]`, without that copy).
/// Returns (values, offsets): column j's sorted thresholds are values[offsets[j]:offsets[j + 1]].
#[pyfunction]
#[pyo3(signature = (x, config, n_threads, rows=None))]
pub(super) fn bin_fit<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    config: &Bound<'py, PyBinnerConfig>,
    n_threads: usize,
    rows: Option<PyReadonlyArray1<'py, i64>>,
) -> PyResult<ThresholdArrays<'py>> {
    let binning::BinnerConfig {
        n_thresholds,
        strategy,
        missing,
        ..
    } = config.get().config;
    let rows: Option<Vec<usize>> = match &rows {
        None => None,
        Some(r) => Some(
            r.as_slice()?
                .iter()
                .map(|&i| {
                    usize::try_from(i).map_err(|_| {
                        PyValueError::new_err(format!("rows must be row indices >= 0, got {i}"))
                    })
                })
                .collect::<PyResult<_>>()?,
        ),
    };
    let x = DenseFloats::extract(x)?;
    let th = with_dense_floats!(py, &x, |s, n, d| {
        with_threads(n_threads, || {
            binning::fit::fit_rows(s, n, d, rows.as_deref(), n_thresholds, strategy, missing)
        })?
    })?;
    let offsets: Vec<i64> = th.offsets.iter().map(|&o| o as i64).collect();
    Ok((from_vec(py, th.values)?, from_vec(py, offsets)?))
}

/// The indicator features of a dense matrix: returns (indptr, indices, n_cols) of a CSR matrix
/// whose stored values are all 1, with int32 index arrays when they fit and int64 otherwise.
#[pyfunction]
pub(super) fn bin_transform<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    values: PyReadonlyArray1<'py, f64>,
    offsets: PyReadonlyArray1<'py, i64>,
    config: &Bound<'py, PyBinnerConfig>,
    n_threads: usize,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, usize)> {
    let missing = config.get().config.missing;
    let th = thresholds_from(&values, &offsets)?;
    let x = DenseFloats::extract(x)?;
    let n_rows = x.n_rows();
    // Every row sets at most one column per output column, so this bounds the stored values.
    let (n_out, _) = th.columns(missing);
    let small = n_rows
        .checked_mul(n_out)
        .is_some_and(|nnz| nnz <= i32::MAX as usize);
    if small {
        let out = with_dense_floats!(py, &x, |s, n, d| {
            with_threads(n_threads, || {
                binning::transform::<_, i32>(s, n, d, &th, missing)
            })?
        })?;
        Ok((
            from_vec(py, out.indptr)?,
            from_vec(py, out.indices)?,
            out.n_cols,
        ))
    } else {
        let out = with_dense_floats!(py, &x, |s, n, d| {
            with_threads(n_threads, || {
                binning::transform::<_, i64>(s, n, d, &th, missing)
            })?
        })?;
        Ok((
            from_vec(py, out.indptr)?,
            from_vec(py, out.indices)?,
            out.n_cols,
        ))
    }
}

/// The bin codes of a dense matrix (see `crate::data::binned`): a (n_rows, n_cols) uint8 array
/// when every code fits, uint16 otherwise.
#[pyfunction]
pub(super) fn bin_codes<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    values: PyReadonlyArray1<'py, f64>,
    offsets: PyReadonlyArray1<'py, i64>,
    config: &Bound<'py, PyBinnerConfig>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let missing = config.get().config.missing;
    let th = thresholds_from(&values, &offsets)?;
    let x = DenseFloats::extract(x)?;
    let shape = x.shape();
    fn run<'py, C: crate::data::binned::Code + super::ndbuf::Element>(
        py: Python<'py>,
        x: &DenseFloats<'py>,
        th: &binning::Thresholds,
        missing: binning::Missing,
        n_threads: usize,
        shape: (usize, usize),
    ) -> PyResult<Bound<'py, PyAny>> {
        let codes = with_dense_floats!(py, &x, |s, n, d| with_threads(n_threads, || {
            binning::codes::<_, C>(s, n, d, th, missing)
        })?)?;
        from_vec_shaped(py, codes, &[shape.0, shape.1])
    }
    match binning::code_width(&th, missing)? {
        1 => run::<u8>(py, &x, &th, missing, n_threads, shape),
        _ => run::<u16>(py, &x, &th, missing, n_threads, shape),
    }
}

/// The per-cell sums and counts of `pair_histograms`.
pub(super) type PairHistograms<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

/// The 2-D histograms of pair selection (see `crate::binning::pairs`): `coarse` is a
/// (n_features, n_rows) C-contiguous uint8 array of coarse codes, `sizes` the number of coarse
/// codes of every feature, `pairs` a (n_pairs, 2) int64 array. Returns (sums, counts), every
/// pair's block of sizes[i] * sizes[j] cells after the earlier pairs'. `max_seconds` (a
/// search's time budget left): None once that many seconds from the call have passed before
/// the scan was done (see `crate::binning::pair_histograms`); an infinite one is no limit.
#[pyfunction]
#[pyo3(signature = (coarse, sizes, pairs, residual, n_threads, max_seconds=None))]
pub(super) fn pair_histograms<'py>(
    py: Python<'py>,
    coarse: super::ndbuf::PyReadonlyArray2<'py, u8>,
    sizes: PyReadonlyArray1<'py, i64>,
    pairs: super::ndbuf::PyReadonlyArray2<'py, i64>,
    residual: PyReadonlyArray1<'py, f64>,
    n_threads: usize,
    max_seconds: Option<f64>,
) -> PyResult<Option<PairHistograms<'py>>> {
    // The clock starts here, as a fit's max_time does at its start; a time already spent is
    // a deadline already passed.
    let deadline = match max_seconds {
        Some(s) if s.is_nan() => {
            return Err(PyValueError::new_err(
                "max_seconds must be a number of seconds or None, got nan",
            ))
        }
        Some(s) => std::time::Duration::try_from_secs_f64(s.max(0.0))
            .ok()
            .and_then(|d| std::time::Instant::now().checked_add(d)),
        None => None,
    };
    let (codes, _, n_rows) = rows(&coarse, "coarse codes")?;
    let count = |v: i64| {
        usize::try_from(v).map_err(|_| pyo3::exceptions::PyValueError::new_err("negative size"))
    };
    let sizes = slice(&sizes, "sizes")?
        .iter()
        .map(|&v| count(v))
        .collect::<PyResult<Vec<_>>>()?;
    let (flat, _, _) = rows(&pairs, "pairs")?;
    let pairs = flat
        .chunks_exact(2)
        .map(|p| Ok((count(p[0])?, count(p[1])?)))
        .collect::<PyResult<Vec<_>>>()?;
    let residual = slice(&residual, "residual")?;
    let scanned = detach(py, || {
        with_threads(n_threads, || {
            binning::pair_histograms(codes, n_rows, &sizes, &pairs, residual, deadline)
        })?
    })
    .map_err(PyErr::from)?;
    scanned
        .map(|(sums, counts)| Ok((from_vec(py, sums)?, from_vec(py, counts)?)))
        .transpose()
}
