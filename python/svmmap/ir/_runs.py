"""Runs as fusion's features and the unsupervised fusions: the union of several runs' documents with
one score column per run (min-max normalized per query, or as given), and CombSUM, CombMNZ and
reciprocal rank fusion over it.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from .._validation import invalid_parameter, minmax_scaled
from .trec import Run, sort_qids, trec_ranks

_NORMALIZE = ("none", "minmax")


@dataclass
class RunFeatures:
    """Documents of the union of the runs, with one score column per run.

    ``X[i, r]`` is run r's score of document ``docno[i]`` for query ``qid[i]``, NaN when run r
    did not return it. Rows are sorted by query (numerically when the ids are integers), then
    docno.
    """

    X: np.ndarray
    qid: np.ndarray
    docno: np.ndarray
    run_names: List[str]


def _group_bounds(qid: np.ndarray) -> np.ndarray:
    """Start of every run of equal query ids in a query-sorted array, plus the end."""
    if len(qid) == 0:
        return np.zeros(1, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    return np.r_[starts, len(qid)]


def _minmax_per_query(X: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Per query and run, (s - min) / (max - min) over the documents the run returned (acc4 of
    Yue et al.); a run whose scores of a query are all equal gets 1 for all of them."""
    out = np.array(X, dtype=np.float64, copy=True)
    starts = bounds[:-1]
    lo = np.minimum.reduceat(np.where(np.isnan(X), np.inf, X), starts, axis=0)
    hi = np.maximum.reduceat(np.where(np.isnan(X), -np.inf, X), starts, axis=0)
    sizes = np.diff(bounds)
    lo_rows, hi_rows = np.repeat(lo, sizes, axis=0), np.repeat(hi, sizes, axis=0)
    # hi - lo overflows for finite scores spanning +-1e308; minmax_scaled avoids it.
    scaled = minmax_scaled(out, lo_rows, hi_rows)
    scaled[np.isfinite(out) & ~(hi_rows > lo_rows)] = 1.0
    scaled[np.isnan(out)] = np.nan
    return scaled


def _check_runs(runs: Any) -> None:
    """The runs of a fusion: a non-empty list of Run. One Run given alone was iterated
    ("'Run' object is not iterable"), naming neither the argument nor what it takes."""
    if isinstance(runs, (str, bytes, Run)) or not hasattr(runs, "__iter__"):
        raise invalid_parameter("runs", "a list of Run objects, e.g. [run_a, run_b]", runs)
    runs = list(runs)
    if not runs:
        raise ValueError("at least one run is needed")
    for i, run in enumerate(runs):
        if not isinstance(run, Run):
            raise ValueError(f"runs[{i}] must be a Run, got {type(run).__name__}")


def run_features(
    runs: Sequence[Run], *, queries: Optional[Sequence[str]] = None, normalize: str = "none"
) -> RunFeatures:
    """The score matrix of several runs over the union of their documents.

    Parameters
    ----------
    runs : sequence of Run
        The base runs, in a fixed order (column r is ``runs[r]``).
    queries : sequence of str, optional
        Keep only these queries (default: every query of any run).
    normalize : {"none", "minmax"}, default="none"
        ``"none"`` uses the scores as they are (Yue et al. bin raw scores). ``"minmax"``
        rescales each run's scores per query to [0, 1] first, which makes thresholds mean the
        same thing for queries whose score ranges differ.
    """
    _check_runs(runs)
    if normalize not in _NORMALIZE:
        raise invalid_parameter("normalize", f"one of {_NORMALIZE}", normalize)
    lengths = [len(r) for r in runs]
    all_qid = np.concatenate([r.qid for r in runs])
    all_doc = np.concatenate([r.docno for r in runs])
    # One string sort of all (qid, docno) keys gives every pair its row in the union.
    keys = np.char.add(np.char.add(all_qid, "\t"), all_doc)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    X_all = np.full((len(first), len(runs)), np.nan)
    start = 0
    for r, (run, n) in enumerate(zip(runs, lengths)):
        rows = inverse[start : start + n]
        start += n
        if n and np.bincount(rows).max() > 1:
            raise ValueError(f"run {run.name} lists a document twice for the same query")
        X_all[rows, r] = run.score
    qid_all, docno_all = all_qid[first], all_doc[first]
    if queries is not None:
        keep = np.isin(qid_all, np.asarray([str(q) for q in queries], dtype=str))
        X_all, qid_all, docno_all = X_all[keep], qid_all[keep], docno_all[keep]
    # Group the rows by query (in sorted query order); inside a query, by docno.
    q_order = {q: i for i, q in enumerate(sort_qids(set(qid_all.tolist())))}
    q_key = np.fromiter((q_order[q] for q in qid_all.tolist()), dtype=np.int64, count=len(qid_all))
    order = np.argsort(q_key, kind="stable")
    X, qid, docno = X_all[order], qid_all[order], docno_all[order]
    if normalize == "minmax":
        X = _minmax_per_query(X, _group_bounds(qid))
    return RunFeatures(X, qid, docno, [r.name for r in runs])


def _make_run(feats: RunFeatures, scores: np.ndarray, tag: str) -> Run:
    ranks = trec_ranks(feats.qid, feats.docno, scores)
    return Run(feats.qid, feats.docno, scores, ranks, tag, tag)


def _combined(runs: Sequence[Run], normalize: str) -> Tuple[RunFeatures, np.ndarray, np.ndarray]:
    """The union of the runs' documents, their scores (0 where a run did not return the
    document) and how many runs returned each document."""
    feats = run_features(runs, normalize=normalize)
    returned = ~np.isnan(feats.X)
    return feats, np.where(returned, feats.X, 0.0), returned.sum(axis=1)


def comb_sum(runs: Sequence[Run], *, normalize: str = "minmax", tag: str = "combsum") -> Run:
    """CombSUM (Fox and Shaw 1994): a document's score is the sum of its scores in the runs.

    A run that did not return the document adds nothing. The scores are normalized first, by
    default min-max per query and run, as is usual for CombSUM: ``(s - min) / (max - min)`` over
    the documents the run returned for the query, so every run's scores span [0, 1] on every
    query; a run whose scores of a query are all equal gives each of them 1 (ranx gives 0).

    Parameters
    ----------
    runs : sequence of Run
        The runs to fuse.
    normalize : {"minmax", "none"}, default="minmax"
        The per-query normalization (see `run_features`); ``"none"`` adds raw scores.
    tag : str, default="combsum"
        The tag and name of the fused run.

    Returns
    -------
    Run
        Every document any run returned, ranked in trec_eval's order of the summed scores.

    Examples
    --------
    >>> from svmmap.ir.fusion import comb_sum
    >>> from svmmap.ir.trec import Run
    >>> a = Run.from_dict({"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
    >>> b = Run.from_dict({"1": {"d2": 10.0, "d3": 30.0}})
    >>> # Normalized, a gives d1 1, d2 0.5, d3 0 and b gives d2 0, d3 1: sums 1, 0.5, 1.
    >>> comb_sum([a, b]).to_dict()
    {'1': {'d1': 1.0, 'd2': 0.5, 'd3': 1.0}}
    """
    feats, scores, _ = _combined(runs, normalize)
    return _make_run(feats, scores.sum(axis=1), tag)


def comb_mnz(runs: Sequence[Run], *, normalize: str = "minmax", tag: str = "combmnz") -> Run:
    """CombMNZ (Fox and Shaw 1994): CombSUM times the number of runs that returned the document.

    The scores are normalized as for `comb_sum` (by default min-max per query and run),
    so a document that several runs return is preferred to one that a single run puts at the
    same height. A returned document counts even when its normalized score is 0 (the last of
    its run), as in ranx.

    Parameters
    ----------
    runs : sequence of Run
        The runs to fuse.
    normalize : {"minmax", "none"}, default="minmax"
        The per-query normalization (see `run_features`).
    tag : str, default="combmnz"
        The tag and name of the fused run.

    Returns
    -------
    Run

    Examples
    --------
    >>> from svmmap.ir.fusion import comb_mnz
    >>> from svmmap.ir.trec import Run
    >>> a = Run.from_dict({"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
    >>> b = Run.from_dict({"1": {"d2": 10.0, "d3": 30.0}})
    >>> # The sums 1, 0.5, 1 of comb_sum's example times 1, 2, 2 runs: d3 now comes first.
    >>> comb_mnz([a, b]).to_dict()
    {'1': {'d1': 1.0, 'd2': 1.0, 'd3': 2.0}}
    """
    feats, scores, n_returned = _combined(runs, normalize)
    return _make_run(feats, scores.sum(axis=1) * n_returned, tag)


def reciprocal_rank_fusion(runs: Sequence[Run], *, k: float = 60, tag: str = "rrf") -> Run:
    """Reciprocal rank fusion (Cormack, Clarke and Buettcher 2009): a document's score is the
    sum of ``1 / (k + rank)`` over the runs that returned it.

    Only ranks count, so no normalization is needed. A run's rank of a document is its rank in
    trec_eval's order of the run's scores (decreasing score, ties by decreasing docno, see
    `svmmap.ir.trec.trec_order`), 1 for the first; the rank column of the run is not
    used, as trec_eval does not use it.

    Parameters
    ----------
    runs : sequence of Run
        The runs to fuse.
    k : float, default=60
        The constant of Cormack et al., who found k = 60 good across TREC collections: it damps
        the weight of the top ranks.
    tag : str, default="rrf"
        The tag and name of the fused run.

    Returns
    -------
    Run

    Examples
    --------
    >>> from svmmap.ir.fusion import reciprocal_rank_fusion
    >>> from svmmap.ir.trec import Run
    >>> a = Run.from_dict({"1": {"d1": 3.0, "d2": 2.0}})
    >>> b = Run.from_dict({"1": {"d2": 5.0}})
    >>> # d1: 1/(60 + 1); d2: 1/(60 + 2) + 1/(60 + 1).
    >>> fused = reciprocal_rank_fusion([a, b]).to_dict()["1"]
    >>> fused["d1"] == 1 / 61, fused["d2"] == 1 / 62 + 1 / 61
    (True, True)
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Real) or not (0 <= float(k) < float("inf")):
        raise invalid_parameter("k", "a finite number >= 0", k)
    _check_runs(runs)
    reciprocal = []
    for run in runs:
        ranks = trec_ranks(run.qid, run.docno, run.score)
        reciprocal.append(Run(run.qid, run.docno, 1.0 / (float(k) + ranks), ranks, run.tag, run.name))
    feats, scores, _ = _combined(reciprocal, "none")
    return _make_run(feats, scores.sum(axis=1), tag)


#: The unsupervised baselines `cross_fuse` evaluates beside the learned fusion: a key
