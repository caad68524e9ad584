//! The one training configuration (`TrainConfig`), validated here once, on construction:
//! every keyword argument read by the table of parameters (`params.rs`), the losses
//! (`losses.rs`) and the thread count. The results are in `results.rs`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use super::losses::Losses;
use super::params::{count, param_error, real, threads_of};
use super::tables::{default_value, expected_words};
use crate::error::Error;
use crate::oracle::{self, LossTerm};
use crate::solver::{parameter, Kind, Options, Parameter, ValidOptions, PARAMETERS};

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

/// The solver's numbers first: their types, then their ranges (`Options::checked`: the one
/// validation of the options), with `kept` (the values as the configuration keeps them, in
/// the table's order).
fn set_numbers(
    py: Python<'_>,
    given: &Given<'_>,
    kept: &mut [Py<PyAny>],
) -> PyResult<ValidOptions> {
    let mut options = Options::default();
    for (i, p) in PARAMETERS.iter().enumerate() {
        let Some(v) = get(given, p.name) else {
            continue;
        };
        match p.kind {
            Kind::Real => {
                let x = real(p, v)?;
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
    options.checked().map_err(|e| match e {
        Error::InvalidParameter { name, expected, .. } => match get(given, &name) {
            Some(v) => param_error(&name, &expected, v),
            None => {
                PyValueError::new_err(format!("invalid default {name}: {:?}", Options::default()))
            }
        },
        other => other.into(),
    })
}

/// An optional parameter left out keeps its default; None means what its doc line says
/// (`Options::set_none`); else a count of at least 1, or a number that its rule checks (the one
/// parameter changed, `ValidOptions::with`).
fn set_optional(
    py: Python<'_>,
    given: &Given<'_>,
    mut options: ValidOptions,
    kept: &mut [Py<PyAny>],
) -> PyResult<ValidOptions> {
    for (i, p) in PARAMETERS.iter().enumerate() {
        if !matches!(p.kind, Kind::OptionalCount | Kind::OptionalReal) {
            continue;
        }
        let Some(v) = get(given, p.name) else {
            continue;
        };
        let refused = |_| param_error(p.name, &expected_words(p), v);
        if v.is_none() {
            options = options
                .with(|o| {
                    o.set_none(p.name);
                })
                .map_err(refused)?;
            kept[i] = py.None();
            continue;
        }
        if p.kind == Kind::OptionalCount {
            match count(p, v) {
                Ok(k) if k >= 1 => {
                    options = options
                        .with(|o| {
                            o.set_count(p.name, k);
                        })
                        .map_err(refused)?;
                    kept[i] = k.into_pyobject(py)?.into_any().unbind();
                }
                _ => return Err(param_error(p.name, &expected_words(p), v)),
            }
        } else {
            let x = real(p, v)?;
            // A given limit is a finite number of seconds; no limit is None (infinity
            // would not be written to a model file).
            if !x.is_finite() {
                return Err(param_error(p.name, &expected_words(p), v));
            }
            options = options
                .with(|o| {
                    o.set_float(p.name, x);
                })
                .map_err(refused)?;
            kept[i] = x.into_pyobject(py)?.into_any().unbind();
        }
    }
    Ok(options)
}

/// Everything that decides a training run besides the data, validated once on construction:
/// the parameters of the core's table (`PARAMETERS`), the losses as slack groups and the
/// thread count. Immutable; its defaults (`TrainConfig.DEFAULTS`) are the defaults of every
/// trainer.
#[pyclass(module = "svmmap._core", frozen)]
pub struct TrainConfig {
    /// Validated once, here; the solver takes them as they are.
    pub(super) options: ValidOptions,
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
        let options = set_numbers(py, &given, &mut kept)?;
        let losses = Losses::of(py, get(&given, "loss"), get(&given, "slack"))?;
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
        let options = set_optional(py, &given, options, &mut kept)?;
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
