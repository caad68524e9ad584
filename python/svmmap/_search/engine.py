"""Private: the fits of a search.

Every candidate (a loss and a preprocessing) has a path of C values per split. The C values
are visited in ascending order and, at each, every path not yet stopped is fitted split by
split, warm-started from its own model at the C before (``_core.fit_path_from``, which hands
the warm state from one call to the next and so gives the models of a path fitted in one
call bit for bit), before the next C: with a time budget every candidate thus gets its cheap
small-C fits first. After each split the candidates race (`_Search._race`): one far below the
best over the same splits stops there (from the second split on), and so does one below
the best by any amount whose fits took many times the iterations of the others' at that C
(from the first); in a search of one split, the race runs after its split, before the next
C. A path stops when its mean validation score has not improved for ``patience`` C values;
a candidate whose fit the core refuses on this data (an oracle that
cannot run on a query of this size, say) is left out with the reason; the time budget caps
the fit under way as well as the fits to come.
"""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .._fit.convergence import overflow_named
from .._fit.latent import latent_path
from .._fit.pairs import SelectionCut
from .candidates import PREPROCESSINGS, Candidate, candidate_list, pair_scale
from .results import (
    EARLY_STOP,
    FAILED,
    FITTED,
    NO_PAIRS,
    NOT_FITTED,
    PRUNED,
    TIME_BUDGET,
    Outcome,
    Table,
    build_results,
    choose,
)
from .scoring import refused_on_this_data, validation_score
from .size import training_queries
from .splits import SplitData

__all__ = [
    "RANKING_EPS",
    "SLOW_AFTER",
    "SLOW_FACTOR",
    "Candidate",
    "Policy",
    "candidate_list",
    "pair_scale",
    "ranking_config",
    "run",
]

#: The factor on ``eps`` of the fits of a search over losses and preprocessings, which only
#: rank candidates: the chosen one is fitted again at the ``eps`` given. On the raw-scale kind
#: of benchmarks/auto_search.py the search's CPU time fell by a quarter, to 29 s, choosing
#: pairwise / standard at C = 0.1 (test NDCG@10 0.6706) over C = 1 (0.6724), and its choice on
#: MQ2008 and the many-relevant kind held test NDCG@10 (the table of docs/benchmarks.md).
RANKING_EPS = 10.0

#: The race's cost rule: a candidate whose fits at one C take more than this many times the
#: median iterations of that C's candidates over the same splits, and whose mean score there
#: is below the best, stops (`_Search._slow_rows`). On the raw-scale kind of
#: benchmarks/auto_search.py the four losses on unscaled features took 58-75 iterations a fit
#: at the first C against a median of 4-5 and cost about 40% of the search's CPU time without
#: being chosen; on MQ2008's five folds and the many-relevant kind the rule stops nothing
#: (benchmarks/race_cost.py).
SLOW_FACTOR = 5.0

#: The cost rule starts after this many splits of a C. The race by score alone waits for two
#: (after one it pruned winners on MQ2008); a candidate that is slow as well as behind after
#: one split costs the most of any to keep. On the raw-scale kind starting after one split
#: rather than two chose the same model in 5% less CPU time (benchmarks/race_cost.py
#: --settings off,5:2,default).
SLOW_AFTER = 1

#: The race before the next C in a search of one split: after the C's only split, a path
#: below the best row so far by more than ``prune_margin``, or slow and below it, stops
#: before the next C (its row stays fitted, the later ones are "pruned"). There the rows are
#: compared on the very scores that choose among them, so only a path that would climb more
#: than the margin at a larger C can be lost. With the vali split as the validation set it
#: chose what the search without it chose on MQ2008's five folds and on three seeds of both
#: generated kinds, in 0.68, 0.75 and 0.88 times the CPU time (benchmarks/race_cost.py --cv
#: validation --settings one-off,default --seeds 0,1,2).
RACE_ONE_SPLIT = True

#: The same race after the last split of a C in a k-fold search, off: the race after the
#: second split of the next C stops the same paths two splits later, and racing before it
#: chose alike in 0.88, 0.96 and 1.00 times the CPU time, within the timing's noise at load 8
#: to 12 (benchmarks/race_cost.py --cv 5 --settings default,last-on --seeds 0,1,2).
RACE_LAST_SPLIT = False


@dataclass(frozen=True)
class Policy:
    """How a search fits and chooses (SVMMapCV's parameters of the same names)."""

    name: str
    grid: Sequence[float]
    scoring: str
    relevance_threshold: float
    score_tolerance: float
    threads: int
    patience: Optional[int] = None
    time_budget: Optional[float] = None
    warm: bool = True
    confirm_tolerance: Optional[float] = None
    verbose: int = 0
    #: The race across candidates (`_Search._race`): None, every row is fitted on every split.
    prune_margin: Optional[float] = None
    #: The race starts once this many splits of a row are fitted: after one split alone it
    #: pruned candidates that won on MQ2008 folds 2 and 4, after two it chose what the full
    #: search chose on all five folds and both generated kinds.
    prune_after: int = 2
    #: The factor on ``eps`` of the search's fits, which only rank candidates (see
    #: `ranking_config`); 1: the fits of the configuration given.
    ranking_eps: float = 1.0
    #: The race's cost rule (`_Search._slow_rows`): a row whose fits took more than this many
    #: times the median iterations of the rows fitted at the same C over the same splits, and
    #: whose mean is below the best, stops. None: no cost rule.
    slow_factor: Optional[float] = SLOW_FACTOR
    #: The cost rule starts once this many splits of a row are fitted (see `SLOW_AFTER`).
    slow_after: int = SLOW_AFTER
    #: The race before the next C in a search of one split (``cv="validation"``), where the
    #: race after a split never runs (`RACE_ONE_SPLIT`). False: every path runs to its patience.
    race_one_split: bool = RACE_ONE_SPLIT
    #: The same race after the last split of each C in a search of several splits
    #: (`RACE_LAST_SPLIT`).
    race_last_split: bool = RACE_LAST_SPLIT


class _Path:
    """The C path of one candidate: its rows of the table, the warm state of each split and
    the early-stop bookkeeping."""

    def __init__(self, candidate: Candidate, first_row: int, n_splits: int) -> None:
        self.candidate = candidate
        self.first_row = first_row
        self.states: List[Any] = [None] * n_splits
        self.best = -np.inf
        self.not_improved = 0
        self.stopped = False

    def stop(self) -> None:
        """Stops the path, and lets go of its warm states: a state holds the working set of
        cutting planes, one dense vector of the features a cut (of every indicator column for
        a binned or GA2M candidate), and no later fit of a stopped path reads it."""
        self.stopped = True
        self.states = [None] * len(self.states)


class _Search:
    def __init__(self, candidates: Sequence[Candidate], data: SplitData, policy: Policy) -> None:
        self.data = data
        self.policy = policy
        grid = list(policy.grid)
        params = [
            {"loss": c.loss, "preprocessing": c.preprocessing, "C": C * c.C_scale if c.C_scale != 1.0 else C}
            for c in candidates
            for C in grid
        ]
        self.table = Table(params, data.n_splits)
        self.table.train_queries = training_queries(data.splits, data.codes)
        self.paths = [_Path(c, i * len(grid), data.n_splits) for i, c in enumerate(candidates)]
        self.start = time.perf_counter()
        self.out_of_time = False
        self.errors: List[BaseException] = []
        self.n_fits = 0

    # --- the fits -------------------------------------------------------------------------

    def remaining(self) -> Optional[float]:
        budget = self.policy.time_budget
        return None if budget is None else budget - (time.perf_counter() - self.start)

    def fit(self, candidate: Candidate, C: float, k: int, warm_state: Any, cold: bool = False) -> Tuple[Any, ...]:
        """One fit of split k at C: (coef, summary, warm state, whether the budget capped it)."""
        X_train, y, codes, n_queries, weights = self.data.fit_inputs(candidate.preprocessing, k)
        config, capped = self._capped(candidate.config)
        spread = lambda: self.data.core_X.column_std(self.policy.threads)  # noqa: E731
        if config.latent is not None:
            # CCCP rounds from the map model at each C: no warm start along the path. An
            # overflow is blamed as in the convex branch (its rounds take no query weights).
            with overflow_named(C, None, spread):
                ((coef, summary),) = latent_path(X_train, y, codes, n_queries, config, [C], self.policy.threads)
            return coef, summary, None, capped
        state = None if (cold or not self.policy.warm) else warm_state
        with overflow_named(C, weights, spread):
            result, state = _core.fit_path_from(
                X_train, y, codes, n_queries, config, [C], warm_state=state, query_weights=weights
            )
        ((coef, summary),) = result
        return coef, summary, state, capped

    def _capped(self, config: Any) -> Tuple[Any, bool]:
        """The configuration with its time limit cut to the budget left, and whether it was."""
        left = self.remaining()
        if left is None:
            return config, False
        own = config.kwargs().get(_core.TIME_LIMIT)
        if own is not None and own <= left:
            return config, False
        return _core.TrainConfig(**{**config.kwargs(), _core.TIME_LIMIT: max(left, 1e-3)}), True

    def score(self, row: int, k: int, coef: np.ndarray, summary: Any, capped: bool, cold: bool = False) -> None:
        table = self.table
        inputs = self.data.score_inputs(self.table.params[row]["preprocessing"], k)
        table.scores[row, k], table.degenerate[row, k] = validation_score(coef, inputs, self.policy)
        if cold:
            table.cold_evals[row, k] = summary.n_evals
            return
        table.seconds[row, k] = summary.history[-1]["seconds"]
        table.iters[row, k] = summary.n_iter
        table.evals[row, k] = summary.n_evals
        stop = summary.stop
        table.stops[row, k] = "budget" if (capped and stop == _core.TIME_LIMIT) else stop

    # --- the loop -------------------------------------------------------------------------

    def run(self) -> None:
        """At each C, split by split, every path not stopped; after each split, the race
        (`_race`); after the last, the early stop along C (`_patience`). Once the budget is
        spent only the first candidate's first C, which always runs, is fitted on."""
        for j in range(len(self.policy.grid)):
            active = [path for path in self.paths if not path.stopped]
            # A split's fits of one preprocessing run one after another, so that its bin codes
            # (one matrix at a time, see SplitData._binned_of) are made once per split and C.
            ordered = sorted(active, key=lambda path: PREPROCESSINGS.index(path.candidate.preprocessing))
            for k in range(self.data.n_splits):
                for path in ordered:
                    if path.stopped or (self.out_of_time and not (j == 0 and path is self._always_fitted())):
                        continue
                    self._fit_split(path, j, k)
                if self.out_of_time and j > 0:
                    return
                if k + 1 < self.data.n_splits and not self.out_of_time:
                    self._race(active, j, k)
            if self.out_of_time:
                self._complete_first_row()  # (j is 0: at a later C the loop has returned)
            finished = [p for p in [self._always_fitted()] if p] if self.out_of_time else active
            for path in finished:
                if not path.stopped:
                    self._finish_row(path, j)
            if self.out_of_time:
                return
            last = self.policy.race_one_split if self.data.n_splits == 1 else self.policy.race_last_split
            if last and j + 1 < len(self.policy.grid):
                self._race(active, j, self.data.n_splits - 1, before_next=True)

    def _fit_split(self, path: _Path, j: int, k: int) -> None:
        """Fits row j of ``path`` on split k, unless the budget is spent (``out_of_time``)."""
        row = path.first_row + j
        # The first candidate's first C is always fitted on every split, so that the search
        # has a result whatever the budget.
        first = j == 0 and path is self._always_fitted()
        left = self.remaining()
        if left is not None and left <= 0 and not first:
            if self.policy.verbose >= 1 and not self.out_of_time:
                self._report(row, "not fitted: the time budget is spent")
            self.out_of_time = True
            return
        if path.candidate.preprocessing == "ga2m":
            # The pairs are chosen before the fit reads them, by the budget's deadline unless
            # the row always runs: on large data their choice can take longer than a budget.
            budget = self.policy.time_budget
            deadline = None if (budget is None or first) else self.start + budget
            if j == 0 and k == 0 and self._no_pairs(path, deadline):
                return
            if self._choose_pairs(row, k, deadline) is None:
                return
        C = self.table.params[row]["C"]
        try:
            # Capped like every fit: once the budget is spent, the first row's remaining splits
            # stop after their first iterations, so the search ends within moments of it.
            coef, summary, path.states[k], capped = self.fit(path.candidate, C, k, path.states[k])
        except (ValueError, MemoryError) as error:
            if not refused_on_this_data(error):
                raise
            self._fail(path, row, error)
            return
        self.score(row, k, coef, summary, capped)
        # A fit stopped by the budget spent it: its row is not finished (status "time budget",
        # never chosen) whichever split it was, unless it is the row that always runs.
        self.out_of_time = self.out_of_time or self.table.stops[row, k] == "budget"
        self.n_fits += 1
        if self.policy.verbose >= 2:
            self._report(row, f"split {k + 1} of {self.data.n_splits}")

    def _finish_row(self, path: _Path, j: int) -> None:
        row = path.first_row + j
        self.table.status[row] = FITTED
        # The row is done before its path stops (`_patience` says so): the other order read
        # as a path that stopped before its last row was fitted.
        if self.policy.verbose >= 1:
            self._report(row, "done")
        self._patience(path, j)

    def _always_fitted(self) -> Optional[_Path]:
        """The path whose first C runs on every split whatever the budget (so there is a result):
        the first not stopped at the first C (refused on this data, without pairs or pruned)."""
        return next((p for p in self.paths if not p.stopped), None)

    def _complete_first_row(self) -> None:
        """Out of time at the first C: fits the splits `_always_fitted`'s row skipped (it was not yet the one)."""
        while (path := self._always_fitted()) is not None:
            # A split whose pair selection the budget cut (`_choose_pairs`: stop "budget",
            # never timed) is missing too, should that "ga2m" row become the one that runs.
            stops, seconds = self.table.stops[path.first_row], self.table.seconds[path.first_row]
            missing = np.flatnonzero((stops == "") | ((stops == "budget") & np.isnan(seconds)))
            if not missing.size:
                return
            self._fit_split(path, 0, int(missing[0]))

    def _race(self, active: List[_Path], j: int, k: int, before_next: bool = False) -> None:
        """After split k of row j: a path whose mean over splits 0..k is below the best such
        mean of any row (this C's or an earlier one's) by more than ``prune_margin`` stops
        here, its row and the later ones marked "pruned". The rows are compared on the same
        splits, so the query-to-query noise that a single split carries is shared. A path
        whose fits are slow (`_slow_rows`) stops when it is below the best by any amount: the
        splits and C values left would cost it the most, for a candidate not in the lead.
        ``before_next``: after row j's last split, once it is finished; the row stays fitted
        and the path stops before the next C, whatever ``prune_after`` (the row's scores are
        those that choose among the rows)."""
        margin = self.policy.prune_margin
        if margin is None or (not before_next and k + 1 < min(self.policy.prune_after, self.policy.slow_after)):
            return
        # Before ``prune_after`` splits only the cost rule stops a path.
        by_score = before_next or k + 1 >= self.policy.prune_after
        table = self.table
        seen = table.scores[:, : k + 1]
        # A row whose model ranks nothing on a split (w = 0) is not judged: its score is its
        # ties' order (0.0093 for ndcg@10:graded at C = 0.01 on binary labels, 0.72 at C = 0.1).
        done = ~np.isnan(seen).any(axis=1) & ~table.degenerate[:, : k + 1].any(axis=1)
        if not done.any():
            return
        means = np.full(len(table.params), -np.inf)
        means[done] = seen[done].mean(axis=1)
        best = float(means.max())
        slow = self._slow_rows(active, j, k, done)
        for path in active:
            row = path.first_row + j
            if path.stopped or not done[row]:
                continue
            if by_score and means[row] < best - margin:
                why = f"{best - means[row]:.4f} below the best over the same splits"
            elif row in slow and means[row] < best:
                why = (
                    f"{best - means[row]:.4f} below the best over the same splits, with "
                    f"{slow[row]:.1f} times the median iterations of this C's fits"
                )
            else:
                continue
            path.stop()
            if before_next:
                # The row is fitted on every split and stays so; the race acts on the next.
                first, text = row + 1, f"pruned before its fits: at C={table.params[row]['C']:g} mean"
                table.stops[first, :] = "pruned"
            else:
                first, text = row, f"pruned after {k + 1} of {self.data.n_splits} splits: mean"
                table.stops[row, k + 1 :] = "pruned"
            for later in range(first, path.first_row + len(self.policy.grid)):
                table.status[later] = PRUNED
            table.notes[first] = f"{text} {means[row]:.4f}, {why}"
            if self.policy.verbose >= 1:
                self._report(first, table.notes[first] if before_next else "pruned")

    def _slow_rows(self, active: List[_Path], j: int, k: int, done: np.ndarray) -> Dict[int, float]:
        """The rows of C index j, among those of ``active`` fitted on splits 0..k, whose mean
        iterations over these splits exceed ``slow_factor`` times the median of those rows',
        each with its ratio to the median. Iterations, not seconds, measure the cost, so that
        the search's choices do not depend on the machine's load; they undercount the fits of
        a loss whose oracle pass costs more (ndcg@10:graded's), which the rule then stops
        less often, never more. Of one or two rows none exceeds twice the median, so the rule
        (of a factor of 2 or more) needs three candidates to stop one."""
        factor = self.policy.slow_factor
        rows = [path.first_row + j for path in active if done[path.first_row + j]]
        if factor is None or k + 1 < self.policy.slow_after or not rows:
            return {}
        iters = self.table.iters[rows, : k + 1].mean(axis=1)
        median = max(float(np.median(iters)), 1.0)
        return {row: float(n) / median for row, n in zip(rows, iters) if n > factor * median}

    def _no_pairs(self, path: _Path, deadline: Optional[float]) -> bool:
        """Before a "ga2m" path's first fit: when its Binner keeps no pair on any split's
        training rows and "binned" with the same loss is a candidate too, the path would fit
        that candidate's models again, so it stops (status "no pairs") at the cost of the pair
        selections alone. Returns whether its first fit is left out: it stopped, or the budget
        ran out during a selection (`_choose_pairs`)."""
        candidate = path.candidate
        if not any(p.candidate.preprocessing == "binned" and p.candidate.loss == candidate.loss for p in self.paths):
            return False
        for k in range(self.data.n_splits):
            kept = self._choose_pairs(path.first_row, k, deadline)
            if kept is None:
                return True
            if kept:
                return False
        path.stop()
        last = path.first_row + len(self.policy.grid)
        for row in range(path.first_row, last):
            self.table.status[row] = NO_PAIRS
            self.table.notes[row] = (
                "Binner(interactions=...) kept no pair on any split's training queries: the model is the binned one"
            )
        if self.policy.verbose >= 1:
            self._report(path.first_row, "left out, no pair kept on any split")
        return True

    def _choose_pairs(self, row: int, k: int, deadline: Optional[float]) -> Optional[bool]:
        """Whether "ga2m"'s Binner keeps a pair on split k (chosen once a split, then kept);
        None when ``deadline`` (a ``time.perf_counter()`` time) passed during the choice: split
        k of ``row`` is then cut as a fit the budget stops is (stop reason "budget", the row
        never chosen), without a fit or a score, and the search is out of time."""
        try:
            return bool(self.data.ga2m_pairs(k, deadline))
        except SelectionCut as cut:
            self.table.stops[row, k] = "budget"
            self.table.notes[row] = f"the time budget ran out on split {k}: {cut}"
            self.out_of_time = True
            if self.policy.verbose >= 1:
                self._report(row, f"not fitted: the time budget ran out while its pairs were chosen on split {k + 1}")
            return None

    def _fail(self, path: _Path, row: int, error: BaseException) -> None:
        """A candidate whose fit is refused on this data is left out, with the reason."""
        # Kept without its traceback: the traceback's frames hold the fit's matrix (a split's
        # bin codes, 25 MB on 573k rows) and this search, a cycle that kept every split's data
        # alive until the garbage collector ran, through the refit (benchmarks/search_memory.py).
        self.errors.append(error.with_traceback(None))
        path.stop()
        note = f"{type(error).__name__}: {error}"
        last = path.first_row + len(self.policy.grid)
        for later in range(row, last):
            self.table.status[later] = FAILED
            self.table.notes[later] = note
        if self.policy.verbose >= 1:
            self._report(row, f"left out: {note}")  # With the figures of every other line.

    def _patience(self, path: _Path, j: int) -> None:
        """The early stop along C: after row j's mean, ``path`` stops once ``patience`` rows in
        a row have not improved on its best (a NaN mean, no split scored, is no improvement)."""
        scores = self.table.scores[path.first_row + j]
        scored = scores[~np.isnan(scores)]
        mean = float(scored.mean()) if scored.size else float("nan")
        if mean > path.best:
            path.best, path.not_improved = mean, 0
            return
        path.not_improved += 1
        patience = self.policy.patience
        if patience is not None and path.not_improved >= patience:
            path.stop()
            for later in range(path.first_row + j + 1, path.first_row + len(self.policy.grid)):
                self.table.status[later] = EARLY_STOP
            if self.policy.verbose >= 1 and j + 1 < len(self.policy.grid):
                self._report(path.first_row + j, f"stops: no better for {path.not_improved} C values")

    # --- confirmation by cold fits ---------------------------------------------------------

    def confirm(self) -> None:
        """The rows whose warm-path mean is within ``confirm_tolerance`` (plus the score
        tolerance) of the best are fitted again from scratch on every split, and chosen among
        on those scores (a path of one C without warm start is exactly SVMMap(C).fit)."""
        policy = self.policy
        # The C paths are done: their warm states (each a working set of cutting planes, one
        # dense vector of every indicator column a cut for a binned candidate) are read by no
        # later fit, and the confirmation's fits start cold.
        for path in self.paths:
            path.states = [None] * len(path.states)
        if not policy.warm or policy.confirm_tolerance is None:
            return
        table = self.table
        warm_mean = table.means(table.scored_splits())
        margin = float(policy.confirm_tolerance) + float(policy.score_tolerance)
        close = np.flatnonzero(table.fitted & (warm_mean >= np.nanmax(warm_mean) - margin))
        if close.size <= 1:
            return
        # A cold fit the budget cuts scores a model of a pass or two, which chose C = 0.01 over
        # the warm path's C = 1 on MQ2008: the warm scores stay until every cold fit is done.
        warm = (table.scores.copy(), table.degenerate.copy(), table.cold_evals.copy())
        for k in range(self.data.n_splits):
            for row in close.tolist():
                left = self.remaining()
                path = self.paths[row // len(policy.grid)]
                if left is None or left > 0:
                    coef, summary, _, capped = self.fit(path.candidate, table.params[row]["C"], k, None, cold=True)
                if (left is not None and left <= 0) or (capped and summary.stop == _core.TIME_LIMIT):
                    table.scores, table.degenerate, table.cold_evals = warm
                    warnings.warn(
                        f"{policy.name}: the time budget of {policy.time_budget:g} s ran out before the confirmation "
                        "by cold fits (confirm_tolerance) was done; the choice is made on the warm path's scores",
                        UserWarning,
                        stacklevel=5,  # confirm <- run <- SVMMapCV._fit <- SVMMapCV.fit <- the caller
                    )
                    return
                self.score(row, k, coef, summary, capped, cold=True)
            # No later fit reads split k: its codes, window and statistics go before the next's.
            self.data.release(k)
        table.confirmed[close] = True

    # --- progress --------------------------------------------------------------------------

    def _label(self, row: int) -> str:
        p = self.table.params[row]
        from .results import loss_text

        return f"{loss_text(p['loss'])}/{p['preprocessing']} C={p['C']:g}"

    def _report(self, row: int, what: str) -> None:
        """One progress line: fits done of those left at most, the row's score, the best so
        far, the time spent and an estimate of the time left (fits left at the mean time of a
        fit so far; the early stop along C usually leaves out many of them)."""
        table = self.table
        # The splits not yet fitted of the rows still open: the fits the race has made of the
        # other rows at this C count as done, not as left, so that done + left never grows.
        left = int(np.sum(table.stops[table.status == NOT_FITTED] == ""))
        elapsed = time.perf_counter() - self.start
        per_fit = elapsed / max(self.n_fits, 1)
        scores = table.scores[row]
        shown = scores[~np.isnan(scores)]
        line = f"[{self.policy.name}] {self.n_fits}/{self.n_fits + left} fits  {self._label(row)} {what}"
        if shown.size:
            line += f": {self.policy.scoring} {shown.mean():.4f}"
        best = self._best_so_far()
        if best is not None:
            line += f"  best {best[1]:.4f} ({self._label(best[0])})"
        line += f"  {elapsed:.1f} s, at most about {left * per_fit:.0f} s left"
        print(line, file=sys.stderr, flush=True)

    def _best_so_far(self) -> Optional[Tuple[int, float]]:
        fitted = np.flatnonzero(self.table.fitted)
        if not fitted.size:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.nanmean(self.table.scores[fitted], axis=1)
        if np.isnan(means).all():
            return None
        i = int(np.nanargmax(means))
        return int(fitted[i]), float(means[i])

    # --- the end ---------------------------------------------------------------------------

    def finish(self, losses: List[Any]) -> Outcome:
        table = self.table
        elapsed = time.perf_counter() - self.start
        if not table.fitted.any() and self.errors:
            # Every candidate was refused: the data, not a candidate, is the problem.
            raise self.errors[0]
        if self.out_of_time:
            left_out = table.status == NOT_FITTED
            table.status[left_out] = TIME_BUDGET
            warnings.warn(
                f"{self.policy.name}: the time budget of {self.policy.time_budget:g} s was spent after "
                f"{elapsed:.3g} s; {int(left_out.sum())} candidates (loss, preprocessing, C) were not fitted "
                "(status 'time budget' in cv_results_), so the best model is the best of those fitted",
                UserWarning,
                # finish <- run <- SVMMapCV._fit <- SVMMapCV.fit <- the caller's line.
                stacklevel=5,
            )
        policy = self.policy
        best = choose(table, policy.name, policy.scoring, float(policy.score_tolerance), losses, self.out_of_time)
        rule = (policy.name, policy.scoring, float(policy.score_tolerance), losses)
        return Outcome(build_results(table, table.scored_splits()), best, elapsed, table, rule)


def ranking_config(candidate: Candidate, policy: Policy) -> Candidate:
    """``candidate`` with the training configuration of its search fits, which only rank the
    candidates (the one chosen is fitted again at the configuration given, by the refit).

    Its ``eps`` is ``policy.ranking_eps`` times the one given, and for "pairwise:count" on the
    other losses' scale of C (``C_scale``, see `pair_scale`) times 4 / ``C_scale`` as well:
    at C' = C * C_scale its objective is 4 times that of "pairwise" at C (with w = 2v), and its
    duality gap tolerance C' * eps' is then 4 C eps, "pairwise"'s at C in its units. With the
    ``eps`` given, its fits were solved M times tighter (M the mean pairs per query, 4 /
    ``C_scale``, about 4,000 on the raw-scale kind of benchmarks/auto_search.py), half of
    their iterations closing a gap far below any change of the validation score."""
    factor = float(policy.ranking_eps)
    if candidate.C_scale != 1.0:
        factor *= 4.0 / candidate.C_scale
    if factor == 1.0:
        return candidate
    kwargs = candidate.config.kwargs()
    return replace(candidate, config=_core.TrainConfig(**{**kwargs, "eps": kwargs["eps"] * factor}))


def run(candidates: Sequence[Candidate], data: SplitData, policy: Policy) -> Outcome:
    """Fits and scores every candidate's C path on every split and chooses one row (see the
    module docstring), each fit at its `ranking_config`."""
    search = _Search([ranking_config(c, policy) for c in candidates], data, policy)
    search.run()
    search.confirm()
    return search.finish([c.loss for c in candidates])
