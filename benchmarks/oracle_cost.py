"""The cost of one oracle call on long queries, for every loss of the registry: seconds per call
at 10^3 ... 10^6 documents (1% relevant, scores of a half-trained model with ties), with the
complexity the registry states. Sizes whose predicted time exceeds --budget seconds (from the
growth between the two previous sizes) are skipped and marked as such.

    python benchmarks/oracle_cost.py [--budget 20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import tables  # benchmarks/tables.py, beside this script
from svmmap import _core

SIZES = [1_000, 10_000, 100_000, 1_000_000]


def query(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    relevant = np.zeros(n, dtype=bool)
    relevant[rng.choice(n, max(1, n // 100), replace=False)] = True
    scores = np.round(rng.standard_normal(n) + relevant, 3)  # ties, and some signal
    return np.ascontiguousarray(scores), relevant


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=20.0)
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__, None)
    names = [info["examples"][0] for info in _core.LOSSES] + ["ndcg@10", "mrr@10", "dorm@10:depth=30"]
    cost = {info["name"]: info["cost"] for info in _core.LOSSES}
    print("| loss | stated cost | " + " | ".join(f"n = {n:,}" for n in SIZES) + " |")
    print("|---|---|" + "---:|" * len(SIZES))
    for name in names:
        cells, times = [], []
        for n in SIZES:
            if len(times) >= 2 and times[-1] * (times[-1] / max(times[-2], 1e-9)) > args.budget:
                cells.append("skipped")
                continue
            scores, relevant = query(n)
            try:
                start = time.perf_counter()
                _core.oracle_argmax(scores, relevant, name)
                seconds = time.perf_counter() - start
            except ValueError as exc:
                cells.append("refused" if "steps per query and iteration" in str(exc) else f"error: {exc}")
                continue
            times.append(seconds)
            cells.append(f"{seconds:.4f} s")
        base = name.split("@")[0].split(":")[0]
        print(f"| `{name}` | {cost.get(base, '')} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
