"""Per-loss weights of SVM-combo (Chakrabarti et al.'s C_l = weight * C): a dict of loss names
to weights, or "weight*loss". A weight scales the loss and its feature map, so the hinge of
"0.1*ndcg@10" is a tenth of ndcg@10's (checked through the structured hinge, whose oracles are
checked against brute force), a list is the dict of its default weights, and the
shared-slack combination that learns w = 0 on MQ2008 learns a ranking model with small weights
on its cutoff losses; on queries with many relevant documents the default list ranks as well as
map alone where equal weights learn w = 0."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import svmmap
from svmmap import SVMMap, _core
from svmmap.datasets import load_mq2008, make_ranking
from svmmap.losses import loss_groups


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


def test_a_list_is_the_dict_of_its_default_weights_bit_for_bit(fold1):
    X, y, qid = fold1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        listed = SVMMap(C=1.0, loss=["map", "ndcg@10", "mrr@10"]).fit(X, y, qid=qid)
        weighted = SVMMap(C=1.0, loss={"map": 1.0, "ndcg@10": 0.1, "mrr@10": 0.0001}).fit(X, y, qid=qid)
    assert np.array_equal(listed.coef_, weighted.coef_)
    # The core takes (weight, loss) groups; a dict of ones is the plain losses, each with C.
    assert _core.TrainConfig(loss={"map": 1.0, "ndcg@10": 0.1}).losses == [[(1.0, "map")], [(0.1, "ndcg@10")]]
    assert _core.TrainConfig(loss={"map": 1, "ndcg@10": 1.0}).losses == [[(1.0, "map")], [(1.0, "ndcg@10")]]


@pytest.mark.parametrize(
    "listed, groups",
    [
        (["map", "ndcg@10", "mrr@10"], [["map"], ["0.1*ndcg@10"], ["0.0001*mrr@10"]]),
        # Divided by the largest: the leading kind keeps weight 1, so C keeps its meaning.
        (["ndcg@10", "mrr@10"], [["ndcg@10"], ["0.001*mrr@10"]]),
        (["mrr", "roc", "dorm@10:depth=30"], [["0.0001*mrr"], ["roc"], ["0.1*dorm@10:depth=30"]]),
        (["map", "roc", "pairwise", "ndcg"], [["map"], ["roc"], ["pairwise"], ["ndcg"]]),
        (["mrr@10", "mrr@5"], [["mrr@10"], ["mrr@5"]]),
        (["mrr@10"], [["mrr@10"]]),
        # A name with its own weight keeps it.
        (["map", "0.5*mrr@10"], [["map"], ["0.5*mrr@10"]]),
    ],
)
def test_the_default_weights_of_a_list(listed, groups):
    assert loss_groups(listed) == groups
    shared = loss_groups(listed, "shared")
    assert shared == ([[g[0] for g in groups]] if len(groups) > 1 else groups)

    # The core's (weight, name) pairs: the weights exactly the decimal numbers spelled above.
    def term(spelled):
        weight, _, name = spelled.rpartition("*")
        return (float(weight) if weight else 1.0, name)

    assert _core.TrainConfig(loss=listed).losses == [[term(g[0])] for g in groups]


def many_relevant_split(seed: int = 0):
    """make_ranking queries of about 150 documents, a third of them relevant, split into thirds
    (train, validation, test) of the queries."""
    X, y, qid = make_ranking(300, 150, 30, label_fractions=(0.67, 0.33), random_state=seed)
    parts = np.array_split(np.random.default_rng(seed).permutation(np.unique(qid)), 3)
    return [(X[np.isin(qid, p)], y[np.isin(qid, p)], qid[np.isin(qid, p)]) for p in parts]


def test_the_default_list_ranks_as_well_as_map_where_equal_weights_learn_nothing():
    """On queries with many relevant documents, equal weights are a zero model (phi_mrr's hinge
    has its optimum at w = 0); the list's default weights rank, within 1% of map alone in test
    MAP, both with C chosen on validation MAP."""
    train, vali, test = many_relevant_split()
    assert np.mean(train[1] > 0) == pytest.approx(1 / 3, abs=0.03)

    def chosen(loss, slack="separate"):
        best = None
        for C in (0.1, 1.0, 10.0):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = SVMMap(C=C, loss=loss, slack=slack).fit(train[0], train[1], qid=train[2])
            v = svmmap.metrics.mean_average_precision(vali[1], model.predict(vali[0]), vali[2])
            if best is None or v > best[0]:
                best = (v, model)
        return best[1]

    def test_map(model):
        return svmmap.metrics.mean_average_precision(test[1], model.predict(test[0]), test[2])

    alone = test_map(chosen("map"))
    for slack in ("separate", "shared"):
        equal = chosen({"map": 1, "ndcg@10": 1, "mrr@10": 1}, slack)
        assert not np.any(equal.coef_)
        default = chosen(["map", "ndcg@10", "mrr@10"], slack)
        assert np.any(default.coef_) and not default.degenerate_
        assert test_map(default) >= 0.99 * alone


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "0.1", True, None])
def test_a_weight_must_be_a_finite_positive_number(bad):
    with pytest.raises(ValueError, match='weight of loss "ndcg@10" must be a finite number > 0'):
        _core.TrainConfig(loss={"map": 1.0, "ndcg@10": bad})


def test_small_weights_on_the_cutoff_losses_make_the_shared_combination_rank(fold1):
    X, y, qid = fold1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        equal = SVMMap(C=1.0, loss={"map": 1, "ndcg@10": 1, "mrr@10": 1}, slack="shared").fit(X, y, qid=qid)
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
