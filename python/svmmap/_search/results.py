"""Private: the outcomes of a search's fits, the one rule that chooses among them and the one
``cv_results_`` builder."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._fit.degenerate import DegenerateModelWarning
from .._fit.degenerate import advice as message_advice

__all__ = ["Outcome", "Table", "choose", "loss_text", "refuse_at_refit"]

#: The status of a row (a candidate at one C) in ``cv_results_``.
FITTED = "fitted"
NOT_FITTED = "not fitted"
EARLY_STOP = "early stop"
TIME_BUDGET = "time budget"
FAILED = "failed"
PRUNED = "pruned"
#: A "ga2m" candidate whose Binner kept no pair on any split: the "binned" candidate's models.
NO_PAIRS = "no pairs"


class Table:
    """Per row (a candidate at one C, rows by candidate, then ascending C) and split: the
    outcome of each fit."""

    def __init__(self, params: List[Dict[str, Any]], n_splits: int) -> None:
        n = len(params)
        self.params = params
        self.scores = np.full((n, n_splits), np.nan)
        self.seconds = np.full((n, n_splits), np.nan)
        self.iters = np.zeros((n, n_splits), dtype=np.int64)
        self.evals = np.zeros((n, n_splits), dtype=np.int64)
        self.cold_evals = np.zeros((n, n_splits), dtype=np.int64)
        self.degenerate = np.zeros((n, n_splits), dtype=bool)
        self.stops = np.full((n, n_splits), "", dtype=object)
        self.confirmed = np.zeros(n, dtype=bool)
        self.status = np.full(n, NOT_FITTED, dtype=object)
        self.notes = np.full(n, "", dtype=object)
        #: The number of training queries of each split (`size.limit_training_queries` may
        #: have cut a split's training part); None: not known, left out of cv_results_.
        self.train_queries: Optional[List[int]] = None

    @property
    def fitted(self) -> np.ndarray:
        return self.status == FITTED

    def scored_splits(self) -> np.ndarray:
        """The splits with a score at some fitted row. A split scores NaN when none of its
        validation queries has the metric defined (no relevant document, for MAP): by the
        metric's convention (such queries are skipped), the split is skipped too."""
        return ~np.isnan(self.scores[self.fitted]).all(axis=0)

    def means(self, scored: np.ndarray) -> np.ndarray:
        """The mean score over the scored splits of every fitted row (NaN for the others)."""
        mean = np.full(len(self.params), np.nan)
        fitted = self.fitted
        if fitted.any():
            mean[fitted] = self.scores[fitted][:, scored].mean(axis=1)
        return mean


@dataclass
class Outcome:
    """What a search found: its ``cv_results_``, the chosen row and the search's seconds."""

    results: Dict[str, Any]
    best: int
    seconds: float
    #: The table and the arguments of `choose` after the search (name, scoring, tolerance,
    #: losses), for `refuse_at_refit` to choose again.
    table: Optional[Table] = None
    rule: Tuple[Any, ...] = ()


def refuse_at_refit(outcome: Outcome, error: BaseException) -> None:
    """Leaves out the chosen candidate, whose refit on all the training data the core refused
    (a query too long for its oracle that no split trained on, see ``max_train_queries``),
    as the search leaves out a candidate refused on a split: its rows get status "failed"
    and the reason, and the best of the others is chosen. Raises ``error`` when none is
    left."""
    table = outcome.table
    assert table is not None
    chosen = table.params[outcome.best]
    rows = [
        i
        for i, p in enumerate(table.params)
        if loss_text(p["loss"]) == loss_text(chosen["loss"]) and p["preprocessing"] == chosen["preprocessing"]
    ]
    table.status[rows] = FAILED
    table.notes[rows] = f"refused at the refit on all the training data: {type(error).__name__}: {error}"
    if not table.fitted.any():
        raise error
    outcome.best = choose(table, *outcome.rule)
    outcome.results = build_results(table, table.scored_splits())
    name = outcome.rule[0]
    warnings.warn(
        f"{name}: the chosen candidate {_row_label(chosen, True)} cannot be refitted on all the training data "
        f"({error}); it is left out (status 'failed' in cv_results_) and the next best, "
        f"{_row_label(table.params[outcome.best], True)}, is refitted",
        UserWarning,
        stacklevel=5,  # refuse_at_refit <- refit_chosen <- SVMMapCV._fit <- SVMMapCV.fit <- the caller
    )


def choose(table: Table, name: str, scoring: str, tolerance: float, losses: List[Any], budget_cut: bool = False) -> int:
    """THE selection rule: the row with the best mean validation score over the scored splits
    (ties: the row listed first, so the earlier candidate, then the smaller C), among the rows
    whose model ranks on every scored split when there are any; with ``tolerance`` > 0 the
    first such row within ``tolerance`` of the best. Warns when splits are left out of the
    mean and when every row's model ranks nothing somewhere (``budget_cut``: the time budget
    ended the search, which the warning then names); raises when nothing can be chosen."""
    scored = table.scored_splits()
    if not scored.any():
        raise ValueError(
            f"no validation split has a query on which {scoring!r} is defined (e.g. a query with a "
            "relevant document), so no candidate can be chosen; check relevance_threshold and the splits"
        )
    if not scored.all():
        warnings.warn(
            f"{name}: splits {np.flatnonzero(~scored).tolist()} have no validation query on "
            f"which {scoring!r} is defined (e.g. no relevant document); they are left out of the mean",
            UserWarning,
            # choose <- finish <- run <- SVMMapCV._fit <- SVMMapCV.fit <- the caller's line.
            stacklevel=6,
        )
    mean = table.means(scored)
    usable = table.fitted & ~np.isnan(mean)
    # A model that ranks nothing is chosen only when every fitted candidate does so: its
    # score only reflects how ties are broken.
    ranks = usable & ~table.degenerate[:, scored].any(axis=1)
    pool = ranks if ranks.any() else usable
    best = int(np.flatnonzero(pool)[np.argmax(mean[pool])])
    if tolerance > 0:
        best = int(np.flatnonzero(pool & (mean >= mean[best] - tolerance))[0])
    if not ranks.any():
        _warn_degenerate(table, name, scored, best, losses, budget_cut)
    return best


def _warn_degenerate(
    table: Table, name: str, scored: np.ndarray, best: int, losses: List[Any], budget_cut: bool
) -> None:
    fitted = np.flatnonzero(table.fitted)
    one = len({(loss_text(p["loss"]), p["preprocessing"]) for p in table.params}) == 1
    labels = [_row_label(table.params[i], not one) for i in fitted]
    where = (
        f"at every C of {[table.params[i]['C'] for i in fitted]}"
        if one
        else f"at every candidate of [{', '.join(labels)}]"
    )
    per_row = table.degenerate[fitted][:, scored].sum(axis=1)
    n_scored = int(scored.sum())
    chosen = _row_label(table.params[best], not one)
    if bool(np.all(per_row == n_scored)):
        what = (
            f"{where} the model of every split ranks nothing on the validation data (w = 0, or scores that tie "
            f"within every query), so the choice of {chosen} means nothing."
        )
    else:
        counts = ", ".join(f"{label}: {int(k)} of {n_scored}" for label, k in zip(labels, per_row))
        what = (
            f"{where} the model of some split ranks nothing on the validation data (w = 0, or scores that tie "
            f"within every query); splits whose model ranks nothing, per {'C' if one else 'candidate'}: {counts}. "
            f"{chosen} was chosen on mean scores that include those splits."
        )
    advice = message_advice(table.params[best]["loss"])
    if budget_cut:
        # The budget left only the first rows, whose fits it may have cut after a millisecond:
        # their w = 0 says nothing of the data ("Check the features and labels" on MQ2008).
        advice = (
            "The time budget ran out before the search could fit further (the rows fitted then may have been "
            "cut after their first iterations): give a larger time_budget before judging the features, labels "
            "or loss."
        )
    warnings.warn(
        f"{name}: {what} {advice}",
        DegenerateModelWarning,
        stacklevel=7,
    )


def _row_label(params: Dict[str, Any], with_candidate: bool) -> str:
    label = f"C = {params['C']:g}"
    if with_candidate:
        label = f"{loss_text(params['loss'])}/{params['preprocessing']} {label}"
    return label


def build_results(table: Table, scored: np.ndarray) -> Dict[str, Any]:
    """cv_results_: one entry per row, scikit-learn's keys and svmmap's (see SVMMapCV)."""
    rows = table.params
    fitted = table.fitted
    mean = table.means(scored)
    usable = fitted & ~np.isnan(mean)
    results: Dict[str, Any] = {
        "param_loss": np.array([loss_text(p["loss"]) for p in rows], dtype=object),
        "param_preprocessing": np.array([p["preprocessing"] for p in rows], dtype=object),
        "param_C": np.array([p["C"] for p in rows]),
        "params": [dict(p) for p in rows],
    }
    n_splits = table.scores.shape[1]
    for k in range(n_splits):
        results[f"split{k}_test_score"] = table.scores[:, k].copy()
    results["mean_test_score"] = mean
    std = np.full(len(rows), np.nan)
    if usable.any():
        std[usable] = table.scores[usable][:, scored].std(axis=1)
    results["std_test_score"] = std
    # Rank 1 is the best mean score (ties share the smaller rank), as in scikit-learn; rows not
    # fitted or without a score rank after every scored row.
    last = int(usable.sum()) + 1
    results["rank_test_score"] = np.array(
        [1 + int(np.sum(mean[usable] > m)) if u else last for m, u in zip(mean, usable)], dtype=np.int64
    )
    with warnings.catch_warnings():
        # A row with no split fitted has no mean time: NaN, without numpy's warning.
        warnings.simplefilter("ignore", RuntimeWarning)
        results["mean_fit_time"] = np.nanmean(table.seconds, axis=1)
    results["mean_n_iter"] = table.iters.mean(axis=1)
    results["mean_n_evals"] = table.evals.mean(axis=1)
    for k in range(n_splits):
        results[f"split{k}_fit_time"] = table.seconds[:, k].copy()
        results[f"split{k}_n_iter"] = table.iters[:, k].copy()
        results[f"split{k}_stop_reason"] = table.stops[:, k].copy()
        if table.train_queries is not None:
            # What each row was fitted on: the split's training queries where the row has a
            # fit on the split, 0 where it has none.
            fitted_on = ~np.isnan(table.seconds[:, k])
            results[f"split{k}_train_queries"] = np.where(fitted_on, table.train_queries[k], 0).astype(np.int64)
    results["confirmed"] = table.confirmed.copy()
    results["cold_n_evals"] = table.cold_evals.sum(axis=1)
    results["total_n_evals"] = table.evals.sum(axis=1) + table.cold_evals.sum(axis=1)
    results["n_degenerate_splits"] = table.degenerate.sum(axis=1)
    results["status"] = table.status.copy()
    results["note"] = table.notes.copy()
    return results


def loss_text(loss: Any) -> str:
    """A loss specification as one string (a combination as its comma-separated parts)."""
    if isinstance(loss, str):
        return loss
    if isinstance(loss, dict):
        return ",".join(f"{w:g}*{name}" for name, w in loss.items())
    return ",".join(str(part) for part in loss)
