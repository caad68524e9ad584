"""Peak resident memory and time of the one call, ``SVMMapCV(loss="auto",
preprocessing="auto")``, against the memory of the data it searches on and against LightGBM's
default fit in the same run (issue 43 item 2: within 1.5x the loaded data, no per-split copy
of X; within 2x LightGBM's time).

    python benchmarks/search_memory.py [--queries 8000] [--train-share 0.6] [--n-jobs 2]
                                       [--lightgbm] [--label after]

The data is ``make_ranking(QUERIES, 120, 136, random_state=0)`` (float32), of which the first
``--train-share`` of the queries is kept (0.6, a LETOR fold's training part: 8000 queries give
about 573,000 documents, the issue's "578k" shape; 31,500 give MSLR-WEB30K's 2.27 million),
generated once and saved to a temporary directory. Each measurement runs in a fresh
interpreter that imports svmmap and scikit-learn (and LightGBM for its fit), notes its
resident memory, loads the saved arrays (``np.load``, no temporary copies), fits and reports
its peak resident memory (``VmHWM``), so that neither the generator's temporaries nor
another measurement count. The table gives the peak against ``X.nbytes`` twice: the whole
process's peak, and the peak less what the interpreter held before the data was loaded
(Python, NumPy, SciPy, scikit-learn and the extension), which is what the fit and its data
add. With ``--lightgbm`` the same is measured for ``LGBMRanker(n_jobs=N_JOBS)`` with its
defaults, and the search's time is given as a ratio to it (the machine may be shared: only
the ratio, measured in the same run, and the load average printed beside it, compare). The
CPU seconds of each fit (``time.process_time``, every thread of its process) are given too, and
their ratio: LightGBM's threads wait for each other when the machine is loaded, so its wall
clock slows more than svmmap's and the wall-clock ratio flatters svmmap there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tables  # noqa: E402  (benchmarks/tables.py, beside this script)


def child(
    directory: str, n_jobs: int, what: str, Cs: Optional[List[float]], refit: bool, max_train_queries: Optional[str]
) -> Dict[str, Any]:
    import sklearn.preprocessing  # noqa: F401  (imported by the search; counted before the data)

    if what == "lightgbm":
        import lightgbm
    else:
        from svmmap import SVMMapCV

    def rss_mb() -> float:
        # The peak resident memory of this process's own address space (VmHWM, in kB): not
        # ru_maxrss, which Linux carries over from the parent's at the fork before exec (the
        # parent held the generated data then).
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024

    before = rss_mb()
    X = np.load(os.path.join(directory, "X.npy"))
    y = np.load(os.path.join(directory, "y.npy"))
    qid = np.load(os.path.join(directory, "qid.npy"))
    loaded = rss_mb()
    start, cpu_start = time.perf_counter(), time.process_time()
    if what == "lightgbm":
        # LightGBM takes query sizes in row order (make_ranking's rows are grouped by query).
        sizes = np.unique(qid, return_counts=True)[1]
        model: Any = lightgbm.LGBMRanker(n_jobs=n_jobs, verbose=-1).fit(X, y.astype(np.int32), group=sizes)
        best: Dict[str, str] = {}
    else:
        grid: Dict[str, Any] = {} if Cs is None else {"Cs": Cs}
        if max_train_queries is not None:
            grid["max_train_queries"] = None if max_train_queries == "none" else int(max_train_queries)
        model = search = SVMMapCV(loss="auto", preprocessing="auto", n_jobs=n_jobs, refit=refit, **grid).fit(
            X, y, qid=qid
        )
        best = {k: str(v) for k, v in search.best_params_.items()}
    seconds = time.perf_counter() - start
    # CPU seconds of every thread of the process: under load a wall clock slows LightGBM's
    # threads, which wait for each other, far more than svmmap's, so CPU time is the fairer ratio.
    cpu = time.process_time() - cpu_start
    peak, x_mb = rss_mb(), X.nbytes / 2**20
    test_ndcg = float("nan")
    if refit:
        from svmmap.metrics import ndcg

        del X
        # The held-out queries (the share of make_ranking's queries not trained on), after the
        # peak was read: NDCG@10 of the fitted model, by svmmap.metrics for both.
        X_test = np.load(os.path.join(directory, "X_test.npy"))
        y_test, qid_test = (
            np.load(os.path.join(directory, "y_test.npy")),
            np.load(os.path.join(directory, "qid_test.npy")),
        )
        if y_test.size:
            test_ndcg = ndcg(y_test, model.predict(X_test), qid_test, k=10)
    return {
        "rows": int(y.shape[0]),
        "x_mb": x_mb,
        "before_mb": before,
        "loaded_mb": loaded,
        "peak_mb": peak,
        "test_ndcg": test_ndcg,
        "seconds": seconds,
        "cpu": cpu,
        "best": best,
    }


def measure(
    directory: str,
    n_jobs: int,
    what: str,
    Cs: Optional[str],
    refit: bool = True,
    max_train_queries: Optional[str] = None,
) -> Dict[str, Any]:
    """``child`` in a fresh interpreter, and the load average at its end."""
    command = [sys.executable, __file__, "--child", directory, "--n-jobs", str(n_jobs), "--what", what]
    command += ([] if Cs is None else ["--Cs", Cs]) + ([] if refit else ["--no-refit"])
    command += [] if max_train_queries is None else ["--max-train-queries", max_train_queries]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    r["load"] = os.getloadavg()[0]
    return r


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=8000)
    parser.add_argument("--train-share", type=float, default=0.6, help="the share of the queries kept")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--lightgbm", action="store_true", help="time LGBMRanker's default fit too")
    parser.add_argument(
        "--Cs",
        help="the C grid, comma-separated (default: the search's); one C fits every candidate on every "
        "split, which makes every per-split matrix and the refit as the full search does, in a fraction of its time",
    )
    parser.add_argument("--no-refit", action="store_true", help="the search alone (refit=False)")
    parser.add_argument(
        "--max-train-queries",
        help="SVMMapCV's max_train_queries (an integer, or none for no limit; default: the search's)",
    )
    parser.add_argument("--label", default="this build", help="the name of the build in the table's first column")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--what", default="svmmap", help=argparse.SUPPRESS)
    tables.add_arguments(parser)
    args = parser.parse_args()
    if args.child:
        Cs = None if args.Cs is None else [float(c) for c in args.Cs.split(",")]
        print(json.dumps(child(args.child, args.n_jobs, args.what, Cs, not args.no_refit, args.max_train_queries)))
        return
    from svmmap.datasets import make_ranking

    with tempfile.TemporaryDirectory() as directory:
        X, y, qid = make_ranking(args.queries, 120, 136, random_state=0)
        # make_ranking's rows come grouped by query, in increasing qid.
        n = (
            int(np.searchsorted(qid, np.unique(qid)[int(args.train_share * args.queries)]))
            if args.train_share < 1
            else len(y)
        )
        for name, array in (("X", X[:n]), ("y", y[:n]), ("qid", qid[:n])):
            np.save(os.path.join(directory, f"{name}.npy"), array)
        for name, array in (("X_test", X[n:]), ("y_test", y[n:]), ("qid_test", qid[n:])):
            np.save(os.path.join(directory, f"{name}.npy"), array)
        del X, y, qid
        lgbm = measure(directory, args.n_jobs, "lightgbm", None) if args.lightgbm else None
        r = measure(directory, args.n_jobs, "svmmap", args.Cs, not args.no_refit, args.max_train_queries)
    best = ", ".join(f"{k}={v}" for k, v in sorted(r["best"].items()))
    if lgbm is None:
        versus, ratio, cpu_versus, cpu_ratio, lgbm_ndcg = "-", "-", "-", "-", "-"
    else:
        versus = f"{lgbm['seconds']:.0f}, {(lgbm['peak_mb'] - lgbm['before_mb']) / lgbm['x_mb']:.2f}"
        ratio = f"{r['seconds'] / lgbm['seconds']:.1f}"
        cpu_versus = f"{lgbm['cpu']:.0f}"
        cpu_ratio = f"{r['cpu'] / lgbm['cpu']:.2f}"
        lgbm_ndcg = f"{lgbm['test_ndcg']:.4f}"
    load = r["load"] if lgbm is None else max(r["load"], lgbm["load"])
    lines = [
        "| build | documents | X (MB) | before the data (MB) | peak RSS (MB) | peak / X.nbytes "
        "| (peak - before) / X.nbytes | time (s, timing) | LightGBM: time (s, timing), (peak - before) / X.nbytes "
        "| time / LightGBM's (timing) | CPU (s, timing) | LightGBM: CPU (s, timing) | CPU / LightGBM's (timing) "
        "| test NDCG@10 | LightGBM: test NDCG@10 | load average (timing) | chosen |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        f"| {args.label} | {r['rows']} | {r['x_mb']:.0f} | {r['before_mb']:.0f} | {r['peak_mb']:.0f} "
        f"| {r['peak_mb'] / r['x_mb']:.2f} | {(r['peak_mb'] - r['before_mb']) / r['x_mb']:.2f} "
        f"| {r['seconds']:.0f} | {versus} | {ratio} | {r['cpu']:.0f} | {cpu_versus} | {cpu_ratio} "
        f"| {r['test_ndcg']:.4f} | {lgbm_ndcg} | {load:.1f} | {best} |",
    ]
    tables.publish("\n".join(lines), __file__, write=args.write, note=args.note)


if __name__ == "__main__":
    main()
