//! What the cutting-plane loop reports, the same for both methods: an `IterationRecord` per
//! iteration, handed to the caller's hook, which answers with a `Control`; the `StopReason`; and
//! the final `Summary`. `Progress` keeps the records and decides when the loop stops (the gap
//! within eps * sum_s C_s, the hook's Stop, or `max_iter`). Also the error both methods return
//! when a number leaves the float64 range.

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

/// The iterations reported so far and why the loop stopped; shared by both outer methods.
pub(super) struct Progress {
    max_iter: usize,
    tolerance: f64,
    pub(super) history: Vec<IterationRecord>,
    stop: StopReason,
}

impl Progress {
    pub(super) fn new(max_iter: usize, tolerance: f64) -> Self {
        Progress {
            max_iter,
            tolerance,
            history: Vec::new(),
            stop: StopReason::MaxIter,
        }
    }

    /// Hands an iteration's record (measured at `w`) to the hook and keeps it; true when
    /// training stops here: the gap is within the tolerance, the hook asked to stop, or this
    /// was the last iteration allowed.
    pub(super) fn report(
        &mut self,
        record: IterationRecord,
        w: &[f64],
        on_iteration: &mut dyn FnMut(&IterationRecord, &[f64]) -> Result<Control>,
    ) -> Result<bool> {
        let control = on_iteration(&record, w)?;
        let (gap, iteration) = (record.gap, record.iteration);
        self.history.push(record);
        if gap <= self.tolerance {
            self.stop = StopReason::Converged;
        } else if control == Control::Stop {
            self.stop = StopReason::Callback;
        } else if iteration < self.max_iter {
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
            tolerance: self.tolerance,
            qp_seconds,
            qp_fallbacks,
            n_queries: 0,
            n_skipped_no_relevant: 0,
            n_skipped_all_relevant: 0,
            history: self.history,
        }
    }
}

pub(super) fn out_of_range(iteration: usize, what: &str) -> Error {
    Error::Numerical(format!(
        "training stopped at iteration {iteration}: {what} is not a finite float64 number; \
         feature values are too large for float64 arithmetic (squares of feature values, \
         summed over the features, must stay below 1.8e308): scale the features"
    ))
}
