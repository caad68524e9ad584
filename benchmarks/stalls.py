"""Fits that cannot converge stop as stalled, and fits that can are left alone (issue 34 item 4).

    python benchmarks/stalls.py                 # both tables
    python benchmarks/stalls.py --only raw      # the raw-scale table
    python benchmarks/stalls.py --only converging

raw          make_ranking(200, 60, 30, random_state=0) with column j multiplied by
             10 ** uniform(-2, 8) (numpy.random.default_rng(0), 30 factors: ten orders of
             magnitude between columns), float64. Every loss below at every C of SVMMapCV's
             default grid with the default n_iter_no_change: why it stopped, its iterations,
             its seconds, its gap over its tolerance, and whether the ConvergenceWarning named
             the features' scales and (pairwise:count) the number of pairs as the cause. The
             limit the issue sets is 30 s per fit.
converging   The fits the stall rule must not touch: MQ2008 Fold 1 train as shipped, with its
             columns rescaled by 10 ** uniform(-2, 3) (default_rng(0)) and binned (Binner(20)),
             and make_ranking(300, 60, 30, random_state=1); seven losses and combinations;
             C = 0.01 ... 10^4. Counts, per data set, the fits that converged and those stopped
             otherwise (none may be "stalled").
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import tables  # benchmarks/tables.py, beside this script
from svmmap import Binner, SVMMap
from svmmap.datasets import load_mq2008, make_ranking
from svmmap.model_selection import DEFAULT_CS

RAW_LOSSES = [
    "map",
    "roc",
    "ndcg",
    "ndcg@10",
    "ndcg@10:latent",
    "ndcg@10:graded",
    "mrr@10",
    "pairwise",
    "pairwise:count",
    ("map", "ndcg@10", "mrr@10"),
]
CONVERGING_LOSSES = ["map", "ndcg@10", "mrr@10", "roc", "pairwise", "ndcg", ("map", "ndcg@10", "mrr@10")]


def label(loss) -> str:
    return loss if isinstance(loss, str) else "+".join(loss)


def fit(X, y, qid, **params):
    """One fit; (model, seconds, the ConvergenceWarning's text or "")."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SVMMap(**params).fit(X, y, qid=qid)
    seconds = time.perf_counter() - start
    text = " ".join(str(w.message) for w in caught if type(w.message).__name__ == "ConvergenceWarning")
    return model, seconds, text


def raw_data():
    data = make_ranking(200, 60, 30, random_state=0)
    factors = 10 ** np.random.default_rng(0).uniform(-2, 8, 30)
    return data.X.astype(np.float64) * factors, data.y, data.qid


def raw_table() -> None:
    X, y, qid = raw_data()
    print("| loss | C | stop | iterations | gap / tolerance | cause named | fit s (timing) |")
    print("|---|---:|---|---:|---:|---|---:|")
    for loss in RAW_LOSSES:
        for C in DEFAULT_CS:
            params = {"loss": list(loss) if not isinstance(loss, str) else loss, "C": C}
            model, seconds, text = fit(X, y, qid, **params)
            named = []
            if "orders of magnitude" in text:
                named.append("scales")
            if "counts misordered pairs" in text:
                named.append("pairs")
            gap = model.gap_ / model.tolerance_
            print(
                f"| {label(loss)} | {C:g} | {model.stop_reason_} | {model.n_iter_} | {gap:.3g} | "
                f"{', '.join(named) or '-'} | {seconds:.2f} |",
                flush=True,
            )


def converging_sets():
    X, y, qid = load_mq2008(fold=1, split="train")
    rescaled = X * 10 ** np.random.default_rng(0).uniform(-2, 3, X.shape[1])
    binned = Binner(n_thresholds=20).fit(X).transform(X)
    made = make_ranking(300, 60, 30, random_state=1)
    return [
        ("MQ2008 Fold 1", X, y, qid),
        ("MQ2008 Fold 1, columns x 10^uniform(-2, 3)", rescaled, y, qid),
        ("MQ2008 Fold 1, Binner(20)", binned, y, qid),
        ("make_ranking(300, 60, 30)", made.X, made.y, made.qid),
    ]


def converging_table() -> None:
    print("| data | fits | converged | stalled | other | most iterations | slowest fit s (timing) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, X, y, qid in converging_sets():
        stops, iterations, slowest = [], [], 0.0
        for loss in CONVERGING_LOSSES:
            for C in (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0):
                params = {"loss": list(loss) if not isinstance(loss, str) else loss, "C": C}
                model, seconds, _ = fit(X, y, qid, **params)
                stops.append(model.stop_reason_)
                iterations.append(model.n_iter_)
                slowest = max(slowest, seconds)
        converged = stops.count("converged")
        stalled = stops.count("stalled")
        print(
            f"| {name} | {len(stops)} | {converged} | {stalled} | {len(stops) - converged - stalled} | "
            f"{max(iterations)} | {slowest:.2f} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["raw", "converging"], help="one table only")
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__)
    warnings.simplefilter("ignore")
    if args.only in (None, "raw"):
        raw_table()
        print()
    if args.only in (None, "converging"):
        converging_table()


if __name__ == "__main__":
    main()
