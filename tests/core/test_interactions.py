"""Pairwise interactions (GA2M, issue 35): the pair codes stand for the cell indicators written
from their definition, the model trained on them is the one trained on the indicators, FAST
finds planted pairs, and the fitted pairs survive dicts, model files and piecewise_scores."""

import json

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from svmmap import Binner, SVMMap, load_model, piecewise_scores, save_model
from svmmap._fit.pairs import coarse_indices, interaction_scores, query_halves
from svmmap.binning import StepSurface
from svmmap.datasets import make_ranking


def _cell_indicators(X, binner):
    """The pairs' columns from the raw values: 1[x_i > s and x_j > t], 0 when either is NaN."""
    cols = []
    for (i, j), (ki, kj) in zip(binner.interactions_, binner.interaction_thresholds_):
        for s in ki:
            for t in kj:
                with np.errstate(invalid="ignore"):
                    cols.append((X[:, i] > s) & (X[:, j] > t))
    return np.column_stack(cols).astype(np.float64)


def test_pair_columns_are_the_cell_indicators_of_the_raw_values():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    X[:, 2] = rng.integers(0, 3, size=400)  # few distinct values: all of them coarse
    X[rng.random(X.shape) < 0.1] = np.nan
    binner = Binner(n_thresholds=20, missing="indicator", interactions=[(0, 1), (2, 3)], interaction_bins=4)
    B = binner.fit(X).transform(X)
    assert B.codes.shape == (400, 6)
    # Feature 0 has 20 thresholds: 4 coarse ones; feature 2 has 2 thresholds: both.
    assert [len(k) for k in binner.interaction_thresholds_[0]] == [4, 4]
    assert [len(k) for k in binner.interaction_thresholds_[1]] == [2, 4]
    base = Binner(n_thresholds=20, missing="indicator").fit(X).transform(X).toarray()
    expect = np.hstack([base, _cell_indicators(X, binner)])
    np.testing.assert_array_equal(B.toarray(), expect)
    assert B.shape == expect.shape == (400, binner.n_output_features_)
    as_csr = Binner(n_thresholds=20, missing="indicator", interactions=[(0, 1), (2, 3)], interaction_bins=4)
    np.testing.assert_array_equal(as_csr.set_params(output="indicators").fit(X).transform(X).toarray(), expect)
    names = binner.get_feature_names_out()
    assert len(names) == expect.shape[1]
    s, t = float(binner.interaction_thresholds_[0][0][0]), float(binner.interaction_thresholds_[0][1][1])
    assert names[base.shape[1] + 1] == f"x0>{s!r}&x1>{t!r}"


def test_coarse_thresholds_are_every_few_thresholds():
    # 11 thresholds into 3 coarse ones: at (t + 1) * 12 / 4 - 1 = 2, 5, 8 (quartiles of 12 bins).
    assert coarse_indices(11, 3).tolist() == [2, 5, 8]
    assert coarse_indices(2, 3).tolist() == [0, 1]


def test_fast_score_of_a_two_by_two_table_by_hand():
    # Residual sums and counts of a 2 x 2 table with 10 documents per cell: cell means
    # (+1, -1; -1, +1) are a pure interaction; row, column and total sums are 0, so the
    # reduction is sum(sums^2 / counts) = 4 * 100 / 10 = 40, less the variance 0.5 times one
    # degree of freedom (4 cells - 2 rows - 2 columns + 1).
    sums = np.array([10.0, -10.0, -10.0, 10.0])
    counts = np.full(4, 10.0)
    scores, bars = interaction_scores(sums, counts, [(2, 2)], 0.5)
    assert scores.tolist() == [40.0 - 0.5]
    # One candidate: t = ln 1 + ln 20, bar = 0.5 * (2 sqrt(1 * t) + 2 t).
    t = np.log(20.0)
    assert bars.tolist() == pytest.approx([0.5 * (2 * np.sqrt(t) + 2 * t)])
    # Means (1, 1; -1, -1): a main effect of the first feature only, no interaction.
    main = np.array([10.0, 10.0, -10.0, -10.0])
    assert interaction_scores(main, counts, [(2, 2)], 0.0)[0].tolist() == [0.0]


@pytest.mark.parametrize("seed", [0, 1])
def test_fast_recovers_planted_pairs(seed):
    planted = [(3, 17, 1.0), (8, 25, 0.7)]
    X, y, qid = make_ranking(
        n_queries=200, docs_per_query=50, n_features=30, interactions=planted, random_state=seed, shuffle=True
    )
    # Up to 4 pairs asked for: the two planted ones help on the queries that did not choose
    # them, no other does; the stronger planted pair reduces the held-out residual more.
    binner = Binner(interactions=4).fit(X, y, qid=qid)
    assert binner.interactions_ == [(3, 17), (8, 25)]
    assert np.all(np.diff(binner.interaction_scores_) <= 0) and np.all(binner.interaction_scores_ > 0)
    # Without planted pairs no pair helps out of sample, so none is kept.
    X0, y0, q0 = make_ranking(n_queries=200, docs_per_query=50, n_features=30, random_state=seed)
    none = Binner(interactions=4).fit(X0, y0, qid=q0)
    assert none.interactions_ == [] and none.interaction_scores_.shape == (0,)
    assert none.n_output_features_ == Binner().fit(X0).n_output_features_


def test_a_pair_that_helps_one_query_alone_is_not_kept():
    # Query 0 (400 documents) is all interaction: label 4 where features 0 and 1 are both
    # positive, else 0. In the other 40 queries (30 documents each) the label is feature 2's
    # step alone. On all queries at once the pair (0, 1) reduces the residual far beyond
    # chance (the earlier in-sample rule kept it), but it helps only the one query: the half
    # that holds query 0 chooses it, and the other half, judging it, has no interaction for
    # it to fit (nor does a t test over queries pass on one query's gain).
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(41), [400] + [30] * 40)
    X = rng.normal(size=(qid.size, 6))
    y = (X[:, 2] > 0.5).astype(np.float64)
    one = qid == 0
    y[one] = 4.0 * ((X[one, 0] > 0) & (X[one, 1] > 0))
    assert Binner(interactions=3).fit(X, y, qid=qid).interactions_ == []
    # The same interaction (half the size) in every query is kept.
    y_all = (X[:, 2] > 0.5) + 2.0 * ((X[:, 0] > 0) & (X[:, 1] > 0))
    assert Binner(interactions=3).fit(X, y_all, qid=qid).interactions_ == [(0, 1)]


def test_query_halves_keep_queries_whole_and_balanced():
    qid = np.repeat(np.array([7, 3, 9, 1, 5]), [4, 1, 3, 2, 6])[::-1]
    half = query_halves(qid, qid.size)
    for q in np.unique(qid):
        assert np.unique(half[qid == q]).size == 1
    # Five queries: two in one half, three in the other.
    per_query = [int(half[qid == q][0]) for q in np.unique(qid)]
    assert sorted([per_query.count(0), per_query.count(1)]) == [2, 3]
    assert (
        Binner(interactions=2)
        .fit(np.ones((6, 2)) * np.arange(6)[:, None], np.arange(6) % 2, qid=np.zeros(6))
        .interactions_
        == []
    )


def test_model_on_pair_codes_is_the_model_on_indicators():
    X, y, qid = make_ranking(n_queries=40, docs_per_query=30, n_features=6, interactions=1, random_state=3)
    B = Binner(n_thresholds=10, interactions=[(0, 1), (2, 4)], interaction_bins=3).fit(X).transform(X)
    on_codes = SVMMap(C=1.0).fit(B, y, qid=qid)
    on_csr = SVMMap(C=1.0).fit(B.to_csr(), y, qid=qid)
    np.testing.assert_allclose(on_codes.coef_, on_csr.coef_, atol=1e-9)
    np.testing.assert_allclose(on_codes.predict(B), B.to_csr() @ on_codes.coef_, atol=1e-9)
    assert on_codes.feature_importances_.shape == (B.shape[1],)


def _ga2m(X, y, qid, **binner):
    model = make_pipeline(Binner(n_thresholds=12, **binner), SVMMap(C=10.0))
    return model.fit(X, y, binner__qid=qid, svmmap__qid=qid)


def test_piecewise_scores_with_surfaces_sum_to_predict():
    X, y, qid = make_ranking(n_queries=60, docs_per_query=30, n_features=6, interactions=1, random_state=4)
    X = X.astype(np.float64)
    X[np.random.default_rng(0).random(X.shape) < 0.05] = np.nan
    model = _ga2m(X, y, qid, missing="indicator", interactions=[(0, 1), (2, 4)], interaction_bins=5)
    parts = piecewise_scores(model)
    assert len(parts) == 8 and all(isinstance(p, StepSurface) for p in parts[6:])
    assert parts[6].index == (0, 1)
    total = sum(parts[j](X[:, j]) for j in range(6))
    total = total + sum(p(X[:, p.index[0]], X[:, p.index[1]]) for p in parts[6:])
    np.testing.assert_allclose(total, model.predict(X), atol=1e-9)
    assert parts[6].values.shape == (6, 6) and np.all(parts[6].values[0] == 0)


def test_pairs_survive_dicts_and_model_files(tmp_path):
    X, y, qid = make_ranking(n_queries=40, docs_per_query=30, n_features=6, interactions=1, random_state=5)
    model = _ga2m(X, y, qid, interactions=1, interaction_bins=4)
    d = json.loads(json.dumps(model[0].to_dict()))
    assert d["version"] == 2 and d["interactions"][0]["features"] == [0, 1]
    again = Binner.from_dict(d)
    np.testing.assert_array_equal(again.transform(X).codes, model[0].transform(X).codes)
    assert again.interactions_ == model[0].interactions_
    save_model(model, tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    # Without pairs the dict is version 1 and has no "interactions", as before pairs.
    plain = Binner(n_thresholds=12).fit(X).to_dict()
    assert plain["version"] == 1 and "interactions" not in plain and "interactions" not in plain["params"]
    bad = json.loads(json.dumps(d))
    bad["interactions"][0]["thresholds"][0] = [0.123456]
    with pytest.raises(ValueError, match="must be at most 63 of its thresholds"):
        Binner.from_dict(bad)


def test_data_without_planted_pairs_is_unchanged_by_the_option():
    a = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=7)
    b = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=7, interactions=None)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    X, y, _ = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=7, interactions=[(1, 4, 2.0)])
    # The planted features are standard normal noise of their own.
    assert abs(float(np.mean(X[:, 1]))) < 0.2 and 0.8 < float(np.std(X[:, 4])) < 1.2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"interactions": -1}, "interactions must be None, a count >= 0 or a list of pairs"),
        ({"interactions": [(1, 1)]}, "two different feature indices"),
        ({"interactions": [(0, 1), (1, 0)]}, "lists a pair twice"),
        ({"interactions": [(0, 9)]}, "names a feature beyond the 3 of X"),
        ({"interactions": 1, "interaction_bins": 64}, "interaction_bins must be an integer in 1..63"),
    ],
)
def test_bad_interactions_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Binner(**kwargs).fit(np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2)


def test_a_count_needs_labels():
    with pytest.raises(ValueError, match="needs y"):
        Binner(interactions=2).fit(np.random.default_rng(0).normal(size=(20, 3)))


def test_onnx_scores_pairs_as_predict():
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from svmmap.ir.export import to_onnx

    X, y, qid = make_ranking(n_queries=40, docs_per_query=30, n_features=6, interactions=1, random_state=6)
    X = X.astype(np.float64)
    X[np.random.default_rng(1).random(X.shape) < 0.05] = np.nan
    model = _ga2m(X, y, qid, missing="indicator", interactions=2, interaction_bins=4)
    session = ort.InferenceSession(to_onnx(model).SerializeToString(), providers=["CPUExecutionProvider"])
    (scores,) = session.run(None, {"X": X})
    np.testing.assert_allclose(scores, model.predict(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scaled", [False, True])
def test_solr_and_elasticsearch_score_pairs_as_predict(scaled):
    from sklearn.preprocessing import StandardScaler
    from svmmap.ir.export import to_elasticsearch, to_solr

    from tests.ir.test_export import es_node_value, es_score, feature_vectors, float32_neighbours, solr_score

    X, y, qid = make_ranking(n_queries=40, docs_per_query=30, n_features=5, interactions=1, random_state=9)
    steps = [StandardScaler()] if scaled else []
    model = make_pipeline(
        *steps, Binner(n_thresholds=12, interactions=[(0, 1), (3, 2)], interaction_bins=4), SVMMap(C=10.0)
    )
    fit_params = {"binner__qid": qid, "svmmap__qid": qid}
    model.fit(X, y, **fit_params)
    names = [f"f{j}" for j in range(5)]
    fvs, X64 = feature_vectors(X, names)
    solr = to_solr(model, feature_names=names)
    es = to_elasticsearch(model, feature_names=names)
    assert len(solr["params"]["trees"]) == 5 + 2
    want = model.predict(X64)
    np.testing.assert_allclose([solr_score(solr, fv) for fv in fvs], want, rtol=0, atol=1e-5)
    np.testing.assert_allclose([es_score(es, fv) for fv in fvs], want, rtol=0, atol=1e-5)
    # On and around every coarse threshold of a pair, the tree takes the surface's cell.
    surface = piecewise_scores(model)[5]
    tree = json.loads(es["model"]["model"]["definition"])[5]
    i, j = surface.index
    for s in surface.thresholds[0]:
        for t in surface.thresholds[1]:
            for u in float32_neighbours(s):
                for v in float32_neighbours(t):
                    got = es_node_value(tree, {names[i]: u, names[j]: v})
                    assert got == np.float32(surface(float(u), float(v)))


def test_plot_draws_a_heat_map_per_pair():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from svmmap.ir.plot import plot_piecewise_scores

    X, y, qid = make_ranking(n_queries=30, docs_per_query=20, n_features=3, interactions=1, random_state=8)
    axes = plot_piecewise_scores(_ga2m(X, y, qid, interactions=1, interaction_bins=3))
    # A pair's panel is titled with the pair (unnamed columns read "feature j").
    assert [ax.get_title() for ax in axes] == ["x0", "x1", "x2", "Interaction of feature 0 and feature 1"]
    assert len(axes[3].images) == 1 and axes[3].images[0].get_array().shape == (4, 4)


def test_the_dask_binner_refuses_pairs_on_dask_collections():
    da = pytest.importorskip("dask.array")
    import svmmap.dask

    X = da.from_array(np.random.default_rng(0).normal(size=(40, 3)), chunks=(20, 3))
    with pytest.raises(ValueError, match="does not fit pairwise interactions on Dask collections"):
        svmmap.dask.Binner(interactions=1).fit(X)


def _steps_and_pair(rng, n_queries, pair_strength):
    """Queries of 30 documents: the label is feature 2's step, plus ``pair_strength`` where
    features 0 and 1 are both positive (an interaction no per-feature model can fit)."""
    qid = np.repeat(np.arange(n_queries), 30)
    X = rng.normal(size=(qid.size, 6))
    y = (X[:, 2] > 0.5) + pair_strength * ((X[:, 0] > 0) & (X[:, 1] > 0))
    return X, y.astype(np.float64), qid


@pytest.mark.parametrize("validation_strength", [0.0, 2.0])
def test_with_a_validation_set_a_pair_must_help_on_its_queries(validation_strength):
    # The training queries all carry the interaction of features 0 and 1, so the halves of
    # the training queries keep the pair. Judged on a validation set, the pair is kept only
    # when the validation labels carry it too: there the training cells' means g, taken off
    # a residual r that holds the same interaction, reduce r^2 by 2 g r - g^2 > 0 in every
    # query; on validation labels without it (r the per-feature noise, uncorrelated with g)
    # the reduction is -g^2 on average, below 0.
    rng = np.random.default_rng(3)
    X, y, qid = _steps_and_pair(rng, 40, 2.0)
    Xv, yv, qv = _steps_and_pair(rng, 40, validation_strength)
    assert Binner(interactions=3).fit(X, y, qid=qid).interactions_ == [(0, 1)]
    judged = Binner(interactions=3).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv])
    assert judged.interactions_ == ([(0, 1)] if validation_strength else [])
    # The thresholds are the training rows' alone, whatever the validation set.
    for a, b in zip(judged.thresholds_, Binner().fit(X).thresholds_):
        np.testing.assert_array_equal(a, b)
    # eval_group (query sizes in row order) says the same as eval_qid.
    by_group = Binner(interactions=3).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_group=[np.full(40, 30)])
    assert by_group.interactions_ == judged.interactions_
    np.testing.assert_array_equal(by_group.interaction_scores_, judged.interaction_scores_)


def test_a_validation_set_reaches_the_binner_in_a_pipeline():
    rng = np.random.default_rng(4)
    X, y, qid = _steps_and_pair(rng, 40, 2.0)
    Xv, yv, qv = _steps_and_pair(rng, 40, 0.0)
    model = make_pipeline(Binner(interactions=3), SVMMap(C=1.0))
    model.fit(X, y, binner__qid=qid, binner__eval_set=[(Xv, yv)], binner__eval_qid=[qv], svmmap__qid=qid)
    assert model[0].interactions_ == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"eval_qid": [np.zeros(4)]}, "eval_group and eval_qid describe eval_set, which was not given"),
        ({"eval_set": [(np.ones((4, 3)), np.ones(4))]}, "eval_set has 1 set\\(s\\) but not their queries"),
        ({"eval_set": (np.ones((4, 3)), np.ones(4)), "eval_qid": [np.zeros(4)]}, "must be a list of one"),
        ({"eval_set": [(np.ones((4, 2)), np.ones(4))], "eval_qid": [np.zeros(4)]}, "eval_set\\[0\\] X has 2 features"),
        ({"eval_set": [(np.ones((4, 3)), np.ones(3))], "eval_qid": [np.zeros(4)]}, "eval_set\\[0\\] y"),
        ({"eval_set": [(np.ones((4, 3)), np.ones(4))], "eval_qid": [np.zeros(3)]}, "eval_qid\\[0\\]"),
        (
            {"eval_set": [(np.array([[0.0, 1.0, np.nan]] * 4), np.ones(4))], "eval_qid": [np.zeros(4)]},
            "eval_set\\[0\\] X\\[0, 2\\] is NaN",
        ),
    ],
)
def test_a_bad_validation_set_is_refused_naming_it(kwargs, message):
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match=message):
        Binner(interactions=2).fit(X, np.arange(20) % 2, qid=np.arange(20) // 5, **kwargs)


def test_codes_with_pairs_made_in_chunks_are_the_codes_made_at_once(monkeypatch):
    # With pairs, BinningSpec.codes bins X a chunk of rows at a time (so that the base codes of
    # all of X are never held beside the codes with the pairs' columns); a code is a row's own,
    # so the chunks must give the codes made at once, whatever the chunk size (7 rows: 86
    # chunks, the last one of 5 rows; by default the 600 rows are one chunk).
    from svmmap._fit import fitted

    X, y, qid = make_ranking(n_queries=20, docs_per_query=30, n_features=4, random_state=1)
    X[::5, 2] = np.nan
    binner = Binner(interactions=[(0, 1), (2, 3)], missing="indicator").fit(X, y, qid=qid)
    at_once = binner.transform(X)
    monkeypatch.setattr(fitted, "CODE_CHUNK", 7)
    chunked = binner.transform(X)
    assert chunked.codes.dtype == at_once.codes.dtype
    np.testing.assert_array_equal(chunked.codes, at_once.codes)
    assert chunked.codes.shape == (len(y), 4 + 2)


def test_pair_scores_made_a_block_of_pairs_at_a_time_are_those_made_at_once(monkeypatch):
    # interaction_scores scores a block of pairs at a time, so that the temporaries of all
    # pairs' cells are never held at once; a pair's score is its own cells' alone, so any block
    # size (7 pairs: blocks of 7 and 6 among 100 pairs of three shapes) gives the same bits.
    from svmmap._fit import pairs as pairs_module

    rng = np.random.default_rng(3)
    shapes = [[(3, 4), (5, 5), (2, 9)][i % 3] for i in range(100)]
    n_cells = sum(u * v for u, v in shapes)
    sums = rng.normal(size=n_cells)
    counts = rng.integers(0, 4, size=n_cells).astype(np.float64)
    sums[counts == 0] = 0.0
    at_once = interaction_scores(sums, counts, shapes, 0.7)
    monkeypatch.setattr(pairs_module, "SCORE_BLOCK", 7)
    in_blocks = interaction_scores(sums, counts, shapes, 0.7)
    for a, b in zip(at_once, in_blocks):
        assert a.tobytes() == b.tobytes()
