"""The scikit-learn style estimator around the Rust solver."""

from __future__ import annotations

import contextlib
import logging
import numbers
import sys
import threading
import warnings
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, Union, cast

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from . import _core
from ._degenerate import DegenerateModelWarning, is_degenerate, message
from ._evaluation_sets import EarlyStopping, refuse_lightgbm_arguments, validation_sets
from ._model_file import svm_document, write_model
from ._typing import IterationRecord, Slack
from ._validation import (
    check_feature_names,
    check_labels,
    check_matrix,
    check_qid,
    check_weight_memory,
    feature_names_of,
    n_threads,
    qid_of,
    query_weights,
    refuse_unrouted_search,
)

__all__ = [
    "SkippedQueriesWarning",
    "SVMMap",
]

logger = logging.getLogger("svmmap")

#: The defaults of every training parameter, owned by the Rust core's TrainConfig.
_DEFAULTS = _core.TrainConfig.DEFAULTS

_LOG_FORMAT = "[svmmap] %(message)s"
_log_lock = threading.Lock()
_log_users = 0
_log_handler: Optional[logging.Handler] = None
_log_saved_level = logging.NOTSET


@contextlib.contextmanager
def _progress_logging(verbose: int) -> Iterator[None]:
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


def query_mean(
    metric: str, y: Any, scores: np.ndarray, qid: Any, sample_weight: Any, relevance_threshold: float
) -> float:
    """``metric`` averaged over the queries where it is defined, weighted by the queries'
    ``sample_weight`` (per document, constant within a query) when given."""
    from .metrics import per_query

    pq = per_query(metric, y, scores, qid, relevance_threshold=relevance_threshold)
    if sample_weight is None:
        return pq.mean()
    codes, uniques = check_qid(qid, scores.shape[0])
    weights = query_weights(sample_weight, codes, uniques)
    weight_of = dict(zip(uniques.tolist(), cast(np.ndarray, weights).tolist()))
    w = np.array([weight_of[q] for q in pq.qids.tolist()], dtype=np.float64)
    total = float(np.sum(w))
    return float(np.dot(w, pq.values) / total) if total > 0 else float("nan")


class SkippedQueriesWarning(UserWarning):
    """Some training queries cannot contribute a constraint and were left out.

    A query needs at least one relevant and one non-relevant document; queries without a
    relevant document and queries with only relevant ones are skipped and counted.

    The counts stay on the model (``n_queries_skipped_``), so the warning can be silenced
    wherever it repeats (every fold of a cross-validation) with the standard library:
    ``warnings.filterwarnings("ignore", category=svmmap.SkippedQueriesWarning)``; to collect it
    instead, fit inside ``warnings.catch_warnings(record=True)`` and read the records.
    """


class SVMMap(BaseEstimator):
    """Linear ranker trained by a structural SVM that optimizes a ranking metric directly.

    Solves OP 1 of Yue et al. (2007) with margin rescaling,

        min_w 1/2 ||w||^2 + C/n sum_q xi_q,
        xi_q >= Delta(y_q, y) + w.Psi(x_q, y) - w.Psi(x_q, y_q) for every ranking y,

    by the 1-slack cutting-plane algorithm with an exact loss-augmented argmax per query and a
    dual coordinate-ascent QP. n counts the training queries that have both a relevant and a
    non-relevant document, so C means what it means in SVM^map (with ``loss="pairwise"``, the
    queries with two distinct labels).

    Parameters
    ----------
    C : float, default=1.0
        Trade-off between the margin and the training loss (> 0).
    loss : str, list of str or dict of str to float, default="map"
        The metric whose loss ``Delta`` is optimized: "map", "roc", "pairwise" (SVM^rank's
        graded pairs), "ndcg@k", "ndcg" (no clip),
        "mrr@k", "mrr" (no cutoff), "acc", "acc2", "dorm@k" ... (see ``svmmap.losses``). A list
        such as ``["map", "ndcg@10", "mrr@10"]`` trains SVM-combo (Chakrabarti et al. 2008,
        section 3.7), each loss with its own feature map. A dict such as
        ``{"map": 1.0, "ndcg@10": 0.1, "mrr@10": 0.1}`` gives every loss its weight: the paper's
        C_l = weight * C (a weighted loss is also spelled ``"0.1*ndcg@10"``).
    slack : {"separate", "shared"}, default="separate"
        How a list of losses is combined. "separate": one slack per loss and query, each loss
        with its own cap C, so the objective is 1/2 ||w||^2 + sum_l C/n sum_q xi_q^l (with L
        losses the total weight of the training loss is L times that of one loss; divide C by
        L to compare). "shared": one slack per query that must cover every loss,
        1/2 ||w||^2 + C/n sum_q max_l xi_q^l. Ignored for a single loss. With separate slacks
        the gap at exit is at most L * C * eps.
    eps : float, default=1e-3
        Tolerance in slack units, as SVM^struct's ``-e``: training stops when no constraint is
        violated by more than ``eps`` beyond the working set's slack. The duality gap at exit,
        ``gap_``, is then at most ``tolerance_`` (``C * eps`` times the number of slack groups).
    max_iter : int, default=10000
        Maximum number of cutting-plane iterations; a ``ConvergenceWarning`` is issued when it
        is reached.
    relevance_threshold : float, default=0.0
        A document is relevant when its label is above this value (graded labels 1, 2 and
        SVM^map's +1 are relevant; 0 and -1 are not).
    n_jobs : int or None, default=None
        Threads for the oracles, scoring and cut sums. None uses every core; negative values
        count back from the number of cores as in scikit-learn. The learned model does not
        depend on it.
    verbose : int, default=0
        Above 0, logs one line per iteration (primal, dual, gap, cuts, seconds) and a final
        summary to the ``svmmap`` logger at INFO level. Without any logging configuration the
        lines go to stderr; with one, they go to the configured handlers (see
        ``_progress_logging``).
    callback : callable or None, default=None
        Called after every iteration with a dict (iteration, primal, dual, gap, loss, n_cuts,
        n_active, seconds); returning True stops training (``stop_reason_ == "callback"``).
        An exception raised by the callback stops training and propagates out of ``fit``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The learned weights; a document's score is ``X @ coef_``.
    objective_ : float
        Primal objective 1/2 ||w||^2 + C/n sum_q xi_q at ``coef_``.
    dual_objective_ : float
        Dual objective of the final working set, a lower bound on the optimum.
    gap_ : float
        ``objective_ - dual_objective_``.
    degenerate_ : bool
        Whether the model ranks nothing: ``coef_`` is zero, or its scores tie within every
        training query (a :class:`~svmmap.DegenerateModelWarning` said so at fit).
    tolerance_ : float
        The duality gap below which training stops: ``eps`` times ``C`` times the number of
        slack groups (one per loss with ``slack="separate"``, one with ``"shared"``), as the core
        computes it.
    n_iter_ : int
        Cutting-plane iterations run.
    n_cuts_ : int
        Cuts with a positive dual variable at the end.
    converged_ : bool
        Whether the gap fell to ``tolerance_``.
    stop_reason_ : str
        Why training stopped: "converged", "max_iter" or "callback".
    n_queries_ : int
        Training queries used (with both relevant and non-relevant documents; for "pairwise",
        with two distinct labels).
    n_queries_skipped_ : dict
        Training queries left out, by reason ("no_relevant", "all_relevant").
    history_ : list of dict
        The per-iteration records passed to ``callback``.
    feature_importances_ : ndarray of shape (n_features,)
        The share of the training scores' spread that each feature carries:
        ``|coef_[j]| * std_j`` over their sum (std_j the standard deviation of feature j over the
        training documents; for bin codes, of each indicator column), so that importances do
        not depend on the features' scales as the weights do; they sum to 1 (all 0 for w = 0).
        As for LightGBM's, a feature can matter through others it is correlated with, and a
        negative weight is as important as a positive one. Not kept in model files.
    best_iteration_ : int
        With ``fit(..., early_stopping_rounds=N)``: the iteration whose iterate is ``coef_``.
    best_score_ : dict
        With early stopping: the validation metrics of that iterate, {set name: {metric: value}}.
    evals_result_ : dict
        Only after a fit with ``eval_set``: ``{"valid_0": {"map": [...]}, ...}``, the
        ``eval_metric`` of every validation set at the w of every iteration (as LightGBM's
        ``evals_result_``); the last entry is the metric of ``coef_``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names of ``X`` in ``fit``, when ``X`` had string column names (e.g. a pandas
        DataFrame); absent otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap import SVMMap
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.9, 0.2], [0.1, 0.8], [0.2, 0.2]])
    >>> y = np.array([1, 0, 0, 1, 0, 0])
    >>> qid = np.array([7, 7, 7, 8, 8, 8])
    >>> model = SVMMap(C=10.0).fit(X, y, qid=qid)
    >>> bool(model.coef_[0] > model.coef_[1])
    True
    >>> model.score(X, y, qid=qid)
    1.0
    """

    def __init__(
        self,
        C: float = _DEFAULTS["C"],
        *,
        loss: Union[str, Sequence[str], Mapping[str, float]] = _DEFAULTS["loss"],
        slack: Slack = _DEFAULTS["slack"],
        eps: float = _DEFAULTS["eps"],
        max_iter: int = _DEFAULTS["max_iter"],
        relevance_threshold: float = _DEFAULTS["relevance_threshold"],
        n_jobs: Optional[int] = _DEFAULTS["n_jobs"],
        verbose: int = 0,
        callback: Optional[Callable[[IterationRecord], Any]] = None,
    ) -> None:
        self.C = C
        self.loss = loss
        self.slack = slack
        self.eps = eps
        self.max_iter = max_iter
        self.relevance_threshold = relevance_threshold
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def _config(self) -> "_core.TrainConfig":
        """The training configuration, validated by the core (one error line per bad
        parameter, naming it); the callback is checked here, as it never reaches the core."""
        config = _core.TrainConfig(
            C=self.C,
            eps=self.eps,
            max_iter=self.max_iter,
            relevance_threshold=self.relevance_threshold,
            loss=self.loss,
            slack=self.slack,
            n_jobs=self.n_jobs,
        )
        if self.callback is not None and not callable(self.callback):
            raise ValueError(f"callback must be callable or None, got {self.callback!r}")
        if not isinstance(self.verbose, (bool, numbers.Integral)) or self.verbose < 0:
            raise ValueError(f"verbose must be an integer >= 0, got {self.verbose!r}")
        return config

    def fit(
        self,
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
        **lightgbm_kwargs: Any,
    ) -> "SVMMap":
        """Learn ``coef_`` from documents grouped by query.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or svmmap.BinnedMatrix of shape (n_documents, n_features)
            float32 and float64 C-ordered arrays, CSR matrices and the bin codes of a
            BinnedMatrix (read as its indicator columns) are used without a copy.
            A pandas DataFrame's string column names are kept in ``feature_names_in_``.
        y : array-like of shape (n_documents,)
            Relevance labels (graded or -1/+1).
        qid : array-like of shape (n_documents,)
            Query id of every document, any integers or strings, in any order.
        group : array-like of int, optional
            Instead of ``qid``, LightGBM's query sizes in row order: the first ``group[0]`` rows
            are one query, the next ``group[1]`` rows the next, and so on (what PyTerrier's
            ``pt.ltr.apply_learned_model(..., form="ltr")`` passes). Give ``qid`` or
            ``group``, not both.
        sample_weight : array-like of shape (n_documents,), optional
            Per-query weights given per document, as in scikit-learn's ``fit(X, y,
            sample_weight=...)``: every document of a query must carry the query's weight
            s_q >= 0 (a query has one slack, so a weight can only scale the whole query). The
            objective becomes 1/2 ||w||^2 + C/n sum_q s_q xi_q, with n still the number of
            usable queries. Weights of 1 give exactly the unweighted model; an integer weight k
            on one query trains the model of that query repeated k times at C (n + k - 1) / n;
            a weight of 0 drops the query's constraint (it still counts in n, so this is the
            model without the query at C (n - 1) / n). Queries that cannot train (no relevant
            or no non-relevant document) are skipped whatever their weight.
        eval_set : list of (X, y) tuples, optional
            Validation sets scored at every iteration; the metric goes to ``evals_result_``.
            It does not change the model.
        eval_group : list of array-like of int, optional
            The query sizes of every validation set, as ``group``.
        eval_qid : list of array-like, optional
            The query ids of every validation set, as ``qid`` (instead of ``eval_group``).
        eval_metric : str or list of str, default="map"
            Metric names of ``svmmap.metrics.evaluate`` ("map", "ndcg@10", ...), computed with
            this estimator's ``relevance_threshold``.
        eval_at : list of int, optional
            As LightGBM's ``eval_at``: NDCG at each of these cutoffs is evaluated too
            ("ndcg@k", after the metrics of ``eval_metric``).
        early_stopping_rounds : int, optional
            Stop when the first metric on the first validation set has not improved for this
            many cutting-plane iterations, and keep the iterate where it was best: ``coef_`` is
            that iterate, ``best_iteration_`` its iteration and ``best_score_`` its metrics
            ({set name: {metric: value}}), as LightGBM's early stopping does. Needs
            ``eval_set``. Early stopping ends training before the optimality certificate:
            ``objective_`` and ``gap_`` describe the last iterate, not ``coef_``, which is then
            the model of best validation score rather than an eps-optimal solution of OP 1
            (``stop_reason_`` is "callback" when it stopped training).
        **lightgbm_kwargs
            LightGBM's other ``fit`` arguments (``callbacks``, ``verbose``, ``eval_names`` ...), as
            PyTerrier's ``fit_kwargs`` pass them, are refused with the svmmap equivalent.

        Returns
        -------
        self : SVMMap
        """
        refuse_lightgbm_arguments(type(self).__name__, lightgbm_kwargs)
        config = self._config()
        names = feature_names_of(X)
        core_X, n_rows, n_features = check_matrix(X)
        check_weight_memory(n_features)
        labels = check_labels(y, n_rows)
        qid = qid_of(qid, group, n_rows, "qid", "group")
        codes, uniques = check_qid(qid, n_rows, required_by=f"{type(self).__name__}.fit")
        refuse_unrouted_search(f"{type(self).__name__}.fit")
        weights = query_weights(sample_weight, codes, uniques)
        evals, early = validation_sets(
            eval_set,
            eval_group,
            eval_qid,
            eval_metric,
            eval_at,
            early_stopping_rounds,
            n_features,
            n_threads(self.n_jobs),
            self.relevance_threshold,
        )

        on_iteration = self._iteration_callback(evals, early)
        with _progress_logging(self.verbose):
            try:
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
            except BaseException:
                # Interrupted (Ctrl-C), out of memory or refused: no model from an earlier fit
                # may pass for the result of this one.
                self._forget_fit()
                raise
            if early is not None and early.best_coef is not None:
                # The iterate of the best validation score is the model, as in LightGBM.
                coef = early.best_coef
            self._set_fitted(coef, summary, n_features, names, len(uniques))
        if early is not None:
            self.best_iteration_ = early.best_iteration
            self.best_score_ = early.best_scores
        else:
            for name in ("best_iteration_", "best_score_"):
                if hasattr(self, name):
                    delattr(self, name)
        # |w_j| times the spread of feature j: the share of the scores' spread each feature
        # carries, whatever the features' scales (the weights alone depend on them).
        spread = np.abs(self.coef_) * core_X.column_std()
        total = float(spread.sum())
        self.feature_importances_ = spread / total if total > 0 else np.zeros_like(spread)
        scores = _core.predict(core_X, coef, n_threads(self.n_jobs)) if np.any(coef) else None
        self.degenerate_ = is_degenerate(coef, scores, labels, codes)
        if self.degenerate_:
            warnings.warn(message(type(self).__name__, self.loss, coef, summary), DegenerateModelWarning, stacklevel=2)
        if evals is not None:
            self.evals_result_ = {name: dict(results) for name, _, results in evals}
        elif hasattr(self, "evals_result_"):
            del self.evals_result_
        return self

    def _iteration_callback(
        self, evals: Optional[list] = None, early: Optional[EarlyStopping] = None
    ) -> Optional[Callable[[IterationRecord], bool]]:
        """The per-iteration hook handed to the solver: scores the validation sets (when
        given) at the iterate w, logs (when verbose) and calls the user's callback, whose true
        return value stops training. None when nothing is asked for, so that the solver need
        not enter Python at every iteration."""
        verbose = self.verbose
        user_callback = self.callback
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

    def _set_fitted(
        self,
        coef: np.ndarray,
        summary: "_core.FitSummary",
        n_features: int,
        feature_names: Optional[np.ndarray],
        n_queries_total: int,
    ) -> None:
        """Stores the solver's result as fitted attributes and reports skipped queries,
        non-convergence and (when verbose) the outcome."""
        self.coef_ = coef
        self.n_features_in_ = n_features
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.objective_ = summary.primal
        self.dual_objective_ = summary.dual
        self.gap_ = summary.gap
        self.tolerance_ = summary.tolerance
        self.n_iter_ = summary.n_iter
        self.n_cuts_ = summary.active_cuts
        self.stop_reason_ = summary.stop
        self.converged_ = summary.stop == "converged"
        self.n_queries_ = summary.problem.used
        self.n_queries_skipped_ = {
            "no_relevant": summary.problem.no_relevant,
            "all_relevant": summary.problem.all_relevant,
        }
        self.history_ = summary.history
        skipped = sum(self.n_queries_skipped_.values())
        if skipped:
            warnings.warn(
                f"{skipped} of {n_queries_total} training queries were skipped: "
                f"{self.n_queries_skipped_['no_relevant']} without a relevant document, "
                f"{self.n_queries_skipped_['all_relevant']} with only relevant documents "
                f"(relevant means label > {self.relevance_threshold})",
                SkippedQueriesWarning,
                stacklevel=3,
            )
        if summary.stop == "max_iter":
            warnings.warn(
                f"{type(self).__name__} stopped at max_iter={self.max_iter} with duality gap {self.gap_:.3g} "
                f"> its tolerance {summary.tolerance:.3g} (eps * C * slack groups); raise max_iter or eps, or standardize the "
                f"features if their scales differ by orders of magnitude (the gap still bounds "
                f"how far objective_ is from the optimum)",
                ConvergenceWarning,
                stacklevel=3,
            )
        if self.verbose:
            logger.info(
                "%s after %d iterations: primal %.6g, gap %.3g, %d active cuts, %d queries (%d skipped)",
                summary.stop,
                self.n_iter_,
                self.objective_,
                self.gap_,
                self.n_cuts_,
                self.n_queries_,
                skipped,
            )

    def _forget_fit(self) -> None:
        """Removes every fitted attribute (those ending in an underscore)."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, name)

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call fit(X, y, qid=...) first"
            )

    def predict(self, X: Any) -> np.ndarray:
        """Score every document; sorting a query's documents by score gives its ranking.

        Returns
        -------
        scores : ndarray of shape (n_documents,), float64, in the row order of ``X``.
        """
        self._check_fitted()
        check_feature_names(self, X)
        core_X, _, n_features = check_matrix(X)
        if n_features != self.n_features_in_:
            raise ValueError(
                f"X has {n_features} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input (it was fitted with {self.n_features_in_})"
            )
        return _core.predict(core_X, self.coef_, n_threads(self.n_jobs))

    def score(self, X: Any, y: Any, qid: Any = None, sample_weight: Any = None) -> float:
        """Mean average precision of the predicted ranking (see ``svmmap.metrics``).

        Queries without a relevant document are skipped; ties in score are broken
        pessimistically. With ``sample_weight`` (per document, the same on every document of a
        query, as in ``fit``), the mean over queries is weighted by the queries' weights.
        """
        if qid is None:
            check_qid(None, 0, required_by=f"{type(self).__name__}.score")
        scores = self.predict(X)
        return query_mean("map", y, scores, qid, sample_weight, self.relevance_threshold)

    def save(self, path: Any) -> None:
        """Write the fitted model as versioned JSON, atomically.

        The format is described in ``docs/model-format.md``; read the file back with
        ``svmmap.load_model``. ``svmmap classify`` reads it too.
        """
        write_model(path, svm_document(self))

    def __sklearn_tags__(self) -> Any:
        # scikit-learn >= 1.6 reads tags from here: labels are required, sparse input is fine.
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True
        return tags

    def _more_tags(self) -> dict:
        # The same tags for scikit-learn < 1.6.
        return {"requires_y": True}
