"""svmmap.dask.SVMMap: the estimator, and its solve on the cluster (`_OnCluster`) that the one fit
orchestrator of ``svmmap.SVMMap.fit`` runs."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from .. import _core
from .._fit.convergence import overflow_named
from .._fit.lightgbm_args import refuse_lightgbm_predict
from .._fit.request import FitRequest, fit_doc
from .._fit.training import FITTED_ATTRIBUTES, Outcome, run_fit
from .._optional import load
from .._typing import IterationRecord
from .._validation import check_qid, require_2d
from ..estimator import SVMMap as _LocalSVMMap
from ._binning import BinnedPartitions
from ._collections import _check_whole_queries, _ClientMixin, _is_dask_array, _is_dask_frame
from ._parts import (
    _dask_sets,
    _merged_std,
    _part_cut_sums,
    _part_spread,
    _part_summary,
    _partitions,
    _predict_block,
    _predict_frame,
    _prepare,
    _qid_of_group,
    _Rounds,
)

__all__ = ["SVMMap"]


class SVMMap(_ClientMixin, _LocalSVMMap):
    """``svmmap.SVMMap`` trained on a Dask cluster; same parameters, same model.

    ``fit(X, y, qid=...)`` takes a dask array or dask DataFrame ``X`` whose partitions
    (row chunks) each hold whole queries, and ``y`` and ``qid`` partitioned alike (dask arrays or
    Series; numpy arrays are cut along ``X``'s row chunks). The loss-augmented argmax of every
    query and the cut sums are computed on the workers that hold the partitions; the client
    adds the partitions' sums in partition order and runs the cutting-plane loop and its QP.
    The model equals the one ``svmmap.SVMMap`` learns on the same data up to floating-point
    rounding in the order of the sums, with validation sets and early stopping too (Dask
    validation sets are scored on the workers).

    The Dask client is ``model.client`` if set, else ``distributed.default_client()``.
    ``n_jobs`` is the number of threads each worker uses (None: the worker's own thread count).
    After ``fit``, ``predict`` accepts dask arrays and DataFrames (lazily, one task per
    partition) as well as in-memory data, and ``to_local()`` returns a plain ``svmmap.SVMMap``.
    The parameters are those of ``svmmap.SVMMap``, with the same meanings.

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> from svmmap.datasets import load_mq2008
    >>> import svmmap.dask
    >>> X, y, qid = load_mq2008(fold=1, split="vali")
    >>> # Cut the rows at query boundaries into two partitions.
    >>> cut = int(np.flatnonzero(qid[1:] != qid[:-1])[len(set(qid)) // 2]) + 1
    >>> chunks = (cut, len(qid) - cut)
    >>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
    ...     dX = da.from_array(X, chunks=(chunks, X.shape[1]))
    ...     model = svmmap.dask.SVMMap(C=10.0).fit(dX, da.from_array(y, chunks=(chunks,)), qid=da.from_array(qid, chunks=(chunks,)))
    >>> local = svmmap.SVMMap(C=10.0).fit(X, y, qid=qid)
    >>> bool(np.allclose(model.coef_, local.coef_, rtol=0, atol=1e-8))
    True
    """

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
        # The one orchestrator of svmmap.SVMMap.fit, with the solve on the cluster plugged in.
        run_fit(self, FitRequest.of(locals()), _OnCluster(self), stacklevel=2)
        return self

    fit.__doc__ = fit_doc(
        "Learn ``coef_`` on the cluster from documents grouped by query.",
        "self : svmmap.dask.SVMMap",
        overrides={
            "X": (
                "dask.array.Array or dask.dataframe.DataFrame of shape (n_documents, n_features)",
                """Partitioned by rows so that each partition holds whole queries. A dask array's
                feature dimension may be chunked; it is joined into one chunk. Or the
                `BinnedPartitions` of such a collection (``svmmap.dask.Binner().fit(X)
                .transform(X)``): each partition is then binned on its worker and the model learns
                the binned features' weights, as ``Pipeline(Binner(), SVMMap())`` does in memory.""",
            ),
            "y": (
                "dask array or Series, or array-like, of shape (n_documents,)",
                """Relevance labels, partitioned like ``X`` (array-likes are cut along ``X``'s row
                chunks when ``X`` is a dask array).""",
            ),
            "qid": (
                "dask array or Series, or array-like, of shape (n_documents,)",
                "Query id of every document, partitioned like ``X``.",
            ),
            "group": (
                "array-like of int, optional",
                """Instead of ``qid``, LightGBM's query sizes in row order (as in
                ``svmmap.SVMMap.fit``), for a dask array ``X``: the query ids they make are cut along
                ``X``'s row chunks, each of which must hold whole queries. A dask DataFrame carries
                its query ids as a column: give that column as ``qid``.""",
            ),
            "sample_weight": (
                "None",
                """Not available here (the partitions' cut sums are unweighted): a TypeError says so.
                Weighted queries train with ``svmmap.SVMMap.fit(..., sample_weight=...)`` in memory.""",
            ),
            "eval_set": (
                "list of (X, y) tuples, optional",
                """Validation sets scored at every round, as in ``svmmap.SVMMap.fit``. A set in memory
                is scored on the client; a set whose ``X`` is a Dask collection (or its
                `BinnedPartitions`) is prepared once on the workers, each partition holding whole
                queries, and scored there every round: per partition, ``w`` goes out and one number
                per query and metric comes back, and the client averages them as
                ``svmmap.metrics.evaluate`` does. Its ``y`` and ``eval_qid`` entry are partitioned
                like its ``X``, as ``y`` and ``qid`` are like ``X``.""",
            ),
            "eval_group": (
                "list of array-like of int, optional",
                """The query sizes of every validation set, for sets in memory only (a Dask set takes
                ``eval_qid``).""",
            ),
            "eval_qid": (
                "list of array-like or dask collections, optional",
                "The query ids of every validation set, as ``qid``.",
            ),
        },
    )

    def predict(self, X: Any, **lightgbm_kwargs: Any) -> Any:
        """Scores: a dask array (for a dask array ``X``, or a `BinnedPartitions` of one), a
        dask Series named "score" (for a dask DataFrame, or a `BinnedPartitions` of one)
        or a numpy array (for data in memory), in the row order of ``X``. LightGBM's
        ``predict`` arguments (``num_iteration`` ...) are refused as by ``svmmap.SVMMap``."""
        refuse_lightgbm_predict(f"svmmap.dask.{type(self).__name__}", lightgbm_kwargs, self)
        self._check_fitted()
        coef = self.coef_
        binner = None
        if isinstance(X, BinnedPartitions):
            binner = X.binner
            if binner.n_output_features_ != self.n_features_in_:
                raise ValueError(
                    f"X is binned into {binner.n_output_features_} features, but {type(self).__name__} "
                    f"was fitted with {self.n_features_in_} features"
                )
            X = X.source
        n_columns = self.n_features_in_ if binner is None else binner.n_features_in_
        if _is_dask_array(X):
            require_2d(X.ndim, "X")  # the words of svmmap.SVMMap.predict
            if X.shape[1] != n_columns:
                raise ValueError(
                    f"X has shape {X.shape}, but {type(self).__name__} was fitted with {n_columns} features"
                )
            if X.numblocks[1] > 1:
                X = X.rechunk({1: -1})
            return X.map_blocks(_predict_block, coef, self.n_jobs, binner, drop_axis=1, dtype=np.float64)
        if _is_dask_frame(X):
            from .._validation import check_feature_names

            if binner is None:
                check_feature_names(self, X)
            return X.map_partitions(_predict_frame, coef, self.n_jobs, binner, meta=("score", "f8"))
        return super().predict(X)

    def score(self, X: Any, y: Any, qid: Any = None, sample_weight: Any = None, *, group: Any = None) -> float:
        """Mean average precision of the predicted ranking (computed on the client), weighted
        by the queries' ``sample_weight`` when given; the queries are ``qid`` or LightGBM's
        ``group`` (as ``svmmap.SVMMap.score``)."""
        dask = load("dask", "svmmap.dask")
        from .._validation import qid_of
        from ..estimator import query_mean

        if qid is None and group is None:
            check_qid(None, 0, required_by=f"{type(self).__name__}.score")
        scores, y, qid, sample_weight, group = dask.compute(self.predict(X), y, qid, sample_weight, group)
        scores = np.asarray(scores)
        qid = qid_of(None if qid is None else np.asarray(qid), group, scores.shape[0])
        return query_mean(
            "map",
            np.asarray(y),
            scores,
            np.asarray(qid),
            None if sample_weight is None else np.asarray(sample_weight),
            self.relevance_threshold,
        )

    def to_local(self) -> _LocalSVMMap:
        """A plain ``svmmap.SVMMap`` with the same parameters and fitted attributes."""
        self._check_fitted()
        local = _LocalSVMMap(**self.get_params(deep=False))
        for name in FITTED_ATTRIBUTES:
            if name in self.__dict__:
                setattr(local, name, self.__dict__[name])
        return local


class _OnCluster:
    """The `Solve` of ``svmmap.dask.SVMMap.fit``: each partition is prepared once on the worker
    that holds it (its values checked, its query groups, oracles and counts); every round, the
    workers compute their partitions' cut sums at ``w`` and the client adds them in partition
    order and solves the working-set QP (the core's cutting-plane loop, ``_core.solve``)."""

    def __init__(self, model: "SVMMap") -> None:
        self.model = model
        self.parts: list = []
        #: The futures of the validation sets' partitions, when some are Dask collections.
        self.eval_parts: list = []

    def name(self, model: Any) -> str:
        return f"svmmap.dask.{type(model).__name__}"

    def check(self, model: Any, config: "_core.TrainConfig", request: FitRequest) -> None:
        if request.sample_weight is not None:
            raise TypeError(
                f"svmmap.dask.{type(model).__name__}.fit() does not take sample_weight: the partitions' cut sums "
                "are unweighted; train svmmap.SVMMap(...).fit(X, y, qid=qid, sample_weight=w) on data in memory"
            )
        #: The query ids: ``qid``, or those LightGBM's ``group`` makes for a dask array.
        self.qid = _qid_of_group(request.X, request.qid, request.group)
        if config.latent is not None:
            raise ValueError(
                f"loss={model.loss!r} is not supported by svmmap.dask.SVMMap (its CCCP rounds run on one "
                f"machine); train svmmap.SVMMap(loss={model.loss!r}) on a sample that fits in memory, or "
                f"loss={config.latent!r} (the paper's loss) here"
            )
        # The partitions' sums make one cut per slack group: blocks of queries would need every
        # partition to split its sums by global block.
        config.require_one_cut(
            "by svmmap.dask.SVMMap, which makes one cut per slack group and iteration", "None (or 1)"
        )
        if self.qid is None:
            check_qid(None, 0, required_by="svmmap.dask.SVMMap.fit")

    def load(self, model: Any, config: "_core.TrainConfig", request: FitRequest, threads: int) -> int:
        delayed = load("dask", "svmmap.dask").delayed
        self.client = model._get_client()
        x_blocks, y_blocks, q_blocks, self.names = _partitions(request.X, request.y, self.qid)
        tasks = [
            delayed(_prepare, pure=False)(xb, yb, qb, i, config)
            for i, (xb, yb, qb) in enumerate(zip(x_blocks, y_blocks, q_blocks))
        ]
        self.parts = self.client.compute(tasks)
        infos = self.client.gather(self.client.map(_part_summary, self.parts, n_jobs=model.n_jobs, pure=False))
        n_features_seen = {info[2] for info in infos if info[1] > 0}
        if not n_features_seen:
            raise ValueError("X has no rows")
        if len(n_features_seen) > 1:
            raise ValueError(f"the partitions of X have different numbers of features: {sorted(n_features_seen)}")
        self.n_features = n_features_seen.pop()
        _check_whole_queries([info[0] for info in infos])
        # Empty partitions contribute nothing; leave them out of every iteration.
        self.parts = [p for p, info in zip(self.parts, infos) if info[1] > 0]
        self.problem = _core.ProblemSummary.merge([info[3] for info in infos])
        self.problem.require_usable(config.relevance_threshold)
        self.column_std = _merged_std([(info[1], *info[4]) for info in infos if info[1] > 0])
        self.on_parts = _Rounds(self.client, self.parts, model.n_jobs)
        return int(self.n_features)

    def preparer(self) -> Any:
        return _dask_sets(self.client, self.model.n_jobs, self.eval_parts)

    def run(
        self,
        config: "_core.TrainConfig",
        on_iteration: Optional[Callable[[IterationRecord], bool]],
        threads: int,
        *,
        with_coef: bool,
    ) -> Outcome:
        on_parts = self.on_parts
        column_std = self.column_std
        with overflow_named(config.C, None, lambda: column_std):
            coef, summary = _core.solve(
                lambda w: on_parts(_part_cut_sums, w),
                self.n_features,
                config,
                self.problem,
                on_iteration,
                with_coef=with_coef,
            )
        return Outcome(
            coef,
            summary,
            self.n_features,
            self.names,
            self.problem.total,
            column_std=self.column_std,
            # The degenerate rule of every fit, from each partition's scores on its worker.
            spreads=lambda w: on_parts(_part_spread, w),
        )

    def close(self) -> None:
        if self.parts or self.eval_parts:
            self.client.cancel(self.parts + self.eval_parts)
