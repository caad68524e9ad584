"""A/B of two svmmap builds: fit time and result of the same MQ2008 fits, in one run.

Each build lives in its own Python environment; the script alternates between them (three
rounds, best of three fits per round) so that machine noise falls on both alike, and prints
per fold and C the seconds, their ratio B/A, iterations and objectives, and the total ratio.

    # build A (e.g. main) into a separate environment, from an export of its tree:
    git archive main | tar -x -C /tmp/svmmap-a
    python -m venv --system-site-packages /tmp/venv-a && /tmp/venv-a/bin/pip install maturin
    (cd /tmp/svmmap-a && CARGO_TARGET_DIR=/tmp/target-a /tmp/venv-a/bin/maturin build --release -o /tmp/wheels-a)
    /tmp/venv-a/bin/pip install --no-deps /tmp/wheels-a/*.whl
    # B is the checkout's .venv (maturin develop --release):
    python benchmarks/compare_builds.py /tmp/venv-a/bin/python .venv/bin/python
"""

import json
import subprocess
import sys

CHILD = r"""
import json, sys, time, warnings
import numpy as np
import svmmap
from svmmap.datasets import load_mq2008
warnings.simplefilter("ignore")
out = []
for fold in (1, 2, 3, 4, 5):
    X, y, qid = load_mq2008(fold=fold, split="train")
    for C in (0.1, 1.0, 10.0, 100.0, 1000.0):
        best = None
        for _ in range(3):
            t = time.perf_counter(); m = svmmap.SVMMap(C=C).fit(X, y, qid=qid); dt = time.perf_counter() - t
            best = dt if best is None else min(best, dt)
        out.append({"fold": fold, "C": C, "seconds": best, "n_iter": m.n_iter_, "objective": m.objective_})
print(json.dumps(out))
"""


def run(python):
    return json.loads(subprocess.run([python, "-c", CHILD], capture_output=True, text=True, check=True).stdout)


a_py, b_py = sys.argv[1], sys.argv[2]
totals: dict = {"A": [], "B": []}
rounds = []
for _ in range(3):  # alternate A, B to spread machine noise over both
    rounds.append((run(a_py), run(b_py)))
ratios = []
print(f"{'fold':>4} {'C':>7} {'A s':>8} {'B s':>8} {'B/A':>6} {'A iter':>6} {'B iter':>6} {'A obj':>10} {'B obj':>10}")
for i in range(len(rounds[0][0])):
    a = min(rr[0][i]["seconds"] for rr in rounds)
    b = min(rr[1][i]["seconds"] for rr in rounds)
    ra, rb = rounds[0][0][i], rounds[0][1][i]
    ratios.append(b / a)
    totals["A"].append(a)
    totals["B"].append(b)
    print(
        f"{ra['fold']:>4} {ra['C']:>7g} {a:8.4f} {b:8.4f} {b / a:6.2f} {ra['n_iter']:>6} {rb['n_iter']:>6} {ra['objective']:10.6f} {rb['objective']:10.6f}"
    )
print(f"total A {sum(totals['A']):.3f}s  B {sum(totals['B']):.3f}s  B/A {sum(totals['B']) / sum(totals['A']):.3f}")
