"""Feature binning (Yue et al. 2007, section 4.2) and the piecewise-constant scores it yields.

Each base feature f (a retrieval function's score, say) gets a sorted set of thresholds K_f
fitted on training data, and is replaced by the indicators ``1[f > k]`` for k in K_f. A linear
model on the indicators scores a document by a sum over base features of piecewise-constant
functions of their values, which `piecewise_scores` returns for inspection or plotting
(Yue et al. Figure 2).

The threshold fitting and the transform run in the Rust core (``rust/binning/``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError

from . import _core
from ._binned import BinnedMatrix
from ._fit.binner_input import as_dense, check_unread, column_names, validation_set
from ._fit.defaults import BINNING_DEFAULTS
from ._fit.fitted import (
    BINNER_DICT_TYPE,
    BINNER_DICT_VERSION,
    BinningSpec,
    binning_from_dict,
    fit_pairs,
    validation_codes,
)
from ._fit.pairs import DEFAULT_PAIR_BINS as _PAIR_BINS
from ._fit.pairs import check_interactions
from ._fit.scaler import SCALER_TYPES, raw_thresholds, scaler_spec
from ._typing import BinStrategy, Missing
from ._validation import forget_fit, n_threads

__all__ = [
    "BINNER_DICT_TYPE",
    "BINNER_DICT_VERSION",
    "BinnedMatrix",
    "Binner",
    "StepFunction",
    "StepSurface",
    "piecewise_scores",
]


class Binner(TransformerMixin, BaseEstimator):
    """Thresholds per base feature and the indicator features ``1[f > k]`` (Yue et al. 4.2).

    ``fit`` places up to ``n_thresholds`` thresholds per column of ``X`` where the column's
    training values vary. The indicators are in feature-major order: those of feature 0
    (thresholds increasing), then its missing-value indicator if ``missing="indicator"``, then
    those of feature 1, ... ``transform`` returns them as a `BinnedMatrix` of bin codes
    (``output="codes"``, the default) or as a scipy.sparse CSR matrix of float64 ones
    (``output="indicators"``).

    Thresholds lie in the gaps between distinct training values (the midpoint of two
    neighbouring values), so no training value sits on a threshold.

    Parameters
    ----------
    n_thresholds : int, default=50
        Maximum number of thresholds per base feature (Yue et al. use 50). A feature with
        fewer distinct training values gets one threshold per gap between them (which keeps
        all its ordering information); a constant feature gets none.
    strategy : {"quantile", "uniform"}, default="quantile"
        ``"quantile"``: equal-frequency bins over the training values; a run of equal values
        (such as many zero scores) forms one bin, and the thresholds concentrate where
        documents are dense. ``"uniform"``: evenly spaced thresholds strictly between the
        smallest and the largest training value.
    missing : {"error", "indicator"}, default="error"
        What NaN means. ``"error"`` rejects it. ``"indicator"`` treats NaN as a missing value:
        it sets none of its feature's threshold indicators and sets one extra indicator per
        base feature instead, so a linear model learns a score of its own for "missing" (used
        for documents that a retrieval run did not return). NaN values are ignored when fitting.
    output : {"codes", "indicators"}, default="codes"
        What ``transform`` returns. ``"codes"``: a `BinnedMatrix`, one uint8 (uint16
        beyond 255 codes per feature) code per value, which `SVMMap` trains on and
        predicts from directly, giving the same model as the indicators. It is the default
        because the indicator matrix of a large data set does not fit in memory (50 thresholds
        on 136 features make about 25 times the bytes of the float64 features) and the codes
        make training an order of magnitude faster; ``Pipeline(Binner(), SVMMap())`` uses
        them. ``"indicators"``: the CSR matrix, for other estimators (a BinnedMatrix can also
        be turned into it with ``to_csr()``).
    n_jobs : int or None, default=None
        Threads for fitting and transforming (None: all cores). The result does not depend on it.
    interactions : None, int or list of (int, int), default=None
        Pairwise interactions (a GA2M): each pair (i, j) adds a grid of cell indicators
        ``1[x_i > s and x_j > t]`` on coarse thresholds s of feature i and t of feature j, so
        that a linear model scores a sum of per-feature step functions and per-pair step
        surfaces (`piecewise_scores`). An int k chooses up to k pairs by FAST (Lou et al., KDD
        2013; ``fit`` then needs ``y`` and should get ``qid``), judged out of sample: the
        queries are cut in two halves, each half puts forward the pairs whose 2-D cell means
        best fit the per-query residual of its additive model of the labels, and a pair is
        kept only when its cell means reduce that residual on the queries of the other half
        (in both directions, and over the queries by a t test), so that where no pair helps
        on queries that did not choose it none is kept; with ``fit(eval_set=...)`` all the
        training queries choose and the validation queries judge; see
        ``docs/guide/binning.md``. A list gives the pairs. None (the default): no pairs,
        and the binner is exactly as without this parameter.
    interaction_bins : int, default=32
        Coarse thresholds per feature of a pair (1 to 63): every few of the feature's
        thresholds, so a pair has up to ``interaction_bins ** 2`` cell indicators. A missing
        value in either feature sets none of the pair's cells (the pair scores 0). Above 14,
        a pair's codes need two bytes, and so do all the codes (uint16): 14 or fewer keeps
        one byte per code. The default was measured on planted interactions
        (``benchmarks/interactions.py``): test NDCG@10 0.9159 with 14, 0.9204 with 20 and
        0.9250 with 32 (``ndcg@10:graded``, C=1000). Pair selection scores pairs on a grid
        of at most 8 coarse thresholds per feature whatever this is.

    Attributes
    ----------
    thresholds_ : list of ndarray
        Per base feature, its sorted thresholds (float64, strictly increasing, possibly empty).
    n_features_in_ : int
        Number of base features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names of ``X`` in ``fit``, when it was a dataframe with string column names.
    n_output_features_ : int
        Number of indicator columns ``transform`` returns.
    interactions_ : list of (int, int)
        The pairs (empty without ``interactions``), in the order of their columns, which
        follow all the base features' columns.
    interaction_thresholds_ : list of (ndarray, ndarray)
        Every pair's coarse thresholds of its two features.
    interaction_scores_ : ndarray
        With ``interactions=k``, every chosen pair's reduction of the squared residual of
        the centred labels on the queries that did not choose it (summed over both halves;
        decreasing; inf when the labels' scale squared is beyond float64); NaN for pairs given
        by the user.

    See Also
    --------
    piecewise_scores : the learned score of each base feature as a step function.

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap import Binner
    >>> X = np.array([[0.0, 5.0], [1.0, 5.0], [3.0, 7.0]])
    >>> binner = Binner(n_thresholds=50).fit(X)
    >>> [k.tolist() for k in binner.thresholds_]  # midpoints of the gaps between values
    [[0.5, 2.0], [6.0]]
    >>> binner.transform(np.array([[2.5, 6.0]])).codes  # 2.5 > 0.5, 2.5 > 2, 6 > 6 is false
    array([[2, 0]], dtype=uint8)
    >>> binner.transform(np.array([[2.5, 6.0]])).toarray()  # the same as indicators
    array([[1., 1., 0.]])
    >>> binner.get_feature_names_out().tolist()
    ['x0>0.5', 'x0>2.0', 'x1>6.0']
    """

    # fit's qid and validation set are not requested by default under metadata routing, so that
    # pipelines that route them to the final step only work as before;
    # ``set_fit_request(qid=True)`` asks for qid (and likewise eval_set, eval_qid, eval_group).
    __metadata_request__fit = {"qid": False, "eval_set": False, "eval_group": False, "eval_qid": False}

    def __init__(
        self,
        n_thresholds: int = BINNING_DEFAULTS["n_thresholds"],
        strategy: BinStrategy = BINNING_DEFAULTS["strategy"],
        missing: Missing = BINNING_DEFAULTS["missing"],
        output: str = BINNING_DEFAULTS["output"],
        n_jobs: Optional[int] = None,
        interactions: Any = None,
        interaction_bins: int = _PAIR_BINS,
    ) -> None:
        self.n_thresholds = n_thresholds
        self.strategy = strategy
        self.missing = missing
        self.output = output
        self.n_jobs = n_jobs
        self.interactions = interactions
        self.interaction_bins = interaction_bins

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.missing == "indicator"
        tags.input_tags.sparse = True
        return tags

    def _check_params(self) -> _core.BinnerConfig:
        """The parameters as the core's configuration, which checks them (the one check)."""
        return _core.BinnerConfig(
            n_thresholds=self.n_thresholds, strategy=self.strategy, missing=self.missing, output=self.output
        )

    def fit(
        self,
        X: Any,
        y: Any = None,
        qid: Any = None,
        eval_set: Optional[List[Tuple[Any, Any]]] = None,
        eval_group: Optional[List[Any]] = None,
        eval_qid: Optional[List[Any]] = None,
    ) -> "Binner":
        """Fit the thresholds of every column of ``X`` (and choose the pairs).

        Parameters
        ----------
        X : array-like of shape (n_documents, n_base_features)
            Base feature values (scores of retrieval functions, ...). Sparse input is
            densified. NaN marks a missing value when ``missing="indicator"``.
        y : array-like of shape (n_documents,), optional
            Relevance labels: needed by ``interactions=k`` to choose the pairs, otherwise
            only checked (one finite number per row of ``X``) and not used (present so that
            the binner fits in a Pipeline).
        qid : array-like of shape (n_documents,), optional
            Query ids, read by ``interactions=k`` only: the labels are centred per query
            before pair selection (without qid, over all documents). Otherwise only checked
            (one id per row of ``X``). In a Pipeline, pass it
            as ``binner__qid=qid`` (or request it with ``set_fit_request(qid=True)``).
        eval_set : list of one (X, y) tuple, optional
            A validation set, read by ``interactions=k`` only and checked always (as
            ``SVMMap.fit``'s ``eval_set`` is written): the pairs are then put forward by all the training
            queries and a pair is kept only when it reduces the residual on the validation
            queries (by the same t test over queries), instead of each half of the training
            queries judging the other's. The thresholds are fitted on ``X`` alone; without
            ``interactions`` the set is checked and not read, with a UserWarning saying so.
        eval_group, eval_qid : list of one array-like, optional
            The queries of ``eval_set``, as ``SVMMap.fit`` takes them: query sizes in row
            order or one query id per row (one of the two, with ``eval_set``).

        Returns
        -------
        self : Binner
        """
        forget_fit(self)
        config = self._check_params()
        pairs_given = check_interactions(self.interactions, self.interaction_bins)
        names = column_names(X)
        arr = as_dense(X)
        # The one fitting routine, which ``svmmap learn --missing nan`` runs too (without
        # scikit-learn).
        spec = BinningSpec.fit(arr, config, self.get_params(), n_threads(self.n_jobs))
        validation = validation_set(eval_set, eval_group, eval_qid, arr.shape[1])
        if self.interactions is None or pairs_given is not None:
            if validation is not None:
                # Unused, yet checked as with interactions (a NaN passed here), before the
                # warning that it is unused.
                validation_codes(spec, validation[0], n_threads(self.n_jobs))
            # Unused without pair selection (no interactions, or pairs listed by hand), yet
            # given: checked, and a validation set warned of.
            check_unread(
                "Binner",
                y,
                qid,
                validation is not None,
                arr.shape[0],
                "only interactions=k reads it, to judge its pairs; without them the thresholds are fitted on X alone"
                if self.interactions is None
                else "interactions lists its pairs, so no labels or validation queries choose them",
            )
        scores = np.zeros(0)
        if self.interactions is not None:
            scores = fit_pairs(
                spec,
                arr,
                y,
                qid,
                self.interactions,
                pairs_given,
                self.interaction_bins,
                n_threads(self.n_jobs),
                validation=validation,
            )
        self.thresholds_ = spec.thresholds
        self.n_features_in_ = spec.n_features_in
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.n_output_features_ = spec.n_output
        self.interactions_ = list(spec.pairs or [])
        self.interaction_thresholds_ = list(spec.pair_thresholds or [])
        self.interaction_scores_ = scores
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "thresholds_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; call fit(X) first")

    def _spec(self, config: _core.BinnerConfig) -> BinningSpec:
        fitted = getattr(self, "feature_names_in_", None)
        names = None if fitted is None else [str(n) for n in fitted]
        pairs = getattr(self, "interactions_", None) or None
        grid = getattr(self, "interaction_thresholds_", None) or None
        return BinningSpec(config, self.get_params(), self.thresholds_, self.n_features_in_, names, pairs, grid)

    def transform(self, X: Any) -> Any:
        """The indicator features of ``X``, as bin codes or as a CSR matrix (``output``).

        Returns
        -------
        X_binned : BinnedMatrix or scipy.sparse.csr_matrix of shape (n_documents, n_output_features_)
            With ``output="codes"``, a BinnedMatrix (its ``to_csr()`` is the CSR matrix);
            with ``output="indicators"``, a float64 CSR matrix with feature-major columns whose
            stored values are all 1.
        """
        self._check_fitted()
        config = self._check_params()
        names = column_names(X)
        fitted_names = getattr(self, "feature_names_in_", None)
        if names is not None and fitted_names is not None and list(names) != list(fitted_names):
            raise ValueError(
                f"X has columns {list(names)}, but {type(self).__name__} was fitted with {list(fitted_names)}"
            )
        arr = as_dense(X)
        if arr.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {arr.shape[1]} features, but {type(self).__name__} is expecting {self.n_features_in_} features as input"
            )
        spec = self._spec(config)
        if config.output == "codes":
            return spec.binned(arr, n_threads(self.n_jobs))
        if spec.pairs:
            return spec.binned(arr, n_threads(self.n_jobs)).to_csr()
        data, indices, indptr, n_rows, n_cols = spec.indicators(arr, n_threads(self.n_jobs))
        return sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols))

    def _input_names(self, input_features: Any = None) -> List[str]:
        fitted = getattr(self, "feature_names_in_", None)
        if input_features is None:
            if fitted is not None:
                return [str(n) for n in fitted]
            return [f"x{j}" for j in range(self.n_features_in_)]
        names = [str(n) for n in input_features]
        if len(names) != self.n_features_in_:
            raise ValueError(f"input_features has {len(names)} names for {self.n_features_in_} features")
        if fitted is not None and names != [str(n) for n in fitted]:
            raise ValueError(f"input_features {names} differ from the fitted feature names {list(fitted)}")
        return names

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the indicator columns: ``"name>threshold"`` and ``"name=missing"``.

        Thresholds are written with Python's shortest round-trip representation, so the names
        are unique and give the exact thresholds back.
        """
        self._check_fitted()
        return self._spec(self._check_params()).get_feature_names_out(self._input_names(input_features))

    def to_dict(self) -> Dict[str, Any]:
        """Everything ``transform`` needs, as a JSON-serializable dict (see `from_dict`).

        The layout (version 1)::

            {"type": "svmmap.Binner", "version": 1,
             "params": {"n_thresholds": 50, "strategy": "quantile", "missing": "error"},
             "n_features_in": 15, "feature_names_in": null or [names],
             "thresholds": [[k_1, k_2, ...], ...],   # one sorted list per base feature
             "n_output_features": 750}

        Floats are Python floats, which ``json`` writes in their shortest round-trip form, so a
        JSON round trip gives the exact thresholds back. ``n_jobs`` is a runtime setting and
        is not stored.
        """
        self._check_fitted()
        # The parameters as the core's configuration checks them: a value set after fit that
        # the Binner refuses (n_thresholds=2.5) is refused here too, not rounded into the dict.
        return self._spec(self._check_params()).to_dict()

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Binner":
        """A fitted Binner from the dict of `to_dict` (after a JSON round trip, say).

        Raises
        ------
        ValueError
            When the dict is not a Binner's, is of a newer version, or is inconsistent.
        """
        return cls._from_spec(binning_from_dict(d))

    @classmethod
    def _from_spec(cls, spec: BinningSpec) -> "Binner":
        """A fitted Binner of checked thresholds (and pairs), from a dict or a model file."""
        binner = cls(**{k: v for k, v in spec.params.items() if k in cls._get_param_names()})
        binner.thresholds_ = spec.thresholds
        binner.n_features_in_ = spec.n_features_in
        if spec.feature_names_in is not None:
            binner.feature_names_in_ = np.asarray(spec.feature_names_in, dtype=object)
        binner.n_output_features_ = spec.n_output
        binner.interactions_ = list(spec.pairs or [])
        binner.interaction_thresholds_ = list(spec.pair_thresholds or [])
        binner.interaction_scores_ = np.full(len(binner.interactions_), np.nan)
        return binner


@dataclass
class StepFunction:
    """The learned score of one base feature: piecewise constant in its value.

    With thresholds ``k_1 < ... < k_T`` and weights ``w_1 ... w_T`` of their indicators, a value
    ``v`` scores ``sum(w_t for k_t < v)``: ``values[0]`` (= 0) for ``v <= k_1``, ``values[i]``
    for ``k_i < v <= k_{i+1}``, and ``values[T]`` for ``v > k_T``. ``missing`` is the score of
    a missing value (the weight of the missing indicator), or None without one.
    """

    feature: str
    thresholds: np.ndarray
    values: np.ndarray
    missing: Optional[float] = None

    def __call__(self, v: Any) -> np.ndarray:
        """Scores of the values ``v`` (NaN scores ``missing``)."""
        v = np.asarray(v, dtype=np.float64)
        out = self.values[np.searchsorted(self.thresholds, v, side="left")]
        nan = np.isnan(v)
        if np.any(nan):
            if self.missing is None:
                raise ValueError(f"{self.feature}: a NaN value has no score without a missing indicator")
            out = np.where(nan, self.missing, out)
        return out


@dataclass
class StepSurface:
    """The learned score of one pair of base features (a GA2M interaction): piecewise constant
    on the grid of their coarse thresholds.

    With coarse thresholds ``s_1 < ... < s_a`` of the first feature and ``t_1 < ... < t_b`` of
    the second, values ``(u, v)`` score ``values[ci, cj]`` where ``ci`` is the number of
    ``s_k < u`` and ``cj`` the number of ``t_k < v`` (``values[0, :]`` and ``values[:, 0]``
    are 0: the cells are the weights of ``1[u > s_k and v > t_l]`` summed over ``k <= ci``,
    ``l <= cj``). A missing value in either feature scores 0.
    """

    features: Tuple[str, str]
    index: Tuple[int, int]
    thresholds: Tuple[np.ndarray, np.ndarray]
    values: np.ndarray

    @property
    def feature(self) -> str:
        """The pair's name, ``"a&b"``."""
        return f"{self.features[0]}&{self.features[1]}"

    def __call__(self, u: Any, v: Any) -> np.ndarray:
        """Scores of the value pairs ``(u, v)`` (0 where either is NaN)."""
        u = np.asarray(u, dtype=np.float64)
        v = np.asarray(v, dtype=np.float64)
        ci = np.searchsorted(self.thresholds[0], u, side="left")
        cj = np.searchsorted(self.thresholds[1], v, side="left")
        out = self.values[np.minimum(ci, self.values.shape[0] - 1), np.minimum(cj, self.values.shape[1] - 1)]
        return np.where(np.isnan(u) | np.isnan(v), 0.0, out)


def _binner_and_coef(model: Any, coef: Any) -> tuple[Binner, np.ndarray, Any]:
    """(the Binner, the indicator weights, the checked scaler spec in front of the Binner or
    None) of ``piecewise_scores``' argument."""
    if isinstance(model, Binner):
        if coef is None:
            raise ValueError("piecewise_scores(binner, coef) needs the weights of the indicator features")
        return model, np.asarray(coef, dtype=np.float64).reshape(-1), None
    steps = getattr(model, "steps", None)
    if steps is None:
        raise TypeError(
            f"expected a fitted Binner (with coef) or a Pipeline whose last two steps are a Binner "
            f"and a linear model, got {type(model).__name__}"
        )
    named = [(n, s) for n, s in steps if s is not None and not (isinstance(s, str) and s == "passthrough")]
    active = [s for _, s in named]
    if len(active) < 2 or not isinstance(active[-2], Binner):
        raise ValueError(
            "the pipeline's last two steps must be a Binner and a linear model with coef_; got "
            + " -> ".join(type(s).__name__ for s in active)
        )
    binner, final = active[-2], active[-1]
    if coef is None:
        if not hasattr(final, "coef_"):
            raise NotFittedError(
                f"the pipeline's last step {type(final).__name__} has no coef_; fit the pipeline first"
            )
        coef = final.coef_
    return binner, np.asarray(coef, dtype=np.float64).reshape(-1), _scaler_in_front(named[:-2])


def _scaler_in_front(named: List[tuple]) -> Any:
    """The checked scaler spec of the steps before the Binner (one StandardScaler, MinMaxScaler
    or MaxAbsScaler, as in model files), or None without any. The step functions are over the
    pipeline's input features, so another step there, whose map cannot be inverted exactly,
    is refused rather than leaving the thresholds in units the user never sees."""
    if not named:
        return None
    from sklearn import preprocessing

    name, step = named[0]
    # The classes themselves, not subclasses, which may transform otherwise.
    scalers = tuple(getattr(preprocessing, kind.rsplit(".", 1)[1]) for kind in SCALER_TYPES)
    if len(named) == 1 and type(step) in scalers:
        try:
            return scaler_spec(step)
        except ValueError as exc:
            raise ValueError(
                f"step {name!r} ({type(step).__name__}) cannot be folded into the thresholds: {exc}. For the "
                f"scores over the Binner's own input, call piecewise_scores(binner, coef=model.coef_) with the "
                f"pipeline's Binner and final step."
            ) from None
    where = " -> ".join(f"{n!r} ({type(s).__name__})" for n, s in named)
    raise ValueError(
        f"piecewise_scores gives each feature's score over the pipeline's input, and the steps before "
        f"the Binner, {where}, cannot be inverted exactly (one StandardScaler, MinMaxScaler or "
        f"MaxAbsScaler can). For the scores over the Binner's own input, call "
        f"piecewise_scores(binner, coef=model.coef_) with the pipeline's Binner and final step."
    )


def piecewise_scores(model: Any, coef: Any = None) -> List[Union[StepFunction, StepSurface]]:
    """Each base feature's learned score as a step function (Yue et al. 2007, Figure 2).

    Parameters
    ----------
    model : Binner or Pipeline
        A fitted Binner (then give ``coef``), or a fitted Pipeline ending with a Binner and a
        linear model such as SVMMap (its ``coef_`` is used). A StandardScaler, MinMaxScaler
        or MaxAbsScaler before the Binner is folded into the thresholds, which are then over
        the pipeline's input features (exactly: a value is above a returned threshold when its
        scaled value is above the Binner's); other steps before the Binner are refused.
    coef : array-like of shape (n_output_features_,), optional
        Weights of the indicator features.

    Returns
    -------
    list of StepFunction, then StepSurface
        One StepFunction per base feature, in input order, then one StepSurface per pair of
        a Binner with ``interactions`` (in the order of ``interactions_``). The sum over base
        features of ``step(X[:, j])``, plus over pairs of ``surface(X[:, i], X[:, j])``,
        equals the linear model's score of ``binner.transform(X)`` (for a pipeline, its
        ``predict(X)`` up to the final step's intercept, 0 for SVMMap).

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap import Binner, piecewise_scores
    >>> binner = Binner().fit(np.array([[0.0], [1.0], [3.0]]))  # thresholds 0.5 and 2
    >>> (step,) = piecewise_scores(binner, coef=[0.25, -0.5])
    >>> step.thresholds.tolist(), step.values.tolist()
    ([0.5, 2.0], [0.0, 0.25, -0.25])
    >>> step(np.array([0.0, 1.0, 3.0])).tolist()
    [0.0, 0.25, -0.25]
    """
    binner, w, scaler = _binner_and_coef(model, coef)
    binner._check_fitted()
    if w.shape[0] != binner.n_output_features_:
        raise ValueError(
            f"coef has {w.shape[0]} weights but the binner makes {binner.n_output_features_} indicator features"
        )
    # With a scaler in front the functions are over the pipeline's input, whose names the
    # scaler has (a DataFrame's columns; the Binner then sees an unnamed array).
    names = binner._input_names()
    if scaler is not None and scaler.feature_names_in is not None:
        names = [str(n) for n in scaler.feature_names_in]
    with_missing = binner.missing == "indicator"
    out: List[Union[StepFunction, StepSurface]] = []
    at = 0
    for name, k in zip(names, binner.thresholds_):
        weights = w[at : at + len(k)]
        at += len(k)
        values = np.concatenate([[0.0], np.cumsum(weights)])
        missing = None
        if with_missing:
            missing = float(w[at])
            at += 1
        thresholds = np.asarray(k, dtype=np.float64).copy()
        if scaler is not None:
            # Over the raw feature: x is scaled above t exactly when x > T (the folding
            # svmmap.ir.export applies to exported thresholds).
            thresholds = np.asarray(raw_thresholds(scaler, len(out), thresholds), dtype=np.float64)
        out.append(StepFunction(name, thresholds, values, missing))
    for (i, j), (ki, kj) in zip(getattr(binner, "interactions_", []), getattr(binner, "interaction_thresholds_", [])):
        a, b = len(ki), len(kj)
        cells = np.zeros((a + 1, b + 1))
        # The 2-D prefix sums of the pair's cell weights (row s - 1, column t - 1 of the block).
        cells[1:, 1:] = w[at : at + a * b].reshape(a, b).cumsum(axis=1).cumsum(axis=0)
        at += a * b
        grid = [np.asarray(ki, dtype=np.float64).copy(), np.asarray(kj, dtype=np.float64).copy()]
        if scaler is not None:
            grid = [np.asarray(raw_thresholds(scaler, f, k), dtype=np.float64) for f, k in zip((i, j), grid)]
        out.append(StepSurface((names[i], names[j]), (int(i), int(j)), (grid[0], grid[1]), cells))
    return out
