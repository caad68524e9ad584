"""The scikit-learn style estimator around the Rust solver.

Its training is ``svmmap._fit.training``'s (checks, solver, fitted attributes, warnings), which
``svmmap learn`` runs too without importing scikit-learn; this module adds the estimator:
scikit-learn's base class, ``predict``, ``score`` and ``save``.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence, Union, cast

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from . import _core
from ._files.model_file import svm_document, write_model
from ._fit.defaults import TRAINING_DEFAULTS
from ._fit.lightgbm_args import (
    LIGHTGBM_ATTRIBUTES,
    LIGHTGBM_PARAMETERS,
    refuse_lightgbm_parameters,
    refuse_lightgbm_predict,
)
from ._fit.request import FitRequest, fit_doc
from ._fit.routing import refuse_group_in_search, refuse_group_request_in_search, refuse_unrouted_search
from ._fit.training import InMemory, SkippedQueriesWarning, run_fit, train_config
from ._typing import IterationRecord, Slack
from ._validation import (
    check_feature_names,
    check_labels,
    check_matrix,
    check_qid,
    n_threads,
    qid_of,
    query_weights,
)
from .metrics import per_query

__all__ = [
    "SkippedQueriesWarning",
    "SVMMap",
]


def query_mean(
    metric: str, y: Any, scores: np.ndarray, qid: Any, sample_weight: Any, relevance_threshold: float
) -> float:
    """``metric`` averaged over the queries where it is defined, weighted by the queries'
    ``sample_weight`` (per document, constant within a query) when given."""
    # The checks of fit, with fit's names: the metric's would name y_true and y_score, which the
    # caller of score did not pass ("qid has 42 entries but y_score has 43 rows").
    y = check_labels(y, scores.shape[0])
    if qid is not None:
        codes, uniques = check_qid(qid, scores.shape[0])
        qid = uniques[codes]  # the same queries, 1-D: a column vector warned once, here
    try:
        pq = per_query(metric, y, scores, qid, relevance_threshold=relevance_threshold)
    except ValueError as exc:
        # The metric's checks name its arguments y_true and y_score; the user passed
        # ``score`` its y, and X, whose rows the scores are.
        text = str(exc)
        if not text.startswith("y_true"):
            raise
        raise ValueError("y" + text[len("y_true") :].replace(" but y_score has ", " but X has ", 1)) from None
    if sample_weight is None:
        return pq.mean()
    codes, uniques = check_qid(qid, scores.shape[0])
    weights = query_weights(sample_weight, codes, uniques)
    weight_of = dict(zip(uniques.tolist(), cast(np.ndarray, weights).tolist()))
    w = np.array([weight_of[q] for q in pq.qids.tolist()], dtype=np.float64)
    with np.errstate(over="ignore"):
        total = float(np.sum(w))
    if np.isinf(total):
        # Weights near the float64 maximum add up to inf (and the mean to NaN), though only
        # their ratios count, as in fit: scaled by a power of two, exactly, they add up.
        w = np.ldexp(w, -np.frexp(np.max(w))[1])
        total = float(np.sum(w))
    return float(np.dot(w, pq.values) / total) if total > 0 else float("nan")


class _RefusesLightGBMParameters:
    """Refuses LightGBM's constructor parameters (``n_estimators`` ...) with svmmap's
    counterpart, before ``__init__`` would refuse them with Python's bare "unexpected keyword
    argument", so that a ported ``LGBMRanker(n_estimators=...)`` learns what svmmap does
    instead. scikit-learn reads an estimator's parameters from the signature of ``__init__``,
    which therefore names svmmap's parameters only; this ``__new__`` sits in a base class after
    the estimator's own, so that ``inspect.signature(SVMMap)`` is still ``__init__``'s."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        refuse_lightgbm_parameters(cls.__name__, {k: v for k, v in kwargs.items() if k in LIGHTGBM_PARAMETERS})
        return super().__new__(cls)


class SVMMap(BaseEstimator, _RefusesLightGBMParameters):
    """Linear ranker trained by a structural SVM that optimizes a ranking metric directly.

    Solves OP 1 of Yue et al. (2007) with margin rescaling,

        min_w 1/2 ||w||^2 + C/n sum_q xi_q,
        xi_q >= Delta(y_q, y) + w.Psi(x_q, y) - w.Psi(x_q, y_q) for every ranking y,

    by the 1-slack cutting-plane algorithm with an exact loss-augmented argmax per query and a
    dual coordinate-ascent QP. n counts the training queries that have both a relevant and a
    non-relevant document, so C means what it means in SVM^map (with ``loss="pairwise"``, the
    queries with two distinct labels).

    LightGBM's tree parameters (``n_estimators``, ``learning_rate``, ``num_leaves``,
    ``objective``, ``random_state`` ...) are refused with a TypeError that names svmmap's
    counterpart, or says why a linear model needs none; so are LightGBM's ``predict`` arguments
    (``num_iteration`` ...) unless they ask for what ``predict`` does anyway, and its fitted
    attributes that a linear model lacks (``booster_`` ...).

    Parameters
    ----------
    C : float, default=1.0
        Trade-off between the margin and the training loss (> 0).
    loss : str, list of str or dict of str to float, default="map"
        The metric whose loss ``Delta`` is optimized, or a combination of several. One of
        "map", "roc", "pairwise" (SVM^rank's graded pairs), "ndcg@k", "ndcg" (no clip),
        "mrr@k", "mrr" (no cutoff), "acc", "acc2", "dorm@k" ... (see ``svmmap.losses``). A dict
        such as ``{"map": 1.0, "ndcg@10": 0.1, "mrr@10": 0.01}`` trains SVM-combo (Chakrabarti
        et al. 2008, section 3.7), each loss with its own feature map and weight: the paper's
        C_l = weight * C (a weighted loss is also spelled ``"0.1*ndcg@10"``). A list such as
        ``["map", "ndcg@10", "mrr@10"]`` gives its losses default weights by kind, divided by
        the largest: 1e-4 for MRR (phi_mrr is not scaled by 1/(P N)), 0.1 for NDCG with a
        cutoff (ndcg@k, dorm@k), 1 for every other loss; so that list is
        ``{"map": 1, "ndcg@10": 0.1, "mrr@10": 0.0001}`` (equal weights learn w = 0 on queries
        with many relevant documents). ``svmmap.losses.loss_groups`` shows the weights.
        ``"ndcg@k:latent"`` (alone, not in a list) is NDCG@k with a latent target (Yu and
        Joachims 2009): the target is the best-scored ranking of NDCG@k 1, not the ideal one,
        so it trains where "ndcg@k" learns w = 0 (queries with many relevant documents). Its
        objective is not convex: it is fitted by CCCP rounds started from the "map" model at
        the same C, each round the paper's "ndcg@k" problem with the target fixed and solved to
        eps * C / 10, until the objective decreases by less than a millionth of its value (at
        most 100 rounds, and before a round that would go to w = 0 from a model that ranks,
        with a ConvergenceWarning); ``"ndcg@k:graded:latent"`` is the same for graded NDCG@k
        (``"ndcg@k:graded"``); see the guide, "Losses". It takes no ``sample_weight``, ``eval_set`` or ``slack="shared"``.
    slack : {"separate", "shared"}, default="separate"
        How a list of losses is combined. "separate": one slack per loss and query, each loss
        with its own cap C_l = weight_l * C, so the objective is
        1/2 ||w||^2 + sum_l C_l/n sum_q xi_q^l (with L losses of equal weight the total weight
        of the training loss is L times that of one loss; divide C by L to compare). "shared":
        one slack per query that must cover every (weighted) loss,
        1/2 ||w||^2 + C/n sum_q max_l xi_q^l. For a single loss the two are one objective (the
        max of one slack is that slack). With separate slacks the gap at exit is at most
        L * C * eps.
    eps : float, default=0.001
        Tolerance in slack units, as SVM^struct's ``-e``: training stops when no constraint is
        violated by more than ``eps`` beyond the working set's slack. The duality gap at exit,
        ``gap_``, is then at most ``tolerance_`` (``C * eps`` times the number of slack groups).
    max_iter : int, default=10000
        Maximum number of cutting-plane iterations. A ``ConvergenceWarning`` is issued when it
        is reached.
    relevance_threshold : float, default=0.0
        A document is relevant when its label is above this value. Graded labels 1, 2 and
        SVM^map's +1 are thus relevant; 0 and -1 are not.
    n_jobs : int or None, default=None
        Threads for the oracles, scoring and cut sums; None (the default) uses every core.
        Negative values count back from the number of cores as in scikit-learn. The learned
        model does not depend on it.
    cut_blocks : int or None, default=None
        Cuts per slack group and iteration, one per block of consecutive training queries;
        None is the core's default, today 1. Each block has its own cut and slack (a
        multi-cut model of the same objective; 1 is the 1-slack model of the papers). The
        optimum does not depend on it, the path to it does: more blocks take fewer iterations
        where the 1-slack model needs many (binned features at large C), each with a larger
        working set. One block was the fastest in seconds in the measurements of the guide's
        "Cut blocks". Not available for latent-target losses or with ``svmmap.dask``.
    n_iter_no_change : int or None, default=50
        Stop as stalled when, over this many iterations, the duality gap (above ten times its
        tolerance) closed too slowly to reach it by ``max_iter``; None trains on. Such a fit
        keeps its best iterate, sets ``stop_reason_ = "stalled"`` and issues a
        ``ConvergenceWarning`` naming the likely cause, measured from the data (feature scales
        spanning orders of magnitude; C times the pairs of ``"pairwise:count"``) and its remedy.
        A heuristic: of 196 fits that converge (``benchmarks/stalls.py``) it stopped two, slow
        binned ``mrr@10`` fits at C >= 1000 (the guide, "Fits that stall").
    max_time : float or None, default=None
        Stop after the first iteration that ends this many seconds after the start; None (the
        default) sets no limit. Such a fit keeps its best iterate, sets
        ``stop_reason_ = "max_time"`` and issues a ``ConvergenceWarning``. For
        ``"ndcg@k:latent"`` the limit covers all its rounds.
    verbose : int, default=0
        0 or below (LightGBM's -1) is silent. Above 0, logs one line per iteration (primal, dual, gap, cuts, seconds) and a final
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
        Dual objective of the working set that produced ``coef_``, a lower bound on the
        optimum (the final working set's, or after early stopping that of the kept round).
    gap_ : float
        ``objective_ - dual_objective_``: how far ``coef_`` is at most from the optimum.
    degenerate_ : bool
        Whether the model ranks nothing: ``coef_`` is zero, or its scores tie within every
        training query (a `DegenerateModelWarning` said so at fit).
    tolerance_ : float
        The duality gap below which training stops: ``eps`` times ``C`` times the number of
        slack groups (one per loss with ``slack="separate"``, one with ``"shared"``), as the core
        computes it. For ``"ndcg@k:latent"``, that of the last kept CCCP round, whose problem
        is solved to a tenth of it (``eps * C / 10``).
    n_iter_ : int
        Cutting-plane iterations run.
    n_cuts_ : int
        Cuts with a positive dual variable at the end.
    converged_ : bool
        Whether training converged with ``coef_`` certified: ``gap_`` within ``tolerance_``.
    stop_reason_ : str
        Why training stopped: "converged", "max_iter", "callback" (a callback ended it, or
        early stopping did, ``early_stopping_rounds`` as well as ``svmmap.early_stopping``),
        "stalled" (the gap, far above its tolerance, stopped closing; a ConvergenceWarning
        names the likely cause) or "max_time". After early stopping, ``coef_`` is the iterate of ``best_iteration_``: when
        that is an earlier round than ``n_iter_``, "converged" says that training ended by
        converging, not that ``coef_`` did (``converged_`` is then False unless its own round's
        gap was within the tolerance).
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
    n_rounds_ : int
        With ``loss="ndcg@k:latent"``: the CCCP rounds kept after the start from the "map"
        model (0: no round lowered the objective; the model is map's). The solver attributes
        above (``objective_``, ``n_iter_``, ``history_`` ...) are then those of the last kept
        round's convex problem (of map's fit when 0).
    round_objectives_ : list of float
        With ``loss="ndcg@k:latent"``: its (non-convex) objective, 1/2 ||w||^2 + C/n times the
        sum of the latent hinges, at the "map" start and after every kept round, decreasing.
    best_iteration_ : int
        With early stopping (``fit(..., early_stopping_rounds=N)``, an ``early_stopping``
        callback, or a callback's ``EarlyStopException``): the iteration whose iterate is
        ``coef_``, and whose figures ``objective_``, ``dual_objective_`` and ``gap_`` are.
        0 without early stopping, as LightGBM's.
    best_score_ : dict
        With early stopping: the validation metrics of that iterate, {set name: {metric: value}}.
        With validation sets and no early stopping: their metrics at ``coef_`` (the last
        entries of ``evals_result_``), as LightGBM's; ``{}`` without validation sets.
    evals_result_ : dict
        ``{"valid_0": {"map": [...]}, ...}``: the ``eval_metric`` of every validation set at the
        w of every iteration (as LightGBM's ``evals_result_``); the last entry is the metric of
        ``coef_``. ``{}`` after a fit without ``eval_set``.
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
        C: float = TRAINING_DEFAULTS["C"],
        *,
        loss: Union[str, Sequence[str], Mapping[str, float]] = TRAINING_DEFAULTS["loss"],
        slack: Slack = TRAINING_DEFAULTS["slack"],
        eps: float = TRAINING_DEFAULTS["eps"],
        max_iter: int = TRAINING_DEFAULTS["max_iter"],
        relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
        n_jobs: Optional[int] = TRAINING_DEFAULTS["n_jobs"],
        cut_blocks: Optional[int] = TRAINING_DEFAULTS["cut_blocks"],
        n_iter_no_change: Optional[int] = TRAINING_DEFAULTS["n_iter_no_change"],
        max_time: Optional[float] = TRAINING_DEFAULTS["max_time"],
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
        self.cut_blocks = cut_blocks
        self.n_iter_no_change = n_iter_no_change
        self.max_time = max_time
        self.verbose = verbose
        self.callback = callback

    def _config(self) -> "_core.TrainConfig":
        """The training configuration, validated by the core (one error line per bad
        parameter, naming it); the callback is checked here, as it never reaches the core."""
        return train_config(self)

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
        eval_metric: Optional[Union[str, Sequence[str]]] = None,
        eval_at: Optional[Sequence[int]] = None,
        early_stopping_rounds: Optional[int] = None,
        eval_names: Optional[Sequence[str]] = None,
        eval_X: Any = None,
        eval_y: Any = None,
        callbacks: Optional[Sequence[Any]] = None,
        **lightgbm_kwargs: Any,
    ) -> "SVMMap":
        # Inside a scikit-learn search without metadata routing, qid reaches fit but not score:
        # stop before training rather than let every split score NaN.
        refuse_group_in_search(f"{type(self).__name__}.fit", group)
        refuse_unrouted_search(f"{type(self).__name__}.fit", qid_given=qid is not None)
        # The one orchestrator with the in-memory solve, which ``svmmap learn`` runs too.
        run_fit(self, FitRequest.of(locals()), InMemory(), stacklevel=2)
        return self

    fit.__doc__ = fit_doc("Learn ``coef_`` from documents grouped by query.", "self : SVMMap")

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call fit(X, y, qid=...) first"
            )

    def predict(self, X: Any, **lightgbm_kwargs: Any) -> np.ndarray:
        """Score every document; sorting a query's documents by score gives its ranking.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
        **lightgbm_kwargs
            LightGBM's ``predict`` arguments are accepted when they ask for what this predict
            does: their defaults, ``raw_score=True`` (a ranker's scores are raw),
            ``validate_features=True`` (a DataFrame's columns are always checked) and
            ``num_iteration`` naming the round ``coef_`` is (``best_iteration_`` after early
            stopping; without it, a value <= 0 or at least ``n_iter_``, LightGBM's "every
            round"); other values are refused with svmmap's way.

        Returns
        -------
        scores : ndarray of shape (n_documents,), float64, in the row order of ``X``.
        """
        refuse_lightgbm_predict(type(self).__name__, lightgbm_kwargs, self)
        self._check_fitted()
        check_feature_names(self, X)
        core_X, _, n_features = check_matrix(X)
        if n_features != self.n_features_in_:
            raise ValueError(
                f"X has {n_features} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input (it was fitted with {self.n_features_in_})"
            )
        return _core.predict(core_X, self.coef_, n_threads(self.n_jobs))

    def score(self, X: Any, y: Any, qid: Any = None, sample_weight: Any = None, *, group: Any = None) -> float:
        """Mean average precision of the predicted ranking (see ``svmmap.metrics``).

        Queries without a relevant document are skipped; ties in score are broken
        pessimistically. With ``sample_weight`` (per document, the same on every document of a
        query, as in ``fit``), the mean over queries is weighted by the queries' weights. The
        queries are ``qid`` or, as in ``fit``, LightGBM's ``group`` (query sizes in row order).
        """
        if qid is None and group is None:
            check_qid(None, 0, required_by=f"{type(self).__name__}.score")
        scores = self.predict(X)
        qid = qid_of(qid, group, scores.shape[0])
        return query_mean("map", y, scores, qid, sample_weight, self.relevance_threshold)

    def save(self, path: Any) -> None:
        """Write the fitted model as versioned JSON, atomically.

        The format is described in ``docs/model-format.md``; read the file back with
        ``svmmap.load_model``. ``svmmap classify`` reads it too.
        """
        write_model(path, svm_document(self))

    def get_metadata_routing(self) -> Any:
        """scikit-learn's metadata routing of this estimator (``set_fit_request`` ...). A search
        or cross-validation asks for it before its first fit, so a request of LightGBM's
        ``group`` there is refused now, naming ``qid``, rather than failing every split's
        fit under scikit-learn's "All the N fits failed"."""
        routing = super().get_metadata_routing()
        refuse_group_request_in_search(routing, type(self).__name__)
        return routing

    def __getattr__(self, name: str) -> Any:
        # Called only for attributes that are not there: LightGBM's fitted attributes that a
        # linear model does not have (booster_ ...) say what it has instead; hasattr stays False.
        if name in LIGHTGBM_ATTRIBUTES:
            raise AttributeError(
                f"{type(self).__name__} has no LightGBM attribute {name!r}: {LIGHTGBM_ATTRIBUTES[name]}"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __sklearn_tags__(self) -> Any:
        # scikit-learn >= 1.6 reads tags from here: labels are required, sparse input is fine.
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True
        return tags

    def _more_tags(self) -> dict:
        # The same tags for scikit-learn < 1.6.
        return {"requires_y": True}
