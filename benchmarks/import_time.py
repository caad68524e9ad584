"""How quickly svmmap starts: `import svmmap`, `svmmap --help` and `svmmap classify` (the
command-line jobs that must feel instant), against an empty interpreter and against importing
scikit-learn, in one run.

    python benchmarks/import_time.py [--runs 15]

Each command runs in a fresh interpreter --runs times; the table gives the median wall-clock
seconds and the seconds beyond an empty `python -c pass` (interpreter start-up), which is what
svmmap adds. classify scores MQ2008 Fold 1's test split (2,874 documents) with a model trained
here on its train split.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import svmmap
import tables  # benchmarks/tables.py, beside this script


def wall(cmd: list, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__, None)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        train = os.path.join(tmp, "train.txt")
        test = os.path.join(tmp, "test.txt")
        model = os.path.join(tmp, "model.json")
        X, y, qid = svmmap.datasets.load_mq2008(fold=1, split="train")
        with open(train, "w") as f:
            for row, label, q in zip(X, y, qid):
                f.write(f"{int(label)} qid:{q} " + " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(row)) + "\n")
        Xt, yt, qt = svmmap.datasets.load_mq2008(fold=1, split="test")
        with open(test, "w") as f:
            for row, label, q in zip(Xt, yt, qt):
                f.write(f"{int(label)} qid:{q} " + " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(row)) + "\n")
        subprocess.run([py, "-m", "svmmap", "learn", train, model], check=True, capture_output=True)
        commands = {
            "python -c pass (baseline)": [py, "-c", "pass"],
            "import numpy": [py, "-c", "import numpy"],
            "import sklearn.base (reference)": [py, "-c", "import sklearn.base"],
            "import svmmap": [py, "-c", "import svmmap"],
            "svmmap --help": [py, "-m", "svmmap", "--help"],
            "svmmap classify": [py, "-m", "svmmap", "classify", test, model, os.path.join(tmp, "p.txt")],
            "import svmmap; svmmap.SVMMap": [py, "-c", "import svmmap; svmmap.SVMMap"],
        }
        results = {name: wall(cmd, args.runs) for name, cmd in commands.items()}
    base = results["python -c pass (baseline)"]
    print(f"| command | median seconds ({args.runs} runs, timing) | beyond interpreter start-up (timing) |")
    print("|---|---:|---:|")
    for name, seconds in results.items():
        print(f"| `{name}` | {seconds:.3f} | {seconds - base:+.3f} |")


if __name__ == "__main__":
    main()
