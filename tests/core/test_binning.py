"""Binner (Yue et al. 2007, section 4.2) and the piecewise-constant scores it yields."""

import json

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
import svmmap
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from svmmap import Binner, SVMMap, piecewise_scores
from svmmap.datasets import load_mq2008
from svmmap.metrics import mean_average_precision


def reference_indicators(X, thresholds, missing=False):
    """The indicators written out with numpy, independently of the core: per feature j, the
    columns 1[X[:, j] > k] for its thresholds in order, then 1[X[:, j] is NaN] if missing."""
    blocks = []
    for j, k in enumerate(thresholds):
        col = X[:, j]
        with np.errstate(invalid="ignore"):
            blocks.append((col[:, None] > np.asarray(k)[None, :]).astype(float))
        if missing:
            blocks.append(np.isnan(col)[:, None].astype(float))
    return np.hstack(blocks) if blocks else np.zeros((X.shape[0], 0))


def test_transform_by_hand():
    # Feature 0 takes the values 0, 1, 3: with room for 50 thresholds every gap gets one, at
    # the midpoints 0.5 and 2. Feature 1 takes 5 and 7: one threshold at 6.
    X = np.array([[0.0, 5.0], [1.0, 5.0], [3.0, 7.0]])
    b = Binner(output="indicators").fit(X)
    assert [k.tolist() for k in b.thresholds_] == [[0.5, 2.0], [6.0]]
    Z = b.transform(np.array([[0.0, 5.0], [1.0, 7.0], [3.0, 6.0], [2.0, 100.0], [-9.0, 6.5]]))
    assert sp.isspmatrix_csr(Z) and Z.dtype == np.float64
    # Columns: x0>0.5, x0>2, x1>6.  A value equal to a threshold is not above it (2 > 2 is false).
    expected = [
        [0, 0, 0],
        [1, 0, 1],
        [1, 1, 0],
        [1, 0, 1],
        [0, 0, 1],
    ]
    np.testing.assert_array_equal(Z.toarray(), expected)
    assert b.n_output_features_ == 3
    assert b.get_feature_names_out().tolist() == ["x0>0.5", "x0>2.0", "x1>6.0"]
    assert b.get_feature_names_out(["bm25", "lm"]).tolist() == ["bm25>0.5", "bm25>2.0", "lm>6.0"]


def test_missing_indicator_by_hand():
    # Training values of feature 0: 1, 2 (NaN is left out): one threshold 1.5. Feature 1: 0, 4,
    # 8: thresholds 2 and 6. Columns: x0>1.5, x0 missing, x1>2, x1>6, x1 missing.
    X = np.array([[1.0, 0.0], [np.nan, 4.0], [2.0, 8.0]])
    b = Binner(missing="indicator").fit(X)
    assert [k.tolist() for k in b.thresholds_] == [[1.5], [2.0, 6.0]]
    Z = b.transform(np.array([[np.nan, 7.0], [5.0, np.nan]])).toarray()
    np.testing.assert_array_equal(Z, [[0, 1, 1, 1, 0], [1, 0, 0, 0, 1]])
    assert b.get_feature_names_out().tolist() == ["x0>1.5", "x0=missing", "x1>2.0", "x1>6.0", "x1=missing"]


def test_quantile_thresholds_by_hand():
    # The values 0..9 with 3 thresholds: equal-frequency bins of ceil(10/4) = 3 values {0,1,2},
    # then ceil(7/3) = 3 values {3,4,5}, then ceil(4/2) = 2 values {6,7}, and {8,9} above:
    # cuts at the midpoints 2.5, 5.5, 7.5.
    X = np.arange(10.0).reshape(-1, 1)
    assert Binner(n_thresholds=3).fit(X).thresholds_[0].tolist() == [2.5, 5.5, 7.5]
    # Six zeros and 1, 2, 3, 4 with 2 thresholds: the run of zeros is a bin of its own (cut
    # 0.5), then {1, 2} and {3, 4} (cut 2.5).
    X = np.array([0, 0, 0, 0, 0, 0, 1, 2, 3, 4], dtype=float).reshape(-1, 1)
    assert Binner(n_thresholds=2).fit(X).thresholds_[0].tolist() == [0.5, 2.5]
    # Uniform: the range [0, 4] with 3 thresholds is cut at 1, 2, 3.
    X = np.array([[0.0], [0.5], [4.0]])
    assert Binner(n_thresholds=3, strategy="uniform").fit(X).thresholds_[0].tolist() == [1.0, 2.0, 3.0]
    # A constant feature has no thresholds and no columns.
    b = Binner().fit(np.array([[1.0, 0.0], [1.0, 1.0]]))
    assert [len(k) for k in b.thresholds_] == [0, 1]
    assert b.transform(np.array([[5.0, 2.0]])).toarray().tolist() == [[1.0]]


@pytest.mark.parametrize("seed", range(4))
def test_quantile_bins_are_equal_frequency_on_distinct_values(seed):
    # With distinct values, equal-frequency binning puts ceil(r / (t + 1)) of the r remaining
    # values below each successive cut, so the bin sizes differ by at most one.
    rng = np.random.default_rng(seed)
    m, t = int(rng.integers(60, 400)), int(rng.integers(2, 20))
    x = rng.normal(size=m)
    (k,) = Binner(n_thresholds=t).fit(x.reshape(-1, 1)).thresholds_
    assert len(k) == t
    sizes = np.diff(np.concatenate([[0], np.searchsorted(np.sort(x), k), [m]]))
    assert sizes.max() - sizes.min() <= 1, sizes


@pytest.mark.parametrize("seed", range(6))
def test_transform_matches_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 300)), int(rng.integers(1, 6))
    # Few distinct values per column (ties, point masses) and some missing values.
    X = rng.integers(0, int(rng.integers(2, 40)), size=(n, d)).astype(float) * rng.normal(size=d)
    X[rng.random((n, d)) < 0.1] = np.nan
    for strategy in ("quantile", "uniform"):
        b = Binner(n_thresholds=int(rng.integers(1, 12)), strategy=strategy, missing="indicator").fit(X)
        for k in b.thresholds_:
            assert np.all(np.diff(k) > 0) and len(k) <= b.n_thresholds
        Y = rng.normal(size=(50, d)) * 10
        Y[rng.random((50, d)) < 0.2] = np.nan
        for data in (X, Y, X.astype(np.float32)):
            np.testing.assert_array_equal(
                b.transform(data).toarray(), reference_indicators(data, b.thresholds_, missing=True)
            )


def test_few_distinct_values_keep_their_order():
    # With at most n_thresholds + 1 distinct values every gap gets a threshold, so the number of
    # indicators set in a row is the rank of its value among the distinct training values.
    rng = np.random.default_rng(1)
    x = rng.choice([-3.0, 0.0, 0.1, 2.0, 7.5], size=200)
    b = Binner(n_thresholds=4).fit(x.reshape(-1, 1))
    rank = np.searchsorted(np.unique(x), x)
    np.testing.assert_array_equal(np.asarray(b.transform(x.reshape(-1, 1)).to_csr().sum(axis=1)).ravel(), rank)
    # The bin code is the number of indicators set: the same rank.
    np.testing.assert_array_equal(b.transform(x.reshape(-1, 1)).codes[:, 0], rank)


def test_bad_input_is_reported():
    b = Binner().fit(np.array([[0.0, 1.0], [1.0, 2.0]]))
    with pytest.raises(ValueError, match=r"X\[1, 0\] is NaN.*missing=\"indicator\""):
        b.transform(np.array([[0.0, 1.0], [np.nan, 2.0]]))
    with pytest.raises(ValueError, match=r"X\[0, 1\] is inf"):
        Binner(missing="indicator").fit(np.array([[0.0, np.inf]]))
    with pytest.raises(ValueError, match="X has 3 features, but Binner is expecting 2"):
        b.transform(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="n_thresholds must be an integer >= 1"):
        Binner(n_thresholds=0).fit(np.zeros((2, 1)))
    with pytest.raises(ValueError, match="strategy must be one of"):
        Binner(strategy="kmeans").fit(np.zeros((2, 1)))
    with pytest.raises(sklearn.exceptions.NotFittedError):
        Binner().transform(np.zeros((1, 1)))


def test_sparse_input_is_densified():
    X = np.array([[0.0, 2.0], [1.0, 0.0], [3.0, 5.0]])
    b = Binner().fit(sp.csr_matrix(X))
    assert [k.tolist() for k in b.thresholds_] == [k.tolist() for k in Binner().fit(X).thresholds_]
    np.testing.assert_array_equal(b.transform(sp.csc_matrix(X)).toarray(), b.transform(X).toarray())


def test_to_dict_round_trip_through_json():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 4)) * [1, 1e-9, 1e6, 3]
    X[rng.random(X.shape) < 0.05] = np.nan
    b = Binner(n_thresholds=17, missing="indicator").fit(X)
    d = json.loads(json.dumps(b.to_dict()))
    b2 = Binner.from_dict(d)
    assert b2.get_params() == {**b.get_params(), "n_jobs": None}
    for k1, k2 in zip(b.thresholds_, b2.thresholds_):
        np.testing.assert_array_equal(k1, k2)  # exact, not approximate
    np.testing.assert_array_equal(b.transform(X).codes, b2.transform(X).codes)
    assert b2.get_feature_names_out().tolist() == b.get_feature_names_out().tolist()

    with pytest.raises(ValueError, match="not a Binner dict"):
        Binner.from_dict({"type": "something else"})
    with pytest.raises(ValueError, match="newer svmmap"):
        Binner.from_dict({**d, "version": d["version"] + 2})  # version 2 is the one with pairs
    broken = json.loads(json.dumps(d))
    broken["thresholds"][0] = broken["thresholds"][0][::-1]
    with pytest.raises(ValueError, match="strictly increasing"):
        Binner.from_dict(broken)
    with pytest.raises(ValueError, match="threshold lists for 5 features"):
        Binner.from_dict({**d, "n_features_in": 5})


def test_piecewise_scores_by_hand():
    # Thresholds 0.5 and 2 (values 0, 1, 3), weights 0.25 and -0.5: the step function is
    # 0 for v <= 0.5, 0.25 for 0.5 < v <= 2, 0.25 - 0.5 = -0.25 above 2. With a missing
    # indicator of weight 0.1, NaN scores 0.1.
    b = Binner(missing="indicator").fit(np.array([[0.0], [1.0], [3.0]]))
    (step,) = piecewise_scores(b, [0.25, -0.5, 0.1])
    assert step.thresholds.tolist() == [0.5, 2.0]
    assert step.values.tolist() == [0.0, 0.25, -0.25]
    assert step.missing == 0.1
    assert step(np.array([0.5, 0.6, 2.0, 2.1, np.nan])).tolist() == [0.0, 0.25, 0.25, -0.25, 0.1]
    with pytest.raises(ValueError, match="coef has 2 weights but the binner makes 3"):
        piecewise_scores(b, [1.0, 2.0])


def test_pipeline_and_piecewise_scores_reproduce_predict():
    X, y, qid = load_mq2008(1, "vali")
    Xt, _, _ = load_mq2008(1, "test")
    X, Xt = X[:, [20, 24, 30, 35]], Xt[:, [20, 24, 30, 35]]  # BM25 and LMIR features
    pipe = Pipeline([("bin", Binner(n_thresholds=10)), ("svm", SVMMap(C=10))])
    pipe.fit(X, y, svm__qid=qid)
    steps = piecewise_scores(pipe)
    assert [s.feature for s in steps] == ["x0", "x1", "x2", "x3"]
    total = sum(step(Xt[:, j]) for j, step in enumerate(steps))
    np.testing.assert_allclose(total, pipe.predict(Xt), rtol=1e-12, atol=1e-12)
    # clone keeps the parameters and drops the fit.
    copy = clone(pipe)
    assert copy.named_steps["bin"].get_params() == pipe.named_steps["bin"].get_params()
    assert not hasattr(copy.named_steps["bin"], "thresholds_")


@pytest.mark.parametrize("scaler", ["standard", "minmax", "maxabs"])
def test_piecewise_scores_of_a_scaler_pipeline_are_over_the_raw_features(scaler):
    # MQ2008's features at raw-looking scales (each column multiplied and shifted), a scaler
    # in front of the Binner: the step functions must be over the pipeline's input, so their
    # sum reproduces predict on raw values, also at every returned threshold and at the next
    # float above it, where the side of each indicator is decided. (Before, the thresholds were
    # in the scaler's units and the sum was far from predict.)
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    X, y, qid = load_mq2008(1, "vali")
    Xt, _, _ = load_mq2008(1, "test")
    cols = [20, 24, 30, 35]
    factor = np.array([1e-3, 7.0, 250.0, 1e4])
    shift = np.array([0.0, -3.0, 1e3, 0.5])
    X, Xt = X[:, cols] * factor + shift, Xt[:, cols] * factor + shift
    make = {"standard": StandardScaler, "minmax": MinMaxScaler, "maxabs": MaxAbsScaler}[scaler]
    pipe = Pipeline([("scale", make()), ("bin", Binner(n_thresholds=10)), ("svm", SVMMap(C=10))])
    pipe.fit(X, y, svm__qid=qid)
    steps = piecewise_scores(pipe)
    total = sum(step(Xt[:, j]) for j, step in enumerate(steps))
    np.testing.assert_allclose(total, pipe.predict(Xt), rtol=1e-12, atol=1e-12)
    # Rows that put every feature at a threshold or just above it, one threshold at a time.
    for j, step in enumerate(steps):
        for t in step.thresholds:
            for v in (t, np.nextafter(t, np.inf)):
                row = Xt[:1].copy()
                row[0, j] = v
                expected = pipe.predict(row)[0]
                got = sum(s(row[:, i])[0] for i, s in enumerate(steps))
                assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), (j, t, v)


def test_piecewise_scores_of_a_scaler_pipeline_take_the_input_names():
    pd = pytest.importorskip("pandas")
    from sklearn.preprocessing import StandardScaler

    X, y, qid = load_mq2008(1, "vali")
    frame = pd.DataFrame(X[:, [20, 24]], columns=["BM25.body", "LMIR.DIR.body"])
    pipe = Pipeline([("scale", StandardScaler()), ("bin", Binner(n_thresholds=5)), ("svm", SVMMap(C=1))])
    pipe.fit(frame, y, svm__qid=qid)
    assert [s.feature for s in piecewise_scores(pipe)] == ["BM25.body", "LMIR.DIR.body"]


def test_piecewise_scores_refuse_steps_that_cannot_be_inverted():
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    X, y, qid = load_mq2008(1, "vali")
    X = X[:, [20, 24]]
    from sklearn.preprocessing import MinMaxScaler

    for before in (
        [("log", FunctionTransformer(np.log1p))],
        [("a", StandardScaler()), ("b", StandardScaler())],
        [("clip", MinMaxScaler(clip=True))],
    ):
        pipe = Pipeline(before + [("bin", Binner(n_thresholds=5)), ("svm", SVMMap(C=1))]).fit(X, y, svm__qid=qid)
        with pytest.raises(ValueError, match=r"cannot be (inverted exactly|folded).*piecewise_scores\(binner"):
            piecewise_scores(pipe)
        # The Binner's own units stay available.
        steps = piecewise_scores(pipe[-2], coef=pipe[-1].coef_)
        np.testing.assert_array_equal(steps[0].thresholds, pipe[-2].thresholds_[0])


def test_pipeline_with_metadata_routing():
    X, y, qid = load_mq2008(1, "vali")
    X = X[:, [20, 24, 30, 35]]
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("bin", Binner(n_thresholds=10)), ("svm", SVMMap(C=10).set_fit_request(qid=True))])
        pipe.fit(X, y, qid=qid)
        routed = pipe.predict(X)
    plain = Pipeline([("bin", Binner(n_thresholds=10)), ("svm", SVMMap(C=10))]).fit(X, y, svm__qid=qid)
    np.testing.assert_array_equal(routed, plain.predict(X))


def decode_sample(shared):
    """The SVM-map sample query and its 15 base functions' levels: each function's 50 columns
    are the thermometer code 1[f > k_1] >= 1[f > k_2] >= ... , so the number of ones in a
    block is the bin of the function's score."""
    X, y, qid = svmmap.load_letor(shared / "data" / "svmmap_sample" / "sample.data")
    blocks = X.toarray().reshape(X.shape[0], 15, 50)
    assert np.all(np.diff(blocks, axis=2) <= 0), "not thermometer-coded"
    return X, y, qid, blocks, blocks.sum(axis=2)


def test_binner_rebuilds_the_svmmap_sample_features(shared):
    X, y, qid, blocks, levels = decode_sample(shared)
    assert X.shape == (917, 750) and np.unique(qid).tolist() == [451]
    # Binning the levels again puts a threshold into every gap between the levels that occur
    # (fewer than 51 per function here), and 1[level > (a + b)/2] for neighbouring levels
    # a < b is the sample's column b - 1 (1[level > b - 1]). So the Binner's columns must be
    # exactly the sample's distinct non-constant columns of each function.
    b = Binner(n_thresholds=50).fit(levels)
    Z = b.transform(levels).toarray()
    at = 0
    for f in range(15):
        k = b.thresholds_[f]
        ours = Z[:, at : at + len(k)]
        at += len(k)
        cols = blocks[:, f, :]
        varying = cols[:, cols.min(axis=0) != cols.max(axis=0)]
        theirs = np.unique(varying, axis=1)
        assert sorted(map(tuple, ours.T)) == sorted(map(tuple, theirs.T)), f"function {f}"


def test_svmmap_trains_and_predicts_on_the_sample_query(shared):
    X, y, qid, _, levels = decode_sample(shared)
    model = SVMMap(C=100).fit(X, y, qid=qid)
    assert model.n_queries_ == 1 and model.converged_
    scores = model.predict(X)
    assert scores.shape == (917,) and np.all(np.isfinite(scores))
    # The indicators of any single base function can express that function's ranking, so the
    # learned combination should rank the training query better than the best single one.
    best_single = max(mean_average_precision(y, levels[:, f]) for f in range(15))
    assert mean_average_precision(y, scores) > best_single


try:
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:  # pragma: no cover - very old scikit-learn
    parametrize_with_checks = None

if parametrize_with_checks is not None:
    # scikit-learn's checks compare transform outputs as arrays, so they run on the indicator
    # output (a BinnedMatrix is not an array; tests/core/test_binned_codes.py covers it).
    @parametrize_with_checks(
        [Binner(output="indicators"), Binner(missing="indicator", n_thresholds=5, output="indicators")]
    )
    def test_sklearn_compatible(estimator, check):
        check(estimator)


@pytest.mark.parametrize("output", ["codes", "indicators"])
def test_unaligned_input_is_binned(output):
    # A C-contiguous but unaligned view (np.frombuffer at an odd offset, as arrays rebuilt from
    # network frames are) bins like the same values in an ordinary array.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)).astype(np.float32)
    buffer = np.zeros(X.nbytes + 1, dtype=np.uint8)
    view = np.frombuffer(buffer[1:].data, dtype=np.float32).reshape(X.shape)
    view[:] = X
    assert view.flags.c_contiguous and not view.flags.aligned
    binner = Binner(n_thresholds=5, output=output).fit(view)
    reference = Binner(n_thresholds=5, output=output).fit(X)
    assert all(np.array_equal(a, b) for a, b in zip(binner.thresholds_, reference.thresholds_))
    got, expected = binner.transform(view), reference.transform(X)
    if output == "codes":
        got, expected = got.to_csr(), expected.to_csr()
    assert (got != expected).nnz == 0
