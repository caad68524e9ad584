"""Private: what a search's fit tells: a split's validation score (and whether the model ranks
nothing there), and whether a fit's error means its candidate cannot run on this data."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Tuple

import numpy as np

from .. import _core
from .._fit.degenerate import is_degenerate, score_spread
from .._validation import check_qid
from ..estimator import query_mean

if TYPE_CHECKING:
    from .engine import Policy


class QueryMeanScorer:
    """SVMMapCV's ``scorer_``: the metric that scores a split, as a callable
    ``scorer(estimator, X, y, qid, sample_weight=None)`` (scikit-learn's scorers take
    ``(estimator, X, y)``; a ranking needs its queries too): the metric of the estimator's
    ``predict(X)`` averaged over the queries where it is defined, weighted by
    ``sample_weight`` when given, as the search's validation scores are."""

    def __init__(self, metric: str, relevance_threshold: float) -> None:
        self.metric = metric
        self.relevance_threshold = relevance_threshold

    def __call__(self, estimator: Any, X: Any, y: Any, qid: Any, sample_weight: Any = None) -> float:
        scores = np.asarray(estimator.predict(X), dtype=np.float64)
        return query_mean(self.metric, y, scores, qid, sample_weight, self.relevance_threshold)

    def __repr__(self) -> str:
        return f"QueryMeanScorer({self.metric!r}, relevance_threshold={self.relevance_threshold!r})"


def refused_on_this_data(error: BaseException) -> bool:
    """Whether a fit's error means that its candidate cannot run on this data: the core's
    refusal of the loss for a query too long for its oracle ("loss must be a loss whose
    oracle takes at most ..."), a C too large for float64 (`overflow_named` names C; smaller
    C values still run), or memory the fit cannot have. Any other error (bad data, a bug)
    ends the search, so that it is never taken for a candidate that merely lost."""
    if isinstance(error, MemoryError):
        return True
    text = str(error)
    return text.startswith("loss must be a loss whose oracle takes at most") or "; C = " in text


def validation_score(coef: np.ndarray, data: Tuple[Any, ...], policy: Policy) -> Tuple[float, bool]:
    """A split's score and whether the model ranks nothing there (w = 0, or scores that tie
    within every validation query). ``data`` is (matrix, rows, labels, qid, document weights):
    the validation documents are the matrix's rows ``rows`` (None: all of them), so that a
    split scores on the search's one matrix without a copy of its rows (a prediction is a
    row's own dot product, the same wherever the row is)."""
    v_X, v_rows, v_y, v_qid, v_weights = data
    rows = None if v_rows is None else np.ascontiguousarray(v_rows, dtype=np.int64)
    predicted = _core.predict(v_X, coef, policy.threads, rows)
    score = query_mean(policy.scoring, v_y, predicted, v_qid, v_weights, policy.relevance_threshold)
    v_codes = check_qid(v_qid, predicted.shape[0])[0]
    labels = np.asarray(v_y, dtype=np.float64)
    return score, is_degenerate(coef, lambda _: [score_spread(predicted, labels, v_codes)])
