"""LightGBM's arguments as svmmap reads them: its fit, constructor and predict arguments and its fitted attributes, each accepted when it asks for what svmmap does anyway (its no-op default) and otherwise refused with the svmmap equivalent, in the estimators' and the search's words."""

from __future__ import annotations

import numbers
import re
from typing import Any

import numpy as np

from .._core import TIME_LIMIT

#: LightGBM ``fit`` arguments that PyTerrier's ``fit_kwargs`` may carry, with what to use instead.
LIGHTGBM_EQUIVALENTS = {
    "verbose": "give verbosity to the estimator: SVMMap(verbose=1)",
    "eval_sample_weight": (
        "svmmap weights the training loss only: give sample_weight to fit, one weight per document "
        "(the same on every document of a query)"
    ),
    "init_score": "svmmap starts from w = 0; there is no initial score",
    "categorical_feature": "svmmap's model is linear: encode categorical features as indicator columns",
    "feature_name": "pass a pandas DataFrame to keep feature names (feature_names_in_)",
    "init_model": "svmmap does not continue training from an earlier model",
    "eval_init_score": "svmmap scores validation sets by X @ coef_ alone; there is no initial score",
}


#: LightGBM's fit arguments that default to asking for nothing (LGBMRanker.fit's signature).
_FIT_DEFAULTS = (
    "init_score",
    "eval_init_score",
    "eval_sample_weight",
    "feature_name",
    "categorical_feature",
    "init_model",
)


def _no_op(key: str, value: Any) -> bool:
    """Whether LightGBM's ``fit`` argument ``key`` has a value that asks for nothing svmmap
    would do differently: its default (None, or "auto" for ``feature_name`` and
    ``categorical_feature``, as in LGBMRanker.fit's signature), no categorical feature (an
    empty list), or one None per validation set. A ported script that spells out these
    defaults runs; any other value is refused with svmmap's way."""
    if key not in _FIT_DEFAULTS:
        return False
    if value is None:
        return True
    if key in ("feature_name", "categorical_feature") and isinstance(value, str) and value == "auto":
        return True
    if key == "categorical_feature" and isinstance(value, (list, tuple)) and len(value) == 0:
        return True
    return key.startswith("eval_") and isinstance(value, (list, tuple)) and all(v is None for v in value)


#: Where a LightGBM user tuned trees (num_leaves x learning_rate), svmmap's search chooses C.
_CHOOSE_C = (
    "; svmmap.SVMMapCV chooses C by cross-validation (with loss='auto', the loss and the preprocessing too), "
    "as a grid over num_leaves and learning_rate would"
)
_NO_TREES = "a linear model has no trees; C sets its regularization (SVMMap(C=...))" + _CHOOSE_C
_NO_SAMPLING = "svmmap trains on every query and every feature at every iteration; nothing is sampled"
_NO_SEED = "svmmap's training draws no random numbers (the same data gives the same model), so it needs no seed"
_ROUNDS = (
    "svmmap has no number of rounds to set: training ends when the duality gap reaches C * eps "
    f"(SVMMap(eps=...)), bounded by SVMMap(max_iter=...) and SVMMap({TIME_LIMIT}=...)"
)

#: LightGBM's constructor parameters (LGBMRanker's signature and the aliases LightGBM scripts
#: pass through its **kwargs), with svmmap's counterpart or why none is needed.
LIGHTGBM_PARAMETERS = {
    "boosting_type": "a linear model is not boosted: " + _NO_TREES,
    "num_leaves": _NO_TREES,
    "max_depth": _NO_TREES,
    "min_split_gain": _NO_TREES,
    "min_child_weight": _NO_TREES,
    "min_child_samples": _NO_TREES,
    "min_data_in_leaf": _NO_TREES,
    "learning_rate": "the cutting-plane solver takes no step size; C sets the regularization (SVMMap(C=...))"
    + _CHOOSE_C,
    "n_estimators": _ROUNDS,
    "num_iterations": _ROUNDS,
    "num_boost_round": _ROUNDS,
    "num_trees": _ROUNDS,
    "objective": (
        "svmmap's objective is the ranking loss it optimizes: SVMMap(loss='map'), loss='ndcg@10' (as "
        "LightGBM's lambdarank, NDCG), loss='pairwise' (SVM^rank's pairs) ..., see svmmap.losses"
    ),
    "metric": "give the validation metrics to fit: fit(..., eval_metric='ndcg@10', eval_at=[5, 10])",
    "subsample": _NO_SAMPLING,
    "subsample_freq": _NO_SAMPLING,
    "subsample_for_bin": "bin features with svmmap.Binner(n_thresholds=...), which reads every row",
    "colsample_bytree": _NO_SAMPLING,
    "bagging_fraction": _NO_SAMPLING,
    "bagging_freq": _NO_SAMPLING,
    "feature_fraction": _NO_SAMPLING,
    "max_bin": "bin features with Pipeline(svmmap.Binner(n_thresholds=...), SVMMap())",
    "reg_alpha": "svmmap has no L1 penalty",
    "lambda_l1": "svmmap has no L1 penalty",
    "reg_lambda": "the L2 penalty is 1/2 ||w||^2 against C times the loss: a larger reg_lambda is a smaller C",
    "lambda_l2": "the L2 penalty is 1/2 ||w||^2 against C times the loss: a larger lambda_l2 is a smaller C",
    "class_weight": "weight queries with fit(..., sample_weight=...) (one weight per query, given per document)",
    "random_state": _NO_SEED,
    "seed": _NO_SEED,
    "deterministic": _NO_SEED,
    "importance_type": "feature_importances_ has one kind: the share of the scores' spread each feature carries",
    "verbosity": "SVMMap(verbose=...) (-1 or 0: silent, 1: one line per iteration)",
    "early_stopping_round": (
        "give early stopping to fit: fit(..., early_stopping_rounds=n) or callbacks=[svmmap.early_stopping(n)]"
    ),
    "early_stopping_rounds": (
        "give early stopping to fit: fit(..., early_stopping_rounds=n) or callbacks=[svmmap.early_stopping(n)]"
    ),
    "label_gain": "svmmap's NDCG gain is 2^label - 1, as LightGBM's default label_gain",
    "lambdarank_truncation_level": "train the loss at a cutoff instead: SVMMap(loss='ndcg@10')",
    "device_type": "svmmap trains on the CPU's cores (SVMMap(n_jobs=...))",
    "num_threads": "SVMMap(n_jobs=...)",
}


def _refuse_lightgbm(call: str, own: str, known: dict, kwargs: dict) -> None:
    """LightGBM's arguments among ``kwargs`` (keys of ``known``) get svmmap's way, all of them in
    one message, so that a ported call with five LightGBM parameters is fixed in one run rather
    than five; anything else gets Python's own error (``own``: the function Python would name)."""
    refused = [key for key in kwargs if key in known]
    if len(refused) == 1:
        key = refused[0]
        raise TypeError(f"{call} does not take LightGBM's {key!r}: {known[key]}")
    if refused:
        names = ", ".join(repr(key) for key in refused)
        lines = "".join(f"\n  {key!r}: {known[key]}" for key in refused)
        raise TypeError(f"{call} does not take LightGBM's {names}; leave them out:{lines}")
    for key in kwargs:
        raise TypeError(f"{own} got an unexpected keyword argument {key!r}")


#: The svmmap parameters that SVMMap and SVMMapCV share, which the counterparts above name as
#: ``SVMMap(...=...)``; SVMMapCV's refusal names them as its own.
_SHARED_PARAMETER = re.compile(r"SVMMap\((?=(?:eps|max_iter|max_time|loss|n_jobs|verbose)=)")


def refuse_lightgbm_parameters(name: str, kwargs: dict) -> None:
    """LightGBM's constructor parameters get svmmap's counterpart; anything else Python's own
    error, as a constructor without them would give. SVMMapCV has no C of its own but chooses it
    among ``Cs``, so its messages say that where SVMMap's say ``C=``."""
    known = LIGHTGBM_PARAMETERS
    if name == "SVMMapCV":
        known = {
            key: _SHARED_PARAMETER.sub("SVMMapCV(", text.replace(_CHOOSE_C, "")).replace(
                "SVMMap(C=...)", "SVMMapCV(Cs=[...]), the values of C it chooses among by cross-validation"
            )
            for key, text in LIGHTGBM_PARAMETERS.items()
        }
    _refuse_lightgbm(f"{name}()", f"{name}.__init__()", known, kwargs)


#: LightGBM's predict arguments, with what svmmap's linear model does instead.
LIGHTGBM_PREDICT = {
    "num_iteration": (
        "coef_ is one linear model, already that of best_iteration_ after early stopping (LightGBM's default); "
        "another round's weights can be kept from a callback (env.coef)"
    ),
    "start_iteration": "coef_ is one linear model, not a sum of trees to slice",
    "raw_score": "predict returns the raw scores X @ coef_ already",
    "pred_leaf": "a linear model has no trees and no leaves",
    "pred_contrib": "a linear model's contributions are X * coef_ (each feature's term of the score)",
    "validate_features": "predict always checks the feature names of a DataFrame against feature_names_in_",
}


#: LightGBM's predict arguments whose value asks for what svmmap's predict does: LGBMRanker's
#: defaults, and raw_score=True and validate_features=True too (a ranker's predictions are its
#: raw scores, and svmmap always checks a DataFrame's columns).
_PREDICT_NO_OPS = {
    "raw_score": (False, True),
    "start_iteration": (0,),
    "pred_leaf": (False,),
    "pred_contrib": (False,),
    "validate_features": (False, True),
}


def _predict_no_op(key: str, value: Any) -> bool:
    """Whether ``value`` is one of ``_PREDICT_NO_OPS[key]``: a flag given as a bool, the start
    iteration as the integer 0."""
    if key == "start_iteration":
        return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and int(value) == 0
    return isinstance(value, (bool, np.bool_)) and bool(value) in _PREDICT_NO_OPS[key]


def _rounds_of_coef(model: Any, num_iteration: Any) -> bool:
    """Whether LightGBM's ``predict(num_iteration=...)`` names the model that ``coef_`` is:
    None (LightGBM's default: the best iteration after early stopping, else all of them);
    after early stopping, ``best_iteration_`` itself; without it (``best_iteration_`` 0, so
    ``coef_`` is the last round's), LightGBM's "every iteration": a value <= 0 or one at
    least ``n_iter_``. So ``predict(X, num_iteration=model.best_iteration_)`` runs either way.
    An unfitted model accepts it here; predict then says it is not fitted."""
    if num_iteration is None or not hasattr(model, "coef_"):
        return True
    if isinstance(num_iteration, bool) or not isinstance(num_iteration, numbers.Integral):
        return False
    best = int(getattr(model, "best_iteration_", 0) or 0)
    if best > 0:
        return int(num_iteration) == best
    return int(num_iteration) <= 0 or int(num_iteration) >= int(getattr(model, "n_iter_", 0))


def refuse_lightgbm_predict(name: str, kwargs: dict, model: Any = None) -> None:
    """LightGBM's predict arguments get svmmap's way, unless their value asks for what
    svmmap's predict does anyway (``_PREDICT_NO_OPS``, `_rounds_of_coef` for ``model``);
    anything else Python's own error."""
    left = {}
    for key, value in kwargs.items():
        if key == "num_iteration" and _rounds_of_coef(model, value):
            continue
        if key in _PREDICT_NO_OPS and _predict_no_op(key, value):
            continue
        left[key] = value
    if "num_iteration" in left and hasattr(model, "coef_"):
        best = int(getattr(model, "best_iteration_", 0) or 0)
        kept = f"iteration {best}'s (best_iteration_)" if best else f"the last iteration's ({model.n_iter_})"
        raise TypeError(
            f"{name}.predict() cannot use LightGBM's num_iteration={left['num_iteration']!r}: coef_ is one linear "
            f"model, {kept}, and no other round's weights are kept (keep one from a callback: env.coef); "
            "give num_iteration=None or leave it out"
        )
    _refuse_lightgbm(f"{name}.predict()", f"{name}.predict()", LIGHTGBM_PREDICT, left)


#: LightGBM's fitted attributes that an SVMMap does not have, with what it has instead.
LIGHTGBM_ATTRIBUTES = {
    "booster_": (
        "a linear model has no Booster: its model is coef_ (scores X @ coef_), saved by model.save(path); "
        "feature_importances_ and svmmap.ir.plot.plot_weights(model) stand for lightgbm.plot_importance"
    ),
    "n_estimators_": "a linear model has no trees: n_iter_ counts the solver's rounds",
    "feature_name_": "feature_names_in_ (after fitting on a pandas DataFrame)",
    "n_features_": "n_features_in_",
}


#: Inside a Pipeline the SVMMap's X is the output of the steps before it (a Binner's indicator
#: columns outnumber the base features), and scikit-learn hands eval_set over untransformed.
PIPELINE_HINT = (
    " (inside a Pipeline, X is the output of the steps before the SVMMap, and eval_set does not "
    "go through them: give eval_set=[(pipe[:-1].transform(X_val), y_val)] with those steps fitted)"
)


def refuse_lightgbm_arguments(name: str, kwargs: dict) -> None:
    """LightGBM's fit arguments get the svmmap equivalent, unless their value is LightGBM's
    no-op default (`_no_op`); anything else Python's own error."""
    for key, value in kwargs.items():
        if key in LIGHTGBM_EQUIVALENTS and _no_op(key, value):
            continue
        if key in LIGHTGBM_EQUIVALENTS:
            raise TypeError(f"{name}.fit() does not take LightGBM's {key!r}: {LIGHTGBM_EQUIVALENTS[key]}")
        raise TypeError(f"{name}.fit() got an unexpected keyword argument {key!r}")
