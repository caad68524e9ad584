"""The package's layout: the old module paths of the IR tooling keep working (with a
DeprecationWarning naming the new place), every public module declares __all__, and the
top-level names resolve."""

import importlib
import pkgutil
import subprocess
import sys

import pytest
import svmmap

MOVED = ["trec", "fusion", "protocol", "experiment", "export", "plot", "cli"]


# A fresh interpreter per module, importing scikit-learn and SciPy: seconds each.
@pytest.mark.slow
@pytest.mark.parametrize("name", MOVED)
def test_old_module_path_is_the_new_module_and_warns(name):
    new = importlib.import_module(f"svmmap.ir.{name}") if name != "plot" else None
    code = (
        "import warnings, importlib, sys\n"
        "warnings.simplefilter('error')\n"
        f"try:\n    import svmmap.{name}\nexcept DeprecationWarning as w:\n    print('warned', w)\n"
        "warnings.simplefilter('ignore')\n"
        f"old = importlib.import_module('svmmap.{name}')\n"
        f"print(old is sys.modules['svmmap.ir.{name}'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert f"warned svmmap.{name} moved to svmmap.ir.{name}" in out.stdout
    assert out.stdout.strip().endswith("True")
    if new is not None:
        with pytest.warns(DeprecationWarning, match=f"svmmap.{name} moved to svmmap.ir.{name}"):
            assert getattr(svmmap, name) is new


def test_import_svmmap_does_not_import_scikit_learn_or_scipy():
    code = "import sys, svmmap; print(sorted(m for m in ('sklearn', 'scipy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_public_name_resolves():
    for name in svmmap.__all__:
        assert getattr(svmmap, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        svmmap.nope


def public_modules():
    names = []
    for info in pkgutil.walk_packages(svmmap.__path__, prefix="svmmap."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts[1:]):
            continue
        names.append(info.name)
    return names


@pytest.mark.parametrize("name", public_modules())
def test_every_public_module_declares_all(name):
    if name == "svmmap.ir.plot":
        pytest.importorskip("matplotlib")
    if name == "svmmap.dask":
        pytest.importorskip("distributed")
    module = importlib.import_module(name)
    assert isinstance(getattr(module, "__all__", None), (list, tuple)), f"{name} has no __all__"
    for public in module.__all__:
        assert hasattr(module, public), f"{name}.__all__ lists {public}, which it does not define"
