"""The competitors of Yue et al.'s protocol as rankers: a single base function (SingleFeature), and
any model's fit on labels and queries and its ranking scores (a classifier's probability of the
top class, a ranker's predict).
"""

from __future__ import annotations

import warnings
from typing import Any, List, Optional, Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline

from .._fit.defaults import TRAINING_DEFAULTS
from .._validation import invalid_parameter
from ..estimator import SkippedQueriesWarning

# --------------------------------------------------------------------------------------------
# Competitors that are single base functions


class SingleFeature(BaseEstimator):
    """A base function as a competitor: ranks by one feature column.

    With ``feature`` given, always that column. Otherwise ``fit`` picks the column with the
    ``rank``-th highest MAP on the training queries (rank=1: "Best Func." of Yue et al.
    Tables 6-8; the paper does not say on which data the best function was chosen, here it is
    the training queries of each trial, so the test queries stay unseen).

    Parameters
    ----------
    feature : int or None, default=None
    rank : int, default=1
    C : ignored
        Present so that ``lambda C: SingleFeature(C=C)`` fits the factory convention.
    relevance_threshold : float, default=0.0

    Attributes
    ----------
    feature_ : int
        The column used.

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap.ir.protocol import SingleFeature
    >>> # Column 1 ranks the relevant document first in both queries, column 0 in neither.
    >>> X, y, qid = np.array([[0.2, 1.0], [0.9, 0.0], [0.1, 0.4], [0.8, 0.3]]), [1, 0, 1, 0], [1, 1, 2, 2]
    >>> SingleFeature().fit(X, y, qid).feature_, SingleFeature(rank=2).fit(X, y, qid).feature_
    (1, 0)
    >>> SingleFeature(feature=0).fit(X, y, qid).predict(X).tolist()
    [0.2, 0.9, 0.1, 0.8]
    """

    def __init__(
        self,
        feature: Optional[int] = None,
        rank: int = 1,
        C: float = TRAINING_DEFAULTS["C"],
        relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
    ) -> None:
        self.feature = feature
        self.rank = rank
        self.C = C
        self.relevance_threshold = relevance_threshold

    def fit(self, X: Any, y: Any, qid: Any = None) -> "SingleFeature":
        from .._validation import check_matrix, check_qid, forget_fit
        from ..metrics import mean_average_precision

        forget_fit(self)

        _, n_rows, d = check_matrix(X)
        if self.feature is not None:
            if not 0 <= int(self.feature) < d:
                raise invalid_parameter("feature", f"a column index in 0..{d - 1}", self.feature)
            self.feature_ = int(self.feature)
        else:
            check_qid(qid, n_rows, required_by="SingleFeature")
            if not 1 <= int(self.rank) <= d:
                raise invalid_parameter("rank", f"in 1..{d}", self.rank)
            cols = _columns(X)
            maps = np.array(
                [mean_average_precision(y, c, qid, relevance_threshold=self.relevance_threshold) for c in cols]
            )
            maps = np.where(np.isnan(maps), -np.inf, maps)
            # Stable: among equal MAPs the lower column index ranks first.
            self.feature_ = int(np.argsort(-maps, kind="stable")[int(self.rank) - 1])
        self.n_features_in_ = d
        return self

    def predict(self, X: Any) -> np.ndarray:
        if not hasattr(self, "feature_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("This SingleFeature instance is not fitted yet")
        return np.asarray(_columns(X, [self.feature_])[0], dtype=np.float64)


def _columns(X: Any, which: Optional[Sequence[int]] = None) -> List[np.ndarray]:
    import scipy.sparse as sp

    idx = range(X.shape[1]) if which is None else which
    if sp.issparse(X):
        Xc = X.tocsc()
        return [np.asarray(Xc[:, j].toarray()).ravel() for j in idx]
    arr = np.asarray(X)
    return [np.ascontiguousarray(arr[:, j], dtype=np.float64) for j in idx]


# --------------------------------------------------------------------------------------------
# Running the protocol


def _is_classifier(model: Any) -> bool:
    """scikit-learn's is_classifier, which needs estimator tags; other objects are rankers."""
    from sklearn.base import is_classifier

    try:
        return bool(is_classifier(model))
    except (AttributeError, TypeError):
        return getattr(model, "_estimator_type", None) == "classifier"


def fit_ranker(
    model: Any, X: Any, y: Any, qid: Any, *, relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"]
) -> Any:
    """Fit a ranker: ``model.fit(X, y, qid=qid)``.

    For a Pipeline, qid goes to its last step (unless metadata routing is on, when the pipeline
    routes it itself). A scikit-learn classifier (SVM_acc-style baselines such as LinearSVC)
    is fitted on the binary relevance ``y > relevance_threshold`` without qid; rank with
    `ranking_scores`. Skipped-query warnings are silenced: small training sets have
    them by design.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        if _is_classifier(model):
            return model.fit(X, (np.asarray(y, dtype=np.float64) > relevance_threshold).astype(np.int64))
        if isinstance(model, Pipeline):
            import sklearn

            if not sklearn.get_config().get("enable_metadata_routing", False):
                return model.fit(X, y, **{f"{model.steps[-1][0]}__qid": qid})
        return model.fit(X, y, qid=qid)


def ranking_scores(model: Any, X: Any) -> np.ndarray:
    """A fitted ranker's scores: ``predict`` for rankers, the decision function (or the
    probability of relevance) for classifiers."""
    if _is_classifier(model):
        if hasattr(model, "decision_function"):
            return np.asarray(model.decision_function(X), dtype=np.float64).reshape(-1)
        return np.asarray(model.predict_proba(X)[:, -1], dtype=np.float64)
    return np.asarray(model.predict(X), dtype=np.float64)
