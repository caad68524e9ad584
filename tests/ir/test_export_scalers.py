"""Exports of pipelines with a scaler (folded into the weights or thresholds for Solr and
Elasticsearch) and ONNX graphs of every model, scored by the engines' rules emulated in float32
(tests/ir/test_export.py) and by onnxruntime, against predict."""

import json

import numpy as np
import pytest
import svmmap
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler
from svmmap import SVMMap
from svmmap._fit.scaler import raw_threshold
from svmmap.ir.export import score_offset, to_elasticsearch, to_onnx, to_solr

from tests.ir.test_export import es_node_value, es_score, float32_neighbours, schema, solr_node_value, solr_score

jsonschema = pytest.importorskip("jsonschema")

SCALERS = {
    "standard": lambda: StandardScaler(),
    "standard-no-mean": lambda: StandardScaler(with_mean=False),
    "standard-no-std": lambda: StandardScaler(with_std=False),
    "minmax-range": lambda: MinMaxScaler(feature_range=(-2.0, 3.0)),
    "maxabs": lambda: MaxAbsScaler(),
}
NAMES = ["a", "b", "c", "d", "e"]


@pytest.fixture(scope="module")
def data():
    """Unlike scales (one column far from 0, so that centring is a large constant), a constant
    column and values repeated (ties at thresholds); 30 queries of 8 documents."""
    rng = np.random.default_rng(5)
    n = 240
    X = np.column_stack(
        [
            rng.normal(1000.0, 50.0, n),
            np.round(rng.exponential(0.01, n), 3),  # many ties
            np.full(n, 7.0),
            rng.normal(0.0, 1.0, n),
            -rng.exponential(3.0, n),
        ]
    )
    y = ((X[:, 0] - 1000.0) / 50.0 + X[:, 3] + rng.normal(0, 0.5, n) > 0.5).astype(int)
    return X, y, np.repeat(np.arange(30), 8)


def fit(data, scaler, binner=None):
    X, y, qid = data
    steps = ([scaler] if scaler is not None else []) + ([binner] if binner is not None else []) + [SVMMap(C=10.0)]
    if len(steps) == 1:
        return steps[0].fit(X, y, qid=qid)
    return make_pipeline(*steps).fit(X, y, svmmap__qid=qid)


def float32_rows(X):
    X32 = np.asarray(X, dtype=np.float32)
    return X32, X32.astype(np.float64)


# --- linear: weights folded, the constant stated ---------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SCALERS))
def test_linear_exports_fold_the_scaler_into_the_weights(data, kind):
    X, _, _ = data
    pipe = fit(data, SCALERS[kind]())
    X32, X64 = float32_rows(X)
    expected = pipe.predict(X64)
    offset = score_offset(pipe)
    solr = to_solr(pipe, feature_names=NAMES)
    jsonschema.validate(solr, schema("solr_ltr_model"))
    body = to_elasticsearch(pipe, feature_names=NAMES)
    jsonschema.validate(body, schema("es_ltr_createmodel"))
    weights = np.array([solr["params"]["weights"][f] for f in NAMES])
    assert json.loads(body["model"]["model"]["definition"]) == dict(zip(NAMES, weights))
    # In float64 the folded weights and the constant give predict's scores (to rounding).
    exact = X64 @ weights + offset
    magnitude = np.abs(X64) @ np.abs(weights) + abs(offset)
    np.testing.assert_array_less(np.abs(exact - expected), 1e-12 * magnitude + 1e-300)
    # The engines (float32 weights, values and sums) give them less the constant, to float32
    # rounding of the terms they add (relative 1e-6 of the sum of their magnitudes).
    fvs = [dict(zip(NAMES, row)) for row in X32]
    for score in (lambda fv: solr_score(solr, fv), lambda fv: es_score(body, fv)):
        got = np.array([score(fv) for fv in fvs], dtype=np.float64)
        np.testing.assert_array_less(np.abs(got + offset - expected), 1e-6 * magnitude)
    if kind in ("maxabs", "standard-no-mean"):
        assert offset == 0.0  # no shift: the engines' scores are predict's
    else:
        assert abs(offset) > 1e-3


def test_offset_is_zero_without_a_scaler_or_with_binning(data):
    assert score_offset(fit(data, None)) == 0.0
    assert score_offset(fit(data, StandardScaler(), svmmap.Binner(n_thresholds=4))) == 0.0


# --- binned: thresholds folded exactly ----------------------------------------------------------


def step_index(pipe, X):
    """For every row and base feature, how many of the feature's indicators the pipeline itself
    (scaler, then Binner) sets: the step of the feature's step function."""
    binner = pipe[-2]
    codes = pipe[:-1].transform(X)
    dense = codes.toarray() if hasattr(codes, "toarray") else np.asarray(codes)
    out, at = [], 0
    for k in binner.thresholds_:
        out.append(dense[:, at : at + len(k)].sum(axis=1))
        at += len(k)
    return np.column_stack(out).astype(int)


def probe_values(trees_thresholds, X):
    """Rows whose values are the float32 neighbours of every exported split (the values that
    would fall on the wrong side of an inexact threshold), the others from a data row."""
    rows = []
    for j, ts in trees_thresholds.items():
        for t in ts:
            for v in float32_neighbours(t):
                row = X[0].copy()
                row[j] = float(v)
                rows.append(row)
    return np.asarray(rows)


@pytest.mark.parametrize("kind", sorted(SCALERS))
def test_binned_exports_fold_the_scaler_into_the_thresholds(data, kind):
    X, _, _ = data
    pipe = fit(data, SCALERS[kind](), svmmap.Binner(n_thresholds=8))
    solr = to_solr(pipe, feature_names=NAMES)
    body = to_elasticsearch(pipe, feature_names=NAMES)
    jsonschema.validate(solr, schema("solr_ltr_model"))
    trees = json.loads(body["model"]["model"]["definition"])
    jsonschema.validate(trees, schema("es_ltr_xgboost_definition"))
    X32, X64 = float32_rows(X)
    expected = pipe.predict(X64)
    got_solr = np.array([solr_score(solr, dict(zip(NAMES, r))) for r in X32], dtype=np.float64)
    got_es = np.array([es_score(body, dict(zip(NAMES, r))) for r in X32], dtype=np.float64)
    np.testing.assert_allclose(got_solr, expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(got_es, expected, rtol=0, atol=1e-5)
    # Exactly the step the pipeline (scaler, then Binner) chooses, for float32 values next to
    # every exported split.
    splits = {}
    for tree in trees:

        def walk(node):
            if "leaf" not in node:
                splits.setdefault(NAMES.index(node["split"]), []).append(node["split_condition"])
                for child in node["children"]:
                    walk(child)

        walk(tree)
    probes = probe_values(splits, X)
    steps = step_index(pipe, probes)
    values = [s.values for s in svmmap.piecewise_scores(pipe[-2], pipe[-1].coef_)]
    es_trees = {tree_feature(t): t for t in trees}
    for row, index in zip(probes.astype(np.float32), steps):
        fv = dict(zip(NAMES, row))
        for j, name in enumerate(NAMES):
            if name in es_trees:
                assert es_node_value(es_trees[name], fv) == np.float32(values[j][index[j]]), (name, row[j])
    # Solr: exact for splits of magnitude 16 or more; below, within one float32 step (see
    # tests/ir/test_export.py); here the steps chosen for the data's own values are checked.
    solr_trees = {tree_feature(t["root"]): t["root"] for t in solr["params"]["trees"]}
    data_steps = step_index(pipe, X32.astype(np.float64))
    for row, index in zip(X32, data_steps):
        fv = dict(zip(NAMES, row))
        for j, name in enumerate(NAMES):
            if name in solr_trees:
                assert solr_node_value(solr_trees[name], fv) == np.float32(values[j][index[j]]), (name, row[j])


def tree_feature(root):
    """The feature of a tree's root split (Solr "feature", XGBoost "split")."""
    assert "leaf" not in root and "value" not in root
    return root.get("split", root.get("feature"))


# --- the fold itself, on random scalers ---------------------------------------------------------


def sklearn_map(kind, center, scale, x):
    """f(x) of one feature, computed by a scikit-learn scaler set to these numbers."""
    if kind == "standard":
        s = StandardScaler()
        s.mean_, s.scale_, s.var_ = np.array([center]), np.array([scale]), np.array([scale**2])
    elif kind == "minmax":
        s = MinMaxScaler()
        s.min_, s.scale_ = np.array([center]), np.array([scale])
    else:
        s = MaxAbsScaler()
        s.scale_ = np.array([scale])
    s.n_features_in_ = 1
    with np.errstate(all="ignore"):
        return float(s.transform(np.array([[x]]))[0, 0])


def ops_of(kind, center, scale):
    return {
        "standard": [("sub", center), ("div", scale)],
        "minmax": [("mul", scale), ("add", center)],
        "maxabs": [("div", scale)],
    }[kind]


magnitudes = st.floats(min_value=-12, max_value=12)


def folded_threshold_splits_as_the_scaler_does(kind, center_exp, center_sign, scale_exp, x_exp, x_sign):
    center, scale = center_sign * 10.0**center_exp, 10.0**scale_exp
    # A threshold where the scaler puts a value: what a Binner fitted on scaled data has.
    t = sklearn_map(kind, center, scale, x_sign * 10.0**x_exp)
    T = raw_threshold(ops_of(kind, center, scale), t, "f")
    # T is the last float64 the scaler maps to t or below: the next one is mapped above it.
    assert sklearn_map(kind, center, scale, T) <= t
    assert sklearn_map(kind, center, scale, float(np.nextafter(T, np.inf))) > t


SCALER_CASES = given(
    kind=st.sampled_from(["standard", "minmax", "maxabs"]),
    center_exp=magnitudes,
    center_sign=st.sampled_from([-1.0, 1.0]),
    scale_exp=magnitudes,
    x_exp=magnitudes,
    x_sign=st.sampled_from([-1.0, 1.0]),
)
#: Each example bisects over the float64 values and calls a scikit-learn scaler three times:
#: the quick run (`-m "not slow"`) tries 40 scalers, the full run 300 more.
test_folded_threshold_splits_every_value_as_the_scaler_does = settings(max_examples=40, deadline=None)(
    SCALER_CASES(folded_threshold_splits_as_the_scaler_does)
)
test_folded_threshold_splits_every_value_as_the_scaler_does_at_length = pytest.mark.slow(
    settings(max_examples=300, deadline=None)(SCALER_CASES(folded_threshold_splits_as_the_scaler_does))
)


def test_folded_thresholds_on_ties(data):
    # Values equal to a scaled threshold (the Binner's indicator is 1[x' > t]: a tie is below).
    X, _, _ = data
    pipe = fit(data, StandardScaler(), svmmap.Binner(n_thresholds=8))
    scaler, binner = pipe[0], pipe[1]
    for j, k in enumerate(binner.thresholds_):
        ops = [("sub", float(scaler.mean_[j])), ("div", float(scaler.scale_[j]))]
        for t in k:
            T = raw_threshold(ops, float(t), "f")
            for x in (T, float(np.nextafter(T, np.inf))):
                scaled = float(scaler.transform(np.full((1, 5), x))[0, j])
                assert (scaled > t) == (x > T)


# --- refused steps --------------------------------------------------------------------------------


@pytest.mark.parametrize("export", [to_solr, to_elasticsearch, to_onnx, score_offset])
def test_unsupported_steps_are_refused(data, export):
    X, y, qid = data
    pipe = make_pipeline(RobustScaler(), SVMMap(C=1.0)).fit(X, y, svmmap__qid=qid)
    with pytest.raises(TypeError, match=r"step 'robustscaler' \(RobustScaler\) is not supported.*StandardScaler"):
        export(pipe)


# --- ONNX ---------------------------------------------------------------------------------------

ort = pytest.importorskip("onnxruntime", reason="onnxruntime (the onnx extra) is not installed")


def run_onnx(graph, X):
    session = ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    (scores,) = session.run(None, {"X": X})
    return scores


def term_magnitude(pipe, X64):
    """Per row, the sum of the magnitudes of the terms the graph adds (x_j a_j, b_j and w_j):
    the scale of its float32 rounding."""
    if isinstance(pipe, SVMMap):
        return np.abs(X64) @ np.abs(pipe.coef_)
    if isinstance(pipe[-2], svmmap.Binner):
        return np.full(X64.shape[0], np.abs(pipe[-1].coef_).sum())
    a, b = _slope_intercept(pipe[0])
    return (np.abs(X64) * np.abs(a) + np.abs(b)) @ np.abs(pipe[-1].coef_)


def _slope_intercept(scaler):
    from svmmap._fit.scaler import scaler_spec

    return scaler_spec(scaler).slope_intercept()


MODELS = [(None, None), *[(k, None) for k in sorted(SCALERS)], (None, "error"), (None, "indicator")]
MODELS += [(k, m) for k in ("standard", "minmax-range", "maxabs") for m in ("error", "indicator")]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind, missing", MODELS)
def test_onnx_scores_are_predicts(data, kind, missing, dtype):
    X, _, _ = data
    binner = svmmap.Binner(n_thresholds=8, missing=missing) if missing else None
    pipe = fit(data, SCALERS[kind]() if kind else None, binner)
    graph = to_onnx(pipe, dtype=dtype)
    Xd = X.astype(dtype)
    X64 = Xd.astype(np.float64)
    expected = pipe.predict(X64)
    got = run_onnx(graph, Xd)
    assert got.dtype == np.dtype(dtype) and got.shape == expected.shape
    if dtype == "float64":
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
    else:
        np.testing.assert_array_less(np.abs(got - expected), 1e-6 * term_magnitude(pipe, X64))
    if binner is not None:
        # Values at every threshold (ties: 1[x > t] is 0) and at its float neighbours.
        scaler = pipe[0] if kind else None
        rows = []
        for j, k in enumerate(pipe[-2].thresholds_):
            for t in k:
                for v in (t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf)):
                    row = np.array(X[0 if j else 1], dtype=np.float64)
                    row[j] = v
                    rows.append(row)
        scaled_rows = np.asarray(rows)
        raw = scaled_rows if scaler is None else _unscale(scaler, scaled_rows)
        raw = raw.astype(dtype).astype(np.float64)
        got = run_onnx(graph, raw.astype(dtype))
        expected = pipe.predict(raw)
        if dtype == "float64":
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
        else:
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * np.abs(pipe[-1].coef_).sum())


def _unscale(scaler, rows):
    with np.errstate(all="ignore"):
        return scaler.inverse_transform(rows)


def test_onnx_missing_values(data):
    X, _, _ = data
    Xn = X.copy()
    Xn[::5, 1] = np.nan
    Xn[::7, 4] = np.nan
    # With missing="indicator", NaN is the missing value and scores as predict scores it.
    pipe = fit((Xn, data[1], data[2]), StandardScaler(), svmmap.Binner(missing="indicator"))
    for dtype in ("float64", "float32"):
        expected = pipe.predict(Xn.astype(dtype).astype(np.float64))
        got = run_onnx(to_onnx(pipe, dtype=dtype), Xn.astype(dtype))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * np.abs(pipe[-1].coef_).sum())
    # Where predict refuses NaN, the graph scores the row NaN, and only that row.
    for model in (fit(data, StandardScaler()), fit(data, MinMaxScaler(), svmmap.Binner()), fit(data, None)):
        with pytest.raises(ValueError):
            model.predict(Xn)
        got = run_onnx(to_onnx(model), Xn)
        rows = np.isnan(Xn).any(axis=1)
        assert np.isnan(got[rows]).all() and np.isfinite(got[~rows]).all()


def test_onnx_graph_and_metadata(data):
    onnx = pytest.importorskip("onnx")
    pipe = fit(data, StandardScaler(), svmmap.Binner(n_thresholds=4))
    graph = to_onnx(pipe, name="ranker", feature_names=NAMES)
    onnx.checker.check_model(graph, full_check=True)
    assert graph.graph.name == "ranker" and graph.opset_import[0].version == 17
    props = {p.key: p.value for p in graph.metadata_props}
    assert json.loads(props["feature_names"]) == NAMES and props["dtype"] == "float64"
    ops = [n.op_type for n in graph.graph.node]
    assert {"Gather", "Greater", "Cast", "MatMul"} <= set(ops)
    linear = to_onnx(fit(data, MinMaxScaler()))
    assert [n.op_type for n in linear.graph.node][:3] == ["Mul", "Add", "MatMul"]
    with pytest.raises(ValueError, match="dtype must be"):
        to_onnx(pipe, dtype="float16")


def test_cli_export_onnx_and_offset(data, tmp_path, capsys):
    from svmmap.cli import main

    X, _, _ = data
    pipe = fit(data, StandardScaler())
    model = tmp_path / "model.json"
    svmmap.save_model(pipe, model)
    out = tmp_path / "model.onnx"
    assert main(["export", "--to", "onnx", str(model), str(out)]) == 0
    session = ort.InferenceSession(out.read_bytes(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"X": X})[0], pipe.predict(X), rtol=1e-12, atol=1e-12)
    assert main(["export", "--to", "onnx", "--dtype", "float32", str(model), str(out)]) == 0
    session = ort.InferenceSession(out.read_bytes(), providers=["CPUExecutionProvider"])
    assert session.get_inputs()[0].type == "tensor(float)"
    capsys.readouterr()
    assert main(["export", "--to", "solr", str(model), str(tmp_path / "solr.json")]) == 0
    assert f"minus {score_offset(pipe)!r}" in capsys.readouterr().err
    assert main(["export", "--to", "solr", "--dtype", "float32", str(model), str(tmp_path / "s.json")]) == 2
    assert "--dtype is for --to onnx" in capsys.readouterr().err
