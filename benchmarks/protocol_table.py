"""Yue et al.'s protocol on MQ2008 for one list of methods, both designs in one table.

    python benchmarks/protocol_table.py --methods map,roc,SVM-acc=svmmap.baselines:SVMAcc
    python benchmarks/protocol_table.py --methods map,LinearSVC=sklearn.svm:LinearSVC,best,best2,best3 --write

Runs ``svmmap protocol --methods METHODS --show-p`` (50 random splits of 10 training, 5
validation and the rest test queries) and ``svmmap protocol --design folds --methods METHODS
--show-p`` (the five LETOR folds) with the CLI's own code, and prints one table with a column
group per design (``svmmap.ir.protocol.format_table``): MAP, W/L against the first method and
the Wilcoxon p-value. The tables of docs/guide/protocol.md; each design alone is what the
``svmmap protocol`` command prints.
"""

from __future__ import annotations

import argparse
import sys
import time

import tables  # benchmarks/tables.py, beside this script
from svmmap.cli.experiment import protocol_result
from svmmap.cli.parser import build_parser
from svmmap.ir.protocol import format_table


def measure(methods: str) -> str:
    """The table of both designs for a --methods value of svmmap protocol."""
    results = {}
    for design in ("random", "folds"):
        start = time.perf_counter()
        args = build_parser().parse_args(["protocol", "--design", design, "--methods", methods, "--show-p", "-q"])
        result, title = protocol_result(args)
        if design == "random":
            split = result.splits[0]
            sizes = f"{len(split.train)}/{len(split.vali)}/{len(split.test)}"
            label = f"{title}, {len(result.splits)} random splits {sizes}:"
        else:
            label = f"{title}, {len(result.splits)} LETOR folds:"
        results[label] = result
        print(f"{design}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return format_table(results, show_p=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", required=True, help="as svmmap protocol's --methods; the first is the reference")
    tables.add_arguments(parser)
    args = parser.parse_args()
    text = measure(args.methods)
    note = "the last three columns with --design folds" if args.note is None else args.note
    tables.publish(text, __file__, None, write=args.write, note=note)


if __name__ == "__main__":
    main()
