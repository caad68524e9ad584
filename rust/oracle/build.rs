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
    // "lambda*loss": the loss weighted by lambda (`weighted.rs`). Only a number before the
    // first '*' makes a weight, so registry spellings such as "ndcg@10*N" keep their meaning.
    if let Some((head, rest)) = trimmed.split_once('*') {
        if let Ok(weight) = head.trim().parse::<f64>() {
            if !(weight.is_finite() && weight > 0.0) {
                return Err(Error::param(
                    "loss weight",
                    "a finite number > 0",
                    format!("{name:?}"),
                ));
            }
            return Ok(Box::new(weighted::Weighted::new(weight, from_name(rest)?)));
        }
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
    // A loss twice adds nothing to the maximum but its cost, and is most likely a typo for
    // another loss, so it is refused as a list of separate slacks refuses it.
    for (i, oracle) in oracles.iter().enumerate() {
        let name = oracle.name();
        if oracles[..i].iter().any(|other| other.name() == name) {
            return Err(Error::param(
                "loss",
                &format!("max(...) of distinct losses ({name:?} appears twice)"),
                format!("{spelled:?}"),
            ));
        }
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
    groups.iter().map(|g| from_group(g)).collect()
}
