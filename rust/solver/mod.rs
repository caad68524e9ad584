//! The structural SVM of Yue et al. 2007 (OP 1 with margin rescaling), trained by the 1-slack
//! cutting-plane algorithm (Joachims, Finley, Yu 2009) stabilized as in OCAS (Franc and
//! Sonnenburg 2009); the working-set dual is solved by an exact active-set method whose steps
//! update a Cholesky factor of the free cuts' Gram block, O(|F|^2) each (coordinate ascent as
//! the fallback).
//!
//! Problem. With n = the training queries that have both a relevant and a non-relevant document,
//!
//!   min_w  P(w) = 1/2 ||w||^2 + sum_s C_s * 1/n sum_q H_{q,s}(w),
//!   H_{q,s}(w) = max_y Delta_s(y_q, y) + w.Psi_s(x_q, y) - w.Psi_s(x_q, y_q) >= 0,
//!
//! one term s per slack group (one group for SVM^map; several for SVM-combo with separate
//! slacks). With one group and C_s = C this is OP 1: C/n sum_q xi_q, so C means what it means
//! in SVM^map.
//!
//! Cuts. Each oracle pass scores every document (X w), runs the oracle of every group on every
//! query in parallel (both in one pass over X, see `RankingProblem::cut_sums`), and averages the
//! results into one cut per group, b = 1/n sum_q Delta_q and g = 1/n sum_q deltaPsi_q =
//! X^T c / n, whose violation b - w.g equals 1/n sum_q H_q(w), so P(w) is known exactly at every
//! point where the oracles ran. The working-set dual (qp/) is a lower bound on min P; training
//! stops when the gap P(w) - D(a) is at most eps * sum_s C_s, i.e. when no cut is violated by
//! more than eps beyond the working set's slack (SVM^struct's criterion), so the returned w is
//! within eps * sum_s C_s of the optimum whatever path led to it.
//!
//! Cut blocks (the option of that name in the parameter table, default 1). The risk of a group is a sum over queries,
//! so the queries can be cut into K consecutive blocks, each with its own cut and slack per
//! iteration (a multi-cut model; K = the number of queries is the n-slack model): the objective
//! and P(w) are unchanged, the working-set dual (caps C per block) is still a lower bound of
//! min P, and the stopping test is the same. It takes fewer iterations where the 1-slack model
//! is poor (binned indicator columns at large C), but its working set grows K cuts per
//! iteration, and the QP's free set with it; benchmarks/binned_solver.py measures both.
//!
//! Returns w, the primal and dual objectives, the gap, the iteration count and the cut counts.
//! Sums over queries are taken in fixed blocks of queries added in order, so the result is the
//! same for any number of threads.
//!
//! Files, each with one job; a file imports only from files below it in this list:
//!
//!   api.rs       train, train_path(_from), solve, solve_from: the entry points
//!   ocas.rs      the OCAS-stabilized cutting plane (`Method::Ocas`, the default), WarmStart
//!   plain.rs     the plain 1-slack cutting plane (`Method::Plain`, for comparison)
//!   progress.rs  IterationRecord, Control, StopReason, Summary: what the loop reports
//!   problem.rs   RankingProblem and its oracle pass (cut sums), CutSource
//!   options.rs   Options and Method: the training parameters, their defaults and checks
//!   qp/          the working-set dual and its solvers (SMO, polish, active set)

mod api;
pub mod latent;
mod ocas;
mod options;
mod plain;
mod problem;
mod progress;
pub mod qp;
mod warm;

pub use api::{solve, solve_from, train, train_path, train_path_from};
pub use options::{
    expected, name_of, parameter, text_default, Kind, Method, Options, Parameter, ValidOptions,
    Value, PARAMETERS, PER_QUERY,
};
pub use problem::{CutSource, QueryCuts, RankingProblem};
pub use progress::{Control, IterationRecord, StopReason, Summary};
pub use warm::WarmStart;
