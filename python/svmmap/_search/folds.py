"""QueryKFold: svmmap's own query-grouped folds, the splits of ``SVMMapCV(cv=k)``.

scikit-learn's ``GroupKFold`` changed how it assigns groups to folds between releases (1.6 and
1.7 against 1.9 chose different C on the same data), so a C chosen by ``SVMMapCV(cv=5)`` would
depend on the installed scikit-learn. The rule here is svmmap's and stays fixed: the distinct
query ids in sorted order, cut into k consecutive blocks as ``KFold`` cuts rows.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterator, Tuple

import numpy as np
from sklearn.model_selection import BaseCrossValidator

from .._validation import check_qid

__all__ = ["QueryKFold"]


class QueryKFold(BaseCrossValidator):
    """K folds of whole queries: scikit-learn's ``KFold`` applied to the distinct query ids.

    The distinct query ids (``groups``) are numbered in sorted order (in order of first
    appearance when they cannot be sorted, e.g. a mix of integers and strings). With
    ``shuffle=False`` these numbered queries are cut into ``n_splits`` consecutive blocks;
    with ``shuffle=True`` they are first permuted by ``random_state``. The first
    ``n_queries % n_splits`` blocks hold ``n_queries // n_splits + 1`` queries, the others
    ``n_queries // n_splits``. Split i validates on the rows of block i (in row order) and
    trains on all the other rows, so no query is cut between training and validation.

    The folds depend only on the set of query ids (not on the order of the rows, on the query
    sizes or on the scikit-learn version): ``SVMMapCV(cv=k)`` uses ``QueryKFold(k)`` and so
    chooses the same C wherever it runs. The blocks balance the number of queries, not of
    rows, as the folds of LETOR data sets do.

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds, at least 2 (and at most the number of queries).
    shuffle : bool, default=False
        Permute the queries before cutting them into blocks.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=None
        With ``shuffle=True``: the permutation's seed. An integer seeds
        ``numpy.random.RandomState``, whose permutations NumPy keeps identical across
        releases, so the folds are reproducible; None draws new folds at every ``split``.
        Must be None when ``shuffle=False`` (as in scikit-learn's ``KFold``).

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap.model_selection import QueryKFold
    >>> qid = np.array([7, 7, 3, 3, 9, 5, 5])
    >>> [test.tolist() for _, test in QueryKFold(n_splits=3).split(qid, groups=qid)]
    [[2, 3, 5, 6], [0, 1], [4]]

    It plugs into scikit-learn's searches, which pass it ``groups=qid`` (it requests
    ``groups`` under metadata routing, as ``GroupKFold`` does; see the guide's scikit-learn page).
    """

    # scikit-learn's metadata routing passes groups to a splitter that asks for it.
    __metadata_request__split = {"groups": True}

    def __init__(self, n_splits: int = 5, *, shuffle: bool = False, random_state: Any = None) -> None:
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def _checked(self) -> int:
        k = self.n_splits
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
            raise ValueError(f"QueryKFold's n_splits must be an integer >= 2, got {k!r}")
        if not isinstance(self.shuffle, (bool, np.bool_)):
            raise ValueError(f"QueryKFold's shuffle must be True or False, got {self.shuffle!r}")
        if not self.shuffle and self.random_state is not None:
            raise ValueError(
                "QueryKFold's random_state has no effect with shuffle=False: leave it None or set shuffle=True"
            )
        return int(k)

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """The number of splits, ``n_splits``."""
        return self._checked()

    def _order(self, n_queries: int) -> np.ndarray:
        """The query numbers in the order they are cut into blocks."""
        if not self.shuffle:
            return np.arange(n_queries)
        state = self.random_state
        if state is None:
            return np.random.RandomState().permutation(n_queries)
        if isinstance(state, (np.random.RandomState, np.random.Generator)):
            return np.asarray(state.permutation(n_queries))
        if isinstance(state, bool) or not isinstance(state, numbers.Integral):
            raise ValueError(
                f"QueryKFold's random_state must be an integer, a numpy RandomState or Generator, or None, got {state!r}"
            )
        return np.random.RandomState(int(state)).permutation(n_queries)

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
        """Yield (training rows, validation rows) for each fold, as int64 index arrays.

        ``groups`` holds one query id per row of ``X`` (required).
        """
        k = self._checked()
        if groups is None:
            raise ValueError("QueryKFold splits whole queries and needs groups=: one query id per row (e.g. qid)")
        n_rows = _n_rows(X, groups)
        codes, _ = check_qid(groups, n_rows, required_by="QueryKFold", qid_name="groups")
        n_queries = int(codes.max()) + 1 if codes.size else 0
        if k > n_queries:
            raise ValueError(f"QueryKFold(n_splits={k}) needs at least {k} queries, got {n_queries}")
        order = self._order(n_queries)
        small, extra = divmod(n_queries, k)
        start = 0
        for fold in range(k):
            stop = start + small + (1 if fold < extra else 0)
            in_test = np.zeros(n_queries, dtype=bool)
            in_test[order[start:stop]] = True
            rows = in_test[codes]
            yield np.flatnonzero(~rows).astype(np.int64), np.flatnonzero(rows).astype(np.int64)
            start = stop


def _n_rows(X: Any, groups: Any) -> int:
    """The number of rows of X (of groups when X is None)."""
    if X is None:
        return int(np.shape(groups)[0]) if np.ndim(groups) else 0
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None else len(X)
