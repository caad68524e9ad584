"""Fusion of retrieval runs built from MQ2008's retrieval-function features.

MQ2008 (LETOR 4.0) scores each judged document with TF-IDF, BM25 and three smoothed language
models (LMIR.ABS, LMIR.DIR, LMIR.JM), each on five streams (body, anchor, title, URL, whole
document): 25 retrieval functions, base functions in the sense of Yue et al. (2007), who fused
Indri's TFIDF, Okapi and language-model scores. This script

1. writes one TREC run per retrieval function for all 784 queries (docno from the
   ``#docid = ...`` comments, the feature value as score) and qrels from the labels;
2. fuses them with ``svmmap fuse`` (binned scores, SVM-map, 5 folds over queries, C chosen by
   an inner 3-fold cross-validation, every query scored by a model that never saw it);
3. evaluates every input run, the fused run and the unsupervised fusions of the same runs
   (CombSUM and CombMNZ on scores min-max normalized per query, reciprocal rank fusion with
   k = 60: ``svmmap.ir.fusion.comb_sum``, ``comb_mnz``, ``reciprocal_rank_fusion``) with
   pytrec_eval, on the queries that have a relevant document, and compares the fused run with
   each of them per query (wins/losses, two-sided Wilcoxon signed-rank test).

The best single run is chosen with hindsight on the very queries it is evaluated on, which
favours it. Run from the repository root:

    python examples/mq2008_fusion.py [--out-dir DIR] [--depth K] [--thresholds 50] [--C 0.01,0.1,1,10]
    python examples/mq2008_fusion.py --write   # the table of docs/guide/fusion.md

``--depth K`` keeps only each run's top K documents per query, so that runs miss documents as
real runs do (a missing document then gets the missing-value indicator).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out-dir",
        default=None,
        help="where to write the runs, qrels and the fused run (default: a temporary directory)",
    )
    parser.add_argument("--depth", type=int, default=None, help="keep each run's top K documents per query")
    parser.add_argument("--thresholds", type=int, default=50)
    parser.add_argument("--C", default="0.01,0.1,1,10")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    # --write puts the table into its block of docs/guide/fusion.md (benchmarks/tables.py).
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import tables

    tables.add_arguments(parser)
    args = parser.parse_args()
    if args.note is None:
        args.note = "evaluated with pytrec_eval"
    tables.write_on_exit(args, __file__, None)

    import pytrec_eval
    from svmmap.cli import main as svmmap_main
    from svmmap.datasets import LETOR4_RETRIEVAL_FUNCTIONS, load_mq2008_docs
    from svmmap.ir.fusion import comb_mnz, comb_sum, qrels_from_labels, reciprocal_rank_fusion, runs_from_features
    from svmmap.ir.protocol import paired_comparison
    from svmmap.ir.trec import read_run, write_qrels, write_run

    out_dir = args.out_dir or tempfile.mkdtemp(prefix="mq2008-fusion-")
    os.makedirs(out_dir, exist_ok=True)
    X, y, qid, docno = load_mq2008_docs()
    runs = runs_from_features(X, qid, docno, LETOR4_RETRIEVAL_FUNCTIONS, depth=args.depth)
    qrels = qrels_from_labels(qid, docno, y)
    paths = []
    for run in runs:
        path = os.path.join(out_dir, f"{run.name}.run")
        write_run(path, run, tag=run.name)
        paths.append(path)
    qrels_path = os.path.join(out_dir, "qrels.txt")
    write_qrels(qrels_path, qrels)
    fused_path = os.path.join(out_dir, "fused.run")
    print(f"{len(runs)} runs and qrels for {len(np.unique(qid))} queries written to {out_dir}", file=sys.stderr)

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # the CLI's own table; ours follows
        code = svmmap_main(
            [
                "fuse",
                "--qrels",
                qrels_path,
                "--runs",
                *paths,
                "--out",
                fused_path,
                "--folds",
                str(args.folds),
                "--C",
                args.C,
                "--thresholds",
                str(args.thresholds),
                "--seed",
                str(args.seed),
                "-q",
            ]
        )
    seconds = time.perf_counter() - start
    if code:
        sys.exit(code)

    # Independent evaluation with pytrec_eval (trec_eval's code).
    judgments = qrels.to_dict()
    evaluator = pytrec_eval.RelevanceEvaluator(judgments, {"map"})
    with_rel = sorted(q for q, docs in judgments.items() if any(r >= 1 for r in docs.values()))

    def per_query(run_dict):
        result = evaluator.evaluate(run_dict)
        return np.asarray([result.get(q, {"map": 0.0})["map"] for q in with_rel])

    fused = per_query(read_run(fused_path).to_dict())
    singles = {os.path.basename(p)[: -len(".run")]: per_query(read_run(p).to_dict()) for p in paths}
    unsupervised = [
        ("CombSUM (min-max)", comb_sum(runs)),
        ("CombMNZ (min-max)", comb_mnz(runs)),
        ("RRF (k=60)", reciprocal_rank_fusion(runs)),
    ]

    best = max(singles, key=lambda n: singles[n].mean())
    rows = [("fused (SVM-map, held-out)", fused)] + [(name, per_query(run.to_dict())) for name, run in unsupervised]
    rows += sorted(singles.items(), key=lambda kv: -kv[1].mean())[:5]
    print(
        f"MQ2008, {len(runs)} runs{'' if args.depth is None else f' cut at depth {args.depth}'}, "
        f"{len(with_rel)} queries with a relevant document (pytrec_eval MAP); fusion took {seconds:.0f}s\n"
    )
    print("| run | MAP | W/L (fused vs run) | p (Wilcoxon) |")
    print("|---|---:|---:|---:|")
    for name, values in rows:
        if values is fused:
            print(f"| **{name}** | **{values.mean():.4f}** | – | – |")
            continue
        c = paired_comparison(fused, values)
        label = f"{name} (best single run)" if name == best else name
        print(
            f"| {label} | {values.mean():.4f} | {c.wins}/{c.losses}{' **' if c.significant else ''} | {c.p_value:.2g} |"
        )
    print(f"\n(top 5 of {len(runs)} single runs shown; ** p < 0.05)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
