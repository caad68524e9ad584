"""Fingerprints of trained models, to check that a refactoring leaves every model bit-identical.

Trains SVMMap on MQ2008 (fold 1, train split) for every loss and a few C values, plus the
baselines, a binned pipeline and a fusion model, and prints one line per model: the SHA-256 of
coef_ (the exact float64 bytes), the iteration count and the primal objective's bits. Run it
on two builds and diff the output:

    python benchmarks/model_fingerprints.py > before.txt     # on the old build
    python benchmarks/model_fingerprints.py > after.txt      # on the new build
    diff before.txt after.txt                                # no output: bit-identical
"""

from __future__ import annotations

import hashlib
import struct
import warnings

import numpy as np
import svmmap
from svmmap.datasets import load_mq2008

LOSSES = [
    "map",
    "map-greedy",
    "map-fast",
    "roc",
    "ndcg",
    "ndcg@10",
    "ndcg@10:paper",
    "ndcg@10:latent",
    "mrr",
    "mrr@10",
    "acc",
    "acc2",
    "dorm@10:depth=10",
    "pairwise",
]
COMBOS = [(["map", "ndcg@10", "mrr@10"], "separate"), (["map", "ndcg@10", "mrr@10"], "shared")]


def digest(coef: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(coef, dtype=np.float64).tobytes()).hexdigest()[:16]


def line(name: str, model) -> str:
    objective = getattr(model, "objective_", float("nan"))
    bits = struct.pack("<d", float(objective)).hex()
    return f"{name:40s} coef {digest(model.coef_)}  n_iter {getattr(model, 'n_iter_', '-')}  objective {bits}"


def main() -> None:
    warnings.simplefilter("ignore")
    X, y, qid = load_mq2008(fold=1, split="train")
    for loss in LOSSES:
        for C in (0.1, 10.0):
            print(line(f"{loss} C={C}", svmmap.SVMMap(C=C, loss=loss).fit(X, y, qid=qid)))
    for losses, slack in COMBOS:
        model = svmmap.SVMMap(C=1.0, loss=losses, slack=slack).fit(X, y, qid=qid)
        print(line(f"{'+'.join(losses)} {slack}", model))
    model = svmmap.SVMMap(C=1.0).fit(X.astype(np.float32), y, qid=qid)
    print(line("map float32", model))
    from scipy import sparse

    print(line("map csr", svmmap.SVMMap(C=1.0).fit(sparse.csr_matrix(X), y, qid=qid)))
    binner = svmmap.Binner(n_thresholds=10).fit(X)
    print(line("binned map", svmmap.SVMMap(C=1.0).fit(binner.transform(X), y, qid=qid)))
    from svmmap import baselines

    print(line("SVMAcc", baselines.SVMAcc(C=1.0).fit(X, y, qid=qid)))
    print(line("SVMAcc2", baselines.SVMAcc2(C=1.0).fit(X, y, qid=qid)))


if __name__ == "__main__":
    main()
