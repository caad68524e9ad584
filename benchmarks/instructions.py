"""Instruction counts of whole fits under Valgrind: a measure of the numeric core's cost that
does not move with the load of a shared machine (wall-clock ratios there vary by tens of
percent from run to run).

    python benchmarks/instructions.py                    # this checkout
    python benchmarks/instructions.py --repo ../old      # another checkout, e.g. a git worktree
    python benchmarks/instructions.py --seeds 0,1 --mslr-queries 300

For each case the Rust example `examples/fit_cost.rs` (built with cargo against the core of
--repo, with the release profile's optimizations) trains once on
one thread, C = 1, eps = 1e-3, the default solver, under ``valgrind --tool=cachegrind
--cache-sim=no --branch-sim=yes``; a second run that stops after building the problem is
subtracted, so the counts are the fit's own. Reported: iterations, oracle passes,
instructions, mispredicted branches (Valgrind's branch predictor model) and a rough cost
estimate, instructions + 15 x mispredicted branches (memory stalls are not counted, so it
suits data that fits in cache, as make_ranking(400, 100, 30) does, better than the MSLR shape).

Cases: make_ranking(400, 100, 30, random_state=s) with loss "map" and with SVM-combo
(map, ndcg@10, mrr@10, separate slacks), whose ratio is issue 15's criterion (at most 3x);
and make_ranking(Q, 120, 136) (the MSLR-WEB30K fold shape of benchmarks/scale.py with Q
queries) with "map", per document and pass. Needs valgrind (Debian: apt-get install valgrind)
and cargo.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import tables  # benchmarks/tables.py, beside this script
from svmmap.datasets import make_ranking

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMBO = "map,ndcg@10,mrr@10"
MISPREDICT_CYCLES = 15


def build(repo: str) -> str:
    """Builds examples/fit_cost.rs of this checkout against the core of `repo`, in a small
    cargo project under this checkout's target/ (so that an older checkout, which may not
    have the example, can be counted too). Returns the binary's path."""
    project = os.path.join(HERE, "target", "fit_cost", re.sub(r"\W", "_", repo.strip(os.sep)))
    os.makedirs(os.path.join(project, "src"), exist_ok=True)
    manifest = (
        '[package]\nname = "fit_cost"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        f"[dependencies]\nsvmmap = {{ path = {json.dumps(repo)} }}\n\n"
        '[profile.release]\nlto = "thin"\ncodegen-units = 1\n\n[workspace]\n'
    )
    with open(os.path.join(project, "Cargo.toml"), "w") as f:
        f.write(manifest)
    shutil.copyfile(os.path.join(HERE, "examples", "fit_cost.rs"), os.path.join(project, "src", "main.rs"))
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    subprocess.run(["cargo", "build", "--quiet", "--release"], cwd=project, check=True, env=env)
    return os.path.join(project, "target", "release", "fit_cost")


def write(prefix: str, X, y, qid) -> None:
    np.ascontiguousarray(X, dtype=np.float32).tofile(prefix + ".x")
    np.asarray(y, dtype=np.float64).tofile(prefix + ".y")
    np.unique(qid, return_inverse=True)[1].astype(np.int64).tofile(prefix + ".q")


def counts(binary: str, prefix: str, n_features: int, losses: str, setup: bool):
    """(instructions, mispredicted branches, the program's output) of one run."""
    cmd = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--branch-sim=yes",
        "--cachegrind-out-file=/dev/null",
        binary,
        prefix,
        str(n_features),
        losses,
    ] + (["setup"] if setup else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, RAYON_NUM_THREADS="1"))
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")

    def total(label: str) -> int:
        m = re.search(label + r":\s+([\d,]+)", proc.stderr)
        if m is None:
            raise SystemExit(f"no {label} count in valgrind's output:\n{proc.stderr}")
        return int(m.group(1).replace(",", ""))

    return total("I\\s+refs"), total("Mispredicts"), proc.stdout.strip()


def fit_counts(binary: str, prefix: str, n_features: int, losses: str) -> dict:
    ir0, bm0, _ = counts(binary, prefix, n_features, losses, setup=True)
    ir1, bm1, out = counts(binary, prefix, n_features, losses, setup=False)
    m = re.search(r"iterations (\d+) passes (\d+) stop (\w+)", out)
    ir, bm = ir1 - ir0, bm1 - bm0
    return {
        "iterations": int(m.group(1)),
        "passes": int(m.group(2)),
        "stop": m.group(3),
        "instructions": ir,
        "mispredicts": bm,
        "cost": ir + MISPREDICT_CYCLES * bm,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=HERE, help="the checkout whose core is counted (default: this one)")
    parser.add_argument("--seeds", default="0,1,2,3,4,5", help="random_state values of the combo cases")
    parser.add_argument("--mslr-queries", type=int, default=1000, help="queries of the MSLR-shape case (0: skip)")
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__, None)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    binary = build(os.path.abspath(args.repo))
    print(f"core of {os.path.abspath(args.repo)}; cost = instructions + {MISPREDICT_CYCLES} x mispredicted branches\n")
    with tempfile.TemporaryDirectory() as tmp:
        print("| data | loss | iterations | passes | instructions (M) | mispredicts (M) | cost (M) | cost / pass (M) |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        ratios = []
        for seed in [int(s) for s in args.seeds.split(",") if s]:
            prefix = os.path.join(tmp, f"combo{seed}")
            write(prefix, *make_ranking(400, 100, 30, random_state=seed))
            row = {}
            for label, losses in (("map", "map"), ("combo", COMBO)):
                r = row[label] = fit_counts(binary, prefix, 30, losses)
                print(
                    f"| make_ranking(400, 100, 30, random_state={seed}) | {label} | {r['iterations']} | "
                    f"{r['passes']} | {r['instructions'] / 1e6:.1f} | {r['mispredicts'] / 1e6:.2f} | "
                    f"{r['cost'] / 1e6:.1f} | {r['cost'] / r['passes'] / 1e6:.2f} |"
                )
            ratios.append(
                (seed, row["combo"]["cost"] / row["map"]["cost"], row["combo"]["passes"] / row["map"]["passes"])
            )
        if args.mslr_queries:
            prefix = os.path.join(tmp, "mslr")
            X, y, qid = make_ranking(args.mslr_queries, 120, 136, random_state=0)
            write(prefix, X, y, qid)
            r = fit_counts(binary, prefix, 136, "map")
            print(
                f"| make_ranking({args.mslr_queries}, 120, 136) | map | {r['iterations']} | {r['passes']} | "
                f"{r['instructions'] / 1e6:.1f} | {r['mispredicts'] / 1e6:.2f} | {r['cost'] / 1e6:.1f} | "
                f"{r['cost'] / r['passes'] / 1e6:.2f} |"
            )
            per_doc = r["instructions"] / r["passes"] / X.shape[0]
            print(f"\nMSLR shape: {per_doc:.0f} instructions per document and pass ({X.shape[1]} features)")
        if ratios:
            print("\n| random_state | combo / map, cost | combo / map, passes |\n|---:|---:|---:|")
            for seed, cost_ratio, pass_ratio in ratios:
                print(f"| {seed} | {cost_ratio:.2f} | {pass_ratio:.2f} |")


if __name__ == "__main__":
    main()
