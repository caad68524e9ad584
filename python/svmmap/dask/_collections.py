"""Dask collections as row blocks: X's, y's and qid's blocks (their shapes and row counts), the
check that every query lies within one partition, and the client an estimator works with.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from .._optional import load
from .._validation import feature_names_of, read_column_vector


def _is_dask_array(obj: Any) -> bool:
    return hasattr(obj, "__dask_graph__") and hasattr(obj, "chunks") and hasattr(obj, "ndim")


def _is_dask_frame(obj: Any) -> bool:
    return hasattr(obj, "__dask_graph__") and hasattr(obj, "npartitions") and not hasattr(obj, "chunks")


def _row_blocks(obj: Any, name: str, row_chunks: Optional[Tuple[int, ...]], n_parts: int, x_name: str = "X") -> list:
    """The row partitions of y or qid as a list of Delayed (or plain) objects, aligned with
    those of X (named ``x_name`` in messages)."""
    if _is_dask_array(obj) or isinstance(obj, np.ndarray):
        if obj.ndim == 2 and obj.shape[1] == 1:
            # Read with the warning, as svmmap.SVMMap reads a column-vector y or qid (it was
            # refused here); the column's row chunks are kept.
            obj = read_column_vector(obj, name)
    if _is_dask_array(obj):
        if obj.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {obj.shape}")
        if row_chunks is not None and obj.chunks[0] != row_chunks:
            if any(np.isnan(c) for c in obj.chunks[0]):
                raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first")
            if obj.shape[0] != sum(row_chunks):
                # The lengths, as check_labels and check_qid word them; rechunk would say only
                # "Chunks do not add up to shape".
                raise ValueError(f"{name} has {obj.shape[0]} entries but {x_name} has {sum(row_chunks)} rows")
            obj = obj.rechunk((row_chunks,))
        blocks = list(obj.to_delayed().ravel())
    elif _is_dask_frame(obj):
        blocks = list(obj.to_delayed())
    else:
        if row_chunks is None:
            raise TypeError(
                f"{name} must be a dask collection partitioned like {x_name} when {x_name} is a dask DataFrame, "
                f"got {type(obj).__name__}"
            )
        arr = np.asarray(obj)
        if arr.ndim != 1 or arr.shape[0] != sum(row_chunks):
            raise ValueError(
                f"{name} must be 1-D with one entry per row of {x_name} ({sum(row_chunks)}), got shape {arr.shape}"
            )
        bounds = np.cumsum((0,) + tuple(row_chunks))
        blocks = [arr[bounds[i] : bounds[i + 1]] for i in range(len(row_chunks))]
    if len(blocks) != n_parts:
        raise ValueError(
            f"{name} has {len(blocks)} partitions but {x_name} has {n_parts}; X, y and qid must be "
            "partitioned alike (e.g. columns of one dask DataFrame, or dask arrays with the same row chunks)"
        )
    return blocks


def _check_whole_queries(uniques: List[np.ndarray]) -> None:
    """Raises if a query id occurs in more than one partition."""
    non_empty = [(i, u) for i, u in enumerate(uniques) if len(u)]
    if not non_empty:
        return
    values = np.concatenate([u for _, u in non_empty])
    owners = np.concatenate([np.full(len(u), i) for i, u in non_empty])
    try:
        order = np.argsort(values, kind="stable")
    except TypeError as exc:
        raise ValueError(f"qid values of different partitions cannot be compared: {exc}") from None
    sorted_values = values[order]
    dup = np.flatnonzero(sorted_values[1:] == sorted_values[:-1])
    if dup.size:
        q = sorted_values[dup[0]]
        q = q.item() if isinstance(q, np.generic) else q
        parts = sorted(set(owners[order][(sorted_values == q)].tolist()))
        raise ValueError(
            f"query {q!r} has rows in partitions {parts}: every partition must hold whole queries "
            f"({dup.size} quer{'y is' if dup.size == 1 else 'ies are'} split). Sort the rows by qid and "
            "cut the chunks at query boundaries, or for a dask DataFrame with a qid column use "
            "ddf.shuffle(on='qid') (as for LightGBM's and XGBoost's Dask rankers)."
        )


class _ClientMixin:
    """The Dask client an estimator works with: ``self.client`` if set, else the default one."""

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` to work with (default: ``distributed.default_client()``)."""
        return self.__dict__.get("_client")

    @client.setter
    def client(self, value: Any) -> None:
        self.__dict__["_client"] = value

    def _get_client(self) -> Any:
        if self.client is not None:
            return self.client
        default_client = load("distributed", "svmmap.dask").default_client
        try:
            return default_client()
        except ValueError:
            raise ValueError(
                f"svmmap.dask.{type(self).__name__} needs a dask.distributed Client: create one first "
                "(client = distributed.Client(...)) or set model.client"
            ) from None

    def __getstate__(self) -> dict:
        # A client is a live connection: it is not part of the model.
        state = dict(self.__dict__)
        state.pop("_client", None)
        return state


def _rows_of(X: Any) -> Optional[int]:
    """The number of rows of a block (array, DataFrame or sparse matrix), None if it has no
    2-D shape (check_matrix then says what is wrong)."""
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) == 2 else None


def _block_shape(arr: np.ndarray) -> Tuple[int, int]:
    return arr.shape


def _x_blocks(X: Any, name: str = "X") -> Tuple[list, Optional[Tuple[int, ...]], Optional[np.ndarray]]:
    """The row partitions of a dask array or DataFrame X (named ``name`` in messages) as
    Delayed objects, the row chunk sizes (for an array) and the column names (for a DataFrame)."""
    if _is_dask_array(X):
        if X.ndim != 2:
            raise ValueError(f"{name} must be a 2-D dask array (documents x features), got {X.ndim} dimension(s)")
        if any(np.isnan(c) for c in X.chunks[0]):
            raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first")
        if X.numblocks[1] > 1:
            # Whole rows must be on one worker; the feature dimension is never split.
            X = X.rechunk({1: -1})
        return list(X.to_delayed()[:, 0]), tuple(int(c) for c in X.chunks[0]), None
    if _is_dask_frame(X):
        return list(X.to_delayed()), None, feature_names_of(X)
    raise TypeError(f"expected a dask array or dask DataFrame, got {type(X).__name__}")
