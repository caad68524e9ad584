"""How a fit is watched: its LightGBM-style arguments read once (validation sets, early stopping,
callbacks), and the hook the solver calls after every iteration, which scores the validation
sets, logs and calls the callbacks.
"""

from __future__ import annotations

import contextlib
import logging
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, cast

import numpy as np

from .._typing import IterationRecord
from .._validation import warn_unused
from ..callback import CallbackEnv, EvalResult, any_of_the_user, is_early_stop, split_callbacks
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
    #: Early stopping's state; after the fit, the round kept (a callback's EarlyStopException
    #: replaces it with the round it names).
    early: Optional[EarlyStopping]
    on_iteration: Optional[Callable[[IterationRecord], bool]] = None
    #: Whether the solver must hand the hook every iterate: to score validation sets, or for
    #: the callbacks of ``fit(callbacks=...)`` (``env.coef``, the rounds an EarlyStopException
    #: can keep).
    needs_coef: bool = False


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
    if eval_set is None:
        _warn_without_eval_set(r, others)
    watch = Watch(evals, early, needs_coef=evals is not None or any_of_the_user(others))
    watch.on_iteration = iteration_callback(model, evals, early, others, watch=watch)
    return watch


#: Why the arguments that describe validation sets do nothing without one.
_NO_EVAL_SET = (
    "it needs an eval_set, and fit was given none; give eval_set=[(X_val, y_val)] with "
    "eval_qid=[qid_val] (or eval_X, eval_y) to have them scored"
)


def _warn_without_eval_set(r: FitRequest, callbacks: List[Any]) -> None:
    """Warns of every argument of ``r`` that only describes validation sets, and of every
    callback that only reads their scores, when no validation set is given: LightGBM ignores
    them without a word, and issue 46 asks that no parameter be. ``early_stopping_rounds`` and
    an ``early_stopping`` callback are refused instead (`validation_sets`), as LightGBM does."""
    described = {"eval_metric": r.eval_metric, "eval_at": r.eval_at, "eval_names": r.eval_names}
    given = [f"{k}={v!r}" for k, v in described.items() if v is not None]
    given += [f"callbacks=[{cb.reads_eval_sets}(...)]" for cb in callbacks if hasattr(cb, "reads_eval_sets")]
    for what in given:
        warn_unused(what, _NO_EVAL_SET)


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
    *,
    watch: Optional[Watch] = None,
) -> Optional[Callable[[IterationRecord], bool]]:
    """The per-iteration hook handed to the solver: scores the validation sets (when
    given) at the iterate w, logs (when verbose), runs ``callbacks`` (in LightGBM's order,
    `svmmap.callback.split_callbacks`'s, with early stopping at its place among them) and
    calls the model's callback, whose true return value stops training. A callback's
    EarlyStopException stops training too, keeping the round it names: every iterate is kept
    for that while callbacks of the user's run, and ``watch.early`` becomes that round's
    record. None when nothing is asked for, so that the solver need not enter Python at every
    iteration."""
    verbose = model.verbose > 0
    user_callback = model.callback
    callbacks = callbacks or []
    if not verbose and user_callback is None and evals is None and not callbacks:
        return None
    # LightGBM runs early stopping (order 30) after the log (10) and the record (20), and
    # callbacks of a higher order after it.
    before = [cb for cb in callbacks if getattr(cb, "order", -1) < 30]
    after = [cb for cb in callbacks if getattr(cb, "order", -1) >= 30]
    # The iterates a callback's EarlyStopException may name, by round.
    iterates: Optional[Dict[int, np.ndarray]] = {} if any_of_the_user(callbacks) else None
    end = int(getattr(model, "max_iter", 0)) + 1
    # LightGBM's env.params: the estimator's parameters, read once.
    params = model.get_params(deep=False) if hasattr(model, "get_params") else {}

    def on_iteration(record: IterationRecord) -> bool:
        # The core adds the iterate only when validation sets or callbacks need it; the record
        # the user's callback sees stays as documented.
        coef = cast(dict, record).pop("coef", None)
        iteration = int(record["iteration"])
        stop = False
        now: dict = {}
        if evals is not None and coef is not None:
            for name, scorer, results in evals:
                now[name] = scorer(coef)
                for metric, value in now[name].items():
                    results[metric].append(value)
                    if verbose:
                        logger.info("iter %4d  %s %s %.6g", iteration, name, metric, value)
            # The user's callback sees the validation metrics too, as LightGBM's callbacks do.
            record["eval"] = now
        if verbose:
            logger.info(
                "iter %4d  primal %.6g  dual %.6g  gap %.3g  cuts %d/%d  %.2fs",
                iteration,
                record["primal"],
                record["dual"],
                record["gap"],
                record["n_active"],
                record["n_cuts"],
                record["seconds"],
            )
        if iterates is not None and coef is not None:
            iterates[iteration] = np.array(coef, dtype=np.float64, copy=True)
        if callbacks or early is not None:
            env = _environment(model, record, coef, now, iteration, end, params)
            stop = _run_callbacks(env, now, before, after, early, iterates, watch)
        asked = bool(user_callback(record)) if user_callback is not None else False
        return asked or stop

    return on_iteration


def _environment(
    model: Any, record: IterationRecord, coef: Optional[np.ndarray], now: dict, iteration: int, end: int, params: dict
) -> Any:
    """The round's `svmmap.callback.CallbackEnv`."""
    results = [
        EvalResult(name, metric, value, True) for name, values in now.items() for metric, value in values.items()
    ]
    return CallbackEnv(model, iteration, results, cast(dict, record), cast(np.ndarray, coef), 1, end, params)


def _run_callbacks(
    env: Any,
    now: dict,
    before: List[Any],
    after: List[Any],
    early: Optional[EarlyStopping],
    iterates: Optional[Dict[int, np.ndarray]],
    watch: Optional[Watch],
) -> bool:
    """One round of ``fit(callbacks=...)`` on ``env``: the callbacks before early stopping,
    early stopping, the callbacks after it, stopping at the first that ends training; whether
    one did."""
    iteration = env.iteration
    try:
        for cb in before:
            cb(env)
        if early is not None and env.coef is not None and early.update(iteration, env.coef, now):
            return True
        for cb in after:
            cb(env)
    except Exception as exc:
        if not is_early_stop(exc):
            raise
        kept = _round_named(exc, iteration, iterates)
        if watch is not None:
            watch.early = EarlyStopping.kept_by_callback(kept, (iterates or {})[kept], _best_scores(exc))
        return True
    return False


def _round_named(exc: Any, iteration: int, iterates: Optional[Dict[int, np.ndarray]]) -> int:
    """The round an EarlyStopException keeps: its ``best_iteration``, an ``env.iteration``
    of this fit (checked)."""
    best = getattr(exc, "best_iteration", None)
    if isinstance(best, bool) or not isinstance(best, numbers.Integral) or not 1 <= int(best) <= iteration:
        raise ValueError(
            f"a callback raised EarlyStopException(best_iteration={best!r}) at round {iteration}: best_iteration "
            f"must be the env.iteration of a round so far, 1 to {iteration} (svmmap counts rounds from "
            "env.begin_iteration = 1, LightGBM from 0)"
        ) from None
    if iterates is None or int(best) not in iterates:
        raise ValueError(
            "a callback raised EarlyStopException, but this fit keeps no iterates to choose from (a loss trained "
            "in CCCP rounds): stop it with SVMMap(callback=...) returning True instead"
        ) from None
    return int(best)


def _best_scores(exc: Any) -> Dict[str, Dict[str, float]]:
    """``best_score_`` from an EarlyStopException's ``best_score``, a list of (dataset_name,
    metric_name, metric_value, ...) results, as LightGBM builds it."""
    scores: Dict[str, Dict[str, float]] = {}
    for result in getattr(exc, "best_score", None) or []:
        scores.setdefault(str(result[0]), {})[str(result[1])] = float(result[2])
    return scores
