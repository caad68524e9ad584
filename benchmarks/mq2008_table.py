"""The MQ2008 LETOR-protocol tables of docs/benchmarks.md and README.md (``svmmap experiment``).

For each MQ2008 fold, SVMMap (loss map, eps 1e-3) is trained on ``train`` with each C of
{0.1, 1, 10, 100, 1000}, C is chosen by validation MAP and the chosen model tests on ``test``
(``svmmap.ir.experiment.run_folds``, what ``svmmap experiment`` runs). The chosen model is
trained again to score the test split under trec_eval's conventions as well (queries without a
relevant document count as AP 0), a deterministic refit of the same model.

    python benchmarks/mq2008_table.py --table benchmarks   # with fit times (timing columns)
    python benchmarks/mq2008_table.py --table readme       # the figures alone: deterministic
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import numpy as np
from svmmap import SVMMap
from svmmap.datasets import mq2008_folds
from svmmap.ir.experiment import FoldResult, run_folds
from svmmap.metrics import mean_average_precision

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # noqa: E402


def measure() -> List[Tuple[FoldResult, float, int, int]]:
    """Per fold: the experiment's result, trec_eval's MAP of the chosen model, and the test
    queries without a relevant document out of all."""
    folds = list(mq2008_folds())
    rows = []
    for fold, result in zip(folds, run_folds(folds)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = SVMMap(C=result.best_C).fit(fold.train.X, fold.train.y, qid=fold.train.qid)
        test = fold.test
        scores = model.predict(test.X)
        assert mean_average_precision(test.y, scores, test.qid) == result.test_map
        trec = mean_average_precision(test.y, scores, test.qid, conventions="trec_eval")
        queries = np.unique(test.qid)
        empty = sum(1 for q in queries if not np.any(test.y[test.qid == q] > 0))
        rows.append((result, trec, empty, len(queries)))
    return rows


def benchmarks_table(rows) -> str:
    lines = [
        "| fold | C (by validation) | validation MAP | test MAP | fit time, chosen C (s, timing) "
        "| fit time, all C (s, timing) | test MAP, trec_eval (queries without a relevant document) |",
        "|------|------------------:|---------------:|---------:|-----------------------:|--------------------:|----------------:|",
    ]
    for r, trec, empty, n in rows:
        lines.append(
            f"| {r.fold} | {r.best_C:g} | {r.vali_map:.4f} | {r.test_map:.4f} | {r.fit_seconds:.2f} "
            f"| {r.grid_seconds:.2f} | {trec:.4f} ({empty} of {n}) |"
        )
    mean = lambda values: float(np.mean(list(values)))  # noqa: E731
    lines.append(
        f"| mean | | {mean(r.vali_map for r, *_ in rows):.4f} | **{mean(r.test_map for r, *_ in rows):.4f}** "
        f"| {mean(r.fit_seconds for r, *_ in rows):.2f} | {mean(r.grid_seconds for r, *_ in rows):.2f} "
        f"| **{mean(t for _, t, *_ in rows):.4f}** |"
    )
    return "\n".join(lines)


def readme_table(rows) -> str:
    names = [r.fold for r, *_ in rows]
    test = [r.test_map for r, *_ in rows]
    trec = [t for _, t, *_ in rows]
    return "\n".join(
        [
            "| fold | " + " | ".join(names) + " | mean |",
            "|---|" + "---:|" * (len(names) + 1),
            "| test MAP, queries without a relevant document skipped (SVM^map's convention) | "
            + " | ".join(f"{v:.4f}" for v in test)
            + f" | **{np.mean(test):.4f}** |",
            '| test MAP, the same models, such queries counted as AP 0 (trec_eval\'s, `conventions="trec_eval"`) | '
            + " | ".join(f"{v:.4f}" for v in trec)
            + f" | **{np.mean(trec):.4f}** |",
        ]
    )


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--table", choices=("benchmarks", "readme"), default="benchmarks")
    tables.add_arguments(parser)
    args = parser.parse_args(argv)
    rows = measure()
    text = benchmarks_table(rows) if args.table == "benchmarks" else readme_table(rows)
    tables.publish(text, __file__, argv, write=args.write, note=args.note)


if __name__ == "__main__":
    main()
