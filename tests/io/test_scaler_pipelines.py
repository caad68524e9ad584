"""Pipelines with a scaler in front (StandardScaler, MinMaxScaler, MaxAbsScaler; with or without a
Binner) saved as model files (format version 2), loaded, and refused when they hold another step."""

import json
from pathlib import Path

import numpy as np
import pytest
import svmmap
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, PolynomialFeatures, RobustScaler, StandardScaler
from svmmap import ModelFormatError, SVMMap
from svmmap._files.model_file import read_model

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "model-format.schema.json"

SCALERS = {
    "standard": lambda: StandardScaler(),
    "standard-no-mean": lambda: StandardScaler(with_mean=False),
    "standard-no-std": lambda: StandardScaler(with_std=False),
    "standard-neither": lambda: StandardScaler(with_mean=False, with_std=False),
    "minmax": lambda: MinMaxScaler(),
    "minmax-range": lambda: MinMaxScaler(feature_range=(-2.0, 3.0)),
    "maxabs": lambda: MaxAbsScaler(),
}


@pytest.fixture(scope="module")
def data():
    """Features of unlike scales, a constant column (zero variance and range) and labels that
    depend on two of them; 30 queries of 8 documents."""
    rng = np.random.default_rng(3)
    n = 240
    X = np.column_stack(
        [
            rng.normal(1000.0, 50.0, n),  # far from 0: centring matters
            rng.exponential(0.01, n),
            np.full(n, 7.0),  # constant
            rng.normal(0.0, 1.0, n),
            -rng.exponential(3.0, n),  # negative: MaxAbsScaler's scale is |min|
        ]
    )
    y = ((X[:, 0] - 1000.0) / 50.0 + X[:, 3] + rng.normal(0, 0.5, n) > 0.5).astype(int)
    qid = np.repeat(np.arange(30), 8)
    return X, y, qid


def fit(data, scaler, binner=None):
    X, y, qid = data
    steps = [scaler] + ([binner] if binner is not None else []) + [SVMMap(C=10.0)]
    return make_pipeline(*steps).fit(X, y, svmmap__qid=qid)


def documented_map(doc, X):
    """The scaler's map as docs/model-format.md states it, from the file alone."""
    s = doc["scaler"]
    a = {k: (None if v is None else np.asarray(v, dtype=np.float64)) for k, v in s["attributes"].items()}
    kind = s["type"].rsplit(".", 1)[1]
    out = np.array(X, dtype=np.float64)
    if kind == "StandardScaler":
        if s["params"]["with_mean"]:
            out = out - a["mean_"]
        if s["params"]["with_std"]:
            out = out / a["scale_"]
    elif kind == "MinMaxScaler":
        out = out * a["scale_"] + a["min_"]
    else:
        out = out / a["scale_"]
    return out


@pytest.mark.parametrize("binned", [False, True], ids=["linear", "binned"])
@pytest.mark.parametrize("kind", sorted(SCALERS))
def test_round_trip(data, tmp_path, kind, binned):
    X, _, _ = data
    pipe = fit(data, SCALERS[kind](), svmmap.Binner(n_thresholds=6) if binned else None)
    path = tmp_path / "m.json"
    svmmap.save_model(pipe, path)
    doc = json.loads(path.read_text())
    assert doc["version"] == 2 and doc["scaler"]["type"] == f"sklearn.preprocessing.{type(pipe[0]).__name__}"
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    loaded = svmmap.load_model(path)
    assert [name for name, _ in loaded.steps] == (["scale", "bin", "svm"] if binned else ["scale", "svm"])
    scaler = loaded.steps[0][1]
    assert type(scaler) is type(pipe[0]) and scaler.get_params() == pipe[0].get_params()
    # Every fitted attribute is back (None where scikit-learn has None).
    for key, value in vars(pipe[0]).items():
        if key.endswith("_"):
            got = getattr(scaler, key)
            assert (got is None) == (value is None), key
            if value is not None:
                np.testing.assert_array_equal(got, value, err_msg=key)
    # The same scores, bit for bit (the brief asks 1e-12), for the pipeline and the CLI's reader.
    np.testing.assert_array_equal(loaded.predict(X), pipe.predict(X))
    np.testing.assert_array_equal(read_model(path).predict(X), pipe.predict(X))
    # Saved again, the file is the same.
    svmmap.save_model(loaded, tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text()) == doc
    if not binned:
        # The documented map, applied by hand, gives predict's scores.
        expected = documented_map(doc, X) @ np.asarray(doc["coef"])
        np.testing.assert_allclose(pipe.predict(X), expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_constant_column_is_only_shifted(data, tmp_path):
    # scikit-learn gives a zero-variance (zero-range) column the scale 1 (MaxAbsScaler divides
    # by the largest magnitude, 7, which is not zero).
    for scaler in (StandardScaler(), MinMaxScaler(), MaxAbsScaler()):
        pipe = fit(data, scaler)
        svmmap.save_model(pipe, tmp_path / "m.json")
        attributes = json.loads((tmp_path / "m.json").read_text())["scaler"]["attributes"]
        expected = 7.0 if isinstance(scaler, MaxAbsScaler) else 1.0
        assert attributes["scale_"][2] == pytest.approx(expected), type(scaler).__name__


def test_nan_as_the_binners_missing_value(data, tmp_path):
    X, y, qid = data
    X = X.copy()
    X[::7, 1] = np.nan
    X[::11, 3] = np.nan
    pipe = make_pipeline(StandardScaler(), svmmap.Binner(n_thresholds=5, missing="indicator"), SVMMap(C=10.0))
    pipe.fit(X, y, svmmap__qid=qid)
    svmmap.save_model(pipe, tmp_path / "m.json")
    loaded = svmmap.load_model(tmp_path / "m.json")
    scores = pipe.predict(X)
    assert np.isfinite(scores).all()
    np.testing.assert_array_equal(loaded.predict(X), scores)
    np.testing.assert_array_equal(read_model(tmp_path / "m.json").predict(X), scores)


def test_dataframe_names_belong_to_the_scaler(data, tmp_path):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    names = ["a", "b", "c", "d", "e"]
    frame = pd.DataFrame(X, columns=names)
    pipe = make_pipeline(StandardScaler(), SVMMap(C=1.0)).fit(frame, y, svmmap__qid=qid)
    svmmap.save_model(pipe, tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["feature_names"] == names and doc["scaler"]["feature_names_in"] == names
    loaded = svmmap.load_model(tmp_path / "m.json")
    assert list(loaded[0].feature_names_in_) == names and not hasattr(loaded[-1], "feature_names_in_")
    np.testing.assert_array_equal(loaded.predict(frame), pipe.predict(frame))


def test_files_without_a_scaler_keep_version_1(data, tmp_path):
    X, y, qid = data
    model = SVMMap(C=1.0).fit(X, y, qid=qid)
    model.save(tmp_path / "m.json")
    text = (tmp_path / "m.json").read_text()
    assert json.loads(text)["version"] == 1 and "scaler" not in text
    # A version-1 file as an older svmmap wrote it (written by hand here) still loads.
    old = {
        "format": "svmmap-model",
        "version": 1,
        "svmmap_version": "0.1.0",
        "n_features": 2,
        "coef": [0.5, -0.25],
        "params": {"C": 1.0},
        "feature_names": None,
        "binning": None,
        "training": None,
    }
    (tmp_path / "old.json").write_text(json.dumps(old))
    loaded = svmmap.load_model(tmp_path / "old.json")
    assert type(loaded) is SVMMap
    np.testing.assert_array_equal(loaded.predict(np.array([[2.0, 4.0]])), [0.0])


def test_bad_scaler_fields_are_refused(data, tmp_path):
    pipe = fit(data, StandardScaler())
    svmmap.save_model(pipe, tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    short = {k: v[:4] if isinstance(v, list) else v for k, v in doc["scaler"]["attributes"].items()}
    cases = [
        ({"version": 1}, r'"scaler" needs model format version 2'),
        ({"scaler": {**doc["scaler"], "type": "sklearn.preprocessing.RobustScaler"}}, r'"type" must be one of'),
        (
            {"scaler": {**doc["scaler"], "attributes": {**doc["scaler"]["attributes"], "scale_": [1, 1, -2, 1, 1]}}},
            r'"scale_"\[2\] is -2.0; a scale must be positive',
        ),
        (
            {"scaler": {**doc["scaler"], "attributes": {**doc["scaler"]["attributes"], "mean_": [1, 2]}}},
            r'"mean_" must be a list of 5 finite numbers',
        ),
        ({"scaler": {**doc["scaler"], "n_features_in": 4}}, r'"mean_" must be a list of 4 finite numbers'),
        (
            {"scaler": {**doc["scaler"], "n_features_in": 4, "attributes": short}},
            r"the scaler has 4 features but the model has 5",
        ),
        ({"scaler": {**doc["scaler"], "params": {"clip": True}}}, r"not an affine map"),
    ]
    for change, message in cases:
        (tmp_path / "bad.json").write_text(json.dumps({**doc, **change}))
        with pytest.raises(ModelFormatError, match=message):
            svmmap.load_model(tmp_path / "bad.json")


@pytest.mark.parametrize(
    "steps, message",
    [
        (lambda: [RobustScaler(), SVMMap()], r"step 'robustscaler' \(RobustScaler\) is not supported"),
        (lambda: [PolynomialFeatures(), SVMMap()], r"step 'polynomialfeatures' \(PolynomialFeatures\)"),
        (lambda: [svmmap.Binner(), StandardScaler(), SVMMap()], r"step 'standardscaler' \(StandardScaler\)"),
        (lambda: [StandardScaler(), MaxAbsScaler(), SVMMap()], r"step 'maxabsscaler' \(MaxAbsScaler\)"),
        (lambda: [MinMaxScaler(clip=True), SVMMap()], r"MinMaxScaler\(clip=True\)\) is not an affine map"),
        (lambda: [StandardScaler(), svmmap.Binner()], r"no svmmap.SVMMap as its last step"),
    ],
)
def test_unsupported_steps_are_refused_and_nothing_is_written(data, tmp_path, steps, message):
    X, y, qid = data
    made = steps()
    pipe = make_pipeline(*made)
    if isinstance(made[-1], SVMMap):
        pipe.fit(X, y, svmmap__qid=qid)
    path = tmp_path / "m.json"
    with pytest.raises(TypeError, match=message) as info:
        svmmap.save_model(pipe, path)
    assert "StandardScaler, MinMaxScaler or MaxAbsScaler" in str(info.value)
    assert not path.exists()


def test_passthrough_steps_are_skipped(data, tmp_path):
    X, y, qid = data
    pipe = Pipeline([("s", StandardScaler()), ("p", "passthrough"), ("svm", SVMMap(C=1.0))])
    pipe.fit(X, y, svm__qid=qid)
    svmmap.save_model(pipe, tmp_path / "m.json")
    np.testing.assert_array_equal(svmmap.load_model(tmp_path / "m.json").predict(X), pipe.predict(X))


@pytest.mark.parametrize("binned", [False, True], ids=["linear", "binned"])
def test_cli_classify_scores_with_the_scaler(data, tmp_path, binned):
    from svmmap.cli import main

    from tests.io.test_persistence import write_letor

    X, y, qid = data
    pipe = fit(data, MinMaxScaler(feature_range=(-1.0, 1.0)), svmmap.Binner(n_thresholds=5) if binned else None)
    model = tmp_path / "m.json"
    svmmap.save_model(pipe, model)
    letor = tmp_path / "test.txt"
    write_letor(letor, X, y, qid)
    predictions = tmp_path / "pred.txt"
    assert main(["classify", str(letor), str(model), str(predictions)]) == 0
    np.testing.assert_array_equal(np.loadtxt(predictions), pipe.predict(X))


def _edited(doc, **attributes):
    return {**doc, "scaler": {**doc["scaler"], "attributes": {**doc["scaler"]["attributes"], **attributes}}}


def test_scaler_statistics_that_contradict_each_other_are_refused_at_load(data, tmp_path):
    # These loaded, and predict then blamed the user's X ("X[2, 0] is inf") for a scale of
    # 1e308; a negative variance or sample count loaded silently.
    X, _, _ = data
    docs = {}
    for kind in ("standard", "minmax", "maxabs"):
        svmmap.save_model(fit(data, SCALERS[kind]()), tmp_path / "m.json")
        docs[kind] = json.loads((tmp_path / "m.json").read_text())
    a = {kind: doc["scaler"]["attributes"] for kind, doc in docs.items()}
    no_std = _edited(docs["standard"], scale_=[0.0] * 5)
    no_std["scaler"]["params"] = {**no_std["scaler"]["params"], "with_std": False}
    cases = [
        # x / 1e308 underflows and x * 1e308 overflows: neither is a fitted scale here.
        (_edited(docs["standard"], scale_=[1e308] + a["standard"]["scale_"][1:]), r'"scale_"\[0\] is 1e\+308, but'),
        (_edited(docs["standard"], scale_=[5e-324] + a["standard"]["scale_"][1:]), r'"scale_"\[0\] is 5e-324, but'),
        (_edited(docs["minmax"], scale_=[1e308] + a["minmax"]["scale_"][1:]), r'"scale_"\[0\] is 1e\+308, but'),
        (_edited(docs["maxabs"], scale_=[1e308] + a["maxabs"]["scale_"][1:]), r'"scale_"\[0\] is 1e\+308, but'),
        (_edited(docs["standard"], var_=[-1.0] + a["standard"]["var_"][1:]), r'"var_"\[0\] is -1.0, but a variance'),
        (_edited(docs["maxabs"], max_abs_=a["maxabs"]["max_abs_"][:4] + [-3.0]), r'"max_abs_"\[4\] is -3.0'),
        (_edited(docs["standard"], n_samples_seen_=-5), r'"n_samples_seen_" must be a number >= 0'),
        (_edited(docs["standard"], n_samples_seen_=[240, 240]), r'"n_samples_seen_" must be .* a list of 5'),
        (_edited(docs["minmax"], data_range_=[1.0] * 5), r'"data_range_"\[0\] is 1.0, but .* data_max_ - data_min_'),
        (_edited(docs["minmax"], min_=[1e300] + a["minmax"]["min_"][1:]), r'"min_"\[0\] is 1e\+300'),
        # A scale of 0 where the map does not divide by it (with_std=False) is still refused.
        (no_std, r'"scale_"\[0\] is 0.0; a scale must be positive'),
    ]
    for doc, message in cases:
        (tmp_path / "bad.json").write_text(json.dumps(doc, indent=2))
        with pytest.raises(ModelFormatError, match=rf"bad\.json:\d+: invalid scaler: .*{message}"):
            svmmap.load_model(tmp_path / "bad.json")
    # A contradiction says what scikit-learn would have fitted, from the file's own statistics.
    (tmp_path / "bad.json").write_text(json.dumps(cases[0][0]))
    with pytest.raises(ModelFormatError, match=r"square root of its var_ \(or 1, for a constant feature\)") as info:
        svmmap.load_model(tmp_path / "bad.json")
    assert repr(float(np.sqrt(a["standard"]["var_"][0]))) in str(info.value)


@pytest.mark.parametrize(
    "scaler, weights",
    [
        (StandardScaler(), None),
        (StandardScaler(), "weights"),
        (StandardScaler(with_mean=False), None),
        (MinMaxScaler(feature_range=(-1.0, 4.0)), None),
        (MaxAbsScaler(), None),
    ],
)
def test_what_scikit_learn_fits_still_loads(data, tmp_path, scaler, weights):
    # The statistics' rules are scikit-learn's own: a constant column (zero variance or range)
    # gets the scale 1, a column of tiny but non-zero spread (1e-30 here: a variance of 1e-60,
    # not constant by scikit-learn's test) the tiny scale, and sample weights make
    # n_samples_seen_ a weight sum, not a count. Fitted in two batches with partial_fit, as the
    # statistics are then merged.
    X, y, qid = data
    X = X.copy()
    X[:, 1] = np.where(np.arange(len(X)) % 2 == 0, 1e-30, -1e-30)
    if weights:
        scaler.fit(X, sample_weight=np.linspace(0.5, 1.5, len(X)))
    else:
        scaler.partial_fit(X[:100])
        scaler.partial_fit(X[100:])
    # The pipeline of the fitted steps (Pipeline.fit would fit the scaler again, at once).
    pipe = make_pipeline(scaler, SVMMap(C=10.0).fit(scaler.transform(X), y, qid=qid))
    svmmap.save_model(pipe, tmp_path / "m.json")
    loaded = svmmap.load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(X), pipe.predict(X))
