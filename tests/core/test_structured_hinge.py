"""svmmap.structured_hinge: value against brute force, gradient against finite differences."""

import numpy as np
import pytest
import svmmap
from svmmap import structured_hinge

from tests._support import brute

LOSSES = ["map", "roc", "ndcg@3", "ndcg", "ndcg@2:paper", "mrr@2", "mrr", "acc", "dorm@3"]


def grouped_problem(rng, n_queries=4, tied=False):
    """Queries of 2..6 documents with graded labels 0..2; query ids are strings in a shuffled
    row order. The last two queries have no relevant document / only relevant ones."""
    scores, labels, qid = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(2, 7))
        lab = rng.integers(0, 3, size=n).astype(float)
        lab[0], lab[-1] = 2.0, 0.0
        if q == n_queries - 2:
            lab[:] = 0.0
        if q == n_queries - 1:
            lab[:] = 1.0
        scores.append(rng.integers(0, 3, size=n) * 0.5 if tied else rng.normal(size=n))
        labels.append(lab)
        qid.append(np.full(n, f"q{q}"))
    scores, labels, qid = map(np.concatenate, (scores, labels, qid))
    perm = rng.permutation(len(scores))
    return scores[perm], labels[perm], qid[perm]


def brute_value(name, scores, labels, qid, threshold=0.0):
    total = 0.0
    for q in np.unique(qid):
        rows = qid == q
        rel = labels[rows] > threshold
        if rel.any() and not rel.all():
            total += brute.hinge(name, scores[rows], rel)
    return total


@pytest.mark.parametrize("loss", LOSSES)
def test_value_is_the_sum_of_brute_force_hinges(loss):
    rng = np.random.default_rng(sum(map(ord, loss)))
    for trial in range(15):
        scores, labels, qid = grouped_problem(rng, tied=trial % 2 == 0)
        value, grad = structured_hinge(scores, labels, qid, loss=loss)
        assert value == pytest.approx(brute_value(loss, scores, labels, qid), abs=1e-10)
        # Queries that cannot contribute have a zero gradient.
        rel = labels > 0
        for q in np.unique(qid):
            rows = qid == q
            if rel[rows].all() or not rel[rows].any():
                assert np.all(grad[rows] == 0.0)


@pytest.mark.parametrize("loss", LOSSES)
def test_gradient_matches_finite_differences(loss):
    # H is piecewise linear in the scores; away from ties (continuous random scores) the argmax
    # is unique in a neighbourhood, so central differences are exact up to rounding.
    rng = np.random.default_rng(1 + sum(map(ord, loss)))
    h = 1e-7
    for _ in range(10):
        scores, labels, qid = grouped_problem(rng)
        value, grad = structured_hinge(scores, labels, qid, loss=loss)
        for i in range(len(scores)):
            up, down = scores.copy(), scores.copy()
            up[i] += h
            down[i] -= h
            fd = (
                structured_hinge(up, labels, qid, loss=loss)[0] - structured_hinge(down, labels, qid, loss=loss)[0]
            ) / (2 * h)
            assert fd == pytest.approx(grad[i], abs=1e-5), (loss, i)


def test_several_losses_add_up_or_take_the_maximum():
    rng = np.random.default_rng(11)
    losses = ["map", "ndcg@2", "mrr@2"]
    equal = dict.fromkeys(losses, 1.0)
    # A list has default weights (docs/guide/losses.md): 1, 0.1 for NDCG@k, 1e-4 for MRR.
    list_weights = [1.0, 0.1, 1e-4]
    for _ in range(10):
        scores, labels, qid = grouped_problem(rng)
        separate, grad_sep = structured_hinge(scores, labels, qid, loss=equal)
        parts = [structured_hinge(scores, labels, qid, loss=l) for l in losses]
        assert separate == pytest.approx(sum(v for v, _ in parts), abs=1e-12)
        assert np.allclose(grad_sep, sum(g for _, g in parts))
        listed, grad_listed = structured_hinge(scores, labels, qid, loss=losses)
        assert listed == pytest.approx(sum(w * v for w, (v, _) in zip(list_weights, parts)), abs=1e-12)
        assert np.allclose(grad_listed, sum(w * g for w, (_, g) in zip(list_weights, parts)))
        shared, _ = structured_hinge(scores, labels, qid, loss=equal, slack="shared")
        expected = 0.0
        for q in np.unique(qid):
            rows = qid == q
            rel = labels[rows] > 0
            if rel.any() and not rel.all():
                expected += max(brute.hinge(l, scores[rows], rel) for l in losses)
        assert shared == pytest.approx(expected, abs=1e-10)


def test_one_query_without_qid_and_the_relevance_threshold():
    # Labels 2, 1, 0: with threshold 1 only the first document is relevant.
    scores = np.array([0.0, 1.0, -1.0])
    labels = np.array([2.0, 1.0, 0.0])
    value, _ = structured_hinge(scores, labels, relevance_threshold=1.0)
    assert value == pytest.approx(brute.hinge("map", scores, labels > 1.0))
    value, _ = structured_hinge(scores, labels)
    assert value == pytest.approx(brute.hinge("map", scores, labels > 0.0))


def test_example_of_the_docstring_by_hand():
    # One relevant document scored 0, non-relevant ones 1, 0, -1 (P = 1, N = 3). Ranked r-th,
    # with the r - 1 best non-relevant documents above, H = (1 - 1/r) + 2/3 sum (s_b - 0):
    # r = 1: 0; r = 2: 1/2 + 2/3 = 7/6; r = 3: 2/3 + 2/3 = 4/3; r = 4: 3/4 + 0 = 3/4.
    # The argmax is r = 3: d H / d s_rel = -2/3 * 2 = -4/3, d H / d s_b = 2/3 for the two above.
    value, grad = structured_hinge([0.0, 1.0, 0.0, -1.0], [1, 0, 0, 0])
    assert value == pytest.approx(4 / 3)
    assert np.allclose(grad, [-4 / 3, 2 / 3, 2 / 3, 0.0])
    assert svmmap.structured_hinge is structured_hinge


def test_bad_input():
    with pytest.raises(ValueError, match="loss"):
        structured_hinge([0.0, 1.0], [1, 0], loss="nope")
    with pytest.raises(ValueError, match="scores"):
        structured_hinge([np.nan, 1.0], [1, 0])
    with pytest.raises(ValueError, match="entries"):
        structured_hinge([0.0, 1.0], [1, 0, 1])
    with pytest.raises(ValueError, match="qid"):
        structured_hinge([0.0, 1.0], [1, 0], qid=[1, 2, 3])
    with pytest.raises(ValueError, match="slack"):
        structured_hinge([0.0, 1.0], [1, 0], loss=["map", "roc"], slack="both")
