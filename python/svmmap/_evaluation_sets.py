"""Validation sets during fit, as LightGBM users know them: the checked ``eval_set`` with one
scorer per set, ``eval_at``'s NDCG cutoffs, early stopping over the cutting-plane iterations, and
LightGBM's other ``fit`` arguments refused with the svmmap equivalent (``SVMMap.fit``)."""

from __future__ import annotations

import numbers
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._validation import (
    check_labels,
    check_matrix,
    check_qid,
    feature_names_mismatch,
    feature_names_of,
    invalid_parameter,
    qid_of,
)


class EarlyStopping:
    """LightGBM's early stopping over cutting-plane iterations (every svmmap metric is better
    when higher): watches (set, metric) pairs of the validation sets that are not the training
    data, keeps for each the iterate where it was best, and asks to stop once one pair has gone
    ``rounds`` iterations without improving. The kept model is that pair's best iterate, or the
    first pair's when training ends first.

    ``fit(early_stopping_rounds=N)`` watches one pair, the first metric of the first watched
    set; ``svmmap.early_stopping(N)`` every metric of every watched set (the first metric of
    each with ``first_metric_only``), as LightGBM's callback does."""

    def __init__(
        self, rounds: int, watched: List[str], all_metrics: bool = False, verbose: bool = False, min_delta: float = 0.0
    ) -> None:
        self.rounds = rounds
        self.min_delta = min_delta
        self.watched = watched
        self.all_metrics = all_metrics
        self.verbose = verbose
        self.pairs: Optional[List[Tuple[str, str]]] = None
        # Per pair: (best value, its iteration, its iterate, every score at that iteration).
        self.best: dict = {}
        self.best_iteration = 0
        self.best_coef: Optional[np.ndarray] = None
        self.best_scores: dict = {}

    def update(self, iteration: int, coef: np.ndarray, scores: dict) -> bool:
        if self.pairs is None:
            self.pairs = [
                (name, metric)
                for name in self.watched
                for metric in (list(scores[name]) if self.all_metrics else list(scores[name])[:1])
            ]
            if not self.all_metrics:
                self.pairs = self.pairs[:1]
        stopped = None
        for pair in self.pairs:
            value = scores[pair[0]][pair[1]]
            kept = self.best.get(pair)
            if kept is None or value > kept[0] + self.min_delta:
                snapshot = {name: dict(values) for name, values in scores.items()}
                self.best[pair] = (value, iteration, np.array(coef, dtype=np.float64, copy=True), snapshot)
            elif stopped is None and iteration - kept[1] >= self.rounds:
                stopped = pair
        _, self.best_iteration, self.best_coef, self.best_scores = self.best[stopped or self.pairs[0]]
        if stopped is not None and self.verbose:
            text = "\t".join(
                f"{name}'s {metric}: {value:g}" for name, v in self.best_scores.items() for metric, value in v.items()
            )
            print(f"Early stopping, best iteration is:\n[{self.best_iteration}]\t{text}")
        return stopped is not None


#: LightGBM ``fit`` arguments that PyTerrier's ``fit_kwargs`` may carry, with what to use instead.
LIGHTGBM_EQUIVALENTS = {
    "verbose": "give verbosity to the estimator: SVMMap(verbose=1)",
    "eval_sample_weight": "give per-query weights of training data as sample_weight",
    "init_score": "svmmap starts from w = 0; there is no initial score",
    "categorical_feature": "svmmap's model is linear: encode categorical features as indicator columns",
    "feature_name": "pass a pandas DataFrame to keep feature names (feature_names_in_)",
    "init_model": "svmmap does not continue training from an earlier model",
}


#: Inside a Pipeline the SVMMap's X is the output of the steps before it (a Binner's indicator
#: columns outnumber the base features), and scikit-learn hands eval_set over untransformed.
PIPELINE_HINT = (
    " (inside a Pipeline, X is the output of the steps before the SVMMap, and eval_set does not "
    "go through them: give eval_set=[(pipe[:-1].transform(X_val), y_val)] with those steps fitted)"
)


def refuse_lightgbm_arguments(name: str, kwargs: dict) -> None:
    """LightGBM's fit arguments get the svmmap equivalent; anything else Python's own error."""
    for key in kwargs:
        if key in LIGHTGBM_EQUIVALENTS:
            raise TypeError(f"{name}.fit() does not take LightGBM's {key!r}: {LIGHTGBM_EQUIVALENTS[key]}")
        raise TypeError(f"{name}.fit() got an unexpected keyword argument {key!r}")


def validation_sets(
    eval_set: Optional[Sequence[tuple]],
    eval_group: Optional[Sequence[Any]],
    eval_qid: Optional[Sequence[Any]],
    eval_metric: Union[str, Sequence[str]],
    eval_at: Optional[Sequence[int]],
    early_stopping_rounds: Optional[int],
    n_features: int,
    threads: int,
    threshold: float,
    names: Optional[Sequence[str]] = None,
    training: Optional[Sequence[bool]] = None,
    early_callback: Any = None,
    prepare: Optional["SetPreparer"] = None,
) -> Tuple[Optional[list], Optional[EarlyStopping]]:
    """The validation sets of ``SVMMap.fit`` as (name, scorer, {metric: values}) triples (None
    without ``eval_set``) and the early-stopping state (None without ``early_stopping_rounds``
    or an ``early_stopping`` callback). ``names`` are ``eval_names``; ``training[i]`` says
    whether set i is the training data itself, which early stopping never watches.
    ``prepare`` makes each set ready to score (default `memory_set`; ``svmmap.dask`` scores
    sets that are Dask collections on the workers)."""
    eval_metric = _metric_names(eval_metric)
    if eval_at is not None:
        if isinstance(eval_at, (str, bytes)) or not (
            isinstance(eval_at, numbers.Integral) or hasattr(eval_at, "__iter__")
        ):
            raise invalid_parameter("eval_at", "a list of integers >= 1", eval_at)
        cutoffs: List[Any] = [eval_at] if isinstance(eval_at, numbers.Integral) else list(eval_at)
        if not cutoffs or not all(
            isinstance(k, numbers.Integral) and not isinstance(k, bool) and int(k) >= 1 for k in cutoffs
        ):
            raise invalid_parameter("eval_at", "a list of integers >= 1", eval_at)
        eval_metric = ([eval_metric] if isinstance(eval_metric, str) else list(eval_metric)) + [
            f"ndcg@{int(k)}" for k in cutoffs
        ]
    evals = _eval_sets(
        eval_set, eval_group, eval_qid, eval_metric, n_features, threads, threshold, names, training, prepare
    )
    early = None
    if early_stopping_rounds is not None and early_callback is not None:
        raise ValueError(
            "early stopping is asked for twice: give early_stopping_rounds or callbacks=[early_stopping(...)]"
        )
    if early_stopping_rounds is not None or early_callback is not None:
        what = "early_stopping_rounds" if early_callback is None else "early_stopping"
        rounds = early_stopping_rounds if early_callback is None else early_callback.stopping_rounds
        if isinstance(rounds, bool) or not isinstance(rounds, numbers.Integral) or rounds < 1:
            raise invalid_parameter("early_stopping_rounds", "an integer >= 1", rounds)
        if not evals:
            raise ValueError(f"{what} needs an eval_set (or eval_X, eval_y) to watch")
        # As LightGBM: the training data's own scores say nothing of overfitting.
        watched = [e for e, is_training in zip(evals, training or [False] * len(evals)) if not is_training]
        if not watched:
            raise ValueError(
                f"{what} watches validation data, and every eval set is the training data itself "
                "(the same X and y arrays): give a held-out set"
            )
        all_metrics = early_callback is not None and not early_callback.first_metric_only
        if early_callback is None:
            watched = watched[:1]
        # Every watched set, not only the first: the callback stops on whichever pair stalls,
        # and a NaN pair stalls from the first round, keeping w = 0.
        for e in watched:
            _check_watchable(e, all_metrics, what)
        verbose = early_callback is not None and early_callback.verbose
        min_delta = early_callback.min_delta if early_callback is not None else 0.0
        early = EarlyStopping(
            int(rounds), [e[0] for e in watched], all_metrics=all_metrics, verbose=verbose, min_delta=min_delta
        )
    # The callers take (name, scorer, {metric: values}); the values at w = 0 were for the checks.
    return ([e[:3] for e in evals] if evals is not None else None), early


def check_eval_feature_names(X: Any, eval_set: Optional[Sequence[tuple]]) -> None:
    """Refuses an eval set whose DataFrame columns are not the training DataFrame's, in its
    order: the sets are scored column by column, so reordered columns scored the wrong
    features without a word, where ``predict`` refuses them. A set without column names (an
    array) is taken as it is."""
    fitted = feature_names_of(X)
    if fitted is None or eval_set is None:
        return
    for i, pair in enumerate(eval_set):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            continue
        given = feature_names_of(pair[0])
        detail = None if given is None else feature_names_mismatch(fitted, given)
        if detail is not None:
            raise ValueError(f"eval_set[{i}] X's column names should match those of X; {detail}")


def _metric_names(eval_metric: Any) -> List[str]:
    """``eval_metric`` as a list of names: None is the default, "map" (LightGBM's signature
    has None for its default metric); a callable, LightGBM's custom metric, is refused by
    name rather than by "'function' object is not iterable"."""
    if eval_metric is None:
        return ["map"]
    if isinstance(eval_metric, str):
        return [eval_metric]
    if callable(eval_metric) or not hasattr(eval_metric, "__iter__"):
        raise TypeError(
            f"eval_metric takes metric names of svmmap.metrics ('map', 'ndcg@10', ...), got {eval_metric!r}; "
            "a custom metric can be computed in a callback from env.coef"
        )
    return list(eval_metric)


def _check_watchable(watched: tuple, all_metrics: bool = False, what: str = "early_stopping_rounds") -> None:
    """Early stopping watches the first metric (every metric with ``all_metrics``) of a
    watched eval set. Where a metric is defined does not depend on the scores (a query needs a
    relevant document), so its value at w = 0 tells before any training whether it can ever be
    a number: a NaN would never compare as an improvement, and early stopping used to stop
    after ``rounds`` iterations keeping the first iterate, w = 0, with a warning that blamed
    the training features. Whether the first metric can change at all is asked too. ``what``
    names the argument that asked for early stopping, which the message says to leave out."""
    name, _, values, at_zero, varies = watched
    index = name.rsplit("_", 1)[-1] if name.startswith("valid_") else repr(name)
    for metric in list(values) if all_metrics else list(values)[:1]:
        if at_zero[metric] != at_zero[metric]:
            raise ValueError(
                f"early stopping watches {metric!r} on eval_set[{index}], which has no query on which "
                f"{metric!r} is defined (no query has a relevant document), so its value is NaN at every "
                "iteration: give a validation set whose queries have relevant documents, or fit without "
                f"{what}"
            )
    metric = next(iter(values))
    if not varies():
        raise ValueError(
            f"early stopping watches {metric!r} on eval_set[{index}], where every ranking of every query scores "
            f"the same (for example, no query has both a relevant and a non-relevant document for {metric!r}), "
            "so its value never changes: give a validation set whose queries mix labels, or fit without "
            f"{what}"
        )


def _eval_arguments(
    eval_set: Sequence[tuple],
    eval_group: Optional[Sequence[Any]],
    eval_qid: Optional[Sequence[Any]],
    eval_metric: Union[str, Sequence[str]],
    names: Optional[Sequence[str]],
) -> Tuple[List[str], Optional[List[str]], str, list]:
    """The eval-set arguments checked against each other: (metrics, names, "eval_group" or
    "eval_qid", the groupings of every set)."""
    if isinstance(eval_set, tuple) and len(eval_set) == 2 and not isinstance(eval_set[0], tuple):
        raise ValueError("eval_set must be a list of (X, y) tuples, e.g. eval_set=[(X_val, y_val)]")
    metrics = [eval_metric] if isinstance(eval_metric, str) else list(eval_metric)
    if not metrics or not all(isinstance(m, str) for m in metrics):
        raise invalid_parameter("eval_metric", "a metric name or a list of them", eval_metric)
    if eval_group is None and eval_qid is None:
        raise ValueError(
            "eval_set needs the queries of each set: give eval_qid (query ids) or eval_group (query sizes)"
        )
    if eval_group is not None and eval_qid is not None:
        raise ValueError("eval_set's queries are given twice: give eval_qid or eval_group, not both")
    if names is not None:
        if isinstance(names, str):
            # list("ab") would name two sets "a" and "b".
            raise ValueError(f"eval_names must be a list of names, one per eval set, got the string {names!r}")
        names = list(names)
        if len(names) != len(eval_set) or not all(isinstance(n, str) and n for n in names):
            raise ValueError(f"eval_names must name each of the {len(eval_set)} eval sets with a string, got {names!r}")
        if len(set(names)) != len(names):
            raise invalid_parameter("eval_names", "distinct", names)
    kind = "eval_group" if eval_group is not None else "eval_qid"
    given = eval_group if eval_group is not None else eval_qid
    if not isinstance(given, (list, tuple)):
        # One array for one set (eval_qid=qv) would be read as one entry per document.
        raise ValueError(f"{kind} must be a list with one entry per eval set, e.g. {kind}=[qid_val]")
    grouping = list(given)
    if len(grouping) != len(eval_set):
        raise ValueError(f"{kind} has {len(grouping)} entries for {len(eval_set)} eval_set entries")
    return metrics, names, kind, grouping


#: How one validation set is made ready to score: called as ``prepare(i, X, y, grouping, kind,
#: metrics, n_features, threads, threshold)``, with set i's ``X`` and ``y``, its entry of
#: ``eval_qid`` or ``eval_group`` (``kind`` says which), and returns (the scorer, coef -> {metric:
#: value}; its values at w = 0; varies, whether the first metric can change at all).
SetPreparer = Callable[..., Tuple[Callable[[np.ndarray], dict], dict, Callable[[], bool]]]


def _eval_sets(
    eval_set: Optional[Sequence[tuple]],
    eval_group: Optional[Sequence[Any]],
    eval_qid: Optional[Sequence[Any]],
    eval_metric: Union[str, Sequence[str]],
    n_features: int,
    threads: int,
    threshold: float,
    names: Optional[Sequence[str]] = None,
    training: Optional[Sequence[bool]] = None,
    prepare: Optional[SetPreparer] = None,
) -> Optional[list]:
    """The checked validation sets as (name, scorer, {metric: values}, values at w = 0,
    varies) tuples, or None."""
    if eval_set is None:
        if eval_group is not None or eval_qid is not None:
            raise ValueError("eval_group and eval_qid describe eval_set, which was not given")
        return None
    metrics, names, kind, grouping = _eval_arguments(eval_set, eval_group, eval_qid, eval_metric, names)
    out: list = []
    for i, (pair, g) in enumerate(zip(eval_set, grouping)):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"eval_set[{i}] must be an (X, y) tuple")
        ex, ey = pair
        scorer, at_zero, varies = (prepare or memory_set)(i, ex, ey, g, kind, metrics, n_features, threads, threshold)
        # Named as LightGBM names them: eval_names, else valid_i, and "training" for the
        # training data itself.
        is_training = bool(training and training[i])
        name = names[i] if names is not None else ("training" if is_training else f"valid_{i}")
        out.append((name, scorer, {m: [] for m in metrics}, at_zero, varies))
    return out


def memory_set(
    i: int,
    ex: Any,
    ey: Any,
    g: Any,
    kind: str,
    metrics: List[str],
    n_features: int,
    threads: int,
    threshold: float,
) -> Tuple[Callable[[np.ndarray], dict], dict, Callable[[], bool]]:
    """Validation set i in memory, checked and scored here (see `SetPreparer`)."""
    from .metrics import evaluate

    # Every message names the argument the user passed (eval_set[0] X, eval_qid[0]), not
    # the training data's X, y and qid, which the shared checks name by default.
    x_name, y_name = f"eval_set[{i}] X", f"eval_set[{i}] y"
    ex_core, ex_rows, ex_features = check_matrix(ex, name=x_name)
    if ex_features != n_features:
        raise ValueError(
            f"eval_set[{i}] has {ex_features} features, but X has {n_features}{PIPELINE_HINT if ex_features < n_features else ''}"
        )
    ey = check_labels(ey, ex_rows, name=y_name, rows_name=x_name)
    if g is None:
        # check_qid's message for a missing qid is about fit's qid= and metadata routing.
        raise ValueError(
            f"{kind}[{i}] is None: give the query {'sizes' if kind == 'eval_group' else 'ids'} of eval_set[{i}]"
        )
    if kind == "eval_group":
        eq = qid_of(None, g, ex_rows, f"eval_qid[{i}]", f"eval_group[{i}]", rows_name=x_name)
    else:
        eq = qid_of(g, None, ex_rows, f"eval_qid[{i}]", f"eval_group[{i}]", rows_name=x_name)
    check_qid(eq, ex_rows, required_by=f"eval_set[{i}]", qid_name=f"eval_qid[{i}]", rows_name=x_name)

    def scorer(coef: np.ndarray) -> dict:
        scores = _core.predict(ex_core, coef, threads)
        result = evaluate(ey, scores, eq, metrics, relevance_threshold=threshold)
        return {m: float(result[m]) for m in metrics}

    # Scored once at w = 0 before any training: the core's checks of the matrix (finite
    # values) and of the labels a metric grades then fail here, under the eval set's names,
    # instead of at the first iteration under the training data's ("X[0, 3] is NaN").
    try:
        at_zero = scorer(np.zeros(n_features))
    except ValueError as exc:
        raise ValueError(eval_set_message(str(exc), x_name, y_name)) from None
    # Asked only when early stopping watches this set, so other fits do not pay for it.
    return scorer, at_zero, lambda: labels_vary(metrics[0], ey, eq, threshold)


def labels_vary(metric: str, y: Any, qid: Any, threshold: float) -> bool:
    """Whether ``metric`` can change at all on these queries: on every query it takes its best
    value with the labels as scores and its worst with their negation, so if the two agree on
    every query, every ranking scores the same (every document relevant, or relevant labels 1
    and 2 under a binary metric)."""
    from .metrics import per_query

    labels = np.asarray(y, dtype=np.float64)
    best = per_query(metric, y, labels, qid, relevance_threshold=threshold)
    worst = per_query(metric, y, -labels, qid, relevance_threshold=threshold)
    return not np.array_equal(np.asarray(best.values), np.asarray(worst.values), equal_nan=True)


def eval_set_message(text: str, x_name: str, y_name: str) -> str:
    """A core message about the matrix X or the labels y_true, told with the eval set's names.
    The core names the arrays it was handed; these are the eval set's."""
    if text.startswith("X["):
        return x_name + text[1:]
    if text.startswith("stored value"):
        return f"{x_name}: {text}"
    if text.startswith("y_true["):
        return y_name + text[len("y_true") :]
    return f"eval_set: {text}" if "eval_set" not in text else text
