//! The loss registry: every loss svmmap knows, with its syntax, feature map and documentation.
//!
//! This table is the one owner of the loss names. The parser and the oracle factory
//! (`from_name`), the error messages, the fuzz checks (`fuzzing.rs`), the criterion benches, the
//! Python module `svmmap.losses` (through `_core.LOSSES`) and the tests all read it, so that a
//! new loss is added here once and is then parsed, documented, fuzzed, benched and tested.

use crate::oracle::interface::Oracle;
use crate::oracle::{acc, dorm, map, mrr, ndcg, ndcg_graded, pairwise, roc};

/// A loss name taken apart: "ndcg@10:paper" is base "ndcg", cutoff 10, options ["paper"].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LossSpec<'a> {
    pub base: &'a str,
    pub cutoff: Option<usize>,
    pub options: Vec<&'a str>,
}

impl<'a> LossSpec<'a> {
    /// Splits a name into base, cutoff and options; None when the syntax is wrong (an empty
    /// option, a cutoff that is not an integer >= 1).
    pub fn parse(name: &'a str) -> Option<Self> {
        let mut pieces = name.split(':');
        let head = pieces.next()?.trim();
        let options: Vec<&str> = pieces.map(str::trim).collect();
        if options.iter().any(|o| o.is_empty()) {
            return None;
        }
        let (base, cutoff) = match head.split_once('@') {
            Some((base, k)) => (base, Some(k.parse::<usize>().ok().filter(|&k| k > 0)?)),
            None => (head, None),
        };
        Some(LossSpec {
            base,
            cutoff,
            options,
        })
    }
}

/// Why a spec was refused by its loss's builder.
pub enum BuildError {
    /// The cutoff or options do not belong to this loss: the generic "one of ..." message.
    Syntax,
    /// An option is malformed: (parameter name, what was expected).
    Option(&'static str, &'static str),
}

/// One loss of the registry.
pub struct LossInfo {
    /// The base name ("ndcg" for "ndcg@10:paper").
    pub name: &'static str,
    /// Whether "@k" is accepted (a cutoff k >= 1).
    pub cutoff: bool,
    /// The options accepted after a colon, as documented ("paper", "depth=R").
    pub options: &'static [&'static str],
    /// Time of one oracle call on a query of n documents (P relevant, N not).
    pub cost: &'static str,
    /// The joint feature map Psi the loss is paired with.
    pub feature_map: &'static str,
    /// Whether the training objective is convex in w (DORM's target ranking depends on w).
    pub convex: bool,
    /// The paper the loss and its oracle follow.
    pub reference: &'static str,
    /// One line for users.
    pub doc: &'static str,
    /// Names that exercise every accepted form on small queries, for tests and fuzzing.
    pub examples: &'static [&'static str],
    /// Names the criterion benches time (realistic cutoffs and depths).
    pub bench: &'static [&'static str],
    build: fn(&LossSpec<'_>) -> Result<Box<dyn Oracle>, BuildError>,
}

impl std::fmt::Debug for LossInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LossInfo")
            .field("name", &self.name)
            .finish()
    }
}

impl LossInfo {
    /// Builds the oracle of a spec whose base is this loss.
    pub fn build(&self, spec: &LossSpec<'_>) -> Result<Box<dyn Oracle>, BuildError> {
        if spec.cutoff.is_some() && !self.cutoff {
            return Err(BuildError::Syntax);
        }
        if !spec.options.is_empty() && self.options.is_empty() {
            return Err(BuildError::Syntax);
        }
        (self.build)(spec)
    }

    /// The accepted spellings, e.g. "ndcg, ndcg@k, ndcg@k:paper".
    pub fn syntax(&self) -> String {
        let mut forms = vec![self.name.to_string()];
        if self.cutoff {
            forms.push(format!("{}@k", self.name));
        }
        for option in self.options {
            let head = if self.cutoff {
                format!("{}@k", self.name)
            } else {
                self.name.to_string()
            };
            forms.push(format!("{head}:{option}"));
        }
        forms.join(", ")
    }
}

fn map_with(algorithm: map::MapAlgorithm) -> Box<dyn Oracle> {
    Box::new(map::MapOracle { algorithm })
}

/// Every loss, in the order of the documentation.
pub static LOSSES: &[LossInfo] = &[
    LossInfo {
        name: "map",
        cost: "O(n log n) (Algorithm 2's O(P N) loop when P <= 4)",
        cutoff: false,
        options: &[],
        feature_map: "psi_po",
        convex: true,
        reference: "Yue, Finley, Radlinski, Joachims, SIGIR 2007",
        doc: "1 - average precision; the exact oracle picks Algorithm 2 or the O(n log n) \
              divide and conquer by the query's number of relevant documents",
        examples: &["map"],
        bench: &["map"],
        build: |_| Ok(map_with(map::MapAlgorithm::Auto)),
    },
    LossInfo {
        name: "map-greedy",
        cost: "O(n log n + P N)",
        cutoff: false,
        options: &[],
        feature_map: "psi_po",
        convex: true,
        reference: "Yue, Finley, Radlinski, Joachims, SIGIR 2007 (Algorithm 2)",
        doc: "the MAP loss through Yue et al.'s Algorithm 2 only",
        examples: &["map-greedy"],
        bench: &["map-greedy"],
        build: |_| Ok(map_with(map::MapAlgorithm::Greedy)),
    },
    LossInfo {
        name: "map-fast",
        cost: "O(n log n)",
        cutoff: false,
        options: &[],
        feature_map: "psi_po",
        convex: true,
        reference: "Yue et al. 2007; svmmap's O(n log n) divide and conquer",
        doc: "the MAP loss through the O(n log n) divide and conquer only",
        examples: &["map-fast"],
        bench: &["map-fast"],
        build: |_| Ok(map_with(map::MapAlgorithm::Fast)),
    },
    LossInfo {
        name: "roc",
        cost: "O(n log n)",
        cutoff: false,
        options: &[],
        feature_map: "psi_po",
        convex: true,
        reference: "Joachims, ICML 2005",
        doc: "1 - ROC area: the fraction of relevant/non-relevant pairs ranked the wrong way",
        examples: &["roc"],
        bench: &["roc"],
        build: |_| Ok(Box::new(roc::RocOracle)),
    },
    LossInfo {
        name: "pairwise",
        cost: "O(n log n)",
        cutoff: false,
        options: &["count"],
        feature_map: "psi_po",
        convex: true,
        reference: "Joachims, KDD 2006 (SVM^rank's pairs in the 1-slack form)",
        doc: "the fraction of document pairs with different graded labels (2 over 1 over 0) \
              ranked the wrong way; \":count\" counts them, SVM^rank's scaling of C",
        examples: &["pairwise", "pairwise:count"],
        bench: &["pairwise"],
        build: |spec| match spec.options.as_slice() {
            [] => Ok(Box::new(pairwise::PairwiseOracle { count: false })),
            ["count"] => Ok(Box::new(pairwise::PairwiseOracle { count: true })),
            _ => Err(BuildError::Syntax),
        },
    },
    LossInfo {
        name: "ndcg",
        cost: "O(n log n + k^2) with a cutoff k, O(n log n) without; \":graded\": \
               O(n log n + G S + G^2 k^2 log n) with G the query's distinct grades, n_g \
               documents of grade g and S = prod_g (min(n_g, k) + 1) <= (k + 1)^G states, \
               S = prod_g (n_g + 1) <= C(n + G, G) without a cutoff",
        cutoff: true,
        options: &["paper", "graded"],
        feature_map: "psi_po",
        convex: true,
        reference: "Chakrabarti, Khanna, Sawant, Bhattacharyya, KDD 2008 (section 3.4); \
                    \":graded\": svmmap's exact dynamic program over grade counts",
        doc: "1 - NDCG@k (or without a cutoff), discount 1/log2(1 + rank); \":paper\" selects \
              the paper's discount (1 for the first two ranks, 1/log2(rank) after); \
              \":graded\" uses the gain 2^label - 1 of the graded labels (as svmmap.metrics) \
              with the partial order of the grades as feature map",
        examples: &[
            "ndcg",
            "ndcg@1",
            "ndcg@3",
            "ndcg@3:paper",
            "ndcg:graded",
            "ndcg@1:graded",
            "ndcg@3:graded",
        ],
        bench: &["ndcg@10", "ndcg", "ndcg@10:paper", "ndcg@10:graded"],
        build: |spec| {
            let discount = match spec.options.as_slice() {
                [] => ndcg::Discount::Log2,
                ["paper"] => ndcg::Discount::Paper,
                ["graded"] => {
                    return Ok(Box::new(ndcg_graded::GradedNdcgOracle {
                        cutoff: spec.cutoff,
                    }))
                }
                _ => return Err(BuildError::Syntax),
            };
            Ok(Box::new(ndcg::NdcgOracle {
                cutoff: spec.cutoff,
                discount,
            }))
        },
    },
    LossInfo {
        name: "mrr",
        cost: "O(n log n)",
        cutoff: true,
        options: &[],
        feature_map: "phi_mrr",
        convex: true,
        reference: "Chakrabarti, Khanna, Sawant, Bhattacharyya, KDD 2008 (section 3.6)",
        doc: "1 - reciprocal rank of the first relevant document (0 beyond the cutoff k)",
        examples: &["mrr", "mrr@1", "mrr@3"],
        bench: &["mrr@10", "mrr"],
        build: |spec| {
            Ok(Box::new(mrr::MrrOracle {
                cutoff: spec.cutoff,
            }))
        },
    },
    LossInfo {
        name: "acc",
        cost: "O(n)",
        cutoff: false,
        options: &[],
        feature_map: "per_document",
        convex: true,
        reference: "Yue et al. 2007 (the SVM_acc baseline)",
        doc: "the classification hinge of a linear SVM on the documents",
        examples: &["acc"],
        bench: &["acc"],
        build: |_| Ok(Box::new(acc::AccOracle { balanced: false })),
    },
    LossInfo {
        name: "acc2",
        cost: "O(n)",
        cutoff: false,
        options: &[],
        feature_map: "per_document",
        convex: true,
        reference: "Yue et al. 2007 (the SVM_acc2 baseline)",
        doc: "acc with relevant documents weighted by #non-relevant / #relevant of their query",
        examples: &["acc2"],
        bench: &[],
        build: |_| Ok(Box::new(acc::AccOracle { balanced: true })),
    },
    LossInfo {
        name: "dorm",
        cost: "O(m^2 n) with m = max(k, R) for a cutoff k and depth R, O(n^3) without either",
        cutoff: true,
        options: &["depth=R"],
        feature_map: "phi_dorm",
        convex: false,
        reference: "Le and Smola, 2007 (direct optimization of ranking measures)",
        doc: "NDCG@k with the permutation feature map A(r) = 1/sqrt(1 + r), solved as an \
              assignment problem (O(n^3) per query; \":depth=R\" sets A(r) = 0 from rank R on)",
        examples: &["dorm", "dorm@3"],
        bench: &["dorm@10:depth=30"],
        build: |spec| {
            let mut depth = None;
            for option in &spec.options {
                let value = option.strip_prefix("depth=").ok_or(BuildError::Syntax)?;
                depth = Some(
                    value
                        .parse::<usize>()
                        .ok()
                        .filter(|&d| d > 0)
                        .ok_or(BuildError::Option("dorm depth", "an integer >= 1"))?,
                );
            }
            Ok(Box::new(dorm::DormOracle {
                cutoff: spec.cutoff,
                depth,
            }))
        },
    },
];

/// Shared-slack combinations exercised by tests and fuzzing beside the single losses.
pub static COMBINATION_EXAMPLES: &[&[&str]] = &[&["map", "roc"], &["ndcg@3", "mrr@3"]];

/// The registry entry of a base name.
pub fn lookup(base: &str) -> Option<&'static LossInfo> {
    LOSSES.iter().find(|info| info.name == base)
}

/// The power of ten of the weight a loss gets in a list of several (`loss=["map", "ndcg@10",
/// "mrr@10"]`, `--loss map,ndcg@10,mrr@10`), before the list's weights are divided by their
/// largest (`list_weights`). Equal weights are a zero model on queries with many relevant
/// documents (a third of 150, see `benchmarks/combo_weights.py` and docs/guide/losses.md,
/// "Weights"): Chakrabarti's phi_mrr is not scaled by 1/(P N) as Psi_po is, so its hinge grows
/// with the query and pulls w to 0 unless its weight is of the order of 1/(P N) on such
/// queries; and NDCG with a cutoff has a larger hinge than MAP at the same w, so in a shared
/// slack it would take the maximum over MAP. A name that is already weighted ("0.5*map"), a
/// "max(...)" and every other loss keep 1.
pub fn list_weight_exponent(name: &str) -> i32 {
    match LossSpec::parse(name.trim()) {
        Some(spec) if spec.base == "mrr" => -4,
        Some(spec) if (spec.base == "ndcg" || spec.base == "dorm") && spec.cutoff.is_some() => -1,
        _ => 0,
    }
}

/// The default weights of a list of losses as spelled (`list_weight_exponent`), scaled so that
/// the largest is 1: C keeps its meaning for the list's leading kind of loss, and a list of one
/// loss, or of losses of one kind, is the plain list. Each weight is the decimal power of ten
/// it is (1e-4 read as the number "1e-4" is, correctly rounded).
pub fn list_weights<S: AsRef<str>>(names: &[S]) -> Vec<f64> {
    let exponents: Vec<i32> = names
        .iter()
        .map(|n| list_weight_exponent(n.as_ref()))
        .collect();
    let largest = exponents.iter().copied().max().unwrap_or(0);
    exponents
        .into_iter()
        .map(|e| {
            if e == largest {
                1.0
            } else {
                format!("1e{}", e - largest).parse().unwrap_or(1.0)
            }
        })
        .collect()
}

/// The option that asks for NDCG@k with a latent target ("ndcg@10:latent"; Yu and Joachims,
/// ICML 2009): the target is the best-scored ranking of loss 0 instead of the ideal ranking.
/// Its objective is not convex, so it is no oracle of this table: the training routine fits it
/// by CCCP rounds, each the convex problem of the paper's loss (the name this returns) with the
/// target fixed. `latent_base("ndcg@10:latent")` is `Some("ndcg@10")`; a name without the option
/// is None. Only "ndcg" with a cutoff takes it (without one, every relevant document is in the
/// target's top and the target is the ideal ranking, the paper's loss).
pub fn latent_base(name: &str) -> Option<String> {
    let spec = LossSpec::parse(name.trim())?;
    match (spec.base, spec.cutoff, spec.options.as_slice()) {
        ("ndcg", Some(k), ["latent"]) => Some(format!("ndcg@{k}")),
        // The graded loss with the same latent target: the best-scored ranking of graded
        // NDCG@k 1 (python/svmmap/_fit/latent.py, graded_target_coefficients).
        ("ndcg", Some(k), ["graded", "latent"]) => Some(format!("ndcg@{k}:graded")),
        _ => None,
    }
}

/// The latent spelling in the form the help shows.
pub const LATENT_FORM: &str = "ndcg@k:latent, ndcg@k:graded:latent";

/// Every accepted spelling, for error messages: "map, map-greedy, ..., or max(name,name,...)
/// for a shared slack".
pub fn names_help() -> String {
    let forms: Vec<String> = LOSSES.iter().map(LossInfo::syntax).collect();
    format!(
        "{}, {LATENT_FORM} (alone) (or max(name,name,...) for a shared slack)",
        forms.join(", ")
    )
}

/// Every example name, single losses first, then the shared-slack combinations as
/// "max(a,b)".
pub fn example_names() -> Vec<String> {
    let mut names: Vec<String> = LOSSES
        .iter()
        .flat_map(|info| info.examples.iter().map(|s| s.to_string()))
        .collect();
    names.extend(
        COMBINATION_EXAMPLES
            .iter()
            .map(|parts| format!("max({})", parts.join(","))),
    );
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_and_bench_name_builds_and_names_itself() {
        for info in LOSSES {
            for name in info.examples.iter().chain(info.bench) {
                let oracle = super::super::from_name(name).unwrap_or_else(|e| {
                    panic!("{name} is listed for {} but fails: {e}", info.name)
                });
                assert_eq!(
                    &oracle.name(),
                    name,
                    "an oracle names itself as it is spelled"
                );
                assert_eq!(LossSpec::parse(name).unwrap().base, info.name);
            }
        }
    }

    #[test]
    fn names_are_unique_and_the_help_lists_each() {
        let help = names_help();
        for (i, info) in LOSSES.iter().enumerate() {
            assert!(LOSSES[i + 1..].iter().all(|other| other.name != info.name));
            assert!(
                help.contains(info.name),
                "{} missing from {help}",
                info.name
            );
        }
    }

    #[test]
    fn only_ndcg_with_a_cutoff_takes_the_latent_option() {
        assert_eq!(latent_base("ndcg@10:latent").as_deref(), Some("ndcg@10"));
        assert_eq!(latent_base(" ndcg@3 : latent ").as_deref(), Some("ndcg@3"));
        assert_eq!(
            latent_base("ndcg@10:graded:latent").as_deref(),
            Some("ndcg@10:graded")
        );
        for name in [
            "ndcg:latent",
            "mrr@10:latent",
            "ndcg@10",
            "ndcg@10:paper:latent",
            "ndcg@10:latent:graded",
            "ndcg:graded:latent",
            "map",
        ] {
            assert!(latent_base(name).is_none(), "{name}");
        }
        // A latent name is no oracle: lists, weights and max(...) refuse it.
        for name in [
            "ndcg@10:latent",
            "0.5*ndcg@10:latent",
            "max(map,ndcg@10:latent)",
            "ndcg@10:graded:latent",
        ] {
            let message = super::super::from_name(name).err().unwrap().to_string();
            assert!(message.contains("alone"), "{name}: {message}");
        }
    }

    #[test]
    fn forms_outside_the_registry_are_refused() {
        for bad in [
            "map@3",
            "roc:paper",
            "acc@1",
            "ndcg:fast",
            "ndcg@0",
            "mrr@x",
            "dorm:depth=0",
            "ndcg@3:",
        ] {
            assert!(super::super::from_name(bad).is_err(), "{bad} was accepted");
        }
    }
}
