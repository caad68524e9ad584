"""trec_eval's order, the one rule that reading, writing and evaluating runs share: scores
compared as C floats (float32), ties broken by decreasing docno (`svmmap.ir.trec` re-exports
these)."""

from __future__ import annotations

from typing import Any, Iterable, List

import numpy as np

__all__ = ["sort_qids", "trec_scores", "trec_order", "trec_ranks"]


def sort_qids(qids: Iterable[Any]) -> List[str]:
    """Query ids as strings, sorted numerically when all are integers, else as text."""
    ids = [str(q) for q in qids]
    try:
        return sorted(ids, key=lambda q: (int(q), q))
    except ValueError:
        return sorted(ids)


def trec_scores(score: Any) -> np.ndarray:
    """Scores as trec_eval compares them: each rounded to the nearest float32 (C ``float``).

    trec_eval stores a run's scores in ``float`` fields (it parses the text with ``atof`` into
    a double, then assigns it to a ``float``), and pytrec_eval does the same with the Python
    floats it is given. Rounding is to nearest, ties to even; magnitudes beyond float32's
    range become infinite, as the C conversion gives on IEEE machines.

    Examples
    --------
    >>> from svmmap.ir.trec import trec_scores
    >>> # 1 + 2**-24 is half-way between 1 and the next float32, 1 + 2**-23: it rounds to even, 1.
    >>> trec_scores([1.0 + 2**-24, 1.0 + 2**-23, 0.1, 1e39]).tolist()
    [1.0, 1.0000001192092896, 0.10000000149011612, inf]
    """
    with np.errstate(over="ignore"):
        return np.asarray(score, dtype=np.float64).astype(np.float32).astype(np.float64)


def trec_order(qid: np.ndarray, docno: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Row order of trec_eval: by query, then decreasing score (as a float32, see
    `trec_scores`), then decreasing docno (compared as strings)."""
    q_order = {q: i for i, q in enumerate(sort_qids(np.unique(qid)))}
    q_key = np.fromiter((q_order[q] for q in qid.tolist()), dtype=np.int64, count=len(qid))
    # Decreasing docno: rank the docnos increasingly, then negate the rank. numpy compares
    # str by code point, which is the byte order of their UTF-8 encodings (trec_eval's strcmp).
    _, d_rank = np.unique(np.asarray(docno, dtype=str), return_inverse=True)
    return np.lexsort((-d_rank.reshape(-1), -trec_scores(score), q_key))


def _ranks_in_order(qid_sorted: np.ndarray) -> np.ndarray:
    """1..n within each run of equal query ids of an array already in trec_eval's order."""
    n = len(qid_sorted)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    new_query = np.r_[True, qid_sorted[1:] != qid_sorted[:-1]]
    starts = np.flatnonzero(new_query)
    return np.arange(n, dtype=np.int64) - starts[np.cumsum(new_query) - 1] + 1


def trec_ranks(qid: np.ndarray, docno: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Rank 1..n of every row within its query, in trec_eval's order."""
    order = trec_order(qid, docno, score)
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = _ranks_in_order(qid[order])
    return ranks
