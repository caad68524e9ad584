//! Reading one parameter's Python value as the core's type, and the one wording of a refused
//! parameter: what `TrainConfig` and `BinnerConfig` check their keyword arguments with.

use pyo3::prelude::*;
use pyo3::types::PyBool;

use super::tables::expected_words;
use crate::solver::{expected, Parameter};

/// A parameter error in the words of the Python API: "C must be a finite number > 0, got '1'"
/// (the value as Python spells it).
pub(super) fn param_error(name: &str, expected: &str, value: &Bound<'_, PyAny>) -> PyErr {
    let shown = value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<unprintable>".to_string());
    // The one wording of a refused parameter: the core error's (error.rs, InvalidParameter).
    crate::error::Error::param(name, expected, shown).into()
}

/// The ValueError of a parameter refused in Python (SVMMapCV's Cs, an estimator's verbose ...),
/// in the one wording of every refused parameter (`param_error`).
#[pyfunction]
pub(super) fn parameter_error(
    py: Python<'_>,
    name: &str,
    expected: &str,
    value: &Bound<'_, PyAny>,
) -> Py<pyo3::exceptions::PyBaseException> {
    param_error(name, expected, value).into_value(py)
}

/// The core's memory guard for calls (`runtime::memory::check_call`; `check_memory` is the
/// readers' guard, for dense copies) for an allocation that Python is
/// about to make from a parameter (AdaRank's path of `n_estimators` rounds, `make_ranking`'s
/// matrix): a MemoryError reading "{what} needs about N, but only M of memory is available;
/// {advice}" when `n_bytes` exceed the memory available, before NumPy allocates or a loop
/// grows for ever. One guard, so that Python and the core refuse the same sizes.
#[pyfunction]
pub(super) fn check_allocation(n_bytes: f64, what: &str, advice: &str) -> PyResult<()> {
    // A float, so that a size beyond u64 (1e12 rounds of 1e9 features) is still a size:
    // the conversion saturates at u64::MAX, which no machine has.
    let bytes = if n_bytes.is_nan() || n_bytes < 0.0 {
        0
    } else {
        n_bytes as u64
    };
    crate::runtime::memory::check_call(bytes, || (what.to_string(), advice.to_string()))?;
    Ok(())
}

/// Whether a value is a bool, Python's or NumPy's: a numeric training parameter refuses both
/// (one rule for every number of the table: `relevance_threshold=True` was taken as 1 while
/// `C=True` was refused), since a bool given for a number is surely a mistake.
fn is_bool(value: &Bound<'_, PyAny>) -> bool {
    if value.is_instance_of::<PyBool>() {
        return true;
    }
    // NumPy's bool (`numpy.bool_`, named `numpy.bool` since NumPy 2) converts to a float
    // and an index without complaint, so it is recognised by its type.
    let ty = value.get_type();
    let module = ty.module().map(|m| m.to_string()).unwrap_or_default();
    let name = ty.name().map(|n| n.to_string()).unwrap_or_default();
    module == "numpy" && (name == "bool_" || name == "bool")
}

pub(super) fn real(p: &Parameter, value: &Bound<'_, PyAny>) -> PyResult<f64> {
    if is_bool(value) {
        return Err(param_error(p.name, &expected_words(p), value));
    }
    value
        .extract::<f64>()
        .map_err(|_| param_error(p.name, &expected_words(p), value))
}

pub(super) fn count(p: &Parameter, value: &Bound<'_, PyAny>) -> PyResult<usize> {
    if is_bool(value) {
        return Err(param_error(p.name, &expected_words(p), value));
    }
    value
        .extract::<usize>()
        .map_err(|_| param_error(p.name, &expected_words(p), value))
}

/// scikit-learn's n_jobs as a thread count for the core, by the one rule
/// (`runtime::pool::threads_for_jobs`): the value is read here, the rule and its words are the
/// pool's.
pub(super) fn threads_of(n_jobs: &Bound<'_, PyAny>) -> PyResult<usize> {
    if n_jobs.is_none() {
        return Ok(crate::runtime::pool::threads_for_jobs(None)?);
    }
    let bad = || param_error("n_jobs", expected("n_jobs"), n_jobs);
    if n_jobs.is_instance_of::<PyBool>() {
        return Err(bad());
    }
    let n: i64 = n_jobs.extract().map_err(|_| bad())?;
    crate::runtime::pool::threads_for_jobs(Some(n)).map_err(|_| bad())
}

/// A keyword argument of `BinnerConfig`: left out (`Default`) or given, as any Python value
/// (None included), which its constructor checks with the words of the Python API. The
/// signature names every parameter, so `inspect.signature` and stubtest see them; it shows `...`
/// for "the value in `BinnerConfig.DEFAULTS`".
pub(super) enum Arg<'py> {
    Default,
    Given(Bound<'py, PyAny>),
}

impl<'py> Arg<'py> {
    pub(super) fn given(&self) -> Option<&Bound<'py, PyAny>> {
        match self {
            Arg::Default => None,
            Arg::Given(v) => Some(v),
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Arg<'py> {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Arg::Given(obj.to_owned()))
    }
}
