"""The evaluation protocol of Yue et al. (2007), section 5, as a reusable function.

Repeated random splits of the queries (e.g. 10 training, 5 validation, the rest test, 50
trials) or given folds; for every method and split, one model per C on the training queries,
the C with the best validation MAP kept, and its per-query AP on the test queries. Methods are
compared with a reference method per query: wins/losses and the two-sided Wilcoxon signed-rank
test (scipy.stats.wilcoxon), in a table laid out like Yue et al. Tables 6-11.

A method is a factory: a callable that takes C and returns an unfitted ranker with
``fit(X, y, qid=...)`` and ``predict(X)`` (an `svmmap.SVMMap`, a baseline, a Pipeline
ending in one, ...), or a scikit-learn classifier, which is trained on binary relevance and
ranks by its decision function (e.g. ``lambda C: LinearSVC(C=C)`` as an SVM_acc).

Conventions: a document is relevant when its label is above ``relevance_threshold`` (0); AP
skips queries without a relevant document (they are not drawn into random splits at all); score
ties are broken pessimistically; the smaller C wins ties on validation MAP.

The module is over 600 lines on purpose: splitting, fitting per C, choosing C and the
significance table are the stages of one protocol that share its result type and conventions.
"""

from __future__ import annotations

import numbers
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .._fit.defaults import TRAINING_DEFAULTS
from .._search.selection import choose_C
from .._validation import check_labels, finite_number, invalid_parameter, queries_with_relevant
from ._rankers import SingleFeature, fit_ranker, ranking_scores

__all__ = [
    "DEFAULT_PROTOCOL_C_GRID",
    "Comparison",
    "paired_comparison",
    "QuerySplit",
    "make_random_splits",
    "SingleFeature",
    "fit_ranker",
    "ranking_scores",
    "MethodResult",
    "ProtocolResult",
    "evaluate_splits",
    "random_splits",
    "given_folds",
    "format_table",
]

#: C values tried when none are given: a wide range, as Yue et al. describe.
DEFAULT_PROTOCOL_C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)


Factory = Callable[[float], Any]
MethodSpec = Union[Factory, Tuple[Factory, Sequence[float]]]


# --------------------------------------------------------------------------------------------
# Statistics


@dataclass(frozen=True)
class Comparison:
    """A paired per-query comparison of method A against method B.

    ``wins``: queries where A scores higher; ``losses``: lower; ``ties``: equal (within 1e-12).
    ``p_value``: two-sided Wilcoxon signed-rank test on the non-zero differences (1.0 when all
    differences are zero).
    """

    wins: int
    losses: int
    ties: int
    p_value: float
    n: int

    @property
    def significant(self) -> bool:
        return self.p_value < 0.05


def paired_comparison(a: Any, b: Any, *, tol: float = 1e-12) -> Comparison:
    """Wins, losses and the two-sided Wilcoxon signed-rank p-value of ``a`` against ``b``.

    Differences within ``tol`` count as ties and are left out of the test (Wilcoxon's
    original treatment of zero differences, scipy's ``zero_method="wilcox"``).

    Examples
    --------
    >>> c = paired_comparison([0.5, 0.7, 0.9, 0.1], [0.4, 0.5, 0.6, 0.15])
    >>> c.wins, c.losses, round(c.p_value, 4)
    (3, 1, 0.25)
    """
    from scipy.stats import wilcoxon

    # The estimators' check of labels, one finite number per query: a NaN used to count as a
    # tie and make the p-value NaN, and 2-D arrays or scalars were flattened into queries.
    n_a, n_b = (len(v) if np.ndim(v) else 1 for v in (a, b))
    if n_a != n_b:
        raise ValueError(f"paired values differ in length: {n_a} and {n_b}")
    a = check_labels(a, n_a, name="a", what="per-query values")
    b = check_labels(b, n_b, name="b", rows_name="a", what="per-query values")
    tol = finite_number(tol, "tol")
    if tol < 0:
        raise invalid_parameter("tol", "a finite number >= 0", tol)
    d = a - b
    d[np.abs(d) <= tol] = 0.0
    wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
    ties = int(d.size - wins - losses)
    if wins + losses == 0:
        return Comparison(wins, losses, ties, 1.0, int(d.size))
    with warnings.catch_warnings():
        # Small samples make scipy warn about the exactness of its p-value; the value stands.
        warnings.simplefilter("ignore")
        p = float(wilcoxon(d[d != 0], zero_method="wilcox", alternative="two-sided").pvalue)
    return Comparison(wins, losses, ties, p, int(d.size))


# --------------------------------------------------------------------------------------------
# Splits


@dataclass(frozen=True)
class QuerySplit:
    """Query ids of the training, validation and test sets of one trial."""

    train: Tuple[Any, ...]
    vali: Tuple[Any, ...]
    test: Tuple[Any, ...]


class _Cycle:
    """Draws queries in the order of successive random permutations, so that every query is
    drawn once per cycle. A query passed over (because the trial excludes it) stays first in
    line; a new permutation, of the queries not already waiting, is appended when needed."""

    def __init__(self, queries: List[Any], rng: np.random.Generator) -> None:
        self.queries = queries
        self.rng = rng
        self.waiting: List[Any] = []

    def take(self, k: int, exclude: set) -> List[Any]:
        out: List[Any] = []
        i = 0
        while len(out) < k:
            if i == len(self.waiting):
                waiting = set(self.waiting)
                fresh = [self.queries[j] for j in self.rng.permutation(len(self.queries))]
                self.waiting.extend(q for q in fresh if q not in waiting)
                if i == len(self.waiting):  # pragma: no cover - guarded by the size checks
                    raise ValueError("not enough queries to draw from")
            q = self.waiting[i]
            if q in exclude or q in out:
                i += 1
                continue
            out.append(q)
            del self.waiting[i]
        return out


def make_random_splits(
    queries: Iterable[Any],
    n_trials: int = 50,
    n_train: int = 10,
    n_vali: int = 5,
    n_test: Optional[int] = None,
    random_state: Any = 0,
) -> List[QuerySplit]:
    """Random query splits in which every query is drawn about equally often for each role.

    Yue et al. (2007): "All queries were selected to be in the training, validation and test
    sets the same number of times." Training sets are drawn from a cycle of random
    permutations of the queries, so every query trains once per cycle (exactly equally often
    when ``n_trials * n_train`` is a multiple of the number of queries and ``n_train`` divides
    it). Validation sets come from a second cycle, skipping the trial's training queries; the
    test set is the rest (or ``n_test`` queries from a third cycle).

    Parameters
    ----------
    queries : iterable
        Query ids (duplicates are ignored).
    n_trials, n_train, n_vali : int
        Number of splits and sizes of the training and validation sets.
    n_test : int or None
        Size of the test set; None uses all remaining queries.
    random_state : int, numpy Generator or None

    Examples
    --------
    >>> from svmmap.ir.protocol import make_random_splits
    >>> splits = make_random_splits(range(6), n_trials=3, n_train=2, n_vali=2, random_state=0)
    >>> # 3 trials of 2 training queries draw each of the 6 queries exactly once for training.
    >>> sorted(q for s in splits for q in s.train)
    [0, 1, 2, 3, 4, 5]
    >>> [len(s.test) for s in splits]  # the 6 - 2 - 2 queries left in each trial
    [2, 2, 2]
    """
    qs = list(dict.fromkeys(np.asarray(list(queries)).tolist()))
    for name, v, lo in (("n_trials", n_trials, 1), ("n_train", n_train, 1), ("n_vali", n_vali, 1)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if n_test is not None and (isinstance(n_test, bool) or not isinstance(n_test, numbers.Integral) or n_test < 1):
        raise invalid_parameter("n_test", "None or an integer >= 1", n_test)
    need = n_train + n_vali + (1 if n_test is None else n_test)
    if len(qs) < need:
        raise ValueError(
            f"{len(qs)} queries are too few for {n_train} training, {n_vali} validation and "
            f"{'at least 1' if n_test is None else n_test} test queries"
        )
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError):
        # NumPy's words ("SeedSequence expects int ...") named no argument.
        raise invalid_parameter("random_state", "an integer >= 0, a numpy Generator or None", random_state) from None
    train_cycle, vali_cycle, test_cycle = _Cycle(qs, rng), _Cycle(qs, rng), _Cycle(qs, rng)
    splits = []
    for _ in range(n_trials):
        train = train_cycle.take(n_train, set())
        vali = vali_cycle.take(n_vali, set(train))
        used = set(train) | set(vali)
        test = [q for q in qs if q not in used] if n_test is None else test_cycle.take(n_test, used)
        splits.append(QuerySplit(tuple(train), tuple(vali), tuple(test)))
    return splits


@dataclass
class MethodResult:
    """One method over all trials.

    Attributes
    ----------
    name : str
    test_map : ndarray of shape (n_trials,)
        Test MAP of every trial (mean AP over its test queries).
    vali_map : ndarray of shape (n_trials,)
        Validation MAP of the chosen C in every trial.
    chosen_C : list of float
    per_query : dict
        Query id -> mean test AP over the trials in which the query was a test query.
    seconds : float
        Time spent fitting and predicting.
    """

    name: str
    test_map: np.ndarray
    vali_map: np.ndarray
    chosen_C: List[float]
    per_query: Dict[Any, float]
    seconds: float = 0.0

    @property
    def map(self) -> float:
        """Mean test MAP over trials ("the average performance over the 50 trials")."""
        return float(np.mean(self.test_map))


@dataclass
class ProtocolResult:
    """All methods on the same splits; the first method is the default reference."""

    methods: Dict[str, MethodResult]
    splits: List[QuerySplit] = field(repr=False)
    description: str = ""

    @property
    def reference(self) -> str:
        return next(iter(self.methods))

    def compare(self, reference: Optional[str] = None) -> Dict[str, Comparison]:
        """Per-query comparison of ``reference`` (default: the first method) with every other."""
        ref = self.reference if reference is None else reference
        if ref not in self.methods:
            raise KeyError(f"no method named {ref!r}; methods: {list(self.methods)}")
        r = self.methods[ref].per_query
        queries = sorted(r, key=str)
        a = np.asarray([r[q] for q in queries])
        out = {}
        for name, m in self.methods.items():
            if name == ref:
                continue
            out[name] = paired_comparison(a, np.asarray([m.per_query[q] for q in queries]))
        return out

    def table(self, reference: Optional[str] = None, *, title: str = "MAP", show_p: bool = False) -> str:
        """A Markdown table in the layout of Yue et al. Tables 6-11 (see `format_table`)."""
        return format_table({title: self}, reference=reference, show_p=show_p)


def _method_specs(methods: Mapping[str, MethodSpec], C_grid: Sequence[float]) -> Dict[str, Tuple[Factory, List[float]]]:
    if not methods:
        raise ValueError("at least one method is needed")
    specs = {}
    for name, spec in methods.items():
        if isinstance(spec, tuple):
            factory, grid = spec
        else:
            factory, grid = spec, C_grid
        if not callable(factory):
            raise TypeError(f"method {name!r}: expected a factory callable(C) -> estimator, got {factory!r}")
        grid = list(grid)
        if not grid:
            raise ValueError(f"method {name!r}: the C grid is empty")
        specs[str(name)] = (factory, grid)
    return specs


def _rows_by_query(qid: np.ndarray) -> Dict[Any, np.ndarray]:
    """Row indices of every query id (as a Python value), in row order."""
    order = np.argsort(qid, kind="stable")
    keys = qid[order].tolist()
    bounds = [0] + [i for i in range(1, len(keys)) if keys[i] != keys[i - 1]] + [len(keys)]
    return {keys[bounds[i]]: order[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)}


def evaluate_splits(
    X: Any,
    y: Any,
    qid: Any,
    methods: Mapping[str, MethodSpec],
    splits: Sequence[QuerySplit],
    *,
    C_grid: Sequence[float] = DEFAULT_PROTOCOL_C_GRID,
    relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
    progress: Optional[Callable[[str], None]] = None,
    description: str = "",
) -> ProtocolResult:
    """Runs every method on every split of one dataset (see the module docstring)."""
    from ..metrics import per_query

    y = np.asarray(y, dtype=np.float64)
    qid = np.asarray(qid)
    specs = _method_specs(methods, C_grid)
    rows_of = _rows_by_query(qid)

    def rows(queries: Sequence[Any]) -> np.ndarray:
        missing = [q for q in queries if q not in rows_of]
        if missing:
            raise ValueError(f"query {missing[0]!r} of a split is not in the data")
        return np.concatenate([rows_of[q] for q in queries])

    def ap(model: Any, r: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        pq = per_query("map", y[r], ranking_scores(model, X[r]), qid[r], relevance_threshold=relevance_threshold)
        return pq.qids, pq.values

    results = {name: MethodResult(name, np.zeros(len(splits)), np.zeros(len(splits)), [], {}) for name in specs}
    sums: Dict[str, Dict[Any, List[float]]] = {name: {} for name in specs}
    for t, split in enumerate(splits):
        tr, va, te = rows(split.train), rows(split.vali), rows(split.test)
        for name, (factory, grid) in specs.items():
            start = time.perf_counter()

            def fit_and_score(C: float, factory: Factory = factory) -> Tuple[float, Any]:
                model = fit_ranker(factory(C), X[tr], y[tr], qid[tr], relevance_threshold=relevance_threshold)
                _, v = ap(model, va)
                return (float(np.mean(v)) if v.size else float("nan")), model

            chosen = choose_C(grid, fit_and_score)
            vali, C, model = chosen.score, chosen.C, chosen.model
            q_test, v_test = ap(model, te)
            res = results[name]
            res.test_map[t] = float(np.mean(v_test)) if v_test.size else float("nan")
            res.vali_map[t] = vali
            res.chosen_C.append(C)
            for q, v in zip(q_test.tolist(), v_test.tolist()):
                sums[name].setdefault(q, []).append(v)
            res.seconds += time.perf_counter() - start
        if progress is not None:
            progress(
                f"trial {t + 1}/{len(splits)}: "
                + ", ".join(f"{n} {results[n].test_map[t]:.4f} (C={results[n].chosen_C[-1]:g})" for n in specs)
            )
    for name in specs:
        results[name].per_query = {q: float(np.mean(v)) for q, v in sums[name].items()}
    return ProtocolResult(results, list(splits), description)


def random_splits(
    X: Any,
    y: Any,
    qid: Any,
    methods: Mapping[str, MethodSpec],
    *,
    n_trials: int = 50,
    n_train: int = 10,
    n_vali: int = 5,
    n_test: Optional[int] = None,
    C_grid: Sequence[float] = DEFAULT_PROTOCOL_C_GRID,
    random_state: Any = 0,
    relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
    progress: Optional[Callable[[str], None]] = None,
) -> ProtocolResult:
    """Yue et al.'s protocol: repeated random query splits, C chosen on validation.

    Only queries with at least one relevant document take part (the others have no AP and
    cannot be validated or tested on). All methods see the same splits.

    Parameters
    ----------
    X, y, qid :
        The whole dataset (any matrix the methods accept, labels, query ids).
    methods : mapping
        Name -> factory ``C -> unfitted ranker``, or name -> ``(factory, C_grid)`` to give
        that method its own grid (e.g. ``[1.0]`` for a method without C). The first method
        is the reference of the comparison table.
    n_trials, n_train, n_vali, n_test, random_state :
        See `make_random_splits`.
    C_grid : sequence of float
        C values tried for every method without its own grid.

    Returns
    -------
    ProtocolResult

    Examples
    --------
    >>> from svmmap import SVMMap
    >>> from svmmap.datasets import load_mq2008
    >>> from svmmap.ir.protocol import SingleFeature, random_splits
    >>> X, y, qid = load_mq2008(1, "test")
    >>> result = random_splits(
    ...     X, y, qid,
    ...     {"SVM-map": lambda C: SVMMap(C=C), "Best Func.": (lambda C: SingleFeature(), [1.0])},
    ...     n_trials=2, C_grid=[1.0, 10.0],
    ... )
    >>> list(result.methods), len(result.splits)
    (['SVM-map', 'Best Func.'], 2)
    """
    from .._validation import check_qid

    check_qid(qid, len(y) if np.ndim(y) == 1 else -1, required_by="random_splits")  # one id per document
    queries = queries_with_relevant(np.asarray(y), np.asarray(qid), relevance_threshold)
    splits = make_random_splits(queries, n_trials, n_train, n_vali, n_test, random_state)
    test_desc = "the rest" if n_test is None else str(n_test)
    return evaluate_splits(
        X,
        y,
        qid,
        methods,
        splits,
        C_grid=C_grid,
        relevance_threshold=relevance_threshold,
        progress=progress,
        description=(
            f"{n_trials} random splits of {len(queries)} queries with a relevant document: {n_train} training, "
            f"{n_vali} validation, {test_desc} test"
        ),
    )


def given_folds(
    folds: Iterable[Any],
    methods: Mapping[str, MethodSpec],
    *,
    C_grid: Sequence[float] = DEFAULT_PROTOCOL_C_GRID,
    relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
    progress: Optional[Callable[[str], None]] = None,
) -> ProtocolResult:
    """The protocol on given folds, e.g. LETOR's (`svmmap.datasets.mq2008_folds`).

    Each fold has ``train``, ``vali`` and ``test`` parts, each ``(X, y, qid)``; C is chosen on
    ``vali``. Query ids must not repeat across the parts of a fold (they are stacked).

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap.datasets import Fold, make_ranking
    >>> from svmmap.ir.protocol import SingleFeature, given_folds
    >>> X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=0)
    >>> X[:, 0] = y  # Feature 0 is the label itself, so it ranks every query perfectly.
    >>> a, b = np.searchsorted(qid, [10, 15])  # Queries 0-9 train, 10-14 validate, 15-19 test.
    >>> fold = Fold("Fold1", (X[:a], y[:a], qid[:a]), (X[a:b], y[a:b], qid[a:b]), (X[b:], y[b:], qid[b:]))
    >>> result = given_folds([fold], {"Best Func.": lambda C: SingleFeature()}, C_grid=[1.0])
    >>> result.methods["Best Func."].per_query  # the test queries, each ranked perfectly
    {15: 1.0, 16: 1.0, 17: 1.0, 18: 1.0, 19: 1.0}
    """
    import scipy.sparse as sp

    Xs, ys, qs, splits = [], [], [], []
    offset_names: Dict[Any, str] = {}
    for k, fold in enumerate(folds):
        parts = [fold.train, fold.vali, fold.test]
        ids = []
        for part in parts:
            q = np.asarray(part[2])
            # Keys unique across folds: the same query appears in several folds' parts.
            keyed = np.asarray([f"{k}\x1f{v}" for v in q.tolist()], dtype=object)
            offset_names.update({kq: v for kq, v in zip(keyed.tolist(), q.tolist())})
            Xs.append(part[0])
            ys.append(np.asarray(part[1], dtype=np.float64))
            qs.append(keyed)
            ids.append(tuple(dict.fromkeys(keyed.tolist())))
        splits.append(QuerySplit(*ids))
    if not splits:
        raise ValueError("no folds given")
    X = sp.vstack(Xs, format="csr") if any(sp.issparse(x) for x in Xs) else np.vstack(Xs)
    result = evaluate_splits(
        X,
        np.concatenate(ys),
        np.concatenate(qs),
        methods,
        splits,
        C_grid=C_grid,
        relevance_threshold=relevance_threshold,
        progress=progress,
        description=f"{len(splits)} given folds, C chosen on each fold's validation part",
    )
    # Report per-query results under the original query ids (each is tested in one fold).
    for m in result.methods.values():
        m.per_query = {offset_names[k]: v for k, v in m.per_query.items()}
    return result


def format_table(
    results: Mapping[str, ProtocolResult], *, reference: Optional[str] = None, show_p: bool = False
) -> str:
    """A Markdown table laid out like Yue et al. Tables 6-11.

    One column group (MAP, W/L) per dataset; one row per method, the reference first with "–";
    W/L counts the queries where the reference's AP is higher/lower than the method's; ``**``
    marks p < 0.05 in the two-sided Wilcoxon signed-rank test on per-query AP. With
    ``show_p``, a p-value column follows each W/L.
    """
    if not results:
        raise ValueError("no results to tabulate")
    first = next(iter(results.values()))
    ref = first.reference if reference is None else reference
    names = [ref] + [n for n in first.methods if n != ref]
    header = "| Model |"
    rule = "|---|"
    for title in results:
        header += f" {title} MAP | W/L |" + (" p |" if show_p else "")
        rule += "---:|---:|" + ("---:|" if show_p else "")
    lines = [header, rule]
    comparisons = {title: res.compare(ref) for title, res in results.items()}
    for n in names:
        row = f"| {n} |"
        for title, res in results.items():
            if n not in res.methods:
                row += " | |" + (" |" if show_p else "")
                continue
            m = res.methods[n].map
            if n == ref:
                row += f" {m:.3f} | – |" + (" |" if show_p else "")
            else:
                c = comparisons[title][n]
                stars = " **" if c.significant else ""
                row += f" {m:.3f} | {c.wins}/{c.losses}{stars} |" + (f" {c.p_value:.2g} |" if show_p else "")
        lines.append(row)
    return "\n".join(lines)
