"""Ranking metrics per query and averaged, with their conventions stated and selectable.

Conventions (the defaults are those of SVM^map's evaluation and of trec_eval where they agree):

- **Relevance.** A document is relevant when its label is above ``relevance_threshold``
  (default 0). For NDCG its grade is its label when relevant and 0 otherwise, so SVM^map's
  -1/+1 labels act as 0/1.
- **Ties.** Documents with equal scores are ordered pessimistically (``ties="pessimistic"``:
  lower grade first, so a tie never helps) or in input order (``ties="input"``).
- **Queries without a relevant document** (and, for ROC area, without a non-relevant one) have
  no defined value. ``no_relevant="skip"`` (default) leaves them out of the mean;
  ``no_relevant=0`` or ``1`` counts them with that value. ``evaluate`` reports how many there were.
- **AP** divides by the number of relevant documents in the list; pass ``n_relevant`` (one
  count per query, in sorted query order) to divide by the total from the qrels instead, as
  trec_eval does.
- **NDCG@k** uses gain ``2**grade - 1`` (``gain="exp"``) or ``grade`` (``gain="linear"``, as
  trec_eval's ndcg_cut), discount ``1/log2(1 + rank)``, and the ideal ordering of the same list.
- **MRR@k** is 1/rank of the first relevant document within the top k, else 0.
- **ROC area** is the fraction of (relevant, non-relevant) pairs ranked correctly.
- **P@k** divides by k even when the list is shorter, as trec_eval does.

Metric names: ``"map"``, ``"ndcg"``, ``"ndcg@k"``, ``"mrr"``, ``"mrr@k"``, ``"roc"``, ``"p@k"``.

**Named conventions.** ``conventions=`` picks a whole set at once (a keyword given as well
overrides the preset's value):

- ``"svmmap"`` (the default): the defaults above, SVM^map's evaluation. Queries without a
  relevant document are skipped, so MAP is the mean over the queries that have one.
- ``"trec_eval"``: what trec_eval (and pytrec_eval, PyTerrier, ir_measures) report for the same
  lists judged by their labels: queries without a relevant document count 0
  (``no_relevant=0``), NDCG gain is the grade (``gain="linear"``), and scores are compared as
  trec_eval stores them, as float32 (scores that differ only beyond float32 precision tie).
  trec_eval breaks ties by document id, which arrays do not have; ties stay pessimistic. For
  TREC runs with document ids, use `svmmap.ir.trec`, which follows trec_eval exactly.
- ``"letor"``: what LETOR 4.0's evaluation script (Eval-Score-4.0.pl) reports, the convention
  of the published LETOR baselines: queries without a relevant document count 0, equal scores
  keep the input (file) order, and NDCG is the script's: gain 2**grade - 1, ranks 1 and 2
  undiscounted and rank r >= 3 discounted by 1/log2(r), and NDCG@k of a query with fewer than
  k documents is 0 (the script has no value there and averages it as 0; half of MQ2008's
  queries have fewer than 10 documents). ``"ndcg"`` without k is NDCG at the query's length.

On MQ2008 many queries have no relevant document, so MAP under ``"svmmap"`` is much higher than
under ``"trec_eval"`` or ``"letor"`` for the same scores; say which one a number is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Sequence, Union

import numpy as np

from . import _core
from ._optional import load
from ._typing import Gain, Ties
from ._validation import (
    check_labels,
    check_n_relevant,
    check_qid,
    check_spelling,
    contiguous,
    invalid_parameter,
    one_column,
    ranks_by_query,
)
from ._validation import finite_number as finite_number  # its own line keeps the file under 600 lines

__all__ = [
    "PerQuery",
    "Evaluation",
    "per_query",
    "evaluate",
    "mean_average_precision",
    "ndcg",
    "mrr",
    "roc_auc",
    "precision_at",
    "make_ranking_scorer",
    "best_accuracy",
]

NoRelevant = Union[str, float, int]

# The named sets of conventions (see the module docs). "float32": compare scores after rounding
# them to float32, as trec_eval does; "letor_ndcg": NDCG as LETOR 4.0's script computes it.
# These two are set by the presets only.
CONVENTIONS: Dict[str, Dict[str, Any]] = {
    "svmmap": {
        "relevance_threshold": 0.0,
        "ties": "pessimistic",
        "gain": "exp",
        "no_relevant": "skip",
        "float32": False,
        "letor_ndcg": False,
    },
    "trec_eval": {
        "relevance_threshold": 0.0,
        "ties": "pessimistic",
        "gain": "linear",
        "no_relevant": 0,
        "float32": True,
        "letor_ndcg": False,
    },
    "letor": {
        "relevance_threshold": 0.0,
        "ties": "input",
        "gain": "exp",
        "no_relevant": 0,
        "float32": False,
        "letor_ndcg": True,
    },
}
DEFAULT_CONVENTIONS = "svmmap"


def resolve_conventions(conventions: Optional[str] = None, **overrides: Any) -> Dict[str, Any]:
    """The conventions a call uses: the named preset with the keywords given (not None) on top.

    Examples
    --------
    >>> from svmmap.metrics import resolve_conventions
    >>> resolve_conventions("trec_eval")["no_relevant"], resolve_conventions("trec_eval", gain="exp")["gain"]
    (0, 'exp')
    """
    name = DEFAULT_CONVENTIONS if conventions is None else conventions
    if not isinstance(name, str) or name not in CONVENTIONS:
        raise invalid_parameter("conventions", f"one of {', '.join(map(repr, CONVENTIONS))}", conventions)
    out = dict(CONVENTIONS[name])
    out.update({k: v for k, v in overrides.items() if v is not None})
    return out


@dataclass
class PerQuery:
    """One metric on every query: ``values[i]`` belongs to ``qids[i]`` (sorted query ids).

    Queries where the metric is undefined are left out (``no_relevant="skip"``) or filled
    with the chosen value; ``n_undefined`` counts them either way.
    """

    metric: str
    qids: np.ndarray
    values: np.ndarray
    n_undefined: int
    conventions: str = DEFAULT_CONVENTIONS

    def mean(self) -> float:
        return float(np.mean(self.values)) if self.values.size else float("nan")

    def to_frame(self) -> Any:
        """The values as a pandas DataFrame: a column ``qid`` (the query ids as given, in the
        order of ``qids``) and a column named by the metric, one row per query with a value.

        Examples
        --------
        >>> from svmmap.metrics import per_query
        >>> # Query 1: relevant documents at ranks 1 and 3, AP = (1/1 + 2/3) / 2 = 5/6; query 2
        >>> # has none, so it is left out (no_relevant="skip").
        >>> pq = per_query("map", [1, 0, 1, 0, 0], [4, 3, 2, 2, 1], [1, 1, 1, 2, 2])
        >>> print(pq.to_frame().round(4).to_string(index=False))
         qid    map
           1 0.8333
        """
        pd = load("pandas", "PerQuery.to_frame")

        return pd.DataFrame({"qid": self.qids, self.metric: self.values})


@dataclass
class Evaluation:
    """Means of several metrics, with the per-query values and the counts behind them.

    ``qids`` lists every query evaluated (sorted), also those where every metric is undefined
    and left out; it is None for an Evaluation made by hand without it.
    """

    means: Dict[str, float]
    per_query: Dict[str, PerQuery] = field(repr=False)
    n_queries: int
    n_undefined: Dict[str, int]
    conventions: str = DEFAULT_CONVENTIONS
    qids: Optional[np.ndarray] = field(default=None, repr=False)

    def __getitem__(self, metric: str) -> float:
        return self.means[metric]

    def to_frame(self) -> Any:
        """The per-query values as a pandas DataFrame: a column ``qid`` and one column per
        metric, one row per evaluated query (in the order of ``qids``).

        A query whose value a metric leaves out (``no_relevant="skip"``: no relevant document,
        or for ``"roc"`` no non-relevant one) has NaN in that metric's column, so the column
        means, which skip NaN, are the means of this Evaluation: ``frame.mean(numeric_only=True)``
        gives ``means``.

        Examples
        --------
        >>> from svmmap.metrics import evaluate
        >>> # Query 1: the relevant document is second (AP 1/2, RR 1/2); query 2: first (AP 1,
        >>> # RR 1); query 3 has no relevant document, so both metrics leave it out.
        >>> result = evaluate([0, 1, 1, 0, 0, 0], [2, 1, 2, 1, 2, 1], qid=[1, 1, 2, 2, 3, 3], metrics=["map", "mrr"])
        >>> frame = result.to_frame()
        >>> print(frame.to_string(index=False))
         qid  map  mrr
           1  0.5  0.5
           2  1.0  1.0
           3  NaN  NaN
        >>> frame["map"].mean() == result["map"] == 0.75
        True
        """
        pd = load("pandas", "Evaluation.to_frame")

        if self.qids is not None:
            qids = np.asarray(self.qids)
        else:
            # Without the evaluated queries, those with a value for some metric, each once, in
            # the order the metrics list them.
            seen: Dict[Any, None] = {}
            for pq in self.per_query.values():
                seen.update(dict.fromkeys(np.asarray(pq.qids).tolist()))
            qids = np.asarray(list(seen))
        frame = pd.DataFrame({"qid": qids})
        position = {q: i for i, q in enumerate(qids.tolist())}
        for metric, pq in self.per_query.items():
            column = np.full(len(qids), np.nan)
            rows = [position[q] for q in np.asarray(pq.qids).tolist()]
            column[rows] = pq.values
            frame[metric] = column
        return frame


def _inputs(
    y_true: Any, y_score: Any, qid: Any, float32: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    if np.iscomplexobj(y_score):
        # NumPy would drop the imaginary part with a warning only; fit refuses complex data too.
        raise ValueError("Complex data not supported: y_score must hold real scores")
    if np.ndim(y_score) == 0:
        raise ValueError(
            f"y_score must hold one score per document (a 1-D array-like), got the single value {y_score!r}"
        )
    # The one rule of every array of numbers, as y_true's (check_labels): strings refused, a
    # column vector read with scikit-learn's DataConversionWarning, another shape refused.
    scores = one_column(y_score, "y_score")
    labels = check_labels(y_true, scores.shape[0], name="y_true", rows_name="y_score")
    if np.isnan(scores).any():
        raise ValueError(f"y_score[{int(np.flatnonzero(np.isnan(scores))[0])}] is NaN")
    if float32:
        # trec_eval keeps scores as C floats: round to the nearest float32 (beyond its range, inf).
        with np.errstate(over="ignore"):
            scores = scores.astype(np.float32).astype(np.float64)
    if qid is None:
        codes = np.zeros(scores.shape[0], dtype=np.int64)
        uniques = np.zeros(1 if scores.shape[0] else 0, dtype=np.int64)
    else:
        codes, uniques = check_qid(qid, scores.shape[0], rows_name="y_score")
    return labels, contiguous(scores), codes, uniques


def _check_policy(no_relevant: NoRelevant) -> Optional[float]:
    if isinstance(no_relevant, str):
        if no_relevant != "skip":
            raise invalid_parameter("no_relevant", '"skip", 0 or 1', no_relevant)
        return None
    if no_relevant in (0, 1) and not isinstance(no_relevant, bool):
        return float(no_relevant)
    raise invalid_parameter("no_relevant", '"skip", 0 or 1', no_relevant)


def _per_query(
    metric: str,
    labels: np.ndarray,
    scores: np.ndarray,
    codes: np.ndarray,
    uniques: np.ndarray,
    *,
    relevance_threshold: float,
    ties: Ties,
    gain: Gain,
    no_relevant: NoRelevant,
    n_relevant: Any,
    letor_ndcg: bool = False,
) -> PerQuery:
    fill = _check_policy(no_relevant)
    nr = None
    if n_relevant is not None:
        nr = check_n_relevant(n_relevant, len(uniques))
    # LETOR 4.0's NDCG (letor_ndcg) is a convention of the core's NDCG (rust/metrics.rs,
    # NdcgRule::Letor); other metrics are unchanged by it.
    values = _core.evaluate(
        metric, labels, scores, codes, len(uniques), ties, gain, float(relevance_threshold), nr, letor_ndcg
    )
    undefined = np.isnan(values)
    if fill is None:
        return PerQuery(metric, uniques[~undefined], values[~undefined], int(undefined.sum()))
    values[undefined] = fill
    return PerQuery(metric, uniques, values, int(undefined.sum()))


def check_metric_names(names: Sequence[str], argument: str) -> None:
    """Reads metric names by the core's parser before any work, its refusal worded after the
    argument that gave them (it named none: "metric must be one of ...")."""
    try:
        evaluate([1, 0], [1.0, 0.0], None, list(names))
    except ValueError as exc:
        text = str(exc)
        raise ValueError(
            f"{argument} {text[len('metric ') :]}" if text.startswith("metric ") else f"{argument}: {text}"
        ) from None


def per_query(
    metric: str,
    y_true: Any,
    y_score: Any,
    qid: Any = None,
    *,
    conventions: Optional[str] = None,
    relevance_threshold: Optional[float] = None,
    ties: Optional[Ties] = None,
    gain: Optional[Gain] = None,
    no_relevant: Optional[NoRelevant] = None,
    n_relevant: Any = None,
) -> PerQuery:
    """``metric`` on every query. ``qid=None`` treats all documents as one query.

    ``conventions`` names a preset (``"svmmap"``, the default, ``"trec_eval"`` or ``"letor"``,
    see the module docs); ``relevance_threshold``, ``ties``, ``gain`` and ``no_relevant``
    override single conventions of it.

    Examples
    --------
    >>> from svmmap.metrics import per_query
    >>> # Query 1 has relevant documents at ranks 1 and 3: AP = (1/1 + 2/3) / 2 = 5/6. Query 2
    >>> # has no relevant document, so its AP is undefined and it is left out.
    >>> y, scores, qid = [1, 0, 1, 0, 0, 0], [4, 3, 2, 1, 2, 1], [1, 1, 1, 1, 2, 2]
    >>> pq = per_query("map", y, scores, qid)
    >>> pq.qids.tolist(), pq.values.round(4).tolist(), pq.n_undefined
    ([1], [0.8333], 1)
    >>> per_query("map", y, scores, qid, no_relevant=0).values.round(4).tolist()  # counted as 0
    [0.8333, 0.0]
    >>> round(per_query("map", y, scores, qid, conventions="trec_eval").mean(), 4)  # (5/6 + 0) / 2
    0.4167
    """
    check_spelling(metric, "metric")
    result = evaluate(
        y_true,
        y_score,
        qid,
        [metric],
        conventions=conventions,
        relevance_threshold=relevance_threshold,
        ties=ties,
        gain=gain,
        no_relevant=no_relevant,
        n_relevant=n_relevant,
    )
    return result.per_query[metric]


def evaluate(
    y_true: Any,
    y_score: Any,
    qid: Any = None,
    metrics: Sequence[str] = ("map", "ndcg@10", "mrr@10"),
    *,
    conventions: Optional[str] = None,
    relevance_threshold: Optional[float] = None,
    ties: Optional[Ties] = None,
    gain: Optional[Gain] = None,
    no_relevant: Optional[NoRelevant] = None,
    n_relevant: Any = None,
) -> Evaluation:
    """Several metrics at once, averaged over queries (conventions as in `per_query`).

    Examples
    --------
    >>> from svmmap.metrics import evaluate
    >>> result = evaluate([1, 0, 0, 1], [0.9, 0.8, 0.1, 0.3], qid=[1, 1, 2, 2], metrics=["map", "mrr"])
    >>> result["map"], result["mrr"]
    (1.0, 1.0)
    """
    name = DEFAULT_CONVENTIONS if conventions is None else conventions
    conv = resolve_conventions(
        conventions, relevance_threshold=relevance_threshold, ties=ties, gain=gain, no_relevant=no_relevant
    )
    # The trainers' rule for the threshold: float() read True as 1 and "0" as 0.
    conv["relevance_threshold"] = finite_number(conv["relevance_threshold"], "relevance_threshold")
    # A single name would otherwise be taken apart into its letters.
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics) or len(metrics) == 0:
        raise invalid_parameter("metrics", "a non-empty list of metric names, e.g. ['map', 'ndcg@10']", metrics)
    check_spelling(list(metrics), "metrics")
    labels, scores, codes, uniques = _inputs(y_true, y_score, qid, conv["float32"])
    pq = {
        m: _per_query(
            m,
            labels,
            scores,
            codes,
            uniques,
            relevance_threshold=conv["relevance_threshold"],
            ties=conv["ties"],
            gain=conv["gain"],
            no_relevant=conv["no_relevant"],
            n_relevant=n_relevant,
            letor_ndcg=conv["letor_ndcg"],
        )
        for m in metrics
    }
    for v in pq.values():
        v.conventions = name
    return Evaluation(
        means={m: v.mean() for m, v in pq.items()},
        per_query=pq,
        n_queries=len(uniques),
        n_undefined={m: v.n_undefined for m, v in pq.items()},
        conventions=name,
        qids=uniques,
    )


_CONVENTION_KEYWORDS = ("conventions", "relevance_threshold", "ties", "gain", "no_relevant", "n_relevant")


def _check_keywords(conventions: Dict[str, Any], function: str) -> None:
    """Names the function called in an unknown keyword (it was "per_query() got an unexpected ...")."""
    unknown = [k for k in conventions if k not in _CONVENTION_KEYWORDS]
    if unknown:
        raise TypeError(
            f"{function}() got an unexpected keyword argument {unknown[0]!r}; "
            f"besides its own arguments it takes the conventions {', '.join(_CONVENTION_KEYWORDS)}"
        )


def _mean(function: str, metric: str, y_true: Any, y_score: Any, qid: Any, **conventions: Any) -> float:
    _check_keywords(conventions, function)
    return per_query(metric, y_true, y_score, qid, **conventions).mean()


def _cutoff(k: Any) -> int:
    """A cutoff k: an integer >= 1 (2.5 or "x" would otherwise be truncated or fail obscurely)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise invalid_parameter("k", "an integer >= 1", k)
    return int(k)


def mean_average_precision(y_true: Any, y_score: Any, qid: Any = None, **conventions: Any) -> float:
    """Mean over queries of average precision.

    Examples
    --------
    >>> # Yue et al. Table 1, hypothesis h1: relevant documents at ranks 1, 6, 7.
    >>> round(mean_average_precision([1, 0, 0, 0, 0, 1, 1, 0], [8, 7, 6, 5, 4, 3, 2, 1]), 2)
    0.59
    """
    return _mean("mean_average_precision", "map", y_true, y_score, qid, **conventions)


def ndcg(y_true: Any, y_score: Any, qid: Any = None, k: Optional[int] = None, **conventions: Any) -> float:
    """Mean NDCG@k over queries (no cutoff when k is None).

    Examples
    --------
    >>> from svmmap.metrics import ndcg
    >>> # Grades 1 and 2 in the wrong order: DCG = (2^1 - 1) / log2(2) + (2^2 - 1) / log2(3) = 2.8928
    >>> # and the ideal DCG = 3 / log2(2) + 1 / log2(3) = 3.6309, so NDCG = 0.7967.
    >>> round(ndcg([1, 2], [2.0, 1.0]), 4)
    0.7967
    >>> round(ndcg([1, 2], [2.0, 1.0], k=1), 4)  # the top document only: gain 1 of an ideal 3
    0.3333
    """
    return _mean("ndcg", "ndcg" if k is None else f"ndcg@{_cutoff(k)}", y_true, y_score, qid, **conventions)


def mrr(y_true: Any, y_score: Any, qid: Any = None, k: Optional[int] = None, **conventions: Any) -> float:
    """Mean reciprocal rank of the first relevant document (within the top k if given).

    Examples
    --------
    >>> from svmmap.metrics import mrr
    >>> # The first relevant document is at rank 2 in query 1 and at rank 1 in query 2.
    >>> mrr([0, 1, 1, 0], [2.0, 1.0, 2.0, 1.0], qid=[1, 1, 2, 2])  # (1/2 + 1/1) / 2
    0.75
    >>> mrr([0, 1, 1, 0], [2.0, 1.0, 2.0, 1.0], qid=[1, 1, 2, 2], k=1)  # rank 2 is past the cutoff
    0.5
    """
    return _mean("mrr", "mrr" if k is None else f"mrr@{_cutoff(k)}", y_true, y_score, qid, **conventions)


def roc_auc(y_true: Any, y_score: Any, qid: Any = None, **conventions: Any) -> float:
    """Mean over queries of the ROC area (fraction of correctly ordered relevant/non-relevant pairs).

    Examples
    --------
    >>> # Yue et al. Table 1, hypothesis h2 (reverse order): 8 of 15 pairs right.
    >>> round(roc_auc([1, 0, 0, 0, 0, 1, 1, 0], [1, 2, 3, 4, 5, 6, 7, 8]), 2)
    0.53
    """
    return _mean("roc_auc", "roc", y_true, y_score, qid, **conventions)


def precision_at(k: int, y_true: Any, y_score: Any, qid: Any = None, **conventions: Any) -> float:
    """Mean precision in the top k."""
    return _mean("precision_at", f"p@{_cutoff(k)}", y_true, y_score, qid, **conventions)


@ranks_by_query
def _ranking_score(y_true: Any, y_pred: Any, *, metric: str, qid: Any = None, **conventions: Any) -> float:
    if qid is None:
        raise ValueError(
            f"the {metric!r} ranking scorer needs qid=: enable metadata routing "
            "(sklearn.set_config(enable_metadata_routing=True)), call .set_score_request(qid=True) "
            "on the scorer and pass qid=... to the search's fit"
        )
    return per_query(metric, y_true, y_pred, qid, **conventions).mean()


def make_ranking_scorer(metric: str = "map", **conventions: Any) -> Any:
    """A scikit-learn scorer for a ranking metric averaged over queries, e.g. for GridSearchCV.

    The scorer scores ``estimator.predict(X)`` against ``y`` with ``per_query(metric, ...)``
    (same metric names and conventions). It needs each document's query id, which scikit-learn
    passes to scorers through metadata routing: enable it, request ``qid`` from the scorer with
    ``.set_score_request(qid=True)`` and from the estimator with ``.set_fit_request(qid=True)``,
    and split with a query-grouped splitter so that no query is cut between training and
    validation (``GroupKFold`` with ``groups=qid``).

    Parameters
    ----------
    metric : str, default="map"
        ``"map"``, ``"ndcg"``, ``"ndcg@k"``, ``"mrr"``, ``"mrr@k"``, ``"roc"`` or ``"p@k"``.
    **conventions
        ``relevance_threshold``, ``ties``, ``gain``, ``no_relevant`` (see the module docs).

    Returns
    -------
    scorer : callable ``scorer(estimator, X, y, qid=...)``, greater is better.

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.model_selection import GridSearchCV, GroupKFold
    >>> from svmmap import SVMMap
    >>> from svmmap.datasets import load_mq2008
    >>> from svmmap.metrics import make_ranking_scorer
    >>> X, y, qid = load_mq2008(fold=1, split="vali")
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(
    ...         SVMMap().set_fit_request(qid=True),
    ...         {"C": [0.1, 10.0]},
    ...         scoring=make_ranking_scorer("ndcg@10").set_score_request(qid=True),
    ...         cv=GroupKFold(n_splits=3),
    ...     ).fit(X, y, qid=qid, groups=qid)
    >>> sorted(search.cv_results_["param_C"].tolist())
    [0.1, 10.0]
    """
    from sklearn.metrics import make_scorer

    # Check the name and conventions now rather than inside a search.
    _check_keywords(conventions, "make_ranking_scorer")
    per_query(metric, [1.0, 0.0], [1.0, 0.0], None, **conventions)
    return make_scorer(_ranking_score, greater_is_better=True, metric=metric, **conventions)


def best_accuracy(y_true: Any, y_score: Any, qid: Any = None, *, relevance_threshold: float = 0.0) -> float:
    """Mean over queries of the best accuracy a threshold on the scores can reach.

    For each query, documents scoring above a threshold are classified relevant and the others
    non-relevant; the threshold ranges over every cut between distinct scores (and above and
    below all of them), and the best fraction of correctly classified documents counts. This is
    the "best accuracy" of Yue et al. (2007), Table 4. Every query with at least one document
    counts, with or without relevant documents.

    Examples
    --------
    >>> # Yue et al. Table 3, hypothesis h1 (document 1 first): the best cut, after document 1,
    >>> # misclassifies documents 6-9: accuracy 7/11.
    >>> round(best_accuracy([1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0], list(range(11, 0, -1))), 2)
    0.64
    """
    labels, scores, codes, uniques = _inputs(y_true, y_score, qid)
    # Every other metric's threshold is checked by the core; this one compares in numpy, where
    # NaN made no document relevant and every query "perfect" (1.0).
    relevance_threshold = finite_number(relevance_threshold, "relevance_threshold")
    relevant = labels > relevance_threshold
    best = []
    order = np.lexsort((-scores, codes))
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    for q in range(len(uniques)):
        rows = order[bounds[q] : bounds[q + 1]]
        if rows.size == 0:
            continue
        s, r = scores[rows], relevant[rows]
        # Cut after position t (top t called relevant): correct = relevant in the top t plus
        # non-relevant below. Only cuts between distinct scores (or at the ends) are possible.
        correct = np.concatenate([[0], np.cumsum(r)]) + (~r).sum() - np.concatenate([[0], np.cumsum(~r)])
        allowed = np.ones(len(rows) + 1, dtype=bool)
        allowed[1:-1] = s[:-1] != s[1:]
        best.append(correct[allowed].max() / len(rows))
    return float(np.mean(best)) if best else float("nan")
