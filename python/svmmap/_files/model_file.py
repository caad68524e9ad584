"""Model files read without scikit-learn: the checked contents of a file written by
``save_model``, and scoring with them.

``load_model`` builds estimators from what ``read_model`` returns; the command line scores with
``ModelDocument.predict`` directly, so that ``svmmap classify`` does not import scikit-learn or
SciPy. Both paths read, check and score through this module, so they cannot disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .. import _core
from .._fit.defaults import TRAINING_DEFAULTS
from .._fit.fitted import (
    BinningSpec,
    binning_from_dict,
    check_names,
    count,
    is_number,
    json_value,
    kind_of,
    show,
)
from .._fit.scaler import ScalerSpec, scaler_from_dict, scaler_to_dict
from .model_json import FORMAT_NAME, FORMAT_VERSION, PLAIN_FORMAT_VERSION, line_of, parse_model_text
from .model_writing import checked_fields, document_text, json_document
from .text import path_name

__all__ = ["ModelDocument", "read_model", "svm_document", "write_model"]


class FieldError(ValueError):
    """A value of a model document that ``check_document`` refuses, with the path (keys and
    indices) of the field it is about, so that ``read_model`` names the file's line."""

    def __init__(self, message: str, path: Tuple[Any, ...]) -> None:
        super().__init__(message)
        self.path = path


#: A field path at the start of a message: "params"."C", "thresholds"[2], "training"."history"[3].
_LEADING_PATH = re.compile(r'^"([^"]*)"((?:\."[^"]*"|\[\d+\])*)')
_PATH_STEP = re.compile(r'\."([^"]*)"|\[(\d+)\]')


def _leading_path(message: str) -> Tuple[Any, ...]:
    """The field path a message of the checks starts with, as keys and indices (none when it
    starts otherwise)."""
    m = _LEADING_PATH.match(message)
    if m is None:
        return ()
    steps = [int(index) if index else key for key, index in _PATH_STEP.findall(m.group(2))]
    return (m.group(1), *steps)


def _within(exc: ValueError, *field: Any, prefix: str = "") -> FieldError:
    """`exc` (a check's error, whose message may start with the path below `field`) as a
    FieldError of `field` and that path, its message after `prefix`."""
    return FieldError(f"{prefix}{exc}", field + _leading_path(str(exc)))


#: The training summary's fields and their types, as ``model_document`` writes them; a model
#: that is loaded must be savable again, so other types are refused at load.
_TRAINING_NUMBERS = ("objective", "dual_objective", "gap")
_TRAINING_COUNTS = ("n_iter", "n_cuts", "n_queries")


def _check_training(training: Dict[str, Any]) -> None:
    for key in _TRAINING_NUMBERS:
        # null: unknown (a model whose file had no training summary, saved again).
        if training.get(key) is not None and not is_number(training[key]):
            raise ValueError(f'"training"."{key}" must be a finite number or null, got {show(training[key])}')
    for key in _TRAINING_COUNTS:
        if key in training:
            count(training[key], f'training"."{key}')
    if "converged" in training and not isinstance(training["converged"], bool):
        raise ValueError(f'"training"."converged" must be true or false, got {show(training["converged"])}')
    if "stop_reason" in training:
        from typing import get_args

        from .._typing import StopReason

        if training["stop_reason"] not in get_args(StopReason):
            raise ValueError(
                f'"training"."stop_reason" must be one of {get_args(StopReason)}, got {show(training["stop_reason"])}'
            )
    skipped = training.get("n_queries_skipped", {})
    if not isinstance(skipped, dict):
        raise ValueError(f'"training"."n_queries_skipped" must be an object, got {kind_of(skipped)}')
    for k, v in skipped.items():
        count(v, f'training"."n_queries_skipped"."{k}')
    importances = training.get("feature_importances")
    if importances is not None and (
        not isinstance(importances, list) or not all(is_number(v) and v >= 0 for v in importances)
    ):
        raise ValueError(
            f'"training"."feature_importances" must be a list of finite numbers >= 0, got {show(importances)}'
        )
    history = training.get("history", [])
    if not isinstance(history, list):
        raise ValueError(f'"training"."history" must be a list of objects, got {kind_of(history)}')
    for i, record in enumerate(history):
        if not isinstance(record, dict) or not all(is_number(v) for v in record.values()):
            raise ValueError(f'"training"."history"[{i}] must be an object of finite numbers, got {show(record)}')


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
        return float(self.params.get("relevance_threshold", TRAINING_DEFAULTS["relevance_threshold"]))

    def predict(self, X: Any, n_threads: int = 0) -> np.ndarray:
        """Scores of the rows of ``X`` (a float array, or a scipy CSR matrix for a model
        without binning), as the loaded estimator's ``predict`` computes them."""
        from .._validation import as_array, check_matrix, densified

        advice = "this model scales or bins dense columns: score the rows in batches"
        if self.scaler is not None:
            dense = densified(X, "X", advice) if hasattr(X, "toarray") else as_array(X, "X")
            if dense.ndim != 2 or dense.shape[1] != self.scaler.n_features_in:
                raise ValueError(f"X has shape {dense.shape}, but the model takes {self.scaler.n_features_in} features")
            X = self.scaler.transform(dense)
        if self.binning is not None:
            if hasattr(X, "toarray"):
                X = densified(X, "X", advice)
            arr = np.ascontiguousarray(as_array(X, "X"))
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
    """Reads and checks a model file (``model_json`` checks its format and version).

    Raises
    ------
    svmmap.ModelFormatError
        When the file is not a valid svmmap model, or its binning does not fit its weights.
    """
    from .._core import ModelFormatError

    name = path_name(path)
    text = _core.read_model_text(name)
    doc = parse_model_text(text, name)
    try:
        return check_document(doc, name)
    except FieldError as exc:
        # The line of the field, as a syntax or type error names its line (the text is walked
        # again only now, when a value is refused).
        line = line_of(text, exc.path)
        raise ModelFormatError(f"{name}:{line}: {exc}" if line is not None else f"{name}: {exc}") from None


def check_document(doc: Dict[str, Any], name: str) -> ModelDocument:
    """The checks of a model document (beyond the core's format check) that ``read_model``
    applies, as a ``ModelDocument``; ``write_model`` applies them before it writes, so that a
    file that is written always loads.

    Raises
    ------
    FieldError
        A ValueError naming the field that is refused, with its path (``FieldError.path``).
    """
    coef = np.asarray(doc["coef"], dtype=np.float64)
    n_features = int(doc["n_features"])
    params = doc.get("params") or {}
    training = doc.get("training") or {}
    # The messages of these checks start with the field's path ("params"."C" ...).
    try:
        _check_params(params)
    except ValueError as exc:
        raise _within(exc) from None
    try:
        _check_training(training)
    except ValueError as exc:
        raise _within(exc) from None
    importances = training.get("feature_importances")
    if importances is not None and len(importances) != n_features:
        raise FieldError(
            f'"training"."feature_importances" has {len(importances)} values but the model has {n_features} weights',
            ("training", "feature_importances"),
        )
    if doc.get("feature_names") is not None:
        try:
            check_names(doc["feature_names"], "feature_names")
        except ValueError as exc:
            raise _within(exc) from None
    binning = None
    if doc.get("binning") is not None:
        # The Binner's messages name its fields from its own object down ("thresholds"[2]).
        try:
            binning = binning_from_dict(doc["binning"])
        except ValueError as exc:
            raise _within(exc, "binning", prefix="invalid binning: ") from None
        if binning.n_output != n_features:
            raise FieldError(
                f"the binning produces {binning.n_output} features but the model has {n_features} weights",
                ("binning", "n_output_features"),
            )
    scaler = None
    if doc.get("scaler") is not None:
        try:
            scaler = scaler_from_dict(doc["scaler"])
        except ValueError as exc:
            raise _within(exc, "scaler", prefix="invalid scaler: ") from None
        after = binning.n_features_in if binning is not None else n_features
        if scaler.n_features_in != after:
            what = "the binning takes" if binning is not None else "the model has"
            raise FieldError(
                f"the scaler has {scaler.n_features_in} features but {what} {after}", ("scaler", "n_features_in")
            )
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


def _finite_or_none(value: Any) -> Optional[float]:
    v = float(value)
    return v if np.isfinite(v) else None


def _real_weights(coef: Any) -> List[float]:
    """The weights as floats; complex weights (set by hand: no fit makes them) are refused
    unless every imaginary part is 0, rather than cut to their real parts by ``float`` with
    nothing but numpy's ComplexWarning."""
    values = np.asarray(coef)
    if np.iscomplexobj(values):
        imaginary = np.flatnonzero(values.imag != 0)
        if imaginary.size:
            j = int(imaginary[0])
            raise ValueError(
                f"coef_[{j}] is the complex number {complex(values[j])!r}; a model's weights are real numbers, and the "
                "model was not written"
            )
        values = values.real
    return [float(c) for c in values]


def svm_document(svm: Any, binner: Any = None, scaler: Any = None) -> dict:
    """The model file's content (see ``docs/model-format.md``) of a fitted SVMMap (or the
    BareSVMMap that ``svmmap learn`` trains), with the thresholds of the Binner and the affine map
    of the scaler before it, as a dict. Written here, beside the reader, so that the estimator
    saves itself without importing the module that builds estimators from files."""
    from .. import __version__

    svm._check_fitted()
    # In the order of their names (scikit-learn's get_params order), whatever object holds them,
    # so that the same parameters are the same bytes in the file.
    params = {k: json_value(k, v) for k, v in sorted(svm.get_params(deep=False).items()) if k not in RUNTIME_PARAMS}
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
        "format": FORMAT_NAME,
        # A file without a scaler keeps version 1, which every svmmap reads.
        "version": PLAIN_FORMAT_VERSION if scaler is None else FORMAT_VERSION,
        "svmmap_version": __version__,
        "n_features": int(svm.n_features_in_),
        "coef": _real_weights(svm.coef_),
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
    """Writes a model document atomically, only if it loads: the document as JSON holds it
    (``model_writing.json_document``: finite numbers, ...) is checked by ``check_document`` (and
    ``check``, the loader's further checks, such as the Binner's parameters) and as the reader
    checks the file's format (``model_writing.checked_fields``), before its text is made and
    written. A model whose parameters were set to values the reader refuses
    (``set_params(C=0)``, ``loss="mapp"``) would otherwise be written and then refused forever.

    Raises
    ------
    ValueError
        When the file would not load; nothing is written.
    """
    name = path_name(path, writing=True)
    # The document is checked in memory, as a reader checks its text, and its text made once:
    # encoding it and parsing it back (twice) first took longer than the rest of a save.
    plain = json_document(doc, name)
    try:
        document = check_document(plain, name)
        if check is not None:
            check(document)
    except ValueError as exc:
        raise ValueError(f"{name}: the model was not written, since svmmap could not load it again: {exc}") from None
    _core.write_model_text(name, document_text(checked_fields(plain, name)))
    return document
