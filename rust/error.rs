//! The one error type of the crate. Every message says what was expected and what was given,
//! and errors about files carry the path and the 1-based line number.

use std::fmt;

/// Where in an input file a problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: String,
    /// 1-based line number; 0 when the problem concerns the whole file.
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.path)
        } else {
            write!(f, "{}:{}", self.path, self.line)
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A line of a data or model file could not be understood.
    #[error("{location}: {message}")]
    Parse { location: Location, message: String },

    /// The operating system refused to read or write a file.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// A parameter (C, eps, k, a loss name ...) is out of its domain.
    #[error("invalid {name}: expected {expected}, got {got}")]
    InvalidParameter {
        name: String,
        expected: String,
        got: String,
    },

    /// Arrays handed in do not fit together (lengths, shapes, non-finite values ...).
    #[error("{0}")]
    InvalidInput(String),

    /// Training was asked for but no query can contribute a constraint (the rule is
    /// `oracle::usable`; `graded` when a loss also trains on two different labels).
    #[error(
        "{}",
        no_usable_queries(*n_queries, *no_relevant, *all_relevant, *threshold, *graded)
    )]
    NoUsableQueries {
        n_queries: usize,
        no_relevant: usize,
        all_relevant: usize,
        threshold: f64,
        graded: bool,
    },

    /// A model file is of another format or version, or does not fit the data.
    #[error("{0}")]
    Model(String),

    /// The progress callback asked training to stop with an error (e.g. Ctrl-C in Python).
    #[error("training interrupted: {0}")]
    Interrupted(String),

    /// Work would need more memory than the machine has available; the message says how much
    /// for what, and what to change.
    #[error("{0}")]
    Memory(String),

    /// The arithmetic left the range of float64 (an overflow to inf or a NaN), which happens
    /// when feature values are astronomically large.
    #[error("{0}")]
    Numerical(String),

    /// A bug in svmmap: a panic caught at the library's boundary (see `guard.rs`).
    #[error(
        "internal error in svmmap: {0}. This is a bug; please report it with the data or \
         code that triggers it"
    )]
    Internal(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// The message of `Error::NoUsableQueries`, with the rule of the losses at hand.
fn no_usable_queries(
    n_queries: usize,
    no_relevant: usize,
    all_relevant: usize,
    threshold: f64,
    graded: bool,
) -> String {
    let counts = format!(
        "{n_queries} queries: {no_relevant} without a relevant document, {all_relevant} with \
         only relevant documents"
    );
    if graded {
        format!(
            "no training query has both a relevant and a non-relevant document, nor two \
             documents with two different labels ({counts}, each with a single label); a \
             graded loss (\"pairwise\") trains on a query with two different labels, the other \
             losses on a query with a document whose label is above {threshold} and one whose \
             label is not"
        )
    } else {
        format!(
            "no training query has both a relevant and a non-relevant document ({counts}); a \
             document is relevant when its label is above {threshold}"
        )
    }
}

impl Error {
    pub fn parse(path: &str, line: usize, message: impl Into<String>) -> Self {
        Error::Parse {
            location: Location {
                path: path.to_string(),
                line,
            },
            message: message.into(),
        }
    }

    pub fn io(path: &str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_string(),
            source,
        }
    }

    pub fn param(name: &str, expected: &str, got: impl fmt::Display) -> Self {
        Error::InvalidParameter {
            name: name.to_string(),
            expected: expected.to_string(),
            got: got.to_string(),
        }
    }

    pub fn input(message: impl Into<String>) -> Self {
        Error::InvalidInput(message.into())
    }
}
