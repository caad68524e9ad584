"""Private: the search of `SVMMapCV` over loss x preprocessing x C (``loss="auto"`` or a
``preprocessing``), with warm C paths that stop when the validation score stops improving and
a time budget for the whole search.

The search reuses SVMMapCV's splits, validation set, validation score and refit; what it adds
is the outer loop over candidates, the per-split preprocessing (fitted on the split's training
rows only) and the early stop along C, for which each split's path is fitted one C at a time
(``_core.fit_path_from``, which hands the warm state from one call to the next and so gives
the models of the path fitted in one call bit for bit).
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._validation import check_matrix, check_qid, query_weights

if TYPE_CHECKING:
    from .model_selection import SVMMapCV

__all__ = ["PREPROCESSINGS", "auto_losses", "preprocessing_names", "search", "make_preprocessor"]

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
    from .binning import Binner

    return Binner(n_jobs=n_jobs)


def _rows(X: Any, rows: np.ndarray) -> Any:
    """Rows of X (an array, a sparse matrix or a dataframe) by position."""
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    return X[rows]


@dataclass
class _Row:
    """One candidate of the search: a loss, a preprocessing and a C, with its outcome."""

    loss: Any
    preprocessing: str
    C: float
    scores: np.ndarray
    seconds: np.ndarray
    iters: np.ndarray
    evals: np.ndarray
    degenerate: np.ndarray
    status: str = "not fitted"


@dataclass
class _Path:
    """The C path of one (loss, preprocessing) pair: its rows, the warm state of each split,
    and the early-stop bookkeeping."""

    loss: Any
    preprocessing: str
    config: Any
    rows: List[_Row]
    states: List[Any] = field(default_factory=list)
    best: float = -np.inf
    not_improved: int = 0
    stopped: bool = False


def search(
    cv: "SVMMapCV",
    X: Any,
    labels: np.ndarray,
    codes: np.ndarray,
    doc_weights: Optional[np.ndarray],
    splits: List[Tuple[np.ndarray, Optional[np.ndarray]]],
    eval_data: Optional[Tuple[Any, np.ndarray, np.ndarray]],
    grid: List[float],
    losses: Sequence[Any],
    preprocessings: Sequence[str],
    threads: int,
) -> Tuple[Dict[str, Any], int, float]:
    """Fits and scores the candidates; returns (cv_results_, index of the best row, seconds).

    ``eval_data`` is (raw X, labels, query codes) of the eval_set of cv="validation". The C
    values are visited in ascending order, and at each C every path that has not stopped is
    fitted on every split before the next C: with a time budget, every (loss, preprocessing)
    pair then gets its small, cheap C values before any pair gets its large ones.
    """
    start = time.perf_counter()
    budget = cv.time_budget
    patience = cv.patience
    n_splits = len(splits)
    data = _split_matrices(cv, X, splits, eval_data, preprocessings)
    fit_args, validation = _split_labels(labels, codes, doc_weights, splits, eval_data)

    def empty_row(loss: Any, name: str, C: float) -> _Row:
        return _Row(
            loss,
            name,
            C,
            scores=np.full(n_splits, np.nan),
            seconds=np.full(n_splits, np.nan),
            iters=np.zeros(n_splits, dtype=np.int64),
            evals=np.zeros(n_splits, dtype=np.int64),
            degenerate=np.zeros(n_splits, dtype=bool),
        )

    paths: List[_Path] = []
    for loss in losses:
        config = cv._estimator(grid[0]).set_params(loss=loss)._config()
        if config.latent is not None:
            raise ValueError(
                f"the search fits warm C paths of convex losses; {loss!r} is a latent-target loss "
                "(trained in CCCP rounds): fit it with loss=... and preprocessing=None"
            )
        for name in preprocessings:
            paths.append(_Path(loss, name, config, [empty_row(loss, name, C) for C in grid], [None] * n_splits))

    out_of_time = False
    for j in range(len(grid)):
        for path in paths:
            if path.stopped:
                continue
            row = path.rows[j]
            for k in range(n_splits):
                # The first candidate is always fitted on every split, so that the search has a
                # result whatever the budget.
                first = j == 0 and path is paths[0]
                if budget is not None and not first and time.perf_counter() - start >= budget:
                    out_of_time = True
                    break
                _fit_split(cv, path, row, k, grid[j], data[path.preprocessing][k], fit_args[k], validation[k], threads)
            if out_of_time:
                break
            row.status = "fitted"
            _patience(path, j, patience)
        if out_of_time:
            break
    elapsed = time.perf_counter() - start
    if out_of_time:
        for path in paths:
            for row in path.rows:
                if row.status == "not fitted":
                    row.status = "time budget"
        n_skipped = sum(row.status == "time budget" for path in paths for row in path.rows)
        warnings.warn(
            f"SVMMapCV: the time budget of {budget:g} s was spent after {elapsed:.3g} s; {n_skipped} candidates "
            "(loss, preprocessing, C) were not fitted (status 'time budget' in cv_results_), so the best "
            "model is the best of those fitted",
            UserWarning,
            stacklevel=4,
        )
    rows = [row for path in paths for row in path.rows]
    results, best = _results(rows, n_splits, cv.scoring, float(cv.score_tolerance))
    return results, best, elapsed


def _fit_split(
    cv: "SVMMapCV",
    path: _Path,
    row: _Row,
    k: int,
    C: float,
    matrices: Tuple[Any, Any],
    fit_args: Tuple[Any, ...],
    validation: Tuple[Any, ...],
    threads: int,
) -> None:
    """Fits split k of ``path`` at C from its warm state, and scores it into ``row``."""
    train_X, test_X = matrices
    ty, tcodes, tn, tweights = fit_args
    result, path.states[k] = _core.fit_path_from(
        train_X, ty, tcodes, tn, path.config, [C], warm_state=path.states[k], query_weights=tweights
    )
    ((coef, summary),) = result
    v_y, v_codes, v_weights = validation
    row.scores[k], row.degenerate[k] = cv._validation_score(coef, test_X, v_y, v_codes, v_weights, threads)
    row.seconds[k] = summary.history[-1]["seconds"]
    row.iters[k] = summary.n_iter
    row.evals[k] = summary.n_evals


def _patience(path: _Path, j: int, patience: Optional[int]) -> None:
    """The early stop along C: after row j's mean, ``path`` stops once ``patience`` rows in a
    row have not improved on its best (a NaN mean, no split scored, is no improvement)."""
    mean = _mean(path.rows[j].scores)
    if mean > path.best:
        path.best, path.not_improved = mean, 0
        return
    path.not_improved += 1
    if patience is not None and path.not_improved >= patience:
        path.stopped = True
        for later in path.rows[j + 1 :]:
            later.status = "early stop"


def _split_matrices(
    cv: "SVMMapCV",
    X: Any,
    splits: List[Tuple[np.ndarray, Optional[np.ndarray]]],
    eval_data: Optional[Tuple[Any, np.ndarray, np.ndarray]],
    preprocessings: Sequence[str],
) -> Dict[str, List[Tuple[Any, Any]]]:
    """Per preprocessing and split: the training and validation matrices as the core takes
    them, with the transformer fitted on the split's training rows only."""
    sparse = hasattr(X, "tocsr")
    data: Dict[str, List[Tuple[Any, Any]]] = {}
    for name in preprocessings:
        per_split = []
        for train, test in splits:
            x_train = _rows(X, train)
            x_test = eval_data[0] if test is None else _rows(X, test)  # type: ignore[index]
            transformer = make_preprocessor(name, sparse, cv.n_jobs)
            if transformer is not None:
                x_train = transformer.fit_transform(x_train)
                if not sparse and hasattr(x_test, "tocsr"):
                    # A sparse validation set beside dense X (a LETOR file that leaves out its
                    # zeros reads as CSR): the scaler fitted on dense X centers, which
                    # scikit-learn refuses on a sparse matrix.
                    x_test = x_test.toarray()
                x_test = transformer.transform(x_test)
            per_split.append((check_matrix(x_train)[0], check_matrix(x_test, name="validation X")[0]))
        data[name] = per_split
    return data


def _split_labels(
    labels: np.ndarray,
    codes: np.ndarray,
    doc_weights: Optional[np.ndarray],
    splits: List[Tuple[np.ndarray, Optional[np.ndarray]]],
    eval_data: Optional[Tuple[Any, np.ndarray, np.ndarray]],
) -> Tuple[list, list]:
    """Per split: the core's training arguments (labels, query codes, number of queries,
    query weights) and the validation (labels, query codes, document weights)."""
    fit_args = []
    validation = []
    for train, test in splits:
        train_codes, train_ids = check_qid(codes[train], train.size)
        weights = None if doc_weights is None else query_weights(doc_weights[train], train_codes, train_ids)
        fit_args.append((labels[train], train_codes, len(train_ids), weights))
        if test is None:
            assert eval_data is not None
            validation.append((eval_data[1], eval_data[2], None))
        else:
            validation.append((labels[test], codes[test], None if doc_weights is None else doc_weights[test]))
    return fit_args, validation


def _mean(scores: np.ndarray) -> float:
    """The mean over the splits where the metric is defined (NaN when none is)."""
    scored = scores[~np.isnan(scores)]
    return float(scored.mean()) if scored.size else float("nan")


def _results(rows: List[_Row], n_splits: int, scoring: str, tolerance: float) -> Tuple[Dict[str, Any], int]:
    """cv_results_ (one entry per row) and the index of the chosen row."""
    fitted = np.array([r.status == "fitted" for r in rows])
    mean = np.array([_mean(r.scores) if f else np.nan for r, f in zip(rows, fitted)])
    usable = fitted & ~np.isnan(mean)
    if not usable.any():
        raise ValueError(
            f"no validation split has a query on which {scoring!r} is defined (e.g. a query with a "
            "relevant document), so no candidate can be chosen; check relevance_threshold and the splits"
        )
    # A model that ranks nothing on some validation split is chosen only when every fitted
    # candidate does so, as SVMMapCV chooses C: its score only reflects how ties are broken.
    ranks = usable & np.array([not r.degenerate.any() for r in rows])
    pool = ranks if ranks.any() else usable
    # The best mean score; ties go to the row listed first (losses in the order given, then
    # preprocessings, then the smaller C).
    best = int(np.flatnonzero(pool)[np.argmax(mean[pool])])
    if tolerance > 0:
        # As SVMMapCV's choice of C: the first row within the tolerance of the best counts.
        best = int(np.flatnonzero(pool & (mean >= mean[best] - tolerance))[0])
    results: Dict[str, Any] = {
        "param_loss": np.array([_loss_text(r.loss) for r in rows], dtype=object),
        "param_preprocessing": np.array([r.preprocessing for r in rows], dtype=object),
        "param_C": np.array([r.C for r in rows]),
        "params": [{"loss": r.loss, "preprocessing": r.preprocessing, "C": r.C} for r in rows],
    }
    for k in range(n_splits):
        results[f"split{k}_test_score"] = np.array([r.scores[k] for r in rows])
    results["mean_test_score"] = mean
    results["std_test_score"] = np.array([np.nanstd(r.scores) if f else np.nan for r, f in zip(rows, usable)])
    # Rank 1 is the best mean score (ties share the smaller rank), as in scikit-learn; rows not
    # fitted or without a score rank after every scored row.
    last = int(usable.sum()) + 1
    results["rank_test_score"] = np.array(
        [1 + int(np.sum(mean[usable] > m)) if u else last for m, u in zip(mean, usable)], dtype=np.int64
    )
    results["mean_fit_time"] = np.array([np.nanmean(r.seconds) if f else np.nan for r, f in zip(rows, fitted)])
    results["mean_n_iter"] = np.array([r.iters.mean() if f else 0.0 for r, f in zip(rows, fitted)])
    results["mean_n_evals"] = np.array([r.evals.mean() if f else 0.0 for r, f in zip(rows, fitted)])
    results["n_degenerate_splits"] = np.array([int(r.degenerate.sum()) for r in rows], dtype=np.int64)
    results["status"] = np.array([r.status for r in rows], dtype=object)
    return results, best


def _loss_text(loss: Any) -> str:
    """A loss specification as one string (a combination as its comma-separated parts)."""
    if isinstance(loss, str):
        return loss
    if isinstance(loss, dict):
        return ",".join(f"{w:g}*{name}" for name, w in loss.items())
    return ",".join(str(part) for part in loss)
