"""The papers' baselines: SVM_acc/acc2, the acc3/acc4 normalizations, AdaRank, DORM."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.stats import percentileofscore
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.svm import LinearSVC
from svmmap.baselines import DORM, AdaRank, QueryMinMaxScaler, QueryPercentileTransformer, SVMAcc, SVMAcc2
from svmmap.metrics import mean_average_precision


def classification_problem(seed, m=80, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = (X @ rng.normal(size=d) + 0.8 * rng.normal(size=m) > 0.7).astype(float)
    return X, y, np.repeat(np.arange(m // 10), 10)


def svm_objective(w, b, X, y, C, balanced):
    """1/2 (|w|^2 + b^2) + C/m sum_i cost_i max(0, 1 - y_i (w.x_i + b)), y_i in {-1, +1}."""
    sign = np.where(y > 0, 1.0, -1.0)
    cost = np.ones(len(y))
    if balanced:
        cost[y > 0] = (y <= 0).sum() / (y > 0).sum()
    hinge = np.maximum(0.0, 1.0 - sign * (X @ w + b))
    return 0.5 * (w @ w + b * b) + C / len(y) * (cost * hinge).sum()


@pytest.mark.parametrize("balanced", [False, True])
@pytest.mark.parametrize("C", [0.5, 10.0])
def test_svm_acc_solves_the_linear_svm_like_liblinear(balanced, C):
    # scikit-learn's LinearSVC (liblinear, dual coordinate descent) with loss="hinge" and the
    # bias as a regularized constant feature solves the same problem with C_liblinear = C / m
    # and class weights #non-relevant/#relevant for acc2.
    X, y, qid = classification_problem(int(C) + balanced)
    m = len(y)
    ours = SVMAcc(C=C, balanced=balanced, eps=1e-7).fit(X, y, qid=qid)
    weight = {1: (y == 0).sum() / (y == 1).sum(), 0: 1.0} if balanced else None
    ref = LinearSVC(C=C / m, loss="hinge", intercept_scaling=1.0, tol=1e-10, max_iter=200000, class_weight=weight)
    ref.fit(X, y)
    f_ours = svm_objective(ours.coef_, ours.intercept_, X, y, C, balanced)
    f_ref = svm_objective(ref.coef_.ravel(), ref.intercept_[0], X, y, C, balanced)
    assert ours.objective_ == pytest.approx(f_ours, rel=1e-9)
    # Both are near the optimum: svmmap's gap is at most C * eps.
    assert f_ours <= f_ref + C * 1e-7
    assert f_ours == pytest.approx(f_ref, rel=1e-4)
    assert np.allclose(ours.coef_, ref.coef_.ravel(), atol=1e-2 * max(1.0, np.abs(ours.coef_).max()))


def test_svm_acc_against_scipy_on_a_tiny_problem():
    # The primal written out as a smooth QP: min 1/2 (|w|^2 + b^2) + C/m sum xi,
    # xi_i >= 1 - y_i (w.x_i + b), xi >= 0, solved by SLSQP.
    X, y, _ = classification_problem(5, m=20, d=2)
    C, m = 3.0, 20
    sign = np.where(y > 0, 1.0, -1.0)
    cons = [
        {"type": "ineq", "fun": lambda z: z[3:] - 1.0 + sign * (X @ z[:2] + z[2])},
        {"type": "ineq", "fun": lambda z: z[3:]},
    ]
    res = minimize(
        lambda z: 0.5 * z[:3] @ z[:3] + C / m * z[3:].sum(),
        np.concatenate([np.zeros(3), np.ones(m)]),
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-13, "maxiter": 1000},
    )
    ours = SVMAcc(C=C, eps=1e-8).fit(X, y)
    assert ours.objective_ == pytest.approx(res.fun, rel=1e-5)
    assert np.allclose(np.append(ours.coef_, ours.intercept_), res.x[:3], atol=1e-3)


def test_svm_acc_predicts_with_its_bias_and_takes_sparse_input():
    X, y, qid = classification_problem(3)
    dense = SVMAcc(C=2.0, eps=1e-6).fit(X, y)
    sparse = SVMAcc(C=2.0, eps=1e-6).fit(sp.csr_matrix(X), y)
    assert np.allclose(dense.coef_, sparse.coef_) and dense.intercept_ == pytest.approx(sparse.intercept_)
    assert np.allclose(dense.predict(X), X @ dense.coef_ + dense.intercept_)
    assert dense.score(X, y, qid=qid) == mean_average_precision(y, dense.predict(X), qid)
    # SVMAcc2 is SVMAcc(balanced=True), and both survive scikit-learn's clone.
    a2 = clone(SVMAcc2(C=2.0, eps=1e-6)).fit(X, y)
    b2 = SVMAcc(C=2.0, eps=1e-6, balanced=True).fit(X, y)
    assert np.allclose(a2.coef_, b2.coef_) and clone(dense).get_params()["C"] == 2.0
    with pytest.raises(ValueError, match="relevant and non-relevant"):
        SVMAcc().fit(X, np.zeros(len(y)))
    with pytest.raises(NotFittedError):
        SVMAcc().predict(X)


def test_percentile_transformer_matches_scipy():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(30, 3)).astype(float)  # many ties
    qid = rng.integers(0, 4, size=30)  # rows of a query are not adjacent
    out = QueryPercentileTransformer().fit_transform(X, qid=qid)
    for q in np.unique(qid):
        rows = qid == q
        for f in range(3):
            expected = [percentileofscore(X[rows, f], v, kind="weak") / 100 for v in X[rows, f]]
            assert np.allclose(out[rows, f], expected)
    # The best document of a query gets 1; Yue's example: top 90% -> 0.9.
    ten = np.arange(10.0).reshape(-1, 1)
    assert QueryPercentileTransformer().fit(ten).transform(ten, qid=np.zeros(10))[8, 0] == pytest.approx(0.9)


def test_min_max_scaler_by_hand():
    # Yue et al. 5.2.1: scores 0.2 .. 0.7 in a query; 0.6 becomes (0.6 - 0.2) / (0.7 - 0.2) = 0.8.
    # A feature constant within its query becomes 0.
    X = np.array([[0.2, 5.0], [0.6, 5.0], [0.7, 5.0], [3.0, 1.0], [1.0, 2.0]])
    qid = np.array([1, 1, 1, 2, 2])
    out = QueryMinMaxScaler().fit_transform(X, qid=qid)
    assert np.allclose(out, [[0.0, 0.0], [0.8, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="qid"):
        QueryMinMaxScaler().fit(X).transform(X)


def test_adarank_rounds_by_hand():
    # Two queries of three documents, two features.
    # Query A: labels 1 0 0; feature 0 = 3 2 1 (AP 1), feature 1 = 1 2 3 (relevant last: AP 1/3).
    # Query B: labels 0 1 0; feature 0 = 3 2 1 (relevant second: AP 1/2), feature 1 = 1 3 2 (AP 1).
    X = np.array([[3, 1], [2, 2], [1, 3], [3, 1], [2, 3], [1, 2]], dtype=float)
    y = np.array([1, 0, 0, 0, 1, 0])
    qid = np.array([0, 0, 0, 1, 1, 1])
    model = AdaRank("map", n_estimators=2).fit(X, y, qid=qid)
    # Round 1, P = (1/2, 1/2): weighted AP is 3/4 for feature 0 and 2/3 for feature 1.
    # alpha_1 = 1/2 ln[(1/2 (1 + 1) + 1/2 (1 + 1/2)) / (1/2 (1 - 1) + 1/2 (1 - 1/2))] = 1/2 ln 7.
    a1 = 0.5 * math.log(7)
    assert model.features_[0] == 0
    assert model.coef_path_[0] == pytest.approx([a1, 0.0])
    # f_1 = a1 x_0 has AP (1, 1/2): P_2 = (e^-1, e^-1/2) / (e^-1 + e^-1/2) = (0.3775, 0.6225).
    # Round 2: weighted AP 0.3775 + 0.6225 / 2 = 0.689 for feature 0, 0.3775 / 3 + 0.6225
    # = 0.748 for feature 1 (AP 1/3 on A, 1 on B), so feature 1 with
    # alpha_2 = 1/2 ln[(P_A 4/3 + P_B 2) / (P_A 2/3 + P_B 0)].
    pa, pb = np.exp(-1.0), np.exp(-0.5)
    pa, pb = pa / (pa + pb), pb / (pa + pb)
    a2 = 0.5 * math.log((pa * 4 / 3 + pb * 2) / (pa * 2 / 3))
    assert model.features_ == [0, 1]
    assert model.coef_ == pytest.approx([a1, a2])
    assert model.n_iter_ == 2 and len(model.train_measure_) == 2
    # If feature 1 ranks both queries' relevant document last (AP 1/3, 1/3), feature 0 stays
    # the best weighted choice in round 2 (0.689 > 1/3): the plain rule repeats it, the default
    # rule takes feature 1.
    X[3:, 1] = [3, 1, 2]
    assert AdaRank("map", n_estimators=2, repeat=True).fit(X, y, qid=qid).features_ == [0, 0]
    assert AdaRank("map", n_estimators=2).fit(X, y, qid=qid).features_ == [0, 1]


def test_adarank_ndcg_and_meng_variant_run():
    X = np.array([[3, 1], [2, 2], [1, 3], [3, 1], [2, 3], [1, 2]], dtype=float)
    y = np.array([2, 0, 1, 0, 1, 0])
    qid = np.array([0, 0, 0, 1, 1, 1])
    model = AdaRank("ndcg@2", n_estimators=3, variant="meng").fit(X, y, qid=qid)
    # Meng et al.: alpha = 1/2 sum_i P(i) (1 + E_i) is within [1/2, 1].
    steps = np.diff(np.vstack([np.zeros(2), model.coef_path_]), axis=0).sum(axis=1)
    assert np.all((steps >= 0.5) & (steps <= 1.0))
    with pytest.raises(ValueError, match="variant"):
        AdaRank(variant="x").fit(X, y, qid=qid)


def test_dorm_learns_a_separable_toy_problem():
    # Relevant documents have a larger first feature in every query; DORM must rank them first.
    rng = np.random.default_rng(4)
    X, y, qid = [], [], []
    for q in range(6):
        n = 8
        rel = np.zeros(n)
        rel[: int(rng.integers(1, 4))] = 1
        feats = rng.normal(size=(n, 3))
        feats[:, 0] += 4 * rel
        X.append(feats), y.append(rel), qid.append(np.full(n, q))
    X, y, qid = np.vstack(X), np.concatenate(y), np.concatenate(qid)
    model = DORM(C=10.0, k=3, depth=5).fit(X, y, qid=qid)
    assert model.loss_name() == "dorm@3:depth=5"
    assert model.score(X, y, qid=qid) == 1.0
    assert model.coef_[0] > np.abs(model.coef_[1:]).max()
    with pytest.raises(ValueError, match="depth"):
        DORM(depth=0).fit(X, y, qid=qid)
