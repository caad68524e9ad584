"""Validation sets during fit, as LightGBM users know them: the checked ``eval_set`` with one
scorer per set, ``eval_at``'s NDCG cutoffs, early stopping over the cutting-plane iterations, and
LightGBM's other ``fit`` arguments refused with the svmmap equivalent (``SVMMap.fit``)."""

from __future__ import annotations

import logging
import numbers
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _core
from .._validation import (
    check_labels,
    check_matrix,
    check_qid,
    check_spelling,
    feature_names_mismatch,
    feature_names_of,
    invalid_parameter,
    qid_of,
)
from ..metrics import check_metric_names, evaluate, per_query
from .lightgbm_args import PIPELINE_HINT, refuse_lightgbm_arguments

logger = logging.getLogger("svmmap")


class EarlyStopping:
    """LightGBM's early stopping over cutting-plane iterations (every svmmap metric is better
    when higher): watches (set, metric) pairs of the validation sets that are not the training
    data, keeps for each the iterate where it was best, and asks to stop once one pair has gone
    ``rounds`` iterations without improving. The kept model is that pair's best iterate, or the
    first pair's when training ends first.

    ``fit(early_stopping_rounds=N)`` watches one pair, the first metric of the first watched
    set; ``svmmap.early_stopping(N)`` every metric of every watched set, and with
    ``first_metric_only`` the first metric of every watched set, as LightGBM's callback does
    (its rule compares each result's metric name with the first one, on every set).
    ``verbose``: print LightGBM's lines (its "Training until ..." at the first round, and its
    verdict when training stops, or ends first, keeping a round); ``log``: say the same to the
    ``svmmap`` logger (a verbose estimator). ``first_metric_only``: the callback's setting,
    which LightGBM's lines name ("Evaluated only: ...")."""

    def __init__(
        self,
        rounds: int,
        watched: List[str],
        all_metrics: bool = False,
        verbose: bool = False,
        min_delta: float = 0.0,
        log: bool = False,
        first_metric_only: bool = False,
    ) -> None:
        self.rounds = rounds
        self.first_metric_only = first_metric_only
        #: Set when a callback's EarlyStopException chose the round (`kept_by_callback`).
        self.by_callback = False
        self.min_delta = min_delta
        self.watched = watched
        self.all_metrics = all_metrics
        self.verbose = verbose
        self.log = log
        self.pairs: Optional[List[Tuple[str, str]]] = None
        # Per pair: (best value, its iteration, its iterate, every score at that iteration).
        self.best: dict = {}
        self.best_iteration = 0
        self.best_coef: Optional[np.ndarray] = None
        self.best_scores: dict = {}
        #: Whether early stopping ended training (rather than the solver ending first).
        self.stopped = False
        #: The pair whose best round is kept.
        self.kept_pair: Optional[Tuple[str, str]] = None

    @classmethod
    def kept_by_callback(cls, iteration: int, coef: np.ndarray, scores: dict) -> "EarlyStopping":
        """The record of a round that a callback's EarlyStopException chose: its iteration,
        iterate and scores, training stopped there."""
        kept = cls(1, [])
        kept.best_iteration, kept.best_coef, kept.best_scores = iteration, coef, scores
        kept.stopped = kept.by_callback = True
        return kept

    def update(self, iteration: int, coef: np.ndarray, scores: dict) -> bool:
        if self.pairs is None:
            # LightGBM's first line, said at the first round, after that round's log line.
            self._say(f"Training until validation scores don't improve for {self.rounds} rounds")
            # Every metric of every watched set, or its first metric on every watched set.
            self.pairs = [
                (name, metric)
                for name in self.watched
                for metric in (list(scores[name]) if self.all_metrics else list(scores[name])[:1])
            ]
        stopped = None
        for pair in self.pairs:
            value = scores[pair[0]][pair[1]]
            kept = self.best.get(pair)
            if kept is None or value > kept[0] + self.min_delta:
                snapshot = {name: dict(values) for name, values in scores.items()}
                self.best[pair] = (value, iteration, np.array(coef, dtype=np.float64, copy=True), snapshot)
            elif stopped is None and iteration - kept[1] >= self.rounds:
                stopped = pair
        self.kept_pair = stopped or self.pairs[0]
        _, self.best_iteration, self.best_coef, self.best_scores = self.best[self.kept_pair]
        if stopped is not None:
            self.stopped = True
            self._say(f"Early stopping, best iteration is:\n[{self.best_iteration}]\t{self._scores_text()}")
            if self.first_metric_only:
                self._say(f"Evaluated only: {stopped[1]}")
        return stopped is not None

    def kept_text(self, n_iter: int, stop: str) -> str:
        """Which round the model is and why, for the verbose fit's summary line."""
        if self.by_callback:
            return (
                f"a callback stopped training after {n_iter} iterations (EarlyStopException) and kept iteration "
                f"{self.best_iteration}"
            )
        name, metric = self.kept_pair or ("", "")
        if self.stopped:
            return (
                f"early stopping after {n_iter} iterations kept iteration {self.best_iteration}, the best {name}'s "
                f"{metric}, which did not improve in the {self.rounds} rounds after it"
            )
        return (
            f"{_ENDED.get(stop, stop)} after {n_iter} iterations, before early stopping triggered; kept iteration "
            f"{self.best_iteration}, the best {name}'s {metric}"
        )

    def _scores_text(self) -> str:
        return "\t".join(
            f"{name}'s {metric}: {value:g}" for name, v in self.best_scores.items() for metric, value in v.items()
        )

    def _say(self, text: str) -> None:
        if self.verbose:
            print(text)
        if self.log:
            logger.info("%s", text.replace("\n", " "))

    def ended_first(self, n_iter: int, stop: str, kept_gap: float, tolerance: float) -> None:
        """Says, when training ended before early stopping asked it to and the kept round is
        not the last, which round is kept and why, as LightGBM's "Did not meet early
        stopping" does, and what the solver's stop means for that round's model: the
        certificate of a converged fit is about the last iterate, not about the kept one."""
        if self.stopped or self.best_iteration == 0:
            return
        why = {
            "converged": "converged: the duality gap reached its tolerance",
            "callback": "the callback asked to stop",
            "max_iter": "max_iter was reached",
            "stalled": "the solver stalled",
            _core.TIME_LIMIT: f"{_core.TIME_LIMIT} ran out",
        }.get(stop, stop)
        name, metric = self.kept_pair or ("", "")
        # LightGBM's lines first (it says them at its last round), then why svmmap's ended.
        self._say(f"Did not meet early stopping. Best iteration is:\n[{self.best_iteration}]\t{self._scores_text()}")
        if self.first_metric_only:
            self._say(f"Evaluated only: {metric}")
        if self.best_iteration >= n_iter:
            self._say(f"Training ended at iteration {n_iter} ({why}); the model kept is that last iteration's")
            return
        self._say(
            f"Training ended at iteration {n_iter} ({why}); the model kept is iteration "
            f"{self.best_iteration}'s, the best {name}'s {metric}, whose duality gap is {kept_gap:.3g} "
            f"(tolerance {tolerance:.3g}): objective_, gap_ and converged_ describe it"
        )


#: The solver's stop reasons in words, for the verbose summary after early stopping kept a round.
_ENDED = {
    "converged": "converged",
    "callback": "the callback stopped training",
    "max_iter": "max_iter reached",
    "stalled": "stalled",
    _core.TIME_LIMIT: f"{_core.TIME_LIMIT} reached",
}


def validation_sets(
    eval_set: Optional[Sequence[tuple]],
    eval_group: Optional[Sequence[Any]],
    eval_qid: Optional[Sequence[Any]],
    eval_metric: Optional[Union[str, Sequence[str]]],
    eval_at: Optional[Sequence[int]],
    early_stopping_rounds: Optional[int],
    n_features: int,
    threads: int,
    threshold: float,
    names: Optional[Sequence[str]] = None,
    training: Optional[Sequence[bool]] = None,
    early_callback: Any = None,
    prepare: Optional["SetPreparer"] = None,
    log: bool = False,
) -> Tuple[Optional[list], Optional[EarlyStopping]]:
    """The validation sets of ``SVMMap.fit`` as (name, scorer, {metric: values}) triples (None
    without ``eval_set``) and the early-stopping state (None without ``early_stopping_rounds``
    or an ``early_stopping`` callback). ``names`` are ``eval_names``; ``training[i]`` says
    whether set i is the training data itself, which early stopping never watches.
    ``prepare`` makes each set ready to score (default `memory_set`; ``svmmap.dask`` scores
    sets that are Dask collections on the workers). ``log``: early stopping says which round
    it kept to the ``svmmap`` logger (a verbose estimator) when its callback does not print it."""
    eval_metric = lightgbm_metrics(eval_metric, eval_at)
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
            int(rounds),
            [e[0] for e in watched],
            all_metrics=all_metrics,
            verbose=verbose,
            min_delta=min_delta,
            log=log and not verbose,
            first_metric_only=early_callback is not None and early_callback.first_metric_only,
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


def lightgbm_metrics(eval_metric: Any, eval_at: Any) -> List[str]:
    """The metrics recorded for ``eval_metric`` and ``eval_at``, by LightGBM's rule for
    ``LGBMRanker.fit`` (measured with LightGBM 4.7): the names of ``eval_metric`` in their
    order, then NDCG when they do not name it (the ranker's own metric), every NDCG at each
    cutoff of ``eval_at`` in increasing order. So ``eval_at=[10, 5]`` alone records ndcg@5
    then ndcg@10, and ndcg@5 is the first metric, the one ``first_metric_only`` and
    ``early_stopping_rounds`` watch; ``eval_metric="ndcg"`` means NDCG at those cutoffs.
    LightGBM cuts MAP at the cutoffs too (map@5); svmmap's metrics have no MAP at a cutoff, so
    "map" stays MAP over the whole list. Without ``eval_at`` the names are taken as they are,
    and no ``eval_metric`` is "map" (LightGBM's ranker would record ndcg@1 to ndcg@5)."""
    names = _metric_names(eval_metric)
    check_metric_names(names, "eval_metric")
    if eval_at is not None and (
        isinstance(eval_at, (str, bytes)) or not (isinstance(eval_at, numbers.Integral) or hasattr(eval_at, "__iter__"))
    ):
        raise invalid_parameter("eval_at", "a list of integers >= 1", eval_at)
    cutoffs: List[Any] = (
        [] if eval_at is None else [eval_at] if isinstance(eval_at, numbers.Integral) else list(eval_at)
    )
    if not cutoffs:
        # No cutoff given: LightGBM reads an empty eval_at as its default, and svmmap's default
        # is no cutoff at all.
        return ["map"] if eval_metric is None else names
    if not all(isinstance(k, numbers.Integral) and not isinstance(k, bool) and int(k) >= 1 for k in cutoffs):
        raise invalid_parameter("eval_at", "a list of integers >= 1", eval_at)
    at = [f"ndcg@{k}" for k in sorted({int(k) for k in cutoffs})]
    if eval_metric is None:
        names = []
    out: List[str] = []
    for name in [*names, *([] if "ndcg" in names else ["ndcg"])]:
        for metric in at if name == "ndcg" else [name]:
            if metric not in out:
                out.append(metric)
    return out


def _metric_names(eval_metric: Any) -> List[str]:
    """``eval_metric`` as a list of names: None is the default, "map" (LightGBM's signature
    has None for its default metric); a callable, LightGBM's custom metric, is refused by
    name rather than by "'function' object is not iterable"."""
    if eval_metric is None:
        return ["map"]
    if isinstance(eval_metric, str):
        given = [eval_metric]
    elif callable(eval_metric) or not hasattr(eval_metric, "__iter__"):
        raise TypeError(
            f"eval_metric takes metric names of svmmap.metrics ('map', 'ndcg@10', ...), got {eval_metric!r}; "
            "a custom metric can be computed in a callback from env.coef"
        )
    else:
        given = list(eval_metric)
    # LightGBM's spelling: names in any case, its aliases of MAP and NDCG, each metric once.
    # Whitespace is refused, not stripped (`check_spelling`), as in every other metric name.
    check_spelling(given, "eval_metric")
    out: List[Any] = []
    for name in given:
        if isinstance(name, str):
            name = name.lower()
            name = LIGHTGBM_METRIC_ALIASES.get(name, name)
        if name not in out:
            out.append(name)
    return out


#: LightGBM's aliases of its ranking metrics (its parameter docs, "metric"; checked against
#: LightGBM 4.7 by the tests): "mean_average_precision" is MAP, and the ranking objectives' names
#: stand for NDCG, their metric.
LIGHTGBM_METRIC_ALIASES = {
    "mean_average_precision": "map",
    "lambdarank": "ndcg",
    "rank_xendcg": "ndcg",
    "xendcg": "ndcg",
    "xe_ndcg": "ndcg",
    "xe_ndcg_mart": "ndcg",
    "xendcg_mart": "ndcg",
}


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


def missing_queries_message(n_sets: int) -> str:
    """What a user who gave eval_set without its queries must pass, in both spellings: svmmap's
    eval_qid (one array of query ids per set, as qid is to X) and LightGBM's eval_group (one
    array of query sizes per set, as LGBMRanker.fit takes it), each a list in eval_set's order."""
    ids = ", ".join(f"qid_val{i}" for i in range(n_sets)) if n_sets > 1 else "qid_val"
    sizes = ", ".join(f"sizes_val{i}" for i in range(n_sets)) if n_sets > 1 else "sizes_val"
    return (
        f"eval_set has {n_sets} set(s) but not their queries: pass eval_qid=[{ids}], a list with, for each "
        "set, the query id of every row of its X (as qid is to X), or LightGBM's eval_group=[" + sizes + "], a "
        "list with, for each set, the number of rows of each query (its rows adjacent, as group is to X)"
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
        raise ValueError(missing_queries_message(len(eval_set) if isinstance(eval_set, (list, tuple)) else 1))
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
    pipeline_hint: bool = True,
) -> Tuple[Callable[[np.ndarray], dict], dict, Callable[[], bool]]:
    """Validation set i in memory, checked and scored here (see `SetPreparer`). ``pipeline_hint``:
    a set narrower than X is told how a Pipeline's earlier steps transform it (an SVMMap's X
    there is their output); SVMMapCV, which makes its own preprocessing, is told nothing of it."""
    # Every message names the argument the user passed (eval_set[0] X, eval_qid[0]), not
    # the training data's X, y and qid, which the shared checks name by default.
    x_name, y_name = f"eval_set[{i}] X", f"eval_set[{i}] y"
    ex_core, ex_rows, ex_features = check_matrix(ex, name=x_name)
    if ex_features != n_features:
        raise ValueError(
            f"eval_set[{i}] has {ex_features} features, but X has {n_features}{PIPELINE_HINT if pipeline_hint and ex_features < n_features else ''}"
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


def refuse_single_fit_arguments(name: str, kwargs: dict) -> None:
    """``SVMMap.fit``'s LightGBM arguments given to a search's fit: refused, each with what the
    search does instead, unless its value asks for nothing (None, an empty ``eval_at`` or
    list of callbacks); LightGBM's other fit arguments as ``SVMMap.fit`` refuses them."""
    given = {k: v for k, v in kwargs.items() if not (v is None or (isinstance(v, (list, tuple)) and len(v) == 0))}
    if "eval_metric" in given or "eval_at" in given:
        try:
            first = lightgbm_metrics(kwargs.get("eval_metric"), kwargs.get("eval_at"))[0]
            hint = f"{name}(scoring={first!r}), the first of these metrics, which LightGBM's early stopping watches"
        except (TypeError, ValueError):
            hint = f"{name}(scoring='ndcg@10') or another name of svmmap.metrics"
        shown = ", ".join(f"{k}={kwargs[k]!r}" for k in ("eval_metric", "eval_at") if k in given)
        raise TypeError(
            f"{name}.fit() does not take {shown}: the search chooses its candidate by one validation metric, "
            f"its scoring parameter; give {hint}"
        )
    for key in ("early_stopping_rounds", "callbacks"):
        if key in given:
            raise TypeError(
                f"{name}.fit() does not take {key}: the search fits every C to its tolerance on every split; "
                "patience= and prune_margin= stop the candidates that cannot win, time_budget= bounds the "
                "search, verbose=1 logs its progress and cv_results_ records every fit. Early stopping on "
                "a validation set is SVMMap.fit's: SVMMap(C=search.best_C_).fit(X, y, qid=qid, "
                f"eval_set=[(X_val, y_val)], eval_qid=[qid_val], {key}=...)"
            )
    refuse_lightgbm_arguments(
        name,
        {k: v for k, v in kwargs.items() if k not in ("eval_metric", "eval_at", "early_stopping_rounds", "callbacks")},
    )
