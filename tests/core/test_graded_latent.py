"""loss="ndcg@k:graded:latent": graded NDCG@k (gain 2^grade - 1) with a latent target, and the
rule that the CCCP rounds of a latent loss stop before a round that goes to w = 0.

The references are written from the definitions (every ranking of small queries, graded NDCG@k
from its formula, the graded feature map pair by pair), not from svmmap's oracles or metrics.
"""

import itertools
import re
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from svmmap import SVMMap, _core
from svmmap._fit import latent as _latent

from tests._support.benchmarks import load

GRADED = "ndcg@2:graded:latent"


def rankings(n):
    return np.array(list(itertools.permutations(range(n))), dtype=np.int64)


def graded_ndcg_loss(grades, perms, k):
    """1 - DCG@K / DCG*@K of every ranking, gain 2^g - 1, discount 1/log2(2 + r) at rank r
    (0-based), K = min(k, n)."""
    top = min(k, perms.shape[1])
    discount = 1.0 / np.log2(np.arange(2, top + 2))
    gains = 2.0**grades - 1.0
    ideal = float(np.sort(gains)[::-1][:top] @ discount)
    return 1.0 - (gains[perms[:, :top]] @ discount) / ideal


def graded_pairs(scores, grades, perms):
    """w.Psi(y) for every ranking y: 1/Z sum over the Z pairs of different grades, i of the
    higher grade, of +-(s_i - s_j), + when i is ranked above j."""
    n = len(scores)
    rank = np.empty_like(perms)
    rank[np.arange(len(perms))[:, None], perms] = np.arange(n)[None, :]
    total = np.zeros(len(perms))
    z = 0
    for i in range(n):
        for j in range(n):
            if grades[i] > grades[j]:
                z += 1
                sign = np.where(rank[:, i] < rank[:, j], 1.0, -1.0)
                total += sign * (scores[i] - scores[j])
    return total / z


def pair_coefficients(grades, perm):
    """The vector a with a.s = w.Psi(perm) for every s (the same pairs as graded_pairs)."""
    n = len(grades)
    rank = np.empty(n, dtype=np.int64)
    rank[perm] = np.arange(n)
    a = np.zeros(n)
    z = 0
    for i in range(n):
        for j in range(n):
            if grades[i] > grades[j]:
                z += 1
                sign = 1.0 if rank[i] < rank[j] else -1.0
                a[i] += sign
                a[j] -= sign
    return a / z


def random_query(rng, tied):
    n = int(rng.integers(3, 7))
    grades = rng.integers(0, 4, n).astype(float)
    grades[0], grades[-1] = 0.0, float(rng.integers(1, 4))
    scores = rng.integers(0, 3, n) * 0.5 if tied else rng.normal(size=n)
    return scores, grades, int(rng.integers(1, 5))


def test_graded_target_coefficients_by_enumeration():
    # e.s = w.Psi(ideal) - max over the rankings of graded NDCG@k 1 of w.Psi, on queries with
    # up to four grades (some missing) and tied scores.
    rng = np.random.default_rng(11)
    for _ in range(150):
        s, g, k = random_query(rng, tied=True)
        n = len(s)
        e = _latent.graded_target_coefficients(s, g, np.zeros(n, dtype=np.int64), 1, k)
        perms = rankings(n)
        best = graded_ndcg_loss(g, perms, k) <= 1e-12
        ideal = pair_coefficients(g, np.argsort(-g, kind="stable"))
        target = np.max(graded_pairs(s, g, perms)[best])
        assert e @ s == pytest.approx(ideal @ s - target, abs=1e-12), (s, g, k)


def test_graded_target_coefficient_vectors_by_enumeration():
    # With distinct scores the target's pairs are unique, and so is e = a(ideal) - a(target).
    rng = np.random.default_rng(12)
    for _ in range(150):
        s, g, k = random_query(rng, tied=False)
        n = len(s)
        e = _latent.graded_target_coefficients(s, g, np.zeros(n, dtype=np.int64), 1, k)
        perms = rankings(n)
        best = np.flatnonzero(graded_ndcg_loss(g, perms, k) <= 1e-12)
        target = perms[best[np.argmax(graded_pairs(s, g, perms)[best])]]
        ideal = pair_coefficients(g, np.argsort(-g, kind="stable"))
        np.testing.assert_allclose(e, ideal - pair_coefficients(g, target), atol=1e-12)


def test_binary_grades_give_the_binary_latent_target():
    rng = np.random.default_rng(13)
    for _ in range(100):
        n = int(rng.integers(2, 30))
        s = rng.integers(0, 4, n) * 0.5
        rel = rng.random(n) < 0.5
        # Query codes 0 .. m - 1 (each with a row), in any order of the rows.
        _, codes = np.unique(rng.integers(0, 3, n), return_inverse=True)
        m = int(codes.max()) + 1
        k = int(rng.integers(1, 6))
        graded = _latent.graded_target_coefficients(s, rel.astype(float), codes, m, k)
        binary = _latent.latent_target_coefficients(s, rel, codes, m, k)
        np.testing.assert_allclose(graded, binary, atol=1e-15)


def graded_data(seed=0, n_queries=5, n_docs=6, n_features=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * n_docs, n_features))
    y = rng.integers(0, 3, n_queries * n_docs).astype(float)
    y[::n_docs], y[1::n_docs], y[2::n_docs] = 2.0, 1.0, 0.0
    # A signal in the first feature, so that the rounds have something to fit.
    X[:, 0] += 0.7 * y
    return X, y, np.repeat(np.arange(n_queries), n_docs)


def graded_latent_objective(w, X, y, q, k, C):
    """1/2 |w|^2 + C/n sum_q [max_y (Delta(y) + w.Psi(y)) - max_{y: Delta(y) = 0} w.Psi(y)] with
    graded NDCG@k and the graded pairs, by enumerating every ranking of every query."""
    total, n = 0.0, 0
    for code in np.unique(q):
        rows = q == code
        g = y[rows]
        s = X[rows] @ w
        perms = rankings(int(rows.sum()))
        loss = graded_ndcg_loss(g, perms, k)
        value = graded_pairs(s, g, perms)
        total += float(np.max(loss + value) - np.max(value[loss <= 1e-12]))
        n += 1
    return 0.5 * float(w @ w) + C * total / n


def fit(loss, C, X, y, q, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SVMMap(C=C, loss=loss, **params).fit(X, y, qid=q)


@pytest.mark.parametrize("C", [1.0, 30.0])
def test_every_graded_round_lowers_the_objective_counted_by_enumeration(monkeypatch, C):
    # As tests/core/test_latent_loss.py does for the binary loss: the fit stopped after r rounds
    # has the objective the full fit reports for round r, computed here by enumeration.
    X, y, q = graded_data()
    full = fit(GRADED, C, X, y, q)
    assert full.n_rounds_ >= 1
    values = [graded_latent_objective(fit("map", C, X, y, q).coef_, X, y, q, 2, C)]
    for r in range(1, full.n_rounds_ + 1):
        monkeypatch.setattr(_latent, "LATENT_MAX_ROUNDS", r)
        values.append(graded_latent_objective(fit(GRADED, C, X, y, q).coef_, X, y, q, 2, C))
    np.testing.assert_allclose(full.round_objectives_, values, rtol=1e-9, atol=1e-12)
    assert all(b <= a for a, b in zip(values, values[1:]))
    assert values[-1] < values[0]


def test_graded_spellings():
    assert _core.TrainConfig(loss="ndcg@10:graded:latent").latent == "ndcg@10:graded"
    for loss in ("ndcg@10:latent:graded", "ndcg:graded:latent"):
        with pytest.raises(ValueError, match="ndcg@k:graded:latent"):
            _core.TrainConfig(loss=loss)


def weak_many_relevant(seed=0):
    """60 queries of benchmarks/latent_collapse.py's data (50 relevant of 150 documents per
    query, grades 0-2, weak features), on which the rounds of "ndcg@10:latent" from the map
    model went to w = 0 at every C (issue 34)."""
    data = load("latent_collapse").weak_many_relevant(60, seed)
    return data.X, data.y, data.qid


@pytest.mark.parametrize("loss", ["ndcg@10:latent", "ndcg@10:graded:latent"])
def test_the_rounds_stop_before_w_zero_and_say_so(loss):
    # Before the rule the rounds went from the map model to w = 0 (a DegenerateModelWarning).
    # Now the model is the map model, which ranks, with a ConvergenceWarning whose figures are
    # the latent objective at the map model and at w = 0, checked here: F(0) = C H(0) = C (the
    # largest loss is 1 on every query) is below F(map), as the rule requires.
    from svmmap import DegenerateModelWarning

    X, y, q = weak_many_relevant()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        model = SVMMap(C=1.0, loss=loss).fit(X, y, qid=q)
    assert not any(issubclass(w.category, DegenerateModelWarning) for w in seen)
    notes = [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]
    assert len(notes) == 1 and "went to w = 0" in notes[0], notes
    assert not model.degenerate_ and np.any(model.coef_)
    start = fit("map", 1.0, X, y, q).coef_
    np.testing.assert_array_equal(model.coef_, start)
    assert model.n_rounds_ == 0
    stated = re.search(
        r"latent objective ([0-9.e+-]+)\) went to w = 0, whose latent objective C H\(0\) = ([0-9.e+-]+)", notes[0]
    )
    at_start, at_zero = float(stated.group(1)), float(stated.group(2))
    assert at_start == pytest.approx(model.round_objectives_[0], rel=1e-5)
    assert at_zero == pytest.approx(1.0) and at_zero < at_start


def test_the_graded_losss_degenerate_warning_advises_its_latent_counterpart_which_ranks():
    # On the weak-feature data the graded NDCG@10 loss learns w = 0; its warning names the graded
    # latent loss (not the binary one), and that loss gives a model that ranks there.
    from svmmap import DegenerateModelWarning

    X, y, q = weak_many_relevant()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        paper = SVMMap(C=1.0, loss="ndcg@10:graded").fit(X, y, qid=q)
    texts = [str(w.message) for w in seen if issubclass(w.category, DegenerateModelWarning)]
    assert paper.degenerate_ and len(texts) == 1
    assert "'ndcg@k:graded:latent'" in texts[0] and "'ndcg@k:latent'" not in texts[0], texts[0]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        model = SVMMap(C=1.0, loss="ndcg@10:graded:latent").fit(X, y, qid=q)
    assert not any(issubclass(w.category, DegenerateModelWarning) for w in seen)
    assert np.any(model.coef_) and not model.degenerate_
