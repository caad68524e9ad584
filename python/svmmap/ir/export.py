"""Learned models as search engines' learning-to-rank models (Solr LTR and Elasticsearch LTR)
and as ONNX graphs.

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
a scaler in front             folded into the weights (score = predict - score_offset) or
                              into the thresholds (score = predict); see below
Binner(interactions=...)      one more tree per pair (its surface: the first feature's coarse
                              thresholds, then a step function of the second feature's)
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

A scaler in front (``Pipeline(StandardScaler(), SVMMap())``, also MinMaxScaler and
MaxAbsScaler, with or without a Binner after it) is folded into what the engine computes on the
raw features, since the engines' normalizers are float32 and not defined for every scaler:

- linear: x' = a x + b per feature, so ``w . x' = (w a) . x + w . b``; the exported weights are
  ``w a`` and the engines' linear models have no constant term, so the engine's score is
  ``predict(X) - score_offset(model)`` (the constant ``w . b``; the same for every document, so
  the ranking is the same);
- binned: ``x' > t`` holds exactly when ``x > T`` for the largest float64 T that the scaler maps
  to ``t`` or below (its map is increasing, as scales are positive), found by bisection on the
  float64 values, so the thresholds move and the scores stay those of ``predict`` (offset 0).

``to_onnx`` writes an ONNX graph (the ``onnx`` extra) that computes ``predict`` itself, scaler,
thresholds and constant included.

The engines identify features by name: the names must be those of the feature store (Solr) or
feature set (Elasticsearch) the model will be used with. They default to ``feature_names_in_``
(a DataFrame's columns), else ``f1 ... fd`` as in LETOR files; pass ``feature_names=`` to set them.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._fit.scaler import folded_linear, raw_thresholds
from .._optional import load
from .._validation import check_characters
from ._model_parts import (
    _FLOAT32_MAX,
    _engine_number,
    _engine_weights,
    _input_names,
    _largest_f32_at_most,
    _names,
    _parts,
    _raw_step_functions,
    _smallest_f32_above,
    _surfaces,
    score_offset,
)

__all__ = ["to_solr", "to_elasticsearch", "to_onnx", "score_offset", "SOLR_SPLIT_SLACK"]

#: What Solr's MultipleAdditiveTreesModel adds to every threshold (NODE_SPLIT_SLACK, a float).
SOLR_SPLIT_SLACK = 1e-6

_SOLR_LINEAR = "org.apache.solr.ltr.model.LinearModel"
_SOLR_TREES = "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"


def engine_name(value: Any, what: str) -> str:
    """A name the engines store (a model's, a feature store's): a str that is not blank. The
    one rule of the Python API and of ``svmmap export --name/--store``; ``what`` names the
    argument. ``str(None)`` used to be exported as the model "None"."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what}: the engine needs a non-empty name, got {value!r}")
    # The check of feature names too: a lone surrogate was refused there but passed here, into
    # a document no UTF-8 writer can encode (to_onnx raised a bare UnicodeEncodeError).
    check_characters(value, what, "give a name of characters")
    return value


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


def _engine_threshold(t: float, name: str) -> float:
    """A threshold of feature ``name``, checked to lie strictly inside float32's range, so that
    the split written for it (the float32 next to it) is a finite number."""
    if not abs(t) < _FLOAT32_MAX:
        raise ValueError(
            f"a threshold of feature {name!r} is {t!r}, beyond the float32 range (+-{_FLOAT32_MAX:.4g}) in "
            "which Solr and Elasticsearch hold a model's numbers; the model cannot be exported to them "
            "(rescale the feature, or export to ONNX in float64)"
        )
    return t


def _balanced(lo: int, hi: int) -> Tuple[int, int, int]:
    """Split the step indices lo..hi (values lo..hi, thresholds lo+1..hi) at their middle."""
    mid = (lo + hi + 1) // 2
    return lo, mid, hi


def _solr_tree(name: str, k: np.ndarray, values: np.ndarray, lo: int, hi: int) -> Dict[str, Any]:
    # Steps lo..hi: value i holds for k[i-1] < v <= k[i]. Split at threshold k[mid-1]:
    # v <= k[mid-1] (left) has steps lo..mid-1, v > k[mid-1] (right) has steps mid..hi.
    if lo == hi:
        return {"value": repr(_engine_number(values[lo], f"a score of feature {name!r}'s step function"))}
    _, mid, _ = _balanced(lo, hi)
    return {
        "feature": name,
        "threshold": _solr_threshold(_engine_threshold(float(k[mid - 1]), name)),
        "left": _solr_tree(name, k, values, lo, mid - 1),
        "right": _solr_tree(name, k, values, mid, hi),
    }


def _solr_pair_tree(names: Tuple[str, str], surface: Any, lo: int, hi: int) -> Dict[str, Any]:
    # A pair's surface as a tree: the first feature's coarse thresholds split as a step
    # function's, and every first-feature bin ci ends in the step function values[ci, :] of
    # the second feature.
    ki, kj = surface.thresholds
    if lo == hi:
        return _solr_tree(names[1], kj, surface.values[lo], 0, len(kj))
    _, mid, _ = _balanced(lo, hi)
    return {
        "feature": names[0],
        "threshold": _solr_threshold(_engine_threshold(float(ki[mid - 1]), names[0])),
        "left": _solr_pair_tree(names, surface, lo, mid - 1),
        "right": _solr_pair_tree(names, surface, mid, hi),
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
    model : fitted SVMMap or Pipeline([scaler], [Binner], SVMMap)
        A linear model becomes a ``LinearModel``; a binned one a ``MultipleAdditiveTreesModel``
        with one tree per base feature (see the module notes). A scaler is folded into the
        weights (the score is then ``predict - score_offset(model)``) or the thresholds.
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
    spec, binner, svm = _parts(model)
    doc: Dict[str, Any]
    fitted = _input_names(spec, binner, svm)
    if binner is None:
        weights, _ = folded_linear(spec, svm.coef_)
        names = _names(feature_names, fitted, weights.shape[0], "weights")
        doc = {
            "class": _SOLR_LINEAR,
            "name": engine_name(name, "name"),
            "features": [{"name": f} for f in names],
            "params": {"weights": _engine_weights(names, weights)},
        }
    else:
        steps, surfaces = _surfaces(_raw_step_functions(spec, binner, svm))
        names = _names(feature_names, fitted, len(steps), "base features")
        trees = [
            {"weight": "1.0", "root": _solr_tree(f, s.thresholds, s.values, 0, len(s.thresholds))}
            for f, s in zip(names, steps)
            if len(s.thresholds)
        ]
        for p in surfaces:
            pair = (names[p.index[0]], names[p.index[1]])
            trees.append({"weight": "1.0", "root": _solr_pair_tree(pair, p, 0, len(p.thresholds[0]))})
        doc = {
            "class": _SOLR_TREES,
            "name": engine_name(name, "name"),
            "features": [{"name": f} for f in names],
            "params": {"trees": trees},
        }
    if store is not None:
        doc["store"] = engine_name(store, "store")
    return doc


def _xgb_tree(
    name: str, k: np.ndarray, values: np.ndarray, lo: int, hi: int, depth: int, ids: List[int]
) -> Dict[str, Any]:
    node_id = ids[0]
    ids[0] += 1
    if lo == hi:
        return {"nodeid": node_id, "leaf": _engine_number(values[lo], f"a score of feature {name!r}'s step function")}
    _, mid, _ = _balanced(lo, hi)
    # The plugin goes to "yes" (the first child) when value < split_condition. With the smallest
    # float32 above the threshold, that is value <= threshold for float32 values.
    split = float(_smallest_f32_above(_engine_threshold(float(k[mid - 1]), name)))
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


def _xgb_pair_tree(
    names: Tuple[str, str], surface: Any, lo: int, hi: int, depth: int, ids: List[int]
) -> Dict[str, Any]:
    # As _solr_pair_tree: the first feature's splits, then a step function of the second.
    ki, kj = surface.thresholds
    if lo == hi:
        return _xgb_tree(names[1], kj, surface.values[lo], 0, len(kj), depth, ids)
    node_id = ids[0]
    ids[0] += 1
    _, mid, _ = _balanced(lo, hi)
    split = float(_smallest_f32_above(_engine_threshold(float(ki[mid - 1]), names[0])))
    yes = _xgb_pair_tree(names, surface, lo, mid - 1, depth + 1, ids)
    no = _xgb_pair_tree(names, surface, mid, hi, depth + 1, ids)
    return {
        "nodeid": node_id,
        "depth": depth,
        "split": names[0],
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
    model : fitted SVMMap or Pipeline([scaler], [Binner], SVMMap)
        A linear model becomes ``model/linear``; a binned one ``model/xgboost+json`` with one
        tree per base feature (see the module notes). A scaler is folded into the weights (the
        score is then ``predict - score_offset(model)``) or the thresholds.
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
    spec, binner, svm = _parts(model)
    fitted = _input_names(spec, binner, svm)
    if binner is None:
        weights, _ = folded_linear(spec, svm.coef_)
        names = _names(feature_names, fitted, weights.shape[0], "weights")
        kind = "model/linear"
        definition = json.dumps(_engine_weights(names, weights))
    else:
        steps, surfaces = _surfaces(_raw_step_functions(spec, binner, svm))
        names = _names(feature_names, fitted, len(steps), "base features")
        kind = "model/xgboost+json"
        trees = [
            _xgb_tree(f, s.thresholds, s.values, 0, len(s.thresholds), 0, [0])
            for f, s in zip(names, steps)
            if len(s.thresholds)
        ]
        for p in surfaces:
            pair = (names[p.index[0]], names[p.index[1]])
            trees.append(_xgb_pair_tree(pair, p, 0, len(p.thresholds[0]), 0, [0]))
        definition = json.dumps(trees)
    return {"model": {"name": engine_name(name, "name"), "model": {"type": kind, "definition": definition}}}


def _onnx_pairs(binner: Any, spec: Any, coef: np.ndarray, dtype: str, constant: Any, node: Any, elem: Any) -> str:
    """The pairs' term of a binned ONNX graph (or "" without pairs): cell (s, t) of pair (i, j)
    is 1[x_i > s and x_j > t] (And of two Greater; NaN is above no threshold, so a missing value
    sets no cell, as in the Binner), Cast and MatMul with the cells' weights."""
    first: List[int] = []
    second: List[int] = []
    t_first: List[float] = []
    t_second: List[float] = []
    for (i, j), (ki, kj) in zip(getattr(binner, "interactions_", []), getattr(binner, "interaction_thresholds_", [])):
        ri, rj = raw_thresholds(spec, i, ki), raw_thresholds(spec, j, kj)
        for s in ri:
            for t in rj:
                first.append(i)
                second.append(j)
                t_first.append(s)
                t_second.append(t)
    if not first:
        return ""
    if dtype == "float32":
        t_first = [float(_largest_f32_at_most(t)) for t in t_first]
        t_second = [float(_largest_f32_at_most(t)) for t in t_second]
    a = node(
        "Greater",
        [
            node("Gather", ["X", constant("pair_first", first, np.int64)], "pair_x_first", axis=1),
            constant("pair_t_first", t_first),
        ],
        "pair_above_first",
    )
    b = node(
        "Greater",
        [
            node("Gather", ["X", constant("pair_second", second, np.int64)], "pair_x_second", axis=1),
            constant("pair_t_second", t_second),
        ],
        "pair_above_second",
    )
    cells = node("Cast", [node("And", [a, b], "pair_both")], "pair_cells", to=elem)
    return node("MatMul", [cells, constant("pair_weights", np.reshape(coef[: len(first)], (-1, 1)))], "pairs")


#: The ONNX opset and IR version of ``to_onnx``'s graphs: opset 17 (2022) has every operator
#: used, and onnxruntime 1.13 and later run it.
ONNX_OPSET = 17
ONNX_IR_VERSION = 8


def to_onnx(
    model: Any, *, dtype: str = "float64", name: str = "svmmap", feature_names: Optional[Sequence[str]] = None
) -> Any:
    """The model as an ONNX graph (an ``onnx.ModelProto``; needs the ``onnx`` extra).

    The graph takes ``X`` (rows by raw input features, of ``dtype``) and returns ``score``
    (one per row), the scores of ``predict``:

    - linear: the scaler's operations (as scikit-learn applies them: Sub, Div, or Mul, Add),
      then MatMul with the weights;
    - binned: Gather of each threshold's feature, Greater than the thresholds (svmmap's
      indicators are 1[x > t]; a scaler is folded into the thresholds exactly, as for the
      engines), Cast, MatMul with the weights; with ``missing="indicator"``, IsNaN, Cast and
      MatMul add the missing-value weights (NaN is above no threshold, as in the Binner).

    ``predict`` refuses NaN (except as a Binner's missing value) and infinity; the graph cannot
    raise, so such a row scores NaN (``X * 0`` summed into the score).

    Parameters
    ----------
    model : fitted SVMMap or Pipeline([scaler], [Binner], SVMMap)
    dtype : {"float64", "float32"}, default="float64"
        The type of ``X``, the constants and the arithmetic. float64 computes as ``predict``
        does (the same comparisons, float64 sums in another order): scores agree to about
        1e-15 relative. float32 (for runtimes or hardware that want it) takes float32 feature
        values: each threshold is replaced by the largest float32 at or below it, so every
        float32 value falls on the same side as in svmmap, and the sums are float32 (about
        1e-7 of the sum of the terms' magnitudes).
    name : str, default="svmmap"
        The graph's name.
    feature_names : list of str, optional
        The input columns' names, stored in the model's metadata ("feature_names", JSON); by
        default the fitted names, else f1 ... fd.

    Examples
    --------
    >>> import numpy as np
    >>> import onnxruntime
    >>> from svmmap import SVMMap
    >>> from svmmap.ir.export import to_onnx
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 0.8]])
    >>> model = SVMMap(C=10.0).fit(X, [1, 0, 1, 0], qid=[1, 1, 2, 2])
    >>> graph = to_onnx(model)
    >>> session = onnxruntime.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    >>> (scores,) = session.run(None, {"X": X})
    >>> bool(np.allclose(scores, model.predict(X), rtol=1e-12, atol=0))
    True
    """
    onnx = load("onnx", "to_onnx")
    TensorProto, helper, numpy_helper = (
        onnx.TensorProto,
        load("onnx.helper", "to_onnx"),
        load("onnx.numpy_helper", "to_onnx"),
    )
    from .. import __version__

    types = {"float64": (np.float64, TensorProto.DOUBLE), "float32": (np.float32, TensorProto.FLOAT)}
    if dtype not in types:
        raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
    np_type, elem = types[dtype]
    # The graph's name by the engines' one rule, as svmmap export --to onnx --name checks it:
    # onnx's own checker refused name="" with "Field 'name' of 'graph' is required to be
    # non-empty", naming no argument of this call.
    name = engine_name(name, "name")
    spec, binner, svm = _parts(model)
    coef = np.asarray(svm.coef_, dtype=np.float64)
    n_in = spec.n_features_in if spec is not None else (binner.n_features_in_ if binner is not None else coef.shape[0])
    names = _names(feature_names, _input_names(spec, binner, svm), n_in, "input features")
    nodes: List[Any] = []
    constants: List[Any] = []

    def constant(label: str, values: Any, kind: Any = np_type) -> str:
        given = np.asarray(values, dtype=np.float64) if kind is np.float32 else None
        with np.errstate(over="ignore"):
            array = np.asarray(values, dtype=kind)
        if given is not None:
            # A float64 number beyond float32's range becomes infinity in a float32 graph,
            # which would score every row inf or NaN: refused, as the engines' exports refuse
            # it (`_engine_number`). Thresholds never get here beyond the range (each is the
            # largest float32 at or below it, which is finite or -inf as the comparison needs).
            wrong = np.flatnonzero(np.isfinite(given) & ~np.isfinite(array))
            if wrong.size:
                raise ValueError(
                    f"to_onnx(dtype='float32'): {label}[{int(wrong[0])}] is {float(given.flat[wrong[0]])!r}, beyond "
                    f"the float32 range (+-{_FLOAT32_MAX:.4g}), so the graph would hold infinity; export with "
                    "dtype='float64', or refit on scaled features"
                )
        constants.append(numpy_helper.from_array(array, label))
        return label

    def node(op: str, inputs: List[str], label: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [label], name=label, **attrs))
        return label

    if binner is None:
        current = "X"
        for i, (op, v) in enumerate(spec.operations() if spec is not None else []):
            # The scaler's own operations in their order, so that float64 gives its values
            # bit for bit.
            current = node(op.capitalize(), [current, constant(f"scaler_{op}_{i}", v)], f"scaled_{i}")
        total = node("MatMul", [current, constant("weights", coef.reshape(-1, 1))], "linear")
    else:
        indices: List[int] = []
        thresholds: List[float] = []
        weights: List[float] = []
        missing_weights: List[float] = []
        at = 0
        for j, k in enumerate(binner.thresholds_):
            raw = raw_thresholds(spec, j, k)
            indices.extend([j] * len(k))
            thresholds.extend(raw)
            weights.extend(coef[at : at + len(k)])
            at += len(k)
            if binner.missing == "indicator":
                missing_weights.append(coef[at])
                at += 1
        if dtype == "float32":
            thresholds = [float(_largest_f32_at_most(t)) for t in thresholds]
        total = ""
        if indices:
            gathered = node("Gather", ["X", constant("feature_of_threshold", indices, np.int64)], "gathered", axis=1)
            above = node("Greater", [gathered, constant("thresholds", thresholds)], "above")
            indicators = node("Cast", [above], "indicators", to=elem)
            total = node("MatMul", [indicators, constant("weights", np.reshape(weights, (-1, 1)))], "binned")
        pair_term = _onnx_pairs(binner, spec, coef[at:], dtype, constant, node, elem)
        if pair_term:
            total = node("Add", [total, pair_term], "binned_and_pairs") if total else pair_term
        if missing_weights:
            nan = node("Cast", [node("IsNaN", ["X"], "is_nan")], "missing", to=elem)
            term = node(
                "MatMul", [nan, constant("missing_weights", np.reshape(missing_weights, (-1, 1)))], "missing_term"
            )
            total = node("Add", [total, term], "binned_and_missing") if total else term
        if not total:
            total = node("MatMul", ["X", constant("weights", np.zeros((n_in, 1)))], "nothing")
    # Every graph scores NaN where predict would refuse the row, as docs/guide/export.md says:
    # NaN or infinity times 0 is NaN, and finite values add 0. A linear model's MatMul alone
    # gave +-inf for an infinite feature, and a Binner's comparisons a finite score. A Binner
    # with missing="indicator" takes NaN as a value, so only infinity is refused there.
    checked = "X"
    if binner is not None and binner.missing == "indicator":
        is_nan = "is_nan" if missing_weights else node("IsNaN", ["X"], "is_nan")
        checked = node("Where", [is_nan, constant("zero_for_nan", 0.0), "X"], "nan_as_zero")
    zeros = node("Mul", [checked, constant("zero", 0.0)], "times_zero")
    refused = node("ReduceSum", [zeros, constant("axis_1", [1], np.int64)], "refused", keepdims=1)
    total = node("Add", [total, refused], "checked")
    node("Squeeze", [total, constant("axis_1_squeezed", [1], np.int64)], "score")
    graph = helper.make_graph(
        nodes,
        str(name),
        [helper.make_tensor_value_info("X", elem, ["N", n_in])],
        [helper.make_tensor_value_info("score", elem, ["N"])],
        initializer=constants,
    )
    onnx_model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", ONNX_OPSET)],
        ir_version=ONNX_IR_VERSION,
        producer_name="svmmap",
        producer_version=__version__,
    )
    helper.set_model_props(onnx_model, {"feature_names": json.dumps(names), "dtype": dtype})
    onnx.checker.check_model(onnx_model, full_check=True)
    return onnx_model
