"""Training with every loss, single and combined (SVM-combo), against an independent solve.

For tiny problems every constraint of OP 1 can be written out (brute.constraints enumerates all
rankings), and scipy solves the n-slack quadratic program. The objectives are

    separate slacks: 1/2 |w|^2 + C/n sum_q sum_l xi_q^l,  xi_q^l >= Delta_l(y) - w.deltaPsi_l(y)
    shared slack:    1/2 |w|^2 + C/n sum_q xi_q,          xi_q   >= Delta_l(y) - w.deltaPsi_l(y)

for every loss l and ranking y (Chakrabarti et al. 2008, section 3.7).
"""

import numpy as np
import pytest
from scipy.optimize import LinearConstraint, minimize
from svmmap import SVMMap, structured_hinge
from svmmap.datasets import load_mq2008

from tests._support import brute


def tiny_problem(seed: int, n_queries=3, d=3):
    rng = np.random.default_rng(seed)
    X, y, qid = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(3, 6))
        rel = np.zeros(n)
        rel[rng.choice(n, size=int(rng.integers(1, n)), replace=False)] = 1
        X.append(rng.normal(size=(n, d)) + rel[:, None] * rng.normal(0.5, 0.5, size=d))
        y.append(rel)
        qid.append(np.full(n, q))
    return np.vstack(X), np.concatenate(y), np.concatenate(qid)


def n_slack_optimum(X, y, qid, C, losses, shared, weights=None):
    """The optimum of OP 1 with every constraint written out; loss l's Delta and deltaPsi are
    scaled by weights[l] (Chakrabarti's C_l = weight_l * C), 1 when not given."""
    queries = np.unique(qid)
    n, d = len(queries), X.shape[1]
    weights = [1.0] * len(losses) if weights is None else weights
    blocks = []  # (slack index, Delta, deltaPsi)
    for qi, q in enumerate(queries):
        for li, loss in enumerate(losses):
            delta, dpsi = brute.constraints(loss, X[qid == q], y[qid == q] > 0)
            delta, dpsi = weights[li] * np.asarray(delta), weights[li] * np.asarray(dpsi)
            rows = np.unique(np.round(np.column_stack([delta, dpsi]), 12), axis=0)
            blocks.append((qi if shared else qi * len(losses) + li, rows[:, 0], rows[:, 1:]))
    n_slack = n if shared else n * len(losses)

    def primal(w):
        xi = np.zeros(n_slack)
        for s, delta, dpsi in blocks:
            xi[s] = max(xi[s], np.max(delta - dpsi @ w))
        return 0.5 * w @ w + C / n * xi.sum()

    A = np.vstack([np.hstack([dpsi, np.tile(np.eye(n_slack)[s], (len(dpsi), 1))]) for s, _, dpsi in blocks])
    lb = np.concatenate([delta for _, delta, _ in blocks])
    z0 = np.zeros(d + n_slack)
    z0[d:] = lb.max() + 1.0
    res = minimize(
        lambda z: 0.5 * z[:d] @ z[:d] + C / n * z[d:].sum(),
        z0,
        jac=lambda z: np.concatenate([z[:d], np.full(n_slack, C / n)]),
        hess=lambda z: np.diag(np.concatenate([np.ones(d), np.zeros(n_slack)])),
        constraints=[LinearConstraint(A, lb, np.inf)],
        method="trust-constr",
        options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 20000},
    )
    assert res.status in (1, 2), res.message
    return primal(res.x[:d]), primal


# (losses, slack, seed, C). The combinations have three times the constraints, which makes the
# reference solve slow; one problem each is enough.
CASES = [
    (["roc"], "separate", 0, 1.0),
    (["roc"], "separate", 1, 10.0),
    (["ndcg@2"], "separate", 0, 1.0),
    (["ndcg@2"], "separate", 1, 10.0),
    (["ndcg"], "separate", 0, 1.0),
    (["ndcg"], "separate", 1, 10.0),
    (["mrr@2"], "separate", 0, 1.0),
    (["mrr@2"], "separate", 1, 10.0),
    ({"map": 1.0, "ndcg@2": 1.0, "mrr@2": 1.0}, "separate", 1, 10.0),
    ({"map": 1.0, "ndcg@2": 1.0, "mrr@2": 1.0}, "shared", 1, 10.0),
    # A list has default weights (docs/guide/losses.md): 1, 0.1 for NDCG@k, 1e-4 for MRR.
    (["map", "ndcg@2", "mrr@2"], "separate", 1, 10.0),
    (["map", "ndcg@2", "mrr@2"], "shared", 1, 10.0),
]
LIST_WEIGHTS = {"map": 1.0, "ndcg@2": 0.1, "mrr@2": 1e-4}


@pytest.mark.parametrize("losses,slack,seed,C", CASES)
def test_optimum_matches_the_n_slack_problem(losses, slack, seed, C):
    X, y, qid = tiny_problem(seed)
    names = list(losses)
    if isinstance(losses, dict):
        weights = list(losses.values())
    elif len(losses) > 1:
        weights = [LIST_WEIGHTS[name] for name in names]
    else:
        weights = None
    optimum, primal = n_slack_optimum(X, y, qid, C, names, slack == "shared", weights)
    eps = 1e-6
    model = SVMMap(C=C, loss=losses, slack=slack, eps=eps).fit(X, y, qid=qid)
    groups = len(losses) if slack == "separate" else 1
    assert model.converged_ and model.gap_ <= groups * C * eps
    # objective_ is the exact primal of the chosen mode at coef_ ...
    assert model.objective_ == pytest.approx(primal(model.coef_), rel=1e-9, abs=1e-12)
    # ... and also 1/2 |w|^2 + C/n * structured_hinge, which sums (separate) or takes the
    # maximum (shared) of the losses' hinges.
    value, _ = structured_hinge(X @ model.coef_, y, qid, loss=losses, slack=slack)
    n = len(np.unique(qid))
    assert model.objective_ == pytest.approx(0.5 * model.coef_ @ model.coef_ + C / n * value, rel=1e-9)
    # The reference's objective is an upper bound of the optimum, svmmap's dual a lower bound.
    assert model.dual_objective_ <= optimum + 1e-12
    assert optimum - model.dual_objective_ <= groups * C * eps + 1e-5 * max(1.0, optimum)


@pytest.mark.parametrize(
    "loss", ["roc", "ndcg@10", "ndcg", "ndcg@10:paper", "mrr@10", "mrr", "map-fast", "dorm@10:depth=30"]
)
def test_every_loss_trains_on_mq2008(loss):
    # A part of fold 1 (the first 150 queries): training converges and ranks validation
    # queries far better than chance (random MAP on MQ2008 is about 0.35-0.4).
    X, y, qid = load_mq2008(fold=1, split="train")
    keep = np.isin(qid, np.unique(qid)[:150])
    model = SVMMap(C=10.0, loss=loss).fit(X[keep], y[keep], qid=qid[keep])
    assert model.converged_
    Xv, yv, qv = load_mq2008(fold=1, split="vali")
    assert model.score(Xv, yv, qid=qv) > 0.55
