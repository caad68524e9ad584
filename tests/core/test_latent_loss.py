"""loss="ndcg@k:latent": NDCG@k with a latent target, trained by CCCP rounds from the map model.

The references here are written from the definitions (every ranking of small queries, NDCG@10
from its formula), not from svmmap's oracles or metrics.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from svmmap import SVMMap, _core, load_model, save_model
from svmmap._fit import latent as _latent
from svmmap.datasets import make_ranking
from svmmap.model_selection import SVMMapCV

from tests._support.brute import loss_of_rankings, permutations, psi_po_gap

LATENT = "ndcg@10:latent"


def latent_objective(w, X, y, q, k, C):
    """1/2 |w|^2 + C/n sum_q [max_y (Delta(y) + w.Psi(y)) - max_{y: Delta(y) = 0} w.Psi(y)], by
    enumerating every ranking of every query (Psi_po relative to the ideal ranking on both
    sides, which cancels)."""
    total, n = 0.0, 0
    for code in np.unique(q):
        rows = q == code
        rel = y[rows] > 0
        if rel.all() or not rel.any():
            continue
        s = X[rows] @ w
        perms = permutations(int(rows.sum()))
        loss = loss_of_rankings(f"ndcg@{k}", rel, perms)
        gap = psi_po_gap(s, rel, perms)
        total += float(np.max(loss + gap) - np.max(gap[loss <= 1e-12]))
        n += 1
    return 0.5 * float(w @ w) + C * total / n


def small_data(seed=0, n_queries=5, n_docs=7, n_features=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * n_docs, n_features))
    # About four of seven documents relevant: more than k = 2, so the target is not the ideal.
    y = (rng.random(n_queries * n_docs) < 0.6).astype(float)
    q = np.repeat(np.arange(n_queries), n_docs)
    y[::n_docs], y[1::n_docs] = 1.0, 0.0
    return X, y, q


def many_relevant(seed=0, n_queries=60):
    """About a third of 150 documents relevant per query (benchmarks/cutoff_losses.py's data)."""
    data = make_ranking(
        n_queries, 150, 30, label_fractions=(0.65, 0.35), size_spread=0.0, random_state=seed, dtype=np.float64
    )
    return data.X, data.y, data.qid


def ndcg_at(k, scores, y, q):
    """Mean NDCG@k (binary gains, discount 1/log2(1 + rank), ties ranked against the relevant
    documents) over the queries with a relevant document."""
    values = []
    for code in np.unique(q):
        rows = q == code
        rel = y[rows] > 0
        if not rel.any():
            continue
        s = scores[rows]
        # Ties: non-relevant documents first, the pessimistic convention.
        order = np.lexsort((rel, -s))
        gains = rel[order][:k].astype(float)
        discount = 1.0 / np.log2(np.arange(2, k + 2))
        ideal = discount[: min(k, int(rel.sum()))].sum()
        values.append(float((gains * discount[: gains.size]).sum() / ideal))
    return float(np.mean(values))


def fit(loss, C, X, y, q, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SVMMap(C=C, loss=loss, **params).fit(X, y, qid=q)


@pytest.mark.parametrize("C", [1.0, 30.0])
def test_every_round_lowers_the_objective_counted_by_enumeration(monkeypatch, C):
    # Each round's model is the fit stopped after r rounds (LATENT_MAX_ROUNDS = r); its
    # objective, computed by enumerating every ranking, is the one the fit reports for round r
    # and is not above the round before's. Round 0 is the map model at the same C.
    X, y, q = small_data()
    full = fit("ndcg@2:latent", C, X, y, q)
    assert full.n_rounds_ >= 1
    w_map = fit("map", C, X, y, q).coef_
    values = [latent_objective(w_map, X, y, q, 2, C)]
    for r in range(1, full.n_rounds_ + 1):
        monkeypatch.setattr(_latent, "LATENT_MAX_ROUNDS", r)
        values.append(latent_objective(fit("ndcg@2:latent", C, X, y, q).coef_, X, y, q, 2, C))
    np.testing.assert_allclose(full.round_objectives_, values, rtol=1e-9, atol=1e-12)
    assert all(b <= a for a, b in zip(values, values[1:]))
    assert values[-1] < values[0]


def test_the_round_limit_warns_with_convergence_warning(monkeypatch):
    X, y, q = small_data()
    monkeypatch.setattr(_latent, "LATENT_MAX_ROUNDS", 1)
    with pytest.warns(ConvergenceWarning, match="CCCP rounds"):
        model = SVMMap(C=30.0, loss="ndcg@2:latent").fit(X, y, qid=q)
    assert model.n_rounds_ == 1


def test_it_ranks_where_the_papers_loss_learns_zero_and_fits_ndcg_at_least_as_map():
    # C = 100 on 60 queries: the paper's ndcg@10 learns w = 0 (and says so); the latent loss
    # learns a model without that warning, whose training NDCG@10 is at least map's.
    X, y, q = many_relevant()
    with pytest.warns(_degenerate_warning()):
        paper = SVMMap(C=100.0, loss="ndcg@10").fit(X, y, qid=q)
    assert not np.any(paper.coef_)
    with warnings.catch_warnings():
        warnings.simplefilter("error", _degenerate_warning())
        latent = SVMMap(C=100.0, loss=LATENT).fit(X, y, qid=q)
    map_model = fit("map", 100.0, X, y, q)
    assert latent.n_rounds_ >= 1 and not latent.degenerate_
    assert ndcg_at(10, X @ latent.coef_, y, q) >= ndcg_at(10, X @ map_model.coef_, y, q)


def _degenerate_warning():
    from svmmap import DegenerateModelWarning

    return DegenerateModelWarning


def test_thread_counts_give_the_same_model():
    X, y, q = many_relevant(n_queries=30)
    one = fit(LATENT, 100.0, X, y, q, n_jobs=1)
    two = fit(LATENT, 100.0, X, y, q, n_jobs=2)
    assert one.n_rounds_ >= 1
    np.testing.assert_array_equal(one.coef_, two.coef_)
    assert one.round_objectives_ == two.round_objectives_


def test_save_and_load_round_trip(tmp_path):
    X, y, q = many_relevant(n_queries=20)
    model = fit(LATENT, 10.0, X, y, q)
    path = tmp_path / "latent.json"
    save_model(model, path)
    loaded = load_model(path)
    assert loaded.get_params()["loss"] == LATENT
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_cross_validation_fits_each_C_as_svmmap_does():
    X, y, q = many_relevant(n_queries=24)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = SVMMapCV(Cs=[1.0, 100.0], loss=LATENT, cv=2, scoring="ndcg@10").fit(X, y, qid=q)
    assert cv.best_C_ in (1.0, 100.0)
    np.testing.assert_array_equal(cv.best_estimator_.coef_, fit(LATENT, cv.best_C_, X, y, q).coef_)


@pytest.mark.parametrize(
    "loss",
    [["map", LATENT], {LATENT: 1.0}, "0.5*ndcg@10:latent", "max(map,ndcg@10:latent)"],
)
def test_combinations_are_refused_naming_the_alternative(loss):
    with pytest.raises(ValueError, match='alone.*combine the paper\'s "ndcg@k"'):
        _core.TrainConfig(loss=loss)


def test_other_latent_spellings_are_no_loss():
    for loss in ("mrr@10:latent", "ndcg:latent", "ndcg@10:paper:latent"):
        with pytest.raises(ValueError, match="ndcg@k:latent"):
            _core.TrainConfig(loss=loss)


def test_unsupported_options_are_refused_naming_the_alternative():
    X, y, q = small_data()
    with pytest.raises(ValueError, match='slack must be "separate"'):
        SVMMap(loss=LATENT, slack="shared").fit(X, y, qid=q)
    with pytest.raises(ValueError, match="sample_weight.*loss='map'"):
        SVMMap(loss=LATENT).fit(X, y, qid=q, sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="eval_set.*SVMMapCV"):
        SVMMap(loss=LATENT).fit(X, y, qid=q, eval_set=[(X, y)], eval_qid=[q])
    codes = q.astype(np.int64)
    from svmmap._data import CoreMatrix

    with pytest.raises(ValueError, match="CCCP rounds"):
        _core.fit_path(CoreMatrix.dense(X), y, codes, 5, _core.TrainConfig(loss=LATENT))


def test_dask_refuses_it_naming_the_alternative():
    pytest.importorskip("dask")
    from svmmap.dask import SVMMap as DaskSVMMap

    X, y, q = small_data()
    with pytest.raises(ValueError, match=r"svmmap.SVMMap\(loss='ndcg@10:latent'\).*'ndcg@10'"):
        DaskSVMMap(loss=LATENT).fit(X, y, qid=q)


def test_latent_target_coefficients_by_enumeration():
    # e.s = w.Psi(ideal) - max over rankings with the top m relevant of w.Psi, per query.
    rng = np.random.default_rng(5)
    for _ in range(40):
        n = int(rng.integers(3, 7))
        s = rng.integers(0, 3, n) * 0.5
        rel = rng.random(n) < 0.6
        rel[0], rel[-1] = True, False
        k = int(rng.integers(1, 4))
        e = _latent.latent_target_coefficients(s, rel, np.zeros(n, dtype=np.int64), 1, k)
        perms = permutations(n)
        m = min(k, int(rel.sum()))
        top_relevant = rel[perms[:, :m]].all(axis=1)
        assert e @ s == pytest.approx(-np.max(psi_po_gap(s, rel, perms)[top_relevant]), abs=1e-12)


def test_cli_learn_trains_the_model_svmmap_trains(tmp_path, capsys):
    from svmmap.cli import main
    from svmmap.datasets import mq2008_path
    from svmmap.io import load_letor

    model_path = tmp_path / "model.json"
    assert main(["learn", "-c", "10", "--loss", LATENT, mq2008_path(1), str(model_path)]) == 0
    assert "CCCP rounds from map" in capsys.readouterr().err
    X, y, q = load_letor(mq2008_path(1))
    expected = fit(LATENT, 10.0, X, y, q)
    np.testing.assert_array_equal(load_model(model_path).coef_, expected.coef_)


@pytest.mark.parametrize("kind", ["dense", "csr", "binned"])
def test_transpose_dot_against_the_materialized_matrix(kind):
    # X^T v, which each round's constant term needs, in every form a matrix reaches the core.
    import scipy.sparse as sp
    from svmmap import Binner
    from svmmap._data import CoreMatrix
    from svmmap._validation import check_matrix

    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 5))
    v = rng.normal(size=40)
    if kind == "binned":
        X[rng.random(X.shape) < 0.15] = np.nan
        binner = Binner(n_thresholds=4, missing="indicator").fit(X)
        matrix, _, _ = check_matrix(binner.transform(X))
        dense = binner.transform(X).toarray()
    else:
        matrix = CoreMatrix.dense(X) if kind == "dense" else check_matrix(sp.csr_array(X))[0]
        dense = X
    assert matrix.kind == kind
    np.testing.assert_allclose(matrix.transpose_dot(v), dense.T @ v, rtol=1e-12, atol=1e-12)
