//! The training parameters of the cutting-plane solver: `Options` and `Method`, their
//! defaults and their checks, and the precision to which both methods solve the working-set
//! QP (a fraction of `eps`).

use crate::error::{Error, Result};

/// The working-set QP is solved to this fraction of `eps` (see `solve_plain` in plain.rs).
pub(super) const QP_TOL_FACTOR: f64 = 1e-9;

#[derive(Debug, Clone)]
pub struct Options {
    /// The regularization trade-off of OP 1 (per slack group).
    pub c: f64,
    /// Tolerance on the violation of the most violated constraint, in slack units.
    pub eps: f64,
    /// Maximum number of cutting-plane iterations (oracle passes).
    pub max_iter: usize,
    /// Cuts whose dual variable stayed zero for this many iterations are dropped.
    pub max_idle: usize,
    /// A document is relevant when its label is above this value.
    pub relevance_threshold: f64,
    /// The outer method (internal: the plain method is kept for comparison).
    pub method: Method,
    /// The cuts per slack group and iteration: the usable queries are cut into this many
    /// consecutive blocks and each block's risk gets its own cut and slack (see
    /// `RankingProblem::set_cut_blocks`); 1 is the 1-slack model, `PER_QUERY` one block per
    /// usable query.
    pub cut_blocks: usize,
}

/// `Options::cut_blocks` for one block per usable query (the n-slack model's risk terms).
pub const PER_QUERY: usize = usize::MAX;

/// The outer loop of the solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// The 1-slack cutting plane of Joachims et al. 2009 with the SMO + polish QP: each
    /// iterate is the working set's optimum.
    Plain,
    /// The OCAS-style stabilized cutting plane with a line search and the active-set QP (see
    /// ocas.rs).
    #[default]
    Ocas,
}

impl Method {
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "plain" => Ok(Method::Plain),
            "ocas" => Ok(Method::Ocas),
            _ => Err(Error::param("method", "'plain' or 'ocas'", name)),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            c: 1.0,
            eps: 1e-3,
            max_iter: 10_000,
            max_idle: 50,
            relevance_threshold: 0.0,
            method: Method::default(),
            cut_blocks: 1,
        }
    }
}

impl Options {
    /// The stopping tolerance: training stops when the duality gap is at most eps times the
    /// sum of the slack groups' C (every group has this C). The one place it is computed: the
    /// solvers stop on it, the fit summary reports it, and the Python layer (warnings, progress
    /// display, convergence plot) reads it from there.
    pub fn tolerance(&self, n_groups: usize) -> f64 {
        self.eps * (self.c * n_groups as f64)
    }

    pub fn validate(&self) -> Result<()> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(Error::param("C", "a finite number > 0", self.c));
        }
        if !(self.eps.is_finite() && self.eps > 0.0) {
            return Err(Error::param("eps", "a finite number > 0", self.eps));
        }
        if self.cut_blocks == 0 {
            return Err(Error::param(
                "cut_blocks",
                "an integer >= 1",
                self.cut_blocks,
            ));
        }
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", "an integer >= 1", self.max_iter));
        }
        if !self.relevance_threshold.is_finite() {
            return Err(Error::param(
                "relevance_threshold",
                "a finite number",
                self.relevance_threshold,
            ));
        }
        Ok(())
    }
}
