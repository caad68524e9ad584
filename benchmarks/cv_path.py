"""Choosing C: SVMMapCV's warm-started C path against independent fits, in the same run (issue 16).

    python benchmarks/cv_path.py                   # MQ2008 Fold 1, normalized and raw scale
    python benchmarks/cv_path.py --folds 1,2,3,4,5 --repeat 3
    python benchmarks/cv_path.py --folds 1,2,3,4,5 --repeat 1 --confirm   # the confirmed path
    python benchmarks/cv_path.py --eps 1e-4         # a tighter certificate
    python benchmarks/cv_path.py --path             # one path on all of train.txt, per C

For each MQ2008 training fold (train.txt; Fold 1 has 471 queries, 9,630 documents and 46
features), C in {0.01, 0.1, 1, 10, 100, 1000} is chosen by 5-fold query-grouped
cross-validation (svmmap's QueryKFold on the query ids, the folds of SVMMapCV(cv=5), which do not
depend on the scikit-learn version; the same splits for both ways):

warm         SVMMapCV(Cs, cv=splits, refit=False): per split, one path from the smallest C to
             the largest, each C started from the previous one's working set and iterate.
confirmed    The same with confirm_tolerance=0.02: the values of C within 0.02 of the best
             on the warm path are refitted from scratch on every split and chosen on those.
independent  SVMMap(C).fit on every split for every C (what a loop over C, or GridSearchCV,
             does), scored with the same metric and mean over splits.

Both at the same eps (1e-3 by default), once on the normalized features and once on the raw-scale
variant of issue 15 (each column multiplied by 10 ** rng.uniform(-2, 3), with
rng = numpy.random.default_rng(0)). Reported: wall time (best of --repeat, fits and
validation scoring included), iterations and oracle passes summed over splits and Cs, the
mean validation MAP per C of both ways and the largest difference between them, and the C
each way chooses by choose_C's rule (the smallest C with the best mean score; and the smallest
C within 0.01 of the best, the tie rule that absorbs the solver's tolerance), and the MAP on
the fold's test.txt of SVMMap refitted on all of train.txt at the C chosen by the first rule.
Timings depend on the load of the machine; compare the two ways within one run.

Printed (the tables of docs/benchmarks.md): by default the warm path against the independent
fits (time and passes per fold, validation MAP per C of the first fold, test MAP at each way's
choice); with --confirm the confirmed path against the independent fits. The per-way lines of
the run go to stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import svmmap.estimator as estimator
import tables  # benchmarks/tables.py, beside this script
from svmmap import SVMMap, SVMMapCV
from svmmap._search.selection import choose_C
from svmmap.datasets import load_mq2008
from svmmap.metrics import per_query
from svmmap.model_selection import QueryKFold

CS = [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
TOLERANCES = (0.0, 0.01)

_core_fit = estimator._core.fit_path
_passes: list = []


def _counting_fit(*args, **kwargs):
    """The core's fit, recording each fit's (iterations, oracle passes)."""
    path = _core_fit(*args, **kwargs)
    _passes.extend((summary.n_iter, summary.n_evals) for _, summary in path)
    return path


estimator._core.fit_path = _counting_fit


def warm(X, y, qid, splits, eps, confirm=None):
    start = time.perf_counter()
    cv = SVMMapCV(Cs=CS, cv=splits, refit=False, eps=eps, confirm_tolerance=confirm).fit(X, y, qid=qid)
    seconds = time.perf_counter() - start
    r = cv.cv_results_
    n_iter = int(round(float(np.sum(r["mean_n_iter"])) * len(splits)))
    return seconds, n_iter, int(np.sum(r["total_n_evals"])), r["mean_test_score"]


def confirmed(X, y, qid, splits, eps):
    """The warm path with the near-best values of C refitted cold (confirm_tolerance=0.02)."""
    return warm(X, y, qid, splits, eps, confirm=0.02)


def independent(X, y, qid, splits, eps):
    _passes.clear()
    start = time.perf_counter()
    means = []
    for C in CS:
        scores = []
        for train, test in splits:
            model = SVMMap(C=C, eps=eps).fit(X[train], y[train], qid=qid[train])
            scores.append(per_query("map", y[test], model.predict(X[test]), qid[test]).mean())
        means.append(float(np.mean(scores)))
    seconds = time.perf_counter() - start
    return seconds, sum(i for i, _ in _passes), sum(e for _, e in _passes), np.array(means)


def chosen(means, tolerance):
    return choose_C(CS, lambda C: (float(means[CS.index(C)]), None), tolerance=tolerance).C


def path(fold: int, eps: float) -> None:
    """Iterations and oracle passes per C of one path on all of the fold's train.txt, warm
    started and cold, with the objectives' difference against C * eps."""
    from svmmap import _core
    from svmmap._validation import check_matrix, check_qid

    X, y, qid = load_mq2008(fold, "train")
    factors = 10 ** np.random.default_rng(0).uniform(-2, 3, X.shape[1])
    codes, uniques = check_qid(qid, len(y))
    config = _core.TrainConfig(eps=eps)
    for scale, data in (("normalized", X), ("raw scale", X * factors)):
        core, _, _ = check_matrix(data)
        runs = {w: _core.fit_path(core, y, codes, len(uniques), config, CS, warm=w) for w in (False, True)}
        print(f"Fold{fold} {scale}: C, then (iterations, passes) cold and warm, |P_warm - P_cold| / (C eps)")
        for i, C in enumerate(CS):
            (_, cold), (_, warm) = runs[False][i], runs[True][i]
            diff = abs(warm.primal - cold.primal) / (C * eps)
            print(
                f"  C={C:<7g} cold ({cold.n_iter:3d}, {cold.n_evals:3d})  warm ({warm.n_iter:3d}, {warm.n_evals:3d})  {diff:.2f}"
            )
        total = [sum(s.n_evals for _, s in runs[w]) for w in (False, True)]
        print(f"  passes: cold {total[0]}, warm {total[1]} ({total[1] / total[0]:.2f})")


def fold_runs(args, ways) -> list:
    """Per fold and feature scale: (fold, scale, {way: (seconds, iterations, passes, mean
    validation MAP per C, test MAP of the refit at the chosen C)}), best of --repeat timings.
    The per-way lines go to stderr as the script runs (stdout is the tables)."""
    factors = 10 ** np.random.default_rng(0).uniform(-2, 3, 46)
    out = []
    for fold in [int(f) for f in args.folds.split(",")]:
        X, y, qid = load_mq2008(fold, "train")
        Xt, yt, qt = load_mq2008(fold, "test")
        splits = list(QueryKFold(n_splits=5).split(X, y, groups=qid))
        for scale, data, test in (("normalized", X, Xt), ("raw scale", X * factors, Xt * factors)):
            rows = {}
            for name in ways:
                way = WAYS[name]
                runs = [way(data, y, qid, splits, args.eps) for _ in range(args.repeat)]
                seconds, n_iter, n_evals, means = min(runs, key=lambda r: r[0])
                refit = SVMMap(C=chosen(means, 0.0), eps=args.eps).fit(data, y, qid=qid)
                rows[name] = (seconds, n_iter, n_evals, means, refit.score(test, yt, qt))
                print(
                    f"Fold{fold} {scale:10s} {name:12s} {seconds:8.2f}s {n_iter:6d} iterations {n_evals:7d} passes  "
                    + " ".join(f"{m:.4f}" for m in means),
                    file=sys.stderr,
                    flush=True,
                )
            out.append((fold, scale, rows))
    return out


def path_tables(runs: list) -> str:
    """Warm path against independent fits: time and passes per fold, the mean validation MAP
    per C of the first fold, and the test MAP at the C each way chose."""
    lines = [
        "| fold, features | warm (s) | independent (s) | time ratio | warm passes | independent passes | pass ratio "
        "| largest MAP difference |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    total = {"warm": [0.0, 0], "independent": [0.0, 0]}
    for fold, scale, rows in runs:
        w, i = rows["warm"], rows["independent"]
        for name in total:
            total[name][0] += rows[name][0]
            total[name][1] += rows[name][2]
        lines.append(
            f"| {fold}, {scale} | {w[0]:.2f} | {i[0]:.2f} | {w[0] / i[0]:.2f} | {w[2]:,} | {i[2]:,} "
            f"| {w[2] / i[2]:.2f} | {np.max(np.abs(w[3] - i[3])):.4f} |"
        )
    (ws, wp), (is_, ip) = total["warm"], total["independent"]
    lines.append(f"| all | {ws:.2f} | {is_:.2f} | {ws / is_:.2f} | {wp:,} | {ip:,} | {wp / ip:.2f} | |")

    first = runs[0][0]
    lines += [
        "",
        "| features | way | C = " + " | ".join(f"{c:g}" for c in CS) + " | chosen (best) | chosen (within 0.01) |",
        "|---|---|" + "---:|" * (len(CS) + 2),
    ]
    for fold, scale, rows in runs:
        if fold != first:
            continue
        for name in ("warm", "independent"):
            means = rows[name][3]
            lines.append(
                f"| {scale} | {name} | "
                + " | ".join(f"{m:.4f}" for m in means)
                + f" | {chosen(means, 0.0):g} | {chosen(means, 0.01):g} |"
            )

    folds = list(dict.fromkeys(fold for fold, _, _ in runs))
    lines += [
        "",
        "| features | way | " + " | ".join(f"Fold {f}" for f in folds) + " | mean |",
        "|---|---|" + "---:|" * (len(folds) + 1),
    ]
    for scale in ("normalized", "raw scale"):
        by_way = {}
        for name in ("warm", "independent"):
            picked = [(chosen(rows[name][3], 0.0), rows[name][4]) for _, sc, rows in runs if sc == scale]
            by_way[name] = picked
        # Where both ways chose the same C on every fold their refits are the same model: one row.
        same = [c for c, _ in by_way["warm"]] == [c for c, _ in by_way["independent"]]
        for name, label in (("warm", "both"),) if same else (("warm", "warm"), ("independent", "independent")):
            picked = by_way[name]
            Cs = ", ".join(f"{c:g}" for c, _ in picked)
            maps = [m for _, m in picked]
            lines.append(
                f"| {scale} | {label} (C = {Cs}) | "
                + " | ".join(f"{m:.4f}" for m in maps)
                + f" | {np.mean(maps):.4f} |"
            )
    return "\n".join(lines)


def confirm_table(runs: list) -> str:
    """The warm path with confirm_tolerance=0.02 against independent fits: time, passes and
    whether both choose the same C (best score)."""
    lines = [
        "| fold, features | confirmed (s) | independent (s) | time ratio | confirmed passes | independent passes "
        "| pass ratio | same choice as independent |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    total = {"confirmed": [0.0, 0], "independent": [0.0, 0]}
    agree = 0
    for fold, scale, rows in runs:
        c, i = rows["confirmed"], rows["independent"]
        for name in total:
            total[name][0] += rows[name][0]
            total[name][1] += rows[name][2]
        mine, theirs = chosen(c[3], 0.0), chosen(i[3], 0.0)
        agree += mine == theirs
        same = f"yes ({mine:g})" if mine == theirs else f"no ({mine:g} against {theirs:g})"
        lines.append(
            f"| {fold}, {scale} | {c[0]:.2f} | {i[0]:.2f} | {c[0] / i[0]:.2f} | {c[2]:,} | {i[2]:,} "
            f"| {c[2] / i[2]:.2f} | {same} |"
        )
    (cs, cp), (is_, ip) = total["confirmed"], total["independent"]
    lines.append(
        f"| all | {cs:.2f} | {is_:.2f} | {cs / is_:.2f} | {cp:,} | {ip:,} | {cp / ip:.2f} | {agree} of {len(runs)} |"
    )
    return "\n".join(lines)


WAYS = {"warm": warm, "confirmed": confirmed, "independent": independent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", default="1", help="comma-separated MQ2008 folds (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timings (default 3)")
    parser.add_argument("--eps", type=float, default=1e-3, help="the solver's tolerance (default 1e-3)")
    parser.add_argument("--path", action="store_true", help="only one path per fold on all of train.txt")
    parser.add_argument(
        "--confirm",
        action="store_true",
        help="the warm path with confirm_tolerance=0.02 against independent fits (default: the warm path alone)",
    )
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__, None)
    warnings.simplefilter("ignore")
    if args.path:
        for fold in [int(f) for f in args.folds.split(",")]:
            path(fold, args.eps)
        return
    print(f"C grid {CS}, 5 query-grouped splits, eps={args.eps:g}, best of {args.repeat}", file=sys.stderr)
    if args.confirm:
        print(confirm_table(fold_runs(args, ("confirmed", "independent"))))
    else:
        print(path_tables(fold_runs(args, ("warm", "independent"))))


if __name__ == "__main__":
    main()
