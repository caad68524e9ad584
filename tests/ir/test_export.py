"""Exports to Solr LTR and Elasticsearch LTR: the documented structure (JSON Schemas written from
the engines' documentation, in tests/_support/schemas) and the engines' scoring rules, emulated here in
float32 as the engines compute, give svmmap's scores."""

import json
from pathlib import Path

import numpy as np
import pytest
import svmmap
from svmmap import SVMMap
from svmmap.datasets import load_mq2008
from svmmap.ir.export import SOLR_SPLIT_SLACK, _smallest_f32_above, _solr_threshold, to_elasticsearch, to_solr

jsonschema = pytest.importorskip("jsonschema")
SCHEMAS = Path(__file__).resolve().parents[1] / "_support" / "schemas"


def schema(name):
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def needs_binner():
    if not hasattr(svmmap, "Binner"):
        pytest.skip("svmmap.Binner (issue #4) is not in this build")


# --- the engines' scoring rules ----------------------------------------------------------------


def solr_number(x):
    """Solr parses numbers given as strings or JSON numbers into Java floats."""
    return np.float32(float(x))


def solr_node_value(node, fv):
    """Solr's MultipleAdditiveTreesModel: at a split, go left when
    value <= threshold + NODE_SPLIT_SLACK, all in float (float32)."""
    while "value" not in node:
        threshold = np.float32(solr_number(node["threshold"]) + np.float32(SOLR_SPLIT_SLACK))
        node = node["left"] if fv[node["feature"]] <= threshold else node["right"]
    return solr_number(node["value"])


def solr_score(doc, fv):
    """fv: feature name -> float32 value. Sums in float32 as Solr does."""
    total = np.float32(0.0)
    if doc["class"].endswith("LinearModel"):
        for name, w in doc["params"]["weights"].items():
            total = np.float32(total + np.float32(w) * fv[name])
    else:
        for tree in doc["params"]["trees"]:
            total = np.float32(total + solr_number(tree["weight"]) * solr_node_value(tree["root"], fv))
    return total


def es_node_value(node, fv):
    """The o19s plugin's decision trees: go to "yes" (the first child) when
    split_condition > value (float32), else to "no"."""
    while "leaf" not in node:
        assert node["children"][0]["nodeid"] == node["yes"] and node["children"][1]["nodeid"] == node["no"]
        node = node["children"][0] if np.float32(node["split_condition"]) > fv[node["split"]] else node["children"][1]
    return np.float32(node["leaf"])


def es_score(body, fv):
    model = body["model"]["model"]
    definition = json.loads(model["definition"])
    total = np.float32(0.0)
    if model["type"] == "model/linear":
        for name, w in definition.items():
            total = np.float32(total + np.float32(w) * fv[name])
    else:
        for tree in definition:
            total = np.float32(total + es_node_value(tree, fv))
    return total


def feature_vectors(X, names):
    X32 = np.asarray(X, dtype=np.float32)
    return [dict(zip(names, row)) for row in X32], X32.astype(np.float64)


# --- thresholds under float32 -------------------------------------------------------------------


def float32_neighbours(t):
    a = np.float32(t)
    out = {a}
    for direction in (np.float32(np.inf), np.float32(-np.inf)):
        b = a
        for _ in range(3):
            b = np.nextafter(b, direction)
            out.add(b)
    return sorted(out)


@pytest.mark.parametrize("seed", range(3))
def test_exported_thresholds_split_float32_values_like_svmmap(seed):
    rng = np.random.default_rng(seed)
    # Thresholds of every magnitude, some exactly float32, some not.
    ts = np.concatenate(
        [
            rng.normal(size=300) * 10.0 ** rng.integers(-8, 8, size=300),
            np.float32(rng.normal(size=50)).astype(np.float64),
            [0.0, 0.5, 1e-6, -1e-6, 2.0000001, 16.0, -16.0, 123456.789, -98765.4321],
        ]
    )
    slack = np.float32(SOLR_SPLIT_SLACK)
    for t in ts:
        solr = np.float32(np.float32(float(_solr_threshold(t))) + slack)
        es = np.float32(_smallest_f32_above(t))
        for v in float32_neighbours(t):
            above = float(v) > t  # svmmap's indicator 1[v > t]
            # Elasticsearch: exact for every float32 value.
            assert (not es > v) == above, (t, v)
            if abs(t) >= 16:
                # Solr: exact where 1e-6 is below half a float32 step of t (|t| >= 16).
                assert (not v <= solr) == above, (t, v)
        # Elsewhere Solr's effective threshold float32(x + 1e-6) can take only the values its
        # float32 sum rounds to; it is the best such value, within one float32 step of the
        # exact one.
        exact = np.float32(t) if float(np.float32(t)) <= t else np.nextafter(np.float32(t), np.float32(-np.inf))
        assert abs(float(solr) - float(exact)) <= np.spacing(np.float32(abs(t) + SOLR_SPLIT_SLACK)), t


# --- linear models ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data():
    return load_mq2008(fold=1, split="vali")


@pytest.fixture(scope="module")
def linear(data):
    X, y, qid = data
    return SVMMap(C=10.0).fit(X, y, qid=qid)


def test_solr_linear_model(linear, data):
    X, _, _ = data
    doc = to_solr(linear, "svmmap_mq2008", store="letor")
    jsonschema.validate(doc, schema("solr_ltr_model"))
    assert doc["class"] == "org.apache.solr.ltr.model.LinearModel" and doc["store"] == "letor"
    names = [f["name"] for f in doc["features"]]
    assert names == [f"f{j + 1}" for j in range(46)] and set(doc["params"]["weights"]) == set(names)
    fvs, X64 = feature_vectors(X[:300], names)
    expected = linear.predict(X64)
    got = np.array([solr_score(doc, fv) for fv in fvs], dtype=np.float64)
    # float32 weights and sums: about 1e-7 relative per term.
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5 * np.abs(linear.coef_).sum())


def test_elasticsearch_linear_model(linear, data):
    X, _, _ = data
    body = to_elasticsearch(linear, "svmmap_mq2008")
    jsonschema.validate(body, schema("es_ltr_createmodel"))
    definition = json.loads(body["model"]["model"]["definition"])
    jsonschema.validate(definition, schema("es_ltr_linear_definition"))
    assert body["model"]["model"]["type"] == "model/linear"
    fvs, X64 = feature_vectors(X[:300], list(definition))
    got = np.array([es_score(body, fv) for fv in fvs], dtype=np.float64)
    np.testing.assert_allclose(got, linear.predict(X64), rtol=0, atol=1e-5 * np.abs(linear.coef_).sum())


def test_feature_names(linear, data):
    names = [f"feature_{j}" for j in range(46)]
    assert [f["name"] for f in to_solr(linear, feature_names=names)["features"]] == names
    with pytest.raises(ValueError, match="45 feature names given for 46 weights"):
        to_elasticsearch(linear, feature_names=names[:45])
    with pytest.raises(ValueError, match="unique"):
        to_solr(linear, feature_names=["same"] * 46)
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    frame = pd.DataFrame(X, columns=names)
    model = SVMMap(C=1.0).fit(frame, y, qid=qid)
    assert list(json.loads(to_elasticsearch(model)["model"]["model"]["definition"])) == names


# --- binned models ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def binned(data):
    needs_binner()
    from sklearn.pipeline import Pipeline

    X, y, qid = data
    base = X[:, [0, 4, 14, 24, 39]]  # TF.body, TF.whole, TF-IDF.whole, BM25.whole, LMIR.JM.whole
    pipe = Pipeline([("bin", svmmap.Binner(n_thresholds=20)), ("svm", SVMMap(C=10.0))]).fit(base, y, svm__qid=qid)
    return pipe, base


def test_solr_binned_model_is_one_tree_per_base_feature(binned):
    pipe, base = binned
    names = ["TF.body", "TF.whole", "TF-IDF.whole", "BM25.whole", "LMIR.JM.whole"]
    doc = to_solr(pipe, "binned", feature_names=names)
    jsonschema.validate(doc, schema("solr_ltr_model"))
    assert doc["class"] == "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"
    steps = svmmap.piecewise_scores(pipe)
    assert len(doc["params"]["trees"]) == sum(1 for s in steps if len(s.thresholds))
    fvs, X64 = feature_vectors(base, names)
    got = np.array([solr_score(doc, fv) for fv in fvs], dtype=np.float64)
    np.testing.assert_allclose(got, pipe.predict(X64), rtol=0, atol=1e-5)
    # Exactly the step chosen by svmmap, for values on and around every threshold.
    for tree, step, name in zip(doc["params"]["trees"], steps, names):
        for t in step.thresholds:
            for v in float32_neighbours(t):
                assert solr_node_value(tree["root"], {name: v}) == np.float32(step(float(v)))


def test_elasticsearch_binned_model_is_one_tree_per_base_feature(binned):
    pipe, base = binned
    names = ["TF.body", "TF.whole", "TF-IDF.whole", "BM25.whole", "LMIR.JM.whole"]
    body = to_elasticsearch(pipe, "binned", feature_names=names)
    jsonschema.validate(body, schema("es_ltr_createmodel"))
    trees = json.loads(body["model"]["model"]["definition"])
    jsonschema.validate(trees, schema("es_ltr_xgboost_definition"))
    assert body["model"]["model"]["type"] == "model/xgboost+json"
    fvs, X64 = feature_vectors(base, names)
    got = np.array([es_score(body, fv) for fv in fvs], dtype=np.float64)
    np.testing.assert_allclose(got, pipe.predict(X64), rtol=0, atol=1e-5)
    steps = [s for s in svmmap.piecewise_scores(pipe) if len(s.thresholds)]
    for tree, step, name in zip(trees, steps, names):
        for t in step.thresholds:
            for v in float32_neighbours(t):
                assert es_node_value(tree, {name: v}) == np.float32(step(float(v)))


def test_missing_value_indicators_are_not_exported(data):
    needs_binner()
    from sklearn.pipeline import Pipeline

    X, y, qid = data
    pipe = Pipeline([("bin", svmmap.Binner(missing="indicator")), ("svm", SVMMap())]).fit(X[:, :3], y, svm__qid=qid)
    for export in (to_solr, to_elasticsearch):
        with pytest.raises(ValueError, match="missing='error'"):
            export(pipe)


def test_cli_export(linear, tmp_path, capsys):
    from svmmap.cli import main

    model = tmp_path / "model.json"
    linear.save(model)
    out = tmp_path / "solr.json"
    assert main(["export", "--to", "solr", "--name", "m", "--store", "letor", str(model), str(out)]) == 0
    assert json.loads(out.read_text()) == to_solr(svmmap.load_model(model), "m", store="letor")
    names = ",".join(f"q{j}" for j in range(46))
    assert main(["export", "--to", "elasticsearch", "--feature-names", names, str(model), str(out)]) == 0
    body = json.loads(out.read_text())
    jsonschema.validate(body, schema("es_ltr_createmodel"))
    assert list(json.loads(body["model"]["model"]["definition"]))[:2] == ["q0", "q1"]
    assert main(["export", "--to", "elasticsearch", "--feature-names", "a,b", str(model), str(out)]) == 2
    assert "2 feature names given for 46 weights" in capsys.readouterr().err


@pytest.fixture(scope="module")
def small_linear_model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.tile([1, 0, 0, 1, 0], 8)
    return SVMMap().fit(X, y, qid=np.repeat(np.arange(8), 5))


@pytest.mark.parametrize(
    "export,needle",
    [
        # A str is not a list of names: "abc" was exported as the three features a, b and c.
        (lambda m: to_solr(m, "x", feature_names="abc"), "feature_names must be a list of feature names (str)"),
        (lambda m: to_elasticsearch(m, "x", feature_names="abc"), "feature_names must be a list of feature names"),
        (lambda m: to_solr(m, "x", feature_names=["a", "", "c"]), "feature_names[1] is '': the engines identify"),
        (lambda m: to_elasticsearch(m, "x", feature_names=["a", "b", " "]), "feature_names[2] is ' '"),
        # The model's name: None was exported as the model "None", "" as a model without a name.
        (lambda m: to_solr(m, None), "name: the engine needs a non-empty name, got None"),
        (lambda m: to_elasticsearch(m, ""), "name: the engine needs a non-empty name, got ''"),
        (lambda m: to_solr(m, "x", store=" "), "store: the engine needs a non-empty name, got ' '"),
    ],
    ids=["solr-str-names", "es-str-names", "solr-empty-name", "es-blank-name", "solr-none", "es-empty", "solr-store"],
)
def test_names_the_engines_cannot_use_are_refused(small_linear_model, export, needle):
    # Hostile trial 2, W5 and E6: the CLI refused `--name ""`, the Python API accepted it.
    with pytest.raises(ValueError) as info:
        export(small_linear_model)
    assert needle in str(info.value)
