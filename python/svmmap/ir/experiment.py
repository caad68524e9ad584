"""The LETOR protocol: per fold, train on train with each C, pick C by validation MAP, test."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from .._fit.defaults import TRAINING_DEFAULTS
from .._search.selection import choose_C
from ..datasets import Fold
from ..estimator import SkippedQueriesWarning, SVMMap
from ..metrics import mean_average_precision

__all__ = [
    "DEFAULT_C_GRID",
    "FoldResult",
    "run_folds",
    "format_table",
]

DEFAULT_C_GRID = (0.1, 1.0, 10.0, 100.0, 1000.0)


@dataclass
class FoldResult:
    fold: str
    best_C: float
    vali_map: float
    test_map: float
    #: Seconds to fit the chosen C, and all C values of the grid.
    fit_seconds: float
    grid_seconds: float
    n_iter: int
    vali_by_C: dict


def run_folds(
    folds: Iterable[Fold],
    C_grid: Sequence[float] = DEFAULT_C_GRID,
    *,
    loss: str = TRAINING_DEFAULTS["loss"],
    eps: float = TRAINING_DEFAULTS["eps"],
    max_iter: int = TRAINING_DEFAULTS["max_iter"],
    n_jobs: Optional[int] = TRAINING_DEFAULTS["n_jobs"],
    progress: Optional[Callable[[str], None]] = None,
) -> List[FoldResult]:
    """Train/validate/test every fold; C is chosen by validation MAP (the smaller C on ties).

    MAP counts a document as relevant when its label is > 0, skips queries without a relevant
    document and breaks score ties pessimistically.
    """
    results = []
    for fold in folds:
        seconds_by_C = {}
        grid_start = time.perf_counter()

        def fit_and_score(C: float, fold: Fold = fold) -> Tuple[float, SVMMap]:
            model = SVMMap(C=C, loss=loss, eps=eps, max_iter=max_iter, n_jobs=n_jobs)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SkippedQueriesWarning)
                model.fit(fold.train.X, fold.train.y, qid=fold.train.qid)
            seconds_by_C[C] = time.perf_counter() - start
            vali = mean_average_precision(fold.vali.y, model.predict(fold.vali.X), fold.vali.qid)
            if progress:
                progress(
                    f"{fold.name} C={C:g}: validation MAP {vali:.4f} "
                    f"({model.n_iter_} iterations, {seconds_by_C[C]:.2f}s)"
                )
            return vali, model

        chosen = choose_C(C_grid, fit_and_score)
        vali, C, model, seconds, vali_by_C = chosen.score, chosen.C, chosen.model, seconds_by_C[chosen.C], chosen.scores
        assert model is not None
        test = mean_average_precision(fold.test.y, model.predict(fold.test.X), fold.test.qid)
        results.append(
            FoldResult(fold.name, C, vali, test, seconds, time.perf_counter() - grid_start, model.n_iter_, vali_by_C)
        )
    return results


def format_table(results: Sequence[FoldResult]) -> str:
    """A Markdown table: one row per fold and the mean."""
    lines = [
        "| fold | C (by validation) | validation MAP | test MAP | fit time, chosen C (s) | fit time, all C (s) |",
        "|------|------------------:|---------------:|---------:|-----------------------:|--------------------:|",
    ]
    for r in results:
        lines.append(
            f"| {r.fold} | {r.best_C:g} | {r.vali_map:.4f} | {r.test_map:.4f} | {r.fit_seconds:.2f} | {r.grid_seconds:.2f} |"
        )
    if results:
        lines.append(
            f"| mean | | {np.mean([r.vali_map for r in results]):.4f} | "
            f"**{np.mean([r.test_map for r in results]):.4f}** | "
            f"{np.mean([r.fit_seconds for r in results]):.2f} | {np.mean([r.grid_seconds for r in results]):.2f} |"
        )
    return "\n".join(lines)
