"""SVMMapCV (C chosen on a warm-started path) and per-query sample weights."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from svmmap import SkippedQueriesWarning, SVMMap, SVMMapCV, _core
from svmmap._search.selection import choose_C
from svmmap._validation import check_matrix, check_qid
from svmmap.datasets import load_mq2008
from svmmap.metrics import per_query
from svmmap.model_selection import QueryKFold

GRID = [0.01, 0.1, 1.0, 10.0, 100.0]


@pytest.fixture(scope="module")
def small():
    """The first 150 queries of MQ2008 Fold 1 (train), without the queries that cannot train
    (no relevant document), so that no fit warns."""
    X, y, qid = load_mq2008(1, "train")
    keep = np.zeros(len(y), dtype=bool)
    for q in np.unique(qid)[:150]:
        rows = qid == q
        keep[rows] = (y[rows] > 0).any() and (y[rows] <= 0).any()
    return X[keep], y[keep], qid[keep]


def gap_distance(gap_a, gap_b):
    """Two solutions of one 1-strongly convex problem, each within its gap of the optimum P*:
    1/2 |w - w*|^2 <= P(w) - P* <= gap, so |w_a - w_b| <= |w_a - w*| + |w* - w_b| <=
    sqrt(2 gap_a) + sqrt(2 gap_b) <= 2 sqrt(gap_a + gap_b)."""
    return np.sqrt(2 * max(gap_a, 0.0)) + np.sqrt(2 * max(gap_b, 0.0)) + 1e-12


def independent_choice(X, y, qid, splits, grid, tolerance=0.0, **kw):
    """The C an independent SVMMap fit per C and split chooses, by the tie rule of choose_C."""

    def mean_score(C):
        scores = []
        for train, test in splits:
            model = SVMMap(C=C, **kw).fit(X[train], y[train], qid=qid[train])
            scores.append(per_query("map", y[test], model.predict(X[test]), qid[test]).mean())
        return float(np.mean(scores)), None

    return choose_C(grid, mean_score, tolerance=tolerance)


def test_cold_path_chooses_exactly_as_independent_fits(small):
    # Without warm starts every model is the independent fit bit for bit, so the scores and
    # the chosen C are the same exactly, whatever the grid.
    X, y, qid = small
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=qid))
    loop = independent_choice(X, y, qid, splits, GRID)
    cold = SVMMapCV(Cs=GRID[::-1], cv=splits, warm_start=False, scoring="map").fit(X, y, qid=qid)
    np.testing.assert_array_equal(cold.cv_results_["param_C"], GRID)
    np.testing.assert_array_equal(cold.cv_results_["mean_test_score"], [loop.scores[C] for C in GRID])
    assert cold.best_C_ == loop.C and cold.best_score_ == loop.score
    # The refit is the cold fit at the chosen C on all the data.
    refit = SVMMap(C=cold.best_C_).fit(X, y, qid=qid)
    np.testing.assert_array_equal(cold.coef_, refit.coef_)
    np.testing.assert_array_equal(cold.predict(X), refit.predict(X))


def test_confirmed_path_chooses_the_C_of_independent_fits(small):
    # The C values within confirm_tolerance of the best on the warm path are refitted cold, so
    # their scores are the independent loop's exactly and the choice among them is the loop's.
    X, y, qid = small
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=qid))
    loop = independent_choice(X, y, qid, splits, GRID)
    for tolerance in (0.02, 0.05):
        cv = SVMMapCV(Cs=GRID, cv=splits, confirm_tolerance=tolerance, refit=False, scoring="map").fit(X, y, qid=qid)
        r = cv.cv_results_
        assert r["confirmed"].sum() >= 2
        for C, confirmed, score in zip(GRID, r["confirmed"], r["mean_test_score"]):
            if confirmed:
                assert score == loop.scores[C]
        assert cv.best_C_ == loop.C and cv.best_score_ == loop.score
        assert np.all(r["total_n_evals"] == r["mean_n_evals"] * len(splits) + r["cold_n_evals"])
    # Only one C close to the best: it is chosen without a refit. (MAP 0.627 at C = 0.01 against
    # 0.643-0.648 at C = 100 for eps-optimal models of different solver paths, so the
    # tolerance must stay below their difference.)
    lone = SVMMapCV(Cs=[0.01, 100.0], cv=splits, confirm_tolerance=0.01, refit=False, scoring="map").fit(X, y, qid=qid)
    assert not lone.cv_results_["confirmed"].any() and lone.best_C_ == 100.0


def test_warm_path_chooses_the_C_of_independent_fits(small):
    X, y, qid = small
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=qid))
    warm = SVMMapCV(Cs=GRID, cv=splits, confirm_tolerance=None, scoring="map").fit(X, y, qid=qid)
    cold = SVMMapCV(Cs=GRID, cv=splits, warm_start=False, refit=False, scoring="map").fit(X, y, qid=qid)
    # Warm-started models are within the solver's tolerance of the independent ones, so
    # their validation MAP differs by the noise of eps-optimal models (up to about 0.015 here
    # at eps = 1e-3), not more.
    diff = np.abs(warm.cv_results_["mean_test_score"] - cold.cv_results_["mean_test_score"])
    assert diff.max() < 0.03
    # Warm starts take fewer oracle passes over the path (counts, deterministic).
    assert warm.cv_results_["total_n_evals"].sum() < cold.cv_results_["total_n_evals"].sum()
    # Which C wins is decided identically when the best C wins by more than that noise: C =
    # 100 against C = 0.01 (MAP 0.648 against 0.627 on these splits).
    clear = [0.01, 100.0]
    loop = independent_choice(X, y, qid, splits, clear)
    assert (
        SVMMapCV(Cs=clear, cv=splits, refit=False, confirm_tolerance=None, scoring="map").fit(X, y, qid=qid).best_C_
        == loop.C
        == 100.0
    )
    # With a tolerance wider than every difference, both rules take the smallest C.
    loop = independent_choice(X, y, qid, splits, GRID, tolerance=1.0)
    assert (
        SVMMapCV(Cs=GRID, cv=splits, score_tolerance=1.0, refit=False, scoring="map").fit(X, y, qid=qid).best_C_
        == loop.C
    )
    assert loop.C == GRID[0]
    # The refit does not depend on the path: it is the cold fit at the chosen C.
    np.testing.assert_array_equal(warm.coef_, SVMMap(C=warm.best_C_).fit(X, y, qid=qid).coef_)


def test_integer_cv_is_query_k_fold_on_the_queries(small):
    X, y, qid = small
    codes, _ = check_qid(qid, len(y))
    by_int = SVMMapCV(Cs=[0.1, 10.0], cv=3, refit=False, scoring="map").fit(X, y, qid=qid)
    splits = list(QueryKFold(n_splits=3).split(X, y, groups=qid))
    # The same folds whether QueryKFold sees the query ids or their codes.
    for (_, test), (_, test_c) in zip(splits, QueryKFold(n_splits=3).split(X, y, groups=codes)):
        np.testing.assert_array_equal(test, test_c)
    by_list = SVMMapCV(Cs=[0.1, 10.0], cv=splits, refit=False, scoring="map").fit(X, y, qid=qid)
    np.testing.assert_array_equal(by_int.cv_results_["mean_test_score"], by_list.cv_results_["mean_test_score"])
    # No query is split between training and validation.
    for train, test in splits:
        assert not set(qid[train]) & set(qid[test])


def test_warm_path_models_are_certified_like_cold_fits(small):
    X, y, qid = small
    core, n, _ = check_matrix(X)
    codes, uniques = check_qid(qid, n)
    config = _core.TrainConfig()
    warm = _core.fit_path(core, y.astype(float), codes, len(uniques), config, GRID, warm=True)
    cold = _core.fit_path(core, y.astype(float), codes, len(uniques), config, GRID, warm=False)
    for C, (w_warm, s_warm), (w_cold, s_cold) in zip(GRID, warm, cold):
        assert s_warm.stop == s_cold.stop == "converged"
        # Both objectives lie in [P*, P* + C eps], so they differ by at most C eps.
        assert abs(s_warm.primal - s_cold.primal) <= C * config.kwargs()["eps"]
        assert np.linalg.norm(w_warm - w_cold) <= gap_distance(s_warm.gap, s_cold.gap)
        # A cold path is the independent fit, bit for bit.
        alone = SVMMap(C=C).fit(X, y, qid=qid)
        np.testing.assert_array_equal(w_cold, alone.coef_)
        assert s_cold.n_iter == alone.n_iter_


def test_validation_set(small):
    X, y, qid = small
    cut = np.flatnonzero(qid == np.unique(qid)[100])[0]
    train, valid = np.arange(cut), np.arange(cut, len(y))
    cv = SVMMapCV(Cs=GRID, cv="validation", warm_start=False, scoring="map").fit(
        X[train], y[train], qid=qid[train], eval_set=[(X[valid], y[valid])], eval_qid=[qid[valid]]
    )
    loop = independent_choice(X, y, qid, [(train, valid)], GRID)
    assert cv.best_C_ == loop.C and cv.n_splits_ == 1
    np.testing.assert_array_equal(cv.cv_results_["mean_test_score"], [loop.scores[C] for C in GRID])
    sizes = np.unique(qid[valid], return_counts=True)[1]
    by_group = SVMMapCV(Cs=GRID, cv="validation", warm_start=False, refit=False, scoring="map").fit(
        X[train], y[train], qid=qid[train], eval_set=[(X[valid], y[valid])], eval_group=[sizes]
    )
    np.testing.assert_array_equal(by_group.cv_results_["mean_test_score"], cv.cv_results_["mean_test_score"])


def test_sparse_input_and_row_selection(small):
    X, y, qid = small
    rows = np.array([5, 0, 17, 17, 3])
    csr = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    core, _, _ = check_matrix(csr)
    taken = core.take_rows(rows)
    assert taken.kind == "csr"
    taken = sp.csr_matrix(taken.arrays, shape=taken.shape)
    np.testing.assert_array_equal(taken.toarray(), csr.toarray()[rows])
    dense = SVMMapCV(Cs=[0.1, 10.0], cv=3, refit=False, scoring="map").fit(csr.toarray(), y, qid=qid)
    sparse = SVMMapCV(Cs=[0.1, 10.0], cv=3, refit=False, scoring="map").fit(csr, y, qid=qid)
    np.testing.assert_allclose(
        sparse.cv_results_["mean_test_score"], dense.cv_results_["mean_test_score"], rtol=0, atol=1e-6
    )


def test_binned_codes_and_pipeline(small):
    # Bin codes are split by rows like any matrix, and the scores are those of the same folds
    # trained on the CSR indicators (the same models, to rounding; see test_binned_codes.py).
    from svmmap import Binner

    X, y, qid = small
    binner = Binner(n_thresholds=10).fit(X)
    codes = binner.transform(X)
    rows = np.array([5, 0, 17, 17, 3])
    core, _, _ = check_matrix(codes)
    taken = core.take_rows(rows)
    assert taken.kind == "binned"
    np.testing.assert_array_equal(taken.arrays[0], codes.codes[rows])
    on_codes = SVMMapCV(Cs=[0.01, 1.0], cv=3, refit=False, scoring="map").fit(codes, y, qid=qid)
    on_csr = SVMMapCV(Cs=[0.01, 1.0], cv=3, refit=False, scoring="map").fit(codes.to_csr(), y, qid=qid)
    np.testing.assert_allclose(
        on_codes.cv_results_["mean_test_score"], on_csr.cv_results_["mean_test_score"], rtol=0, atol=1e-6
    )
    pipe = Pipeline([("bin", Binner(n_thresholds=10)), ("cv", SVMMapCV(Cs=[0.01, 1.0], cv=3, scoring="map"))])
    pipe.fit(X, y, cv__qid=qid)
    assert pipe[-1].best_C_ == on_codes.best_C_
    np.testing.assert_allclose(pipe.predict(X), pipe[-1].predict(codes), rtol=0, atol=0)


def test_params_clone_and_not_fitted():
    model = SVMMapCV(Cs=[1.0, 2.0], cv=4, eps=1e-4, scoring="map")
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    with pytest.raises(Exception, match="call fit"):
        copy.predict(np.zeros((2, 3)))


@pytest.mark.parametrize(
    ("params", "fit_kw", "message"),
    [
        ({"Cs": []}, {}, "Cs must be a non-empty list"),
        ({"Cs": [1.0, 0.0]}, {}, r"Cs must hold finite numbers > 0, got 0.0"),
        ({"Cs": [1.0, -2.0]}, {}, r"Cs must hold finite numbers > 0, got -2.0"),
        ({"Cs": [1.0, 1.0]}, {}, "Cs lists 1 twice"),
        ({"Cs": 1.0}, {}, "Cs must be a list of numbers > 0, got 1.0"),
        ({"cv": 1}, {}, "cv must be at least 2 folds, got 1"),
        ({"cv": "loo"}, {}, "cv must be an integer >= 2"),
        ({"cv": "validation"}, {}, "eval_set given to fit, which was not given"),
        ({"score_tolerance": -1}, {}, "score_tolerance must be a finite number >= 0"),
        ({"scoring": "nope"}, {}, "nope"),
        ({"C": 1}, {}, None),
    ],
)
def test_bad_parameters_give_one_line_errors(small, params, fit_kw, message):
    X, y, qid = small
    if message is None:
        with pytest.raises(TypeError):
            SVMMapCV(**params)
        return
    with pytest.raises(ValueError, match=message) as info:
        SVMMapCV(**params).fit(X, y, qid=qid, **fit_kw)
    assert "\n" not in str(info.value)


# --- sample_weight -------------------------------------------------------------------------


def query_weight_rows(qid, weight_of):
    return np.array([weight_of.get(q, 1.0) for q in qid], dtype=np.float64)


def test_weights_of_one_give_the_unweighted_model_bit_for_bit(small):
    X, y, qid = small
    plain = SVMMap(C=10.0).fit(X, y, qid=qid)
    ones = SVMMap(C=10.0).fit(X, y, qid=qid, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(plain.coef_, ones.coef_)
    assert plain.objective_ == ones.objective_ and plain.n_iter_ == ones.n_iter_


def test_integer_weights_equal_repeated_queries(small):
    # Weighted: 1/2 |w|^2 + C/n sum_q s_q xi_q with n usable queries. Repeating query q s_q
    # times gives N = n + sum_q (s_q - 1) usable queries and 1/2 |w|^2 + C'/N sum_q s_q xi_q
    # (each copy has the same slack at the optimum, the slack of a query being a function of
    # w), the same objective when C'/N = C/n, i.e. C' = C N / n.
    X, y, qid = small
    ids = np.unique(qid)
    weight_of = {ids[0]: 3.0, ids[7]: 2.0, ids[20]: 4.0}
    C, n = 10.0, len(ids)
    weighted = SVMMap(C=C, eps=1e-6).fit(X, y, qid=qid, sample_weight=query_weight_rows(qid, weight_of))
    parts_X, parts_y, parts_q = [X], [y], [qid.astype(object)]
    for q, k in weight_of.items():
        rows = qid == q
        for copy in range(1, int(k)):
            parts_X.append(X[rows])
            parts_y.append(y[rows])
            parts_q.append(np.array([f"{q}-copy{copy}"] * rows.sum(), dtype=object))
    N = n + sum(int(k) - 1 for k in weight_of.values())
    repeated = SVMMap(C=C * N / n, eps=1e-6).fit(
        np.vstack(parts_X), np.concatenate(parts_y), qid=np.concatenate(parts_q).astype(str)
    )
    assert repeated.n_queries_ == N and weighted.n_queries_ == n
    assert np.linalg.norm(weighted.coef_ - repeated.coef_) <= gap_distance(weighted.gap_, repeated.gap_)
    # The weights matter: the unweighted model is farther away than the tolerance.
    plain = SVMMap(C=C, eps=1e-6).fit(X, y, qid=qid)
    assert np.linalg.norm(plain.coef_ - repeated.coef_) > 10 * gap_distance(plain.gap_, repeated.gap_)


def test_zero_weight_removes_the_query_with_C_rescaled(small):
    # A weight of 0 removes the query's slack, but n still counts it: with m queries of
    # weight 0, C/n sum_{q kept} xi_q is the objective without them (n - m usable queries)
    # at C' = C (n - m) / n.
    X, y, qid = small
    ids = np.unique(qid)
    dropped = {q: 0.0 for q in ids[::3]}
    C, n = 10.0, len(ids)
    weighted = SVMMap(C=C, eps=1e-6).fit(X, y, qid=qid, sample_weight=query_weight_rows(qid, dropped))
    keep = ~np.isin(qid, list(dropped))
    removed = SVMMap(C=C * (n - len(dropped)) / n, eps=1e-6).fit(X[keep], y[keep], qid=qid[keep])
    assert np.linalg.norm(weighted.coef_ - removed.coef_) <= gap_distance(weighted.gap_, removed.gap_)
    same_C = SVMMap(C=C, eps=1e-6).fit(X[keep], y[keep], qid=qid[keep])
    assert np.linalg.norm(weighted.coef_ - same_C.coef_) > gap_distance(weighted.gap_, same_C.gap_)


def test_weighted_score_is_the_score_of_repeated_queries(small):
    X, y, qid = small
    model = SVMMap(C=1.0).fit(X, y, qid=qid)
    ids = np.unique(qid)
    # Weight 1 on one query and 0 elsewhere: that query's AP alone.
    only = {q: 0.0 for q in ids}
    only[ids[4]] = 1.0
    rows = qid == ids[4]
    assert model.score(X, y, qid, sample_weight=query_weight_rows(qid, only)) == pytest.approx(
        model.score(X[rows], y[rows], qid[rows]), abs=1e-12
    )
    # Weight 2 on a query: the mean with that query counted twice.
    twice = {ids[9]: 2.0}
    rows = qid == ids[9]
    repeated = model.score(
        np.vstack([X, X[rows]]),
        np.concatenate([y, y[rows]]),
        np.concatenate([qid.astype(str), np.array(["extra"] * rows.sum())]),
    )
    assert model.score(X, y, qid, sample_weight=query_weight_rows(qid, twice)) == pytest.approx(repeated, abs=1e-12)


def test_pipeline_passes_sample_weight(small):
    X, y, qid = small
    ids = np.unique(qid)
    sw = query_weight_rows(qid, {ids[0]: 5.0, ids[1]: 0.0})
    pipe = Pipeline([("scale", StandardScaler()), ("svmmap", SVMMap(C=10.0))])
    pipe.fit(X, y, svmmap__qid=qid, svmmap__sample_weight=sw)
    direct = SVMMap(C=10.0).fit(StandardScaler().fit_transform(X), y, qid=qid, sample_weight=sw)
    np.testing.assert_array_equal(pipe[-1].coef_, direct.coef_)
    unweighted = SVMMap(C=10.0).fit(StandardScaler().fit_transform(X), y, qid=qid)
    assert not np.array_equal(direct.coef_, unweighted.coef_)


def test_cv_with_sample_weight_refits_with_the_weights(small):
    X, y, qid = small
    ids = np.unique(qid)
    sw = query_weight_rows(qid, {ids[0]: 5.0, ids[1]: 0.0})
    cv = SVMMapCV(Cs=[0.1, 10.0], cv=3, scoring="map").fit(X, y, qid=qid, sample_weight=sw)
    direct = SVMMap(C=cv.best_C_).fit(X, y, qid=qid, sample_weight=sw)
    np.testing.assert_array_equal(cv.coef_, direct.coef_)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda n, qid: -np.ones(n), r"sample_weight\[0\] is -1.0: weights must be finite numbers >= 0"),
        (lambda n, qid: np.full(n, np.nan), r"sample_weight\[0\] is nan"),
        (lambda n, qid: np.ones(n - 1), "sample_weight has .* entries but X has .* rows"),
        (lambda n, qid: np.ones((n, 2)), r"sample_weight must be 1-D, got shape \(\d+, 2\)"),
        (lambda n, qid: np.zeros(n), "sample_weight is 0 for every query"),
        (
            lambda n, qid: np.arange(n, dtype=float),
            r"must be the same on every document of a query .* query 10032 has weights 0 and \d+",
        ),
    ],
)
def test_bad_sample_weight(small, make, message):
    X, y, qid = small
    with pytest.raises(ValueError, match=message) as info:
        SVMMap().fit(X, y, qid=qid, sample_weight=make(len(y), qid))
    assert "\n" not in str(info.value)


def test_skipped_queries_ignore_their_weight():
    # A query without a relevant document trains nothing whatever its weight.
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.2, 0.1]])
    y = np.array([1, 0, 0, 0])
    qid = np.array([1, 1, 2, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        a = SVMMap(C=1.0).fit(X, y, qid=qid)
        b = SVMMap(C=1.0).fit(X, y, qid=qid, sample_weight=[1, 1, 7, 7])
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_path_does_not_depend_on_the_thread_count(small):
    X, y, qid = small
    one = SVMMapCV(Cs=GRID, cv=3, n_jobs=1, refit=False, scoring="map").fit(X, y, qid=qid)
    two = SVMMapCV(Cs=GRID, cv=3, n_jobs=2, refit=False, scoring="map").fit(X, y, qid=qid)
    np.testing.assert_array_equal(one.cv_results_["mean_test_score"], two.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(one.cv_results_["total_n_evals"], two.cv_results_["total_n_evals"])


def test_a_failed_refit_leaves_no_previous_choice_and_eval_errors_name_the_eval_set():
    """After a fit that fails its input checks, SVMMapCV holds nothing of the fit before (it
    kept best_C_, cv_results_ and best_estimator_); errors about the eval set name it."""
    import numpy as np
    import pytest
    from svmmap import SVMMapCV

    rng = np.random.default_rng(0)
    y = np.tile([1, 0, 0, 1, 0, 0], 10)
    X = rng.normal(size=(60, 3)) + np.outer(y, [1.0, 0.0, 0.0])
    qid = np.repeat(np.arange(10), 6)
    cv = SVMMapCV(Cs=[0.1, 1.0], cv=3, scoring="map").fit(X, y, qid=qid)
    assert hasattr(cv, "best_estimator_")
    with pytest.raises(ValueError, match="y has 59 entries"):
        cv.fit(X, y[:-1], qid=qid)
    assert not any(hasattr(cv, a) for a in ("best_C_", "cv_results_", "best_estimator_", "coef_"))
    with pytest.raises(ValueError, match=r"eval_set\[0\] y has 6 entries but eval_set\[0\] X has 5 rows"):
        SVMMapCV(Cs=[1.0], cv="validation", scoring="map").fit(
            X, y, qid=qid, eval_set=[(X[:5], y[:6])], eval_qid=[qid[:5]]
        )
    with pytest.raises(ValueError, match=r"eval_qid\[0\] has 4 entries but eval_set\[0\] X has 5 rows"):
        SVMMapCV(Cs=[1.0], cv="validation", scoring="map").fit(
            X, y, qid=qid, eval_set=[(X[:5], y[:5])], eval_qid=[qid[:4]]
        )


def _hostile_splits():
    # 40 rows, 8 queries of 5 rows; the valid split trains on queries 0-5 and validates on 6-7.
    train, test = np.arange(30), np.arange(30, 40)
    mask = np.zeros(40, dtype=bool)
    mask[30:] = True
    return {
        # A mask read as indices is the rows 0 and 1 (False, True).
        "mask": ([(~mask, mask)], r"split 0 of cv: the training rows are a boolean mask"),
        # -1 is the last row (of query 7, in validation) under NumPy's wrap-around.
        "negative": ([(np.r_[train, -1], test)], r"split 0 of cv has row indices outside the 40 rows of X \(0 to 39\)"),
        "float": (
            [(train.astype(float), test)],
            r"split 0 of cv: the training rows must be integer row indices, got dtype float64",
        ),
        "twice": ([(np.r_[train, 3], test)], r"split 0 of cv lists row 3 twice among its training rows"),
        "twice-validation": ([(train, np.r_[test, 39])], r"split 0 of cv lists row 39 twice among its validation rows"),
        "2d": ([(train.reshape(5, 6), test)], r"split 0 of cv: the training rows must be a 1-D list of row indices"),
    }


@pytest.mark.parametrize("case", sorted(_hostile_splits()))
def test_malformed_splits_given_as_cv_are_refused_naming_cv(case):
    # Hostile trial 2, W6: every one of these was accepted and trained on other rows than meant.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.tile([1, 0, 0, 1, 0], 8)
    qid = np.repeat(np.arange(8), 5)
    cv, needle = _hostile_splits()[case]
    with pytest.raises(ValueError, match=needle):
        SVMMapCV(Cs=[1.0], cv=cv).fit(X, y, qid=qid)
    # The same split written as distinct row indices is accepted.
    SVMMapCV(Cs=[1.0], cv=[(np.arange(30), np.arange(30, 40))]).fit(X, y, qid=qid)
