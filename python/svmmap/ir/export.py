"""Learned models as search engines' learning-to-rank models: Solr LTR and Elasticsearch LTR.

A linear svmmap model (``SVMMap``) becomes

- for Solr's LTR module, an ``org.apache.solr.ltr.model.LinearModel`` (upload it to
  ``/solr/<collection>/schema/model-store``);
- for the Elasticsearch LTR plugin (o19s), a ``model/linear`` model (the body of
  ``POST _ltr/_featureset/<featureset>/_createmodel``).

A model on binned features (``Pipeline([("bin", svmmap.Binner()), ("svm", SVMMap())])``) scores a
document by a sum over base features of step functions of their values (Yue et al. 2007, 4.2).
Neither engine's linear model has a threshold transform (Solr's normalizers and Elasticsearch's
``feature_normalizers`` are affine: min-max and standard), but both run additive tree ensembles,
and a step function of one feature *is* a regression tree on that feature. So the binned model
is exported, exactly, as one tree per base feature over the engine's own base features:

- Solr: ``org.apache.solr.ltr.model.MultipleAdditiveTreesModel``;
- Elasticsearch: ``model/xgboost+json`` (XGBoost's JSON dump layout).

Each tree is balanced (depth about log2 of the number of thresholds) and its leaves hold the
step values, so the engine adds the same numbers svmmap does. What each target supports:

============================  =====================  =================================
svmmap model                  Solr LTR               Elasticsearch LTR (o19s)
============================  =====================  =================================
SVMMap (linear)               LinearModel            model/linear
Pipeline(Binner, SVMMap)      MultipleAdditive-      model/xgboost+json (one tree per
                              TreesModel (one tree   base feature)
                              per base feature)
Binner(missing="indicator")   not exported: a feature that does not match is 0 in both
                              engines, never "missing", so the learned score of a missing
                              value has no counterpart; refit with missing="error" (and, e.g.,
                              a sentinel value) to export
============================  =====================  =================================

Float32: both engines hold feature values, thresholds and weights as 32-bit floats. Solr
compares ``value <= threshold + 1e-6`` (its ``NODE_SPLIT_SLACK``, added in float32) to go left,
Elasticsearch ``value < split_condition``; svmmap's indicators are ``1[value > threshold]`` in
float64. The exported thresholds are adjusted for each engine so that, for every float32 feature
value, the engine takes the same side of every threshold as svmmap (tests check this for the
float32 neighbours of every threshold), with one exception: Solr's effective threshold is the
float32 sum ``float(x) + 1e-6``, which for thresholds below 16 in magnitude cannot take every
float32 value; the nearest value it can take is used, at most one float32 step of
``|threshold| + 1e-6`` from the exact one (about 1e-13 near zero, 1e-7 near 1), so a feature
value that close to a threshold may fall on the other side in Solr. Weights and leaf
values are rounded to float32 by the engines, which changes scores by about 1e-7 relative.

The engines identify features by name: the names must be those of the feature store (Solr) or
feature set (Elasticsearch) the model will be used with. They default to ``feature_names_in_``
(a DataFrame's columns), else ``f1 ... fd`` as in LETOR files; pass ``feature_names=`` to set them.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["to_solr", "to_elasticsearch", "SOLR_SPLIT_SLACK"]

#: What Solr's MultipleAdditiveTreesModel adds to every threshold (NODE_SPLIT_SLACK, a float).
SOLR_SPLIT_SLACK = 1e-6

_SOLR_LINEAR = "org.apache.solr.ltr.model.LinearModel"
_SOLR_TREES = "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"


def _parts(model: Any) -> Tuple[Any, Any]:
    """(binner or None, SVMMap) of a fitted model or Pipeline(Binner, SVMMap)."""
    from ..persistence import split_pipeline

    binner, svm = split_pipeline(model)
    svm._check_fitted()
    return binner, svm


def _names(given: Optional[Sequence[str]], fitted: Any, n: int, what: str) -> List[str]:
    if given is None:
        given = [f"f{j + 1}" for j in range(n)] if fitted is None else [str(f) for f in fitted]
    names = [str(f) for f in given]
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


def _solr_threshold(t: float) -> str:
    """A threshold string x for Solr's test ``v <= float(x) + 1e-6f`` (in float32).

    Exact when possible: the effective threshold float32(x + 1e-6) is then the largest float32
    at most t, so every float32 value v goes right exactly when v > t. Below 16 in magnitude
    not every float32 is such a sum (the sum's rounding skips values where x is the coarser
    or where it ties); the nearest reachable one is used, within one float32 step of
    |t| + 1e-6 of the exact one.
    """
    target = _largest_f32_at_most(t)
    slack = np.float32(SOLR_SPLIT_SLACK)
    x0 = np.float32(float(target) - float(slack))
    best = None
    # float32(x + slack) is monotone in x; the sums reachable near the target are those of a
    # few float32 steps of x around x0 (more cannot help: each step of x moves the sum by at
    # least one step of the target when x is the coarser, and by at most one otherwise).
    candidates = [x0]
    for direction in (np.float32(np.inf), np.float32(-np.inf)):
        x = x0
        for _ in range(16):
            x = np.nextafter(x, direction)
            candidates.append(x)
    for x in candidates:
        effective = np.float32(x + slack)
        if effective == target:
            return repr(float(x))
        miss = abs(float(effective) - t)
        if best is None or miss < best[0]:
            best = (miss, x)
    assert best is not None
    return repr(float(best[1]))


def _balanced(lo: int, hi: int) -> Tuple[int, int, int]:
    """Split the step indices lo..hi (values lo..hi, thresholds lo+1..hi) at their middle."""
    mid = (lo + hi + 1) // 2
    return lo, mid, hi


def _solr_tree(name: str, k: np.ndarray, values: np.ndarray, lo: int, hi: int) -> Dict[str, Any]:
    # Steps lo..hi: value i holds for k[i-1] < v <= k[i]. Split at threshold k[mid-1]:
    # v <= k[mid-1] (left) has steps lo..mid-1, v > k[mid-1] (right) has steps mid..hi.
    if lo == hi:
        return {"value": repr(float(np.float32(values[lo])))}
    _, mid, _ = _balanced(lo, hi)
    return {
        "feature": name,
        "threshold": _solr_threshold(float(k[mid - 1])),
        "left": _solr_tree(name, k, values, lo, mid - 1),
        "right": _solr_tree(name, k, values, mid, hi),
    }


def to_solr(
    model: Any,
    name: str = "svmmap",
    *,
    feature_names: Optional[Sequence[str]] = None,
    store: Optional[str] = None,
) -> Dict[str, Any]:
    """The model as a Solr LTR model definition (a dict; ``json.dump`` it and upload it).

    Parameters
    ----------
    model : fitted SVMMap or Pipeline(Binner, SVMMap)
        A linear model becomes a ``LinearModel``; a binned one a ``MultipleAdditiveTreesModel``
        with one tree per base feature (see the module notes).
    name : str, default="svmmap"
        The model's name in Solr's model store (used in ``rq={!ltr model=NAME}``).
    feature_names : list of str, optional
        Names of the features in Solr's feature store, one per column of the model's input
        (the base features for a binned model).
    store : str, optional
        The feature store the model uses (Solr's default store when omitted).

    Returns
    -------
    dict
        ``{"class": ..., "name": ..., "features": [{"name": ...}, ...], "params": ...}``

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap import SVMMap
    >>> from svmmap.ir.export import to_solr
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 0.8]])
    >>> model = SVMMap(C=10.0).fit(X, [1, 0, 1, 0], qid=[1, 1, 2, 2])
    >>> doc = to_solr(model, "my_model", feature_names=["title_bm25", "body_bm25"])
    >>> doc["class"], [f["name"] for f in doc["features"]]
    ('org.apache.solr.ltr.model.LinearModel', ['title_bm25', 'body_bm25'])
    >>> sorted(doc["params"]["weights"])
    ['body_bm25', 'title_bm25']
    """
    binner, svm = _parts(model)
    doc: Dict[str, Any]
    if binner is None:
        names = _names(feature_names, getattr(svm, "feature_names_in_", None), svm.coef_.shape[0], "weights")
        doc = {
            "class": _SOLR_LINEAR,
            "name": str(name),
            "features": [{"name": f} for f in names],
            "params": {"weights": {f: float(w) for f, w in zip(names, svm.coef_)}},
        }
    else:
        steps = _step_functions(binner, svm)
        names = _names(feature_names, getattr(binner, "feature_names_in_", None), len(steps), "base features")
        trees = [
            {"weight": "1.0", "root": _solr_tree(f, s.thresholds, s.values, 0, len(s.thresholds))}
            for f, s in zip(names, steps)
            if len(s.thresholds)
        ]
        doc = {
            "class": _SOLR_TREES,
            "name": str(name),
            "features": [{"name": f} for f in names],
            "params": {"trees": trees},
        }
    if store is not None:
        doc["store"] = str(store)
    return doc


def _xgb_tree(
    name: str, k: np.ndarray, values: np.ndarray, lo: int, hi: int, depth: int, ids: List[int]
) -> Dict[str, Any]:
    node_id = ids[0]
    ids[0] += 1
    if lo == hi:
        return {"nodeid": node_id, "leaf": float(np.float32(values[lo]))}
    _, mid, _ = _balanced(lo, hi)
    # The plugin goes to "yes" (the first child) when value < split_condition. With the smallest
    # float32 above the threshold, that is value <= threshold for float32 values.
    split = float(_smallest_f32_above(float(k[mid - 1])))
    yes = _xgb_tree(name, k, values, lo, mid - 1, depth + 1, ids)
    no = _xgb_tree(name, k, values, mid, hi, depth + 1, ids)
    return {
        "nodeid": node_id,
        "depth": depth,
        "split": name,
        "split_condition": split,
        "yes": yes["nodeid"],
        "no": no["nodeid"],
        "missing": yes["nodeid"],
        "children": [yes, no],
    }


def to_elasticsearch(
    model: Any,
    name: str = "svmmap",
    *,
    feature_names: Optional[Sequence[str]] = None,
) -> Dict[str, Any]:
    """The model as an Elasticsearch LTR (o19s plugin) ``_createmodel`` request body (a dict).

    Parameters
    ----------
    model : fitted SVMMap or Pipeline(Binner, SVMMap)
        A linear model becomes ``model/linear``; a binned one ``model/xgboost+json`` with one
        tree per base feature (see the module notes).
    name : str, default="svmmap"
        The model's name (used in the ``sltr`` query's ``"model"``).
    feature_names : list of str, optional
        Names of the features in the feature set the model is created from, one per column of
        the model's input (the base features for a binned model).

    Returns
    -------
    dict
        ``{"model": {"name": ..., "model": {"type": ..., "definition": "<JSON text>"}}}``: POST
        it to ``_ltr/_featureset/<featureset>/_createmodel``. The definition is JSON text, as
        the plugin's documentation shows.

    Examples
    --------
    >>> import json
    >>> import numpy as np
    >>> from svmmap import SVMMap
    >>> from svmmap.ir.export import to_elasticsearch
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 0.8]])
    >>> model = SVMMap(C=10.0).fit(X, [1, 0, 1, 0], qid=[1, 1, 2, 2])
    >>> body = to_elasticsearch(model, "my_model", feature_names=["title_query", "body_query"])
    >>> body["model"]["model"]["type"]
    'model/linear'
    >>> sorted(json.loads(body["model"]["model"]["definition"]))
    ['body_query', 'title_query']
    """
    binner, svm = _parts(model)
    if binner is None:
        names = _names(feature_names, getattr(svm, "feature_names_in_", None), svm.coef_.shape[0], "weights")
        kind = "model/linear"
        definition = json.dumps({f: float(w) for f, w in zip(names, svm.coef_)})
    else:
        steps = _step_functions(binner, svm)
        names = _names(feature_names, getattr(binner, "feature_names_in_", None), len(steps), "base features")
        kind = "model/xgboost+json"
        trees = [
            _xgb_tree(f, s.thresholds, s.values, 0, len(s.thresholds), 0, [0])
            for f, s in zip(names, steps)
            if len(s.thresholds)
        ]
        definition = json.dumps(trees)
    return {"model": {"name": str(name), "model": {"type": kind, "definition": definition}}}
