"""What an unbriefed probe of the GA2M found: a Binner given its pairs by hand read neither y
nor qid and so checked neither (interactions=None and =k refuse a NaN label or a short y), and
SVMMapCV's refusal of a narrower validation set gave a Pipeline's advice, which does not apply
to it (it makes its own preprocessing from the X it is given)."""

import numpy as np
import pytest
import svmmap
from svmmap.datasets import make_ranking


def data():
    d = make_ranking(n_queries=30, docs_per_query=20, n_features=6, random_state=0)
    return d.X, np.asarray(d.y, dtype=float), d.qid


@pytest.mark.parametrize("interactions", [[(1, 3)], []])
def test_a_binner_with_pairs_by_hand_checks_y_and_qid_as_without_pairs(interactions):
    X, y, qid = data()
    bad_y = y.copy()
    bad_y[0] = np.nan
    n = X.shape[0]
    cases = [
        ({"y": bad_y, "qid": qid}, r"^y\[0\] is nan: labels must be finite numbers"),
        ({"y": y[:-1], "qid": qid}, rf"^y has {n - 1} entries but X has {n} rows"),
        ({"y": y, "qid": qid[:-1]}, rf"qid has {n - 1} entries"),
    ]
    for kwargs, message in cases:
        for given in (None, interactions):  # the same refusal with and without the pairs
            with pytest.raises(ValueError, match=message):
                svmmap.Binner(interactions=given).fit(X, kwargs["y"], qid=kwargs["qid"])
    # Good labels are accepted, and the pairs are those given.
    assert svmmap.Binner(interactions=interactions).fit(X, y, qid=qid).interactions_ == interactions


def test_a_binner_with_pairs_by_hand_says_its_validation_set_is_not_read():
    X, y, qid = data()
    with pytest.warns(UserWarning, match="eval_set is ignored: interactions lists its pairs"):
        svmmap.Binner(interactions=[(1, 3)]).fit(X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid])


def test_svmmapcv_refuses_a_narrower_validation_set_without_a_pipeline_s_advice():
    X, y, qid = data()
    with pytest.raises(ValueError) as info:
        svmmap.SVMMapCV(Cs=[1.0], cv="validation", preprocessing=["binned"]).fit(
            X, y, qid=qid, eval_set=[(X[:, :4], y)], eval_qid=[qid]
        )
    assert str(info.value) == "eval_set[0] has 4 features, but X has 6"
    # SVMMap's message keeps the advice, since inside a Pipeline its X is the steps' output.
    with pytest.raises(ValueError, match=r"inside a Pipeline, X is the output of the steps before"):
        svmmap.SVMMap().fit(X, y, qid=qid, eval_set=[(X[:, :4], y)], eval_qid=[qid])
