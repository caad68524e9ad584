"""svmmap.metrics against pytrec_eval (trec_eval), scikit-learn, and values derived by hand."""

import numpy as np
import pytest
import pytrec_eval
from sklearn.metrics import roc_auc_score
from svmmap import SVMMap, metrics
from svmmap.datasets import load_mq2008


def trec_eval(y, scores, qid, measures, docno, gain=None):
    """Per-query values from pytrec_eval; `docno(i, label)` names document i."""
    qrels, run = {}, {}
    for i, (l, s, q) in enumerate(zip(y, scores, qid)):
        d = docno(i, int(l))
        g = int(l) if gain is None else int(gain(int(l)))
        qrels.setdefault(str(q), {})[d] = g
        run.setdefault(str(q), {})[d] = float(s)
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


def pessimistic_docno(i, label):
    # trec_eval orders equal scores by descending docno; a larger prefix for a lower grade puts
    # the lower grade first, which is svmmap's pessimistic tie rule.
    return f"{9 - label}_{i:06d}"


def input_order_docno(i, label):
    return f"{999999 - i:06d}"


@pytest.fixture(scope="module")
def mq2008_scored():
    X, y, qid = load_mq2008(1, "train")
    model = SVMMap(C=1.0).fit(X, y, qid=qid)
    Xt, yt, qt = load_mq2008(1, "test")
    # Model scores (few ties) and a raw feature (feature 1 is 0 for many documents: many ties).
    return yt, qt, {"model": model.predict(Xt), "feature": Xt[:, 0].copy()}


@pytest.mark.parametrize("scores_kind", ["model", "feature"])
@pytest.mark.parametrize("ties,docno", [("pessimistic", pessimistic_docno), ("input", input_order_docno)])
def test_parity_with_trec_eval(mq2008_scored, scores_kind, ties, docno):
    y, qid, all_scores = mq2008_scored
    scores = all_scores[scores_kind]
    ref = trec_eval(y, scores, qid, {"map", "ndcg", "ndcg_cut_10", "recip_rank", "P_10"}, docno)
    ref_exp = trec_eval(y, scores, qid, {"ndcg_cut_10"}, docno, gain=lambda l: 2**l - 1)
    pairs = [
        ("map", "map", "exp", ref),
        ("ndcg", "ndcg", "linear", ref),
        ("ndcg@10", "ndcg_cut_10", "linear", ref),
        ("ndcg@10", "ndcg_cut_10", "exp", ref_exp),
        ("mrr", "recip_rank", "exp", ref),
        ("p@10", "P_10", "exp", ref),
    ]
    for ours, theirs, gain, table in pairs:
        pq = metrics.per_query(ours, y, scores, qid, ties=ties, gain=gain)
        expected = np.array([table[str(q)][theirs] for q in pq.qids])
        np.testing.assert_allclose(pq.values, expected, rtol=0, atol=1e-12, err_msg=f"{ours} vs {theirs}")
        # trec_eval gives 0 to queries without a relevant document; so does no_relevant=0.
        filled = metrics.per_query(ours, y, scores, qid, ties=ties, gain=gain, no_relevant=0)
        all_expected = np.array([table[str(q)][theirs] for q in filled.qids])
        np.testing.assert_allclose(filled.values, all_expected, rtol=0, atol=1e-12)
        assert filled.n_undefined == pq.n_undefined == len(np.unique(qid)) - len(pq.qids) > 0


def test_mrr_cutoff_and_roc_against_sklearn(mq2008_scored):
    y, qid, all_scores = mq2008_scored
    scores = all_scores["model"]
    rr = metrics.per_query("mrr", y, scores, qid)
    rr10 = metrics.per_query("mrr@10", y, scores, qid)
    # RR@10 keeps RR when the first relevant document is in the top 10 (RR >= 1/10), else 0.
    np.testing.assert_allclose(rr10.values, np.where(rr.values >= 0.1 - 1e-15, rr.values, 0.0))
    roc = metrics.per_query("roc", y, scores, qid)
    checked = 0
    for q, v in zip(roc.qids, roc.values):
        m = qid == q
        if len(np.unique(scores[m])) < m.sum():
            continue  # sklearn counts a tie as half right, svmmap pessimistically as wrong
        assert v == pytest.approx(roc_auc_score(y[m] > 0, scores[m]), abs=1e-12)
        checked += 1
    assert checked > 0.9 * len(roc.qids)


def test_yue_toy_examples():
    # Table 1/2: relevance 1 0 0 0 0 1 1 0; h1 ranks document 1 first, h2 ranks it last.
    p = np.array([1, 0, 0, 0, 0, 1, 1, 0])
    h1 = np.arange(8, 0, -1)
    h2 = np.arange(1, 9)
    # h1: relevant at ranks 1, 6, 7 -> (1/1 + 2/6 + 3/7)/3 = 0.587; h2: 2, 3, 8 -> 0.514.
    assert metrics.mean_average_precision(p, h1) == pytest.approx((1 + 2 / 6 + 3 / 7) / 3)
    assert metrics.mean_average_precision(p, h2) == pytest.approx((1 / 2 + 2 / 3 + 3 / 8) / 3)
    assert round(metrics.mean_average_precision(p, h1), 2) == 0.59
    assert round(metrics.mean_average_precision(p, h2), 2) == 0.51
    # ROC: h1 orders 7 of the 15 pairs right, h2 orders 8.
    assert metrics.roc_auc(p, h1) == pytest.approx(7 / 15)
    assert metrics.roc_auc(p, h2) == pytest.approx(8 / 15)
    # Table 3/4: relevance 1 0 0 0 0 1 1 1 1 0 0. A larger rank value is ranked higher, so h1
    # lists documents 1..11 (relevant at ranks 1, 6, 7, 8, 9) and h2 lists 11..1 (relevant at
    # ranks 3, 4, 5, 6, 11).
    p = np.array([1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0])
    h1 = np.arange(11, 0, -1)
    h2 = np.arange(1, 12)
    assert metrics.mean_average_precision(p, h1) == pytest.approx((1 + 2 / 6 + 3 / 7 + 4 / 8 + 5 / 9) / 5)
    assert metrics.mean_average_precision(p, h2) == pytest.approx((1 / 3 + 2 / 4 + 3 / 5 + 4 / 6 + 5 / 11) / 5)
    assert round(metrics.mean_average_precision(p, h1), 2) == 0.56
    assert round(metrics.mean_average_precision(p, h2), 2) == 0.51


def test_conventions_by_hand():
    y = [2, 0, 1, 0]
    s = [1.0, 1.0, 0.5, 0.5]
    # Pessimistic: ranking 0-grade, 2, 0-grade, 1 -> relevant at ranks 2 and 4: AP = (1/2 + 2/4)/2.
    assert metrics.mean_average_precision(y, s) == pytest.approx(0.5)
    # Input order: 2, 0, 1, 0 -> relevant at 1 and 3: AP = (1 + 2/3)/2.
    assert metrics.mean_average_precision(y, s, ties="input") == pytest.approx(5 / 6)
    # NDCG, input order, exp gain: DCG = 3 + 1/log2(4) = 3.5; IDCG = 3 + 1/log2(3).
    assert metrics.ndcg(y, s, ties="input") == pytest.approx(3.5 / (3 + 1 / np.log2(3)))
    # Linear gain: DCG = 2 + 1/2; IDCG = 2 + 1/log2(3).
    assert metrics.ndcg(y, s, ties="input", gain="linear") == pytest.approx(2.5 / (2 + 1 / np.log2(3)))
    # AP over a total of 4 relevant documents (trec_eval's num_rel from qrels): (1 + 2/3)/4.
    assert metrics.mean_average_precision(y, s, ties="input", n_relevant=[4]) == pytest.approx((1 + 2 / 3) / 4)
    # SVM^map labels -1/+1 act as 0/1.
    assert metrics.ndcg([1, -1], [0.0, 1.0], ties="input") == pytest.approx(1 / np.log2(3))
    # P@3 divides by 3 even for two documents.
    assert metrics.precision_at(3, [1, 0], [1.0, 0.0]) == pytest.approx(1 / 3)


def test_no_relevant_policies_and_evaluate():
    y = [1, 0, 0, 0]
    s = [0.9, 0.1, 0.5, 0.4]
    qid = [1, 1, 2, 2]  # query 2 has no relevant document
    assert metrics.mean_average_precision(y, s, qid) == 1.0
    assert metrics.mean_average_precision(y, s, qid, no_relevant=0) == 0.5
    assert metrics.mean_average_precision(y, s, qid, no_relevant=1) == 1.0
    result = metrics.evaluate(y, s, qid, ["map", "ndcg@10", "roc"])
    assert result.n_queries == 2 and result.n_undefined == {"map": 1, "ndcg@10": 1, "roc": 1}
    assert result["map"] == 1.0 and list(result.per_query["map"].qids) == [1]
    with pytest.raises(ValueError, match="no_relevant"):
        metrics.mean_average_precision(y, s, qid, no_relevant="zero")
    with pytest.raises(ValueError, match="metric"):
        metrics.per_query("map@5", y, s, qid)
    with pytest.raises(ValueError, match="ties"):
        metrics.mean_average_precision(y, s, qid, ties="random")
    with pytest.raises(ValueError, match="y_true has 3 entries"):
        metrics.mean_average_precision(y[:3], s, qid)
