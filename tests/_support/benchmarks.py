"""The scripts of benchmarks/ as modules, for the tests of their functions, data and tables."""

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load(name: str) -> ModuleType:
    """benchmarks/<name>.py run as the module ``benchmarks_<name>`` (``tables`` as itself).

    The scripts import benchmarks/tables.py as ``tables``, so the folder goes on ``sys.path``;
    the module is registered in ``sys.modules`` before it runs, since dataclasses look their
    module up while the script runs. Each call runs the script again (a fresh module).
    """
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    if name == "tables":
        return importlib.import_module("tables")
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None, name
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
