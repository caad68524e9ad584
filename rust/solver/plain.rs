//! The plain 1-slack cutting plane (Joachims, Finley, Yu, "Cutting-plane training of structural
//! SVMs", Machine Learning 77, 2009): `Method::Plain`, the method before OCAS, kept for
//! comparison.
//!
//! Solves min_w P(w) of mod.rs. Each iteration takes one cut per slack group at the current w
//! (one oracle pass), adds them to the working set and moves w to the working set's optimum,
//! found by SMO and the exact solve on its support (qp/smo.rs, qp/polish.rs), with SMO to the
//! tight tolerance as the fallback. Stops when P(w) - D(a) <= eps * sum_s C_s, when the hook
//! asks to, or at `max_iter`; returns w and the `Summary` (no warm start). Its iteration count
//! follows the O(C R^2 / eps) bound, which is large when the features' scales differ by orders
//! of magnitude or C is large (ocas.rs explains how OCAS avoids it).

use std::time::Instant;

use super::options::{ValidOptions, QP_TOL_FACTOR};
use super::problem::CutSource;
use super::progress::{out_of_range, Control, IterationRecord, Limits, Progress, Summary};
use super::qp::{dot, Cut, WorkingSet};
use crate::error::{Error, Result};

/// The plain 1-slack cutting plane (the method before OCAS, kept for comparison).
pub(super) fn solve_plain(
    source: &mut dyn CutSource,
    opts: &ValidOptions,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Vec<f64>, Summary)> {
    let d = source.dim();
    let n_groups = source.n_groups();
    // The outer stopping test would be satisfied by a QP solved to eps/100, but a loosely
    // solved QP makes w, and with it every later cut, depend on the rounding of the cuts: on
    // MQ2008, summing the same cut in another order (as on several machines) moved the final
    // w by up to 1e-2 with eps/100. Solved to QP_TOL_FACTOR * eps (or to its rounding floor,
    // see WorkingSet::solve), w is a continuous function of the cuts, and such differences
    // stay at the 1e-11 level. The exact solve on the support (WorkingSet::polish) reaches
    // that precision at almost no cost; SMO to this tolerance is the fallback.
    let qp_tol = opts.eps * QP_TOL_FACTOR;

    let start = Instant::now();
    // One slack per cut block of every group (see `RankingProblem::split_into_blocks`).
    let n_slacks = n_groups * source.n_blocks();
    let mut ws = WorkingSet::new(d, vec![opts.c; n_slacks]);
    let mut w = vec![0.0; d];
    let mut progress = Progress::new(Limits::of(opts, n_groups));
    let mut qp_seconds = 0.0;
    let mut qp_fallbacks = 0;

    for iteration in progress.iterations() {
        let new_cuts = source.cuts(&w)?;
        if new_cuts.len() != n_slacks || new_cuts.iter().any(|(_, g)| g.len() != d) {
            return Err(Error::input(format!(
                "a cut source returned {} cuts for {n_slacks} slack groups and blocks (dimension {d})",
                new_cuts.len()
            )));
        }
        let mut violation_total = 0.0;
        let mut loss_total = 0.0;
        let mut cuts = Vec::with_capacity(n_slacks);
        for (s, (b, g)) in new_cuts.into_iter().enumerate() {
            // The Gram matrix holds g.g; if it overflows, every later number is inf or NaN.
            if !(b.is_finite() && dot(&g, &g).is_finite()) {
                return Err(out_of_range(iteration, "the new cutting plane", opts.c));
            }
            violation_total += opts.c * (b - dot(&w, &g)).max(0.0);
            loss_total += b;
            cuts.push(Cut { g, b, group: s });
        }
        let primal = 0.5 * dot(&w, &w) + violation_total;
        if !primal.is_finite() {
            return Err(out_of_range(iteration, "the primal objective", opts.c));
        }
        let dual = ws.dual_objective();
        let record = IterationRecord {
            iteration,
            primal,
            dual,
            gap: primal - dual,
            loss: loss_total,
            n_cuts: ws.len(),
            n_active: ws.n_active(),
            seconds: start.elapsed().as_secs_f64(),
        };
        // The hook also sees the w the record was measured at (for validation scores).
        if progress.report(record, &w, on_iteration)? {
            break;
        }
        for cut in cuts {
            ws.add(cut);
        }
        // Locate the optimum's support with SMO, then solve the optimality conditions on it
        // exactly; only when that fails (a wrong support, collinear cuts) does SMO continue
        // to the tight tolerance, which is slower on ill-conditioned working sets.
        let max_steps = 100_000 + 1_000 * ws.len();
        let qp_start = Instant::now();
        ws.solve(opts.eps / 100.0, max_steps);
        if !ws.polish(qp_tol) {
            qp_fallbacks += 1;
            ws.solve(qp_tol, max_steps);
        }
        qp_seconds += qp_start.elapsed().as_secs_f64();
        w = ws.weights();
        if w.iter().any(|v| !v.is_finite()) {
            return Err(out_of_range(iteration, "the weight vector", opts.c));
        }
        ws.drop_idle(opts.max_idle);
    }

    let n_evals = progress.history.len();
    Ok((w, progress.summary(&ws, n_evals, qp_seconds, qp_fallbacks)))
}
