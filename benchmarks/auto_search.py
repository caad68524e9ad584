"""The best model in one call: SVMMapCV's search over loss x preprocessing x C against a tuned
LightGBM LGBMRanker, on MQ2008's five folds and on two generated kinds of data that LETOR's
normalized folds are not (issues 34 and 43).

The generated kinds (`make_kind`): "raw", graded labels 0-4 and features on raw scales (each
column multiplied by 10^uniform(-2, 4)); "many", 150 documents per query of which about a third
are relevant. Each is one draw of 300 training, 100 validation and 100 test queries per seed.

For each fold (or seed), on its train split:

- svmmap, the default call: ``SVMMapCV(loss="auto", preprocessing="auto", scoring="ndcg@10")``
  (map, pairwise, pairwise:count, ndcg@10:graded x none, standardized, binned x C in the
  default grid; svmmap's own 5 query folds of the train split; warm C paths with the default
  patience), refitted on the train split. It never sees the vali split.
- svmmap with the vali split: the same with ``cv="validation"`` and the vali split as
  ``eval_set``, refitted on the train split.
- LightGBM: ``LGBMRanker`` (lambdarank) over num_leaves {7, 15, 31, 63} x learning_rate
  {0.03, 0.1} (up to 2000 trees, min_child_samples 5), each with early stopping (50 rounds)
  on the vali split's NDCG@10 (LightGBM's own), the configuration chosen by the vali NDCG@10 of
  svmmap.metrics at its best iteration (the metric the svmmap search maximizes).

All run single-threaded (``n_jobs=1``; ``num_threads=1``), one after the other per fold. The
first table gives, per fold and method and their means, the test NDCG@10 and MAP
(svmmap.metrics: over the test queries with a relevant document), the seconds of each search
(tuning and the final model, wall clock) and their ratio to LightGBM's in the same fold, then
the same in CPU seconds (``time.process_time`` around each search; every run is
single-threaded, so they are its own seconds on a core, which a loaded machine inflates far
less than its wall clock, and LightGBM's wall clock more than svmmap's). The
second gives Wilcoxon signed-rank tests (scipy.stats.wilcoxon, two-sided, zero differences
dropped) over the per-query test NDCG@10 and average precision of all folds of a kind together.
With --patience-table, a third compares the default call's patience (1) with patience 2 on
MQ2008: the candidates chosen and the fits made, summed over the folds.

    python benchmarks/auto_search.py [--kinds mq2008,raw,many] [--folds 1,2,3,4,5] [--seeds 0]

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
RATES = (0.03, 0.1)

#: The data sets: MQ2008's folds and two generated kinds that LETOR's normalized folds are not
#: (``make_kind``).
KINDS = ("mq2008", "raw", "many")


def group_sizes(qid: np.ndarray) -> np.ndarray:
    """Query sizes of rows whose queries are contiguous (as in LETOR files)."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    if len(starts) != len(np.unique(qid)):
        raise ValueError("LightGBM needs each query's rows together")
    return np.diff(np.r_[starts, len(qid)])


def svmmap_search(
    train: Tuple, vali: Tuple, budget: Any, validation: bool, patience: int = 1
) -> Tuple[Any, str, float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    search = SVMMapCV(
        loss="auto",
        preprocessing="auto",
        scoring="ndcg@10",
        cv="validation" if validation else 5,
        time_budget=budget,
        patience=patience,
        n_jobs=1,
    )
    if validation:
        search.fit(*train[:2], qid=train[2], eval_set=[vali[:2]], eval_qid=[vali[2]])
    else:
        search.fit(*train[:2], qid=train[2])
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    p = search.best_params_
    status = search.cv_results_["status"]
    fitted = int((status == "fitted").sum())
    chosen = f"{p['loss']}, {p['preprocessing']}, C={p['C']:g} ({fitted}/{len(status)} fitted)"
    return search, chosen, seconds, cpu


def lightgbm_tuned(train: Tuple, vali: Tuple, **extra: Any) -> Tuple[Any, str]:
    """LGBMRanker over LEAVES x RATES, each with early stopping (50 rounds) on vali's NDCG@10,
    the one of the best vali NDCG@10 by svmmap.metrics; ``extra`` goes to LGBMRanker (e.g.
    interaction_constraints). Returns the model and its description."""
    import lightgbm as lgb

    best: Tuple[float, Any, str] = (-np.inf, None, "")
    for leaves, rate in itertools.product(LEAVES, RATES):
        model = lgb.LGBMRanker(
            n_estimators=2000,
            num_leaves=leaves,
            learning_rate=rate,
            min_child_samples=5,
            num_threads=1,
            verbose=-1,
            random_state=0,
            **extra,
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
    return best[1], best[2]


def lightgbm_search(train: Tuple, vali: Tuple) -> Tuple[Any, str, float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    model, chosen = lightgbm_tuned(train, vali)
    return model, chosen, time.perf_counter() - start, time.process_time() - cpu


METHODS = ("svmmap, default (5 folds of train)", "svmmap, cv=validation (vali)", "LightGBM (vali)")


def make_kind(kind: str, seed: int) -> Tuple[Tuple, Tuple, Tuple]:
    """(train, vali, test) of a generated kind, 300, 100 and 100 queries of one
    `make_ranking` draw (labels 0-4): "raw", 100 documents per query and 60 features whose
    columns are multiplied by 10^uniform(-2, 4) (raw scales, as BM25 next to PageRank); "many",
    150 documents per query of which about a third are relevant (label > 0)."""
    from svmmap.datasets import make_ranking

    rng = np.random.default_rng(seed)
    if kind == "raw":
        d = make_ranking(500, 100, 60, random_state=seed, dtype=np.float64)
        X = d.X * 10.0 ** rng.uniform(-2, 4, size=d.X.shape[1])
    else:
        fractions = (0.66, 0.17, 0.1, 0.05, 0.02)
        d = make_ranking(500, 150, 60, label_fractions=fractions, random_state=seed, dtype=np.float64)
        X = d.X
    ids = np.unique(d.qid)
    parts = []
    for lo, hi in ((0, 300), (300, 400), (400, 500)):
        rows = np.isin(d.qid, ids[lo:hi])
        parts.append((X[rows], d.y[rows].astype(np.float64), d.qid[rows]))
    return parts[0], parts[1], parts[2]


def data_sets(kinds: List[str], folds: List[int], seeds: List[int]):
    """(kind, fold or seed, (train, vali, test)) of every data set of the run."""
    for kind in kinds:
        if kind == "mq2008":
            for fold in folds:
                yield kind, fold, tuple(load_mq2008(fold, split) for split in ("train", "vali", "test"))
        else:
            for seed in seeds:
                yield kind, seed, make_kind(kind, seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", default="1,2,3,4,5", help="MQ2008 folds (default all five)")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"data sets (default {','.join(KINDS)})")
    parser.add_argument("--seeds", default="0", help="seeds of the generated kinds (default 0)")
    parser.add_argument("--time-budget", type=float, default=None, help="SVMMapCV's time_budget per fold (s)")
    parser.add_argument(
        "--patience-table",
        action="store_true",
        help="compare patience 1 with 2 on MQ2008 (fits the default call twice)",
    )
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__)
    warnings.simplefilter("ignore")
    folds = [int(f) for f in args.folds.split(",")]
    kinds = args.kinds.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    print(
        "| data | fold | method | test NDCG@10 | test MAP | search s (timing) | / LightGBM's (timing) "
        "| search CPU s (timing) | CPU / LightGBM's (timing) | choice |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    figures: Dict[Tuple[str, str], List[Tuple[float, float, float, float]]] = {}
    per_query_values: Dict[Tuple[str, str], Dict[str, List[np.ndarray]]] = {}
    patience_rows = []
    for kind, fold, (train, vali, test) in data_sets(kinds, folds, seeds):
        X_test, y_test, qid_test = test
        runs = {
            METHODS[0]: svmmap_search(train, vali, args.time_budget, validation=False),
            METHODS[1]: svmmap_search(train, vali, args.time_budget, validation=True),
            METHODS[2]: lightgbm_search(train, vali),
        }
        lightgbm_seconds, lightgbm_cpu = runs[METHODS[2]][2:]
        for method, (model, chosen, seconds, cpu) in runs.items():
            scores = model.predict(X_test)
            values = {name: per_query(name, y_test, scores, qid_test).values for name in ("ndcg@10", "map")}
            for name, v in values.items():
                per_query_values.setdefault((kind, method), {"ndcg@10": [], "map": []})[name].append(v)
            figures.setdefault((kind, method), []).append(
                (values["ndcg@10"].mean(), values["map"].mean(), seconds, cpu)
            )
            print(
                f"| {kind} | {fold} | {method} | {values['ndcg@10'].mean():.4f} | {values['map'].mean():.4f} "
                f"| {seconds:.1f} | {seconds / lightgbm_seconds:.2f} | {cpu:.1f} | {cpu / lightgbm_cpu:.2f} | {chosen} |",
                flush=True,
            )
        if args.patience_table and kind == "mq2008":
            patient = svmmap_search(train, vali, args.time_budget, validation=False, patience=2)
            patience_rows.append((runs[METHODS[0]], patient))
    for kind in kinds:
        lightgbm_total = np.array(figures[(kind, METHODS[2])])[:, 2:].sum(axis=0)
        for method in METHODS:
            f = np.array(figures[(kind, method)])
            print(
                f"| {kind} | mean | {method} | {f[:, 0].mean():.4f} | {f[:, 1].mean():.4f} | {f[:, 2].mean():.1f} "
                f"| {f[:, 2].sum() / lightgbm_total[0]:.2f} | {f[:, 3].mean():.1f} "
                f"| {f[:, 3].sum() / lightgbm_total[1]:.2f} | |"
            )
    wilcoxon_table(per_query_values, kinds)
    if patience_rows:
        patience_table(patience_rows)


def wilcoxon_table(per_query_values: Dict[Tuple[str, str], Dict[str, List[np.ndarray]]], kinds: List[str]) -> None:
    from scipy.stats import wilcoxon

    print()
    print(
        "| data | per-query test values, all folds | measure | queries | svmmap mean | LightGBM mean "
        "| mean difference | Wilcoxon p |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for kind in kinds:
        for method in METHODS[:2]:
            for name in ("ndcg@10", "map"):
                a = np.concatenate(per_query_values[(kind, method)][name])
                b = np.concatenate(per_query_values[(kind, METHODS[2])][name])
                p = wilcoxon(a, b).pvalue
                shown = "NDCG@10" if name == "ndcg@10" else "AP"
                print(
                    f"| {kind} | {method} - LightGBM | {shown} | {len(a)} | {a.mean():.4f} | {b.mean():.4f} "
                    f"| {np.mean(a - b):+.4f} | {p:.3g} |"
                )


def patience_table(rows: List[Tuple[Tuple[Any, str, float, float], Tuple[Any, str, float, float]]]) -> None:
    print()
    print(
        "| default call, all folds | same choice as patience 2 | fits, patience 1 | fits, patience 2 | seconds, 1 / 2 (timing) |"
    )
    print("|---|---:|---:|---:|---:|")

    def fits(search: Any) -> int:
        return int((search.cv_results_["status"] == "fitted").sum()) * search.n_splits_

    same = sum(a[0].best_params_ == b[0].best_params_ for a, b in rows)
    one = sum(fits(a[0]) for a, _ in rows)
    two = sum(fits(b[0]) for _, b in rows)
    ratio = sum(a[2] for a, _ in rows) / sum(b[2] for _, b in rows)
    print(f"| {len(rows)} folds | {same}/{len(rows)} | {one} | {two} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
