"""svmmap.dask.SVMMap against svmmap.SVMMap on the same MQ2008 folds, on a local 2-worker cluster.

Prints, per fold and C, the largest difference between the two models' weights, both iteration
counts, and both fit times (the distributed one pays a round trip to the workers per
iteration, which dominates on data this small).

    python benchmarks/dask_vs_local.py [--processes]
"""

import argparse
import time
import warnings

import dask.array as da
import numpy as np
import svmmap
import svmmap.dask
from distributed import Client, LocalCluster
from svmmap.datasets import load_mq2008


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", action="store_true", help="worker processes instead of threads")
    parser.add_argument("--partitions", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore", svmmap.SkippedQueriesWarning)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=args.processes, dashboard_address=":0") as cluster,
        Client(cluster),
    ):
        print(f"{'fold':>4} {'C':>6} {'max |dw|':>9} {'iters':>11} {'local s':>8} {'dask s':>7}")
        for fold in (1, 2, 3, 4, 5):
            X, y, qid = load_mq2008(fold=fold, split="train")
            starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
            cuts = (
                [0] + [int(starts[len(starts) * k // args.partitions]) for k in range(1, args.partitions)] + [len(qid)]
            )
            chunks = tuple(int(c) for c in np.diff(cuts))
            for C in (1.0, 100.0):
                t = time.perf_counter()
                local = svmmap.SVMMap(C=C).fit(X, y, qid=qid)
                t_local = time.perf_counter() - t
                t = time.perf_counter()
                dist = svmmap.dask.SVMMap(C=C).fit(
                    da.from_array(X, chunks=(chunks, X.shape[1])),
                    da.from_array(y, chunks=(chunks,)),
                    qid=da.from_array(qid, chunks=(chunks,)),
                )
                t_dask = time.perf_counter() - t
                diff = float(np.abs(dist.coef_ - local.coef_).max())
                print(
                    f"{fold:>4} {C:>6g} {diff:9.2e} {local.n_iter_:>5}/{dist.n_iter_:<5} {t_local:8.3f} {t_dask:7.2f}"
                )


if __name__ == "__main__":
    main()
