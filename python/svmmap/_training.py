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
import time
import warnings
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union, cast

import numpy as np

from . import _core
from ._convergence import stop_message
from ._degenerate import DegenerateModelWarning, is_degenerate, message
from ._evaluation_sets import EarlyStopping, refuse_lightgbm_arguments, validation_sets
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
    "LATENT_MAX_ROUNDS",
    "estimator_name",
    "fit_latent",
    "forget_fit",
    "iteration_callback",
    "latent_path",
    "progress_logging",
    "refuse_latent_options",
    "set_fitted",
    "set_rounds",
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
        set_rounds(model, round_objectives, exhausted, stacklevel=stacklevel + 1)
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


#: The most CCCP rounds of a latent-target loss after its ``map`` start. On the data of
#: ``benchmarks/cutoff_losses.py`` the rounds stop by themselves after at most 85 (C = 10000).
LATENT_MAX_ROUNDS = 100
#: The CCCP rounds stop when the latent objective decreases by less than this fraction of its
#: value (the prototype's rule in benchmarks/cutoff_losses.py).
LATENT_RELATIVE_DECREASE = 1e-6
#: Each CCCP round is solved to this fraction of eps (its duality gap within eps C / 10). The
#: rounds start from the round before's working set (see :func:`fit_latent`), where a solve at
#: eps C often certified the starting point itself and ended the rounds early: on the data of
#: ``benchmarks/cutoff_losses.py`` (make_ranking seeds 0-2, MQ2008 folds 1-2; C = 0.1 ... 10^4,
#: 35 fits) warm rounds at eps took 0.3-0.6 times the time of the cold rounds at eps but ended
#: at a latent objective up to 4e-4 higher in 19 fits; at eps / 10 they took 0.5-0.9 times the
#: time and ended lower in 33 fits (at most 1.2e-5 higher in the other 2).
LATENT_ROUND_EPS_FACTOR = 0.1


def refuse_latent_options(loss: Any, *, sample_weight: Any, eval_set: Any) -> None:
    """The fit arguments a latent-target loss does not support, refused with the alternative."""
    if sample_weight is not None:
        raise ValueError(
            f"sample_weight is not supported with loss={loss!r} (its CCCP rounds weigh every query "
            "alike); train loss='map' or the paper's 'ndcg@k' with sample_weight instead"
        )
    if eval_set is not None:
        raise ValueError(
            f"eval_set and early stopping are not supported with loss={loss!r} (it trains in CCCP "
            "rounds, each a full fit); choose C by validation with SVMMapCV, or train loss='map' "
            "with eval_set"
        )


def latent_target_coefficients(
    scores: np.ndarray, relevant: np.ndarray, codes: np.ndarray, n_queries: int, cutoff: int
) -> np.ndarray:
    """Per row, the coefficients e with e.s = w.(Psi_po(ideal) - Psi_po(y_t)) on every query,
    y_t the latent target at ``scores``: the m = min(P, cutoff) best-scored relevant documents
    first, the rest in score order (Psi_po: pairs of a relevant and a non-relevant document,
    scaled by 1/(P N)). A relevant document i outside the top m gets the number of
    non-relevant documents scored strictly above it, a non-relevant b minus the number of
    those relevant documents scored strictly below it, both times 2/(P N). Which tied relevant
    documents make the top m does not matter: the counts depend on the scores alone. Queries
    without a relevant or without a non-relevant document get 0 (no pair)."""
    e = np.zeros(scores.shape[0])
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n_queries + 1))
    for q in range(n_queries):
        rows = order[bounds[q] : bounds[q + 1]]
        rel = relevant[rows]
        pos, neg = rows[rel], rows[~rel]
        p, n = pos.shape[0], neg.shape[0]
        if p == 0 or n == 0 or p <= cutoff:
            continue
        scale = 2.0 / (p * n)
        ranked = pos[np.argsort(-scores[pos], kind="stable")]
        rest = ranked[cutoff:]
        negative_scores = np.sort(scores[neg])
        rest_scores = np.sort(scores[rest])
        e[rest] = scale * (n - np.searchsorted(negative_scores, scores[rest], side="right"))
        e[neg] = -scale * np.searchsorted(rest_scores, scores[neg], side="left")
    return e


def fit_latent(
    core_X: Any,
    labels: np.ndarray,
    codes: np.ndarray,
    n_queries: int,
    config: "_core.TrainConfig",
    on_iteration: Optional[Callable[[IterationRecord], bool]],
    threads: int,
) -> "tuple[np.ndarray, _core.FitSummary, list[float], Union[bool, str], Optional[str]]":
    """NDCG@k with a latent target (``loss="ndcg@k:latent"``) by CCCP; returns the model, the
    solver summary of the round that made it, the objective before the first round and after
    every kept round, whether the rounds stopped at ``LATENT_MAX_ROUNDS`` with the objective
    still decreasing by at least ``LATENT_RELATIVE_DECREASE`` of its value (or, as a string, the
    stop reason of a round that a limit ended and that was not kept), and, when the rounds
    ended at w = 0 from a map model that ranks, what the objective says about w = 0 there
    (`_zero_note`, for the DegenerateModelWarning).

    The objective is F(w) = 1/2 |w|^2 + C/n sum_q [max_ybar (Delta(ybar) + w.Psi_po(ybar)) -
    max_{y: Delta(y) = 0} w.Psi_po(y)] (Yu and Joachims, ICML 2009), not convex. The rounds
    start from the ``map`` model at the same C (w = 0 is a stationary point: its target is the
    ideal ranking). Each round fixes the target at the current scores, which makes the
    query's hinge the paper's plus the linear term w.X_q^T e_q, and solves that convex problem
    with the paper's exact oracle (``config.latent``): every cut of the paper's problem minus
    the constant sum_q X_q^T e_q. Its objective bounds F from above and equals it at the
    current w, so an exact solve never raises F, and F itself is evaluated exactly after each
    round (one oracle pass), so a decrease smaller than the solve's tolerance (eps C) is still
    real. Each round's solve starts from the working set of the round before, its cuts moved by
    the change of the constant (see the loop), and is solved to eps C / 10
    (``LATENT_ROUND_EPS_FACTOR``). The rounds stop when F decreases by less than
    ``LATENT_RELATIVE_DECREASE`` (1e-6) of
    its value: stopping at eps C instead took 7 and 13 rounds at C = 10^4 on the synthetic
    data of benchmarks/cutoff_losses.py, short of the training NDCG@10 that further rounds
    reach (docs/guide/losses.md). A round that raises F is not kept. They also stop after a solve that did not converge (max_iter or the
    callback) and after ``LATENT_MAX_ROUNDS`` rounds.
    """
    base = config.latent
    assert base is not None
    cutoff = int(base.split("@")[1])
    # max_time bounds the whole fit: each solve gets what is left of it.
    deadline = None if config.kwargs()["max_time"] is None else time.monotonic() + config.kwargs()["max_time"]

    def timed(changes: Dict[str, Any]) -> "_core.TrainConfig":
        if deadline is not None:
            changes = {**changes, "max_time": max(deadline - time.monotonic(), 1e-9)}
        return _core.TrainConfig(**{**config.kwargs(), **changes})

    start_config = timed({"loss": "map"})
    ((coef, summary),) = _core.fit_path(core_X, labels, codes, n_queries, start_config, callback=on_iteration)
    start = coef
    y = np.require(labels, dtype=np.float64, requirements=["C", "A"])
    qid_codes = np.require(codes, dtype=np.int64, requirements=["C", "A"])
    part = _core.Partition(core_X, y, qid_codes, n_queries, config)
    problem = part.counts
    n_used = problem.used
    relevant = labels > config.relevance_threshold

    def cuts_at(w: np.ndarray) -> "tuple[float, np.ndarray]":
        ((b, g),) = part.cut_sums(w, threads)
        return b, g

    def target_sum(w: np.ndarray) -> "tuple[np.ndarray, float]":
        scores = _core.predict(core_X, w, threads)
        e = latent_target_coefficients(scores, relevant, codes, n_queries, cutoff)
        return core_X.transpose_dot(e), float(e @ scores)

    def objective(w: np.ndarray) -> float:
        b, g = cuts_at(w)
        _, es = target_sum(w)
        return 0.5 * float(w @ w) + config.C * (b - float(w @ g) + es) / n_used

    objectives = [objective(coef)]
    exhausted = False
    # The limit (max_time, a stall) that ended the rounds in a round that was not kept.
    ended_by: Optional[str] = None
    # The working set of the last kept round and the shift its cuts were made with.
    state: Optional[_core.WarmState] = None
    state_shift = np.zeros(0)
    for _ in range(LATENT_MAX_ROUNDS):
        if summary.stop != "converged":
            break
        shift, _ = target_sum(coef)
        if state is not None:
            # Every round's cuts are the paper's cuts minus its shift, times 1/n in the solver:
            # the last round's working set moved by (its shift - this one) / n holds exactly
            # this round's cuts at the same points, so the solve starts from it and is
            # certified like a cold one (solver::WarmStart::shifted; see
            # LATENT_ROUND_EPS_FACTOR for what it saves).
            state = state.shifted((state_shift - shift) / n_used)

        def source(w: np.ndarray, shift: np.ndarray = shift) -> list:
            b, g = cuts_at(w)
            return [[(b, g - shift)]]

        new_coef, new_summary, new_state = _core.solve_warm(
            source, core_X.n_cols, timed({"eps": config.eps * LATENT_ROUND_EPS_FACTOR}), problem, state, on_iteration
        )
        value = objective(new_coef)
        if value >= objectives[-1] or new_summary.stop != "converged":
            # A round that stalled or ran out of time ends the rounds, kept when it helped; when
            # it did not, the kept round's summary says "converged", and the limit that ended
            # the rounds is reported through its stop reason all the same.
            if value < objectives[-1]:
                coef, summary = new_coef, new_summary
                objectives.append(value)
            elif new_summary.stop != "converged":
                ended_by = new_summary.stop
            break
        coef, summary = new_coef, new_summary
        state, state_shift = new_state, shift
        objectives.append(value)
        if objectives[-2] - value < LATENT_RELATIVE_DECREASE * abs(value):
            break
    else:
        exhausted = True
    zero_note = None
    if not np.any(coef) and np.any(start):
        zero_note = _zero_note(start, objective, config.C)
    return coef, summary, objectives, ended_by or exhausted, zero_note


#: The multiples t of the map start at which `_zero_note` measures the latent hinge: 10^-3 to
#: 10^3 in steps of 10^0.5 (13 oracle passes).
ZERO_RAY = tuple(10.0 ** (k / 2) for k in range(-6, 7))


def _zero_note(start: np.ndarray, objective: Callable[[np.ndarray], float], C: float) -> str:
    """What the latent objective says about w = 0, where the rounds from ``start`` (the map
    model) ended: the C range in which w = 0 is not its optimum, measured along the start's
    direction.

    F_C(w) = 1/2 |w|^2 + C H(w), with H the mean latent hinge (H(w) = (F(w) - |w|^2 / 2) / C
    for the objective at this C). At w = 0, H is the largest loss, and F_C(0) = C H(0). A point
    t v with H(t v) < H(0) has F_C'(t v) < F_C'(0) exactly when C' > t^2 |v|^2 / (2 (H(0) -
    H(t v))): above that C, w = 0 is not the optimum. If H(t v) >= H(0) at every t measured, no
    C makes a multiple of the start better than w = 0."""
    at_zero = objective(np.zeros_like(start)) / C
    norm2 = float(start @ start)
    best = None
    for t in ZERO_RAY:
        w = t * start
        hinge = (objective(w) - 0.5 * t * t * norm2) / C
        if hinge < at_zero:
            threshold = 0.5 * t * t * norm2 / (at_zero - hinge)
            if best is None or threshold < best[0]:
                best = (threshold, t, hinge)
    text = (
        f"The CCCP rounds went from the map model at C = {C:g} (latent objective {objective(start):.6g}) to "
        f"w = 0, whose latent objective C H(0) = {C * at_zero:.6g} is lower. "
    )
    if best is None:
        return text + (
            f"Along the map model's direction (multiples 1e-3 to 1e3) the latent hinge never falls below its "
            f"value at w = 0 ({at_zero:.4g}): on these queries the latent formulation prefers w = 0 to every "
            "multiple of the map model at every C."
        )
    threshold, t, hinge = best
    if threshold < C:
        return text + (
            f"{t:g} times the map model has a lower latent objective at this C (hinge {hinge:.4g} against "
            f"{at_zero:.4g} at w = 0), so w = 0 is only where the rounds stopped, a local optimum."
        )
    return text + (
        f"At C >= {threshold:.3g} w = 0 is not its optimum ({t:g} times the map model has hinge {hinge:.4g} "
        f"against {at_zero:.4g} at w = 0), so a C of that order may rank."
    )


def latent_path(
    core_X: Any,
    labels: np.ndarray,
    codes: np.ndarray,
    n_queries: int,
    config: "_core.TrainConfig",
    grid: Sequence[float],
    threads: int,
) -> "list[tuple[np.ndarray, _core.FitSummary]]":
    """``_core.fit_path`` for a latent-target loss: (coef, summary) per C of ``grid``, each
    :func:`fit_latent` from the ``map`` model at that C, so every C is the model SVMMap(C).fit
    trains (there is no warm start along the path)."""
    path = []
    for C in grid:
        at_C = _core.TrainConfig(**{**config.kwargs(), "C": C})
        coef, summary, _, _, _ = fit_latent(core_X, labels, codes, n_queries, at_C, None, threads)
        path.append((coef, summary))
    return path


def set_rounds(
    model: Any, round_objectives: Optional[List[float]], exhausted: Union[bool, str], *, stacklevel: int = 1
) -> None:
    """The CCCP attributes of a latent-target fit (``n_rounds_``, ``round_objectives_``) and the
    ConvergenceWarning when the rounds stopped at their limit; removed after any other fit."""
    if round_objectives is None:
        for attribute in ("n_rounds_", "round_objectives_"):
            if hasattr(model, attribute):
                delattr(model, attribute)
        return
    model.n_rounds_ = len(round_objectives) - 1
    model.round_objectives_ = list(round_objectives)
    if isinstance(exhausted, str):
        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(
            f"{estimator_name(model)}(loss={model.loss!r}): a CCCP round ended by {exhausted!r} did not lower the "
            f"objective, so the rounds stopped there; the model is the last kept round's ({model.n_rounds_} "
            "rounds), whose solve converged, but the rounds did not reach their end",
            ConvergenceWarning,
            stacklevel=stacklevel + 1,
        )
    elif exhausted:
        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(
            f"{estimator_name(model)}(loss={model.loss!r}) stopped after {model.n_rounds_} CCCP rounds with the "
            f"objective still decreasing by at least {LATENT_RELATIVE_DECREASE:g} of its value ({round_objectives[-2]:.6g} -> "
            f"{round_objectives[-1]:.6g}); lower C",
            ConvergenceWarning,
            stacklevel=stacklevel + 1,
        )
