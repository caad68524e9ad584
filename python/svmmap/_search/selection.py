"""The one loop that chooses C on validation data, shared by the LETOR experiment, Yue et al.'s
protocol and run fusion (and any tool that picks a hyperparameter from a grid)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, Iterable, Optional, Tuple, TypeVar

from .._fit.degenerate import DegenerateModelWarning

__all__ = ["Selection", "choose_C"]

M = TypeVar("M")


@dataclass
class Selection(Generic[M]):
    """The outcome of a grid search: the chosen C, its validation score and model (None when
    the caller's fit function returns none), and the score of every C tried."""

    C: float
    score: float
    model: Optional[M]
    scores: Dict[float, float] = field(default_factory=dict)


def choose_C(
    grid: Iterable[float],
    fit_and_score: Callable[[float], Tuple[float, Optional[M]]],
    tolerance: float = 0.0,
) -> Selection[M]:
    """Fits once per C of ``grid`` (in the order given) and keeps the best validation score.

    ``fit_and_score(C)`` returns (score, model); higher scores are better. On ties the C tried
    first wins, so an ascending grid prefers the smaller C (the stronger regularization). A
    NaN score (a validation set on which the metric is nowhere defined) is never chosen; when
    every C scores NaN, no choice is made and a ValueError says so.

    With ``tolerance`` > 0, the C chosen is the first one in grid order whose score is within
    ``tolerance`` of the best score, so that scores closer than the noise of the fits count as
    ties (an ascending grid then prefers the smallest C that is nearly as good as the best).

    A model that ranks nothing (its ``degenerate_`` is true: w = 0, or scores that tie within
    every training query; for a Pipeline, its last step's) is chosen only when every C gives
    one, and then with a ``DegenerateModelWarning``: its validation score only reflects how ties
    are broken.

    >>> choose_C([0.1, 1.0, 10.0], lambda C: ({0.1: 0.5, 1.0: 0.7, 10.0: 0.7}[C], None)).C
    1.0
    >>> choose_C([0.1, 1.0, 10.0], lambda C: ({0.1: 0.5, 1.0: 0.698, 10.0: 0.7}[C], None), tolerance=0.005).C
    1.0
    """
    if not (tolerance >= 0 and tolerance < float("inf")):
        raise ValueError(f"the score tolerance must be a finite number >= 0, got {tolerance!r}")
    scores: Dict[float, float] = {}
    tried = []
    for C in grid:
        score, model = fit_and_score(C)
        scores[C] = score
        tried.append(Selection(C, score, model))
    if not tried:
        raise ValueError("the C grid must not be empty")
    ranking = [t for t in tried if not ranks_nothing(t.model)]
    if not ranking:
        warnings.warn(
            f"at every C of {list(scores)} the model ranks nothing (w = 0, or scores that tie within every "
            "training query), so the choice of C means nothing; see the DegenerateModelWarning of the fits",
            DegenerateModelWarning,
            stacklevel=2,
        )
        ranking = tried
    # A choice made on NaN would be the first C whatever the data: NaN scores are left out.
    scored = [t for t in ranking if t.score == t.score]
    if not scored:
        raise ValueError(
            f"every C of {list(scores)} has a NaN validation score (the metric is defined on no validation "
            "query, e.g. none has a relevant document), so C cannot be chosen"
        )
    best = scored[0]
    for t in scored[1:]:
        if t.score > best.score:
            best = t
    if tolerance > 0:
        best = next(t for t in scored if t.score >= best.score - tolerance)
    best.scores = scores
    return best


def ranks_nothing(model: Any) -> bool:
    """Whether a fitted model (or a Pipeline's last step) was found to rank nothing at fit."""
    steps = getattr(model, "steps", None)
    last = steps[-1][1] if steps else model
    return bool(getattr(last, "degenerate_", False))
