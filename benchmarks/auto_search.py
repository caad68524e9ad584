"""The best model in one call: SVMMapCV's search over loss x preprocessing x C against a tuned
LightGBM LGBMRanker, on MQ2008's five folds.

For each fold, both are tuned on the fold's vali split and evaluated on its test split:

- svmmap: ``SVMMapCV(loss="auto", preprocessing="auto", scoring="ndcg@10", cv="validation")``
  with the vali split as ``eval_set`` (map, pairwise, pairwise:count, ndcg@10:graded x none,
  standardized, binned x C in the default grid, warm C paths with the default patience), then
  refitted on the train split;
- LightGBM: ``LGBMRanker`` (lambdarank) over num_leaves x learning_rate, each with early stopping
  on the vali split's NDCG@10 (LightGBM's own), the configuration chosen by the vali NDCG@10 of
  svmmap.metrics at its best iteration (the same metric the svmmap search maximizes).

Both run single-threaded (``n_jobs=1``; ``num_threads=1``). The first table gives, per fold and
their mean, the test NDCG@10 and MAP (svmmap.metrics: MAP and NDCG@10 over the test queries with a
relevant document) and the seconds of each search (tuning and the final model, wall clock). The
second gives a Wilcoxon signed-rank test (scipy.stats.wilcoxon, two-sided, zero differences
dropped) over the per-query test NDCG@10 of all folds together.

    python benchmarks/auto_search.py [--folds 1,2,3,4,5] [--time-budget S]

Seconds are wall clock on whatever machine runs it; compare them within one run only.
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from typing import Any, Dict, List, Tuple

import numpy as np
import tables  # benchmarks/tables.py, beside this script
from svmmap import SVMMapCV
from svmmap.datasets import load_mq2008
from svmmap.metrics import ndcg, per_query

LEAVES = (7, 15, 31, 63)
RATES = (0.03, 0.1, 0.3)


def group_sizes(qid: np.ndarray) -> np.ndarray:
    """Query sizes of rows whose queries are contiguous (as in LETOR files)."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    if len(starts) != len(np.unique(qid)):
        raise ValueError("LightGBM needs each query's rows together")
    return np.diff(np.r_[starts, len(qid)])


def svmmap_search(train: Tuple, vali: Tuple, budget: Any) -> Tuple[Any, str, float]:
    start = time.perf_counter()
    search = SVMMapCV(
        loss="auto", preprocessing="auto", scoring="ndcg@10", cv="validation", time_budget=budget, n_jobs=1
    )
    search.fit(*train[:2], qid=train[2], eval_set=[vali[:2]], eval_qid=[vali[2]])
    seconds = time.perf_counter() - start
    p = search.best_params_
    status = search.cv_results_["status"]
    chosen = f"{p['loss']}, {p['preprocessing']}, C={p['C']:g} ({int((status == 'fitted').sum())}/{len(status)} fitted)"
    return search.predict, chosen, seconds


def lightgbm_search(train: Tuple, vali: Tuple) -> Tuple[Any, str, float]:
    import lightgbm as lgb

    start = time.perf_counter()
    best: Tuple[float, Any, str] = (-np.inf, None, "")
    for leaves, rate in itertools.product(LEAVES, RATES):
        model = lgb.LGBMRanker(
            n_estimators=2000, num_leaves=leaves, learning_rate=rate, num_threads=1, verbose=-1, random_state=0
        )
        model.fit(
            train[0],
            train[1],
            group=group_sizes(train[2]),
            eval_set=[vali[:2]],
            eval_group=[group_sizes(vali[2])],
            eval_at=[10],
            callbacks=[lgb.early_stopping(50, verbose=False)],
        )
        score = ndcg(vali[1], model.predict(vali[0]), vali[2], k=10)
        if score > best[0]:
            best = (score, model, f"leaves={leaves}, rate={rate:g}, trees={model.best_iteration_}")
    seconds = time.perf_counter() - start
    return best[1].predict, best[2], seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", default="1,2,3,4,5", help="MQ2008 folds (default all five)")
    parser.add_argument("--time-budget", type=float, default=None, help="SVMMapCV's time_budget per fold (s)")
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__)
    warnings.simplefilter("ignore")
    folds = [int(f) for f in args.folds.split(",")]
    print(
        "| fold | svmmap test NDCG@10 | LightGBM test NDCG@10 | svmmap test MAP | LightGBM test MAP "
        "| svmmap search s (timing) | LightGBM search s (timing) | svmmap choice | LightGBM choice |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|---|")
    sums: Dict[str, List[float]] = {}
    per_query_ndcg: Dict[str, List[np.ndarray]] = {"svmmap": [], "LightGBM": []}
    for fold in folds:
        train, vali, test = (load_mq2008(fold, split) for split in ("train", "vali", "test"))
        X_test, y_test, qid_test = test
        row: Dict[str, Any] = {}
        for name, search in (
            ("svmmap", lambda: svmmap_search(train, vali, args.time_budget)),
            ("LightGBM", lambda: lightgbm_search(train, vali)),
        ):
            predict, chosen, seconds = search()
            scores = predict(X_test)
            row[name] = (
                ndcg(y_test, scores, qid_test, k=10),
                per_query("map", y_test, scores, qid_test).mean(),
                seconds,
                chosen,
            )
            per_query_ndcg[name].append(per_query("ndcg@10", y_test, scores, qid_test).values)
        figures = [
            row["svmmap"][0],
            row["LightGBM"][0],
            row["svmmap"][1],
            row["LightGBM"][1],
            row["svmmap"][2],
            row["LightGBM"][2],
        ]
        for i, v in enumerate(figures):
            sums.setdefault(str(i), []).append(v)
        print(
            f"| {fold} | {figures[0]:.4f} | {figures[1]:.4f} | {figures[2]:.4f} | {figures[3]:.4f} "
            f"| {figures[4]:.1f} | {figures[5]:.1f} | {row['svmmap'][3]} | {row['LightGBM'][3]} |",
            flush=True,
        )
    means = [float(np.mean(sums[str(i)])) for i in range(6)]
    print(
        f"| mean | {means[0]:.4f} | {means[1]:.4f} | {means[2]:.4f} | {means[3]:.4f} | {means[4]:.1f} | {means[5]:.1f} | | |"
    )
    from scipy.stats import wilcoxon

    a = np.concatenate(per_query_ndcg["svmmap"])
    b = np.concatenate(per_query_ndcg["LightGBM"])
    test = wilcoxon(a, b)
    print()
    print(
        "| per-query test NDCG@10, all folds | queries | svmmap mean | LightGBM mean | mean difference | Wilcoxon p |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    print(
        f"| svmmap - LightGBM | {len(a)} | {a.mean():.4f} | {b.mean():.4f} | {np.mean(a - b):+.4f} | {test.pvalue:.3g} |"
    )


if __name__ == "__main__":
    main()
