"""The latent-target losses (``loss="ndcg@k:latent"``): their CCCP rounds, each a convex solve
of the core, what a round that ended at w = 0 measured, and the attributes they set."""

from __future__ import annotations

import warnings
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _core
from .._typing import IterationRecord

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
#: The rounds stop before a round whose model is w = 0 when the model before it ranks (see
#: :func:`fit_latent`); ``benchmarks/latent_collapse.py`` turns this off to measure the rounds
#: without the rule.
LATENT_STOP_BEFORE_ZERO = True
#: None: the target's cutoff is the loss's k. ``benchmarks/latent_collapse.py`` sets 0 to measure
#: the ramp target (the current ranking itself) as a prototype.
LATENT_TARGET_CUTOFF: Optional[int] = None


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
    documents make the top m does not matter for e.s: the counts depend on the scores alone.
    Queries without a relevant or without a non-relevant document get 0 (no pair). Computed
    by the core (``solver::latent::target_coefficients``), which the rounds use."""
    grades = np.asarray(relevant, dtype=bool).astype(np.float64)
    return _core.latent_target_coefficients(_f64(scores), grades, _i64(codes), n_queries, cutoff, False)


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
    binary grades this is :func:`latent_target_coefficients` (Z = P N). Computed by the core."""
    return _core.latent_target_coefficients(_f64(scores), _f64(grades), _i64(codes), n_queries, cutoff, True)


def _f64(values: Any) -> np.ndarray:
    return np.require(values, dtype=np.float64, requirements=["C", "A"])


def _i64(values: Any) -> np.ndarray:
    return np.require(values, dtype=np.int64, requirements=["C", "A"])


def fit_latent(
    core_X: Any,
    labels: np.ndarray,
    codes: np.ndarray,
    n_queries: int,
    config: "_core.TrainConfig",
    on_iteration: Optional[Callable[[IterationRecord], bool]],
    threads: int,
) -> "tuple[np.ndarray, _core.FitSummary, list[float], Union[bool, str], Optional[str]]":
    """NDCG@k with a latent target (``loss="ndcg@k:latent"``, ``"ndcg@k:graded:latent"``) by
    CCCP, in one core call (``_core.fit_latent``, rust/solver/latent.rs, on the thread count of
    ``config``, which ``threads`` repeats); returns the model, the solver summary of the round
    that made it, the objective before the first round and after every kept round, whether the
    rounds stopped at ``LATENT_MAX_ROUNDS`` with the objective still decreasing by at least
    ``LATENT_RELATIVE_DECREASE`` of its value (or, as a string, the stop reason of a round that
    a limit ended and that was not kept), and, when the rounds stopped before a round that went
    to w = 0 from a model that ranks, what the objective says about w = 0 there (`_zero_note`,
    for the ConvergenceWarning).

    The objective is F(w) = 1/2 |w|^2 + C/n sum_q [max_ybar (Delta(ybar) + w.Psi(ybar)) -
    max_{y: Delta(y) = 0} w.Psi(y)] (Yu and Joachims, ICML 2009), not convex. The rounds
    start from the ``map`` model at the same C (w = 0 is a stationary point: its target is the
    ideal ranking). Each round fixes the target at the current scores, which makes the
    query's hinge the base loss's (``config.latent``) plus the linear term w.X_q^T e_q
    (:func:`latent_target_coefficients`, :func:`graded_target_coefficients`), and solves that
    convex problem with the base loss's exact oracle: every cut minus the constant
    sum_q X_q^T e_q. Its objective bounds F from above and equals it at the current w, so an
    exact solve never raises F, and F itself is evaluated exactly after each round (one oracle
    pass), so a decrease smaller than the solve's tolerance (eps C) is still real. Each round's
    solve starts from the working set of the round before, its cuts moved by the change of the
    constant, and is solved to eps C / 10 (``LATENT_ROUND_EPS_FACTOR``). The rounds stop when F
    decreases by less than ``LATENT_RELATIVE_DECREASE`` (1e-6) of its value: stopping at eps C
    instead took 7 and 13 rounds at C = 10^4 on the synthetic data of
    benchmarks/cutoff_losses.py, short of the training NDCG@10 that further rounds reach
    (docs/guide/losses.md). A round that raises F is not kept. They also stop after a solve
    that did not converge (max_iter, the time limit, a stall or the callback), after
    ``LATENT_MAX_ROUNDS`` rounds, and before a round whose model is w = 0 when the model before
    it ranks (``LATENT_STOP_BEFORE_ZERO``): on queries with many relevant documents and weak
    features w = 0 can have the lower F, but it ranks nothing, and starting elsewhere on the
    map model's ray did not avoid it (docs/guide/losses.md). The time limit bounds the whole fit.
    """
    coef, summary, objectives, exhausted, ended_by, zero = _core.fit_latent(
        core_X,
        _f64(labels),
        _i64(codes),
        n_queries,
        config,
        max_rounds=LATENT_MAX_ROUNDS,
        relative_decrease=LATENT_RELATIVE_DECREASE,
        round_eps_factor=LATENT_ROUND_EPS_FACTOR,
        stop_before_zero=LATENT_STOP_BEFORE_ZERO,
        ray=list(ZERO_RAY),
        target_cutoff=LATENT_TARGET_CUTOFF,
        callback=on_iteration,
    )
    zero_note = None
    if zero is not None:
        kept, at_zero, ray, start = zero
        zero_note = _zero_note(start, at_zero, ray, config.C, objectives[-1], kept)
    return coef, summary, objectives, ended_by or exhausted, zero_note


#: The multiples t of the map start at which `_zero_note` measures the latent hinge: 10^-3 to
#: 10^3 in steps of 10^0.5 (13 oracle passes).
ZERO_RAY = tuple(10.0 ** (k / 2) for k in range(-6, 7))


def _zero_note(
    start: np.ndarray, at_zero: float, ray: Sequence[Tuple[float, float]], C: float, last: float, kept: int
) -> str:
    """Why the rounds from ``start`` (the map model) stopped before w = 0 after ``kept`` kept
    rounds at latent objective ``last``, and the C range in which w = 0 is not the objective's
    optimum, measured along the start's direction: ``at_zero`` is F(0) and ``ray`` holds
    (t, F(t start)) at the multiples ``ZERO_RAY``, both at this C.

    F_C(w) = 1/2 |w|^2 + C H(w), with H the mean latent hinge (H(w) = (F(w) - |w|^2 / 2) / C
    for the objective at this C). At w = 0, H is the largest loss, and F_C(0) = C H(0). A point
    t v with H(t v) < H(0) has F_C'(t v) < F_C'(0) exactly when C' > t^2 |v|^2 / (2 (H(0) -
    H(t v))): above that C, w = 0 is not the optimum. If H(t v) >= H(0) at every t measured, no
    C makes a multiple of the start better than w = 0."""
    at_zero = at_zero / C
    norm2 = float(start @ start)
    best = None
    for t, value in ray:
        hinge = (value - 0.5 * t * t * norm2) / C
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
