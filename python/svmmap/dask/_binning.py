"""svmmap.dask.Binner: thresholds fitted from each partition's distinct values and counts, merged on
the client; its transform bins every partition on the worker that holds it.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from .. import _core
from .._fit.binner_input import as_dense, check_unread, validation_set
from .._optional import load
from .._validation import forget_fit, n_threads
from ..binning import Binner as _LocalBinner
from ._collections import _block_shape, _ClientMixin, _is_dask_array, _is_dask_frame, _rows_of, _x_blocks

#: Values (distinct values and counts) gathered on the client per round of the threshold fit:
#: feature columns are fetched in batches of about this many values, which bounds the client's
#: memory whatever the number of features.
_FIT_BATCH_VALUES = 1 << 24


def _bin_block(block: Any, index: int, first_row: Optional[int], missing: str) -> np.ndarray:
    """A partition as the dense float array the binner reads, after the checks of
    ``svmmap.Binner``: infinity is an error, and NaN too unless it marks a missing value.
    ``first_row`` is the partition's first row in X, when known (dask arrays), for the message.
    A partition without rows gives an empty array, which the fit leaves out."""
    if _rows_of(block) == 0:
        return np.zeros((0, int(block.shape[1])))
    try:
        arr = as_dense(block)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from None
    bad = np.isinf(arr) if missing == "indicator" else ~np.isfinite(arr)
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        v = arr[r, c]
        what = (
            'NaN: missing values need missing="indicator"' if np.isnan(v) else f"{v}: features must be finite numbers"
        )
        where = f"X[{first_row + r}, {c}]" if first_row is not None else f"X[{r}, {c}] of partition {index}"
        raise ValueError(f"{where} is {what} (partition {index}, its row {r})")
    return arr


def _column_values(arr: np.ndarray, columns: Tuple[int, int]) -> list:
    """Per column of ``arr[:, lo:hi]``, its distinct non-NaN values (float64, sorted) and their counts."""
    out = []
    for j in range(*columns):
        col = arr[:, j].astype(np.float64)
        values, counts = np.unique(col[~np.isnan(col)], return_counts=True)
        out.append((values, counts))
    return out


def _binned_block(block: Any, binner: "_LocalBinner") -> Any:
    """The binned features of one partition (on the worker that holds it); a partition without
    rows gives an empty block of the binned width, which the fit leaves out."""
    if _rows_of(block) == 0:
        return np.zeros((0, binner.n_output_features_))
    return binner.transform(block)


class BinnedPartitions:
    """A Dask collection seen through a fitted binner: what ``svmmap.dask.Binner.transform``
    returns for Dask input.

    Nothing is computed when it is made. ``svmmap.dask.SVMMap.fit`` and ``predict`` bin each
    partition on the worker that holds it (to the compact bin codes or indicators that
    ``svmmap.Binner.transform`` gives in memory), so the binned data never travels.

    Attributes
    ----------
    source : dask.array.Array or dask.dataframe.DataFrame
        The base features, partitioned by rows.
    binner : svmmap.Binner
        The fitted binner (a plain, in-memory one) applied to every partition.
    """

    def __init__(self, source: Any, binner: "_LocalBinner") -> None:
        self.source = source
        self.binner = binner

    @property
    def npartitions(self) -> int:
        return len(_x_blocks(self.source)[0])

    def __repr__(self) -> str:
        return f"BinnedPartitions({self.npartitions} partitions, {self.binner.n_output_features_} binned features)"


class Binner(_ClientMixin, _LocalBinner):
    """``svmmap.Binner`` whose ``fit`` and ``transform`` also take Dask collections.

    ``fit`` on a dask array or DataFrame (partitioned by rows) gives exactly the thresholds that
    ``svmmap.Binner`` fits on the same rows in memory: each partition sends, per feature, its
    distinct values and their counts (features are fetched in batches, so the client holds
    about 2^24 values at a time), the client merges them into the feature's sorted training
    values and places the thresholds with the same code. The exchange is exact, and small for
    features with few distinct values (LETOR's many zeros, ranks, counts); for a continuous
    feature it is up to one value and one count per document.

    ``transform`` of a Dask collection returns a lazy `BinnedPartitions`, which
    ``svmmap.dask.SVMMap`` trains on and predicts from, binning each partition where it lies;
    in-memory data is transformed as by ``svmmap.Binner``. The fitted binner works on
    in-memory data like any ``svmmap.Binner`` (``to_local()`` returns one).

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> import svmmap, svmmap.dask
    >>> from svmmap.datasets import load_mq2008
    >>> X, y, qid = load_mq2008(fold=1, split="vali")
    >>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
    ...     binner = svmmap.dask.Binner(n_thresholds=20).fit(da.from_array(X, chunks=(1000, 46)))
    >>> local = svmmap.Binner(n_thresholds=20).fit(X)
    >>> all(np.array_equal(a, b) for a, b in zip(binner.thresholds_, local.thresholds_))
    True
    """

    def fit(
        self,
        X: Any,
        y: Any = None,
        qid: Any = None,
        eval_set: Any = None,
        eval_group: Any = None,
        eval_qid: Any = None,
    ) -> "Binner":
        """Fit the thresholds of every column of ``X`` (a Dask collection or in-memory data).

        Parameters
        ----------
        X : dask.array.Array, dask.dataframe.DataFrame or array-like of shape (n_documents, n_base_features)
            Base feature values, partitioned by rows for Dask input.
        y, qid, eval_set, eval_group, eval_qid : not read for Dask input (pairwise
            interactions are refused there), but checked as ``svmmap.Binner.fit`` checks them
            without interactions: ``y`` and ``qid`` (Dask collections or arrays) must have one
            entry per row of X, and an ``eval_set`` is warned of; for in-memory data, as
            ``svmmap.Binner.fit``.

        Returns
        -------
        self : svmmap.dask.Binner
        """
        forget_fit(self)
        if not (_is_dask_array(X) or _is_dask_frame(X)):
            return super().fit(X, y, qid=qid, eval_set=eval_set, eval_group=eval_group, eval_qid=eval_qid)
        delayed = load("dask", "svmmap.dask").delayed

        config = self._check_params()
        if self.interactions is not None:
            raise ValueError(
                "svmmap.dask.Binner does not fit pairwise interactions on Dask collections "
                f"(interactions={self.interactions!r}); fit svmmap.Binner(interactions=...) on data in memory"
            )
        # The merged columns hold no NaN (each partition sends its non-NaN values), so they
        # are fitted as columns without missing values.
        column_config = _core.BinnerConfig(**{**config.kwargs(), "missing": "error"})
        client = self._get_client()
        blocks, row_chunks, names = _x_blocks(X)
        starts: List[Optional[int]] = (
            [int(v) for v in np.cumsum((0,) + row_chunks)[:-1]] if row_chunks is not None else [None] * len(blocks)
        )
        parts = client.compute(
            [delayed(_bin_block, pure=False)(b, i, starts[i], self.missing) for i, b in enumerate(blocks)]
        )
        try:
            shapes = client.gather(client.map(_block_shape, parts, pure=False))
            widths = {d for n, d in shapes if n > 0}
            if not widths:
                raise ValueError("X has no rows")
            if len(widths) > 1:
                raise ValueError(f"the partitions of X have different numbers of features: {sorted(widths)}")
            n_features = widths.pop()
            n_rows = sum(n for n, _ in shapes)
            self._check_unread(y, qid, eval_set, eval_group, eval_qid, n_rows, n_features)
            parts = [p for p, (n, _) in zip(parts, shapes) if n > 0]
            batch = max(1, _FIT_BATCH_VALUES // max(n_rows, 1))
            values: List[np.ndarray] = []
            for lo in range(0, n_features, batch):
                hi = min(lo + batch, n_features)
                per_part = client.gather(client.map(_column_values, parts, columns=(lo, hi), pure=False))
                for j in range(hi - lo):
                    values.append(self._fit_column([p[j] for p in per_part], column_config))
        finally:
            client.cancel(parts)
        self.thresholds_ = values
        self.n_features_in_ = n_features
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.n_output_features_ = self._spec(config).n_output
        return self

    def _check_unread(
        self, y: Any, qid: Any, eval_set: Any, eval_group: Any, eval_qid: Any, n_rows: int, n_features: int
    ) -> None:
        """The checks of ``svmmap.Binner.fit`` without interactions, for the arguments a fit on
        Dask collections does not read (issue 46: a y of another length was accepted silently,
        and a validation set ignored): ``y`` and ``qid`` are brought to the client (one number
        per row, no more than the thresholds' exchange of a continuous feature) and checked
        against the rows of X; ``eval_set`` warns, and its queries without it are refused."""
        if eval_set is None:
            # Its queries without it are refused, in the words of the in-memory fit.
            validation_set(None, eval_group, eval_qid, n_features)
        y, qid = load("dask", "svmmap.dask").compute(y, qid)
        check_unread(
            "svmmap.dask.Binner",
            y,
            qid,
            eval_set is not None,
            n_rows,
            "a validation set judges pairwise interactions, which svmmap.dask.Binner does not fit on Dask collections",
        )

    def _fit_column(self, parts: List[Tuple[np.ndarray, np.ndarray]], config: _core.BinnerConfig) -> np.ndarray:
        """The thresholds of one feature from its partitions' distinct values and counts."""
        values = np.concatenate([v for v, _ in parts])
        counts = np.concatenate([c for _, c in parts])
        distinct, inverse = np.unique(values, return_inverse=True)
        # Every training value, sorted, with its multiplicity: exactly the column that the
        # in-memory fit sorts, so that the same code places the same thresholds.
        column = np.repeat(
            distinct, np.bincount(inverse.ravel(), weights=counts, minlength=len(distinct)).astype(np.int64)
        )
        k, _ = _core.bin_fit(column.reshape(-1, 1), config, n_threads(self.n_jobs))
        return k.copy()

    def transform(self, X: Any) -> Any:
        """The binned features of ``X``: a lazy `BinnedPartitions` for a Dask collection
        (binned partition by partition where it is used), else what ``svmmap.Binner.transform``
        returns."""
        if not (_is_dask_array(X) or _is_dask_frame(X)):
            return super().transform(X)
        self._check_fitted()
        _x_blocks(X)  # checks the collection's shape
        return BinnedPartitions(X, self.to_local())

    def to_local(self) -> _LocalBinner:
        """A plain ``svmmap.Binner`` with the same parameters and thresholds."""
        self._check_fitted()
        return _LocalBinner.from_dict(self.to_dict())
