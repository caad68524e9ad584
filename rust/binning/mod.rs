//! Feature binning (Yue et al. 2007, section 4.2): per base feature f, a sorted set of thresholds
//! K_f fitted on training data, and the indicator features 1[f(d|q) > k] for every k in K_f.
//!
//! With a linear model on the indicators, each base feature contributes a piecewise-constant
//! score: the sum of the weights of the thresholds that its value exceeds. The thresholds are
//! placed in the gaps between distinct training values, so that a training value never sits
//! on a threshold and the indicators of the training data do not depend on rounding.
//!
//! Missing values (NaN) are either an error or, with [`Missing::Indicator`], get one extra
//! indicator per base feature; a missing value then sets none of its feature's threshold
//! indicators. This is how a document that a retrieval run did not return is represented.
//!
//! The output is a CSR matrix in feature-major column order: the columns of feature 0 (its
//! thresholds in increasing order, then its missing indicator if any), then those of feature 1,
//! and so on. Rows list their columns in increasing order.
//!
//! The parts: `thresholds` (the fitted thresholds and the choices `Strategy` and `Missing`),
//! `config` (a binner's configuration, its defaults and its validation),
//! `fit` (fitting thresholds, reading columns in order through `order`), `transform` (to the
//! indicators or to bin codes), `checks` (the input checks that fit and transform share) and
//! `pairs` (the 2-D histograms that choose pairwise interactions; the pairs' codes and kernels
//! are in `crate::data::binned`).
//! This file lists them and re-exports the names the rest of the crate and the bindings use;
//! the parts import each other directly, never through here.

mod checks;
pub mod config;
pub mod fit;
mod order;
pub mod pairs;
pub mod thresholds;
pub mod transform;

pub use config::{BinnerConfig, Output, MAX_THRESHOLDS};
pub use fit::fit;
pub use pairs::pair_histograms;
pub use thresholds::{Missing, Strategy, Thresholds};
pub use transform::{code_width, codes, transform, Indicators};
