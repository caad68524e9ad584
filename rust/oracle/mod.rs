//! Loss-augmented inference ("oracles"): for one query, the ranking ybar that maximizes
//! Delta(y*, y) + w.Psi(x, y) - w.Psi(x, y*), the most violated constraint of the structural SVM.
//!
//! Every feature map used here is linear in the documents, so the difference
//! deltaPsi(ybar) = Psi(x, y*) - Psi(x, ybar) is written as per-document coefficients c with
//! deltaPsi = sum_i c_i x_i. The oracle returns Delta(y*, ybar) and fills c; the hinge value of
//! the query is then Delta - sum_i c_i s_i with s_i = w.x_i. The solver builds a cutting plane
//! as X^T c, so an oracle never sees the features, only the scores.

pub mod map;
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

/// Builds an oracle from its user-facing name.
pub fn from_name(name: &str) -> Result<Box<dyn Oracle>> {
    match name {
        "map" => Ok(Box::new(map::MapOracle::default())),
        "map-greedy" => Ok(Box::new(map::MapOracle {
            algorithm: map::MapAlgorithm::Greedy,
        })),
        _ => Err(Error::param("loss", "one of \"map\"", format!("{name:?}"))),
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
