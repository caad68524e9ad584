//! Loss-augmented inference ("oracles"): for one query, the ranking ybar that maximizes
//! Delta(y*, y) + w.Psi(x, y) - w.Psi(x, y*), the most violated constraint of the structural SVM.
//!
//! Every feature map used here is linear in the documents, so the difference
//! deltaPsi(ybar) = Psi(x, y*) - Psi(x, ybar) is written as per-document coefficients c with
//! deltaPsi = sum_i c_i x_i. The oracle returns Delta(y*, ybar) and fills c; the hinge value of
//! the query is then Delta - sum_i c_i s_i with s_i = w.x_i. The solver builds a cutting plane
//! as X^T c, so an oracle never sees the features, only the scores.

pub mod acc;
pub mod combo;
pub mod dorm;
pub mod hinge;
pub(crate) mod interleave;
pub mod map;
pub mod mrr;
pub mod ndcg;
pub mod pairwise;
pub mod registry;
pub mod roc;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod testing;

use crate::error::{Error, Result};
pub use interleave::Sorted;

/// One query's loss-augmented argmax.
pub trait Oracle: Send + Sync {
    /// The loss name as the user spells it ("map", ...).
    fn name(&self) -> String;

    /// Finds ybar for a query whose documents have the given scores and binary relevance.
    /// The query has at least one relevant and one non-relevant document. `coef` has the
    /// query's length; the oracle overwrites it with the coefficients of deltaPsi(ybar).
    /// Returns Delta(y*, ybar).
    fn argmax(&self, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64;

    /// `argmax` for a loss that reads the graded labels (the query's labels in the same order
    /// as `scores`) as well as the binary relevance derived from them. Binary losses keep this
    /// default, which ignores the labels. The query is one that `usable` accepts.
    fn argmax_labels(
        &self,
        scores: &[f64],
        labels: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        let _ = labels;
        self.argmax(scores, relevant, coef)
    }

    /// Whether the oracle starts from the query's documents split by relevance and sorted by
    /// descending score (`Sorted`); a combination of such losses sorts each query once for all
    /// of them (`argmax_sorted`).
    fn sorts(&self) -> bool {
        false
    }

    /// `argmax_labels` given `sorted = Sorted::new(scores, relevant)`, so that several
    /// oracles run on one query share its sort. The result is the same as `argmax_labels`'s;
    /// the default ignores `sorted`.
    fn argmax_sorted(
        &self,
        sorted: &Sorted,
        scores: &[f64],
        labels: &[f64],
        relevant: &[bool],
        coef: &mut [f64],
    ) -> f64 {
        let _ = sorted;
        self.argmax_labels(scores, labels, relevant, coef)
    }

    /// Whether a query with these labels has a constraint that can be violated. By default,
    /// `QueryKind::of` (a relevant and a non-relevant document); such a query is usable by
    /// every loss, and a graded loss ("pairwise") may accept more (any two distinct labels).
    fn usable(&self, labels: &[f64], relevant: &[bool]) -> bool {
        let _ = labels;
        QueryKind::of(relevant) == QueryKind::Usable
    }

    /// Refuses, before any work starts, a query length on which this oracle would take
    /// unreasonably long; the message says what to use instead. Most oracles are
    /// O(n log n) and accept any length.
    fn check_query_len(&self, _n_docs: usize) -> Result<()> {
        Ok(())
    }
}

/// Asks every oracle whether it accepts the longest query of `groups`.
pub fn check_query_lens(oracles: &[&dyn Oracle], groups: &crate::data::QueryGroups) -> Result<()> {
    let longest = (0..groups.n_queries())
        .map(|q| groups.bounds[q + 1] - groups.bounds[q])
        .max()
        .unwrap_or(0);
    oracles.iter().try_for_each(|o| o.check_query_len(longest))
}

/// What a query can contribute to training, by its documents' binary relevance. This is the
/// one place the rule of the binary losses lives: a query gives a constraint (and a non-zero
/// hinge) only when it has at least one relevant and one non-relevant document, since otherwise
/// every ranking of it is equally right. `Oracle::usable` defaults to it (a graded loss such as
/// "pairwise" accepts more), and the query counts the estimators report (`QueryCounts`,
/// `ProblemSummary`) are by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryKind {
    Usable,
    NoRelevant,
    AllRelevant,
}

impl QueryKind {
    pub fn of(relevant: &[bool]) -> Self {
        let p = relevant.iter().filter(|&&r| r).count();
        if p == 0 {
            QueryKind::NoRelevant
        } else if p == relevant.len() {
            QueryKind::AllRelevant
        } else {
            QueryKind::Usable
        }
    }
}

/// The value max_y Delta(y*, y) + w.Psi(y) - w.Psi(y*) for one query, through `oracle`.
/// It is non-negative because y = y* is a candidate.
pub fn hinge(oracle: &dyn Oracle, scores: &[f64], relevant: &[bool], coef: &mut [f64]) -> f64 {
    let loss = oracle.argmax(scores, relevant, coef);
    loss - dot(coef, scores)
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The loss names `from_name` accepts, for error messages and documentation (read from the
/// registry).
pub fn loss_names_help() -> String {
    registry::names_help()
}

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
    if let Some(inner) = trimmed
        .strip_prefix("max(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        let parts: Vec<&str> = inner.split(',').collect();
        return shared_slack(&parts, name);
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

/// Replaces the coefficients of documents that tie in score within `sorted` (one relevance
/// class, sorted by descending score) by their mean.
///
/// Documents of equal relevance and equal score are interchangeable in the argmax: every
/// assignment of them to the tied positions gives the same H. Averaging their coefficients
/// takes the mean of those equally violated constraints, which is implied by them and as
/// violated, so the cutting-plane algorithm stays exact, and it makes the cut independent of
/// the order in which the caller listed the documents.
pub(crate) fn average_ties(sorted: &[usize], scores: &[f64], coef: &mut [f64]) {
    let mut start = 0;
    while start < sorted.len() {
        let s = scores[sorted[start]];
        let mut end = start + 1;
        while end < sorted.len() && scores[sorted[end]] == s {
            end += 1;
        }
        if end - start > 1 {
            let run = &sorted[start..end];
            let mean = run.iter().map(|&i| coef[i]).sum::<f64>() / run.len() as f64;
            for &i in run {
                coef[i] = mean;
            }
        }
        start = end;
    }
}

/// Indices of the relevant and of the non-relevant documents, each sorted by descending score.
/// Equal scores keep index order, so the result never depends on the sort's internals.
pub(crate) fn split_sorted(scores: &[f64], relevant: &[bool]) -> (Vec<usize>, Vec<usize>) {
    let sorted = Sorted::new(scores, relevant);
    (sorted.pos, sorted.neg)
}

/// Sorts document indices by descending score, equal scores by index (the order of
/// `split_sorted`), through the same (key, index) pairs.
pub(crate) fn sort_descending(indices: &mut [usize], scores: &[f64]) {
    let mut keyed: Vec<(u64, usize)> = indices
        .iter()
        .map(|&i| (descending_key(scores[i]), i))
        .collect();
    keyed.sort_unstable();
    for (slot, (_, i)) in indices.iter_mut().zip(keyed) {
        *slot = i;
    }
}

/// A key whose ascending order is the descending order of `f64::total_cmp` (the same bit
/// transformation: negative values have their magnitude bits flipped, then the sign bit is
/// flipped so that the signed order becomes the unsigned one, then all bits are flipped).
#[inline]
pub(crate) fn descending_key(score: f64) -> u64 {
    let bits = score.to_bits() as i64;
    let ordered = bits ^ ((((bits >> 63) as u64) >> 1) as i64);
    !((ordered as u64) ^ (1 << 63))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The order split_sorted must give, by the definition: indices sorted with total_cmp on
    /// descending scores, equal scores by index.
    fn by_definition(scores: &[f64], relevant: &[bool], want: bool) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..scores.len()).filter(|&i| relevant[i] == want).collect();
        idx.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        idx
    }

    #[test]
    fn split_sorted_orders_scores_a_few_units_in_the_last_place_apart() {
        // Sorted::fill sorts keys whose low bits hold the document's index (7 bits for up to
        // 128 documents, 9 for 300), and sorts again the runs that agree above those bits.
        // Scores that differ only in those low bits, equal ones mixed in, in both signs and
        // around zero, must still come out in the definition's order.
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        for case in 0..400 {
            // Lengths at the edges of the index's bits (128 documents need 7, 129 need 8).
            let n = [128, 129, 256, 257]
                .get(case / 5)
                .copied()
                .unwrap_or(rng.random_range(2..300));
            let base: f64 = [1.0, -1.0, 0.0, 3.5e-300, -2.0e10][case % 5];
            let scores: Vec<f64> = (0..n)
                .map(|_| {
                    let ulps = rng.random_range(-600i64..600);
                    let mut v = base;
                    for _ in 0..ulps.unsigned_abs() {
                        v = if ulps > 0 { v.next_up() } else { v.next_down() };
                    }
                    if rng.random_bool(0.2) {
                        base
                    } else {
                        v
                    }
                })
                .collect();
            let relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.4)).collect();
            let (pos, neg) = split_sorted(&scores, &relevant);
            assert_eq!(pos, by_definition(&scores, &relevant, true), "case {case}");
            assert_eq!(neg, by_definition(&scores, &relevant, false), "case {case}");
        }
    }

    #[test]
    fn split_sorted_orders_as_total_cmp_with_ties_by_index() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Few distinct values, so that ties are frequent, and the values total_cmp orders
        // specially: both zeros, infinities, NaNs of both signs, subnormals.
        let special = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MIN_POSITIVE / 4.0,
            -f64::MIN_POSITIVE / 4.0,
            f64::MAX,
            f64::MIN,
        ];
        for case in 0..500 {
            let n = rng.random_range(0..60);
            let scores: Vec<f64> = (0..n)
                .map(|_| match rng.random_range(0..4) {
                    0 => special[rng.random_range(0..special.len())],
                    1 => rng.random_range(-3..3) as f64,
                    _ => rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-5..5)),
                })
                .collect();
            let relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.4)).collect();
            let (pos, neg) = split_sorted(&scores, &relevant);
            assert_eq!(pos, by_definition(&scores, &relevant, true), "case {case}");
            assert_eq!(neg, by_definition(&scores, &relevant, false), "case {case}");
            let mut all: Vec<usize> = (0..n).rev().collect();
            sort_descending(&mut all, &scores);
            assert_eq!(
                all,
                by_definition(&scores, &vec![true; n], true),
                "case {case}"
            );
        }
    }

    #[test]
    fn sorted_average_ties_skips_only_classes_without_equal_scores() {
        // `Sorted::average_ties` skips a class in which no two scores compare equal; it must
        // give what `average_ties` on both classes gives, with -0.0 = 0.0 (equal, different
        // sort keys) and NaN (never equal) among the scores.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for case in 0..2000 {
            let n = rng.random_range(1..40);
            let pool = [0.0, -0.0, f64::NAN, 1.5, -2.0];
            let scores: Vec<f64> = (0..n)
                .map(|_| match rng.random_range(0..3) {
                    0 => pool[rng.random_range(0..pool.len())],
                    _ => rng.random_range(-1.0..1.0),
                })
                .collect();
            let relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.5)).collect();
            let coef: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let sorted = Sorted::new(&scores, &relevant);
            let mut expected = coef.clone();
            average_ties(&sorted.pos, &scores, &mut expected);
            average_ties(&sorted.neg, &scores, &mut expected);
            let mut got = coef.clone();
            sorted.average_ties(&scores, &mut got);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&expected), "case {case}");
        }
    }

    #[test]
    fn a_refilled_sorted_equals_a_fresh_one() {
        // A pass refills one `Sorted` query after query; nothing of a longer or differently
        // split query may remain in it.
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut sorted = Sorted::default();
        for case in 0..400 {
            let n = rng.random_range(0..300);
            let scores: Vec<f64> = (0..n)
                .map(|_| match rng.random_range(0..3) {
                    0 => rng.random_range(-3..3) as f64,
                    1 => [f64::NAN, -0.0, 0.0, f64::INFINITY][rng.random_range(0..4)],
                    _ => rng.random_range(-1.0..1.0),
                })
                .collect();
            let relevant: Vec<bool> = (0..n).map(|_| rng.random_bool(0.4)).collect();
            sorted.fill(&scores, &relevant);
            let (pos, neg) = (
                by_definition(&scores, &relevant, true),
                by_definition(&scores, &relevant, false),
            );
            assert_eq!(sorted.pos, pos, "case {case}");
            assert_eq!(sorted.neg, neg, "case {case}");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let sp: Vec<f64> = pos.iter().map(|&i| scores[i]).collect();
            let sn: Vec<f64> = neg.iter().map(|&i| scores[i]).collect();
            assert_eq!(bits(&sorted.sp), bits(&sp), "case {case}");
            assert_eq!(bits(&sorted.sn), bits(&sn), "case {case}");
        }
    }
}
