"""No panic crosses into Python: a panic in the Rust core, on the calling thread or in a rayon
worker, becomes svmmap.InternalError (a RuntimeError, so `except Exception` catches it), the
interpreter goes on, and nothing is printed to stderr."""

import subprocess
import sys

import numpy as np
import pytest
import svmmap
from svmmap import InternalError, SVMMap, _core


@pytest.mark.parametrize("place", ["caller", "worker"])
def test_a_panic_becomes_an_internal_error(place, capfd):
    with pytest.raises(InternalError) as info:
        _core._debug_panic(place)
    message = str(info.value)
    where = "calling thread" if place == "caller" else "worker thread"
    assert f"internal error in svmmap: svmmap debug panic in a {where}" in message or (
        f"internal error in svmmap: svmmap debug panic on the {where}" in message
    ), message
    # The source location of the panic is part of the message, for the bug report.
    assert "(at rust/runtime/guard.rs:" in message, message
    assert "This is a bug; please report it" in message
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, Exception)
    assert InternalError is svmmap.InternalError
    # The quiet hook keeps the default panic message and backtrace off stderr.
    captured = capfd.readouterr()
    assert "panicked" not in captured.err and "debug panic" not in captured.err, captured.err


def test_except_exception_catches_it_and_the_library_still_works():
    try:
        _core._debug_panic("worker")
    except Exception as exc:  # what users write; pyo3's PanicException would escape it
        caught = exc
    assert isinstance(caught, InternalError)
    # The thread pools and the module are in a usable state afterwards.
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.9, 0.2]])
    model = SVMMap(n_jobs=2).fit(X, [1, 0, 0, 1], qid=[1, 1, 2, 2])
    assert model.coef_[0] > model.coef_[1]


def test_a_fresh_interpreter_survives_and_prints_nothing():
    # In a subprocess, so that the check of stderr covers the whole process from import on,
    # with RUST_BACKTRACE set as on a developer's machine.
    code = (
        "import svmmap, svmmap._core as c\n"
        "for place in ('caller', 'worker', 'caller'):\n"
        "    try:\n"
        "        c._debug_panic(place)\n"
        "    except svmmap.InternalError:\n"
        "        pass\n"
        "print('alive')\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"RUST_BACKTRACE": "1", "PATH": "/usr/bin:/bin", **_python_env()},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "alive"
    assert r.stderr == "", r.stderr


def _python_env():
    import os

    return {k: v for k, v in os.environ.items() if k.startswith(("PYTHON", "VIRTUAL_ENV", "HOME", "LD_"))}


def test_unknown_place_is_a_value_error():
    with pytest.raises(ValueError, match='place must be "caller" or "worker"'):
        _core._debug_panic("elsewhere")
