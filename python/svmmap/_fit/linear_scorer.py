"""Private: the predict and score shared by the linear baselines of svmmap.baselines
(score = X @ coef_ + intercept_), and the copy of a fit's solver figures onto them."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from .. import _core
from .._validation import check_labels, check_matrix, check_qid, n_threads
from ..metrics import mean_average_precision
from .defaults import TRAINING_DEFAULTS
from .training import SOLVER_FIGURES

__all__ = ["_LinearScorer", "_copy_fit"]


class _LinearScorer(BaseEstimator):
    """Shared predict/score for the linear baselines: score = X @ coef_ + intercept_."""

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call fit(X, y, qid=...) first"
            )

    def predict(self, X: Any) -> np.ndarray:
        """Score every document (ranking = sorting a query's documents by score).

        Returns
        -------
        scores : ndarray of shape (n_documents,), in the row order of ``X``.
        """
        self._check_fitted()
        core_X, _, n_features = check_matrix(X)
        if n_features != self.n_features_in_:
            raise ValueError(
                f"X has {n_features} features, but {type(self).__name__} was fitted with {self.n_features_in_}"
            )
        threads = n_threads(getattr(self, "n_jobs", None))
        return _core.predict(core_X, np.ascontiguousarray(self.coef_, dtype=np.float64), threads) + float(
            getattr(self, "intercept_", 0.0)
        )

    def score(self, X: Any, y: Any, qid: Any = None) -> float:
        """Mean average precision of the predicted ranking (svmmap.metrics conventions)."""
        if qid is None:
            check_qid(None, 0, required_by=f"{type(self).__name__}.score")
        scores = self.predict(X)
        # The labels are checked here, in the names of this call ("y[1] is NaN"): the metric
        # would name them its own way, y_true.
        labels = check_labels(y, len(scores))
        return mean_average_precision(
            labels,
            scores,
            qid=qid,
            relevance_threshold=getattr(self, "relevance_threshold", TRAINING_DEFAULTS["relevance_threshold"]),
        )


def _copy_fit(target: Any, model: Any) -> None:
    """Copies the solver's figures (objective, gap, iterations ...) of ``model``, the SVMMap a
    baseline trained, onto the baseline."""
    for name in SOLVER_FIGURES:
        setattr(target, name, getattr(model, name))
