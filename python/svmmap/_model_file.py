"""Model files read without scikit-learn: the checked contents of a file written by
``save_model``, and scoring with them.

``load_model`` builds estimators from what ``read_model`` returns; the command line scores with
``ModelDocument.predict`` directly, so that ``svmmap classify`` does not import scikit-learn or
SciPy. Both paths read, check and score through this module, so they cannot disagree.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _core

__all__ = ["BINNER_DICT_TYPE", "BINNER_DICT_VERSION", "BinningSpec", "ModelDocument", "binning_from_dict", "read_model"]

#: The "type" and "version" of a Binner's dict (``Binner.to_dict``, the "binning" of a model file).
BINNER_DICT_TYPE = "svmmap.Binner"
BINNER_DICT_VERSION = 1


@dataclass
class BinningSpec:
    """Fitted binning thresholds: feature j's sorted thresholds, the Binner's parameters."""

    params: Dict[str, Any]
    thresholds: List[np.ndarray]
    n_features_in: int
    feature_names_in: Optional[List[str]] = None

    @property
    def missing(self) -> str:
        return str(self.params.get("missing", "error"))

    @property
    def n_output(self) -> int:
        """Indicator columns: one per threshold, plus one per feature for missing values."""
        extra = 1 if self.missing == "indicator" else 0
        return int(sum(len(k) + extra for k in self.thresholds))

    def flat(self) -> Tuple[np.ndarray, np.ndarray]:
        """All thresholds in one array and the offsets of every feature's block."""
        lengths = [len(k) for k in self.thresholds]
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        values = np.concatenate(self.thresholds) if self.thresholds else np.zeros(0)
        return np.ascontiguousarray(values, dtype=np.float64), offsets

    def indicators(self, X: np.ndarray, n_threads: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
        """The indicator features of a dense, C-contiguous ``X`` as the CSR parts (data,
        indices, indptr, n_rows, n_cols) that ``_core.predict`` and scipy.sparse take."""
        values, offsets = self.flat()
        indptr, indices, n_cols = _core.bin_transform(X, values, offsets, self.missing, n_threads)  # type: ignore[arg-type]
        data = np.ones(indices.shape[0], dtype=np.float64)
        return data, indices, indptr, X.shape[0], n_cols


def binning_from_dict(d: Any) -> BinningSpec:
    """The thresholds of a Binner dict (``Binner.to_dict``), checked.

    Raises
    ------
    ValueError
        When the dict is not a Binner's, is of a newer version, or is inconsistent.
    """
    if not isinstance(d, dict) or d.get("type") != BINNER_DICT_TYPE:
        got = d.get("type") if isinstance(d, dict) else type(d).__name__
        raise ValueError(f'not a Binner dict (expected "type": "{BINNER_DICT_TYPE}", got {got!r})')
    version = d.get("version")
    if version != BINNER_DICT_VERSION:
        newer = isinstance(version, int) and version > BINNER_DICT_VERSION
        raise ValueError(
            f"Binner dict version {version!r} "
            + ("was written by a newer svmmap; upgrade svmmap" if newer else "is not supported")
            + f" (this svmmap reads version {BINNER_DICT_VERSION})"
        )
    try:
        params = dict(d["params"])
        thresholds = [np.asarray(k, dtype=np.float64).reshape(-1) for k in d["thresholds"]]
        n_features = int(d["n_features_in"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"malformed Binner dict: {exc!r}") from None
    if len(thresholds) != n_features:
        raise ValueError(f"Binner dict has {len(thresholds)} threshold lists for {n_features} features")
    for j, k in enumerate(thresholds):
        if not np.all(np.isfinite(k)) or np.any(np.diff(k) <= 0):
            raise ValueError(f"thresholds of feature {j} must be finite and strictly increasing")
    names = d.get("feature_names_in")
    if names is not None and len(names) != n_features:
        raise ValueError(f"Binner dict has {len(names)} feature names for {n_features} features")
    spec = BinningSpec(params, thresholds, n_features, None if names is None else list(names))
    if spec.missing not in ("error", "indicator"):
        raise ValueError(f'missing must be "error" or "indicator", got {spec.missing!r}')
    stored = d.get("n_output_features")
    if stored is not None and int(stored) != spec.n_output:
        raise ValueError(f"Binner dict says {stored} output features but its thresholds give {spec.n_output}")
    return spec


@dataclass
class ModelDocument:
    """A model file's checked contents."""

    path: str
    coef: np.ndarray
    n_features: int
    params: Dict[str, Any]
    binning: Optional[BinningSpec]
    feature_names: Optional[List[str]]
    training: Dict[str, Any] = field(default_factory=dict)

    @property
    def n_input_features(self) -> int:
        """Columns the model takes: the binner's input features, or the weights."""
        return self.binning.n_features_in if self.binning is not None else self.n_features

    @property
    def relevance_threshold(self) -> float:
        return float(self.params.get("relevance_threshold", _core.TrainConfig.DEFAULTS["relevance_threshold"]))

    def predict(self, X: Any, n_threads: int = 0) -> np.ndarray:
        """Scores of the rows of ``X`` (a float array, or a scipy CSR matrix for a model
        without binning), as the loaded estimator's ``predict`` computes them."""
        from ._validation import check_matrix

        if self.binning is not None:
            if hasattr(X, "toarray"):
                X = X.toarray()
            arr = np.ascontiguousarray(X)
            if arr.dtype not in (np.float32, np.float64):
                arr = arr.astype(np.float64)
            if arr.ndim != 2 or arr.shape[1] != self.binning.n_features_in:
                raise ValueError(f"X has shape {arr.shape}, but the model takes {self.binning.n_features_in} features")
            return _core.predict(self.binning.indicators(arr, n_threads), self.coef, n_threads)
        core_X, _, n_features = check_matrix(X)
        if n_features != self.n_features:
            raise ValueError(f"X has {n_features} features, but the model was trained with {self.n_features}")
        return _core.predict(core_X, self.coef, n_threads)


def read_model(path: Any) -> ModelDocument:
    """Reads and checks a model file (the core checks its format and version).

    Raises
    ------
    svmmap.ModelFormatError
        When the file is not a valid svmmap model, or its binning does not fit its weights.
    """
    from ._core import ModelFormatError

    name = os.fspath(path)
    doc = json.loads(_core.load_model_json(name))
    coef = np.asarray(doc["coef"], dtype=np.float64)
    n_features = int(doc["n_features"])
    binning = None
    if doc.get("binning") is not None:
        try:
            binning = binning_from_dict(doc["binning"])
        except ValueError as exc:
            raise ModelFormatError(f"{name}: invalid binning: {exc}") from None
        if binning.n_output != n_features:
            raise ModelFormatError(
                f"{name}: the binning produces {binning.n_output} features but the model has {n_features} weights"
            )
    return ModelDocument(
        path=name,
        coef=coef,
        n_features=n_features,
        params=doc.get("params") or {},
        binning=binning,
        feature_names=doc.get("feature_names"),
        training=doc.get("training") or {},
    )
