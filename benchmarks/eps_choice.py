"""Test accuracy and training cost against the stopping tolerance eps, to choose its default.

Training stops when the duality gap is at most eps * C (per slack group), so eps bounds how far
the model's objective is from the optimum, not how far its ranking is. This script trains
SVMMap(loss="map") with eps from 1e-2 to 1e-6 on the five MQ2008 folds (train split, evaluated
on the test split) and on make_ranking data (one train/test split by query, a raw-scale copy of
it with each column multiplied by 10^U(-2, 3), and a copy where a third of about 150 documents
per query are relevant), linear and binned (Pipeline(Binner(n_thresholds=50), SVMMap)), at each C
of --Cs. It prints, per data set, model and C, the mean test MAP and NDCG@10 (over the five folds
for MQ2008), the mean paired difference of each test query's AP from the most precise eps's model
with its standard error, the iterations and the fit seconds summed over the folds. It is the source of the
table in docs/guide/choosing-c.md ("The default eps").

    python benchmarks/eps_choice.py [--Cs 1,100] [--eps 1e-2,1e-3,1e-4,1e-5,1e-6]

Seconds are wall clock on whatever machine runs it; compare them within one run only.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Callable, Iterator, List, Tuple

import numpy as np
import tables  # benchmarks/tables.py, beside this script
from sklearn.pipeline import make_pipeline
from svmmap import Binner, SVMMap
from svmmap.datasets import Split, make_ranking, mq2008_folds
from svmmap.metrics import ndcg, per_query

Splits = List[Tuple[Split, Split]]


def datasets(seed: int) -> Iterator[Tuple[str, Splits]]:
    """(name, [(train, test), ...]) for MQ2008's folds and the make_ranking variants."""
    yield "MQ2008 (5 folds)", [(fold.train, fold.test) for fold in mq2008_folds()]

    def split(X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> Splits:
        queries = np.unique(qid)
        test = np.random.default_rng(seed).permutation(queries)[: len(queries) // 2]
        rows = np.isin(qid, test)
        return [(Split(X[~rows], y[~rows], qid[~rows]), Split(X[rows], y[rows], qid[rows]))]

    X, y, qid = make_ranking(200, 120, 46, random_state=seed, dtype=np.float64)
    yield "make_ranking", split(X, y, qid)
    scales = 10.0 ** np.random.default_rng(seed + 1).uniform(-2, 3, X.shape[1])
    yield "make_ranking raw scale", split(X * scales, y, qid)
    X, y, qid = make_ranking(200, 150, 46, label_fractions=(0.67, 0.33), random_state=seed, dtype=np.float64)
    yield "make_ranking 1/3 relevant", split(X, y, qid)


def fitter(binned: bool, C: float, eps: float) -> Callable[[Split], Tuple[Callable, int]]:
    def fit(train: Split) -> Tuple[Callable, int]:
        svm = SVMMap(C=C, eps=eps, loss="map")
        if binned:
            model = make_pipeline(Binner(n_thresholds=50), svm)
            model.fit(train.X, train.y, svmmap__qid=train.qid)
        else:
            model = svm.fit(train.X, train.y, qid=train.qid)
        return model.predict, svm.n_iter_

    return fit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--Cs", default="1,100", help="values of C (default 1,100)")
    parser.add_argument("--eps", default="1e-2,1e-3,1e-4,1e-5,1e-6", help="values of eps")
    parser.add_argument("--data", default="", help="only data sets whose name contains this")
    parser.add_argument("--linear-only", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--budget",
        type=float,
        default=60.0,
        help="after a row that took longer (s), skip smaller eps for that model and C",
    )
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__)
    Cs = [float(c) for c in args.Cs.split(",")]
    epsilons = sorted((float(e) for e in args.eps.split(",")), reverse=True)
    warnings.simplefilter("ignore")
    print(
        "| data | model | C | eps | test MAP | test NDCG@10 | MAP - MAP(smallest eps), per query | iterations | fit s (timing) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, splits in datasets(args.seed):
        if args.data not in name:
            continue
        for binned in (False,) if args.linear_only else (False, True):
            model = "binned" if binned else "linear"
            for C in Cs:
                rows = []
                for eps in epsilons:
                    fit = fitter(binned, C, eps)
                    ap, ndcgs, iterations, seconds = [], [], 0, 0.0
                    for train, test in splits:
                        start = time.perf_counter()
                        predict, n_iter = fit(train)
                        seconds += time.perf_counter() - start
                        iterations += n_iter
                        scores = predict(test.X)
                        ap.append(per_query("map", test.y, scores, test.qid).values)
                        ndcgs.append(ndcg(test.y, scores, test.qid, k=10))
                    # MAP is the mean over the folds' MAPs (each fold's mean AP), as usual.
                    maps = [float(np.mean(a)) for a in ap]
                    rows.append((eps, np.mean(maps), np.mean(ndcgs), np.concatenate(ap), iterations, seconds))
                    if seconds > args.budget:
                        break
                reference = rows[-1][3]
                for eps, map_, ndcg_, ap, iterations, seconds in rows:
                    # The paired difference per query against the most precise model, with its
                    # standard error: a difference within about 2 standard errors is noise.
                    delta = ap - reference
                    se = float(np.std(delta, ddof=1) / np.sqrt(len(delta)))
                    print(
                        f"| {name} | {model} | {C:g} | {eps:g} | {map_:.4f} | {ndcg_:.4f}"
                        f" | {np.mean(delta):+.4f} +- {se:.4f} | {iterations} | {seconds:.2f} |",
                        flush=True,
                    )
                for eps in epsilons[len(rows) :]:
                    print(
                        f"| {name} | {model} | {C:g} | {eps:g} | not run: eps {rows[-1][0]:g} took > {args.budget:g} s | | | | |"
                    )


if __name__ == "__main__":
    main()
