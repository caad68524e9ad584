"""SVMMapCV's search over loss x preprocessing x C: the candidates, the early stop along C,
the time budget, the refit, validation sets and ``svmmap learn --auto``."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from svmmap import Binner, SVMMap, SVMMapCV, _core, load_model, save_model
from svmmap._fit.defaults import TRAINING_DEFAULTS
from svmmap._search.candidates import auto_losses
from svmmap._search.engine import RANKING_EPS, pair_scale
from svmmap._validation import check_matrix, check_qid
from svmmap.datasets import make_ranking
from svmmap.metrics import per_query

CS = [0.01, 0.1, 1.0, 10.0]

#: The eps of the fits of a search over losses and preprocessings, which only rank candidates
#: (the refit keeps the eps given): RANKING_EPS times the default.
SEARCH_EPS = RANKING_EPS * TRAINING_DEFAULTS["eps"]


def search_eps(loss, scale):
    """The eps of a search fit of ``loss``; ``scale``: pair_scale of the data. By hand:
    pairwise:count at C * scale is 4 times pairwise's objective at C (w = 2v,
    tests/api/test_search_engine.py), so that the tolerance of pairwise at C, C * eps, is
    4 C eps in its units: eps times 4 / scale at C * scale."""
    return SEARCH_EPS * 4 / scale if loss == "pairwise:count" else SEARCH_EPS


@pytest.fixture(scope="module")
def data():
    """30 small synthetic queries with graded labels (0..4), 8 features."""
    d = make_ranking(n_queries=30, docs_per_query=20, n_features=8, random_state=0)
    return np.asarray(d[0], dtype=np.float64), np.asarray(d[1]), np.asarray(d[2])


def independent(loss, preprocessing, C, eps=TRAINING_DEFAULTS["eps"]):
    """The candidate built by hand, as a user would: an SVMMap, or a Pipeline in front of it."""
    model = SVMMap(C=C, loss=loss, n_jobs=1, eps=eps)
    if preprocessing == "none":
        return model
    if preprocessing == "standard":
        return Pipeline([("p", StandardScaler()), ("m", model)])
    pairs = 10 if preprocessing == "ga2m" else None
    return Pipeline([("p", Binner(n_jobs=1, interactions=pairs)), ("m", model)])


def fit_independent(model, X, y, qid):
    if isinstance(model, Pipeline):
        if model[0].get_params().get("interactions") is not None:
            return model.fit(X, y, p__qid=qid, m__qid=qid)
        return model.fit(X, y, m__qid=qid)
    return model.fit(X, y, qid=qid)


def last_coef(model):
    return model[-1].coef_ if isinstance(model, Pipeline) else model.coef_


def test_auto_losses_take_the_cutoff_of_the_scoring():
    assert auto_losses("ndcg@10") == ["map", "pairwise", "pairwise:count", "ndcg@10:graded"]
    assert auto_losses("ndcg@5")[-1] == "ndcg@5:graded"
    assert auto_losses("map")[-1] == "ndcg:graded"


def test_one_row_per_candidate_and_the_best_is_the_best_mean(data):
    X, y, qid = data
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=qid))
    search = SVMMapCV(
        CS, loss="auto", preprocessing="auto", scoring="ndcg@10", cv=splits, patience=None, prune_margin=None, n_jobs=1
    )
    search.fit(X, y, qid=qid)
    r = search.cv_results_
    # Four losses x four preprocessings x four C values, every one fitted (no patience) but
    # "ga2m"'s: these queries have no interaction, so its Binner keeps no pair on any split and
    # its models would be "binned"'s.
    assert len(r["param_C"]) == 4 * 4 * len(CS)
    ga2m = np.asarray(r["param_preprocessing"]) == "ga2m"
    assert set(r["status"][~ga2m]) == {"fitted"} and set(r["status"][ga2m]) == {"no pairs"}
    seen = {(p["loss"], p["preprocessing"], p["C"]) for p in r["params"]}
    # pairwise:count's C values are the grid's times pair_scale (tests/api/test_search_engine.py).
    scale = pair_scale(np.asarray(y, dtype=np.float64), np.unique(qid, return_inverse=True)[1])
    assert seen == {
        (l, p, C * scale if l == "pairwise:count" else C)
        for l in auto_losses("ndcg@10")
        for p in ("none", "standard", "binned", "ga2m")
        for C in CS
    }
    split_scores = np.array([r[f"split{k}_test_score"] for k in range(3)])
    assert np.isnan(split_scores[:, ga2m]).all()
    means = np.where(ga2m, -np.inf, split_scores.mean(axis=0))
    np.testing.assert_allclose(r["mean_test_score"][~ga2m], means[~ga2m], rtol=0, atol=1e-15)
    assert not r["n_degenerate_splits"].any()
    # The best mean (ties: the row listed first, which argmax returns).
    assert search.best_index_ == int(np.argmax(means))
    assert r["rank_test_score"][search.best_index_] == 1
    best = r["params"][search.best_index_]
    assert search.best_params_ == best
    assert search.best_score_ == pytest.approx(means.max(), abs=1e-15)
    # The refit is the candidate built and fitted by hand on all the data.
    by_hand = fit_independent(independent(best["loss"], best["preprocessing"], best["C"]), X, y, qid)
    np.testing.assert_array_equal(last_coef(search.best_estimator_), last_coef(by_hand))
    np.testing.assert_array_equal(search.predict(X), by_hand.predict(X))


@pytest.mark.parametrize("preprocessing", ["standard", "binned"])
def test_split_scores_are_fits_on_the_training_rows_alone(data, preprocessing):
    # At the smallest C the path has nothing to start from, so the model is the cold fit: the
    # split's score must be that of the pipeline fitted on the split's training rows only. A
    # scaler or binner fitted on all rows (leaking the validation rows) gives other scores.
    X, y, qid = data
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=qid))
    search = SVMMapCV(
        CS, loss="auto", losses=["map"], preprocessing=[preprocessing], cv=splits, n_jobs=1, scoring="map"
    )
    search.fit(X, y, qid=qid)
    r = search.cv_results_
    assert list(r["param_preprocessing"]) == [preprocessing] * len(CS)
    for k, (train, test) in enumerate(splits):
        model = fit_independent(
            independent("map", preprocessing, CS[0], eps=SEARCH_EPS), X[train], y[train], qid[train]
        )
        expected = per_query("map", y[test], model.predict(X[test]), qid[test]).mean()
        assert r[f"split{k}_test_score"][0] == pytest.approx(expected, abs=1e-12)
    # The refit is a Pipeline that is saved and loaded with its preprocessing.
    assert isinstance(search.best_estimator_, Pipeline)


@pytest.mark.parametrize("preprocessing", ["none", "standard", "binned", "ga2m"])
def test_the_refitted_model_saves_loads_and_predicts(data, preprocessing, tmp_path):
    X, y, qid = data
    search = SVMMapCV(
        [0.1, 1.0], loss="auto", losses=["pairwise"], preprocessing=preprocessing, cv=3, n_jobs=1, scoring="map"
    )
    search.fit(X, y, qid=qid)
    assert isinstance(search.best_estimator_, SVMMap if preprocessing == "none" else Pipeline)
    path = tmp_path / "model.json"
    save_model(search.best_estimator_, path)
    np.testing.assert_allclose(load_model(path).predict(X), search.predict(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("preprocessing", ["standard", "binned", "ga2m"])
def test_the_refit_works_with_metadata_routing_enabled(data, preprocessing):
    """The scikit-learn guide enables metadata routing; the refit of a preprocessing Pipeline
    used to pass svmmap__qid to Pipeline.fit, which scikit-learn then refuses ("not routed to
    any object"). The refit must be the candidate fitted by hand on all rows."""
    import sklearn

    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        search = SVMMapCV([0.1, 1.0], preprocessing=preprocessing, cv=3, n_jobs=1, scoring="map").fit(X, y, qid=qid)
    expected = fit_independent(independent("map", preprocessing, search.best_C_), X, y, qid)
    if preprocessing == "standard":
        # Read through the scaler's statistics rather than trained on its scaled copy: equal
        # up to rounding (see test_the_standard_refit_reads_X_through_the_scalers_statistics).
        coef = expected[-1].coef_
        np.testing.assert_allclose(search.best_estimator_[-1].coef_, coef, rtol=0, atol=1e-7 * np.abs(coef).max())
    else:
        np.testing.assert_array_equal(search.best_estimator_[-1].coef_, expected[-1].coef_)


class Scripted(SVMMapCV):
    """An SVMMapCV whose validation scores are a script, one per call (split by split, C by C),
    so that the shape of the score path along C is known exactly: its fit replaces the search
    engine's validation score for the time of the fit."""

    def __init__(self, Cs=CS, *, script=(), **kw):
        super().__init__(Cs, **kw)
        self.script = script

    def fit(self, *args, **kwargs):
        from svmmap._search import engine

        def scripted(coef, data, policy):
            value = self.script[self.calls]
            self.calls += 1
            return value, False

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(engine, "validation_score", scripted)
            return super().fit(*args, **kwargs)


@pytest.mark.parametrize(
    "means, patience, n_fitted",
    [
        # The best at C_2 (0.7), then three values below it: patience 3 fits C_3, C_4, C_5 and stops.
        ([0.5, 0.6, 0.7, 0.65, 0.66, 0.69, 0.8, 0.9], 3, 6),
        # Patience 2 stops two values after the best, at C_4.
        ([0.5, 0.6, 0.7, 0.65, 0.66, 0.69, 0.8, 0.9], 2, 5),
        # Patience 1 stops at the first value that does not improve; equal is no improvement.
        ([0.5, 0.5, 0.9, 0.95, 0.99, 0.99, 0.99, 0.99], 1, 2),
        # A better value resets the count: C_1 falls, C_2 improves, C_3 and C_4 fall.
        ([0.5, 0.4, 0.6, 0.55, 0.5, 0.9, 0.9, 0.9], 2, 5),
        # Without patience every C is fitted.
        ([0.5, 0.4, 0.3, 0.2, 0.1, 0.0, 0.0, 0.0], None, 8),
    ],
)
def test_a_path_stops_patience_values_after_its_best(data, means, patience, n_fitted):
    X, y, qid = data
    Cs = [10.0**e for e in range(-3, 5)]
    # Two splits, both scoring the path's value at each C (so the mean is that value).
    script = [m for m in means for _ in range(2)]
    search = Scripted(Cs, script=script, loss="auto", losses=["map"], cv=2, patience=patience, refit=False, n_jobs=1)
    search.calls = 0
    search.fit(X, y, qid=qid)
    status = list(search.cv_results_["status"])
    assert status == ["fitted"] * n_fitted + ["early stop"] * (len(Cs) - n_fitted)
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"][:n_fitted], means[:n_fitted])
    assert np.isnan(search.cv_results_["mean_test_score"][n_fitted:]).all()
    assert search.calls == 2 * n_fitted
    assert search.best_params_["C"] == Cs[int(np.argmax(means[:n_fitted]))]


def test_paths_stop_independently(data):
    # Two losses: the first path's scores fall at once, the second's rise; the search keeps
    # fitting the second after the first has stopped (calls alternate per C while both run).
    X, y, qid = data
    Cs = [0.01, 0.1, 1.0, 10.0]
    # Call order (cv=2; at each C split 0 of every running path, then split 1):
    # C0: map, pairwise, map, pairwise; C1: the same; C2: pairwise (map stopped); C3: pairwise.
    script = [0.5, 0.1, 0.5, 0.1] + [0.4, 0.2, 0.4, 0.2] + [0.5, 0.5] + [0.6, 0.6]
    search = Scripted(
        Cs, script=script, loss="auto", losses=["map", "pairwise"], cv=2, patience=1, prune_margin=None, refit=False
    )
    search.calls = 0
    search.fit(X, y, qid=qid)
    assert list(search.cv_results_["status"]) == ["fitted", "fitted", "early stop", "early stop"] + ["fitted"] * 4
    assert search.best_params_ == {"loss": "pairwise", "preprocessing": "none", "C": 10.0}


def test_a_tiny_time_budget_stops_with_a_warning_and_a_result(data):
    X, y, qid = data
    search = SVMMapCV(CS, loss="auto", preprocessing="auto", cv=3, time_budget=1e-9, n_jobs=1, scoring="map")
    # The refit has the budget as its max_time too (search5), and says so when it stops there.
    refit = "SVMMapCV's refit \\(max_time = time_budget\\) stopped at max_time"
    with pytest.warns(UserWarning, match="time budget"), pytest.warns(ConvergenceWarning, match=refit):
        search.fit(X, y, qid=qid)
    status = search.cv_results_["status"]
    # Only the first candidate, which always runs, was fitted; every other row says why not.
    assert list(status).count("fitted") == 1 and status[0] == "fitted"
    assert set(status[1:]) == {"time budget"}
    assert search.best_index_ == 0
    assert np.isfinite(search.best_score_)
    assert hasattr(search, "best_estimator_")


def test_validation_set_scores_fits_on_all_training_rows(data):
    X, y, qid = data
    train, vali = qid < 20, qid >= 20
    search = SVMMapCV(CS, loss="auto", preprocessing="auto", scoring="ndcg@10", cv="validation", n_jobs=1)
    search.fit(X[train], y[train], qid=qid[train], eval_set=[(X[vali], y[vali])], eval_qid=[qid[vali]])
    r = search.cv_results_
    assert search.n_splits_ == 1
    # At the smallest C each path's model is the cold fit on all the training rows at the
    # search's eps, scored on the eval_set (with the preprocessing fitted on the training rows).
    scale = pair_scale(y[train], np.unique(qid[train], return_inverse=True)[1])
    # (A "ga2m" path whose Binner kept no pair is not fitted: its models would be "binned"'s.)
    for i in np.flatnonzero(r["param_C"] == CS[0]):
        p = r["params"][i]
        if p["preprocessing"] == "ga2m" and r["status"][i] == "no pairs":
            assert np.isnan(r["split0_test_score"][i])
            continue
        eps = search_eps(p["loss"], scale)
        model = fit_independent(independent(p["loss"], p["preprocessing"], p["C"], eps), X[train], y[train], qid[train])
        expected = per_query("ndcg@10", y[vali], model.predict(X[vali]), qid[vali]).mean()
        assert r["split0_test_score"][i] == pytest.approx(expected, abs=1e-12), p


@pytest.mark.parametrize("validation_strength", [0.0, 2.0])
def test_with_cv_validation_ga2m_judges_its_pairs_on_the_eval_set(validation_strength):
    """The training queries carry an interaction of features 0 and 1 (so the halves of the
    training queries keep it); with cv="validation" the ga2m candidate keeps it only when the
    validation queries carry it too, and the refit keeps the pairs the search scored (tests/
    core/test_interactions.py derives the rule on the same kind of data)."""
    from tests.core.test_interactions import _steps_and_pair

    rng = np.random.default_rng(3)
    X, y, qid = _steps_and_pair(rng, 40, 2.0)
    Xv, yv, qv = _steps_and_pair(rng, 40, validation_strength)
    search = SVMMapCV(
        [1.0], loss="auto", losses=["map"], preprocessing=["binned", "ga2m"], cv="validation", n_jobs=1, scoring="map"
    )
    search.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv])
    r = search.cv_results_
    ga2m = list(r["param_preprocessing"]).index("ga2m")
    by_hand = Binner(n_jobs=1, interactions=10).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv])
    assert by_hand.interactions_ == ([(0, 1)] if validation_strength else [])
    if not validation_strength:
        assert r["status"][ga2m] == "no pairs"
        return
    assert r["status"][ga2m] == "fitted" and search.best_params_["preprocessing"] == "ga2m"
    # The refit is the pipeline with the validation-judged Binner, fitted by hand.
    assert search.best_estimator_[0].interactions_ == [(0, 1)]
    model = SVMMap(C=1.0, loss="map", n_jobs=1).fit(by_hand.transform(X), y, qid=qid)
    np.testing.assert_array_equal(search.best_estimator_[-1].coef_, model.coef_)
    # The search's split fit ranks at RANKING_EPS times the eps given (the refit at the eps).
    ranked = SVMMap(C=1.0, loss="map", n_jobs=1, eps=model.eps * RANKING_EPS).fit(by_hand.transform(X), y, qid=qid)
    expected = per_query("map", yv, ranked.predict(by_hand.transform(Xv)), qv).mean()
    assert r["split0_test_score"][ga2m] == pytest.approx(expected, abs=1e-12)


def test_a_path_fitted_in_pieces_is_the_path_fitted_at_once(data):
    X, y, qid = data
    cX = check_matrix(X)[0]
    codes, ids = check_qid(qid, len(y))
    config = SVMMap(loss="ndcg@10:graded", n_jobs=1)._config()
    grid = [0.01, 0.1, 1.0, 10.0, 100.0]
    whole = _core.fit_path(cX, y, codes, len(ids), config, grid, warm=True)
    state, pieces = None, []
    for C in grid:
        path, state = _core.fit_path_from(cX, y, codes, len(ids), config, [C], warm_state=state)
        pieces += path
    for (w_whole, s_whole), (w_piece, s_piece) in zip(whole, pieces):
        np.testing.assert_array_equal(w_whole, w_piece)
        assert s_whole.n_iter == s_piece.n_iter and s_whole.primal == s_piece.primal


def test_losses_is_only_a_search_list_with_loss_auto(data):
    X, y, qid = data
    with pytest.raises(ValueError, match='loss="auto"'):
        SVMMapCV(loss="map", losses=["map", "pairwise"], scoring="map").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="preprocessing"):
        SVMMapCV(preprocessing="pca", scoring="map").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="patience"):
        SVMMapCV(loss="auto", patience=0, scoring="map").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="time_budget"):
        SVMMapCV(loss="auto", time_budget=-1, scoring="map").fit(X, y, qid=qid)


def test_a_loss_name_alone_keeps_the_C_search(data):
    # loss="map" without a preprocessing is the C search: the search with one candidate, one
    # row per C, and the same scores as a warm path of the core fitted in one call.
    X, y, qid = data
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=qid))
    search = SVMMapCV(CS, cv=splits, n_jobs=1, scoring="map").fit(X, y, qid=qid)
    assert list(search.cv_results_["status"]) == ["fitted"] * len(CS)
    assert list(search.cv_results_["param_loss"]) == ["map"] * len(CS)
    np.testing.assert_array_equal(search.cv_results_["param_C"], CS)
    assert search.best_params_ == {"loss": "map", "preprocessing": "none", "C": search.best_C_}
    train, test = splits[0]
    codes, ids = check_qid(qid[train], train.size)
    path = _core.fit_path(check_matrix(X[train])[0], y[train], codes, len(ids), SVMMap(n_jobs=1)._config(), CS)
    expected = [per_query("map", y[test], X[test] @ w, qid[test]).mean() for w, _ in path]
    np.testing.assert_allclose(search.cv_results_["split0_test_score"], expected, rtol=0, atol=1e-12)


def write_letor(path, X, y, qid):
    with open(path, "w") as f:
        for row, label, q in zip(X, y, qid):
            f.write(f"{int(label)} qid:{q} " + " ".join(f"{i + 1}:{float(v)!r}" for i, v in enumerate(row)) + "\n")


@pytest.mark.parametrize("validation", [True, False])
@pytest.mark.slow
def test_learn_auto_writes_the_best_model(data, tmp_path, validation):
    X, y, qid = data
    train, vali = qid < 20, qid >= 20
    write_letor(tmp_path / "train.txt", X[train], y[train], qid[train])
    write_letor(tmp_path / "vali.txt", X[vali], y[vali], qid[vali])
    where = ["--vali", tmp_path / "vali.txt"] if validation else ["--cv", "3"]
    args = ["learn", "--auto", "--n-jobs", "1", *where, tmp_path / "train.txt", tmp_path / "model.json"]
    r = subprocess.run([sys.executable, "-m", "svmmap", *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "best: loss" in r.stderr
    # The same search in Python gives the same model.
    search = SVMMapCV(
        loss="auto", preprocessing="auto", scoring="ndcg@10", cv="validation" if validation else 3, n_jobs=1
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if validation:
            search.fit(X[train], y[train], qid=qid[train], eval_set=[(X[vali], y[vali])], eval_qid=[qid[vali]])
        else:
            search.fit(X[train], y[train], qid=qid[train])
    loaded = load_model(tmp_path / "model.json")
    np.testing.assert_allclose(loaded.predict(X), search.predict(X), rtol=1e-9, atol=1e-9)


def test_sample_weights_weight_the_fits_and_the_split_means(data):
    # At the smallest C the split's model is the cold weighted fit on its training rows, and
    # its score is the validation queries' mean weighted by their weights.
    X, y, qid = data
    weights = np.repeat(np.random.default_rng(1).uniform(0.5, 2.0, 30), np.bincount(qid))
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=qid))
    search = SVMMapCV(CS, loss="auto", losses=["map"], preprocessing="standard", cv=splits, n_jobs=1, scoring="map")
    search.fit(X, y, qid=qid, sample_weight=weights)
    for k, (train, test) in enumerate(splits):
        model = independent("map", "standard", CS[0], eps=SEARCH_EPS)
        model.fit(X[train], y[train], m__qid=qid[train], m__sample_weight=weights[train])
        pq = per_query("map", y[test], model.predict(X[test]), qid[test])
        w = np.array([weights[test][qid[test] == q][0] for q in pq.qids])
        expected = float(np.dot(w, pq.values) / w.sum())
        assert search.cv_results_[f"split{k}_test_score"][0] == pytest.approx(expected, abs=1e-12)


def test_sparse_features_are_scaled_without_centering(data):
    import scipy.sparse as sp

    X, y, qid = data
    search = SVMMapCV([0.1, 1.0], loss="auto", losses=["map"], preprocessing="standard", cv=3, n_jobs=1, scoring="map")
    search.fit(sp.csr_matrix(X), y, qid=qid)
    C = search.best_params_["C"]
    by_hand = Pipeline([("p", StandardScaler(with_mean=False)), ("m", SVMMap(C=C, n_jobs=1))])
    by_hand.fit(sp.csr_matrix(X), y, m__qid=qid)
    assert search.best_estimator_[0].mean_ is not None and not search.best_estimator_[0].with_mean
    # Equal up to rounding (see test_the_standard_refit_reads_X_through_the_scalers_statistics).
    coef = by_hand[-1].coef_
    np.testing.assert_allclose(search.best_estimator_[-1].coef_, coef, rtol=0, atol=1e-7 * np.abs(coef).max())


@pytest.mark.parametrize("preprocessing", ["standard", "binned"])
def test_a_sparse_validation_set_beside_dense_x(data, preprocessing):
    """cv="validation" with dense X and the same validation rows as CSR (as load_letor reads a
    file that leaves out zeros): the candidates score the same as with the dense rows; the
    standardized ones failed with scikit-learn's 'Cannot center sparse matrices'."""
    import scipy.sparse as sp

    X, y, qid = data
    train, vali = qid < 20, qid >= 20
    scores = []
    for Xv in (X[vali], sp.csr_matrix(X[vali])):
        search = SVMMapCV([0.1, 1.0], preprocessing=preprocessing, cv="validation", n_jobs=1, scoring="map")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X[train], y[train], qid=qid[train], eval_set=[(Xv, y[vali])], eval_qid=[qid[vali]])
        scores.append(search.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(scores[0], scores[1])


def test_cv_validation_takes_eval_x_and_eval_y(data):
    """SVMMap.fit takes LightGBM 4.7's eval_X, eval_y; SVMMapCV.fit refused them as unexpected
    keywords. They are eval_set=[(eval_X, eval_y)]: the same scores."""
    X, y, qid = data
    train, vali = qid < 20, qid >= 20
    results = []
    for spelling in ({"eval_set": [(X[vali], y[vali])]}, {"eval_X": X[vali], "eval_y": y[vali]}):
        search = SVMMapCV(CS, cv="validation", n_jobs=1, scoring="map")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X[train], y[train], qid=qid[train], eval_qid=[qid[vali]], **spelling)
        results.append(search.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(results[0], results[1])
    with pytest.raises(ValueError, match="not both"):
        SVMMapCV(CS, cv="validation", scoring="map").fit(
            X, y, qid=qid, eval_set=[(X, y)], eval_X=X, eval_y=y, eval_qid=[qid]
        )


@pytest.mark.slow
def test_learn_auto_verbose_prints_the_search_s_progress(data, tmp_path):
    # svmmap learn --auto -v: SVMMapCV(verbose=1)'s lines, one per candidate and C fitted on
    # every split, before the summary line; without -v, none.
    X, y, qid = data
    write_letor(tmp_path / "train.txt", X, y, qid)
    args = ["learn", "--auto", "--n-jobs", "1", "--cv", "3", tmp_path / "train.txt"]
    loud = subprocess.run(
        [sys.executable, "-m", "svmmap", *map(str, [*args, tmp_path / "a.json"]), "-v"], capture_output=True, text=True
    )
    assert loud.returncode == 0, loud.stderr
    lines = [line for line in loud.stderr.splitlines() if line.startswith("[SVMMapCV]")]
    assert lines and all(" fits " in line and "s left" in line for line in lines)
    quiet = subprocess.run(
        [sys.executable, "-m", "svmmap", *map(str, [*args, tmp_path / "b.json"])], capture_output=True, text=True
    )
    assert quiet.returncode == 0, quiet.stderr
    assert "[SVMMapCV]" not in quiet.stderr


def test_the_search_tries_pairs_and_chooses_them_only_where_they_help():
    # One strong planted pair: the GA2M candidate ranks the validation queries far better than
    # the per-feature binned model (the pair is worth 2 label units where both features are
    # high), so it is chosen, and its refit is the pipeline fitted by hand on all the rows.
    X, y, qid = make_ranking(n_queries=120, docs_per_query=30, n_features=6, interactions=[(0, 1, 2.0)], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = SVMMapCV([1.0, 10.0], preprocessing=["binned", "ga2m"], cv=3, n_jobs=1).fit(X, y, qid=qid)
        assert search.best_params_["preprocessing"] == "ga2m"
        assert search.best_estimator_[0].interactions_ == [(0, 1)]
        by_hand = fit_independent(independent("map", "ga2m", search.best_C_), X, y, qid)
    np.testing.assert_array_equal(search.best_estimator_[-1].coef_, by_hand[-1].coef_)
    # Without the pair no split's Binner keeps one: the GA2M rows are left out ("no pairs")
    # and the binned rows are bit for bit those of the search without the GA2M candidate.
    X, y, qid = make_ranking(n_queries=120, docs_per_query=30, n_features=6, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = SVMMapCV([1.0, 10.0], preprocessing=["binned", "ga2m"], cv=3, n_jobs=1).fit(X, y, qid=qid)
        alone = SVMMapCV([1.0, 10.0], preprocessing=["binned"], cv=3, n_jobs=1).fit(X, y, qid=qid)
    r, a = both.cv_results_, alone.cv_results_
    assert list(r["status"]) == ["fitted", "fitted", "no pairs", "no pairs"]
    for k in range(3):
        np.testing.assert_array_equal(r[f"split{k}_test_score"][:2], a[f"split{k}_test_score"])
    assert both.best_params_ == alone.best_params_
    np.testing.assert_array_equal(both.coef_, alone.coef_)


def test_the_search_ranks_at_a_looser_eps_and_the_refit_keeps_the_eps_given(data):
    # With eps=2e-3 the search's fits are made at RANKING_EPS times it (10 times: 2e-2), the
    # refit at 2e-3; the C search alone keeps 2e-3 in its fits too. At the one C (0.1) a split's
    # model is the cold fit, so its score is that of SVMMap at the eps named.
    X, y, qid = data
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=qid))
    train, test = splits[0]
    assert RANKING_EPS == 10.0

    def split_score(eps):
        model = SVMMap(C=0.1, loss="map", eps=eps, n_jobs=1).fit(X[train], y[train], qid=qid[train])
        return per_query("map", y[test], model.predict(X[test]), qid[test]).mean()

    loose, given = split_score(2e-2), split_score(2e-3)
    # The two differ, so that the test can tell which eps the search used.
    assert loose != given
    common = dict(cv=splits, n_jobs=1, scoring="map", eps=2e-3)
    search = SVMMapCV([0.1], loss="auto", losses=["map"], preprocessing="none", **common).fit(X, y, qid=qid)
    assert search.cv_results_["split0_test_score"][0] == pytest.approx(loose, abs=1e-12)
    assert search.best_estimator_.eps == 2e-3
    refit = SVMMap(C=0.1, loss="map", eps=2e-3, n_jobs=1).fit(X, y, qid=qid)
    np.testing.assert_array_equal(search.coef_, refit.coef_)
    alone = SVMMapCV([0.1], loss="map", **common).fit(X, y, qid=qid)
    assert alone.cv_results_["split0_test_score"][0] == pytest.approx(given, abs=1e-12)


@pytest.mark.parametrize("kind", ["float64", "float32", "dataframe", "csr"])
def test_the_standard_refit_reads_X_through_the_scalers_statistics(data, kind, monkeypatch):
    """The refit of a "standard" winner trains on X read through the scaler's column centers
    and scales (`CoreMatrix.with_columns`), as the search does, instead of fitting the
    StandardScaler on X (a float64 copy of it) and training on its scaled copy; the Pipeline
    it returns holds a StandardScaler fitted in chunks, with the attributes of one fitted on X.

    Expected values come from scikit-learn itself: StandardScaler().fit(X) and
    Pipeline(StandardScaler(), SVMMap).fit. The two computations differ only by rounding: the
    mean and variance are summed in float64 in chunks (Chan et al.'s pairwise update) instead
    of at once, relative differences of a few ulps (1e-12 leaves a thousand times that), and
    the view multiplies by 1 / scale_ in float64 where transform divides by scale_ (in
    float32 for float32 X, a relative change of up to 6e-8 in every value). The solver is
    deterministic and, away from ties, moves its iterates continuously with the data, so the
    weights agree to about the standardized values' relative rounding times the problem's
    conditioning (the tolerance below)."""
    import pandas as pd
    from scipy import sparse
    from svmmap._search import splits

    X, y, qid = data
    # A near-constant column and a constant one: the scaler's own rule keeps their scale
    # (scale_ 1 for the constant one), which the chunked fit must follow.
    X = np.column_stack([X, np.full(len(y), 3.0), 5.0 + 1e-9 * (np.arange(len(y)) % 2)])
    names = [f"f{j}" for j in range(X.shape[1])]
    given = {
        "float64": X,
        "float32": X.astype(np.float32),
        "dataframe": pd.DataFrame(X, columns=names),
        "csr": sparse.csr_matrix(X),
    }[kind]
    # Chunks of 7 rows, so that the 600 rows take many partial fits, one of them short.
    monkeypatch.setattr(splits, "MOMENT_CHUNK", 7)
    fitted_on_X = []
    original_fit = StandardScaler.fit

    def counting_fit(self, *args, **kwargs):
        fitted_on_X.append(args[0].shape)
        return original_fit(self, *args, **kwargs)

    monkeypatch.setattr(StandardScaler, "fit", counting_fit)
    search = SVMMapCV([0.1, 1.0], preprocessing="standard", cv=3, n_jobs=1, scoring="map").fit(given, y, qid=qid)
    monkeypatch.undo()
    # The refit never fitted a scaler on X whole (the search fits none).
    assert fitted_on_X == []
    scaler = search.best_estimator_[0]
    expected = StandardScaler(with_mean=kind != "csr").fit(given)
    np.testing.assert_allclose(scaler.mean_, expected.mean_, rtol=1e-12, atol=0)
    # Each deviation from the mean carries a rounding error of about eps |mean|, so the
    # variance one of about 2 eps |mean| std (all of it for the near-constant column, whose
    # deviations are 1e-9 of its mean) and the standard deviation one of eps |mean|.
    eps, mean, std = np.finfo(np.float64).eps, np.abs(expected.mean_), np.sqrt(expected.var_)
    var_error = np.abs(scaler.var_ - expected.var_) - 1e-12 * expected.var_
    assert (var_error <= 4 * eps * mean * std).all(), var_error
    scale_error = np.abs(scaler.scale_ - expected.scale_) - 1e-12 * expected.scale_
    assert (scale_error <= 2 * eps * mean).all(), scale_error
    assert scaler.scale_[-2] == 1.0
    assert scaler.n_samples_seen_ == expected.n_samples_seen_ == len(y)
    assert type(scaler.n_samples_seen_) is type(expected.n_samples_seen_)
    assert scaler.n_features_in_ == X.shape[1]
    if kind == "dataframe":
        assert list(scaler.feature_names_in_) == names
    else:
        assert not hasattr(scaler, "feature_names_in_")
    by_hand = Pipeline([("s", StandardScaler(with_mean=kind != "csr")), ("m", SVMMap(C=search.best_C_, n_jobs=1))])
    by_hand.fit(given, y, m__qid=qid)
    coef, hand = search.best_estimator_[-1].coef_, by_hand[-1].coef_
    # The standardized values' relative rounding: the dtype's unit roundoff, or for a column
    # whose spread is tiny against its mean, eps |mean| / std (2e-6 for the near-constant
    # column in float64; in float32 it rounds to a constant). Ten times it, of the largest
    # weight, leaves room for the solver's conditioning.
    spread = std > 0
    rel = max(np.finfo(np.float32 if kind == "float32" else np.float64).eps, (eps * mean[spread] / std[spread]).max())
    tolerance = 10 * rel * np.abs(hand).max()
    np.testing.assert_allclose(coef, hand, rtol=0, atol=tolerance)
    assert search.best_estimator_[-1].objective_ == pytest.approx(by_hand[-1].objective_, rel=1e-3)
    # The weights are on the standardized columns: predict runs the scaler's transform first,
    # and the importances are the weights times the standardized columns' spread (1, and 0 for
    # the constant column). Sparse columns are scaled, not centered: the near-constant one
    # becomes values near 1e10 whose spread of 1 E[x^2] - E[x]^2 cannot resolve, on either
    # side, so its importances are not compared.
    np.testing.assert_allclose(search.predict(given), by_hand.predict(given), rtol=100 * rel, atol=1e3 * tolerance)
    if kind != "csr":
        np.testing.assert_allclose(
            search.best_estimator_[-1].feature_importances_, by_hand[-1].feature_importances_, rtol=0, atol=1e-3
        )


def test_ga2m_splits_bin_X_where_it_is():
    """ "ga2m" trains each split on the codes (with the pairs' columns) of every row of X under
    the thresholds and pairs of the split's training rows, with the query code -1 outside
    them, as "binned" does: no copy of the split's rows, and one code matrix (and one split's
    query codes) kept at a time. The pairs are chosen from the base codes of the rows the
    Binner's selection reads, binned where they are. Expected: the split's score of
    Pipeline(Binner(interactions=10), SVMMap) fitted by hand on the copied training rows (the
    same codes row by row, so the same model), and the scores of the same splits given with
    their training rows reversed, which the search copies and fits as that Pipeline does."""
    import svmmap.model_selection as model_selection
    from svmmap._search import engine

    X, y, qid = make_ranking(n_queries=120, docs_per_query=30, n_features=6, interactions=[(0, 1, 2.0)], random_state=0)
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=qid))
    kept = []

    def run(candidates, split_data, policy):
        kept.append(split_data)
        return engine.run(candidates, split_data, policy)

    scores = []
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        patch.setattr(model_selection, "run", run)
        for cv in (splits, [(train[::-1], test) for train, test in splits]):
            search = SVMMapCV(
                [1.0], preprocessing=["binned", "ga2m"], cv=cv, n_jobs=1, scoring="map", refit=False, prune_margin=None
            )
            r = search.fit(X, y, qid=qid).cv_results_
            assert list(r["status"]) == ["fitted", "fitted"]
            scores.append(np.array([r[f"split{k}_test_score"][1] for k in range(3)]))
    in_place, copied = kept
    assert in_place._matrices == {}
    assert in_place._binned is not None and in_place._binned[:2] == (2, "ga2m")
    assert [key for key in in_place._training if key[0]] == [(True, 2)]
    assert set(copied._matrices) == {(p, k) for p in ("binned", "ga2m") for k in range(3)}
    for k, (train, test) in enumerate(splits):
        assert in_place.ga2m_pairs(k) == copied.ga2m_pairs(k) and (0, 1) in in_place.ga2m_pairs(k)
        model = fit_independent(independent("map", "ga2m", 1.0, eps=SEARCH_EPS), X[train], y[train], qid[train])
        expected = per_query("map", y[test], model.predict(X[test]), qid[test]).mean()
        assert scores[0][k] == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(scores[0], scores[1], rtol=0, atol=1e-12)


def test_verbose_prints_a_line_when_a_path_stops_early_along_c(data, capsys):
    # Found by an unbriefed trial: the early stop along C left out a candidate's later C values
    # without a line, though verbose=1 promises one per candidate left out.
    X, y, qid = data
    Cs = [10.0**e for e in range(-3, 5)]
    # Patience 1: the path's mean falls at the second C, so it stops there with 6 C values left.
    script = [m for m in [0.5, 0.4] for _ in range(2)]
    search = Scripted(Cs, script=script, loss="auto", losses=["map"], cv=2, patience=1, refit=False, verbose=1)
    search.calls = 0
    search.fit(X, y, qid=qid)
    lines = [line for line in capsys.readouterr().err.splitlines() if "stops" in line]
    assert len(lines) == 1 and "no better for 1 C values" in lines[0], lines


def test_verbose_prints_a_line_when_the_time_budget_is_spent(data, capsys):
    X, y, qid = data
    search = SVMMapCV(CS, loss="auto", losses=["map", "pairwise"], cv=2, time_budget=1e-9, n_jobs=1, verbose=1)
    with pytest.warns(UserWarning):
        search.fit(X, y, qid=qid)
    lines = [line for line in capsys.readouterr().err.splitlines() if "time budget is spent" in line]
    assert len(lines) == 1, lines
