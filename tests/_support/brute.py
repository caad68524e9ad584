"""Brute-force references written from the papers' definitions, independent of svmmap's code."""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def permutations(n: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(n))), dtype=np.int64)


def ap_of_rankings(ranked_relevance: np.ndarray) -> np.ndarray:
    """AP of each row of a (rankings x n) 0/1 matrix listing relevance from the top."""
    hits = np.cumsum(ranked_relevance, axis=1)
    ranks = np.arange(1, ranked_relevance.shape[1] + 1)
    return (ranked_relevance * hits / ranks).sum(axis=1) / ranked_relevance.sum(axis=1)


def psi_po_gap(scores: np.ndarray, relevant: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """w.Psi_po(y) - w.Psi_po(y*) for every ranking y (rows of perms list documents from the top).

    Psi_po(y) = 1/(|P||N|) sum_{i rel, j non-rel} y_ij (x_i - x_j), y_ij = +1 when i is above j.
    """
    n = len(scores)
    rank = np.empty_like(perms)
    rank[np.arange(len(perms))[:, None], perms] = np.arange(n)[None, :]
    pos = np.flatnonzero(relevant)
    neg = np.flatnonzero(~relevant)
    above = rank[:, pos][:, :, None] < rank[:, neg][:, None, :]
    y = np.where(above, 1.0, -1.0)
    diff = scores[pos][:, None] - scores[neg][None, :]
    return ((y - 1.0) * diff[None]).sum(axis=(1, 2)) / (len(pos) * len(neg))


def map_hinge(scores: np.ndarray, relevant: np.ndarray) -> float:
    """max over all rankings of Delta_map + w.Psi(y) - w.Psi(y*)."""
    perms = permutations(len(scores))
    loss = 1.0 - ap_of_rankings(relevant[perms].astype(float))
    return float(np.max(loss + psi_po_gap(scores, relevant, perms)))


def map_constraints(X: np.ndarray, relevant: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every constraint of one query for Delta_map: (Delta(y), deltaPsi(y)) for all rankings y,
    with deltaPsi(y) = Psi(y*) - Psi(y), so that xi >= Delta(y) - w.deltaPsi(y)."""
    n = X.shape[0]
    perms = permutations(n)
    loss = 1.0 - ap_of_rankings(relevant[perms].astype(float))
    rank = np.empty_like(perms)
    rank[np.arange(len(perms))[:, None], perms] = np.arange(n)[None, :]
    pos = np.flatnonzero(relevant)
    neg = np.flatnonzero(~relevant)
    above = rank[:, pos][:, :, None] < rank[:, neg][:, None, :]
    y = np.where(above, 1.0, -1.0)
    pair_diff = X[pos][:, None, :] - X[neg][None, :, :]  # |P| x |N| x d
    psi = np.einsum("kij,ijd->kd", y, pair_diff) / (len(pos) * len(neg))
    psi_star = pair_diff.sum(axis=(0, 1)) / (len(pos) * len(neg))
    return loss, psi_star[None, :] - psi


# ---------------------------------------------------------------------------------------------
# Every loss and feature map of svmmap, by enumeration of all rankings (issue 3). Rankings are
# rows of `perms`, listing documents from the top; ranks are 0-based.


def ranks_of(perms: np.ndarray) -> np.ndarray:
    """rank[k, i] = 0-based rank of document i in ranking k."""
    n = perms.shape[1]
    rank = np.empty_like(perms)
    rank[np.arange(len(perms))[:, None], perms] = np.arange(n)[None, :]
    return rank


def log2_discount(r: np.ndarray) -> np.ndarray:
    """1/log2(1 + rank) with 1-based ranks, i.e. 1/log2(2 + r) for 0-based r."""
    return 1.0 / np.log2(r + 2.0)


def paper_discount(r: np.ndarray) -> np.ndarray:
    """Chakrabarti et al.'s D(i): 1 for 0-based i <= 1, 1/log2(1 + i) after."""
    r = np.asarray(r, dtype=float)
    return np.where(r <= 1, 1.0, 1.0 / np.log2(np.maximum(r, 1.0) + 1.0))


def parse_loss(name: str) -> tuple[str, int | None, list[str]]:
    head, *options = name.split(":")
    base, _, k = head.partition("@")
    return base, (int(k) if k else None), options


def loss_of_rankings(name: str, relevant: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """Delta(y*, y) of every ranking for the loss `name` (binary relevance)."""
    base, k, options = parse_loss(name)
    ranked = relevant[perms].astype(float)  # rankings x positions
    n = perms.shape[1]
    p = int(relevant.sum())
    positions = np.arange(n)
    if base.startswith("map"):
        return 1.0 - ap_of_rankings(ranked)
    if base == "roc":
        # For each relevant document, the non-relevant ones above it.
        neg_above = np.cumsum(1.0 - ranked, axis=1)
        return (ranked * neg_above).sum(axis=1) / (p * (n - p))
    if base in ("ndcg", "dorm"):
        d = paper_discount(positions) if "paper" in options else log2_discount(positions)
        if k is not None:
            d = np.where(positions < k, d, 0.0)
        ideal = d[: min(p, n)].sum()
        return 1.0 - (ranked * d[None, :]).sum(axis=1) / ideal
    if base == "mrr":
        first = np.argmax(ranked > 0, axis=1)
        rr = 1.0 / (1.0 + first)
        if k is not None:
            rr = np.where(first < k, rr, 0.0)
        return 1.0 - rr
    raise ValueError(name)


def phi_mrr_gap(scores: np.ndarray, relevant: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """w.phi_mrr(y) - w.phi_mrr(y*): the sum of s_b - s_g0 over the non-relevant b ranked above
    the first relevant document g0 (phi_mrr(y*) = 0; Chakrabarti et al. eq. 5)."""
    ranked = relevant[perms]
    first = np.argmax(ranked, axis=1)
    g0 = perms[np.arange(len(perms)), first]
    above = np.arange(perms.shape[1])[None, :] < first[:, None]
    return (np.where(above, scores[perms] - scores[g0][:, None], 0.0)).sum(axis=1)


def dorm_decay(n: int, depth: int | None) -> np.ndarray:
    """Le & Smola's A(r) = 1/sqrt(1 + r), 0 from rank `depth` on."""
    a = 1.0 / np.sqrt(1.0 + np.arange(n))
    if depth is not None:
        a[depth:] = 0.0
    return a


def dorm_gap(name: str, scores: np.ndarray, relevant: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """w.phi_dorm(y) - w.phi_dorm(y*), y* the best ranking with every relevant document first."""
    _, _, options = parse_loss(name)
    depth = next((int(o.split("=")[1]) for o in options if o.startswith("depth=")), None)
    a = dorm_decay(perms.shape[1], depth)
    value = (a[None, :] * scores[perms]).sum(axis=1)
    p = int(relevant.sum())
    consistent = relevant[perms[:, :p]].all(axis=1)
    return value - value[consistent].max()


def feature_gap(name: str, scores: np.ndarray, relevant: np.ndarray, perms: np.ndarray) -> np.ndarray:
    base, _, _ = parse_loss(name)
    if base == "mrr":
        return phi_mrr_gap(scores, relevant, perms)
    if base == "dorm":
        return dorm_gap(name, scores, relevant, perms)
    return psi_po_gap(scores, relevant, perms)


def hinge(name: str, scores: np.ndarray, relevant: np.ndarray) -> float:
    """max over all rankings of Delta + w.Psi(y) - w.Psi(y*) for one query and one loss;
    "max(a,b)" is the largest of the components (shared slack)."""
    if name.startswith("max("):
        return max(hinge(part, scores, relevant) for part in name[4:-1].split(","))
    if parse_loss(name)[0] in ("acc", "acc2"):
        return acc_hinge(name, scores, relevant)
    perms = permutations(len(scores))
    return float(np.max(loss_of_rankings(name, relevant, perms) + feature_gap(name, scores, relevant, perms)))


def acc_hinge(name: str, scores: np.ndarray, relevant: np.ndarray) -> float:
    """max over all labelings y' of Delta + w.Psi(y') - w.Psi(y) with Delta = 1/m sum cost
    [y'_i != y_i] and Psi = 1/(2m) sum cost_i y'_i x_i (Joachims 2005 with a per-document loss)."""
    m = len(scores)
    y = np.where(relevant, 1.0, -1.0)
    cost = np.ones(m)
    if name == "acc2":
        cost[relevant] = (~relevant).sum() / relevant.sum()
    flips = np.array(list(itertools.product([1.0, -1.0], repeat=m)))  # y'_i = flip_i * y_i
    y_new = flips * y[None, :]
    delta = ((y_new != y[None, :]) * cost[None, :]).sum(axis=1)
    psi_gap = (cost[None, :] * (y_new - y[None, :]) * scores[None, :]).sum(axis=1) / 2.0
    return float(np.max(delta + psi_gap) / m)


def constraints(name: str, X: np.ndarray, relevant: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every constraint of one query: (Delta(y), deltaPsi(y)) for all rankings y, with
    deltaPsi = Psi(y*) - Psi(y), for losses with Psi_po (map, roc, ndcg) or phi_mrr (mrr)."""
    n = X.shape[0]
    perms = permutations(n)
    loss = loss_of_rankings(name, relevant, perms)
    if parse_loss(name)[0] == "mrr":
        ranked = relevant[perms]
        first = np.argmax(ranked, axis=1)
        g0 = perms[np.arange(len(perms)), first]
        above = (np.arange(n)[None, :] < first[:, None]).astype(float)
        # phi_mrr(y) = sum_{b above g0} x_b - (#above) x_g0; deltaPsi = -phi_mrr(y).
        phi = np.einsum("kr,krd->kd", above, X[perms]) - above.sum(axis=1)[:, None] * X[g0]
        return loss, -phi
    rank = ranks_of(perms)
    pos = np.flatnonzero(relevant)
    neg = np.flatnonzero(~relevant)
    y = np.where(rank[:, pos][:, :, None] < rank[:, neg][:, None, :], 1.0, -1.0)
    pair_diff = X[pos][:, None, :] - X[neg][None, :, :]
    psi = np.einsum("kij,ijd->kd", y, pair_diff) / (len(pos) * len(neg))
    psi_star = pair_diff.sum(axis=(0, 1)) / (len(pos) * len(neg))
    return loss, psi_star[None, :] - psi


# ---------------------------------------------------------------------------------------------
# The graded pairwise loss (SVM^rank; Joachims, KDD 2006): pairs of documents with different
# labels, and every subset of them as a possible set of swapped pairs.


def pairwise_hinge(scores: np.ndarray, labels: np.ndarray, count: bool = False) -> float:
    """max over subsets c of the pairs {(i, j): l_i > l_j} of sum_{c_ij = 1} [u - k (s_i - s_j)],
    by enumeration: u = 1/M, k = 2/M ("pairwise", M pairs) or u = k = 1 ("pairwise:count")."""
    pairs = [(i, j) for i in range(len(labels)) for j in range(len(labels)) if labels[i] > labels[j]]
    m = len(pairs)
    if m == 0:
        return 0.0
    u, k = (1.0, 1.0) if count else (1.0 / m, 2.0 / m)
    terms = np.array([u - k * (scores[i] - scores[j]) for i, j in pairs])
    subsets = np.array(list(itertools.product([0.0, 1.0], repeat=m)))
    return float(np.max(subsets @ terms))
