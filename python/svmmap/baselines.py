"""The baselines of the papers, as estimators and transformers with svmmap's conventions.

- ``SVMAcc`` (and ``SVMAcc2``): SVM_acc and SVM_acc2 of Yue et al. (2007, section 5.2), a linear SVM classifier
  on the documents with a bias, trained by svmmap's own engine (the structural SVM with the
  per-document loss "acc" or "acc2" on the whole training set as one query).
- ``QueryPercentileTransformer`` and ``QueryMinMaxScaler``: the per-query score normalizations
  of SVM_acc3 (percentiles) and SVM_acc4 (min-max).
- ``AdaRank``: Xu & Li (2007) with single features as weak rankers and MAP or NDCG as the
  measure, as Meng et al. (2009) use it; Meng et al.'s modified updates are an option.
- ``DORM``: Le & Smola's permutation feature map, loss-augmented inference as an assignment
  problem (Chakrabarti et al. 2008, sections 3.1.3 and 3.5), trained by svmmap's engine.

Every estimator has ``fit(X, y, qid=...)`` and ``predict(X)`` (one score per document) like
``SVMMap``; ``score`` is MAP.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError

from . import _core
from ._fit.convergence import intercept_named
from ._fit.defaults import TRAINING_DEFAULTS
from ._fit.linear_scorer import _copy_fit, _LinearScorer
from ._validation import (
    check_bool,
    check_labels,
    check_matrix,
    check_memory,
    check_qid,
    dense_numbers,
    densified,
    forget_fit,
    invalid_parameter,
    minmax_scaled,
)
from .estimator import SVMMap
from .metrics import check_metric_names, per_query

#: Bytes a NumPy array object takes besides its data (the header of one coef copy in AdaRank's
#: path, about 112 bytes on 64-bit CPython, rounded up).
_ARRAY_OVERHEAD = 128

__all__ = ["SVMAcc", "SVMAcc2", "QueryPercentileTransformer", "QueryMinMaxScaler", "AdaRank", "DORM"]


class SVMAcc(_LinearScorer):
    """SVM_acc / SVM_acc2: a linear SVM that classifies documents as relevant or not.

    Solves, over all training documents i = 1..m (queries are ignored, as in Yue et al.),

        min_{w,b} 1/2 (||w||^2 + b^2) + C/m sum_i cost_i max(0, 1 - y_i (w.x_i + b)),

    with y_i = +1 for relevant documents (label > ``relevance_threshold``) and -1 otherwise,
    cost_i = 1, or with ``balanced=True`` (SVM_acc2) cost_i = #non-relevant / #relevant for the
    relevant documents, the cost ratio of Yue et al.'s SVM_acc2 (SVM^light's ``-j``). The bias is
    a constant feature of value ``intercept_scaling`` and is regularized like the weights, as in
    liblinear (scikit-learn's ``LinearSVC(loss="hinge")`` with ``C = C/m`` solves the same
    problem). The solver is svmmap's 1-slack cutting-plane engine with the loss "acc"/"acc2".

    Parameters
    ----------
    C : float, default=1.0
        Trade-off; the hinge is averaged over documents, so C means what it means in SVM^perf.
    balanced : bool, default=False
        SVM_acc2's cost ratio.
    intercept_scaling : float, default=1.0
        Value of the constant feature that carries the bias.
    eps, max_iter, relevance_threshold, n_jobs, verbose, callback
        As in ``SVMMap``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    objective_, dual_objective_, gap_, n_iter_, n_cuts_, converged_, history_
        As in ``SVMMap`` (the objective includes b^2 / (2 intercept_scaling^2)).

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap.baselines import SVMAcc
    >>> # One relevant document at x = 1 and three non-relevant ones at x = -1. With every hinge
    >>> # active, the objective is (w^2 + b^2) / 2 + C (1 - w) + C b / 2, which gives w = C and
    >>> # b = -C / 2.
    >>> X = np.array([[1.0], [-1.0], [-1.0], [-1.0]])
    >>> model = SVMAcc(C=0.5).fit(X, [1, 0, 0, 0])
    >>> round(float(model.coef_[0]), 4), round(model.intercept_, 4)
    (0.5, -0.25)
    """

    def __init__(
        self,
        C: float = TRAINING_DEFAULTS["C"],
        balanced: bool = False,
        intercept_scaling: float = 1.0,
        eps: float = TRAINING_DEFAULTS["eps"],
        max_iter: int = TRAINING_DEFAULTS["max_iter"],
        relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
        n_jobs: Optional[int] = TRAINING_DEFAULTS["n_jobs"],
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.C = C
        self.balanced = balanced
        self.intercept_scaling = intercept_scaling
        self.eps = eps
        self.max_iter = max_iter
        self.relevance_threshold = relevance_threshold
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def fit(self, X: Any, y: Any, qid: Any = None) -> "SVMAcc":
        """Fit the classifier. ``qid`` is accepted for a uniform API and not used (but checked).

        Returns
        -------
        self : SVMAcc
        """
        forget_fit(self)
        scaling = self.intercept_scaling
        if (
            isinstance(scaling, bool)
            or not isinstance(scaling, numbers.Real)
            or not (np.isfinite(scaling) and scaling > 0)
        ):
            # An infinite scaling is an infinite constant column, which the core reported as
            # "X[0, d] is inf" for a column X does not have.
            raise invalid_parameter("intercept_scaling", "a finite number > 0", scaling)
        check_bool(self.balanced, "balanced")
        # The training parameters are checked by the core's one rule before the data is asked
        # whether it has relevant documents: that question, asked with relevance_threshold=nan,
        # blamed the data ("label > nan; got 0 relevant").
        _core.TrainConfig(
            C=self.C,
            eps=self.eps,
            max_iter=self.max_iter,
            relevance_threshold=self.relevance_threshold,
            n_jobs=self.n_jobs,
        )
        _, n_rows, n_features = check_matrix(X)
        labels = check_labels(y, n_rows)
        if qid is not None:
            # Unused, yet checked as Binner checks it: a qid of another length is a mistake.
            check_qid(qid, n_rows, required_by=type(self).__name__)
        # All documents form one query, which trains only with a relevant and a non-relevant
        # document: the core's rule, asked of the core.
        one_query = np.zeros(n_rows, dtype=np.int64)
        problem = _core.problem_summary(labels, one_query, 1, self.relevance_threshold)
        if problem.used == 0:
            n_relevant = 0 if problem.no_relevant else n_rows
            raise ValueError(
                f"SVMAcc needs relevant and non-relevant documents (label > {self.relevance_threshold}); "
                f"got {n_relevant} relevant of {n_rows}"
            )
        if sp.issparse(X):
            augmented = sp.hstack([sp.csr_matrix(X), sp.csr_matrix(np.full((n_rows, 1), float(scaling)))], format="csr")
        else:
            # The shared reading of a dense X (a nullable column's NA is NaN, which the fit
            # names): np.asarray raised float()'s TypeError on pandas' NA.
            dense = dense_numbers(X).astype(np.float64, copy=False)
            augmented = np.hstack([dense, np.full((n_rows, 1), float(scaling))])
        model = SVMMap(
            C=self.C,
            loss="acc2" if self.balanced else "acc",
            eps=self.eps,
            max_iter=self.max_iter,
            relevance_threshold=self.relevance_threshold,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            callback=self.callback,
        )
        # All documents form one "query": the loss is a mean over documents.
        largest = float(abs(augmented[:, :-1]).max()) if n_features else 0.0
        with intercept_named(float(scaling), largest):
            model.fit(augmented, labels, qid=one_query)
        self.coef_ = model.coef_[:-1].copy()
        self.intercept_ = float(model.coef_[-1] * scaling)
        self.n_features_in_ = n_features
        _copy_fit(self, model)
        return self


class SVMAcc2(SVMAcc):
    """SVM_acc2: ``SVMAcc`` with ``balanced=True`` by default (relevant documents weighted by the
    number of non-relevant ones over the number of relevant ones), for tools that build
    estimators from a class and C alone, e.g. ``svmmap protocol --methods map,SVM-acc2=svmmap.baselines:SVMAcc2``.

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap.baselines import SVMAcc2
    >>> # The data of the SVMAcc example. The relevant document now costs 3 (three non-relevant
    >>> # documents per relevant one), so the objective is (w^2 + b^2) / 2 + 3 C (1 - w) / 2, which
    >>> # gives w = 3 C / 2 and b = 0.
    >>> X = np.array([[1.0], [-1.0], [-1.0], [-1.0]])
    >>> model = SVMAcc2(C=0.5).fit(X, [1, 0, 0, 0])
    >>> round(float(model.coef_[0]), 4), round(model.intercept_, 4)
    (0.75, 0.0)
    """

    def __init__(
        self,
        C: float = TRAINING_DEFAULTS["C"],
        balanced: bool = True,
        intercept_scaling: float = 1.0,
        eps: float = TRAINING_DEFAULTS["eps"],
        max_iter: int = TRAINING_DEFAULTS["max_iter"],
        relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
        n_jobs: Optional[int] = TRAINING_DEFAULTS["n_jobs"],
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        super().__init__(
            C=C,
            balanced=balanced,
            intercept_scaling=intercept_scaling,
            eps=eps,
            max_iter=max_iter,
            relevance_threshold=relevance_threshold,
            n_jobs=n_jobs,
            verbose=verbose,
            callback=callback,
        )


class _QueryTransformer(TransformerMixin, BaseEstimator):
    """Per-query, per-feature transforms: stateless, but ``transform`` needs ``qid``."""

    def fit(self, X: Any, y: Any = None, qid: Any = None) -> "_QueryTransformer":
        """Record the number of features (nothing is learned: the transform is per query)."""
        forget_fit(self)
        X = self._dense(X)
        self.n_features_in_ = X.shape[1]
        return self

    def fit_transform(self, X: Any, y: Any = None, qid: Any = None) -> np.ndarray:
        return self.fit(X, y, qid=qid).transform(X, qid=qid)

    @staticmethod
    def _dense(X: Any) -> np.ndarray:
        # The shared checks of X, as AdaRank's: check_matrix (shape and type: strings were
        # parsed as numbers here, which SVMMap refuses), then the core's finite check, which
        # names the entry ("X[3, 0] is NaN"; this said "X contains NaN or infinite values"),
        # and a sparse X made dense only once the memory guard allows it.
        core_X, _, d = check_matrix(X)
        _core.predict(core_X, np.zeros(d), 1)
        arr = (
            densified(X, "X", "the per-query scalers work on dense columns: keep only the columns used")
            if sp.issparse(X)
            else np.asarray(X, dtype=np.float64)
        )
        return np.asarray(arr, dtype=np.float64)

    def transform(self, X: Any, qid: Any = None) -> np.ndarray:
        """Transform every feature within every query.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
        qid : array-like of shape (n_documents,)
            Required: the transform is computed per query.

        Returns
        -------
        X_new : ndarray of shape (n_documents, n_features), float64
        """
        if not hasattr(self, "n_features_in_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet")
        X = self._dense(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} was fitted with {self.n_features_in_}"
            )
        codes, uniques = check_qid(qid, X.shape[0], required_by=f"{type(self).__name__}.transform")
        out = np.empty_like(X)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
        for q in range(len(uniques)):
            rows = order[bounds[q] : bounds[q + 1]]
            out[rows] = self._transform_query(X[rows])
        return out

    def _transform_query(self, block: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class QueryPercentileTransformer(_QueryTransformer):
    """SVM_acc3's normalization: each feature value becomes its percentile within its query.

    The value v of a document becomes the fraction of the query's documents whose value is at
    most v (``scipy.stats.percentileofscore(..., kind="weak") / 100``): the top document gets 1,
    and a document "in the top 90%" of the scores gets 0.9 as in Yue et al. (2007, 5.2.1).
    Equal values get the same percentile.

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap.baselines import QueryPercentileTransformer
    >>> # In query 1, one of the three values is at most 10, two are at most 20 and all three are at
    >>> # most 30. The two equal values of query 2 share the top percentile.
    >>> X = np.array([[10.0], [20.0], [30.0], [5.0], [5.0]])
    >>> QueryPercentileTransformer().fit_transform(X, qid=[1, 1, 1, 2, 2]).ravel().round(4).tolist()
    [0.3333, 0.6667, 1.0, 1.0, 1.0]
    """

    def _transform_query(self, block: np.ndarray) -> np.ndarray:
        n = block.shape[0]
        ordered = np.sort(block, axis=0)
        out = np.empty_like(block)
        for f in range(block.shape[1]):
            out[:, f] = np.searchsorted(ordered[:, f], block[:, f], side="right") / n
        return out


class QueryMinMaxScaler(_QueryTransformer):
    """SVM_acc4's normalization: (v - min) / (max - min) of each feature within each query.

    A feature that is constant within a query becomes 0 there (it cannot rank that query).

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap.baselines import QueryMinMaxScaler
    >>> # Query 1's values span 10 to 30, so 20 is halfway. The feature is constant in query 2.
    >>> X = np.array([[10.0], [20.0], [30.0], [5.0], [5.0]])
    >>> QueryMinMaxScaler().fit_transform(X, qid=[1, 1, 1, 2, 2]).ravel().tolist()
    [0.0, 0.5, 1.0, 0.0, 0.0]
    """

    def _transform_query(self, block: np.ndarray) -> np.ndarray:
        low, high = block.min(axis=0), block.max(axis=0)
        # minmax_scaled: values spanning more than float64's range would overflow high - low.
        return np.where(high > low, minmax_scaled(block, low, high), 0.0)


class AdaRank(_LinearScorer):
    """AdaRank (Xu & Li 2007): boosting with single features as weak rankers.

    With m training queries and a measure E in [0, 1] per query (MAP or NDCG), AdaRank keeps a
    distribution P over queries (uniform at first) and, in every round t:

    1. picks the feature k whose ranking has the best weighted measure sum_i P(i) E_i(k);
    2. weighs it by alpha = 1/2 ln( sum_i P(i) (1 + E_i(k)) / sum_i P(i) (1 - E_i(k)) );
    3. adds alpha to the feature's weight, f = sum_t alpha_t x_{k_t};
    4. sets P(i) proportional to exp(-E_i(f)), so that queries f ranks badly get more weight.

    Left alone, step 1 tends to pick the same feature round after round: once f is a multiple
    of one feature, adding it again leaves the ranking, hence P, unchanged, a fixed point. So by
    default (``repeat=False``) the feature chosen in the previous round is not a candidate in
    the next one (as common AdaRank implementations do); ``repeat=True`` is the plain rule.

    ``variant="meng"`` uses the updates as printed by Meng et al. (2009, Algorithm 1):
    alpha = 1/2 sum_i P(i) (1 + E_i(k)) and P_{t+1}(i) proportional to P_t(i) exp(-E_i(f)).
    Queries on which the measure is undefined (no relevant document) are left out. E is
    computed by ``svmmap.metrics`` (graded gains for NDCG, pessimistic ties).

    Parameters
    ----------
    measure : str, default="map"
        "map", "ndcg@k" or any ``svmmap.metrics`` name.
    n_estimators : int, default=100
        Rounds T. ``coef_path_`` keeps the weights after every round, so a validation set can
        choose T without refitting.
    variant : {"xu-li", "meng"}, default="xu-li"
    repeat : bool, default=False
        Whether the feature of the previous round may be chosen again at once.
    relevance_threshold : float, default=0.0

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    coef_path_ : ndarray of shape (n_rounds, n_features)
    features_ : list of int
        The feature chosen in every round.
    train_measure_ : list of float
        Mean training measure of f after every round.
    n_iter_ : int
        Rounds run (fewer than ``n_estimators`` when a weak ranker is perfect on every query).

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap.baselines import AdaRank
    >>> # Feature 1 ranks the relevant document first in both queries, feature 0 only in query 2.
    >>> X, y, qid = np.array([[0.0, 2.0], [1.0, 1.0], [1.0, 3.0], [0.0, 0.0]]), [1, 0, 1, 0], [1, 1, 2, 2]
    >>> model = AdaRank().fit(X, y, qid=qid)
    >>> # A weak ranker with AP 1 on every query gets an unbounded alpha: boosting stops at once.
    >>> model.features_, model.n_iter_, model.score(X, y, qid=qid)
    ([1], 1, 1.0)
    """

    def __init__(
        self,
        measure: str = "map",
        n_estimators: int = 100,
        variant: str = "xu-li",
        repeat: bool = False,
        relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
    ) -> None:
        self.measure = measure
        self.n_estimators = n_estimators
        self.variant = variant
        self.repeat = repeat
        self.relevance_threshold = relevance_threshold

    def fit(self, X: Any, y: Any, qid: Any = None) -> "AdaRank":
        """Run the boosting rounds.

        Returns
        -------
        self : AdaRank
        """
        forget_fit(self)
        if self.variant not in ("xu-li", "meng"):
            raise invalid_parameter("variant", '"xu-li" or "meng"', self.variant)
        check_bool(self.repeat, "repeat")
        check_metric_names([self.measure], "measure")
        T = self.n_estimators
        if isinstance(T, bool) or not isinstance(T, numbers.Integral) or T < 1:
            raise invalid_parameter("n_estimators", "an integer >= 1", T)
        core_X, _, d = check_matrix(X)
        # coef_path_ keeps one copy of coef per round (then stacks them into one array): with no
        # bound on n_estimators, 10**12 rounds grew the path until the process was killed. The
        # core's memory guard refuses a path that cannot fit before the first round.
        check_memory(
            float(T) * (2 * 8 * d + _ARRAY_OVERHEAD),
            f"AdaRank's coef_path_ of n_estimators={T} rounds x {d} features (float64)",
            "lower n_estimators",
        )
        # The core's one check of the values (X[i, j] named, as SVMMap names it): a NaN or inf
        # feature otherwise surfaced as "y_score[2] is NaN" from the measure of that feature.
        _core.predict(core_X, np.zeros(d), 1)
        X = (
            densified(X, "X", "AdaRank measures each feature as a dense column: keep only the columns used")
            if sp.issparse(X)
            else np.asarray(X, dtype=np.float64)
        )
        labels = check_labels(y, X.shape[0])
        check_qid(qid, X.shape[0], required_by="AdaRank")
        d = X.shape[1]

        def measure(scores: np.ndarray) -> tuple:
            pq = per_query(self.measure, labels, scores, qid, relevance_threshold=self.relevance_threshold)
            return pq.qids, pq.values

        qids, _ = measure(np.zeros(X.shape[0]))
        if qids.size == 0:
            raise ValueError(f"no training query has a relevant document (label > {self.relevance_threshold})")
        # E[k, i]: the measure of query i ranked by feature k alone. Fixed for the whole run.
        E = np.vstack([measure(np.ascontiguousarray(X[:, k]))[1] for k in range(d)])
        m = E.shape[1]
        P = np.full(m, 1.0 / m)
        coef = np.zeros(d)
        path, chosen, train = [], [], []
        for _ in range(T):
            weighted = E @ P
            if chosen and not self.repeat and d > 1:
                weighted[chosen[-1]] = -np.inf
            k = int(np.argmax(weighted))
            e = E[k]
            up, down = float(P @ (1.0 + e)), float(P @ (1.0 - e))
            if self.variant == "meng":
                alpha = 0.5 * up
            elif down <= 0.0:
                # The weak ranker is perfect on every weighted query: alpha would be infinite.
                # A weight that dominates the others is its limit (ties of the feature are
                # still broken by the earlier rounds); stop there.
                alpha = 1e6 * (1.0 + float(np.abs(coef).sum()))
            else:
                alpha = 0.5 * math.log(up / down)
            coef[k] += alpha
            _, values = measure(X @ coef)
            path.append(coef.copy())
            chosen.append(k)
            train.append(float(values.mean()))
            if self.variant == "xu-li" and down <= 0.0:
                break
            weights = np.exp(-values)
            if self.variant == "meng":
                weights = P * weights
            P = weights / weights.sum()
        self.coef_ = coef
        self.intercept_ = 0.0
        self.coef_path_ = np.array(path)
        self.features_ = chosen
        self.train_measure_ = train
        self.n_iter_ = len(path)
        self.n_features_in_ = d
        return self


class DORM(_LinearScorer):
    """DORM: Le & Smola's permutation feature map, trained by svmmap's structural SVM engine.

    Feature map phi(x, y) = sum_i A(y(i)) x_i with A(r) = 1/sqrt(1 + r) for 0-based ranks
    r < ``depth`` and 0 beyond; loss 1 - NDCG@k (binary gains, 1/log2(1 + rank) discount);
    loss-augmented inference is an assignment of documents to the first max(k, depth) ranks,
    solved exactly by the Hungarian method in O(max(k, depth)^2 n) per query (O(n^3) with
    ``depth=None, k=None``). The target ranking is the best label-consistent one for the current
    scores, which makes the objective non-convex (see ``svmmap.losses`` and rust/oracle/dorm.rs):
    the result is a local solution, the cuts are not lower bounds, and ``dual_objective_`` may
    exceed ``objective_`` (a negative ``gap_``); training stops when the new cut is within eps
    of the working set, as for the other losses. Defaults follow Chakrabarti et al. (2008, section 4.4):
    NDCG@10 and A cut at rank 30.

    Parameters
    ----------
    C : float, default=1.0
    k : int or None, default=10
        NDCG cutoff (None: no cutoff).
    depth : int or None, default=30
        Rank from which A(r) = 0 (None: never).
    eps, max_iter, relevance_threshold, n_jobs, verbose, callback
        As in ``SVMMap``.

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap.baselines import DORM
    >>> from svmmap.metrics import ndcg
    >>> # Feature 0 ranks the relevant document first in both queries, feature 1 in neither.
    >>> X = np.array([[1.0, 0.3], [0.0, 0.9], [0.2, 0.1], [0.9, 0.5], [0.1, 0.6], [0.0, 0.2]])
    >>> y, qid = [1, 0, 0, 1, 0, 0], [1, 1, 1, 2, 2, 2]
    >>> model = DORM(C=10.0).fit(X, y, qid=qid)
    >>> model.loss_name(), bool(model.coef_[0] > model.coef_[1]), ndcg(y, model.predict(X), qid, k=10)
    ('dorm@10:depth=30', True, 1.0)
    """

    def __init__(
        self,
        C: float = TRAINING_DEFAULTS["C"],
        k: Optional[int] = 10,
        depth: Optional[int] = 30,
        eps: float = TRAINING_DEFAULTS["eps"],
        max_iter: int = TRAINING_DEFAULTS["max_iter"],
        relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
        n_jobs: Optional[int] = TRAINING_DEFAULTS["n_jobs"],
        verbose: int = 0,
        callback: Any = None,
    ) -> None:
        self.C = C
        self.k = k
        self.depth = depth
        self.eps = eps
        self.max_iter = max_iter
        self.relevance_threshold = relevance_threshold
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.callback = callback

    def loss_name(self) -> str:
        """The engine's loss name for these parameters, e.g. "dorm@10:depth=30"."""
        for name in ("k", "depth"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1):
                raise ValueError(f"{name} must be None or an integer >= 1, got {v!r}")
        name = "dorm" if self.k is None else f"dorm@{int(self.k)}"
        return name if self.depth is None else f"{name}:depth={int(self.depth)}"

    def fit(self, X: Any, y: Any, qid: Any = None) -> "DORM":
        """Train on documents grouped by query (see ``SVMMap.fit``).

        Returns
        -------
        self : DORM
        """
        forget_fit(self)
        model = SVMMap(
            C=self.C,
            loss=self.loss_name(),
            eps=self.eps,
            max_iter=self.max_iter,
            relevance_threshold=self.relevance_threshold,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            callback=self.callback,
        )
        model.fit(X, y, qid=qid)
        self.coef_ = model.coef_
        self.intercept_ = 0.0
        self.n_features_in_ = model.n_features_in_
        self.n_queries_ = model.n_queries_
        self.n_queries_skipped_ = model.n_queries_skipped_
        _copy_fit(self, model)
        return self
