"""Does each loss train what it names? Training and test NDCG@10 of loss="ndcg@10" against loss="map".

For every C of a grid and every loss, a model is trained on the training queries and evaluated
on the training and the test queries with svmmap.metrics' NDCG@10 (graded gain 2^label - 1,
1/log2(1 + rank), queries without a relevant document skipped, ties pessimistic) and MAP. The
table also shows the mean structural hinge of the training queries at the solution,
(objective_ - 1/2 |w|^2) / C = 1/n sum_q xi_q: near 1, the constraints are hardly met at all,
and the binary NDCG@10 (gain 1 for every label > 0), the measure that loss="ndcg@10" optimizes.

Data:
- mq2008: the five MQ2008 folds, train -> test (about 20 documents and 4 relevant per query).
- synthetic: svmmap.datasets.make_ranking with MSLR's label distribution (about half of the
  documents relevant, so tens of relevant documents per query), queries split 1:1 into train
  and test.

Usage: python benchmarks/ndcg_vs_map.py [--data mq2008,synthetic] [--losses map,ndcg@10]
       [--C 0.1,1,10,100,1000]
       python benchmarks/ndcg_vs_map.py --table guide [--write]   # the table of docs/guide/losses.md
A loss written "ndcg@10/1" is trained with relevance_threshold=1 (labels 2 and up relevant),
"ndcg@10*N" with the feature map scaled per query (see psi_scaled).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np
import tables  # benchmarks/tables.py, beside this script
from svmmap import SVMMap
from svmmap.datasets import load_mq2008, make_ranking
from svmmap.estimator import SkippedQueriesWarning
from svmmap.metrics import per_query

Split = Tuple[np.ndarray, np.ndarray, np.ndarray]


def mq2008(fold: int) -> Tuple[Split, Split]:
    return load_mq2008(fold=fold, split="train"), load_mq2008(fold=fold, split="test")


def synthetic(seed: int, n_queries: int = 300, docs: float = 60, n_features: int = 30) -> Tuple[Split, Split]:
    """make_ranking's queries split 1:1 into train and test (its hidden utility is shared)."""
    data = make_ranking(n_queries, docs, n_features, random_state=seed, dtype=np.float64)
    queries = np.unique(data.qid)
    train_q = np.random.default_rng(seed).permutation(queries)[: len(queries) // 2]
    train = np.isin(data.qid, train_q)
    return ((data.X[train], data.y[train], data.qid[train]), (data.X[~train], data.y[~train], data.qid[~train]))


def psi_scaled(X: np.ndarray, y: np.ndarray, q: np.ndarray, rule: str, k: int) -> np.ndarray:
    """X with the rows of every query multiplied by lambda_q > 0 (see `evaluate`).

    Psi_po is linear in the documents, so training on lambda_q x is training with the feature
    map lambda_q Psi_po(x, y) and an unchanged loss (the oracle stays exact), and w ranks the
    unscaled documents of a query in the same order. Rules, with P and N the relevant and
    non-relevant documents of the query: "N": N / min(k, N), so that the ranking of largest
    NDCG@k loss with fewest swapped pairs (min(k, N) non-relevant documents above all P relevant
    ones) weighs 2 in Psi, as ROC area's ranking of loss 1 does; "P": P / min(k, P); "PN": both.
    """
    out = X.astype(np.float64, copy=True)
    for query in np.unique(q):
        rows = q == query
        p = int((y[rows] > 0).sum())
        n = int(rows.sum()) - p
        if p == 0 or n == 0:
            continue
        lam = {"N": n / min(k, n), "P": p / min(k, p), "PN": p * n / (min(k, p) * min(k, n))}[rule]
        out[rows] *= lam
    return out


def evaluate(loss: str, C: float, train: Split, test: Split) -> Dict[str, float]:
    """Trains `loss`: "name", "name/threshold" (a relevance threshold other than 0) or
    "name*rule" (Psi scaled per query by a rule of `psi_scaled`, for ndcg@k)."""
    name, _, rule = loss.partition("*")
    name, _, threshold = name.partition("/")
    X = train[0]
    if rule:
        X = psi_scaled(X, train[1], train[2], rule, int(name.split("@")[1]))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        model = SVMMap(C=C, loss=name, relevance_threshold=float(threshold or 0.0))
        model.fit(X, train[1], qid=train[2])
    seconds = time.perf_counter() - start
    w = model.coef_
    out = {
        "hinge": (model.objective_ - 0.5 * float(w @ w)) / C,
        "n_iter": float(model.n_iter_),
        "seconds": seconds,
    }
    for name, (X, y, q) in (("train", train), ("test", test)):
        s = X @ w
        out[f"{name} ndcg@10"] = float(per_query("ndcg@10", y, s, q).mean())
        out[f"{name} map"] = float(per_query("map", y, s, q).mean())
        # The NDCG@10 that the ndcg@10 loss sees: binary gains (label > 0).
        out[f"{name} binary ndcg@10"] = float(per_query("ndcg@10", (y > 0).astype(float), s, q).mean())
    return out


def describe(name: str, train: Split) -> str:
    _, y, q = train
    rel = [(y[q == k] > 0).sum() for k in np.unique(q)]
    sizes = [(q == k).sum() for k in np.unique(q)]
    return (
        f"{name}: {len(sizes)} training queries, {np.mean(sizes):.1f} documents and "
        f"{np.mean(rel):.1f} relevant per query on average (labels {sorted(set(y.tolist()))})"
    )


#: The runs behind the table of docs/guide/losses.md (--table guide): (data, make_ranking's
#: shape, losses, C grid), each as one command of the page's bash block.
GUIDE_RUNS = [
    ("mq2008", None, ["map", "ndcg@10"], [1.0, 10.0, 100.0, 1000.0]),
    ("synthetic", (200, 120.0, 136), ["map", "ndcg@10"], [1.0, 10.0, 100.0, 1000.0]),
    ("synthetic", (200, 120.0, 136), ["dorm@10:depth=30"], [1.0, 10.0]),
    (
        "synthetic",
        (300, 60.0, 30),
        ["map", "ndcg@10", "ndcg@10*N", "ndcg@10*PN", "ndcg@10/1", "ndcg", "pairwise", "dorm@10:depth=30"],
        [1.0, 10.0, 100.0],
    ),
]
GUIDE_LABELS = {
    "ndcg@10*N": "ndcg@10, Psi x N/min(k,N)",
    "ndcg@10*PN": "ndcg@10, Psi x PN/(min(k,P) min(k,N))",
    "ndcg@10/1": "ndcg@10, relevant = label >= 2",
    "ndcg": "ndcg (no clip)",
    "dorm@10:depth=30": "dorm@10:depth=30 (NDCG@10 loss, position-weighted map)",
}


def guide_table(folds: Sequence[int] = (1, 2, 3, 4, 5), seeds: Sequence[int] = (0, 1)) -> str:
    """One table of the GUIDE_RUNS, the values of C of a cell joined by ' / ': means over the
    MQ2008 folds and over the make_ranking seeds."""
    lines = [
        "| data | loss | C | train NDCG@10 | test NDCG@10 | train binary NDCG@10 | mean hinge |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    previous = None
    for data, shape, losses, grid in GUIDE_RUNS:
        if data == "mq2008":
            sets = [mq2008(k) for k in folds]
            name = "MQ2008"
        else:
            sets = [synthetic(s, shape[0], shape[1], shape[2]) for s in seeds]
            name = f"make_ranking({shape[0]}, {shape[1]:g}, {shape[2]})"
        _, y, q = sets[0][0]
        queries = np.unique(q)
        docs = np.mean([(q == k).sum() for k in queries])
        relevant = np.mean([(y[q == k] > 0).sum() for k in queries])
        labels = f", labels {int(y.min())}-{int(y.max())}" if data == "synthetic" else ""
        title = f"{name} ({docs:.1f} documents, {relevant:.1f} relevant per query{labels})"
        for loss in losses:
            means = []
            for C in grid:
                rows = [evaluate(loss, C, tr, te) for tr, te in sets]
                means.append({k: np.mean([r[k] for r in rows]) for k in rows[0]})
            cells = [
                " / ".join(f"{m[key]:{fmt}}" for m in means)
                for key, fmt in (
                    ("train ndcg@10", ".4f"),
                    ("test ndcg@10", ".4f"),
                    ("train binary ndcg@10", ".4f"),
                    ("hinge", ".3f"),
                )
            ]
            shown = "" if title == previous else title
            previous = title
            Cs = " / ".join(f"{C:g}" for C in grid)
            first = f"| {shown} |" if shown else "| |"
            lines.append(f"{first} {GUIDE_LABELS.get(loss, loss)} | {Cs} | " + " | ".join(cells) + " |")
            print(f"{name} {loss} done", file=sys.stderr, flush=True)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="mq2008,synthetic")
    parser.add_argument("--losses", default="map,ndcg@10")
    parser.add_argument("--C", default="0.1,1,10,100,1000")
    parser.add_argument("--folds", default="1,2,3,4,5", help="MQ2008 folds")
    parser.add_argument("--seeds", default="0,1", help="make_ranking seeds (one data set each)")
    parser.add_argument(
        "--shape", default="300,60,30", help="make_ranking's n_queries, docs_per_query, n_features (default 300,60,30)"
    )
    parser.add_argument(
        "--table",
        choices=["guide"],
        default=None,
        help="guide: the table of docs/guide/losses.md (the four runs of its bash block, in one table)",
    )
    tables.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.table == "guide":
        tables.publish(guide_table(), __file__, argv, write=args.write, note=args.note)
        return
    tables.write_on_exit(args, __file__, argv)
    losses = [s.strip() for s in args.losses.split(",")]
    grid = [float(c) for c in args.C.split(",")]
    for data in args.data.split(","):
        if data == "mq2008":
            sets = [mq2008(int(k)) for k in args.folds.split(",")]
        elif data == "synthetic":
            n_queries, docs, n_features = (float(v) for v in args.shape.split(","))
            sets = [synthetic(int(s), int(n_queries), docs, int(n_features)) for s in args.seeds.split(",")]
        else:
            parser.error(f"unknown data {data!r}")
        print(f"\n{describe(data, sets[0][0])}; {len(sets)} splits, means over them\n")
        print(
            "| loss | C | train NDCG@10 | test NDCG@10 | train binary NDCG@10 | test binary NDCG@10 "
            "| train MAP | test MAP | mean hinge | iterations | fit (s) |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for loss in losses:
            for C in grid:
                rows: List[Dict[str, Any]] = [evaluate(loss, C, tr, te) for tr, te in sets]
                m = {k: np.mean([r[k] for r in rows]) for k in rows[0]}
                print(
                    f"| {loss} | {C:g} | {m['train ndcg@10']:.4f} | {m['test ndcg@10']:.4f} | "
                    f"{m['train binary ndcg@10']:.4f} | {m['test binary ndcg@10']:.4f} | "
                    f"{m['train map']:.4f} | {m['test map']:.4f} | {m['hinge']:.3f} | "
                    f"{m['n_iter']:.0f} | {m['seconds']:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
