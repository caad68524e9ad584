"""The latent losses on queries with many relevant documents and weak features (issue 34 item 2):
where the CCCP rounds of ``ndcg@10:latent`` go to w = 0, and what the rule that stops them
before such a round gives.

    python benchmarks/latent_collapse.py          # the table of docs/guide/losses.md

For each data set and C: the ``map`` model, ``ndcg@10:latent`` as shipped (the rounds stop
before a round that goes to w = 0 from a model that ranks), the same without that rule
(``_latent.LATENT_STOP_BEFORE_ZERO = False``, the rounds of commit dc8ba08), and the ramp
target prototype (the target is the current ranking itself instead of the best ranking of
NDCG@10 1: ``_latent.LATENT_TARGET_CUTOFF = 0``). Columns: fits, how many ended at
w = 0, how many stopped before w = 0 (shipped only), and the mean over the fits of the training
and test NDCG@10 (svmmap.metrics, gain 2^label - 1; a model w = 0 scores what tied scores
score, ranked pessimistically).

Data:
- weak: make_ranking(120, 150, 25, label_fractions=(0.67, 0.2, 0.13), size_spread=0,
  label_noise=2, informative_fraction=0.1), seeds 0-7, the first 60 queries to train and the
  other 60 to test (50 relevant of 150 documents per query, grades 0-2, weak features: the
  OHSUMED-like data on which the rounds collapsed);
- MQ2008 folds 1-5, train / test (about 4 relevant of 20 documents per query).
"""

from __future__ import annotations

import argparse
import warnings
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np
import tables  # benchmarks/tables.py, beside this script
from svmmap import SVMMap
from svmmap._fit import latent as _latent
from svmmap.datasets import RankingData, load_mq2008, make_ranking
from svmmap.metrics import per_query

Split = Tuple[np.ndarray, np.ndarray, np.ndarray]
CS = (0.1, 1.0, 10.0, 100.0, 1000.0)
VARIANTS = ("shipped", "without the rule", "ramp target")


def weak_many_relevant(n_queries: int, seed: int, dtype: Any = np.float64) -> RankingData:
    """Queries of 150 documents, 50 of them relevant (grades 0-2), with weak features: the
    OHSUMED-like data on which the CCCP rounds of ``ndcg@10:latent`` went from the map model to
    w = 0 (issue 34). The tests of that rule train on it too (tests/core/test_graded_latent.py,
    tests/api/test_degenerate_models.py)."""
    return make_ranking(
        n_queries,
        150,
        25,
        label_fractions=(0.67, 0.2, 0.13),
        size_spread=0.0,
        label_noise=2.0,
        informative_fraction=0.1,
        random_state=seed,
        dtype=dtype,
    )


def weak_sets() -> Iterator[Tuple[Split, Split]]:
    for seed in range(8):
        data = weak_many_relevant(120, seed)
        train = np.isin(data.qid, np.unique(data.qid)[:60])
        yield (
            (data.X[train], data.y[train], data.qid[train]),
            (data.X[~train], data.y[~train], data.qid[~train]),
        )


def mq2008_sets() -> Iterator[Tuple[Split, Split]]:
    for fold in range(1, 6):
        yield tuple(load_mq2008(fold=fold, split="train")), tuple(load_mq2008(fold=fold, split="test"))


DATA = {
    "make_ranking, 50 relevant of 150, weak features, seeds 0-7": weak_sets,
    "MQ2008, folds 1-5": mq2008_sets,
}


def ndcg(model: SVMMap, data: Split) -> float:
    return float(np.nanmean(per_query("ndcg@10", data[1], model.predict(data[0]), data[2]).values))


def fit_variant(variant: str, C: float, train: Split) -> Tuple[SVMMap, bool]:
    """The model and whether the rounds stopped before a round that went to w = 0."""
    try:
        _latent.LATENT_STOP_BEFORE_ZERO = variant != "without the rule"
        _latent.LATENT_TARGET_CUTOFF = 0 if variant == "ramp target" else None
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            model = SVMMap(C=C, loss="ndcg@10:latent", n_jobs=1).fit(train[0], train[1], qid=train[2])
    finally:
        _latent.LATENT_STOP_BEFORE_ZERO = True
        _latent.LATENT_TARGET_CUTOFF = None
    return model, any("went to w = 0" in str(w.message) for w in seen)


def run(sets) -> Dict[str, Dict[str, List[float]]]:
    out: Dict[str, Dict[str, List[float]]] = {
        name: {"zero": [], "stopped": [], "train": [], "test": []} for name in ("map", *VARIANTS)
    }
    for train, test in sets():
        for C in CS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = SVMMap(C=C, loss="map", n_jobs=1).fit(train[0], train[1], qid=train[2])
            out["map"]["zero"].append(not np.any(start.coef_))
            out["map"]["stopped"].append(False)
            out["map"]["train"].append(ndcg(start, train))
            out["map"]["test"].append(ndcg(start, test))
            for variant in VARIANTS:
                model, stopped = fit_variant(variant, C, train)
                out[variant]["zero"].append(not np.any(model.coef_))
                out[variant]["stopped"].append(stopped)
                out[variant]["train"].append(ndcg(model, train))
                out[variant]["test"].append(ndcg(model, test))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__)
    print(
        "| data | model | fits (C = 0.1 ... 1000) | end at w = 0 | stopped before w = 0 | train NDCG@10 | test NDCG@10 |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, sets in DATA.items():
        results = run(sets)
        first = name
        for model, r in results.items():
            label = "`map`" if model == "map" else f"`ndcg@10:latent`, {model}"
            stopped = "" if model in ("map", "without the rule") else str(int(np.sum(r["stopped"])))
            print(
                f"| {first} | {label} | {len(r['zero'])} | {int(np.sum(r['zero']))} | {stopped} | "
                f"{np.mean(r['train']):.4f} | {np.mean(r['test']):.4f} |",
                flush=True,
            )
            first = ""


if __name__ == "__main__":
    main()
