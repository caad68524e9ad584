//! The training parameters: their one table (`PARAMETERS`: name, default, check, doc line),
//! the solver's `Options` and `Method` built from it, and the precision to which both methods
//! solve the working-set QP (a fraction of `eps`).

use crate::error::{Error, Result};

/// A parameter's default as the Python layer shows it (`_core.TRAINING_PARAMETERS`,
/// `TrainConfig.DEFAULTS`, the estimators' signatures and the command line's options).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Float(f64),
    Int(usize),
    Text(&'static str),
    /// Python's None: the parameter's meaning when left to the library (its doc line says
    /// what that is).
    Null,
}

/// How a parameter's value is read: which Python values the binding accepts, and what the
/// command line's option parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A float (an int is converted; a bool is refused, as C=True is surely a mistake).
    Real,
    /// A non-negative integer (a bool is refused).
    Count,
    /// None or a `Count` of at least 1.
    OptionalCount,
    /// None or a `Real`.
    OptionalReal,
    /// A loss name, a list of names or a dict of names to weights (`oracle::registry`).
    Loss,
    /// One of the parameter's `choices`.
    Choice,
    /// scikit-learn's n_jobs: None, n > 0 threads, or n < 0 counting back from the cores.
    Threads,
}

/// One training parameter: everything the bindings, the estimators, the command line, the
/// model files and the docs say about it. Adding a parameter is one entry here, its field in
/// `Options` (when the solver reads it) and its line in the estimators' signatures and
/// docstrings, which tests/api/test_parameters.py checks against this table.
#[derive(Debug, Clone, Copy)]
pub struct Parameter {
    pub name: &'static str,
    pub default: Value,
    pub kind: Kind,
    /// The values a `Kind::Choice` takes; empty for the other kinds.
    pub choices: &'static [&'static str],
    /// What the check expects, in the words of its error ("C must be a finite number > 0, got
    /// 0.0"); for an optional parameter the binding prefixes "None or ".
    pub expected: &'static str,
    /// The type as the numpydoc Parameters section spells it.
    pub python_type: &'static str,
    /// The command line's option (`svmmap learn`).
    pub flag: &'static str,
    /// One sentence: the first of the estimator's docstring entry and the command line's help.
    pub doc: &'static str,
}

/// The training parameters, in the order in which they are checked (so the first bad one is
/// the one an error names) and in which `TrainConfig.kwargs()` lists them.
pub static PARAMETERS: &[Parameter] = &[
    Parameter {
        name: "C",
        default: Value::Float(1.0),
        kind: Kind::Real,
        choices: &[],
        expected: "a finite number > 0",
        python_type: "float",
        flag: "-c",
        doc: "Trade-off between the margin and the training loss (> 0).",
    },
    Parameter {
        name: "eps",
        default: Value::Float(1e-3),
        kind: Kind::Real,
        choices: &[],
        expected: "a finite number > 0",
        python_type: "float",
        flag: "-e",
        doc: "Tolerance in slack units, as SVM^struct's ``-e``: training stops when no \
              constraint is violated by more than ``eps`` beyond the working set's slack.",
    },
    Parameter {
        name: "max_iter",
        default: Value::Int(10_000),
        kind: Kind::Count,
        choices: &[],
        expected: "an integer >= 1",
        python_type: "int",
        flag: "--max-iter",
        doc: "Maximum number of cutting-plane iterations.",
    },
    Parameter {
        name: "relevance_threshold",
        default: Value::Float(0.0),
        kind: Kind::Real,
        choices: &[],
        expected: "a finite number",
        python_type: "float",
        flag: "--relevance-threshold",
        doc: "A document is relevant when its label is above this value.",
    },
    Parameter {
        name: "loss",
        default: Value::Text("map"),
        kind: Kind::Loss,
        choices: &[],
        expected: "a loss name, a list of loss names or a dict of loss names to weights",
        python_type: "str, list of str or dict of str to float",
        flag: "--loss",
        doc: "The metric whose loss ``Delta`` is optimized, or a combination of several.",
    },
    Parameter {
        name: "slack",
        default: Value::Text("separate"),
        kind: Kind::Choice,
        choices: &["separate", "shared"],
        expected: "\"separate\" or \"shared\"",
        python_type: "{\"separate\", \"shared\"}",
        flag: "--slack",
        doc: "How a list of losses is combined.",
    },
    Parameter {
        name: "n_jobs",
        default: Value::Null,
        kind: Kind::Threads,
        choices: &[],
        expected: crate::runtime::pool::N_JOBS_EXPECTED,
        python_type: "int or None",
        flag: "--n-jobs",
        doc: "Threads for the oracles, scoring and cut sums; None (the default) uses every \
              core.",
    },
    Parameter {
        name: "cut_blocks",
        default: Value::Null,
        kind: Kind::OptionalCount,
        choices: &[],
        expected: "an integer >= 1",
        python_type: "int or None",
        flag: "--cut-blocks",
        doc: "Cuts per slack group and iteration, one per block of consecutive training \
              queries; None is the core's default, today 1.",
    },
    Parameter {
        name: "n_iter_no_change",
        default: Value::Int(50),
        kind: Kind::OptionalCount,
        choices: &[],
        expected: "an integer >= 1",
        python_type: "int or None",
        flag: "--n-iter-no-change",
        doc: "Stop as stalled when, over this many iterations, the duality gap (above ten \
              times its tolerance) closed too slowly to reach it by ``max_iter``; None trains \
              on.",
    },
    Parameter {
        name: "max_time",
        default: Value::Null,
        kind: Kind::OptionalReal,
        choices: &[],
        expected: "a number of seconds > 0",
        python_type: "float or None",
        flag: "--max-time",
        doc: "Stop after the first iteration that ends this many seconds after the start; \
              None (the default) sets no limit.",
    },
];

/// The table's entry of `name` (a name of `PARAMETERS`).
pub fn parameter(name: &str) -> Option<&'static Parameter> {
    PARAMETERS.iter().find(|p| p.name == name)
}

/// What the check of `name` expects, in the table's words (every caller names a parameter of
/// it).
pub fn expected(name: &str) -> &'static str {
    parameter(name).map_or("a valid value", |p| p.expected)
}

fn float_default(name: &str) -> f64 {
    match parameter(name).map(|p| p.default) {
        Some(Value::Float(v)) => v,
        other => unreachable!("{name} has no float default: {other:?}"),
    }
}

fn int_default(name: &str) -> usize {
    match parameter(name).map(|p| p.default) {
        Some(Value::Int(v)) => v,
        other => unreachable!("{name} has no integer default: {other:?}"),
    }
}

/// The default of a text parameter (the loss, the slack).
pub fn text_default(name: &str) -> &'static str {
    match parameter(name).map(|p| p.default) {
        Some(Value::Text(v)) => v,
        other => unreachable!("{name} has no text default: {other:?}"),
    }
}

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
    /// A fit stops as stalled when its gap has not closed over this many iterations at a
    /// rate that reaches the tolerance by `max_iter` (`progress::stalled`); 0 never stops so.
    pub n_iter_no_change: usize,
    /// The fit stops after the first iteration that ends this many seconds after its start
    /// (infinity: no limit).
    pub max_seconds: f64,
}

/// Options that `Options::validate` accepted, the only options the solver's entry points
/// take: a fit's options are validated once, where they are made (`Options::checked`, or the
/// binding's `TrainConfig` on construction), and not again by each layer they pass through.
/// A changed copy (`with`) checks the one parameter it changes.
#[derive(Debug, Clone)]
pub struct ValidOptions(Options);

impl std::ops::Deref for ValidOptions {
    type Target = Options;

    fn deref(&self) -> &Options {
        &self.0
    }
}

impl ValidOptions {
    /// A copy with `change` made to the parameter `name` alone (a path's C, a deadline's time
    /// left, the cutting-plane method), checking that parameter's value.
    pub fn with(&self, name: &str, change: impl FnOnce(&mut Options)) -> Result<ValidOptions> {
        let mut options = self.0.clone();
        change(&mut options);
        options.check(name)?;
        Ok(ValidOptions(options))
    }
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
            c: float_default("C"),
            eps: float_default("eps"),
            max_iter: int_default("max_iter"),
            max_idle: 50,
            relevance_threshold: float_default("relevance_threshold"),
            method: Method::default(),
            // The table's None: the core's choice, one block (the 1-slack model), the fastest
            // in the measurements of the guide's "Cut blocks".
            cut_blocks: 1,
            n_iter_no_change: int_default("n_iter_no_change"),
            // The table's None: no time limit.
            max_seconds: f64::INFINITY,
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

    /// When the loop stops besides convergence and the hook.
    pub(super) fn limits(&self, n_groups: usize) -> super::progress::Limits {
        super::progress::Limits {
            max_iter: self.max_iter,
            tolerance: self.tolerance(n_groups),
            stall_window: self.n_iter_no_change,
            max_seconds: self.max_seconds,
        }
    }

    /// The cuts an iteration adds at most: one per cut block of every slack group, and no
    /// more blocks than queries.
    pub fn max_cuts_per_iteration(&self, n_groups: usize, n_queries: usize) -> usize {
        n_groups * self.cut_blocks.min(n_queries.max(1))
    }

    /// Checks the values against the table's rules, naming the first parameter (in the
    /// table's order) that breaks one, with the table's words.
    pub fn validate(&self) -> Result<()> {
        PARAMETERS.iter().try_for_each(|p| self.check(p.name))?;
        // Each of C and eps can be positive while their product, the tolerance the fit stops
        // at, underflows to 0 (C = 5e-324): such a fit could never certify its optimum, and
        // the reports that divide the gap by the tolerance divided by zero. C is the one
        // named, since eps is the tolerance in slack units and C scales it.
        if self.eps * self.c > 0.0 {
            Ok(())
        } else {
            Err(Error::param(
                "C",
                &format!(
                    "large enough that the tolerance eps * C is above 0 in float64 (eps = {:e}: C = {:.1e} or more)",
                    self.eps,
                    // The smallest normal float64 over eps: a C from which the tolerance is
                    // a normal number, far from the underflow.
                    f64::MIN_POSITIVE / self.eps
                ),
                self.c,
            ))
        }
    }

    /// Checks the value of the one parameter `name` against the table's rule.
    pub fn check(&self, name: &str) -> Result<()> {
        let bad = match name {
            "C" => !(self.c.is_finite() && self.c > 0.0),
            "eps" => !(self.eps.is_finite() && self.eps > 0.0),
            "max_iter" => self.max_iter == 0,
            "relevance_threshold" => !self.relevance_threshold.is_finite(),
            "cut_blocks" => self.cut_blocks == 0,
            "max_time" => self.max_seconds.is_nan() || self.max_seconds <= 0.0,
            // Not the solver's: the binding checks the loss, slack and thread count.
            _ => false,
        };
        match parameter(name) {
            Some(p) if bad => Err(Error::param(p.name, p.expected, self.get(p.name))),
            _ => Ok(()),
        }
    }

    /// These options as `ValidOptions`, once `validate` accepted them.
    pub fn checked(self) -> Result<ValidOptions> {
        self.validate()?;
        Ok(ValidOptions(self))
    }

    /// The value of a parameter the options hold, as text for an error message.
    fn get(&self, name: &str) -> String {
        match name {
            "C" => self.c.to_string(),
            "eps" => self.eps.to_string(),
            "max_iter" => self.max_iter.to_string(),
            "relevance_threshold" => self.relevance_threshold.to_string(),
            "cut_blocks" => self.cut_blocks.to_string(),
            "n_iter_no_change" => self.n_iter_no_change.to_string(),
            "max_time" => self.max_seconds.to_string(),
            _ => String::new(),
        }
    }

    /// Sets a parameter of the table that the options hold (a `Kind::Real` or
    /// `Count` one, or `cut_blocks`); false for the others, which the binding keeps.
    pub fn set_float(&mut self, name: &str, value: f64) -> bool {
        match name {
            "C" => self.c = value,
            "eps" => self.eps = value,
            "relevance_threshold" => self.relevance_threshold = value,
            "max_time" => self.max_seconds = value,
            _ => return false,
        }
        true
    }

    /// As `set_float`, for the integer parameters.
    pub fn set_count(&mut self, name: &str, value: usize) -> bool {
        match name {
            "max_iter" => self.max_iter = value,
            "cut_blocks" => self.cut_blocks = value,
            "n_iter_no_change" => self.n_iter_no_change = value,
            _ => return false,
        }
        true
    }

    /// Sets an optional parameter of the table to None, whose meaning its doc line states:
    /// the core's one block for `cut_blocks`, no stall rule for `n_iter_no_change`, no time
    /// limit for `max_time`; false for the others.
    pub fn set_none(&mut self, name: &str) -> bool {
        match name {
            "cut_blocks" => self.cut_blocks = 1,
            "n_iter_no_change" => self.n_iter_no_change = 0,
            "max_time" => self.max_seconds = f64::INFINITY,
            _ => return false,
        }
        true
    }

    /// The error of a cut-block count that a trainer making one cut per slack group and
    /// iteration cannot honour (the latent-target rounds, the distributed trainer); `who` says
    /// which trainer and why, `leave` what to pass instead. None for one block, the default.
    pub fn one_cut_only(&self, who: &str, leave: &str) -> Option<Error> {
        let k = self.cut_blocks;
        (k != 1).then(|| {
            Error::InvalidInput(format!(
                "cut_blocks={k} is not supported {who}; leave cut_blocks={leave}"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_defaults_are_the_options_defaults_and_pass_the_checks() {
        let o = Options::default();
        assert!(o.validate().is_ok());
        assert_eq!(parameter("C").map(|p| p.default), Some(Value::Float(o.c)));
        assert_eq!(
            parameter("eps").map(|p| p.default),
            Some(Value::Float(o.eps))
        );
        assert_eq!(
            parameter("max_iter").map(|p| p.default),
            Some(Value::Int(o.max_iter))
        );
        // None in the table is the core's choice of one block.
        assert_eq!(o.cut_blocks, 1);
    }

    /// A parameter's name and a change of the default options that its check refuses.
    type Spoiled = (&'static str, fn(&mut Options));

    #[test]
    fn every_check_speaks_in_the_table_words() {
        let cases: [Spoiled; 5] = [
            ("C", |o| o.c = 0.0),
            ("eps", |o| o.eps = f64::NAN),
            ("max_iter", |o| o.max_iter = 0),
            ("relevance_threshold", |o| {
                o.relevance_threshold = f64::INFINITY
            }),
            ("cut_blocks", |o| o.cut_blocks = 0),
        ];
        for (name, spoil) in cases {
            let mut o = Options::default();
            spoil(&mut o);
            match o.validate() {
                Err(Error::InvalidParameter {
                    name: n, expected, ..
                }) => {
                    assert_eq!(n, name);
                    assert_eq!(expected, super::expected(name));
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn one_cut_only_refuses_more_blocks() {
        let mut o = Options::default();
        assert!(o.one_cut_only("by X", "None").is_none());
        o.cut_blocks = 3;
        let e = o.one_cut_only("by X", "None").map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("cut_blocks=3 is not supported by X; leave cut_blocks=None")
        );
    }
}
