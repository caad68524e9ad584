"""Model files and estimators: ``save_model`` writes a fitted SVMMap, or a Pipeline of an
optional scaler (StandardScaler, MinMaxScaler, MaxAbsScaler), an optional Binner and SVMMap, as
a model file; ``load_model`` builds the estimators from one.

Reading, checking and writing a file is ``svmmap._files.model_file``'s (``read_model``,
``svm_document``, ``write_model``): the command line scores with it without scikit-learn, and
``SVMMap.save`` writes through it, so the estimator does not import this module, which builds
estimators (the estimator classes are imported inside the functions that need them, so that
``import svmmap.persistence`` stays light).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._files.model_file import RUNTIME_PARAMS, read_model, svm_document, write_model
from ._files.text import PathLike

__all__ = ["save_model", "load_model", "model_document", "pipeline_parts", "split_pipeline"]

#: What a saved or exported pipeline may hold, in the words of the error messages.
SUPPORTED_PIPELINES = (
    "a fitted svmmap.SVMMap or a Pipeline of an optional scaler (sklearn.preprocessing.StandardScaler, "
    "MinMaxScaler or MaxAbsScaler), an optional svmmap.Binner and an svmmap.SVMMap, in this order"
)


def pipeline_parts(model: Any) -> tuple:
    """(scaler or None, binner or None, the SVMMap) of a fitted SVMMap or a Pipeline of an
    optional scaler, an optional Binner and an SVMMap ("passthrough" steps are skipped).

    Raises
    ------
    TypeError
        Naming the step that is not supported (or out of place) and what is supported.
    """
    from .estimator import SVMMap

    if isinstance(model, SVMMap):
        return None, None, model
    steps = getattr(model, "steps", None)
    if steps is None:
        # A search (SVMMapCV, GridSearchCV) is not a model: its refitted model is.
        hint = "; save or export its best_estimator_" if hasattr(model, "best_estimator_") else ""
        raise TypeError(f"expected {SUPPORTED_PIPELINES}; got {type(model).__name__}{hint}")
    from sklearn import preprocessing

    from ._fit.scaler import SCALER_TYPES
    from .binning import Binner

    active = [
        (name, step)
        for name, step in steps
        if step is not None and not (isinstance(step, str) and step == "passthrough")
    ]
    scalers = tuple(getattr(preprocessing, kind.rsplit(".", 1)[1]) for kind in SCALER_TYPES)
    # The steps allowed before the SVMMap, in their order, each at most once. The classes
    # themselves, not subclasses, which may transform otherwise.
    slots = [lambda s: type(s) in scalers, lambda s: type(s) is Binner]
    found: list = [None, None]
    at = 0
    for i, (name, step) in enumerate(active):
        if i == len(active) - 1 and isinstance(step, SVMMap):
            if isinstance(found[0], preprocessing.MinMaxScaler) and found[0].clip:
                raise TypeError(
                    f"step {active[0][0]!r} (MinMaxScaler(clip=True)) is not an affine map and cannot be "
                    f"saved or exported; use clip=False. Supported: {SUPPORTED_PIPELINES}"
                )
            return found[0], found[1], step
        while at < len(slots) and not slots[at](step):
            at += 1
        if at == len(slots):
            where = "last" if i == len(active) - 1 else "here"
            raise TypeError(
                f"step {name!r} ({type(step).__name__}) is not supported {where} in a model that is saved or "
                f"exported. Supported: {SUPPORTED_PIPELINES}"
            )
        found[at] = step
        at += 1
    raise TypeError(f"the pipeline has no svmmap.SVMMap as its last step. Supported: {SUPPORTED_PIPELINES}")


def split_pipeline(model: Any) -> tuple:
    """(binner or None, the SVMMap) of a fitted SVMMap or Pipeline(Binner, SVMMap); a
    pipeline with a scaler is refused (``pipeline_parts`` takes it)."""
    scaler, binner, svm = pipeline_parts(model)
    if scaler is not None:
        raise TypeError(f"a pipeline with a scaler ({type(scaler).__name__}): use pipeline_parts")
    return binner, svm


def model_document(model: Any) -> dict:
    """The model file's content (see ``docs/model-format.md``) as a dict."""
    scaler, binner, svm = pipeline_parts(model)
    return svm_document(svm, binner, scaler)


def save_model(model: Any, path: PathLike) -> None:
    """Write a fitted model as versioned JSON, atomically (read it with ``svmmap.load_model``).

    Parameters
    ----------
    model : svmmap.SVMMap or sklearn.pipeline.Pipeline
        A fitted ``SVMMap``, or a fitted Pipeline of an optional scaler (scikit-learn's
        ``StandardScaler``, ``MinMaxScaler`` with ``clip=False``, or ``MaxAbsScaler``: an
        affine map per feature, stored in the file's "scaler" field), an optional
        ``svmmap.Binner`` (thresholds in the "binning" field) and an ``SVMMap``, in this order.
    path : str or path-like
        Where to write. A reader sees either the old file or the whole new one. A name ending
        in ``.gz`` is written gzip-compressed; ``load_model`` reads either.

    Raises
    ------
    TypeError
        When the pipeline holds another step (the message names it and what is supported);
        nothing is written then.
    ValueError
        When the file would not load again (``load_model`` would refuse it: a parameter set to
        a value the estimator refuses, such as ``C=0``, or repeated feature names); nothing is
        written then.

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
    # Written only if load_model can build the estimators again from the file.
    try:
        doc = model_document(model)
    except ValueError as exc:
        # A parameter the estimators refuse (a Binner's n_thresholds=0 set after fit): the
        # file would not load, and nothing is written.
        raise ValueError(
            f"{os.fspath(path)}: the model was not written, since svmmap could not load it again: {exc}"
        ) from None
    write_model(path, doc, check=_estimators_of)


def load_model(path: PathLike) -> Any:
    """Read a model written by ``svmmap.save_model``, ``SVMMap.save`` or ``svmmap learn``.

    Returns
    -------
    model : svmmap.SVMMap, or a fitted Pipeline when the file holds a scaler or binning
        thresholds: its steps are named "scale" (the scaler), "bin" (the Binner) and "svm". Its parameters and fitted attributes (``coef_``, ``n_features_in_``,
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
    from ._core import ModelFormatError

    document = read_model(path)
    try:
        return _estimators_of(document)
    except ValueError as exc:
        raise ModelFormatError(f"{document.path}: {exc}") from None


def _estimators_of(document: Any) -> Any:
    """The SVMMap, or the Pipeline (scaler, Binner, SVMMap), of a checked model document; ValueError when
    the estimators refuse what the document holds. ``save_model`` runs it before writing."""
    from .estimator import SVMMap

    params = document.params
    known = set(SVMMap._get_param_names())
    # How a model was run (callback, n_jobs, verbose) is not saved; a file that holds such
    # values anyway does not get to set them, so a bad one cannot break predict.
    model = SVMMap(**{k: v for k, v in params.items() if k in known and k not in RUNTIME_PARAMS})
    model.coef_ = document.coef
    model.n_features_in_ = document.n_features
    names = document.feature_names
    if names is not None and document.binning is None and document.scaler is None:
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
    if training.get("feature_importances") is not None:
        model.feature_importances_ = np.asarray(training["feature_importances"], dtype=np.float64)
    steps: list = [("svm", model)]
    if document.binning is not None:
        steps.insert(0, ("bin", _binner_of(document.binning)))
    if document.scaler is not None:
        steps.insert(0, ("scale", _scaler_of(document.scaler)))
    if len(steps) == 1:
        return model
    from sklearn.pipeline import Pipeline

    return Pipeline(steps)


def _scaler_of(spec: Any) -> Any:
    """The fitted scikit-learn scaler of a checked "scaler" field, with the attributes that were
    saved (so that it transforms bit for bit as the saved one did)."""
    from sklearn import preprocessing

    cls = getattr(preprocessing, spec.name)
    params = {k: v for k, v in spec.params.items() if k in cls._get_param_names()}
    if "feature_range" in params:
        params["feature_range"] = tuple(params["feature_range"])
    scaler = cls(**params)
    for key, value in spec.attributes.items():
        setattr(scaler, key, value)
    scaler.n_features_in_ = spec.n_features_in
    if spec.feature_names_in is not None:
        scaler.feature_names_in_ = np.asarray(spec.feature_names_in, dtype=object)
    return scaler


def _binner_of(binning: Any) -> Any:
    from .binning import Binner

    # read_model checked these parameters (binning.config is the core's BinnerConfig of them).
    return Binner._from_spec(binning)
