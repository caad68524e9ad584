//! svmmap: structural SVMs that optimize ranking metrics (MAP, ROC area, NDCG, MRR) directly.
//!
//! The crate is the numeric core of the `svmmap` Python package. Everything here works on
//! borrowed slices so that the Python bindings (`python/`, behind the `python` feature) can
//! hand numpy and scipy buffers over without copying them.

pub mod atomic;
pub mod binning;
pub mod data;
pub mod error;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod metrics;
pub mod model;
pub mod oracle;
#[cfg(test)]
mod proptests;
pub mod runtime;
pub mod solver;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
