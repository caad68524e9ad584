"""Choosing C: SVMMapCV's warm-started C path against independent fits, in the same run (issue 16).

    python benchmarks/cv_path.py                   # MQ2008 Fold 1, normalized and raw scale
    python benchmarks/cv_path.py --folds 1,2,3,4,5 --repeat 3
    python benchmarks/cv_path.py --eps 1e-4         # a tighter certificate
    python benchmarks/cv_path.py --path             # one path on all of train.txt, per C

For each MQ2008 training fold (train.txt; Fold 1 has 471 queries, 9,630 documents and 46
features), C in {0.01, 0.1, 1, 10, 100, 1000} is chosen by 5-fold query-grouped
cross-validation (GroupKFold on the query ids; the same splits for both ways):

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
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import svmmap.estimator as estimator
import tables  # benchmarks/tables.py, beside this script
from sklearn.model_selection import GroupKFold
from svmmap import SVMMap, SVMMapCV
from svmmap._selection import choose_C
from svmmap.datasets import load_mq2008
from svmmap.metrics import per_query

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", default="1", help="comma-separated MQ2008 folds (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timings (default 3)")
    parser.add_argument("--eps", type=float, default=1e-3, help="the solver's tolerance (default 1e-3)")
    parser.add_argument("--path", action="store_true", help="only one path per fold on all of train.txt")
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__, None)
    warnings.simplefilter("ignore")
    if args.path:
        for fold in [int(f) for f in args.folds.split(",")]:
            path(fold, args.eps)
        return
    factors = 10 ** np.random.default_rng(0).uniform(-2, 3, 46)
    print(f"C grid {CS}, 5 query-grouped splits, eps={args.eps:g}, best of {args.repeat}")
    header = (
        f"{'data':16s} {'way':12s} {'seconds':>8s} {'iters':>6s} {'passes':>7s}  "
        + "  ".join(f"C={c:g}".rjust(7) for c in CS)
        + "  chosen(0)  chosen(0.01)  test MAP"
    )
    totals = {"warm": [0.0, 0, 0], "confirmed": [0.0, 0, 0], "independent": [0.0, 0, 0]}
    for fold in [int(f) for f in args.folds.split(",")]:
        X, y, qid = load_mq2008(fold, "train")
        Xt, yt, qt = load_mq2008(fold, "test")
        splits = list(GroupKFold(n_splits=5).split(X, y, groups=qid))
        for scale, data, test in (("normalized", X, Xt), ("raw scale", X * factors, Xt * factors)):
            print()
            print(header)
            rows = {}
            for name, way in (("warm", warm), ("confirmed", confirmed), ("independent", independent)):
                runs = [way(data, y, qid, splits, args.eps) for _ in range(args.repeat)]
                best = min(runs, key=lambda r: r[0])
                rows[name] = best
                for i in range(3):
                    totals[name][i] += best[i]
                seconds, n_iter, n_evals, means = best
                refit = SVMMap(C=chosen(means, 0.0), eps=args.eps).fit(data, y, qid=qid)
                print(
                    f"{f'Fold{fold} {scale}':16s} {name:12s} {seconds:8.2f} {n_iter:6d} {n_evals:7d}  "
                    + "  ".join(f"{m:7.4f}" for m in means)
                    + f"  {chosen(means, 0.0):9g}  {chosen(means, 0.01):12g}  {refit.score(test, yt, qt):8.4f}"
                )
            ind = rows["independent"]
            for name in ("warm", "confirmed"):
                w = rows[name]
                print(
                    f"  {name} / independent: time {w[0] / ind[0]:.2f}, passes {w[2] / ind[2]:.2f}; largest MAP "
                    f"difference {np.max(np.abs(w[3] - ind[3])):.4f}"
                )
    ind = totals["independent"]
    print()
    for name in ("warm", "confirmed"):
        w = totals[name]
        print(
            f"all: {name} {w[0]:.2f}s / {w[2]} passes, independent {ind[0]:.2f}s / {ind[2]} passes: "
            f"time {w[0] / ind[0]:.2f}, passes {w[2] / ind[2]:.2f}"
        )


if __name__ == "__main__":
    main()
