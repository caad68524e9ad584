"""The one search engine of SVMMapCV: the C search alone is the search with one candidate, a
candidate that cannot run on the data is left out with its reason, the time budget caps the
fit under way, every fit's stop reason is in cv_results_, and verbose prints progress."""

from __future__ import annotations

import re
import time
import warnings

import numpy as np
import pytest
from svmmap import SVMMap, SVMMapCV
from svmmap.datasets import make_ranking


@pytest.fixture(scope="module")
def data():
    d = make_ranking(24, 20, 6, random_state=3)
    return d.X.astype(np.float64), d.y, d.qid


def test_the_c_search_has_the_search_columns(data):
    # One candidate (the estimator's loss on the features as given): its rows carry the same
    # columns as a search over losses, and each split's fit time, iterations and stop reason.
    X, y, qid = data
    Cs = [0.1, 1.0, 10.0]
    search = SVMMapCV(Cs, cv=3, loss="map", scoring="map", n_jobs=1).fit(X, y, qid=qid)
    results = search.cv_results_
    assert list(results["param_loss"]) == ["map"] * 3
    assert list(results["param_preprocessing"]) == ["none"] * 3
    assert list(results["status"]) == ["fitted"] * 3
    for k in range(3):
        assert set(results[f"split{k}_stop_reason"]) <= {"converged", "stalled", "max_iter", "max_time"}
        assert (results[f"split{k}_n_iter"] > 0).all()
        assert (results[f"split{k}_fit_time"] >= 0).all()
    # The mean fit time is the mean of the splits' times.
    times = np.array([results[f"split{k}_fit_time"] for k in range(3)])
    np.testing.assert_allclose(results["mean_fit_time"], times.mean(axis=0))
    # The split scores are those of SVMMap fits at each C, scored by hand: a cold fit (a path
    # of one C without warm start is SVMMap(C).fit) with warm_start=False.
    cold = SVMMapCV(Cs, cv=3, loss="map", scoring="map", warm_start=False, n_jobs=1).fit(X, y, qid=qid)
    from svmmap._search.folds import QueryKFold
    from svmmap.metrics import per_query

    train, test = next(QueryKFold(3).split(X, y, groups=qid))
    for j, C in enumerate(Cs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w = SVMMap(C=C, n_jobs=1).fit(X[train], y[train], qid=qid[train]).coef_
        expected = per_query("map", y[test], X[test] @ w, qid[test]).mean()
        assert cold.cv_results_["split0_test_score"][j] == pytest.approx(expected, abs=1e-12)


def test_a_candidate_that_cannot_run_is_left_out_with_its_reason():
    # A query of 600 documents with graded labels: ndcg:graded (NDCG without a cutoff, the graded
    # loss loss="auto" tries for scoring="map") refuses it (its oracle's work grows with the
    # square of the query's length); the search goes on with the other losses.
    d = make_ranking(8, 80, 4, random_state=1)
    X, y, qid = d.X.astype(np.float64), d.y.astype(np.float64), d.qid.copy()
    big = np.random.default_rng(0)
    n_big = 600
    X = np.vstack([X, big.normal(size=(n_big, 4))])
    y = np.concatenate([y, big.integers(0, 5, size=n_big).astype(np.float64)])
    qid = np.concatenate([qid, np.full(n_big, qid.max() + 1)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SVMMapCV(
            [0.1, 1.0], cv=2, loss="auto", scoring="map", losses=["map", "ndcg:graded"], n_jobs=1, refit=False
        ).fit(X, y, qid=qid)
    results = search.cv_results_
    graded = results["param_loss"] == "ndcg:graded"
    assert list(results["status"][graded]) == ["failed", "failed"]
    assert all("documents" in note and "ndcg:graded" in note for note in results["note"][graded])
    assert (results["status"][~graded] == "fitted").all()
    assert search.best_params_["loss"] == "map"


def test_a_candidate_list_that_cannot_run_at_all_raises_its_error():
    d = make_ranking(4, 10, 3, random_state=1)
    X, y, qid = d.X.astype(np.float64), d.y.astype(np.float64), d.qid
    n_big = 600
    rng = np.random.default_rng(0)
    X = np.vstack([X, rng.normal(size=(n_big, 3))])
    y = np.concatenate([y, rng.integers(0, 5, size=n_big).astype(np.float64)])
    qid = np.concatenate([qid, np.full(n_big, qid.max() + 1)])
    with pytest.raises(ValueError, match="ndcg:graded"):
        SVMMapCV([1.0], cv=2, loss="ndcg:graded", scoring="map").fit(X, y, qid=qid)


def test_the_time_budget_stops_the_fit_under_way_and_says_so():
    # Fits that each take far longer than the budget (binned features, pairwise:count at a huge
    # C, no stall detection): the budget cuts the fit under way, which stays in cv_results_
    # with its score and the stop reason "budget"; the search returns the best of what it fitted.
    d = make_ranking(60, 60, 20, random_state=2)
    X, y, qid = d.X.astype(np.float64), d.y, d.qid
    budget = 1.0
    search = SVMMapCV(
        [1e-3, 1e5],
        cv=2,
        loss="auto",
        losses=["map", "pairwise:count"],
        preprocessing="binned",
        time_budget=budget,
        n_iter_no_change=None,
        eps=1e-9,
        max_iter=10**7,
        n_jobs=1,
        refit=False,
    )
    start = time.perf_counter()
    with pytest.warns(UserWarning, match="time budget"):
        search.fit(X, y, qid=qid)
    elapsed = time.perf_counter() - start
    results = search.cv_results_
    stops = {results[f"split{k}_stop_reason"][i] for k in range(2) for i in range(len(results["status"]))}
    assert "budget" in stops, results
    # A generous bound (the machine may be loaded): the fits are capped, not left to run their
    # iterations out.
    assert elapsed < budget + 10.0
    assert search.best_params_ == results["params"][search.best_index_]
    assert results["status"][search.best_index_] == "fitted"


def test_verbose_prints_a_line_per_candidate_with_the_best_so_far(data, capsys):
    X, y, qid = data
    SVMMapCV([0.1, 1.0], cv=2, loss="auto", losses=["map", "pairwise"], verbose=1, refit=False, n_jobs=1).fit(
        X, y, qid=qid
    )
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[SVMMapCV]")]
    assert len(lines) == 4, lines
    assert all(re.search(r"\d+/\d+ fits", line) and "best" in line and "s left" in line for line in lines)
    # At each C every candidate is fitted split by split, so the two rows of a C end
    # together, after their four fits.
    done = [int(re.search(r"(\d+)/\d+ fits", line).group(1)) for line in lines]
    assert done == [4, 4, 8, 8]


def test_verbose_zero_is_silent(data, capsys):
    X, y, qid = data
    SVMMapCV([0.1, 1.0], cv=2, refit=False, n_jobs=1).fit(X, y, qid=qid)
    assert "[SVMMapCV]" not in capsys.readouterr().err


@pytest.mark.parametrize("bad", [1.5, "yes", None])
def test_verbose_is_checked(data, bad):
    X, y, qid = data
    with pytest.raises(ValueError, match=r"^verbose must be an integer or a bool \(<= 0 or False: silent; 1 or True"):
        SVMMapCV([1.0], cv=2, verbose=bad).fit(X, y, qid=qid)


@pytest.mark.parametrize("verbose, lines", [(True, True), (False, False), (-2, False), (1, True)])
def test_verbose_takes_a_bool_or_any_integer_as_svmmap_does(data, capsys, verbose, lines):
    # One rule for SVMMap and SVMMapCV (scikit-learn's estimators take verbose=True, LightGBM
    # -1): True is 1 and prints a line per candidate and C; False and every integer <= 0 are
    # silent. SVMMap takes the same values.
    X, y, qid = data
    SVMMapCV([1.0], cv=2, refit=False, n_jobs=1, verbose=verbose).fit(X, y, qid=qid)
    assert ("[SVMMapCV]" in capsys.readouterr().err) == lines
    SVMMap(C=1.0, verbose=verbose, n_jobs=1).fit(X, y, qid=qid)


def test_python_and_the_cli_choose_by_the_same_default_metric():
    import inspect

    from svmmap.cli import learn

    default = inspect.signature(SVMMapCV).parameters["scoring"].default
    assert default == "ndcg@10"
    assert learn.LEARN_DEFAULTS["scoring"] == default


def test_pairwise_count_at_the_scaled_c_is_pairwise_with_twice_the_weights():
    # By hand: pairwise:count sums max(0, 1 - (s_i - s_j)) over a query's M pairs, pairwise
    # averages max(0, 1 - 2 (s_i - s_j)); with v = w / 2 the count objective at C is 4 times
    # pairwise's at C * M / 4. Every query here has 3 relevant and 5 other documents (M = 15),
    # so pair_scale is 4 / 15 and pairwise:count at C * 4 / 15 learns twice pairwise's w at C.
    from svmmap._search.engine import pair_scale

    rng = np.random.default_rng(5)
    n_q, size = 12, 8
    y = np.tile([1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], n_q)
    qid = np.repeat(np.arange(n_q), size)
    X = rng.normal(size=(n_q * size, 4)) + np.outer(y, [1.0, 0.5, 0.0, 0.0])
    scale = pair_scale(y, qid)
    assert scale == pytest.approx(4 / 15)
    C = 3.0
    tight = dict(eps=1e-7, n_jobs=1, n_iter_no_change=None)
    w_pairwise = SVMMap(C=C, loss="pairwise", **tight).fit(X, y, qid=qid).coef_
    w_count = SVMMap(C=C * scale, loss="pairwise:count", **tight).fit(X, y, qid=qid).coef_
    np.testing.assert_allclose(w_count, 2 * w_pairwise, rtol=1e-3, atol=1e-6)


def test_the_default_search_lists_pairwise_count_at_its_scaled_c(data):
    from svmmap._search.engine import pair_scale

    X, y, qid = data
    Cs = [0.1, 1.0]
    search = SVMMapCV(Cs, cv=2, loss="auto", patience=None, refit=False, n_jobs=1).fit(X, y, qid=qid)
    results = search.cv_results_
    count = results["param_loss"] == "pairwise:count"
    scale = pair_scale(np.asarray(y, dtype=np.float64), np.unique(qid, return_inverse=True)[1])
    np.testing.assert_allclose(results["param_C"][count], np.array(Cs) * scale)
    np.testing.assert_array_equal(results["param_C"][~count], np.tile(Cs, int((~count).sum()) // len(Cs)))
    # Listed by hand, the losses keep their C as given.
    listed = SVMMapCV(Cs, cv=2, loss="auto", losses=["pairwise:count"], refit=False, n_jobs=1).fit(X, y, qid=qid)
    np.testing.assert_array_equal(listed.cv_results_["param_C"], Cs)


def scripted_search(monkeypatch, script, **params):
    """An SVMMapCV whose split scores come from ``script[(loss, C index, split)]``."""
    from svmmap._search import engine

    Cs = params.pop("Cs")
    calls = []

    def scripted(coef, data, policy):
        # The engine scores each fit as it ends; the fit's candidate and C are the last call's.
        loss, j, k = calls[-1]
        return script[(loss, j, k)], False

    original = engine._Search.fit

    def fit(self, candidate, C, k, warm_state, cold=False):
        calls.append((candidate.loss, Cs.index(C), k))
        return original(self, candidate, C, k, warm_state, cold=cold)

    monkeypatch.setattr(engine, "validation_score", scripted)
    monkeypatch.setattr(engine._Search, "fit", fit)
    return SVMMapCV(Cs, **params), calls


def test_the_race_prunes_a_candidate_far_below_the_best_over_the_same_splits(data, monkeypatch):
    # Three splits, two C values. map scores 0.80 everywhere; pairwise 0.75 on splits 0 and 1
    # (0.05 below map over the same two splits, more than the margin 0.02) is pruned after
    # split 1, before its split 2 and its second C; pairwise:count at 0.79 (0.01 below) runs on.
    X, y, qid = data
    Cs = [0.1, 1.0]
    losses = ["map", "pairwise", "map-greedy"]
    value = {"map": 0.80, "pairwise": 0.75, "map-greedy": 0.79}
    script = {(loss, j, k): value[loss] + 0.001 * j for loss in losses for j in range(2) for k in range(3)}
    search, calls = scripted_search(
        monkeypatch, script, Cs=Cs, cv=3, loss="auto", losses=losses, patience=None, refit=False, n_jobs=1
    )
    search.fit(X, y, qid=qid)
    r = search.cv_results_
    status = dict(zip(zip(r["param_loss"], r["param_C"]), r["status"]))
    assert status[("map", 0.1)] == status[("map", 1.0)] == "fitted"
    assert status[("map-greedy", 0.1)] == status[("map-greedy", 1.0)] == "fitted"
    assert status[("pairwise", 0.1)] == status[("pairwise", 1.0)] == "pruned"
    # pairwise was fitted on splits 0 and 1 at the first C only; its scores there are kept.
    assert [c for c in calls if c[0] == "pairwise"] == [("pairwise", 0, 0), ("pairwise", 0, 1)]
    row = int(np.flatnonzero((r["param_loss"] == "pairwise") & (r["param_C"] == 0.1))[0])
    assert [r[f"split{k}_test_score"][row] for k in range(2)] == [0.75, 0.75]
    assert r["split2_stop_reason"][row] == "pruned"
    assert "pruned after 2 of 3 splits" in r["note"][row]
    assert search.best_params_["loss"] == "map"


def test_without_the_race_every_candidate_is_fitted(data, monkeypatch):
    X, y, qid = data
    losses = ["map", "pairwise"]
    script = {(loss, j, k): (0.8 if loss == "map" else 0.5) for loss in losses for j in range(2) for k in range(3)}
    search, calls = scripted_search(
        monkeypatch,
        script,
        Cs=[0.1, 1.0],
        cv=3,
        loss="auto",
        losses=losses,
        patience=None,
        prune_margin=None,
        refit=False,
        n_jobs=1,
    )
    search.fit(X, y, qid=qid)
    assert set(search.cv_results_["status"]) == {"fitted"}
    assert len(calls) == 2 * 2 * 3


def scripted_iterations(monkeypatch, iterations):
    """Every fit of loss L reports ``iterations[L]`` iterations to the search's table."""
    from svmmap._search import engine

    original = engine._Search.score

    def score(self, row, k, coef, summary, capped, cold=False):
        original(self, row, k, coef, summary, capped, cold=cold)
        self.table.iters[row, k] = iterations[self.table.params[row]["loss"]]

    monkeypatch.setattr(engine._Search, "score", score)


@pytest.mark.parametrize("lead", [False, True])
def test_the_race_stops_a_slow_candidate_below_the_best(data, monkeypatch, lead):
    # Three splits, two C values, four candidates of 4, 4, 5 and 60 iterations a fit: the
    # median over the four is 4.5, and 60 is more than 5 times that (22.5), 5 not. The slow
    # one, pairwise, scores 0.79, 0.01 below map's 0.80 (within the margin 0.02, so the race
    # by score keeps it, and it waits for two splits): it stops after split 0, its row and
    # the next "pruned". map-greedy at 0.79 too, but fast, and roc (5 iterations) run on. In
    # the lead (0.81) pairwise runs on.
    X, y, qid = data
    Cs = [0.1, 1.0]
    losses = ["map", "pairwise", "map-greedy", "roc"]
    value = {"map": 0.80, "pairwise": 0.81 if lead else 0.79, "map-greedy": 0.79, "roc": 0.795}
    script = {(loss, j, k): value[loss] for loss in losses for j in range(2) for k in range(3)}
    search, calls = scripted_search(
        monkeypatch, script, Cs=Cs, cv=3, loss="auto", losses=losses, patience=None, refit=False, n_jobs=1
    )
    scripted_iterations(monkeypatch, {"map": 4, "pairwise": 60, "map-greedy": 4, "roc": 5})
    search.fit(X, y, qid=qid)
    r = search.cv_results_
    status = dict(zip(zip(r["param_loss"], r["param_C"]), r["status"]))
    for loss in ("map", "map-greedy", "roc"):
        assert status[(loss, 0.1)] == status[(loss, 1.0)] == "fitted"
    if lead:
        assert status[("pairwise", 0.1)] == status[("pairwise", 1.0)] == "fitted"
        return
    assert status[("pairwise", 0.1)] == status[("pairwise", 1.0)] == "pruned"
    assert [c for c in calls if c[0] == "pairwise"] == [("pairwise", 0, 0)]
    row = int(np.flatnonzero((r["param_loss"] == "pairwise") & (r["param_C"] == 0.1))[0])
    # 60 / 4.5 = 13.3 times the median; 0.80 - 0.79 = 0.01 below the best.
    assert "pruned after 1 of 3 splits" in r["note"][row]
    assert "0.0100 below the best" in r["note"][row]
    assert "13.3 times the median iterations" in r["note"][row]


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "0.02", True])
def test_prune_margin_is_checked(data, bad):
    X, y, qid = data
    with pytest.raises(ValueError, match="prune_margin"):
        SVMMapCV([1.0], cv=2, loss="auto", losses=["map"], prune_margin=bad).fit(X, y, qid=qid)


def test_splits_without_preprocessing_keep_no_copy_of_X(data):
    # Without preprocessing a split trains on the search's one matrix (the code -1 outside its
    # training rows) and scores the predictions at its validation rows, in whatever order they
    # come: nothing of X is kept per split. Training rows out of order cannot be told apart by
    # codes (the order of the rows of a query is the order they are added in), so they are
    # copied, which gives the same models up to rounding.
    import svmmap.model_selection as model_selection
    from svmmap._search import engine
    from svmmap._search.folds import QueryKFold

    X, y, qid = data
    kept = []

    def run(candidates, split_data, policy):
        kept.append(split_data)
        return engine.run(candidates, split_data, policy)

    splits = list(QueryKFold(3).split(X, y, groups=qid))
    variants = {
        "in order": splits,
        "validation rows reversed": [(train, test[::-1]) for train, test in splits],
        "training rows reversed": [(train[::-1], test) for train, test in splits],
    }
    scores = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model_selection, "run", run)
        for name, cv in variants.items():
            search = SVMMapCV([0.1, 1.0], cv=cv, loss="map", scoring="map", warm_start=False, n_jobs=1)
            results = search.fit(X, y, qid=qid).cv_results_
            scores[name] = np.array([results[f"split{k}_test_score"] for k in range(3)])
    in_order, reversed_test, reversed_train = kept
    for split_data in (in_order, reversed_test):
        assert split_data._matrices == {}
        assert all(codes.shape == y.shape for _, codes, _, _ in split_data._training.values())
    assert set(reversed_train._matrices) == {("none", k) for k in range(3)}
    np.testing.assert_array_equal(scores["in order"], scores["validation rows reversed"])
    np.testing.assert_allclose(scores["in order"], scores["training rows reversed"], atol=1e-9)


def test_an_error_that_is_no_refusal_of_the_candidate_ends_the_search(data, monkeypatch):
    # Only the core's refusal of a loss on this data (or memory) leaves a candidate out; any
    # other error in a fit (bad data, a bug) must not pass for a candidate that merely lost.
    from svmmap._search import engine

    X, y, qid = data
    original = engine._core.fit_path_from

    def failing(x, y, codes, n, config, cs, **kw):
        if config.losses[0][0][1] == "pairwise":
            raise ValueError("query code -1 of row 0 is outside 0..28")
        return original(x, y, codes, n, config, cs, **kw)

    monkeypatch.setattr(engine._core, "fit_path_from", failing)
    with pytest.raises(ValueError, match="query code -1"):
        SVMMapCV([1.0], cv=2, loss="auto", losses=["map", "pairwise"], n_jobs=1).fit(X, y, qid=qid)


def test_the_search_fits_pairwise_count_at_the_tolerance_of_pairwise_at_the_nominal_c():
    # By hand: with pair_scale 4 / 15 (15 pairs a query), pairwise:count at C * 4 / 15 has 4
    # times pairwise's objective at C, so pairwise's tolerance C * eps is 4 C eps in its units,
    # which C * 4 / 15 * eps' reaches at eps' = 15 eps; the search's factor (10) on top: 150 eps.
    from svmmap._search.engine import Candidate, Policy, ranking_config

    policy = Policy(
        name="t", grid=[1.0], scoring="map", relevance_threshold=0.0, score_tolerance=0.0, threads=1, ranking_eps=10.0
    )
    config = SVMMap(loss="pairwise:count", eps=1e-3, n_jobs=1)._config()
    count = ranking_config(Candidate("pairwise:count", "none", config, C_scale=4 / 15), policy)
    assert count.config.kwargs()["eps"] == pytest.approx(0.15, rel=1e-12)
    other = ranking_config(Candidate("map", "none", SVMMap(loss="map", eps=1e-3, n_jobs=1)._config()), policy)
    assert other.config.kwargs()["eps"] == pytest.approx(0.01, rel=1e-12)
    # A factor of 1 and no scale leave the candidate as given.
    plain = Candidate("map", "none", config)
    assert ranking_config(plain, Policy(**{**policy.__dict__, "ranking_eps": 1.0})) is plain


def test_a_stopped_path_lets_go_of_its_warm_states(data, monkeypatch):
    # A warm state holds the path's working set of cutting planes (a dense vector of every
    # feature column a cut): a path stopped by the race, the early stop along C or a refusal is
    # never fitted again, so its states go, while the paths still running keep theirs.
    from svmmap._search import engine

    seen = []
    finish = engine._Search.finish

    def spy(self, losses):
        seen.append([(p.stopped, p.states) for p in self.paths])
        return finish(self, losses)

    monkeypatch.setattr(engine._Search, "finish", spy)
    X, y, qid = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SVMMapCV([0.01, 0.1, 1.0, 10.0, 100.0], loss="auto", preprocessing="auto", patience=1, n_jobs=1, cv=3).fit(
            X, y, qid=qid
        )
    (paths,) = seen
    assert any(stopped for stopped, _ in paths), "patience=1 stops some path before the last C"
    for stopped, states in paths:
        if stopped:
            assert all(state is None for state in states)


def one_split_search(monkeypatch, data, value, iterations=None, **params):
    """A search of one split (cv="validation", the last 8 queries of ``data`` the eval_set)
    over C = 0.1, 1, 10 without the early stop along C, each fit of loss L at C index j
    scoring ``value[L][j]``; fitted, with its calls and stderr."""
    X, y, qid = data
    vali = qid >= np.unique(qid)[-8]
    script = {(loss, j, 0): v for loss, values in value.items() for j, v in enumerate(values)}
    search, calls = scripted_search(
        monkeypatch,
        script,
        Cs=[0.1, 1.0, 10.0],
        cv="validation",
        loss="auto",
        losses=list(value),
        patience=None,
        refit=False,
        n_jobs=1,
        **params,
    )
    if iterations is not None:
        scripted_iterations(monkeypatch, iterations)
    search.fit(X[~vali], y[~vali], qid=qid[~vali], eval_set=[(X[vali], y[vali])], eval_qid=[qid[vali]])
    r = search.cv_results_
    return search, dict(zip(zip(r["param_loss"], r["param_C"]), r["status"])), calls


@pytest.mark.parametrize("margin", [0.02, None])
def test_a_one_split_search_stops_a_candidate_far_below_the_best_before_the_next_c(data, monkeypatch, capsys, margin):
    # One split, three C values. map scores 0.80 at every C, pairwise 0.75 (0.05 below the
    # best, more than the margin 0.02), map-greedy 0.79 (0.01 below, within it). After the
    # first C's split pairwise stops: its C = 0.1 row was fitted and stays "fitted", its
    # C = 1 and 10 rows are "pruned" and never fitted; map-greedy runs on. Without the race
    # (prune_margin=None) every row is fitted.
    value = {"map": [0.80] * 3, "pairwise": [0.75] * 3, "map-greedy": [0.79] * 3}
    search, status, calls = one_split_search(monkeypatch, data, value, prune_margin=margin, verbose=1)
    err = capsys.readouterr().err
    assert status[("map", 10.0)] == status[("map-greedy", 10.0)] == "fitted"
    assert search.best_params_["loss"] == "map"
    if margin is None:
        assert set(status.values()) == {"fitted"}
        assert len(calls) == 3 * 3
        return
    assert status[("pairwise", 0.1)] == "fitted"
    assert status[("pairwise", 1.0)] == status[("pairwise", 10.0)] == "pruned"
    assert [c for c in calls if c[0] == "pairwise"] == [("pairwise", 0, 0)]
    r = search.cv_results_
    row = int(np.flatnonzero((r["param_loss"] == "pairwise") & (r["param_C"] == 1.0))[0])
    assert r["note"][row] == "pruned before its fits: at C=0.1 mean 0.7500, 0.0500 below the best over the same splits"
    assert r["split0_stop_reason"][row] == "pruned"
    assert r["split0_test_score"][row - 1] == 0.75
    pruned = [line for line in err.splitlines() if "pruned" in line]
    assert len(pruned) == 1 and "pairwise/none C=1 pruned before its fits: at C=0.1 mean 0.7500" in pruned[0]


def test_a_one_split_search_never_stops_the_best_candidate(data, monkeypatch):
    # pairwise ties map (0.80) at C = 0.1 and then climbs to 0.83 and 0.85; its fits take 60
    # iterations, map's and map-greedy's 4 (the median 4, and 60 > 5 x 4): slow, but never
    # below the best, so never stopped, and chosen at C = 10. map-greedy (0.79, within the
    # margin of 0.80 at C = 0.1) and map (0.80) are 0.04 and 0.03 below pairwise's 0.83 at
    # C = 1, more than the margin: both stop before C = 10.
    value = {"map": [0.80] * 3, "pairwise": [0.80, 0.83, 0.85], "map-greedy": [0.79] * 3}
    iterations = {"map": 4, "pairwise": 60, "map-greedy": 4}
    search, status, calls = one_split_search(monkeypatch, data, value, iterations)
    assert [status[("pairwise", C)] for C in (0.1, 1.0, 10.0)] == ["fitted"] * 3
    for loss in ("map", "map-greedy"):
        assert [status[(loss, C)] for C in (0.1, 1.0, 10.0)] == ["fitted", "fitted", "pruned"]
    assert len(calls) == 3 + 3 + 1
    assert search.best_params_ == {"loss": "pairwise", "preprocessing": "none", "C": 10.0}


def long_graded_queries(n_queries=4, n_docs=600, seed=0):
    """Queries of 600 documents with labels 0..4: ndcg:graded (no cutoff) refuses them, map runs."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * n_docs, 3))
    y = rng.integers(0, 5, size=n_queries * n_docs).astype(np.float64)
    return X, y, np.repeat(np.arange(n_queries), n_docs)


def test_with_a_budget_a_refused_first_candidate_passes_its_guarantee_on():
    # The budget always lets one candidate's first C run on every split. When that is the
    # first candidate and the data refuses it, the next one that runs takes its place: the
    # search used to raise the refusal although map runs on this data (found by attack5).
    X, y, qid = long_graded_queries()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SVMMapCV(
            [0.1, 1.0], cv=2, loss="auto", losses=["ndcg:graded", "map"], time_budget=1e-9, n_jobs=1, refit=False
        ).fit(X, y, qid=qid)
    results = search.cv_results_
    assert list(results["status"]) == ["failed", "failed", "fitted", "time budget"]
    assert search.best_params_ == {"loss": "map", "preprocessing": "none", "C": 0.1}
    assert all(results[f"split{k}_stop_reason"][2] != "" for k in range(2))


def test_a_c_too_large_for_float64_is_left_out_and_the_smaller_ones_kept(data):
    # C = 1e300 overflows float64 (the weights grow with C); the grid's C = 1 runs. The C
    # too large is a refusal of the candidate at that C, as a query too long for an oracle
    # is, and no longer ends the search (found by attack5); alone, it is still the error.
    X, y, qid = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SVMMapCV(
            [1.0, 1e300], cv=2, loss="auto", losses=["map", "pairwise"], n_jobs=1, refit=False, patience=None
        ).fit(X, y, qid=qid)
    results = search.cv_results_
    assert list(results["status"]) == ["fitted", "failed", "fitted", "failed"]
    assert all("C = 1e+300 is too large for float64" in note for note in results["note"][[1, 3]])
    assert search.best_params_["C"] == 1.0
    with pytest.raises(ValueError, match="C = 1e[+]300 is too large"):
        SVMMapCV([1e300], cv=2, loss="auto", losses=["map", "pairwise"], n_jobs=1).fit(X, y, qid=qid)


def test_a_row_whose_fit_the_budget_cut_is_never_chosen(data, monkeypatch):
    # The budget runs out during the last split's fit at C = 10 (scripted: the fit reports the
    # budget's stop and the clock says no time is left). That row is not fully fitted: status
    # "time budget", whichever split the cut falls on; it was "fitted", and could be chosen,
    # when the cut fit was the last of its split (found by attack5).
    from types import SimpleNamespace

    from svmmap._search import engine

    X, y, qid = data
    spent = {"now": False}
    original = engine._Search.fit

    def fit(self, candidate, C, k, warm_state, cold=False):
        coef, summary, state, capped = original(self, candidate, C, k, warm_state, cold=cold)
        if C == 10.0 and k == 2:
            spent["now"] = True
            fields = {n: getattr(summary, n) for n in ("history", "n_iter", "n_evals")}
            return coef, SimpleNamespace(stop=engine._core.TIME_LIMIT, **fields), state, True
        return coef, summary, state, capped

    monkeypatch.setattr(engine._Search, "fit", fit)
    monkeypatch.setattr(engine._Search, "remaining", lambda self: -1.0 if spent["now"] else 100.0)
    with pytest.warns(UserWarning, match="time budget"):
        search = SVMMapCV([0.1, 10.0], cv=3, time_budget=100.0, n_jobs=1, refit=False).fit(X, y, qid=qid)
    results = search.cv_results_
    assert list(results["split2_stop_reason"]) == ["converged", "budget"]
    assert list(results["status"]) == ["fitted", "time budget"]
    assert search.best_params_["C"] == 0.1


def test_the_progress_count_of_fits_is_the_number_possible(data, capsys):
    # Two losses x two preprocessings x two C values x two splits: 16 fits, all made (no race,
    # no early stop). Every line's "done/total" says 16 in total; the count used to take the
    # fits the race had made of the other rows at a C as still to do (1/16, 2/17, 3/18, ...).
    X, y, qid = data
    for verbose in (1, 2):
        SVMMapCV(
            [0.1, 1.0],
            cv=2,
            loss="auto",
            losses=["map", "pairwise"],
            preprocessing=["none", "standard"],
            patience=None,
            prune_margin=None,
            verbose=verbose,
            refit=False,
            n_jobs=1,
        ).fit(X, y, qid=qid)
        counts = re.findall(r"(\d+)/(\d+) fits", capsys.readouterr().err)
        assert len(counts) == (8 if verbose == 1 else 24)
        assert {int(total) for _, total in counts} == {16}
        assert counts[-1] == ("16", "16")


def test_losses_that_cannot_run_at_all_are_named_as_given():
    # Every loss listed in losses= is refused on this data: the error names losses=, which the
    # user gave, where it said "loss must be ..." (found by attack5).
    X, y, qid = long_graded_queries()
    with pytest.raises(ValueError, match=r"^losses=\['ndcg:graded'\]: no candidate can run on this data; loss must"):
        SVMMapCV([1.0], cv=2, loss="auto", losses=["ndcg:graded"], scoring="map", n_jobs=1).fit(X, y, qid=qid)


def test_the_confirmation_lets_go_of_each_splits_state_once_no_fit_reads_it(data, monkeypatch):
    # Once the C paths are done no fit reads a warm state (the confirmation's fits start
    # cold), and once the confirmation is done with a split no fit reads that split's training
    # codes (8 bytes a row of X for a split trained in place) or copies: they go before the
    # refit, split by split, where they stayed until the search ended.
    from svmmap._search import engine

    seen = []
    confirm, finish = engine._Search.confirm, engine._Search.finish

    def spy_confirm(self):
        # The paths' fits left warm states and the last split's training codes.
        seen.append(([p.states for p in self.paths], dict(self.data._training)))
        return confirm(self)

    def spy_finish(self, losses):
        data = self.data
        caches = (data._matrices, data._training, data._columns, data._thresholds, data._windows, data._ga2m)
        seen.append(([p.states for p in self.paths], data._binned, [dict(c) for c in caches]))
        seen.append(int(self.table.confirmed.sum()))
        return finish(self, losses)

    monkeypatch.setattr(engine._Search, "confirm", spy_confirm)
    monkeypatch.setattr(engine._Search, "finish", spy_finish)
    X, y, qid = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # A confirmation tolerance of 1 (a score lies in [0, 1]) confirms every fitted row on
        # every split, so that every split is read again after the paths are done.
        SVMMapCV([0.1, 1.0, 10.0], loss="map", scoring="map", confirm_tolerance=1.0, n_jobs=1, cv=3).fit(X, y, qid=qid)
    (states_before, training_before), (states, binned, caches), confirmed = seen
    assert any(state is not None for path_states in states_before for state in path_states)
    assert training_before, "the paths' fits kept the last split's training codes"
    assert confirmed == 3, "every fitted row is confirmed"
    assert all(state is None for path_states in states for state in path_states)
    assert binned is None
    assert caches == [{}] * 6


def test_a_left_out_candidate_keeps_no_data_of_the_search_alive(monkeypatch):
    # The refused fit's error is kept for its note; with its traceback it held the fit's frame,
    # and so the search and every split's matrices in a reference cycle that only the garbage
    # collector breaks: they stayed in memory through the refit. With the collector off, the
    # split data must go as soon as the search returns.
    import gc
    import weakref

    from svmmap._search import splits

    made = []
    init = splits.SplitData.__init__

    def recording_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(weakref.ref(self))

    monkeypatch.setattr(splits.SplitData, "__init__", recording_init)
    d = make_ranking(8, 80, 4, random_state=1)
    rng = np.random.default_rng(0)
    X = np.vstack([d.X.astype(np.float64), rng.normal(size=(600, 4))])
    y = np.concatenate([d.y.astype(np.float64), rng.integers(0, 5, size=600).astype(np.float64)])
    qid = np.concatenate([d.qid, np.full(600, d.qid.max() + 1)])
    gc.collect()
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = SVMMapCV(
                [0.1, 1.0], cv=2, loss="auto", scoring="map", losses=["map", "ndcg:graded"], n_jobs=1, refit=False
            ).fit(X, y, qid=qid)
        assert "failed" in list(search.cv_results_["status"])
        assert made and all(ref() is None for ref in made)
    finally:
        gc.enable()
