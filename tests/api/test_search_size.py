"""The search's large-data rule: a split whose training part has more than
``max_train_queries`` queries trains on that many of them, evenly spread; smaller data is
searched exactly as without the rule, and the refit trains on all of it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler
from svmmap import Binner, SVMMap, SVMMapCV
from svmmap.datasets import make_ranking


@pytest.fixture(scope="module")
def data():
    d = make_ranking(24, 20, 6, random_state=3)
    return d.X.astype(np.float64), d.y, d.qid


def search(X, y, qid, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs = {"cv": 3, **kwargs}
        return SVMMapCV(
            [0.1, 1.0, 10.0], loss="auto", losses=["map", "pairwise"], preprocessing="auto", n_jobs=1, **kwargs
        ).fit(X, y, qid=qid)


def hand_splits(qid):
    """QueryKFold(3)'s splits of the 24 queries with each training part cut to 10 queries, by
    hand: fold f validates the sorted queries 8f .. 8f + 7 and trains on the other 16, numbered
    0 .. 15 in order; 10 evenly spread of them are those at floor(i * 16 / 10), i = 0 .. 9:
    0, 1 (1.6), 3 (3.2), 4 (4.8), 6 (6.4), 8, 9 (9.6), 11 (11.2), 12 (12.8), 14 (14.4)."""
    queries = np.unique(qid)
    assert queries.size == 24
    positions = [0, 1, 3, 4, 6, 8, 9, 11, 12, 14]
    splits = []
    for fold in range(3):
        held_out = queries[8 * fold : 8 * fold + 8]
        training = np.setdiff1d(queries, held_out)
        kept = training[positions]
        splits.append((np.flatnonzero(np.isin(qid, kept)), np.flatnonzero(np.isin(qid, held_out))))
    return splits


def test_the_rule_engages_past_the_threshold_and_trains_on_evenly_spread_queries(data):
    X, y, qid = data
    limited = search(X, y, qid, max_train_queries=10)
    # The same search on the splits cut by hand, the rule off: the same fits, bit for bit.
    by_hand = search(X, y, qid, cv=hand_splits(qid), max_train_queries=None)
    results, expected = limited.cv_results_, by_hand.cv_results_
    for k in range(3):
        np.testing.assert_array_equal(results[f"split{k}_test_score"], expected[f"split{k}_test_score"])
        # cv_results_ says what each row was fitted on: 10 queries where the row was fitted.
        fitted = ~np.isnan(results[f"split{k}_fit_time"])
        assert fitted.any()
        assert set(results[f"split{k}_train_queries"][fitted]) == {10}
        assert set(results[f"split{k}_train_queries"][~fitted]) <= {0}
    assert limited.best_params_ == by_hand.best_params_
    # The refit trains on all 24 queries: the chosen candidate fitted on all of X.
    params = limited.best_params_
    preprocess = {"none": lambda A: A, "standard": lambda A: StandardScaler().fit(A).transform(A)}
    if params["preprocessing"] in ("binned", "ga2m"):
        preprocess[params["preprocessing"]] = lambda A: Binner(n_jobs=1).fit(A).transform(A)
        assert params["preprocessing"] == "binned", "ga2m keeps no pair on this data"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SVMMap(C=params["C"], loss=params["loss"], n_jobs=1)
        coef = model.fit(preprocess[params["preprocessing"]](X), y, qid=qid).coef_
    np.testing.assert_array_equal(limited.coef_, coef)


def test_the_rule_leaves_data_below_the_threshold_as_it_is(data):
    X, y, qid = data
    # 16 training queries per split: at the default (500) and at 16 the rule keeps every
    # split as it is, so the search is the one without the rule, split score for split score.
    default, at_16, without = (search(X, y, qid, max_train_queries=m) for m in (500, 16, None))
    for other in (at_16, without):
        for k in range(3):
            np.testing.assert_array_equal(
                default.cv_results_[f"split{k}_test_score"], other.cv_results_[f"split{k}_test_score"]
            )
    fitted = ~np.isnan(default.cv_results_["split0_fit_time"])
    assert set(default.cv_results_["split0_train_queries"][fitted]) == {16}


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_max_train_queries_is_checked(data, bad):
    X, y, qid = data
    with pytest.raises(ValueError, match="max_train_queries"):
        SVMMapCV([1.0], cv=2, loss="auto", losses=["map"], max_train_queries=bad).fit(X, y, qid=qid)


@pytest.mark.parametrize("preprocessing", ["binned", "ga2m"])
def test_a_split_that_leaves_rows_out_scores_as_the_search_on_a_copy_of_its_rows(preprocessing):
    # Splits whose training and validation rows leave queries of X out (as max_train_queries
    # does on large data) bin only the rows they read. The reference is the search on a copy
    # of those rows, where every split covers all of X: its split scores must be the same,
    # bit for bit, and "ga2m" must keep a pair somewhere for the check to reach its codes.
    d = make_ranking(36, 20, 6, random_state=5, interactions=[(0, 1, 4.0)])
    X, y, qid = d.X.astype(np.float64), d.y, d.qid
    queries = np.unique(qid)
    splits, kept = [], np.zeros(len(y), dtype=bool)
    for fold in range(3):
        # Training: 8 queries; validation: 4 others; the other 24 are read by no split here
        # but by another: rows 0..11 of every fold of 12 queries.
        block = queries[12 * fold : 12 * fold + 12]
        train, test = np.isin(qid, block[:8]), np.isin(qid, block[8:])
        splits.append((train, test))
        kept |= train | test
    kept_rows = np.flatnonzero(kept)
    on_x = [(np.flatnonzero(a), np.flatnonzero(b)) for a, b in splits]
    on_copy = [(np.flatnonzero(a[kept]), np.flatnonzero(b[kept])) for a, b in splits]
    # Split k reads its 12 queries' rows: the others are left out of its window.
    assert all(a.size + b.size < len(y) for a, b in on_x)
    if preprocessing == "ga2m":
        pairs = [Binner(n_jobs=1, interactions=10).fit(X[a], y[a], qid=qid[a]).interactions_ for a, _ in on_x]
        assert any(pairs)

    def fitted(X_, y_, qid_, cv):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return SVMMapCV(
                [0.1, 1.0], loss="auto", losses=["pairwise", "map"], preprocessing=preprocessing, n_jobs=1, cv=cv
            ).fit(X_, y_, qid=qid_)

    limited = fitted(X, y, qid, on_x).cv_results_
    copied = fitted(X[kept_rows], y[kept_rows], qid[kept_rows], on_copy).cv_results_
    for k in range(3):
        np.testing.assert_array_equal(limited[f"split{k}_test_score"], copied[f"split{k}_test_score"])
