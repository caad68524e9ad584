"""Speed of svmmap.Binner (Rust) against a straightforward numpy/scipy version, same run.

The baseline builds the same CSR matrix with numpy broadcasting per feature
(``X[:, j, None] > thresholds_j``) and ``scipy.sparse.hstack``; both use the thresholds that
``Binner.fit`` chose, and the script checks that the two matrices are equal. Figures are
ratios measured in the same run (the machine may be shared).

    python benchmarks/binning_speed.py [--repeat 5] [--thresholds 50] [--n-jobs N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp


def numpy_transform(X: np.ndarray, thresholds: list) -> sp.csr_matrix:
    blocks = [
        sp.csr_matrix((X[:, j, None] > np.asarray(k)[None, :]).astype(np.float64)) for j, k in enumerate(thresholds)
    ]
    return sp.hstack(blocks, format="csr")


def numpy_fit(X: np.ndarray, n_thresholds: int) -> list:
    """Plain quantiles (np.quantile per column, deduplicated): a cheaper, simpler fit than the
    Binner's, as the baseline for fitting time only."""
    qs = np.arange(1, n_thresholds + 1) / (n_thresholds + 1)
    return [np.unique(np.quantile(X[:, j], qs)) for j in range(X.shape[1])]


def best_of(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--thresholds", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args()

    from svmmap import Binner
    from svmmap.datasets import load_mq2008_docs

    X, _, _, _ = load_mq2008_docs()
    X = np.ascontiguousarray(np.vstack([X] * 4))  # 60,844 documents x 46 features
    binner = Binner(n_thresholds=args.thresholds, n_jobs=args.n_jobs, output="indicators").fit(X)
    ours = binner.transform(X)
    ref = numpy_transform(X, binner.thresholds_)
    assert (ours != ref).nnz == 0, "the transforms differ"

    t_fit = best_of(lambda: Binner(n_thresholds=args.thresholds, n_jobs=args.n_jobs).fit(X), args.repeat)
    t_fit_np = best_of(lambda: numpy_fit(X, args.thresholds), args.repeat)
    t_tr = best_of(lambda: binner.transform(X), args.repeat)
    t_tr_np = best_of(lambda: numpy_transform(X, binner.thresholds_), args.repeat)
    print(
        f"{X.shape[0]} documents x {X.shape[1]} features, {binner.n_output_features_} indicator columns, "
        f"{ours.nnz} stored values; best of {args.repeat}"
    )
    print("| step | svmmap.Binner (s) | numpy/scipy (s) | speed-up |")
    print("|---|---:|---:|---:|")
    print(f"| fit | {t_fit:.3f} | {t_fit_np:.3f} | {t_fit_np / t_fit:.1f}x |")
    print(f"| transform | {t_tr:.3f} | {t_tr_np:.3f} | {t_tr_np / t_tr:.1f}x |")


if __name__ == "__main__":
    main()
