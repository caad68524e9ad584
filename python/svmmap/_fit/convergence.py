"""Why a fit stopped before its certificate, in words: the ConvergenceWarning of a fit that
reached ``max_iter``, stalled or ran out of its time limit, with the cause measured from the data
and the remedy.

A stall (``stop_reason_ == "stalled"``) is the core's rule (rust/solver/progress.rs,
``stalled``): over the last ``n_iter_no_change`` iterations the duality gap, more than ten times
its tolerance, closed too slowly to reach the tolerance by ``max_iter``. Its usual causes are
measured here, from what the fit already computed: features whose scales span many orders of
magnitude (the column standard deviations), and a loss that counts pairs (``pairwise:count``),
whose C multiplies the number of pairs of a query.

A fit that ends because float64 overflowed is named here too (`overflow_named`): its error
names the factor (C, ``sample_weight`` or the features) farthest from 1 in orders of magnitude.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from .._core import TIME_LIMIT

__all__ = ["SCALE_SPAN_ORDERS", "scale_span", "stop_message"]

#: Column standard deviations further apart than this many orders of magnitude are named as the
#: likely cause of a stall. MQ2008 Fold 1 with columns rescaled by 10^uniform(-2, 3) (5 orders)
#: converges at every C from 0.01 to 10^4, but needs up to 4 times the iterations of its
#: normalized columns (benchmarks/solver.py); make_ranking with 10^uniform(-2, 8) (10 orders)
#: stalls at most C (benchmarks/stalls.py).
SCALE_SPAN_ORDERS = 3.0


def scale_span(column_std: Optional[np.ndarray]) -> Optional[tuple]:
    """(orders of magnitude, smallest, largest) of the columns' nonzero standard deviations, or
    None when fewer than two columns vary."""
    if column_std is None:
        return None
    varying = np.asarray(column_std, dtype=np.float64)
    varying = varying[np.isfinite(varying) & (varying > 0)]
    if varying.size < 2:
        return None
    low, high = float(varying.min()), float(varying.max())
    return math.log10(high / low), low, high


def _names(loss: Union[str, Sequence[str], Any]) -> List[str]:
    if isinstance(loss, str):
        return [loss]
    return [str(name) for name in loss]


def _causes(model: Any, summary: Any, column_std: Optional[np.ndarray]) -> str:
    """The likely causes of a fit that did not converge, measured, each with its remedy."""
    causes = []
    names = _names(model.loss)
    if len(names) == 1 and names[0].strip() == "pairwise:count":
        # A cold fit's first iterate is w = 0, where every ranking scores the same: the first
        # cut's loss is the largest, every pair of different labels reversed, and the hinge R(0)
        # is its mean over the queries.
        history = getattr(summary, "history", None) or []
        at_zero = float(history[0]["loss"]) if history else float("nan")
        causes.append(
            f"loss 'pairwise:count' counts misordered pairs, so C multiplies the number of pairs: at w = 0 "
            f"the hinge is {at_zero:.4g} per query (every pair of different labels reversed), C R(0) = "
            f"{model.C * at_zero:.4g}; train loss='pairwise' (the same pairs, averaged per query) or a C about "
            f"{at_zero:.3g} times smaller"
        )
    span = scale_span(column_std)
    if span is not None and span[0] >= SCALE_SPAN_ORDERS:
        causes.append(
            f"the features' scales span {span[0]:.1f} orders of magnitude (column standard deviations from "
            f"{span[1]:.3g} to {span[2]:.3g}): standardize them, Pipeline(StandardScaler(), {_estimator(model)}), "
            f"or bin them, Pipeline(Binner(), {_estimator(model)})"
        )
    if not causes:
        if summary.stop == "stalled":
            causes.append(
                "none measured in the data (the features' scales are close); a smaller C or a larger eps "
                "gives the solver an easier problem"
            )
        else:
            # A limit reached is not a cause measured in the data: nothing else is claimed.
            limit = _limit(model, summary.stop)
            scales = "" if span is None else f" (the features' scales span {span[0]:.1f} orders of magnitude)"
            causes.append(f"none measured in the data{scales}; {limit} was reached first")
    return "; ".join(causes)


def _limit(model: Any, stop: str) -> str:
    """The limit that ended a fit, as "name=value": its stop reason is named after the
    parameter that set it (the time limit's name is the core's ``TIME_LIMIT``)."""
    if stop == TIME_LIMIT:
        return f"{stop}={getattr(model, stop):g} s"
    return f"{stop}={getattr(model, stop)}"


def _estimator(model: Any) -> str:
    name = str(getattr(model, "display_name", type(model).__name__))
    return f"{name}(...)"


def stop_message(
    name: str, model: Any, summary: Any, column_std: Optional[np.ndarray], best_iteration: Optional[int] = None
) -> Optional[str]:
    """The ConvergenceWarning's text for a fit that stopped at max_iter, stalled or ran out of
    its time limit; None for a fit that converged or that the callback stopped. ``best_iteration``:
    the iteration early stopping kept, whose model is not the solver's best iterate."""
    stop = summary.stop
    gap = f"duality gap {summary.gap:.3g}, {summary.gap / summary.tolerance:.3g} times its tolerance {summary.tolerance:.3g}"
    if best_iteration is not None:
        kept = f"the model is the iterate of the best validation score (iteration {best_iteration})"
    else:
        kept = f"the model is the best iterate (objective {summary.primal:.6g}, at most the gap above the optimum)"
    if stop == "max_iter":
        return (
            f"{name} stopped at {_limit(model, stop)} with {gap}; {kept}. Raise max_iter or eps. Likely cause: "
            f"{_causes(model, summary, column_std)}"
        )
    if stop == "stalled":
        return (
            f"{name} stalled at iteration {summary.n_iter}: over the last {model.n_iter_no_change} iterations the "
            f"{gap} closed too slowly to reach it by max_iter={model.max_iter}; {kept}. Likely cause: "
            f"{_causes(model, summary, column_std)}. To train on regardless, pass n_iter_no_change=None "
            f"({TIME_LIMIT}= bounds the time)"
        )
    if stop == TIME_LIMIT:
        return (
            f"{name} stopped at {_limit(model, stop)} after {summary.n_iter} iterations with {gap}; "
            f"{kept}. Likely cause: {_causes(model, summary, column_std)}"
        )
    return None


#: The core's words for a training that overflowed float64 (``solver::progress::out_of_range``).
_OVERFLOW = "is not a finite float64 number"


@contextlib.contextmanager
def overflow_named(
    C: float,
    query_weights: Optional[np.ndarray],
    column_std: Callable[[], np.ndarray],
    losses: Optional[List[List[Tuple[float, str]]]] = None,
) -> Iterator[None]:
    """Names the argument that made training overflow float64, when the core says it did.

    The core cannot tell which factor overflowed, and names all three. Every number of the cutting
    planes is a feature difference times a query's weight, and the weights ``w`` grow with C
    (``w = sum a_j g_j`` with ``sum a_j <= C``), so ``C = 1e200`` on unit features, or a weight
    of 1e306, overflows just as features of 1e160 do. Of the three factors (C, the largest
    query weight and the squared spread of the features, ``column_std`` called only on
    failure) the one farthest from 1 in orders of magnitude is named; the features keep the
    core's message. A loss weight (``losses``, the config's groups of (weight, name)) multiplies
    its loss as C does, and is named when it is the largest factor.
    """
    try:
        yield
    except ValueError as exc:
        text = str(exc)
        if _OVERFLOW not in text:
            raise
        # The spread of features near float64's limit overflows as it is computed (a sparse X's
        # squares warned "overflow encountered in multiply" in place of this message); inf is
        # the answer then.
        with np.errstate(over="ignore", invalid="ignore"):
            spread = float(np.max(column_std(), initial=0.0))
        weight = 1.0 if query_weights is None else float(np.max(query_weights, initial=1.0))
        # Orders of magnitude of the squared spread, 2 log10(spread), which cannot overflow; a
        # spread that is itself beyond float64 (or NaN from it) is the features' doing.
        if not np.isfinite(spread):
            features = np.inf
        else:
            features = 2.0 * abs(float(np.log10(spread))) if spread > 0 else 0.0
        head = text.split(";")[0]
        loss_weight, loss = max(((abs(w), n) for group in (losses or []) for w, n in group), default=(1.0, ""))
        if loss_weight > 1 and abs(np.log10(loss_weight)) >= max(features, abs(np.log10(weight)), abs(np.log10(C))):
            raise ValueError(
                f"{head}; the loss weight {loss_weight:g} of {loss!r} is too large for float64 arithmetic (a loss "
                f"weight multiplies its loss as C does; the features spread to {spread:.3g}): divide the loss "
                "weights by a constant and multiply C by it"
            ) from None
        if abs(np.log10(C)) >= max(features, abs(np.log10(weight))) and C > 1:
            raise ValueError(
                f"{head}; C = {C:g} is too large for float64 arithmetic (the weights grow with C, and "
                f"the features spread to {spread:.3g}): lower C"
            ) from None
        if weight > 1 and abs(np.log10(weight)) >= features:
            raise ValueError(
                f"{head}; sample_weight holds a weight of {weight:g}, too large for float64 arithmetic "
                f"(the features spread to {spread:.3g}): divide the weights by a constant (multiplying "
                "every weight by k is multiplying C by k)"
            ) from None
        raise ValueError(
            f"{head}; the feature values of X are too large for float64 arithmetic (squares of feature values, "
            "summed over the features, must stay below 1.8e308): scale the features"
        ) from None


@contextlib.contextmanager
def intercept_named(scaling: float, largest: float) -> Iterator[None]:
    """Names ``intercept_scaling`` when SVMAcc's training overflows float64 and the constant
    column it adds (of that value) is larger than every feature of X (``largest``): the core's
    message then blamed "the feature values of X", which were small."""
    try:
        yield
    except ValueError as exc:
        text = str(exc)
        if _OVERFLOW not in text or not scaling > max(largest, 1.0):
            raise
        raise ValueError(
            f"{text.split(';')[0]}; intercept_scaling = {scaling:g} is too large for float64 arithmetic "
            f"(it is the value of the constant feature that carries the intercept, and the features of X "
            f"reach {largest:.3g}): lower intercept_scaling"
        ) from None
