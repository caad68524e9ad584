"""SVMMap's training without scikit-learn: the one routine that ``SVMMap.fit`` and ``svmmap learn``
both run.

``svmmap.SVMMap`` is a scikit-learn estimator, and importing scikit-learn takes most of a second,
far longer than training on a small file. So the training itself lives here, in functions that
read SVMMap's parameters from a model object and set its fitted attributes on it: ``SVMMap.fit``
calls `train` on itself, and ``svmmap learn`` calls it on a `BareSVMMap`, an object
with the same parameters and no scikit-learn base class. Both therefore check the same inputs,
issue the same warnings and produce the same attributes, from which ``_model_file.svm_document``
writes the same model file.

scikit-learn is imported only where one of its names is needed: ``ConvergenceWarning`` is
scikit-learn's class (users filter it by that class), so it is imported when a fit stops at
``max_iter``, the one place that raises it.
"""

from __future__ import annotations

import contextlib
import logging
import numbers
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union, cast

import numpy as np

from . import _core
from ._convergence import stop_message
from ._degenerate import DegenerateModelWarning, is_degenerate, message, score_spread
from ._evaluation_sets import (
    EarlyStopping,
    SetPreparer,
    check_eval_feature_names,
    refuse_lightgbm_arguments,
    validation_sets,
)
from ._latent import fit_latent, refuse_latent_options, set_rounds
from ._once import first_in_search
from ._typing import IterationRecord
from ._validation import (
    check_labels,
    check_matrix,
    check_qid,
    feature_names_of,
    forget_fit,
    invalid_parameter,
    n_threads,
    overflow_named,
    qid_of,
    query_weights,
)
from .callback import any_of_the_user, split_callbacks

__all__ = [
    "CORE_DEFAULTS",
    "PARAMETER_DEFAULTS",
    "TRAINING_PARAMETERS",
    "BareSVMMap",
    "Inputs",
    "Outcome",
    "Watch",
    "SkippedQueriesWarning",
    "check_inputs",
    "estimator_name",
    "finish",
    "fitting",
    "forget_fit",
    "iteration_callback",
    "progress_logging",
    "set_fitted",
    "train",
    "train_config",
    "watching",
]

logger = logging.getLogger("svmmap")

#: The training parameters, one dict each (name, default, kind, expected, type, flag, doc): the
#: Rust core's table (rust/solver/options.rs), the one place a training parameter is declared.
TRAINING_PARAMETERS = _core.TRAINING_PARAMETERS

#: The defaults of every training parameter, from the core's table.
CORE_DEFAULTS = _core.TrainConfig.DEFAULTS

#: SVMMap's parameters and their defaults: the training parameters of the core, and how a fit is
#: watched (verbose, callback). ``SVMMap.__init__`` has exactly these (a test checks it), so that a
#: BareSVMMap and an SVMMap with the same parameters are the same model and save the same file.
PARAMETER_DEFAULTS: Dict[str, Any] = {**CORE_DEFAULTS, "verbose": 0, "callback": None}


class SkippedQueriesWarning(UserWarning):
    """Some training queries cannot contribute a constraint and were left out.

    A query needs at least one relevant and one non-relevant document; queries without a
    relevant document and queries with only relevant ones are skipped and counted.

    Inside a search (``GridSearchCV``, ``RandomizedSearchCV``, ``SVMMapCV``, a Pipeline in
    them) only the first fit of one call of the search's ``fit`` warns, naming the search, and
    likewise in one call of ``cross_val_score``, ``cross_validate`` or the curves. The
    counts stay on the model (``n_queries_skipped_``), so the warning can be silenced with the
    standard library:
    ``warnings.filterwarnings("ignore", category=svmmap.SkippedQueriesWarning)``; to collect it
    instead, fit inside ``warnings.catch_warnings(record=True)`` and read the records.
    """


class BareSVMMap:
    """An SVMMap without scikit-learn: its parameters and, after `train`, its fitted
    attributes, under the names SVMMap uses (``coef_``, ``n_iter_``, ...).

    ``svmmap learn`` trains one, so that the command does not import scikit-learn; messages
    name it SVMMap, since it is the model ``SVMMap`` with these parameters would train. It has
    no ``predict`` or ``score``: those are the estimator's.
    """

    #: The estimator name that messages use (``type(model).__name__`` for an estimator).
    display_name = "SVMMap"

    # The training parameters (``TRAINING_PARAMETERS``) are set by ``__init__``; these are read
    # by name in this module and the command line.
    C: float
    loss: Union[str, Sequence[str], Mapping[str, float]]
    eps: float
    max_iter: int
    relevance_threshold: float
    n_jobs: Optional[int]
    verbose: int
    callback: Optional[Callable[[IterationRecord], Any]]
    coef_: np.ndarray
    objective_: float
    gap_: float
    n_iter_: int
    n_cuts_: int
    n_queries_: int
    #: With eval_set: the metric values per iteration, and with early stopping the best ones.
    evals_result_: Dict[str, Dict[str, List[float]]]
    best_score_: Dict[str, Dict[str, float]]
    #: The round early stopping kept, 0 without it (LightGBM's value).
    best_iteration_: int

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(PARAMETER_DEFAULTS))
        if unknown:
            raise TypeError(f"{self.display_name} has no parameters {unknown}")
        for name, default in PARAMETER_DEFAULTS.items():
            setattr(self, name, params.get(name, default))

    def get_params(self, deep: bool = False) -> Dict[str, Any]:
        """The parameters by name, in scikit-learn's order (sorted), as ``SVMMap.get_params``."""
        return {name: getattr(self, name) for name in sorted(PARAMETER_DEFAULTS)}

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise ValueError(f"This {self.display_name} is not fitted yet; train it first")


def estimator_name(model: Any) -> str:
    """What messages call the model: its class name, or SVMMap for a BareSVMMap."""
    return str(getattr(model, "display_name", type(model).__name__))


_LOG_FORMAT = "[svmmap] %(message)s"
_log_lock = threading.Lock()
_log_users = 0
_log_handler: Optional[logging.Handler] = None
_log_saved_level = logging.NOTSET


@contextlib.contextmanager
def progress_logging(verbose: int) -> Iterator[None]:
    """Makes ``verbose`` progress lines visible for the duration of a fit.

    Python's logging drops INFO records when nothing is configured (its last-resort handler
    shows warnings and errors only), so a user who asks for ``verbose=1`` would see nothing.
    While a verbose fit runs, the ``svmmap`` logger is therefore lowered to INFO if its own
    level was left unset, and, when no handler is configured anywhere on its path to the root
    logger, a temporary handler writes the lines to stderr. A level or handler the user set
    is respected; everything is restored afterwards. Concurrent fits share the arrangement.
    """
    global _log_users, _log_handler, _log_saved_level
    # verbose <= 0 is silence (LightGBM's -1 among them).
    if verbose <= 0:
        yield
        return
    with _log_lock:
        if _log_users == 0:
            _log_saved_level = logger.level
            if logger.level == logging.NOTSET:
                logger.setLevel(logging.INFO)
            if not logger.hasHandlers():
                _log_handler = logging.StreamHandler(sys.stderr)
                _log_handler.setFormatter(logging.Formatter(_LOG_FORMAT))
                logger.addHandler(_log_handler)
        _log_users += 1
    try:
        yield
    finally:
        with _log_lock:
            _log_users -= 1
            if _log_users == 0:
                if _log_handler is not None:
                    logger.removeHandler(_log_handler)
                    _log_handler = None
                logger.setLevel(_log_saved_level)


def train_config(model: Any) -> "_core.TrainConfig":
    """The training configuration of ``model``'s parameters, validated by the core (one error
    line per bad parameter, naming it); the callback and verbose are checked here, as they
    never reach the core."""
    config = _core.TrainConfig(**{p["name"]: getattr(model, p["name"]) for p in TRAINING_PARAMETERS})
    if model.callback is not None and not callable(model.callback):
        raise invalid_parameter("callback", "callable or None", model.callback)
    # LightGBM's verbose=-1 (its silence) is accepted: every value <= 0 logs nothing.
    if not isinstance(model.verbose, (bool, numbers.Integral)):
        raise invalid_parameter(
            "verbose", "an integer (<= 0: silent, as LightGBM's -1; above 0: progress)", model.verbose
        )
    return config


@dataclass
class Inputs:
    """A fit's data, checked once (`check_inputs`): what every estimator's fit trains on."""

    #: The feature names of a DataFrame X (string column names), else None.
    names: Optional[np.ndarray]
    core_X: Any
    n_rows: int
    n_features: int
    labels: np.ndarray
    #: The query id of every row (from ``qid``, or numbered from LightGBM's ``group``).
    qid: Any
    #: Every row's query as an index into ``uniques``, the distinct ids.
    codes: np.ndarray
    uniques: np.ndarray
    #: ``sample_weight`` per document (checked: constant within each query), or None.
    doc_weights: Optional[np.ndarray]
    #: The same weights per query, indexed by ``codes``, or None.
    query_weights: Optional[np.ndarray]


def check_inputs(name: str, X: Any, y: Any, qid: Any, group: Any, sample_weight: Any) -> Inputs:
    """THE input check of a fit (``name``: the estimator, for messages): SVMMap.fit, svmmap
    learn and SVMMapCV.fit accept and refuse the same data with the same words."""
    names = feature_names_of(X)
    core_X, n_rows, n_features = check_matrix(X)
    labels = check_labels(y, n_rows)
    qid = qid_of(qid, group, n_rows, "qid", "group")
    codes, uniques = check_qid(qid, n_rows, required_by=f"{name}.fit")
    weights = query_weights(sample_weight, codes, uniques)
    doc_weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    return Inputs(names, core_X, n_rows, n_features, labels, qid, codes, uniques, doc_weights, weights)


@contextlib.contextmanager
def fitting(model: Any) -> Iterator[None]:
    """THE clean-up of every fit: the previous fit's attributes go before any check or work,
    and whatever this fit had set goes when it fails (bad input, a refused parameter, Ctrl-C,
    MemoryError, a warning turned into an error), so that no earlier or partial model can pass
    for the result of this one."""
    forget_fit(model)
    try:
        yield
    except BaseException:
        forget_fit(model)
        raise


@dataclass
class Outcome:
    """What a solve produced, for `finish` to set on the model."""

    coef: np.ndarray
    summary: "_core.FitSummary"
    n_features: int
    names: Optional[np.ndarray]
    n_queries_total: int
    #: The training features' standard deviations (importances, the stall's measured cause).
    column_std: np.ndarray
    #: The `score_spread` of each part of the training data at a model (called only for a
    #: nonzero one): one part in memory, one per partition on a cluster.
    spreads: Callable[[np.ndarray], List[Optional[bool]]]
    #: With early stopping: the kept iteration and its validation scores.
    early: Optional[EarlyStopping] = None
    #: With validation sets: (name, scorer, results) per set.
    evals: Optional[list] = None
    #: A latent-target fit's rounds (see `_latent.fit_latent`).
    round_objectives: Optional[List[float]] = None
    exhausted: Union[bool, str] = False
    zero_note: Optional[str] = None


def finish(model: Any, outcome: Outcome, *, stacklevel: int = 1) -> None:
    """THE end of every fit: sets the fitted attributes of ``outcome`` on ``model`` and issues
    the fit's warnings (skipped queries, convergence, CCCP rounds, a model that ranks nothing).
    ``stacklevel`` as in `train`."""
    name = estimator_name(model)
    early = outcome.early if outcome.early is not None and outcome.early.best_coef is not None else None
    kept = None
    if early is not None and early.best_coef is not None:
        # The iterate of the best validation score is the model, as in LightGBM; the solver's
        # figures of its round (P(w) at that iterate, the dual of the working set that produced
        # it, and their gap) describe it, not those of the last round.
        outcome.coef = early.best_coef
        kept = outcome.summary.history[early.best_iteration - 1]
        early.ended_first(outcome.summary.n_iter, outcome.summary.stop, kept["gap"], outcome.summary.tolerance)
    set_fitted(
        model,
        outcome.coef,
        outcome.summary,
        outcome.n_features,
        outcome.names,
        outcome.n_queries_total,
        column_std=outcome.column_std,
        best_iteration=early.best_iteration if early is not None else None,
        kept=kept,
        kept_note=early.kept_text(outcome.summary.n_iter, outcome.summary.stop) if early is not None else None,
        stacklevel=stacklevel + 1,
    )
    set_rounds(
        model, name, outcome.round_objectives, outcome.exhausted, zero_note=outcome.zero_note, stacklevel=stacklevel + 1
    )
    model.feature_importances_ = feature_importances(model.coef_, outcome.column_std)
    model.degenerate_ = is_degenerate(outcome.coef, outcome.spreads)
    if model.degenerate_:
        text = message(name, model.loss, outcome.coef, outcome.summary, model.C, outcome.zero_note)
        warnings.warn(text, DegenerateModelWarning, stacklevel=stacklevel + 1)
    # LightGBM's three attributes exist after every fit, as LGBMRanker's do (measured with
    # LightGBM 4.7): best_iteration_ is 0 without early stopping, and best_score_ and
    # evals_result_ are empty without validation sets, so that a ported script that reads them
    # unconditionally runs.
    evals = outcome.evals or []
    model.evals_result_ = {set_name: dict(results) for set_name, _, results in evals}
    if outcome.early is not None:
        model.best_iteration_ = outcome.early.best_iteration
        model.best_score_ = outcome.early.best_scores
    else:
        model.best_iteration_ = 0
        # As LightGBM's: without early stopping, the scores of the model that was kept,
        # which are the last round's.
        model.best_score_ = {
            set_name: {metric: values[-1] for metric, values in results.items() if len(values)}
            for set_name, _, results in evals
        }


def train(
    model: Any,
    X: Any,
    y: Any,
    qid: Any = None,
    *,
    group: Any = None,
    sample_weight: Any = None,
    eval_set: Optional[Sequence[tuple]] = None,
    eval_group: Optional[Sequence[Any]] = None,
    eval_qid: Optional[Sequence[Any]] = None,
    eval_metric: Optional[Union[str, Sequence[str]]] = None,
    eval_at: Optional[Sequence[int]] = None,
    early_stopping_rounds: Optional[int] = None,
    lightgbm_kwargs: Optional[Mapping[str, Any]] = None,
    stacklevel: int = 1,
    eval_names: Optional[Sequence[str]] = None,
    eval_X: Any = None,
    eval_y: Any = None,
    callbacks: Optional[Sequence[Any]] = None,
) -> None:
    """``SVMMap.fit`` (whose docstring describes the arguments) on ``model``, an SVMMap or a
    BareSVMMap: checks the inputs, solves, and sets the fitted attributes on ``model``.

    ``stacklevel`` is the one a warning issued in the caller would use, so that the warnings
    point at the line that called the caller (the user's ``fit``).
    """
    with fitting(model):
        name = estimator_name(model)
        refuse_lightgbm_arguments(name, dict(lightgbm_kwargs or {}))
        config = train_config(model)
        data = check_inputs(name, X, y, qid, group, sample_weight)
        threads = n_threads(model.n_jobs)
        watch = watching(
            model,
            X,
            y,
            data.n_features,
            threads,
            eval_set=eval_set,
            eval_group=eval_group,
            eval_qid=eval_qid,
            eval_metric=eval_metric,
            eval_at=eval_at,
            early_stopping_rounds=early_stopping_rounds,
            eval_names=eval_names,
            eval_X=eval_X,
            eval_y=eval_y,
            callbacks=callbacks,
        )
        if config.latent is not None:
            refuse_latent_options(model.loss, sample_weight=sample_weight, eval_set=watch.evals)
        with progress_logging(model.verbose):
            outcome = _solve(data, config, watch.on_iteration, threads, with_coef=watch.needs_coef)
            outcome.early, outcome.evals = watch.early, watch.evals
            finish(model, outcome, stacklevel=stacklevel + 1)


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
    X: Any,
    y: Any,
    n_features: int,
    threads: int,
    *,
    eval_set: Optional[Sequence[tuple]],
    eval_group: Optional[Sequence[Any]],
    eval_qid: Optional[Sequence[Any]],
    eval_metric: Optional[Union[str, Sequence[str]]],
    eval_at: Optional[Sequence[int]],
    early_stopping_rounds: Optional[int],
    eval_names: Optional[Sequence[str]],
    eval_X: Any,
    eval_y: Any,
    callbacks: Optional[Sequence[Any]],
    prepare: Optional[SetPreparer] = None,
) -> Watch:
    """THE reading of a fit's LightGBM-style arguments (``SVMMap.fit``'s docstring describes
    them), for the training data ``X``, ``y`` of ``n_features`` features: the validation sets
    checked and made ready by ``prepare`` (default: in memory, scored on ``threads`` threads),
    the early stopping asked for, and the solver's per-iteration hook, which scores them and
    calls the callbacks. ``svmmap.dask.SVMMap.fit`` reads them here too."""
    eval_set = lightgbm_eval_set(eval_set, eval_X, eval_y)
    early_callbacks, others = split_callbacks(callbacks)
    with lightgbm_names(eval_X):
        check_eval_feature_names(X, eval_set)
        evals, early = validation_sets(
            eval_set,
            eval_group,
            eval_qid,
            eval_metric,
            eval_at,
            early_stopping_rounds,
            n_features,
            threads,
            model.relevance_threshold,
            names=eval_names,
            # The training data is recognized by identity, as LightGBM does: the same arrays.
            training=[pair[0] is X and pair[1] is y for pair in eval_set] if eval_set is not None else None,
            early_callback=early_callbacks[0] if early_callbacks else None,
            prepare=prepare,
            log=model.verbose > 0,
        )
    watch = Watch(evals, early, needs_coef=evals is not None or any_of_the_user(others))
    watch.on_iteration = iteration_callback(model, evals, early, others, watch=watch)
    return watch


def _solve(
    data: Inputs,
    config: "_core.TrainConfig",
    on_iteration: Optional[Callable[[IterationRecord], bool]],
    threads: int,
    *,
    with_coef: bool,
) -> Outcome:
    """The solve of `train` on data in memory: a latent-target loss's CCCP rounds, or the
    core's fit at one C."""
    round_objectives: Optional[List[float]] = None
    exhausted: Union[bool, str] = False
    zero_note: Optional[str] = None
    with overflow_named(config.C, data.query_weights, lambda: data.core_X.column_std(threads)):
        if config.latent is not None:
            coef, summary, round_objectives, exhausted, zero_note = fit_latent(
                data.core_X, data.labels, data.codes, len(data.uniques), config, on_iteration, threads
            )
        else:
            ((coef, summary),) = _core.fit_path(
                data.core_X,
                data.labels,
                data.codes,
                len(data.uniques),
                config,
                callback=on_iteration,
                with_coef=with_coef,
                query_weights=data.query_weights,
            )
    return Outcome(
        coef,
        summary,
        data.n_features,
        data.names,
        len(data.uniques),
        column_std=data.core_X.column_std(threads),
        spreads=lambda w: [score_spread(_core.predict(data.core_X, w, threads), data.labels, data.codes)],
        round_objectives=round_objectives,
        exhausted=exhausted,
        zero_note=zero_note,
    )


def feature_importances(coef: np.ndarray, std: np.ndarray) -> np.ndarray:
    """|w_j| times the standard deviation of feature j over the training documents, normalized
    to sum to 1 (all zeros for w = 0): the share of the scores' spread each feature carries,
    whatever the features' scales (the weights alone depend on them)."""
    spread = np.abs(coef) * std
    total = float(spread.sum())
    return spread / total if total > 0 else np.zeros_like(spread)


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
    from .callback import CallbackEnv, EvalResult

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
    from .callback import is_early_stop

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


def set_fitted(
    model: Any,
    coef: np.ndarray,
    summary: "_core.FitSummary",
    n_features: int,
    feature_names: Optional[np.ndarray],
    n_queries_total: int,
    *,
    column_std: Optional[np.ndarray] = None,
    best_iteration: Optional[int] = None,
    kept: Optional[IterationRecord] = None,
    kept_note: Optional[str] = None,
    stacklevel: int = 1,
) -> None:
    """Stores the solver's result as fitted attributes of ``model`` and reports skipped
    queries, non-convergence (with its likely cause, measured from ``column_std``, the training
    features' standard deviations, when given) and (when verbose) the outcome. ``kept``: the
    record of the round whose iterate ``coef`` is, when early stopping kept one (of
    ``best_iteration``); ``objective_``, ``dual_objective_``, ``gap_`` and ``converged_`` are
    then that round's, and ``kept_note`` (which round and why) opens the verbose summary.
    ``stacklevel`` as in `train`."""
    model.coef_ = coef
    model.n_features_in_ = n_features
    if feature_names is not None:
        model.feature_names_in_ = feature_names
    elif hasattr(model, "feature_names_in_"):
        del model.feature_names_in_
    # The figures of the model kept: the last round's, or, after early stopping, the kept
    # round's (its primal is P(w) at that very iterate, its dual that of the working set that
    # produced it), so that a certificate is never claimed for weights it was not measured at.
    measured = kept if kept is not None else {"primal": summary.primal, "dual": summary.dual, "gap": summary.gap}
    model.objective_ = measured["primal"]
    model.dual_objective_ = measured["dual"]
    model.gap_ = measured["gap"]
    model.tolerance_ = summary.tolerance
    model.n_iter_ = summary.n_iter
    model.n_cuts_ = summary.active_cuts
    model.stop_reason_ = summary.stop
    # Whether coef_ is certified: the gap of its own round within the tolerance. A fit that
    # converged after the round early stopping kept has stop_reason_ "converged" (why
    # training ended) and converged_ False (the kept model's gap is larger).
    model.converged_ = summary.stop == "converged" and model.gap_ <= summary.tolerance
    model.n_queries_ = summary.problem.used
    model.n_queries_skipped_ = {
        "no_relevant": summary.problem.no_relevant,
        "all_relevant": summary.problem.all_relevant,
    }
    model.history_ = summary.history
    skipped = sum(model.n_queries_skipped_.values())
    # Inside a search (GridSearchCV, SVMMapCV ...) every fit on the data skips such queries:
    # said by the first fit of the search only.
    first, note = first_in_search("skipped queries") if skipped else (False, "")
    if first:
        warnings.warn(
            f"{skipped} of {n_queries_total} training queries were skipped: "
            f"{model.n_queries_skipped_['no_relevant']} without a relevant document, "
            f"{model.n_queries_skipped_['all_relevant']} with only relevant documents "
            f"(relevant means label > {model.relevance_threshold}){note}",
            SkippedQueriesWarning,
            stacklevel=stacklevel + 1,
        )
    text = stop_message(estimator_name(model), model, summary, column_std, best_iteration)
    if text is not None:
        # scikit-learn's class, which users filter by; imported only here, where it is raised.
        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(text, ConvergenceWarning, stacklevel=stacklevel + 1)
    if model.verbose > 0:
        # After early stopping the model is an earlier round's: the summary says which and
        # why, rather than the solver's stop alone ("converged" described the last round).
        logger.info(
            "%s: primal %.6g, gap %.3g, %d active cuts, %d queries (%d skipped)",
            kept_note or f"{summary.stop} after {model.n_iter_} iterations",
            model.objective_,
            model.gap_,
            model.n_cuts_,
            model.n_queries_,
            skipped,
        )
