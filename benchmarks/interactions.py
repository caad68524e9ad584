"""Pairwise interactions (GA2M): Pipeline(Binner(interactions=k), SVMMap()) against the
per-feature binned model and LightGBM (full, and one feature per tree), on data with and without
planted interactions and on MQ2008's five folds.

Synthetic data: ``make_ranking(n_queries=900, docs_per_query=60, n_features=40, ...)``, its
queries split 60/20/20 into train, vali and test (one draw, so that all three share the
features' strengths), with the pairs (0, 1), (2, 3), (4, 5) planted at strengths 1.5, 1.0, 0.7
(``interactions=PLANTED``), and the same without them. MQ2008: its folds' train, vali and test.

- svmmap: ``Pipeline(Binner(...), SVMMap(loss, C))``, loss in LOSSES and C in CS chosen by the vali
  NDCG@10 (models fitted on train); the GA2M with ``interactions=k`` (pairs chosen by FAST on
  train, the default ``interaction_bins``), k in KS chosen with the loss and C by the vali
  NDCG@10 (k = 0 is the per-feature model, so the GA2M falls back to it where pairs do not help
  on vali);
- LightGBM: ``LGBMRanker`` (lambdarank) over num_leaves x learning_rate with early stopping on the
  vali split (as benchmarks/auto_search.py), and the same restricted to one feature per tree
  (``interaction_constraints``, a GAM).

Test NDCG@10 by svmmap.metrics (queries with a relevant document). The MQ2008 table gives the
seconds of the GA2M (pair selection and the fit at the chosen C) over the per-feature model's fit
at its chosen C, measured one after the other in the same run (a ratio: the machine is shared).

The cost table (``--cost``) times, on ``make_ranking``'s 136-feature shape (``--cost-docs``
documents, by default one row of 100,000 and one of 1,000,000, 120 per query, three planted
pairs), the per-feature pipeline (Binner fit and
transform, SVMMap fit at C=1) and the GA2M with ``interactions=10`` (pair selection over all
9,180 pairs included), one after the other in one run, and gives the bytes of their codes.

The table of issue 45 (``--table``): on the planted and the pair-free synthetic data and on
MQ2008's ``--folds``, the per-feature pipeline, the GA2M with ``interactions=10`` and LightGBM
with one feature per tree and without constraint, each tuned on vali, with the choices and the
seconds of each tuning over the per-feature pipeline's.

The one call (``--search``): ``SVMMapCV(loss="auto", preprocessing="auto", n_jobs=1)`` with and
without its "ga2m" candidate on the planted and the pair-free synthetic data, and LGBMRanker
tuned as benchmarks/auto_search.py tunes it: the choice, test NDCG@10, the time ratio with and
without the candidate and each search's time over tuned LightGBM's (medians over ``--repeats``;
``--kinds none`` for the pair-free data alone).

The C path of the GA2M (``--c-path``): on the planted data, the pipeline with
``interactions=10`` (pairs chosen once on train) at each loss of LOSSES and pairwise and each C
of CS, its vali and test NDCG@10, solver iterations and fit seconds: whether the accuracy the
one call reaches needs its path up to C=1000.

The small-data table (``--small``) draws ``--queries`` (30) of an MQ2008 fold's training
queries, ``--draws`` (3) times per fold, and compares the per-feature pipeline with the GA2M
(``interactions=10``), each tuned over loss and C on the fold's vali split, on its test split.

    python benchmarks/interactions.py [--folds 1,2,3,4,5] [--synthetic-only | --mq2008-only | --cost | --small | --table | --search | --c-path]
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

import auto_search  # benchmarks/auto_search.py, beside this script
import numpy as np
import tables  # benchmarks/tables.py, beside this script
from sklearn.pipeline import make_pipeline
from svmmap import Binner, SVMMap
from svmmap.datasets import load_mq2008, make_ranking
from svmmap.metrics import ndcg

PLANTED = [(0, 1, 1.5), (2, 3, 1.0), (4, 5, 0.7)]
KS = (0, 2, 5)
CS = (1.0, 10.0, 100.0, 1000.0)
LOSSES = ("map", "ndcg@10:graded")
Split = Tuple[np.ndarray, np.ndarray, np.ndarray]


def synthetic(planted: Optional[list]) -> Tuple[Split, Split, Split]:
    X, y, qid = make_ranking(n_queries=900, docs_per_query=60, n_features=40, interactions=planted, random_state=11)
    bounds = (540, 720)
    parts = (qid < bounds[0], (qid >= bounds[0]) & (qid < bounds[1]), qid >= bounds[1])
    return tuple((X[m], y[m], qid[m]) for m in parts)  # type: ignore[return-value]


def svmmap_tuned(train: Split, vali: Split, ks: Tuple[Any, ...]) -> Tuple[Any, str, float]:
    """The pipeline at the (k, C) of the best vali NDCG@10, and the seconds of its fit there."""
    best: Tuple[float, Any, str, float] = (-np.inf, None, "", 0.0)
    for interactions, loss, C in itertools.product(ks, LOSSES, CS):
        model = make_pipeline(Binner(interactions=interactions), SVMMap(C=C, loss=loss))
        start = time.perf_counter()
        model.fit(train[0], train[1], binner__qid=train[2], svmmap__qid=train[2])
        seconds = time.perf_counter() - start
        score = ndcg(vali[1], model.predict(vali[0]), vali[2], k=10)
        if score > best[0]:
            pairs = model[0].interactions_
            best = (
                score,
                model,
                f"{loss}, C={C:g}" + (f", pairs {pairs}" if interactions is not None else ""),
                seconds,
            )
    return best[1], best[2], best[3]


def lightgbm_tuned(train: Split, vali: Split, one_feature_per_tree: bool) -> Tuple[Any, str]:
    """benchmarks/auto_search.py's tuned LGBMRanker, optionally one feature per tree (a GAM)."""
    extra: Dict[str, Any] = {}
    if one_feature_per_tree:
        extra["interaction_constraints"] = [[f] for f in range(train[0].shape[1])]
    return auto_search.lightgbm_tuned(train, vali, **extra)


def synthetic_table() -> None:
    print("| model | test NDCG@10, planted pairs | test NDCG@10, no pairs | choice (planted pairs) |")
    print("|---|---:|---:|---|")
    data = {name: synthetic(planted) for name, planted in (("planted", PLANTED), ("none", None))}
    makers: List[Tuple[str, Callable[[Split, Split], Tuple[Any, str]]]] = [
        ("svmmap, per feature (Binner())", lambda t, v: svmmap_tuned(t, v, (None,))[:2]),
        ("svmmap GA2M (Binner(interactions=k))", lambda t, v: svmmap_tuned(t, v, KS)[:2]),
        ("LightGBM, one feature per tree", lambda t, v: lightgbm_tuned(t, v, True)),
        ("LightGBM, full", lambda t, v: lightgbm_tuned(t, v, False)),
    ]
    for name, make in makers:
        scores, choice = [], ""
        for kind in ("planted", "none"):
            train, vali, test = data[kind]
            model, chosen = make(train, vali)
            scores.append(ndcg(test[1], model.predict(test[0]), test[2], k=10))
            choice = choice or chosen
        print(f"| {name} | {scores[0]:.4f} | {scores[1]:.4f} | {choice} |", flush=True)


def mq2008_table(folds: List[int]) -> None:
    print("| fold | per feature test NDCG@10 | GA2M test NDCG@10 | GA2M choice | GA2M fit / per-feature fit (timing) |")
    print("|---|---:|---:|---|---:|")
    sums: List[List[float]] = [[], [], []]
    for fold in folds:
        train, vali, test = (load_mq2008(fold, split) for split in ("train", "vali", "test"))
        plain, _, plain_s = svmmap_tuned(train, vali, (None,))
        ga2m, chosen, ga2m_s = svmmap_tuned(train, vali, KS)
        figures = [ndcg(test[1], m.predict(test[0]), test[2], k=10) for m in (plain, ga2m)] + [ga2m_s / plain_s]
        for s, v in zip(sums, figures):
            s.append(v)
        print(
            f"| {fold} | {figures[0]:.4f} | {figures[1]:.4f} | {chosen} | {figures[2]:.1f} |",
            flush=True,
        )
    means = [float(np.mean(s)) for s in sums]
    print(f"| mean | {means[0]:.4f} | {means[1]:.4f} | | {means[2]:.1f} |")


def small_table(folds: List[int], draws: int, n_queries: int) -> None:
    """Per MQ2008 fold and draw: ``n_queries`` training queries drawn (a fixed seed per draw),
    the per-feature pipeline and the GA2M with ``interactions=10``, each at the (loss, C) of
    its best vali NDCG@10 on the fold's whole vali split, scored on the fold's test split."""
    print(
        "| fold | draw | training queries | per feature test NDCG@10 | GA2M test NDCG@10 | GA2M - per feature "
        "| pairs chosen |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    differences: List[float] = []
    for fold in folds:
        full, vali, test = (load_mq2008(fold, split) for split in ("train", "vali", "test"))
        for draw in range(draws):
            rng = np.random.default_rng(draw)
            keep = np.isin(full[2], rng.choice(np.unique(full[2]), size=n_queries, replace=False))
            train = (full[0][keep], full[1][keep], full[2][keep])
            plain = svmmap_tuned(train, vali, (None,))[0]
            ga2m = svmmap_tuned(train, vali, (10,))[0]
            a, b = (ndcg(test[1], m.predict(test[0]), test[2], k=10) for m in (plain, ga2m))
            differences.append(b - a)
            print(
                f"| {fold} | {draw} | {n_queries} | {a:.4f} | {b:.4f} | {b - a:+.4f} | {ga2m[0].interactions_} |",
                flush=True,
            )
    worst = min(differences)
    print(f"| all | | | | | mean {np.mean(differences):+.4f}, worst {worst:+.4f} | |")


def where_table(folds: List[int]) -> None:
    """Issue 45's table: on the planted and the pair-free synthetic data and on MQ2008's folds,
    the per-feature pipeline, the GA2M with ``interactions=10`` (pairs kept only where they
    help on the queries that did not choose them) and LightGBM with one feature per tree and
    without constraint, each tuned on the vali split; test NDCG@10, the choice (the pairs
    chosen) and the seconds of the whole tuning (pair selection included), timed one after the
    other in the same run, as a ratio to the per-feature pipeline's."""
    makers: List[Tuple[str, Callable[[Split, Split], Tuple[Any, str]]]] = [
        ("svmmap, per feature", lambda t, v: svmmap_tuned(t, v, (None,))[:2]),
        ("svmmap GA2M, interactions=10", lambda t, v: svmmap_tuned(t, v, (10,))[:2]),
        ("LightGBM, one feature per tree", lambda t, v: lightgbm_tuned(t, v, True)),
        ("LightGBM, full", lambda t, v: lightgbm_tuned(t, v, False)),
    ]
    print("| data | model | test NDCG@10 | choice | tuning s (timing) | / per feature (timing) |")
    print("|---|---|---:|---|---:|---:|")
    sets: List[Tuple[str, List[Tuple[Split, Split, Split]]]] = [
        ("planted pairs", [synthetic(PLANTED)]),
        ("no pairs", [synthetic(None)]),
        (
            f"MQ2008, folds {','.join(map(str, folds))} (mean)",
            [tuple(load_mq2008(f, part) for part in ("train", "vali", "test")) for f in folds],  # type: ignore[misc]
        ),
    ]
    for data_name, splits in sets:
        base = 0.0
        for name, make in makers:
            scores, seconds, choices = [], 0.0, []
            for train, vali, test in splits:
                start = time.perf_counter()
                model, chosen = make(train, vali)
                seconds += time.perf_counter() - start
                scores.append(ndcg(test[1], model.predict(test[0]), test[2], k=10))
                choices.append(chosen)
            base = base or seconds
            choice = choices[0] if len(choices) == 1 else "; ".join(choices)
            print(
                f"| {data_name} | {name} | {float(np.mean(scores)):.4f} | {choice} | {seconds:.1f} "
                f"| {seconds / base:.2f} |",
                flush=True,
            )


def search_table(repeats: int, kinds: List[str]) -> None:
    """The one call, ``SVMMapCV(loss="auto", preprocessing="auto", n_jobs=1)`` (5 query folds
    of the training queries), on the planted and the pair-free synthetic data: its choice, test
    NDCG@10 and seconds, against the same search without the "ga2m" candidate
    (``preprocessing=["none", "standard", "binned"]``) and against LGBMRanker tuned as
    benchmarks/auto_search.py tunes it (single-threaded, early stopping on the vali queries), the
    three timed one after the other ``repeats`` times (medians of the seconds and of the ratios:
    the machine may be shared)."""
    from svmmap import SVMMapCV

    print(
        "| data | search | choice | test NDCG@10 | seconds (timing) | with ga2m / without (timing, median) "
        "| / tuned LightGBM's (timing, median) |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    for kind, planted in (("planted pairs", PLANTED), ("no pairs", None)):
        if ("planted" if planted else "none") not in kinds:
            continue
        train, vali, test = synthetic(planted)
        rows: Dict[str, Tuple[str, float, List[float]]] = {}
        for _ in range(repeats):
            for name, preprocessing in (("auto", "auto"), ("without ga2m", ["none", "standard", "binned"])):
                search = SVMMapCV(loss="auto", preprocessing=preprocessing, n_jobs=1)
                start = time.perf_counter()
                search.fit(*train[:2], qid=train[2])
                seconds = time.perf_counter() - start
                best = search.best_params_
                model = search.best_estimator_
                pairs = f", pairs {model[0].interactions_}" if best["preprocessing"] == "ga2m" else ""
                choice = f"{best['loss']}/{best['preprocessing']}, C={best['C']:g}{pairs}"
                score = ndcg(test[1], search.predict(test[0]), test[2], k=10)
                rows.setdefault(name, (choice, score, []))[2].append(seconds)
            start = time.perf_counter()
            lgbm, described = lightgbm_tuned(train, vali, one_feature_per_tree=False)
            seconds = time.perf_counter() - start
            score = ndcg(test[1], lgbm.predict(test[0]), test[2], k=10)
            rows.setdefault("tuned LightGBM", (described, score, []))[2].append(seconds)
        ratios = [a / b for a, b in zip(rows["auto"][2], rows["without ga2m"][2])]
        to_lgbm = {
            name: f"{float(np.median([a / b for a, b in zip(rows[name][2], rows['tuned LightGBM'][2])])):.2f}"
            for name in ("auto", "without ga2m")
        }
        for name, (choice, score, times) in rows.items():
            ratio = f"{float(np.median(ratios)):.2f}" if name == "auto" else ""
            print(
                f"| {kind} | {name} | {choice} | {score:.4f} | {float(np.median(times)):.1f} | {ratio} "
                f"| {to_lgbm.get(name, '')} |",
                flush=True,
            )


def c_path_table() -> None:
    """The GA2M pipeline along C on the planted data (see the module docstring)."""
    train, vali, test = synthetic(PLANTED)
    binner = Binner(interactions=10).fit(train[0], train[1], qid=train[2])
    codes = [binner.transform(part[0]) for part in (train, vali, test)]
    print("| loss | C | pairs | vali NDCG@10 | test NDCG@10 | iterations | fit s (timing) |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for loss in (*LOSSES, "pairwise"):
        for C in CS:
            start = time.perf_counter()
            model = SVMMap(C=C, loss=loss).fit(codes[0], train[1], qid=train[2])
            seconds = time.perf_counter() - start
            vali_score = ndcg(vali[1], model.predict(codes[1]), vali[2], k=10)
            test_score = ndcg(test[1], model.predict(codes[2]), test[2], k=10)
            print(
                f"| {loss} | {C:g} | {binner.interactions_} | {vali_score:.4f} | {test_score:.4f} "
                f"| {model.n_iter_} | {seconds:.1f} |",
                flush=True,
            )


def cost_table(sizes: List[int]) -> None:
    print(
        "| documents | features | candidate pairs | per-feature pipeline s (timing) | GA2M pipeline s (timing) "
        "| of which pair selection s (timing) | ratio (timing) | codes MB, per feature | codes MB, GA2M |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n_docs in sizes:
        X, y, qid = make_ranking(
            n_queries=max(1, n_docs // 120), docs_per_query=120, n_features=136, interactions=3, random_state=5
        )
        figures = []
        for interactions in (None, 10):
            start = time.perf_counter()
            binner = Binner(interactions=interactions).fit(X, y, qid=qid)
            selected = time.perf_counter()
            B = binner.transform(X)
            SVMMap(C=1.0).fit(B, y, qid=qid)
            figures.append((time.perf_counter() - start, selected - start, B.nbytes / 1e6))
            del B
        (plain, plain_bin, plain_mb), (ga2m, ga2m_bin, ga2m_mb) = figures
        print(
            f"| {X.shape[0]:,} | 136 | 9,180 | {plain:.1f} | {ga2m:.1f} | {ga2m_bin - plain_bin:.1f} "
            f"| {ga2m / plain:.1f} | {plain_mb:.1f} | {ga2m_mb:.1f} |",
            flush=True,
        )
        del X, y, qid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", default="1,2,3,4,5", help="MQ2008 folds (default all five)")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--synthetic-only", action="store_true")
    only.add_argument("--mq2008-only", action="store_true")
    only.add_argument("--cost", action="store_true", help="the cost table only")
    only.add_argument(
        "--table", action="store_true", help="per feature, GA2M and LightGBM (with and without a GAM constraint)"
    )
    only.add_argument(
        "--search", action="store_true", help="SVMMapCV(preprocessing='auto') with and without the ga2m candidate"
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats of each search (--search)")
    parser.add_argument("--kinds", default="planted,none", help="synthetic data of --search: planted, none or both")
    only.add_argument("--c-path", action="store_true", help="the GA2M pipeline along C on the planted data")
    only.add_argument(
        "--small", action="store_true", help="MQ2008 with a few training queries: per feature against the GA2M"
    )
    parser.add_argument("--draws", type=int, default=3, help="training-query draws per fold (--small)")
    parser.add_argument("--queries", type=int, default=30, help="training queries per draw (--small)")
    parser.add_argument(
        "--cost-docs", default="100000,1000000", help="documents of the cost table's rows (comma-separated)"
    )
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__)
    warnings.simplefilter("ignore")
    if args.table:
        where_table([int(f) for f in args.folds.split(",")])
        return
    if args.search:
        search_table(args.repeats, args.kinds.split(","))
        return
    if args.c_path:
        c_path_table()
        return
    if args.small:
        small_table([int(f) for f in args.folds.split(",")], args.draws, args.queries)
        return
    if args.cost:
        cost_table([int(n) for n in args.cost_docs.split(",")])
        return
    if not args.mq2008_only:
        synthetic_table()
    if not args.synthetic_only:
        if not args.mq2008_only:
            print()
        mq2008_table([int(f) for f in args.folds.split(",")])


if __name__ == "__main__":
    main()
