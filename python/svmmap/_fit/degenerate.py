"""Models that rank nothing: w = 0, or scores that tie within every training query.

The structural SVM's objective P(w) = 1/2 |w|^2 + C R(w) (R the mean structured hinge) has w = 0 as
its minimum exactly when 0 lies in the subdifferential of R at 0, a condition that does not
involve C: such a model is the optimum at every C. A fit only certifies its objective within
the duality gap at its C and eps, which w = 0 can meet without being the optimum (at small C,
P(0) - min P is about C^2 |g|^2 / 2 for the hinge's smallest subgradient g at 0, below eps C
whenever C |g|^2 < 2 eps), so the warning states that certificate and claims nothing for other C.
The papers' cutoff losses (NDCG@k, MRR@k and
combinations of them) have this optimum on data where queries have many relevant documents
compared with k (at w = 0 every ranking ties, and the hull of the worst rankings' feature
differences contains 0). svmmap never returns such a model silently: the estimators warn with
`DegenerateModelWarning`, and C selection prefers any C whose model ranks.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np

from .defaults import TRAINING_DEFAULTS


class DegenerateModelWarning(UserWarning):
    """A fitted model gives every document of every training query the same score.

    Its rankings are arbitrary (the metrics break ties pessimistically by default). The message
    says whether w = 0 is the certified optimum of the problem (then no C changes it) and which
    loss to train with instead.
    """


#: A certificate whose tolerance (eps * C) is at least this fraction of the objective is loose:
#: the fit proves only that w = 0 is within a sizeable share of the objective of the optimum.
#: At the default eps (0.001) on the papers' losses (objective at w = 0 about C times a loss in
#: [0.1, 1]) the share is at most 1%; eps = 1 allows the whole objective (one iteration, w = 0
#: on data where eps = 0.5 already learns a ranking model).
LOOSE_CERTIFICATE = 0.01


def _loose(summary: Any) -> bool:
    """Whether a converged fit's certificate allows a gap that is a sizeable share of its
    objective (`LOOSE_CERTIFICATE`), so that it says nothing about the features or labels."""
    primal = float(summary.primal)
    return primal > 0 and float(summary.tolerance) >= LOOSE_CERTIFICATE * primal


def score_spread(scores: np.ndarray, labels: np.ndarray, codes: np.ndarray) -> Optional[bool]:
    """Whether some query with two different labels has two different scores (None when no
    query has two different labels). Queries are whole within one call, so the answers of
    several parts of the data (Dask partitions) combine by `ties_within_every_query`."""
    if codes.size == 0:
        return None
    # Per-query extremes by unbuffered in-place reductions: memory of the order of the number of
    # queries, not of the documents (the check runs after every fit).
    n_queries = int(codes.max()) + 1

    def spread(values: np.ndarray) -> np.ndarray:
        high = np.full(n_queries, -np.inf)
        low = np.full(n_queries, np.inf)
        np.maximum.at(high, codes, values)
        np.minimum.at(low, codes, values)
        return high > low

    graded = spread(labels)
    if not graded.any():
        return None
    # -0.0 == 0.0, so signed zeros count as ties, as they do in the metrics.
    return bool(np.any(spread(scores)[graded]))


def ties_within_every_query(spreads: Iterable[Optional[bool]]) -> bool:
    """Whether every query with two different labels has all its scores equal (so its
    ranking is arbitrary), from the `score_spread` of each part of the data. False when no
    query has two different labels."""
    known = [s for s in spreads if s is not None]
    return bool(known) and not any(known)


def is_degenerate(coef: np.ndarray, spreads: Callable[[np.ndarray], Iterable[Optional[bool]]]) -> bool:
    """THE rule of a model that ranks nothing, for every estimator: a zero coefficient vector,
    or ties within every query (``spreads(coef)`` gives the `score_spread` of each part of the
    data at the model; it is called only for a nonzero model, whose scores it computes)."""
    if not np.any(coef):
        return True
    return ties_within_every_query(spreads(coef))


def _loss_text(loss: Union[str, Sequence[str], Any]) -> str:
    return repr(loss) if isinstance(loss, str) else repr(list(loss))


def message(
    name: str, loss: Any, coef: np.ndarray, summary: Any, C: Optional[float] = None, note: Optional[str] = None
) -> str:
    """The warning for a degenerate fit of estimator ``name`` at ``C`` (``summary``: the core's
    FitSummary, for the certificate). It states what the fit certifies and no more: the gap at
    this C and eps, never that no C gives another model (see the module docstring). ``note``:
    what a latent-target fit measured about w = 0 (``_fit.latent._zero_note``)."""
    if np.any(coef):
        what = (
            f"{name}(loss={_loss_text(loss)}) learned a model whose scores tie within every training query "
            "(for example, all its weight is on features that are constant within queries), so its rankings "
            "are arbitrary."
        )
    else:
        what = (
            f"{name}(loss={_loss_text(loss)}) learned w = 0: every document gets the same score, so its "
            "rankings are arbitrary."
        )
    latent = _is_latent(loss)
    at = f"C = {C:g}" if C is not None else "this C"
    if summary.stop == "converged" and _loose(summary):
        certificate = (
            f" At {at} the solver stopped with a loose certificate: its tolerance eps * C = "
            f"{summary.tolerance:.3g} is {summary.tolerance / summary.primal:.0%} of the objective "
            f"{summary.primal:.6g} (gap {summary.gap:.3g}), so it only shows that no model does better than "
            "w = 0 by more than that. This says nothing about the features or labels."
        )
    elif summary.stop == "converged":
        certificate = (
            f" At {f'C = {C:g}' if C is not None else 'this C'} the solver certifies that no model does better by "
            f"more than the duality gap: objective {summary.primal:.6g}, dual bound {summary.dual:.6g}, gap "
            f"{summary.gap:.3g} (at most its tolerance eps * C = {summary.tolerance:.3g})."
        )
        if not latent:
            certificate += (
                " That is all it certifies: w = 0 is the optimum at every C only if 0 is in the subdifferential of "
                "the hinge at 0, which no fit proves, and a model within the gap of w = 0 may still rank; a smaller "
                "eps or a larger C may give one that ranks."
            )
    elif summary.stop == "callback":
        # The advice below says how it stopped; the gap alone is added here, so that the
        # message does not say twice that training was stopped before the certificate.
        certificate = f" The gap was {summary.gap:.3g} when it stopped."
    else:
        certificate = f" Training stopped at {summary.stop!r} before the optimum was certified (gap {summary.gap:.3g})."
    if latent:
        certificate += f" {_loss_text(loss)} is not convex: its CCCP rounds stop at a local optimum. " + (
            note
            or "w = 0 is a stationary point of its objective (the latent target at w = 0 is the ideal ranking), so "
            "another C may rank."
        )
    return what + certificate + " " + advice(loss, summary)


def _is_latent(loss: Any) -> bool:
    names = [loss] if isinstance(loss, str) else [str(n) for n in loss]
    return any(n.strip().endswith(":latent") for n in names)


def advice(loss: Any, summary: Any = None) -> str:
    """What to do instead, for a fit with ``loss`` whose model ranks nothing. With the fit's
    ``summary``, a fit that did not certify w = 0 tightly (stopped early, or a loose
    certificate) is told to train further first: blaming the features or the loss would not
    follow from it."""
    if summary is not None and summary.stop == "callback":
        # Stopped on purpose (a callback, or early stopping on a validation set): no
        # ConvergenceWarning is issued, and nothing is known of the optimum.
        return (
            "Training was stopped before the optimum was certified (by a callback or early stopping, which "
            "keeps its best validation iteration); until a fit converges nothing follows about the features, "
            "labels or loss."
        )
    if summary is not None and summary.stop != "converged":
        return (
            "Let the fit converge first (see the ConvergenceWarning for the cause and remedy); "
            "until then nothing follows about the features, labels or loss."
        )
    if summary is not None and _loose(summary):
        return (
            f"Refit with a smaller eps first (the default is {TRAINING_DEFAULTS['eps']:g}; eps is in the loss's units, so "
            "eps >= 0.1 allows gaps of the order of the loss itself); judge the features, labels "
            "or loss only if w = 0 persists there."
        )
    names = [loss] if isinstance(loss, str) else [str(n) for n in loss]
    if any("@" in n or n.strip().startswith("mrr") for n in names):
        if _is_latent(loss):
            latent = ""
        elif any(":graded" in n for n in names):
            latent = (
                "; for graded NDCG@k, loss='ndcg@k:graded:latent' (a latent target, trained from the map model) "
                "learns a model there"
            )
        else:
            latent = (
                "; for NDCG@k, loss='ndcg@k:latent' (a latent target, trained from the map model) learns a model there"
            )
        return (
            "The cutoff losses (ndcg@k, mrr and mrr@k, and combinations that include them) have w = 0 as "
            "their optimum when queries have many relevant documents compared with k; train with "
            f"loss='map', 'ndcg' (no cutoff), 'pairwise' or 'roc' instead of {_loss_text(loss)}, or with "
            f"a larger k{latent}."
        )
    return (
        "No direction of the features lowers the loss: within the training queries they do not tell "
        "relevant from non-relevant documents (for example, features that are constant within each "
        "query, or labels that do not follow the features). Check the features and labels."
    )
