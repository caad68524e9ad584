"""The per-call cost of the binding: many tiny fits and predictions, where the core's work is a
few microseconds and what is measured is the Python layer plus the crossing into the core, for
two checkouts of the package in one run.

    python benchmarks/binding_overhead.py A_PYTHONPATH B_PYTHONPATH [--rounds 5]

e.g. ``python benchmarks/binding_overhead.py /work/main/python python``: A is the package (with
its built ``_core``) under the first path, B under the second. Each round runs every job in a
fresh interpreter for A, then for B, so that machine noise falls on both alike; the table gives
each job's median over the rounds of the CPU seconds per call (user + system, which other jobs
on the machine disturb far less than the wall-clock time) and the ratio B/A. The jobs:

- ``fit``: ``SVMMap(C=1).fit`` on 40 documents of 4 queries with 3 features (the whole fit:
  input checks, the configuration, the matrix, the core's fit, the fitted attributes);
- ``fit_path``: ``_core.fit_path`` alone on a matrix and a configuration made before;
- ``predict``: ``_core.predict`` of the same matrix, the smallest core call that reads features;
- ``matrix``: ``check_matrix`` of the dense array (making the matrix handed to the core).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, resource, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
import svmmap
from svmmap import _core
from svmmap._validation import check_matrix

rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
y = (rng.random(40) > 0.6).astype(np.float64)
y[::10] = 1.0
y[1::10] = 0.0
qid = np.repeat(np.arange(4), 10)
codes = qid.astype(np.int64)
core_X = check_matrix(X)[0]
config = _core.TrainConfig(C=1.0, n_jobs=1)
coef = np.ones(3)


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


jobs = {
    "fit": (200, lambda: svmmap.SVMMap(C=1.0, n_jobs=1).fit(X, y, qid=qid)),
    "fit_path": (400, lambda: _core.fit_path(core_X, y, codes, 4, config)),
    "predict": (4000, lambda: _core.predict(core_X, coef, 1)),
    "matrix": (4000, lambda: check_matrix(X)),
}
out = {}
for name, (n, job) in jobs.items():
    for _ in range(n // 10):
        job()
    start = cpu()
    for _ in range(n):
        job()
    out[name] = (cpu() - start) / n
print(json.dumps(out))
"""


def run(path: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(path)}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="PYTHONPATH of build A (the baseline)")
    parser.add_argument("b", help="PYTHONPATH of build B")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rounds = [(run(args.a), run(args.b)) for _ in range(args.rounds)]
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'job':10} {'A us/call':>10} {'B us/call':>10} {'B/A':>6}")
    for job in rounds[0][0]:
        a = statistics.median(r[0][job] for r in rounds) * 1e6
        b = statistics.median(r[1][job] for r in rounds) * 1e6
        print(f"{job:10} {a:10.1f} {b:10.1f} {b / a:6.2f}")


if __name__ == "__main__":
    main()
