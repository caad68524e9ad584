"""Models that rank nothing: w = 0, or scores that tie within every training query.

The structural SVM's objective P(w) = 1/2 |w|^2 + C R(w) (R the mean structured hinge) has w = 0 as
its minimum exactly when 0 lies in the subdifferential of R at 0, a condition that does not
involve C: such a model is the optimum at every C. The papers' cutoff losses (NDCG@k, MRR@k and
combinations of them) have this optimum on data where queries have many relevant documents
compared with k (at w = 0 every ranking ties, and the hull of the worst rankings' feature
differences contains 0). svmmap never returns such a model silently: the estimators warn with
`DegenerateModelWarning`, and C selection prefers any C whose model ranks.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np


class DegenerateModelWarning(UserWarning):
    """A fitted model gives every document of every training query the same score.

    Its rankings are arbitrary (the metrics break ties pessimistically by default). The message
    says whether w = 0 is the certified optimum of the problem (then no C changes it) and which
    loss to train with instead.
    """


def ties_within_every_query(scores: np.ndarray, labels: np.ndarray, codes: np.ndarray) -> bool:
    """Whether every query with two different labels has all its scores equal (so its
    ranking is arbitrary). False when no query has two different labels."""
    if codes.size == 0:
        return False
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
        return False
    # -0.0 == 0.0, so signed zeros count as ties, as they do in the metrics.
    return not bool(np.any(spread(scores)[graded]))


def is_degenerate(coef: np.ndarray, scores: Optional[np.ndarray], labels: np.ndarray, codes: np.ndarray) -> bool:
    """A zero coefficient vector, or (given the training scores) ties within every query."""
    if not np.any(coef):
        return True
    return scores is not None and ties_within_every_query(scores, labels, codes)


def _loss_text(loss: Union[str, Sequence[str], Any]) -> str:
    return repr(loss) if isinstance(loss, str) else repr(list(loss))


def message(name: str, loss: Any, coef: np.ndarray, summary: Any) -> str:
    """The warning for a degenerate fit of estimator ``name`` (``summary``: the core's
    FitSummary, for the certificate)."""
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
    if summary.stop == "converged":
        certificate = (
            f" The solver certifies that no model does better by more than the duality gap: objective "
            f"{summary.primal:.6g}, dual bound {summary.dual:.6g}, gap {summary.gap:.3g}. Whether w = 0 is "
            "optimal (0 in the subdifferential of the hinge at 0) does not depend on C, so no C gives "
            "another model."
        )
    else:
        certificate = f" Training stopped at {summary.stop!r} before the optimum was certified (gap {summary.gap:.3g})."
    return what + certificate + " " + advice(loss)


def advice(loss: Any) -> str:
    """What to do instead, for a fit with ``loss`` whose model ranks nothing."""
    names = [loss] if isinstance(loss, str) else [str(n) for n in loss]
    if any("@" in n or n.strip().startswith("mrr") for n in names):
        return (
            "The cutoff losses (ndcg@k, mrr and mrr@k, and combinations that include them) have w = 0 as "
            "their optimum when queries have many relevant documents compared with k; train with "
            f"loss='map', 'ndcg' (no cutoff), 'pairwise' or 'roc' instead of {_loss_text(loss)}, or with "
            "a larger k; for NDCG@k, loss='ndcg@k:latent' (a latent target, trained from the map model) "
            "learns a model there."
        )
    return (
        "No direction of the features lowers the loss: within the training queries they do not tell "
        "relevant from non-relevant documents (for example, features that are constant within each "
        "query, or labels that do not follow the features). Check the features and labels."
    )
