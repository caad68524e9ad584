"""Peak resident memory of the one call, ``SVMMapCV(loss="auto", preprocessing="auto")``, against
the memory of the data it searches on (issue 43: within 1.5x the loaded data, no per-split
copy of X).

    python benchmarks/search_memory.py [--queries 2000] [--n-jobs 2] [--label after]

The data is ``make_ranking(QUERIES, 120, 136, random_state=0)`` (float32), generated once and
saved to a temporary directory; each measurement runs in a fresh interpreter that imports
svmmap and scikit-learn, notes its resident memory, loads the saved arrays (``np.load``, no
temporary copies), fits the search and reports its peak resident memory (``ru_maxrss``), so
that neither the generator's temporaries nor another measurement count. The table gives the
peak against ``X.nbytes`` twice: the whole process's peak, and the peak less what the
interpreter held before the data was loaded (Python, NumPy, SciPy, scikit-learn and the
extension), which is what the search and its data add.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict

import numpy as np


def child(directory: str, n_jobs: int) -> Dict[str, Any]:
    import resource

    import sklearn.preprocessing  # noqa: F401  (imported by the search; counted before the data)
    from svmmap import SVMMapCV

    def rss_mb() -> float:
        # ru_maxrss is in KiB on Linux.
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    before = rss_mb()
    X = np.load(os.path.join(directory, "X.npy"))
    y = np.load(os.path.join(directory, "y.npy"))
    qid = np.load(os.path.join(directory, "qid.npy"))
    loaded = rss_mb()
    start = time.perf_counter()
    search = SVMMapCV(loss="auto", preprocessing="auto", n_jobs=n_jobs).fit(X, y, qid=qid)
    seconds = time.perf_counter() - start
    return {
        "rows": int(X.shape[0]),
        "x_mb": X.nbytes / 2**20,
        "before_mb": before,
        "loaded_mb": loaded,
        "peak_mb": rss_mb(),
        "seconds": seconds,
        "best": {k: str(v) for k, v in search.best_params_.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--label", default="this build", help="the name of the build in the table's first column")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.n_jobs)))
        return
    from svmmap.datasets import make_ranking

    with tempfile.TemporaryDirectory() as directory:
        X, y, qid = make_ranking(args.queries, 120, 136, random_state=0)
        for name, array in (("X", X), ("y", y), ("qid", qid)):
            np.save(os.path.join(directory, f"{name}.npy"), array)
        del X, y, qid
        command = [sys.executable, __file__, "--child", directory, "--n-jobs", str(args.n_jobs)]
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    print(
        "| build | documents | X (MB) | before the data (MB) | peak RSS (MB) | peak / X.nbytes "
        "| (peak - before) / X.nbytes | time (s, timing) | chosen |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    best = ", ".join(f"{k}={v}" for k, v in sorted(r["best"].items()))
    print(
        f"| {args.label} | {r['rows']} | {r['x_mb']:.0f} | {r['before_mb']:.0f} | {r['peak_mb']:.0f} "
        f"| {r['peak_mb'] / r['x_mb']:.2f} | {(r['peak_mb'] - r['before_mb']) / r['x_mb']:.2f} "
        f"| {r['seconds']:.0f} | {best} |"
    )


if __name__ == "__main__":
    main()
