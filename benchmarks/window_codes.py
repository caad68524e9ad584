"""The bytes of one "ga2m" window's bin codes in SVMMapCV's search at the 573k-document shape
(issue 43): the base features' codes and the pairs' codes as the search holds them (two arrays,
`BinningSpec.split_codes`), against the one array of `BinningSpec.codes` that held them all.

    python benchmarks/window_codes.py [--data DIR] [--queries 8000] [--train-share 0.6]

The data is ``make_ranking(QUERIES, 120, 136, random_state=0)`` (float32), its first
``--train-share`` of the queries, as benchmarks/search_memory.py makes it, or X.npy, y.npy and
qid.npy of ``--data``. The splits are the search's (``SVMMapCV()``'s cv and
``max_train_queries``); split 0's "ga2m" Binner (thresholds and pairs) is fitted on its
training rows as the search fits it, and its window's codes are made both ways. No fit runs.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from svmmap import SVMMapCV
from svmmap._fit.training import check_inputs
from svmmap._search.size import limit_training_queries
from svmmap._search.splits import SplitData, make_splits
from svmmap.datasets import make_ranking


def load(directory: str | None, queries: int, share: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if directory is not None:
        return tuple(np.load(os.path.join(directory, f"{name}.npy")) for name in ("X", "y", "qid"))  # type: ignore[return-value]
    X, y, qid = make_ranking(queries, 120, 136, random_state=0)
    keep = qid < np.unique(qid)[int(len(np.unique(qid)) * share)]
    return np.ascontiguousarray(X[keep], dtype=np.float32), y[keep], qid[keep]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="a folder with X.npy, y.npy and qid.npy")
    parser.add_argument("--queries", type=int, default=8000)
    parser.add_argument("--train-share", type=float, default=0.6)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    X, y, qid = load(args.data, args.queries, args.train_share)
    search = SVMMapCV()
    data = check_inputs("SVMMapCV", X, y, qid, None, None)
    splits = make_splits(search.cv, data.n_rows, data.labels, data.codes, data.uniques, False)
    splits = limit_training_queries(splits, data.codes, search.max_train_queries)
    split = SplitData(X, data.core_X, data.labels, data.codes, None, splits, None, args.n_jobs)
    spec = split._ga2m_spec(0)
    window = split._window(0)
    rows = data.n_rows if window is None else window.size
    grids = [(len(a), len(b)) for a, b in spec.pair_thresholds or []]
    print(f"X {X.shape} {X.dtype} ({X.nbytes / 1e6:.1f} MB); split 0's window: {rows} rows")
    print(f"pairs {spec.pairs}, coarse grids {grids}")
    if not spec.pairs:
        print('the Binner kept no pair on split 0: its codes are "binned"\'s, in one array')
        return
    start = time.perf_counter()
    one = spec.codes(X, 2, window)
    one_time = time.perf_counter() - start
    print(f"one array (before): {one.dtype} {one.shape}, {one.nbytes / 1e6:.1f} MB, {one_time:.2f} s")
    del one
    start = time.perf_counter()
    matrix = split.fit_inputs("ga2m", 0)[0]
    two_time = time.perf_counter() - start
    base, pairs = matrix.arrays[0], matrix.arrays[4]
    print(
        f"two arrays (after): base {base.dtype} {base.shape} {base.nbytes / 1e6:.1f} MB + pairs "
        f"{pairs.dtype} {pairs.shape} {pairs.nbytes / 1e6:.1f} MB = {(base.nbytes + pairs.nbytes) / 1e6:.1f} MB, "
        f"{two_time:.2f} s"
    )


if __name__ == "__main__":
    main()
