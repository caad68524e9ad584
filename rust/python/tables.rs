//! The core's tables as Python values: the loss registry (`_core.LOSSES`), the training
//! parameters (`_core.TRAINING_PARAMETERS`), the spellings of every option value
//! (`_core.SPELLINGS`) and the shared-slack examples. Read once, when the module is imported.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::oracle::registry;
use crate::solver::{Kind, Parameter, Value, PARAMETERS};

/// `_core.LOSSES`: one dict per registered loss (name, cutoff, options, feature_map, convex,
/// reference, doc, examples).
pub(super) fn losses_table(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    let entries = registry::LOSSES
        .iter()
        .map(|info| {
            let d = PyDict::new(py);
            d.set_item("name", info.name)?;
            d.set_item("syntax", info.syntax())?;
            d.set_item("cutoff", info.cutoff)?;
            d.set_item("options", info.options.to_vec())?;
            d.set_item("cost", info.cost)?;
            d.set_item("feature_map", info.feature_map)?;
            d.set_item("convex", info.convex)?;
            d.set_item("reference", info.reference)?;
            d.set_item("doc", info.doc)?;
            d.set_item("examples", info.examples.to_vec())?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, entries)
}

/// `_core.LOSS_COMBINATION_EXAMPLES`: shared-slack groups the tests exercise.
pub(super) fn combination_examples(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(
        py,
        registry::COMBINATION_EXAMPLES
            .iter()
            .map(|parts| parts.to_vec()),
    )
}

/// A table default as the Python value the signatures show.
pub(super) fn default_value(py: Python<'_>, value: Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::Float(v) => v.into_pyobject(py)?.into_any().unbind(),
        Value::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        Value::Text(v) => PyString::new(py, v).into_any().unbind(),
        Value::Null => py.None(),
    })
}

/// What a parameter's check expects, as its error message says it (an optional parameter's
/// None is allowed, and said).
pub(super) fn expected_words(p: &Parameter) -> String {
    match p.kind {
        Kind::OptionalCount | Kind::OptionalReal => format!("None or {}", p.expected),
        _ => p.expected.to_string(),
    }
}

/// The slack's choices, as the table declares them: `_core.SPELLINGS`'s "Slack" and the
/// check of `slack` in `losses.rs` read them here (here, so that the tables need nothing of
/// the losses' module, which reads the tables).
pub(super) fn slack_choices() -> &'static [&'static str] {
    crate::solver::parameter("slack").map_or(&[][..], |p| p.choices)
}

/// `_core.TRAINING_PARAMETERS`: the core's table of training parameters, one dict each (name,
/// default, kind, choices, expected, type, flag, doc), in the table's order. The estimators'
/// signatures and docstrings, the command line, the model files and the docs read it or are
/// checked against it (tests/api/test_parameters.py).
pub(super) fn parameters_table(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    let entries = PARAMETERS
        .iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("name", p.name)?;
            d.set_item("default", default_value(py, p.default)?)?;
            d.set_item("kind", kind_name(p.kind))?;
            d.set_item("choices", p.choices.to_vec())?;
            d.set_item("expected", expected_words(p))?;
            d.set_item("type", p.python_type)?;
            d.set_item("flag", p.flag)?;
            d.set_item("doc", p.doc)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, entries)
}

/// Every kind of parameter, in the order of `kind_name`'s spellings.
const KINDS: [Kind; 7] = [
    Kind::Real,
    Kind::Count,
    Kind::OptionalCount,
    Kind::OptionalReal,
    Kind::Loss,
    Kind::Choice,
    Kind::Threads,
];

/// `_core.SPELLINGS`: the strings of every option value the core reads or reports, by the
/// name of the `Literal` type of `svmmap._typing` that lists them for type checkers (a test
/// compares the two), each taken from its owner in the core.
pub(super) fn spellings(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use crate::binning::{Missing, Strategy};
    use crate::metrics::{Gain, Ties};
    use crate::solver::StopReason;
    let d = PyDict::new(py);
    let kinds: Vec<&str> = KINDS.iter().map(|&k| kind_name(k)).collect();
    let entries: [(&str, &[&str]); 8] = [
        ("Slack", slack_choices()),
        ("StopReason", &StopReason::NAMES),
        ("Ties", &Ties::NAMES),
        ("Gain", &Gain::NAMES),
        ("BinStrategy", &Strategy::NAMES),
        ("Missing", &Missing::NAMES),
        ("Dtype", &super::io::DTYPES),
        ("ParameterKind", &kinds),
    ];
    for (name, values) in entries {
        d.set_item(name, PyTuple::new(py, values)?)?;
    }
    Ok(d)
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Real => "real",
        Kind::Count => "count",
        Kind::OptionalCount => "optional_count",
        Kind::OptionalReal => "optional_real",
        Kind::Loss => "loss",
        Kind::Choice => "choice",
        Kind::Threads => "threads",
    }
}
