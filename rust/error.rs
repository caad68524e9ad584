//! The one error type of the crate. Every message says what was expected and what was given,
//! and errors about files carry the path and the 1-based line number.

use std::fmt;

/// A file's path as messages show it: as the OS has it, with every byte that is not UTF-8
/// written as `\xNN` (`Path::display` writes U+FFFD instead, which names no file: the user
/// could neither tell which byte it was nor type the name again).
pub fn shown_path(file: &std::path::Path) -> String {
    #[cfg(unix)]
    {
        use std::fmt::Write;
        use std::os::unix::ffi::OsStrExt;
        let mut out = String::new();
        for chunk in file.as_os_str().as_bytes().utf8_chunks() {
            out.push_str(chunk.valid());
            for byte in chunk.invalid() {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\x{byte:02x}");
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        file.display().to_string()
    }
}

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
        /// The OS's path when it was given as one (a file that was opened), so that the Python
        /// exception's `filename` is the name as the OS has it, whatever its bytes; `path` is
        /// how messages show it (`shown_path`).
        file: Option<std::path::PathBuf>,
    },

    /// A parameter (C, eps, k, a loss name ...) is out of its domain.
    #[error("{name} must be {expected}, got {got}")]
    InvalidParameter {
        name: String,
        expected: String,
        got: String,
    },

    /// Arrays handed in do not fit together (lengths, shapes, non-finite values ...).
    #[error("{0}")]
    InvalidInput(String),

    /// Training was asked for but no query can contribute a constraint (the rule is
    /// `oracle::usable`; `graded` when a loss also trains on two different labels or grades).
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
             documents that a graded loss tells apart ({counts}); \"pairwise\" trains on a \
             query with two different labels, \"ndcg:graded\" on one with a relevant document \
             and two different grades (a relevant document's label, 0 for the others), the \
             other losses on a query with a document whose label is above {threshold} and one \
             whose label is not"
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
            file: None,
        }
    }

    /// An I/O error on the OS's path `file` (see `Error::Io`).
    pub fn io_file(file: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            path: shown_path(file),
            source,
            file: Some(file.to_path_buf()),
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

    /// An I/O error on `path` told in the user's terms (`why`, e.g. "the folder out does not
    /// exist") where the operating system's own message would name an internal file, such as
    /// the temporary file of an atomic write. The OS error stays inside, with its errno.
    pub fn io_explained(path: &str, os: std::io::Error, why: impl Into<String>) -> Self {
        let kind = os.kind();
        Error::Io {
            path: path.to_string(),
            file: None,
            source: std::io::Error::new(
                kind,
                Explained {
                    os,
                    why: why.into(),
                },
            ),
        }
    }
}

/// An operating-system error and what it means for the user's file (see `Error::io_explained`).
#[derive(Debug)]
pub struct Explained {
    pub os: std::io::Error,
    pub why: String,
}

impl fmt::Display for Explained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.why)
    }
}

impl std::error::Error for Explained {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.os)
    }
}

/// The errno of an I/O error, also of one explained by `Error::io_explained`.
pub fn os_errno(e: &std::io::Error) -> Option<i32> {
    e.raw_os_error()
        .or_else(|| e.get_ref()?.downcast_ref::<Explained>()?.os.raw_os_error())
}
