"""The package's layout: every public module declares __all__, the top-level names resolve,
and ``import svmmap`` stays light."""

import importlib
import pkgutil
import subprocess
import sys

import pytest
import svmmap


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
