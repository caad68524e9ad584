//! Query-grouped views of a feature matrix (dense row-major, CSR or bin codes), borrowed,
//! never copied, and the LETOR reader that makes one from a file. This file only lists the
//! parts and re-exports the names the rest of the crate uses; the parts import each other
//! directly, never through here, so that no two files import each other.

pub mod binned;
#[cfg(test)]
mod binned_split;
pub mod binned_view;
pub mod csr;
pub mod dense;
pub mod groups;
pub mod kernels;
pub mod matrix;
pub mod reader;
pub mod scaled;

pub use binned_view::BinnedView;
pub use csr::CsrView;
pub use dense::DenseView;
pub use groups::QueryGroups;
pub use matrix::{RowMatrix, Scalar, SparseIndex};
pub use scaled::ScaledView;
