"""Fusion of retrieval runs with SVM-map (Yue et al. 2007, section 4; Meng et al. 2009).

Each input run is a base function. A document of a query gets one feature per run: the run's
score, or "missing" when the run did not return it. The scores are binned into the threshold
indicators 1[score > k] of Yue et al. section 4.2, and a missing score gets an indicator of its
own, so the model learns a piecewise-constant score per run plus a score for "not retrieved by
this run". SVM-map then learns the weights that maximize MAP on the training queries.

`cross_fuse` scores every query with a model that was trained without it (k folds over
queries, C chosen by an inner cross-validation on the training queries), so the fused run's
MAP is a held-out estimate. `RunFusion` fits one model on all judged queries and fuses
runs of new queries.

The unsupervised baselines that learning has to beat are here too: `comb_sum` and
`comb_mnz` (Fox and Shaw 1994, on scores min-max normalized per query and run) and
`reciprocal_rank_fusion` (Cormack et al. 2009, k = 60). `cross_fuse` evaluates them
on the same queries as the learned fusion, and ``svmmap fuse`` shows them in its table.
"""

from __future__ import annotations

import numbers
import os
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
from sklearn.pipeline import Pipeline

from .. import _core
from .._search.selection import Selection, choose_C, ranks_nothing
from .._typing import BinStrategy
from .._validation import forget_fit, invalid_parameter, minmax_scaled, queries_with_relevant
from ..binning import Binner
from ..estimator import SVMMap
from .protocol import fit_ranker
from .trec import Qrels, Run, evaluate_run, sort_qids, trec_ranks

__all__ = [
    "DEFAULT_FUSION_C_GRID",
    "RunFeatures",
    "run_features",
    "query_folds",
    "RunFusion",
    "FusionResult",
    "cross_fuse",
    "runs_from_features",
    "qrels_from_labels",
    "comb_sum",
    "comb_mnz",
    "reciprocal_rank_fusion",
    "BASELINES",
]

#: The C values tried by default; C is chosen on held-out training queries. They are smaller
#: than for raw features because a binned document has many active indicators (about half of
#: n_thresholds per run), which makes its squared norm, and so the effective C, large.
DEFAULT_FUSION_C_GRID = (0.01, 0.1, 1.0, 10.0)

#: The training defaults, owned by the core's TrainConfig.
_D = _core.TrainConfig.DEFAULTS
#: The binning defaults, owned by the core's BinnerConfig.
_BIN_DEFAULTS = _core.BinnerConfig.DEFAULTS

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
    if not runs:
        raise ValueError("at least one run is needed")
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


def query_folds(queries: Union[Sequence[str], np.ndarray], n_folds: int, random_state: Any = 0) -> Dict[str, int]:
    """Assigns queries to ``n_folds`` folds of (nearly) equal size at random."""
    if isinstance(n_folds, bool) or not isinstance(n_folds, numbers.Integral) or n_folds < 2:
        raise invalid_parameter("n_folds", "an integer >= 2", n_folds)
    qs = sort_qids(queries)
    if len(qs) < n_folds:
        raise ValueError(f"{len(qs)} queries cannot be split into {n_folds} folds")
    rng = np.random.default_rng(random_state)
    perm = rng.permutation(len(qs))
    return {qs[i]: int(k % n_folds) for k, i in enumerate(perm.tolist())}


def _mean_ap(y: np.ndarray, scores: np.ndarray, qid: np.ndarray) -> tuple[float, int]:
    from ..metrics import per_query

    pq = per_query("map", y, scores, qid)
    return float(pq.values.sum()), int(pq.values.size)


class RunFusion:
    """Learns to fuse retrieval runs with SVM-map on binned scores.

    Parameters
    ----------
    C : float or sequence of float, default=(0.01, 0.1, 1, 10)
        SVM-map's C. With several values, C is chosen by ``inner_folds``-fold cross-validation
        over the training queries (mean held-out AP; the smaller C on ties).
    n_thresholds : int, default=50
        Thresholds per run (Yue et al. use 50), see `svmmap.Binner`.
    strategy : {"quantile", "uniform"}, default="quantile"
        How thresholds are placed.
    normalize : {"none", "minmax"}, default="none"
        Per-query score normalization before binning, see `run_features`.
    inner_folds : int, default=3
        Folds over training queries for choosing C.
    eps, max_iter, n_jobs :
        Passed to `svmmap.SVMMap`.
    random_state : int, default=0
        Seed of the inner fold assignment.

    Attributes
    ----------
    pipeline_ : sklearn.pipeline.Pipeline
        ``Binner(missing="indicator")`` followed by ``SVMMap``, fitted on all training queries.
    C_ : float
        The C used for ``pipeline_``.
    cv_map_ : dict
        Mean held-out AP of every C tried (empty when C was fixed).
    n_runs_ : int
        Number of runs fitted on.
    run_names_ : list of str

    Examples
    --------
    >>> from svmmap.ir.fusion import RunFusion
    >>> from svmmap.ir.trec import Qrels, Run, evaluate_run
    >>> # Run "good" ranks the relevant document first in queries 1-3; run "poor" always ranks c first.
    >>> good = Run.from_dict({"1": {"a": 3, "b": 2, "c": 1}, "2": {"a": 1, "b": 3, "c": 2},
    ...                       "3": {"a": 2, "b": 1, "c": 3}, "4": {"a": 3, "b": 1, "c": 2}}, name="good")
    >>> poor = Run.from_dict({q: {"a": 1, "b": 2, "c": 3} for q in "1234"}, name="poor")
    >>> qrels = Qrels.from_dict({"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}})  # query 4 is new
    >>> fused = RunFusion(C=1.0).fit([good, poor], qrels).fuse([good, poor])
    >>> evaluate_run(fused, qrels)  # AP 1 on every judged query, as "good" alone has
    {'1': 1.0, '2': 1.0, '3': 1.0}
    >>> fused.docno[(fused.qid == "4") & (fused.rank == 1)].tolist()  # query 4 follows "good" too
    ['a']
    """

    def __init__(
        self,
        C: Union[float, Sequence[float]] = DEFAULT_FUSION_C_GRID,
        n_thresholds: int = _BIN_DEFAULTS["n_thresholds"],
        strategy: BinStrategy = _BIN_DEFAULTS["strategy"],
        normalize: str = "none",
        inner_folds: int = 3,
        eps: float = _D["eps"],
        max_iter: int = _D["max_iter"],
        random_state: Any = 0,
        n_jobs: Optional[int] = _D["n_jobs"],
    ) -> None:
        self.C = C
        self.n_thresholds = n_thresholds
        self.strategy = strategy
        self.normalize = normalize
        self.inner_folds = inner_folds
        self.eps = eps
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _grid(self) -> List[float]:
        C: Any = self.C
        grid: List[Any] = [C] if isinstance(C, numbers.Real) else list(C)
        if not grid or not all(isinstance(c, numbers.Real) and float(c) > 0 for c in grid):
            raise invalid_parameter("C", "a positive number or a non-empty sequence of them", self.C)
        return sorted(float(c) for c in grid)

    def make_pipeline(self, C: float) -> Pipeline:
        """The unfitted model for one C: Binner(missing="indicator") then SVMMap."""
        return Pipeline(
            [
                (
                    "bin",
                    Binner(
                        n_thresholds=self.n_thresholds, strategy=self.strategy, missing="indicator", n_jobs=self.n_jobs
                    ),
                ),
                ("svm", SVMMap(C=C, eps=self.eps, max_iter=self.max_iter, n_jobs=self.n_jobs)),
            ]
        )

    def fit_features(self, X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> "RunFusion":
        """Fit on a score matrix (NaN = not returned), graded labels and query ids."""
        forget_fit(self)
        grid = self._grid()
        cv_map: Dict[float, float] = {}
        C = grid[0] if len(grid) == 1 else self._choose_C(X, y, qid, grid, cv_map)
        pipeline = fit_ranker(self.make_pipeline(C), X, y, qid)
        # Set together once every step has worked, so that a failed fit leaves none of them.
        self.cv_map_, self.C_, self.pipeline_, self.n_runs_ = cv_map, C, pipeline, X.shape[1]
        return self

    def _choose_C(
        self, X: np.ndarray, y: np.ndarray, qid: np.ndarray, grid: List[float], scores: Dict[float, float]
    ) -> float:
        """The C of ``grid`` with the best inner cross-validated MAP; every C's MAP goes into
        ``scores``."""
        # Only queries with a relevant document have an AP to validate on; the others still
        # train (and are skipped by the solver when they have no relevant document).
        with_rel = queries_with_relevant(y, qid, _D["relevance_threshold"])
        if len(with_rel) < self.inner_folds:
            raise ValueError(
                f"choosing C by {self.inner_folds}-fold cross-validation needs at least {self.inner_folds} "
                f"training queries with a relevant document, got {len(with_rel)}; give a single C"
            )
        folds = query_folds(with_rel, self.inner_folds, self.random_state)
        fold_of_row = np.fromiter((folds.get(q, -1) for q in qid.tolist()), dtype=np.int64, count=len(qid))

        def cv_map(C: float) -> Tuple[float, Any]:
            total, count, degenerate = 0.0, 0, False
            for k in range(self.inner_folds):
                test = fold_of_row == k
                model = fit_ranker(self.make_pipeline(C), X[~test], y[~test], qid[~test])
                degenerate = degenerate or ranks_nothing(model)
                s, n = _mean_ap(y[test], model.predict(X[test]), qid[test])
                total, count = total + s, count + n
            # Only whether a fold's model ranked nothing is kept of the inner models.
            return total / max(count, 1), SimpleNamespace(degenerate_=degenerate)

        chosen: Selection[Any] = choose_C(grid, cv_map)
        scores.update(chosen.scores)
        return chosen.C

    def fit(self, runs: Sequence[Run], qrels: Qrels) -> "RunFusion":
        """Fit on every query of the runs that has judgments in ``qrels``."""
        forget_fit(self)
        feats = run_features(runs, queries=qrels.queries(), normalize=self.normalize)
        y = qrels.labels(feats.qid, feats.docno)
        self.fit_features(feats.X, y, feats.qid)
        self.run_names_ = feats.run_names
        return self

    def predict_features(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self, "pipeline_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("This RunFusion instance is not fitted yet; call fit(runs, qrels) first")
        if X.shape[1] != self.n_runs_:
            raise ValueError(f"{X.shape[1]} runs given, but the fusion was fitted on {self.n_runs_}")
        return self.pipeline_.predict(X)

    def fuse(self, runs: Sequence[Run], *, tag: str = "svmmap-fusion") -> Run:
        """The fused run of ``runs`` (same order as in ``fit``) over the union of their documents."""
        feats = run_features(runs, normalize=self.normalize)
        scores = self.predict_features(feats.X)
        return _make_run(feats, scores, tag)


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
    if not runs:
        raise ValueError("at least one run is needed")
    reciprocal = []
    for run in runs:
        ranks = trec_ranks(run.qid, run.docno, run.score)
        reciprocal.append(Run(run.qid, run.docno, 1.0 / (float(k) + ranks), ranks, run.tag, run.name))
    feats, scores, _ = _combined(reciprocal, "none")
    return _make_run(feats, scores.sum(axis=1), tag)


#: The unsupervised baselines `cross_fuse` evaluates beside the learned fusion: a key
#: of ``FusionResult.baselines``, its row label in ``FusionResult.table()`` and the fusion.
BASELINES: Dict[str, Tuple[str, Callable[[Sequence[Run]], Run]]] = {
    "CombSUM": ("CombSUM (min-max)", comb_sum),
    "CombMNZ": ("CombMNZ (min-max)", comb_mnz),
    "RRF": ("RRF (k=60)", reciprocal_rank_fusion),
}


@dataclass
class FusionResult:
    """The output of `cross_fuse`.

    Attributes
    ----------
    run : Run
        The fused run: every query scored by the model of the one fold that held it out.
        Scores are comparable within a query only (different folds, different models).
    fold_of : dict
        Query id -> fold number.
    C_by_fold : list of float
        The C chosen for every fold.
    cv_map_by_fold : list of dict
        The inner cross-validation MAP of every C, per fold.
    per_query : dict
        ``{name: {qid: AP}}`` for the fused run (``"fused"``) and every input run (by name),
        on the queries with a relevant document (see `svmmap.ir.trec.evaluate_run`); an
        input run that lacks one of these queries scores 0 on it, as with ``trec_eval -c``.
    run_names : list of str
    baselines : dict
        ``{name: {qid: AP}}`` of the unsupervised fusions of the input runs (the keys of
        `BASELINES`: ``"CombSUM"``, ``"CombMNZ"``, ``"RRF"``) on the same queries. They
        learn nothing, so they need no held-out folds.
    """

    run: Run
    fold_of: Dict[str, int]
    C_by_fold: List[float]
    cv_map_by_fold: List[Dict[float, float]]
    per_query: Dict[str, Dict[str, float]] = field(repr=False)
    run_names: List[str] = field(default_factory=list)
    baselines: Dict[str, Dict[str, float]] = field(default_factory=dict, repr=False)

    def map(self, name: str = "fused") -> float:
        """MAP of the fused run (``"fused"``), an input run (by name) or a baseline (by key)."""
        values = list((self.per_query[name] if name in self.per_query else self.baselines[name]).values())
        return float(np.mean(values)) if values else float("nan")

    def best_run(self) -> str:
        """The input run with the highest MAP on these queries (chosen with hindsight, which
        favours the baseline)."""
        return max(self.run_names, key=lambda n: (self.map(n), n))

    def table(self) -> str:
        """A Markdown table: MAP of the fused run, of the unsupervised baselines (CombSUM,
        CombMNZ, RRF) and of every input run, with wins/losses of the fused run per query and
        the two-sided Wilcoxon signed-rank p-value (** for p < 0.05)."""
        from .protocol import paired_comparison

        # Runs read from files are named by their paths; show the file names when they differ.
        short = {n: os.path.basename(n) for n in self.run_names}
        if len(set(short.values())) < len(short):
            short = {n: n for n in self.run_names}
        rows = [(BASELINES[b][0] if b in BASELINES else b, self.baselines[b]) for b in self.baselines]
        rows += [(short[n], self.per_query[n]) for n in sorted(self.run_names, key=lambda n: -self.map(n))]
        queries = sorted(self.per_query["fused"])
        fused = np.asarray([self.per_query["fused"][q] for q in queries])
        lines = [
            "| run | MAP | W/L (fused vs run) | p (Wilcoxon) |",
            "|---|---:|---:|---:|",
            f"| **fused (SVM-map)** | **{self.map():.4f}** | – | – |",
        ]
        for label, values in rows:
            other = np.asarray([values[q] for q in queries])
            cmp = paired_comparison(fused, other)
            stars = " **" if cmp.p_value < 0.05 else ""
            mean = float(np.mean(other)) if other.size else float("nan")
            lines.append(f"| {label} | {mean:.4f} | {cmp.wins}/{cmp.losses}{stars} | {cmp.p_value:.2g} |")
        return "\n".join(lines)


def cross_fuse(
    runs: Sequence[Run],
    qrels: Qrels,
    *,
    n_folds: int = 5,
    random_state: Any = 0,
    tag: str = "svmmap-fusion",
    progress: Optional[Any] = None,
    **params: Any,
) -> FusionResult:
    """Fuse runs so that no query is scored by a model trained on it.

    The queries of the runs are split at random into ``n_folds`` folds. For each fold, a
    `RunFusion` (with ``params``) is fitted on the judged queries of the other folds,
    choosing C by inner cross-validation among them, and scores the fold's documents.

    Parameters
    ----------
    runs : sequence of Run
        The base runs.
    qrels : Qrels
        Judgments; unjudged documents count as not relevant, queries without any judgment
        are scored but never trained on.
    n_folds : int, default=5
    random_state : int, default=0
        Seed of the fold assignments.
    tag : str
        Tag of the fused run.
    progress : callable, optional
        Called with a line of text after each fold.
    **params
        Parameters of `RunFusion` (C, n_thresholds, normalize, ...).

    Returns
    -------
    FusionResult
    """
    normalize = params.get("normalize", "none")
    feats = run_features(runs, normalize=normalize)
    judged = set(qrels.qid.tolist())
    y = qrels.labels(feats.qid, feats.docno)
    folds = query_folds(np.unique(feats.qid), n_folds, random_state)
    fold_of_row = np.fromiter((folds[q] for q in feats.qid.tolist()), dtype=np.int64, count=len(feats.qid))
    judged_row = np.isin(feats.qid, np.asarray(sorted(judged), dtype=str))
    scores = np.full(len(feats.qid), np.nan)
    C_by_fold: List[float] = []
    cv_by_fold: List[Dict[float, float]] = []
    for k in range(n_folds):
        test = fold_of_row == k
        train = ~test & judged_row
        model = RunFusion(random_state=random_state, **params).fit_features(feats.X[train], y[train], feats.qid[train])
        scores[test] = model.predict_features(feats.X[test])
        C_by_fold.append(model.C_)
        cv_by_fold.append(dict(model.cv_map_))
        if progress is not None:
            progress(
                f"fold {k + 1}/{n_folds}: trained on {len(np.unique(feats.qid[train]))} queries, C={model.C_:g}, "
                f"scored {len(np.unique(feats.qid[test]))} held-out queries"
            )
    fused = _make_run(feats, scores, tag)
    per_query: Dict[str, Dict[str, float]] = {"fused": evaluate_run(fused, qrels)}
    queries = list(per_query["fused"])
    for run in runs:
        per_query[run.name] = evaluate_run(run, qrels, queries=queries)
    baselines: Dict[str, Dict[str, float]] = {
        key: evaluate_run(fuse(runs), qrels, queries=queries) for key, (_, fuse) in BASELINES.items()
    }
    return FusionResult(fused, folds, C_by_fold, cv_by_fold, per_query, [r.name for r in runs], baselines)


def runs_from_features(
    X: np.ndarray,
    qid: Any,
    docno: Any,
    columns: Mapping[str, int],
    *,
    depth: Optional[int] = None,
) -> List[Run]:
    """One run per feature column: the feature is the run's score (e.g. the BM25 or LMIR
    columns of a LETOR file, which are retrieval functions). With ``depth``, each run keeps
    only its top ``depth`` documents per query (in trec_eval's order), so the runs differ in
    which documents they return, as real runs do."""
    qid = np.asarray([str(q) for q in np.asarray(qid).tolist()], dtype=str)
    docno = np.asarray(docno, dtype=str)
    runs = []
    for name, col in columns.items():
        score = np.asarray(X[:, col], dtype=np.float64)
        ranks = trec_ranks(qid, docno, score)
        keep = np.ones(len(qid), dtype=bool) if depth is None else ranks <= depth
        runs.append(Run(qid[keep], docno[keep], score[keep], ranks[keep], name, name))
    return runs


def qrels_from_labels(qid: Any, docno: Any, y: Any) -> Qrels:
    """Qrels from graded labels (a LETOR file's labels, rounded to integers)."""
    return Qrels(
        np.asarray([str(q) for q in np.asarray(qid).tolist()], dtype=str),
        np.asarray(docno, dtype=str),
        np.rint(np.asarray(y, dtype=np.float64)).astype(np.int64),
    )
