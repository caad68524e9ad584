"""Model files (documented, versioned JSON), pickling, and the CLI on the same format."""

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import svmmap
from svmmap import ModelFormatError, SVMMap
from svmmap.cli import main
from svmmap.datasets import load_mq2008

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "model-format.schema.json"


@pytest.fixture(scope="module")
def data():
    return load_mq2008(fold=1, split="vali")


@pytest.fixture(scope="module")
def fitted(data):
    X, y, qid = data
    return SVMMap(C=10.0, eps=1e-4).fit(X, y, qid=qid)


def write_letor(path, X, y, qid):
    """A LETOR file written independently of svmmap's reader (exact float repr)."""
    with open(path, "w") as f:
        for row, label, q in zip(X, y, qid):
            feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row))
            f.write(f"{int(label)} qid:{q} {feats}\n")


def test_round_trip_is_exact(fitted, tmp_path):
    path = tmp_path / "model.json"
    fitted.save(path)
    loaded = svmmap.load_model(path)
    assert type(loaded) is SVMMap
    np.testing.assert_array_equal(loaded.coef_, fitted.coef_)  # bit for bit
    params = fitted.get_params()
    assert loaded.get_params() == {**params, "callback": None, "n_jobs": None, "verbose": 0}
    for attr in (
        "objective_",
        "dual_objective_",
        "gap_",
        "n_iter_",
        "n_cuts_",
        "converged_",
        "stop_reason_",
        "n_queries_",
        "n_queries_skipped_",
        "n_features_in_",
        "history_",
    ):
        assert getattr(loaded, attr) == getattr(fitted, attr), attr


def test_file_follows_the_documented_schema(fitted, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    path = tmp_path / "model.json"
    svmmap.save_model(fitted, path)
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    # The documented content: weights, loss, C, eps and the training summary.
    assert doc["format"] == "svmmap-model" and doc["version"] == 1
    assert doc["params"]["loss"] == "map" and doc["params"]["C"] == 10.0 and doc["params"]["eps"] == 1e-4
    assert doc["n_features"] == len(doc["coef"]) == 46
    assert doc["training"]["n_iter"] == fitted.n_iter_ == len(doc["training"]["history"])
    assert doc["training"]["gap"] <= 10.0 * 1e-4
    # The schema rejects what the format forbids.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**doc, "version": "1"}, json.loads(SCHEMA.read_text()))


def test_feature_names_from_a_dataframe_are_saved_and_checked(data, tmp_path):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    names = [f"f{j + 1}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    model = SVMMap(C=1.0).fit(frame, y, qid=qid)
    assert list(model.feature_names_in_) == names
    path = tmp_path / "model.json"
    model.save(path)
    assert json.loads(path.read_text())["feature_names"] == names
    loaded = svmmap.load_model(path)
    assert list(loaded.feature_names_in_) == names
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))
    swapped = frame[names[1:2] + names[:1] + names[2:]]
    with pytest.raises(ValueError, match="feature names should match"):
        loaded.predict(swapped)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        loaded.predict(X)


def test_pickle_round_trip(fitted, data):
    X, _, _ = data
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.coef_, fitted.coef_)
    assert restored.get_params() == fitted.get_params() and restored.history_ == fitted.history_
    np.testing.assert_array_equal(restored.predict(X), fitted.predict(X))


def test_wrong_feature_count_is_a_clear_error(fitted, tmp_path):
    path = tmp_path / "model.json"
    fitted.save(path)
    loaded = svmmap.load_model(path)
    with pytest.raises(
        ValueError, match=r"X has 45 features, but SVMMap is expecting 46 features as input \(it was fitted with 46\)"
    ):
        loaded.predict(np.zeros((3, 45)))
    # A file whose weights do not match its declared feature count is refused on loading.
    doc = json.loads(path.read_text())
    doc["n_features"] = 47
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="n_features is 47 but coef has 46 entries"):
        svmmap.load_model(path)


def test_newer_or_foreign_or_truncated_files_are_refused(fitted, tmp_path):
    path = tmp_path / "model.json"
    fitted.save(path)
    text = path.read_text()
    doc = json.loads(text)
    path.write_text(json.dumps({**doc, "version": 3}))
    with pytest.raises(ModelFormatError, match="version 3 was written by a newer svmmap.*reads versions 1 to 2"):
        svmmap.load_model(path)
    path.write_text(json.dumps({**doc, "format": "lightgbm"}))
    with pytest.raises(ModelFormatError, match="not an svmmap model"):
        svmmap.load_model(path)
    path.write_text(text[: len(text) // 2])
    with pytest.raises(ModelFormatError, match=r"model.json:\d+: the file ends early \(truncated\?\)"):
        svmmap.load_model(path)


def test_unsaveable_objects_are_refused(fitted, tmp_path):
    with pytest.raises(TypeError, match="fitted svmmap.SVMMap or a Pipeline"):
        svmmap.save_model(object(), tmp_path / "m.json")
    with pytest.raises(ValueError, match="cannot be written to a model file"):
        svmmap.save_model(pickle.loads(pickle.dumps(fitted)).set_params(loss=object()), tmp_path / "m.json")


def test_cli_and_python_share_the_format(data, tmp_path, capsys):
    X, y, qid = data
    train = tmp_path / "train.txt"
    write_letor(train, X, y, qid)
    cli_model = tmp_path / "cli.json"
    assert main(["learn", "-c", "10", "-e", "0.0001", str(train), str(cli_model)]) == 0
    # The CLI's file loads in Python as the model Python would have trained on the same file.
    Xf, yf, qf = svmmap.load_letor(train)
    python_model = SVMMap(C=10.0, eps=1e-4).fit(Xf, yf, qid=qf)
    from_cli = svmmap.load_model(cli_model)
    np.testing.assert_array_equal(from_cli.coef_, python_model.coef_)
    assert from_cli.get_params() == python_model.get_params()
    # And a file Python writes is what `svmmap classify` scores with.
    py_model = tmp_path / "py.json"
    python_model.save(py_model)
    predictions = tmp_path / "pred.txt"
    assert main(["classify", str(train), str(py_model), str(predictions)]) == 0
    scores = np.loadtxt(predictions)
    np.testing.assert_array_equal(scores, python_model.predict(Xf))


def test_cli_classify_refuses_a_file_with_more_features(fitted, data, tmp_path, capsys):
    X, y, qid = data
    wide = tmp_path / "wide.txt"
    write_letor(wide, np.hstack([X, np.ones((X.shape[0], 2))]), y, qid)
    model = tmp_path / "model.json"
    fitted.save(model)
    assert main(["classify", str(wide), str(model), str(tmp_path / "pred.txt")]) == 2
    err = capsys.readouterr().err
    assert "features up to index 48" in err and "trained on 46 features" in err
    assert not (tmp_path / "pred.txt").exists()


@pytest.fixture(scope="module")
def binned_pipeline(data):
    if not hasattr(svmmap, "Binner"):
        pytest.skip("svmmap.Binner (issue #4) is not in this build")
    from sklearn.pipeline import Pipeline

    X, y, qid = data
    base = X[:, :5]
    pipe = Pipeline([("bin", svmmap.Binner(n_thresholds=8)), ("svm", SVMMap(C=10.0))]).fit(base, y, svm__qid=qid)
    return pipe, base


def test_binned_pipeline_round_trip(binned_pipeline, data, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    pipe, base = binned_pipeline
    path = tmp_path / "binned.json"
    svmmap.save_model(pipe, path)
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    binner = pipe.named_steps["bin"]
    # The binning field is the Binner's own dict; the weights are those of its indicators.
    assert doc["binning"] == binner.to_dict()
    assert doc["n_features"] == binner.n_output_features_ == len(doc["coef"])
    assert doc["feature_names"] == list(binner.get_feature_names_out())
    loaded = svmmap.load_model(path)
    assert [name for name, _ in loaded.steps] == ["bin", "svm"]
    assert type(loaded.named_steps["bin"]) is svmmap.Binner
    np.testing.assert_array_equal(loaded.predict(base), pipe.predict(base))
    for a, b in zip(loaded.named_steps["bin"].thresholds_, binner.thresholds_):
        np.testing.assert_array_equal(a, b)
    # The loaded Pipeline takes the base features and says so when given others.
    with pytest.raises(ValueError, match="expecting 5 features"):
        loaded.predict(np.zeros((2, 6)))


def test_binned_pipeline_with_inconsistent_weights_is_refused(binned_pipeline, tmp_path):
    pipe, _ = binned_pipeline
    path = tmp_path / "binned.json"
    svmmap.save_model(pipe, path)
    doc = json.loads(path.read_text())
    doc["binning"]["thresholds"][0] = doc["binning"]["thresholds"][0][:-1]
    doc["binning"]["n_output_features"] -= 1
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match=r"binning produces \d+ features but the model has \d+ weights"):
        svmmap.load_model(path)
    doc["binning"]["version"] = 99
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="invalid binning: Binner dict version 99 was written by a newer svmmap"):
        svmmap.load_model(path)


def test_cli_classifies_with_a_binned_model(binned_pipeline, data, tmp_path):
    pipe, base = binned_pipeline
    _, y, qid = data
    test_file = tmp_path / "test.txt"
    write_letor(test_file, base, y, qid)
    model = tmp_path / "binned.json"
    svmmap.save_model(pipe, model)
    predictions = tmp_path / "pred.txt"
    assert main(["classify", str(test_file), str(model), str(predictions)]) == 0
    Xf, _, _ = svmmap.load_letor(test_file)
    np.testing.assert_array_equal(np.loadtxt(predictions), pipe.predict(Xf))


def test_feature_importances_survive_a_round_trip(tmp_path):
    """A loaded model reports the importances it was trained with (they need the training
    data's spread, which the file does not otherwise hold); a file without them loads without
    the attribute, and a file whose list has the wrong length or a negative share is refused."""
    import json

    from svmmap.datasets import load_mq2008

    X, y, qid = load_mq2008(fold=1, split="train")
    model = svmmap.SVMMap(C=1.0).fit(X, y, qid=qid)
    path = tmp_path / "m.json"
    model.save(path)
    loaded = svmmap.load_model(path)
    np.testing.assert_array_equal(loaded.feature_importances_, model.feature_importances_)
    doc = json.loads(path.read_text())
    del doc["training"]["feature_importances"]
    path.write_text(json.dumps(doc))
    assert not hasattr(svmmap.load_model(path), "feature_importances_")
    for bad, words in (([0.5], "has 1 values but the model has"), ([-1.0] * X.shape[1], "numbers >= 0")):
        doc["training"]["feature_importances"] = bad
        path.write_text(json.dumps(doc))
        with pytest.raises(svmmap.ModelFormatError, match=words):
            svmmap.load_model(path)


def test_saving_a_search_points_at_its_best_estimator(data, tmp_path):
    """SVMMapCV is a search, not a model: the refused save says which model to save, and
    nothing is written."""
    X, y, qid = data
    with pytest.warns(svmmap.SkippedQueriesWarning):
        search = svmmap.SVMMapCV(Cs=[1.0], cv=2).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="got SVMMapCV; save or export its best_estimator_"):
        svmmap.save_model(search, tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()
    svmmap.save_model(search.best_estimator_, tmp_path / "m.json")


def test_a_gz_name_is_written_and_read_as_gzip(fitted, data, tmp_path):
    # The ".gz" file is read back with Python's own gzip module: it must hold exactly the
    # JSON of the plain file, and svmmap must read both (and a plain file compressed by hand).
    import gzip

    plain, packed = tmp_path / "model.json", tmp_path / "model.json.gz"
    svmmap.save_model(fitted, plain)
    svmmap.save_model(fitted, packed)
    assert packed.read_bytes()[:2] == b"\x1f\x8b"
    with gzip.open(packed, "rt", encoding="utf-8") as f:
        assert json.load(f) == json.loads(plain.read_text())
    by_hand = tmp_path / "by_hand.model"
    by_hand.write_bytes(gzip.compress(plain.read_bytes()))
    X = data[0]
    for path in (packed, by_hand):
        np.testing.assert_array_equal(svmmap.load_model(path).predict(X), fitted.predict(X))


def test_a_file_that_only_starts_as_gzip_is_refused_by_name(tmp_path):
    path = tmp_path / "broken.json.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00garbage that is no deflate stream")
    # The one opener of text files names the line the gzip data reached (issue 46).
    with pytest.raises(
        ModelFormatError, match=r"broken\.json\.gz:1: the file starts as gzip data but does not decompress"
    ):
        svmmap.load_model(path)
