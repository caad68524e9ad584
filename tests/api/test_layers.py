"""The package's layers, as the folders show them, and the size rules that keep them readable.

Every module of ``python/svmmap`` belongs to one layer of `LAYERS`, and imports only modules of
its own layer or of the layers below it. Every import counts: at module level, inside
functions (a lazy import breaks a loop at import time, not the dependency) and under
``if TYPE_CHECKING:`` (a type is a dependency of the reader, even if it never runs). A module
that no layer names fails the test, so that a new module is placed on purpose.

With it, the rules of issue 44 item 4: at most `MAX_TOP_LEVEL_MODULES` modules directly in
``python/svmmap`` (the rest live in the subpackages of their layer), no source file of the
package or of the Rust core over `MAX_LINES` lines, and the optional dependencies imported
through ``svmmap._optional`` only.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the test suite runs on 3.11+
    tomllib = None

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "svmmap"
RUST = ROOT / "rust"

#: The layers, lowest first; a module belongs to the first layer with a pattern that matches
#: its name (a name, or a package followed by ``.*`` for every module in it).
LAYERS: List[Tuple[str, Tuple[str, ...]]] = [
    # The extension, the one form of a matrix handed to it, input checks, option types,
    # optional imports, the text-file rules and the model file's JSON.
    (
        "base",
        (
            "svmmap._core",
            "svmmap._typing",
            "svmmap._optional",
            "svmmap._data",
            "svmmap._binned",
            "svmmap._validation",
            "svmmap._files",
            "svmmap._files.text",
            "svmmap._files.model_json",
            "svmmap._files.model_writing",
        ),
    ),
    # Measures of rankings, and the callbacks that report them during a fit.
    ("measures", ("svmmap.metrics", "svmmap.callback")),
    # One fit: the defaults, the request, the training routine, what a fit watches and says,
    # and the fitted preprocessing as plain data.
    ("fit", ("svmmap._fit", "svmmap._fit.*")),
    # Model files: the fitted model and preprocessing, written and read without scikit-learn.
    ("model files", ("svmmap._files.model_file",)),
    # The estimators, their losses as functions of scores, and what reads and writes them.
    (
        "estimators",
        (
            "svmmap.estimator",
            "svmmap.losses",
            "svmmap.binning",
            "svmmap.baselines",
            "svmmap.persistence",
            "svmmap.io",
        ),
    ),
    # The model search.
    ("search", ("svmmap._search", "svmmap._search.*", "svmmap.model_selection")),
    # Training on a Dask cluster.
    ("distributed", ("svmmap.dask", "svmmap.dask.*")),
    # Tools built on the estimators: IR tooling, data sets, the command line.
    ("tools", ("svmmap.ir", "svmmap.ir.*", "svmmap.datasets", "svmmap.datasets.*", "svmmap.cli", "svmmap.cli.*")),
    # The package itself (lazy names) and ``python -m svmmap``.
    ("package", ("svmmap", "svmmap.__main__")),
]

MAX_TOP_LEVEL_MODULES = 16
MAX_LINES = 600


def layer_of(module: str, layers: List[Tuple[str, Tuple[str, ...]]] = LAYERS) -> int:
    """The index in ``layers`` of ``module``'s layer; ValueError when no layer names it."""
    for index, (_, patterns) in enumerate(layers):
        for pattern in patterns:
            if pattern.endswith(".*") and module.startswith(pattern[:-1]) or module == pattern:
                return index
    raise ValueError(f"{module} is in no layer of tests/api/test_layers.py: place it in one")


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


def imports_of(source: str, module: str, is_package: bool) -> Set[Tuple[str, int]]:
    """(imported name, line) for every import of ``source``, relative ones resolved; ``from a
    import b`` gives both ``a`` and ``a.b`` (b may be a module). TYPE_CHECKING imports count."""
    found: Set[Tuple[str, int]] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add((base, node.lineno))
            found.update((f"{base}.{alias.name}", node.lineno) for alias in node.names)
    return found


def package_modules() -> Dict[str, Path]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules["svmmap._core"] = PACKAGE / "_core.pyi"
    return modules


def upward_imports(
    modules: Dict[str, Path], layers: List[Tuple[str, Tuple[str, ...]]] = LAYERS, root: Path = ROOT
) -> List[str]:
    """Every import of a module of a higher layer, as "file:line: a (layer) imports b (layer)"."""
    problems = []
    for module, path in sorted(modules.items()):
        if path.suffix == ".pyi":
            continue
        mine = layer_of(module, layers)
        text = path.read_text(encoding="utf-8")
        for name, line in sorted(imports_of(text, module, path.name == "__init__.py")):
            # "from . import _core" names the package, which is no dependency on its __init__.
            if name not in modules or name in (module, "svmmap"):
                continue
            theirs = layer_of(name, layers)
            if theirs > mine:
                where = path.relative_to(root).as_posix()
                problems.append(
                    f"{where}:{line}: {module} ({layers[mine][0]}) imports {name} ({layers[theirs][0]}), a higher layer"
                )
    return problems


def test_layer_rule_reads_imports_and_finds_an_upward_one(tmp_path):
    # Relative imports resolve from the module's package; TYPE_CHECKING and lazy imports count.
    source = (
        "from typing import TYPE_CHECKING\n"
        "from .. import _core\n"
        "from .training import train\n"
        "if TYPE_CHECKING:\n    from ..estimator import SVMMap\n"
        "def f():\n    import svmmap.ir.trec\n"
    )
    names = {name for name, _ in imports_of(source, "svmmap._fit.watch", False)}
    assert {"svmmap._core", "svmmap._fit.training", "svmmap.estimator", "svmmap.ir.trec"} <= names
    layers = [("low", ("pkg.a",)), ("high", ("pkg.b", "pkg.sub.*"))]
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub import c\n")
    (package / "b.py").write_text("from . import a\n")
    (package / "sub" / "c.py").write_text("def f():\n    from .. import b\n")
    modules = {"pkg.a": package / "a.py", "pkg.b": package / "b.py", "pkg.sub.c": package / "sub" / "c.py"}
    problems = upward_imports(modules, layers, root=tmp_path)
    # a (low) reaching up to sub.c (high), only under TYPE_CHECKING, is the one upward import.
    assert problems == ["pkg/a.py:3: pkg.a (low) imports pkg.sub.c (high), a higher layer"]
    with pytest.raises(ValueError, match="pkg.d is in no layer"):
        layer_of("pkg.d", layers)


def test_every_module_imports_only_its_layer_and_those_below():
    modules = package_modules()
    # Known modules, so that an empty walk cannot pass.
    assert {"svmmap.estimator", "svmmap._fit.training", "svmmap.dask", "svmmap.ir.export"} <= set(modules)
    problems = upward_imports(modules)
    assert not problems, "\n".join(problems)


def test_at_most_sixteen_modules_directly_in_the_package():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, f"{len(top)} modules in python/svmmap: {top}"


def long_files(paths: List[Path], limit: int = MAX_LINES, root: Path = ROOT) -> List[str]:
    return [
        f"{p.relative_to(root).as_posix()}: {n} lines"
        for p in paths
        for n in [len(p.read_text(encoding="utf-8").splitlines())]
        if n > limit
    ]


def test_no_source_file_over_600_lines(tmp_path):
    ok, long = tmp_path / "ok.py", tmp_path / "long.py"
    ok.write_text("x = 1\n" * MAX_LINES)
    long.write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_files([ok, long], root=tmp_path) == [f"long.py: {MAX_LINES + 1} lines"]
    sources = sorted(PACKAGE.rglob("*.py")) + sorted(PACKAGE.rglob("*.pyi")) + sorted(RUST.rglob("*.rs"))
    assert len(sources) > 100
    problems = long_files(sources)
    assert not problems, "split these files (each file one job):\n" + "\n".join(problems)


def optional_imports(source: str, optional: Set[str]) -> List[Tuple[str, int]]:
    """(module, line) of every import of a package of ``optional`` (``import x``, ``from x import``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] in optional]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in optional:
                found.append((node.module, node.lineno))
    return found


def test_optional_dependencies_are_imported_through_one_module():
    from svmmap._optional import EXTRAS

    assert optional_imports("import pandas as pd\nfrom dask import delayed\nimport numpy\n", set(EXTRAS)) == [
        ("pandas", 1),
        ("dask", 2),
    ]
    problems = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: imports {name}; use svmmap._optional.load"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "_optional.py"
        for name, line in optional_imports(path.read_text(encoding="utf-8"), set(EXTRAS))
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.skipif(tomllib is None, reason="tomllib is Python 3.11+")
def test_each_optional_dependency_is_in_the_extra_named_for_it():
    from svmmap._optional import EXTRAS

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for module, extra in EXTRAS.items():
        names = {re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0].lower() for r in extras[extra]}
        assert module in names, f"pyproject.toml's extra {extra!r} does not install {module}"
