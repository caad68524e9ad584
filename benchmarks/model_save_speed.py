"""The time ``save_model`` takes for a model of many weights: the present write (the document
checked once, in memory, and its text made once) against the former one, rebuilt here from the
same functions (the document encoded with ``json.dumps``, parsed back with ``json.loads`` for
``check_document``, then parsed a third time by ``model_text``, which checks it as a reader does
and writes the file's text). Both write the same bytes, which the script checks.

The machine may be busy: both writes are timed alternately in the same run, and the figure that
counts is their ratio (the load average is printed with it).

    python benchmarks/model_save_speed.py                  # 200,000 weights, 7 rounds
    python benchmarks/model_save_speed.py --weights 50000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

import numpy as np
from svmmap import _core
from svmmap._files.model_file import check_document, write_model
from svmmap._files.model_writing import model_text


def former_write(path: str, doc: dict) -> None:
    """The write before this change: three parses of the document's text."""
    text = json.dumps(doc, allow_nan=False)
    check_document(json.loads(text), path)
    _core.write_model_text(path, model_text(text, path))


def document(n_weights: int) -> dict:
    rng = np.random.default_rng(0)
    return {
        "format": "svmmap-model",
        "version": 1,
        "svmmap_version": "0.1.0",
        "n_features": n_weights,
        "coef": [float(v) for v in rng.normal(size=n_weights)],
        "params": {"C": 1.0, "loss": "map"},
        "feature_names": None,
        "binning": None,
        "training": {"n_iter": 3, "converged": True, "history": [{"iteration": 1, "primal": 1.0}]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    doc = document(args.weights)
    times: dict = {"former": [], "present": []}
    with tempfile.TemporaryDirectory() as folder:
        paths = {"former": os.path.join(folder, "a.json"), "present": os.path.join(folder, "b.json")}
        writes = {"former": former_write, "present": write_model}
        for _ in range(args.rounds):
            for name in ("former", "present"):
                start = time.perf_counter()
                writes[name](paths[name], doc)
                times[name].append(time.perf_counter() - start)
        with open(paths["former"], "rb") as a, open(paths["present"], "rb") as b:
            same = a.read() == b.read()
    former, present = statistics.median(times["former"]), statistics.median(times["present"])
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print(f"{args.weights} weights, median of {args.rounds} alternating rounds")
    print(f"former write (three parses): {former:.3f} s")
    print(f"present write (checked once): {present:.3f} s")
    print(f"ratio present / former: {present / former:.2f}; same bytes: {same}")


if __name__ == "__main__":
    main()
