"""The README's summary of benchmarks/auto_search.py: the mean rows of its table in
docs/benchmarks.md, per kind of data, the default call and tuned LightGBM side by side.

    python benchmarks/auto_search_summary.py [--write]

It reads the generated block of ``benchmarks/auto_search.py`` in docs/benchmarks.md (so the
README shows the figures of that run, never a second run's) and names that run's stamp in
its own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tables  # noqa: E402  (benchmarks/tables.py, beside this script)

DEFAULT = "svmmap, default (5 folds of train)"
LIGHTGBM = "LightGBM (vali)"
KIND_NAMES = {
    "mq2008": "MQ2008, 5 folds",
    "raw": "generated, raw-scale features, labels 0-4",
    "many": "generated, a third of 150 documents relevant",
}


def source_block() -> tables.Block:
    page = tables.parse(tables.ROOT / "docs" / "benchmarks.md")
    for block in page.blocks:
        if block.command.split()[0] == "benchmarks/auto_search.py":
            return block
    raise SystemExit("docs/benchmarks.md has no block of benchmarks/auto_search.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tables.add_arguments(parser)
    args = parser.parse_args()
    block = source_block()
    means = {}
    for line in block.lines:
        cells = tables.split_row(line) if line.startswith("|") else []
        if len(cells) == 10 and cells[1] == "mean":
            means[(cells[0], cells[2])] = cells
    lines = [
        "| data | one call: test NDCG@10 | tuned LightGBM: test NDCG@10 | one call's CPU time / LightGBM's (timing) |",
        "|---|---:|---:|---:|",
    ]
    for kind, name in KIND_NAMES.items():
        if (kind, DEFAULT) in means and (kind, LIGHTGBM) in means:
            ours, theirs = means[(kind, DEFAULT)], means[(kind, LIGHTGBM)]
            # The CPU ratio: a loaded machine slows LightGBM's wall clock far more than svmmap's.
            lines.append(f"| {name} | {ours[3]} | {theirs[3]} | {ours[8]} |")
    stamp = block.stamp
    source = stamp.group(0).strip("*.") if stamp else "an unstamped run"
    note = f"the mean rows of docs/benchmarks.md's table ({source})"
    tables.publish("\n".join(lines), __file__, write=args.write, note=note if args.note is None else args.note)


if __name__ == "__main__":
    main()
