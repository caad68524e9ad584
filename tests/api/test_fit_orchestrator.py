"""One fit orchestrator (issue 38): SVMMap.fit, svmmap learn's BareSVMMap, SVMMapCV and
svmmap.dask.SVMMap check their inputs with the same routine, clean up the same way when a fit
fails at any point, and share the rule of a model that ranks nothing."""

import inspect
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


# One fit request and one orchestrator with a pluggable solve (issue 44 item 2).


def docstring_parameters(doc):
    """The names of a numpydoc Parameters section, in order ("eval_X, eval_y" gives both)."""
    import re

    section = re.search(r"Parameters\n-+\n(.*?)\n\s*\n(?:Returns|$)", inspect.cleandoc(doc), re.S)
    assert section, doc
    names = []
    for line in section.group(1).splitlines():
        if line and not line.startswith(" "):
            names += [n.strip().lstrip("*") for n in line.split(" : ")[0].split(",")]
    return names


def fits():
    found = {"SVMMap": SVMMap.fit, "SVMMapCV": SVMMapCV.fit}
    try:
        import svmmap.dask
    except ImportError:  # pragma: no cover - the dask extra is part of the test extra
        return found
    found["svmmap.dask.SVMMap"] = svmmap.dask.SVMMap.fit
    return found


@pytest.mark.parametrize("name", ["SVMMap", "SVMMapCV", "svmmap.dask.SVMMap"])
def test_every_fit_takes_the_request_arguments_and_documents_each_in_its_order(name):
    """A fit's signature is a subsequence of FitRequest's fields (the one declaration of the
    fit arguments), and its docstring, made from the one template, documents exactly these."""
    import dataclasses

    from svmmap._fit.request import FitRequest

    fit = fits().get(name)
    if fit is None:
        pytest.skip("svmmap.dask needs the dask extra")
    fields = [f.name for f in dataclasses.fields(FitRequest)]
    taken = [p for p in inspect.signature(fit).parameters if p != "self"]
    assert set(taken) <= set(fields), set(taken) - set(fields)
    assert taken == [f for f in fields if f in taken], taken
    assert docstring_parameters(fit.__doc__) == taken
    # LightGBM's other fit arguments reach every fit, which refuses them in its own words.
    assert taken[-1] == "lightgbm_kwargs"


def test_the_request_of_a_fits_locals_keeps_only_the_fit_arguments():
    from svmmap._fit.request import FitRequest

    request = FitRequest.of({"self": object(), "__class__": SVMMap, "X": 1, "y": 2, "eval_at": [5], "group": [3]})
    assert (request.X, request.y, request.qid, request.group, request.eval_at) == (1, 2, None, [3], [5])
    assert request.lightgbm_kwargs == {}


class RecordingSolve:
    """A Solve that trains in memory and records the orchestrator's calls."""

    def __init__(self, fail_in=None):
        from svmmap._fit.training import InMemory

        self.inner, self.calls, self.fail_in = InMemory(), [], fail_in

    def __getattr__(self, step):
        def call(*args, **kwargs):
            self.calls.append(step)
            if step == self.fail_in:
                raise RuntimeError(f"failed in {step}")
            return getattr(self.inner, step)(*args, **kwargs)

        return call


def test_the_orchestrator_runs_any_solve_in_one_order_and_always_closes_it(data):
    """run_fit checks the parameters once, then calls the solve's steps in order; the steps a
    solve plugs in are all that differ between the in-memory, command-line and Dask fits. A
    solve that fails is closed, and the model keeps nothing of the fit."""
    from svmmap._fit.request import FitRequest
    from svmmap._fit.training import run_fit

    X, y, qid = data
    solve = RecordingSolve()
    model = SVMMap(C=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_fit(model, FitRequest(X, y, qid), solve)
    assert solve.calls == ["name", "check", "load", "preparer", "run", "close"]
    reference = SVMMap(C=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference.fit(X, y, qid=qid)
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    for step in ("load", "run"):
        solve = RecordingSolve(fail_in=step)
        with pytest.raises(RuntimeError, match=f"failed in {step}"):
            run_fit(model, FitRequest(X, y, qid), solve)
        assert solve.calls[-1] == "close", solve.calls
        assert not fitted_attributes(model)
    # A parameter the core refuses is refused before the solve reads anything.
    solve = RecordingSolve()
    with pytest.raises(ValueError, match="C must be"):
        run_fit(SVMMap(C=-1.0), FitRequest(X, y, qid), solve)
    assert solve.calls == ["name"]


def test_the_dask_fit_checks_its_parameters_through_the_shared_orchestrator(monkeypatch):
    """svmmap.dask.SVMMap.fit has no configuration check of its own: the orchestrator's
    train_config runs once, then the Dask solve's own refusals (here a missing qid) come
    before any cluster is needed."""
    dask_module = pytest.importorskip("svmmap.dask")
    from svmmap._fit import training

    calls = []
    original = training.train_config
    monkeypatch.setattr(training, "train_config", lambda model: calls.append(model) or original(model))
    model = dask_module.SVMMap()
    with pytest.raises(ValueError, match="svmmap.dask.SVMMap.fit"):
        model.fit(np.zeros((2, 1)), np.array([1, 0]))
    assert calls == [model]
    with pytest.raises(ValueError, match="C must be"):
        dask_module.SVMMap(C=-1.0).fit(np.zeros((2, 1)), np.array([1, 0]), qid=np.array([0, 0]))
