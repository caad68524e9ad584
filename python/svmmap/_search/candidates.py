"""Private: the candidates of the search (`Candidate`, a loss and a preprocessing, listed by
`candidate_list`), the losses and preprocessings ``loss="auto"`` and ``preprocessing=`` name,
and the transformer of each preprocessing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._validation import check_spelling

__all__ = [
    "GA2M_PAIRS",
    "Candidate",
    "candidate_list",
    "PREPROCESSINGS",
    "auto_losses",
    "fit_preprocessor",
    "make_preprocessor",
    "pair_scale",
    "preprocessing_names",
]

#: The preprocessings ``preprocessing="auto"`` tries, in this order: the features as given,
#: standardized columns (scikit-learn's StandardScaler), Yue et al.'s binned indicators
#: (`svmmap.Binner`) and the binned indicators with pairwise interactions (a GA2M,
#: ``Binner(interactions=GA2M_PAIRS)``). Ties go to the earlier, so to the simpler model.
PREPROCESSINGS = ("none", "standard", "binned", "ga2m")

#: The most pairs the "ga2m" preprocessing's Binner keeps (those that reduce the residual on
#: the queries that did not choose them, often none; see `svmmap.Binner`'s ``interactions``).
GA2M_PAIRS = 10


def auto_losses(scoring: str) -> List[str]:
    """The losses ``loss="auto"`` tries: map, pairwise, pairwise:count and the graded NDCG
    loss at the cutoff of ``scoring`` ("ndcg@10" and "p@10" give ndcg@10:graded; a metric
    without a cutoff, such as "map" or "ndcg", gives ndcg:graded)."""
    cutoff = re.search(r"@(\d+)$", scoring)
    graded = f"ndcg@{cutoff.group(1)}:graded" if cutoff else "ndcg:graded"
    return ["map", "pairwise", "pairwise:count", graded]


def preprocessing_names(preprocessing: Any) -> List[str]:
    """The preprocessings to try, checked: "auto", one name of `PREPROCESSINGS` or a list of them."""
    if isinstance(preprocessing, str):
        names = list(PREPROCESSINGS) if preprocessing == "auto" else [preprocessing]
    elif isinstance(preprocessing, (list, tuple)) and preprocessing:
        names = list(preprocessing)
    else:
        raise ValueError(
            f'preprocessing must be None, "auto", one of {list(PREPROCESSINGS)} or a non-empty list of them, '
            f"got {preprocessing!r}"
        )
    for name in names:
        if name not in PREPROCESSINGS:
            raise ValueError(f"preprocessing {name!r} is not one of {list(PREPROCESSINGS)}")
    if len(set(names)) != len(names):
        raise ValueError(f"preprocessing lists a name twice: {names}")
    return names


def make_preprocessor(name: str, sparse: bool, n_jobs: Optional[int]) -> Any:
    """A new, unfitted transformer for preprocessing ``name`` (None for "none")."""
    if name == "none":
        return None
    if name == "standard":
        from sklearn.preprocessing import StandardScaler

        # Centering a sparse matrix would make it dense; scaling alone keeps it sparse.
        return StandardScaler(with_mean=not sparse)
    from ..binning import Binner

    if name == "ga2m":
        return Binner(n_jobs=n_jobs, interactions=GA2M_PAIRS)
    return Binner(n_jobs=n_jobs)


def fit_preprocessor(
    name: str, transformer: Any, X: Any, y: Any, qid: Any, validation: Optional[Tuple[Any, Any, Any]] = None
) -> Any:
    """``transformer`` (of `make_preprocessor`) fitted on X: "ga2m"'s Binner chooses its pairs
    from the labels and query ids, and judges them on ``validation`` (X, labels, query ids)
    when the search scores on one validation set (cv="validation"), so that a pair is kept
    only when it helps on the queries the search chooses by; the others read X alone."""
    if name == "ga2m":
        if validation is None:
            return transformer.fit(X, y, qid=qid)
        v_X, v_y, v_qid = validation
        return transformer.fit(X, y, qid=qid, eval_set=[(v_X, v_y)], eval_qid=[v_qid])
    return transformer.fit(X)


def pair_scale(labels: np.ndarray, codes: np.ndarray) -> float:
    """The factor that puts "pairwise:count" on the scale of C of the other losses: 4 over the
    mean number of pairs with different labels per query that has any.

    "pairwise:count" sums the hinge max(0, 1 - (s_i - s_j)) over a query's M_q pairs, where
    "pairwise" averages max(0, 1 - 2 (s_i - s_j)): with v = w / 2, ``pairwise:count`` at C is
    ``pairwise`` at C * M / 4 with each query weighted by M_q / M (M the mean of M_q), the
    same ranking up to that weighting. Its C values times this factor thus span the same
    regularization as the other losses' C, instead of M / 4 times stronger ones, whose fits
    take the most iterations of the search (C times the pairs) and are rarely chosen."""
    n_queries = int(codes.max()) + 1 if codes.size else 0
    sizes = np.bincount(codes, minlength=n_queries).astype(np.float64)
    # Pairs with different labels: all pairs less those within each label level.
    levels, level_codes = np.unique(labels, return_inverse=True)
    within = np.bincount(codes * len(levels) + level_codes, minlength=n_queries * len(levels)).astype(np.float64)
    pairs = (sizes**2 - (within**2).reshape(n_queries, len(levels)).sum(axis=1)) / 2
    ranked = pairs[pairs > 0]
    return 4.0 / float(ranked.mean()) if ranked.size else 1.0


@dataclass(frozen=True)
class Candidate:
    """One candidate: a loss and a preprocessing, with its training configuration (any C).
    Its C values are the grid's times ``C_scale`` (see `pair_scale`)."""

    loss: Any
    preprocessing: str
    config: Any
    C_scale: float = 1.0


def candidate_list(
    losses: Sequence[Any],
    preprocessings: Sequence[str],
    config_of: Callable[[Any], Any],
    searching: bool,
    listed: bool,
    refuse_latent: Callable[[], None],
    name: str = "losses",
) -> List[Candidate]:
    """The candidates, every loss with every preprocessing, each loss with its training
    configuration ``config_of(loss)``. A loss is known by the model it trains (its canonical
    losses, weights, slack and latent target), so that a loss listed twice, in any spelling, is
    refused as a preprocessing listed twice is, rather than fitted twice as two candidates of
    one model. ``listed``: the losses are the user's ``losses`` (their spelling is checked);
    a latent-target loss is refused in a search and checked by ``refuse_latent`` otherwise.
    ``name``: what the messages call the list (``--losses`` on the command line)."""
    if listed:
        for i, loss in enumerate(losses):
            check_spelling(loss, f"{name}[{i}]")
    seen: Dict[str, Any] = {}
    candidates: List[Candidate] = []
    for i, loss in enumerate(losses):
        try:
            config = config_of(loss)
        except ValueError as exc:
            # The core names "loss", which the user left at "auto": the item of the list is named.
            if not (listed and str(exc).startswith("loss ")):
                raise
            raise ValueError(f"{name}[{i}] {str(exc)[len('loss ') :]}") from None
        key = repr((sorted(tuple(group) for group in config.losses), config.slack, config.latent))
        if key in seen:
            raise ValueError(
                f"{name} lists one loss twice: {seen[key]!r} and {loss!r} train the same model; list it once"
            )
        seen[key] = loss
        if config.latent is not None:
            if searching:
                raise ValueError(
                    f"the search fits warm C paths of convex losses; {loss!r} is a latent-target loss "
                    "(trained in CCCP rounds): fit it with loss=... and preprocessing=None"
                )
            refuse_latent()
        candidates.extend(Candidate(loss, name, config) for name in preprocessings)
    return candidates
