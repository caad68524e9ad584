"""How long the README's first command takes on a fresh clone: `pip install -v --no-compile .` in
a new virtual environment, timed from start to end, with the longest stretch without a line of
output, and what the first `svmmap experiment` pays for the modules pip did not compile.

    python benchmarks/install_time.py [--repeat 1]

The script clones this checkout's HEAD (`git clone --no-local`, so no build directory of the
checkout comes along), makes a virtual environment with this interpreter, and runs the README's
`pip install -v --no-compile .` in it, reading pip's output line by line as a user watching it
would. The table gives the whole install, the wheel's build (from maturin's first line to "Built
wheel"), and the longest pause between two lines of output (the step that printed next).
`--no-compile` skips pip's byte-compilation of every module of numpy, scipy and scikit-learn
(about 14 s on a 2-core machine; uv does not compile either unless asked): Python compiles a
module the first time it is imported and keeps the result. The table's last timing row is what
that costs the README's next command: the first `svmmap experiment` minus the second. Downloads
come from PyPI and crates.io; crates already in cargo's cache (~/.cargo/registry) are not
downloaded again, which is the only difference from a machine that never ran cargo. The last
row states issue 37's target (about a minute on a quiet 2-core machine, read as at most 90 s)
and whether this run holds it, with the load average before the run: another job on the
machine stretches every figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import List, Tuple

import tables  # benchmarks/tables.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
#: Issue 37: "about a minute on a quiet 2-core machine", read as at most this many seconds.
TARGET_SECONDS = 90.0


#: The README's first command, after ``pip``.
INSTALL_ARGS = ["install", "-v", "--no-compile", "."]


def timed_install(checkout: Path, env_dir: Path) -> Tuple[float, float, float, str]:
    """Runs `pip install -v --no-compile .` in ``checkout`` with the environment ``env_dir``: (whole seconds,
    wheel-build seconds, longest pause in seconds, the line printed after that pause)."""
    pip = env_dir / "bin" / "pip"
    env = {
        k: v for k, v in os.environ.items() if k not in ("CARGO_TARGET_DIR", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")
    }
    start = time.perf_counter()
    last = start
    pause, after_pause = 0.0, ""
    build_start = build_end = None
    with subprocess.Popen(
        [str(pip), *INSTALL_ARGS],
        cwd=checkout,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            now = time.perf_counter()
            if now - last > pause:
                pause, after_pause = now - last, line.strip()
            last = now
            if build_start is None and "maturin" in line.lower() and "Running" in line:
                build_start = now
            if "Built wheel" in line or "Created wheel" in line:
                build_end = now
    if process.returncode != 0:
        raise SystemExit(f"pip {' '.join(INSTALL_ARGS)} failed with status {process.returncode}")
    whole = time.perf_counter() - start
    build = (build_end or whole + start) - (build_start or start)
    return whole, build, pause, after_pause


def first_run_cost(checkout: Path, env_dir: Path) -> float:
    """Seconds the first `svmmap experiment` takes beyond the second: Python compiling the modules
    it imports, which pip was told not to compile. Bytecode writing is on, as on a user's machine."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV")}
    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        subprocess.run(
            [str(env_dir / "bin" / "svmmap"), "experiment"],
            cwd=checkout,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        seconds.append(time.perf_counter() - start)
    return seconds[0] - seconds[1]


def one_run() -> Tuple[float, float, float, str, float]:
    with tempfile.TemporaryDirectory(prefix="svmmap-install-") as tmp:
        checkout = Path(tmp) / "svmmap"
        subprocess.run(["git", "clone", "--quiet", "--no-local", str(ROOT), str(checkout)], check=True)
        env_dir = Path(tmp) / "venv"
        venv.EnvBuilder(with_pip=True).create(env_dir)
        return (*timed_install(checkout, env_dir), first_run_cost(checkout, env_dir))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="installs to run (the table gives medians)")
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__, None)
    load = os.getloadavg()[0]
    runs: List[Tuple[float, float, float, str, float]] = []
    for number in range(args.repeat):
        runs.append(one_run())
        print(f"install {number + 1}/{args.repeat}: {runs[-1][0]:.0f} s", file=sys.stderr, flush=True)
    whole = statistics.median(r[0] for r in runs)
    build = statistics.median(r[1] for r in runs)
    pause, after = max((r[2], r[3]) for r in runs)
    first_run = statistics.median(r[4] for r in runs)
    # Cargo's lines quote names in backquotes, which would end the table cell's code span.
    after = after.replace("`", "'").replace("|", "/")
    shown_after = after if len(after) <= 60 else after[:57] + "..."
    print(f"| `pip {' '.join(INSTALL_ARGS)}` on a fresh clone ({args.repeat} run(s), median) | seconds (timing) |")
    print("|---|---:|")
    print(f"| the whole install | {whole:.0f} |")
    print(f"| the wheel's build (maturin and cargo) | {build:.0f} |")
    print(f"| the longest pause without output, before `{shown_after}` | {pause:.0f} |")
    print(f"| then the first `svmmap experiment`'s extra time (compiling what it imports) | {first_run:.0f} |")
    verdict = "holds" if whole <= TARGET_SECONDS else "does not hold"
    print(f"| target: about a minute (at most {TARGET_SECONDS:.0f} s) at load {load:.1f} before the run | {verdict} |")


if __name__ == "__main__":
    main()
