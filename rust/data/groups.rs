//! The rows of a data set grouped by query.

use crate::error::{Error, Result};

/// Rows grouped by query. Queries are numbered 0..n_queries in the order of their codes
/// (the caller's sorted unique qids); inside a query, rows keep the caller's order, which
/// makes the grouping a stable sort.
///
/// A data set's rows need not all belong to a query: the code `NOT_IN_SET` (-1) leaves a row
/// out of every query, so that a model can be trained on a subset of the rows of a matrix
/// (one split of a cross-validation) without copying them. The grouping of the rows kept is
/// the one their subset, taken in row order, would get, so everything computed query by query
/// (the oracles, the cut sums, the metrics) is the same, bit for bit, as on that subset.
#[derive(Debug, Clone)]
pub struct QueryGroups {
    /// Indices of the rows in a query, in grouped order.
    pub order: Vec<usize>,
    /// Query q owns `order[bounds[q]..bounds[q + 1]]`.
    pub bounds: Vec<usize>,
    /// The rows of the data set, in a query or not (the length of the codes).
    n_rows: usize,
}

/// The query code of a row that belongs to no query (see `QueryGroups`).
pub const NOT_IN_SET: i64 = -1;

impl QueryGroups {
    /// Groups rows by integer query codes in `0..n_queries` with a counting sort (stable);
    /// rows of code `NOT_IN_SET` (-1) are left out of every query.
    pub fn from_codes(codes: &[i64], n_queries: usize) -> Result<Self> {
        // Every query needs a row; this also keeps an absurd count from being allocated.
        if n_queries > codes.len() {
            return Err(Error::input(format!(
                "{n_queries} queries for {} rows: every query needs at least one row",
                codes.len()
            )));
        }
        let mut counts = vec![0usize; n_queries + 1];
        for (row, &c) in codes.iter().enumerate() {
            if c == NOT_IN_SET {
                continue;
            }
            let c = usize::try_from(c)
                .ok()
                .filter(|&c| c < n_queries)
                .ok_or_else(|| {
                    Error::input(format!(
                        "query code {c} of row {row} is outside 0..{n_queries} (or -1: in no query)"
                    ))
                })?;
            counts[c + 1] += 1;
        }
        for q in 0..n_queries {
            counts[q + 1] += counts[q];
        }
        let bounds = counts.clone();
        let mut next = counts;
        let mut order = vec![0usize; bounds[n_queries]];
        for (row, &c) in codes.iter().enumerate() {
            // Every other code was checked in the first pass.
            if c == NOT_IN_SET {
                continue;
            }
            let c = c as usize;
            order[next[c]] = row;
            next[c] += 1;
        }
        Ok(QueryGroups {
            order,
            bounds,
            n_rows: codes.len(),
        })
    }

    /// Rows of consecutive runs: each maximal run of equal qids is a query, as in a LETOR file.
    pub fn contiguous(sizes: &[usize]) -> Self {
        let mut bounds = Vec::with_capacity(sizes.len() + 1);
        bounds.push(0);
        for s in sizes {
            bounds.push(bounds.last().copied().unwrap_or(0) + s);
        }
        let n = bounds.last().copied().unwrap_or(0);
        QueryGroups {
            order: (0..n).collect(),
            bounds,
            n_rows: n,
        }
    }

    pub fn n_queries(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The rows of the data set, whether in a query or not: the length of every per-row
    /// array (labels, scores) that goes with the groups.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// The rows that belong to a query.
    pub fn n_grouped(&self) -> usize {
        self.order.len()
    }

    /// The rows of query q, in the caller's order.
    #[inline]
    pub fn rows(&self, q: usize) -> &[usize] {
        &self.order[self.bounds[q]..self.bounds[q + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of code -1 belong to no query; the others are grouped as their subset would be.
    /// By hand: codes [1, -1, 0, 1, -1, 0, 2] put rows 2 and 5 in query 0, rows 0 and 3 in
    /// query 1 and row 6 in query 2, each in row order, exactly as the codes [1, 0, 1, 0, 2]
    /// of the subset of rows [0, 2, 3, 5, 6] put its rows 1, 3 / 0, 2 / 4.
    #[test]
    fn rows_of_code_minus_one_are_left_out_and_the_rest_grouped_as_their_subset() {
        let g = QueryGroups::from_codes(&[1, -1, 0, 1, -1, 0, 2], 3).unwrap();
        assert_eq!(g.n_rows(), 7);
        assert_eq!(g.n_grouped(), 5);
        assert_eq!(g.n_queries(), 3);
        assert_eq!(g.rows(0), &[2, 5]);
        assert_eq!(g.rows(1), &[0, 3]);
        assert_eq!(g.rows(2), &[6]);
        let kept = [0usize, 2, 3, 5, 6];
        let subset = QueryGroups::from_codes(&[1, 0, 1, 0, 2], 3).unwrap();
        assert_eq!(subset.bounds, g.bounds);
        let mapped: Vec<usize> = subset.order.iter().map(|&r| kept[r]).collect();
        assert_eq!(mapped, g.order);
    }

    #[test]
    fn other_negative_codes_and_codes_past_the_queries_are_refused() {
        assert!(QueryGroups::from_codes(&[0, -2], 1).is_err());
        assert!(QueryGroups::from_codes(&[0, 1], 1).is_err());
        // Every row out of the set: no query, nothing to group.
        let none = QueryGroups::from_codes(&[-1, -1], 0).unwrap();
        assert_eq!(
            (none.n_queries(), none.n_grouped(), none.n_rows()),
            (0, 0, 2)
        );
    }
}
