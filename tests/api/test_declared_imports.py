"""Every module the package imports is declared: in the standard library, among the
dependencies of pyproject.toml, or (imported only inside a function or by a module that
``import svmmap`` does not load) in an optional extra. A wheel installed on a fresh Python
(see .ci/wheel, which smoke-tests 3.9 and the newest CPython) would otherwise fail to import."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the test suite runs on 3.11+
    tomllib = None

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "svmmap"

# Import names that differ from the distribution's name on PyPI.
DISTRIBUTION_OF = {"sklearn": "scikit-learn", "ir_measures": "ir-measures", "pyterrier": "python-terrier"}


def _requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0].lower() for r in requirements}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(top-level module, imported at module level) for every absolute import of a file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    at_top = {id(node) for node in tree.body}
    # Imports under `if TYPE_CHECKING:` or try/except at module level still run at import time.
    for node in tree.body:
        if isinstance(node, (ast.If, ast.Try)):
            at_top.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name.split(".")[0], id(node) in at_top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], id(node) in at_top))
    return found


@pytest.mark.skipif(tomllib is None, reason="tomllib is Python 3.11+")
def test_every_import_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = _requirement_names(project["dependencies"])
    optional = set().union(*(_requirement_names(r) for r in project["optional-dependencies"].values()))
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", "import sys, svmmap; print('\\n'.join(sorted(sys.modules)))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    )
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for name, top_level in _imports(path):
            if name in sys.stdlib_module_names or name in ("svmmap", "__future__"):
                continue
            dist = DISTRIBUTION_OF.get(name, name).lower().replace("_", "-")
            if dist in required:
                continue
            if dist not in optional:
                problems.append(f"{module} imports {name}, which pyproject.toml does not declare")
            elif top_level and module in loaded:
                problems.append(f"{module} imports the optional {name} at import time, and `import svmmap` loads it")
    assert not problems, "\n".join(problems)
