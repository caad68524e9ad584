"""How closely SVMMapCV's ``time_budget`` holds when "ga2m"'s pair selection is under way: the
default one call with ``preprocessing="auto"`` (which tries "ga2m") on MQ2008 Fold 1 with a
budget of 1 s, and on a generated set of 174,092 documents x 136 features
(``make_ranking(1470, 120, 136)``, whose pair selection reads 50,000 of them) with 3 s; on the
latter also ``SVMMapCV(preprocessing=["none", "ga2m"])`` with 1 s, where the pair selection
starts within the budget.

    python benchmarks/budget_pairs.py                              # this checkout
    python benchmarks/budget_pairs.py --before /path/to/other/python --rounds 3

With ``--before`` (the ``python`` folder of another checkout, with its compiled core), each
round runs the other build, then this one, in child processes one after the other, so that
the machine's load falls on both alike; ``uptime``'s load average is printed before and after.
Seconds are wall clock: ``fit`` is the whole call (its data checks and refit included),
``search`` is ``search_seconds_``, what the budget bounds (medians over the rounds, and the
largest); "cut" counts the "ga2m" rows whose pair selection the budget stopped (stop reason
"budget" without a fit time), per round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tables  # noqa: E402  (benchmarks/tables.py, beside this script)

ROOT = Path(__file__).resolve().parents[1]
#: (name, data, budget in seconds, SVMMapCV's parameters): the two measurements of issue 43's
#: item 4 (the default one call with preprocessing="auto"), and on the larger set a search of
#: map on the features as given and its "ga2m" alone, whose pair selection starts within the
#: budget (the first candidate's fits on the features as given cost no binning; a "binned"
#: first candidate fits its thresholds and codes on every split whatever the budget).
CASES = (
    ("MQ2008 Fold 1, auto", "mq2008", 1.0, {"loss": "auto", "preprocessing": "auto"}),
    ("make_ranking(1470, 120, 136), auto", "generated", 3.0, {"loss": "auto", "preprocessing": "auto"}),
    ("make_ranking(1470, 120, 136), map: none, ga2m", "generated", 1.0, {"preprocessing": ["none", "ga2m"]}),
)


def child(case: int) -> None:
    """One measurement, printed as JSON (run in a child process by `main`)."""
    import time
    import warnings

    import numpy as np
    from svmmap import SVMMapCV
    from svmmap.datasets import load_mq2008, make_ranking

    warnings.simplefilter("ignore")
    _, data, budget, params = CASES[case]
    if data == "mq2008":
        X, y, qid = load_mq2008(1, "train")
    else:
        d = make_ranking(1470, 120, 136, random_state=0)
        X, y, qid = d.X, d.y, d.qid
    search = SVMMapCV(time_budget=budget, **params)
    start = time.perf_counter()
    search.fit(X, y, qid=qid)
    seconds = time.perf_counter() - start
    r = search.cv_results_
    ga2m = np.flatnonzero(r["param_preprocessing"] == "ga2m")
    cut = sum(
        int(r[f"split{k}_stop_reason"][i] == "budget" and np.isnan(r[f"split{k}_fit_time"][i]))
        for k in range(search.n_splits_)
        for i in ga2m
    )
    print(json.dumps({"fit": seconds, "search": search.search_seconds_, "cut": cut, "rows": int(X.shape[0])}))


def measure(python_dir: str, case: int) -> dict:
    env = {**os.environ, "PYTHONPATH": python_dir}
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(case)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="the python folder of another checkout, measured first in each round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    tables.add_arguments(parser)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    builds = ([("before", args.before)] if args.before else []) + [("after", str(ROOT / "python"))]
    print(f"load before: {load()}")
    runs: dict = {}
    for _ in range(args.rounds):
        for case in range(len(CASES)):
            for build, path in builds:
                runs.setdefault((case, build), []).append(measure(path, case))
    print(f"load after:  {load()}")
    print(f"medians of {args.rounds} rounds; per-run seconds (fit, search):")
    for (case, build), got in sorted(runs.items()):
        print(f"  {CASES[case][0]} {build}: " + ", ".join(f"({g['fit']:.2f}, {g['search']:.2f})" for g in got))
    print()
    lines = [
        "| data | budget (s) | build | fit (s, timing) | fit / budget (timing) | search (s, timing) "
        "| search / budget (timing) | largest search / budget (timing) | ga2m rows cut |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for case, (name, _, budget, _) in enumerate(CASES):
        for build, _ in builds:
            got = runs[(case, build)]
            fit = statistics.median(g["fit"] for g in got)
            search = statistics.median(g["search"] for g in got)
            cut = "/".join(str(g["cut"]) for g in got)
            lines.append(
                f"| {name} ({got[0]['rows']} rows) | {budget:g} | {build} | {fit:.2f} | {fit / budget:.2f} | "
                f"{search:.2f} | {search / budget:.2f} | {max(g['search'] for g in got) / budget:.2f} | {cut} |"
            )
    tables.publish("\n".join(lines), __file__, write=args.write, note=args.note)


if __name__ == "__main__":
    main()
