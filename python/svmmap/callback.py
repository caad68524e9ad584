"""LightGBM's training callbacks for ``SVMMap.fit(..., callbacks=[...])``: `early_stopping`,
`log_evaluation` and `record_evaluation`, called once per round (one iteration of the
cutting-plane solver; see the guide page "Early stopping"). LightGBM's own
``lightgbm.early_stopping``, ``lightgbm.log_evaluation`` and ``lightgbm.record_evaluation``
given to ``fit`` are read into these, with their settings (`split_callbacks`)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from ._validation import check_bool, invalid_parameter

__all__ = ["early_stopping", "log_evaluation", "record_evaluation", "CallbackEnv", "EarlyStopException", "EvalResult"]


class EvalResult(NamedTuple):
    """One validation score of a round, as LightGBM 4.7's ``EvalResult``: a tuple
    (dataset_name, metric_name, metric_value, maximize) whose fields are also named."""

    dataset_name: str
    metric_name: str
    metric_value: float
    #: Whether higher is better: True for every svmmap metric.
    maximize: bool


class EarlyStopException(Exception):
    """Raised by a callback to stop training and keep an earlier round, as LightGBM's
    ``lightgbm.callback.EarlyStopException`` (which ``fit`` takes too).

    Parameters
    ----------
    best_iteration : int
        The round to keep, as the ``env.iteration`` of that round: svmmap counts rounds from
        ``env.begin_iteration`` (1), so a callback that saves ``env.iteration`` at its best
        round and raises this with it keeps that round, as it does in LightGBM (which counts
        from 0). ``coef_`` is then that round's iterate and ``best_iteration_`` that round.
    best_score : list of (dataset_name, metric_name, metric_value, maximize)
        The scores of that round (``env.evaluation_result_list`` at the time), which become
        ``best_score_``.
    """

    def __init__(self, best_iteration: int, best_score: Any) -> None:
        super().__init__(best_iteration, best_score)
        self.best_iteration = best_iteration
        self.best_score = best_score


@dataclass
class CallbackEnv:
    """What a callback receives after every round, with the fields of LightGBM's
    ``CallbackEnv`` (``model``, ``params``, ``iteration``, ``begin_iteration``,
    ``end_iteration``, ``evaluation_result_list``) and svmmap's own (``record``, ``coef``).

    Callbacks run in LightGBM's order: those without an ``order`` attribute first, in the
    order given, then `log_evaluation` (order 10), `record_evaluation` (20) and
    `early_stopping` (30), so a round's log line comes before early stopping's verdict. A
    callback that raises `EarlyStopException` (svmmap's or LightGBM's) ends training there,
    the callbacks after it in that order not called for the round.

    Attributes
    ----------
    model : SVMMap
        The estimator being fitted (LightGBM passes its Booster).
    iteration : int
        The round, counted from 1 (``history_``'s ``"iteration"``), where LightGBM counts from
        0: idioms relative to ``begin_iteration`` and ``end_iteration`` mean the same in both.
    evaluation_result_list : list of EvalResult
        The round's validation scores, in the order of the sets and metrics: tuples
        (dataset_name, metric_name, metric_value, maximize), every svmmap metric better when
        higher.
    record : dict
        The round's progress record (``history_``'s entry: primal, dual, gap, ...).
    coef : ndarray
        The round's iterate w.
    begin_iteration : int
        The first round's ``iteration``: 1.
    end_iteration : int
        One past the last round training may run: ``max_iter + 1`` (the solver usually
        converges before), so ``iteration == end_iteration - 1`` is the last possible round.
    params : dict
        The estimator's parameters (``model.get_params()``), as LightGBM's ``params``.
    """

    model: Any
    iteration: int
    evaluation_result_list: List[EvalResult]
    record: Dict[str, Any]
    coef: np.ndarray = field(repr=False)
    begin_iteration: int = 1
    end_iteration: int = 0
    params: Dict[str, Any] = field(default_factory=dict, repr=False)


def is_early_stop(exc: BaseException) -> bool:
    """Whether ``exc`` is svmmap's `EarlyStopException` or LightGBM's (recognized by its class,
    so that LightGBM need not be imported: its exception exists only when it is)."""
    if isinstance(exc, EarlyStopException):
        return True
    kind = type(exc)
    module = getattr(kind, "__module__", "") or ""
    return kind.__name__ == "EarlyStopException" and (module == "lightgbm" or module.startswith("lightgbm."))


class _EarlyStopping:
    """The callback `early_stopping` returns; the fit reads its best round at the end."""

    #: LightGBM's place for early stopping among the callbacks: after the log and the record.
    order = 30

    stopping_rounds: int
    first_metric_only: bool
    verbose: bool
    min_delta: float

    def __init__(self, stopping_rounds: int, first_metric_only: bool, verbose: bool, min_delta: float = 0.0) -> None:
        if (
            isinstance(stopping_rounds, bool)
            or not isinstance(stopping_rounds, numbers.Integral)
            or stopping_rounds < 1
        ):
            raise invalid_parameter("stopping_rounds", "an integer >= 1", stopping_rounds)
        self.stopping_rounds = int(stopping_rounds)
        # check_bool, as every other yes-or-no parameter: bool() took "yes", "no" and "False"
        # for True.
        self.first_metric_only = check_bool(first_metric_only, "first_metric_only")
        self.verbose = check_bool(verbose, "verbose")
        if (
            isinstance(min_delta, bool)
            or not isinstance(min_delta, numbers.Real)
            or not (np.isfinite(min_delta) and min_delta >= 0)
        ):
            raise invalid_parameter("min_delta", "a finite number >= 0", min_delta)
        self.min_delta = float(min_delta)

    def __repr__(self) -> str:
        return (
            f"early_stopping({self.stopping_rounds}, first_metric_only={self.first_metric_only}, "
            f"min_delta={self.min_delta:g})"
        )


def early_stopping(
    stopping_rounds: int, first_metric_only: bool = False, verbose: bool = True, min_delta: float = 0.0
) -> Any:
    """Stop when a validation score has not improved for ``stopping_rounds`` rounds, and keep
    the round where it was best, as LightGBM's ``early_stopping``.

    Every metric of every validation set is watched (with ``first_metric_only=True``, the
    first metric on every set, as LightGBM compares each result's metric name with the first
    one), except a set that is the training data (``eval_set``'s ``X`` and ``y`` the very
    arrays given to ``fit``), whose scores say nothing of overfitting. Training stops as soon
    as one watched score has gone ``stopping_rounds`` rounds without improving; ``coef_`` is
    then the iterate of that score's best round (``best_iteration_``, ``best_score_``), and
    ``objective_``, ``dual_objective_`` and ``gap_`` are that round's. When training ends
    first (the solver converged, or a limit was reached), the best round of the first watched
    score is kept. ``verbose`` prints the kept round in LightGBM's words either way ("Early
    stopping, best iteration is:", or "Did not meet early stopping" with why training ended).
    ``min_delta``: a round improves on the best only when its score exceeds the best by more
    than this (LightGBM 4's ``min_delta``; one number for every metric, where LightGBM also
    takes a list per metric).

    Examples
    --------
    >>> import svmmap
    >>> from svmmap.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=40, docs_per_query=10, n_features=5, random_state=0)
    >>> Xv, yv, qv = make_ranking(n_queries=10, docs_per_query=10, n_features=5, random_state=1)
    >>> model = svmmap.SVMMap(C=100.0).fit(
    ...     X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv], eval_metric="ndcg@10",
    ...     callbacks=[svmmap.early_stopping(3, verbose=False)],
    ... )
    >>> model.best_iteration_ <= model.n_iter_
    True
    """
    return _EarlyStopping(stopping_rounds, first_metric_only, verbose, min_delta)


class _LogEvaluation:
    period: int
    #: LightGBM's place for its log among the callbacks (see `CallbackEnv`).
    order = 10
    #: What it is called by: it reads the validation sets' scores, so fit warns when it is given
    #: without an eval_set (it would do nothing).
    reads_eval_sets = "log_evaluation"

    def __init__(self, period: int) -> None:
        if isinstance(period, bool) or not isinstance(period, numbers.Integral):
            raise invalid_parameter("period", "an integer", period)
        self.period = int(period)

    def __call__(self, env: CallbackEnv) -> None:
        if self.period > 0 and env.evaluation_result_list and env.iteration % self.period == 0:
            text = "\t".join(f"{name}'s {metric}: {value:g}" for name, metric, value, _ in env.evaluation_result_list)
            print(f"[{env.iteration}]\t{text}")


def log_evaluation(period: int = 1) -> Any:
    """Print the validation scores every ``period`` rounds (none for ``period`` <= 0), as
    LightGBM's ``log_evaluation``: ``[10]\\tvalid_0's ndcg@10: 0.59``."""
    return _LogEvaluation(period)


class _RecordEvaluation:
    #: LightGBM's place for its record among the callbacks (see `CallbackEnv`).
    order = 20
    #: What it is called by: it reads the validation sets' scores, so fit warns when it is given
    #: without an eval_set (it would do nothing).
    reads_eval_sets = "record_evaluation"

    def __init__(self, eval_result: Dict[str, Dict[str, List[float]]]) -> None:
        if not isinstance(eval_result, dict):
            raise TypeError(f"eval_result must be a dict, got {type(eval_result).__name__}")
        self.eval_result = eval_result
        self.eval_result.clear()

    def __call__(self, env: CallbackEnv) -> None:
        # Each fit records afresh, as LightGBM's does: one callback reused by several fits (a
        # GridSearchCV's fit_params, a refit) holds the last fit's curves, not all of them end
        # to end.
        if env.iteration == 1:
            self.eval_result.clear()
        for name, metric, value, _ in env.evaluation_result_list:
            self.eval_result.setdefault(name, {}).setdefault(metric, []).append(value)


def record_evaluation(eval_result: Dict[str, Dict[str, List[float]]]) -> Any:
    """Record the validation scores of every round into ``eval_result`` (cleared first, and
    at the start of every fit that uses the callback): ``{set name: {metric: [value per
    round]}}``, as LightGBM's ``record_evaluation``."""
    return _RecordEvaluation(eval_result)


#: LightGBM's own callbacks, by the name of the function that makes them, with the svmmap
#: callback of the same meaning.
_LIGHTGBM_CALLBACKS = {
    "early_stopping": "svmmap.early_stopping(stopping_rounds, first_metric_only=..., verbose=..., min_delta=...)",
    "log_evaluation": "svmmap.log_evaluation(period)",
    "record_evaluation": "svmmap.record_evaluation(eval_result)",
}


def _lightgbm_maker(cb: Any) -> Optional[str]:
    """The LightGBM function that made ``cb`` (``"early_stopping"`` ...), "" for another object
    of LightGBM's, None for an object that is not LightGBM's. LightGBM is not imported: an
    object of its module can only exist when it already is."""
    module = getattr(type(cb), "__module__", "") or ""
    if module != "lightgbm" and not module.startswith("lightgbm."):
        return None
    kind = type(cb).__name__
    # LightGBM 4 makes its callbacks as instances of _EarlyStoppingCallback,
    # _LogEvaluationCallback and _RecordEvaluationCallback (LightGBM 3, as closures, named
    # _callback, whose settings cannot be read).
    for maker in _LIGHTGBM_CALLBACKS:
        if kind == "_" + maker.title().replace("_", "") + "Callback":
            return maker
    return ""


def _from_lightgbm(i: int, cb: Any, maker: Optional[str]) -> Optional[Any]:
    """LightGBM's callback ``cb`` (made by LightGBM's ``maker``) as the svmmap callback of the
    same meaning, read from its settings; None for an early stopping LightGBM disables
    (``stopping_rounds <= 0``). One whose settings cannot be read (another LightGBM version, or
    another of its callbacks such as ``reset_parameter``) is refused before training, naming
    svmmap's counterpart: handed LightGBM's CallbackEnv, none of them can run on svmmap's
    rounds (they failed with "'CallbackEnv' object has no attribute 'begin_iteration'")."""
    try:
        if maker == "early_stopping":
            rounds, delta = cb.stopping_rounds, cb.min_delta
            if isinstance(rounds, numbers.Integral) and not isinstance(rounds, bool) and rounds <= 0:
                # LightGBM's early_stopping(0) turns early stopping off.
                return None
            if isinstance(delta, (list, tuple)):
                # LightGBM's list: one value per metric, or one for all; svmmap takes one.
                if len(set(delta)) > 1:
                    raise ValueError(
                        f"callbacks[{i}] is lightgbm.early_stopping with min_delta={list(delta)!r}, one per "
                        "metric; svmmap.early_stopping takes one min_delta for every metric: give "
                        "callbacks=[svmmap.early_stopping(n, min_delta=d)]"
                    )
                delta = delta[0] if delta else 0.0
            # LightGBM keeps verbose as given (its truth is the rule there): read it as LightGBM does.
            return _EarlyStopping(rounds, cb.first_metric_only, bool(cb.verbose), delta)
        if maker == "log_evaluation":
            return _LogEvaluation(cb.period)
        if maker == "record_evaluation":
            return _RecordEvaluation(cb.eval_result)
    except AttributeError:
        pass
    if maker:
        hint = f"give callbacks=[{_LIGHTGBM_CALLBACKS[maker]}] instead"
    else:
        hint = (
            "svmmap's callbacks are svmmap.early_stopping, svmmap.log_evaluation and svmmap.record_evaluation, "
            "or any callable taking a svmmap.callback.CallbackEnv"
        )
    raise ValueError(
        f"callbacks[{i}] is LightGBM's {type(cb).__name__}, which runs on LightGBM's boosting rounds, not on "
        f"svmmap's: {hint}"
    )


def any_of_the_user(callbacks: List[Any]) -> bool:
    """Whether ``callbacks`` (`split_callbacks`'s others) hold one that is not svmmap's log or
    record: one that may read ``env.coef`` or raise EarlyStopException."""
    return any(not isinstance(cb, (_LogEvaluation, _RecordEvaluation)) for cb in callbacks)


def split_callbacks(callbacks: Optional[Any]) -> Tuple[List[_EarlyStopping], List[Any]]:
    """``fit``'s ``callbacks`` as (early stoppings, the others), each other one callable.
    LightGBM's ``early_stopping``, ``log_evaluation`` and ``record_evaluation`` become svmmap's
    of the same settings; LightGBM's other callbacks are refused, naming svmmap's."""
    if callbacks is None:
        return [], []
    if callable(callbacks) or isinstance(callbacks, (str, bytes, _EarlyStopping)) or _lightgbm_maker(callbacks):
        raise ValueError("callbacks must be a list of callbacks, e.g. callbacks=[svmmap.early_stopping(10)]")
    early, others = [], []
    for i, cb in enumerate(list(callbacks)):
        maker = _lightgbm_maker(cb)
        if maker is not None:
            cb = _from_lightgbm(i, cb, maker)
            if cb is None:
                continue
        if isinstance(cb, _EarlyStopping):
            early.append(cb)
        elif callable(cb):
            if getattr(cb, "before_iteration", False):
                raise ValueError(
                    f"callbacks[{i}] asks to run before every round (before_iteration=True), which svmmap does not "
                    "offer: its callbacks run after each round of the solver"
                )
            others.append(cb)
        else:
            raise ValueError(f"callbacks[{i}] is {cb!r}, which is not callable")
    if len(early) > 1:
        raise ValueError("callbacks hold more than one early_stopping")
    # LightGBM's order: a callback without an ``order`` attribute gets i - len(callbacks),
    # which puts the user's own first, in the order given; sorted stably by it.
    n = len(others)
    others = [cb for _, _, cb in sorted((getattr(cb, "order", i - n), i, cb) for i, cb in enumerate(others))]
    return early, others
