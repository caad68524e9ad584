//! The `loss` and `slack` arguments of a training configuration as slack groups of weighted
//! losses (a name, a list of names or a dict of names to weights), checked against the core's
//! registry of losses.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

use super::params::param_error;
use super::tables::slack_choices;
use crate::oracle::{self, registry, LossTerm};
use crate::solver::{expected, text_default};

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

/// The losses of a configuration: `loss` and `slack` as given, checked, and as slack groups.
pub(super) struct Losses {
    /// The `loss` argument as given (or the default name).
    pub(super) given: Py<PyAny>,
    pub(super) slack: String,
    pub(super) groups: Vec<Vec<LossTerm>>,
    /// For a latent-target loss, the paper's loss its rounds solve, and the name given.
    pub(super) latent: Option<String>,
    pub(super) latent_name: Option<String>,
}

impl Losses {
    /// The `loss` and `slack` keyword arguments, each None when left out (the table's default).
    pub(super) fn of(
        py: Python<'_>,
        loss: Option<&Bound<'_, PyAny>>,
        slack: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let given_slack = slack;
        let default_slack = text_default("slack");
        let slack = match given_slack {
            None => default_slack.to_string(),
            Some(s) => {
                let choices = slack_choices();
                match s.extract::<String>() {
                    Ok(text) if choices.contains(&text.as_str()) => text,
                    _ => return Err(param_error("slack", expected("slack"), s)),
                }
            }
        };
        let loss_obj: Py<PyAny> = match loss {
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
                if let Some(s) = given_slack.filter(|_| slack != default_slack) {
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
