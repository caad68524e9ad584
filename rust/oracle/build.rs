//! Oracles from their names: a loss of the registry, or a shared-slack combination of several.

use crate::error::{Error, Result};
use crate::oracle::combo;
use crate::oracle::interface::Oracle;
use crate::oracle::registry;
use crate::oracle::weighted;

/// Builds an oracle from its user-facing name: a loss of the registry (`registry::LOSSES`,
/// which documents each one), spelled `name`, `name@k` or `name@k:option` as its entry allows,
/// or "max(a,b,...)": the shared-slack combination of Chakrabarti 3.7, which per query takes the
/// most violated constraint over the component losses.
pub fn from_name(name: &str) -> Result<Box<dyn Oracle>> {
    let bad = || {
        Error::param(
            "loss",
            &format!("one of {}", registry::names_help()),
            format!("{name:?}"),
        )
    };
    let trimmed = name.trim();
    if let Some((weight, rest)) = split_weight(trimmed) {
        if !(weight.is_finite() && weight > 0.0) {
            return Err(Error::param(
                "loss weight",
                "a finite number > 0",
                format!("{name:?}"),
            ));
        }
        // "2*3*ndcg@10" is one weight written as two: refused, so that a loss has one
        // spelling per weight and a weight cannot hide a loss listed twice.
        if split_weight(rest).is_some() {
            return Err(Error::param(
                "loss",
                "a loss with at most one weight (\"6*ndcg@10\", not \"2*3*ndcg@10\")",
                format!("{name:?}"),
            ));
        }
        return Ok(Box::new(weighted::Weighted::new(weight, from_name(rest)?)));
    }
    if let Some(inner) = trimmed
        .strip_prefix("max(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        let parts: Vec<&str> = inner.split(',').collect();
        return shared_slack(&parts, name);
    }
    if registry::latent_base(trimmed).is_some() {
        return Err(Error::param(
            "loss",
            "a loss with a latent target alone (loss=\"ndcg@10:latent\", trained by CCCP \
             rounds in SVMMap.fit, svmmap learn and SVMMapCV), not in a list, a weight or a \
             max(...); combine the paper's \"ndcg@k\" instead",
            format!("{name:?}"),
        ));
    }
    let spec = registry::LossSpec::parse(trimmed).ok_or_else(bad)?;
    let info = registry::lookup(spec.base).ok_or_else(bad)?;
    info.build(&spec).map_err(|e| match e {
        registry::BuildError::Syntax => bad(),
        registry::BuildError::Option(what, expected) => {
            Error::param(what, expected, format!("{name:?}"))
        }
    })
}

/// "lambda*loss" as (lambda, "loss"): the loss weighted by lambda (`weighted.rs`), or None for a
/// name without a weight. Only a number before the first '*' makes a weight, so registry
/// spellings such as "ndcg@10*N" keep their meaning.
pub fn split_weight(name: &str) -> Option<(f64, &str)> {
    let (head, rest) = name.trim().split_once('*')?;
    head.trim().parse::<f64>().ok().map(|w| (w, rest.trim()))
}

/// What makes two losses the same loss whatever their weights and spellings: the canonical
/// name of the unweighted oracle ("1*map", " map" and "0.5*map" are all "map").
fn identity(oracle: &dyn Oracle) -> String {
    let name = oracle.name();
    match split_weight(&name) {
        Some((_, rest)) => rest.to_string(),
        None => name,
    }
}

/// The first loss of `oracles` that repeats an earlier one by `identity`, with both spellings.
/// A loss listed twice (also through a weight: ["map", "1*map"]) adds nothing to a maximum and
/// trains one loss at the sum of its weights in separate slacks; either way it is most likely a
/// typo for another loss, so every combination refuses it, through this one check.
fn repeated(oracles: &[Box<dyn Oracle>]) -> Option<(String, String, String)> {
    for (i, oracle) in oracles.iter().enumerate() {
        let key = identity(oracle.as_ref());
        if let Some(first) = oracles[..i].iter().find(|o| identity(o.as_ref()) == key) {
            return Some((key, first.name(), oracle.name()));
        }
    }
    None
}

/// The shared-slack combination of plain loss names (no nesting).
fn shared_slack(parts: &[&str], spelled: &str) -> Result<Box<dyn Oracle>> {
    if parts.is_empty() {
        return Err(Error::param(
            "loss",
            "at least one loss in a shared slack",
            format!("{spelled:?}"),
        ));
    }
    let oracles = parts
        .iter()
        .map(|part| {
            if part.trim().starts_with("max(") {
                Err(Error::param(
                    "loss",
                    "max(...) of plain loss names (no nesting)",
                    format!("{spelled:?}"),
                ))
            } else {
                from_name(part)
            }
        })
        .collect::<Result<Vec<_>>>()?;
    if let Some((key, first, again)) = repeated(&oracles) {
        let how = if first == again {
            String::new()
        } else {
            format!(", as {first:?} and {again:?}")
        };
        return Err(Error::param(
            "loss",
            &format!("max(...) of distinct losses ({key:?} appears twice{how})"),
            format!("{spelled:?}"),
        ));
    }
    Ok(Box::new(combo::SharedSlack::new(oracles)))
}

/// The oracle of one slack group, given as a structured list of loss names: one name is that
/// loss; several share one slack per query (their maximum, Chakrabarti 3.7).
pub fn from_group<S: AsRef<str>>(names: &[S]) -> Result<Box<dyn Oracle>> {
    match names {
        [one] => from_name(one.as_ref()),
        _ => {
            let parts: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
            let spelled = format!("[{}]", parts.join(", "));
            shared_slack(&parts, &spelled)
        }
    }
}

/// The oracles of several slack groups (see `from_group`); at least one group is needed.
pub fn from_groups<S: AsRef<str>>(groups: &[Vec<S>]) -> Result<Vec<Box<dyn Oracle>>> {
    if groups.is_empty() {
        return Err(Error::input("at least one loss is needed"));
    }
    let oracles = groups
        .iter()
        .map(|g| from_group(g))
        .collect::<Result<Vec<_>>>()?;
    // Separate slacks: the same loss in two groups (["map", "1*map"], {"map": 1, "0.5*map": 2})
    // is refused here, where every route to training (SVMMap, svmmap learn, model files, the
    // structured hinge) builds its oracles.
    if let Some((key, first, again)) = repeated(&oracles) {
        let how = if first == again {
            String::new()
        } else {
            format!(" (as {first:?} and {again:?})")
        };
        return Err(Error::param(
            "loss",
            "a combination that lists each loss once",
            format!("{key:?} twice{how}"),
        ));
    }
    Ok(oracles)
}
