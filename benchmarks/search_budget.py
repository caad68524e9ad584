"""How closely SVMMapCV's ``time_budget`` holds: the default one call on the generated raw-scale
kind of benchmarks/auto_search.py (300 training queries, features on scales 10^-2 to 10^4,
where a single fit can take seconds) with budgets of 2, 5 and 10 seconds, the wall clock of
``fit`` (without the refit), and how many fits the budget cut short (stop reason "budget").

    python benchmarks/search_budget.py

Seconds are wall clock; the overshoot (fit's seconds minus the budget) is what the table is
about, and it includes the last fit's scoring and the preparation of the data.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tables  # noqa: E402  (benchmarks/tables.py, beside this script)
from auto_search import make_kind  # noqa: E402
from svmmap import SVMMapCV  # noqa: E402

BUDGETS = (2.0, 5.0, 10.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tables.add_arguments(parser)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    train, _, _ = make_kind("raw", 0)
    lines = [
        "| time_budget (s) | fit (s, timing) | overshoot (s, timing) | fits cut by the budget | rows fitted |",
        "|---:|---:|---:|---:|---:|",
    ]
    for budget in BUDGETS:
        search = SVMMapCV(loss="auto", preprocessing="auto", n_jobs=1, time_budget=budget, refit=False)
        start = time.perf_counter()
        search.fit(train[0], train[1], qid=train[2])
        seconds = time.perf_counter() - start
        r = search.cv_results_
        cut = sum(int((r[f"split{k}_stop_reason"] == "budget").sum()) for k in range(search.n_splits_))
        fitted = int((r["status"] == "fitted").sum())
        lines.append(
            f"| {budget:g} | {seconds:.2f} | {seconds - budget:+.2f} | {cut} | {fitted} of {len(r['status'])} |"
        )
    tables.publish("\n".join(lines), __file__, write=args.write, note=args.note)


if __name__ == "__main__":
    main()
