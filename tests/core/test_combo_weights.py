"""Per-loss weights of SVM-combo (Chakrabarti et al.'s C_l = weight * C): a dict of loss names
to weights, or "weight*loss". A weight scales the loss and its feature map, so the hinge of
"0.1*ndcg@10" is a tenth of ndcg@10's (checked through the structured hinge, whose oracles are
checked against brute force), weights of 1 give the unweighted model bit for bit, and the
shared-slack combination that learns w = 0 on MQ2008 learns a ranking model with small weights
on its cutoff losses."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import svmmap
from svmmap import SVMMap, _core
from svmmap.datasets import load_mq2008, make_ranking


@pytest.fixture(scope="module")
def fold1():
    return load_mq2008(fold=1, split="train")


def test_a_weighted_hinge_is_the_weight_times_the_hinge():
    X, y, qid = make_ranking(20, 30, 5, random_state=1)
    scores = X.astype(np.float64) @ np.linspace(-1.0, 1.0, X.shape[1])
    for loss in ("map", "ndcg@10", "mrr@10", "pairwise"):
        plain, grad = svmmap.structured_hinge(scores, y, qid=qid, loss=loss)
        weighted, wgrad = svmmap.structured_hinge(scores, y, qid=qid, loss=f"0.1*{loss}")
        assert weighted == pytest.approx(0.1 * plain, rel=1e-12, abs=1e-15)
        np.testing.assert_allclose(wgrad, 0.1 * grad, rtol=1e-12, atol=1e-15)


def test_weights_of_one_train_the_unweighted_model_bit_for_bit(fold1):
    X, y, qid = fold1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        listed = SVMMap(C=1.0, loss=["map", "ndcg@10"]).fit(X, y, qid=qid)
        weighted = SVMMap(C=1.0, loss={"map": 1.0, "ndcg@10": 1}).fit(X, y, qid=qid)
    assert np.array_equal(listed.coef_, weighted.coef_)
    assert _core.TrainConfig(loss={"map": 1.0, "ndcg@10": 0.1}).losses == [["map"], ["0.1*ndcg@10"]]


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "0.1", True, None])
def test_a_weight_must_be_a_finite_positive_number(bad):
    with pytest.raises(ValueError, match='weight of loss "ndcg@10" must be a finite number > 0'):
        _core.TrainConfig(loss={"map": 1.0, "ndcg@10": bad})


def test_small_weights_on_the_cutoff_losses_make_the_shared_combination_rank(fold1):
    X, y, qid = fold1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        equal = SVMMap(C=1.0, loss=["map", "ndcg@10", "mrr@10"], slack="shared").fit(X, y, qid=qid)
        weighted = SVMMap(C=1.0, loss={"map": 1.0, "ndcg@10": 0.1, "mrr@10": 0.1}, slack="shared").fit(X, y, qid=qid)
    assert equal.degenerate_ and not np.any(equal.coef_)
    assert not weighted.degenerate_ and np.any(weighted.coef_)


def test_a_weighted_model_saves_and_loads(fold1, tmp_path):
    X, y, qid = fold1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SVMMap(C=1.0, loss={"map": 1.0, "mrr@10": 0.1}).fit(X, y, qid=qid)
    model.save(tmp_path / "m.json")
    again = svmmap.load_model(tmp_path / "m.json")
    assert again.loss == {"map": 1.0, "mrr@10": 0.1}
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
