//! OCAS (`Method::Ocas`, the default): the 1-slack cutting plane stabilized by a best-so-far
//! iterate, with the working-set QP solved exactly by the active-set method (qp/active_set.rs;
//! SMO as the fallback).
//!
//! Solves min_w P(w) of mod.rs. Stops when P(w_b) minus the best working-set dual seen is at
//! most eps * sum_s C_s, when the hook asks to, or at `max_iter`; returns the iterate w_b, the
//! `Summary` and the `WarmStart` from which a solve at another C can start.
//!
//! Method. The plain cutting plane (Joachims, Finley, Yu 2009; plain.rs)
//! moves to the working set's optimum w_c at every iteration; when the features' scales differ
//! by orders of magnitude or C is large, w_c jumps far from the optimum and the iteration count
//! follows the O(C R^2 / eps) bound. OCAS (Franc and Sonnenburg, "Optimized cutting plane
//! algorithm for large-scale risk minimization", JMLR 10, 2009) keeps a best-so-far iterate w_b
//! and takes its cuts near it. Here, at every iteration: the oracles run at w_c; when
//! P(w_c) < P(w_b) (a serious step, as in bundle methods) w_c becomes w_b; otherwise (a null
//! step) the oracles also run at w_b + mu (w_c - w_b) (OCAS's cut selection; mu is 0.1, or
//! less when w_c overshoots by much, see `null_step_fraction`), whose point becomes w_b if
//! it is better, and both cuts join the working set, unless P(w_c) exceeds P(w_b) by less
//! than the current gap (`NULL_STEP_MARGIN`), where the cut at w_c alone is kept. After a
//! null step at both points, the next iterations run the oracles only near w_b (one pass
//! instead of two, and OCAS's own choice of a single cut) for as long as that point does not
//! improve on w_b and its cut is violated at w_c by more than eps beyond the working set's
//! slack, the condition under which each cut raises the dual by a bounded amount; otherwise
//! w_c is evaluated again. Measured on 84 fits (MQ2008 Fold 1 normalized and with rescaled
//! columns, make_ranking; seven losses; C = 0.01 to 10^4): 18.4 s -> 11.2 s in all, the
//! separate-slack SVM-combo on make_ranking(400, 100, 30) at C = 1 from 103 passes to 15,
//! and no fit on the normalized MQ2008 folds needs more than 15% more passes. OCAS's exact
//! line search on the segment is replaced by the best of these points: for the 1-slack risk
//! it needs every query's breakpoints, and a line search through
//! the cutting-plane model that cost one or two more oracle passes per iteration needed more
//! passes for the same accuracy (measured while developing this, without the margin, on
//! MQ2008 Fold 1 with rescaled columns at C = 10^4: 202 iterations / 403 passes with one
//! line-search pass, 112 / 334 with two, 115 / 229 with none). Serious steps cost one pass
//! like the plain method, so easy problems (normalized features, small C) keep its pass count.
//! The duality gap is P(w_b) minus the best working-set dual seen: it only shrinks, and
//! convergence is that of the plain method, whose cut at w_c is always
//! added. The working-set QP is solved by an exact active-set method warm-started from the
//! previous optimum (`WorkingSet::solve_active_set`), with SMO as the fallback.

use std::time::Instant;

use super::options::{Options, ValidOptions, QP_TOL_FACTOR};
use super::problem::CutSource;
use super::progress::{out_of_range, Control, IterationRecord, Limits, Progress, Summary};
use super::qp::{dot, Cut, WorkingSet};
use super::warm::WarmStart;
use crate::error::{Error, Result};

/// An active-set solution that misses QP_TOL_FACTOR by rounding is accepted at this fraction
/// of `eps` (see `solve_ocas`).
const QP_LOOSE_FACTOR: f64 = 1e-6;
/// With cut blocks, cuts whose dual variable stayed at zero for this many iterations leave
/// the QP for the retired cuts (`WorkingSet::retire_idle`), which stay in the model until
/// `max_idle`; the 1-slack fits drop them at `max_idle` as before (retiring made no
/// difference to their time: a few dozen idle cuts beside about as many active ones; and
/// on SVM-combo with rescaled columns at C = 10^4 a solve after a readmission left the
/// active set for SMO). Each
/// cut in the QP costs a Gram entry, O(d), for every cut that joins, and a term of every
/// pricing pass. With cut blocks in 1,000 dimensions (make_ranking binned with 50
/// thresholds, C = 1000) the QP held up to 2,000 cuts, most of them idle: retiring them
/// took 16 blocks from 12.0 s to 6.4 s and 4 blocks from 1.29 s to 1.04 s (the warm C
/// path with 16 blocks from 24.5 s to 8.4 s), the same iterations, and the 1-slack fits
/// as before (measured with benchmarks/binned_solver.py's fits, one run each). Dropping
/// the cuts at 10 idle iterations instead (no retired cuts) took up to 11% more passes.
const QP_IDLE: usize = 10;
/// Where OCAS takes its cut after a null step: w_b + OCAS_MU (w_c - w_b) (Franc and
/// Sonnenburg 2009 use 0.1). On MQ2008 Fold 1 with rescaled columns at C = 10^4, 0.05 took
/// about as many iterations, 0.2 40% more and 0.3 75% more.
const OCAS_MU: f64 = 0.1;
/// The smallest fraction `null_step_fraction` returns.
const MIN_NULL_STEP_FRACTION: f64 = 0.01;
/// After a null step by at most this many times the duality gap, P(w_c) - P(w_b) <=
/// NULL_STEP_MARGIN (P(w_b) - D), no cut is taken near w_b. On the five MQ2008 folds at C = 1
/// and 10 this keeps the passes of the plain method (with 0 OCAS took up to 20% more), and
/// on rescaled columns at C = 10^4 it costs 20% more iterations (137 instead of 115); at 2 the
/// rescaled fold needs 4 times as many.
const NULL_STEP_MARGIN: f64 = 1.0;

/// The cuts of every group at `w` and the primal objective there.
struct Evaluation {
    cuts: Vec<Cut>,
    primal: f64,
    loss: f64,
    /// sum_s max(0, b_s - w.g_s): the risk at w, without the factor C.
    risk: f64,
}

fn evaluate(source: &mut dyn CutSource, w: &[f64], c: f64, iteration: usize) -> Result<Evaluation> {
    let d = source.dim();
    let n_groups = source.n_groups() * source.n_blocks();
    let new_cuts = source.cuts(w)?;
    if new_cuts.len() != n_groups || new_cuts.iter().any(|(_, g)| g.len() != d) {
        return Err(Error::input(format!(
            "a cut source returned {} cuts for {n_groups} slack groups and blocks (dimension {d})",
            new_cuts.len()
        )));
    }
    let mut violation_total = 0.0;
    let mut risk = 0.0;
    let mut loss = 0.0;
    let mut cuts = Vec::with_capacity(n_groups);
    for (s, (b, g)) in new_cuts.into_iter().enumerate() {
        if !(b.is_finite() && dot(&g, &g).is_finite()) {
            return Err(out_of_range(iteration, "the new cutting plane", c));
        }
        let violation = (b - dot(w, &g)).max(0.0);
        violation_total += c * violation;
        risk += violation;
        loss += b;
        cuts.push(Cut { g, b, group: s });
    }
    let primal = 0.5 * dot(w, w) + violation_total;
    if !primal.is_finite() {
        return Err(out_of_range(iteration, "the primal objective", c));
    }
    Ok(Evaluation {
        cuts,
        primal,
        loss,
        risk,
    })
}

/// OCAS (see the top of this file): the working set's optimum w_c is only a proposal; the
/// iterate w_b moves to the best point found by a line search from w_b towards w_c, and cuts
/// are taken at w_c and at that point.
pub(super) fn solve_ocas(
    source: &mut dyn CutSource,
    opts: &ValidOptions,
    warm: Option<&WarmStart>,
    on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
) -> Result<(Vec<f64>, Summary, WarmStart)> {
    let d = source.dim();
    let n_groups = source.n_groups();
    // Every cut block of every group has its own slack, capped by C in the dual (the risk
    // is their sum; see `RankingProblem::split_into_blocks`).
    let n_slacks = n_groups * source.n_blocks();
    let qp_tol = opts.eps * QP_TOL_FACTOR;
    // Idle cuts retire from the QP only with cut blocks (see `QP_IDLE`).
    let retire = source.n_blocks() > 1;

    let start = Instant::now();
    let mut state = OcasState::new(d, opts.c, n_slacks);
    let mut progress = Progress::new(Limits::of(opts, n_groups));
    if let Some(warm) = warm {
        state.warm_start(warm, n_slacks, opts, qp_tol)?;
    }

    for iteration in progress.iterations() {
        let (new_cuts, loss) = state.step(source, opts, iteration)?;
        let (w_b, p_b, _) = state.best.as_ref().expect("set by step");
        let primal = *p_b;
        let record = IterationRecord {
            iteration,
            primal,
            dual: state.dual,
            gap: primal - state.dual,
            loss,
            n_cuts: state.ws.len(),
            n_active: state.ws.n_active(),
            seconds: start.elapsed().as_secs_f64(),
        };
        // The hook sees the iterate w_b, at which the record's primal was measured.
        if progress.report(record, w_b, on_iteration)? {
            break;
        }
        for cut in new_cuts {
            state.ws.add(cut);
        }
        state.solve(opts.eps, qp_tol);
        if state.w_c.iter().any(|v| !v.is_finite()) {
            return Err(out_of_range(iteration, "the weight vector", opts.c));
        }
        state.dual = state.dual.max(state.ws.dual_objective_at(&state.w_c));
        if retire {
            state
                .ws
                .retire_idle(QP_IDLE.min(opts.max_idle), opts.max_idle);
        } else {
            state.ws.drop_idle(opts.max_idle);
        }
    }

    let OcasState {
        ws,
        best,
        n_evals,
        qp_seconds,
        qp_fallbacks,
        ..
    } = state;
    let (w, _, risk) = best.expect("set at the first iteration");
    // The retired cuts are handed on too, with a = 0 (see `WarmStart`).
    let mut alpha = ws.alpha().to_vec();
    alpha.resize(ws.len() + ws.n_retired(), 0.0);
    let summary = progress.summary(&ws, n_evals, qp_seconds, qp_fallbacks);
    // The working set's cuts move into the state: a copy would hold them twice at the end of
    // every fit (10 MB for a GA2M at C = 10 on 573k documents).
    let warm_start = WarmStart::new(opts.c, ws.into_all_cuts(), alpha, w.clone(), risk);
    Ok((w, summary, warm_start))
}

/// What OCAS carries from one iteration to the next.
struct OcasState {
    ws: WorkingSet,
    /// The working set's optimum, where the next cut is taken.
    w_c: Vec<f64>,
    /// The iterate w_b, P(w_b) and the risk at w_b.
    best: Option<(Vec<f64>, f64, f64)>,
    /// Every working set's D(a) is a lower bound of min P, so the best one seen is kept.
    dual: f64,
    /// Set after a null step at both w_c and the point near w_b: then the next iterations
    /// evaluate only the point near w_b (see the top of this file).
    near_only: bool,
    mu_null: f64,
    n_evals: usize,
    qp_seconds: f64,
    qp_fallbacks: usize,
}

impl OcasState {
    fn new(d: usize, c: f64, n_slacks: usize) -> Self {
        OcasState {
            ws: WorkingSet::new(d, vec![c; n_slacks]),
            w_c: vec![0.0; d],
            best: None,
            dual: 0.0,
            near_only: false,
            mu_null: OCAS_MU,
            n_evals: 0,
            qp_seconds: 0.0,
            qp_fallbacks: 0,
        }
    }

    /// Starts from the cuts, dual variables and iterate of a solve at another C.
    fn warm_start(
        &mut self,
        warm: &WarmStart,
        n_slacks: usize,
        opts: &Options,
        qp_tol: f64,
    ) -> Result<()> {
        let d = self.w_c.len();
        if !warm.fits(d, n_slacks) {
            return Err(Error::input(
                "a warm start must come from a solve of the same problem",
            ));
        }
        // The old dual variables scaled to the new caps are feasible (see `WarmStart`).
        let (cuts, alpha) = warm.start_at(opts.c);
        self.ws = WorkingSet::with_cuts(d, vec![opts.c; n_slacks], cuts, alpha);
        self.solve(opts.eps, qp_tol);
        self.dual = self.ws.dual_objective_at(&self.w_c).max(0.0);
        match warm.risk {
            Some(risk) => {
                let primal = 0.5 * dot(&warm.w, &warm.w) + opts.c * risk;
                self.best = Some((warm.w.clone(), primal, risk));
            }
            // After `shifted` the risk at the old iterate is unknown: the first iteration
            // evaluates it there (a serious step against no iterate), which also adds the
            // cut taken at it.
            None => self.w_c = warm.w.clone(),
        }
        Ok(())
    }

    /// Solves the working set's QP (`solve_model`) and moves w_c to its optimum.
    fn solve(&mut self, eps: f64, qp_tol: f64) {
        let qp_start = Instant::now();
        let (fallbacks, w) = solve_model(&mut self.ws, eps, qp_tol);
        self.qp_fallbacks += fallbacks;
        self.qp_seconds += qp_start.elapsed().as_secs_f64();
        self.w_c = w;
    }

    /// One iteration's oracle passes: at w_c, near w_b, or both (see the top of this file).
    /// Moves the iterate w_b (`best`) and returns the new cuts and the loss of the first pass.
    fn step(
        &mut self,
        source: &mut dyn CutSource,
        opts: &Options,
        iteration: usize,
    ) -> Result<(Vec<Cut>, f64)> {
        let mut new_cuts = Vec::new();
        // Before the first evaluation there is no iterate: an infinite P(w_b) makes the first
        // step a serious one, to w_c.
        let (w_b, p_b, r_b) = self
            .best
            .take()
            .unwrap_or_else(|| (self.w_c.clone(), f64::INFINITY, 0.0));
        if self.near_only {
            let w_m = towards(&w_b, &self.w_c, self.mu_null);
            let at_m = evaluate(source, &w_m, opts.c, iteration)?;
            self.n_evals += 1;
            // The cutting-plane bound needs each iteration's cut to be violated at w_c by
            // more than eps beyond the working set's slack; a cut near w_b need not be,
            // and then the next iteration evaluates w_c again.
            let improves = at_m.primal < p_b;
            self.near_only = !improves && cuts_off(&self.ws, &at_m.cuts, &self.w_c, opts.eps);
            self.best = Some(if improves {
                (w_m, at_m.primal, at_m.risk)
            } else {
                (w_b, p_b, r_b)
            });
            return Ok((at_m.cuts, at_m.loss));
        }
        let at_c = evaluate(source, &self.w_c, opts.c, iteration)?;
        self.n_evals += 1;
        if at_c.primal >= p_b && at_c.primal - p_b <= NULL_STEP_MARGIN * (p_b - self.dual) {
            // A null step by less than the gap: the model is accurate at w_c, whose cut
            // is kept, and a pass near w_b would not pay for itself.
            self.best = Some((w_b, p_b, r_b));
        } else if at_c.primal < p_b {
            // A serious step: w_c improves on w_b and becomes the iterate.
            self.best = Some((self.w_c.clone(), at_c.primal, at_c.risk));
        } else {
            // A null step: the next cut is taken near w_b, where it tells the most
            // about the neighbourhood of the iterate (OCAS's cut selection).
            self.mu_null = null_step_fraction(
                p_b - self.ws.dual_objective_at(&self.w_c),
                at_c.primal - p_b,
            );
            let w_m = towards(&w_b, &self.w_c, self.mu_null);
            let at_m = evaluate(source, &w_m, opts.c, iteration)?;
            self.n_evals += 1;
            self.best = Some(if at_m.primal < p_b {
                (w_m, at_m.primal, at_m.risk)
            } else {
                self.near_only = true;
                (w_b, p_b, r_b)
            });
            new_cuts.extend(at_m.cuts);
        }
        new_cuts.extend(at_c.cuts);
        Ok((new_cuts, at_c.loss))
    }
}

/// Where the cut after a null step is taken, as a fraction mu of the way from w_b to w_c:
/// the minimizer of the parabola through P(w_b) with the model's slope -`predicted` (the
/// decrease the working set predicts at w_c, P(w_b) - D) and through P(w_c) = P(w_b) +
/// `rise`, which is predicted / (2 (predicted + rise)), clipped to
/// [MIN_NULL_STEP_FRACTION, OCAS_MU]. When w_c overshoots by much (rise >> predicted, as at
/// the tie point w = 0 of SVM-combo's first iterations, where the model is poor) the cut is
/// taken close to w_b, where it is a subgradient of the kink; otherwise at OCAS's 0.1.
fn null_step_fraction(predicted: f64, rise: f64) -> f64 {
    let predicted = predicted.max(0.0);
    let t = predicted / (2.0 * (predicted + rise.max(0.0)));
    if t.is_finite() {
        t.clamp(MIN_NULL_STEP_FRACTION, OCAS_MU)
    } else {
        OCAS_MU
    }
}

/// w_b + mu (w_c - w_b).
fn towards(w_b: &[f64], w_c: &[f64], mu: f64) -> Vec<f64> {
    w_b.iter().zip(w_c).map(|(b, c)| b + mu * (c - b)).collect()
}

/// Whether one of `cuts` is violated at w_c by more than `eps` beyond its group's slack in
/// the working set (whose last solve gave w_c), the condition under which adding it raises
/// the working set's dual optimum by a bounded amount.
fn cuts_off(ws: &WorkingSet, cuts: &[Cut], w_c: &[f64], eps: f64) -> bool {
    let slacks = ws.slacks();
    cuts.iter()
        .any(|cut| cut.b - dot(&cut.g, w_c) > slacks[cut.group] + eps)
}

/// The QP over every cut of the model: solved over the cuts in the QP, then again while
/// retired cuts are violated at its optimum (`WorkingSet::readmit`; the retired cuts only
/// shrink here, so this ends after at most as many rounds as there are). Returns the number
/// of solves that needed the SMO fallback and the optimum's w.
fn solve_model(ws: &mut WorkingSet, eps: f64, qp_tol: f64) -> (usize, Vec<f64>) {
    let mut fallbacks = usize::from(solve_qp(ws, eps, qp_tol));
    loop {
        let w = ws.weights();
        if ws.n_retired() == 0 || ws.readmit(&w, qp_tol) == 0 {
            return (fallbacks, w);
        }
        fallbacks += usize::from(solve_qp(ws, eps, qp_tol));
    }
}

/// OCAS's working-set QP: the exact active-set method, with SMO as the fallback. Returns
/// whether the fallback ran.
fn solve_qp(ws: &mut WorkingSet, eps: f64, qp_tol: f64) -> bool {
    let max_steps = 100_000 + 1_000 * ws.len();
    let ok = ws.solve_active_set(qp_tol, 10 * ws.len() + 100);
    // Rounding can keep the active-set solution of a badly conditioned working set a
    // little above QP_TOL_FACTOR; it is kept when it is within QP_LOOSE_FACTOR * eps, far
    // below what the outer loop can see, rather than handed to the slow SMO.
    if !ok && !ws.is_optimal(eps * QP_LOOSE_FACTOR) {
        ws.solve(eps / 100.0, max_steps);
        if !ws.polish(qp_tol) {
            ws.solve(qp_tol, max_steps);
        }
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_cut(rng: &mut ChaCha8Rng, dim: usize, group: usize) -> Cut {
        Cut {
            g: (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect(),
            b: rng.random_range(0.0..1.0),
            group,
        }
    }

    /// Retiring idle cuts must not change the model: after cuts retire and new ones arrive,
    /// `solve_model` reaches the optimum of the QP over every cut kept, which a working set
    /// holding all of them computes independently. The retired cuts must come back for that
    /// (the test counts that they do; with `readmit` disabled the optima differ).
    #[test]
    fn retired_cuts_come_back_when_the_optimum_needs_them() {
        let mut readmitted = 0;
        for seed in 0..40 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (dim, n_groups) = (4, 1 + (seed as usize) % 3);
            let caps: Vec<f64> = (0..n_groups).map(|_| rng.random_range(0.5..50.0)).collect();
            let mut ours = WorkingSet::new(dim, caps.clone());
            let mut all = WorkingSet::new(dim, caps);
            for round in 0..6 {
                for _ in 0..5 {
                    let group = rng.random_range(0..n_groups);
                    let cut = random_cut(&mut rng, dim, group);
                    ours.add(cut.clone());
                    all.add(cut);
                }
                let retired_before = ours.n_retired();
                solve_model(&mut ours, 1e-3, 1e-12);
                readmitted += retired_before - ours.n_retired();
                assert!(
                    !solve_qp(&mut all, 1e-3, 1e-12),
                    "seed {seed}: reference fell back"
                );
                let ours_d = ours.dual_objective_at(&ours.weights());
                let all_d = all.dual_objective_at(&all.weights());
                assert!(
                    (ours_d - all_d).abs() <= 1e-9 * (1.0 + all_d.abs()),
                    "seed {seed} round {round}: {ours_d} against {all_d}"
                );
                assert_eq!(ours.len() + ours.n_retired(), all.len());
                // Every idle cut leaves the QP at once, the harshest setting.
                ours.retire_idle(0, usize::MAX);
            }
        }
        assert!(readmitted > 0, "no retired cut was ever needed again");
    }
}
