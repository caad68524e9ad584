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
pub mod roc;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod testing;

use crate::error::{Error, Result};

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

    /// Whether a query with these labels has a constraint that can be violated. By default,
    /// when it has a relevant and a non-relevant document; such a query is usable by every
    /// loss, and a graded loss ("pairwise") may accept more (any two distinct labels).
    fn usable(&self, labels: &[f64], relevant: &[bool]) -> bool {
        let _ = labels;
        relevant.iter().any(|&r| r) && relevant.iter().any(|&r| !r)
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

/// The loss names `from_name` accepts, for error messages and documentation.
pub const LOSS_NAMES: &str =
    "map, map-greedy, map-fast, roc, pairwise, ndcg, ndcg@k, mrr, mrr@k, acc, acc2, \
     dorm, dorm@k (options after a colon: ndcg@k:paper, dorm@k:depth=R, pairwise:count), \
     or max(name,name,...) for a shared slack";

/// Builds an oracle from its user-facing name.
///
/// - "map": Yue et al.'s MAP loss with Psi_po; "map-greedy" and "map-fast" force one of the
///   two exact algorithms (the default picks the faster one for the query, see map.rs).
/// - "roc": ROC-area loss with Psi_po (Joachims 2005).
/// - "pairwise" / "pairwise:count": SVM^rank's loss over every pair of documents with
///   different graded labels, as a fraction of the query's pairs or as their count (pairwise.rs).
/// - "ndcg@k" / "ndcg": NDCG loss with Psi_po, clipped at rank k or not at all (Chakrabarti
///   et al. 3.4). The discount is 1/log2(1 + rank) with 1-based ranks; the suffix ":paper"
///   selects Chakrabarti et al.'s D(i) (1 for 0-based ranks 0 and 1, 1/log2(1 + i) after).
/// - "mrr@k" / "mrr": reciprocal-rank loss with the feature map phi_mrr (Chakrabarti 3.6).
/// - "acc" / "acc2": the classification hinge of a linear SVM on the documents (acc2 weighs
///   relevant documents by #non-relevant / #relevant of the query), for the SVM_acc baselines.
/// - "dorm@k" / "dorm": Le & Smola's permutation feature map with A(r) = 1/sqrt(1 + r)
///   (0-based r) and the NDCG@k loss, solved as an assignment problem; ":depth=R" sets
///   A(r) = 0 from rank R on.
/// - "max(a,b,...)": the shared-slack combination of Chakrabarti 3.7, which per query takes
///   the most violated constraint over the component losses.
pub fn from_name(name: &str) -> Result<Box<dyn Oracle>> {
    let bad = || Error::param("loss", &format!("one of {LOSS_NAMES}"), format!("{name:?}"));
    let trimmed = name.trim();
    if let Some(inner) = trimmed
        .strip_prefix("max(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        let parts = inner
            .split(',')
            .map(|part| {
                if part.trim().starts_with("max(") {
                    Err(Error::param(
                        "loss",
                        "max(...) of plain loss names (no nesting)",
                        format!("{name:?}"),
                    ))
                } else {
                    from_name(part)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        if parts.is_empty() {
            return Err(bad());
        }
        return Ok(Box::new(combo::SharedSlack::new(parts)));
    }
    let spec = LossSpec::parse(trimmed).ok_or_else(bad)?;
    let no_cutoff = |spec: &LossSpec| spec.cutoff.is_none();
    let no_options = |spec: &LossSpec| spec.options.is_empty();
    match spec.base {
        "map" | "map-greedy" | "map-fast" if no_cutoff(&spec) && no_options(&spec) => {
            let algorithm = match spec.base {
                "map-greedy" => map::MapAlgorithm::Greedy,
                "map-fast" => map::MapAlgorithm::Fast,
                _ => map::MapAlgorithm::Auto,
            };
            Ok(Box::new(map::MapOracle { algorithm }))
        }
        "roc" if no_cutoff(&spec) && no_options(&spec) => Ok(Box::new(roc::RocOracle)),
        "pairwise" if no_cutoff(&spec) => match spec.options.as_slice() {
            [] => Ok(Box::new(pairwise::PairwiseOracle { count: false })),
            ["count"] => Ok(Box::new(pairwise::PairwiseOracle { count: true })),
            _ => Err(bad()),
        },
        "ndcg" => {
            let discount = match spec.options.as_slice() {
                [] => ndcg::Discount::Log2,
                ["paper"] => ndcg::Discount::Paper,
                _ => return Err(bad()),
            };
            Ok(Box::new(ndcg::NdcgOracle {
                cutoff: spec.cutoff,
                discount,
            }))
        }
        "mrr" if no_options(&spec) => Ok(Box::new(mrr::MrrOracle {
            cutoff: spec.cutoff,
        })),
        "acc" | "acc2" if no_cutoff(&spec) && no_options(&spec) => Ok(Box::new(acc::AccOracle {
            balanced: spec.base == "acc2",
        })),
        "dorm" => {
            let mut depth = None;
            for option in &spec.options {
                let value = option.strip_prefix("depth=").ok_or_else(bad)?;
                depth = Some(
                    value
                        .parse::<usize>()
                        .ok()
                        .filter(|&d| d > 0)
                        .ok_or_else(|| {
                            Error::param("dorm depth", "an integer >= 1", format!("{name:?}"))
                        })?,
                );
            }
            Ok(Box::new(dorm::DormOracle {
                cutoff: spec.cutoff,
                depth,
            }))
        }
        _ => Err(bad()),
    }
}

/// A loss name taken apart: "ndcg@10:paper" is base "ndcg", cutoff 10, options ["paper"].
struct LossSpec<'a> {
    base: &'a str,
    cutoff: Option<usize>,
    options: Vec<&'a str>,
}

impl<'a> LossSpec<'a> {
    fn parse(name: &'a str) -> Option<Self> {
        let mut pieces = name.split(':');
        let head = pieces.next()?.trim();
        let options: Vec<&str> = pieces.map(str::trim).collect();
        if options.iter().any(|o| o.is_empty()) {
            return None;
        }
        let (base, cutoff) = match head.split_once('@') {
            Some((base, k)) => (base, Some(k.parse::<usize>().ok().filter(|&k| k > 0)?)),
            None => (head, None),
        };
        Some(LossSpec {
            base,
            cutoff,
            options,
        })
    }
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
    let mut pos: Vec<usize> = Vec::new();
    let mut neg: Vec<usize> = Vec::new();
    for (i, &r) in relevant.iter().enumerate() {
        if r {
            pos.push(i)
        } else {
            neg.push(i)
        }
    }
    let by_score = |a: &usize, b: &usize| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b));
    pos.sort_unstable_by(by_score);
    neg.sort_unstable_by(by_score);
    (pos, neg)
}
