"""A LightGBM ranking script ported to SVMMap: LightGBM's own callbacks, its metric rules for
``eval_at``, its constructor and ``predict`` habits, and early stopping as LightGBM does it,
with a model whose reported objective describes the weights it keeps.

Expected values come from LightGBM itself (installed with the test extra): its recorded metric
names for the same ``eval_metric`` and ``eval_at``, its signatures, and its own early-stopping
callback replayed on the validation curves svmmap recorded (the solver's path is deterministic,
so a fit with early stopping runs the same first rounds as one without). The primal objective
of the kept weights is computed by brute force over every ranking of every query.
"""

from __future__ import annotations

import inspect
import itertools
import json
import logging

import numpy as np
import pytest
import svmmap
from svmmap import SVMMap
from svmmap.datasets import make_ranking

lgb = pytest.importorskip("lightgbm")


def group_sizes(qid):
    return np.unique(qid, return_counts=True)[1]


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=80, docs_per_query=15, n_features=10, random_state=2)
    # Two small validation sets whose first metric peaks at different rounds (found by
    # replaying LightGBM's rule on their curves; checked in the test that uses them).
    sets = [make_ranking(n_queries=8, docs_per_query=15, n_features=10, random_state=s) for s in (7, 8)]
    return (X, y, qid), sets


def two_sets(sets):
    return dict(eval_X=tuple(s[0] for s in sets), eval_y=tuple(s[1] for s in sets), eval_qid=[s[2] for s in sets])


def lightgbm_replay(record, rounds, first_metric_only):
    """(round that ends training, round kept), counted from 1, by LightGBM's own
    early_stopping callback fed the recorded curves round by round (every metric is better
    when higher), with training's end at the curves' last round."""
    names = list(record)
    metrics = list(record[names[0]])
    n = len(record[names[0]][metrics[0]])
    result = getattr(lgb, "EvalResult", None) or (lambda *fields: tuple(fields))
    callback = lgb.early_stopping(rounds, first_metric_only=first_metric_only, verbose=False)
    for t in range(n):
        scores = [result(s, m, record[s][m][t], True) for s in names for m in metrics]
        env = lgb.callback.CallbackEnv(
            model=None, params={}, iteration=t, begin_iteration=0, end_iteration=n, evaluation_result_list=scores
        )
        try:
            callback(env)
        except lgb.callback.EarlyStopException as stop:
            return t + 1, stop.best_iteration + 1
    raise AssertionError("LightGBM's callback always ends at the last round")


# --- 1. LightGBM's own callbacks -------------------------------------------------------------


def test_lightgbm_callbacks_work_as_svmmap_s_with_their_settings(data, capsys):
    """callbacks=[lightgbm.early_stopping(...), lightgbm.log_evaluation(...),
    lightgbm.record_evaluation(...)] failed inside LightGBM ("'CallbackEnv' object has no
    attribute 'begin_iteration'"); they now run as svmmap's callbacks of the same settings."""
    (X, y, qid), sets = data
    ours, theirs = {}, {}
    kw = dict(qid=qid, eval_at=[10, 5], **two_sets(sets))
    by_svmmap = SVMMap(C=1.0).fit(
        X,
        y,
        callbacks=[
            svmmap.early_stopping(3, first_metric_only=True, verbose=False),
            svmmap.log_evaluation(2),
            svmmap.record_evaluation(ours),
        ],
        **kw,
    )
    printed_by_svmmap = capsys.readouterr().out
    by_lightgbm = SVMMap(C=1.0).fit(
        X,
        y,
        callbacks=[
            lgb.early_stopping(3, first_metric_only=True, verbose=False),
            lgb.log_evaluation(2),
            lgb.record_evaluation(theirs),
        ],
        **kw,
    )
    assert capsys.readouterr().out == printed_by_svmmap != ""
    assert theirs == ours == by_lightgbm.evals_result_
    assert by_lightgbm.best_iteration_ == by_svmmap.best_iteration_
    np.testing.assert_array_equal(by_lightgbm.coef_, by_svmmap.coef_)
    # LightGBM's early_stopping(0) turns early stopping off, and so it does here: no round is
    # kept, best_iteration_ 0 as LightGBM's without early stopping.
    off = SVMMap(C=1.0).fit(X, y, callbacks=[lgb.early_stopping(0)], **kw)
    assert off.best_iteration_ == 0 and off.stop_reason_ != "callback"


def test_other_lightgbm_callbacks_are_refused_before_training(data):
    (X, y, qid), sets = data
    rounds = []
    model = SVMMap(callback=lambda record: rounds.append(record) and False)
    with pytest.raises(ValueError, match=r"callbacks\[0\] is LightGBM's .*svmmap\.early_stopping"):
        model.fit(X, y, qid=qid, callbacks=[lgb.reset_parameter(learning_rate=[0.1] * 3)], **two_sets(sets))
    assert rounds == [] and not hasattr(model, "coef_")
    # One min_delta per metric: svmmap's takes one for all, and says so.
    with pytest.raises(ValueError, match=r"min_delta=\[0.1, 0.2\].*svmmap\.early_stopping\(n, min_delta=d\)"):
        model.fit(
            X, y, qid=qid, eval_at=[5, 10], callbacks=[lgb.early_stopping(3, min_delta=[0.1, 0.2])], **two_sets(sets)
        )
    assert rounds == []


# --- 2. LightGBM's metric rules ----------------------------------------------------------------


@pytest.mark.parametrize(
    "eval_metric, eval_at",
    [(None, [10, 5]), ("ndcg", [5, 10]), (["ndcg"], [3, 1]), ("map", [5, 10]), (["ndcg", "map"], [10, 5])],
)
def test_recorded_metrics_are_lightgbm_s(data, eval_metric, eval_at):
    """The metric names LGBMRanker records for the same eval_metric and eval_at, in its order
    (the cutoffs sorted, eval_metric's names first, NDCG added last unless named). LightGBM
    cuts MAP too (map@5, map@10); svmmap has no MAP at a cutoff and records "map" once there."""
    (X, y, qid), sets = data
    Xv, yv, qv = sets[0]
    ranker = lgb.LGBMRanker(n_estimators=1, min_child_samples=5, verbose=-1)
    ranker.fit(
        X,
        y,
        group=group_sizes(qid),
        eval_X=Xv,
        eval_y=yv,
        eval_group=[group_sizes(qv)],
        eval_metric=eval_metric,
        eval_at=eval_at,
    )
    expected = []
    for name in ranker.evals_result_["valid_0"]:
        name = "map" if name.startswith("map@") else name
        if name not in expected:
            expected.append(name)
    model = SVMMap(C=1.0).fit(
        X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv], eval_metric=eval_metric, eval_at=eval_at
    )
    assert list(model.evals_result_["valid_0"]) == expected


def test_early_stopping_rounds_watches_the_first_of_lightgbm_s_metrics(data):
    """With eval_at=[10, 5] and no eval_metric the first metric is ndcg@5 (LightGBM sorts the
    cutoffs), which early_stopping_rounds watches on the first set; MAP, the first metric
    before, is not recorded at all."""
    (X, y, qid), sets = data
    record = {}
    SVMMap(C=1.0).fit(X, y, qid=qid, eval_at=[10, 5], callbacks=[svmmap.record_evaluation(record)], **two_sets(sets))
    assert list(record["valid_0"]) == ["ndcg@5", "ndcg@10"]
    first = {"valid_0": {"ndcg@5": record["valid_0"]["ndcg@5"]}}
    stop, kept = lightgbm_replay(first, 3, first_metric_only=True)
    model = SVMMap(C=1.0).fit(X, y, qid=qid, eval_at=[10, 5], early_stopping_rounds=3, **two_sets(sets))
    assert (model.n_iter_, model.best_iteration_) == (stop, kept)


# --- 4. early stopping as LightGBM does it -----------------------------------------------------


def test_first_metric_only_watches_the_first_metric_of_every_set(data):
    """LightGBM's first_metric_only compares each result's metric name with the first one, on
    every validation set; svmmap's watched the first set only and trained on, to another model."""
    (X, y, qid), sets = data
    record = {}
    SVMMap(C=1.0).fit(X, y, qid=qid, eval_at=[10, 5], callbacks=[svmmap.record_evaluation(record)], **two_sets(sets))
    for rounds in (2, 3, 4):
        expected = lightgbm_replay(record, rounds, first_metric_only=True)
        first_set_only = lightgbm_replay({"valid_0": record["valid_0"]}, rounds, first_metric_only=True)
        assert expected != first_set_only, "the second set must stop first for the test to mean something"
        model = SVMMap(C=1.0).fit(
            X,
            y,
            qid=qid,
            eval_at=[10, 5],
            callbacks=[svmmap.early_stopping(rounds, first_metric_only=True, verbose=False)],
            **two_sets(sets),
        )
        assert (model.n_iter_, model.best_iteration_) == expected, rounds
        # Every metric of every set, too, as LightGBM's rule says.
        model = SVMMap(C=1.0).fit(
            X, y, qid=qid, eval_at=[10, 5], callbacks=[svmmap.early_stopping(rounds, verbose=False)], **two_sets(sets)
        )
        assert (model.n_iter_, model.best_iteration_) == lightgbm_replay(record, rounds, first_metric_only=False)


def small_ranking(n_queries, seed, docs=5, n_features=6):
    """Queries of exactly ``docs`` documents, so that every ranking of a query can be tried."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * docs, n_features))
    y = (X @ np.linspace(1, -1, n_features) + rng.normal(scale=1.5, size=len(X)) > 0.8).astype(float)
    return X, y, np.repeat(np.arange(n_queries), docs)


def primal_map(w, X, y, qid, C):
    """OP 1's objective for loss="map" at w, by brute force: 1/2 ||w||^2 + C/n sum_q xi_q with
    xi_q the largest 1 - AP(r) + w.Psi(r) - w.Psi(r*) over every ranking r of query q, where
    Psi(r) = sum over (relevant i, non-relevant j) of +-(x_i - x_j) / (|R| |N|), + when r puts i
    above j (r* puts every relevant document first), and n the queries with both kinds."""
    total, n = 0.0, 0
    for q in np.unique(qid):
        rows = qid == q
        s, rel = X[rows] @ w, y[rows] > 0
        R, N = int(rel.sum()), int((~rel).sum())
        if R == 0 or N == 0:
            continue
        n += 1
        ranks = np.array(list(itertools.permutations(range(len(s)))))  # ranks[r, document]
        hits = np.sort(ranks[:, rel], axis=1) + 1
        ap = np.mean(np.arange(1, R + 1) / hits, axis=1)
        # w.Psi(r*) - w.Psi(r): twice the score difference of every pair that r inverts.
        inverted = ranks[:, ~rel][:, None, :] < ranks[:, rel][:, :, None]
        margin = 2 * (inverted * (s[rel][:, None] - s[~rel][None, :])).sum(axis=(1, 2)) / (R * N)
        total += max(0.0, float(np.max(1 - ap - margin)))
    return 0.5 * float(w @ w) + C / n * total


@pytest.fixture(scope="module")
def small():
    return small_ranking(40, 2), small_ranking(10, 3)


def test_the_brute_force_objective_is_the_solver_s(small):
    (X, y, qid), _ = small
    model = SVMMap(C=10.0, eps=1e-4).fit(X, y, qid=qid)
    assert model.objective_ == pytest.approx(primal_map(model.coef_, X, y, qid, 10.0), rel=1e-12)


@pytest.mark.parametrize("rounds", [3, 1000])
def test_after_early_stopping_the_objective_and_gap_are_those_of_the_weights_kept(small, tmp_path, rounds, capsys):
    """objective_, dual_objective_, gap_ (and the model file's objective) were the last
    round's, not those of the coef_ kept. With 3 rounds early stopping ends training; with
    1000 training converges first, keeping an earlier round, which the fit says (LightGBM's
    "Did not meet early stopping" and why training ended) and converged_ does not claim."""
    (X, y, qid), (Xv, yv, qv) = small
    C = 10.0
    optimum = SVMMap(C=C, eps=1e-4).fit(X, y, qid=qid)
    model = SVMMap(C=C, eps=1e-4).fit(
        X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv], eval_at=[5], callbacks=[svmmap.early_stopping(rounds)]
    )
    assert model.best_iteration_ < model.n_iter_, "an earlier round must be kept for the test to mean something"
    kept = primal_map(model.coef_, X, y, qid, C)
    assert model.objective_ == pytest.approx(kept, rel=1e-12)
    assert kept > optimum.objective_ + 1e-3 and model.history_[-1]["primal"] != pytest.approx(kept)
    # The dual is a lower bound on the optimum, and the gap bounds coef_'s distance to it.
    assert model.dual_objective_ <= optimum.objective_ + 1e-12
    assert model.gap_ == pytest.approx(model.objective_ - model.dual_objective_, abs=1e-12)
    assert model.gap_ > model.tolerance_ and not model.converged_
    model.save(tmp_path / "model.json")
    saved = json.loads((tmp_path / "model.json").read_text())
    assert saved["training"]["objective"] == pytest.approx(kept, rel=1e-12)
    out = capsys.readouterr().out
    curve = model.evals_result_["valid_0"]["ndcg@5"]
    best = int(np.argmax(curve)) + 1
    assert model.best_iteration_ == best
    line = f"[{best}]\tvalid_0's ndcg@5: {curve[best - 1]:g}"
    # LightGBM's first line, then its verdict (tests/api/test_lightgbm_parity.py compares
    # the whole log with LightGBM's own).
    until = f"Training until validation scores don't improve for {rounds} rounds\n"
    if rounds == 3:
        assert model.stop_reason_ == "callback"
        assert out == f"{until}Early stopping, best iteration is:\n{line}\n"
    else:
        assert model.stop_reason_ == "converged"
        assert out.startswith(f"{until}Did not meet early stopping. Best iteration is:\n{line}\n")
        assert f"Training ended at iteration {model.n_iter_} (converged" in out
        assert f"the model kept is iteration {best}'s" in out


def test_a_verbose_fit_logs_the_kept_round_of_early_stopping_rounds(small, caplog):
    (X, y, qid), (Xv, yv, qv) = small
    with caplog.at_level(logging.INFO, logger="svmmap"):
        model = SVMMap(C=10.0, eps=1e-4, verbose=1).fit(
            X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv], eval_at=[5], early_stopping_rounds=1000
        )
    assert model.best_iteration_ < model.n_iter_
    assert any(f"Best iteration is: [{model.best_iteration_}]" in r.getMessage() for r in caplog.records)


# --- 3. constructor, predict and attribute habits ----------------------------------------------


def test_verbose_minus_one_is_silence(small, caplog):
    (X, y, qid), _ = small
    with caplog.at_level(logging.DEBUG, logger="svmmap"):
        model = SVMMap(C=10.0, verbose=-1).fit(X, y, qid=qid)
    assert model.n_iter_ >= 1 and caplog.records == []
    with pytest.raises(ValueError, match="verbose"):
        SVMMap(verbose="loud").fit(X, y, qid=qid)


def lightgbm_only(function, own):
    """The parameter names of LightGBM's ``function`` that svmmap's ``own`` does not take."""
    ours = set(inspect.signature(own).parameters)
    return [
        name
        for name, p in inspect.signature(function).parameters.items()
        if name not in ours and name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]


def test_every_lightgbm_constructor_parameter_is_refused_with_svmmap_s_counterpart():
    names = lightgbm_only(lgb.LGBMRanker.__init__, SVMMap.__init__)
    assert {"n_estimators", "learning_rate", "num_leaves", "objective", "random_state"} <= set(names)
    for name in [*names, "verbosity", "num_iterations", "seed", "metric"]:
        with pytest.raises(TypeError, match=rf"^SVMMap\(\) does not take LightGBM's '{name}': \S"):
            SVMMap(**{name: 1})
    with pytest.raises(TypeError, match="num_leaves.*a linear model has no trees"):
        SVMMap(C=1.0, num_leaves=31)
    with pytest.raises(TypeError, match="n_estimators.*max_iter"):
        SVMMap(n_estimators=100)
    with pytest.raises(TypeError, match="random_state.*no seed"):
        SVMMap(random_state=0)
    # A name that is nobody's is Python's own error, and the signature scikit-learn reads is
    # svmmap's alone.
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'nope'"):
        SVMMap(nope=1)
    assert inspect.signature(SVMMap) == inspect.signature(SVMMap.__init__).replace(
        parameters=list(inspect.signature(SVMMap.__init__).parameters.values())[1:]
    )


def test_a_ported_constructor_learns_every_refused_lightgbm_parameter_in_one_run():
    # The constructor of a typical LambdaRank script: five LightGBM parameters svmmap has no use
    # for, and verbose=-1, which it reads as LightGBM does. One run must name all five (it
    # named the first only, so the port took five runs), each with its counterpart, in the
    # order written; verbose is not among them.
    lightgbm_call = {"objective": "lambdarank", "n_estimators": 300, "learning_rate": 0.05, "num_leaves": 31}
    with pytest.raises(TypeError) as refused:
        SVMMap(**lightgbm_call, random_state=0, verbose=-1)
    message = str(refused.value)
    head = (
        "SVMMap() does not take LightGBM's 'objective', 'n_estimators', 'learning_rate', 'num_leaves', 'random_state'"
    )
    assert message.startswith(head) and "verbose" not in message
    for name, counterpart in [
        ("objective", "loss='ndcg@10'"),
        ("n_estimators", "max_iter"),
        ("learning_rate", "C=..."),
        ("num_leaves", "no trees"),
        ("random_state", "no seed"),
    ]:
        assert any(line.startswith(f"  '{name}': ") and counterpart in line for line in message.splitlines())
    # Where the script tuned trees (num_leaves x learning_rate), svmmap's tuning is SVMMapCV.
    for name in ("num_leaves", "learning_rate"):
        with pytest.raises(TypeError, match=rf"'{name}': .*svmmap\.SVMMapCV chooses C by cross-validation"):
            SVMMap(**{name: 1})
    # Python's own error still comes for a name that is nobody's, once LightGBM's are gone.
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'nope'"):
        SVMMap(nope=1, verbose=-1)


def test_svmmapcv_refuses_lightgbm_s_constructor_parameters_with_its_own_counterparts():
    # SVMMapCV is what the README offers a LightGBM user for tuning; it gave Python's bare
    # "unexpected keyword argument 'n_estimators'". It has no C but a grid Cs, which its
    # messages name where SVMMap's name C.
    from svmmap import SVMMapCV

    with pytest.raises(
        TypeError, match=r"^SVMMapCV\(\) does not take LightGBM's 'n_estimators': .*SVMMapCV\(max_iter="
    ):
        SVMMapCV(n_estimators=10)
    with pytest.raises(TypeError, match=r"^SVMMapCV\(\) does not take LightGBM's 'learning_rate': .*SVMMapCV\(Cs="):
        SVMMapCV(learning_rate=0.1)
    with pytest.raises(TypeError) as refused:
        SVMMapCV(num_leaves=31)
    assert "SVMMapCV(Cs=[...])" in str(refused.value) and "svmmap.SVMMapCV chooses" not in str(refused.value)
    with pytest.raises(TypeError, match=r"^SVMMapCV\(\) does not take LightGBM's 'objective', 'num_threads'"):
        SVMMapCV(objective="lambdarank", num_threads=2)
    # scikit-learn reads the parameters from __init__'s signature, which stays svmmap's own.
    assert "n_estimators" not in inspect.signature(SVMMapCV).parameters
    assert list(inspect.signature(SVMMapCV).parameters) == list(inspect.signature(SVMMapCV.__init__).parameters)[1:]


def test_lightgbm_s_predict_arguments_and_attributes_name_svmmap_s_way(small):
    (X, y, qid), (Xv, yv, qv) = small
    model = SVMMap(C=10.0).fit(X, y, qid=qid, eval_X=Xv, eval_y=yv, eval_qid=[qv], early_stopping_rounds=3)
    names = lightgbm_only(lgb.LGBMRanker.predict, SVMMap.predict)
    # Values that ask for something a linear model cannot do; LightGBM's defaults (and
    # raw_score=True, validate_features=True: what svmmap's predict does) are accepted, see
    # test_lightgbm_parity.py.
    refused = {"start_iteration": 1, "pred_leaf": True, "pred_contrib": True}
    assert set(names) == {*refused, "num_iteration", "raw_score", "validate_features"}
    for name, value in refused.items():
        with pytest.raises(TypeError, match=rf"^SVMMap\.predict\(\) does not take LightGBM's '{name}': \S"):
            model.predict(Xv, **{name: value})
    with pytest.raises(
        TypeError, match=r"^SVMMap\.predict\(\) cannot use LightGBM's num_iteration=\d+: .*best_iteration_"
    ):
        model.predict(Xv, num_iteration=model.best_iteration_ + 1)
    # LightGBM's fitted attributes that a fitted SVMMap lacks say what it has instead
    # (feature_names_in_ is scikit-learn's, set by both after a fit on a DataFrame only).
    missing = [
        a
        for a in dir(lgb.LGBMRanker)
        if a.endswith("_") and not a.startswith("_") and not hasattr(model, a) and a != "feature_names_in_"
    ]
    assert "booster_" in missing
    for name in missing:
        with pytest.raises(AttributeError, match=rf"has no LightGBM attribute '{name}': \S"):
            getattr(model, name)
    with pytest.raises(AttributeError, match=r"plot_weights"):
        model.booster_


def test_score_takes_lightgbm_s_group_as_fit_does():
    # fit takes group= (query sizes); score took only qid= and raised TypeError on group=.
    import numpy as np
    from svmmap import SVMMap
    from svmmap.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=12, docs_per_query=10, n_features=4, random_state=0)
    sizes = np.bincount(np.unique(qid, return_inverse=True)[1])
    model = SVMMap(C=1.0, n_jobs=1).fit(X, y, group=sizes)
    assert model.score(X, y, group=sizes) == model.score(X, y, qid=qid)
    with pytest.raises(ValueError, match="not both"):
        model.score(X, y, qid=qid, group=sizes)


# --- 4. a pandas frame with a categorical column -----------------------------------------------


def test_a_categorical_column_is_refused_by_name_with_the_indicator_columns_way():
    pd = pytest.importorskip("pandas")
    X, y, qid = make_ranking(n_queries=12, docs_per_query=10, n_features=3, random_state=0)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    source = np.where(X[:, 0] > np.median(X[:, 0]), "news", "web")
    for categories in (pd.Categorical(source), pd.Categorical((source == "news").astype(int) + 1)):
        frame["src"] = categories
        # LightGBM takes the column as a categorical feature, text or integer categories alike
        # (its Booster records the categories of every such column).
        ranker = lgb.LGBMRanker(n_estimators=2, min_child_samples=1, verbose=-1).fit(frame, y, group=group_sizes(qid))
        assert ranker.booster_.pandas_categorical == [list(categories.categories)]
        # svmmap has no categories: the column is named with the way to indicator columns.
        # Integer categories were read as numbers before, silently; text ones failed naming
        # neither the column nor categories ("could not convert string to float: 'web'").
        for fit in (lambda: SVMMap().fit(frame, y, qid=qid), lambda: svmmap.Binner().fit(frame, y, qid=qid)):
            with pytest.raises(
                ValueError, match=r"^X has categorical column\(s\) 'src' .*pandas\.get_dummies\(X, columns=\['src'\]"
            ):
                fit()
    # The way the message names trains: one indicator column per category.
    encoded = pd.get_dummies(frame, columns=["src"], dtype=float)
    assert SVMMap().fit(encoded, y, qid=qid).coef_.shape == (5,)
    # A column of text without the category dtype is named as well.
    frame["src"] = source.astype(object)
    with pytest.raises(ValueError, match=r"got dtype object in column\(s\) 'src' .*get_dummies"):
        SVMMap().fit(frame, y, qid=qid)
