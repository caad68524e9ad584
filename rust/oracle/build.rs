//! Oracles from their names: a loss of the registry, or a shared-slack combination of several.

use crate::error::{Error, Result};
use crate::oracle::combo;
use crate::oracle::interface::Oracle;
use crate::oracle::registry;
use crate::oracle::weighted;

/// One loss of a slack group and its weight lambda > 0: the loss lambda * Delta_l with the
/// feature map lambda * Psi_l (weighted.rs; SVM-combo's C_l = lambda * C). This is how losses
/// travel from the Python layer to the oracles; "0.1*ndcg@10" is only the user's spelling of
/// one (`LossTerm::parse`).
#[derive(Debug, Clone, PartialEq)]
pub struct LossTerm {
    pub weight: f64,
    /// A loss of the registry, or "max(a,b,...)", without a weight.
    pub name: String,
}

impl LossTerm {
    /// The loss `name` with the weight 1.
    pub fn plain(name: &str) -> Self {
        LossTerm {
            weight: 1.0,
            name: name.trim().to_string(),
        }
    }

    /// The user's spelling taken apart: "0.1*ndcg@10" is (0.1, "ndcg@10"), "map" is (1,
    /// "map"). A weight must be finite and > 0, and there is at most one.
    pub fn parse(spelled: &str) -> Result<Self> {
        let Some((weight, rest)) = split_weight(spelled) else {
            return Ok(LossTerm::plain(spelled));
        };
        check_weight(weight, spelled)?;
        // "2*3*ndcg@10" is one weight written as two: refused, so that a loss has one
        // spelling per weight and a weight cannot hide a loss listed twice.
        if split_weight(rest).is_some() {
            return Err(Error::param(
                "loss",
                "a loss with at most one weight (\"6*ndcg@10\", not \"2*3*ndcg@10\")",
                format!("{spelled:?}"),
            ));
        }
        Ok(LossTerm {
            weight,
            name: rest.to_string(),
        })
    }

    /// The oracle, and what makes it the same loss as another whatever the weights: the
    /// canonical name of the unweighted oracle (" map" and "map" are both "map").
    fn build(&self) -> Result<(Box<dyn Oracle>, String)> {
        if split_weight(&self.name).is_some() {
            return Err(Error::param(
                "loss",
                "a loss name without a weight beside its weight",
                format!("{:?}", self.name),
            ));
        }
        let plain = from_plain_name(&self.name)?;
        let identity = plain.name();
        let oracle = if self.weight == 1.0 {
            plain
        } else {
            check_weight(self.weight, &self.to_string())?;
            Box::new(weighted::Weighted::new(self.weight, plain))
        };
        Ok((oracle, identity))
    }
}

/// A loss weight is finite and > 0; `spelled` names the loss in the error.
fn check_weight(weight: f64, spelled: &str) -> Result<()> {
    if weight.is_finite() && weight > 0.0 {
        return Ok(());
    }
    Err(Error::param(
        "loss weight",
        "a finite number > 0",
        format!("{spelled:?}"),
    ))
}

/// Builds an oracle from its user-facing name: a loss of the registry (`registry::LOSSES`,
/// which documents each one), spelled `name`, `name@k` or `name@k:option` as its entry allows,
/// or "max(a,b,...)": the shared-slack combination of Chakrabarti 3.7, which per query takes the
/// most violated constraint over the component losses; either with a weight, "0.1*ndcg@10".
pub fn from_name(name: &str) -> Result<Box<dyn Oracle>> {
    Ok(LossTerm::parse(name)?.build()?.0)
}

/// The oracle of a name without a weight.
fn from_plain_name(name: &str) -> Result<Box<dyn Oracle>> {
    let bad = || {
        Error::param(
            "loss",
            &format!("one of {}", registry::names_help()),
            format!("{name:?}"),
        )
    };
    let trimmed = name.trim();
    if let Some(inner) = trimmed
        .strip_prefix("max(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        let parts = inner
            .split(',')
            .map(LossTerm::parse)
            .collect::<Result<Vec<_>>>()?;
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

/// A loss listed twice: its identity, and the names of its first and second oracle.
type Repeat = (String, String, String);

/// The first of `built` (oracles with their identities) that repeats an earlier one by
/// identity. A loss listed twice (also through a weight: ["map", "0.5*map"]) adds nothing to a
/// maximum and trains one loss at the sum of its weights in separate slacks; either way it is
/// most likely a typo for another loss, so every combination refuses it, through this one
/// check.
fn repeated(built: &[(Box<dyn Oracle>, String)]) -> Option<Repeat> {
    for (i, (oracle, key)) in built.iter().enumerate() {
        if let Some((first, _)) = built[..i].iter().find(|(_, k)| k == key) {
            return Some((key.clone(), first.name(), oracle.name()));
        }
    }
    None
}

/// The shared-slack combination of loss terms (no nesting); `spelled` names it in errors.
fn shared_slack(parts: &[LossTerm], spelled: &str) -> Result<Box<dyn Oracle>> {
    if parts.is_empty() {
        return Err(Error::param(
            "loss",
            "at least one loss in a shared slack",
            format!("{spelled:?}"),
        ));
    }
    if parts.iter().any(|p| p.name.trim().starts_with("max(")) {
        return Err(Error::param(
            "loss",
            "max(...) of plain loss names (no nesting)",
            format!("{spelled:?}"),
        ));
    }
    let built = parts
        .iter()
        .map(LossTerm::build)
        .collect::<Result<Vec<_>>>()?;
    if let Some((key, first, again)) = repeated(&built) {
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
    let oracles = built.into_iter().map(|(oracle, _)| oracle).collect();
    Ok(Box::new(combo::SharedSlack::new(oracles)))
}

/// The oracle of one slack group of weighted losses: one loss is that loss; several share
/// one slack per query (their maximum, Chakrabarti 3.7).
pub fn from_group(terms: &[LossTerm]) -> Result<Box<dyn Oracle>> {
    match terms {
        [one] => Ok(one.build()?.0),
        _ => {
            let parts: Vec<String> = terms.iter().map(LossTerm::to_string).collect();
            let spelled = format!("[{}]", parts.join(", "));
            shared_slack(terms, &spelled)
        }
    }
}

/// The oracles of several slack groups (see `from_group`); at least one group is needed.
pub fn from_groups(groups: &[Vec<LossTerm>]) -> Result<Vec<Box<dyn Oracle>>> {
    if groups.is_empty() {
        return Err(Error::input("at least one loss is needed"));
    }
    // Separate slacks: the same loss in two groups (["map", "0.5*map"]) is refused here,
    // where every route to training (SVMMap, svmmap learn, model files, the structured hinge)
    // builds its oracles. A group's identity is its oracle's unweighted name (a shared
    // group's, its maximum's name).
    let built = groups
        .iter()
        .map(|group| match group.as_slice() {
            [one] => one.build(),
            _ => from_group(group).map(|shared| {
                let key = shared.name();
                (shared, key)
            }),
        })
        .collect::<Result<Vec<_>>>()?;
    if let Some((key, first, again)) = repeated(&built) {
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
    Ok(built.into_iter().map(|(oracle, _)| oracle).collect())
}

/// The user's spelling of a term ("0.1*ndcg@10"; the weight as Rust writes an f64, shortest
/// round trip), for messages.
impl std::fmt::Display for LossTerm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.weight == 1.0 {
            write!(f, "{}", self.name)
        } else {
            write!(f, "{}*{}", self.weight, self.name)
        }
    }
}
