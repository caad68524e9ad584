"""``svmmap fuse``: TREC runs fused into one by SVM-map on binned scores."""

from __future__ import annotations

import argparse
import sys
import time

from ._files import refuse_overwriting_inputs, same_file, wrote

__all__ = ["run_fuse"]


def run_fuse(args: argparse.Namespace) -> None:
    from ..ir.fusion import DEFAULT_FUSION_C_GRID, cross_fuse
    from ..ir.trec import read_qrels, read_run, write_run

    say = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    refuse_overwriting_inputs("--out", args.out, [("--qrels", args.qrels)] + [("--runs", r) for r in args.runs])
    for i, a in enumerate(args.runs):
        for b in args.runs[:i]:
            if a == b or same_file(a, b):
                raise ValueError(f"--runs: {a!r} and {b!r} are the same run file, given twice")
    # Checked now, not after the cross-validation, so that a bad tag costs nothing.
    if not args.tag or any(c.isspace() for c in args.tag):
        raise ValueError(f"--tag: the run tag must be one word without spaces, got {args.tag!r}")
    qrels = read_qrels(args.qrels)
    runs = [read_run(path) for path in args.runs]
    grid = DEFAULT_FUSION_C_GRID if args.C_grid is None else args.C_grid
    if say:
        say(
            f"{len(runs)} runs, {len(qrels.queries())} judged queries; {args.folds} folds over queries, "
            f"C from {', '.join(f'{c:g}' for c in grid)}, {args.thresholds} thresholds per run"
        )
    start = time.perf_counter()
    result = cross_fuse(
        runs,
        qrels,
        n_folds=args.folds,
        random_state=args.seed,
        tag=args.tag,
        progress=say,
        C=grid if len(grid) > 1 else grid[0],
        inner_folds=args.inner_folds,
        n_thresholds=args.thresholds,
        strategy=args.strategy,
        normalize=args.normalize,
        eps=args.eps,
        n_jobs=args.n_jobs,
    )
    write_run(args.out, result.run, depth=args.depth)
    wrote(args.out)
    if say:
        say(f"fused run written to {args.out} ({time.perf_counter() - start:.1f}s)")
    print(result.table())
