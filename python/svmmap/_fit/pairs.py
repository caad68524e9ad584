"""Pairwise interactions of binned features (GA2M): the coarse bins of a pair, the pair codes,
and the choice of pairs by FAST (Lou, Caruana, Gehrke and Hooker, KDD 2013).

A pair (i, j) is a grid of cells on coarse bins of features i and j. The coarse thresholds of a
feature are a subset of its Binner thresholds (every few of them, see `coarse_indices`), so a
document's coarse code follows from its bin code by a table look-up and the pair's code is
``ci * (b + 1) + cj`` for a and b coarse thresholds; a document missing either feature has the
code ``(a + 1) * (b + 1)``, which sets no column and scores 0 (see ``rust/data/binned.rs``).
The model stays a sum of per-feature step functions and per-pair step surfaces.

FAST, as implemented here for ranking, with every pair judged on queries it was not chosen on
(the anchor: EBM's outer bags and validation-based stopping, Lou et al. 2013 and InterpretML):

1. The queries are cut in two halves (whole queries, a fixed seed). Each half in turn chooses
   and the other judges.
2. On the choosing half, the main-effects residual: the labels centred per query (only the
   order within a query matters to a ranking), minus an additive model of the base features
   fitted to them by least-squares backfitting on the Binner's bins (a few sweeps of per-bin
   means).
3. For every candidate pair, the best piecewise-constant correction of that residual on the
   pair's coarse grid (the cell means), from the 2-D histograms of the residual's sums and the
   counts (one pass over the documents per pair, in the core: ``rust/binning/pairs.rs``). A
   pair's FAST score is the interaction part of the reduction of the squared residual (the
   cell means' reduction minus what the coarse bins of i alone and of j alone reduce, as the
   interaction sum of squares of a two-way table), less the reduction that noise would give
   to its degrees of freedom (the residual's variance times (cells - rows - columns + 1)).
   The half puts forward its `pool_size` pairs of the highest positive scores.
4. Each pair put forward is judged on the other half: the choosing half's cell means g,
   added to the judging half's residual r (the choosing half's additive model taken off its
   centred labels), change a judged document's squared residual by 2 g r - g^2, summed per
   query into the pair's held-out reduction of that query.
5. A pair is kept when both halves put it forward, the reduction summed over each judging
   half is positive, and the mean reduction over all the queries (each judged once, by the
   half that did not choose on it) is above 0 with a one-sided t statistic above
   `HELD_OUT_T` (so a pair that helps one query alone is not kept). The kept pairs are ranked
   by their total held-out reduction (`Binner.interaction_scores_`), and the first k are the
   pairs; where no pair helps on the queries that did not choose it, none is kept. On 30 of
   an MQ2008 fold's training queries the earlier rule (a chi-square bar on one in-sample
   fit's scores) kept three pairs on one draw that cost 0.038 of test NDCG@10, where this one
   keeps none on any of the fifteen draws of ``benchmarks/interactions.py --small``. The
   price is power on few queries: of that script's three planted pairs (its generator with
   60 and with 120 queries in all), two are kept from 60 queries and all three from 120,
   where the earlier rule kept all three from 60.

With a validation set (``Binner.fit(eval_set=...)``, and ``SVMMapCV(cv="validation")``'s
"ga2m" candidate) there is one round instead of the two halves: all the training queries
choose (step 2 and 3 on all of them) and the validation queries judge (step 4 on their
centred labels less the training rows' additive model), and step 5's rule reads over the
validation queries: a pair is kept when its total reduction there is positive and its t
statistic over them is above `HELD_OUT_T`. The search then keeps a pair only when it helps on
the queries it chooses models by, as EBM's validation-based stopping does.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _core

#: The most coarse thresholds per feature of a pair: its codes (up to 64 * 64) then fit uint16,
#: and the coarse codes of pair selection (up to 65 per feature) uint8.
MAX_PAIR_BINS = 63
#: ``Binner(interaction_bins=...)``'s default, also of a Binner dict that does not give it.
DEFAULT_PAIR_BINS = 32
#: The most coarse thresholds per feature of the grid on which FAST scores a pair (8: 81 cells
#: per pair, so the histograms of all 9,180 pairs of 136 features take about 12 MB).
SELECTION_BINS = 8
#: Backfitting sweeps over the base features for the main-effects residual.
BACKFIT_SWEEPS = 4
#: Pairs whose scores `interaction_scores` computes at once (their cells' temporaries, about
#: 10 arrays of 8 bytes a cell, take about 8 MB at 100 cells a pair).
SCORE_BLOCK = 1024
#: Documents that pair selection reads at most (whole queries, drawn with a fixed seed), which
#: bounds its cost on large data; below it every document is used. 50,000 documents put about
#: 600 in a cell of the 9 x 9 selection grid; on 100,000 documents x 136 features, reading all
#: of them made the selection 1.9 times the per-feature fit (benchmarks/interactions.py --cost).
SELECTION_ROWS = 50_000
#: The t statistic over queries that a pair's held-out reduction of the squared residual must
#: exceed: about a one-sided 2.5% chance of a pair that adds nothing.
HELD_OUT_T = 2.0
#: The fewest pairs each half puts forward to be judged on the other (see `pool_size`).
POOL_MIN = 10
#: Labels whose largest magnitude lies outside 2^-64 .. 2^64 are first multiplied by a power of
#: two (`label_exponent`): the residuals' squares, summed over up to `SELECTION_ROWS`
#: documents, then stay far from float64's overflow (2^1024) and underflow (2^-1022).
LABEL_RANGE = 64


class SelectionCut(TimeoutError):
    """Pair selection (`select_pairs`) passed its deadline, a search's time budget, before it
    chose: no pair is chosen, and the message says what it had done. The search counts the
    "ga2m" row of that split as cut by the budget, as it does a fit the budget stops."""


def on_time(deadline: Optional[float], done: List[str], step: str, what: str) -> None:
    """Notes ``step`` among the steps ``done`` and raises `SelectionCut` once the
    ``time.perf_counter()`` time ``deadline`` (None: no deadline) has passed, naming ``what``
    was being chosen and the steps done."""
    done.append(step)
    if deadline is not None and time.perf_counter() >= deadline:
        raise SelectionCut(cut_message(what, done))


def cut_message(what: str, done: List[str]) -> str:
    """What `SelectionCut` says: what was being chosen, and the steps done before the deadline."""
    return f"pair selection of {what} stopped at its deadline (the time budget) after {', '.join(done)}; no pair was chosen"


def check_interactions(interactions: Any, bins: Any) -> Optional[List[tuple]]:
    """The pairs of ``interactions`` when it lists them, None for a count or None; refuses
    anything else, and an ``interaction_bins`` that is not an integer in 1..MAX_PAIR_BINS.
    The one check of these parameters: ``Binner.fit`` applies it, and so does the reader of
    Binner dicts and model files, so that a loaded binner can be saved and refitted."""
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or not 1 <= bins <= MAX_PAIR_BINS:
        raise ValueError(f"interaction_bins must be an integer in 1..{MAX_PAIR_BINS}, got {bins!r}")
    if interactions is None:
        return None
    if isinstance(interactions, (int, np.integer)) and not isinstance(interactions, bool):
        if interactions < 0:
            raise ValueError(f"interactions must be None, a count >= 0 or a list of pairs, got {interactions!r}")
        return None
    # A feature index is an integer: int() truncated 0.5 to 0 and read True as 1, so that
    # [(0.5, 1)] became the pair (0, 1) and [(True, 2)] the pair (1, 2) without a word.
    pairs: Optional[List[tuple]] = None
    try:
        pairs = [tuple(int(v) for v in p) for p in interactions]
        if not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for p in interactions for v in p
        ):
            pairs = None
    except (TypeError, ValueError):
        pairs = None
    if pairs is None or any(len(p) != 2 or p[0] == p[1] or min(p) < 0 for p in pairs):
        raise ValueError(
            f"interactions must be None, a count >= 0 or a list of pairs (i, j) of two different "
            f"feature indices, got {interactions!r}"
        )
    if len(set(tuple(sorted(p)) for p in pairs)) != len(pairs):
        raise ValueError(f"interactions lists a pair twice: {interactions!r}")
    return pairs


def coarse_indices(n_thresholds: int, n_coarse: int) -> np.ndarray:
    """Which of a feature's ``n_thresholds`` thresholds (indices, increasing) are its coarse
    thresholds: all of them when there are at most ``n_coarse``, otherwise every
    ``(n_thresholds + 1) / (n_coarse + 1)``-th, so that quantile thresholds give coarse quantiles."""
    if n_thresholds <= n_coarse:
        return np.arange(n_thresholds, dtype=np.int64)
    at = np.round(np.arange(1, n_coarse + 1) * (n_thresholds + 1) / (n_coarse + 1)).astype(np.int64) - 1
    return np.unique(np.clip(at, 0, n_thresholds - 1))


def coarse_map(n_thresholds: int, indices: np.ndarray, missing: bool) -> np.ndarray:
    """The coarse code of every bin code of a feature: bin code c (c thresholds below the value)
    has as many coarse thresholds below it as coarse indices are below c. With a missing
    indicator, the missing bin code ``n_thresholds + 1`` maps to the coarse missing code
    ``len(indices) + 1``."""
    out = np.searchsorted(indices, np.arange(n_thresholds + 1), side="left")
    if missing:
        out = np.append(out, len(indices) + 1)
    return out.astype(np.int64)


def pair_codes(
    codes: np.ndarray,
    pairs: Sequence[Tuple[int, int]],
    coarse: Sequence[Tuple[np.ndarray, np.ndarray]],
    counts: Sequence[int],
    missing: bool,
) -> np.ndarray:
    """The pair codes (n_rows, n_pairs) of base bin codes (see the module docstring), uint8 when
    every pair's codes fit and uint16 otherwise; ``coarse[p]`` holds the coarse indices of the
    pair's two features."""
    top = max(((len(a) + 1) * (len(b) + 1) for a, b in coarse), default=0)
    out = np.empty((codes.shape[0], len(pairs)), dtype=np.uint8 if top <= 255 else np.uint16)
    for p, ((i, j), (ki, kj)) in enumerate(zip(pairs, coarse)):
        a, b = len(ki), len(kj)
        ci = coarse_map(counts[i], ki, missing)[codes[:, i]]
        cj = coarse_map(counts[j], kj, missing)[codes[:, j]]
        code = ci * (b + 1) + cj
        if missing:
            code = np.where((ci > a) | (cj > b), (a + 1) * (b + 1), code)
        out[:, p] = code
    return out


def selection_rows(qid: Optional[np.ndarray], n: int, limit: int = SELECTION_ROWS) -> np.ndarray:
    """The rows pair selection reads: all of them up to ``limit``, otherwise whole queries
    drawn with a fixed seed until about ``limit`` rows."""
    if n <= limit:
        return np.arange(n)
    rng = np.random.default_rng(0)
    if qid is None:
        return np.sort(rng.choice(n, size=limit, replace=False))
    uniques, q = np.unique(qid, return_inverse=True)
    keep = rng.permutation(len(uniques))[: max(1, int(len(uniques) * limit / n))]
    return np.flatnonzero(np.isin(q, keep))


def interaction_scores(
    sums: np.ndarray, counts: np.ndarray, shapes: List[Tuple[int, int]], variance: float
) -> Tuple[np.ndarray, np.ndarray]:
    """Every pair's FAST score from its 2-D histogram blocks and the bar it must clear (see the
    module docstring), computed for all the pairs of one block shape at once."""
    out = np.empty(len(shapes))
    bars = np.empty(len(shapes))
    t = np.log(max(len(shapes), 1)) + np.log(20.0)
    sizes = np.array([u * v for u, v in shapes], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    for shape in sorted(set(shapes)):
        u, v = shape
        # A block of pairs at a time: the cells' temporaries of all 9,180 pairs of 136
        # features at once took about 60 MB; each pair's score is its own cells' alone.
        of_shape = np.flatnonzero([s == shape for s in shapes])
        for which in np.array_split(of_shape, -(-len(of_shape) // SCORE_BLOCK)):
            out[which], bars[which] = _scores_of(sums, counts, starts[which], u, v, variance, t)
    return out, bars


def _scores_of(
    sums: np.ndarray, counts: np.ndarray, starts: np.ndarray, u: int, v: int, variance: float, t: float
) -> Tuple[np.ndarray, np.ndarray]:
    """`interaction_scores` of the pairs of shape (u, v) whose blocks start at ``starts``."""
    cells = starts[:, None] + np.arange(u * v)[None, :]
    h = sums[cells].reshape(-1, u, v)
    c = counts[cells].reshape(-1, u, v)

    def explained(s: np.ndarray, m: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        axes = tuple(range(1, s.ndim))
        safe = np.where(m > 0, m, 1.0)
        return np.sum(np.where(m > 0, s * s / safe, 0.0), axis=axes), np.count_nonzero(m > 0, axis=axes)

    grid, n_cells = explained(h, c)
    rows, n_rows = explained(h.sum(axis=2), c.sum(axis=2))
    cols, n_cols = explained(h.sum(axis=1), c.sum(axis=1))
    total, _ = explained(h.sum(axis=(1, 2))[:, None], c.sum(axis=(1, 2))[:, None])
    df = np.maximum(n_cells - n_rows - n_cols + 1, 0)
    return (grid - rows - cols + total) - variance * df, variance * (2 * np.sqrt(df * t) + 2 * t)


def query_halves(qid: Optional[np.ndarray], n: int) -> np.ndarray:
    """The half (0 or 1) of every row, whole queries to a half, drawn with a fixed seed: the
    queries in a random order, every other one to half 1 (rows when there is no qid)."""
    rng = np.random.default_rng(0)
    if qid is None:
        return (rng.permutation(n) % 2).astype(np.int64)
    uniques, q = np.unique(qid, return_inverse=True)
    half = np.empty(len(uniques), dtype=np.int64)
    half[rng.permutation(len(uniques))] = np.arange(len(uniques)) % 2
    return half[q]


def label_exponent(*labels: np.ndarray) -> int:
    """The e such that the labels times 2^e have their largest magnitude in [0.5, 1), or 0 when
    it already lies within 2^-LABEL_RANGE .. 2^LABEL_RANGE (every graded scale).

    The selection is a t statistic on per-query centred residuals, so it does not depend on the
    labels' scale, but its sums of squares do: labels of 1e150 overflowed them to inf and labels
    of 1e-200 underflowed them to 0, and every pair was rejected without a word. A power of two
    scales every sum, product and quotient exactly, so the pairs are those of unscaled labels and
    the scores are theirs times 2^(2e); labels in the usual range are left as they are.
    """
    largest = max((float(np.max(np.abs(v))) for v in labels if v.size), default=0.0)
    if largest == 0.0 or 2.0**-LABEL_RANGE <= largest <= 2.0**LABEL_RANGE:
        return 0
    return -int(np.frexp(largest)[1])


def centred_labels(y: np.ndarray, qid: Optional[np.ndarray]) -> np.ndarray:
    """The labels minus their query's mean (their mean over all rows without qid)."""
    r = np.asarray(y, dtype=np.float64).copy()
    if qid is None:
        return r - r.mean()
    _, q = np.unique(qid, return_inverse=True)
    return r - (np.bincount(q, weights=r) / np.bincount(q))[q]


def main_effects(codes: np.ndarray, r: np.ndarray, n_codes: Sequence[int]) -> Tuple[np.ndarray, List[np.ndarray]]:
    """The residual of ``r`` after its least-squares additive fit on the bin codes (``codes``
    feature-major) by backfitting, and the fit's per-bin parts, so that the same additive
    model can be taken off other rows.

    A backfitting step of feature f replaces its part by the bin means of the residual plus its
    part, which moves the part of bin c by the mean residual of bin c: the residual drops by
    that mean in every row of the bin."""
    r = r.copy()
    parts = [np.zeros(size) for size in n_codes]
    sizes = [np.maximum(np.bincount(c, minlength=size), 1) for c, size in zip(codes, n_codes)]
    for _ in range(BACKFIT_SWEEPS):
        for narrow, size, part in zip(codes, sizes, parts):
            # One feature's codes as the index type at a time (np.bincount and indexing would
            # each convert the uint8 codes): all features' at once took 8 bytes a code, 27 MB
            # on the 50,000 rows of 136 features that the search's pair selection reads.
            c = narrow.astype(np.intp)
            step = np.bincount(c, weights=r, minlength=size.shape[0]) / size
            r -= step[c]
            part += step
    return r, parts


def _blocks(flat: np.ndarray, shapes: Sequence[Tuple[int, int]]) -> List[np.ndarray]:
    """The per-pair blocks of the core's flat histograms, in the order of ``shapes``."""
    ends = np.cumsum([u * v for u, v in shapes])
    return [flat[e - u * v : e].reshape(u, v) for e, (u, v) in zip(ends, shapes)]


def pool_size(k: int) -> int:
    """How many pairs, best FAST scores first, each half puts forward to be judged on the
    other half: twice those asked for and at least POOL_MIN, so that a pair that ranks a little
    lower on one half than on the other is still judged on both."""
    return max(2 * k, POOL_MIN)


def _selected(codes: Optional[np.ndarray], codes_at: Any, y: Any, qid: Any) -> Tuple[np.ndarray, np.ndarray, Any]:
    """The base codes, labels and query ids of the rows pair selection reads
    (`selection_rows`): rows of ``codes``, or binned by ``codes_at`` when ``codes`` is None."""
    rows = selection_rows(qid, len(y) if codes is None else codes.shape[0])
    if codes_at is not None:
        codes = codes_at(rows)
    else:
        assert codes is not None
        codes = codes[rows]
    return codes, np.asarray(y, dtype=np.float64)[rows], None if qid is None else np.asarray(qid)[rows]


def _scaled_labels(y: np.ndarray, validation: Any) -> Tuple[np.ndarray, Any, int]:
    """The training labels and the validation set's times 2^e, the one `label_exponent` of
    both (the validation residuals are its labels less the training rows' model), and e."""
    if validation is not None:
        validation = (validation[0], np.asarray(validation[1], dtype=np.float64), validation[2])
    exponent = label_exponent(y, *([] if validation is None else [validation[1]]))
    if exponent:
        y = np.ldexp(y, exponent)
        if validation is not None:
            validation = (validation[0], np.ldexp(validation[1], exponent), validation[2])
    return y, validation, exponent


def select_pairs(
    codes: Optional[np.ndarray],
    counts: Sequence[int],
    coarse: Sequence[np.ndarray],
    missing: bool,
    y: Any,
    qid: Any,
    k: int,
    n_threads: int,
    validation: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]] = None,
    codes_at: Optional[Callable[[np.ndarray], np.ndarray]] = None,
    deadline: Optional[float] = None,
) -> Tuple[List[Tuple[int, int]], np.ndarray]:
    """The (at most) k pairs that reduce the squared residual on the queries they were not
    chosen on (see the module docstring), best first, and those held-out reductions.

    ``validation`` is a validation set's (bin codes, labels, query codes): the pairs are then
    put forward by all the training rows and judged on the validation queries alone (one
    round instead of the two halves), under the same rule. ``codes_at`` (with ``codes`` None)
    gives the base codes of the rows it is asked for, so that only the selection rows are
    binned (SVMMapCV's splits, whose rows are not copied). ``deadline``: a
    ``time.perf_counter()`` time (a search's time budget) after which the selection raises
    `SelectionCut`, checked between its steps and, through the core, between the pairs of
    each histogram scan, where most of its time goes."""
    codes, y, qid = _selected(codes, codes_at, y, qid)
    y, validation, exponent = _scaled_labels(y, validation)
    by_feature = np.ascontiguousarray(codes.T)
    # Only the feature-major copy is read from here on: the row-major codes go (6.4 MB at the
    # 50,000 selection rows of 136 features, at the peak of a 573k-document search).
    n_rows, d = codes.shape
    del codes
    usable = [f for f in range(d) if len(coarse[f]) > 0]
    extra = 1 if missing else 0
    sizes = np.array([len(coarse[f]) + 1 + extra for f in range(d)], dtype=np.int64)
    maps = [coarse_map(counts[f], coarse[f], missing) for f in range(d)]

    def coarse_of(feature_major: np.ndarray) -> np.ndarray:
        out = np.empty(feature_major.shape, dtype=np.uint8)
        for f in range(d):
            out[f] = maps[f][feature_major[f]]
        return out

    coarse_codes = coarse_of(by_feature)
    candidates = [(i, j) for a, i in enumerate(usable) for j in usable[a + 1 :]]
    what = f"{len(candidates)} candidate pairs of {d} features on {n_rows} rows"
    # The steps done, which a cut names.
    done: List[str] = []
    on_time(deadline, done, "the bin codes of its rows", what)
    # The rounds of choosing and judging: (the training rows that choose, the judged rows'
    # feature-major bin codes, coarse codes, labels, query ids and numbers among the judged
    # queries). Without a validation set each half chooses and the other half is judged.
    rounds: List[Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any, np.ndarray]] = []
    if validation is None:
        half = query_halves(qid, n_rows)
        if not candidates or k == 0 or np.unique(half).size < 2:
            # No pair, or too few queries to choose on some and judge on others.
            return [], np.zeros(0)
        _, query = np.unique(np.arange(n_rows) if qid is None else qid, return_inverse=True)
        for h in (0, 1):
            judge = half == h
            rounds.append(
                (
                    half != h,
                    by_feature[:, judge],
                    coarse_codes[:, judge],
                    y[judge],
                    None if qid is None else qid[judge],
                    query[judge],
                )
            )
    else:
        v_codes, v_y, v_qid = validation
        v_rows = selection_rows(v_qid, v_codes.shape[0])
        v_by_feature = np.ascontiguousarray(v_codes[v_rows].T)
        v_qid = np.asarray(v_qid)[v_rows]
        if not candidates or k == 0:
            return [], np.zeros(0)
        _, query = np.unique(v_qid, return_inverse=True)
        rounds.append(
            (
                np.ones(n_rows, dtype=bool),
                v_by_feature,
                coarse_of(v_by_feature),
                np.asarray(v_y, dtype=np.float64)[v_rows],
                v_qid,
                query,
            )
        )
    pairs = np.asarray(candidates, dtype=np.int64).reshape(-1, 2)
    shapes = [(int(sizes[i]), int(sizes[j])) for i, j in candidates]
    n_codes = [int(c) + 2 for c in counts]
    n_queries = int(query.max()) + 1
    # Per pair put forward and judged query: the reduction of the query's squared residual by
    # the correction chosen on other queries (each query is judged once).
    per_query: Dict[int, np.ndarray] = {}
    put_forward = np.zeros((len(rounds), len(candidates)), dtype=bool)
    for h, (chose, j_codes, j_coarse, j_y, j_qid, j_query) in enumerate(rounds):
        step = f"round {h + 1} of {len(rounds)}"
        if h:
            on_time(deadline, done, f"the pair scan of round {h} of {len(rounds)}", what)
        q_chose = None if qid is None else qid[chose]
        # The additive model is fitted on the choosing rows alone and taken off the judged
        # ones, so that nothing the judged queries hold has shaped the residual they are
        # judged on.
        r_chose, parts = main_effects(by_feature[:, chose], centred_labels(y[chose], q_chose), n_codes)
        r_judge = centred_labels(j_y, j_qid)
        for f in range(d):
            r_judge -= parts[f][j_codes[f]]
        on_time(deadline, done, f"the main effects of {step}", what)
        chose_codes = np.ascontiguousarray(coarse_codes[:, chose])
        left = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
        scanned = _core.pair_histograms(chose_codes, sizes, pairs, r_chose, n_threads, left)
        if scanned is None:
            raise SelectionCut(cut_message(what, [*done, f"part of the pair scan of {step}"]))
        sums, cnt = scanned
        scores, _ = interaction_scores(sums, cnt, shapes, float(np.mean(r_chose**2)))
        order = np.argsort(-scores, kind="stable")
        pool = order[scores[order] > 0][: pool_size(k)]
        put_forward[h, pool] = True
        chosen = (_blocks(sums, shapes), _blocks(cnt, shapes))
        for p in pool.tolist():
            per_query.setdefault(p, np.zeros(n_queries))
            per_query[p] += _held_out(chosen, p, candidates[p], shapes[p][1], j_coarse, r_judge, j_query, n_queries)
    kept, totals = _kept(per_query, put_forward, [np.unique(r[5]) for r in rounds], n_queries)
    order = np.argsort(-np.asarray(totals), kind="stable")[:k]
    # The reductions in the labels' units: exact, or inf beyond float64 (labels of 1e200).
    with np.errstate(over="ignore"):
        scores = np.ldexp(np.asarray(totals, dtype=np.float64)[order], -2 * exponent)
    return [candidates[kept[o]] for o in order], scores


def _held_out(
    chosen: Tuple[List[np.ndarray], List[np.ndarray]],
    p: int,
    pair: Tuple[int, int],
    width: int,
    j_coarse: np.ndarray,
    r_judge: np.ndarray,
    j_query: np.ndarray,
    n_queries: int,
) -> np.ndarray:
    """Step 4 of the module docstring for candidate ``p`` (features ``pair``, ``width`` coarse
    codes of the second): the reduction of every judged query's squared residual by the
    choosing rows' cell means (``chosen``: every candidate's sums and counts)."""
    i, j = pair
    # The correction is the choosing rows' cell means (0 in an empty cell); it changes a
    # judged document's squared residual r^2 to (r - g)^2, by 2 g r - g^2.
    sums, n_chose = chosen[0][p], chosen[1][p]
    g = np.where(n_chose > 0, sums / np.where(n_chose > 0, n_chose, 1.0), 0.0).ravel()
    cell = j_coarse[i].astype(np.int64) * width + j_coarse[j]
    gain = 2.0 * g[cell] * r_judge - g[cell] ** 2
    return np.bincount(j_query, weights=gain, minlength=n_queries)


def _kept(
    per_query: Dict[int, np.ndarray], put_forward: np.ndarray, judged: List[np.ndarray], n_queries: int
) -> Tuple[List[int], List[float]]:
    """Step 5 of the module docstring: the pairs (numbers among the candidates) that both
    rounds put forward and whose held-out reduction passes the rule, with their totals."""
    every = [p for p in per_query if put_forward[:, p].all()]
    kept, totals = [], []
    for p in every:
        g = per_query[p]
        by_round = [float(g[queries].sum()) for queries in judged]
        # A one-sided test over queries of the mean reduction: t = mean / (sd / sqrt(n)).
        spread = float(np.std(g, ddof=1)) if n_queries > 1 else 0.0
        t = float(np.mean(g)) / (spread / np.sqrt(n_queries)) if spread > 0 else 0.0
        if min(by_round) > 0 and t > HELD_OUT_T:
            kept.append(p)
            totals.append(float(g.sum()))
    return kept, totals
