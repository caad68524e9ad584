//! Scoring and evaluation bindings: prediction, one query's oracle, the structured hinge and
//! the per-query metrics.

use super::ndbuf::{from_vec, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::arrays::*;
use super::detach;
use crate::data::kernels::{self, first_non_finite, matvec};
use crate::data::matrix::Scalar;
use crate::error::Error;
use crate::metrics::{self, Conventions, Gain, Metric, NdcgRule, Ties};
use crate::oracle;
use crate::runtime::pool::with_threads;

/// `memory::check_call` for the calls over every row: `per_row` bytes a row (the query groups'
/// row order, each query's sort order, coefficients and outputs) and two 8-byte values a query.
fn check_rows(n: usize, n_queries: usize, per_row: usize, what: &str) -> Result<(), Error> {
    let bytes = crate::runtime::memory::bytes_of(n, per_row)
        .saturating_add(crate::runtime::memory::bytes_of(n_queries, 16));
    crate::runtime::memory::check_call(bytes, || {
        (
            format!("{what} over {n} rows"),
            "evaluate the queries in batches".to_string(),
        )
    })
}

/// A column statistic's means and variances.
type Moments<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

/// The mean and the variance of every column of a dense X (`kernels::column_moments`, one
/// parallel read of X), or None for a CSR or binned matrix, whose moments Python computes from
/// their stored values or bin counts (`CoreMatrix.column_moments`). The values are not checked
/// again: this serves fitted models, whose X the fit has just checked.
#[pyfunction]
pub(super) fn column_moments<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    n_threads: usize,
) -> PyResult<Option<Moments<'py>>> {
    fn dense<T: Scalar + super::ndbuf::Element>(
        py: Python<'_>,
        a: &super::ndbuf::PyReadonlyArray2<'_, T>,
        n_threads: usize,
    ) -> PyResult<(Vec<f64>, Vec<f64>)> {
        let (values, _, n_cols) = rows(a, "X")?;
        detach(py, || {
            let moments = with_threads(n_threads, || kernels::column_moments(values, n_cols))?;
            crate::runtime::cancel::check()?;
            Ok(moments)
        })
        .map_err(PyErr::from)
    }
    let (means, variances) = match Matrix::extract(x)? {
        Matrix::DenseF64(a) => dense(py, &a, n_threads)?,
        Matrix::DenseF32(a) => dense(py, &a, n_threads)?,
        _ => return Ok(None),
    };
    Ok(Some((from_vec(py, means)?, from_vec(py, variances)?)))
}

/// X^T v (`kernels::transpose_dot`: in row order on one thread, fallible allocation, Ctrl-C
/// between chunks). X's values are not checked again: this serves fits, whose X they have just
/// checked.
#[pyfunction]
pub(super) fn transpose_dot<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    v: PyReadonlyArray1<'py, f64>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let x = Matrix::extract(x)?;
    let v = slice(&v, "v")?;
    let sums = x.run_checked(py, Check::Shape, n_threads, |m| {
        crate::data::kernels::transpose_dot(m, v)
    })?;
    from_vec(py, sums)
}

/// Scores every row: X . coef; with `rows` (int64 positions), the rows listed alone, in that
/// order (each score as the prediction of every row gives it there).
#[pyfunction]
#[pyo3(signature = (x, coef, n_threads, rows=None))]
pub(super) fn predict<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    coef: PyReadonlyArray1<'py, f64>,
    n_threads: usize,
    rows: Option<PyReadonlyArray1<'py, i64>>,
) -> PyResult<Bound<'py, PyAny>> {
    let x = Matrix::extract(x)?;
    let w = slice(&coef, "coef")?;
    let rows = rows.map(|r| row_positions(&r, x.n_rows())).transpose()?;
    let n = rows.as_ref().map_or(x.n_rows(), Vec::len);
    // The rows of a matrix that holds others (a search's split) are scored many times, and
    // reading all of X's values each time would cost more than the scores: the values are not
    // checked again, since a NaN or an infinite value in a listed row makes its score
    // non-finite (NaN times any weight, infinity times zero), which the check of the scores
    // below refuses.
    let check = if rows.is_some() {
        Check::Shape
    } else {
        Check::Values
    };
    let scores = x.run_checked(py, check, n_threads, |m| {
        if m.n_cols() != w.len() {
            return Err(Error::input(format!(
                "X has {} features, but the model was trained with {}",
                m.n_cols(),
                w.len()
            )));
        }
        crate::runtime::memory::check_call(crate::runtime::memory::bytes_of(n, 8), || {
            (
                format!("the scores of {n} rows"),
                "predict the rows in batches".to_string(),
            )
        })?;
        let mut out = crate::runtime::memory::zeros(n, &format!("the scores of {n} rows"))?;
        match &rows {
            None => with_threads(n_threads, || matvec(m, w, &mut out))?,
            Some(at) => with_threads(n_threads, || kernels::matvec_rows(m, w, at, &mut out))?,
        }
        crate::runtime::cancel::check()?;
        // Finite weights and features can still overflow float64 in the dot product (6e308
        // times a weight of 2); an infinite score would rank silently (two of them tie) and be
        // written as "inf". Every prediction, SVMMap.predict and score as well as `svmmap
        // classify`, comes through here, so one rule refuses it, naming the row.
        if let Some(i) = with_threads(n_threads, || first_non_finite(&out))? {
            let r = rows.as_ref().map_or(i, |at| at[i]);
            return Err(Error::input(format!(
                "the score of row {r} is {} (beyond the float64 range): the features are too \
                 large for this model's weights; scale them",
                out[i]
            )));
        }
        Ok(out)
    })?;
    from_vec(py, scores)
}

/// `rows` as positions into a matrix of `n_rows` rows, each checked to be inside it.
fn row_positions(rows: &PyReadonlyArray1<'_, i64>, n_rows: usize) -> PyResult<Vec<usize>> {
    let at = slice(rows, "rows")?;
    at.iter()
        .map(|&r| {
            usize::try_from(r)
                .ok()
                .filter(|&r| r < n_rows)
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "rows lists row {r}, outside the {n_rows} rows of X (0 to {})",
                        n_rows.saturating_sub(1)
                    ))
                })
        })
        .collect()
}

/// One query's loss-augmented argmax: returns (Delta, coefficients of deltaPsi).
#[pyfunction]
pub(super) fn oracle_argmax<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    relevant: PyReadonlyArray1<'py, bool>,
    loss: &str,
) -> PyResult<(f64, Bound<'py, PyAny>)> {
    let s = slice(&scores, "scores")?;
    let r = slice(&relevant, "relevant")?;
    if s.len() != r.len() {
        return Err(PyValueError::new_err(format!(
            "scores has {} entries but relevant has {}",
            s.len(),
            r.len()
        )));
    }
    if oracle::QueryKind::of(r) != oracle::QueryKind::Usable {
        return Err(PyValueError::new_err(
            "the query needs at least one relevant and one non-relevant document",
        ));
    }
    if let Some(i) = s.iter().position(|v| !v.is_finite()) {
        return Err(PyValueError::new_err(format!("scores[{i}] is not finite")));
    }
    let o = oracle::from_name(loss)?;
    oracle::check_query_len(o.as_ref(), s.len())?;
    let mut coef = vec![0.0; s.len()];
    let delta = detach(py, || Ok(o.argmax(s, r, &mut coef)))?;
    Ok((delta, from_vec(py, coef)?))
}

/// (value, grad, per_query) of `structured_hinge`.
pub(super) type HingeTuple<'py> = (f64, Bound<'py, PyAny>, Bound<'py, PyAny>);

/// The structural hinge of every query through the given slack groups (one list of (weight,
/// loss name) per group, several losses sharing a slack; the groups' hinges are added up),
/// summed, with its gradient with respect to the scores. Returns (value, grad, per_query).
#[pyfunction]
#[pyo3(signature = (scores, labels, qid_codes, n_queries, losses, relevance_threshold, n_threads))]
#[allow(clippy::too_many_arguments)]
pub(super) fn structured_hinge<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    labels: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    losses: Vec<Vec<(f64, String)>>,
    relevance_threshold: f64,
    n_threads: usize,
) -> PyResult<HingeTuple<'py>> {
    let (s, l) = (slice(&scores, "scores")?, slice(&labels, "labels")?);
    // The groups, each query's sort order and coefficients, the scores' copy and the
    // gradient: five 8-byte values a row.
    check_rows(s.len(), n_queries, 40, "the structured hinge")?;
    let groups = groups(&qid_codes, n_queries)?;
    let slack_groups: Vec<Vec<oracle::LossTerm>> = losses
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|(weight, name)| oracle::LossTerm { weight, name })
                .collect()
        })
        .collect();
    let oracles = oracle::from_groups(&slack_groups)?;
    let result = detach(py, || {
        let refs: Vec<&dyn oracle::Oracle> = oracles.iter().map(|o| o.as_ref()).collect();
        oracle::check_query_lens(&refs, &groups)?;
        // On the call's pool also for n_threads = 0 (one per core): rayon's global pool
        // cannot be started again once it failed to start (see `with_threads`). Pools are
        // kept, so a training loop calling this thousands of times starts threads once.
        with_threads(n_threads, || {
            // Checked again on the pool: its threads (stacks, allocator arenas) take memory
            // once started, and the hinge's buffers must still fit after them (without this
            // second check, a limit just above the first check's need aborted the process
            // now and then, depending on what the starting threads took).
            check_rows(s.len(), n_queries, 40, "the structured hinge")?;
            oracle::hinge::structured_hinge(s, l, &groups, &refs, relevance_threshold)
        })?
    })?;
    Ok((
        result.value,
        from_vec(py, result.grad)?,
        from_vec(py, result.per_query)?,
    ))
}

/// A metric on every query (NaN where it is undefined); `letor_ndcg`: NDCG as LETOR 4.0's
/// script computes it (`metrics::NdcgRule::Letor`).
#[pyfunction]
#[pyo3(signature = (metric, y_true, y_score, qid_codes, n_queries, ties, gain, relevance_threshold, n_relevant=None, letor_ndcg=false))]
#[allow(clippy::too_many_arguments)]
pub(super) fn evaluate<'py>(
    py: Python<'py>,
    metric: &str,
    y_true: PyReadonlyArray1<'py, f64>,
    y_score: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    ties: &str,
    gain: &str,
    relevance_threshold: f64,
    n_relevant: Option<PyReadonlyArray1<'py, f64>>,
    letor_ndcg: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let metric = Metric::parse(metric)?;
    let conv = Conventions {
        ties: Ties::parse(ties).ok_or_else(|| {
            PyErr::from(Error::param(
                "ties",
                "\"pessimistic\" or \"input\"",
                format!("{ties:?}"),
            ))
        })?,
        gain: Gain::parse(gain).ok_or_else(|| {
            PyErr::from(Error::param(
                "gain",
                "\"exp\" or \"linear\"",
                format!("{gain:?}"),
            ))
        })?,
        relevance_threshold,
        ndcg: if letor_ndcg {
            NdcgRule::Letor
        } else {
            NdcgRule::Standard
        },
    };
    let (t, s) = (slice(&y_true, "y_true")?, slice(&y_score, "y_score")?);
    check_rows(s.len(), n_queries, 16, "the metric")?;
    let groups = groups(&qid_codes, n_queries)?;
    let nr = match &n_relevant {
        Some(a) => Some(slice(a, "n_relevant")?),
        None => None,
    };
    // A parallel loop over the queries: on a pool of one thread per core, not rayon's global
    // pool (see `with_threads`).
    let values = detach(py, || {
        with_threads(0, || {
            // Checked again once the pool's threads are running (see structured_hinge).
            check_rows(s.len(), n_queries, 16, "the metric")?;
            metrics::evaluate(metric, s, t, &groups, &conv, nr)
        })?
    })?;
    from_vec(py, values)
}
