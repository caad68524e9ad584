"""Training on a subset of the rows of a matrix without copying them: rows of query code -1
are in no query, and the core trains on the others exactly, bit for bit, as on a copy of
them taken in row order (``take_rows``). The search trains each split so (svmmap._search),
so its results must not move by a bit."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from svmmap import SVMMap, _core
from svmmap._validation import check_matrix, check_qid
from svmmap.binning import Binner
from svmmap.datasets import load_mq2008

GRID = [0.1, 1.0, 10.0]


@pytest.fixture(scope="module")
def fold1():
    X, y, qid = load_mq2008(1, "train")
    codes, ids = check_qid(qid, len(y))
    # A third of the queries out, drawn at random, as one split of a 3-fold search: the rows
    # kept are many blocks, not one.
    rng = np.random.default_rng(0)
    left_out = rng.permutation(len(ids))[: len(ids) // 3]
    keep = ~np.isin(codes, left_out)
    return X, y.astype(np.float64), codes, np.flatnonzero(keep)


def matrices(X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        binned = Binner(n_jobs=1).fit_transform(X)
    return {
        "dense": check_matrix(X)[0],
        "dense float32": check_matrix(X.astype(np.float32))[0],
        "csr": check_matrix(sp.csr_matrix(X))[0],
        "binned": check_matrix(binned)[0],
    }


def subset_codes(codes, rows):
    """(the subset's codes and query count, the full-length codes with -1 outside it): both
    number the subset's queries 0.. in the order of their codes, as check_qid does."""
    sub, ids = check_qid(codes[rows], rows.size)
    full = np.full(codes.shape, -1, dtype=np.int64)
    full[rows] = sub
    return sub, full, len(ids)


def path_in_pieces(cX, y, codes, n_queries, config, weights=None):
    state, out = None, []
    for C in GRID:
        path, state = _core.fit_path_from(cX, y, codes, n_queries, config, [C], warm_state=state, query_weights=weights)
        out += path
    return out


def assert_same_fits(a, b, what=""):
    assert len(a) == len(b) == len(GRID)
    for C, (w_a, s_a), (w_b, s_b) in zip(GRID, a, b):
        assert w_a.tobytes() == w_b.tobytes(), (what, C)  # bit for bit, -0.0 included
        assert (s_a.n_iter, s_a.n_evals, s_a.primal, s_a.dual) == (s_b.n_iter, s_b.n_evals, s_b.primal, s_b.dual)
        p_a, p_b = s_a.problem, s_b.problem
        assert (p_a.used, p_a.no_relevant, p_a.all_relevant) == (p_b.used, p_b.no_relevant, p_b.all_relevant)


@pytest.mark.parametrize("loss", ["map", "pairwise", "ndcg@10:graded"])
def test_a_subset_by_codes_trains_as_its_copy_bit_for_bit(fold1, loss):
    X, y, codes, rows = fold1
    sub, full, n_queries = subset_codes(codes, rows)
    config = SVMMap(loss=loss, n_jobs=2)._config()
    for name, cX in matrices(X).items():
        copied = path_in_pieces(cX.take_rows(rows), y[rows], sub, n_queries, config)
        viewed = path_in_pieces(cX, y, full, n_queries, config)
        assert_same_fits(copied, viewed, name)
        # The warm path fitted in one call as well.
        once = _core.fit_path(cX, y, full, n_queries, config, GRID, warm=True)
        assert_same_fits(copied, once, name)


def test_query_weights_count_the_subsets_queries_only(fold1):
    X, y, codes, rows = fold1
    sub, full, n_queries = subset_codes(codes, rows)
    weights = np.linspace(0.5, 2.0, n_queries)
    config = SVMMap(loss="map", n_jobs=1)._config()
    cX = check_matrix(X)[0]
    copied = path_in_pieces(cX.take_rows(rows), y[rows], sub, n_queries, config, weights)
    viewed = path_in_pieces(cX, y, full, n_queries, config, weights)
    assert_same_fits(copied, viewed)


def test_query_counts_and_kinds_see_the_subset_alone(fold1):
    _, y, codes, rows = fold1
    sub, full, n_queries = subset_codes(codes, rows)
    config = SVMMap(loss="pairwise", n_jobs=1)._config()
    for cfg in (None, config):
        a = _core.problem_summary(y[rows], sub, n_queries, 0.0, cfg)
        b = _core.problem_summary(y, full, n_queries, 0.0, cfg)
        assert (a.used, a.no_relevant, a.all_relevant) == (b.used, b.no_relevant, b.all_relevant)
    kinds = _core.query_kinds(y, full, n_queries, 0.0)
    np.testing.assert_array_equal(kinds, _core.query_kinds(y[rows], sub, n_queries, 0.0))


def test_codes_below_minus_one_are_refused(fold1):
    X, y, codes, _ = fold1
    bad = codes.copy()
    bad[0] = -2
    config = SVMMap(loss="map", n_jobs=1)._config()
    with pytest.raises(ValueError, match="outside"):
        _core.fit_path(check_matrix(X)[0], y, bad, int(codes.max()) + 1, config, [1.0])


@pytest.mark.parametrize("sparse", [False, True])
def test_column_scales_train_as_the_standard_scalers_copy_up_to_rounding(fold1, sparse):
    # SVMMapCV's "standard" without a copy: the matrix read through the centers and scales of
    # a subset's rows (rows of code -1 elsewhere) trains the model of StandardScaler's copy of
    # those rows, up to rounding (the products are associated differently), and predicts the
    # same scores up to rounding.
    from sklearn.preprocessing import StandardScaler
    from svmmap._search.splits import standard_columns

    X, y, codes, rows = fold1
    X = sp.csr_matrix(X) if sparse else X
    sub, full, n_queries = subset_codes(codes, rows)
    cX = check_matrix(X)[0]
    center, scale = standard_columns(cX, rows, sparse=sparse)
    scaler = StandardScaler(with_mean=not sparse).fit(X[rows])
    np.testing.assert_allclose(1.0 / scale, scaler.scale_, rtol=1e-12)
    if not sparse:
        np.testing.assert_allclose(center, scaler.mean_, rtol=1e-12, atol=1e-15)
    config = SVMMap(loss="map", n_jobs=2)._config()
    copied = _core.fit_path(check_matrix(scaler.transform(X[rows]))[0], y[rows], sub, n_queries, config, GRID)
    viewed = _core.fit_path(cX.with_columns(center, scale), y, full, n_queries, config, GRID)
    for (w_a, s_a), (w_b, s_b) in zip(copied, viewed):
        np.testing.assert_allclose(w_b, w_a, rtol=1e-7, atol=1e-9 * np.abs(w_a).max())
        assert s_a.primal == pytest.approx(s_b.primal, rel=1e-9)
    w = viewed[-1][0]
    predicted = _core.predict(cX.with_columns(center, scale), w, 1)
    expected = _core.predict(check_matrix(scaler.transform(X))[0], w, 1)
    np.testing.assert_allclose(predicted, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_thresholds_of_a_subset_by_hand():
    # One column 0, 1, ..., 9 and the even rows 0, 2, 4, 6, 8: their values 0, 2, 4, 6, 8 are
    # five distinct values, fewer than 50 + 1, so every gap gets its midpoint: 1, 3, 5, 7 (on
    # all ten rows it would be 0.5, 1.5, ..., 8.5).
    X = np.arange(10, dtype=np.float64).reshape(-1, 1)
    config = Binner()._check_params()
    values, offsets = _core.bin_fit(X, config, 1, rows=np.arange(0, 10, 2))
    np.testing.assert_array_equal(values, [1.0, 3.0, 5.0, 7.0])
    np.testing.assert_array_equal(offsets, [0, 4])
    np.testing.assert_array_equal(_core.bin_fit(X, config, 1)[0], np.arange(9) + 0.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_thresholds_of_a_subset_are_those_of_its_copy_bit_for_bit(fold1, dtype):
    # The search bins each split's training rows where they are (`_core.bin_fit` with rows):
    # the thresholds must be those of the Binner on the copy of the rows, to the bit.
    X, _, _, rows = fold1
    X = X.astype(dtype)
    config = Binner()._check_params()
    on_copy = _core.bin_fit(np.ascontiguousarray(X[rows]), config, 2)
    in_place = _core.bin_fit(X, config, 2, rows=rows.astype(np.int64))
    assert on_copy[0].tobytes() == in_place[0].tobytes()
    np.testing.assert_array_equal(on_copy[1], in_place[1])


def test_thresholds_of_rows_outside_the_matrix_are_refused():
    X = np.zeros((4, 2))
    config = Binner()._check_params()
    with pytest.raises(ValueError, match="row 4 is outside the 4 rows"):
        _core.bin_fit(X, config, 1, rows=np.array([0, 4]))
    with pytest.raises(ValueError, match="rows must be row indices >= 0, got -1"):
        _core.bin_fit(X, config, 1, rows=np.array([-1, 2]))


def test_a_binned_split_trains_on_codes_of_all_rows_as_on_its_copies(fold1):
    # SVMMapCV's "binned" split without a copy of X: the codes of every row under the
    # thresholds of the split's training rows, with code -1 outside them, train and score as
    # the Binner fitted on a copy of the training rows and applied to copies of both sets.
    from svmmap._search.splits import SplitData

    X, y, codes, rows = fold1
    test = np.setdiff1d(np.arange(len(y)), rows)
    data = SplitData(X, check_matrix(X)[0], y, codes, None, [(rows, test)], None, 2)
    assert data._in_place("binned", 0)
    x_view, y_view, c_view, n_view, w_view = data.fit_inputs("binned", 0)
    x_copy, x_test = data.matrices("binned", 0)  # the Binner on copies, as before
    sub, full, n_queries = subset_codes(codes, rows)
    np.testing.assert_array_equal(c_view, full)
    assert n_view == n_queries and w_view is None
    config = SVMMap(loss="map", n_jobs=2)._config()
    copied = _core.fit_path(x_copy, y[rows], sub, n_queries, config, GRID)
    viewed = _core.fit_path(x_view, y_view, c_view, n_view, config, GRID)
    assert_same_fits(copied, viewed, "binned")
    w = viewed[-1][0]
    matrix, at, *_ = data.score_inputs("binned", 0)
    np.testing.assert_array_equal(at, test)
    assert _core.predict(matrix, w, 1)[at].tobytes() == _core.predict(x_test, w, 1).tobytes()


def test_a_binned_split_reads_the_codes_of_its_window_alone(fold1):
    # A split whose training and validation rows leave rows of X out (max_train_queries on
    # large data): its codes are those of the window (its rows, in increasing order), its
    # training codes the full-length ones at the window's rows, and it trains and scores as
    # the Binner fitted on a copy of the training rows and applied to copies of both sets.
    from svmmap._search.splits import SplitData

    X, y, codes, rows = fold1
    others = np.setdiff1d(np.arange(len(y)), rows)
    # The validation rows: the left-out queries' rows with every other query dropped.
    test = others[np.isin(codes[others], np.unique(codes[others])[::2])]
    data = SplitData(X, check_matrix(X)[0], y, codes, None, [(rows, test)], None, 2)
    window = data._window(0)
    np.testing.assert_array_equal(window, np.union1d(rows, test))
    assert window.size < len(y)
    x_view, y_view, c_view, n_view, _ = data.fit_inputs("binned", 0)
    assert x_view.n_rows == window.size
    x_copy, x_test = data.matrices("binned", 0)
    sub, full, n_queries = subset_codes(codes, rows)
    np.testing.assert_array_equal(c_view, full[window])
    np.testing.assert_array_equal(y_view, y[window])
    config = SVMMap(loss="map", n_jobs=2)._config()
    copied = _core.fit_path(x_copy, y[rows], sub, n_queries, config, GRID)
    viewed = _core.fit_path(x_view, y_view, c_view, n_view, config, GRID)
    assert_same_fits(copied, viewed, "binned window")
    w = viewed[-1][0]
    matrix, at, *_ = data.score_inputs("binned", 0)
    # The validation rows' positions in the window, found by hand.
    np.testing.assert_array_equal(window[at], test)
    assert _core.predict(matrix, w, 1, at).tobytes() == _core.predict(x_test, w, 1).tobytes()


@pytest.mark.parametrize("kind", ["dense", "dense float32", "csr", "binned"])
def test_predicting_at_rows_gives_those_rows_of_the_full_prediction(fold1, kind):
    X = fold1[0]
    cX = matrices(X)[kind]
    w = np.random.default_rng(1).normal(size=cX.n_cols)
    rows = np.array([5, 0, len(X) - 1, 5, 17], dtype=np.int64)  # any order, repeats allowed
    full = _core.predict(cX, w, 2)
    assert _core.predict(cX, w, 2, rows).tobytes() == full[rows].tobytes()
    assert _core.predict(cX, w, 2, np.zeros(0, dtype=np.int64)).shape == (0,)
    for bad in (-1, len(X)):
        with pytest.raises(ValueError, match=f"rows lists row {bad}, outside the {len(X)} rows of X"):
            _core.predict(cX, w, 2, np.array([0, bad], dtype=np.int64))


def test_predicting_at_rows_refuses_a_nan_or_infinite_value_in_a_listed_row():
    # The values are not read again before scoring at rows: a NaN or an infinite value makes
    # its row's score non-finite whatever the weights (NaN times anything, infinity times 0),
    # which the check of the scores refuses, naming the row of X.
    for bad in (np.nan, np.inf):
        X = np.ones((6, 3))
        X[4, 2] = bad
        cX = check_matrix(np.ones((6, 3)))[0]
        cX = type(cX).dense(X)
        for w in (np.zeros(3), np.ones(3)):
            with pytest.raises(ValueError, match="the score of row 4 is"):
                _core.predict(cX, w, 1, np.array([1, 4], dtype=np.int64))
        # Rows without it are scored.
        assert _core.predict(cX, np.ones(3), 1, np.array([0, 5], dtype=np.int64)).tolist() == [3.0, 3.0]


def test_the_free_pages_go_back_each_time_a_splits_codes_are_replaced(fold1, monkeypatch):
    # glibc keeps the pages that the last codes and fits freed; the search hands them back
    # (malloc_trim) when one split's codes go, before the next are made, and only then: asking
    # again for the codes it holds makes nothing and trims nothing.
    from svmmap._search import splits

    calls = []
    monkeypatch.setattr(splits, "_return_free_pages", lambda: calls.append(1))
    X, y, codes, rows = fold1
    others = np.setdiff1d(np.arange(len(y)), rows)
    data = splits.SplitData(X, check_matrix(X)[0], y, codes, None, [(rows, others), (others, rows)], None, 2)
    for k, expected in [(0, 1), (0, 1), (1, 2), (1, 2), (0, 3)]:
        data.fit_inputs("binned", k)
        assert len(calls) == expected, (k, calls)


def test_returning_the_free_pages_is_safe_to_call_at_any_time():
    # It only hands back pages malloc holds free: what is allocated stays as it was.
    from svmmap._search.splits import _return_free_pages

    kept = np.arange(1_000_000, dtype=np.float64)
    for _ in range(3):
        np.ones(2_000_000).sum()
        _return_free_pages()
    np.testing.assert_array_equal(kept, np.arange(1_000_000, dtype=np.float64))


def test_the_held_codes_go_before_a_splits_pairs_are_chosen(fold1):
    # The pairs' choice of a split comes before its first GA2M fit, which replaces the codes
    # held then (its "binned" ones): they go first, so that the codes and the choice's own
    # arrays never take memory together (the 573k search's peak: 1.60 to 1.56 times X).
    from svmmap._search import splits

    X, y, codes, rows = fold1
    others = np.setdiff1d(np.arange(len(y)), rows)
    data = splits.SplitData(X, check_matrix(X)[0], y, codes, None, [(rows, others), (others, rows)], None, 2)
    data.fit_inputs("binned", 0)
    assert data._binned is not None and data._binned[:2] == (0, "binned")
    data._ga2m_spec(0)
    assert data._binned is None
    # The GA2M fit's codes are made after it (the "binned" ones where no pair was kept).
    data.fit_inputs("ga2m", 0)
    held = data._binned
    assert held is not None and held[0] == 0
    # A kept choice is not made again, and the codes made after it stay.
    data._ga2m_spec(0)
    assert data._binned is held
