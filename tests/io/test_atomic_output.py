"""Models, predictions, TREC runs and qrels (every file svmmap writes) appear whole or not at all.

Writes go to a temporary file beside the target, are flushed to disk and renamed over it.
These tests interrupt writers for real, in subprocesses:

- a file-size limit (RLIMIT_FSIZE) kills the writer with SIGXFSZ in the middle of writing;
- SIGKILL at the most delicate moment, after the data is on disk and before the rename;
- SIGKILL at random moments while a large file is rewritten over and over.

Each time the target must be the old complete file (or absent if there was none), never a
truncated one. A naive writer under the same limit is the control: it does leave a truncated
file, which shows that the harness can tell.
"""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

# Every test kills child processes that write for real (seconds each), hence slow.
pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and rlimits"), pytest.mark.slow]

N_SCORES = 100_000  # about 2 MB of predictions

# Each writer writes `path` from scratch with content big enough to exceed the size limit.
WRITERS = {
    "model": """
        import numpy as np, svmmap
        rng = np.random.default_rng(0)
        X = rng.normal(size=(20, 20_000)); y = np.tile([1, 0], 10); qid = np.repeat(np.arange(5), 4)
        model = svmmap.SVMMap(max_iter=2).fit(X, y, qid=qid)
        model.save(path)
    """,
    "predictions": f"""
        import numpy as np
        from svmmap.io import save_predictions
        save_predictions(path, np.linspace(0.0, 1.0, {N_SCORES}))
    """,
    "trec-run": """
        import numpy as np
        from svmmap.ir.trec import Run, write_run
        n = 40_000
        write_run(path, Run(qid=np.repeat(np.arange(400), 100).astype(str), docno=[f"d{i}" for i in range(n)],
                            score=np.linspace(0, 1, n), rank=np.zeros(n, dtype=np.int64)))
    """,
    "trec-qrels": """
        import numpy as np
        from svmmap.ir.trec import Qrels, write_qrels
        n = 40_000
        write_qrels(path, Qrels(qid=np.repeat(np.arange(400), 100).astype(str), docno=[f"d{i}" for i in range(n)],
                                rel=np.arange(n) % 3))
    """,
    "write_atomic": """
        from svmmap.io import write_atomic
        write_atomic(path, "x" * 1_000_000)
    """,
    # The control: not atomic, so the limit leaves a truncated file behind.
    "naive-control": """
        with open(path, "w") as f:
            f.write("x" * 1_000_000)
    """,
}

OLD_CONTENT = b"old complete content\n"


def _run_limited(code: str, path: str, limit: int) -> subprocess.CompletedProcess:
    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    script = f"import warnings; warnings.simplefilter('ignore')\npath = {path!r}\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], preexec_fn=limit_file_size, capture_output=True, timeout=120)


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("existing", [True, False], ids=["over-old-file", "new-file"])
def test_a_writer_killed_mid_write_leaves_no_truncated_file(tmp_path, writer, existing):
    target = tmp_path / "out"
    if existing:
        target.write_bytes(OLD_CONTENT)
    r = _run_limited(WRITERS[writer], str(target), limit=1 << 18)
    # The writer died of SIGXFSZ on its way past 256 KiB (or, with the signal ignored, failed).
    assert r.returncode != 0, r.stderr.decode()[-2000:]
    if writer == "naive-control":
        assert target.exists() and 0 < target.stat().st_size <= 1 << 18, "the control must truncate"
        return
    if existing:
        assert target.read_bytes() == OLD_CONTENT
    else:
        assert not target.exists()
    # What is left is at most the temporary file, never under the target's name.
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "out"]
    assert all(name.startswith(".out.tmp-") for name in leftovers), leftovers


def test_sigkill_between_write_and_rename_keeps_the_old_file(tmp_path):
    target = tmp_path / "model.json"
    target.write_bytes(OLD_CONTENT)
    script = textwrap.dedent(
        f"""
        import sys, time
        from svmmap import _core
        def before_rename():
            print("ready", flush=True)
            time.sleep(60)
        _core._debug_write_atomic({str(target)!r}, b"new" * 100_000, before_rename)
        """
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        try:
            ready = proc.stdout.readline().strip()
            # The new content is complete on disk under the temporary name at this moment.
            temps = [p for p in tmp_path.iterdir() if p.name.startswith(".model.json.tmp-")]
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
    assert ready == b"ready"
    assert len(temps) == 1 and temps[0].stat().st_size == 300_000
    assert proc.returncode == -signal.SIGKILL
    assert target.read_bytes() == OLD_CONTENT


def test_the_hook_runs_before_the_rename_and_can_abort_it(tmp_path):
    from svmmap import _core

    target = tmp_path / "f.txt"
    target.write_bytes(OLD_CONTENT)
    seen = []
    _core._debug_write_atomic(str(target), b"new", lambda: seen.append(target.read_bytes()))
    assert seen == [OLD_CONTENT] and target.read_bytes() == b"new"

    def fail():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _core._debug_write_atomic(str(target), b"newer", fail)
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"], "the temporary file is removed"


def test_sigkill_at_random_moments_during_large_writes(tmp_path):
    # A subprocess rewrites a 1 MB predictions file over and over, alternating two contents;
    # it is killed at random moments. Every time, the file is one complete version.
    target = tmp_path / "pred.txt"
    script = textwrap.dedent(
        f"""
        import numpy as np
        from svmmap.io import save_predictions
        a, b = np.full({N_SCORES // 2}, 0.25), np.full({N_SCORES // 2}, 0.5)
        save_predictions({str(target)!r}, a)
        print("ready", flush=True)
        while True:
            save_predictions({str(target)!r}, b)
            save_predictions({str(target)!r}, a)
        """
    )
    rng = np.random.default_rng(7)
    for _ in range(3):
        with subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        ) as proc:
            try:
                ready = proc.stdout.readline().strip()
                time.sleep(float(rng.uniform(0.05, 0.6)))
            finally:
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=30)
        assert ready == b"ready"
        lines = target.read_bytes().splitlines()
        assert len(lines) == N_SCORES // 2
        assert set(lines) in ({b"0.25"}, {b"0.5"})


def test_cli_classify_writes_predictions_atomically(tmp_path):
    # The command line's output goes through the same path: killed by the size limit, it
    # leaves the previous predictions in place.
    rng = np.random.default_rng(1)
    data = tmp_path / "test.txt"
    with open(data, "w") as f:
        for i in range(20_000):
            f.write(f"{i % 2} qid:{i // 20} 1:{rng.random():.3f} 2:{rng.random():.3f}\n")
    model = tmp_path / "model.json"
    r = subprocess.run(
        [sys.executable, "-m", "svmmap", "learn", "--max-iter", "5", str(data), str(model)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    preds = tmp_path / "pred.txt"
    preds.write_bytes(OLD_CONTENT)

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 18, 1 << 18))

    r = subprocess.run(
        [sys.executable, "-m", "svmmap", "classify", str(data), str(model), str(preds)],
        preexec_fn=limit_file_size,
        capture_output=True,
        timeout=120,
    )
    assert r.returncode != 0
    assert preds.read_bytes() == OLD_CONTENT
