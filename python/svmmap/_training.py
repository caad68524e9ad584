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
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union, cast

import numpy as np

from . import _core
from ._convergence import stop_message
from ._degenerate import DegenerateModelWarning, is_degenerate, message
from ._evaluation_sets import EarlyStopping, refuse_lightgbm_arguments, validation_sets
from ._latent import fit_latent, refuse_latent_options, set_rounds
from ._typing import IterationRecord
from ._validation import (
    check_labels,
    check_matrix,
    check_qid,
    check_weight_memory,
    feature_names_of,
    forget_fit,
    n_threads,
    qid_of,
    query_weights,
)

__all__ = [
    "CORE_DEFAULTS",
    "PARAMETER_DEFAULTS",
    "TRAINING_PARAMETERS",
    "BareSVMMap",
    "SkippedQueriesWarning",
    "estimator_name",
    "forget_fit",
    "iteration_callback",
    "progress_logging",
    "set_fitted",
    "train",
    "train_config",
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

    The counts stay on the model (``n_queries_skipped_``), so the warning can be silenced
    wherever it repeats (every fold of a cross-validation) with the standard library:
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
    if not verbose:
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
        raise ValueError(f"callback must be callable or None, got {model.callback!r}")
    if not isinstance(model.verbose, (bool, numbers.Integral)) or model.verbose < 0:
        raise ValueError(f"verbose must be an integer >= 0, got {model.verbose!r}")
    return config


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
    eval_metric: Union[str, Sequence[str]] = "map",
    eval_at: Optional[Sequence[int]] = None,
    early_stopping_rounds: Optional[int] = None,
    lightgbm_kwargs: Optional[Mapping[str, Any]] = None,
    stacklevel: int = 1,
) -> None:
    """``SVMMap.fit`` (whose docstring describes the arguments) on ``model``, an SVMMap or a
    BareSVMMap: checks the inputs, solves, and sets the fitted attributes on ``model``.

    ``stacklevel`` is the one a warning issued in the caller would use, so that the warnings
    point at the line that called the caller (the user's ``fit``).
    """
    # Before any check: a fit refused for its input must not leave the previous model in place.
    forget_fit(model)
    name = estimator_name(model)
    refuse_lightgbm_arguments(name, dict(lightgbm_kwargs or {}))
    config = train_config(model)
    names = feature_names_of(X)
    core_X, n_rows, n_features = check_matrix(X)
    check_weight_memory(n_features)
    labels = check_labels(y, n_rows)
    qid = qid_of(qid, group, n_rows, "qid", "group")
    codes, uniques = check_qid(qid, n_rows, required_by=f"{name}.fit")
    weights = query_weights(sample_weight, codes, uniques)
    evals, early = validation_sets(
        eval_set,
        eval_group,
        eval_qid,
        eval_metric,
        eval_at,
        early_stopping_rounds,
        n_features,
        n_threads(model.n_jobs),
        model.relevance_threshold,
    )

    on_iteration = iteration_callback(model, evals, early)
    if config.latent is not None:
        refuse_latent_options(model.loss, sample_weight=sample_weight, eval_set=eval_set)
    with progress_logging(model.verbose):
        try:
            if config.latent is not None:
                coef, summary, round_objectives, exhausted, zero_note = fit_latent(
                    core_X, labels, codes, len(uniques), config, on_iteration, n_threads(model.n_jobs)
                )
            else:
                ((coef, summary),) = _core.fit_path(
                    core_X,
                    labels,
                    codes,
                    len(uniques),
                    config,
                    callback=on_iteration,
                    with_coef=evals is not None,
                    query_weights=weights,
                )
                round_objectives, exhausted, zero_note = None, False, None
        except BaseException:
            # Interrupted (Ctrl-C), out of memory or refused: no model from an earlier fit
            # may pass for the result of this one.
            forget_fit(model)
            raise
        if early is not None and early.best_coef is not None:
            # The iterate of the best validation score is the model, as in LightGBM.
            coef = early.best_coef
        column_std = core_X.column_std(n_threads(model.n_jobs))
        kept = early.best_iteration if early is not None and early.best_coef is not None else None
        set_fitted(
            model,
            coef,
            summary,
            n_features,
            names,
            len(uniques),
            column_std=column_std,
            best_iteration=kept,
            stacklevel=stacklevel + 1,
        )
        set_rounds(model, name, round_objectives, exhausted, zero_note=zero_note, stacklevel=stacklevel + 1)
    if early is not None:
        model.best_iteration_ = early.best_iteration
        model.best_score_ = early.best_scores
    else:
        for attribute in ("best_iteration_", "best_score_"):
            if hasattr(model, attribute):
                delattr(model, attribute)
    model.feature_importances_ = feature_importances(model.coef_, column_std)
    scores = _core.predict(core_X, coef, n_threads(model.n_jobs)) if np.any(coef) else None
    model.degenerate_ = is_degenerate(coef, scores, labels, codes)
    if model.degenerate_:
        text = message(name, model.loss, coef, summary, model.C, zero_note)
        warnings.warn(text, DegenerateModelWarning, stacklevel=stacklevel + 1)
    if evals is not None:
        model.evals_result_ = {set_name: dict(results) for set_name, _, results in evals}
    elif hasattr(model, "evals_result_"):
        del model.evals_result_


def feature_importances(coef: np.ndarray, std: np.ndarray) -> np.ndarray:
    """|w_j| times the standard deviation of feature j over the training documents, normalized
    to sum to 1 (all zeros for w = 0): the share of the scores' spread each feature carries,
    whatever the features' scales (the weights alone depend on them)."""
    spread = np.abs(coef) * std
    total = float(spread.sum())
    return spread / total if total > 0 else np.zeros_like(spread)


def iteration_callback(
    model: Any, evals: Optional[list] = None, early: Optional[EarlyStopping] = None
) -> Optional[Callable[[IterationRecord], bool]]:
    """The per-iteration hook handed to the solver: scores the validation sets (when
    given) at the iterate w, logs (when verbose) and calls the model's callback, whose true
    return value stops training. None when nothing is asked for, so that the solver need
    not enter Python at every iteration."""
    verbose = model.verbose
    user_callback = model.callback
    if not verbose and user_callback is None and evals is None:
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
        asked = bool(user_callback(record)) if user_callback is not None else False
        return asked or stop

    return on_iteration


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
    stacklevel: int = 1,
) -> None:
    """Stores the solver's result as fitted attributes of ``model`` and reports skipped
    queries, non-convergence (with its likely cause, measured from ``column_std``, the training
    features' standard deviations, when given) and (when verbose) the outcome. ``stacklevel``
    as in `train`."""
    model.coef_ = coef
    model.n_features_in_ = n_features
    if feature_names is not None:
        model.feature_names_in_ = feature_names
    elif hasattr(model, "feature_names_in_"):
        del model.feature_names_in_
    model.objective_ = summary.primal
    model.dual_objective_ = summary.dual
    model.gap_ = summary.gap
    model.tolerance_ = summary.tolerance
    model.n_iter_ = summary.n_iter
    model.n_cuts_ = summary.active_cuts
    model.stop_reason_ = summary.stop
    model.converged_ = summary.stop == "converged"
    model.n_queries_ = summary.problem.used
    model.n_queries_skipped_ = {
        "no_relevant": summary.problem.no_relevant,
        "all_relevant": summary.problem.all_relevant,
    }
    model.history_ = summary.history
    skipped = sum(model.n_queries_skipped_.values())
    if skipped:
        warnings.warn(
            f"{skipped} of {n_queries_total} training queries were skipped: "
            f"{model.n_queries_skipped_['no_relevant']} without a relevant document, "
            f"{model.n_queries_skipped_['all_relevant']} with only relevant documents "
            f"(relevant means label > {model.relevance_threshold})",
            SkippedQueriesWarning,
            stacklevel=stacklevel + 1,
        )
    text = stop_message(estimator_name(model), model, summary, column_std, best_iteration)
    if text is not None:
        # scikit-learn's class, which users filter by; imported only here, where it is raised.
        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(text, ConvergenceWarning, stacklevel=stacklevel + 1)
    if model.verbose:
        logger.info(
            "%s after %d iterations: primal %.6g, gap %.3g, %d active cuts, %d queries (%d skipped)",
            summary.stop,
            model.n_iter_,
            model.objective_,
            model.gap_,
            model.n_cuts_,
            model.n_queries_,
            skipped,
        )
