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
    "SCALER_TYPES",
    "BinningSpec",
    "ModelDocument",
    "ScalerSpec",
    "binning_from_dict",
    "indicator_names",
    "read_model",
    "scaler_from_dict",
    "scaler_to_dict",
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

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The indicator columns' names (as ``Binner.get_feature_names_out()``), of
        ``input_features`` (a scaler's input names before the binner) if given."""
        if input_features is not None:
            names = [str(n) for n in input_features]
        else:
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


#: The scalers a model file holds: their "type" (the class's import path), and the fitted
#: attributes written for each. The first names are those the affine map reads; the others
#: (statistics of the fit) are written so that the loaded scaler is the fitted one again.
SCALER_TYPES: Dict[str, Tuple[str, ...]] = {
    "sklearn.preprocessing.StandardScaler": ("mean_", "scale_", "var_", "n_samples_seen_"),
    "sklearn.preprocessing.MinMaxScaler": (
        "min_",
        "scale_",
        "data_min_",
        "data_max_",
        "data_range_",
        "n_samples_seen_",
    ),
    "sklearn.preprocessing.MaxAbsScaler": ("scale_", "max_abs_", "n_samples_seen_"),
}


@dataclass
class ScalerSpec:
    """A fitted scikit-learn scaler as a model file holds it: an affine map of every input
    feature, x' = (x - shift) / divisor, or x' = x * factor + offset for MinMaxScaler (the
    operations, in their order, that the scaler's ``transform`` applies, so that ``transform``
    below gives its float64 results bit for bit)."""

    type: str
    params: Dict[str, Any]
    n_features_in: int
    attributes: Dict[str, Any]
    feature_names_in: Optional[List[str]] = None

    @property
    def name(self) -> str:
        """The class name ("StandardScaler")."""
        return self.type.rsplit(".", 1)[1]

    def operations(self) -> List[Tuple[str, np.ndarray]]:
        """The map as the element-wise operations ("sub", "div", "mul" or "add", with one number
        per feature) applied to x in this order."""
        return [(op, self.attributes[name]) for op, name in _used_attributes(self)]

    def transform(self, X: np.ndarray) -> np.ndarray:
        """The scaled features of a float64 ``X`` (NaN stays NaN, as in scikit-learn)."""
        out = np.array(X, dtype=np.float64, copy=True)
        for op, v in self.operations():
            if op == "sub":
                out -= v
            elif op == "div":
                out /= v
            elif op == "mul":
                out *= v
            else:
                out += v
        return out

    def slope_intercept(self) -> Tuple[np.ndarray, np.ndarray]:
        """(a, b) with x' = a * x + b as real numbers (rounded to float64): the map folded
        into one multiplication and one addition, as exports to weights need it."""
        a = np.ones(self.n_features_in)
        b = np.zeros(self.n_features_in)
        for op, v in self.operations():
            if op == "sub":
                b = b - v
            elif op == "div":
                a, b = a / v, b / v
            elif op == "mul":
                a, b = a * v, b * v
            else:
                b = b + v
        return a, b


def _number_list(v: Any, n: int, field: str) -> np.ndarray:
    if not isinstance(v, list) or len(v) != n or not all(_is_number(t) for t in v):
        raise ValueError(f'"{field}" must be a list of {n} finite numbers, got {_show(v)}')
    return np.asarray(v, dtype=np.float64).reshape(-1)


def scaler_from_dict(d: Any) -> ScalerSpec:
    """The scaler of a model file's "scaler" field, checked.

    Raises
    ------
    ValueError
        When the type is not one of ``SCALER_TYPES``, a parameter makes the map not affine
        (``clip=True``), or an attribute is missing, not finite, of the wrong length, or a
        scale is not positive.
    """
    if not isinstance(d, dict):
        raise ValueError(f"must be an object, got {_kind(d)}")
    kind = d.get("type")
    if kind not in SCALER_TYPES:
        raise ValueError(f'"type" must be one of {sorted(SCALER_TYPES)}, got {_show(kind)}')
    params = d.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f'"params" must be an object, got {_kind(params)}')
    for key in ("with_mean", "with_std", "clip", "copy"):
        if key in params and not isinstance(params[key], bool):
            raise ValueError(f'"params"."{key}" must be true or false, got {_show(params[key])}')
    if params.get("clip", False):
        raise ValueError('"params"."clip" is true: a clipped MinMaxScaler is not an affine map')
    if "feature_range" in params:
        r = params["feature_range"]
        if not (isinstance(r, list) and len(r) == 2 and all(_is_number(t) for t in r) and r[0] < r[1]):
            raise ValueError(f'"params"."feature_range" must be two increasing numbers, got {_show(r)}')
    n = _count(d.get("n_features_in"), "n_features_in")
    names = d.get("feature_names_in")
    if names is not None:
        _check_names(names, "feature_names_in")
        if len(names) != n:
            raise ValueError(f"{len(names)} feature names for {n} features")
    raw = d.get("attributes")
    if not isinstance(raw, dict):
        raise ValueError(f'"attributes" must be an object, got {_kind(raw)}')
    spec = ScalerSpec(kind, dict(params), n, {}, None if names is None else list(names))
    used = {name for op, name in _used_attributes(spec)}
    for key in SCALER_TYPES[kind]:
        value = raw.get(key)
        if key == "n_samples_seen_":
            # A count, or one count per feature when the data had NaN (scikit-learn's layout).
            ok = _is_number(value) or (isinstance(value, list) and all(_is_number(t) for t in value))
            if not ok:
                raise ValueError(
                    f'"attributes"."n_samples_seen_" must be a number or a list of numbers, got {_show(value)}'
                )
            spec.attributes[key] = np.asarray(value) if isinstance(value, list) else value
        elif value is None and key not in used:
            # StandardScaler(with_std=False) has no scale_ and var_; with neither, no mean_.
            spec.attributes[key] = None
        else:
            spec.attributes[key] = _number_list(value, n, f'attributes"."{key}')
    scale = spec.attributes.get("scale_")
    if scale is not None and "scale_" in used and not np.all(scale > 0):
        j = int(np.flatnonzero(~(scale > 0))[0])
        # A scale <= 0 would flip (or erase) the order of a feature's values; scikit-learn's
        # scalers never fit one (a constant feature gets the scale 1).
        raise ValueError(f'"attributes"."scale_"[{j}] is {float(scale[j])!r}; a scale must be positive')
    return spec


def _used_attributes(spec: ScalerSpec) -> List[Tuple[str, str]]:
    """(operation, attribute) of the map, from the type and parameters alone."""
    if spec.name == "StandardScaler":
        out = []
        if spec.params.get("with_mean", True):
            out.append(("sub", "mean_"))
        if spec.params.get("with_std", True):
            out.append(("div", "scale_"))
        return out
    if spec.name == "MinMaxScaler":
        return [("mul", "scale_"), ("add", "min_")]
    return [("div", "scale_")]


def scaler_to_dict(scaler: Any) -> Dict[str, Any]:
    """The "scaler" field of a fitted StandardScaler, MinMaxScaler or MaxAbsScaler."""
    from sklearn import preprocessing

    kind = f"sklearn.preprocessing.{type(scaler).__name__}"
    # The classes themselves: a subclass may transform otherwise.
    if kind not in SCALER_TYPES or type(scaler) is not getattr(preprocessing, type(scaler).__name__):
        raise TypeError(f"not a scaler a model file holds: {type(scaler).__name__}")
    params = {k: _json_value(k, v) for k, v in scaler.get_params(deep=False).items()}
    attributes: Dict[str, Any] = {}
    for key in SCALER_TYPES[kind]:
        value = getattr(scaler, key, None)
        if value is None:
            attributes[key] = None
        elif np.ndim(value) == 0:
            attributes[key] = value.item() if isinstance(value, np.generic) else value
        else:
            attributes[key] = [v.item() for v in np.asarray(value).reshape(-1)]
    names = getattr(scaler, "feature_names_in_", None)
    return {
        "type": kind,
        "params": params,
        "n_features_in": int(scaler.n_features_in_),
        "feature_names_in": None if names is None else [str(n) for n in names],
        "attributes": attributes,
    }


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
    importances = training.get("feature_importances")
    if importances is not None and (
        not isinstance(importances, list) or not all(_is_number(v) and v >= 0 for v in importances)
    ):
        raise ValueError(
            f'"training"."feature_importances" must be a list of finite numbers >= 0, got {_show(importances)}'
        )
    history = training.get("history", [])
    if not isinstance(history, list):
        raise ValueError(f'"training"."history" must be a list of objects, got {_kind(history)}')
    for i, record in enumerate(history):
        if not isinstance(record, dict) or not all(_is_number(v) for v in record.values()):
            raise ValueError(f'"training"."history"[{i}] must be an object of finite numbers, got {_show(record)}')


#: Estimator parameters that describe how a model was run, not the model; not saved.
RUNTIME_PARAMS = ("callback", "n_jobs", "verbose")

#: The parameters of a model file that the core's TrainConfig checks: the core's training
#: parameters but the run-time ones.
TRAINING_PARAMS = tuple(p["name"] for p in _core.TRAINING_PARAMETERS if p["name"] not in RUNTIME_PARAMS)


def _check_params(params: Dict[str, Any]) -> None:
    """The estimator parameters of the file, checked by the core's TrainConfig (the rule
    ``SVMMap.fit`` applies), so that a loaded model can be refitted, cloned and saved."""
    # One key at a time, so that the error names the field whatever the core's message says.
    for key in TRAINING_PARAMS:
        if key in params:
            try:
                _core.TrainConfig(**{key: params[key]})
            except (TypeError, ValueError, OverflowError) as exc:
                raise ValueError(f'"params"."{key}": {exc}') from None
    # Then together, for any rule that ties parameters to each other.
    given = {k: params[k] for k in TRAINING_PARAMS if k in params}
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
    scaler: Optional[ScalerSpec] = None

    @property
    def n_input_features(self) -> int:
        """Columns the model takes: the scaler's or binner's input features, or the weights."""
        if self.scaler is not None:
            return self.scaler.n_features_in
        return self.binning.n_features_in if self.binning is not None else self.n_features

    @property
    def relevance_threshold(self) -> float:
        return float(self.params.get("relevance_threshold", _core.TrainConfig.DEFAULTS["relevance_threshold"]))

    def predict(self, X: Any, n_threads: int = 0) -> np.ndarray:
        """Scores of the rows of ``X`` (a float array, or a scipy CSR matrix for a model
        without binning), as the loaded estimator's ``predict`` computes them."""
        from ._validation import check_matrix

        if self.scaler is not None:
            dense = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
            if dense.ndim != 2 or dense.shape[1] != self.scaler.n_features_in:
                raise ValueError(f"X has shape {dense.shape}, but the model takes {self.scaler.n_features_in} features")
            X = self.scaler.transform(dense)
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
    importances = training.get("feature_importances")
    if importances is not None and len(importances) != n_features:
        raise ValueError(
            f'"training"."feature_importances" has {len(importances)} values but the model has {n_features} weights'
        )
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
    scaler = None
    if doc.get("scaler") is not None:
        try:
            scaler = scaler_from_dict(doc["scaler"])
        except ValueError as exc:
            raise ValueError(f"invalid scaler: {exc}") from None
        after = binning.n_features_in if binning is not None else n_features
        if scaler.n_features_in != after:
            what = "the binning takes" if binning is not None else "the model has"
            raise ValueError(f"the scaler has {scaler.n_features_in} features but {what} {after}")
    return ModelDocument(
        path=name,
        coef=coef,
        n_features=n_features,
        params=params,
        binning=binning,
        feature_names=doc.get("feature_names"),
        training=training,
        scaler=scaler,
    )


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


def svm_document(svm: Any, binner: Any = None, scaler: Any = None) -> dict:
    """The model file's content (see ``docs/model-format.md``) of a fitted SVMMap (or the
    BareSVMMap that ``svmmap learn`` trains), with the thresholds of the Binner and the affine map
    of the scaler before it, as a dict. Written here, beside the reader, so that the estimator
    saves itself without importing the module that builds estimators from files."""
    from . import __version__

    svm._check_fitted()
    # In the order of their names (scikit-learn's get_params order), whatever object holds them,
    # so that the same parameters are the same bytes in the file.
    params = {k: _json_value(k, v) for k, v in sorted(svm.get_params(deep=False).items()) if k not in RUNTIME_PARAMS}
    # A training parameter whose default is None (the core's choice) is left out at that default, so that files of models trained without it stay as they were (and
    # readers that predate the parameter read the same fields); reading gives it None again.
    optional = {p["name"] for p in _core.TRAINING_PARAMETERS if p["default"] is None}
    params = {k: v for k, v in params.items() if not (k in optional and v is None)}
    names = getattr(svm, "feature_names_in_", None)
    scaling = None
    input_names = None
    if scaler is not None:
        scaling = scaler_to_dict(scaler)
        # The pipeline's input names (a DataFrame's columns) are the scaler's; the steps after
        # it see its array output, and the loaded pipeline gives them arrays again.
        input_names = scaling["feature_names_in"]
        if binner is None and names is None:
            names = input_names
    binning = None
    if binner is not None:
        binning = binner.to_dict()
        if scaler is not None:
            binning["feature_names_in"] = None
        # The binner's own input names (a DataFrame's columns) travel with it; the model's
        # features are then the binner's outputs ("name>threshold").
        if names is None:
            names = binner.get_feature_names_out(input_names)
    doc = {
        "format": "svmmap-model",
        # A file without a scaler keeps version 1, which every svmmap reads.
        "version": _core.MODEL_PLAIN_FORMAT_VERSION if scaler is None else _core.MODEL_FORMAT_VERSION,
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
    importances = getattr(svm, "feature_importances_", None)
    if importances is not None:
        # One share per weight (all zeros for w = 0), kept so that a loaded model reports the
        # importances it was trained with: they need the training data's spread, which the
        # file does not hold otherwise.
        doc["training"]["feature_importances"] = [float(v) for v in importances]
    if scaling is not None:
        doc["scaler"] = scaling
    return doc


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
