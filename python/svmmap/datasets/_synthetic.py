"""Synthetic query-grouped ranking data shaped like the large LETOR sets (MSLR-WEB10K/30K)."""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence

import numpy as np

from .._validation import check_memory, invalid_parameter

#: Label fractions of MSLR-WEB30K's 3,771,125 documents (labels 0, 1, 2, 3, 4): about half are
#: not relevant, a third marginally relevant and very few perfect.
MSLR_LABEL_FRACTIONS = (0.514, 0.325, 0.134, 0.019, 0.008)

#: Rows generated at a time; bounds the float32 temporaries to a few tens of MB whatever the size.
_BLOCK_ROWS = 1 << 15


class RankingData(NamedTuple):
    X: np.ndarray
    y: np.ndarray
    qid: np.ndarray


def _query_sizes(rng: np.random.Generator, n_queries: int, mean: float, spread: float, min_size: int) -> np.ndarray:
    if spread == 0:
        return np.full(n_queries, max(int(round(mean)), min_size), dtype=np.int64)
    # Log-normal sizes with the requested mean: MSLR's queries range from a handful of documents
    # to over a thousand around a mean of about 120, with a long right tail.
    mu = np.log(mean) - spread**2 / 2
    sizes = np.rint(rng.lognormal(mu, spread, size=n_queries)).astype(np.int64)
    return np.maximum(sizes, min_size)


def _label_fractions(label_fractions: Sequence[float]) -> np.ndarray:
    """``make_ranking``'s label fractions, checked: two or more numbers >= 0 that add up to 1."""
    fractions = np.asarray(label_fractions, dtype=np.float64)
    if (
        fractions.ndim != 1
        or fractions.size < 2
        or np.any(fractions < 0)
        or not np.isfinite(fractions).all()
        or fractions.sum() <= 0
    ):
        raise ValueError(f"label_fractions must be at least two non-negative numbers, got {label_fractions!r}")
    if abs(fractions.sum() - 1.0) > 1e-6:
        # Fractions that do not add up to 1 ([0.5, 0.6]) are most likely a typo in one of them;
        # normalizing them silently would generate other proportions than those written.
        raise ValueError(
            f"label_fractions must add up to 1 (the fraction of documents with each label), got {label_fractions!r}, "
            f"which adds up to {fractions.sum():g}"
        )
    fractions = fractions / fractions.sum()
    return fractions


def make_ranking(
    n_queries: int = 100,
    docs_per_query: float = 120,
    n_features: int = 136,
    *,
    label_fractions: Sequence[float] = MSLR_LABEL_FRACTIONS,
    size_spread: float = 0.6,
    min_docs: int = 2,
    informative_fraction: float = 0.3,
    query_effect: float = 0.7,
    label_noise: float = 1.0,
    dtype: Any = np.float32,
    shuffle: bool = False,
    random_state: Optional[Any] = None,
    interactions: Any = None,
) -> RankingData:
    """Random documents grouped by query, with graded labels and features that carry signal.

    Every document has a hidden utility ``u = a_q + e``: a per-query offset ``a_q`` (some
    queries have many good documents, some none) plus a per-document part. Labels cut ``u`` at
    global quantiles, so their overall distribution is ``label_fractions`` (MSLR-WEB30K's by
    default) while it varies from query to query, including queries without any relevant
    document, as in real data. A fraction ``informative_fraction`` of the features is
    ``strength * (u + h)`` plus noise, where ``h`` (``label_noise``) is shared by all features; every feature also has a per-query shift (as BM25 or query
    length have), and features come in three shapes seen in LETOR sets: Gaussian, positive and
    heavy-tailed (``exp``, like term counts and BM25), and non-negative with many zeros.

    Parameters
    ----------
    n_queries : int
        Number of queries.
    docs_per_query : float
        Mean number of documents per query (MSLR-WEB30K: about 120).
    n_features : int
        Number of features (MSLR: 136).
    label_fractions : sequence of float
        Fraction of documents with label 0, 1, 2, ...; they must add up to 1 (up to 1e-6,
        the rounding of written decimals).
    size_spread : float
        Standard deviation of the log of the query sizes; 0 gives every query
        ``docs_per_query`` documents.
    min_docs : int
        Smallest query size.
    informative_fraction : float
        Fraction of the features that depend on the utility (at least one feature does).
    query_effect : float
        Standard deviation of the per-query offset of the utility.
    label_noise : float
        Standard deviation of a part of the utility that no feature sees (the judges'
        disagreement with any ranker): it bounds the attainable MAP, as in real data, where
        linear rankers reach a MAP near 0.6 to 0.7 rather than 1.
    dtype : float32 or float64
        dtype of ``X`` (float32, as the large LETOR sets are usually held, by default).
    shuffle : bool
        Shuffle the rows, so that a query's documents are not adjacent.
    random_state : int, numpy Generator or None
        Seed; the same seed gives the same data.
    interactions : None, int or list of (int, int, float)
        Planted pairwise interactions: a list of ``(i, j, strength)`` adds
        ``strength * X[:, i] * X[:, j]`` to the utility behind the labels, where features i and
        j are then standard normal noise of their own (no per-query shift, no main effect:
        no other feature sees this part of the utility), so that only a model of the pair
        can use it. An int k plants the pairs (0, 1), (2, 3), ... (2k - 2, 2k - 1) with
        strength 1. None (the default) plants none and leaves the data as without it.

    Returns
    -------
    X : ndarray of shape (n_documents, n_features), C-ordered
    y : ndarray of shape (n_documents,), float64 labels 0 .. len(label_fractions) - 1
    qid : ndarray of shape (n_documents,), int64 query ids 0 .. n_queries - 1, sorted unless
        ``shuffle``

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=50, docs_per_query=40, n_features=10, random_state=0)
    >>> X.dtype, X.shape[1], len(set(qid)), np.unique(y).tolist()
    (dtype('float32'), 10, 50, [0.0, 1.0, 2.0, 3.0, 4.0])
    >>> from svmmap import SVMMap
    >>> model = SVMMap(C=1.0).fit(X, y, qid=qid)
    >>> 0.5 < model.score(X, y, qid=qid) < 0.95
    True
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    for name, value, low in (("n_queries", n_queries, 1), ("n_features", n_features, 1), ("min_docs", min_docs, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if not (np.isfinite(docs_per_query) and docs_per_query >= 1):
        raise ValueError(f"docs_per_query must be a number >= 1, got {docs_per_query!r}")
    if not (np.isfinite(size_spread) and size_spread >= 0):
        raise ValueError(f"size_spread must be a number >= 0, got {size_spread!r}")
    if not (0 <= informative_fraction <= 1):
        raise ValueError(f"informative_fraction must be in [0, 1], got {informative_fraction!r}")
    for name, number in (("query_effect", query_effect), ("label_noise", label_noise)):
        if not (np.isfinite(number) and number >= 0):
            raise ValueError(f"{name} must be a number >= 0, got {number!r}")
    fractions = _label_fractions(label_fractions)
    planted = _planted_pairs(interactions, int(n_features))

    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError):
        # NumPy's words ("SeedSequence expects int or sequence of ints") named no argument.
        raise invalid_parameter("random_state", "an integer >= 0, a numpy Generator or None", random_state) from None
    sizes = _query_sizes(rng, int(n_queries), float(docs_per_query), float(size_spread), int(min_docs))
    n = int(sizes.sum())
    # The core's memory guard before the first array of n_features values: X (n x d), the
    # per-query shifts (n_queries x d, float32), a block of float32 temporaries and a few
    # float32 / int64 values per feature. NumPy's bare "Unable to allocate 3.64 TiB" named
    # no argument.
    d = int(n_features)
    check_memory(
        float(n) * d * dtype.itemsize + float(n_queries) * d * 4 + float(min(n, _BLOCK_ROWS)) * d * 8 + 40.0 * d,
        f"make_ranking's X of {n} documents x n_features={d} ({dtype.name})",
        "lower n_features, n_queries or docs_per_query",
    )
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    pair_features = sorted({f for i, j, _ in planted for f in (i, j)})
    # Drawn only with planted pairs, so that data without them is as it always was.
    own = rng.standard_normal((n, len(pair_features)), dtype=np.float32) if planted else None

    # Hidden utility, labels at its global quantiles, and the part of it the features see.
    utility = (rng.normal(0.0, query_effect, size=n_queries)[qid] + rng.standard_normal(n)).astype(np.float32)
    labelled = utility
    if own is not None:
        col = {f: c for c, f in enumerate(pair_features)}
        labelled = utility.copy()
        for i, j, strength in planted:
            labelled += np.float32(strength) * own[:, col[i]] * own[:, col[j]]
    cuts = np.quantile(labelled, np.cumsum(fractions)[:-1])
    y = np.searchsorted(cuts, labelled, side="right").astype(np.float64)
    seen = utility + np.float32(label_noise) * rng.standard_normal(n, dtype=np.float32)

    # Per feature: signal strength (0 for the uninformative ones), per-query shift scale, noise
    # scale and shape (0 Gaussian, 1 exp, 2 non-negative with zeros).
    n_informative = max(1, int(round(informative_fraction * d)))
    strength = np.zeros(d, dtype=np.float32)
    informative = rng.choice(d, size=n_informative, replace=False)
    strength[informative] = rng.uniform(0.3, 1.2, size=n_informative) * rng.choice(
        [-1.0, 1.0], size=n_informative, p=[0.2, 0.8]
    )
    shift_scale = rng.uniform(0.0, 1.0, size=d).astype(np.float32)
    noise_scale = rng.uniform(0.5, 1.5, size=d).astype(np.float32)
    shape = rng.integers(0, 3, size=d)
    query_shift = rng.standard_normal((n_queries, d), dtype=np.float32) * shift_scale

    X = np.empty((n, d), dtype=dtype)
    heavy, sparse = shape == 1, shape == 2
    for lo in range(0, n, _BLOCK_ROWS):
        hi = min(n, lo + _BLOCK_ROWS)
        block = rng.standard_normal((hi - lo, d), dtype=np.float32)
        block *= noise_scale
        block += seen[lo:hi, None] * strength
        block += query_shift[qid[lo:hi]]
        if heavy.any():
            # exp(z / 2): positive, right-skewed, a few large values.
            block[:, heavy] = np.exp(0.5 * block[:, heavy])
        if sparse.any():
            block[:, sparse] = np.maximum(block[:, sparse] - 0.5, 0.0)
        if own is not None:
            block[:, pair_features] = own[lo:hi]
        X[lo:hi] = block
    if shuffle:
        perm = rng.permutation(n)
        X, y, qid = X[perm], y[perm], qid[perm]
    return RankingData(X, y, qid)


def _planted_pairs(interactions: Any, d: int) -> list:
    """``make_ranking``'s interactions as (i, j, strength) triples, checked."""
    if interactions is None:
        return []
    if isinstance(interactions, (int, np.integer)) and not isinstance(interactions, bool):
        if interactions < 0 or 2 * interactions > d:
            raise ValueError(f"interactions={interactions} needs 2 * interactions <= n_features ({d}) and >= 0")
        return [(2 * p, 2 * p + 1, 1.0) for p in range(int(interactions))]
    out = []
    for item in interactions:
        try:
            i, j, strength = item
            i, j, strength = int(i), int(j), float(strength)
        except (TypeError, ValueError):
            raise ValueError(f"interactions must list (i, j, strength) triples, got {item!r}") from None
        if i == j or not (0 <= i < d and 0 <= j < d) or not np.isfinite(strength):
            raise ValueError(f"interaction {item!r} must name two different features below {d} and a finite strength")
        out.append((i, j, strength))
    return out
