//! Loss-augmented inference ("oracles"): for one query, the ranking ybar that maximizes
//! Delta(y*, y) + w.Psi(x, y) - w.Psi(x, y*), the most violated constraint of the structural SVM.
//!
//! Every feature map used here is linear in the documents, so the difference
//! deltaPsi(ybar) = Psi(x, y*) - Psi(x, ybar) is written as per-document coefficients c with
//! deltaPsi = sum_i c_i x_i. The oracle returns Delta(y*, ybar) and fills c; the hinge value of
//! the query is then Delta - sum_i c_i s_i with s_i = w.x_i. The solver builds a cutting plane
//! as X^T c, so an oracle never sees the features, only the scores.
//!
//! This file lists the parts and re-exports the names the rest of the crate uses; the parts
//! import each other directly, never through here, so that no two files import each other.

pub mod acc;
pub mod build;
pub mod combo;
pub mod dorm;
pub mod hinge;
pub mod interface;
pub(crate) mod interleave;
pub mod map;
pub mod mrr;
pub mod ndcg;
pub mod ndcg_graded;
pub mod pairwise;
pub mod registry;
pub mod roc;
pub(crate) mod sorting;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod testing;
pub mod usable;
pub mod weighted;
pub mod work;

pub use build::{from_group, from_groups, from_name, split_weight, LossTerm};
pub use interface::{hinge, Oracle, QueryKind};
pub use interleave::Sorted;
pub use usable::{QueryCounts, QueryUse};
pub use work::{check_labels, check_query_labels, check_query_len, check_query_lens, WORK_BUDGET};
