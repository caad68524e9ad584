"""GA2M bin codes in two arrays (issue 43): the search's windows hold the base features' codes
in uint8 and the pairs' codes in uint16 beside them, where one array made every code uint16,
and the core reads the two arrays as it reads the one, bit for bit."""

import warnings

import numpy as np
import pytest
from svmmap import SVMMap, SVMMapCV, _core
from svmmap._data import CoreMatrix
from svmmap._fit.fitted import BinningSpec
from svmmap._search.splits import SplitData
from svmmap._validation import check_matrix, check_qid
from svmmap.datasets import make_ranking

GRID = [0.1, 1.0, 10.0]


@pytest.fixture(scope="module")
def planted():
    # Two planted interactions, which "ga2m"'s Binner keeps, on 20 features of 50 thresholds.
    X, y, qid = make_ranking(
        n_queries=120, docs_per_query=40, n_features=20, interactions=2, random_state=4, shuffle=True
    )
    return X, y.astype(np.float64), qid


def one_array(spec, X, n_threads, rows=None):
    """The binned matrix with the pairs' codes after the base features' in one array, as
    `BinningSpec.core_codes` made it before the codes were split."""
    values, offsets = spec.flat()
    grids = spec.grids() if spec.pairs else None
    codes = spec.codes(X, n_threads, rows)
    return CoreMatrix.binned(codes, values, offsets, spec.n_output, spec.missing == "indicator", grids)


def test_a_ga2m_window_holds_uint8_base_codes_beside_uint16_pair_codes(planted):
    X, y, qid = planted
    codes, _ = check_qid(qid, len(y))
    rng = np.random.default_rng(0)
    # A split whose training and validation rows leave a third of the queries out: the codes
    # are those of its window of rows.
    train_q, test_q = np.split(rng.permutation(codes.max() + 1)[:80], [60])
    rows, test = np.flatnonzero(np.isin(codes, train_q)), np.flatnonzero(np.isin(codes, test_q))
    data = SplitData(X, check_matrix(X)[0], y, codes, None, [(rows, test)], None, 2)
    x_view, y_view, c_view, n_view, _ = data.fit_inputs("ga2m", 0)
    window = data._window(0)
    assert window is not None and x_view.n_rows == window.size
    spec = data._ga2m_spec(0)
    assert spec.pairs and max(len(a) * len(b) for a, b in spec.pair_thresholds) > 255
    base, values, offsets, grids, pairs = x_view.arrays
    # One byte per base feature and row, two per pair and row: (20 + 2 * pairs) bytes a row,
    # where one uint16 array took 2 * (20 + pairs).
    n_pairs = len(spec.pairs)
    assert base.dtype == np.uint8 and pairs.dtype == np.uint16
    assert base.nbytes == window.size * 20 and pairs.nbytes == window.size * n_pairs * 2
    together = one_array(spec, X, 2, window)
    assert together.arrays[0].dtype == np.uint16
    assert together.arrays[0].nbytes == window.size * (20 + n_pairs) * 2
    np.testing.assert_array_equal(together.arrays[0], np.hstack([base, pairs]))
    # The fits, predictions and column moments of the two forms, bit for bit.
    config = SVMMap(loss="map", n_jobs=2)._config()
    split_fits = _core.fit_path(x_view, y_view, c_view, n_view, config, GRID)
    one_fits = _core.fit_path(together, y_view, c_view, n_view, config, GRID)
    for (w_a, s_a), (w_b, s_b) in zip(split_fits, one_fits):
        assert w_a.tobytes() == w_b.tobytes() and s_a.n_iter == s_b.n_iter
    w = split_fits[-1][0]
    assert _core.predict(x_view, w, 2).tobytes() == _core.predict(together, w, 2).tobytes()
    for a, b in zip(x_view.column_moments(1), together.column_moments(1)):
        assert a.tobytes() == b.tobytes()
    some = np.array([3, 0, 7], dtype=np.int64)
    taken = x_view.take_rows(some)
    np.testing.assert_array_equal(taken.arrays[0], base[some])
    np.testing.assert_array_equal(taken.arrays[4], pairs[some])


def test_pair_codes_of_the_wrong_shape_or_without_grids_are_refused():
    # Two base features of one threshold each (codes 0..=1) and one pair of grid (1, 1).
    binner_codes = np.zeros((50, 2), dtype=np.uint8)
    values, offsets = np.array([0.0, 1.0]), np.array([0, 1, 2], dtype=np.int64)
    grids = np.array([1, 1], dtype=np.int64)
    with pytest.raises(ValueError, match="pair_codes need the grids"):
        CoreMatrix.binned(binner_codes, values, offsets, 3, False, None, np.zeros((50, 1), np.uint8))
    with pytest.raises(ValueError, match=r"says \(50, 3\) but its array has shape \(49, 3\)"):
        CoreMatrix.binned(binner_codes, values, offsets, 3, False, grids, np.zeros((49, 1), np.uint8))
    wide = CoreMatrix.binned(binner_codes, values, offsets, 3, False, grids, np.zeros((50, 2), np.uint8))
    with pytest.raises(ValueError, match=r"pair codes must have shape \(50, 1\) .* got \(50, 2\)"):
        _core.predict(wide, np.zeros(3), 1)
    bad = np.zeros((50, 1), np.uint16)
    bad[7, 0] = 5  # a 1 x 1 grid has the codes 0..=4, 4 for a missing value
    with pytest.raises(ValueError, match="bin code 5 at row 7, pair 0 is out of range"):
        _core.predict(CoreMatrix.binned(binner_codes, values, offsets, 3, False, grids, bad), np.zeros(3), 1)


def test_a_ga2m_search_scores_as_on_one_array_of_codes(planted, monkeypatch):
    X, y, qid = planted

    def search():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = SVMMapCV(Cs=[0.1, 1.0, 10.0], preprocessing="ga2m", cv=3, n_jobs=2)
            return s.fit(X, y, qid=qid)

    made = []
    split_core_codes = BinningSpec.core_codes

    def spy(self, X, n_threads, rows=None):
        made.append(self.pairs)
        return split_core_codes(self, X, n_threads, rows)

    monkeypatch.setattr(BinningSpec, "core_codes", spy)
    split = search()
    assert any(made)  # the search's "ga2m" fits read split codes
    monkeypatch.setattr(BinningSpec, "core_codes", one_array)
    together = search()
    r_a, r_b = split.cv_results_, together.cv_results_
    assert set(r_a["status"]) == {"fitted"}
    for key in ("mean_test_score", "split0_test_score", "split1_test_score", "split2_test_score"):
        assert np.asarray(r_a[key]).tobytes() == np.asarray(r_b[key]).tobytes(), key
    assert split.coef_.tobytes() == together.coef_.tobytes()
