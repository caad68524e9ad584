"""conventions="letor" against an independent transcription of LETOR 4.0's Eval-Score-4.0.pl.

The reference below follows the script's steps one by one (written from its text, not from
svmmap's code): per query, documents sorted by line number and then stably by decreasing
prediction; P@1..10 with missing positions counted as non-relevant; AP over the list, 0 without
a relevant document; NDCG at positions 1..n only, with gains {0: 0, 1: 1, 2: 3}, ranks 1 and 2
undiscounted, rank r >= 3 times log(2)/log(r), 0 when the ideal DCG is 0; the averages over
all queries, where a missing NDCG@k (a query shorter than k) adds nothing, i.e. counts 0.
"""

import math

import numpy as np
import pytest
from svmmap import SVMMap, metrics
from svmmap.datasets import load_mq2008

NDCG_GAIN = {0: 0, 1: 1, 2: 3}
PRECISION_REL = {0: 0, 1: 1, 2: 1}
MAX_POSITION = 10


def letor_script(y, scores, qid):
    """{"P@k": mean, "MAP": mean, "NDCG@k": mean} as Eval-Score-4.0.pl prints them (unrounded)."""
    queries = {}
    for line, (label, pred, q) in enumerate(zip(y, scores, qid), 1):
        queries.setdefault(q, []).append((line, int(label), float(pred)))
    prec = [0.0] * MAX_POSITION
    ndcg = [0.0] * MAX_POSITION
    total_map = 0.0
    for q in sorted(queries):
        docs = sorted(queries[q], key=lambda d: d[0])
        docs = sorted(docs, key=lambda d: -d[2])  # Python's sort is stable, as Perl's mergesort
        rates = [d[1] for d in docs]
        n_rel = 0
        for pos in range(MAX_POSITION):
            r = rates[pos] if pos < len(rates) else 0
            n_rel += PRECISION_REL[r]
            prec[pos] += n_rel / (pos + 1)
        n_rel, ap = 0, 0.0
        for pos, r in enumerate(rates):
            if PRECISION_REL[r] == 1:
                n_rel += 1
                ap += n_rel / (pos + 1)
        total_map += 0.0 if n_rel == 0 else ap / n_rel

        def dcg(rs):
            out = [NDCG_GAIN[rs[0]]]
            for pos in range(1, len(rs)):
                g = NDCG_GAIN[rs[pos]]
                out.append(out[-1] + (g if pos < 2 else g * math.log(2.0) / math.log(pos + 1.0)))
            return out

        got, best = dcg(rates), dcg(sorted(rates, key=lambda r: -NDCG_GAIN[r]))
        for pos in range(min(len(rates), MAX_POSITION)):
            ndcg[pos] += got[pos] / best[pos] if best[pos] != 0 else 0.0
    n = len(queries)
    out = {f"P@{k + 1}": prec[k] / n for k in range(MAX_POSITION)}
    out.update({f"NDCG@{k + 1}": ndcg[k] / n for k in range(MAX_POSITION)})
    out["MAP"] = total_map / n
    return out


@pytest.fixture(scope="module")
def mq2008_test_scores():
    X, y, qid = load_mq2008(1, "train")
    model = SVMMap(C=10.0).fit(X, y, qid=qid)
    Xt, yt, qt = load_mq2008(1, "test")
    # Model scores (few ties) and a raw feature with many ties (input order decides them).
    return yt, qt, {"model": model.predict(Xt), "feature": Xt[:, 0].copy()}


@pytest.mark.parametrize("kind", ["model", "feature"])
def test_letor_conventions_match_the_script(mq2008_test_scores, kind):
    y, qid, all_scores = mq2008_test_scores
    scores = all_scores[kind]
    ref = letor_script(y, scores, qid)
    names = ["map"] + [f"p@{k}" for k in range(1, 11)] + [f"ndcg@{k}" for k in range(1, 11)]
    result = metrics.evaluate(y, scores, qid, names, conventions="letor")
    assert result["map"] == pytest.approx(ref["MAP"], abs=1e-12)
    for k in range(1, 11):
        assert result[f"p@{k}"] == pytest.approx(ref[f"P@{k}"], abs=1e-12), k
        assert result[f"ndcg@{k}"] == pytest.approx(ref[f"NDCG@{k}"], abs=1e-12), k
    # The script's NDCG@10 counts the many MQ2008 queries with fewer than 10 documents as 0,
    # so it is far below svmmap's and trec_eval's NDCG@10 of the same scores.
    assert result["ndcg@10"] < 0.8 * metrics.ndcg(y, scores, qid, k=10, conventions="trec_eval")


def test_letor_ndcg_by_hand():
    # Grades 0, 2, 1 in ranked order: DCG@3 = 0 + 3 (rank 2, undiscounted) + 1 * log(2)/log(3);
    # ideal 2, 1, 0: 3 + 1 + 0. NDCG@3 = (3 + 0.63093) / 4 = 0.90773.
    y, s = [0, 2, 1], [3.0, 2.0, 1.0]
    assert metrics.ndcg(y, s, k=3, conventions="letor") == pytest.approx((3 + math.log(2) / math.log(3)) / 4)
    # NDCG@2 = 3 / 4; NDCG@4 of this 3-document query is 0 in the script.
    assert metrics.ndcg(y, s, k=2, conventions="letor") == pytest.approx(0.75)
    assert metrics.ndcg(y, s, k=4, conventions="letor") == 0.0
    assert metrics.ndcg(y, s, k=4, conventions="letor", no_relevant="skip") == 0.0  # a value, not undefined
    # "ndcg" without k: NDCG at the query's length.
    assert metrics.ndcg(y, s, conventions="letor") == metrics.ndcg(y, s, k=3, conventions="letor")
    # Equal scores keep the input order; pessimistic ties (overridden) put the lower grade first.
    assert metrics.ndcg([2, 0, 0], [1.0, 1.0, 1.0], k=1, conventions="letor") == 1.0
    assert metrics.ndcg([2, 0, 0], [1.0, 1.0, 1.0], k=1, conventions="letor", ties="pessimistic") == 0.0
    # Query 1 has no relevant document: undefined, counted 0 by the preset. Query 2 ranks its
    # relevant document second, which the script does not discount: NDCG@2 = 1 / 1.
    pq = metrics.per_query("ndcg@2", [0, 0, 1, 0], [1.0, 2.0, 1.0, 2.0], [1, 1, 2, 2], conventions="letor")
    assert pq.values.tolist() == [0.0, 1.0] and pq.n_undefined == 1
    np.testing.assert_array_equal(pq.qids, [1, 2])
