"""The binning table of docs/guide/binning.md: binned against raw features on MQ2008 Fold 1.

``Pipeline([("bin", Binner(n_thresholds=50)), ("svm", SVMMap(C))])`` at C = 0.1 (the guide's
example) and C = 10, and ``SVMMap(C=10)`` on the raw features, each trained on Fold 1's
training split and tested on its test split (MAP with svmmap's conventions). Deterministic, so
``tests/docs/test_tables.py`` recomputes it.

    python benchmarks/binning_table.py [--write]
"""

from __future__ import annotations

import argparse
import warnings
from typing import Optional, Sequence

import svmmap
import tables  # benchmarks/tables.py, beside this script
from sklearn.pipeline import Pipeline
from svmmap.datasets import load_mq2008
from svmmap.metrics import mean_average_precision


def table() -> str:
    X, y, qid = load_mq2008(fold=1, split="train")
    Xt, yt, qt = load_mq2008(fold=1, split="test")
    models = [
        ("`Pipeline(Binner(n_thresholds=50), SVMMap(C=0.1))`", 0.1, True),
        ("`Pipeline(Binner(n_thresholds=50), SVMMap(C=10))`", 10.0, True),
        ("`SVMMap(C=10)` on the raw features", 10.0, False),
    ]
    lines = ["| model | test MAP |", "|---|---:|"]
    for name, C, binned in models:
        svm = svmmap.SVMMap(C=C)
        model = Pipeline([("bin", svmmap.Binner(n_thresholds=50)), ("svm", svm)]) if binned else svm
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", svmmap.SkippedQueriesWarning)
            model.fit(X, y, **({"svm__qid": qid} if binned else {"qid": qid}))
        lines.append(f"| {name} | {mean_average_precision(yt, model.predict(Xt), qt):.4f} |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    tables.add_arguments(parser)
    args = parser.parse_args(argv)
    tables.publish(table(), __file__, argv, write=args.write, note=args.note)


if __name__ == "__main__":
    main()
