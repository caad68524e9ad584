//! What the cutting-plane loop reports, the same for both methods: an `IterationRecord` per
//! iteration, handed to the caller's hook, which answers with a `Control`; the `StopReason`; and
//! the final `Summary`. `Progress` keeps the records and decides when the loop stops (the gap
//! within eps * sum_s C_s, the hook's Stop, a stall (`stalled`), the time limit, or
//! `max_iter`). Also the error both methods return when a number leaves the float64 range.

use super::options::{name_of, Options};
use super::qp::WorkingSet;
use crate::error::{Error, Result};

/// What one iteration measured, for progress reports and the training history.
#[derive(Debug, Clone, PartialEq)]
pub struct IterationRecord {
    pub iteration: usize,
    /// P(w) at this iteration's w.
    pub primal: f64,
    /// D(a) of the working set that produced w (0 at the first iteration).
    pub dual: f64,
    pub gap: f64,
    /// Average Delta over the training queries of the new cut(s), summed over groups.
    pub loss: f64,
    /// Cuts in the working set and those with a positive dual variable, before this
    /// iteration's cut is added.
    pub n_cuts: usize,
    pub n_active: usize,
    /// Seconds since training started.
    pub seconds: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Converged,
    MaxIter,
    Callback,
    /// The gap stayed far above the tolerance and stopped closing (`stalled`).
    Stalled,
    /// `Options::max_seconds` ran out.
    MaxTime,
}

impl StopReason {
    /// Every reason, in the order of `NAMES`.
    pub const ALL: [StopReason; 5] = [
        StopReason::Converged,
        StopReason::MaxIter,
        StopReason::Callback,
        StopReason::Stalled,
        StopReason::MaxTime,
    ];
    /// The spellings the Python API and model files use (`FitSummary.stop`); a limit's stop
    /// is named after the training parameter that set it.
    pub const NAMES: [&'static str; 5] = [
        "converged",
        name_of::max_iter,
        "callback",
        "stalled",
        name_of::max_seconds,
    ];

    pub fn name(self) -> &'static str {
        let i = Self::ALL
            .iter()
            .position(|&r| r == self)
            .expect("every reason is in ALL");
        Self::NAMES[i]
    }
}

/// What a progress callback asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

#[derive(Debug, Clone)]
pub struct Summary {
    pub primal: f64,
    pub dual: f64,
    pub gap: f64,
    pub n_iter: usize,
    pub n_cuts: usize,
    pub n_active: usize,
    pub stop: StopReason,
    /// Oracle passes over the data (one per iteration for the plain method, one or two for
    /// OCAS).
    pub n_evals: usize,
    /// The gap below which the loop stops (`Options::tolerance`).
    pub tolerance: f64,
    /// Seconds spent in the working-set QP.
    pub qp_seconds: f64,
    /// Working-set QPs that the exact method did not solve and coordinate ascent (SMO) solved
    /// instead: slow on ill-conditioned working sets, so a count above 0 explains a large QP
    /// share.
    pub qp_fallbacks: usize,
    pub n_queries: usize,
    pub n_skipped_no_relevant: usize,
    pub n_skipped_all_relevant: usize,
    pub history: Vec<IterationRecord>,
}

/// A stall is declared only while the gap exceeds the tolerance this many times ("far above"
/// it): a fit near its tolerance is left to finish.
pub const STALL_GAP_FACTOR: f64 = 10.0;
/// A dual objective that grew by this factor over the stall window is still progressing: the
/// working-set dual of a fit whose first cuts barely move w can grow geometrically from
/// nearly 0 for dozens of iterations while the gap stays flat (mrr@10 on MQ2008 Fold 1 with
/// columns rescaled by 10^uniform(-2, 3) at C = 10^4: from 1e-4 to 354 in 45 iterations at
/// a flat gap, then converged at iteration 226).
pub const STALL_DUAL_GROWTH: f64 = 10.0;

/// Whether the fit whose records are `history` has stalled: over the last `window`
/// iterations, the gap (which only shrinks: P at the best iterate and the best dual seen)
/// closed so slowly that at the same rate it would still be above `tolerance` at `max_iter`,
/// while it is more than `STALL_GAP_FACTOR` times the tolerance and the dual did not grow by
/// `STALL_DUAL_GROWTH`. A heuristic: a gap that closed slowly usually goes on so (the
/// cutting plane's bound is O(1/t)), but it can stay flat and then drop, which is why the
/// dual's growth is read too and why the parameter that sets `stall_window` can turn the rule
/// off.
///
/// Chosen by measurement (`benchmarks/stalls.py`): with a window of 50 the rule fired on
/// none of 130 fits that converge while it was developed (MQ2008 Fold 1 as shipped, rescaled,
/// make_ranking; seven losses and combinations; C = 0.01 to 10^4; binned with map), where
/// windows of 20 and 30 fired on the rescaled mrr@10 fits of the example above; the
/// benchmark's wider set (every loss binned) adds two it stops, mrr@10 binned at C >= 1000,
/// whose dual grew about fourfold per window and which, run on, had not converged after 300 s
/// at C = 1000 (a growth of 2 would let them run, and was not measured further). It stops the fits of
/// make_ranking with columns scaled by 10^uniform(-2, 8) within a few iterations of the
/// window after their dual froze.
pub fn stalled(
    history: &[IterationRecord],
    tolerance: f64,
    max_iter: usize,
    window: usize,
) -> bool {
    if window == 0 || history.len() <= window {
        return false;
    }
    let now = &history[history.len() - 1];
    let then = &history[history.len() - 1 - window];
    if now.gap <= STALL_GAP_FACTOR * tolerance {
        return false;
    }
    let rate = (then.gap - now.gap) / window as f64;
    let left = max_iter.saturating_sub(now.iteration) as f64;
    if rate * left >= now.gap - tolerance {
        return false;
    }
    !(now.dual > 0.0 && now.dual > STALL_DUAL_GROWTH * then.dual)
}

/// When the loop stops, besides convergence and the hook: `max_iter`, a stall over
/// `stall_window` iterations (0: never), and `max_seconds`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) max_iter: usize,
    pub(super) tolerance: f64,
    pub(super) stall_window: usize,
    pub(super) max_seconds: f64,
}

impl Limits {
    /// The limits that `options` set for a fit of `n_groups` slack groups.
    pub(super) fn of(options: &Options, n_groups: usize) -> Self {
        Limits {
            max_iter: options.max_iter,
            tolerance: options.tolerance(n_groups),
            stall_window: options.stall_window,
            max_seconds: options.max_seconds,
        }
    }
}

/// The iterations reported so far and why the loop stopped; shared by both outer methods.
pub(super) struct Progress {
    limits: Limits,
    pub(super) history: Vec<IterationRecord>,
    stop: StopReason,
}

impl Progress {
    pub(super) fn new(limits: Limits) -> Self {
        Progress {
            limits,
            history: Vec::new(),
            stop: StopReason::MaxIter,
        }
    }

    /// The iterations the loop may run, 1 to `max_iter`: both solvers iterate over these, so
    /// that the bound is read here, beside the check that ends the loop at it.
    pub(super) fn iterations(&self) -> std::ops::RangeInclusive<usize> {
        1..=self.limits.max_iter
    }

    /// Hands an iteration's record (measured at `w`) to the hook and keeps it; true when
    /// training stops here: the gap is within the tolerance, the hook asked to stop, the fit
    /// stalled, the time ran out, or this was the last iteration allowed.
    pub(super) fn report(
        &mut self,
        record: IterationRecord,
        w: &[f64],
        on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
    ) -> Result<bool> {
        let control = on_iteration(&record, w)?;
        let (gap, iteration, seconds) = (record.gap, record.iteration, record.seconds);
        self.history.push(record);
        let limits = self.limits;
        if gap <= limits.tolerance {
            self.stop = StopReason::Converged;
        } else if control == Control::Stop {
            self.stop = StopReason::Callback;
        } else if stalled(
            &self.history,
            limits.tolerance,
            limits.max_iter,
            limits.stall_window,
        ) {
            self.stop = StopReason::Stalled;
        } else if seconds >= limits.max_seconds {
            self.stop = StopReason::MaxTime;
        } else if iteration < limits.max_iter {
            return Ok(false);
        }
        Ok(true)
    }

    /// The summary of a finished loop (query counts are filled in by `train`).
    pub(super) fn summary(
        self,
        ws: &WorkingSet,
        n_evals: usize,
        qp_seconds: f64,
        qp_fallbacks: usize,
    ) -> Summary {
        let last = self
            .history
            .last()
            .expect("max_iter >= 1 was validated")
            .clone();
        Summary {
            primal: last.primal,
            dual: last.dual,
            gap: last.gap,
            n_iter: last.iteration,
            n_cuts: ws.len(),
            n_active: ws.n_active(),
            stop: self.stop,
            n_evals,
            tolerance: self.limits.tolerance,
            qp_seconds,
            qp_fallbacks,
            n_queries: 0,
            n_skipped_no_relevant: 0,
            n_skipped_all_relevant: 0,
            history: self.history,
        }
    }
}

/// The error of a training whose numbers left float64. Every number of a cutting plane is a
/// feature difference times a query's weight, and the weights `w` grow with C (`w = sum a_j
/// g_j`, `sum a_j <= C`): the features, the query weights and C can each be the cause, and the
/// solver sees only C among them, so the message names all three with what to do about each.
/// The Python layer (`_fit.convergence.overflow_named`) replaces everything after the first
/// ';' with the one factor it measures to be the cause.
pub(super) fn out_of_range(iteration: usize, what: &str, c: f64) -> Error {
    // Rust's Display writes 1e200 with all its 201 digits; a C that far from 1 reads as 1e200.
    let c = if (1e-3..1e6).contains(&c) {
        format!("{c}")
    } else {
        format!("{c:e}")
    };
    Error::Numerical(format!(
        "training stopped at iteration {iteration}: {what} is not a finite float64 number; \
         the features, the query weights or C = {c} are too large for float64 arithmetic \
         (a cutting plane is feature differences times a query's weight, and the weights grow \
         with C): scale the features (squares of feature values, summed over the features, \
         must stay below 1.8e308), divide the query weights by a constant or lower C"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The solver cannot tell which factor overflowed, so the message must offer the remedy of
    /// each (issue 46: it used to say only "scale the features", also when C = 1e200 on unit
    /// features was the cause), and write C as the user would (1e200, not its 201 digits).
    #[test]
    fn an_overflow_names_the_features_the_query_weights_and_c_with_their_remedies() {
        let text = out_of_range(6, "the primal objective", 1e200).to_string();
        assert!(text.contains("iteration 6: the primal objective is not a finite"));
        assert!(text.contains("C = 1e200"), "{text}");
        for remedy in ["scale the features", "divide the query weights", "lower C"] {
            assert!(text.contains(remedy), "{remedy}: {text}");
        }
        assert!(out_of_range(1, "the weight vector", 10.0)
            .to_string()
            .contains("C = 10 "));
    }

    /// Records with the given (primal, dual) per iteration, from iteration 1.
    fn history(points: &[(f64, f64)]) -> Vec<IterationRecord> {
        points
            .iter()
            .enumerate()
            .map(|(i, &(primal, dual))| IterationRecord {
                iteration: i + 1,
                primal,
                dual,
                gap: primal - dual,
                loss: 0.0,
                n_cuts: 0,
                n_active: 0,
                seconds: 0.0,
            })
            .collect()
    }

    #[test]
    fn a_frozen_gap_far_above_the_tolerance_is_a_stall_after_the_window() {
        // P = 10 and D = 1 for ever, tolerance 0.01: the gap 9 is 900 tolerances and does not
        // move, so the rule fires once the window (5) has passed: at the 6th record, not the 5th.
        let h = history(&[(10.0, 1.0); 6]);
        assert!(!stalled(&h[..5], 0.01, 1000, 5));
        assert!(stalled(&h, 0.01, 1000, 5));
        // A window of 0 never declares a stall.
        assert!(!stalled(&h, 0.01, 1000, 0));
    }

    #[test]
    fn a_gap_closing_fast_enough_to_reach_the_tolerance_by_max_iter_is_no_stall() {
        // The gap closes by 0.01 per iteration: from 9 at the last record (iteration 11), 9 -
        // 0.01 = 8.99 to go needs 899 more iterations. With max_iter = 1000 (989 left) the rate
        // reaches it; with max_iter = 800 (789 left) it does not.
        let points: Vec<(f64, f64)> = (0..11).map(|i| (10.0, 0.9 + 0.01 * i as f64)).collect();
        let h = history(&points);
        assert!((h[10].gap - 9.0).abs() < 1e-12);
        assert!(!stalled(&h, 0.01, 1000, 10));
        assert!(stalled(&h, 0.01, 800, 10));
    }

    #[test]
    fn a_gap_near_the_tolerance_or_a_dual_growing_tenfold_is_no_stall() {
        // Gap 0.09 with tolerance 0.01 is 9 tolerances, below STALL_GAP_FACTOR = 10: left to
        // finish.
        let h = history(&[(1.0, 0.91); 6]);
        assert!(!stalled(&h, 0.01, 1000, 5));
        // The gap 10 - D barely moves, but D grows from 1e-6 to 1.1e-5 (more than tenfold)
        // over the window: still progressing; growing only ninefold is a stall.
        let growing = history(&[(10.0, 1e-6), (10.0, 0.0), (10.0, 0.0), (10.0, 1.1e-5)]);
        assert!(!stalled(&growing, 0.01, 1000, 3));
        let slower = history(&[(10.0, 1e-6), (10.0, 0.0), (10.0, 0.0), (10.0, 9e-6)]);
        assert!(stalled(&slower, 0.01, 1000, 3));
    }
}
