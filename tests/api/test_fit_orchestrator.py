"""One fit orchestrator (issue 38): SVMMap.fit, svmmap learn's BareSVMMap, SVMMapCV and
svmmap.dask.SVMMap check their inputs with the same routine, clean up the same way when a fit
fails at any point, and share the rule of a model that ranks nothing."""

import warnings

import numpy as np
import pytest
import svmmap
from sklearn.exceptions import ConvergenceWarning
from svmmap import SVMMap, SVMMapCV
from svmmap._fit.training import BareSVMMap, train
from svmmap.datasets import make_ranking


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=30, docs_per_query=12, n_features=5, random_state=3)
    return X, y, qid


def fitted_attributes(model):
    return [k for k in vars(model) if k.endswith("_") and not k.startswith("_")]


def bad_inputs(X, y, qid):
    """Inputs every fit refuses, each with one defect."""
    nan_X = X.copy()
    nan_X[4, 2] = np.nan
    nan_y = y.astype(float)
    nan_y[7] = np.nan
    weights = np.ones(len(y))
    weights[1] = 2.0  # not constant within the first query
    return {
        "NaN in X": dict(X=nan_X, y=y, qid=qid),
        "NaN label": dict(X=X, y=nan_y, qid=qid),
        "short qid": dict(X=X, y=y, qid=qid[:-1]),
        "qid and group": dict(X=X, y=y, qid=qid, group=[len(y)]),
        "weight varies within a query": dict(X=X, y=y, qid=qid, sample_weight=weights),
        "no qid": dict(X=X, y=y, qid=None),
    }


@pytest.mark.parametrize(
    "defect", ["NaN in X", "NaN label", "short qid", "qid and group", "weight varies within a query", "no qid"]
)
def test_every_fit_refuses_bad_input_in_the_same_words(data, defect):
    kwargs = bad_inputs(*data)[defect]
    messages = {}
    for name, fit in {
        "SVMMap": lambda kw: SVMMap().fit(kw.pop("X"), kw.pop("y"), **kw),
        "SVMMapCV": lambda kw: SVMMapCV(Cs=[1.0], cv=2).fit(kw.pop("X"), kw.pop("y"), **kw),
        "BareSVMMap": lambda kw: train(BareSVMMap(), kw.pop("X"), kw.pop("y"), kw.pop("qid"), **kw),
    }.items():
        with pytest.raises((ValueError, TypeError)) as caught:
            fit(dict(kwargs))
        # The messages may name the estimator (a BareSVMMap is named SVMMap); nothing else differs.
        messages[name] = (caught.type, str(caught.value).replace("SVMMapCV", "SVMMap"))
    assert len(set(messages.values())) == 1, messages


def test_a_fit_that_fails_after_training_leaves_no_partial_model(data):
    """A ConvergenceWarning turned into an error is raised after the solve, while the fitted
    attributes are set: the fit must then leave none of them (coef_ used to stay)."""
    X, y, qid = data
    for make in (lambda: SVMMap(max_iter=2), lambda: BareSVMMap(max_iter=2)):
        model = make()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(model, SVMMap):
                model.fit(X, y, qid=qid)
            else:
                train(model, X, y, qid)
        assert fitted_attributes(model)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            with pytest.raises(ConvergenceWarning):
                if isinstance(model, SVMMap):
                    model.fit(X, y, qid=qid)
                else:
                    train(model, X, y, qid)
        assert not fitted_attributes(model), fitted_attributes(model)


def test_a_search_whose_refit_fails_leaves_no_choice_behind(data):
    X, y, qid = data
    search = SVMMapCV(Cs=[0.1, 1.0], cv=2, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y, qid=qid)
    assert hasattr(search, "best_C_")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(ConvergenceWarning):
            search.fit(X, y, qid=qid)
    assert not fitted_attributes(search), fitted_attributes(search)


def tied_data():
    """Queries whose only non-zero feature is constant within each query: any model ties."""
    qid = np.repeat(np.arange(20), 6)
    X = np.column_stack([qid.astype(float), np.zeros(qid.size)])
    y = np.tile([1.0, 0.0, 0.0, 1.0, 0.0, 0.0], 20)
    return X, y, qid


def test_the_search_warnings_point_at_the_callers_line(data):
    """Warnings that SVMMapCV's C search and its search over losses issue themselves name the
    line that called fit (this file), not svmmap's code."""
    X, y, qid = data
    searches = [
        (SVMMapCV(Cs=[1.0], cv=2, refit=False), tied_data(), svmmap.DegenerateModelWarning),
        (SVMMapCV(Cs=[1.0, 10.0], cv=2, loss="auto", time_budget=1e-9, refit=False), data, UserWarning),
    ]
    for search, (X, y, qid), category in searches:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            search.fit(X, y, qid=qid)
        own = [w for w in seen if w.category is category]
        assert own, [str(w.message) for w in seen]
        for w in own:
            assert w.filename == __file__, (w.filename, str(w.message))


def test_svmmap_cv_reports_a_model_that_ranks_nothing_by_the_rule_of_every_fit():
    """The degenerate rule is one: w = 0, or scores tied within every query with two labels
    (here a feature constant within each query: any weight on it ranks nothing)."""
    X, y, qid = tied_data()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fitted = SVMMap(C=10.0).fit(X, y, qid=qid)
    assert fitted.degenerate_
    assert any(issubclass(w.category, svmmap.DegenerateModelWarning) for w in seen)


@pytest.mark.parametrize(
    "make",
    [
        lambda: SVMMap(C=-1.0)._config(),
        lambda: SVMMap(verbose=2.5).fit([[1.0], [2.0]], [1, 0], qid=[0, 0]),
        lambda: SVMMapCV(score_tolerance=-1).fit([[1.0], [2.0]], [1, 0], qid=[0, 0]),
        lambda: SVMMapCV(loss="auto", patience=0).fit([[1.0], [2.0]], [1, 0], qid=[0, 0]),
        lambda: svmmap.metrics.evaluate([1.0], [0.5], [0], metrics=["ndcg@0"]),
    ],
)
def test_a_refused_parameter_has_one_wording_in_python_and_the_core(make):
    """One owner of the wording (issue 38): "{name} must be {expected}, got {value}", whether
    the core or Python refuses the parameter."""
    import re

    with pytest.raises(ValueError) as info:
        make()
    assert re.fullmatch(r"[\w ()=\"'@.:-]+ must be .+, got .+", str(info.value), re.S), str(info.value)
