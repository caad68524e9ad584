//! The training parameters: their one declaration (`training_parameters!` below, one entry per
//! parameter), from which the table (`PARAMETERS`: name, default, check, doc line), the solver's
//! `Options` fields, their defaults, checks and setters are generated; `Method`; and the
//! precision to which both methods solve the working-set QP (a fraction of `eps`).

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
/// model files and the docs say about it. Adding a parameter is one entry of
/// `training_parameters!` (its field in `Options` too, when the solver reads it) and its line
/// in the estimators' signatures and docstrings, which tests/api/test_parameters.py checks
/// against this table.
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

/// A solver field's type: how the binding's values and the table's default become its value.
/// The `f64` fields take the real parameters, the `usize` fields the counts.
trait Field: Sized + std::fmt::Display {
    fn from_float(x: f64) -> Option<Self>;
    fn from_count(k: usize) -> Option<Self>;
    /// The table's default; its None is `none`, the meaning the parameter's doc line states.
    fn from_default(default: Value, none: Option<Self>) -> Self;
}

impl Field for f64 {
    fn from_float(x: f64) -> Option<Self> {
        Some(x)
    }
    fn from_count(_: usize) -> Option<Self> {
        None
    }
    fn from_default(default: Value, none: Option<Self>) -> Self {
        match (default, none) {
            (Value::Float(x), _) => x,
            (Value::Null, Some(none)) => none,
            other => unreachable!("a real parameter has the default {other:?}"),
        }
    }
}

impl Field for usize {
    fn from_float(_: f64) -> Option<Self> {
        None
    }
    fn from_count(k: usize) -> Option<Self> {
        Some(k)
    }
    fn from_default(default: Value, none: Option<Self>) -> Self {
        match (default, none) {
            (Value::Int(k), _) => k,
            (Value::Null, Some(none)) => none,
            other => unreachable!("a count parameter has the default {other:?}"),
        }
    }
}

/// The one declaration of the training parameters. An entry is the parameter's name, then,
/// when the solver holds its value, `: type` (a field of `Options` of the parameter's name) or
/// `=> field: type` (a field of another name), then its table entry; a solver-held entry ends
/// with `valid`, its check on the field's value, and an optional one with `none`, the value
/// that None means (which its doc line states). The parameters that the solver does not hold
/// (the loss, the slack, the thread count) are checked by the binding. After the entries,
/// `other` lists the fields of `Options` that are not parameters of the API.
///
/// The `@norm` rules give every entry one shape (`[field type [none] valid]`, or `[]`), and
/// `@emit` generates `PARAMETERS`, `Options`, its `Default`, `check` and the setters from it.
macro_rules! training_parameters {
    (@norm [$($done:tt)*] other { $($other:tt)* }) => {
        training_parameters!(@emit [$($done)*] other { $($other)* });
    };
    (@norm [$($done:tt)*]
        $(#[$fdoc:meta])* $name:ident => $field:ident : $ty:ty { $($entry:tt)* }
        $($rest:tt)*
    ) => {
        training_parameters!(@split [$($done)*] $name [$(#[$fdoc])* $field $ty] { $($entry)* }
            $($rest)*);
    };
    (@norm [$($done:tt)*]
        $(#[$fdoc:meta])* $name:ident : $ty:ty { $($entry:tt)* }
        $($rest:tt)*
    ) => {
        training_parameters!(@split [$($done)*] $name [$(#[$fdoc])* $name $ty] { $($entry)* }
            $($rest)*);
    };
    (@norm [$($done:tt)*] $name:ident { $($entry:tt)* } $($rest:tt)*) => {
        training_parameters!(@norm [$($done)* ($name [] { $($entry)* })] $($rest)*);
    };
    // A solver-held entry: its table part, then `none` (optional) and `valid`.
    (@split [$($done:tt)*] $name:ident [$($field:tt)*] {
        default: $default:expr, kind: $kind:ident, choices: $choices:expr,
        expected: $expected:expr, python_type: $python_type:expr, flag: $flag:expr,
        doc: $doc:expr, $(none: $none:expr,)? valid: |$v:ident| $valid:expr,
    } $($rest:tt)*) => {
        training_parameters!(@norm [$($done)* ($name [$($field)* [$($none)?] |$v| $valid] {
            default: $default, kind: $kind, choices: $choices, expected: $expected,
            python_type: $python_type, flag: $flag, doc: $doc,
        })] $($rest)*);
    };
    (@emit [$((
        $name:ident
        [$($(#[$fdoc:meta])* $field:ident $ty:ty [$($none:expr)?] |$v:ident| $valid:expr)?]
        {
            default: $default:expr, kind: $kind:ident, choices: $choices:expr,
            expected: $expected:expr, python_type: $python_type:expr, flag: $flag:expr,
            doc: $doc:expr,
        }
    ))*]
    other { $($(#[$odoc:meta])* $other:ident : $oty:ty = $odefault:expr,)* }) => {
        /// The training parameters, in the order in which they are checked (so the first bad
        /// one is the one an error names) and in which `TrainConfig.kwargs()` lists them.
        pub static PARAMETERS: &[Parameter] = &[$(
            Parameter {
                name: stringify!($name),
                default: $default,
                kind: Kind::$kind,
                choices: $choices,
                expected: $expected,
                python_type: $python_type,
                flag: $flag,
                doc: $doc,
            },
        )*];

        /// The solver's options: the values of the training parameters that it holds, and the
        /// internal ones.
        #[derive(Debug, Clone)]
        pub struct Options {
            $($($(#[$fdoc])* pub $field: $ty,)?)*
            $($(#[$odoc])* pub $other: $oty,)*
        }

        /// Each solver field's parameter name, for the messages and the stop reasons named
        /// after a parameter (`name_of::max_seconds` is the time limit's).
        #[allow(non_upper_case_globals)]
        pub mod name_of {
            $($(pub const $field: &str = stringify!($name);)?)*
        }

        impl Default for Options {
            fn default() -> Self {
                Options {
                    $($($field: Field::from_default($default, None $(.or(Some($none)))?),)?)*
                    $($other: $odefault,)*
                }
            }
        }

        impl Options {
            /// Checks the value of the one parameter `name` against the table's rule (Ok for
            /// the parameters that the binding checks).
            pub fn check(&self, name: &str) -> Result<()> {
                $($(
                    if name == stringify!($name) {
                        let $v = self.$field;
                        let passed: bool = $valid;
                        if !passed {
                            return Err(Error::param(name, $expected, self.$field));
                        }
                    }
                )?)*
                Ok(())
            }

            /// Sets a real parameter that the options hold; false for the others (the counts
            /// and the binding's).
            pub fn set_float(&mut self, name: &str, value: f64) -> bool {
                $($(
                    if name == stringify!($name) {
                        if let Some(x) = <$ty as Field>::from_float(value) {
                            self.$field = x;
                            return true;
                        }
                    }
                )?)*
                false
            }

            /// As `set_float`, for the counts.
            pub fn set_count(&mut self, name: &str, value: usize) -> bool {
                $($(
                    if name == stringify!($name) {
                        if let Some(k) = <$ty as Field>::from_count(value) {
                            self.$field = k;
                            return true;
                        }
                    }
                )?)*
                false
            }

            /// Sets an optional parameter to None, whose meaning its doc line states (the
            /// entry's `none`); false for the others.
            pub fn set_none(&mut self, name: &str) -> bool {
                $($($(
                    if name == stringify!($name) {
                        self.$field = $none;
                        return true;
                    }
                )?)?)*
                false
            }
        }
    };
    ($($entries:tt)*) => {
        training_parameters!(@norm [] $($entries)*);
    };
}

training_parameters! {
    /// The regularization trade-off of OP 1 (per slack group).
    C => c: f64 {
        default: Value::Float(1.0),
        kind: Real,
        choices: &[],
        expected: "a finite number > 0",
        python_type: "float",
        flag: "-c",
        doc: "Trade-off between the margin and the training loss (> 0).",
        valid: |c| c.is_finite() && c > 0.0,
    }
    /// Tolerance on the violation of the most violated constraint, in slack units.
    eps: f64 {
        default: Value::Float(1e-3),
        kind: Real,
        choices: &[],
        expected: "a finite number > 0",
        python_type: "float",
        flag: "-e",
        doc: "Tolerance in slack units, as SVM^struct's ``-e``: training stops when no \
              constraint is violated by more than ``eps`` beyond the working set's slack.",
        valid: |e| e.is_finite() && e > 0.0,
    }
    /// Maximum number of cutting-plane iterations (oracle passes).
    max_iter: usize {
        default: Value::Int(10_000),
        kind: Count,
        choices: &[],
        expected: "an integer >= 1",
        python_type: "int",
        flag: "--max-iter",
        doc: "Maximum number of cutting-plane iterations.",
        valid: |k| k >= 1,
    }
    /// A document is relevant when its label is above this value.
    relevance_threshold: f64 {
        default: Value::Float(0.0),
        kind: Real,
        choices: &[],
        expected: "a finite number",
        python_type: "float",
        flag: "--relevance-threshold",
        doc: "A document is relevant when its label is above this value.",
        valid: |t| t.is_finite(),
    }
    loss {
        default: Value::Text("map"),
        kind: Loss,
        choices: &[],
        expected: "a loss name, a list of loss names or a dict of loss names to weights",
        python_type: "str, list of str or dict of str to float",
        flag: "--loss",
        doc: "The metric whose loss ``Delta`` is optimized, or a combination of several.",
    }
    slack {
        default: Value::Text("separate"),
        kind: Choice,
        choices: &["separate", "shared"],
        expected: "\"separate\" or \"shared\"",
        python_type: "{\"separate\", \"shared\"}",
        flag: "--slack",
        doc: "How a list of losses is combined.",
    }
    n_jobs {
        default: Value::Null,
        kind: Threads,
        choices: &[],
        expected: crate::runtime::pool::N_JOBS_EXPECTED,
        python_type: "int or None",
        flag: "--n-jobs",
        doc: "Threads for the oracles, scoring and cut sums; None (the default) uses every \
              core.",
    }
    /// The cuts per slack group and iteration: the usable queries are cut into this many
    /// consecutive blocks and each block's risk gets its own cut and slack (see
    /// `RankingProblem::split_into_blocks`); 1 is the 1-slack model, `PER_QUERY` one block per
    /// usable query. The table's None is the core's choice, one block (the 1-slack model), the
    /// fastest in the measurements of the guide's "Cut blocks".
    cut_blocks => n_blocks: usize {
        default: Value::Null,
        kind: OptionalCount,
        choices: &[],
        expected: "an integer >= 1",
        python_type: "int or None",
        flag: "--cut-blocks",
        doc: "Cuts per slack group and iteration, one per block of consecutive training \
              queries; None is the core's default, today 1.",
        none: 1,
        valid: |k| k >= 1,
    }
    /// A fit stops as stalled when its gap has not closed over this many iterations at a
    /// rate that reaches the tolerance by `max_iter` (`progress::stalled`); 0 (the table's
    /// None) never stops so.
    n_iter_no_change => stall_window: usize {
        default: Value::Int(50),
        kind: OptionalCount,
        choices: &[],
        expected: "an integer >= 1",
        python_type: "int or None",
        flag: "--n-iter-no-change",
        doc: "Stop as stalled when, over this many iterations, the duality gap (above ten \
              times its tolerance) closed too slowly to reach it by ``max_iter``; None trains \
              on.",
        none: 0,
        // The binding refuses 0 as a given count; 0 is None's meaning, which set_none sets.
        valid: |_k| true,
    }
    /// The fit stops after the first iteration that ends this many seconds after its start
    /// (infinity, the table's None: no limit).
    max_time => max_seconds: f64 {
        default: Value::Null,
        kind: OptionalReal,
        choices: &[],
        expected: "a number of seconds > 0",
        python_type: "float or None",
        flag: "--max-time",
        doc: "Stop after the first iteration that ends this many seconds after the start; \
              None (the default) sets no limit.",
        none: f64::INFINITY,
        valid: |s| s > 0.0,
    }
    other {
        /// Cuts whose dual variable stayed zero for this many iterations are dropped.
        max_idle: usize = 50,
        /// The outer method (internal: the plain method is kept for comparison).
        method: Method = Method::default(),
    }
}

/// The table's entry of `name` (a name of `PARAMETERS`).
pub fn parameter(name: &str) -> Option<&'static Parameter> {
    PARAMETERS.iter().find(|p| p.name == name)
}

/// What the check of `name` expects, in the table's words (every caller names a parameter of
/// it).
pub fn expected(name: &str) -> &'static str {
    parameter(name).map_or("a valid value", |p| p.expected)
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

/// Options that `Options::validate` accepted, the only options the solver's entry points
/// take: a fit's options are validated once, where they are made (`Options::checked`, or the
/// binding's `TrainConfig` on construction), and not again by each layer they pass through.
#[derive(Debug, Clone)]
pub struct ValidOptions(Options);

impl std::ops::Deref for ValidOptions {
    type Target = Options;

    fn deref(&self) -> &Options {
        &self.0
    }
}

impl ValidOptions {
    /// A copy with `change` made (a path's C, a deadline's time left, the cutting-plane
    /// method), checked again: the other values passed before, so an error names the changed
    /// parameter, and the callers need not name it.
    pub fn with(&self, change: impl FnOnce(&mut Options)) -> Result<ValidOptions> {
        let mut options = self.0.clone();
        change(&mut options);
        options.checked()
    }
}

/// `Options::n_blocks` for one block per usable query (the n-slack model's risk terms).
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

impl Options {
    /// The stopping tolerance: training stops when the duality gap is at most eps times the
    /// sum of the slack groups' C (every group has this C). The one place it is computed: the
    /// solvers stop on it, the fit summary reports it, and the Python layer (warnings, progress
    /// display, convergence plot) reads it from there.
    pub fn tolerance(&self, n_groups: usize) -> f64 {
        self.eps * (self.c * n_groups as f64)
    }

    /// The cuts an iteration adds at most: one per cut block of every slack group, and no
    /// more blocks than queries.
    pub fn max_cuts_per_iteration(&self, n_groups: usize, n_queries: usize) -> usize {
        n_groups * self.n_blocks.min(n_queries.max(1))
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
                // Debug is the shortest form that reads back ("5e-324"); Display wrote the
                // 324 decimals of a subnormal C given in a path's Cs.
                format!("{:?}", self.c),
            ))
        }
    }

    /// These options as `ValidOptions`, once `validate` accepted them.
    pub fn checked(self) -> Result<ValidOptions> {
        self.validate()?;
        Ok(ValidOptions(self))
    }

    /// The error of a cut-block count that a trainer making one cut per slack group and
    /// iteration cannot honour (the latent-target rounds, the distributed trainer); `who` says
    /// which trainer and why, `leave` what to pass instead. None for one block, the default.
    pub fn one_cut_only(&self, who: &str, leave: &str) -> Option<Error> {
        let (k, name) = (self.n_blocks, name_of::n_blocks);
        (k != 1).then(|| {
            Error::InvalidInput(format!(
                "{name}={k} is not supported {who}; leave {name}={leave}"
            ))
        })
    }
}

#[cfg(test)]
mod tests;
