"""The one home of the optional dependencies: every import of a package that ``pip install svmmap``
does not install goes through `load`, with one message naming the extra that installs it.

As polars' ``dependencies.py`` does, a module that needs pandas asks for it where it needs it,
``load("pandas", "Run.to_frame")``, so that ``import svmmap`` (and every module it loads) imports
none of these packages, and a missing one is a message saying what to install rather than a
traceback from deep inside a call. tests/api/test_layers.py refuses an import of one of them
anywhere else in the package, and checks that each extra named here is declared in
pyproject.toml.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import Dict

__all__ = ["EXTRAS", "load"]

#: The optional packages the package imports (top-level import names), and the extra of
#: pyproject.toml that installs each.
EXTRAS: Dict[str, str] = {
    "dask": "dask",
    "distributed": "dask",
    "pandas": "pandas",
    "matplotlib": "plot",
    "onnx": "onnx",
}


def load(module: str, needed_by: str) -> ModuleType:
    """The module ``module`` (one of `EXTRAS` or a submodule of one), imported now; when it is
    not installed, an ImportError that says ``needed_by`` needs it and which extra installs it."""
    package = module.split(".")[0]
    extra = EXTRAS[package]
    try:
        return import_module(module)
    except ImportError as exc:
        raise ImportError(f'{needed_by} needs {package}: pip install "svmmap[{extra}]"') from exc
