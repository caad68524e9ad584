"""The inputs of ``Binner.fit`` and ``transform`` as the Binner reads them: its base features
as one dense matrix, their column names, and the validation set on which ``interactions=k``
judges its pairs."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np
import scipy.sparse as sp

from .._validation import (
    check_labels,
    check_qid,
    contiguous,
    dense_numbers,
    densified,
    qid_of,
    unique_column_names,
    warn_unused,
)
from .evaluation_sets import missing_queries_message

__all__ = ["as_dense", "check_unread", "column_names", "validation_set"]


def as_dense(X: Any, name: str = "X") -> np.ndarray:
    """A C-contiguous float32/float64 2-D array. Sparse input is densified (base features are
    few); NaN and infinity are left for the core, which reports them with their position."""
    if sp.issparse(X):
        X = densified(
            X,
            name,
            "the Binner takes base features as dense columns; keep only the columns used (a sparse file's largest feature index sets the width)",
        )
    # The estimators' check of a dense matrix, so that a matrix of strings, a scalar or a 1-D
    # array is refused in the words SVMMap.fit uses, naming X.
    arr = dense_numbers(X, name)
    # Aligned too: a view made by np.frombuffer at an odd offset, or rebuilt from a network
    # frame (a Dask partition), cannot be borrowed by the core.
    return contiguous(arr)


def column_names(X: Any) -> Optional[np.ndarray]:
    """Column names of a dataframe when they are all strings (scikit-learn's convention)."""
    columns = getattr(X, "columns", None)
    if columns is None or sp.issparse(X):
        return None
    names = list(columns)
    if names and all(isinstance(c, str) for c in names):
        return unique_column_names(np.asarray(names, dtype=object))
    return None


def validation_set(
    eval_set: Any, eval_group: Any, eval_qid: Any, n_features: int
) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The validation set of ``Binner.fit`` as (dense X, labels, query codes), checked as
    ``SVMMap.fit`` checks its ``eval_set`` (one set, its queries by ``eval_group`` or
    ``eval_qid``), each error naming the argument; None without one."""
    if eval_set is None:
        if eval_group is not None or eval_qid is not None:
            raise ValueError("eval_group and eval_qid describe eval_set, which was not given")
        return None
    if not isinstance(eval_set, (list, tuple)) or len(eval_set) != 1 or not isinstance(eval_set[0], (tuple, list)):
        raise ValueError("Binner.fit's eval_set must be a list of one (X, y) tuple, e.g. eval_set=[(X_val, y_val)]")
    if len(eval_set[0]) != 2:
        raise ValueError("eval_set[0] must be an (X, y) tuple")
    # SVMMap.fit's words for both mistakes: "give eval_group or eval_qid, not both" was also
    # the answer to an eval_set given with neither.
    if eval_group is None and eval_qid is None:
        raise ValueError(missing_queries_message(1))
    if eval_group is not None and eval_qid is not None:
        raise ValueError("eval_set's queries are given twice: give eval_qid or eval_group, not both")
    grouping = eval_group if eval_group is not None else eval_qid
    if not isinstance(grouping, (list, tuple)) or len(grouping) != 1:
        raise ValueError("give the queries of the one eval_set as a list of one array")
    X_val = as_dense(eval_set[0][0], name="eval_set[0] X")
    if X_val.shape[1] != n_features:
        raise ValueError(f"eval_set[0] X has {X_val.shape[1]} features, but X has {n_features}")
    n_rows = X_val.shape[0]
    y_val = check_labels(eval_set[0][1], n_rows, name="eval_set[0] y", rows_name="eval_set[0] X")
    if eval_group is not None:
        q = qid_of(None, eval_group[0], n_rows, "eval_qid[0]", "eval_group[0]", rows_name="eval_set[0] X")
    else:
        q = qid_of(eval_qid[0], None, n_rows, "eval_qid[0]", "eval_group[0]", rows_name="eval_set[0] X")
    codes, _ = check_qid(
        q, n_rows, required_by="Binner.fit's eval_set", qid_name="eval_qid[0]", rows_name="eval_set[0] X"
    )
    return X_val, y_val, codes


def check_unread(
    name: str, y: Any, qid: Any, eval_given: bool, n_rows: int, why: str = "only interactions=k reads it"
) -> None:
    """The arguments of ``name`` (a Binner's fit) that a fit without pair selection does not
    read, given all the same: ``y`` and ``qid`` (what a Pipeline passes) are checked by the
    estimators' checks, one entry per row of X, since one of another length is a mistake (a
    misaligned split, another data set's labels) that SVMMap would refuse one step later; a
    validation set (``eval_given``), which a user must route to the binner on purpose, gets a
    warning saying ``why`` it is not read, as every argument that is given and ignored does."""
    if y is not None:
        # As an array first: scikit-learn's checks pass y as an object that refuses NumPy's
        # functions (np.iscomplexobj) but converts by np.asarray.
        check_labels(np.asarray(y), n_rows)
    if qid is not None:
        check_qid(qid, n_rows, required_by=f"{name}.fit")
    if eval_given:
        warn_unused("eval_set", why)
