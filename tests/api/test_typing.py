"""The typed API: mypy accepts the package, and the hand-written extension stub matches the
built extension (stubtest)."""

import subprocess
import sys
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


@pytest.mark.slow
@pytest.mark.typing
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
