"""Reading LETOR/svmlight files, model files and prediction files; atomic writes."""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Sequence, Union

import numpy as np
import scipy.sparse as sp

from . import _core

PathLike = Union[str, "os.PathLike[str]"]


def _qid_array(names: Sequence[str], codes: np.ndarray) -> np.ndarray:
    """Query ids as int64 when every id is an integer (as in LETOR), else as strings."""
    try:
        values = np.array([int(n) for n in names], dtype=np.int64)
    except (ValueError, OverflowError):
        values = np.array(names, dtype=str)
    return values[codes]


def load_letor(
    path: PathLike,
    *,
    dtype: Any = np.float64,
    n_features: Optional[int] = None,
    sparse: Union[str, bool] = "auto",
    return_comments: bool = False,
    n_jobs: Optional[int] = None,
) -> tuple:
    """Read a LETOR / svmlight ranking file: ``label qid:Q index:value ... # comment``.

    Parameters
    ----------
    path : str or path-like
        Plain text or gzip-compressed (detected from the content, whatever the name).
    dtype : numpy.float32 or numpy.float64, default=numpy.float64
        Type of the feature values.
    n_features : int or None
        Number of features; by default the largest index in the file. An index above it is an
        error. Give it when reading a test file whose last features happen to be absent.
    sparse : "auto", True or False, default="auto"
        "auto" returns a dense array when every line lists every feature 1..d in order (as
        LETOR files do, and then without a copy), and a CSR matrix otherwise.
    return_comments : bool, default=False
        Also return the text after '#' of every line (LETOR puts the document id there).
    n_jobs : int or None
        Threads for parsing (None: all cores).

    Returns
    -------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_documents, n_features)
    y : ndarray of shape (n_documents,), float64 labels
    qid : ndarray of shape (n_documents,), int64 when every query id is an integer, else str
    comments : list of str, only with ``return_comments=True``

    Raises
    ------
    svmmap.DataFormatError
        For a malformed line; the message gives ``file:line``, the field and what was wrong.
    FileNotFoundError, OSError
        When the file cannot be read.
    """
    from ._validation import n_threads

    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    if sparse not in ("auto", True, False):
        raise ValueError(f'sparse must be "auto", True or False, got {sparse!r}')
    if n_features is not None and (not isinstance(n_features, (int, np.integer)) or n_features < 1):
        raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
    raw = _core.read_letor_file(
        os.fspath(path), dt.name, None if n_features is None else int(n_features),
        return_comments, n_threads(n_jobs),
    )
    n_rows = raw["labels"].shape[0]
    d = raw["n_features"]
    if "dense" in raw:
        X: Any = raw["dense"]
        if sparse is True:
            X = sp.csr_matrix(X)
    else:
        X = sp.csr_matrix((raw["values"], raw["indices"], raw["indptr"]), shape=(n_rows, d))
        if sparse is False:
            X = X.toarray()
    qid = _qid_array(raw["qid_names"], raw["qid_codes"].astype(np.intp))
    if return_comments:
        return X, raw["labels"], qid, raw["comments"]
    return X, raw["labels"], qid


def write_atomic(path: PathLike, data: Union[str, bytes]) -> None:
    """Write a whole file so that readers see the old content or the new, never a part."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    _core.write_atomic(os.fspath(path), data)


def save_predictions(path: PathLike, scores: np.ndarray) -> None:
    """One score per line, exactly (shortest round-trip representation), written atomically."""
    write_atomic(path, "".join(f"{float(s)!r}\n" for s in np.asarray(scores, dtype=np.float64)))


def load_predictions(path: PathLike, n_expected: Optional[int] = None) -> np.ndarray:
    """Read one score per line; an error names the line that is not a finite number."""
    from ._core import DataFormatError

    name = os.fspath(path)
    values = []
    with open(name, "r", encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            text = line.strip()
            if not text:
                continue
            token = text.split()[0]
            try:
                v = float(token)
            except ValueError:
                raise DataFormatError(f"{name}:{lineno}: expected a score, got {token!r}") from None
            if not np.isfinite(v):
                raise DataFormatError(f"{name}:{lineno}: score {token} is not finite")
            values.append(v)
    if n_expected is not None and len(values) != n_expected:
        raise DataFormatError(
            f"{name}: {len(values)} scores for {n_expected} documents; one score per document line is expected"
        )
    return np.asarray(values, dtype=np.float64)


def save_model(model: Any, path: PathLike) -> None:
    """Write a fitted SVMMap as versioned JSON (see ``svmmap.load_model``), atomically."""
    model._check_fitted()
    params = {
        k: v
        for k, v in model.get_params(deep=False).items()
        if k not in ("callback", "n_jobs", "verbose")
    }
    doc = {
        "format": "svmmap-model",
        "version": _core.MODEL_FORMAT_VERSION,
        "n_features": int(model.n_features_in_),
        "coef": [float(c) for c in model.coef_],
        "params": params,
        "feature_names": None,
        "binning": None,
        "training": {
            "objective": model.objective_,
            "dual_objective": model.dual_objective_,
            "gap": model.gap_,
            "n_iter": model.n_iter_,
            "n_cuts": model.n_cuts_,
            "converged": model.converged_,
            "n_queries": model.n_queries_,
            "n_queries_skipped": model.n_queries_skipped_,
        },
    }
    _core.save_model_json(os.fspath(path), json.dumps(doc))


def load_model(path: PathLike) -> Any:
    """Read a model written by ``SVMMap.save`` or ``svmmap learn``.

    Raises
    ------
    svmmap.ModelFormatError
        When the file is truncated, corrupted, not an svmmap model, or of a newer version.
    """
    from .estimator import SVMMap

    doc = json.loads(_core.load_model_json(os.fspath(path)))
    params = doc.get("params") or {}
    model = SVMMap(**{k: v for k, v in params.items() if k in SVMMap._get_param_names()})
    model.coef_ = np.asarray(doc["coef"], dtype=np.float64)
    model.n_features_in_ = int(doc["n_features"])
    training = doc.get("training") or {}
    model.objective_ = training.get("objective", float("nan"))
    model.dual_objective_ = training.get("dual_objective", float("nan"))
    model.gap_ = training.get("gap", float("nan"))
    model.n_iter_ = training.get("n_iter", 0)
    model.n_cuts_ = training.get("n_cuts", 0)
    model.converged_ = training.get("converged", False)
    model.n_queries_ = training.get("n_queries", 0)
    model.n_queries_skipped_ = training.get("n_queries_skipped", {})
    model.history_ = []
    return model
