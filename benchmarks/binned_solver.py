"""Binned models against C (issue 26): iterations and time of binned and linear fits per C,
with the 1-slack model (one cut per iteration, the default) and with cut blocks (one cut per
block of queries per iteration, ``Options::cut_blocks``), all in one run.

    python benchmarks/binned_solver.py                          # make_ranking, blocks 1, 4, 16
    python benchmarks/binned_solver.py --data mq2008 --blocks 1,4
    python benchmarks/binned_solver.py --budget 30 --json out.json
    python benchmarks/binned_solver.py --sizes 300,1000,3000,10000

Data:

make_ranking  make_ranking(300, 30, 20, random_state=0) (300 queries of 30 documents, 20
              features); binned: Binner(n_thresholds=50), 1,000 indicator columns.
mq2008        MQ2008 Fold 1 train.txt (9,630 documents, 46 features), each column multiplied
              by 10 ** uniform(-2, 3) (numpy.random.default_rng(0)) as in benchmarks/solver.py;
              binned: Binner(n_thresholds=50) (binning ignores the rescaling).

For every C in --cs and every cut-block count in --blocks, ``SVMMap(loss=--loss, eps=1e-3)``
is fitted on the linear and on the binned features through the core's
``svmmap._core.fit_path`` with the configuration of ``SVMMap(..., cut_blocks=k)``, inputs
prepared as ``SVMMap.fit`` prepares them. Reported: iterations, oracle passes, seconds, the
share of them in the working-set QP, and the primal objective's difference from the 1-slack
fit's in units of C * eps (each fit is certified within C * eps of the optimum, so two fits
may differ by up to 1). A fit still running after --budget seconds is stopped (the callback)
and its iterations are marked with ">". The last section fits the whole C path warm-started
(what ``SVMMapCV`` does per fold) on both feature sets for every cut-block count (--budget
seconds for the whole path). The last times the whole search, ``SVMMapCV(Cs=--cs, cv=5)``
with its defaults (one cut block) on both feature sets, best of --cv-repeat fits: issue 26's
item 2 compares the two.

With --sizes N1,N2,... only one table is made: for make_ranking(N, 30, 20, random_state=0) at
each N, the binned and linear iterations at every C with the default solver and the whole
SVMMapCV search's seconds on both (best of --cv-repeat), to show how the gap depends on the
training data per indicator column.

Iteration and pass counts are deterministic; seconds depend on the load of the machine, so
compare them only as ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import tables  # benchmarks/tables.py, beside this script
from svmmap import Binner, SVMMap, SVMMapCV, _core
from svmmap._validation import check_labels, check_matrix, check_qid
from svmmap.datasets import load_mq2008, make_ranking


def load(name):
    """(linear X, binned X, its number of indicator columns, y, qid) of one data set."""
    if name == "make_ranking":
        X, y, qid = make_ranking(300, 30, 20, random_state=0)
    else:
        X, y, qid = load_mq2008(fold=1, split="train")
        rng = np.random.default_rng(0)
        X = X * (10 ** rng.uniform(-2, 3, size=X.shape[1]))
    binner = Binner(n_thresholds=50).fit(X)
    return X, binner.transform(X), binner.n_output_features_, y, qid


def fit_path(X, y, qid, cs, loss, blocks=1, warm=False, budget=None):
    """The core's fits at every C of cs; returns the list of summaries and the seconds."""
    stopped = []

    def callback(record):
        if budget is not None and time.perf_counter() - start > budget:
            stopped.append(record["iteration"])
            return True
        return False

    config = SVMMap(C=cs[0], loss=loss, eps=1e-3, cut_blocks=blocks)._config()
    core_X, n_rows, _ = check_matrix(X)
    labels = check_labels(y, n_rows)
    codes, uniques = check_qid(qid, n_rows, required_by="SVMMap.fit")
    start = time.perf_counter()
    path = _core.fit_path(core_X, labels, codes, len(uniques), config, cs, warm=warm, callback=callback)
    return [s for _, s in path], time.perf_counter() - start, bool(stopped)


def cv_seconds(X, y, qid, cs, loss, repeat):
    """The best of `repeat` wall times of SVMMapCV(Cs=cs, cv=5).fit, and the C it chose."""
    best, chosen = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        search = SVMMapCV(Cs=cs, loss=loss, eps=1e-3).fit(X, y, qid=qid)
        best = min(best, time.perf_counter() - start)
        chosen = search.best_estimator_.C
    return best, chosen


def by_size(sizes, cs, args):
    """Binned against linear with the default solver on make_ranking(n, 30, 20) for each n of
    `sizes`: the iterations at every C and the whole SVMMapCV search's seconds."""
    print(
        "Binned / linear iterations per C with the default solver, and the SVMMapCV(cv=5) search, by training size:\n"
    )
    head = " | ".join(f"C = {c:g}" for c in cs)
    print(f"| queries | documents | {head} | SVMMapCV linear, binned (timing) | binned / linear (timing) |")
    print("|" + "---|" * (len(cs) + 4))
    for n in sizes:
        X, y, qid = make_ranking(n, 30, 20, random_state=0)
        B = Binner(n_thresholds=50).fit(X).transform(X)
        cells = []
        for c in cs:
            iters = [SVMMap(C=c, loss=args.loss, eps=1e-3).fit(M, y, qid=qid).n_iter_ for M in (B, X)]
            cells.append(f"{iters[0]} / {iters[1]} ({iters[0] / iters[1]:.1f}x)")
        linear, _ = cv_seconds(X, y, qid, cs, args.loss, args.cv_repeat)
        binned, _ = cv_seconds(B, y, qid, cs, args.loss, args.cv_repeat)
        print(
            f"| {n:,} | {X.shape[0]:,} | {' | '.join(cells)} | {linear:.2f} s, {binned:.2f} s | {binned / linear:.1f} |",
            flush=True,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", choices=["make_ranking", "mq2008"], default="make_ranking")
    parser.add_argument("--cs", default="0.01,0.1,1,10,100,1000")
    parser.add_argument("--blocks", default="1,4,16")
    parser.add_argument("--loss", default="map")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds after which a fit is stopped")
    parser.add_argument("--cv-repeat", type=int, default=3, help="SVMMapCV fits per feature set (best taken)")
    parser.add_argument(
        "--sizes",
        help="only the table by training size: make_ranking with these numbers of queries (e.g. 300,3000)",
    )
    parser.add_argument("--json", help="also write the rows to this file")
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__)
    warnings.simplefilter("ignore")
    cs = [float(c) for c in args.cs.split(",")]
    if args.sizes:
        by_size([int(n) for n in args.sizes.split(",")], cs, args)
        return
    blocks = [int(k) for k in args.blocks.split(",")]
    X, B, n_columns, y, qid = load(args.data)
    print(f"{args.data}: {X.shape[0]} documents, {X.shape[1]} features, {n_columns} binned columns")
    print(f"loss={args.loss}, eps=1e-3, budget {args.budget:g} s per fit; seconds are of one loaded run\n")
    rows = []
    print(
        "| C | features | cut blocks | iterations | passes | active cuts | seconds (timing) | QP share (timing) | primal - 1-slack's, in C eps |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for c in cs:
        for name, M in (("linear", X), ("binned", B)):
            base = None
            for k in blocks:
                (s,), seconds, stopped = fit_path(M, y, qid, [c], args.loss, blocks=k, budget=args.budget)
                if base is None:
                    base = s.primal
                diff = (s.primal - base) / (c * 1e-3)
                iters = f">{s.n_iter}" if stopped else str(s.n_iter)
                share = s.qp_seconds / seconds if seconds > 0 else 0.0
                print(
                    f"| {c:g} | {name} | {k} | {iters} | {s.n_evals} | {s.active_cuts} | {seconds:.2f} | {share:.0%} | {diff:+.2f} |",
                    flush=True,
                )
                rows.append(
                    dict(
                        C=c,
                        features=name,
                        blocks=k,
                        n_iter=s.n_iter,
                        passes=s.n_evals,
                        active_cuts=s.active_cuts,
                        seconds=seconds,
                        qp_seconds=s.qp_seconds,
                        primal=s.primal,
                        stopped=stopped,
                    )
                )
    print("\nThe C path, warm-started (what SVMMapCV fits per fold):\n")
    print("| features | cut blocks | iterations per C | passes | seconds (timing) |")
    print("|---|---|---|---|---|")
    for name, M in (("linear", X), ("binned", B)):
        for k in blocks:
            path, seconds, stopped = fit_path(M, y, qid, cs, args.loss, blocks=k, warm=True, budget=args.budget)
            iters = ", ".join(str(s.n_iter) for s in path) + (" (stopped)" if stopped else "")
            passes = sum(s.n_evals for s in path)
            print(f"| {name} | {k} | {iters} | {passes} | {seconds:.2f} |", flush=True)
            rows.append(dict(path=name, blocks=k, n_iter=[s.n_iter for s in path], passes=passes, seconds=seconds))
    print(f"\nSVMMapCV(Cs=--cs, cv=5) with the default solver, SVMMapCV.fit wall time, best of {args.cv_repeat}:\n")
    print("| features | chosen C | seconds (timing) | binned / linear (timing) |")
    print("|---|---|---|---|")
    linear_seconds = None
    for name, M in (("linear", X), ("binned", B)):
        best, chosen = cv_seconds(M, y, qid, cs, args.loss, args.cv_repeat)
        linear_seconds = linear_seconds or best
        print(f"| {name} | {chosen:g} | {best:.2f} | {best / linear_seconds:.1f} |", flush=True)
        rows.append(dict(search=name, seconds=best, C=chosen))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
