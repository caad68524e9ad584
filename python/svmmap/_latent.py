"""The latent-target losses (``loss="ndcg@k:latent"``): their CCCP rounds, each a convex solve
of the core, what a round that ended at w = 0 measured, and the attributes they set."""

from __future__ import annotations

import time
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _core
from ._typing import IterationRecord

__all__ = [
    "LATENT_MAX_ROUNDS",
    "fit_latent",
    "latent_path",
    "refuse_latent_options",
    "set_rounds",
]


#: The most CCCP rounds of a latent-target loss after its ``map`` start. On the data of
#: ``benchmarks/cutoff_losses.py`` the rounds stop by themselves after at most 85 (C = 10000).
LATENT_MAX_ROUNDS = 100
#: The CCCP rounds stop when the latent objective decreases by less than this fraction of its
#: value (the prototype's rule in benchmarks/cutoff_losses.py).
LATENT_RELATIVE_DECREASE = 1e-6
#: Each CCCP round is solved to this fraction of eps (its duality gap within eps C / 10). The
#: rounds start from the round before's working set (see :func:`fit_latent`), where a solve at
#: eps C often certified the starting point itself and ended the rounds early: on the data of
#: ``benchmarks/cutoff_losses.py`` (make_ranking seeds 0-2, MQ2008 folds 1-2; C = 0.1 ... 10^4,
#: 35 fits) warm rounds at eps took 0.3-0.6 times the time of the cold rounds at eps but ended
#: at a latent objective up to 4e-4 higher in 19 fits; at eps / 10 they took 0.5-0.9 times the
#: time and ended lower in 33 fits (at most 1.2e-5 higher in the other 2).
LATENT_ROUND_EPS_FACTOR = 0.1


def refuse_latent_options(loss: Any, *, sample_weight: Any, eval_set: Any) -> None:
    """The fit arguments a latent-target loss does not support, refused with the alternative."""
    if sample_weight is not None:
        raise ValueError(
            f"sample_weight is not supported with loss={loss!r} (its CCCP rounds weigh every query "
            "alike); train loss='map' or the paper's 'ndcg@k' with sample_weight instead"
        )
    if eval_set is not None:
        raise ValueError(
            f"eval_set and early stopping are not supported with loss={loss!r} (it trains in CCCP "
            "rounds, each a full fit); choose C by validation with SVMMapCV, or train loss='map' "
            "with eval_set"
        )


def latent_target_coefficients(
    scores: np.ndarray, relevant: np.ndarray, codes: np.ndarray, n_queries: int, cutoff: int
) -> np.ndarray:
    """Per row, the coefficients e with e.s = w.(Psi_po(ideal) - Psi_po(y_t)) on every query,
    y_t the latent target at ``scores``: the m = min(P, cutoff) best-scored relevant documents
    first, the rest in score order (Psi_po: pairs of a relevant and a non-relevant document,
    scaled by 1/(P N)). A relevant document i outside the top m gets the number of
    non-relevant documents scored strictly above it, a non-relevant b minus the number of
    those relevant documents scored strictly below it, both times 2/(P N). Which tied relevant
    documents make the top m does not matter: the counts depend on the scores alone. Queries
    without a relevant or without a non-relevant document get 0 (no pair)."""
    e = np.zeros(scores.shape[0])
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n_queries + 1))
    for q in range(n_queries):
        rows = order[bounds[q] : bounds[q + 1]]
        rel = relevant[rows]
        pos, neg = rows[rel], rows[~rel]
        p, n = pos.shape[0], neg.shape[0]
        if p == 0 or n == 0 or p <= cutoff:
            continue
        scale = 2.0 / (p * n)
        ranked = pos[np.argsort(-scores[pos], kind="stable")]
        rest = ranked[cutoff:]
        negative_scores = np.sort(scores[neg])
        rest_scores = np.sort(scores[rest])
        e[rest] = scale * (n - np.searchsorted(negative_scores, scores[rest], side="right"))
        e[neg] = -scale * np.searchsorted(rest_scores, scores[neg], side="left")
    return e


def graded_target_coefficients(
    scores: np.ndarray, grades: np.ndarray, codes: np.ndarray, n_queries: int, cutoff: int
) -> np.ndarray:
    """:func:`latent_target_coefficients` for the graded feature map of ``"ndcg@k:graded"``
    (pairs of documents of different grades, scaled by 1/Z, Z their number): per row, e with
    e.s = w.(Psi(ideal) - Psi(y_t)) on every query, y_t the best-scored ranking of loss 0.

    A ranking has graded NDCG@k 1 exactly when its top K = min(k, n) holds the K largest grades
    in descending order (the discounts decrease strictly). So y_t holds every document of a
    grade above g* (the grade at rank K of the ideal ranking) and the r best-scored of grade g*
    that the ideal top K holds, in grade order, and then the rest in score order: a document of
    grade g* placed on top costs 2 (s_j - s_d) for each lower-grade j scored above it, which the
    best-scored ones minimize, and the rest in score order orders each of its pairs by score,
    their most. Only pairs of two documents of the rest can then be misordered against the
    ideal: a document d of the rest gets 2/Z (#lower-grade documents of the rest scored
    strictly above it - #higher-grade documents of the rest scored strictly below it). On
    binary grades this is :func:`latent_target_coefficients` (Z = P N)."""
    e = np.zeros(scores.shape[0])
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n_queries + 1))
    for q in range(n_queries):
        rows = order[bounds[q] : bounds[q + 1]]
        g = grades[rows]
        levels, sizes = np.unique(g, return_counts=True)
        n = rows.shape[0]
        top = min(cutoff, n)
        if levels.shape[0] < 2 or top == n:
            continue
        z = (n * n - int(np.sum(sizes * sizes))) // 2
        boundary = np.sort(g)[::-1][top - 1]
        inside = g > boundary
        # The ideal top holds this many documents of the boundary grade: the best-scored ones.
        at_boundary = np.flatnonzero(g == boundary)
        taken = top - int(inside.sum())
        best = at_boundary[np.argsort(-scores[rows][at_boundary], kind="stable")[:taken]]
        inside[best] = True
        rest = rows[~inside]
        rest_grades, rest_scores = grades[rest], scores[rest]
        for level in np.unique(rest_grades):
            mine = rest_grades == level
            lower = np.sort(rest_scores[rest_grades < level])
            higher = np.sort(rest_scores[rest_grades > level])
            above = lower.shape[0] - np.searchsorted(lower, rest_scores[mine], side="right")
            below = np.searchsorted(higher, rest_scores[mine], side="left")
            e[rest[mine]] = 2.0 * (above - below) / z
    return e


def fit_latent(
    core_X: Any,
    labels: np.ndarray,
    codes: np.ndarray,
    n_queries: int,
    config: "_core.TrainConfig",
    on_iteration: Optional[Callable[[IterationRecord], bool]],
    threads: int,
) -> "tuple[np.ndarray, _core.FitSummary, list[float], Union[bool, str], Optional[str]]":
    """NDCG@k with a latent target (``loss="ndcg@k:latent"``) by CCCP; returns the model, the
    solver summary of the round that made it, the objective before the first round and after
    every kept round, whether the rounds stopped at ``LATENT_MAX_ROUNDS`` with the objective
    still decreasing by at least ``LATENT_RELATIVE_DECREASE`` of its value (or, as a string, the
    stop reason of a round that a limit ended and that was not kept), and, when the rounds
    ended at w = 0 from a map model that ranks, what the objective says about w = 0 there
    (`_zero_note`, for the DegenerateModelWarning).

    The objective is F(w) = 1/2 |w|^2 + C/n sum_q [max_ybar (Delta(ybar) + w.Psi_po(ybar)) -
    max_{y: Delta(y) = 0} w.Psi_po(y)] (Yu and Joachims, ICML 2009), not convex. The rounds
    start from the ``map`` model at the same C (w = 0 is a stationary point: its target is the
    ideal ranking). Each round fixes the target at the current scores, which makes the
    query's hinge the paper's plus the linear term w.X_q^T e_q, and solves that convex problem
    with the paper's exact oracle (``config.latent``): every cut of the paper's problem minus
    the constant sum_q X_q^T e_q. Its objective bounds F from above and equals it at the
    current w, so an exact solve never raises F, and F itself is evaluated exactly after each
    round (one oracle pass), so a decrease smaller than the solve's tolerance (eps C) is still
    real. Each round's solve starts from the working set of the round before, its cuts moved by
    the change of the constant (see the loop), and is solved to eps C / 10
    (``LATENT_ROUND_EPS_FACTOR``). The rounds stop when F decreases by less than
    ``LATENT_RELATIVE_DECREASE`` (1e-6) of
    its value: stopping at eps C instead took 7 and 13 rounds at C = 10^4 on the synthetic
    data of benchmarks/cutoff_losses.py, short of the training NDCG@10 that further rounds
    reach (docs/guide/losses.md). A round that raises F is not kept. They also stop after a solve that did not converge (max_iter or the
    callback) and after ``LATENT_MAX_ROUNDS`` rounds.
    """
    base = config.latent
    assert base is not None
    head, *options = base.split(":")
    cutoff = int(head.split("@")[1])
    # max_time bounds the whole fit: each solve gets what is left of it.
    deadline = None if config.kwargs()["max_time"] is None else time.monotonic() + config.kwargs()["max_time"]

    def timed(changes: Dict[str, Any]) -> "_core.TrainConfig":
        if deadline is not None:
            changes = {**changes, "max_time": max(deadline - time.monotonic(), 1e-9)}
        return _core.TrainConfig(**{**config.kwargs(), **changes})

    start_config = timed({"loss": "map"})
    ((coef, summary),) = _core.fit_path(core_X, labels, codes, n_queries, start_config, callback=on_iteration)
    start = coef
    y = np.require(labels, dtype=np.float64, requirements=["C", "A"])
    qid_codes = np.require(codes, dtype=np.int64, requirements=["C", "A"])
    part = _core.Partition(core_X, y, qid_codes, n_queries, config)
    problem = part.counts
    n_used = problem.used
    relevant = labels > config.relevance_threshold
    if "graded" in options:
        # The graded loss's grades: the label when relevant, else 0 (ndcg_graded.rs).
        grades = np.where(relevant, labels, 0.0)

        def coefficients(scores: np.ndarray) -> np.ndarray:
            return graded_target_coefficients(scores, grades, codes, n_queries, cutoff)

    else:

        def coefficients(scores: np.ndarray) -> np.ndarray:
            return latent_target_coefficients(scores, relevant, codes, n_queries, cutoff)

    def cuts_at(w: np.ndarray) -> "tuple[float, np.ndarray]":
        ((b, g),) = part.cut_sums(w, threads)
        return b, g

    def target_sum(w: np.ndarray) -> "tuple[np.ndarray, float]":
        scores = _core.predict(core_X, w, threads)
        e = coefficients(scores)
        return core_X.transpose_dot(e), float(e @ scores)

    def objective(w: np.ndarray) -> float:
        b, g = cuts_at(w)
        _, es = target_sum(w)
        return 0.5 * float(w @ w) + config.C * (b - float(w @ g) + es) / n_used

    objectives = [objective(coef)]
    exhausted = False
    zero_note = None
    # The limit (max_time, a stall) that ended the rounds in a round that was not kept.
    ended_by: Optional[str] = None
    # The working set of the last kept round and the shift its cuts were made with.
    state: Optional[_core.WarmState] = None
    state_shift = np.zeros(0)
    for _ in range(LATENT_MAX_ROUNDS):
        if summary.stop != "converged":
            break
        shift, _ = target_sum(coef)
        if state is not None:
            # Every round's cuts are the paper's cuts minus its shift, times 1/n in the solver:
            # the last round's working set moved by (its shift - this one) / n holds exactly
            # this round's cuts at the same points, so the solve starts from it and is
            # certified like a cold one (solver::WarmStart::shifted; see
            # LATENT_ROUND_EPS_FACTOR for what it saves).
            state = state.shifted((state_shift - shift) / n_used)

        def source(w: np.ndarray, shift: np.ndarray = shift) -> list:
            b, g = cuts_at(w)
            return [[(b, g - shift)]]

        new_coef, new_summary, new_state = _core.solve_warm(
            source, core_X.n_cols, timed({"eps": config.eps * LATENT_ROUND_EPS_FACTOR}), problem, state, on_iteration
        )
        value = objective(new_coef)
        if value < objectives[-1] and not np.any(new_coef) and np.any(coef):
            # The rounds stop before a round that ends at w = 0 from a model that ranks: w = 0
            # has the lower latent objective there, but it ranks nothing (on data with many
            # relevant documents and weak features the rounds from the map model reach it at
            # every C; see docs/guide/losses.md). The model is the last kept round's, and the
            # note says what the objective prefers and in which C range.
            zero_note = _zero_note(start, objective, config.C, objectives[-1], len(objectives) - 1)
            break
        if value >= objectives[-1] or new_summary.stop != "converged":
            # A round that stalled or ran out of time ends the rounds, kept when it helped; when
            # it did not, the kept round's summary says "converged", and the limit that ended
            # the rounds is reported through its stop reason all the same.
            if value < objectives[-1]:
                coef, summary = new_coef, new_summary
                objectives.append(value)
            elif new_summary.stop != "converged":
                ended_by = new_summary.stop
            break
        coef, summary = new_coef, new_summary
        state, state_shift = new_state, shift
        objectives.append(value)
        if objectives[-2] - value < LATENT_RELATIVE_DECREASE * abs(value):
            break
    else:
        exhausted = True
    return coef, summary, objectives, ended_by or exhausted, zero_note


#: The multiples t of the map start at which `_zero_note` measures the latent hinge: 10^-3 to
#: 10^3 in steps of 10^0.5 (13 oracle passes).
ZERO_RAY = tuple(10.0 ** (k / 2) for k in range(-6, 7))


def _zero_note(start: np.ndarray, objective: Callable[[np.ndarray], float], C: float, last: float, kept: int) -> str:
    """Why the rounds from ``start`` (the map model) stopped before w = 0 after ``kept`` kept
    rounds at latent objective ``last``, and the C range in which w = 0 is not the objective's
    optimum, measured along the start's direction.

    F_C(w) = 1/2 |w|^2 + C H(w), with H the mean latent hinge (H(w) = (F(w) - |w|^2 / 2) / C
    for the objective at this C). At w = 0, H is the largest loss, and F_C(0) = C H(0). A point
    t v with H(t v) < H(0) has F_C'(t v) < F_C'(0) exactly when C' > t^2 |v|^2 / (2 (H(0) -
    H(t v))): above that C, w = 0 is not the optimum. If H(t v) >= H(0) at every t measured, no
    C makes a multiple of the start better than w = 0."""
    at_zero = objective(np.zeros_like(start)) / C
    norm2 = float(start @ start)
    best = None
    for t in ZERO_RAY:
        w = t * start
        hinge = (objective(w) - 0.5 * t * t * norm2) / C
        if hinge < at_zero:
            threshold = 0.5 * t * t * norm2 / (at_zero - hinge)
            if best is None or threshold < best[0]:
                best = (threshold, t, hinge)
    model = "the map model" if kept == 0 else f"the model of round {kept}"
    text = (
        f"At C = {C:g} the next CCCP round from {model} (latent objective {last:.6g}) went to w = 0, whose "
        f"latent objective C H(0) = {C * at_zero:.6g} is lower but which ranks nothing; the rounds stopped "
        f"before it, so the model is {model}, which ranks, and not the latent objective's optimum. "
    )
    if best is None:
        return text + (
            f"Along the map model's direction (multiples 1e-3 to 1e3) the latent hinge never falls below its "
            f"value at w = 0 ({at_zero:.4g}): on these queries the latent formulation prefers w = 0 to every "
            "multiple of the map model at every C."
        )
    threshold, t, hinge = best
    if threshold < C:
        return text + (
            f"{t:g} times the map model has a lower latent objective than w = 0 at this C (hinge {hinge:.4g} "
            f"against {at_zero:.4g}), so w = 0 is not the objective's optimum here."
        )
    return text + (
        f"Along the map model's direction w = 0 is the better point below C = {threshold:.3g} ({t:g} times the map "
        f"model has hinge {hinge:.4g} against {at_zero:.4g} at w = 0): at a C above that the rounds may not "
        "reach w = 0."
    )


def latent_path(
    core_X: Any,
    labels: np.ndarray,
    codes: np.ndarray,
    n_queries: int,
    config: "_core.TrainConfig",
    grid: Sequence[float],
    threads: int,
) -> "list[tuple[np.ndarray, _core.FitSummary]]":
    """``_core.fit_path`` for a latent-target loss: (coef, summary) per C of ``grid``, each
    :func:`fit_latent` from the ``map`` model at that C, so every C is the model SVMMap(C).fit
    trains (there is no warm start along the path)."""
    path = []
    for C in grid:
        at_C = _core.TrainConfig(**{**config.kwargs(), "C": C})
        coef, summary, _, _, _ = fit_latent(core_X, labels, codes, n_queries, at_C, None, threads)
        path.append((coef, summary))
    return path


def set_rounds(
    model: Any,
    name: str,
    round_objectives: Optional[List[float]],
    exhausted: Union[bool, str],
    *,
    zero_note: Optional[str] = None,
    stacklevel: int = 1,
) -> None:
    """The CCCP attributes of a latent-target fit (``n_rounds_``, ``round_objectives_``) and the
    ConvergenceWarning, naming the estimator ``name``, when the rounds stopped at their limit
    or before a round that went to w = 0 (``zero_note``: what :func:`fit_latent` measured);
    removed after any other fit."""
    if round_objectives is None:
        for attribute in ("n_rounds_", "round_objectives_"):
            if hasattr(model, attribute):
                delattr(model, attribute)
        return
    model.n_rounds_ = len(round_objectives) - 1
    model.round_objectives_ = list(round_objectives)
    if zero_note is not None:
        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(f"{name}(loss={model.loss!r}): {zero_note}", ConvergenceWarning, stacklevel=stacklevel + 1)
    if isinstance(exhausted, str):
        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(
            f"{name}(loss={model.loss!r}): a CCCP round ended by {exhausted!r} did not lower the "
            f"objective, so the rounds stopped there; the model is the last kept round's ({model.n_rounds_} "
            "rounds), whose solve converged, but the rounds did not reach their end",
            ConvergenceWarning,
            stacklevel=stacklevel + 1,
        )
    elif exhausted:
        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(
            f"{name}(loss={model.loss!r}) stopped after {model.n_rounds_} CCCP rounds with the "
            f"objective still decreasing by at least {LATENT_RELATIVE_DECREASE:g} of its value ({round_objectives[-2]:.6g} -> "
            f"{round_objectives[-1]:.6g}); lower C",
            ConvergenceWarning,
            stacklevel=stacklevel + 1,
        )
