"""What each candidate of the one call costs, paid in full and as the search pays it now
(issue 43): every loss x preprocessing x C of ``SVMMapCV(loss="auto", preprocessing="auto")``
on features at raw scales, standardized and binned.

Both searches run on the same training split (the generated raw-scale kind of
benchmarks/auto_search.py by default: 300 queries of 100 documents, 60 features on scales
10^-2 to 10^4, labels 0-4), with svmmap's own 5 query folds, ``n_jobs=1``, one after the other:

- in full: the same losses listed with ``losses=`` (so "pairwise:count" keeps its C unscaled),
  ``patience=None`` and ``prune_margin=None``: every row fitted on every split, as the search did
  before the race, the early stop along C and the scaled C grid of "pairwise:count";
- the default: ``SVMMapCV(loss="auto", preprocessing="auto")`` as it is.

Each cell is the seconds of fitting that row, summed over the 5 splits, in full and then as the
default pays it; a mark after the default's figure says why it paid less: ``p`` the race
pruned the row on some split, ``e`` the early stop along C left it out, ``-`` it was never fitted.
"pairwise:count" is fitted at C times the factor of `pair_scale` in the default (its column
heads give the nominal C). The last lines give each search's total, its choice and the choice's
test NDCG@10 after the refit.

    python benchmarks/candidate_cost.py [--kind raw|many|mq2008] [--max-time 60]

Seconds are wall clock, comparable within one run only.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tables  # noqa: E402  (benchmarks/tables.py, beside this script)
from auto_search import data_sets  # noqa: E402
from svmmap import SVMMapCV  # noqa: E402
from svmmap._search.candidates import auto_losses  # noqa: E402
from svmmap.metrics import ndcg  # noqa: E402

#: The status of a row in cv_results_ and the mark it gets in the table.
MARKS = {"fitted": "", "pruned": " p", "early stop": " e", "time budget": " b", "failed": " f"}


def search(full: bool, train: Tuple, max_time: float) -> Tuple[SVMMapCV, float]:
    """One search (``full``: every row on every split, C unscaled) and its seconds."""
    common: Dict[str, Any] = {"preprocessing": "auto", "n_jobs": 1, "max_time": max_time}
    if full:
        model = SVMMapCV(loss="auto", losses=auto_losses("ndcg@10"), patience=None, prune_margin=None, **common)
    else:
        model = SVMMapCV(loss="auto", **common)
    start = time.perf_counter()
    model.fit(train[0], train[1], qid=train[2])
    return model, time.perf_counter() - start


def row_seconds(model: SVMMapCV) -> Dict[Tuple[str, str, int], Tuple[float, str]]:
    """(loss, preprocessing, index of C) -> (seconds over the splits, status) of a search."""
    r = model.cv_results_
    n_splits = model.n_splits_
    out: Dict[Tuple[str, str, int], Tuple[float, str]] = {}
    order: Dict[Tuple[str, str], int] = {}
    for i, (loss, prep) in enumerate(zip(r["param_loss"], r["param_preprocessing"])):
        j = order.get((loss, prep), 0)
        order[(loss, prep)] = j + 1
        seconds = np.array([r[f"split{k}_fit_time"][i] for k in range(n_splits)], dtype=float)
        out[(loss, prep, j)] = (float(np.nansum(seconds)), str(r["status"][i]))
    return out


def test_ndcg(model: SVMMapCV, test: Tuple) -> float:
    """NDCG@10 of the refitted model on the test split (queries with a relevant document)."""
    return float(ndcg(test[1], model.predict(test[0]), test[2], k=10))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", default="raw", help="raw, many or mq2008 (fold 1)")
    parser.add_argument("--max-time", type=float, default=60.0, help="max_time of every fit (s)")
    tables.add_arguments(parser)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    (_, _, (train, _, test)) = next(iter(data_sets([args.kind], [1], [0])))
    full, full_seconds = search(True, train, args.max_time)
    default, default_seconds = search(False, train, args.max_time)
    paid, now = row_seconds(full), row_seconds(default)
    Cs = sorted({float(c) for c in full.cv_results_["param_C"]})
    keys: List[Tuple[str, str]] = []
    for loss, prep in zip(full.cv_results_["param_loss"], full.cv_results_["param_preprocessing"]):
        if (loss, prep) not in keys:
            keys.append((loss, prep))
    head = " | ".join(f"C = {c:g} (s, timing)" for c in Cs)
    lines = [
        f"| loss | preprocessing | {head} | all C (s, timing) |",
        "|---|---|" + "---:|" * (len(Cs) + 1),
    ]
    for loss, prep in keys:
        cells = []
        sums = [0.0, 0.0]
        for j in range(len(Cs)):
            before = paid.get((loss, prep, j), (np.nan, "fitted"))
            after = now.get((loss, prep, j))
            sums[0] += before[0]
            if after is None or (after[1] != "fitted" and after[0] == 0):
                cells.append(f"{before[0]:.2f} → 0 -" if after is None else f"{before[0]:.2f} → 0{MARKS[after[1]]}")
                continue
            sums[1] += after[0]
            cells.append(f"{before[0]:.2f} → {after[0]:.2f}{MARKS.get(after[1], '')}")
        lines.append(f"| {loss} | {prep} | " + " | ".join(cells) + f" | {sums[0]:.1f} → {sums[1]:.1f} |")
    lines += [
        "",
        "| search | seconds, with the refit (timing) | choice | test NDCG@10 |",
        "|---|---:|---|---:|",
    ]
    for name, model, seconds in (("in full", full, full_seconds), ("the default", default, default_seconds)):
        p = model.best_params_
        choice = f"{p['loss']} / {p['preprocessing']}, C = {p['C']:g}"
        lines.append(f"| {name} | {seconds:.1f} | {choice} | {test_ndcg(model, test):.4f} |")
    tables.publish("\n".join(lines), __file__, write=args.write, note=args.note)


if __name__ == "__main__":
    main()
