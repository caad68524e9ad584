"""The graded pairwise loss ("pairwise", "pairwise:count"): SVM^rank's pairs of different labels.

The hinge is checked against enumeration of every subset of swapped pairs (brute.py), and
training against an independent solve of the pairwise SVM written out pair by pair, the problem
that SVM^rank's documentation says it solves (that of SVM^light's '-z p' mode),

    min_w 1/2 |w|^2 + sum_k c_k max(0, 1 - w.z_k),

with z_k = x_i - x_j for every pair of one query with l_i > l_j. For "pairwise:count" at C,
c_k = C/n and z_k = x_i - x_j; for "pairwise", c_k = C/(n M_q) and z_k = 2 (x_i - x_j), with n
the queries with two distinct labels and M_q the pairs of query q.
"""

import numpy as np
import pytest
from scipy.optimize import minimize
from svmmap import SVMMap, structured_hinge

from tests._support import brute


def graded_queries(rng, n_queries=5, tied=False, levels=3):
    """Queries of 2..6 documents with labels 0..levels-1 in shuffled row order. Query 1 has only
    labels 1 and 2 (no non-relevant document), query 2 a single label (no pair)."""
    scores, labels, qid = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(2, 7))
        lab = rng.integers(0, levels, size=n).astype(float)
        if q == 1:
            lab = rng.integers(1, 3, size=n).astype(float)
            lab[0], lab[-1] = 1.0, 2.0
        if q == 2:
            lab[:] = 1.0
        scores.append(rng.integers(0, 3, size=n) * 0.25 if tied else rng.normal(size=n))
        labels.append(lab)
        qid.append(np.full(n, q))
    scores, labels, qid = map(np.concatenate, (scores, labels, qid))
    perm = rng.permutation(len(scores))
    return scores[perm], labels[perm], qid[perm]


@pytest.mark.parametrize("loss", ["pairwise", "pairwise:count"])
def test_hinge_is_the_brute_force_over_pair_subsets(loss):
    rng = np.random.default_rng(2006)
    count = loss.endswith("count")
    for trial in range(20):
        scores, labels, qid = graded_queries(rng, tied=trial % 2 == 0, levels=[2, 3, 4][trial % 3])
        value, grad = structured_hinge(scores, labels, qid, loss=loss)
        expected = sum(brute.pairwise_hinge(scores[qid == q], labels[qid == q], count) for q in np.unique(qid))
        assert value == pytest.approx(expected, abs=1e-10)
        # The single-label query has no pair, so no gradient.
        assert np.all(grad[qid == 2] == 0.0)


def test_gradient_matches_finite_differences():
    # Away from ties (continuous scores) the hinge is linear near the point.
    rng = np.random.default_rng(3)
    scores, labels, qid = graded_queries(rng)
    value, grad = structured_hinge(scores, labels, qid, loss="pairwise")
    h = 1e-7
    for i in range(len(scores)):
        bumped = scores.copy()
        bumped[i] += h
        up, _ = structured_hinge(bumped, labels, qid, loss="pairwise")
        assert (up - value) / h == pytest.approx(grad[i], abs=1e-5)


def test_three_levels_by_hand():
    # Labels 2, 1, 0 scored 0.4, 0, -0.4: pairs (2,1) and (1,0) differ by 0.4 < 1/2 and are
    # swapped, (2,0) by 0.8 is not; M = 3, H = 2 (1 - 0.8) / 3 = 0.4 / 3. Counted (margin 1),
    # H = (1 - 0.4) + (1 - 0.4) + (1 - 0.8) = 1.4.
    s, y = [0.4, 0.0, -0.4], [2, 1, 0]
    assert structured_hinge(s, y, loss="pairwise")[0] == pytest.approx(0.4 / 3, abs=1e-12)
    assert structured_hinge(s, y, loss="pairwise:count")[0] == pytest.approx(1.4, abs=1e-12)
    # roc sees one relevant class (labels 1 and 2) against label 0: pairs (2,0) 0.8 kept,
    # (1,0) 0.4 swapped: H = (1 - 0.8) / 2 = 0.1.
    assert structured_hinge(s, y, loss="roc")[0] == pytest.approx(0.1, abs=1e-12)


def training_problem(seed, n_queries=6, d=3):
    rng = np.random.default_rng(seed)
    X, y, qid = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(3, 7))
        lab = rng.integers(0, 3, size=n).astype(float)
        lab[0], lab[-1] = 2.0, 0.0
        if q == 1:
            lab = np.array([1.0, 2.0] + [2.0] * (n - 2))  # labels 1 and 2 only
        if q == 2:
            lab[:] = 0.0  # no pair: not counted in n
        X.append(rng.normal(size=(n, d)) + lab[:, None] * rng.normal(0.4, 0.4, size=d))
        y.append(lab)
        qid.append(np.full(n, q))
    return np.vstack(X), np.concatenate(y), np.concatenate(qid)


def pairwise_svm_optimum(X, y, qid, C, count):
    """The pairwise SVM above solved through its dual, max sum a - 1/2 |Z' a|^2 with
    0 <= a_k <= c_k, by L-BFGS-B. Returns the primal at the dual's w (an upper bound of the
    optimum) and the dual value (a lower bound)."""
    Z, caps = [], []
    queries = [q for q in np.unique(qid) if len(np.unique(y[qid == q])) > 1]
    n = len(queries)
    for q in queries:
        Xq, yq = X[qid == q], y[qid == q]
        pairs = [(i, j) for i in range(len(yq)) for j in range(len(yq)) if yq[i] > yq[j]]
        for i, j in pairs:
            Z.append((1.0 if count else 2.0) * (Xq[i] - Xq[j]))
            caps.append(C / n if count else C / (n * len(pairs)))
    Z, caps = np.array(Z), np.array(caps)

    def neg_dual(a):
        w = Z.T @ a
        return 0.5 * w @ w - a.sum(), Z @ w - 1.0

    res = minimize(
        neg_dual,
        np.zeros(len(caps)),
        jac=True,
        method="L-BFGS-B",
        bounds=list(zip(np.zeros(len(caps)), caps)),
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 100000},
    )
    w = Z.T @ res.x
    primal = 0.5 * w @ w + caps @ np.maximum(0.0, 1.0 - Z @ w)
    return primal, -res.fun, n


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("loss", ["pairwise", "pairwise:count"])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_training_reaches_the_pairwise_svm_optimum(seed, loss, C):
    X, y, qid = training_problem(seed)
    upper, lower, n = pairwise_svm_optimum(X, y, qid, C, loss.endswith("count"))
    assert lower <= upper + 1e-9
    eps = 1e-6
    model = SVMMap(C=C, loss=loss, eps=eps).fit(X, y, qid=qid)
    # Every query with two distinct labels counts, including the one without label 0.
    assert model.n_queries_ == n == 5
    assert model.n_queries_skipped_ == {"no_relevant": 1, "all_relevant": 0}
    # svmmap's objective is within its gap of the optimum, which lies in [lower, upper].
    assert model.objective_ <= upper + C * eps + 1e-9
    assert model.dual_objective_ >= lower - 1e-6 * max(1.0, upper) - C * eps
    assert model.dual_objective_ <= upper + 1e-9


def test_pairwise_is_roc_on_binary_labels_and_ignores_the_threshold():
    X, y, qid = training_problem(0)
    binary = (y > 0).astype(float)
    roc = SVMMap(C=1.0, loss="roc").fit(X, binary, qid=qid)
    pairwise = SVMMap(C=1.0, loss="pairwise").fit(X, binary, qid=qid)
    np.testing.assert_array_equal(pairwise.coef_, roc.coef_)
    # The threshold only splits relevant from non-relevant; pairs come from the labels.
    a = SVMMap(C=1.0, loss="pairwise").fit(X, y, qid=qid)
    b = SVMMap(C=1.0, loss="pairwise", relevance_threshold=1.5).fit(X, y, qid=qid)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_bad_option():
    X, y, qid = training_problem(0)
    with pytest.raises(ValueError, match="pairwise:count"):
        SVMMap(loss="pairwise:fraction").fit(X, y, qid=qid)


def test_fraction_and_count_differ_by_the_documented_rescaling():
    # With v = 2w, 1/2 |w|^2 + C/n sum_q 1/M sum max(0, 1 - 2 w.d) is 1/4 of
    # 1/2 |v|^2 + (4C/M)/n sum_q sum max(0, 1 - v.d): when every query has the same M pairs,
    # "pairwise" at C is "pairwise:count" at 4C/M with the weights halved (README, "Graded pairs").
    rng = np.random.default_rng(11)
    labels = np.array([2.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    m = 2 + 3 + 6  # pairs (2,1) x2, (2,0) x3, (1,0) x6
    X = rng.normal(size=(8 * len(labels), 4)) + np.tile(labels, 8)[:, None] * 0.3
    y, qid = np.tile(labels, 8), np.repeat(np.arange(8), len(labels))
    for C in (0.5, 5.0):
        fraction = SVMMap(C=C, loss="pairwise", eps=1e-8).fit(X, y, qid=qid)
        count = SVMMap(C=4 * C / m, loss="pairwise:count", eps=1e-8).fit(X, y, qid=qid)
        np.testing.assert_allclose(fraction.coef_, count.coef_ / 2, atol=1e-5)
        assert fraction.objective_ == pytest.approx(count.objective_ / 4, rel=1e-6)


def test_oracle_argmax_on_binary_relevance_is_roc():
    # _core.oracle_argmax passes binary relevance, the special case of labels 1 and 0.
    from svmmap import _core

    rng = np.random.default_rng(5)
    for _ in range(20):
        s = rng.integers(0, 4, size=7) * 0.25
        r = np.zeros(7, dtype=bool)
        r[rng.choice(7, size=3, replace=False)] = True
        d1, c1 = _core.oracle_argmax(s, r, "pairwise")
        d2, c2 = _core.oracle_argmax(s, r, "roc")
        assert d1 == d2
        np.testing.assert_array_equal(c1, c2)
        assert d1 - c1 @ s == pytest.approx(brute.pairwise_hinge(s, r.astype(float)), abs=1e-12)
