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
