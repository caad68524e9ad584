//! svmmap: structural SVMs that optimize ranking metrics (MAP, ROC area, NDCG, MRR) directly.
//!
//! The crate is the numeric core of the `svmmap` Python package. Everything here works on
//! borrowed slices so that the Python bindings (`python/`, behind the `python` feature) can
//! hand numpy and scipy buffers over without copying them.

pub mod binning;
pub mod cancel;
pub mod data;
pub mod error;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod guard;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod oracle;
pub mod parallel;
pub mod pool;
#[cfg(test)]
mod proptests;
pub mod solver;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
