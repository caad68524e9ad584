"""The MAP oracle (Yue et al. Algorithm 2) against enumeration of every ranking."""

import numpy as np
import pytest
from brute import map_hinge
from svmmap import _core


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


def oracle_hinge(scores, relevant):
    loss, coef = _core.oracle_argmax(scores, relevant, "map")
    return loss - coef @ scores, loss, coef


def test_matches_brute_force_on_1200_random_queries():
    rng = np.random.default_rng(2007)
    cases = 0
    for trial in range(1200):
        n = int(rng.integers(2, 8))
        # One in four queries has a single relevant document, one in eight all but one.
        k = 1 if trial % 4 == 0 else (n - 1 if trial % 8 == 1 else None)
        scores, relevant = random_query(rng, n, k)
        h, loss, coef = oracle_hinge(scores, relevant)
        expected = map_hinge(scores, relevant)
        assert h == pytest.approx(expected, abs=1e-10), (scores, relevant)
        cases += 1
    assert cases == 1200


def test_coefficients_describe_a_real_ranking():
    # The coefficients encode deltaPsi of the returned ranking: relevant document k gets
    # 2 * (#non-relevant above it) / (P N), non-relevant j gets -2 * (#relevant below it) / (P N).
    # Rebuilding the counts must give the loss the oracle reports.
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(2, 30))
        scores, relevant = random_query(rng, n)
        scores = rng.normal(size=n)  # tied documents would share averaged coefficients
        _, loss, coef = oracle_hinge(scores, relevant)
        p, q = relevant.sum(), (~relevant).sum()
        above = np.rint(coef[relevant] * p * q / 2).astype(int)
        below = np.rint(-coef[~relevant] * p * q / 2).astype(int)
        assert np.allclose(coef[relevant] * p * q / 2, above)
        assert above.sum() == below.sum()  # both count the inverted pairs
        # AP from the number of non-relevant documents above each relevant one, best first.
        above_sorted = np.sort(above)
        ap = np.mean(np.arange(1, p + 1) / (np.arange(1, p + 1) + above_sorted))
        assert loss == pytest.approx(1 - ap, abs=1e-12)


def test_tied_documents_of_one_class_share_their_coefficient():
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


def test_zero_scores_give_the_worst_ranking():
    # With w = 0 only Delta counts: all non-relevant documents first.
    relevant = np.array([True, False, True, False, False])
    _, loss, _ = oracle_hinge(np.zeros(5), relevant)
    assert loss == pytest.approx(1 - (1 / 4 + 2 / 5) / 2)


def test_rejects_degenerate_queries():
    with pytest.raises(ValueError, match="relevant"):
        _core.oracle_argmax(np.zeros(3), np.zeros(3, dtype=bool), "map")
    with pytest.raises(ValueError, match="loss"):
        _core.oracle_argmax(np.zeros(2), np.array([True, False]), "nope")
