//! The rows of a data set grouped by query.

use crate::error::{Error, Result};

/// Rows grouped by query. Queries are numbered 0..n_queries in the order of their codes
/// (the caller's sorted unique qids); inside a query, rows keep the caller's order, which
/// makes the grouping a stable sort.
#[derive(Debug, Clone)]
pub struct QueryGroups {
    /// Row indices in grouped order.
    pub order: Vec<usize>,
    /// Query q owns `order[bounds[q]..bounds[q + 1]]`.
    pub bounds: Vec<usize>,
}

impl QueryGroups {
    /// Groups rows by integer query codes in `0..n_queries` with a counting sort (stable).
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
            let c = usize::try_from(c)
                .ok()
                .filter(|&c| c < n_queries)
                .ok_or_else(|| {
                    Error::input(format!(
                        "query code {c} of row {row} is outside 0..{n_queries}"
                    ))
                })?;
            counts[c + 1] += 1;
        }
        for q in 0..n_queries {
            counts[q + 1] += counts[q];
        }
        let bounds = counts.clone();
        let mut next = counts;
        let mut order = vec![0usize; codes.len()];
        for (row, &c) in codes.iter().enumerate() {
            let c = c as usize;
            order[next[c]] = row;
            next[c] += 1;
        }
        Ok(QueryGroups { order, bounds })
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
        }
    }

    pub fn n_queries(&self) -> usize {
        self.bounds.len() - 1
    }

    pub fn n_rows(&self) -> usize {
        self.order.len()
    }

    /// The rows of query q, in the caller's order.
    #[inline]
    pub fn rows(&self, q: usize) -> &[usize] {
        &self.order[self.bounds[q]..self.bounds[q + 1]]
    }
}
