"""Old import paths of modules that moved, kept working with a DeprecationWarning.

The IR tooling (TREC files, fusion, the evaluation protocol, the experiment, exports, plots and
the command line) moved from ``svmmap.<name>`` to ``svmmap.ir.<name>``. A finder on
``sys.meta_path`` answers ``import svmmap.<old name>`` with the module at its new place (the same
module object, so its private names and monkeypatching keep working) and warns once per import
site.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Optional, Sequence

#: Old module name -> new module name.
MOVED = {
    f"svmmap.{name}": f"svmmap.ir.{name}"
    for name in ("trec", "fusion", "protocol", "experiment", "export", "plot", "cli")
}


def warn_moved(old: str, stacklevel: int) -> None:
    warnings.warn(
        f"{old} moved to {MOVED[old]}; import it from there (the old path will be removed in a future release)",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, fullname: str, path: Optional[Sequence[str]], target: Optional[ModuleType] = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # warnings skips importlib's own frames, so stacklevel 2 names the importing line.
        warn_moved(spec.name, stacklevel=2)
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        # The module was executed at its new place already.
        pass


def install() -> None:
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())
