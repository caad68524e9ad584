//! The 1-slack cutting-plane structural SVM (Joachims, Finley, Yu 2009), stabilized as in OCAS
//! (Franc and Sonnenburg 2009), and its working-set dual, solved by an exact active-set method
//! (coordinate ascent as the fallback).

pub mod cutting_plane;
pub mod dual_qp;

pub use cutting_plane::{
    solve, solve_from, train, train_path, Control, CutSource, IterationRecord, Method, Options,
    QueryCounts, QueryCuts, RankingProblem, StopReason, Summary, WarmStart,
};
