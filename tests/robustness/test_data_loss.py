"""Issue 25, data loss: no output over a user's file.

- One rule for how an output is written (``rust/atomic.rs``): only a regular file reached by
  its name is replaced by an atomic rename; a path that names an open descriptor
  (``/dev/stdout``, ``/dev/fd/1``, ``/proc/self/fd/1``) is written through it, so that
  ``svmmap classify T M /dev/stdout >> log`` appends to ``log`` instead of renaming a file
  over it.
- One rule for what an input is (``svmmap/cli/_files.py``): every file a command reads, also
  the ``.query`` sizes it finds by itself beside the data file.
- Whatever is written must load: ``save_model`` and ``SVMMap.save`` check the document with
  the reader's checks before writing.

The shell redirections run in real child shells; the outputs are compared with the same
command writing to a regular file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import svmmap
from svmmap.cli import main

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/dev/fd, /proc and FIFOs")


def _letor(path, *, qid=True, n_queries=5, seed=3):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for q in range(n_queries):
            for d in range(4):
                head = f"{int(d < 2)} qid:{q}" if qid else f"{int(d < 2)}"
                f.write(f"{head} 1:{rng.random() + (d < 2):.4f} 2:{rng.random():.4f}\n")


def _quiet(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    return status, err.getvalue()


@pytest.fixture
def files(tmp_path):
    train = tmp_path / "train.txt"
    _letor(train)
    model = tmp_path / "model.json"
    assert _quiet(["learn", str(train), str(model)])[0] == 0
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 d{d} {int(d < 2)}\n" for q in range(5) for d in range(4)))
    runs = []
    for r in range(2):
        path = tmp_path / f"run{r}"
        path.write_text(
            "".join(f"{q} Q0 d{d} {d + 1} {4 - d + r * 0.1 * d} r{r}\n" for q in range(5) for d in range(4))
        )
        runs.append(str(path))
    return {"train": str(train), "model": str(model), "qrels": str(qrels), "runs": runs, "dir": tmp_path}


# Each command with OUT where its output goes; the fuse table goes to stdout after the run.
COMMANDS = {
    "learn": lambda f: ["learn", f["train"], "OUT"],
    "classify": lambda f: ["classify", f["train"], f["model"], "OUT"],
    "export": lambda f: ["export", "--to", "solr", "--name", "m", f["model"], "OUT"],
    "fuse": lambda f: [
        "fuse",
        "--quiet",
        "--folds",
        "2",
        "--C",
        "1",
        "--qrels",
        f["qrels"],
        "--runs",
        *f["runs"],
        "--out",
        "OUT",
    ],
}

DESCRIPTOR_PATHS = ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]


def _expected_output(files, command):
    """What the command writes to a regular file of its own (learn's model has a timing-free
    content, so the same command gives the same bytes)."""
    out = files["dir"] / f"expected-{command}"
    argv = [str(out) if a == "OUT" else a for a in COMMANDS[command](files)]
    assert _quiet(argv)[0] == 0
    return out.read_bytes()


def _shell(argv, redirect, log):
    """Runs ``svmmap ARGV REDIRECT log`` in a real shell; returns (status, stderr)."""
    import shlex

    svmmap_cmd = f"{shlex.quote(sys.executable)} -m svmmap " + " ".join(shlex.quote(a) for a in argv)
    proc = subprocess.run(
        ["bash", "-c", f"{svmmap_cmd} {redirect} {shlex.quote(str(log))}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.returncode, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_through_a_descriptor_is_written_into_the_shells_file(files, command):
    # Every descriptor path and both redirections: `>> log` must keep the old lines and append
    # the output; `> log` must hold just the output. Before the fix, the link was followed to
    # `log` and a file renamed over it: the old lines were gone (and `log` a new inode).
    expected = _expected_output(files, command)
    for path in DESCRIPTOR_PATHS:
        for redirect in (">>", ">"):
            log = files["dir"] / "log"
            log.write_bytes(b"earlier line of the user's log\n")
            inode = log.stat().st_ino
            argv = [path if a == "OUT" else a for a in COMMANDS[command](files)]
            status, err = _shell(argv, redirect, log)
            assert status == 0, (command, path, redirect, err)
            got = log.read_bytes()
            prefix = b"earlier line of the user's log\n" if redirect == ">>" else b""
            assert got.startswith(prefix), (command, path, redirect, got[:200])
            got = got[len(prefix) :]
            if command == "learn":
                # A model holds its training times; the weights are what must agree.
                assert json.loads(got)["coef"] == json.loads(expected)["coef"], (path, redirect)
            else:
                assert got.startswith(expected), (command, path, redirect, got[:200])
            assert log.stat().st_ino == inode, "the shell's file was replaced, not written"
            # Nothing else appeared beside it (no temporary file, no second file).
            assert not [p for p in files["dir"].iterdir() if p.name.startswith(".")]


def test_classify_to_dev_stdout_appends_to_the_log(files):
    # The example, quick enough for every run.
    log = files["dir"] / "log"
    log.write_text("old\n")
    status, err = _shell(["classify", files["train"], files["model"], "/dev/stdout"], ">>", log)
    assert status == 0, err
    lines = log.read_text().splitlines()
    assert lines[0] == "old" and len(lines) == 1 + 20


def test_a_descriptor_of_the_process_is_written_at_its_offset(tmp_path):
    # The same rule from Python: /dev/fd/N of a file opened for appending gets the bytes at the
    # end, through the descriptor, and the file keeps its inode.
    path = tmp_path / "log"
    path.write_text("first\n")
    inode = path.stat().st_ino
    with open(path, "a") as f:
        svmmap.io.write_atomic(f"/dev/fd/{f.fileno()}", "second\n")
    assert path.read_text() == "first\nsecond\n"
    assert path.stat().st_ino == inode


def test_a_closed_descriptor_is_an_error(tmp_path):
    r, w = os.pipe()
    os.close(r)
    os.close(w)
    with pytest.raises(OSError):
        svmmap.io.write_atomic(f"/dev/fd/{w}", "x\n")


# --- inputs a command finds by itself ---------------------------------------------------------


@pytest.fixture
def lightgbm_layout(tmp_path, files):
    data = tmp_path / "nq.txt"
    _letor(data, qid=False)
    sizes = tmp_path / "nq.txt.query"
    sizes.write_text("4\n" * 5)
    other = tmp_path / "S"
    shutil.copy(sizes, other)
    return {"data": str(data), "auto": str(sizes), "explicit": str(other), "model": files["model"]}


def _alias(path, how):
    """``path`` under another name: itself, a symbolic link, a relative one, a hard link."""
    if how == "same":
        return path
    alias = os.path.join(os.path.dirname(path), f"alias-{how}")
    if how == "symlink":
        os.symlink(path, alias)
    elif how == "relative":
        os.symlink(os.path.basename(path), alias)
    else:
        os.link(path, alias)
    return alias


def test_the_query_sizes_a_command_reads_are_inputs(lightgbm_layout):
    # learn TRAIN TRAIN.query and classify TEST M TEST.query used to overwrite the sizes file
    # the command had just read by itself; --group S with S as the output too.
    f = lightgbm_layout
    commands = {
        "learn": lambda out: ["learn", f["data"], out],
        "classify": lambda out: ["classify", f["data"], f["model"], out],
        "learn --group": lambda out: ["learn", "--group", f["explicit"], f["data"], out],
        "classify --group": lambda out: ["classify", "--group", f["explicit"], f["data"], f["model"], out],
    }
    for name, argv in commands.items():
        victim = f["explicit"] if "--group" in name else f["auto"]
        for how in ("same", "symlink", "relative", "hardlink"):
            before = Path(victim).read_bytes()
            alias = _alias(victim, how)
            try:
                status, err = _quiet(argv(alias))
            finally:
                if alias != victim:
                    os.remove(alias)
            assert status == 2, (name, how, err)
            assert "refusing to overwrite an input" in err, err
            assert Path(victim).read_bytes() == before, (name, how)


def test_commands_with_their_query_sizes_still_run(lightgbm_layout, tmp_path):
    f = lightgbm_layout
    out = tmp_path / "scores"
    assert _quiet(["classify", f["data"], f["model"], str(out)])[0] == 0
    assert len(out.read_text().splitlines()) == 20
    assert _quiet(["learn", f["data"], str(tmp_path / "m.json")])[0] == 0


# --- whatever is written loads ----------------------------------------------------------------


def _fitted(kind):
    X = np.random.default_rng(0).random((12, 3))
    y = [1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0]
    qid = [1] * 4 + [2] * 4 + [3] * 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "svm":
            return svmmap.SVMMap(C=1.0).fit(X, y, qid=qid)
        from sklearn.pipeline import make_pipeline

        return make_pipeline(svmmap.Binner(n_thresholds=3), svmmap.SVMMap(C=1.0)).fit(X, y, svmmap__qid=qid)


# Parameter values a user can set after fitting, valid and invalid mixed: the property is the
# same for all, so the list needs no expected outcome per value.
VALUES = {
    "C": [0, -1, 1e-300, 1.0, 1e300, float("nan"), float("inf"), "1", True, None],
    "eps": [0, -1, 1e-3, float("nan"), 2.0, "x", None],
    "max_iter": [0, -3, 1, 10, 2.5, "10", None],
    "loss": ["map", "mapp", "ndcg@10", "ndcg@0", "max(map,roc)", "", 3, ["map", "roc"], ["map", "map"], None],
    "slack": ["separate", "shared", "both", None, 1],
    "relevance_threshold": [0.0, -2.0, float("nan"), "a", None],
}
BINNER_VALUES = {
    "n_thresholds": [0, -1, 1, 3, 2.5, "3", None],
    "strategy": ["quantile", "uniform", "kmeans", None],
    "missing": ["error", "indicator", "zero", None],
}


@pytest.mark.parametrize("kind", ["svm", "pipeline"])
def test_a_model_that_is_saved_loads(tmp_path, kind):
    # For every value: either save refuses it (ValueError) and the old file is untouched, or the
    # file it writes loads and predicts as the model does. Before the fix, C=0, loss="mapp",
    # eps=-1 and binner n_thresholds=0 were written and then refused by load_model forever.
    path = tmp_path / "m.json"
    model = _fitted(kind)
    svmmap.save_model(model, path)
    old = path.read_bytes()
    refused = 0
    X = np.random.default_rng(1).random((5, 3))
    cases = [(f"svmmap__{k}" if kind == "pipeline" else k, v) for k, vs in VALUES.items() for v in vs]
    if kind == "pipeline":
        cases += [(f"binner__{k}", v) for k, vs in BINNER_VALUES.items() for v in vs]
    for key, value in cases:
        model = _fitted(kind)
        model.set_params(**{key: value})
        for save in (svmmap.save_model, None if kind == "pipeline" else (lambda m, p: m.save(p))):
            if save is None:
                continue
            try:
                save(model, path)
            except (ValueError, TypeError) as exc:
                # TypeError: Binner.to_dict cannot even state the value (n_thresholds=None).
                refused += 1
                assert isinstance(exc, TypeError) or "written" in str(exc), (key, value, exc)
                assert path.read_bytes() == old, (key, value)
                continue
            loaded = svmmap.load_model(path)
            np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
            old = path.read_bytes()
    assert refused >= 10


def test_a_repeated_column_name_is_refused_at_fit_so_no_model_file_can_hold_it(tmp_path):
    # A name must pick one column at predict time and in the exports: the fit refuses repeated
    # names (it used to keep them, and only save_model refused them), so no model that could
    # not be saved is ever made.
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.random.default_rng(0).random((8, 2)), columns=["a", "a"])
    with pytest.raises(ValueError, match="must be unique"):
        svmmap.SVMMap().fit(X, [1, 0, 0, 0, 1, 1, 0, 0], qid=[1] * 4 + [2] * 4)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("where", ["missing-folder", "nested-missing", "under-a-file", "a-folder", "dot"])
def test_an_output_that_cannot_be_written_is_refused_before_any_work(files, command, where, monkeypatch):
    # Into a folder that does not exist, under a regular file, or onto a folder: refused with
    # exit 2 before the command reads or trains anything, naming the output and its folder
    # (learn used to train in full and then fail on the temporary file beside the output,
    # '[Errno 2] ... nodir/.model.json.tmp-17133-0').
    d = files["dir"]
    out = {
        "missing-folder": d / "nodir" / "out",
        "nested-missing": d / "a" / "b" / "out",
        "under-a-file": Path(files["train"]) / "out",
        "a-folder": d,
        "dot": Path("."),
    }[where]
    monkeypatch.chdir(d)
    work = []
    monkeypatch.setattr(svmmap, "load_letor", lambda *a, **k: work.append(a))
    argv = [str(out) if a == "OUT" else a for a in COMMANDS[command](files)]
    status, err = _quiet(argv)
    assert status == 2, err
    assert str(out) in err and ("folder" in err), err
    assert "tmp-" not in err and not work, err
    assert sorted(p.name for p in d.iterdir()) == sorted(["train.txt", "model.json", "qrels", "run0", "run1"]), (
        "nothing is created"
    )
