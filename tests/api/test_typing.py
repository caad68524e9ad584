"""The typed API: mypy accepts the package, the hand-written extension stub matches the built
extension (stubtest), and the Literal types of svmmap._typing are the core's spellings."""

import subprocess
import sys
import typing
from pathlib import Path

import pytest

pytest.importorskip("mypy")
ROOT = Path(__file__).resolve().parents[2]


def run(args, cwd):
    out = subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    return out.returncode, out.stdout + out.stderr


@pytest.mark.slow
@pytest.mark.typing
def test_mypy_accepts_the_package():
    if not (ROOT / "python" / "svmmap").is_dir():
        pytest.skip("the source tree is not available")
    code, output = run(["mypy", "--config-file", str(ROOT / "pyproject.toml")], cwd=ROOT)
    assert code == 0, output


# Quick (about 5 s, most of it mypy's start), so it runs with every `pytest -m "not slow"`: a
# binding changed without its stub fails at once.
@pytest.mark.typing
@pytest.mark.slow
def test_extension_stub_matches_the_extension(tmp_path):
    # From a directory outside the checkout, so that the installed extension is inspected.
    code, output = run(
        [
            "mypy.stubtest",
            "svmmap._core",
            "--allowlist",
            str(ROOT / "tests" / "_support" / "stubtest-allowlist.txt"),
            "--mypy-config-file",
            str(ROOT / "tests" / "_support" / "stubtest-mypy.ini"),
        ],
        cwd=tmp_path,
    )
    assert code == 0, output


def test_package_is_marked_typed():
    import svmmap

    assert (Path(svmmap.__file__).parent / "py.typed").is_file()
    assert (Path(svmmap.__file__).parent / "_core.pyi").is_file()


def test_the_literal_types_are_the_cores_spellings():
    from svmmap import _core, _typing

    literals = {
        name
        for name, value in vars(_typing).items()
        if not name.startswith("_") and typing.get_origin(value) is typing.Literal
    }
    # Every Literal of _typing is one of the core's, and every spelling the core exports has one.
    assert literals == set(_core.SPELLINGS)
    for name, spellings in _core.SPELLINGS.items():
        assert typing.get_args(getattr(_typing, name)) == spellings, name


def test_the_cores_spellings_are_those_it_reads():
    import numpy as np
    from svmmap import _core
    from svmmap.metrics import per_query

    y, s, q = np.array([1.0, 0.0]), np.array([0.2, 0.1]), np.array([1, 1])
    readers = {
        "Slack": lambda v: _core.TrainConfig(loss=["map", "roc"], slack=v),
        "Ties": lambda v: per_query("map", y, s, q, ties=v),
        "Gain": lambda v: per_query("ndcg", y, s, q, gain=v),
        "BinStrategy": lambda v: _core.BinnerConfig(strategy=v),
        "Missing": lambda v: _core.BinnerConfig(missing=v),
    }
    for name, read in readers.items():
        for value in _core.SPELLINGS[name]:
            read(value)
        with pytest.raises(ValueError):
            read("nonsense")
    assert {p["kind"] for p in _core.TRAINING_PARAMETERS} <= set(_core.SPELLINGS["ParameterKind"])
