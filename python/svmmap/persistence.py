"""Model files and estimators: ``save_model`` writes a fitted SVMMap (or Pipeline(Binner,
SVMMap)) as a model file, ``load_model`` builds the estimators from one.

Reading, checking and writing a file is ``svmmap._model_file``'s (``read_model``,
``svm_document``, ``write_model``): the command line scores with it without scikit-learn, and
``SVMMap.save`` writes through it, so the estimator does not import this module, which builds
estimators (the estimator classes are imported inside the functions that need them, so that
``import svmmap.persistence`` stays light).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._model_file import RUNTIME_PARAMS, read_model, svm_document, write_model
from ._text import PathLike

__all__ = ["save_model", "load_model", "model_document", "split_pipeline"]


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
    binner, svm = split_pipeline(model)
    return svm_document(svm, binner)


def save_model(model: Any, path: PathLike) -> None:
    """Write a fitted model as versioned JSON, atomically (read it with ``svmmap.load_model``).

    Parameters
    ----------
    model : svmmap.SVMMap or sklearn.pipeline.Pipeline
        A fitted ``SVMMap``, or a fitted ``Pipeline([("bin", svmmap.Binner()), ("svm",
        svmmap.SVMMap())])``, whose thresholds are stored in the file's "binning" field.
    path : str or path-like
        Where to write. A reader sees either the old file or the whole new one.

    Raises
    ------
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
    from ._core import ModelFormatError

    document = read_model(path)
    try:
        return _estimators_of(document)
    except ValueError as exc:
        raise ModelFormatError(f"{document.path}: {exc}") from None


def _estimators_of(document: Any) -> Any:
    """The SVMMap, or Pipeline(Binner, SVMMap), of a checked model document; ValueError when
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
