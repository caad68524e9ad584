"""How quickly svmmap starts: `import svmmap` and the command-line jobs that must feel instant
(`svmmap --version`, `--help`, and `learn` and `classify` on a 300-line file), against an empty
interpreter and against importing scikit-learn, in one run.

    python benchmarks/import_time.py [--runs 15]

Each command runs in a fresh interpreter --runs times; the table gives the median wall-clock
seconds, the seconds beyond an empty `python -c pass` (interpreter start-up), which is what
svmmap adds, and the same for the CPU seconds (user + system), which other jobs running on the
machine disturb far less than the wall-clock time. learn trains on the first 300 lines of MQ2008 Fold 1's train split (19 queries,
written to a temporary directory) and classify scores them with that model: work of a few
milliseconds, so their rows are the command line's own overhead. The last two lines state the
targets and whether they hold in this run: every command-line job at most 0.3 s beyond the
interpreter's start, and `--version` and every `--help` (which import neither NumPy nor
anything of svmmap beyond the core's tables) at most 0.08 s beyond it (issue 37). Which modules a job imports is shown by, e.g.,
`python -X importtime -m svmmap learn FILE MODEL 2>&1 | sort -t'|' -k2 -n | tail`.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Tuple

import svmmap
import tables  # benchmarks/tables.py, beside this script

#: The command line's overhead beyond the interpreter's start-up that every job must stay under.
TARGET_SECONDS = 0.3
#: The rows of the table that are command-line jobs (the target applies to them).
CLI_JOBS = (
    "svmmap --version",
    "svmmap --help",
    "svmmap learn --help",
    "svmmap learn (300 lines)",
    "svmmap classify (300 lines)",
)
#: What --version and --help may add to the interpreter's start-up: they print text.
HELP_TARGET_SECONDS = 0.08
HELP_JOBS = ("svmmap --version", "svmmap --help", "svmmap learn --help")
LINES = 300


def timed(cmd: list, runs: int) -> Tuple[float, float]:
    """Median wall-clock seconds and median CPU seconds (user + system, of the child and its
    threads) of ``runs`` runs of ``cmd``."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__, None)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        train = os.path.join(tmp, "train.txt")
        model = os.path.join(tmp, "model.json")
        X, y, qid = svmmap.datasets.load_mq2008(fold=1, split="train")
        with open(train, "w") as f:
            for row, label, q in zip(X[:LINES], y[:LINES], qid[:LINES]):
                f.write(f"{int(label)} qid:{q} " + " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(row)) + "\n")
        subprocess.run([py, "-m", "svmmap", "learn", train, model], check=True, capture_output=True)
        commands = {
            "python -c pass (baseline)": [py, "-c", "pass"],
            "import numpy": [py, "-c", "import numpy"],
            "import sklearn.base (reference)": [py, "-c", "import sklearn.base"],
            "import svmmap": [py, "-c", "import svmmap"],
            "svmmap --version": [py, "-m", "svmmap", "--version"],
            "svmmap --help": [py, "-m", "svmmap", "--help"],
            "svmmap learn --help": [py, "-m", "svmmap", "learn", "--help"],
            "svmmap learn (300 lines)": [py, "-m", "svmmap", "learn", train, os.path.join(tmp, "m.json")],
            "svmmap classify (300 lines)": [py, "-m", "svmmap", "classify", train, model, os.path.join(tmp, "p.txt")],
            "import svmmap; svmmap.SVMMap": [py, "-c", "import svmmap; svmmap.SVMMap"],
        }
        results = {name: timed(cmd, args.runs) for name, cmd in commands.items()}
    base, base_cpu = results["python -c pass (baseline)"]
    print(
        f"| command | median seconds ({args.runs} runs, timing) | beyond interpreter start-up (timing) | CPU seconds beyond start-up (timing) |"
    )
    print("|---|---:|---:|---:|")
    for name, (seconds, cpu) in results.items():
        print(f"| `{name}` | {seconds:.3f} | {seconds - base:+.3f} | {cpu - base_cpu:+.3f} |")
    worst = max(CLI_JOBS, key=lambda name: results[name][0])
    overhead = results[worst][0] - base
    worst_cpu = max(CLI_JOBS, key=lambda name: results[name][1])
    verdict = "holds" if overhead <= TARGET_SECONDS else "does not hold"
    # The verdict is the table's last row, so that --write regenerates it with the figures.
    # CPU time is shown too: other jobs on the machine stretch the wall-clock time of every
    # row, far less the CPU time a job uses, which is its wall-clock time on an idle machine
    # when start-up runs on one thread.
    print(
        f"| target: every command-line job at most {TARGET_SECONDS:.1f} s beyond `python -c pass` | {verdict} "
        f"| largest {overhead:+.3f} (`{worst}`) | largest {results[worst_cpu][1] - base_cpu:+.3f} (`{worst_cpu}`) |"
    )
    worst = max(HELP_JOBS, key=lambda name: results[name][0])
    overhead = results[worst][0] - base
    worst_cpu = max(HELP_JOBS, key=lambda name: results[name][1])
    verdict = "holds" if overhead <= HELP_TARGET_SECONDS else "does not hold"
    print(
        f"| target: `--version` and `--help` at most {HELP_TARGET_SECONDS:.2f} s beyond `python -c pass` | {verdict} "
        f"| largest {overhead:+.3f} (`{worst}`) | largest {results[worst_cpu][1] - base_cpu:+.3f} (`{worst_cpu}`) |"
    )


if __name__ == "__main__":
    main()
