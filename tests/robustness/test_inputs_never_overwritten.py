"""Issue 13, item 4: no input is ever overwritten or damaged.

- Every command that writes refuses an output path that is one of its inputs, compared by
  device and inode (os.path.samefile): the same name, a symbolic link to it, a hard link.
- Atomic writes (``rust/atomic.rs`` write_atomic, used by every writer in Python) keep the
  existing file's permission bits, write through a symbolic link to its target instead of
  replacing the link, write FIFOs and character devices (``/dev/stdout``) in place instead of
  renaming a file over them, and refuse sockets.

All with real files, links, FIFOs and modes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import stat
import subprocess
import sys
import threading

import numpy as np
import pytest
import svmmap
from svmmap.cli import main
from svmmap.io import save_predictions, write_atomic
from svmmap.ir.trec import Run, write_run

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes, links and FIFOs")


def _letor(path):
    rng = np.random.default_rng(3)
    with open(path, "w") as f:
        for q in range(6):
            for d in range(4):
                f.write(f"{int(d < 2)} qid:{q} 1:{rng.random() + (d < 2):.4f} 2:{rng.random():.4f}\n")


@pytest.fixture
def files(tmp_path):
    train = tmp_path / "train.txt"
    _letor(train)
    model = tmp_path / "model.json"
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["learn", str(train), str(model)]) == 0
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 d{d} {int(d < 2)}\n" for q in range(6) for d in range(4)))
    runs = []
    for r in range(2):
        path = tmp_path / f"run{r}"
        path.write_text(
            "".join(f"{q} Q0 d{d} {d + 1} {4 - d + r * 0.1 * d} r{r}\n" for q in range(6) for d in range(4))
        )
        runs.append(path)
    return {"train": train, "model": model, "qrels": qrels, "runs": runs, "dir": tmp_path}


def _run_cli(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, err.getvalue()


def _alias(files, target, how):
    """Another name for ``target``: itself, a symbolic link, or a hard link."""
    if how == "same-name":
        return target
    alias = files["dir"] / f"alias-{how}-{target.name}"
    if how == "symlink":
        alias.symlink_to(target)
    elif how == "relative-symlink":
        alias.symlink_to(target.name)
    else:
        os.link(target, alias)
    return alias


def _fuse(f, out):
    """`svmmap fuse` of the fixture's runs and qrels, writing its run to ``out``."""
    return ["fuse", "-q", "--qrels", f["qrels"], "--runs", *f["runs"], "--folds", "2", "--C", "1", "--out", out]


COMMANDS = {
    "learn-onto-TRAIN": (lambda f, out: ["learn", f["train"], out], "train", "MODEL"),
    "classify-onto-TEST": (lambda f, out: ["classify", f["train"], f["model"], out], "train", "PREDICTIONS"),
    "classify-onto-MODEL": (lambda f, out: ["classify", f["train"], f["model"], out], "model", "PREDICTIONS"),
    "export-onto-MODEL": (lambda f, out: ["export", "--to", "solr", f["model"], out], "model", "OUT"),
    "fuse-onto-a-run": (
        _fuse,
        "run1",
        "--out",
    ),
    "fuse-onto-the-qrels": (
        _fuse,
        "qrels",
        "--out",
    ),
}


@pytest.mark.parametrize("how", ["same-name", "symlink", "relative-symlink", "hardlink"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_that_is_an_input_is_refused(files, command, how):
    argv_of, input_key, label = COMMANDS[command]
    target = files["runs"][1] if input_key == "run1" else files[input_key]
    before = {p: p.read_bytes() for p in [files["train"], files["model"], files["qrels"], *files["runs"]]}
    out = _alias(files, target, how)
    code, err = _run_cli(argv_of(files, out))
    assert code == 2, err
    assert f"{label} {str(out)!r} is the input" in err and "refusing to overwrite an input" in err, err
    assert len([line for line in err.splitlines() if line]) == 1, err
    for path, content in before.items():
        assert path.read_bytes() == content, f"{path} was changed"
    if how != "same-name":
        assert os.path.samefile(out, target), "the alias itself was replaced"


def test_distinct_outputs_are_still_written(files):
    """The control: the same commands with a fresh output path succeed."""
    out = files["dir"] / "out"
    for command in sorted(COMMANDS):
        code, err = _run_cli(COMMANDS[command][0](files, out))
        assert code == 0, (command, err)
        out.unlink()


def test_the_same_run_twice_is_refused_also_through_a_link(files):
    link = _alias(files, files["runs"][0], "symlink")
    code, err = _run_cli(
        ["fuse", "-q", "--qrels", files["qrels"], "--runs", files["runs"][0], link, "--out", files["dir"] / "o"]
    )
    assert code == 2 and "are the same run file, given twice" in err, err


WRITERS = {
    "write_atomic": lambda path: write_atomic(path, "new content\n"),
    "save_predictions": lambda path: save_predictions(path, np.array([0.5, -1.0])),
    "write_run": lambda path: write_run(path, Run.from_dict({"1": {"d1": 1.0}})),
    "save_model": lambda path: svmmap.save_model(
        svmmap.SVMMap().fit(np.array([[1.0], [0.0]]), [1, 0], qid=[1, 1]), path
    ),
}


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664, 0o444, 0o755])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_rewriting_a_file_keeps_its_mode(tmp_path, writer, mode):
    path = tmp_path / "out"
    path.write_text("old\n")
    path.chmod(mode)
    old_umask = os.umask(0o022)  # would turn 0664 into 0644 if the mode were not carried over
    try:
        WRITERS[writer](path)
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_text() != "old\n"


def test_a_new_file_gets_the_usual_mode(tmp_path):
    old_umask = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new", "x")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o640


def test_a_private_model_stays_private_through_learn(tmp_path):
    train = tmp_path / "train.txt"
    _letor(train)
    model = tmp_path / "model.json"
    model.write_text("{}")
    model.chmod(0o600)
    code, err = _run_cli(["learn", train, model])
    assert code == 0, err
    assert stat.S_IMODE(model.stat().st_mode) == 0o600
    assert json.loads(model.read_text())["format"] == "svmmap-model"


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_writing_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path, writer):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "file"
    target.write_text("old\n")
    target.chmod(0o600)
    link = tmp_path / "link"
    link.symlink_to(os.path.join("real", "file"))  # relative, resolved from the link's directory
    WRITERS[writer](link)
    assert link.is_symlink() and os.readlink(link) == os.path.join("real", "file")
    assert target.read_text() != "old\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    # Nothing else appeared beside the link or the target (temporary files are renamed away).
    assert sorted(os.listdir(tmp_path)) == ["link", "real"] and os.listdir(tmp_path / "real") == ["file"]


def test_a_dangling_symlink_gets_its_target_created(tmp_path):
    link = tmp_path / "link"
    link.symlink_to("target")
    write_atomic(link, "x")
    assert link.is_symlink() and (tmp_path / "target").read_text() == "x"


def _read_fifo(path, out):
    with open(path, "rb") as f:
        out.append(f.read())


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_fifo_is_written_into_not_replaced(tmp_path, writer):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list = []
    reader = threading.Thread(target=_read_fifo, args=(fifo, received))
    reader.start()
    try:
        WRITERS[writer](fifo)
    finally:
        # Unblocks the reader if the writer failed before opening the FIFO. A non-blocking
        # open never waits: it fails (ENXIO) when the reader has already gone, where a
        # blocking one would wait forever for a reader that read its end of file and left.
        if reader.is_alive():
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a file"
    assert received and len(received[0]) > 0
    if writer == "save_predictions":
        assert received[0] == b"0.5\n-1.0\n"


def test_cli_classify_to_dev_stdout_streams_the_scores(files):
    """/dev/stdout is a link to the process's standard output (here a pipe): the scores arrive
    in the pipe, and /dev/stdout is still what it was."""
    before = os.lstat("/dev/stdout")
    r = subprocess.run(
        [sys.executable, "-m", "svmmap", "classify", str(files["train"]), str(files["model"]), "/dev/stdout"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.split()) == 24 and all(np.isfinite(float(s)) for s in r.stdout.split())
    after = os.lstat("/dev/stdout")
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(str(path))
        with pytest.raises(ValueError, match=r"sock: is a socket; refusing to write a file over it"):
            write_atomic(path, "x")
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        s.close()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file to another user")
def test_root_rewriting_a_users_file_keeps_its_owner(tmp_path):
    path = tmp_path / "model.json"
    path.write_text("old")
    os.chown(path, 4321, 4322)
    path.chmod(0o640)
    write_atomic(path, "new")
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4322, 0o640)


def test_cli_classify_reads_test_data_from_a_pipe(files, tmp_path):
    """TEST may be /dev/stdin: it is read once, and a file that omits the last features is
    widened in memory instead of being read a second time."""
    text = "".join(line.rsplit(" ", 1)[0] + "\n" for line in files["train"].read_text().splitlines())  # drop feature 2
    out = tmp_path / "pred.txt"
    r = subprocess.run(
        [sys.executable, "-m", "svmmap", "classify", "/dev/stdin", str(files["model"]), str(out)],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    coef = svmmap.load_model(files["model"]).coef_
    x1 = np.array([float(line.split()[2].split(":")[1]) for line in text.splitlines()])
    assert np.allclose(np.loadtxt(out), x1 * coef[0], rtol=0, atol=1e-12)


# Every command that writes, into a folder that does not exist (issue 27): the message names
# the user's path and the missing folder. It used to name the temporary file beside the output
# ("No such file or directory: 'out/.model.json.tmp-123-0'"), a name the user never gave.
WRITING_COMMANDS = {
    "learn": lambda f, out: ["learn", f["train"], out],
    "classify": lambda f, out: ["classify", f["train"], f["model"], out],
    "export": lambda f, out: ["export", "--to", "elasticsearch", f["model"], out],
    "fuse": _fuse,
}


@pytest.mark.parametrize("command", sorted(WRITING_COMMANDS))
def test_an_output_in_a_missing_folder_names_the_folder(files, command):
    folder = files["dir"] / "no-such-folder"
    out = folder / "out.txt"
    code, err = _run_cli(WRITING_COMMANDS[command](files, out))
    assert code == 2, err
    assert f"the folder '{folder}' does not exist" in err, err
    assert repr(str(out)) in err or str(out) in err, err
    assert ".tmp-" not in err, err
    assert not folder.exists()
    # Refused before the work, not after it (learn and fuse report their training).
    assert "trained" not in err and "written" not in err, err


def _unwritable_folder(tmp_path):
    """A folder where this process can create no file: one without write permission, or for
    root (whom permissions do not stop) /sys, which refuses every new file."""
    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    try:
        open("/sys/svmmap-probe", "w").close()
    except OSError:
        return "/sys"
    pytest.skip("no folder refuses a new file to root here")  # pragma: no cover


@pytest.mark.parametrize("command", sorted(WRITING_COMMANDS))
def test_an_output_in_an_unwritable_folder_is_refused_before_the_work(files, tmp_path, monkeypatch, command):
    # The folder existed, so only the atomic write found, after the training, that it could not
    # create its temporary file there: learn trained for nothing. learn and classify start
    # their work by reading the data, which must not happen.
    read = []
    monkeypatch.setattr(svmmap.io, "load_letor", lambda *args, **kw: read.append(args) or 1 / 0)
    folder = _unwritable_folder(tmp_path)
    out = os.path.join(str(folder), "out.txt")
    before = sorted(os.listdir(folder))
    code, err = _run_cli(WRITING_COMMANDS[command](files, out))
    assert read == [], err
    assert code == 2, err
    assert f"no permission to create a file in the folder '{folder}'" in err, err
    assert repr(out) in err, err
    assert "trained" not in err and "written" not in err, err
    # Nothing written, not even the probe of the folder.
    assert sorted(os.listdir(folder)) == before


def test_the_api_reports_a_missing_folder_as_file_not_found(tmp_path):
    out = tmp_path / "missing" / "sub" / "scores.txt"
    with pytest.raises(FileNotFoundError) as raised:
        save_predictions(out, [1.0, 2.0])
    # The OS error's number and the user's path are kept, for code that inspects them.
    assert raised.value.errno == 2
    assert raised.value.filename == str(out)
    assert f"the folder '{out.parent}' does not exist" in str(raised.value)
    # A file where a folder should be.
    (tmp_path / "plain").write_text("")
    with pytest.raises(OSError, match=r"'.*plain' is not a folder") as raised:
        save_predictions(tmp_path / "plain" / "scores.txt", [1.0])
    assert ".tmp-" not in str(raised.value)
