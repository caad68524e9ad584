"""A LightGBM ranking script's remaining habits, each checked against LightGBM itself: the
fitted attributes it reads without early stopping, the log of its callbacks line for line,
callbacks written for LightGBM (its CallbackEnv fields and EarlyStopException), its metric
names and aliases, the no-op defaults it spells out, SVMMapCV's refusal of a single fit's
arguments, and ``group=`` inside scikit-learn's cross-validation.

LightGBM's log and early stopping are obtained by replaying svmmap's recorded validation
curves through ``lightgbm.train`` itself (its own loop, callback order and messages), with a
custom metric that returns svmmap's value of each round: LightGBM's trees are irrelevant there,
only what its callbacks print and decide on the same numbers.
"""

from __future__ import annotations

import inspect
import logging
import warnings

import numpy as np
import pytest
import sklearn
import svmmap
from sklearn.model_selection import GridSearchCV, cross_val_score
from svmmap import SVMMap, SVMMapCV
from svmmap.datasets import make_ranking
from svmmap.metrics import make_ranking_scorer
from svmmap.model_selection import QueryKFold

lgb = pytest.importorskip("lightgbm")


def sizes_in_row_order(qid):
    """LightGBM's group: the size of each run of equal query ids, in row order."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    return np.diff(np.r_[starts, len(qid)])


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=80, docs_per_query=15, n_features=10, random_state=2)
    Xv, yv, qv = make_ranking(n_queries=8, docs_per_query=15, n_features=10, random_state=7)
    return (X, y, qid), (Xv, yv, qv)


def short_fit(X, y, **kw):
    """Two rounds: enough to record the metrics' names (the ConvergenceWarning of max_iter is
    expected)."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SVMMap(C=1.0, max_iter=2).fit(X, y, **kw)


def valid(sets):
    Xv, yv, qv = sets
    return dict(eval_X=Xv, eval_y=yv, eval_qid=[qv])


def lightgbm_replay(record, rounds, callbacks):
    """What ``lightgbm.train`` prints and keeps with ``callbacks`` when its validation set
    "valid_0" scores ``record["valid_0"][metric][t]`` at round t + 1 (every metric better when
    higher), for up to ``rounds`` rounds: (stdout lines, booster.best_iteration,
    booster.best_score). Its trees are fitted on a few random rows and never looked at."""
    curves = record["valid_0"]
    n = len(next(iter(curves.values())))
    calls = [0]

    def replayed(preds, eval_data):
        t = min(calls[0], n - 1)
        calls[0] += 1
        return [(metric, float(values[t]), True) for metric, values in curves.items()]

    rng = np.random.default_rng(0)
    params = {"objective": "regression", "metric": "None", "verbose": -1, "min_data_in_leaf": 1}
    train = lgb.Dataset(rng.normal(size=(20, 2)), rng.normal(size=20), params={"verbose": -1})
    vali = lgb.Dataset(rng.normal(size=(10, 2)), rng.normal(size=10), reference=train, params={"verbose": -1})
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        booster = lgb.train(
            params,
            train,
            num_boost_round=rounds,
            valid_sets=[vali],
            valid_names=["valid_0"],
            feval=replayed,
            callbacks=callbacks,
        )
    best_score = {k: dict(v) for k, v in booster.best_score.items()}
    return out.getvalue().splitlines(), booster.best_iteration, best_score


# --- fitted attributes without early stopping --------------------------------------------------


def test_best_iteration_best_score_and_evals_result_exist_as_lightgbm_s(data):
    """LGBMRanker has best_iteration_ 0 and empty best_score_ and evals_result_ after a fit
    without validation sets, and best_iteration_ 0 with the last round's scores as best_score_
    after one with them but no early stopping; svmmap's were absent (AttributeError)."""
    (X, y, qid), (Xv, yv, qv) = data
    ranker = lgb.LGBMRanker(n_estimators=3, min_child_samples=5, verbose=-1).fit(X, y, group=sizes_in_row_order(qid))
    model = SVMMap(C=1.0).fit(X, y, qid=qid)
    assert (
        (model.best_iteration_, model.best_score_, model.evals_result_)
        == (
            ranker.best_iteration_,
            dict(ranker.best_score_),
            ranker.evals_result_,
        )
        == (0, {}, {})
    )
    ranker.fit(
        X, y, group=sizes_in_row_order(qid), eval_X=Xv, eval_y=yv, eval_group=[sizes_in_row_order(qv)], eval_at=[5]
    )
    model.fit(X, y, qid=qid, eval_at=[5], **valid(data[1]))
    assert model.best_iteration_ == ranker.best_iteration_ == 0
    assert {k: list(v) for k, v in model.best_score_.items()} == {k: list(v) for k, v in ranker.best_score_.items()}
    assert model.best_score_["valid_0"]["ndcg@5"] == model.evals_result_["valid_0"]["ndcg@5"][-1]


# --- the log of LightGBM's callbacks -----------------------------------------------------------


@pytest.mark.parametrize("first_metric_only", [False, True])
def test_the_log_of_early_stopping_and_log_evaluation_is_lightgbm_s(data, capsys, first_metric_only):
    """With [early_stopping(3), log_evaluation(1)] LightGBM prints every round's line, its
    "Training until validation scores don't improve for 3 rounds" after the first, and its
    verdict after the stopping round's line (early stopping runs after the log); svmmap printed
    the verdict before that line and never the first line."""
    (X, y, qid), sets = data
    record = {}
    kw = dict(qid=qid, eval_at=[10, 5], **valid(sets))

    def callbacks(module):
        return [module.early_stopping(3, first_metric_only=first_metric_only), module.log_evaluation(1)]

    model = SVMMap(C=1.0).fit(X, y, callbacks=[*callbacks(lgb), svmmap.record_evaluation(record)], **kw)
    printed = capsys.readouterr().out.splitlines()
    assert model.stop_reason_ == "callback", "early stopping must end training for the test to mean something"
    expected, best, best_score = lightgbm_replay(record, model.n_iter_ + 5, callbacks(lgb))
    assert printed == expected
    assert expected[1] == "Training until validation scores don't improve for 3 rounds"
    assert (model.best_iteration_, model.best_score_) == (best, best_score)
    # svmmap's own callbacks print the same.
    SVMMap(C=1.0).fit(X, y, callbacks=callbacks(svmmap), **kw)
    assert capsys.readouterr().out.splitlines() == expected


# --- callbacks written for LightGBM -------------------------------------------------------------


class StopAfter:
    """A callback as LightGBM users write them: set up at ``begin_iteration``, reading the named
    fields of ``evaluation_result_list`` and ``params``, and raising LightGBM's
    EarlyStopException with the ``env.iteration`` of the best round of the first metric so far
    after ``budget`` rounds (or at the last round, ``end_iteration - 1``)."""

    def __init__(self, budget, exception):
        self.budget, self.exception, self.seen = budget, exception, []

    def __call__(self, env):
        if env.iteration == env.begin_iteration:
            self.best, self.best_iter, self.best_list = -np.inf, None, None
            self.params = dict(env.params)
        self.seen.append(env.iteration)
        first = env.evaluation_result_list[0]
        if first.metric_value > self.best:
            self.best, self.best_iter, self.best_list = first.metric_value, env.iteration, env.evaluation_result_list
        if env.iteration - env.begin_iteration + 1 >= self.budget or env.iteration == env.end_iteration - 1:
            raise self.exception(self.best_iter, self.best_list)


@pytest.mark.parametrize("exception", [lgb.callback.EarlyStopException, svmmap.callback.EarlyStopException])
def test_a_callback_written_for_lightgbm_runs_and_keeps_its_round(data, capsys, exception):
    """A callback reading CallbackEnv's begin_iteration, end_iteration and params failed with
    AttributeError; one raising EarlyStopException was an error out of fit. Now it stops
    training where it does in LightGBM and keeps the round it names: best_iteration_,
    best_score_ and coef_ (that round's iterate, as recorded by env.coef)."""
    (X, y, qid), sets = data
    kw = dict(qid=qid, eval_at=[5], **valid(sets))
    record, iterates = {}, {}
    full = SVMMap(C=1.0).fit(
        X,
        y,
        callbacks=[svmmap.record_evaluation(record), lambda env: iterates.setdefault(env.iteration, env.coef.copy())],
        **kw,
    )
    curve = record["valid_0"]["ndcg@5"]
    # The budget: the first round below the best before it (found on the recorded curve), so
    # that the round kept is an earlier one than the stopping round.
    budget = next(t for t in range(2, len(curve) + 1) if curve[t - 1] < max(curve[: t - 1]))
    ours = StopAfter(budget, exception)
    model = SVMMap(C=1.0).fit(X, y, callbacks=[ours, lgb.log_evaluation(1)], **kw)
    printed = capsys.readouterr().out.splitlines()
    theirs = StopAfter(budget, lgb.callback.EarlyStopException)
    expected, best, best_score = lightgbm_replay(record, full.n_iter_, [theirs, lgb.log_evaluation(1)])
    assert model.stop_reason_ == "callback" and model.n_iter_ == len(theirs.seen) < full.n_iter_
    assert (model.best_iteration_, model.best_score_) == (best, best_score)
    # LightGBM runs a callback without an order before log_evaluation, which therefore does
    # not print the stopping round: the same lines.
    assert printed == expected
    assert model.best_iteration_ < model.n_iter_, "an earlier round must be kept for the test to mean something"
    np.testing.assert_array_equal(model.coef_, iterates[model.best_iteration_])
    assert model.objective_ == full.history_[model.best_iteration_ - 1]["primal"]
    assert ours.params == model.get_params() and ours.seen[0] == 1


def test_an_early_stop_exception_naming_no_round_of_the_fit_is_refused(data):
    (X, y, qid), sets = data

    def bad(env):
        raise lgb.callback.EarlyStopException(env.iteration + 1, [])

    with pytest.raises(ValueError, match=r"best_iteration=2\) at round 1: .*env.iteration of a round so far, 1 to 1"):
        SVMMap(C=1.0).fit(X, y, qid=qid, callbacks=[bad], **valid(sets))


# --- metric names ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "eval_metric",
    ["MAP", "NDCG", "mean_average_precision", "lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart"]
    + ["xendcg_mart", ["Map", "ndcg"], ["map", "lambdarank"], ["rank_xendcg", "map"]],
)
def test_metric_names_and_aliases_are_read_as_lightgbm_reads_them(data, eval_metric):
    """LightGBM lowercases metric names and reads its aliases (mean_average_precision is MAP,
    the ranking objectives' names NDCG); svmmap recorded "MAP" as given and refused the
    aliases. Compared with eval_at=[5], where LightGBM's names are map@5 (svmmap's "map") and
    ndcg@5. Not compared: ["lambdarank", "map"], which LightGBM records as map@5, ndcg@5 (its
    wrapper merges the objective's own name with the default metric it appends last); svmmap
    keeps the order given, as LightGBM does for every other alias."""
    (X, y, qid), (Xv, yv, qv) = data
    ranker = lgb.LGBMRanker(n_estimators=1, min_child_samples=5, verbose=-1).fit(
        X,
        y,
        group=sizes_in_row_order(qid),
        eval_X=Xv,
        eval_y=yv,
        eval_group=[sizes_in_row_order(qv)],
        eval_metric=eval_metric,
        eval_at=[5],
    )
    expected = [name.replace("map@5", "map") for name in ranker.evals_result_["valid_0"]]
    model = short_fit(X, y, qid=qid, eval_metric=eval_metric, eval_at=[5], **valid(data[1]))
    assert list(model.evals_result_["valid_0"]) == expected


@pytest.mark.parametrize("eval_metric", [None, "ndcg", "map"])
def test_an_empty_eval_at_is_the_default_as_in_lightgbm(data, eval_metric):
    """LightGBM reads eval_at=[] as its default; svmmap refused it. svmmap's default is no
    cutoff (eval_at=None)."""
    (X, y, qid), (Xv, yv, qv) = data
    group, vgroup = sizes_in_row_order(qid), [sizes_in_row_order(qv)]
    kw = dict(eval_X=Xv, eval_y=yv, eval_group=vgroup, eval_metric=eval_metric)
    empty = lgb.LGBMRanker(n_estimators=1, min_child_samples=5, verbose=-1).fit(X, y, group=group, eval_at=[], **kw)
    default = lgb.LGBMRanker(n_estimators=1, min_child_samples=5, verbose=-1).fit(X, y, group=group, **kw)
    assert list(empty.evals_result_["valid_0"]) == list(default.evals_result_["valid_0"])
    ours = short_fit(X, y, qid=qid, eval_metric=eval_metric, eval_at=[], **valid(data[1]))
    theirs = short_fit(X, y, qid=qid, eval_metric=eval_metric, **valid(data[1]))
    assert ours.evals_result_ == theirs.evals_result_


# --- LightGBM's no-op defaults --------------------------------------------------------------


def lightgbm_defaults(function, own):
    """LightGBM's ``function`` parameters that svmmap's ``own`` does not have, with their
    defaults in LightGBM's signature."""
    ours = set(inspect.signature(own).parameters)
    return {
        name: p.default
        for name, p in inspect.signature(function).parameters.items()
        if name not in ours and name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    }


def test_lightgbm_s_fit_defaults_are_accepted_and_other_values_refused(data):
    """init_score=None, categorical_feature="auto", eval_init_score=None ... were refused (or a
    bare TypeError) although they ask for nothing."""
    (X, y, qid), sets = data
    defaults = lightgbm_defaults(lgb.LGBMRanker.fit, SVMMap.fit)
    assert {"init_score", "categorical_feature", "eval_init_score", "feature_name"} <= set(defaults)
    plain = SVMMap(C=1.0).fit(X, y, qid=qid)
    spelled = SVMMap(C=1.0).fit(X, y, qid=qid, **defaults)
    np.testing.assert_array_equal(spelled.coef_, plain.coef_)
    # One None per validation set, and no categorical feature, ask for nothing either.
    short_fit(X, y, qid=qid, eval_init_score=[None], eval_sample_weight=[None], categorical_feature=[], **valid(sets))
    asking = {"init_score": np.zeros(len(y)), "categorical_feature": [0], "eval_init_score": [np.zeros(3)]}
    asking.update(feature_name=[f"f{j}" for j in range(X.shape[1])], eval_sample_weight=[np.ones(3)])
    asking.update(init_model="model.txt")
    assert set(asking) == set(defaults)
    for name, value in asking.items():
        with pytest.raises(TypeError, match=rf"^SVMMap\.fit\(\) does not take LightGBM's '{name}': \S"):
            SVMMap(C=1.0).fit(X, y, qid=qid, **{name: value})


def test_lightgbm_s_predict_defaults_and_best_iteration_are_accepted(data):
    """predict(num_iteration=None), raw_score=False ... were refused. LightGBM's ranker
    returns raw scores either way (raw_score=True too), and predict(num_iteration=
    best_iteration_) is the model kept, with early stopping or without (0: every round)."""
    (X, y, qid), sets = data
    for model in (
        SVMMap(C=1.0).fit(X, y, qid=qid),
        SVMMap(C=1.0).fit(X, y, qid=qid, eval_at=[5], early_stopping_rounds=2, **valid(sets)),
    ):
        scores = model.predict(X)
        defaults = lightgbm_defaults(lgb.LGBMRanker.predict, SVMMap.predict)
        np.testing.assert_array_equal(model.predict(X, **defaults), scores)
        for kw in ({"raw_score": True}, {"validate_features": True}, {"num_iteration": model.best_iteration_}):
            np.testing.assert_array_equal(model.predict(X, **kw), scores)
    assert model.best_iteration_ < model.n_iter_, "early stopping must keep an earlier round"
    with pytest.raises(TypeError, match=r"num_iteration=.*best_iteration_"):
        model.predict(X, num_iteration=model.n_iter_)


# --- SVMMapCV.fit and a single fit's arguments --------------------------------------------------


def test_svmmapcv_refuses_a_single_fit_s_arguments_naming_the_search_s_way(data):
    """callbacks, eval_metric, eval_at and early_stopping_rounds gave a bare TypeError. The
    scoring the message proposes for eval_at=[10, 5] is the first metric LightGBM records."""
    (X, y, qid), (Xv, yv, qv) = data
    ranker = lgb.LGBMRanker(n_estimators=1, min_child_samples=5, verbose=-1).fit(
        X, y, group=sizes_in_row_order(qid), eval_X=Xv, eval_y=yv, eval_group=[sizes_in_row_order(qv)], eval_at=[10, 5]
    )
    first = next(iter(ranker.evals_result_["valid_0"]))
    search = SVMMapCV(Cs=[1.0], cv=2)
    with pytest.raises(TypeError, match=rf"does not take eval_at=\[10, 5\]: .*SVMMapCV\(scoring='{first}'\)"):
        search.fit(X, y, qid=qid, eval_at=[10, 5])
    with pytest.raises(TypeError, match=r"does not take eval_metric='map': .*SVMMapCV\(scoring='map'\)"):
        search.fit(X, y, qid=qid, eval_metric="map")
    for key, value in (("early_stopping_rounds", 5), ("callbacks", [svmmap.early_stopping(5)])):
        with pytest.raises(TypeError, match=rf"does not take {key}: .*patience= and prune_margin=.*{key}=\.\.\."):
            search.fit(X, y, qid=qid, **{key: value})
    assert not hasattr(search, "best_C_")
    # None (and an empty eval_at or list of callbacks) ask for nothing.
    search.fit(X, y, qid=qid, eval_metric=None, eval_at=[], callbacks=None, early_stopping_rounds=None, init_score=None)
    assert search.best_C_ == 1.0


# --- group= in scikit-learn's cross-validation ---------------------------------------------------


def test_group_in_cross_validation_names_qid_before_any_fit(data):
    """cross_val_score with group= routed to fit failed in every split ("group sums to 1200
    rows but X has 795"), hidden under "All the 3 fits failed"; with routing on it is refused
    before the first fit, naming qid and the route that works."""
    (X, y, qid), _ = data
    sizes = sizes_in_row_order(qid)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_ranking_scorer("map").set_score_request(qid=True)
        estimator = SVMMap(C=1.0).set_fit_request(group=True)
        with pytest.raises(ValueError, match=r"requests group= for fit .*give one query id per row as qid") as info:
            cross_val_score(estimator, X, y, scoring=scorer, cv=QueryKFold(3), params={"group": sizes, "groups": qid})
        assert "fits failed" not in str(info.value)
        with pytest.raises(ValueError, match=r"requests group= for fit"):
            GridSearchCV(estimator, {"C": [1.0]}, scoring=scorer, cv=QueryKFold(3)).fit(X, y, group=sizes, groups=qid)
        # Outside a search, group is fine (a fit on all the rows).
        assert estimator.fit(X, y, group=sizes).n_queries_ == SVMMap(C=1.0).fit(X, y, qid=qid).n_queries_
        # The route the message names runs.
        route = SVMMap(C=1.0).set_fit_request(qid=True)
        scores = cross_val_score(route, X, y, scoring=scorer, cv=QueryKFold(3), params={"qid": qid, "groups": qid})
        assert np.all(np.isfinite(scores))


def test_group_in_cross_validation_without_routing_names_qid(data):
    """Without routing, scikit-learn hands group to fit unsplit: each fit says why and what to
    give instead (scikit-learn still quotes it under its "All the 3 fits failed")."""
    (X, y, qid), _ = data
    with pytest.raises(ValueError, match=r"(?s)fits failed.*was given group= by a scikit-learn search.*as qid"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cross_val_score(
                SVMMap(C=1.0), X, y, cv=QueryKFold(3), groups=qid, params={"group": sizes_in_row_order(qid)}
            )


def test_cross_validation_without_any_qid_says_qid_is_missing_not_given(data):
    """A LightGBM habit, cross_val_score(ranker, X, y, groups=qid, cv=GroupKFold(3)), gives no
    qid at all; the refusal said "SVMMap.fit was given qid by a scikit-learn search", which
    sends the user looking for a qid they never passed. It now says qid is missing and how to
    route it; a qid given without routing keeps its own message."""
    from sklearn.model_selection import GroupKFold

    (X, y, qid), _ = data
    with pytest.raises(ValueError) as missing:
        cross_val_score(SVMMap(C=1.0), X, y, groups=qid, cv=GroupKFold(3), error_score="raise")
    message = str(missing.value)
    assert message.startswith("SVMMap.fit was called by a scikit-learn search or cross-validation")
    assert "without qid" in message and "was given qid" not in message
    assert "params={'qid': qid, 'groups': qid}" in message and "set_fit_request(qid=True)" in message
    with pytest.raises(ValueError, match=r"^SVMMap\.fit was given qid by a scikit-learn search"):
        GridSearchCV(SVMMap(), {"C": [1.0]}, cv=GroupKFold(3), error_score="raise").fit(X, y, groups=qid, qid=qid)


def test_eval_at_records_svmmap_s_ndcg_and_evaluate_gives_lightgbm_s_as_the_guide_says():
    """docs/guide/early-stopping.md: for the same scores LightGBM's ndcg@k counts a query without
    a relevant document as 1 and breaks ties by input order, and evaluate(..., no_relevant=1,
    ties="input") gives its number. LightGBM's number is LightGBM's own: a lambdarank Booster
    started from the scores (init_score) and trained one round that cannot split (every leaf
    needs more rows than there are) and adds a near-zero constant, which reorders nothing."""
    from svmmap.datasets import load_mq2008
    from svmmap.metrics import evaluate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", svmmap.SkippedQueriesWarning)
        X, y, qid = load_mq2008(fold=1, split="train")
        Xv, yv, qv = load_mq2008(fold=1, split="vali")
        model = SVMMap(C=10.0).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], eval_at=[1, 10])
    scores = model.predict(Xv)
    lgb = pytest.importorskip("lightgbm")
    data = lgb.Dataset(Xv, yv, group=np.unique(qv, return_counts=True)[1], init_score=scores)
    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [1, 10], "learning_rate": 1e-12}
    recorded = {}
    lgb.train(
        {**params, "min_data_in_leaf": len(yv) + 1, "verbose": -1},
        data,
        num_boost_round=1,
        valid_sets=[data],
        valid_names=["v"],
        callbacks=[lgb.record_evaluation(recorded)],
    )
    theirs = {name: values[-1] for name, values in recorded["v"].items()}
    ours = {name: values[-1] for name, values in model.evals_result_["valid_0"].items()}
    as_lightgbm = evaluate(yv, scores, qv, ["ndcg@1", "ndcg@10"], no_relevant=1, ties="input").means
    assert as_lightgbm == pytest.approx(theirs, abs=1e-12)
    # The figures the guide prints, and the gap it warns about: 37 of vali's 157 queries have
    # no relevant document, so LightGBM's mean is (120 * ours + 37) / 157 up to ties.
    assert round(ours["ndcg@1"], 4) == 0.5778 and round(theirs["ndcg@1"], 4) == 0.6773
    assert theirs["ndcg@1"] == pytest.approx((120 * ours["ndcg@1"] + 37) / 157, abs=1e-12)


# --- the verbose summary after early stopping --------------------------------------------------


@pytest.mark.parametrize("rounds", [2, 1000])
def test_the_verbose_summary_says_which_round_was_kept_and_why(data, caplog, rounds):
    """The summary said "converged after N iterations" (or "callback ...") with the figures of
    an earlier round early stopping kept."""
    (X, y, qid), sets = data
    with caplog.at_level(logging.INFO, logger="svmmap"):
        model = SVMMap(C=1.0, verbose=1).fit(X, y, qid=qid, eval_at=[5], early_stopping_rounds=rounds, **valid(sets))
    summary = caplog.records[-1].getMessage()
    assert model.best_iteration_ < model.n_iter_, "an earlier round must be kept for the test to mean something"
    kept = f"kept iteration {model.best_iteration_}, the best valid_0's ndcg@5"
    if rounds == 2:
        assert summary.startswith(f"early stopping after {model.n_iter_} iterations {kept}, which did not improve")
    else:
        assert model.stop_reason_ == "converged"
        assert summary.startswith(
            f"converged after {model.n_iter_} iterations, before early stopping triggered; {kept}"
        )
    assert f"primal {model.objective_:.6g}" in summary
