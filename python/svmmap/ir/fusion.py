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

from .._fit.defaults import BINNING_DEFAULTS, TRAINING_DEFAULTS
from .._search.selection import Selection, choose_C, ranks_nothing
from .._typing import BinStrategy
from .._validation import dense_numbers, forget_fit, invalid_parameter, queries_with_relevant
from ..binning import Binner
from ..estimator import SVMMap
from ._runs import RunFeatures, _make_run, comb_mnz, comb_sum, reciprocal_rank_fusion, run_features
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
        n_thresholds: int = BINNING_DEFAULTS["n_thresholds"],
        strategy: BinStrategy = BINNING_DEFAULTS["strategy"],
        normalize: str = "none",
        inner_folds: int = 3,
        eps: float = TRAINING_DEFAULTS["eps"],
        max_iter: int = TRAINING_DEFAULTS["max_iter"],
        random_state: Any = 0,
        n_jobs: Optional[int] = TRAINING_DEFAULTS["n_jobs"],
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
        with_rel = queries_with_relevant(y, qid, TRAINING_DEFAULTS["relevance_threshold"])
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
        # NaN stays legal (a run that did not return the document), so the values are left to
        # the Binner; only the shape and the type are checked here, in the argument's name.
        X = dense_numbers(X, "X")
        if X.shape[1] != self.n_runs_:
            raise ValueError(f"X has {X.shape[1]} columns (runs), but the fusion was fitted on {self.n_runs_} runs")
        return self.pipeline_.predict(X)

    def fuse(self, runs: Sequence[Run], *, tag: str = "svmmap-fusion") -> Run:
        """The fused run of ``runs`` (same order as in ``fit``) over the union of their documents."""
        feats = run_features(runs, normalize=self.normalize)
        scores = self.predict_features(feats.X)
        return _make_run(feats, scores, tag)


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
