//! The latent-target losses in one core call (`solver::latent`): the fit with its CCCP rounds,
//! and the target coefficients on their own (for tests and benchmarks). python/svmmap/_latent.py
//! owns the rounds' settings and passes them.

use super::ndbuf::{from_vec, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::arrays::*;
use super::config::TrainConfig;
use super::results::FitSummary;
use super::training::{fit_summary, run_fit, training_data};
use crate::oracle;
use crate::oracle::registry::LossSpec;
use crate::solver::latent::{self, LatentOptions};
use crate::solver::StopReason;

/// (cutoff, graded) of a latent loss's base ("ndcg@10" or "ndcg@10:graded").
fn base_of(config: &TrainConfig) -> PyResult<(usize, bool)> {
    let base = config.latent.as_deref().ok_or_else(|| {
        PyValueError::new_err(
            "fit_latent trains latent-target losses (loss=\"ndcg@k:latent\" or \
             \"ndcg@k:graded:latent\"); train other losses with fit_path",
        )
    })?;
    let spec = LossSpec::parse(base)
        .ok_or_else(|| PyValueError::new_err(format!("not a loss: {base:?}")))?;
    let cutoff = spec
        .cutoff
        .ok_or_else(|| PyValueError::new_err(format!("{base:?} has no cutoff")))?;
    Ok((cutoff, spec.options.contains(&"graded")))
}

/// The latent-target fit of `config`'s loss on the rows of `x` (see `solver::latent`), with the
/// rounds' settings of python/svmmap/_latent.py; `target_cutoff` replaces the target's cutoff
/// (a prototype of benchmarks/latent_collapse.py: 0 targets the current ranking itself). The
/// callback (if any) sees every iteration of the map start and of every round; a true return
/// value stops training. Runs with the GIL released; Ctrl-C and the memory checks as every
/// fit. Returns (coef, FitSummary, objectives, exhausted, the stop reason of a round a limit
/// ended and that was not kept or None, and when the rounds stopped before w = 0 (rounds
/// kept, F(0), [(t, F(t w_map))], w_map), else None).
#[pyfunction]
#[pyo3(signature = (x, y, qid_codes, n_queries, config, *, max_rounds, relative_decrease, round_eps_factor, stop_before_zero, ray, target_cutoff=None, callback=None))]
#[allow(clippy::too_many_arguments)]
#[allow(clippy::type_complexity)]
pub(super) fn fit_latent<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    config: PyRef<'py, TrainConfig>,
    max_rounds: usize,
    relative_decrease: f64,
    round_eps_factor: f64,
    stop_before_zero: bool,
    ray: Vec<f64>,
    target_cutoff: Option<usize>,
    callback: Option<Py<PyAny>>,
) -> PyResult<(
    Bound<'py, PyAny>,
    FitSummary,
    Vec<f64>,
    bool,
    Option<&'static str>,
    Option<(usize, f64, Bound<'py, PyList>, Bound<'py, PyAny>)>,
)> {
    let (cutoff, graded) = base_of(&config)?;
    let settings = LatentOptions {
        cutoff: target_cutoff.unwrap_or(cutoff),
        graded,
        max_rounds,
        relative_decrease,
        round_eps_factor,
        stop_before_zero,
        ray,
    };
    let (x, labels, groups) = training_data(x, &y, &qid_codes, n_queries)?;
    let base = config.oracles()?;
    let start = oracle::from_name("map")?;
    let options = &config.options;
    // The map start and the latent rounds each train one loss: one slack group.
    let fit = run_fit(
        py,
        &x,
        config.n_threads,
        &callback,
        (1, false),
        |m, on_iteration| {
            latent::fit_latent(
                m,
                labels,
                &groups,
                start.as_ref(),
                base[0].as_ref(),
                options,
                &settings,
                on_iteration,
            )
        },
    )?;
    let summary = match fit.round_counts {
        Some(counts) => FitSummary::new(py, &fit.summary, counts)?,
        None => fit_summary(py, &fit.summary)?,
    };
    let zero = match fit.zero {
        Some(z) => {
            let points = PyList::empty(py);
            for point in z.ray {
                points.append(point)?;
            }
            Some((z.kept, z.at_zero, points, from_vec(py, z.start)?))
        }
        None => None,
    };
    Ok((
        from_vec(py, fit.w)?,
        summary,
        fit.objectives,
        fit.exhausted,
        fit.ended_by.map(StopReason::name),
        zero,
    ))
}

/// `solver::latent::target_coefficients`: per row, e with e.s = w.(Psi(ideal) - Psi(y_t)), y_t
/// the best-scored ranking of loss 0 at `scores` (binary: `grades` 1 for relevant, 0 otherwise;
/// `graded`: the grades of "ndcg@k:graded").
#[pyfunction]
pub(super) fn latent_target_coefficients<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    grades: PyReadonlyArray1<'py, f64>,
    qid_codes: PyReadonlyArray1<'py, i64>,
    n_queries: usize,
    cutoff: usize,
    graded: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let (s, g) = (slice(&scores, "scores")?, slice(&grades, "grades")?);
    let groups = groups(&qid_codes, n_queries)?;
    if s.len() != g.len() || s.len() != groups.n_rows() {
        return Err(PyValueError::new_err(format!(
            "scores, grades and qid_codes need one value per row, got {}, {} and {}",
            s.len(),
            g.len(),
            groups.n_rows()
        )));
    }
    if s.iter().chain(g).any(|v| !v.is_finite()) {
        return Err(PyValueError::new_err("scores and grades must be finite"));
    }
    let e = latent::target_coefficients(s, g, &groups, cutoff, graded)?;
    from_vec(py, e)
}
