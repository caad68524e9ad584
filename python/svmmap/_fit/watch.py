"""How a fit is watched: its LightGBM-style arguments read once (validation sets, early stopping,
callbacks), and the hook the solver calls after every iteration, which scores the validation
sets, logs and calls the callbacks.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional, cast

from .._typing import IterationRecord
from ..callback import split_callbacks
from .evaluation_sets import (
    EarlyStopping,
    SetPreparer,
    check_eval_feature_names,
    validation_sets,
)
from .request import FitRequest

#: The package's logger (the same object as in `training`: loggers are named).
logger = logging.getLogger("svmmap")


@dataclass
class Watch:
    """How a fit is watched (`watching`): its validation sets, early stopping and the hook
    the solver calls after every iteration."""

    #: (name, scorer, {metric: values}) per validation set, or None without one.
    evals: Optional[list]
    early: Optional[EarlyStopping]
    on_iteration: Optional[Callable[[IterationRecord], bool]]


def watching(
    model: Any,
    request: FitRequest,
    n_features: int,
    threads: int,
    prepare: Optional[SetPreparer] = None,
) -> Watch:
    """THE reading of a fit's LightGBM-style arguments (`FitRequest`'s, which `request.fit_doc`
    describes), for the training data ``request.X``, ``request.y`` of ``n_features`` features:
    the validation sets checked and made ready by ``prepare`` (default: in memory, scored on
    ``threads`` threads), the early stopping asked for, and the solver's per-iteration hook,
    which scores them and calls the callbacks. Every fit reads them here."""
    r = request
    eval_set = lightgbm_eval_set(r.eval_set, r.eval_X, r.eval_y)
    early_callbacks, others = split_callbacks(r.callbacks)
    with lightgbm_names(r.eval_X):
        check_eval_feature_names(r.X, eval_set)
        evals, early = validation_sets(
            eval_set,
            r.eval_group,
            r.eval_qid,
            r.eval_metric,
            r.eval_at,
            r.early_stopping_rounds,
            n_features,
            threads,
            model.relevance_threshold,
            names=r.eval_names,
            # The training data is recognized by identity, as LightGBM does: the same arrays.
            training=[pair[0] is r.X and pair[1] is r.y for pair in eval_set] if eval_set is not None else None,
            early_callback=early_callbacks[0] if early_callbacks else None,
            prepare=prepare,
            log=model.verbose > 0,
        )
    return Watch(evals, early, iteration_callback(model, evals, early, others))


@contextlib.contextmanager
def lightgbm_names(eval_X: Any) -> Iterator[None]:
    """Errors of the validation sets in the words of LightGBM 4.7's spelling when the user
    gave ``eval_X`` and ``eval_y`` (which `lightgbm_eval_set` turns into ``eval_set``):
    ``eval_X`` / ``eval_y`` for one matrix, ``eval_X[i]`` / ``eval_y[i]`` for tuples of them,
    so that the message names the argument the user passed rather than ``eval_set[0] X``."""
    if eval_X is None:
        yield
        return
    single = not isinstance(eval_X, tuple)
    try:
        yield
    except ValueError as exc:
        import re

        def name(match: "re.Match[str]") -> str:
            arg = "eval_X" if match.group(2) != "y" else "eval_y"
            return arg if single else f"{arg}[{match.group(1)}]"

        text = re.sub(r"eval_set\[(\d+)\](?: (X|y)\b)?", name, str(exc))
        raise ValueError(text) from None


def lightgbm_eval_set(eval_set: Any, eval_X: Any, eval_y: Any) -> Any:
    """``eval_set``, or the list of (X, y) pairs LightGBM 4.7's ``eval_X``, ``eval_y`` spell
    (one matrix and one label array, or tuples of them)."""
    if eval_X is None and eval_y is None:
        return eval_set
    if eval_set is not None:
        raise ValueError("give eval_set or eval_X and eval_y, not both")
    if eval_X is None or eval_y is None:
        raise ValueError("eval_X and eval_y go together: give both")
    xs = list(eval_X) if isinstance(eval_X, tuple) else [eval_X]
    ys = list(eval_y) if isinstance(eval_y, tuple) else [eval_y]
    if len(xs) != len(ys):
        raise ValueError(f"eval_X has {len(xs)} sets and eval_y {len(ys)}: give one y per X")
    return list(zip(xs, ys))


def iteration_callback(
    model: Any,
    evals: Optional[list] = None,
    early: Optional[EarlyStopping] = None,
    callbacks: Optional[List[Any]] = None,
) -> Optional[Callable[[IterationRecord], bool]]:
    """The per-iteration hook handed to the solver: scores the validation sets (when
    given) at the iterate w, logs (when verbose) and calls the model's callback, whose true
    return value stops training. None when nothing is asked for, so that the solver need
    not enter Python at every iteration."""
    verbose = model.verbose > 0
    user_callback = model.callback
    callbacks = callbacks or []
    if not verbose and user_callback is None and evals is None and not callbacks:
        return None

    def on_iteration(record: IterationRecord) -> bool:
        # The core adds the iterate only when validation sets need it; the record the
        # user's callback sees stays as documented.
        coef = cast(dict, record).pop("coef", None)
        stop = False
        if evals is not None and coef is not None:
            now: dict = {}
            for name, scorer, results in evals:
                now[name] = scorer(coef)
                for metric, value in now[name].items():
                    results[metric].append(value)
                    if verbose:
                        logger.info("iter %4d  %s %s %.6g", record["iteration"], name, metric, value)
            if early is not None:
                stop = early.update(record["iteration"], coef, now)
            # The user's callback sees the validation metrics too, as LightGBM's callbacks do.
            record["eval"] = now
        if verbose:
            logger.info(
                "iter %4d  primal %.6g  dual %.6g  gap %.3g  cuts %d/%d  %.2fs",
                record["iteration"],
                record["primal"],
                record["dual"],
                record["gap"],
                record["n_active"],
                record["n_cuts"],
                record["seconds"],
            )
        if callbacks:
            from ..callback import CallbackEnv

            results = [
                (name, metric, value, True)
                for name, values in record.get("eval", {}).items()
                for metric, value in values.items()
            ]
            env = CallbackEnv(model, int(record["iteration"]), results, cast(dict, record), coef)
            for cb in callbacks:
                cb(env)
        asked = bool(user_callback(record)) if user_callback is not None else False
        return asked or stop

    return on_iteration
