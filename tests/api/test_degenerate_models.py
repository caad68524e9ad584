"""Models that rank nothing are reported, never returned or chosen silently (the losses issue).

On MQ2008, MRR@10 with Chakrabarti et al.'s phi_mrr has w = 0 as its optimum: queries have many
relevant documents against the cutoff. That 0 is optimal is checked here independently of the
solver, through the structured hinge (whose oracles are checked against brute force elsewhere):
the objective P(t d) = t^2/2 |d|^2 + C R(t d) does not fall below P(0) along any of many random
directions d, at several step lengths t. MAP on the same data is not degenerate.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import svmmap
from svmmap import DegenerateModelWarning, SVMMap, SVMMapCV
from svmmap._fit.degenerate import score_spread, ties_within_every_query
from svmmap.datasets import load_mq2008

from tests._support.benchmarks import load


@pytest.fixture(scope="module")
def fold1():
    return load_mq2008(fold=1, split="train")


def _fit(X, y, qid, **params):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", svmmap.SkippedQueriesWarning)
        model = SVMMap(**params).fit(X, y, qid=qid)
    return model, [w for w in seen if issubclass(w.category, DegenerateModelWarning)]


def _objective(w, X, y, qid, C, loss):
    """P(w) by the structured hinge, not by the solver: 1/2 |w|^2 + C * mean hinge over the
    usable queries (the hinge's value is that mean)."""
    hinge, _ = svmmap.structured_hinge(X @ w, y, qid=qid, loss=loss)
    return 0.5 * float(w @ w) + C * hinge


def test_zero_optimum_is_reported_with_its_certificate(fold1):
    X, y, qid = fold1
    model, seen = _fit(X, y, qid, C=10.0, loss="mrr@10")
    assert not np.any(model.coef_)
    assert len(seen) == 1
    text = str(seen[0].message)
    for piece in (
        "mrr@10",
        "w = 0",
        "dual bound",
        "At C = 10 the solver certifies",
        "which no fit proves",
        "loss='map'",
    ):
        assert piece in text, (piece, text)
    # It claims nothing for other values of C (a fit certifies its own C only).
    assert "no C gives another model" not in text
    # Independent check that 0 is (near) optimal: no direction lowers the objective.
    p0 = _objective(np.zeros(X.shape[1]), X, y, qid, 10.0, "mrr@10")
    rng = np.random.default_rng(0)
    for _ in range(20):
        d = rng.standard_normal(X.shape[1])
        d /= np.linalg.norm(d)
        for t in (1e-3, 1e-2, 1e-1, 1.0):
            assert _objective(t * d, X, y, qid, 10.0, "mrr@10") >= p0 - model.gap_ - 1e-9
    # And the model MAP learns does lower it for MAP's own loss: the check can fail.
    w_map = _fit(X, y, qid, C=10.0, loss="map")[0].coef_
    assert _objective(w_map, X, y, qid, 10.0, "map") < _objective(0 * w_map, X, y, qid, 10.0, "map")


def test_a_model_that_ranks_gives_no_warning(fold1):
    X, y, qid = fold1
    model, seen = _fit(X, y, qid, C=10.0, loss="map")
    assert np.any(model.coef_) and not seen


def test_cv_prefers_a_C_whose_model_ranks_and_warns_when_none_does(fold1):
    X, y, qid = fold1
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", svmmap.SkippedQueriesWarning)
        cv = SVMMapCV(Cs=[0.1, 10.0], loss="mrr@10", cv=3, refit=False).fit(X, y, qid=qid)
    # mrr@10 leaves w = 0 on at least one of the 3 query folds at every C (on all of
    # GroupKFold's folds; QueryKFold's folds at C = 10 rank on one of them), so no C ranks on
    # every split and the search says so.
    assert all(1 <= n <= 3 for n in cv.cv_results_["n_degenerate_splits"])
    assert any(issubclass(w.category, DegenerateModelWarning) and "every C" in str(w.message) for w in seen)
    ranking = SVMMapCV(Cs=[0.1, 10.0], cv=3, refit=False).fit(X, y, qid=qid)
    assert list(ranking.cv_results_["n_degenerate_splits"]) == [0, 0]


def test_ties_within_every_query_by_hand():
    codes = np.array([0, 0, 1, 1, 2, 2])
    labels = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 1.0])  # query 2 has one label: it cannot rank
    tied = np.array([0.0, -0.0, 3.0, 3.0, 1.0, 2.0])
    assert score_spread(tied, labels, codes) is False
    assert ties_within_every_query([score_spread(tied, labels, codes)])
    spread = np.array([0.0, 0.0, 3.0, 2.0, 1.0, 1.0])
    assert score_spread(spread, labels, codes) is True
    assert not ties_within_every_query([score_spread(spread, labels, codes)])
    assert score_spread(np.zeros(2), np.ones(2), np.zeros(2, dtype=int)) is None
    assert not ties_within_every_query([None])
    # Parts of the data (Dask partitions) hold whole queries: one part with a spread query
    # means the model ranks; parts without a two-label query say nothing.
    first, second = slice(0, 4), slice(4, 6)
    parts = [
        score_spread(tied[first], labels[first], codes[first]),
        score_spread(tied[second], labels[second], codes[second] - 2),
    ]
    assert parts == [False, None] and ties_within_every_query(parts)
    assert not ties_within_every_query([False, None, True])


def test_the_one_C_selection_loop_never_prefers_a_model_that_ranks_nothing():
    from types import SimpleNamespace

    from svmmap._search.selection import choose_C

    flat, ranks = SimpleNamespace(degenerate_=True), SimpleNamespace(degenerate_=False)
    # C = 1 scores best, but its model ranks nothing: its score is how ties were broken.
    models = {0.1: (0.4, ranks), 1.0: (0.9, flat), 10.0: (0.5, ranks)}
    assert choose_C([0.1, 1.0, 10.0], lambda C: models[C]).C == 10.0
    with pytest.warns(DegenerateModelWarning, match="at every C"):
        chosen = choose_C([0.1, 1.0], lambda C: (0.3 if C == 0.1 else 0.2, flat))
    assert chosen.C == 0.1


def test_the_letor_experiment_says_when_every_C_ranks_nothing(fold1):
    from svmmap.datasets import mq2008_folds
    from svmmap.ir.experiment import run_folds

    first = next(iter(mq2008_folds()))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        results = run_folds([first], [0.1, 10.0], loss="mrr@10")
    assert results[0].best_C == 0.1
    assert any(issubclass(w.category, DegenerateModelWarning) and "at every C" in str(w.message) for w in seen)


@pytest.mark.parametrize("loss", ["map", "ndcg", "pairwise", "roc", "ndcg@10:latent"])
def test_each_loss_the_degenerate_warning_advises_ranks_on_that_data(fold1, loss):
    """The warning of the mrr@10 fit above advises these losses (and a larger k); each must
    give a model that ranks on the same data, or the advice is wrong."""
    X, y, qid = fold1
    _, seen = _fit(X, y, qid, C=10.0, loss="mrr@10")
    assert f"'{loss}'" in str(seen[0].message) or loss == "ndcg@10:latent" and "ndcg@k:latent" in str(seen[0].message)
    model, seen_here = _fit(X, y, qid, C=10.0, loss=loss)
    assert np.any(model.coef_) and not model.degenerate_ and not seen_here


def test_a_latent_loss_is_never_told_to_train_itself(fold1):
    from svmmap._fit.degenerate import advice

    assert "ndcg@k:latent" in advice("ndcg@10")
    assert "ndcg@k:latent" not in advice("ndcg@10:latent")


def test_cv_counts_the_splits_whose_model_ranks_nothing_when_only_some_do():
    """Three groups of 10 queries: in B every feature is constant within each query, so any
    model's scores tie there; A and C carry signal. With B as the validation data of one split
    of three, that split ranks nothing at every C and the other two rank: the warning must say
    1 of 3 per C, not that the model ranks nothing."""
    rng = np.random.default_rng(0)
    X, y, qid = [], [], []
    for q in range(30):
        labels = np.array([1, 0, 0, 1, 0, 0])
        features = rng.normal(size=(6, 3)) + np.outer(labels, [1.0, 0.5, 0.0])
        if 10 <= q < 20:
            features = np.repeat(features[:1], 6, axis=0)
        X.append(features)
        y.append(labels)
        qid.append(np.full(6, q))
    X, y, qid = np.vstack(X), np.concatenate(y), np.concatenate(qid)
    groups = [np.flatnonzero((qid >= lo) & (qid < lo + 10)) for lo in (0, 10, 20)]
    splits = [(np.concatenate([groups[a], groups[b]]), groups[t]) for a, b, t in ((0, 2, 1), (0, 1, 2), (1, 2, 0))]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cv = SVMMapCV(Cs=[0.1, 10.0], cv=splits, refit=False).fit(X, y, qid=qid)
    assert list(cv.cv_results_["n_degenerate_splits"]) == [1, 1]
    texts = [str(w.message) for w in seen if issubclass(w.category, DegenerateModelWarning)]
    assert len(texts) == 1
    assert "C = 0.1: 1 of 3, C = 10: 1 of 3" in texts[0]
    assert "of some split" in texts[0] and "of every split" not in texts[0]


def _latent_hinge(scores, y, qid, k=10):
    """The mean latent NDCG@k hinge from its definition: the paper's hinge (the structured
    hinge of "ndcg@k", whose oracle is checked against brute force) plus w.Psi_po(ideal) -
    w.Psi_po(target), the target ranking the min(P, k) best-scored relevant documents first and
    the rest in score order; the difference sums, over pairs (i relevant outside the top,
    j non-relevant scored strictly above i), 2 (s_i - s_j) / (P N)."""
    total, _ = svmmap.structured_hinge(scores, y, qid=qid, loss=f"ndcg@{k}")
    extra = []
    for q in np.unique(qid):
        s, rel = scores[qid == q], y[qid == q] > 0
        pos, neg = np.sort(s[rel])[::-1], s[~rel]
        if pos.size == 0 or neg.size == 0:
            continue
        rest = pos[min(pos.size, k) :]
        diff = rest[:, None] - neg[None, :]
        extra.append(2.0 * np.sum(np.where(diff < 0, diff, 0.0)) / (pos.size * neg.size))
    # structured_hinge sums over the queries that have a relevant and a non-relevant document.
    return (total + float(np.sum(extra))) / len(extra)


def test_a_latent_fit_that_stops_before_zero_says_what_the_objective_prefers():
    """Queries of 150 documents, 50 relevant, whose features rank them weakly: the first CCCP
    round goes from the map model to w = 0. The rounds stop before it (the model is the map
    model, which ranks), and the ConvergenceWarning says that along the map model's direction
    the latent hinge never falls below its value at w = 0; checked here from the hinge's
    definition at the same multiples, and its value at w = 0 (1: the largest loss)."""
    from sklearn.exceptions import ConvergenceWarning
    from svmmap._fit.latent import ZERO_RAY
    from svmmap.datasets import make_ranking

    # benchmarks/latent_collapse.py's data, in float32 (make_ranking's default) and then widened.
    data = load("latent_collapse").weak_many_relevant(60, 0, dtype=np.float32)
    X, y, qid = data.X.astype(np.float64), data.y, data.qid
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        model = SVMMap(C=1.0, loss="ndcg@10:latent").fit(X, y, qid=qid)
    assert not any(issubclass(w.category, DegenerateModelWarning) for w in seen)
    notes = [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]
    assert not model.degenerate_ and model.n_rounds_ == 0 and len(notes) == 1
    text = notes[0]
    assert "prefers w = 0 to every multiple of the map model at every C" in text, text
    start = _fit(X, y, qid, C=1.0, loss="map")[0].coef_
    np.testing.assert_array_equal(model.coef_, start)
    assert _latent_hinge(np.zeros(len(y)), y, qid) == pytest.approx(1.0)
    for t in ZERO_RAY:
        assert _latent_hinge(X @ (t * start), y, qid) >= 1.0 - 1e-9, t
    # The warning's figure for the start agrees with the definition (which checks its sign).
    import re

    stated = float(re.search(r"map model \(latent objective ([0-9.e+-]+)\)", text).group(1))
    assert 0.5 * float(start @ start) + _latent_hinge(X @ start, y, qid) == pytest.approx(stated, rel=1e-5)
    # Where the features rank the relevant documents well, the same loss learns a model.
    clean = make_ranking(60, 150, 25, label_fractions=(0.67, 0.2, 0.13), size_spread=0.0, random_state=0)
    ranked, seen = _fit(clean.X, clean.y, clean.qid, C=1.0, loss="ndcg@10:latent")
    assert not ranked.degenerate_ and not seen


def test_a_fit_stopped_by_a_callback_says_so_once():
    """Features constant within each query tie every document of a query whatever w is: the
    model ranks nothing. Stopped by a callback at the first round, the warning said twice that
    training was stopped before the optimum was certified."""
    qid = np.repeat(np.arange(6), 4)
    X = np.repeat(np.arange(6.0), 4)[:, None] * [1.0, -2.0]
    y = np.tile([1, 0, 0, 1], 6)
    with pytest.warns(svmmap.DegenerateModelWarning) as caught:
        SVMMap(callback=lambda record: True).fit(X, y, qid=qid)
    text = str(caught[0].message)
    assert text.count("before the optimum was certified") == 1, text
    assert "The gap was" in text
