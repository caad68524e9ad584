"""Determinism: the same input gives a bit-identical model across runs and thread counts; the
order of rows within a query changes the model by rounding only (when the cutting-plane
iterations make the same choices) and never by more than the duality gaps allow; model
files round-trip exactly."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from svmmap import SVMMap, load_model
from svmmap.datasets import load_mq2008


@pytest.fixture(scope="module")
def fold1():
    return load_mq2008(1, "train")


def shuffled_within_queries(qid, seed):
    rng = np.random.default_rng(seed)
    order = np.arange(len(qid))
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        order[rows] = rng.permutation(rows)
    return order


def test_same_input_same_model_for_any_thread_count(fold1):
    X, y, qid = fold1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [SVMMap(C=10.0, n_jobs=n).fit(X, y, qid=qid) for n in (1, 2, 1, 3)]
    for m in runs[1:]:
        assert np.array_equal(m.coef_, runs[0].coef_)  # bit for bit, not allclose
        assert m.n_iter_ == runs[0].n_iter_ and m.objective_ == runs[0].objective_


def test_row_order_within_queries_changes_the_model_by_rounding_only(fold1):
    # With C = 1 the cutting-plane iterations make the same discrete choices whatever the
    # order (the same rankings come out of every oracle call: the per-iteration losses are
    # identical), so the runs differ only in the association order of the sums X^T c. Each
    # such sum over the <= 9,630 rows of a fold has a relative rounding error of at most
    # n * 2^-53 ~ 1e-12 of the sum of absolute terms; the QP is solved from the same cuts up
    # to that error, so w agrees to about 1e-12 relative (measured: 1e-14).
    X, y, qid = fold1
    reference = SVMMap(C=1.0, eps=1e-6).fit(X, y, qid=qid)
    for seed in range(2):
        order = shuffled_within_queries(qid, seed)
        model = SVMMap(C=1.0, eps=1e-6).fit(X[order], y[order], qid=qid[order])
        assert [r["loss"] for r in model.history_] == [r["loss"] for r in reference.history_]
        scale = np.abs(reference.coef_).max()
        assert np.abs(model.coef_ - reference.coef_).max() <= 1e-12 * scale


def test_row_order_never_moves_the_model_beyond_the_gap_bound(fold1):
    # With a large C the rounding differences can flip near-tied oracle decisions, after which
    # the two runs take different (equally valid) paths: both end eps-optimal, and strong
    # convexity bounds their distance: 1/2 |w - w*|^2 <= P(w) - P* <= gap, so
    # |w_a - w_b| <= sqrt(2 gap_a) + sqrt(2 gap_b). (Measured at C = 100: 0.3% of |w|.)
    X, y, qid = fold1
    reference = SVMMap(C=100.0, eps=1e-4).fit(X, y, qid=qid)
    order = shuffled_within_queries(qid, 5)
    model = SVMMap(C=100.0, eps=1e-4).fit(X[order], y[order], qid=qid[order])
    bound = np.sqrt(2 * max(reference.gap_, 0.0)) + np.sqrt(2 * max(model.gap_, 0.0))
    assert np.linalg.norm(model.coef_ - reference.coef_) <= bound + 1e-12


def test_tied_documents_are_interchangeable():
    # Two documents of one relevance class with equal scores share their coefficient
    # (oracle::sorting::average_ties): swapping two identical rows cannot change anything,
    # bit for bit.
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(60, 4)).astype(float)
    X[1] = X[0]
    X[31] = X[30]
    y = rng.integers(0, 2, size=60).astype(float)
    y[1], y[31] = y[0], y[30]
    qid = np.repeat([0, 1], 30)
    order = np.arange(60)
    order[[0, 1, 30, 31]] = [1, 0, 31, 30]
    a = SVMMap(C=10.0, eps=1e-5).fit(X, y, qid=qid)
    b = SVMMap(C=10.0, eps=1e-5).fit(X[order], y[order], qid=qid[order])
    assert np.array_equal(a.coef_, b.coef_)


# Any float64 a model can hold: model files refuse weights whose magnitudes sum beyond the
# float64 range (scores would overflow to inf), so each of at most 20 stays below 1e306.
finite = st.floats(min_value=-1e306, max_value=1e306, allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=60, deadline=None)
@given(coef=arrays(np.float64, st.integers(1, 20), elements=finite))
def test_model_file_round_trip_is_exact(tmp_path_factory, coef):
    # Any finite float64, subnormals, -0.0 and the extremes included, comes back bit for bit.
    path = tmp_path_factory.mktemp("rt") / "m.json"
    model = SVMMap(C=0.5)
    model.coef_ = coef
    model.n_features_in_ = coef.size
    model.objective_ = model.dual_objective_ = model.gap_ = 0.0
    model.n_iter_ = model.n_cuts_ = model.n_queries_ = 1
    model.converged_ = True
    model.n_queries_skipped_ = {"no_relevant": 0, "all_relevant": 0}
    model.history_ = []
    model.save(path)
    loaded = load_model(path)
    assert loaded.coef_.view(np.int64).tolist() == coef.view(np.int64).tolist()
