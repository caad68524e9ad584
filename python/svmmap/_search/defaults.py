"""Private: the defaults of the search, the one table that `svmmap.SVMMapCV` and
``svmmap learn --auto`` both read. It imports nothing, so that the command line reads it
without importing scikit-learn."""

from __future__ import annotations

from typing import Any, Dict

__all__ = ["SEARCH_DEFAULTS"]

SEARCH_DEFAULTS: Dict[str, Any] = {
    # Six decades around SVM^map's usual C (C multiplies the mean loss over queries, so values
    # far above 1000 only matter for unscaled features).
    "Cs": (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0),
    "cv": 5,
    # The measure users report for rankers: the search chooses by it unless told otherwise.
    "scoring": "ndcg@10",
    "patience": 1,
    # The race across candidates: a candidate this far below the best over the same splits
    # (from the second split on) stops (benchmarks/auto_search.py).
    "prune_margin": 0.02,
}
