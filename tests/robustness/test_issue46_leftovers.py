"""Issue 46's leftovers (one gate for every way in): parameters of validation sets given without
one (I4), numbers written as strings and column vectors given to the metrics (K1, K2), a
non-str name or bool relevances in the TREC containers (K6), the checks of the Dask entry
points (K3, K7 and I6 on svmmap.dask) and unknown parameters of a model file (I7). Each test
failed before its fix (measured against 494220f), except the boundaries and these pins: a Dask
DataFrame's repeated column name was already refused (K3), unknown model-file keys were
already dropped (I7, now written on the page), early stopping without an eval set and SVMMapCV's
eval_metric were already refused, and y_true of shape (2, 2) or (4, 1, 1) already refused."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import svmmap
from svmmap import metrics

# --- K1, K2: the metrics' arrays of numbers -----------------------------------------------------

#: Every public metric, called on (y_true, y_score) of four documents in one query.
METRICS = {
    "map": lambda t, s: metrics.mean_average_precision(t, s),
    "ndcg": lambda t, s: metrics.ndcg(t, s),
    "ndcg@2": lambda t, s: metrics.ndcg(t, s, k=2),
    "mrr": lambda t, s: metrics.mrr(t, s),
    "roc_auc": lambda t, s: metrics.roc_auc(t, s),
    "precision_at": lambda t, s: metrics.precision_at(2, t, s),
    "best_accuracy": lambda t, s: metrics.best_accuracy(t, s),
    "per_query": lambda t, s: metrics.per_query("map", t, s).values[0],
    "evaluate": lambda t, s: metrics.evaluate(t, s, metrics=["map"])["map"],
}

#: Labels and scores of one query: the relevant documents are ranked 1st and 3rd, so AP is
#: (1/1 + 2/3) / 2 = 5/6 by hand.
Y_TRUE = [1, 0, 1, 0]
Y_SCORE = [0.9, 0.8, 0.7, 0.1]


@pytest.mark.parametrize("metric", sorted(METRICS))
@pytest.mark.parametrize("argument", ["y_true", "y_score"])
def test_numbers_written_as_strings_are_refused_naming_the_argument(metric, argument):
    # K1: y_true=["1", "0", ...] was converted by NumPy and scored as numbers, where a numeric
    # array check (the X of every fit) refuses text.
    given = {"y_true": list(Y_TRUE), "y_score": list(Y_SCORE)}
    given[argument] = [str(v) for v in given[argument]]
    with pytest.raises(ValueError, match=rf"^{argument} must hold numbers, got the string '[0-9.]+'"):
        METRICS[metric](given["y_true"], given["y_score"])


@pytest.mark.parametrize("kind", ["object", "pandas", "bytes"])
def test_strings_are_refused_in_every_container(kind):
    # K1 in an object array (one string among numbers), a pandas Series of text and bytes.
    if kind == "object":
        y_true = np.array([1, 0, "1", 0], dtype=object)
    elif kind == "pandas":
        y_true = pytest.importorskip("pandas").Series(["1", "0", "1", "0"])
    else:
        y_true = np.array([b"1", b"0", b"1", b"0"])
    with pytest.raises(ValueError, match=r"^y_true must hold numbers, got the string b?'1'"):
        metrics.mean_average_precision(y_true, Y_SCORE)


def test_numbers_of_other_dtypes_are_still_scored():
    # The boundary of K1: integers, floats, bools, numbers in an object array are numbers.
    for y_true in (np.array(Y_TRUE), np.array(Y_TRUE, dtype=float), np.array(Y_TRUE, dtype=bool)):
        assert metrics.mean_average_precision(y_true, Y_SCORE) == pytest.approx(5 / 6)
    assert metrics.mean_average_precision(np.array(Y_TRUE, dtype=object), Y_SCORE) == pytest.approx(5 / 6)


def test_n_relevant_as_strings_is_refused_naming_it():
    # K1 for the metrics' other array of numbers (one total per query).
    with pytest.raises(ValueError, match=r"^n_relevant must hold numbers, got the string '2'"):
        metrics.per_query("map", Y_TRUE, Y_SCORE, n_relevant=["2"])


@pytest.mark.parametrize("metric", sorted(METRICS))
@pytest.mark.parametrize("argument", ["y_true", "y_score"])
def test_a_column_vector_is_read_with_scikit_learns_data_conversion_warning(metric, argument):
    # K2: a y_score of shape (4, 1) (a model's 2-D output) was flattened without a word. Like
    # scikit-learn's column_or_1d, it is read as its entries with a DataConversionWarning that
    # names the argument and the shape; the value is the 1-D one, 5/6 for map by hand.
    from sklearn.exceptions import DataConversionWarning

    given = {"y_true": np.array(Y_TRUE), "y_score": np.array(Y_SCORE)}
    expected = METRICS[metric](given["y_true"], given["y_score"])
    given[argument] = given[argument].reshape(-1, 1)
    with pytest.warns(DataConversionWarning, match=rf"^A column-vector {argument} of shape \(4, 1\) was passed") as w:
        value = METRICS[metric](given["y_true"], given["y_score"])
    assert value == expected
    # The warning points at the caller's line, not at svmmap's check.
    assert w[0].filename == __file__


@pytest.mark.parametrize("shape", [(1, 4), (2, 2), (4, 1, 1)])
@pytest.mark.parametrize("argument", ["y_true", "y_score"])
def test_other_shapes_are_refused_naming_the_argument_and_the_shape(argument, shape):
    # K2: a row vector (1, 4) or a (2, 2) block was flattened into four entries silently.
    given = {"y_true": np.array(Y_TRUE), "y_score": np.array(Y_SCORE)}
    given[argument] = given[argument].reshape(shape)
    with pytest.raises(ValueError, match=rf"^{argument} must be 1-D, got shape \({', '.join(map(str, shape))}\)$"):
        metrics.mean_average_precision(given["y_true"], given["y_score"])


def test_fit_reads_a_column_vector_y_as_scikit_learns_estimators_do():
    # K2 applied to y_true applies to every y, which goes through the same check: a column
    # vector is read with the warning (scikit-learn's regressors do so), the same model.
    from sklearn.exceptions import DataConversionWarning

    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(20, 3)), np.tile([1, 0, 0, 1, 0], 4), np.repeat(np.arange(4), 5)
    flat = svmmap.SVMMap().fit(X, y, qid=qid)
    with pytest.warns(DataConversionWarning, match=r"^A column-vector y of shape \(20, 1\)"):
        column = svmmap.SVMMap().fit(X, y.reshape(-1, 1), qid=qid)
    assert np.array_equal(flat.coef_, column.coef_)
    with pytest.raises(ValueError, match=r"^y must hold numbers, got the string '1'"):
        svmmap.SVMMap().fit(X, y.astype(str), qid=qid)


# --- I4: what describes validation sets, given without one ---------------------------------------


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.tile([1, 0, 0, 1, 0], 8)
    return X, y, np.repeat(np.arange(8), 5)


#: The arguments of fit that describe validation sets, each given alone, and the words of
#: the warning that names it.
WITHOUT_EVAL_SET = {
    "eval_metric": ({"eval_metric": "ndcg@10"}, "eval_metric='ndcg@10'"),
    "eval_at": ({"eval_at": [5]}, "eval_at=[5]"),
    "eval_names": ({"eval_names": ["vali"]}, "eval_names=['vali']"),
    "log_evaluation": ({"callbacks": [svmmap.log_evaluation(1)]}, "callbacks=[log_evaluation(...)]"),
    "record_evaluation": ({"callbacks": [svmmap.record_evaluation({})]}, "callbacks=[record_evaluation(...)]"),
}


@pytest.mark.parametrize("argument", sorted(WITHOUT_EVAL_SET))
def test_what_describes_validation_sets_warns_without_one(argument):
    # I4: these were ignored without a word (LightGBM ignores them too, measured with 4.7:
    # LGBMRanker.fit(eval_metric="map", eval_at=[3], callbacks=[record_evaluation(r)]) without
    # an eval set records {} and warns of nothing). A UserWarning names the argument, says it
    # needs an eval_set, and points at the caller's line; the model is the one without it.
    kwargs, named = WITHOUT_EVAL_SET[argument]
    X, y, qid = _data()
    plain = svmmap.SVMMap().fit(X, y, qid=qid)
    with pytest.warns(UserWarning, match=rf"^{re.escape(named)} is ignored: it needs an eval_set") as w:
        model = svmmap.SVMMap().fit(X, y, qid=qid, **kwargs)
    assert [r.filename for r in w] == [__file__]
    assert np.array_equal(model.coef_, plain.coef_)


def test_with_an_eval_set_nothing_warns():
    # The boundary of I4: the same arguments with a validation set are used, and say nothing.
    X, y, qid = _data()
    record: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svmmap.SVMMap().fit(
            X,
            y,
            qid=qid,
            eval_set=[(X, y)],
            eval_qid=[qid],
            eval_metric="map",
            eval_at=[5],
            eval_names=["vali"],
            callbacks=[svmmap.record_evaluation(record)],
        )
    assert list(record) == ["vali"] and list(record["vali"]) == ["map", "ndcg@5"]


def test_early_stopping_without_an_eval_set_is_still_refused():
    # The rule already in place for early stopping (as LightGBM's "For early stopping, at least
    # one dataset and eval metric is required"): a refusal, not a warning.
    X, y, qid = _data()
    with pytest.raises(ValueError, match=r"^early_stopping_rounds needs an eval_set"):
        svmmap.SVMMap().fit(X, y, qid=qid, early_stopping_rounds=3)
    with pytest.raises(ValueError, match=r"^early_stopping needs an eval_set"):
        svmmap.SVMMap().fit(X, y, qid=qid, callbacks=[svmmap.early_stopping(3)])


def test_svmmapcv_refuses_what_describes_validation_sets():
    # SVMMapCV's rule for these arguments is a refusal (it chooses by scoring): unchanged.
    X, y, qid = _data()
    with pytest.raises(TypeError, match=r"eval_metric"):
        svmmap.SVMMapCV(Cs=[1.0], cv=2).fit(X, y, qid=qid, eval_metric="ndcg@10")


# --- K6: the TREC containers' name and relevances -----------------------------------------------


def test_read_run_refuses_a_name_that_is_not_a_str(tmp_path):
    # K6: read_run(path, name=3) kept the int 3 as the run's name, which every table and
    # message joins as text.
    from svmmap.ir.trec import Qrels, Run, read_run

    path = tmp_path / "a.run"
    path.write_text("1 Q0 d1 1 2.5 bm25\n")
    for name in (3, b"a", True):
        with pytest.raises(ValueError, match=rf"^name must be a str, got {re.escape(repr(name))}$"):
            read_run(path, name=name)
    with pytest.raises(ValueError, match=r"^name must be a str, got 3$"):
        Run(["1"], ["d1"], [2.5], [1], name=3)
    with pytest.raises(ValueError, match=r"^name must be a str, got 3$"):
        Qrels(["1"], ["d1"], [1], name=3)
    # The boundary: a str name is kept, and without one the path names the run.
    assert read_run(path, name="bm25").name == "bm25"
    assert read_run(path).name == str(path)


@pytest.mark.parametrize(
    "make",
    [
        lambda Qrels: Qrels(["1", "1"], ["a", "b"], [True, False]),
        lambda Qrels: Qrels(["1", "1"], ["a", "b"], np.array([np.True_, np.False_])),
        lambda Qrels: Qrels(["1", "1"], ["a", "b"], [True, 0]),
        lambda Qrels: Qrels.from_dict({"1": {"a": True, "b": 0}}),
    ],
)
def test_qrels_refuse_bool_relevances_naming_the_entry(make):
    # K6: True and False were judged 1 and 0 ([True, 0] became the integers [1, 0] in NumPy's
    # conversion), where every numeric parameter of the package refuses a bool.
    from svmmap.ir.trec import Qrels

    with pytest.raises(ValueError, match=r"^qrels: rel\[0\] must be an integer, got True$"):
        make(Qrels)


def test_qrels_from_a_frame_refuse_a_bool_label_column():
    pd = pytest.importorskip("pandas")
    from svmmap.ir.trec import Qrels

    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "label": [True, False]})
    with pytest.raises(ValueError, match=r"^qrels: relevance\[0\] must be an integer, got True$"):
        Qrels.from_frame(frame)
    # The boundary: integer labels, of any integer dtype, are judgments.
    frame["label"] = np.array([2, 0], dtype=np.uint8)
    assert Qrels.from_frame(frame).rel.tolist() == [2, 0]
    assert Qrels.from_dict({"1": {"a": 1, "b": 0}}).rel.tolist() == [1, 0]


def test_a_run_refuses_bool_ranks():
    # The same column rule reads a run's ranks.
    from svmmap.ir.trec import Run

    with pytest.raises(ValueError, match=r"^run: rank\[0\] must be an integer, got True$"):
        Run(["1"], ["a"], [1.0], [True])


# --- K3, K7 and I4 on the Dask entry points ---------------------------------------------------


@pytest.fixture(scope="module")
def dask_client():
    # A cluster of one thread in this process, as the Dask rows of test_gate_matrix.py use:
    # these tests are about the checks at the entry points, not the transport.
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.dataframe")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0") as client:
        yield client


def _dask_data(frame_columns=None):
    # Two partitions of four whole queries each.
    X, y, qid = _data()
    if frame_columns is None:
        da = pytest.importorskip("dask.array")
        return da.from_array(X, chunks=(20, 3)), da.from_array(y, chunks=20), da.from_array(qid, chunks=20)
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    frame = pd.DataFrame(X, columns=frame_columns)
    return (
        dd.from_pandas(frame, npartitions=2, sort=False),
        dd.from_pandas(pd.Series(y), npartitions=2, sort=False),
        dd.from_pandas(pd.Series(qid), npartitions=2, sort=False),
    )


@pytest.mark.parametrize("estimator", ["SVMMap", "Binner"])
def test_dask_fits_refuse_repeated_column_names_as_in_memory_ones(dask_client, estimator):
    # K3 on the Dask entry points: a dask DataFrame whose columns repeat a name is refused by
    # the in-memory fits' check (feature_names_of), in its words, before any partition is read.
    import svmmap.dask

    dX, dy, dq = _dask_data(["a", "a", "c"])
    model = {"SVMMap": svmmap.dask.SVMMap(), "Binner": svmmap.dask.Binner()}[estimator]
    with pytest.raises(ValueError, match=r"^X's column names must be unique, but \['a'\] occur more than once"):
        model.fit(dX, dy, qid=dq)
    # The boundary: distinct names are kept, as in memory.
    dX, dy, dq = _dask_data(["a", "b", "c"])
    assert list(model.fit(dX, dy, qid=dq).feature_names_in_) == ["a", "b", "c"]


def test_dask_svmmap_s_warnings_name_svmmap_dask_svmmap(dask_client):
    # K7 on the Dask entry point: svmmap.dask.SVMMap's errors name it ("svmmap.dask.SVMMap.fit()
    # does not take sample_weight"), but its warnings said "SVMMap stopped at max_iter=1", the
    # in-memory estimator's name. Every message of its fit now names the estimator called.
    import svmmap.dask
    from sklearn.exceptions import ConvergenceWarning

    dX, dy, dq = _dask_data()
    with pytest.warns(ConvergenceWarning, match=r"^svmmap\.dask\.SVMMap stopped at max_iter=1 "):
        svmmap.dask.SVMMap(max_iter=1).fit(dX, dy, qid=dq)
    # The boundary: the in-memory estimator fitted after it names itself again.
    X, y, qid = _data()
    with pytest.warns(ConvergenceWarning, match=r"^SVMMap stopped at max_iter=1 "):
        svmmap.SVMMap(max_iter=1).fit(X, y, qid=qid)


def test_dask_svmmap_warns_of_eval_metric_without_an_eval_set(dask_client):
    # I4 on the Dask entry point, which reads its validation arguments through the same code.
    import svmmap.dask

    dX, dy, dq = _dask_data()
    with pytest.warns(UserWarning, match=r"^eval_at=\[3\] is ignored: it needs an eval_set") as w:
        svmmap.dask.SVMMap().fit(dX, dy, qid=dq, eval_at=[3])
    assert [r.filename for r in w] == [__file__]


@pytest.mark.parametrize("given", ["y numpy", "y dask", "qid numpy", "qid dask"])
def test_dask_binner_refuses_y_or_qid_of_another_length_as_in_memory(dask_client, given):
    # I6 on the Dask entry point (the in-memory Binner got it last round): svmmap.dask.Binner
    # does not read y and qid on Dask input, and accepted one of 39 entries for 40 rows
    # silently; the in-memory check now reads them, in its words.
    da = pytest.importorskip("dask.array")
    import svmmap.dask

    dX, _, _ = _dask_data()
    _, y, qid = _data()
    argument, where = given.split()
    short = {"y": y, "qid": qid}[argument][:-1]
    kwargs = {argument: da.from_array(short, chunks=20) if where == "dask" else short}
    with pytest.raises(ValueError, match=rf"^{argument} has 39 entries but X has 40 rows$"):
        svmmap.dask.Binner().fit(dX, **kwargs)
    # The boundary: the right lengths, Dask or not, fit the same thresholds as without them.
    plain = svmmap.dask.Binner().fit(dX)
    fitted = svmmap.dask.Binner().fit(dX, da.from_array(y, chunks=20), qid=qid)
    assert all(np.array_equal(a, b) for a, b in zip(plain.thresholds_, fitted.thresholds_))


def test_a_binner_warns_of_a_validation_set_it_does_not_read(dask_client):
    # I4's rule for the binners: without interactions (and on Dask input, where they are
    # refused) eval_set was checked and then ignored without a word.
    import svmmap.dask

    X, y, qid = _data()
    with pytest.warns(UserWarning, match=r"^eval_set is ignored: only interactions=k reads it") as w:
        svmmap.Binner().fit(X, y, eval_set=[(X, y)], eval_qid=[qid])
    assert [r.filename for r in w] == [__file__]
    dX, dy, dq = _dask_data()
    with pytest.warns(UserWarning, match=r"^eval_set is ignored: a validation set judges pairwise interactions"):
        svmmap.dask.Binner().fit(dX, eval_set=[(X, y)], eval_qid=[qid])
    # Its queries without it are refused on Dask input too, as in memory.
    with pytest.raises(ValueError, match=r"^eval_group and eval_qid describe eval_set, which was not given$"):
        svmmap.dask.Binner().fit(dX, eval_qid=[qid])
    # The boundary: with interactions the set is read (it judges the pairs), without a word.
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        svmmap.Binner(interactions=1).fit(X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid])


# --- I7: unknown keys of a model file ---------------------------------------------------------


def test_unknown_keys_of_a_model_file_are_ignored_and_dropped_on_save(tmp_path):
    # I7, kept as docs/model-format.md documents (forward compatibility: a file of a later
    # svmmap may hold parameters this one does not know), and the page now says what happens
    # to them: the loaded model does not keep them, so saving it again writes none of them.
    import json

    X, y, qid = _data()
    path, again = tmp_path / "m.json", tmp_path / "again.json"
    model = svmmap.SVMMap().fit(X, y, qid=qid)
    model.save(path)
    doc = json.loads(path.read_text())
    doc["params"]["from_a_later_svmmap"] = 3
    doc["from_a_later_svmmap"] = {"a": 1}
    path.write_text(json.dumps(doc))
    loaded = svmmap.load_model(path)
    assert np.array_equal(loaded.predict(X), model.predict(X))
    assert "from_a_later_svmmap" not in loaded.get_params()
    assert not hasattr(loaded, "from_a_later_svmmap")
    loaded.save(again)
    saved = json.loads(again.read_text())
    assert "from_a_later_svmmap" not in saved and "from_a_later_svmmap" not in saved["params"]
    # Everything else survives the round trip: the file svmmap wrote in the first place.
    assert saved == json.loads(json.dumps({k: v for k, v in doc.items() if k != "from_a_later_svmmap"})) | {
        "params": {k: v for k, v in doc["params"].items() if k != "from_a_later_svmmap"}
    }


def test_the_model_format_page_says_what_happens_to_unknown_keys():
    # The promise the test above checks is written on the page users read.
    from pathlib import Path

    page = " ".join((Path(__file__).resolve().parents[2] / "docs" / "model-format.md").read_text().split())
    assert "readers ignore unknown fields and parameters: they are dropped" in page
