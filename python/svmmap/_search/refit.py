"""Private: SVMMapCV's refit of a "standard" winner on X read through the scaler's statistics."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Optional

import numpy as np

from .._fit.naming import called_as
from .._fit.request import FitRequest
from .._fit.training import InMemory, Inputs, run_fit
from .candidates import fit_preprocessor
from .results import Outcome, refuse_at_refit
from .scoring import refused_on_this_data
from .splits import check_standardizable, fit_scaler_in_chunks

__all__ = ["Checked", "cap_refit_time", "refit_best", "refit_chosen", "refit_standard"]


class Checked(InMemory):
    """The `InMemory` solve of data already checked by `check_inputs`, trained on as given:
    the refit of a "standard" winner trains on the search's one checked matrix read through
    the scaler's column statistics (`CoreMatrix.with_columns`), where a fit on the scaler's
    output would need a scaled copy of X (and the scaler's fit a float64 one)."""

    def __init__(self, data: Inputs) -> None:
        self.data = data

    def load(self, model: Any, config: Any, request: FitRequest, threads: int) -> int:
        return self.data.n_features


def refit_standard(model: Any, X: Any, y: Any, sample_weight: Any, data: Inputs) -> None:
    """Fits ``model``, Pipeline(StandardScaler, SVMMap), on all of X as the search reads
    "standard": the SVMMap on the one checked matrix ``data.core_X`` through the scaler's
    column centers and scales, without the scaler's float64 copy of X and scaled copy. The
    scaler, fitted in chunks to the same statistics (`fit_scaler_in_chunks`), stays the
    Pipeline's first step, so that predict, save_model and the exports read the model as they
    read Pipeline(StandardScaler(), SVMMap) fitted on X; the weights are that Pipeline's up to
    rounding."""
    scaler = fit_scaler_in_chunks(model[0], X, data.core_X)
    with np.errstate(invalid="ignore"):
        check_standardizable(scaler.mean_, np.sqrt(scaler.var_))
    # Sparse X is scaled, not centered, as the scaler (with_mean=False) does.
    center = None if hasattr(X, "tocsr") else scaler.mean_
    scaled = replace(data, core_X=data.core_X.with_columns(center, 1.0 / scaler.scale_), names=None)
    run_fit(model[-1], FitRequest(X, y, data.qid, sample_weight=sample_weight), Checked(scaled), stacklevel=2)


def cap_refit_time(model: Any, time_budget: Optional[float], name: str) -> str:
    """Gives the refit of a search with a time budget a time limit of the budget (the smaller
    of it and the SVMMap's own ``max_time``); returns the name its warnings give the fit.

    The budget bounded the search alone, and the refit, at the eps given (10 times tighter than
    the search's) on all the data, could take far longer: with ``time_budget=2`` the refit of
    mrr@10 on binned MQ2008 fold 1 at C = 100 ran 133 s after a search of 2 s. With the budget
    as its own limit the whole fit returns within about twice the budget, and a refit cut there
    keeps its best iterate and says so as the refit's (the user gave no ``max_time``)."""
    if time_budget is None:
        return name
    svm = model[-1] if hasattr(model, "steps") else model
    if svm.max_time is not None and svm.max_time <= time_budget:
        return name
    svm.set_params(max_time=float(time_budget))
    return f"{name}'s refit (max_time = time_budget)"


def refit_best(model: Any, preprocessing: str, args: FitRequest, data: Inputs, judged: Any) -> Any:
    """Fits ``model``, the search's chosen candidate (an SVMMap or a Pipeline of its
    preprocessing and the SVMMap), on all the data of the fit request; returns its weights.
    ``judged`` is the validation set (X, labels, query codes) of ``cv="validation"``, or None."""
    # The weights as the search read them (1-D float64): a column vector warned once already.
    X, y, sample_weight = args.X, args.y, data.doc_weights
    if not hasattr(model, "steps"):
        model.fit(X, y, qid=data.qid, sample_weight=sample_weight)
        return model.coef_
    if preprocessing == "standard" and data.core_X.kind != "binned":
        refit_standard(model, X, y, sample_weight, data)  # As the search reads "standard".
        return model[-1].coef_
    # The steps are fitted one by one rather than by Pipeline.fit(svmmap__qid=...), which
    # scikit-learn refuses while metadata routing is enabled (the scikit-learn guide's
    # setting): the preprocessor takes X and y, the SVMMap qid. "ga2m"'s Binner judges its
    # pairs on the validation set of cv="validation", so that the refit keeps the pairs of the
    # model the search scored.
    transformer = fit_preprocessor(preprocessing, model[0], X, y, data.qid, judged)
    features = transformer.transform(X)
    model[-1].fit(features, y, qid=data.qid, sample_weight=sample_weight)
    return model[-1].coef_


def refit_chosen(search: Any, outcome: Outcome, args: FitRequest, data: Inputs, judged: Any) -> None:
    """SVMMapCV's refit: fits the chosen candidate on all the training data and sets
    ``coef_``, ``best_estimator_`` and ``refit_time_`` on ``search``. A candidate the core
    refuses there (a query too long for its oracle that no split trained on, with
    ``max_train_queries``) is left out as on a split, and the next best is refitted
    (`refuse_at_refit`): it raised the core's refusal after the whole search."""
    while True:
        model = search._candidate(**search.best_params_, sparse=hasattr(args.X, "tocsr"))
        # The refit's warnings name SVMMapCV, the estimator the user called, not the SVMMap
        # it fits ("SVMMap stopped at max_iter=1" came out of SVMMapCV.fit).
        name = cap_refit_time(model, search.time_budget, type(search).__name__)
        start = time.perf_counter()
        try:
            with called_as(name):
                search.coef_ = refit_best(model, search.best_params_["preprocessing"], args, data, judged)
        except (ValueError, MemoryError) as error:
            if not refused_on_this_data(error):
                raise
            refuse_at_refit(outcome, error)
            search._set_choice(outcome)
            continue
        search.refit_time_ = time.perf_counter() - start
        search.best_estimator_ = model
        return
