"""Private: the one-line errors for SVMMapCV's own parameters (the C grid, the search's
parameters), read from the estimator's attributes (``vars(estimator)``) before any
data is read."""

from __future__ import annotations

import numbers
from typing import Any, List, Mapping

import numpy as np

from .._fit.defaults import SEARCH_DEFAULTS
from .._validation import check_bool, check_spelling, check_verbose, invalid_parameter

__all__ = [
    "check_max_train_queries",
    "check_params",
    "check_prune_margin",
    "check_search_params",
    "refuse_search_only_params",
]


def check_search_params(params: Mapping[str, Any]) -> None:
    """One-line errors for the parameters of the search."""
    p = params["patience"]
    if p is not None and (isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1):
        raise invalid_parameter("patience", "an integer >= 1 or None", p)
    check_prune_margin(params["prune_margin"])
    check_max_train_queries(params["max_train_queries"])
    if not params["warm_start"] or params["confirm_tolerance"] is not None:
        raise ValueError(
            "the search over losses and preprocessings fits warm C paths: warm_start=False and "
            "confirm_tolerance are only available for the C search alone"
        )
    if params["losses"] is not None and (isinstance(params["losses"], (str, bytes)) or not list(params["losses"])):
        raise ValueError(
            f'losses must be a non-empty list of losses, e.g. ["map", "pairwise"], got {params["losses"]!r}'
        )


def check_prune_margin(m: Any, name: str = "prune_margin") -> None:
    """THE check of the race's margin, SVMMapCV's and ``svmmap learn --prune-margin``'s
    (``name``: the parameter as the user gave it)."""
    if m is not None and (
        isinstance(m, bool) or not isinstance(m, numbers.Real) or not (np.isfinite(float(m)) and float(m) >= 0)
    ):
        raise invalid_parameter(name, "a finite number >= 0 or None", m)


def check_max_train_queries(q: Any, name: str = "max_train_queries") -> None:
    """THE check of the large-data rule's size, SVMMapCV's and ``svmmap learn
    --max-train-queries``'s (``name``: the parameter as the user gave it)."""
    if q is not None and (isinstance(q, bool) or not isinstance(q, numbers.Integral) or q < 1):
        raise invalid_parameter(name, "an integer >= 1 or None", q)


def refuse_search_only_params(params: Mapping[str, Any]) -> None:
    """Refuses the search's own parameters in the C search alone, which fits every C on
    every split: ``patience`` (the early stop along a candidate's C path) and
    ``prune_margin`` (the race between candidates, of which there is one) and
    ``max_train_queries`` (the search's large-data rule) would otherwise be ignored
    without a word. Their defaults and None (what the C search alone does)
    are accepted."""
    for name in ("patience", "prune_margin", "max_train_queries"):
        value = params[name]
        # A bool equals 1 (patience=True passed as the default 1): only the default itself is
        # accepted, of its own type.
        default = SEARCH_DEFAULTS[name]
        if value is not None and (value != default or isinstance(value, (bool, np.bool_)) != isinstance(default, bool)):
            raise ValueError(
                f'{name}={value!r} applies to the search over losses and preprocessings (loss="auto" or '
                f"preprocessing=...); the C search alone fits every C on every split: leave {name} at its "
                "default or None, or search"
            )


def check_params(params: Mapping[str, Any]) -> List[float]:
    """The C grid in ascending order; one-line errors for bad parameters."""
    Cs = params["Cs"]
    if isinstance(Cs, (str, bytes)) or not hasattr(Cs, "__iter__"):
        raise invalid_parameter("Cs", "a list of numbers > 0", Cs)
    values = list(Cs)
    if not values:
        raise ValueError("Cs must be a non-empty list of numbers > 0, got an empty list")
    for c in values:
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or not (np.isfinite(float(c)) and float(c) > 0):
            raise ValueError(f"Cs must hold finite numbers > 0, got {c!r}")
    grid = sorted(float(c) for c in values)
    for a, b in zip(grid, grid[1:]):
        if a == b:
            raise ValueError(f"Cs lists {a:g} twice")
    check_bool(params["refit"], "refit")
    check_bool(params["warm_start"], "warm_start")
    tol = params["score_tolerance"]
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (np.isfinite(float(tol)) and float(tol) >= 0):
        raise invalid_parameter("score_tolerance", "a finite number >= 0", tol)
    confirm = params["confirm_tolerance"]
    if confirm is not None and (
        isinstance(confirm, bool)
        or not isinstance(confirm, numbers.Real)
        or not (np.isfinite(float(confirm)) and float(confirm) >= 0)
    ):
        raise invalid_parameter("confirm_tolerance", "a finite number >= 0 or None", confirm)
    check_verbose(params["verbose"], "1 or True: a line per candidate and C, 2: per split")
    b = params["time_budget"]
    if b is not None and (
        isinstance(b, bool) or not isinstance(b, numbers.Real) or not (np.isfinite(float(b)) and float(b) > 0)
    ):
        raise invalid_parameter("time_budget", "a number of seconds > 0 or None", b)
    if not isinstance(params["scoring"], str):
        raise invalid_parameter("scoring", "a metric name such as 'map' or 'ndcg@10'", params["scoring"])
    check_spelling(params["scoring"], "scoring")
    from ..metrics import check_metric_names

    # The metric name is checked on a one-query example before any training.
    check_metric_names([params["scoring"]], "scoring")
    return grid
