"""Pairwise interactions of binned features (GA2M): the coarse bins of a pair, the pair codes,
and the choice of pairs by FAST (Lou, Caruana, Gehrke and Hooker, KDD 2013).

A pair (i, j) is a grid of cells on coarse bins of features i and j. The coarse thresholds of a
feature are a subset of its Binner thresholds (every few of them, see `coarse_indices`), so a
document's coarse code follows from its bin code by a table look-up and the pair's code is
``ci * (b + 1) + cj`` for a and b coarse thresholds; a document missing either feature has the
code ``(a + 1) * (b + 1)``, which sets no column and scores 0 (see ``rust/data/binned.rs``).
The model stays a sum of per-feature step functions and per-pair step surfaces.

FAST, as implemented here for ranking:

1. The main-effects residual: the labels centred per query (only the order within a query
   matters to a ranking), minus an additive model of the base features fitted to them by
   least-squares backfitting on the Binner's bins (a few sweeps of per-bin means).
2. For every candidate pair, the best piecewise-constant correction of the residual on the
   pair's coarse grid (the cell means), from the 2-D histograms of the residual's sums and the
   counts (one pass over the documents per pair, in the core: ``rust/binning/pairs.rs``).
3. A pair's score is the interaction part of the reduction of the squared residual (the cell
   means' reduction minus what the coarse bins of i alone and of j alone reduce, as the
   interaction sum of squares of a two-way table), less the reduction that noise would give
   to its degrees of freedom (the residual's variance times (cells - rows - columns + 1)).
   The pairs of the highest scores are kept, at most k, and only those whose score clears the
   bar that the largest chance score of all P candidates stays below with probability 95%:
   a chance reduction is about the variance times a chi-square of df degrees of freedom, and
   the chi-square bound of Laurent and Massart (2000, Lemma 1), chi2_df <= df + 2 sqrt(df t) +
   2 t but with probability e^-t, with t = ln P + ln 20 for all P at once, gives the bar
   variance * (2 sqrt(df t) + 2 t) above the df already subtracted. On MQ2008 no pair clears
   it (the best scores are about a third of it), on planted interactions every planted pair
   does (scores 25 to 120 times it) and no other (``benchmarks/interactions.py``).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

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
#: Documents that pair selection reads at most (whole queries, drawn with a fixed seed), which
#: bounds its cost on large data; below it every document is used. 50,000 documents put about
#: 600 in a cell of the 9 x 9 selection grid; on 100,000 documents x 136 features, reading all
#: of them made the selection 1.9 times the per-feature fit (benchmarks/interactions.py --cost).
SELECTION_ROWS = 50_000


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
    try:
        pairs = [tuple(int(v) for v in p) for p in interactions]
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


def main_effects_residual(codes: np.ndarray, y: np.ndarray, qid: Optional[np.ndarray]) -> np.ndarray:
    """Labels centred per query minus their least-squares additive fit on the bin codes
    (``codes`` feature-major, shape (n_features, n_rows)).

    A backfitting step of feature f replaces its part by the bin means of the residual plus its
    part, which moves the part of bin c by the mean residual of bin c: the residual drops by
    that mean in every row of the bin, and the parts themselves need not be kept."""
    r = np.asarray(y, dtype=np.float64).copy()
    if qid is None:
        r -= r.mean()
    else:
        _, q = np.unique(qid, return_inverse=True)
        r -= (np.bincount(q, weights=r) / np.bincount(q))[q]
    sizes = [np.maximum(np.bincount(c), 1) for c in codes]
    for _ in range(BACKFIT_SWEEPS):
        for c, size in zip(codes, sizes):
            r -= (np.bincount(c, weights=r, minlength=size.shape[0]) / size)[c]
    return r


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
        which = np.flatnonzero([s == shape for s in shapes])
        cells = starts[which][:, None] + np.arange(u * v)[None, :]
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
        out[which] = (grid - rows - cols + total) - variance * df
        bars[which] = variance * (2 * np.sqrt(df * t) + 2 * t)
    return out, bars


def select_pairs(
    codes: np.ndarray,
    counts: Sequence[int],
    coarse: Sequence[np.ndarray],
    missing: bool,
    y: Any,
    qid: Any,
    k: int,
    n_threads: int,
) -> Tuple[List[Tuple[int, int]], np.ndarray]:
    """The (at most) k pairs of the highest FAST scores that clear their bar (ties: the earlier
    pair), and their scores."""
    rows = selection_rows(qid, codes.shape[0])
    codes = codes[rows]
    y = np.asarray(y, dtype=np.float64)[rows]
    qid = None if qid is None else np.asarray(qid)[rows]
    by_feature = np.ascontiguousarray(codes.T)
    residual = main_effects_residual(by_feature, y, qid)
    d = codes.shape[1]
    usable = [f for f in range(d) if len(coarse[f]) > 0]
    extra = 1 if missing else 0
    sizes = np.array([len(coarse[f]) + 1 + extra for f in range(d)], dtype=np.int64)
    coarse_codes = np.empty((d, codes.shape[0]), dtype=np.uint8)
    for f in range(d):
        coarse_codes[f] = coarse_map(counts[f], coarse[f], missing)[by_feature[f]]
    candidates = [(i, j) for a, i in enumerate(usable) for j in usable[a + 1 :]]
    if not candidates:
        return [], np.zeros(0)
    pairs = np.asarray(candidates, dtype=np.int64).reshape(-1, 2)
    sums, cnt = _core.pair_histograms(coarse_codes, sizes, pairs, residual, n_threads)
    shapes = [(int(sizes[i]), int(sizes[j])) for i, j in candidates]
    scores, bars = interaction_scores(sums, cnt, shapes, float(np.mean(residual**2)))
    order = np.argsort(-scores, kind="stable")
    order = order[scores[order] > bars[order]][:k]
    return [candidates[p] for p in order], scores[order]
