//! The work guard of every oracle: before any work starts, a query on which one oracle call
//! would take more than `WORK_BUDGET` steps is refused, with the loss's stated cost (from the
//! registry) and a cheaper loss that accepts the query (built by `from_name`). It reads what
//! each oracle states (`Oracle::extra_work`, `extra_work_labels`, `cheaper`, `parts`) and sits
//! above the registry and every oracle, so that no oracle file depends on it.

use crate::data::QueryGroups;
use crate::error::{Error, Result};
use crate::oracle::build::from_name;
use crate::oracle::interface::Oracle;
use crate::oracle::registry::{lookup, LossSpec};

/// The most steps one oracle call may take beyond its sort: those of DORM's O(n^3) assignment
/// on 500 documents (500^3), about 0.3 s per call on one core, and a training run makes one
/// call per query and iteration. It is the limit DORM had alone before every oracle's cost
/// was guarded.
pub const WORK_BUDGET: f64 = 1.25e8;

/// Refuses a query of `n_docs` documents when the oracle's `extra_work` there exceeds
/// `WORK_BUDGET` (a combination: when one of its parts' does).
pub fn check_query_len(oracle: &dyn Oracle, n_docs: usize) -> Result<()> {
    let parts = oracle.parts();
    if !parts.is_empty() {
        return parts
            .into_iter()
            .try_for_each(|p| check_query_len(p, n_docs));
    }
    check_work(oracle, n_docs, oracle.extra_work(n_docs), |o| {
        o.extra_work(n_docs)
    })
}

/// Refuses one query's labels: those the loss cannot grade (`Oracle::check_grades`), those on
/// which one call would exceed `WORK_BUDGET` (`Oracle::extra_work_labels`), and those whose
/// call would not fit in memory (`Oracle::check_memory`), in this order; a combination asks
/// each of its parts.
pub fn check_query_labels(oracle: &dyn Oracle, labels: &[f64], relevant: &[bool]) -> Result<()> {
    let parts = oracle.parts();
    if !parts.is_empty() {
        return parts
            .into_iter()
            .try_for_each(|p| check_query_labels(p, labels, relevant));
    }
    oracle.check_grades(labels, relevant)?;
    let work = oracle.extra_work_labels(labels, relevant);
    check_work(oracle, labels.len(), work, |o| {
        o.extra_work_labels(labels, relevant)
    })?;
    oracle.check_memory(labels, relevant)
}

/// Asks every oracle whether it accepts the labels of every query (`check_query_labels`):
/// `labels` and `relevant` in grouped order, query q spanning `bounds[q]..bounds[q + 1]`.
pub fn check_labels(
    oracles: &[&dyn Oracle],
    labels: &[f64],
    relevant: &[bool],
    bounds: &[usize],
) -> Result<()> {
    bounds.windows(2).try_for_each(|span| {
        let span = span[0]..span[1];
        oracles.iter().try_for_each(|o| {
            check_query_labels(*o, &labels[span.clone()], &relevant[span.clone()])
        })
    })
}

/// Asks every oracle whether it accepts the longest query of `groups`.
pub fn check_query_lens(oracles: &[&dyn Oracle], groups: &QueryGroups) -> Result<()> {
    let longest = (0..groups.n_queries())
        .map(|q| groups.bounds[q + 1] - groups.bounds[q])
        .max()
        .unwrap_or(0);
    oracles
        .iter()
        .try_for_each(|o| check_query_len(*o, longest))
}

/// The error when `oracle` takes `work` steps on a query of `n_docs` documents, if that is
/// over the budget; a `cheaper` name is the fix when `work_of` (its work on the same query)
/// is within budget.
fn check_work(
    oracle: &dyn Oracle,
    n_docs: usize,
    work: f64,
    work_of: impl Fn(&dyn Oracle) -> f64,
) -> Result<()> {
    if work <= WORK_BUDGET {
        return Ok(());
    }
    let name = oracle.name();
    let cost = LossSpec::parse(&name)
        .and_then(|spec| lookup(spec.base))
        .map_or("", |info| info.cost);
    // The cheaper names in order, then theirs (NDCG@k with a huge k leads on to NDCG).
    let mut candidates = oracle.cheaper();
    let mut fix = None;
    let mut next = 0;
    while fix.is_none() && next < candidates.len() && next < 16 {
        if let Ok(o) = from_name(&candidates[next]) {
            if work_of(o.as_ref()) <= WORK_BUDGET {
                fix = Some(candidates[next].clone());
            } else {
                candidates.extend(o.cheaper());
            }
        }
        next += 1;
    }
    let fix = match fix {
        Some(f) => format!("use {f:?}"),
        None => "use shorter queries".to_string(),
    };
    Err(Error::param(
        "loss",
        &format!(
            "a loss whose oracle takes at most {WORK_BUDGET:.3e} steps per query and \
             iteration; this data has a query of {n_docs} documents, on which {name:?} (cost \
             {cost}) takes about {work:.3e}: {fix}"
        ),
        format!("{name:?}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::ndcg_graded::GradedNdcgOracle;
    use crate::oracle::registry::LOSSES;

    /// Every loss of the registry against the one cost guard: its examples, its bench
    /// spellings and hostile ones (huge cutoffs and depths), on query lengths from 1 to 10^7.
    /// A query is refused exactly when the oracle's extra work there exceeds the budget; the
    /// refusal names a loss that accepts the query; the losses whose stated cost is
    /// O(n log n) or O(n) accept every length, and those with a larger term refuse some.
    #[test]
    fn the_cost_guard_follows_every_losss_stated_cost() {
        let lengths = [
            1usize, 2, 10, 100, 499, 500, 501, 1_000, 10_000, 22_360, 22_361, 100_000, 1_000_000,
            10_000_000,
        ];
        for info in LOSSES {
            let mut names: Vec<String> = info
                .examples
                .iter()
                .chain(info.bench)
                .map(|s| s.to_string())
                .collect();
            if info.cutoff {
                names.extend(["1", "10", "1000", "1000000"].map(|k| format!("{}@{k}", info.name)));
            }
            if info.options.contains(&"graded") {
                names.extend(
                    ["1", "10", "1000", "1000000"].map(|k| format!("{}@{k}:graded", info.name)),
                );
            }
            if info.options.contains(&"depth=R") {
                for depth in ["1", "30", "1000", "1000000"] {
                    names.push(format!("{}:depth={depth}", info.name));
                    names.push(format!("{}@10:depth={depth}", info.name));
                }
            }
            let bounded = info.cost == "O(n)" || info.cost.starts_with("O(n log n)");
            let mut refused_somewhere = false;
            for name in &names {
                let oracle = from_name(name).unwrap();
                for &n in &lengths {
                    let work = oracle.extra_work(n);
                    match check_query_len(oracle.as_ref(), n) {
                        Ok(()) => assert!(work <= WORK_BUDGET, "{name} at {n}: {work}"),
                        Err(e) => {
                            refused_somewhere = true;
                            assert!(work > WORK_BUDGET, "{name} at {n} refused: {e}");
                            let message = e.to_string();
                            let fix = message
                                .rsplit("use \"")
                                .next()
                                .and_then(|rest| rest.split('"').next())
                                .unwrap();
                            let fixed = from_name(fix).unwrap_or_else(|_| {
                                panic!("{name} at {n}: the fix {fix:?} of {message} is no loss")
                            });
                            assert!(check_query_len(fixed.as_ref(), n).is_ok(), "{message}");
                            assert!(message.contains(info.cost), "{message}");
                            assert!(message.contains(&format!("query of {n} documents")));
                        }
                    }
                }
            }
            if bounded {
                assert!(!refused_somewhere, "{} states {}", info.name, info.cost);
            } else {
                assert!(refused_somewhere, "{} states {}", info.name, info.cost);
            }
        }
    }

    /// The issue's cases: DORM with a huge depth is the same O(n^3) oracle as without one,
    /// and Algorithm 2 alone took 77 s per call on 10^6 documents.
    #[test]
    fn the_issues_costly_oracles_are_refused() {
        let at = |name: &str, n: usize| check_query_len(from_name(name).unwrap().as_ref(), n);
        assert!(at("dorm", 500).is_ok());
        assert!(at("dorm", 501).is_err());
        assert!(at("dorm@10:depth=1000000", 501).is_err());
        assert!(at("dorm@10:depth=30", 100_000).is_ok());
        assert!(at("map-greedy", 1_000_000).is_err());
        assert!(at("map", 10_000_000).is_ok());
        assert!(at("max(map,map-greedy)", 1_000_000).is_err());
    }

    #[test]
    fn the_work_guard_reads_the_grades() {
        // Without a cutoff the states are prod_g (n_g + 1): 3 grades of 40 documents make
        // 41^3 states (accepted); 6 grades of 20 make 21^6 = 8.6e7 states, times 6 (refused,
        // pointing at the cutoff 10, where they are at most 11^6 = 1.8e6).
        let unclipped = GradedNdcgOracle { cutoff: None };
        let three: Vec<f64> = (0..120).map(|i| (i % 3) as f64).collect();
        let six: Vec<f64> = (0..120).map(|i| (i % 6) as f64).collect();
        let rel = |l: &[f64]| l.iter().map(|&v| v > 0.0).collect::<Vec<_>>();
        assert!(check_query_labels(&unclipped, &three, &rel(&three)).is_ok());
        let message = check_query_labels(&unclipped, &six, &rel(&six))
            .unwrap_err()
            .to_string();
        assert!(message.contains("use \"ndcg@10:graded\""), "{message}");
        assert!(
            check_query_labels(&GradedNdcgOracle { cutoff: Some(10) }, &six, &rel(&six)).is_ok()
        );
    }
}
