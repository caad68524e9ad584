//! The usable-query rule, in one place: which queries of a data set can contribute a constraint
//! to training with the given losses, how many of each kind there are, and the error when none
//! can. The solver (`RankingProblem`), the bindings (`problem_summary`, `query_kinds`, the
//! distributed cut sums) and, through them, the Python tools read it from here.
//!
//! The binary rule (`QueryKind::of`): a query trains when it has a relevant and a non-relevant
//! document. A graded loss ("pairwise", `Oracle::graded`) also accepts a query whose documents
//! are all relevant or all non-relevant but carry two different labels; such a query is
//! "partial": only the losses that can use it (`Oracle::usable`) see it.

use crate::error::{Error, Result};
use crate::oracle::interface::{Oracle, QueryKind};

/// How many queries can contribute constraints, and why the others cannot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueryCounts {
    pub usable: usize,
    pub no_relevant: usize,
    pub all_relevant: usize,
    /// Some loss uses graded labels (a query with two different labels can train), so the
    /// error when no query is usable states that rule too.
    pub graded: bool,
}

impl QueryCounts {
    /// Counts one query of the given kind.
    pub fn add(&mut self, kind: QueryKind) {
        match kind {
            QueryKind::Usable => self.usable += 1,
            QueryKind::NoRelevant => self.no_relevant += 1,
            QueryKind::AllRelevant => self.all_relevant += 1,
        }
    }

    /// The counts of several parts of a data set, added up.
    pub fn merged(parts: &[QueryCounts]) -> QueryCounts {
        parts
            .iter()
            .fold(QueryCounts::default(), |a, b| QueryCounts {
                usable: a.usable + b.usable,
                no_relevant: a.no_relevant + b.no_relevant,
                all_relevant: a.all_relevant + b.all_relevant,
                graded: a.graded || b.graded,
            })
    }

    pub fn total(&self) -> usize {
        self.usable + self.no_relevant + self.all_relevant
    }

    /// Training needs at least one usable query; the error says how the others failed and
    /// states the rule of the losses at hand.
    pub fn require_usable(&self, threshold: f64) -> Result<()> {
        if self.usable == 0 {
            return Err(Error::NoUsableQueries {
                n_queries: self.total(),
                no_relevant: self.no_relevant,
                all_relevant: self.all_relevant,
                threshold,
                graded: self.graded,
            });
        }
        Ok(())
    }
}

/// Which queries train, for one data set and a set of losses.
#[derive(Debug, Clone)]
pub struct QueryUse {
    /// The binary kind of every query.
    pub kinds: Vec<QueryKind>,
    /// Whether the query contributes to training (to at least one loss).
    pub usable: Vec<bool>,
    /// Usable, but not by the binary rule: only the losses for which `Oracle::usable` holds see it.
    pub partial: Vec<bool>,
    pub counts: QueryCounts,
}

impl QueryUse {
    /// The rule applied to every query: `labels` and `relevant` hold the documents in grouped
    /// order, query q spanning `bounds[q]..bounds[q + 1]`. With no oracles, the binary rule alone.
    pub fn of(
        labels: &[f64],
        relevant: &[bool],
        bounds: &[usize],
        oracles: &[&dyn Oracle],
    ) -> Self {
        let n_queries = bounds.len().saturating_sub(1);
        let mut out = QueryUse {
            kinds: Vec::with_capacity(n_queries),
            usable: Vec::with_capacity(n_queries),
            partial: Vec::with_capacity(n_queries),
            counts: QueryCounts {
                graded: oracles.iter().any(|o| o.graded()),
                ..QueryCounts::default()
            },
        };
        for q in 0..n_queries {
            let span = bounds[q]..bounds[q + 1];
            let kind = QueryKind::of(&relevant[span.clone()]);
            let partial = kind != QueryKind::Usable
                && oracles
                    .iter()
                    .any(|o| o.usable(&labels[span.clone()], &relevant[span.clone()]));
            out.counts
                .add(if partial { QueryKind::Usable } else { kind });
            out.kinds.push(kind);
            out.usable.push(kind == QueryKind::Usable || partial);
            out.partial.push(partial);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::from_name;

    #[test]
    fn binary_and_graded_rules_by_hand() {
        // Three queries: relevant and non-relevant; all non-relevant with labels 0 and -1
        // (graded: two labels); all relevant with one label (no loss can use it).
        let labels = [1.0, 0.0, 0.0, -1.0, 2.0, 2.0];
        let relevant: Vec<bool> = labels.iter().map(|&l| l > 0.0).collect();
        let bounds = [0, 2, 4, 6];
        let binary = QueryUse::of(&labels, &relevant, &bounds, &[]);
        assert_eq!(binary.usable, [true, false, false]);
        assert_eq!(
            (
                binary.counts.usable,
                binary.counts.no_relevant,
                binary.counts.all_relevant,
                binary.counts.graded
            ),
            (1, 1, 1, false)
        );
        let pairwise = from_name("pairwise").unwrap();
        let map = from_name("map").unwrap();
        let graded = QueryUse::of(
            &labels,
            &relevant,
            &bounds,
            &[map.as_ref(), pairwise.as_ref()],
        );
        assert_eq!(graded.usable, [true, true, false]);
        assert_eq!(graded.partial, [false, true, false]);
        assert_eq!(graded.kinds, binary.kinds);
        assert_eq!(
            (
                graded.counts.usable,
                graded.counts.no_relevant,
                graded.counts.all_relevant
            ),
            (2, 0, 1)
        );
        assert!(graded.counts.graded);
    }

    #[test]
    fn the_error_states_the_rule_of_the_losses() {
        let none = QueryCounts {
            no_relevant: 2,
            ..QueryCounts::default()
        };
        let binary = none.require_usable(0.0).unwrap_err().to_string();
        assert!(
            binary.contains("both a relevant and a non-relevant document"),
            "{binary}"
        );
        let graded = QueryCounts {
            graded: true,
            ..none
        }
        .require_usable(0.0)
        .unwrap_err()
        .to_string();
        assert!(graded.contains("two different labels"), "{graded}");
    }
}
