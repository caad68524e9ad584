"""SVMMap's training without scikit-learn: the one orchestrator of every fit (`run_fit`), into
which a fit plugs its solve (`Solve`): `InMemory` for ``SVMMap.fit`` and ``svmmap learn``, the
Dask solve of ``svmmap.dask.SVMMap.fit``.

``svmmap.SVMMap`` is a scikit-learn estimator, and importing scikit-learn takes most of a second,
far longer than training on a small file. So the training itself lives here, in functions that
read SVMMap's parameters from a model object and set its fitted attributes on it: ``SVMMap.fit``
runs `run_fit` on itself, and ``svmmap learn`` runs it (through `train`) on a `BareSVMMap`, an
object with the same parameters and no scikit-learn base class. Every fit therefore checks its
parameters and inputs once, the same way, issues the same warnings and produces the same
attributes, from which ``_files.model_file.svm_document`` writes the same model file.

scikit-learn is imported only where one of its names is needed: ``ConvergenceWarning`` is
scikit-learn's class (users filter it by that class), so it is imported when a fit stops at
``max_iter``, the one place that raises it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Protocol, Union

import numpy as np

from .. import _core
from .._typing import IterationRecord
from .._validation import (
    check_labels,
    check_matrix,
    check_qid,
    check_spelling,
    check_verbose,
    feature_names_of,
    forget_fit,
    invalid_parameter,
    n_threads,
    one_column,
    qid_of,
    query_weights,
)
from .convergence import overflow_named, stop_message
from .defaults import TRAINING_DEFAULTS
from .degenerate import DegenerateModelWarning, is_degenerate, message, score_spread
from .evaluation_sets import EarlyStopping, SetPreparer
from .latent import fit_latent, refuse_latent_options, set_rounds
from .lightgbm_args import refuse_lightgbm_arguments
from .naming import called_as, estimator_name
from .once import first_in_search
from .request import FitRequest
from .watch import watching

__all__ = [
    "PARAMETER_DEFAULTS",
    "TRAINING_PARAMETERS",
    "FITTED_ATTRIBUTES",
    "SOLVER_FIGURES",
    "BareSVMMap",
    "InMemory",
    "Inputs",
    "Outcome",
    "SkippedQueriesWarning",
    "Solve",
    "check_inputs",
    "estimator_name",
    "finish",
    "fitting",
    "forget_fit",
    "progress_logging",
    "run_fit",
    "set_fitted",
    "train",
    "train_config",
]

logger = logging.getLogger("svmmap")

#: The training parameters, one dict each (name, default, kind, expected, type, flag, doc): the
#: Rust core's table (rust/solver/options.rs), the one place a training parameter is declared.
TRAINING_PARAMETERS = _core.TRAINING_PARAMETERS

#: SVMMap's parameters and their defaults: the training parameters of the core, and how a fit is
#: watched (verbose, callback). ``SVMMap.__init__`` has exactly these (a test checks it), so that a
#: BareSVMMap and an SVMMap with the same parameters are the same model and save the same file.
PARAMETER_DEFAULTS: Dict[str, Any] = {**TRAINING_DEFAULTS, "verbose": 0, "callback": None}

#: THE list of a fitted SVMMap's attributes (a BareSVMMap's, a Dask SVMMap's), in the order of
#: SVMMap's docstring: `finish` sets them (those after ``history_`` only when the fit used what
#: they describe), ``svmmap.dask.SVMMap.to_local`` copies them, and tests/api/test_estimator.py
#: checks both the docstring and what fits set against this list.
FITTED_ATTRIBUTES = (
    "coef_",
    "objective_",
    "dual_objective_",
    "gap_",
    "degenerate_",
    "tolerance_",
    "n_iter_",
    "n_cuts_",
    "converged_",
    "stop_reason_",
    "n_queries_",
    "n_queries_skipped_",
    "history_",
    "feature_importances_",
    "n_rounds_",
    "round_objectives_",
    "best_iteration_",
    "best_score_",
    "evals_result_",
    "n_features_in_",
    "feature_names_in_",
)
#: The solver's figures among them, which a model that wraps an SVMMap (the baselines) copies.
SOLVER_FIGURES = FITTED_ATTRIBUTES[1:9] + ("history_",)


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

    # The training parameters (``TRAINING_PARAMETERS``) are set by ``__init__`` from
    # PARAMETER_DEFAULTS and are not restated here: this module's functions take the model as
    # Any (an SVMMap or a BareSVMMap), so no reader needs their types. ``callback`` is set by
    # the command line after construction, which mypy checks against this annotation.
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
    check_spelling(model.loss, "loss")
    config = _core.TrainConfig(**{p["name"]: getattr(model, p["name"]) for p in TRAINING_PARAMETERS})
    if model.callback is not None and not callable(model.callback):
        raise invalid_parameter("callback", "callable or None", model.callback)
    check_verbose(model.verbose, "above 0: progress")
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
    # One reading of the weights (a column vector warns once), which the search's splits share.
    doc_weights = None if sample_weight is None else one_column(sample_weight, "sample_weight")
    weights = query_weights(doc_weights, codes, uniques)
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
    #: A latent-target fit's rounds (see `_fit.latent.fit_latent`).
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


def train(model: Any, X: Any, y: Any, qid: Any = None, *, stacklevel: int = 1, **arguments: Any) -> None:
    """``SVMMap.fit``'s fit in memory on ``model``, an SVMMap or a BareSVMMap (``svmmap learn``
    trains one): `run_fit` with the `InMemory` solve. ``arguments`` are the other fields of
    `FitRequest`; ``stacklevel`` as in `run_fit`."""
    run_fit(model, FitRequest(X, y, qid, **arguments), InMemory(), stacklevel=stacklevel + 1)


class Solve(Protocol):
    """What differs between fits: where the data lives and how a round's cut is computed. The
    orchestrator (`run_fit`) calls ``check``, ``load``, ``run`` in this order and ``close``
    at the end whatever happened; everything else about a fit is shared."""

    def name(self, model: Any) -> str:
        """The estimator as messages name it."""

    def check(self, model: Any, config: "_core.TrainConfig", request: FitRequest) -> None:
        """The solve's own refusals, before any data is read."""

    def load(self, model: Any, config: "_core.TrainConfig", request: FitRequest, threads: int) -> int:
        """Reads and checks the training data (once); returns its number of features."""

    def preparer(self) -> Optional[SetPreparer]:
        """How the validation sets are made ready (None: in memory)."""

    def run(
        self,
        config: "_core.TrainConfig",
        on_iteration: Optional[Callable[[IterationRecord], bool]],
        threads: int,
        *,
        with_coef: bool,
    ) -> Outcome:
        """The solve itself, on the loaded data."""

    def close(self) -> None:
        """Releases what ``load`` holds (a cluster's futures)."""


def run_fit(model: Any, request: FitRequest, solve: Solve, *, stacklevel: int = 1) -> None:
    """THE orchestrator of every fit (``SVMMap.fit``, ``svmmap learn``, ``svmmap.dask.SVMMap.fit``):
    inside `fitting`'s clean-up, refuses LightGBM's other arguments, checks the parameters
    once (`train_config`), lets ``solve`` check and load the data, reads the LightGBM-style
    arguments (`watch.watching`), solves and sets the fitted attributes (`finish`).

    ``stacklevel`` is the one a warning issued in the caller would use, so that the warnings
    point at the line that called the caller (the user's ``fit``).
    """
    # Every message of the fit names the estimator the user called, as its solve names it
    # (svmmap.dask.SVMMap's warnings said "SVMMap stopped at max_iter=1" where its errors say
    # "svmmap.dask.SVMMap"); for a fit in memory that is the name it already had.
    name = solve.name(model)
    with fitting(model), called_as(name):
        refuse_lightgbm_arguments(name, dict(request.lightgbm_kwargs))
        config = train_config(model)
        solve.check(model, config, request)
        threads = n_threads(model.n_jobs)
        try:
            n_features = solve.load(model, config, request, threads)
            watch = watching(model, request, n_features, threads, solve.preparer())
            if config.latent is not None:
                refuse_latent_options(model.loss, sample_weight=request.sample_weight, eval_set=watch.evals)
            with progress_logging(model.verbose):
                outcome = solve.run(config, watch.on_iteration, threads, with_coef=watch.needs_coef)
                outcome.early, outcome.evals = watch.early, watch.evals
                finish(model, outcome, stacklevel=stacklevel + 1)
        finally:
            solve.close()


class InMemory:
    """The `Solve` of a fit on data in memory: the one input check (`check_inputs`), then a
    latent-target loss's CCCP rounds or the core's fit at one C."""

    data: Inputs

    def name(self, model: Any) -> str:
        return estimator_name(model)

    def check(self, model: Any, config: "_core.TrainConfig", request: FitRequest) -> None:
        pass

    def load(self, model: Any, config: "_core.TrainConfig", request: FitRequest, threads: int) -> int:
        r = request
        self.data = check_inputs(estimator_name(model), r.X, r.y, r.qid, r.group, r.sample_weight)
        return self.data.n_features

    def preparer(self) -> Optional[SetPreparer]:
        return None

    def close(self) -> None:
        pass

    def run(
        self,
        config: "_core.TrainConfig",
        on_iteration: Optional[Callable[[IterationRecord], bool]],
        threads: int,
        *,
        with_coef: bool,
    ) -> Outcome:
        data = self.data
        round_objectives: Optional[List[float]] = None
        exhausted: Union[bool, str] = False
        zero_note: Optional[str] = None
        with overflow_named(config.C, data.query_weights, lambda: data.core_X.column_std(threads), config.losses):
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
