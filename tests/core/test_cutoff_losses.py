"""benchmarks/cutoff_losses.py: its prototype oracles, latent targets and CCCP rounds."""

import itertools
import warnings

import numpy as np
import pytest
from svmmap import SVMMap, structured_hinge

from tests._support.benchmarks import load


@pytest.fixture(scope="module")
def bench():
    return load("cutoff_losses")


def test_oracles_and_the_pairs_claim_against_every_ranking(bench):
    # mrr_po_argmax, target_coef (m = 1 and m = P) and the pairs loss's largest-loss rankings,
    # each against the enumeration of every ranking of small queries with tied scores.
    bench.brute_check(np.random.default_rng(7), trials=60)


def test_mrr_po_by_hand(bench):
    # Relevant scores 0.5 and 0.0, non-relevant 0.3 and 0.2 (P = N = 2, 2/(PN) = 1/2); no
    # cutoff. a0 = 0: relevant 0.0 sits at its peak below both non-relevant: Delta 0, pairs
    # (0.3 - 0.0) + (0.2 - 0.0) swapped: 0.5 * 0.5 = 0.25. a0 = 1: Delta 1/2, relevant 0.5 below
    # 0.3 (0.5 * -0.2 = -0.1) and 0.0 below both (0.25): 0.65. a0 = 2: Delta 2/3, 0.5 below both
    # (0.5 * -0.5 = -0.25) and 0.25: 0.6667. The best is a0 = 2 with hinge 2/3.
    s = np.array([0.5, 0.3, 0.0, 0.2])
    rel = np.array([True, False, True, False])
    delta, coef = bench.mrr_po_argmax(s, rel, None)
    assert delta == pytest.approx(2 / 3)
    assert delta - coef @ s == pytest.approx(2 / 3)
    np.testing.assert_allclose(coef, [1.0, -1.0, 1.0, -1.0])


def small_data(rng, n_queries=6, n_docs=12, n_features=4):
    X = rng.normal(size=(n_queries * n_docs, n_features))
    y = (rng.random(n_queries * n_docs) < 0.5).astype(float)
    q = np.repeat(np.arange(n_queries), n_docs)
    y[::n_docs], y[1::n_docs] = 1.0, 0.0
    return X, y, q


def test_latent_hinge_is_at_most_the_papers_and_the_fixed_target_at_least_the_latent(bench):
    # The ideal ranking is a loss-0 ranking, so the latent target scores at least as much and
    # the latent hinge is at most the paper's (structured_hinge of the core). A target fixed
    # at other scores scores at most the best one, so that round's hinge is at least the
    # latent hinge, with equality at the anchor itself.
    rng = np.random.default_rng(3)
    X, y, q = small_data(rng)
    latent = bench.Latent("ndcg@3", (X, y, q))
    for _ in range(5):
        w = rng.normal(size=X.shape[1])
        paper, _ = structured_hinge(X @ w, y, q, loss="ndcg@3")
        _, _, own = latent.cuts(w, None)
        assert own <= paper + 1e-12
        anchor = X @ rng.normal(size=X.shape[1])
        _, _, fixed = latent.cuts(w, anchor)
        assert fixed >= own - 1e-12
        _, _, at_anchor = latent.cuts(w, X @ w)
        assert at_anchor == pytest.approx(own, rel=1e-12, abs=1e-12)


def test_latent_target_is_the_best_loss_zero_ranking(bench):
    # One query of 6 documents: target_coef's e.s must be Psi(ideal) - max over rankings whose
    # top m are relevant of Psi, by enumeration, with distinct and with tied scores.
    rng = np.random.default_rng(5)
    rel = np.array([True, False, True, True, False, False])
    p, n = 3, 3
    pairs = [(i, j) for i in np.flatnonzero(rel) for j in np.flatnonzero(~rel)]
    for s in (rng.normal(size=6), rng.integers(0, 2, 6).astype(float)):

        def psi(perm):
            rank = {d: r for r, d in enumerate(perm)}
            return sum((1 if rank[i] < rank[j] else -1) * (s[i] - s[j]) for i, j in pairs) / (p * n)

        ideal = psi([0, 2, 3, 1, 4, 5])
        for m in (1, 2, 3):
            best = max(psi(perm) for perm in itertools.permutations(range(6)) if all(rel[d] for d in perm[:m]))
            assert bench.target_coef(s, rel, m) @ s == pytest.approx(ideal - best, abs=1e-12)


def test_cccp_rounds_lower_the_objective_and_leave_zero(bench):
    # Queries with many relevant documents against k = 2: the paper's ndcg@2 learns 0, the
    # latent rounds started from map learn a model that ranks, and every round lowers the
    # latent objective (CCCP: the round's objective equals it at the anchor and bounds it above).
    rng = np.random.default_rng(11)
    n_queries, n_docs = 20, 15
    u = rng.normal(size=(n_queries * n_docs))
    X = np.column_stack([u + rng.normal(scale=2.0, size=u.size), rng.normal(size=u.size)])
    y = (u > np.quantile(u, 0.5)).astype(float)
    q = np.repeat(np.arange(n_queries), n_docs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = SVMMap(C=10.0, loss="ndcg@2").fit(X, y, qid=q)
    assert not np.any(paper.coef_)
    latent = bench.Latent("ndcg@2", (X, y, q))
    w_map = bench.svmmap_fit("map", 10.0, (X, y, q))
    w, history = latent.fit(10.0, w_map, max_rounds=10)
    assert np.any(w)
    assert len(history) >= 2
    assert all(b < a for a, b in zip(history, history[1:]))
    assert history[-1] == pytest.approx(latent.objective(w, 10.0))
