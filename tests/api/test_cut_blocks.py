"""The cut_blocks parameter from the estimators and the CLI to the core, and back from files."""

import json

import numpy as np
import pytest
from svmmap import SVMMap, SVMMapCV, load_model, save_model
from svmmap.datasets import make_ranking


@pytest.fixture(scope="module")
def data():
    data = make_ranking(n_queries=24, docs_per_query=20, n_features=5, random_state=0)
    return data.X, data.y, data.qid


def test_cut_blocks_reach_the_core(data):
    """The estimator's fit is the core's fit_path with the same cut blocks, bit for bit, and
    differs from the 1-slack fit (so the parameter is not dropped on the way)."""
    from svmmap import _core
    from svmmap._validation import check_labels, check_matrix, check_qid

    X, y, qid = data
    model = SVMMap(C=100.0, cut_blocks=4).fit(X, y, qid=qid)
    core_X, n_rows, _ = check_matrix(X)
    codes, uniques = check_qid(qid, n_rows, required_by="test")
    ((coef, summary),) = _core.fit_path(
        core_X, check_labels(y, n_rows), codes, len(uniques), _core.TrainConfig(C=100.0, cut_blocks=4)
    )
    np.testing.assert_array_equal(model.coef_, coef)
    assert model.n_iter_ == summary.n_iter
    single = SVMMap(C=100.0, cut_blocks=1).fit(X, y, qid=qid)
    assert not np.array_equal(model.coef_, single.coef_)
    # Both are within their tolerance of one optimum.
    assert abs(model.objective_ - single.objective_) <= model.tolerance_


@pytest.mark.parametrize("value", [0, -1, 1.5, "4", True, [2]])
def test_bad_cut_blocks_are_refused_naming_the_parameter(data, value):
    X, y, qid = data
    with pytest.raises(ValueError, match=r"^cut_blocks must be None or an integer >= 1, got "):
        SVMMap(cut_blocks=value).fit(X, y, qid=qid)


def test_cut_blocks_are_saved_only_when_set(data, tmp_path):
    X, y, qid = data
    for value in (None, 3):
        model = SVMMap(C=10.0, cut_blocks=value).fit(X, y, qid=qid)
        path = tmp_path / f"m{value}.json"
        save_model(model, path)
        params = json.loads(path.read_text())["params"]
        assert ("cut_blocks" in params) == (value is not None)
        loaded = load_model(path)
        assert loaded.cut_blocks == value
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_file_with_bad_cut_blocks_is_refused(data, tmp_path):
    from svmmap import ModelFormatError

    X, y, qid = data
    path = tmp_path / "m.json"
    save_model(SVMMap(cut_blocks=2).fit(X, y, qid=qid), path)
    document = json.loads(path.read_text())
    document["params"]["cut_blocks"] = 0
    path.write_text(json.dumps(document))
    with pytest.raises(ModelFormatError, match='"params"."cut_blocks"'):
        load_model(path)


def test_svmmapcv_passes_cut_blocks_on(data):
    X, y, qid = data
    search = SVMMapCV(Cs=[0.1, 10.0], cv=3, cut_blocks=2).fit(X, y, qid=qid)
    assert search.best_estimator_.cut_blocks == 2
    refit = SVMMap(C=search.best_C_, cut_blocks=2).fit(X, y, qid=qid)
    np.testing.assert_array_equal(search.coef_, refit.coef_)


def test_cli_learn_takes_cut_blocks(tmp_path):
    from svmmap.cli import main
    from svmmap.datasets import mq2008_path
    from svmmap.io import load_letor

    train = mq2008_path(1)
    X, y, qid = load_letor(train)
    assert main(["learn", "--cut-blocks", "3", "-c", "10", str(train), str(tmp_path / "cli.json")]) == 0
    save_model(SVMMap(C=10.0, cut_blocks=3).fit(X, y, qid=qid), tmp_path / "api.json")

    def without_seconds(path):
        document = json.loads(path.read_text())
        for record in document["training"]["history"]:
            del record["seconds"]
        return document

    cli = without_seconds(tmp_path / "cli.json")
    assert cli["params"]["cut_blocks"] == 3
    assert cli == without_seconds(tmp_path / "api.json")


def test_where_cut_blocks_do_not_apply_they_are_refused(data):
    X, y, qid = data
    with pytest.raises(ValueError, match='cut_blocks=2 is not supported with loss="ndcg@10:latent"'):
        SVMMap(loss="ndcg@10:latent", cut_blocks=2).fit(X, y, qid=qid)
    pytest.importorskip("distributed")
    import svmmap.dask

    with pytest.raises(ValueError, match="cut_blocks=2 is not supported by svmmap.dask.SVMMap"):
        svmmap.dask.SVMMap(cut_blocks=2).fit(X, y, qid=qid)
