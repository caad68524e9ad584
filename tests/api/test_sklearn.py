"""scikit-learn integration: estimator checks, clone/params, Pipeline, metadata routing,
query-grouped cross-validation and qid-aware scorers."""

import warnings

import numpy as np
import pytest
import sklearn
import svmmap
from sklearn.base import clone
from sklearn.metrics import average_precision_score, ndcg_score
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from svmmap import SkippedQueriesWarning, SVMMap
from svmmap.datasets import load_mq2008
from svmmap.metrics import make_ranking_scorer, mean_average_precision

checks = pytest.importorskip("sklearn.utils.estimator_checks")
if (
    not hasattr(checks, "parametrize_with_checks")
    or "expected_failed_checks" not in checks.parametrize_with_checks.__code__.co_varnames
):
    pytest.skip("expected_failed_checks needs scikit-learn >= 1.6", allow_module_level=True)


# --- check_estimator --------------------------------------------------------------------------

# Every check below calls fit(X, y) without query ids. A ranker cannot learn without them (as
# LightGBM's LGBMRanker needs its group argument), so SVMMap refuses with a message asking for
# qid=, and the check, which expected success or a different error, fails. These checks are run
# on OneQuerySVMMap instead (all rows one query), where they pass.
NEEDS_QID = (
    "fit(X, y) without qid: a ranker needs query ids and SVMMap asks for them; "
    "the check passes on OneQuerySVMMap (every row in one query)"
)
FITTING_CHECKS = [
    "check_fit_score_takes_y",
    "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self",
    "check_readonly_memmap_input",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_estimators_dtypes",
    "check_dtype_object",
    "check_pipeline_consistency",
    "check_estimators_nan_inf",
    "check_estimator_sparse_tag",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_fit2d_1sample",
    "check_fit2d_1feature",
    "check_dict_unchanged",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_n_features_in",
    "check_fit2d_predict1d",
    # fit takes sample_weight, so scikit-learn also runs its weight checks, which fit without
    # qid as well. OneQuerySVMMap does not take them on: its one query could only carry one
    # weight, where the checks give every row its own (tests/api/test_model_selection.py tests
    # the weights per query).
    "check_sample_weights_pandas_series",
    "check_sample_weights_not_an_array",
    "check_sample_weights_list",
    "check_all_zero_sample_weights_error",
    "check_sample_weights_shape",
    "check_sample_weights_not_overwritten",
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
]

# With all rows in one query, three checks still cannot apply: their labels make every document
# relevant (all labels > 0), and a query needs a relevant and a non-relevant document to give a
# constraint, so fit rightly raises "no training query has both a relevant and a non-relevant
# document" instead of training (check_estimators_dtypes) or instead of the check's expected
# message about one sample or one feature (check_fit2d_1sample, check_fit2d_1feature).
ALL_RELEVANT = "the check's labels are all > 0, so no query has a non-relevant document to rank below a relevant one"
ONE_QUERY_FAILURES = {
    "check_estimators_dtypes": ALL_RELEVANT,
    "check_fit2d_1sample": ALL_RELEVANT,
    "check_fit2d_1feature": ALL_RELEVANT,
}


class OneQuerySVMMap(SVMMap):
    """SVMMap that treats all rows as one query when qid is not given (for the generic checks)."""

    def fit(self, X, y, qid=None):
        if qid is None:
            qid = np.zeros(len(y) if y is not None and hasattr(y, "__len__") else 0)
        return super().fit(X, y, qid=qid)

    def score(self, X, y, qid=None):
        return super().score(X, y, qid=np.zeros(len(y)) if qid is None else qid)


def expected_failures(estimator):
    if type(estimator) is OneQuerySVMMap:
        return ONE_QUERY_FAILURES
    return {name: NEEDS_QID for name in FITTING_CHECKS}


@checks.parametrize_with_checks([SVMMap(), OneQuerySVMMap()], expected_failed_checks=expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # Single-query data from the checks often has queries without relevant documents.
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        check(estimator)


# --- clone, params, Pipeline ------------------------------------------------------------------


@pytest.fixture(scope="module")
def vali():
    return load_mq2008(fold=1, split="vali")


def test_clone_get_params_set_params(vali):
    X, y, qid = vali
    model = SVMMap(C=3.0, loss="map", eps=1e-4, max_iter=500, relevance_threshold=0.5, n_jobs=1, verbose=0)
    params = model.get_params()
    assert params == {
        "C": 3.0,
        "loss": "map",
        "slack": "separate",
        "eps": 1e-4,
        "max_iter": 500,
        "relevance_threshold": 0.5,
        "n_jobs": 1,
        "cut_blocks": None,
        "n_iter_no_change": 50,
        "max_time": None,
        "verbose": 0,
        "callback": None,
    }
    model.fit(X, y, qid=qid)
    copy = clone(model)
    assert copy.get_params() == params and not hasattr(copy, "coef_")
    assert copy.set_params(C=7.0) is copy and copy.C == 7.0 and model.C == 3.0
    with pytest.raises(ValueError, match="Invalid parameter"):
        copy.set_params(gamma=1.0)
    pipe = Pipeline([("scale", StandardScaler()), ("svm", SVMMap())])
    assert pipe.get_params()["svm__C"] == 1.0
    pipe.set_params(svm__C=5.0)
    assert pipe.named_steps["svm"].C == 5.0


def test_pipeline_passes_qid_to_the_ranker(vali):
    X, y, qid = vali
    scaled = StandardScaler().fit_transform(X)
    direct = SVMMap(C=10.0).fit(scaled, y, qid=qid)
    # Without metadata routing: Pipeline's step__param convention.
    pipe = Pipeline([("scale", StandardScaler()), ("svm", SVMMap(C=10.0))]).fit(X, y, svm__qid=qid)
    np.testing.assert_array_equal(pipe.named_steps["svm"].coef_, direct.coef_)
    np.testing.assert_array_equal(pipe.predict(X), direct.predict(scaled))
    # With metadata routing: the ranker requests qid, the pipeline routes it.
    with sklearn.config_context(enable_metadata_routing=True):
        routed = Pipeline([("scale", StandardScaler()), ("svm", SVMMap(C=10.0).set_fit_request(qid=True))])
        routed.fit(X, y, qid=qid)
    np.testing.assert_array_equal(routed.named_steps["svm"].coef_, direct.coef_)


# --- scorers ----------------------------------------------------------------------------------


def per_query_reference(metric, y, scores, qid):
    """Means over queries with a relevant document, computed query by query with scikit-learn's
    own metrics (an independent implementation)."""
    values = []
    for q in np.unique(qid):
        yq, sq = y[qid == q], scores[qid == q]
        if not (yq > 0).any():
            continue
        # scikit-learn and svmmap order tied scores differently; the data must have no ties.
        assert len(np.unique(sq)) == len(sq)
        if metric == "map":
            values.append(average_precision_score(yq > 0, sq))
        else:
            values.append(ndcg_score(yq[None, :], sq[None, :], k=10))
    return float(np.mean(values))


def test_ranking_scorers_agree_with_scikit_learn_metrics(vali):
    X, y, qid = vali
    # A model with distinct scores in every query (MQ2008 has duplicate documents, which a
    # model of all 46 features may tie; adding a tiny per-row offset to X breaks them).
    X = X + np.arange(X.shape[0])[:, None] * 1e-9
    model = SVMMap(C=10.0).fit(X, y, qid=qid)
    scores = model.predict(X)
    map_scorer = make_ranking_scorer("map")
    # scikit-learn's ndcg_score uses the label itself as gain (svmmap's gain="linear").
    ndcg_scorer = make_ranking_scorer("ndcg@10", gain="linear")
    # Scorers accept metadata such as qid only with metadata routing on.
    with sklearn.config_context(enable_metadata_routing=True):
        assert map_scorer(model, X, y, qid=qid) == pytest.approx(per_query_reference("map", y, scores, qid), abs=1e-12)
        assert ndcg_scorer(model, X, y, qid=qid) == pytest.approx(
            per_query_reference("ndcg@10", y, scores, qid), abs=1e-12
        )
        with pytest.raises(ValueError, match="needs qid="):
            map_scorer(model, X, y)
    with pytest.raises(ValueError):
        make_ranking_scorer("precision-ish")


def test_grid_search_over_C_with_metadata_routing(vali):
    X, y, qid = vali
    grid = [0.1, 1.0, 10.0]
    cv = GroupKFold(n_splits=3)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            SVMMap().set_fit_request(qid=True),
            {"C": grid},
            scoring={
                "map": make_ranking_scorer("map").set_score_request(qid=True),
                "ndcg@10": make_ranking_scorer("ndcg@10").set_score_request(qid=True),
            },
            refit="map",
            # GroupKFold's groups are the query ids, routed under their own name.
            cv=cv.set_split_request(groups="qid"),
        ).fit(X, y, qid=qid)
    # The same protocol by hand: query-grouped folds, a fit per fold on the training rows'
    # queries, MAP on the held-out queries.
    splits = list(GroupKFold(n_splits=3).split(X, y, groups=qid))
    for split_train, split_test in splits:
        assert not set(qid[split_train]) & set(qid[split_test])  # no query is cut
    for i, C in enumerate(grid):
        by_hand = []
        for train, test in splits:
            model = SVMMap(C=C).fit(X[train], y[train], qid=qid[train])
            by_hand.append(mean_average_precision(y[test], model.predict(X[test]), qid[test]))
        assert search.cv_results_["mean_test_map"][i] == pytest.approx(np.mean(by_hand), abs=1e-12)
    best = grid[int(np.argmax(search.cv_results_["mean_test_map"]))]
    assert search.best_params_ == {"C": best}
    refit = SVMMap(C=best).fit(X, y, qid=qid)
    np.testing.assert_array_equal(search.best_estimator_.coef_, refit.coef_)
    assert np.all(np.isfinite(search.cv_results_["mean_test_ndcg@10"]))


def test_pipeline_with_the_binner(vali):
    X, y, qid = vali
    binner = svmmap.Binner(n_thresholds=10).fit(X)
    direct = SVMMap(C=1.0).fit(binner.transform(X), y, qid=qid)
    pipe = Pipeline([("bin", svmmap.Binner(n_thresholds=10)), ("svm", SVMMap(C=1.0))]).fit(X, y, svm__qid=qid)
    np.testing.assert_array_equal(pipe.named_steps["svm"].coef_, direct.coef_)
    copy = clone(pipe)
    assert copy.get_params()["bin__n_thresholds"] == 10 and not hasattr(copy.named_steps["svm"], "coef_")


def test_grid_search_over_a_binned_pipeline(vali):
    X, y, qid = vali
    grid = {"bin__n_thresholds": [5, 20], "svm__C": [1.0, 10.0]}
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("bin", svmmap.Binner()), ("svm", SVMMap().set_fit_request(qid=True))])
        search = GridSearchCV(
            pipe,
            grid,
            scoring=make_ranking_scorer("map").set_score_request(qid=True),
            cv=GroupKFold(n_splits=2),
        ).fit(X, y, qid=qid, groups=qid)
    # The best cell by hand: the same folds, fits and held-out MAP.
    splits = list(GroupKFold(n_splits=2).split(X, y, groups=qid))
    scores = {}
    for k in grid["bin__n_thresholds"]:
        for C in grid["svm__C"]:
            per_fold = []
            for train, test in splits:
                p = Pipeline([("bin", svmmap.Binner(n_thresholds=k)), ("svm", SVMMap(C=C))])
                p.fit(X[train], y[train], svm__qid=qid[train])
                per_fold.append(mean_average_precision(y[test], p.predict(X[test]), qid[test]))
            scores[(k, C)] = np.mean(per_fold)
    best = max(
        scores, key=lambda key: (scores[key], -grid["bin__n_thresholds"].index(key[0]), -grid["svm__C"].index(key[1]))
    )
    assert search.best_params_ == {"bin__n_thresholds": best[0], "svm__C": best[1]}
    assert search.best_score_ == pytest.approx(scores[best], abs=1e-12)


def test_a_missing_qid_says_how_routing_brings_it():
    # Pipeline.score or a search without metadata routing calls score(X, y) without qid: the
    # error says how to route it (it used to say only that qid is needed).
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    model = SVMMap().fit(X, [1, 0], qid=[1, 1])
    with pytest.raises(ValueError, match=r"enable_metadata_routing=True.*set_score_request\(qid=True\)"):
        model.score(X, [1, 0])


def _small_ranking():
    from svmmap.datasets import make_ranking

    return make_ranking(n_queries=12, docs_per_query=8, n_features=4, random_state=0)[:3]


def test_a_search_without_routing_stops_instead_of_scoring_nan():
    # Without metadata routing, GridSearchCV hands qid to fit only: every held-out score failed,
    # scikit-learn recorded NaN, warned, and still picked a C and refitted. The search now stops
    # with the error, which says how to route qid.
    from sklearn.model_selection import cross_val_score

    X, y, qid = _small_ranking()
    advice = r"metadata routing off.*enable_metadata_routing=True.*set_score_request\(qid=True\)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        search = GridSearchCV(SVMMap(), {"C": [0.1, 1.0]}, cv=GroupKFold(n_splits=3))
        with pytest.raises(ValueError, match=advice):
            search.fit(X, y, groups=qid, qid=qid)
        assert not hasattr(search, "best_params_")
        # The same through a Pipeline, and with svmmap's own scorer.
        pipe = Pipeline([("scale", StandardScaler()), ("svm", SVMMap())])
        with pytest.raises(ValueError, match=advice):
            GridSearchCV(pipe, {"svm__C": [0.1, 1.0]}, cv=GroupKFold(n_splits=3)).fit(X, y, groups=qid, svm__qid=qid)
        with pytest.raises(ValueError, match=advice):
            GridSearchCV(
                SVMMap(), {"C": [0.1, 1.0]}, scoring=make_ranking_scorer("ndcg@10"), cv=GroupKFold(n_splits=3)
            ).fit(X, y, groups=qid, qid=qid)
        with pytest.raises(ValueError, match=advice):
            cross_val_score(SVMMap(), X, y, groups=qid, cv=GroupKFold(n_splits=3), params={"qid": qid})


def test_a_search_without_routing_that_needs_no_qid_to_score_still_runs():
    # A score per document (here the squared error of the scores against the labels) gets no
    # qid and needs none: the search is left alone.
    X, y, qid = _small_ranking()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        search = GridSearchCV(
            SVMMap(), {"C": [0.1, 1.0]}, scoring="neg_mean_squared_error", cv=GroupKFold(n_splits=3)
        ).fit(X, y, groups=qid, qid=qid)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_pipeline_score_without_routing_says_how_to_route_qid():
    # Pipeline.score(X, y, qid=qid) without metadata routing drops qid before SVMMap.score;
    # the error must say so rather than only that qid is needed.
    X, y, qid = _small_ranking()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        pipe = Pipeline([("scale", StandardScaler()), ("svm", SVMMap())]).fit(X, y, svm__qid=qid)
    with pytest.raises(ValueError, match=r"dropped on the way: enable metadata routing"):
        pipe.score(X, y, qid=qid)


def test_skipped_queries_are_reported_once_per_search(vali):
    # MQ2008's vali split has queries without a relevant document: every fit of a search skips
    # some. A GridSearchCV over 3 values of C on 3 folds makes 10 fits (9 and the refit); one
    # warning says so, naming the search. Another call of fit is another search; fits outside
    # a search warn each time.
    from svmmap.model_selection import QueryKFold

    X, y, qid = vali

    def skipped_warnings(run):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run()
        return [w for w in caught if issubclass(w.category, SkippedQueriesWarning)]

    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_ranking_scorer("map").set_score_request(qid=True)
        search = GridSearchCV(
            SVMMap().set_fit_request(qid=True), {"C": [0.1, 1.0, 10.0]}, scoring=scorer, cv=QueryKFold(3)
        )
        caught = skipped_warnings(lambda: search.fit(X, y, qid=qid, groups=qid))
        assert len(caught) == 1, [str(w.message) for w in caught]
        assert "the other fits of this GridSearchCV on the same data are not reported again" in str(caught[0].message)
        assert len(skipped_warnings(lambda: search.fit(X, y, qid=qid, groups=qid))) == 1
        pipe = Pipeline([("scale", StandardScaler()), ("svm", SVMMap().set_fit_request(qid=True))])
        grid = GridSearchCV(pipe, {"svm__C": [0.1, 1.0, 10.0]}, scoring=scorer, cv=QueryKFold(3))
        assert len(skipped_warnings(lambda: grid.fit(X, y, qid=qid, groups=qid))) == 1
        # cross_val_score's 3 fits are one cross-validation too: they warned once per fold.
        from sklearn.model_selection import cross_val_score

        caught = skipped_warnings(
            lambda: cross_val_score(
                SVMMap().set_fit_request(qid=True),
                X,
                y,
                scoring=scorer,
                cv=QueryKFold(3),
                params={"qid": qid, "groups": qid},
            )
        )
        assert len(caught) == 1, [str(w.message) for w in caught]
        # The warning names the call the user made, cross_val_score, not the cross_validate inside.
        assert "the other fits of this cross_val_score call on the same data" in str(caught[0].message)
    assert len(skipped_warnings(lambda: svmmap.SVMMapCV(Cs=[0.1, 1.0, 10.0], cv=3).fit(X, y, qid=qid))) == 1
    assert len(skipped_warnings(lambda: [SVMMap().fit(X, y, qid=qid) for _ in range(2)])) == 2
