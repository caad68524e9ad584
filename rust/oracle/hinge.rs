//! The structural hinge as a function of the scores, for any scorer.
//!
//! For a query with scores s (one per document) and binary relevance, and an oracle for the
//! loss Delta and feature map Psi, the hinge is
//!
//!   H(s) = max_y Delta(y*, y) + w.Psi(y) - w.Psi(y*) = Delta(ybar) - c . s,
//!
//! written through the scores s_i = w.x_i (every feature map here is linear in the documents,
//! with coefficients c of deltaPsi(ybar) = sum_i c_i x_i). H is a maximum of functions linear in
//! s, so it is convex and -c is a subgradient (the gradient wherever the argmax is unique).
//! Several oracles are added up (separate slacks); a `max(...)` oracle takes the largest
//! (shared slack). A query contributes 0 to a loss that cannot use it: for the binary losses,
//! a query without a relevant or without a non-relevant document; for "pairwise", a query
//! whose documents all have the same label.

use rayon::prelude::*;

use crate::data::QueryGroups;
use crate::error::{Error, Result};
use crate::oracle::interface::{dot, Oracle};
use crate::oracle::work::check_query_labels;

/// The summed hinge, its gradient with respect to every score (in the caller's row order), and
/// the hinge of every query (0 for queries that cannot contribute).
#[derive(Debug, Clone)]
pub struct HingeValue {
    pub value: f64,
    pub grad: Vec<f64>,
    pub per_query: Vec<f64>,
}

pub fn structured_hinge(
    scores: &[f64],
    labels: &[f64],
    groups: &QueryGroups,
    oracles: &[&dyn Oracle],
    relevance_threshold: f64,
) -> Result<HingeValue> {
    let n_rows = groups.n_rows();
    if scores.len() != n_rows || labels.len() != n_rows {
        return Err(Error::input(format!(
            "scores has {} entries, labels {} and qid {}",
            scores.len(),
            labels.len(),
            n_rows
        )));
    }
    if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
        return Err(Error::input(format!(
            "scores[{i}] is {}: scores must be finite numbers",
            scores[i]
        )));
    }
    if let Some(i) = labels.iter().position(|s| !s.is_finite()) {
        return Err(Error::input(format!(
            "labels[{i}] is {}: labels must be finite numbers",
            labels[i]
        )));
    }
    if oracles.is_empty() {
        return Err(Error::input("at least one loss is needed"));
    }
    let per_query: Vec<(f64, Vec<f64>)> = (0..groups.n_queries())
        .into_par_iter()
        .map(|q| {
            let rows = groups.rows(q);
            let s: Vec<f64> = rows.iter().map(|&r| scores[r]).collect();
            let lab: Vec<f64> = rows.iter().map(|&r| labels[r]).collect();
            let rel: Vec<bool> = lab.iter().map(|&l| l > relevance_threshold).collect();
            // A graded loss refuses labels it cannot grade before the query's argmax.
            oracles
                .iter()
                .try_for_each(|o| check_query_labels(*o, &lab, &rel))?;
            let mut grad = vec![0.0; rows.len()];
            let mut coef = vec![0.0; rows.len()];
            let mut value = 0.0;
            for oracle in oracles.iter().filter(|o| o.usable(&lab, &rel)) {
                let delta = oracle.argmax_labels(&s, &lab, &rel, &mut coef);
                value += delta - dot(&coef, &s);
                for (g, c) in grad.iter_mut().zip(&coef) {
                    *g -= c;
                }
            }
            Ok((value, grad))
        })
        .collect::<Result<_>>()?;
    let mut grad = crate::runtime::memory::zeros(n_rows, "the hinge's gradient")?;
    let mut values = Vec::with_capacity(per_query.len());
    for (q, (v, g)) in per_query.into_iter().enumerate() {
        for (&r, gi) in groups.rows(q).iter().zip(g) {
            grad[r] = gi;
        }
        values.push(v);
    }
    Ok(HingeValue {
        value: values.iter().sum(),
        grad,
        per_query: values,
    })
}
