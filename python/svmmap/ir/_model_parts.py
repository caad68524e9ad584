"""A fitted model read as the exports need it: its scaler, Binner and SVMMap, the step functions and
surfaces of a binned model in raw feature units, the feature names, the constant score offset,
and the float32 neighbours of a threshold (below ir.export's Solr, Elasticsearch and ONNX
writers).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._fit.scaler import folded_linear, raw_thresholds, scaler_spec
from .._validation import check_characters, refuse_str


def _parts(model: Any) -> Tuple[Any, Any, Any]:
    """(scaler spec or None, binner or None, SVMMap) of a fitted model or pipeline; the scaler
    as the model file holds it, checked (positive scales)."""
    from ..persistence import pipeline_parts

    scaler, binner, svm = pipeline_parts(model)
    svm._check_fitted()
    spec = None
    if scaler is not None:
        try:
            spec = scaler_spec(scaler)
        except ValueError as exc:
            raise ValueError(f"the {type(scaler).__name__} cannot be exported: {exc}") from None
    return spec, binner, svm


def _input_names(spec: Any, binner: Any, svm: Any) -> Any:
    """The fitted names of the model's input columns (a DataFrame's), or None."""
    if spec is not None:
        return spec.feature_names_in
    return getattr(binner if binner is not None else svm, "feature_names_in_", None)


def score_offset(model: Any) -> float:
    """The constant by which the Solr and Elasticsearch scores differ from ``predict``:
    ``predict(X) == engine score + score_offset(model)`` (up to float32 rounding).

    It is 0 unless a scaler is folded into a linear model's weights (the engines' linear models
    have no constant term); a constant added to every document changes no ranking.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from svmmap import SVMMap
    >>> from svmmap.ir.export import score_offset, to_solr
    >>> X = np.array([[1.0, 10.0], [0.0, 30.0], [0.9, 12.0], [0.1, 28.0]])
    >>> model = make_pipeline(StandardScaler(), SVMMap(C=10.0)).fit(X, [1, 0, 1, 0], svmmap__qid=[1, 1, 2, 2])
    >>> w = to_solr(model)["params"]["weights"]
    >>> engine = X @ np.array([w["f1"], w["f2"]])
    >>> bool(np.allclose(engine + score_offset(model), model.predict(X)))
    True
    """
    spec, binner, svm = _parts(model)
    if binner is not None:
        return 0.0
    return folded_linear(spec, svm.coef_)[1]


def _raw_step_functions(spec: Any, binner: Any, svm: Any) -> list:
    """The step functions of a binned model over the raw features: the scaler folded into
    the thresholds (exactly, see ``svmmap._fit.scaler.raw_threshold``)."""
    import dataclasses

    from ..binning import StepSurface

    steps = _step_functions(binner, svm)
    if spec is None:
        return steps
    out = []
    for j, s in enumerate(steps):
        if isinstance(s, StepSurface):
            # A pair's surface (after the step functions): both features' coarse thresholds.
            first, second = (
                np.asarray(raw_thresholds(spec, f, k), dtype=np.float64) for f, k in zip(s.index, s.thresholds)
            )
            out.append(dataclasses.replace(s, thresholds=(first, second)))
            continue
        raw = raw_thresholds(spec, j, s.thresholds)
        out.append(dataclasses.replace(s, thresholds=np.asarray(raw, dtype=np.float64)))
    return out


def _surfaces(steps: list) -> Tuple[list, list]:
    """(the step functions, the pairs' surfaces that have cells) of ``_raw_step_functions``."""
    from ..binning import StepSurface

    functions = [s for s in steps if not isinstance(s, StepSurface)]
    surfaces = [s for s in steps if isinstance(s, StepSurface) and all(len(k) for k in s.thresholds)]
    return functions, surfaces


def _names(given: Optional[Sequence[str]], fitted: Any, n: int, what: str) -> List[str]:
    if given is None:
        given = [f"f{j + 1}" for j in range(n)] if fitted is None else [str(f) for f in fitted]
    refuse_str(given, "feature_names", "a list of feature names (str), one per input feature")
    names = [str(f) for f in given]
    blank = [j for j, f in enumerate(names) if not f.strip()]
    if blank:
        raise ValueError(
            f"feature_names[{blank[0]}] is {names[blank[0]]!r}: the engines identify features by a non-empty name"
        )
    for j, f in enumerate(names):
        check_characters(f, f"feature_names[{j}]", "give names of characters")
    if len(names) != n:
        raise ValueError(f"{len(names)} feature names given for {n} {what}")
    if len(set(names)) != len(names):
        dup = sorted({f for f in names if names.count(f) > 1})
        raise ValueError(f"feature names must be unique; repeated: {dup[:5]}")
    return names


def _step_functions(binner: Any, svm: Any) -> list:
    if binner.missing != "error":
        raise ValueError(
            f"the Binner has missing={binner.missing!r}: a learned score for missing values cannot be "
            "exported, since in Solr and Elasticsearch a feature that does not match is 0, not missing; "
            "refit the Binner with missing='error'"
        )
    from ..binning import piecewise_scores

    return piecewise_scores(binner, svm.coef_)


#: The largest float32: Solr and Elasticsearch hold every number of a model as a float32, and
#: read a larger one as infinity (or refuse the text "Infinity" that JSON cannot hold).
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _engine_number(value: float, what: str) -> float:
    """``value`` as the float32 the engines hold, or a ValueError naming ``what`` when it is
    beyond float32's range: the file would hold infinity, which the engines cannot read or
    which makes every score infinite."""
    rounded = float(np.float32(value)) if abs(float(value)) <= _FLOAT32_MAX else float("inf")
    if not np.isfinite(rounded):
        raise ValueError(
            f"{what} is {float(value)!r}, beyond the float32 range (+-{_FLOAT32_MAX:.4g}) in which Solr and "
            "Elasticsearch hold a model's numbers; the model cannot be exported to them (retrain with a "
            "smaller C or rescaled features, or export to ONNX in float64)"
        )
    return rounded


def _engine_weights(names: List[str], weights: np.ndarray) -> Dict[str, float]:
    """The linear weights by feature name, each checked to fit float32 (``_engine_number``);
    written as the float64 values, which the engines round to float32 as they read them."""
    for f, w in zip(names, weights):
        _engine_number(w, f"the weight of feature {f!r}")
    return {f: float(w) for f, w in zip(names, weights)}


def _largest_f32_at_most(t: float) -> np.float32:
    a = np.float32(t)
    if float(a) > t:
        a = np.nextafter(a, np.float32(-np.inf))
    return a


def _smallest_f32_above(t: float) -> np.float32:
    a = np.float32(t)
    if float(a) <= t:
        a = np.nextafter(a, np.float32(np.inf))
    return a
