"""Every oracle against enumeration of all rankings (tests/_support/brute.py, written from the papers).

The oracle returns Delta(ybar) and the coefficients c of deltaPsi(ybar); the query's hinge is
Delta - c.s, which must equal max over all rankings y of Delta(y) + w.Psi(y) - w.Psi(y*).
Random queries of 2 to 7 documents cover ties in the scores, one relevant document, all but one
relevant, and cutoffs k longer than the list. The MAP oracle (Yue et al. Algorithm 2) has
more cases of its own at the end.
"""

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from svmmap import _core

from tests._support import brute

NAMES = [
    "map",
    "map-greedy",
    "map-fast",
    "roc",
    "ndcg",
    "ndcg@1",
    "ndcg@3",
    "ndcg@9",
    "ndcg:paper",
    "ndcg@2:paper",
    "ndcg@4:paper",
    "mrr",
    "mrr@1",
    "mrr@3",
    "mrr@9",
    "acc",
    "acc2",
    "dorm",
    "dorm@3",
    "dorm@2:depth=3",
    "max(map,ndcg@3,mrr@3)",
    "max(roc,mrr)",
]


def random_query(rng: np.random.Generator, n: int, n_relevant: int | None = None):
    if rng.random() < 0.5:
        scores = rng.integers(0, 3, size=n) * 0.5  # many ties
    else:
        scores = rng.normal(size=n)
    if n_relevant is None:
        n_relevant = int(rng.integers(1, n))
    relevant = np.zeros(n, dtype=bool)
    relevant[rng.choice(n, size=n_relevant, replace=False)] = True
    return scores.astype(np.float64), relevant


def oracle_hinge(name, scores, relevant):
    delta, coef = _core.oracle_argmax(scores, relevant, name)
    return delta - coef @ scores


@pytest.mark.parametrize("name", NAMES)
def test_oracle_matches_brute_force(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    for trial in range(120):
        n = int(rng.integers(2, 8))
        k = 1 if trial % 4 == 0 else (n - 1 if trial % 4 == 1 else None)
        scores, relevant = random_query(rng, n, k)
        expected = brute.hinge(name, scores, relevant)
        got = oracle_hinge(name, scores, relevant)
        assert got == pytest.approx(expected, abs=1e-10), (name, scores, relevant)


def test_ndcg_no_clip_equals_a_cutoff_beyond_the_list():
    # A cutoff at or past the list's length clips nothing.
    rng = np.random.default_rng(3)
    for _ in range(50):
        scores, relevant = random_query(rng, int(rng.integers(2, 30)))
        for variant in ("", ":paper"):
            a = oracle_hinge("ndcg" + variant, scores, relevant)
            b = oracle_hinge(f"ndcg@{len(scores)}" + variant, scores, relevant)
            assert a == pytest.approx(b, abs=1e-12)


def test_fast_map_equals_algorithm_2_on_long_queries():
    rng = np.random.default_rng(2)
    for trial in range(60):
        n = int(rng.integers(50, 3000))
        scores = rng.normal(size=n) if trial % 2 else rng.integers(0, 6, size=n) * 0.1
        relevant = rng.random(n) < [0.01, 0.1, 0.5, 0.9][trial % 4]
        relevant[0], relevant[-1] = True, False
        greedy = oracle_hinge("map-greedy", scores, relevant)
        fast = oracle_hinge("map-fast", scores, relevant)
        assert fast == pytest.approx(greedy, rel=1e-10, abs=1e-12)


def test_dorm_assignment_against_scipy():
    # On queries too long to enumerate, the DORM hinge must equal the optimum of the assignment
    # problem max_pi sum_i [A(pi(i)) s_i - z_i D(pi(i)) / DCG*] solved by scipy, plus 1, minus
    # the best label-consistent ranking's w.phi.
    rng = np.random.default_rng(8)
    for _ in range(20):
        n = int(rng.integers(8, 40))
        scores = rng.normal(size=n)
        relevant = rng.random(n) < 0.3
        relevant[0], relevant[-1] = True, False
        for k in (None, 5):
            a = brute.dorm_decay(n, None)
            d = brute.log2_discount(np.arange(n))
            if k is not None:
                d[k:] = 0.0
            ideal = d[: relevant.sum()].sum()
            value = a[None, :] * scores[:, None] - relevant[:, None] * d[None, :] / ideal
            rows, cols = linear_sum_assignment(value, maximize=True)
            best = 1.0 + value[rows, cols].sum()
            order = np.concatenate([np.sort(scores[relevant])[::-1], np.sort(scores[~relevant])[::-1]])
            target = (a * order).sum()
            name = "dorm" if k is None else f"dorm@{k}"
            assert oracle_hinge(name, scores, relevant) == pytest.approx(best - target, abs=1e-9)


def test_coefficients_are_those_of_the_returned_ranking():
    # For Psi_po losses, the coefficients describe a ranking: relevant documents get
    # 2 #(non-relevant above)/(P N), non-relevant ones -2 #(relevant below)/(P N), and the two
    # counts describe the same inverted pairs.
    rng = np.random.default_rng(5)
    for name in ("roc", "ndcg@3", "ndcg", "map-fast"):
        for _ in range(100):
            _, relevant = random_query(rng, int(rng.integers(2, 30)))
            scores = rng.normal(size=len(relevant))  # tied documents share averaged coefficients
            _, coef = _core.oracle_argmax(scores, relevant, name)
            p, q = relevant.sum(), (~relevant).sum()
            above = coef[relevant] * p * q / 2
            below = -coef[~relevant] * p * q / 2
            assert np.allclose(above, np.rint(above)) and np.allclose(below, np.rint(below))
            assert above.sum() == pytest.approx(below.sum())


@pytest.mark.parametrize("name", NAMES)
def test_permuting_documents_permutes_the_coefficients(name):
    # Documents of one class that tie in score are interchangeable, and share the mean of their
    # coefficients (CONTRIBUTING.md, oracle rules), so the cut does not depend on the order in
    # which the documents are listed.
    rng = np.random.default_rng(9 + len(name))
    for _ in range(100):
        scores, relevant = random_query(rng, int(rng.integers(2, 12)))
        perm = rng.permutation(len(scores))
        d1, c1 = _core.oracle_argmax(scores, relevant, name)
        d2, c2 = _core.oracle_argmax(scores[perm], relevant[perm], name)
        assert d2 == pytest.approx(d1, abs=1e-12)
        np.testing.assert_allclose(c2, c1[perm], atol=1e-12)


@pytest.mark.parametrize(
    "bad", ["nope", "ndcg@0", "ndcg@x", "map@3", "roc:paper", "mrr:paper", "dorm:depth=0", "max()", "max(map,max(roc))"]
)
def test_unknown_loss_names_are_rejected(bad):
    with pytest.raises(ValueError, match="loss|depth"):
        _core.oracle_argmax(np.zeros(2), np.array([True, False]), bad)


# ---------------------------------------------------------------------------------------
# The MAP oracle (Yue et al. Algorithm 2): more queries, the ranking its coefficients describe,
# ties, w = 0 and degenerate queries.


def map_oracle_hinge(scores, relevant):
    loss, coef = _core.oracle_argmax(scores, relevant, "map")
    return loss - coef @ scores, loss, coef


def test_map_matches_brute_force_on_1200_random_queries():
    rng = np.random.default_rng(2007)
    cases = 0
    for trial in range(1200):
        n = int(rng.integers(2, 8))
        # One in four queries has a single relevant document, one in eight all but one.
        k = 1 if trial % 4 == 0 else (n - 1 if trial % 8 == 1 else None)
        scores, relevant = random_query(rng, n, k)
        h, loss, coef = map_oracle_hinge(scores, relevant)
        expected = brute.map_hinge(scores, relevant)
        assert h == pytest.approx(expected, abs=1e-10), (scores, relevant)
        cases += 1
    assert cases == 1200


def test_map_coefficients_describe_a_real_ranking():
    # The coefficients encode deltaPsi of the returned ranking: relevant document k gets
    # 2 * (#non-relevant above it) / (P N), non-relevant j gets -2 * (#relevant below it) / (P N).
    # Rebuilding the counts must give the loss the oracle reports.
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(2, 30))
        scores, relevant = random_query(rng, n)
        scores = rng.normal(size=n)  # tied documents would share averaged coefficients
        _, loss, coef = map_oracle_hinge(scores, relevant)
        p, q = relevant.sum(), (~relevant).sum()
        above = np.rint(coef[relevant] * p * q / 2).astype(int)
        below = np.rint(-coef[~relevant] * p * q / 2).astype(int)
        assert np.allclose(coef[relevant] * p * q / 2, above)
        assert above.sum() == below.sum()  # both count the inverted pairs
        # AP from the number of non-relevant documents above each relevant one, best first.
        above_sorted = np.sort(above)
        ap = np.mean(np.arange(1, p + 1) / (np.arange(1, p + 1) + above_sorted))
        assert loss == pytest.approx(1 - ap, abs=1e-12)


def test_map_tied_documents_of_one_class_share_their_coefficient():
    # All scores tie: every non-relevant document goes above every relevant one, and which
    # relevant document sits where is arbitrary, so they all get the mean coefficient:
    # relevant k has N non-relevant above it -> c = 2 N / (P N) = 2 / P for each of them;
    # each non-relevant has all P relevant below -> c = -2 P / (P N) = -2 / N.
    relevant = np.array([False, True, False, True, True])
    _, coef = _core.oracle_argmax(np.zeros(5), relevant, "map")
    np.testing.assert_allclose(coef[relevant], 2 / 3)
    np.testing.assert_allclose(coef[~relevant], -2 / 2)
    # Permuting the documents permutes the coefficients.
    rng = np.random.default_rng(9)
    for _ in range(200):
        scores, rel = random_query(rng, int(rng.integers(2, 12)))
        perm = rng.permutation(len(scores))
        _, c1 = _core.oracle_argmax(scores, rel, "map")
        _, c2 = _core.oracle_argmax(scores[perm], rel[perm], "map")
        np.testing.assert_allclose(c2, c1[perm], atol=1e-14)


def test_map_zero_scores_give_the_worst_ranking():
    # With w = 0 only Delta counts: all non-relevant documents first.
    relevant = np.array([True, False, True, False, False])
    _, loss, _ = map_oracle_hinge(np.zeros(5), relevant)
    assert loss == pytest.approx(1 - (1 / 4 + 2 / 5) / 2)


def test_map_rejects_degenerate_queries():
    with pytest.raises(ValueError, match="relevant"):
        _core.oracle_argmax(np.zeros(3), np.zeros(3, dtype=bool), "map")
    with pytest.raises(ValueError, match="loss"):
        _core.oracle_argmax(np.zeros(2), np.array([True, False]), "nope")
