"""SVMMap inside a real PyTerrier pipeline: pt.ltr.apply_learned_model(..., form="ltr").

PyTerrier's LTRTransformer (pyterrier/ltr.py) calls ``learner.fit(X, y, group=sizes,
eval_set=[(X_va, y_va)], eval_group=[sizes_va])`` after sorting the rows by qid, and
``learner.predict(X)`` to score. The feature frames come from ``pt.Transformer.from_df``, so
no Java index is involved (PyTerrier imports and runs these parts without Java).
"""

import numpy as np
import pandas as pd
import pytest

pt = pytest.importorskip("pyterrier", reason="python-terrier is in the test extra: pip install '.[test]'")

from svmmap import SVMMap  # noqa: E402
from svmmap.datasets import load_mq2008  # noqa: E402
from svmmap.ir.trec import Qrels  # noqa: E402


def average_precision(labels: np.ndarray, scores: np.ndarray) -> float:
    """AP by its definition (scores here have no ties): mean precision at each relevant rank."""
    order = np.argsort(-scores, kind="stable")
    rel = labels[order] > 0
    if not rel.any():
        return 0.0
    hits = np.cumsum(rel)
    return float(np.mean(hits[rel] / (np.flatnonzero(rel) + 1)))


def frames(split: str, n_queries: int):
    """(topics, feature results, qrels) frames of the first queries of a bundled MQ2008 split."""
    s = load_mq2008(1, split)
    keep = np.isin(s.qid, np.unique(s.qid)[:n_queries])
    X, y, qid = s.X[keep], s.y[keep], s.qid[keep].astype(str)
    docno = np.array([f"{split}-{i}" for i in range(len(y))])
    res = pd.DataFrame({"qid": qid, "docno": docno, "features": list(X)})
    qrels = pd.DataFrame({"qid": qid, "docno": docno, "label": y.astype(int)})
    topics = pd.DataFrame({"qid": pd.unique(qid), "query": "unused"})
    return topics, res, qrels, (X, y, qid, docno)


# PyTerrier's add_ranks calls DataFrame.drop(inplace=True), which pandas >= 3.1 deprecates;
# that is PyTerrier's to change, not ours.
@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame")
def test_apply_learned_model_form_ltr_trains_and_ranks():
    tr_topics, tr_res, tr_qrels, (X, y, qid, _) = frames("train", 120)
    va_topics, va_res, va_qrels, (Xv, yv, qv, _) = frames("vali", 40)
    te_topics, te_res, te_qrels, (Xt, yt, qt, dt) = frames("test", 40)
    # One source frame holds the features of every split; from_df selects rows by qid.
    source = pt.Transformer.from_df(pd.concat([tr_res, va_res, te_res], ignore_index=True))
    learner = SVMMap(C=10.0)
    pipe = source >> pt.ltr.apply_learned_model(learner, form="ltr")
    pipe.fit(tr_topics, tr_qrels, va_topics, va_qrels)

    # The model is the one fitted with qid= on the same rows (PyTerrier reorders queries by
    # qid, which only changes the order of floating-point sums).
    direct = SVMMap(C=10.0).fit(X, y, qid=qid)
    np.testing.assert_allclose(learner.coef_, direct.coef_, rtol=1e-6, atol=1e-9)

    # The validation set was scored at every iteration; the last value is the MAP of coef_
    # on it, computed here from its definition.
    curve = learner.evals_result_["valid_0"]["map"]
    assert len(curve) == learner.n_iter_
    scores_v = Xv @ learner.coef_
    aps = [average_precision(yv[qv == q], scores_v[qv == q]) for q in np.unique(qv) if (yv[qv == q] > 0).any()]
    assert curve[-1] == pytest.approx(np.mean(aps), abs=1e-12)

    # Ranking: the scores are X @ coef_, and ranks go by decreasing score within a query.
    ranked = pipe.transform(te_topics)
    assert len(ranked) == len(yt)
    expected = dict(zip(dt, Xt @ learner.coef_))
    np.testing.assert_allclose(ranked["score"].to_numpy(), [expected[d] for d in ranked["docno"]], rtol=1e-12)
    for _, g in ranked.groupby("qid"):
        assert list(g.sort_values("rank")["score"]) == sorted(g["score"], reverse=True)

    # PyTerrier's own evaluation (ir_measures / trec_eval conventions: a query without a
    # relevant document counts with AP 0) agrees with AP computed by hand.
    result = pt.Experiment([pipe], te_topics, te_qrels, eval_metrics=["map"], names=["svmmap"])
    scores_t = Xt @ learner.coef_
    hand = np.mean([average_precision(yt[qt == q], scores_t[qt == q]) for q in np.unique(qt)])
    assert float(result["map"].iloc[0]) == pytest.approx(hand, abs=1e-9)


def test_pyterrier_qrels_frames_are_qrels():
    _, _, qrels, (_, y, qid, docno) = frames("test", 5)
    q = Qrels.from_frame(qrels)
    assert len(q) == len(y)
    np.testing.assert_array_equal(q.labels(qid, docno), y)
