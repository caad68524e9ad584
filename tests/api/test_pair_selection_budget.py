"""SVMMapCV's time budget bounds "ga2m"'s pair selection (issue 43, item 4): the selection (the
core's histogram scan and the Python steps around it) stops at a deadline, and the search
counts the "ga2m" row of that split as cut by the budget, as it counts a fit the budget stops."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from svmmap import SVMMapCV, _core
from svmmap._fit.pairs import SelectionCut, select_pairs
from svmmap.datasets import make_ranking


def scan_inputs(n_rows: int, n_features: int, seed: int = 0):
    """Random coarse codes (feature-major, 4 codes a feature), residuals and every pair."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 4, size=(n_features, n_rows)).astype(np.uint8)
    sizes = np.full(n_features, 4, dtype=np.int64)
    pairs = np.array([(i, j) for i in range(n_features) for j in range(i + 1, n_features)], dtype=np.int64)
    return coarse, sizes, pairs, rng.normal(size=n_rows)


def test_the_scan_by_hand_and_with_a_deadline_it_does_not_reach():
    # Four documents, features of 2 coarse codes: f0 = (0, 1, 0, 1), f1 = (1, 1, 0, 0),
    # residuals (1, 2, 3, 4). Pair (0, 1), cell f0 * 2 + f1: doc 0 -> 1, doc 1 -> 3,
    # doc 2 -> 0, doc 3 -> 2, so the sums are (3, 1, 4, 2) and every count is 1.
    coarse = np.array([[0, 1, 0, 1], [1, 1, 0, 0]], dtype=np.uint8)
    args = (coarse, np.array([2, 2]), np.array([[0, 1]]), np.array([1.0, 2.0, 3.0, 4.0]), 1)
    for max_seconds in (None, 3600.0, float("inf")):
        sums, counts = _core.pair_histograms(*args, max_seconds)
        assert sums.tolist() == [3.0, 1.0, 4.0, 2.0] and counts.tolist() == [1.0] * 4
    with pytest.raises(ValueError, match="max_seconds"):
        _core.pair_histograms(*args, float("nan"))


def test_a_scan_past_its_deadline_returns_nothing_and_promptly():
    # 4,950 pairs over 50,000 documents: one pass over the documents per pair. With no time
    # left the scan stops before its first pair on each thread, so it returns no histograms
    # (never those of a part of the pairs) in a small part of the full scan's time; the bound
    # is generous (a twentieth, where the cut costs about a thousandth) for a loaded machine.
    coarse, sizes, pairs, residual = scan_inputs(50_000, 100)
    start = time.perf_counter()
    full = _core.pair_histograms(coarse, sizes, pairs, residual, 2)
    full_seconds = time.perf_counter() - start
    assert full is not None and full[1].sum() == 50_000 * len(pairs)
    start = time.perf_counter()
    assert _core.pair_histograms(coarse, sizes, pairs, residual, 2, 0.0) is None
    assert time.perf_counter() - start < full_seconds / 20
    # A negative time left (a budget already overspent) is a deadline passed as well.
    assert _core.pair_histograms(coarse, sizes, pairs, residual, 2, -5.0) is None


def selection_data():
    d = make_ranking(60, 40, 8, interactions=[(0, 1, 2.0)], random_state=0)
    codes = np.random.default_rng(1).integers(0, 5, size=d.X.shape).astype(np.uint8)
    # Bin codes 0..4 of 4 thresholds a feature, on a scan grid of all 4.
    return codes, [4] * 8, [np.arange(4)] * 8, d.y, d.qid


def test_a_selection_called_past_its_deadline_stops_at_its_first_check_and_says_so():
    codes, counts, coarse, y, qid = selection_data()
    start = time.perf_counter()
    with pytest.raises(SelectionCut) as cut:
        select_pairs(codes, counts, coarse, False, y, qid, 3, 1, deadline=time.perf_counter())
    # Its first check follows the bin codes of the rows it reads: it returned before the
    # backfitting and the pair scans of its two rounds (the message says how far it came).
    message = str(cut.value)
    assert message == (
        f"pair selection of 28 candidate pairs of 8 features on {len(y)} rows stopped at its deadline "
        "(the time budget) after the bin codes of its rows; no pair was chosen"
    )
    assert isinstance(cut.value, TimeoutError)
    assert time.perf_counter() - start < 5.0


def test_a_deadline_not_reached_changes_no_pair_and_no_score():
    codes, counts, coarse, y, qid = selection_data()
    pairs, scores = select_pairs(codes, counts, coarse, False, y, qid, 3, 1)
    later = select_pairs(codes, counts, coarse, False, y, qid, 3, 1, deadline=time.perf_counter() + 3600)
    assert later[0] == pairs and np.array_equal(later[1], scores)


@pytest.fixture(scope="module")
def wide():
    # 300 features: 44,850 candidate pairs, each scanned once a round over half of the
    # selection's rows, so that one split's pair selection takes seconds (5.5 s at load 3 on
    # the 2-core test machine), where the first candidate's fit at C = 0.01 takes hundredths.
    d = make_ranking(400, 120, 300, random_state=0)
    return d.X, d.y, d.qid


def ga2m_search(budget: float, verbose: int = 0) -> SVMMapCV:
    # The first candidate is map on the features as given (always fitted on every split, so
    # that there is a result), the second its GA2M.
    return SVMMapCV(
        [0.01],
        cv=2,
        loss="map",
        preprocessing=["none", "ga2m"],
        time_budget=budget,
        n_jobs=1,
        refit=False,
        verbose=verbose,
    )


def test_the_budget_cuts_a_pair_selection_that_outlasts_it(wide):
    # The budget of 0.5 s runs out during the first split's pair selection, which unbounded
    # takes about ten times as long. The search ends within a generous margin of the budget
    # (3 s for a loaded machine; the selection stops within one step of its Python part or
    # one pair of its scan), the "ga2m" row is cut on that split (stop reason "budget", no fit
    # and no score, status "time budget"), and the model chosen is the first candidate's.
    X, y, qid = wide
    budget = 0.5
    search = ga2m_search(budget)
    start = time.perf_counter()
    with pytest.warns(UserWarning, match="time budget"):
        search.fit(X, y, qid=qid)
    elapsed = time.perf_counter() - start
    assert search.search_seconds_ < budget + 3.0
    assert elapsed < budget + 6.0
    r = search.cv_results_
    assert list(r["param_preprocessing"]) == ["none", "ga2m"]
    assert r["split0_stop_reason"][1] == "budget"
    assert np.isnan(r["split0_test_score"][1]) and np.isnan(r["split0_fit_time"][1])
    assert r["split1_stop_reason"][1] == ""
    assert list(r["status"]) == ["fitted", "time budget"]
    assert r["note"][1].startswith("the time budget ran out on split 0: pair selection of 44850 candidate pairs")
    assert search.best_params_["preprocessing"] == "none"


def test_a_selection_whose_deadline_passed_is_cut_though_the_budget_seems_left(data_small, monkeypatch, capsys):
    # Scripted without timing: the search's own clock says time is left (`remaining`), so
    # every fit starts, but the budget of a microsecond after the search's start has passed
    # when "ga2m"'s pair selection begins: the selection stops at its first check, and its
    # row is cut on split 0 with the stop reason "budget". With the budget unbounded the same
    # search fits that row (so the cut is the deadline's doing).
    from svmmap._search import engine

    X, y, qid = data_small
    monkeypatch.setattr(engine._Search, "remaining", lambda self: 100.0)
    with pytest.warns(UserWarning, match="time budget"):
        search = ga2m_search(1e-6, verbose=1).fit(X, y, qid=qid)
    assert "map/ga2m C=0.01 not fitted: the time budget ran out while its pairs were chosen on split 1" in (
        capsys.readouterr().err
    )
    r = search.cv_results_
    assert list(r["split0_stop_reason"]) == ["converged", "budget"]
    assert list(r["split1_stop_reason"]) == ["converged", ""]
    assert list(r["status"]) == ["fitted", "time budget"]
    assert "after the bin codes of its rows; no pair was chosen" in r["note"][1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unbounded = ga2m_search(None).fit(X, y, qid=qid)
    assert unbounded.cv_results_["split0_stop_reason"][1] == "converged"


def test_the_first_candidate_chooses_its_pairs_whatever_the_budget(data_small):
    # "ga2m" alone: its first C is the row that always runs, so its pair selection is not
    # bounded (there would be no model otherwise); its fits are capped as any first row's.
    X, y, qid = data_small
    # The refit has the budget as its max_time too (search5), and says so when it stops there.
    refit = "SVMMapCV's refit \\(max_time = time_budget\\)"
    with pytest.warns(UserWarning, match="time budget"), pytest.warns(ConvergenceWarning, match=refit):
        search = SVMMapCV([0.01, 1.0], cv=2, loss="map", preprocessing="ga2m", time_budget=1e-6, n_jobs=1).fit(
            X, y, qid=qid
        )
    r = search.cv_results_
    assert r["status"][0] == "fitted" and not np.isnan(r["split0_test_score"][0])
    assert r["note"][0] == ""


@pytest.fixture(scope="module")
def data_small():
    # A planted interaction, so that "ga2m" keeps a pair (it would otherwise train on the
    # binned features of its split).
    d = make_ranking(120, 30, 6, interactions=[(0, 1, 2.0)], random_state=0)
    return d.X.astype(np.float64), d.y, d.qid
