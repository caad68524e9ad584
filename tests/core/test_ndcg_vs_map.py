"""benchmarks/ndcg_vs_map.py: the per-query feature-map scalings and one evaluation."""

import numpy as np
import pytest
from svmmap import SVMMap, structured_hinge

from tests._support.benchmarks import load


@pytest.fixture(scope="module")
def bench():
    return load("ndcg_vs_map")


def test_psi_scaled_by_hand(bench):
    # Query a: P = 2, N = 3; query b: P = 1, N = 1; query c has no relevant document (unscaled).
    # k = 2: "N" gives a 3/2 and b 1; "P" a 1 and b 1; "PN" a 6/4 and b 1.
    X = np.arange(14, dtype=float).reshape(7, 2)
    y = np.array([1, 2, 0, 0, 0, 1, 0], dtype=float)
    q = np.array([0, 0, 0, 0, 0, 1, 1])
    X2 = np.vstack([X, [[1.0, 1.0]]])
    y2 = np.append(y, 0.0)
    q2 = np.append(q, 2)
    for rule, lam_a in (("N", 1.5), ("P", 1.0), ("PN", 1.5)):
        out = bench.psi_scaled(X2, y2, q2, rule, k=2)
        np.testing.assert_array_equal(out[:5], X2[:5] * lam_a)
        np.testing.assert_array_equal(out[5:], X2[5:])


def test_scaled_rows_are_a_scaled_feature_map(bench):
    # Psi_po is linear in the documents: the hinge of w on lambda x is that of the feature map
    # lambda Psi_po, i.e. of the scores lambda (w.x) with the same loss.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (rng.random(30) < 0.5).astype(float)
    y[[0, 15]], y[[1, 16]] = 1.0, 0.0
    q = np.repeat([0, 1], 15)
    w = rng.normal(size=3)
    scaled = bench.psi_scaled(X, y, q, "N", k=2)
    lam = np.where(q == 0, (y[:15] == 0).sum() / 2, (y[15:] == 0).sum() / 2)
    a, _ = structured_hinge(scaled @ w, y, q, loss="ndcg@2")
    b, _ = structured_hinge(lam * (X @ w), y, q, loss="ndcg@2")
    assert a == pytest.approx(b, rel=1e-12)


def test_evaluate_reports_the_model_it_trains(bench):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 3, size=60).astype(float)
    q = np.repeat(np.arange(6), 10)
    train, test = (X[:30], y[:30], q[:30]), (X[30:], y[30:], q[30:])
    out = bench.evaluate("map", 1.0, train, test)
    model = SVMMap(C=1.0).fit(*train[:2], qid=train[2])
    w = model.coef_
    assert out["hinge"] == pytest.approx((model.objective_ - 0.5 * w @ w) / 1.0)
    assert out["n_iter"] == model.n_iter_
