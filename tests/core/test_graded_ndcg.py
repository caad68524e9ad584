"""The graded NDCG losses ("ndcg@k:graded", "ndcg:graded") on MQ2008 (labels 0, 1, 2) against
svmmap.metrics's NDCG@10, an independent computation of the same metric (gain 2^label - 1,
discount 1/log2(1 + rank), ideal DCG of the query's own labels, pessimistic ties).

The oracle's Delta is 1 - NDCG@10 of the ranking it returns. Two rankings are reached from
outside the oracle: at w = 0 the pair terms vanish and the argmax is the worst ranking (the
grades in ascending order), whose NDCG@10 the metrics give for the scores -y; and with the
scores of a ranking spread far enough apart (integer ranks times a factor larger than any
query's pair count Z), every pair term outweighs the whole loss, so the argmax is that ranking
itself and Delta = hinge + c.s is 1 - its NDCG@10.
"""

import numpy as np
import pytest
from svmmap import SVMMap, _core, metrics
from svmmap.datasets import load_mq2008
from svmmap.losses import LOSSES, loss_groups


@pytest.fixture(scope="module")
def fold1():
    return load_mq2008(fold=1, split="train")


def usable_queries(y, qid):
    """Queries with a relevant document and two different grades (MQ2008's labels are
    non-negative, so the grade is the label)."""
    keep = []
    for q in np.unique(qid):
        labels = y[qid == q]
        if labels.max() > 0 and len(np.unique(labels)) >= 2:
            keep.append(q)
    return keep


def test_loss_names_validate():
    (ndcg,) = [info for info in LOSSES if info["name"] == "ndcg"]
    assert "graded" in ndcg["options"]
    assert "ndcg@k:graded" in ndcg["syntax"]
    assert loss_groups("ndcg@10:graded") == [["ndcg@10:graded"]]
    assert loss_groups("ndcg:graded") == [["ndcg:graded"]]
    assert loss_groups(["map", "ndcg@10:graded"]) == [["map"], ["0.1*ndcg@10:graded"]]
    for bad in ["map:graded", "ndcg@10:graded:paper", "ndcg@0:graded", "ndcg@10:grade"]:
        with pytest.raises(ValueError):
            loss_groups(bad)


def test_graded_labels_it_cannot_grade_are_refused():
    # With relevance_threshold=-2, label -1 is relevant and its gain 2^-1 - 1 negative.
    scores = np.array([0.3, 0.1, 0.2])
    with pytest.raises(ValueError, match=r'"ndcg@10:graded".*label -1'):
        _core.structured_hinge(
            scores, np.array([-1.0, -3.0, -3.0]), np.zeros(3, np.int64), 1, [[(1.0, "ndcg@10:graded")]], -2.0, 1
        )


def per_query_delta(scores, y, qid, loss):
    """Delta of the oracle's argmax per query: hinge + c.s, with c = -grad."""
    codes = np.unique(qid, return_inverse=True)[1].astype(np.int64)
    n_queries = int(codes.max()) + 1
    _, grad, hinge = _core.structured_hinge(scores, y.astype(float), codes, n_queries, [[(1.0, loss)]], 0.0, 1)
    return {q: hinge[i] - float(grad[codes == i] @ scores[codes == i]) for i, q in enumerate(np.unique(qid))}


def spread_ranks(scores, y, qid):
    """Scores that rank every query as the metrics rank `scores` (descending, lower grade first
    on ties), spread 4 Z apart so that the oracle's argmax is that ranking."""
    out = np.zeros(len(scores))
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        order = rows[np.lexsort((y[rows], -scores[rows]))]
        n = len(rows)
        z = (n * n - sum(int(c) ** 2 for c in np.unique(y[rows], return_counts=True)[1])) / 2
        out[order] = -np.arange(n) * 4.0 * max(z, 1.0)
    return out


def test_delta_at_zero_is_one_minus_the_worst_ndcg(fold1):
    X, y, qid = fold1
    usable = usable_queries(y, qid)
    delta = per_query_delta(np.zeros(len(y)), y, qid, "ndcg@10:graded")
    worst = metrics.per_query("ndcg@10", y, -y.astype(float), qid)
    worst = dict(zip(worst.qids, worst.values))
    for q in np.unique(qid):
        expected = 1.0 - worst[q] if q in usable else 0.0
        assert delta[q] == pytest.approx(expected, abs=1e-12), q


def test_trains_on_mq2008_and_its_loss_is_one_minus_ndcg_at_10(fold1):
    X, y, qid = fold1
    usable = usable_queries(y, qid)
    model = SVMMap(loss="ndcg@10:graded", C=10.0).fit(X, y, qid)
    # The count is by the graded rule (a relevant document and two grades); on fold 1 it is the
    # binary count, as no query there has only relevant documents (see the test below).
    assert model.n_queries_ == len(usable)
    assert np.isfinite(model.objective_) and np.all(np.isfinite(model.coef_))
    # The first iteration's cut is taken at w = 0: its average Delta over the usable queries
    # is 1 - the mean worst NDCG@10.
    worst = metrics.per_query("ndcg@10", y, -y.astype(float), qid)
    worst = dict(zip(worst.qids, worst.values))
    assert model.history_[0]["loss"] == pytest.approx(np.mean([1 - worst[q] for q in usable]), abs=1e-12)
    # The trained model's ranking: its Delta through the oracle, its NDCG@10 by the metrics.
    scores = model.predict(X)
    delta = per_query_delta(spread_ranks(scores, y, qid), y, qid, "ndcg@10:graded")
    ndcg = metrics.per_query("ndcg@10", y, scores, qid)
    ndcg = dict(zip(ndcg.qids, ndcg.values))
    for q in usable:
        assert delta[q] == pytest.approx(1.0 - ndcg[q], abs=1e-9), q
    training_loss = np.mean([delta[q] for q in usable])
    assert training_loss == pytest.approx(1.0 - np.mean([ndcg[q] for q in usable]), abs=1e-9)
    # Training lowered the loss from its value at w = 0 by far.
    assert training_loss < 0.5 * model.history_[0]["loss"]


def test_a_query_of_relevant_documents_with_two_grades_trains_and_counts():
    # Query 0 has grades 0, 1, 2; query 1 only relevant documents, labels 1 and 2, which the
    # graded loss can order and the binary losses cannot; query 2 a single grade.
    rng = np.random.default_rng(3)
    y = np.array([0, 1, 2, 1, 2, 2, 1, 1], dtype=float)
    qid = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    X = rng.normal(size=(8, 3)) + y[:, None]
    assert SVMMap(loss="ndcg@10:graded").fit(X, y, qid).n_queries_ == 2
    with pytest.warns(Warning, match="skipped"):
        assert SVMMap(loss="ndcg@10").fit(X, y, qid).n_queries_ == 1
