"""QueryKFold: svmmap's own query folds, the splits of SVMMapCV(cv=k), independent of the
installed scikit-learn."""

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold
from svmmap import SVMMap, SVMMapCV
from svmmap.datasets import make_ranking
from svmmap.metrics import make_ranking_scorer
from svmmap.model_selection import QueryKFold


def validation_rows(splitter, qid, X=None):
    return [test.tolist() for _, test in splitter.split(qid if X is None else X, groups=qid)]


def test_folds_by_hand():
    # Queries a..e sorted: 5 queries in 2 folds, the first one query larger: {a, b, c}, {d, e}.
    qid = np.array(["b", "a", "c", "a", "d", "b", "e"])
    # a: rows 1, 3; b: rows 0, 5; c: row 2; d: row 4; e: row 6.
    assert validation_rows(QueryKFold(2), qid) == [[0, 1, 2, 3, 5], [4, 6]]
    # Numeric ids are sorted as numbers (10 after 9), 7 queries in 3 folds of 3, 2, 2.
    qid = np.array([10, 1, 9, 2, 2, 30, 4, 5, 10])
    # Sorted: 1 (row 1), 2 (rows 3, 4), 4 (row 6) | 5 (row 7), 9 (row 2) | 10 (rows 0, 8), 30 (row 5).
    assert validation_rows(QueryKFold(3), qid) == [[1, 3, 4, 6], [2, 7], [0, 5, 8]]
    # Each training set is the complement of its validation rows.
    for train, test in QueryKFold(3).split(qid, groups=qid):
        assert sorted(train.tolist() + test.tolist()) == list(range(len(qid)))
        assert train.dtype == test.dtype == np.int64


def test_folds_do_not_depend_on_the_row_order():
    qid = np.repeat(np.arange(11), 3)
    perm = np.random.default_rng(0).permutation(len(qid))
    straight = [set(qid[t]) for _, t in QueryKFold(4).split(qid, groups=qid)]
    shuffled = [set(qid[perm][t]) for _, t in QueryKFold(4).split(qid, groups=qid[perm])]
    # 11 queries in 4 folds: 3, 3, 3, 2 consecutive query ids.
    assert straight == shuffled == [{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10}]


def test_shuffle_permutes_the_queries_with_a_legacy_random_state():
    qid = np.arange(10)
    # The documented rule: numpy.random.RandomState(seed).permutation(n_queries), cut into blocks.
    # The permutation of seed 0 over 10 items is NumPy's frozen legacy stream.
    order = [2, 8, 4, 9, 1, 6, 7, 3, 0, 5]
    assert np.random.RandomState(0).permutation(10).tolist() == order
    folds = validation_rows(QueryKFold(3, shuffle=True, random_state=0), qid)
    assert folds == [sorted(order[0:4]), sorted(order[4:7]), sorted(order[7:10])]
    assert folds == validation_rows(QueryKFold(3, shuffle=True, random_state=0), qid)  # deterministic
    assert folds == validation_rows(QueryKFold(3, shuffle=True, random_state=np.random.RandomState(0)), qid)


def test_invalid_settings_are_refused():
    qid = np.arange(4)
    with pytest.raises(ValueError, match="n_splits must be an integer >= 2"):
        QueryKFold(1).get_n_splits()
    with pytest.raises(ValueError, match="n_splits must be an integer >= 2"):
        list(QueryKFold(True).split(qid, groups=qid))
    with pytest.raises(ValueError, match="at least 5 queries, got 4"):
        list(QueryKFold(5).split(qid, groups=qid))
    with pytest.raises(ValueError, match="needs groups="):
        list(QueryKFold(2).split(qid))
    with pytest.raises(ValueError, match="random_state has no effect with shuffle=False"):
        list(QueryKFold(2, random_state=0).split(qid, groups=qid))
    with pytest.raises(ValueError, match="random_state must be"):
        list(QueryKFold(2, shuffle=True, random_state="zero").split(qid, groups=qid))
    assert QueryKFold(3).get_n_splits() == 3
    assert repr(QueryKFold(3)) == "QueryKFold(n_splits=3, random_state=None, shuffle=False)"


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=40, docs_per_query=12, n_features=6, random_state=3)[:3]


def test_integer_cv_uses_query_folds_and_not_group_k_fold(data, monkeypatch):
    X, y, qid = data
    # The folds of cv=4 by hand: the 40 query ids in sorted order, 10 consecutive per fold.
    ids = np.unique(qid)
    hand = [
        (
            np.flatnonzero(~np.isin(qid, ids[f * 10 : f * 10 + 10])),
            np.flatnonzero(np.isin(qid, ids[f * 10 : f * 10 + 10])),
        )
        for f in range(4)
    ]
    by_list = SVMMapCV(Cs=[0.1, 10.0], cv=hand, refit=False).fit(X, y, qid=qid)

    def refuse(*args, **kwargs):
        raise AssertionError("SVMMapCV(cv=k) must not use scikit-learn's GroupKFold")

    monkeypatch.setattr(GroupKFold, "split", refuse)
    monkeypatch.setattr(GroupKFold, "__init__", refuse)
    by_int = SVMMapCV(Cs=[0.1, 10.0], cv=4, refit=False).fit(X, y, qid=qid)
    np.testing.assert_array_equal(by_int.cv_results_["mean_test_score"], by_list.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(by_int.cv_results_["split0_test_score"], by_list.cv_results_["split0_test_score"])


def test_grid_search_with_query_folds(data):
    X, y, qid = data
    splits = list(QueryKFold(3).split(X, groups=qid))
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_ranking_scorer("map").set_score_request(qid=True)
        estimator = SVMMap().set_fit_request(qid=True)
        # QueryKFold asks for groups itself, as GroupKFold does.
        search = GridSearchCV(estimator, {"C": [0.1, 1.0]}, scoring=scorer, cv=QueryKFold(3))
        search.fit(X, y, groups=qid, qid=qid)
        by_list = GridSearchCV(estimator, {"C": [0.1, 1.0]}, scoring=scorer, cv=splits).fit(X, y, qid=qid)
    for key in ("split0_test_score", "split1_test_score", "split2_test_score"):
        np.testing.assert_array_equal(search.cv_results_[key], by_list.cv_results_[key])
