"""LightGBM's training API in SVMMap.fit: callbacks=[early_stopping, log_evaluation,
record_evaluation], eval_names, eval_X/eval_y, and early stopping that never watches the
training data. Expected stops are derived from the recorded curves of a fit without early
stopping (the solver's path is deterministic, so its first rounds are the same)."""

from __future__ import annotations

import numpy as np
import pytest
import svmmap
from svmmap import SVMMap
from svmmap.datasets import make_ranking


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=80, docs_per_query=15, n_features=10, random_state=2)
    Xv, yv, qv = make_ranking(n_queries=25, docs_per_query=15, n_features=10, random_state=3)
    Xw, yw, qw = make_ranking(n_queries=25, docs_per_query=15, n_features=10, random_state=4)
    return (X, y, qid), (Xv, yv, qv), (Xw, yw, qw)


def fit(data, **kw):
    (X, y, qid), (Xv, yv, qv), (Xw, yw, qw) = data
    sets = dict(eval_set=[(Xv, yv), (Xw, yw)], eval_qid=[qv, qw], eval_metric=["map", "ndcg@5"])
    sets.update(kw)
    return SVMMap(C=1000.0, eps=1e-6, n_iter_no_change=None).fit(X, y, qid=qid, **sets)


def first_stop(curves, rounds):
    """(round that stops, best round of the pair that stopped it) by LightGBM's rule over the
    given {(set, metric): values} curves (rounds count from 1), or None when none stops."""
    n = len(next(iter(curves.values())))
    for t in range(1, n + 1):
        for values in curves.values():
            best = int(np.argmax(values[:t])) + 1  # the first maximum so far
            if t - best >= rounds:
                return t, best
    return None


def test_early_stopping_callback_stops_where_lightgbm_s_rule_says(data):
    record = {}
    full = fit(data, callbacks=[svmmap.record_evaluation(record)])
    assert record == full.evals_result_
    curves = {(s, m): v for s, per in record.items() for m, v in per.items()}
    for rounds in (2, 4):
        for first_only in (False, True):
            watched = {k: v for k, v in curves.items() if not first_only or k[1] == "map"}
            expected = first_stop(watched, rounds)
            assert expected is not None, "the curves must stop for the test to mean something"
            model = fit(data, callbacks=[svmmap.early_stopping(rounds, first_metric_only=first_only, verbose=False)])
            assert (model.n_iter_, model.best_iteration_) == expected, (rounds, first_only)
            # coef_ is the kept round's iterate: its validation scores are the recorded ones.
            assert model.best_score_ == {s: {m: record[s][m][expected[1] - 1] for m in record[s]} for s in record}


def test_early_stopping_rounds_is_the_callback_on_one_pair(data):
    # fit(early_stopping_rounds=N) watches the first metric of the first set, as documented.
    by_argument = fit(data, eval_set=[data[1][:2]], eval_qid=[data[1][2]], early_stopping_rounds=3)
    by_callback = fit(
        data,
        eval_set=[data[1][:2]],
        eval_qid=[data[1][2]],
        eval_metric="map",
        callbacks=[svmmap.early_stopping(3, verbose=False)],
    )
    assert by_argument.best_iteration_ == by_callback.best_iteration_
    np.testing.assert_array_equal(by_argument.coef_, by_callback.coef_)


def test_early_stopping_never_watches_the_training_data(data):
    (X, y, qid), (Xv, yv, qv), _ = data
    alone = SVMMap(C=1000.0, eps=1e-6).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], early_stopping_rounds=3)
    # The training data first (the same arrays): recorded as "training", not watched.
    both = SVMMap(C=1000.0, eps=1e-6).fit(
        X, y, qid=qid, eval_set=[(X, y), (Xv, yv)], eval_qid=[qid, qv], early_stopping_rounds=3
    )
    assert list(both.evals_result_) == ["training", "valid_1"]
    assert both.best_iteration_ == alone.best_iteration_
    np.testing.assert_array_equal(both.coef_, alone.coef_)
    # A copy of the training data is other arrays, and so a validation set, as in LightGBM.
    copy = SVMMap(C=1000.0, eps=1e-6).fit(X, y, qid=qid, eval_set=[(X.copy(), y.copy())], eval_qid=[qid])
    assert list(copy.evals_result_) == ["valid_0"]
    with pytest.raises(ValueError, match="every eval set is the training data itself"):
        SVMMap().fit(X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid], callbacks=[svmmap.early_stopping(3)])


def test_eval_x_eval_y_and_eval_names(data):
    (X, y, qid), (Xv, yv, qv), (Xw, yw, qw) = data
    by_set = SVMMap(C=10.0).fit(X, y, qid=qid, eval_set=[(Xv, yv), (Xw, yw)], eval_qid=[qv, qw])
    by_xy = SVMMap(C=10.0).fit(X, y, qid=qid, eval_X=(Xv, Xw), eval_y=(yv, yw), eval_qid=[qv, qw])
    assert by_xy.evals_result_ == by_set.evals_result_
    one = SVMMap(C=10.0).fit(X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv], eval_names=["vali"])
    assert one.evals_result_ == {"vali": by_set.evals_result_["valid_0"]}
    with pytest.raises(ValueError, match="not both"):
        SVMMap().fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_X=Xv, eval_y=yv, eval_qid=[qv])
    with pytest.raises(ValueError, match="go together"):
        SVMMap().fit(X, y, qid=qid, eval_X=Xv, eval_qid=[qv])
    with pytest.raises(ValueError, match="eval_names must name each"):
        SVMMap().fit(X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv], eval_names=["a", "b"])


def test_log_evaluation_prints_every_period(data, capsys):
    (X, y, qid), (Xv, yv, qv), _ = data
    model = SVMMap(C=10.0).fit(X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv], callbacks=[svmmap.log_evaluation(2)])
    lines = capsys.readouterr().out.splitlines()
    curve = model.evals_result_["valid_0"]["map"]
    assert lines == [f"[{t}]\tvalid_0's map: {curve[t - 1]:g}" for t in range(2, len(curve) + 1, 2)]
    with pytest.raises(ValueError, match="callbacks\\[0\\]"):
        SVMMap().fit(X, y, qid=qid, callbacks=[3])
    # One callback outside a list: early_stopping's is not callable, and list() of it failed
    # with "'_EarlyStopping' object is not iterable".
    for one in (svmmap.early_stopping(2), svmmap.log_evaluation(1)):
        with pytest.raises(ValueError, match="callbacks must be a list of callbacks"):
            SVMMap().fit(X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv], callbacks=one)


def test_record_evaluation_reused_by_two_fits_holds_the_last_fit(data):
    """LightGBM's record_evaluation clears its dict when a training starts: one callback
    given to several fits (a search's fit_params, a refit) holds the curves of the last fit,
    one value per round of it, not the rounds of every fit end to end."""
    (X, y, qid), (Xv, yv, qv), _ = data
    history: dict = {}
    recorder = svmmap.record_evaluation(history)
    for C in (10.0, 100.0):
        model = SVMMap(C=C).fit(X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv], callbacks=[recorder])
    assert len(history["valid_0"]["map"]) == model.n_iter_
    assert history == model.evals_result_


def test_eval_names_and_eval_qid_must_be_lists_of_one_entry_per_set(data):
    (X, y, qid), (Xv, yv, qv), (Xw, yw, qw) = data
    two = dict(eval_X=(Xv, Xw), eval_y=(yv, yw), eval_qid=[qv, qw])
    # A string is not a list of names: list("ab") would have named the two sets "a" and "b".
    with pytest.raises(ValueError, match="eval_names must be a list of names"):
        SVMMap().fit(X, y, qid=qid, eval_names="ab", **two)
    # One query-id array for one set: numpy's "truth value of an array is ambiguous" before.
    with pytest.raises(ValueError, match=r"eval_qid must be a list with one entry per eval set"):
        SVMMap().fit(X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=qv)
    with pytest.raises(ValueError, match=r"eval_group must be a list with one entry per eval set"):
        SVMMap().fit(X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_group=np.bincount(np.unique(qv, return_inverse=True)[1]))


def test_early_stopping_refuses_a_later_watched_set_without_relevant_documents(data):
    """The callback watches every set; the second has no relevant document, so its MAP is NaN
    at every round (AP is defined on queries with a relevant document only), never improves,
    and used to stop training after 3 rounds keeping round 1's w = 0. It is refused before
    training, naming that set, as the first set already was."""
    (X, y, qid), (Xv, yv, qv), (Xw, _, qw) = data
    sets = dict(eval_X=(Xv, Xw), eval_y=(yv, np.zeros(len(Xw))), eval_qid=[qv, qw])
    with pytest.raises(ValueError, match=r"'map' on eval_X\[1\].*NaN.*without early_stopping$"):
        SVMMap(C=100.0).fit(X, y, qid=qid, callbacks=[svmmap.early_stopping(3, verbose=False)], **sets)
    # early_stopping_rounds watches the first set only, which is fine.
    model = SVMMap(C=100.0).fit(X, y, qid=qid, early_stopping_rounds=3, **sets)
    assert model.best_iteration_ >= 1


def test_an_eval_dataframe_with_other_columns_is_refused(data):
    """Trained on a DataFrame, an eval set whose columns are the same names in another order
    was scored column by column, on the wrong features, where predict refuses it."""
    pd = pytest.importorskip("pandas")
    (X, y, qid), (Xv, yv, qv), _ = data
    names = [f"f{j}" for j in range(X.shape[1])]
    df, dv = pd.DataFrame(X, columns=names), pd.DataFrame(Xv, columns=names)
    with pytest.raises(ValueError, match=r"eval_X's column names should match.*different order"):
        SVMMap(C=10.0).fit(df, y, qid=qid, eval_X=dv[names[::-1]], eval_y=yv, eval_qid=[qv])
    renamed = dv.rename(columns={"f0": "g0"})
    with pytest.raises(ValueError, match=r"unseen at fit time: \['g0'\]"):
        SVMMap(C=10.0).fit(df, y, qid=qid, eval_X=renamed, eval_y=yv, eval_qid=[qv])
    # The same columns, and an array without names, are scored as the training features.
    by_frame = SVMMap(C=10.0).fit(df, y, qid=qid, eval_X=dv, eval_y=yv, eval_qid=[qv])
    by_array = SVMMap(C=10.0).fit(df, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv])
    assert by_frame.evals_result_ == by_array.evals_result_


def test_eval_metric_none_is_the_default_and_a_callable_is_refused_by_name(data):
    """LightGBM's fit has eval_metric=None for its default metric; None failed with
    "'NoneType' object is not iterable", a custom metric function with "'function' object is
    not iterable", and eval_at=5.0 with "'float' object is not iterable"."""
    (X, y, qid), (Xv, yv, qv), _ = data
    sets = dict(eval_X=Xv, eval_y=yv, eval_qid=[qv])
    default = SVMMap(C=10.0).fit(X, y, qid=qid, **sets)
    assert SVMMap(C=10.0).fit(X, y, qid=qid, eval_metric=None, **sets).evals_result_ == default.evals_result_
    with pytest.raises(TypeError, match="eval_metric takes metric names"):
        SVMMap().fit(X, y, qid=qid, eval_metric=lambda y_true, y_pred: ("m", 0.0, True), **sets)
    with pytest.raises(ValueError, match="eval_at must be a list of integers >= 1, got 5.0"):
        SVMMap().fit(X, y, qid=qid, eval_at=5.0, **sets)


def test_an_untransformed_eval_set_inside_a_pipeline_is_explained(data):
    """Inside Pipeline(Binner(), SVMMap()) the SVMMap is fitted on indicator columns and
    scikit-learn passes svmmap__eval_set as given: the count mismatch says why."""
    from sklearn.pipeline import make_pipeline

    (X, y, qid), (Xv, yv, qv), _ = data
    with pytest.raises(ValueError, match=r"has 10 features, but X has \d+ \(inside a Pipeline.*pipe\[:-1\]\.transform"):
        make_pipeline(svmmap.Binner(), SVMMap()).fit(
            X, y, svmmap__qid=qid, svmmap__eval_set=[(Xv, yv)], svmmap__eval_qid=[qv]
        )


def test_an_empty_eval_set_and_a_none_eval_qid_are_named_as_such(data):
    """early_stopping_rounds with eval_set=[] said every eval set was the training data; an
    eval_qid of [None] got fit's message about qid= and metadata routing."""
    (X, y, qid), (Xv, yv, qv), _ = data
    with pytest.raises(ValueError, match=r"early_stopping_rounds needs an eval_set"):
        SVMMap().fit(X, y, qid=qid, eval_set=[], eval_qid=[], early_stopping_rounds=2)
    with pytest.raises(ValueError, match=r"^eval_qid\[0\] is None: give the query ids of eval_X$"):
        SVMMap().fit(X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[None])


def first_stop_with_delta(curves, rounds, delta):
    """LightGBM 4's rule with min_delta, replayed on recorded curves: a round becomes a pair's
    best only when its value exceeds the pair's best so far by more than ``delta``."""
    best = {k: (values[0], 1) for k, values in curves.items()}
    n = len(next(iter(curves.values())))
    for t in range(2, n + 1):
        for k, values in curves.items():
            if values[t - 1] > best[k][0] + delta:
                best[k] = (values[t - 1], t)
            elif t - best[k][1] >= rounds:
                return t, best[k][1]
    return None


def test_early_stopping_min_delta_asks_for_a_larger_improvement(data):
    record = {}
    fit(data, callbacks=[svmmap.record_evaluation(record)])
    curves = {("valid_0", "map"): record["valid_0"]["map"]}
    seen = set()
    for delta in (0.0, 0.002, 0.01, 1.0):
        expected = first_stop_with_delta(curves, 3, delta)
        assert expected is not None
        seen.add(expected)
        model = fit(
            data,
            eval_metric="map",
            callbacks=[svmmap.early_stopping(3, first_metric_only=True, verbose=False, min_delta=delta)],
        )
        assert (model.n_iter_, model.best_iteration_) == expected, delta
    # min_delta=1.0 can never be beaten by a metric in [0, 1]: the first round is kept.
    assert first_stop_with_delta(curves, 3, 1.0) == (4, 1)
    assert len(seen) > 1, "the deltas must change the stop for the test to mean something"
    for bad in (-0.1, float("nan"), "0.1", True):
        with pytest.raises(ValueError, match="min_delta"):
            svmmap.early_stopping(3, min_delta=bad)


def test_without_early_stopping_best_score_is_that_of_the_model_kept(data):
    # As LightGBM's best_score_: the validation scores of coef_, computed here by
    # svmmap.metrics from the model's own predictions.
    model = fit(data)
    assert model.best_iteration_ == 0  # LightGBM's value without early stopping
    for name, (Xs, ys, qs) in zip(("valid_0", "valid_1"), data[1:]):
        means = svmmap.metrics.evaluate(ys, model.predict(Xs), qs, ["map", "ndcg@5"]).means
        assert model.best_score_[name].keys() == {"map", "ndcg@5"}
        for metric in ("map", "ndcg@5"):
            assert model.best_score_[name][metric] == pytest.approx(means[metric], abs=1e-12)
            assert model.best_score_[name][metric] == model.evals_result_[name][metric][-1]
