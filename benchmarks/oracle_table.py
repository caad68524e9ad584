"""Summarize `cargo bench --bench oracles` as Markdown tables (for the README).

Reads criterion's results under target/criterion and prints

1. per relevant fraction, the time of "sort" (ordering a query's documents by score) and each
   oracle's time as a multiple of it, measured in the same run, for 10 ... 100,000 documents;
2. Algorithm 2 ("map-greedy") against the divide-and-conquer MAP oracle ("map-fast") over the
   number of relevant documents P: the ratio greedy / fast (> 1: fast wins) and the crossover.

Usage: cargo bench --bench oracles -- --noplot && python benchmarks/oracle_table.py
Times are the fastest of criterion's samples (see `load`).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

import tables  # benchmarks/tables.py, beside this script


def load(root: Path) -> dict:
    """{(group, function, parameter): nanoseconds per call} for every benchmark found.

    The time of a call is that of criterion's fastest sample (sample time / iterations): on a
    machine shared with other jobs, interference only ever adds time, so the minimum is the
    most stable estimate, and the oracle and its "sort" baseline are measured alike.
    """
    results = {}
    for bench in root.glob("**/new/benchmark.json"):
        meta = json.loads(bench.read_text())
        sample = json.loads((bench.parent / "sample.json").read_text())
        per_call = min(t / i for t, i in zip(sample["times"], sample["iters"]))
        results[(meta["group_id"], meta["function_id"], meta["value_str"])] = per_call
    return results


def fmt_time(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def oracle_tables(results: dict) -> str:
    by_fraction: dict = defaultdict(dict)
    functions: list = []
    for (group, function, param), ns in results.items():
        if group != "oracle":
            continue
        m = re.fullmatch(r"n=(\d+)/rel=([\d.]+)", param)
        if not m:
            continue
        by_fraction[m.group(2)][(function, int(m.group(1)))] = ns
        if function not in functions and function != "sort":
            functions.append(function)
    order = [
        "map-greedy",
        "map-fast",
        "map",
        "roc",
        "pairwise",
        "ndcg@10",
        "ndcg",
        "ndcg@10:paper",
        "mrr@10",
        "mrr",
        "max(map,ndcg@10,mrr@10)",
        "acc",
        "dorm@10:depth=30",
        "dorm",
    ]
    functions = [f for f in order if f in functions] + [f for f in functions if f not in order]
    out = []
    for fraction in sorted(by_fraction, key=float):
        table = by_fraction[fraction]
        sizes = sorted({n for _, n in table})
        out.append(f'Relevant fraction {float(fraction):g} (time of one call; oracles as a multiple of "sort"):\n')
        out.append("| oracle | " + " | ".join(f"n = {n:,}" for n in sizes) + " |")
        out.append("|---|" + "---:|" * len(sizes))
        out.append(
            "| sort (time) | "
            + " | ".join(fmt_time(table[("sort", n)]) if ("sort", n) in table else "" for n in sizes)
            + " |"
        )
        for f in functions:
            cells = []
            for n in sizes:
                if (f, n) in table and ("sort", n) in table:
                    cells.append(f"{table[(f, n)] / table[('sort', n)]:.2g}x")
                else:
                    cells.append("–")
            out.append(f"| {f} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def crossover_table(results: dict) -> str:
    cells: dict = defaultdict(dict)
    for (group, function, param), ns in results.items():
        if group != "map_crossover":
            continue
        m = re.fullmatch(r"n=(\d+)/P=(\d+)", param)
        if m:
            cells[int(m.group(1))][(function, int(m.group(2)))] = ns
    if not cells:
        return ""
    ps = sorted({p for table in cells.values() for _, p in table})
    out = ["Algorithm 2 time / divide-and-conquer time (above 1: the fast oracle wins):\n"]
    out.append("| documents | " + " | ".join(f"P = {p}" for p in ps) + " | fast wins from |")
    out.append("|---:|" + "---:|" * (len(ps) + 1))
    for n in sorted(cells):
        table = cells[n]
        ratios = [
            table[("map-greedy", p)] / table[("map-fast", p)]
            if ("map-greedy", p) in table and ("map-fast", p) in table
            else None
            for p in ps
        ]
        # The smallest P from which the fast oracle wins at every larger P measured.
        cross = "none"
        for i, p in enumerate(ps):
            if all(r is not None and r > 1.0 for r in ratios[i:]):
                cross = f"P >= {p}"
                break
        out.append(f"| {n:,} | " + " | ".join("" if r is None else f"{r:.2f}" for r in ratios) + f" | {cross} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion-dir", default=str(Path(__file__).resolve().parents[1] / "target" / "criterion"))
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__, None)
    results = load(Path(args.criterion_dir))
    if not results:
        raise SystemExit(f"no criterion results under {args.criterion_dir}; run cargo bench --bench oracles first")
    print(oracle_tables(results))
    print(crossover_table(results))


if __name__ == "__main__":
    main()
