"""The layouts other tools use: LightGBM's group sizes and .query files, LETOR Feature-null
files, ir_datasets / PyTerrier qrels frames, and validation sets scored during fit."""

import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from svmmap import Binner, DataFormatError, SVMMap, load_letor
from svmmap.ir.trec import Qrels

LETOR = "2 qid:7 1:0.5 2:1\n0 qid:7 1:0.1 2:0\n1 qid:9 1:0.3 2:0.2\n0 qid:9 1:0.9 2:0.1\n0 qid:9 1:0.2 2:0.4\n"
# The same documents in LightGBM's layout: no qid: fields, query sizes in rank.train.query.
LIGHTGBM = "2 1:0.5 2:1\n0 1:0.1 2:0\n1 1:0.3 2:0.2\n0 1:0.9 2:0.1\n0 1:0.2 2:0.4\n"


def run(*args):
    return subprocess.run([sys.executable, "-m", "svmmap", *map(str, args)], capture_output=True, text=True)


def data(seed=0, n_queries=8, size=12):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * size, 4))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=len(X)) > 0.4).astype(float)
    return X, y, np.repeat(np.arange(n_queries) * 3 + 100, size)


# ---------------------------------------------------------------------------------------
# fit(group=...)


def test_group_sizes_train_the_model_qid_trains():
    X, y, qid = data()
    by_qid = SVMMap(C=5.0).fit(X, y, qid=qid)
    by_group = SVMMap(C=5.0).fit(X, y, group=[12] * 8)
    np.testing.assert_array_equal(by_group.coef_, by_qid.coef_)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"qid": np.zeros(96), "group": [96]},
            "give qid (one query id per row) or group (query sizes in row order), not both",
        ),
        ({"group": [12] * 7}, "group adds up to 84 rows, but X has 96 rows"),
        ({"group": [12] * 7 + [0, 12]}, "group must hold positive query sizes, got 0"),
        ({"group": [[12] * 8]}, "group must be a non-empty 1-D array"),
        ({"group": [11.5] * 8}, "group must hold whole numbers"),
        ({}, "needs qid="),
    ],
)
def test_group_errors_name_the_argument(kwargs, message):
    X, y, _ = data()
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        SVMMap().fit(X, y, **kwargs)


# ---------------------------------------------------------------------------------------
# eval_set


def ap_by_definition(labels, scores):
    order = np.argsort(-scores, kind="stable")
    rel = labels[order] > 0
    hits = np.cumsum(rel)
    return float(np.mean(hits[rel] / (np.flatnonzero(rel) + 1)))


def test_eval_set_records_the_metric_of_every_iterate():
    X, y, qid = data(0)
    Xv, yv, qv = data(1, n_queries=5)
    iterates = []
    model = SVMMap(C=5.0, callback=lambda r: iterates.append(dict(r)) and False)
    model.fit(X, y, qid=qid, eval_set=[(Xv, yv), (X, y)], eval_qid=[qv, qid], eval_metric=["map", "ndcg@5"])
    # The training data itself (the same arrays) is recorded under LightGBM's name for it.
    assert set(model.evals_result_) == {"valid_0", "training"}
    for name in ("valid_0", "training"):
        for metric in ("map", "ndcg@5"):
            assert len(model.evals_result_[name][metric]) == model.n_iter_ == len(iterates)
    # The user's callback sees the documented record, without the iterate.
    assert all("coef" not in r for r in iterates)
    # The first iterate is w = 0: every score ties, and MAP with pessimistic ties puts the
    # relevant documents last. The last iterate is coef_.
    first = np.mean(
        [
            ap_by_definition(yv[qv == q][np.argsort(yv[qv == q])], -np.arange((qv == q).sum(), dtype=float))
            for q in np.unique(qv)
            if (yv[qv == q] > 0).any()
        ]
    )
    assert model.evals_result_["valid_0"]["map"][0] == pytest.approx(first, abs=1e-12)
    s = Xv @ model.coef_
    last = np.mean([ap_by_definition(yv[qv == q], s[qv == q]) for q in np.unique(qv) if (yv[qv == q] > 0).any()])
    assert model.evals_result_["valid_0"]["map"][-1] == pytest.approx(last, abs=1e-12)
    # Validation sets do not change the model.
    np.testing.assert_array_equal(model.coef_, SVMMap(C=5.0).fit(X, y, qid=qid).coef_)
    # A later fit without eval_set drops the old curves (LightGBM's empty dict).
    assert model.fit(X, y, qid=qid).evals_result_ == {}


def test_eval_group_is_lightgbm_style():
    X, y, qid = data(0)
    Xv, yv, qv = data(1, n_queries=5)
    a = SVMMap(C=5.0).fit(X, y, group=[12] * 8, eval_set=[(Xv, yv)], eval_group=[[12] * 5])
    b = SVMMap(C=5.0).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv])
    assert a.evals_result_ == b.evals_result_


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"eval_group": [[12] * 5]}, "eval_group and eval_qid describe eval_set, which was not given"),
        # Neither given: the message asks for one and does not say "not both" (it used to).
        (
            {"eval_set": "pair"},
            r"pass eval_qid=\[qid_val\], .*, or LightGBM's eval_group=\[sizes_val\], .*as group is to X\)$",
        ),
        ({"eval_set": "pair", "eval_group": [[12] * 5], "eval_qid": [None]}, "not both"),
        (
            {"eval_set": "pair", "eval_group": [[12] * 4]},
            r"eval_group\[0\] adds up to 48 rows, but eval_set\[0\] X has 60 rows",
        ),
        ({"eval_set": "pair", "eval_group": [[12] * 5, [1]]}, "eval_group has 2 entries for 1 eval_set entries"),
        ({"eval_set": "bare", "eval_group": [[12] * 5]}, r"eval_set must be a list of \(X, y\) tuples"),
        ({"eval_set": "narrow", "eval_group": [[12] * 5]}, r"eval_set\[0\] has 3 features, but X has 4"),
    ],
)
def test_eval_set_errors(kwargs, message):
    X, y, qid = data(0)
    Xv, yv, _ = data(1, n_queries=5)
    sets = {"pair": [(Xv, yv)], "bare": (Xv, yv), "narrow": [(Xv[:, :3], yv)]}
    if "eval_set" in kwargs:
        kwargs = {**kwargs, "eval_set": sets[kwargs["eval_set"]]}
    with pytest.raises(ValueError, match=message):
        SVMMap().fit(X, y, qid=qid, **kwargs)


# ---------------------------------------------------------------------------------------
# load_letor: LightGBM's .query files and Feature-null files


def test_lightgbm_layout_reads_like_letor(tmp_path):
    (tmp_path / "letor.txt").write_text(LETOR)
    (tmp_path / "rank.train").write_text(LIGHTGBM)
    (tmp_path / "rank.train.query").write_text("2\n3\n")
    X0, y0, q0 = load_letor(tmp_path / "letor.txt")
    # Picked up automatically, as LightGBM does, or named.
    for kwargs in ({}, {"group": tmp_path / "rank.train.query"}, {"group": [2, 3]}):
        X, y, q = load_letor(tmp_path / "rank.train", **kwargs)
        np.testing.assert_array_equal(X, X0)
        np.testing.assert_array_equal(y, y0)
        assert q.tolist() == [0, 0, 1, 1, 1]
    with pytest.raises(DataFormatError, match="field 2 must be 'qid:<query id>'"):
        load_letor(tmp_path / "rank.train", group=False)


def test_group_file_errors(tmp_path):
    (tmp_path / "rank.train").write_text(LIGHTGBM)
    (tmp_path / "letor.txt").write_text(LETOR)
    bad = tmp_path / "bad.query"
    bad.write_text("2\nthree\n")
    with pytest.raises(
        DataFormatError, match=r"bad.query:2: expected a query size \(a positive integer\), got 'three'"
    ):
        load_letor(tmp_path / "rank.train", group=bad)
    bad.write_text("2\n2\n")
    with pytest.raises(ValueError, match="bad.query adds up to 4 rows, but .*rank.train has 5 rows"):
        load_letor(tmp_path / "rank.train", group=bad)
    with pytest.raises(DataFormatError, match=r"letor.txt:1: field 2 is a query id \('qid:7'\)"):
        load_letor(tmp_path / "letor.txt", group=[2, 3])


NULLS = "2 qid:1 1:0.5 2:NULL\n0 qid:1 1:NULL 2:0.1\n1 qid:2 1:0.2 2:0.3\n0 qid:2 1:0.1 2:null\n"


def test_feature_null_files_read_as_nan(tmp_path):
    path = tmp_path / "null.txt"
    path.write_text(NULLS)
    with pytest.raises(
        DataFormatError,
        match=r'null.txt:1: field 4 \(\'2:NULL\'\): value NULL: a missing value \(read LETOR Feature-null files with missing="nan"',
    ):
        load_letor(path)
    X, y, _ = load_letor(path, missing="nan", dtype=np.float32)
    assert np.isnan(X).tolist() == [[False, True], [True, False], [False, False], [False, True]]
    assert X[0, 0] == np.float32(0.5)
    with pytest.raises(ValueError, match='missing must be "error" or "nan"'):
        load_letor(path, missing="zero")


@pytest.mark.slow
def test_feature_null_data_trains_through_a_binner_with_missing_indicators(tmp_path):
    # Feature 1 decides relevance where present; where it is missing the document is relevant,
    # which the weight of feature 1's missing indicator has to learn.
    rng = np.random.default_rng(3)
    lines = []
    for q in range(12):
        for d in range(8):
            v = rng.uniform()
            missing = d == 0
            rel = 1 if missing or v > 0.8 else 0
            lines.append(f"{rel} qid:{q} 1:{'NULL' if missing else f'{v:.4f}'} 2:{rng.uniform():.4f}")
    path = tmp_path / "null.txt"
    path.write_text("\n".join(lines) + "\n")
    X, y, qid = load_letor(path, missing="nan")
    pipe = make_pipeline(Binner(n_thresholds=10, missing="indicator"), SVMMap(C=100.0)).fit(X, y, svmmap__qid=qid)
    scores = pipe.predict(X)
    assert all(ap_by_definition(y[qid == q], scores[qid == q]) == 1.0 for q in np.unique(qid))

    # The same through the command line, whose model file holds the binner.
    model, preds = tmp_path / "m.json", tmp_path / "p.txt"
    assert run("learn", "-c", 100, "--missing", "nan", "--bins", 10, path, model).returncode == 0
    assert json.loads(model.read_text())["binning"]["params"]["missing"] == "indicator"
    out = run("classify", "--missing", "nan", path, model, preds)
    assert out.returncode == 0, out.stderr
    assert "MAP 1.0000" in out.stderr
    out = run("learn", path, model)
    assert out.returncode != 0 and 'missing="nan"' in out.stderr


@pytest.mark.slow
def test_cli_reads_the_lightgbm_layout(tmp_path):
    (tmp_path / "letor.txt").write_text(LETOR)
    (tmp_path / "rank.train").write_text(LIGHTGBM)
    (tmp_path / "sizes").write_text("2\n3\n")
    for name, extra in (("letor.txt", []), ("rank.train", ["--group", tmp_path / "sizes"])):
        out = run("learn", "-c", 10, *extra, tmp_path / name, tmp_path / f"{name}.json")
        assert out.returncode == 0, out.stderr
    a = json.loads((tmp_path / "letor.txt.json").read_text())
    b = json.loads((tmp_path / "rank.train.json").read_text())
    assert a["coef"] == b["coef"]
    # Without sizes, the LightGBM file is refused with the line and field.
    out = run("learn", tmp_path / "rank.train", tmp_path / "x.json")
    assert out.returncode != 0 and "rank.train:1: field 2 must be 'qid:<query id>'" in out.stderr
    (tmp_path / "rank.train.query").write_text("2\n3\n")
    out = run("classify", tmp_path / "rank.train", tmp_path / "letor.txt.json", tmp_path / "p.txt")
    assert out.returncode == 0, out.stderr
    # evaluate groups the rows by the same sizes: two queries.
    out = run("evaluate", "--metrics", "map", tmp_path / "rank.train", tmp_path / "p.txt")
    assert out.returncode == 0 and "(2 queries" in out.stdout, out.stdout + out.stderr


# ---------------------------------------------------------------------------------------
# Qrels from frames


def test_qrels_from_ir_datasets_and_pyterrier_frames():
    pd = pytest.importorskip("pandas")
    ird = pd.DataFrame(
        {"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "relevance": [2, 0, 1], "iteration": "0"}
    )
    pyt = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "a"], "label": [2.0, 0.0, 1.0]})
    for frame in (ird, pyt, {"qid": [1, 1, 2], "docno": ["a", "b", "a"], "label": [2, 0, 1]}):
        q = Qrels.from_frame(frame)
        assert q.to_dict() == {"1": {"a": 2, "b": 0}, "2": {"a": 1}}
    with pytest.raises(ValueError, match="qrels: no relevance column; expected one of relevance, label"):
        Qrels.from_frame({"qid": ["1"], "docno": ["a"]})
    # The words of from_dict and the constructor (gate5: one check for every way in).
    with pytest.raises(ValueError, match=r"qrels: rel must hold integers, got 0.5"):
        Qrels.from_frame({"qid": ["1"], "docno": ["a"], "label": [0.5]})
