"""Model files and estimators: ``save_model`` writes a fitted SVMMap (or Pipeline(Binner,
SVMMap)) as a model file, ``load_model`` builds the estimators from one.

Reading and checking a file is ``svmmap._model_file``'s (``read_model``), which the command
line also scores with directly, without scikit-learn. The estimator classes are imported inside
the functions that build or inspect them: ``svmmap.estimator`` imports this module for
``SVMMap.save``, so this module must not import it at import time.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

import numpy as np

from . import _core
from ._model_file import read_model
from ._text import PathLike

__all__ = ["save_model", "load_model", "model_document", "split_pipeline"]


#: Estimator parameters that describe how a model was run, not the model; not saved.
_RUNTIME_PARAMS = ("callback", "n_jobs", "verbose")


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


def split_pipeline(model: Any) -> tuple:
    """(binner or None, the SVMMap) of a fitted SVMMap or Pipeline(Binner, SVMMap)."""
    from .estimator import SVMMap

    if isinstance(model, SVMMap):
        return None, model
    steps = getattr(model, "steps", None)
    if steps is not None and len(steps) == 2:
        from .binning import Binner

        first, last = steps[0][1], steps[1][1]
        if isinstance(first, Binner) and isinstance(last, SVMMap):
            return first, last
    raise TypeError(
        "save_model takes a fitted svmmap.SVMMap or a Pipeline of exactly (svmmap.Binner, svmmap.SVMMap), "
        f"got {type(model).__name__}"
    )


def model_document(model: Any) -> dict:
    """The model file's content (see ``docs/model-format.md``) as a dict."""
    from . import __version__

    binner, svm = split_pipeline(model)
    svm._check_fitted()
    params = {k: _json_value(k, v) for k, v in svm.get_params(deep=False).items() if k not in _RUNTIME_PARAMS}
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


def save_model(model: Any, path: PathLike) -> None:
    """Write a fitted model as versioned JSON, atomically (read it with ``svmmap.load_model``).

    Parameters
    ----------
    model : svmmap.SVMMap or sklearn.pipeline.Pipeline
        A fitted ``SVMMap``, or a fitted ``Pipeline([("bin", svmmap.Binner()), ("svm",
        svmmap.SVMMap())])``, whose thresholds are stored in the file's "binning" field.
    path : str or path-like
        Where to write. A reader sees either the old file or the whole new one.

    Notes
    -----
    The format (``docs/model-format.md``) holds the weights, the estimator's parameters (loss,
    C, eps, ...), the feature names, the binning thresholds and the training summary
    (objectives, gap, iterations, per-iteration history). ``svmmap learn`` writes the same
    format and ``svmmap classify`` reads it.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import svmmap
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 0.8]])
    >>> model = svmmap.SVMMap(C=10.0).fit(X, [1, 0, 1, 0], qid=[1, 1, 2, 2])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
    >>> svmmap.save_model(model, path)
    >>> loaded = svmmap.load_model(path)
    >>> bool(np.array_equal(loaded.coef_, model.coef_)), loaded.C
    (True, 10.0)
    """
    doc = model_document(model)
    _core.save_model_json(os.fspath(path), json.dumps(doc, allow_nan=False))


def load_model(path: PathLike) -> Any:
    """Read a model written by ``svmmap.save_model``, ``SVMMap.save`` or ``svmmap learn``.

    Returns
    -------
    model : svmmap.SVMMap, or a fitted Pipeline(Binner, SVMMap) when the file holds binning
        thresholds. Its parameters and fitted attributes (``coef_``, ``n_features_in_``,
        ``feature_names_in_``, ``objective_``, ``history_`` ...) are those that were saved.

    Raises
    ------
    svmmap.ModelFormatError
        When the file is truncated, corrupted, not an svmmap model, of a newer format version
        (the message says so and which version this svmmap reads), or inconsistent (e.g.
        ``n_features`` and the number of weights differ).
    FileNotFoundError, OSError
        When the file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from svmmap import Binner, SVMMap, load_model, save_model
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 0.8]])
    >>> model = make_pipeline(Binner(), SVMMap(C=10.0)).fit(X, [1, 0, 1, 0], svmmap__qid=[1, 1, 2, 2])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
    >>> save_model(model, path)
    >>> loaded = load_model(path)  # the file holds thresholds, so this is a Pipeline again
    >>> type(loaded).__name__, bool(np.array_equal(loaded.predict(X), model.predict(X)))
    ('Pipeline', True)
    """
    from .estimator import SVMMap

    document = read_model(path)
    params = document.params
    known = set(SVMMap._get_param_names())
    # How a model was run (callback, n_jobs, verbose) is not saved; a file that holds such
    # values anyway does not get to set them, so a bad one cannot break predict.
    model = SVMMap(**{k: v for k, v in params.items() if k in known and k not in _RUNTIME_PARAMS})
    model.coef_ = document.coef
    model.n_features_in_ = document.n_features
    names = document.feature_names
    if names is not None and document.binning is None:
        model.feature_names_in_ = np.asarray(names, dtype=object)
    training = document.training
    unknown = float("nan")
    model.objective_ = unknown if training.get("objective") is None else training["objective"]
    model.dual_objective_ = unknown if training.get("dual_objective") is None else training["dual_objective"]
    model.gap_ = unknown if training.get("gap") is None else training["gap"]
    model.n_iter_ = training.get("n_iter", 0)
    model.n_cuts_ = training.get("n_cuts", 0)
    model.converged_ = training.get("converged", False)
    model.stop_reason_ = training.get("stop_reason", "converged" if model.converged_ else "max_iter")
    model.n_queries_ = training.get("n_queries", 0)
    model.n_queries_skipped_ = training.get("n_queries_skipped", {})
    model.history_ = training.get("history", [])
    if document.binning is None:
        return model
    from sklearn.pipeline import Pipeline

    from .binning import Binner

    binning = document.binning
    # read_model checked these parameters (binning.config is the core's BinnerConfig of them).
    binner = Binner(**{k: v for k, v in binning.params.items() if k in Binner._get_param_names()})
    binner.thresholds_ = binning.thresholds
    binner.n_features_in_ = binning.n_features_in
    if binning.feature_names_in is not None:
        binner.feature_names_in_ = np.asarray(binning.feature_names_in, dtype=object)
    binner.n_output_features_ = binning.n_output
    return Pipeline([("bin", binner), ("svm", model)])
