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
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from . import _core
from ._data import CoreMatrix

__all__ = [
    "BINNER_DICT_TYPE",
    "BINNER_DICT_VERSION",
    "BinningSpec",
    "ModelDocument",
    "binning_from_dict",
    "indicator_names",
    "read_model",
]

#: The "type" and "version" of a Binner's dict (``Binner.to_dict``, the "binning" of a model file).
BINNER_DICT_TYPE = "svmmap.Binner"
BINNER_DICT_VERSION = 1


@dataclass
class BinningSpec:
    """Fitted binning thresholds: the Binner's checked configuration, its parameters as given,
    and feature j's sorted thresholds."""

    config: _core.BinnerConfig
    params: Dict[str, Any]
    thresholds: List[np.ndarray]
    n_features_in: int
    feature_names_in: Optional[List[str]] = None

    @property
    def missing(self) -> str:
        return self.config.missing

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

    def codes(self, X: np.ndarray, n_threads: int) -> np.ndarray:
        """The bin codes of a dense, C-contiguous ``X`` (uint8 or uint16, see BinnedMatrix)."""
        values, offsets = self.flat()
        return _core.bin_codes(X, values, offsets, self.config, n_threads)

    def core_codes(self, X: np.ndarray, n_threads: int) -> CoreMatrix:
        """The binned matrix of ``X`` as ``_core.predict`` and ``_core.fit_path`` take it."""
        values, offsets = self.flat()
        return CoreMatrix.binned(self.codes(X, n_threads), values, offsets, self.n_output, self.missing == "indicator")

    @classmethod
    def fit(
        cls,
        X: np.ndarray,
        config: _core.BinnerConfig,
        params: Dict[str, Any],
        n_threads: int,
        feature_names_in: Optional[List[str]] = None,
    ) -> "BinningSpec":
        """The thresholds the core fits on every column of a dense, C-contiguous ``X`` (what
        ``Binner.fit`` keeps; ``svmmap learn --missing nan`` fits them here without
        scikit-learn)."""
        values, offsets = _core.bin_fit(X, config, n_threads)
        thresholds = [values[offsets[j] : offsets[j + 1]].copy() for j in range(X.shape[1])]
        return cls(config, params, thresholds, X.shape[1], feature_names_in)

    def binned(self, X: np.ndarray, n_threads: int) -> Any:
        """The BinnedMatrix of a dense, C-contiguous ``X`` (``Binner.transform`` with
        ``output="codes"``)."""
        from ._binned import BinnedMatrix

        return BinnedMatrix._trusted(self.codes(X, n_threads), list(self.thresholds), self.missing)

    def get_feature_names_out(self) -> np.ndarray:
        """The indicator columns' names (as ``Binner.get_feature_names_out()``)."""
        names = self.feature_names_in or [f"x{j}" for j in range(self.n_features_in)]
        return indicator_names(names, self.thresholds, self.missing)

    def to_dict(self) -> Dict[str, Any]:
        """The Binner dict of these thresholds (``Binner.to_dict``; read by ``binning_from_dict``)."""
        return {
            "type": BINNER_DICT_TYPE,
            "version": BINNER_DICT_VERSION,
            "params": {
                "n_thresholds": int(self.config.n_thresholds),
                "strategy": str(self.config.strategy),
                "missing": str(self.config.missing),
            },
            "n_features_in": int(self.n_features_in),
            "feature_names_in": None if self.feature_names_in is None else [str(n) for n in self.feature_names_in],
            "thresholds": [[float(t) for t in k] for k in self.thresholds],
            "n_output_features": int(self.n_output),
        }

    def indicators(self, X: np.ndarray, n_threads: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
        """The indicator features of a dense, C-contiguous ``X`` as the CSR parts (data,
        indices, indptr, n_rows, n_cols) that scipy.sparse takes."""
        values, offsets = self.flat()
        indptr, indices, n_cols = _core.bin_transform(X, values, offsets, self.config, n_threads)
        data = np.ones(indices.shape[0], dtype=np.float64)
        return data, indices, indptr, X.shape[0], n_cols


def indicator_names(names: List[str], thresholds: List[np.ndarray], missing: str) -> np.ndarray:
    """The names of a binner's indicator columns: ``"name>threshold"``, and ``"name=missing"``
    after each feature's thresholds with ``missing="indicator"``. Thresholds are written with
    Python's shortest round-trip representation, so the names are unique and give the exact
    thresholds back."""
    out: List[str] = []
    for name, k in zip(names, thresholds):
        out.extend(f"{name}>{float(t)!r}" for t in k)
        if missing == "indicator":
            out.append(f"{name}=missing")
    return np.asarray(out, dtype=object)


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
    for key in ("params", "thresholds", "n_features_in"):
        if key not in d:
            raise ValueError(f'malformed Binner dict: "{key}" is missing')
    if not isinstance(d["params"], dict):
        raise ValueError(f'"params" must be an object, got {_kind(d["params"])}')
    params = dict(d["params"])
    n_features = _count(d["n_features_in"], "n_features_in")
    raw = d["thresholds"]
    if not isinstance(raw, list):
        raise ValueError(f'"thresholds" must be a list of lists of numbers, got {_kind(raw)}')
    thresholds = []
    for j, k in enumerate(raw):
        # Exactly numbers: numpy would also turn "0.5", true or [[0.5]] into thresholds.
        if not isinstance(k, list) or not all(_is_number(t) for t in k):
            raise ValueError(f'"thresholds"[{j}] must be a list of numbers, got {_show(k)}')
        thresholds.append(np.asarray(k, dtype=np.float64).reshape(-1))
    config = _check_binner_params(params)
    if len(thresholds) != n_features:
        raise ValueError(f"Binner dict has {len(thresholds)} threshold lists for {n_features} features")
    for j, k in enumerate(thresholds):
        if not np.all(np.isfinite(k)) or np.any(np.diff(k) <= 0):
            raise ValueError(f"thresholds of feature {j} must be finite and strictly increasing")
    names = d.get("feature_names_in")
    if names is not None:
        _check_names(names, "feature_names_in")
        if len(names) != n_features:
            raise ValueError(f"Binner dict has {len(names)} feature names for {n_features} features")
    spec = BinningSpec(config, params, thresholds, n_features, None if names is None else list(names))
    stored = d.get("n_output_features")
    if stored is not None and _count(stored, "n_output_features") != spec.n_output:
        raise ValueError(f"Binner dict says {stored} output features but its thresholds give {spec.n_output}")
    return spec


def _kind(v: Any) -> str:
    """A JSON value's type, as the Rust side names it in its messages."""
    if v is None:
        return "null"
    for t, name in ((bool, "a boolean"), (str, "a string"), (list, "an array"), (dict, "an object")):
        if isinstance(v, t):
            return name
    return "a number" if isinstance(v, (int, float)) else type(v).__name__


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_number(v: Any) -> bool:
    """A finite JSON number (bool is an int in Python, but not a number in a model file)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and bool(np.isfinite(float(v)))


def _count(v: Any, field: str) -> int:
    """A non-negative JSON integer (3.0, "3" and true are refused, not truncated or coerced)."""
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f'"{field}" must be a non-negative integer, got {_show(v)}')
    return v


def _check_names(names: Any, field: str) -> None:
    """Feature names: strings, unique (the search engines identify features by name)."""
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f'"{field}" must be a list of strings, got {_show(names)}')
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f'"{field}" must be unique; repeated: {dup[:5]}')


def _check_binner_params(params: Dict[str, Any]) -> _core.BinnerConfig:
    """The Binner parameters of a model file as the core's BinnerConfig, which checks them as
    ``Binner.fit`` does; a parameter left out takes its default."""
    given = {k: params[k] for k in _core.BinnerConfig.DEFAULTS if k in params}
    # One key at a time, so that the error names the field as the file does: the core's
    # `strategy must be one of (...), got 'x'` becomes `"params"."strategy" must be one of
    # (...), got 'x'`, with long values shortened as in the file's other messages.
    for key, value in given.items():
        try:
            _core.BinnerConfig(**{key: value})
        except (TypeError, ValueError, OverflowError) as exc:
            rule = str(exc).split(", got ", 1)[0]
            if rule.startswith(f"{key} "):
                raise ValueError(f'"params"."{key}"{rule[len(key) :]}, got {_show(value)}') from None
            raise ValueError(f'"params"."{key}": {exc}') from None
    return _core.BinnerConfig(**given)


#: The training summary's fields and their types, as ``model_document`` writes them; a model
#: that is loaded must be savable again, so other types are refused at load.
_TRAINING_NUMBERS = ("objective", "dual_objective", "gap")
_TRAINING_COUNTS = ("n_iter", "n_cuts", "n_queries")


def _check_training(training: Dict[str, Any]) -> None:
    for key in _TRAINING_NUMBERS:
        # null: unknown (a model whose file had no training summary, saved again).
        if training.get(key) is not None and not _is_number(training[key]):
            raise ValueError(f'"training"."{key}" must be a finite number or null, got {_show(training[key])}')
    for key in _TRAINING_COUNTS:
        if key in training:
            _count(training[key], f'training"."{key}')
    if "converged" in training and not isinstance(training["converged"], bool):
        raise ValueError(f'"training"."converged" must be true or false, got {_show(training["converged"])}')
    if "stop_reason" in training:
        from typing import get_args

        from ._typing import StopReason

        if training["stop_reason"] not in get_args(StopReason):
            raise ValueError(
                f'"training"."stop_reason" must be one of {get_args(StopReason)}, got {_show(training["stop_reason"])}'
            )
    skipped = training.get("n_queries_skipped", {})
    if not isinstance(skipped, dict):
        raise ValueError(f'"training"."n_queries_skipped" must be an object, got {_kind(skipped)}')
    for k, v in skipped.items():
        _count(v, f'training"."n_queries_skipped"."{k}')
    history = training.get("history", [])
    if not isinstance(history, list):
        raise ValueError(f'"training"."history" must be a list of objects, got {_kind(history)}')
    for i, record in enumerate(history):
        if not isinstance(record, dict) or not all(_is_number(v) for v in record.values()):
            raise ValueError(f'"training"."history"[{i}] must be an object of finite numbers, got {_show(record)}')


def _check_params(params: Dict[str, Any]) -> None:
    """The estimator parameters of the file, checked by the core's TrainConfig (the rule
    ``SVMMap.fit`` applies), so that a loaded model can be refitted, cloned and saved."""
    # One key at a time, so that the error names the field whatever the core's message says.
    for key in ("C", "eps", "max_iter", "relevance_threshold", "loss", "slack"):
        if key in params:
            try:
                _core.TrainConfig(**{key: params[key]})
            except (TypeError, ValueError, OverflowError) as exc:
                raise ValueError(f'"params"."{key}": {exc}') from None
    # Then together, for any rule that ties parameters to each other.
    given = {k: params[k] for k in ("C", "eps", "max_iter", "relevance_threshold", "loss", "slack") if k in params}
    try:
        _core.TrainConfig(**given)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f'"params": {exc}') from None


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
            return _core.predict(self.binning.core_codes(arr, n_threads), self.coef, n_threads)
        core_X, _, n_features = check_matrix(X)
        if n_features != self.n_features:
            raise ValueError(f"X has {n_features} features, but the model was trained with {self.n_features}")
        # The core refuses a score that overflows float64, naming the row (as for every
        # prediction).
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
    try:
        return check_document(doc, name)
    except ValueError as exc:
        raise ModelFormatError(f"{name}: {exc}") from None


def check_document(doc: Dict[str, Any], name: str) -> ModelDocument:
    """The checks of a model document (beyond the core's format check) that ``read_model``
    applies, as a ``ModelDocument``; ``write_model`` applies them before it writes, so that a
    file that is written always loads.

    Raises
    ------
    ValueError
        Naming the field that is refused.
    """
    coef = np.asarray(doc["coef"], dtype=np.float64)
    n_features = int(doc["n_features"])
    params = doc.get("params") or {}
    training = doc.get("training") or {}
    _check_params(params)
    _check_training(training)
    if doc.get("feature_names") is not None:
        _check_names(doc["feature_names"], "feature_names")
    binning = None
    if doc.get("binning") is not None:
        try:
            binning = binning_from_dict(doc["binning"])
        except ValueError as exc:
            raise ValueError(f"invalid binning: {exc}") from None
        if binning.n_output != n_features:
            raise ValueError(f"the binning produces {binning.n_output} features but the model has {n_features} weights")
    return ModelDocument(
        path=name,
        coef=coef,
        n_features=n_features,
        params=params,
        binning=binning,
        feature_names=doc.get("feature_names"),
        training=training,
    )


#: Estimator parameters that describe how a model was run, not the model; not saved.
RUNTIME_PARAMS = ("callback", "n_jobs", "verbose")


def _json_value(name: str, value: Any) -> Any:
    """A parameter value as JSON data, or a clear error when it has no JSON form."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, tuple):
        value = list(value)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise ValueError(
            f"parameter {name}={value!r} cannot be written to a model file (it has no JSON form)"
        ) from None
    return value


def _finite_or_none(value: Any) -> Optional[float]:
    v = float(value)
    return v if np.isfinite(v) else None


def svm_document(svm: Any, binner: Any = None) -> dict:
    """The model file's content (see ``docs/model-format.md``) of a fitted SVMMap (or the
    BareSVMMap that ``svmmap learn`` trains), with the thresholds of the Binner before it, as a
    dict. Written here, beside the reader, so that the estimator saves itself without importing
    the module that builds estimators from files."""
    from . import __version__

    svm._check_fitted()
    # In the order of their names (scikit-learn's get_params order), whatever object holds them,
    # so that the same parameters are the same bytes in the file.
    params = {k: _json_value(k, v) for k, v in sorted(svm.get_params(deep=False).items()) if k not in RUNTIME_PARAMS}
    names = getattr(svm, "feature_names_in_", None)
    binning = None
    if binner is not None:
        binning = binner.to_dict()
        # The binner's own input names (a DataFrame's columns) travel with it; the model's
        # features are then the binner's outputs ("name>threshold").
        if names is None:
            names = binner.get_feature_names_out()
    return {
        "format": "svmmap-model",
        "version": _core.MODEL_FORMAT_VERSION,
        "svmmap_version": __version__,
        "n_features": int(svm.n_features_in_),
        "coef": [float(c) for c in svm.coef_],
        "params": params,
        "feature_names": None if names is None else [str(n) for n in names],
        "binning": binning,
        "training": {
            # NaN (unknown: a loaded file without a training summary) is written as null.
            "objective": _finite_or_none(svm.objective_),
            "dual_objective": _finite_or_none(svm.dual_objective_),
            "gap": _finite_or_none(svm.gap_),
            "n_iter": int(svm.n_iter_),
            "n_cuts": int(svm.n_cuts_),
            "converged": bool(svm.converged_),
            "stop_reason": getattr(svm, "stop_reason_", "converged" if svm.converged_ else "max_iter"),
            "n_queries": int(svm.n_queries_),
            "n_queries_skipped": {k: int(v) for k, v in svm.n_queries_skipped_.items()},
            "history": [
                {k: (float(v) if isinstance(v, float) else int(v)) for k, v in record.items()}
                for record in getattr(svm, "history_", [])
            ],
        },
    }


def write_model(path: Any, doc: dict, check: Optional[Callable[[ModelDocument], None]] = None) -> ModelDocument:
    """Writes a model document atomically, only if it loads: the text to be written is read
    back through ``check_document`` (and ``check``, the loader's further checks, such as the
    Binner's parameters) before anything is written, and the core checks its format as the
    reader does. A model whose parameters were set to values the reader refuses
    (``set_params(C=0)``, ``loss="mapp"``) would otherwise be written and then refused forever.

    Raises
    ------
    ValueError
        When the file would not load; nothing is written.
    """
    name = os.fspath(path)
    text = json.dumps(doc, allow_nan=False)
    try:
        document = check_document(json.loads(text), name)
        if check is not None:
            check(document)
    except ValueError as exc:
        raise ValueError(f"{name}: the model was not written, since svmmap could not load it again: {exc}") from None
    _core.save_model_json(name, text)
    return document
