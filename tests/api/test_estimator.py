"""SVMMap's scikit-learn conventions, input handling and persistence."""

import numpy as np
import pytest
import scipy.sparse as sp
import svmmap
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from svmmap import ModelFormatError, SkippedQueriesWarning, SVMMap, load_model
from svmmap.datasets import load_mq2008


@pytest.fixture(scope="module")
def fold1():
    return load_mq2008(1, "train")


def test_params_and_clone():
    model = SVMMap(C=3.0, eps=1e-4)
    assert model.get_params()["C"] == 3.0
    copy = clone(model.set_params(max_iter=50))
    assert copy.get_params() == model.get_params() and not hasattr(copy, "coef_")


def test_fit_attributes(fold1):
    X, y, qid = fold1
    model = SVMMap(C=10.0)
    assert model.fit(X, y, qid=qid) is model
    assert model.coef_.shape == (46,) and model.coef_.dtype == np.float64
    assert model.n_features_in_ == 46 and model.converged_
    assert model.objective_ >= model.dual_objective_ - 1e-12
    assert model.n_iter_ == len(model.history_)
    # MQ2008 Fold1 train: 471 queries, of which those without a label > 0 are skipped.
    no_relevant = sum(1 for q in np.unique(qid) if not (y[qid == q] > 0).any())
    assert model.n_queries_skipped_ == {"no_relevant": no_relevant, "all_relevant": 0}
    assert model.n_queries_ == 471 - no_relevant


def test_one_list_of_fitted_attributes_matches_the_docstring_and_what_fits_set(fold1):
    """FITTED_ATTRIBUTES is the one list: SVMMap's Attributes section documents exactly these,
    in its order, and fits (plain, with a validation set and early stopping, a latent loss, a
    DataFrame's names) set nothing else and, together, all of them."""
    import inspect
    import re
    import warnings

    from svmmap._fit.training import FITTED_ATTRIBUTES

    doc = inspect.cleandoc(SVMMap.__doc__)
    documented = re.findall(r"^(\w+_)\s*:", doc[doc.index("Attributes") :], re.M)
    assert documented == list(FITTED_ATTRIBUTES)
    X, y, qid = fold1
    rows = np.isin(qid, np.unique(qid)[:60])
    X, y, qid = X[rows], y[rows], qid[rows]
    pd = pytest.importorskip("pandas")
    seen = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model, kwargs, data in [
            (SVMMap(), {}, X),
            (SVMMap(), {"eval_set": [(X.copy(), y)], "eval_qid": [qid], "early_stopping_rounds": 2}, X),
            (SVMMap(loss="ndcg@10:latent", max_iter=20), {}, X),
            (SVMMap(max_iter=5), {}, pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])),
        ]:
            model.fit(data, y, qid=qid, **kwargs)
            fitted = {k for k in vars(model) if k.endswith("_") and not k.startswith("_")}
            assert fitted <= set(FITTED_ATTRIBUTES), fitted - set(FITTED_ATTRIBUTES)
            seen |= fitted
    assert seen == set(FITTED_ATTRIBUTES), set(FITTED_ATTRIBUTES) - seen


def distance_bound(a, b):
    """Two eps-optimal solutions of the same strongly convex problem are close:
    1/2 |w - w*|^2 <= P(w) - P* <= gap, so |w_a - w_b| <= sqrt(2 gap_a) + sqrt(2 gap_b)."""
    return np.sqrt(2 * max(a.gap_, 0.0)) + np.sqrt(2 * max(b.gap_, 0.0)) + 1e-12


def test_dense_sparse_and_query_order_solve_the_same_problem(fold1):
    X, y, qid = fold1
    kw = dict(C=1.0, eps=1e-6)
    reference = SVMMap(**kw).fit(X, y, qid=qid)
    for variant in (sp.csr_matrix(X), sp.csc_matrix(X)):
        model = SVMMap(**kw).fit(variant, y, qid=qid)
        assert np.linalg.norm(model.coef_ - reference.coef_) <= distance_bound(model, reference)
    # Query ids as strings and rows shuffled: the same queries, so the same problem, and
    # predictions come back in the caller's row order.
    perm = np.random.default_rng(0).permutation(len(y))
    names = np.array([f"q{q}" for q in qid])[perm]
    model = SVMMap(**kw).fit(X[perm], y[perm], qid=names)
    assert np.linalg.norm(model.coef_ - reference.coef_) <= distance_bound(model, reference)
    np.testing.assert_allclose(model.predict(X[perm]), X[perm] @ model.coef_, rtol=1e-12, atol=1e-12)


def test_float32_input_is_used_as_is(fold1):
    X, y, qid = fold1
    X32 = X.astype(np.float32)
    # Training on the float32 values is training on X32 converted exactly to float64.
    a = SVMMap(C=1.0, eps=1e-6).fit(X32, y, qid=qid)
    b = SVMMap(C=1.0, eps=1e-6).fit(X32.astype(np.float64), y, qid=qid)
    assert np.linalg.norm(a.coef_ - b.coef_) <= distance_bound(a, b)
    c = SVMMap(C=1.0, eps=1e-6).fit(sp.csr_matrix(X32), y, qid=qid)
    assert np.linalg.norm(c.coef_ - b.coef_) <= distance_bound(c, b)


def test_any_hashable_query_ids():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.3], [0.2, 0.8]])
    y = np.array([1, 0, 1, 0])
    expected = SVMMap(eps=1e-8).fit(X, y, qid=[0, 0, 1, 1])
    for qid in ([("a", 1), ("a", 1), ("b", 2), ("b", 2)], np.array([7, 7, "x", "x"], dtype=object), ["u", "u", 3, 3]):
        model = SVMMap(eps=1e-8).fit(X, y, qid=qid)
        assert np.linalg.norm(model.coef_ - expected.coef_) <= distance_bound(model, expected)
    with pytest.raises(ValueError, match="hashable"):
        SVMMap().fit(X, y, qid=[{"q": 1}, {"q": 1}, {"q": 2}, {"q": 2}])


def test_predict_and_score(fold1):
    X, y, qid = fold1
    model = SVMMap().fit(X, y, qid=qid)
    Xt, yt, qt = load_mq2008(1, "test")
    scores = model.predict(Xt)
    np.testing.assert_allclose(scores, Xt @ model.coef_, rtol=1e-12, atol=1e-12)
    assert model.score(Xt, yt, qid=qt) == pytest.approx(svmmap.metrics.mean_average_precision(yt, scores, qt))
    with pytest.raises(ValueError, match="fitted with 46"):
        model.predict(Xt[:, :10])
    with pytest.raises(ValueError, match="qid"):
        model.score(Xt, yt)


def test_missing_qid_and_bad_inputs(fold1):
    X, y, qid = fold1
    with pytest.raises(ValueError, match="needs qid="):
        SVMMap().fit(X, y)
    with pytest.raises(ValueError, match="qid has 5 entries"):
        SVMMap().fit(X, y, qid=qid[:5])
    with pytest.raises(ValueError, match="y has 9629 entries"):
        SVMMap().fit(X, y[:-1], qid=qid)
    Xnan = X.copy()
    Xnan[3, 4] = np.nan
    with pytest.raises(ValueError, match=r"X\[3, 4\] is NaN"):
        SVMMap().fit(Xnan, y, qid=qid)
    with pytest.raises(ValueError, match="2-D"):
        SVMMap().fit(X[:, 0], y, qid=qid)
    for name, value in [("C", 0.0), ("C", -1.0), ("eps", 0.0), ("max_iter", 0), ("C", float("nan"))]:
        with pytest.raises(ValueError, match=name):
            SVMMap(**{name: value}).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="loss"):
        SVMMap(loss="accuracy-of-vibes").fit(X, y, qid=qid)
    with pytest.raises(NotFittedError):
        SVMMap().predict(X)


def test_skipped_queries_are_counted_and_warned():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5], [0.2, 0.1]])
    y = np.array([1, 0, 0, 0, 1])
    qid = np.array(["keep", "keep", "none", "none", "one"])
    with pytest.warns(
        SkippedQueriesWarning,
        match="2 of 3 training queries were skipped: 1 without a relevant document, 1 with only relevant",
    ):
        model = SVMMap().fit(X, y, qid=qid)
    assert model.n_queries_ == 1
    with pytest.raises(ValueError, match="no training query has both"):
        SVMMap().fit(X[2:], y[2:], qid=qid[2:])
    # SVM^map's -1/+1 labels: -1 is not relevant.
    model = SVMMap().fit(X[:2], np.array([1, -1]), qid=[0, 0])
    assert model.coef_[0] > model.coef_[1]


def test_save_and_load_round_trip(fold1, tmp_path):
    X, y, qid = fold1
    model = SVMMap(C=5.0, eps=1e-4).fit(X, y, qid=qid)
    path = tmp_path / "model.json"
    model.save(path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.coef_, model.coef_)
    assert loaded.get_params()["C"] == 5.0 and loaded.get_params()["eps"] == 1e-4
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    text = path.read_text()
    (tmp_path / "truncated.json").write_text(text[: len(text) // 2])
    with pytest.raises(ModelFormatError, match="truncated"):
        load_model(tmp_path / "truncated.json")
    (tmp_path / "newer.json").write_text(text.replace('"version": 1', '"version": 7'))
    with pytest.raises(ModelFormatError, match="newer svmmap"):
        load_model(tmp_path / "newer.json")


def test_skipped_queries_do_not_count_in_n(fold1):
    # C means C/n with n the usable queries (OP 1), so removing the unusable queries changes
    # nothing; had n counted them, the same C would mean a different trade-off (C scaled by
    # 471/339 moves coef_ by about 2e-2 on this fold).
    X, y, qid = fold1
    usable = np.zeros(len(y), dtype=bool)
    for q in np.unique(qid):
        rows = qid == q
        usable[rows] = (y[rows] > 0).any() and (y[rows] <= 0).any()
    assert (~usable).any()
    with pytest.warns(SkippedQueriesWarning):
        full = SVMMap(C=10.0).fit(X, y, qid=qid)
    only_usable = SVMMap(C=10.0).fit(X[usable], y[usable], qid=qid[usable])
    assert full.n_queries_ == only_usable.n_queries_ == len(np.unique(qid[usable]))
    np.testing.assert_allclose(full.coef_, only_usable.coef_, rtol=0, atol=1e-10)
    rescaled = SVMMap(C=10.0 * len(np.unique(qid)) / full.n_queries_).fit(X[usable], y[usable], qid=qid[usable])
    assert np.abs(rescaled.coef_ - full.coef_).max() > 1e-4


def test_inactive_cuts_are_dropped_during_training(fold1):
    # At C = 10^5 training takes about twice max_idle (50) iterations, each adding one to
    # three cuts; cuts whose dual variable stays at zero for max_idle iterations leave the
    # working set, so few of those ever added remain. (At C = 10^4 it now converges in 78
    # iterations, too few for a cut to stay idle for 50 before the end.)
    X, y, qid = fold1
    with pytest.warns(SkippedQueriesWarning):
        model = SVMMap(C=1e5).fit(X, y, qid=qid)
    assert model.converged_
    assert model.n_iter_ > 100
    # The working set shrank at some point (it would only grow without dropping).
    sizes = [r["n_cuts"] for r in model.history_]
    assert model.n_cuts_ < max(sizes) / 4
    assert any(b < a for a, b in zip(sizes, sizes[1:]))
