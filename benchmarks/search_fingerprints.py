"""Fingerprints of SVMMapCV's searches, to check that a change to the search leaves every
choice, every split score and every refitted model bit-identical.

Runs the C search alone (warm, cold, with confirmation, with a validation set, a latent loss)
and the search over loss x preprocessing x C (with patience, with a time budget that admits no
more than the first candidate) on MQ2008 fold 1, and prints one line per search: the chosen
parameters, a SHA-256 of every split score, iteration and oracle-pass count and status in
cv_results_ (the times are left out: they differ on every run), and of the refitted coef_.
Run it on two builds and diff the output, as benchmarks/model_fingerprints.py:

    python benchmarks/search_fingerprints.py > before.txt     # on the old build
    python benchmarks/search_fingerprints.py > after.txt      # on the new build
    diff before.txt after.txt                                 # no output: bit-identical
"""

from __future__ import annotations

import hashlib
import warnings
from typing import Any, Dict

import numpy as np
from svmmap import SVMMapCV
from svmmap.datasets import load_mq2008

#: The cv_results_ keys that describe the fits and the choice (times differ on every run, and
#: the keys that only report, such as stop reasons, are left out so that a new one does not
#: change the fingerprint).
KEYS = (
    "param_C",
    "mean_test_score",
    "std_test_score",
    "rank_test_score",
    "mean_n_iter",
    "mean_n_evals",
    "n_degenerate_splits",
)


def digest_results(results: Dict[str, Any]) -> str:
    h = hashlib.sha256()
    splits = sorted(key for key in results if key.startswith("split") and key.endswith("_test_score"))
    for key in (*KEYS, *splits):
        value = results[key]
        h.update(key.encode())
        if isinstance(value, np.ndarray) and value.dtype != object:
            h.update(np.ascontiguousarray(value).tobytes())
        else:
            h.update(repr(list(value)).encode())
    return h.hexdigest()[:16]


def line(name: str, search: SVMMapCV) -> str:
    coef = hashlib.sha256(np.ascontiguousarray(search.coef_, dtype=np.float64).tobytes()).hexdigest()[:16]
    params = ", ".join(f"{k}={v}" for k, v in sorted(search.best_params_.items()))
    return f"{name:28s} best {params:55s} results {digest_results(search.cv_results_)}  coef {coef}"


def main() -> None:
    warnings.simplefilter("ignore")
    X, y, qid = load_mq2008(fold=1, split="train")
    Xv, yv, qv = load_mq2008(fold=1, split="vali")
    # The first 300 queries keep the searches over many candidates to seconds.
    keep = qid <= np.unique(qid)[299]
    Xs, ys, qs = X[keep], y[keep], qid[keep]
    runs = {
        "C warm": (SVMMapCV(cv=3), (X, y, qid), {}),
        "C cold": (SVMMapCV(cv=3, warm_start=False), (X, y, qid), {}),
        "C confirm": (SVMMapCV(cv=3, confirm_tolerance=0.02), (X, y, qid), {}),
        "C ndcg@10 tolerance": (SVMMapCV(cv=3, loss="ndcg@10", score_tolerance=0.005), (X, y, qid), {}),
        "C validation": (
            SVMMapCV(cv="validation", scoring="ndcg@10"),
            (X, y, qid),
            {"eval_set": [(Xv, yv)], "eval_qid": [qv]},
        ),
        "C latent": (SVMMapCV(Cs=[0.1, 1.0], cv=3, loss="ndcg@10:latent"), (Xs, ys, qs), {}),
        "auto": (SVMMapCV(loss="auto", preprocessing="auto", cv=3, scoring="ndcg@10"), (Xs, ys, qs), {}),
        "auto patience 2": (
            SVMMapCV(loss="auto", preprocessing=["none", "binned"], cv=3, patience=2),
            (Xs, ys, qs),
            {},
        ),
        "standard map": (SVMMapCV(preprocessing="standard", cv=3), (Xs, ys, qs), {}),
        "auto validation": (
            SVMMapCV(loss="auto", cv="validation", losses=["map", "pairwise"]),
            (Xs, ys, qs),
            {"eval_set": [(Xv, yv)], "eval_qid": [qv]},
        ),
    }
    for name, (search, (Xa, ya, qa), extra) in runs.items():
        print(line(name, search.fit(Xa, ya, qid=qa, **extra)))


if __name__ == "__main__":
    main()
