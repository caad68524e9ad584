"""Private: the search's rule for large data, a function of the number of training queries.

A split of the search only ranks candidates against each other; the model that is kept is the
refit on all the training data. Past a few thousand queries the held-out estimate that ranks
them is already precise (its noise shrinks with the validation queries, which are all kept),
while a fit's cost keeps growing with the training queries. So a split whose training part has
more than ``max_train_queries`` queries trains on that many of them, spread evenly over its
training queries in their order. svmmap's C multiplies the mean loss over queries (Yue et al.'s
OP 1 with C/n), so a C means the same regularization per query at any number of queries, and
the C chosen on the smaller training parts carries over to the refit. Data with at most that
many training queries per split (MQ2008's folds, a few hundred) is searched exactly as before.
"""

from __future__ import annotations

from typing import List, Optional

import numpy as np

from .splits import Split

__all__ = ["limit_training_queries", "training_queries"]


def limit_training_queries(splits: List[Split], codes: np.ndarray, max_train_queries: Optional[int]) -> List[Split]:
    """``splits`` with each training part cut to at most ``max_train_queries`` whole queries
    (None: as given). The queries kept are the split's training queries, numbered 0 .. m - 1
    in order of their query codes, at the positions ``floor(i * m / max_train_queries)``
    for i = 0 .. max_train_queries - 1: evenly spaced, so that no stretch of the query order
    is left out, and the same on every run. The rows kept stay in the order given (rows in
    increasing order still train in place, without a copy of X); the validation rows are
    unchanged."""
    if max_train_queries is None:
        return splits
    out: List[Split] = []
    for train, test in splits:
        train_codes = codes[train]
        queries = np.unique(train_codes)
        if queries.size <= max_train_queries:
            out.append((train, test))
            continue
        kept = queries[(np.arange(max_train_queries) * queries.size) // max_train_queries]
        out.append((train[np.isin(train_codes, kept)], test))
    return out


def training_queries(splits: List[Split], codes: np.ndarray) -> List[int]:
    """The number of training queries of each split (what its fits were trained on)."""
    return [int(np.unique(codes[train]).size) for train, _ in splits]
