"""A fifth independent trial (gate5): the same bad input given to every entry point, judged by
whether they answer alike. Each test failed before its fix: an entry point that skipped a shared
check of python/svmmap/_validation.py, and so took a value that the others refuse, or refused
one that the others read."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import svmmap
from svmmap import metrics
from svmmap.losses import structured_hinge


def _data():
    # Four queries of five documents; query q holds relevant documents at rows 0 and 3.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 3))
    y = np.tile([1.0, 0, 0, 1, 0], 4)
    return X, y, np.repeat(np.arange(4), 5)


# 1. The metrics' relevance_threshold: every trainer and best_accuracy refuse True and "0"
#    (finite_number); the metrics read True as 1 and "0" as 0.


@pytest.mark.parametrize("threshold", [True, np.bool_(False), "0"])
@pytest.mark.parametrize(
    "call",
    [
        lambda y, s, q, t: metrics.evaluate(y, s, q, ["map"], relevance_threshold=t),
        lambda y, s, q, t: metrics.mean_average_precision(y, s, q, relevance_threshold=t),
        lambda y, s, q, t: metrics.ndcg(y, s, q, k=3, relevance_threshold=t),
        lambda y, s, q, t: metrics.per_query("mrr", y, s, q, relevance_threshold=t),
        lambda y, s, q, t: metrics.make_ranking_scorer("map", relevance_threshold=t),
        lambda y, s, q, t: svmmap.baselines.AdaRank(relevance_threshold=t).fit(np.c_[s, -s], y, qid=q),
        # The rule the others follow, for comparison.
        lambda y, s, q, t: metrics.best_accuracy(y, s, q, relevance_threshold=t),
        lambda y, s, q, t: structured_hinge(s, y, q, relevance_threshold=t),
    ],
)
def test_relevance_threshold_of_the_metrics_is_the_shared_rule(call, threshold):
    _, y, q = _data()
    s = np.arange(20.0)
    with pytest.raises(ValueError, match=r"relevance_threshold must be a finite number, got"):
        call(y, s, q, threshold)


def test_relevance_threshold_of_the_metrics_still_takes_numbers():
    # Query 0 ranks its documents 0..4 by score 4, 3, 2, 1, 0 (reversed arange): relevant rows
    # 0 and 3 sit at ranks 1 and 4, AP = (1/1 + 2/4) / 2 = 0.75, on every query.
    _, y, q = _data()
    s = -np.arange(20.0)
    for t in (0, 0.5, np.float32(0.5), np.int64(0)):
        assert metrics.mean_average_precision(y, s, q, relevance_threshold=t) == pytest.approx(0.75)


# 2. sample_weight: the one rule of per-row numbers (one_column), as y's. It parsed strings,
#    dropped the imaginary part of complex weights and refused the column vector df[["w"]].


def _fit_weighted(model, X, y, q, w):
    return model.fit(X, y, qid=q, sample_weight=w)


def _score_weighted(model, X, y, q, w):
    return model.fit(X, y, qid=q).score(X, y, qid=q, sample_weight=w)


@pytest.mark.parametrize("call", [_fit_weighted, _score_weighted])
@pytest.mark.parametrize("model", [svmmap.SVMMap, lambda: svmmap.SVMMapCV(Cs=[1.0], cv=2)])
def test_sample_weight_follows_the_rule_of_per_row_numbers(model, call):
    from sklearn.exceptions import DataConversionWarning

    X, y, q = _data()
    w = np.ones(20)
    with pytest.raises(ValueError, match=r"sample_weight must hold numbers, got the string '1.0'"):
        call(model(), X, y, q, w.astype(str))
    with pytest.raises(ValueError, match=r"Complex data not supported: sample_weight"):
        call(model(), X, y, q, w.astype(complex))
    # A column vector is its entries, with scikit-learn's warning, as y of that shape is: the
    # same model or score as the 1-D weights give.
    with pytest.warns(DataConversionWarning, match=r"column-vector sample_weight of shape \(20, 1\)"):
        column = call(model(), X, y, q, w.reshape(-1, 1))
    flat = call(model(), X, y, q, w)
    if isinstance(flat, float):
        assert column == flat
    else:
        np.testing.assert_array_equal(column.coef_, flat.coef_)


# 3. score's weighted mean: weights near the float64 maximum added up to inf and the score was
#    NaN without a word, where fit with the same weights trains (or names them).


@pytest.mark.parametrize("model", [svmmap.SVMMap, lambda: svmmap.SVMMapCV(Cs=[1.0], cv=2)])
def test_score_with_huge_weights_is_the_weighted_mean(model):
    X, y, q = _data()
    fitted = model().fit(X, y, qid=q)
    plain = fitted.score(X, y, qid=q)
    # Equal weights, however large, are the plain mean over queries.
    assert fitted.score(X, y, qid=q, sample_weight=np.full(20, 1e308)) == pytest.approx(plain, rel=1e-12)
    # Weights 2:1:1:0 times 2^1022 (they add up to 2^1024, beyond float64) give the mean
    # (2 a0 + a1 + a2) / 4 of the queries' scores a_q, each read from a score of that query alone.
    alone = [fitted.score(X[q == k], y[q == k], qid=q[q == k]) for k in range(4)]
    w = np.repeat([2.0, 1.0, 1.0, 0.0], 5) * 2.0**1022
    expected = (2 * alone[0] + alone[1] + alone[2]) / 4
    assert fitted.score(X, y, qid=q, sample_weight=w) == pytest.approx(expected, rel=1e-12)


# 4. The scores of structured_hinge and save_predictions: the rule of the metrics' y_score. They
#    parsed strings, dropped imaginary parts (structured_hinge) and refused a column vector.


@pytest.mark.parametrize(
    "call",
    [
        lambda s, y, q, tmp_path: structured_hinge(s, y, q),
        lambda s, y, q, tmp_path: svmmap.io.save_predictions(tmp_path / "p.txt", s),
        # The rule they now follow, for comparison.
        lambda s, y, q, tmp_path: metrics.evaluate(y, s, q, ["map"]),
    ],
)
def test_scores_follow_the_rule_of_per_row_numbers(call, tmp_path):
    from sklearn.exceptions import DataConversionWarning

    _, y, q = _data()
    s = np.linspace(1.0, 0.0, 20)
    with pytest.raises(ValueError, match=r"scores? must hold numbers, got the string '1.0'"):
        call(s.astype(str), y, q, tmp_path)
    with pytest.raises(ValueError, match=r"Complex data not supported: y?_?scores?"):
        call(s.astype(complex), y, q, tmp_path)
    with pytest.warns(DataConversionWarning, match=r"column-vector y?_?scores? of shape \(20, 1\)"):
        column = call(s.reshape(-1, 1), y, q, tmp_path)
    flat = call(s, y, q, tmp_path)
    if isinstance(flat, tuple):  # structured_hinge's (value, gradient)
        assert column[0] == flat[0]
        np.testing.assert_array_equal(column[1], flat[1])


# 5. Run.from_dict: the scores as from_frame and read_run check them. float() parsed "1.0",
#    read True as 1.0 and raised a bare TypeError for None or a complex number.


@pytest.mark.parametrize(
    ("score", "message"),
    [
        ("1.0", r"score must hold numbers, got '1.0'"),
        (True, r"score\[0\] must be a number, got True"),
        (None, r"score must hold numbers, got None"),
        (1 + 0j, r"score must hold numbers, got \(1\+0j\)"),
    ],
)
def test_run_from_dict_scores_are_checked_as_from_frame(score, message):
    from svmmap.ir.trec import Run

    with pytest.raises(ValueError, match=message):
        Run.from_dict({"1": {"a": score, "b": 2.0}})
    with pytest.raises(ValueError, match=message):
        Run.from_frame({"qid": ["1", "1"], "docno": ["a", "b"], "score": np.array([score, 2.0], dtype=object)})
    # A mixed list, where NumPy would make True the score 1.0.
    with pytest.raises(ValueError, match=r"score\[1\] must be a number, got True"):
        Run.from_frame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.5, True]})


def test_run_from_dict_still_takes_numbers():
    from svmmap.ir.trec import Run

    run = Run.from_dict({"1": {"a": 1, "b": np.float32(2.5)}, "2": {"c": np.int64(3)}})
    assert run.score.tolist() == [1.0, 2.5, 3.0]


# 6. Qrels.from_frame: its own check let a uint64 label of 2**63 wrap around to -2**63, which
#    from_dict, read_qrels and the constructor refuse; and NumPy read [1, True] as [1, 1].


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (np.array([2**63, 0], dtype=np.uint64), r"rel must hold integers within int64, got 9223372036854775808"),
        (np.array([2**64 - 1, 0], dtype=np.uint64), r"rel must hold integers within int64"),
        ([1, True], r"rel(evance)?\[1\] must be an integer, got True"),
        ([1.5, 0.0], r"rel must hold integers, got 1.5"),
        (["1", "0"], r"rel must hold integers, got '1'"),
    ],
)
def test_qrels_from_frame_checks_relevance_as_from_dict(labels, message):
    import pandas as pd
    from svmmap.ir.trec import Qrels

    frame = {"qid": ["1", "1"], "docno": ["a", "b"], "label": labels}
    with pytest.raises(ValueError, match=message):
        Qrels.from_frame(frame)
    with pytest.raises(ValueError, match=message):
        Qrels.from_frame(pd.DataFrame(frame))
    # The same labels from a dict, with the same words.
    with pytest.raises(ValueError, match=message):
        Qrels.from_dict({"1": dict(zip(["a", "b"], list(labels)))})


def test_qrels_from_frame_still_takes_whole_numbers():
    from svmmap.ir.trec import Qrels

    qrels = Qrels.from_frame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "label": [2.0, 0.0, -1.0]})
    assert qrels.rel.tolist() == [2, 0, -1]


# 7. SVMAcc's dense copy: np.asarray raised float()'s TypeError on pandas' NA, where every other
#    estimator reads a nullable column's NA as NaN and names its place.


@pytest.mark.parametrize(
    "model", [svmmap.SVMMap, svmmap.baselines.SVMAcc, svmmap.baselines.SVMAcc2, svmmap.baselines.AdaRank]
)
def test_svmacc_reads_a_nullable_frame_as_every_estimator(model):
    import pandas as pd

    X, y, q = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["b"] = pd.array(np.arange(20), dtype="Int64")
    frame.loc[2, "b"] = pd.NA
    with pytest.raises(ValueError, match=r"X\[2, 1\] is NaN: features must be finite numbers"):
        model().fit(frame, y, qid=q)


# 8. qid as a column vector (a DataFrame's df[["qid"]]) or a row vector: flattened without a
#    word, where y of the same shapes warns (column) or is refused (row).


@pytest.mark.parametrize(
    "call",
    [
        lambda X, y, q: svmmap.SVMMap().fit(X, y, qid=q),
        lambda X, y, q: svmmap.Binner().fit(X, y, qid=q),
        lambda X, y, q: metrics.evaluate(y, X[:, 0], q, ["map"]),
        lambda X, y, q: structured_hinge(X[:, 0], y, q),
    ],
)
def test_qid_column_vector_warns_as_y(call):
    import pandas as pd
    from sklearn.exceptions import DataConversionWarning

    X, y, q = _data()
    with pytest.warns(DataConversionWarning, match=r"column-vector qid of shape \(20, 1\)"):
        call(X, y, q.reshape(-1, 1))
    with pytest.warns(DataConversionWarning, match=r"column-vector qid of shape \(20, 1\)"):
        call(X, y, pd.DataFrame({"qid": q})[["qid"]])
    with pytest.raises(ValueError, match=r"qid must be 1-D, got shape \(1, 20\)"):
        call(X, y, q.reshape(1, -1))
    # A list of tuples stays a list of ids (one tuple per row).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call(X, y, [(int(k), "a") for k in q])


# 9. `--n-jobs none`: its help says None (the default) uses every core, and the other options
#    whose default is None take 'none'; it was refused as "expected an integer thread count".


def test_cli_n_jobs_takes_none(capsys):
    from svmmap.cli.parser import build_parser

    parser = build_parser()
    for command in (["learn", "t.txt", "m.json"], ["classify", "t.txt", "m.json", "p.txt"]):
        assert parser.parse_args([*command, "--n-jobs", "none"]).n_jobs is None
        assert parser.parse_args([*command, "--n-jobs", "2"]).n_jobs == 2
        with pytest.raises(SystemExit):
            parser.parse_args([*command, "--n-jobs", "0"])
    with pytest.raises(SystemExit):
        parser.parse_args(["learn", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert (
        "--n-jobs N_JOBS Threads for the oracles, scoring and cut sums; None (the default) uses every core; 'none' for None"
        in help_text
    )


# 10. score's messages: the metric's checks named y_true and y_score, which score's caller did
#     not pass ("qid has 19 entries but y_score has 20 rows"); fit's name y, X and qid.


@pytest.mark.parametrize("model", [svmmap.SVMMap, lambda: svmmap.SVMMapCV(Cs=[1.0], cv=2)])
def test_score_messages_name_scores_arguments(model):
    from sklearn.exceptions import DataConversionWarning

    X, y, q = _data()
    fitted = model().fit(X, y, qid=q)
    for call in (fitted.score, model().fit):  # score's answers are fit's
        with pytest.raises(ValueError, match=r"^qid has 19 entries but X has 20 rows$"):
            call(X, y, qid=q[:-1])
        with pytest.raises(
            ValueError, match=r"^y must hold numbers, got the string '1.0'.*np.asarray\(y, dtype=float\)"
        ):
            call(X, y.astype(str), qid=q)
        with pytest.raises(ValueError, match=r"^y has 19 entries but X has 20 rows$"):
            call(X, y[:-1], qid=q)
    # A column vector of query ids warns once, as in fit.
    with pytest.warns(DataConversionWarning) as caught:
        fitted.score(X, y, qid=q.reshape(-1, 1), sample_weight=np.ones(20))
    assert len(caught) == 1


# 11. svmmap.dask.SVMMap refused a column-vector y or qid ("y must be 1-D, got shape (20, 1)")
#     that svmmap.SVMMap reads with scikit-learn's warning.


def test_dask_reads_a_column_vector_y_as_svmmap():
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    from sklearn.exceptions import DataConversionWarning

    X, y, q = _data()
    with (
        distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster,
        distributed.Client(cluster),
    ):
        dX = da.from_array(X, chunks=(10, 3))
        # The model of the 1-D y and qid, which the column vectors must give.
        local = svmmap.dask.SVMMap().fit(dX, da.from_array(y, chunks=10), qid=da.from_array(q, chunks=10))
        for label, column in (("y", da.from_array(y.reshape(-1, 1), chunks=(10, 1))), ("y", y.reshape(-1, 1))):
            with pytest.warns(DataConversionWarning, match=rf"column-vector {label} of shape \(20, 1\)"):
                model = svmmap.dask.SVMMap().fit(dX, column, qid=da.from_array(q, chunks=10))
            np.testing.assert_array_equal(model.coef_, local.coef_)
        with pytest.warns(DataConversionWarning, match=r"column-vector qid of shape \(20, 1\)"):
            model = svmmap.dask.SVMMap().fit(dX, da.from_array(y, chunks=10), qid=q.reshape(-1, 1))
        np.testing.assert_array_equal(model.coef_, local.coef_)


# 12. eval_qid=[None]: SVMMap.fit says "eval_qid[0] is None: give the query ids of eval_set[0]";
#     Binner.fit answered fit's qid= advice about metadata routing, which is not the cause.


@pytest.mark.parametrize(
    "model",
    [svmmap.SVMMap, lambda: svmmap.SVMMapCV(Cs=[1.0], cv="validation"), lambda: svmmap.Binner(interactions=1)],
)
def test_eval_qid_none_is_named_alike(model):
    X, y, q = _data()
    with pytest.raises(ValueError, match=r"^eval_qid\[0\] is None: give the query ids of eval_set\[0\]$"):
        model().fit(X, y, qid=q, eval_set=[(X, y)], eval_qid=[None])


# 15 (in part). A NaN query id was "qid contains NaN or infinite values" with no position, where
#     a NaN label is "y[3] is nan"; a pandas nullable column's NA arrives as that NaN.


def test_a_nan_query_id_is_named_by_its_position():
    import pandas as pd

    X, y, q = _data()
    bad = pd.Series(q, dtype="Int64")
    bad[3] = pd.NA
    for call in (
        lambda: svmmap.SVMMap().fit(X, y, qid=bad),
        lambda: metrics.evaluate(y, X[:, 0], bad, ["map"]),
        lambda: svmmap.SVMMap().fit(X, y, qid=q, eval_set=[(X, y)], eval_qid=[np.where(q == 0, np.inf, q)]),
    ):
        with pytest.raises(
            ValueError, match=r"contains NaN or infinite values: (eval_)?qid(\[0\])?\[[03]\] is (nan|inf)$"
        ):
            call()


# 11 (continued). svmmap.dask.SVMMap.predict of a 1-D dask X said "X has shape (20,), but SVMMap
#     was fitted with 3 features" where svmmap.SVMMap.predict says how to reshape it.


def test_dask_predict_of_a_1d_x_says_what_svmmap_says():
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")

    X, y, q = _data()
    local = svmmap.SVMMap().fit(X, y, qid=q)
    with pytest.raises(ValueError) as in_memory:
        local.predict(X[:, 0])
    assert "Reshape your data with X.reshape(-1, 1)" in str(in_memory.value)
    with (
        distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster,
        distributed.Client(cluster),
    ):
        model = svmmap.dask.SVMMap().fit(da.from_array(X, chunks=(10, 3)), da.from_array(y, chunks=10), qid=q)
        with pytest.raises(ValueError) as on_dask:
            model.predict(da.from_array(X[:, 0], chunks=10))
    assert str(on_dask.value) == str(in_memory.value)
