"""Private: the candidates of the search, the losses and preprocessings ``loss="auto"`` and
``preprocessing=`` name, and the transformer of each preprocessing."""

from __future__ import annotations

import re
from typing import Any, List, Optional

__all__ = ["PREPROCESSINGS", "auto_losses", "preprocessing_names", "make_preprocessor"]

#: The preprocessings ``preprocessing="auto"`` tries, in this order: the features as given,
#: standardized columns (scikit-learn's StandardScaler) and Yue et al.'s binned indicators
#: (`svmmap.Binner`).
PREPROCESSINGS = ("none", "standard", "binned")


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

    return Binner(n_jobs=n_jobs)
