//! What the Python layer trains with: the loss registry (`LOSSES`) and the one training
//! configuration (`TrainConfig`, validated here once). The results are in `results.rs`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString, PyTuple};

use crate::error::Error;
use crate::oracle::{self, registry, LossTerm};
use crate::solver::{
    expected, parameter, text_default, Kind, Options, Parameter, Value, PARAMETERS,
};

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

fn real(p: &Parameter, value: &Bound<'_, PyAny>, allow_bool: bool) -> PyResult<f64> {
    if !allow_bool && value.is_instance_of::<PyBool>() {
        return Err(param_error(p.name, &expected_words(p), value));
    }
    value
        .extract::<f64>()
        .map_err(|_| param_error(p.name, &expected_words(p), value))
}

fn count(p: &Parameter, value: &Bound<'_, PyAny>) -> PyResult<usize> {
    if value.is_instance_of::<PyBool>() {
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

/// The loss argument as slack groups of weighted losses: a name is one group; a list is one
/// group per name (separate slacks) or one group of all names (shared slack), each name with
/// its default weight in a list (`registry::list_weights`); a dict gives the weights itself.
/// A name may carry its weight ("0.1*ndcg@10", `LossTerm::parse`).
fn loss_groups(loss: &Bound<'_, PyAny>, slack: &str) -> PyResult<Vec<Vec<LossTerm>>> {
    let bad = || param_error("loss", expected("loss"), loss);
    let terms: Vec<LossTerm> = if let Ok(s) = loss.cast::<PyString>() {
        vec![LossTerm::parse(&s.to_string())?]
    } else if let Ok(weights) = loss.cast::<PyDict>() {
        dict_terms(weights, &bad)?
    } else if loss.is_none() || loss.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(bad());
    } else {
        let mut names = Vec::new();
        for item in loss.try_iter().map_err(|_| bad())? {
            let item = item?;
            let s = item.cast::<PyString>().map_err(|_| bad())?;
            names.push(s.to_string());
        }
        list_terms(names)?
    };
    if terms.is_empty() {
        return Err(bad());
    }
    Ok(match slack {
        "shared" if terms.len() > 1 => vec![terms],
        _ => terms.into_iter().map(|t| vec![t]).collect(),
    })
}

/// {"map": 1.0, "ndcg@10": 0.1}: each loss with its weight; a weight of 1 is the plain loss, so
/// such a dict trains the very model of the list of its keys.
fn dict_terms(weights: &Bound<'_, PyDict>, bad: &dyn Fn() -> PyErr) -> PyResult<Vec<LossTerm>> {
    let mut terms = Vec::new();
    for (key, value) in weights.iter() {
        let name = key.cast::<PyString>().map_err(|_| bad())?.to_string();
        // The value is the weight: a key with a weight of its own ({"1*map": 2}) would be a
        // loss with two weights, and could repeat another key's loss unseen.
        if oracle::split_weight(&name).is_some() {
            return Err(param_error(
                "loss",
                "a dict of loss names without weights to their weights ({\"map\": 2})",
                &key,
            ));
        }
        let weight = if value.is_instance_of::<PyBool>() {
            None
        } else {
            value.extract::<f64>().ok()
        };
        match weight {
            Some(w) if w.is_finite() && w > 0.0 => terms.push(LossTerm {
                weight: w,
                ..LossTerm::plain(&name)
            }),
            _ => {
                return Err(param_error(
                    &format!("the weight of loss {:?}", name.trim()),
                    "a finite number > 0",
                    &value,
                ))
            }
        }
    }
    check_distinct(terms.iter().map(LossTerm::to_string).collect())?;
    Ok(terms)
}

/// A list of names, each with its default weight in a list (a name spelled with a weight keeps
/// it), once the names are known to be distinct.
fn list_terms(names: Vec<String>) -> PyResult<Vec<LossTerm>> {
    check_distinct(names.clone())?;
    let defaults = registry::list_weights(&names);
    names
        .iter()
        .zip(defaults)
        .map(|(name, default)| {
            let term = LossTerm::parse(name)?;
            // A spelled weight comes with the exponent 0, the largest: its default is 1.
            Ok(LossTerm {
                weight: term.weight * default,
                ..term
            })
        })
        .collect()
}

/// Refuses a name given twice ("loss lists 'map' twice").
fn check_distinct(names: Vec<String>) -> PyResult<()> {
    for (i, name) in names.iter().enumerate() {
        if names[..i].iter().any(|other| other.trim() == name.trim()) {
            return Err(PyValueError::new_err(format!(
                "loss lists {:?} twice; each loss of a combination must appear once",
                name.trim()
            )));
        }
    }
    Ok(())
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

/// A table default as the Python value the signatures show.
fn default_value(py: Python<'_>, value: Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::Float(v) => v.into_pyobject(py)?.into_any().unbind(),
        Value::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        Value::Text(v) => PyString::new(py, v).into_any().unbind(),
        Value::Null => py.None(),
    })
}

/// What a parameter's check expects, as its error message says it (an optional parameter's
/// None is allowed, and said).
fn expected_words(p: &Parameter) -> String {
    match p.kind {
        Kind::OptionalCount | Kind::OptionalReal => format!("None or {}", p.expected),
        _ => p.expected.to_string(),
    }
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
const KINDS: [Kind; 8] = [
    Kind::Real,
    Kind::RealOrBool,
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
    let slack = parameter("slack").map_or(&[][..], |p| p.choices);
    let kinds: Vec<&str> = KINDS.iter().map(|&k| kind_name(k)).collect();
    let entries: [(&str, &[&str]); 8] = [
        ("Slack", slack),
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
        Kind::RealOrBool => "real_or_bool",
        Kind::Count => "count",
        Kind::OptionalCount => "optional_count",
        Kind::OptionalReal => "optional_real",
        Kind::Loss => "loss",
        Kind::Choice => "choice",
        Kind::Threads => "threads",
    }
}

/// The keyword arguments of `TrainConfig(...)` with their table entries, in the order given.
type Given<'py> = Vec<(&'static Parameter, Bound<'py, PyAny>)>;

/// `TrainConfig`'s keyword arguments matched to the table; a name not in it is the
/// `TypeError` of an unexpected keyword argument.
fn given_parameters<'py>(kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Given<'py>> {
    let mut given: Given<'py> = Vec::new();
    if let Some(kwargs) = kwargs {
        for (key, value) in kwargs.iter() {
            let key: String = key.extract()?;
            // Worded as Python words an unexpected keyword argument of a signature.
            let p = parameter(&key).ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "TrainConfig.__new__() got an unexpected keyword argument '{key}'"
                ))
            })?;
            given.push((p, value));
        }
    }
    Ok(given)
}

/// The value given for a parameter, if any.
fn get<'a, 'py>(given: &'a Given<'py>, name: &str) -> Option<&'a Bound<'py, PyAny>> {
    given.iter().find(|(p, _)| p.name == name).map(|(_, v)| v)
}

/// The solver's numbers first: their types, then their ranges (`Options::validate`), into
/// `options` and `kept` (the values as the configuration keeps them, in the table's order).
fn set_numbers(
    py: Python<'_>,
    given: &Given<'_>,
    options: &mut Options,
    kept: &mut [Py<PyAny>],
) -> PyResult<()> {
    for (i, p) in PARAMETERS.iter().enumerate() {
        let Some(v) = get(given, p.name) else {
            continue;
        };
        match p.kind {
            Kind::Real | Kind::RealOrBool => {
                let x = real(p, v, p.kind == Kind::RealOrBool)?;
                options.set_float(p.name, x);
                kept[i] = x.into_pyobject(py)?.into_any().unbind();
            }
            Kind::Count => {
                let k = count(p, v)?;
                options.set_count(p.name, k);
                kept[i] = k.into_pyobject(py)?.into_any().unbind();
            }
            _ => {}
        }
    }
    if let Err(Error::InvalidParameter { name, expected, .. }) = options.validate() {
        return Err(match get(given, &name) {
            Some(v) => param_error(&name, &expected, v),
            None => {
                PyValueError::new_err(format!("invalid default {name}: {:?}", Options::default()))
            }
        });
    }
    Ok(())
}

/// An optional parameter left out keeps its default; None means what its doc line says
/// (`Options::set_none`); else a count of at least 1, or a number that `validate` checks.
fn set_optional(
    py: Python<'_>,
    given: &Given<'_>,
    options: &mut Options,
    kept: &mut [Py<PyAny>],
) -> PyResult<()> {
    for (i, p) in PARAMETERS.iter().enumerate() {
        if !matches!(p.kind, Kind::OptionalCount | Kind::OptionalReal) {
            continue;
        }
        let Some(v) = get(given, p.name) else {
            continue;
        };
        if v.is_none() {
            options.set_none(p.name);
            kept[i] = py.None();
            continue;
        }
        if p.kind == Kind::OptionalCount {
            match count(p, v) {
                Ok(k) if k >= 1 => {
                    options.set_count(p.name, k);
                    kept[i] = k.into_pyobject(py)?.into_any().unbind();
                }
                _ => return Err(param_error(p.name, &expected_words(p), v)),
            }
        } else {
            let x = real(p, v, false)?;
            // A given limit is a finite number of seconds; no limit is None (infinity
            // would not be written to a model file).
            if !x.is_finite() {
                return Err(param_error(p.name, &expected_words(p), v));
            }
            options.set_float(p.name, x);
            if let Err(Error::InvalidParameter { .. }) = options.validate() {
                return Err(param_error(p.name, &expected_words(p), v));
            }
            kept[i] = x.into_pyobject(py)?.into_any().unbind();
        }
    }
    Ok(())
}

/// The losses of a configuration: `loss` and `slack` as given, checked, and as slack groups.
struct Losses {
    /// The `loss` argument as given (or the default name).
    given: Py<PyAny>,
    slack: String,
    groups: Vec<Vec<LossTerm>>,
    /// For a latent-target loss, the paper's loss its rounds solve, and the name given.
    latent: Option<String>,
    latent_name: Option<String>,
}

impl Losses {
    fn of(py: Python<'_>, given: &Given<'_>) -> PyResult<Self> {
        let default_slack = text_default("slack");
        let slack = match get(given, "slack") {
            None => default_slack.to_string(),
            Some(s) => {
                let choices = parameter("slack").map_or(&[][..], |p| p.choices);
                match s.extract::<String>() {
                    Ok(text) if choices.contains(&text.as_str()) => text,
                    _ => return Err(param_error("slack", expected("slack"), s)),
                }
            }
        };
        let loss_obj: Py<PyAny> = match get(given, "loss") {
            Some(l) => l.clone().unbind(),
            None => PyString::new(py, text_default("loss")).into_any().unbind(),
        };
        // A latent-target loss ("ndcg@10:latent") is no oracle: its slack group is the paper's
        // loss, which every CCCP round solves with the target fixed, and `latent` says so.
        let latent_name = loss_obj
            .bind(py)
            .cast::<PyString>()
            .ok()
            .and_then(|s| s.extract::<String>().ok());
        let latent = latent_name
            .as_deref()
            .and_then(oracle::registry::latent_base);
        let groups = match &latent {
            Some(base) => {
                if let Some(s) = get(given, "slack").filter(|_| slack != default_slack) {
                    return Err(param_error(
                        "slack",
                        &format!(
                            "{default_slack:?} with loss={:?} (one loss, one slack per query); \
                             slack=\"shared\" belongs to lists of losses",
                            latent_name.as_deref().unwrap_or_default()
                        ),
                        s,
                    ));
                }
                vec![vec![LossTerm::plain(base)]]
            }
            None => loss_groups(loss_obj.bind(py), &slack)?,
        };
        oracle::from_groups(&groups)?;
        Ok(Losses {
            given: loss_obj,
            slack,
            groups,
            latent,
            latent_name,
        })
    }
}

/// Everything that decides a training run besides the data, validated once on construction:
/// the parameters of the core's table (`PARAMETERS`), the losses as slack groups and the
/// thread count. Immutable; its defaults (`TrainConfig.DEFAULTS`) are the defaults of every
/// trainer.
#[pyclass(module = "svmmap._core", frozen)]
pub struct TrainConfig {
    pub(super) options: Options,
    pub(super) groups: Vec<Vec<LossTerm>>,
    slack: String,
    /// Every parameter of the table, as given (numbers as the core read them) or its default,
    /// in the table's order: what `kwargs()` returns and pickling rebuilds from.
    kwargs: Py<PyDict>,
    pub(super) n_threads: usize,
    /// For a latent-target loss ("ndcg@10:latent"), the paper's loss its rounds solve
    /// ("ndcg@10", the one slack group); None for every other loss.
    pub(super) latent: Option<String>,
}

impl TrainConfig {
    /// The oracles of the slack groups (building them is cheap; they are not shared).
    pub(super) fn oracles(&self) -> crate::Result<Vec<Box<dyn oracle::Oracle>>> {
        oracle::from_groups(&self.groups)
    }
}

#[pymethods]
impl TrainConfig {
    /// Keyword arguments only, the names of the table (`PARAMETERS`); a parameter left out
    /// takes its default (`DEFAULTS`), and every given value (None included) is checked, in
    /// the table's order.
    #[new]
    #[pyo3(signature = (**kwargs))]
    fn new(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let given = given_parameters(kwargs)?;
        // Every parameter as the configuration keeps it, filled in below in the table's order.
        let mut kept: Vec<Py<PyAny>> = PARAMETERS
            .iter()
            .map(|p| default_value(py, p.default))
            .collect::<PyResult<_>>()?;
        let index = |name: &str| PARAMETERS.iter().position(|p| p.name == name);
        let mut options = Options::default();
        set_numbers(py, &given, &mut options, &mut kept)?;
        let losses = Losses::of(py, &given)?;
        if let Some(i) = index("slack") {
            kept[i] = PyString::new(py, &losses.slack).into_any().unbind();
        }
        if let Some(i) = index("loss") {
            kept[i] = losses.given.clone_ref(py);
        }
        let n_jobs_obj: Py<PyAny> = match get(&given, "n_jobs") {
            Some(n) => n.clone().unbind(),
            None => py.None(),
        };
        let n_threads = threads_of(n_jobs_obj.bind(py))?;
        if let Some(i) = index("n_jobs") {
            kept[i] = n_jobs_obj;
        }
        set_optional(py, &given, &mut options, &mut kept)?;
        if let (Some(base), Some(name)) = (&losses.latent, &losses.latent_name) {
            let who = format!(
                "with loss={name:?}: its CCCP rounds solve {base:?} with one cut per iteration"
            );
            if let Some(e) = options.one_cut_only(&who, "None") {
                return Err(e.into());
            }
        }
        let kwargs = PyDict::new(py);
        for (p, value) in PARAMETERS.iter().zip(kept) {
            kwargs.set_item(p.name, value)?;
        }
        Ok(TrainConfig {
            options,
            groups: losses.groups,
            slack: losses.slack,
            kwargs: kwargs.unbind(),
            n_threads,
            latent: losses.latent,
        })
    }

    /// The default of every parameter of the table, as the estimators' signatures show them.
    #[classattr]
    #[allow(non_snake_case)]
    fn DEFAULTS(py: Python<'_>) -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        for p in PARAMETERS {
            d.set_item(p.name, default_value(py, p.default)?)?;
        }
        Ok(d.unbind())
    }

    #[getter]
    #[allow(non_snake_case)]
    fn C(&self) -> f64 {
        self.options.c
    }
    #[getter]
    fn eps(&self) -> f64 {
        self.options.eps
    }
    #[getter]
    fn max_iter(&self) -> usize {
        self.options.max_iter
    }
    #[getter]
    fn relevance_threshold(&self) -> f64 {
        self.options.relevance_threshold
    }
    /// The slack groups: one list of (weight, loss name) per slack (several losses share it).
    #[getter]
    fn losses(&self) -> Vec<Vec<(f64, String)>> {
        self.groups
            .iter()
            .map(|g| g.iter().map(|t| (t.weight, t.name.clone())).collect())
            .collect()
    }
    /// For a latent-target loss ("ndcg@10:latent"), the paper's loss that each CCCP round
    /// solves with the target fixed ("ndcg@10", also the one slack group of `losses`); None
    /// for every other loss.
    #[getter]
    fn latent(&self) -> Option<String> {
        self.latent.clone()
    }
    #[getter]
    fn slack(&self) -> &str {
        &self.slack
    }
    /// The duality gap below which training stops (`Options::tolerance`): eps times C times
    /// the number of slack groups.
    #[getter]
    fn tolerance(&self) -> f64 {
        self.options.tolerance(self.groups.len())
    }
    #[getter]
    fn n_threads(&self) -> usize {
        self.n_threads
    }
    /// Raises the error of a trainer that makes one cut per slack group and iteration
    /// (`who`: which, and why) when more cut blocks were asked for; `leave` is what to pass
    /// instead.
    fn require_one_cut(&self, who: &str, leave: &str) -> PyResult<()> {
        match self.options.one_cut_only(who, leave) {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// The keyword arguments this configuration was built from: every parameter of the table,
    /// given or default.
    fn kwargs<'py>(&self, py: Python<'py>) -> Bound<'py, PyDict> {
        // A copy, so that the caller cannot change the configuration.
        self.kwargs.bind(py).copy().expect("a dict copies")
    }

    // Pickling (e.g. to Dask workers) rebuilds the configuration from its keyword arguments.
    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        Ok((PyTuple::empty(py), self.kwargs(py)))
    }

    fn __getstate__(&self, py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("TrainConfig(**{})", self.kwargs(py).repr()?))
    }
}
