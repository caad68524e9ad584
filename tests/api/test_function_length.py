"""No Python function over 120 lines, its docstring not counted, in the package, the benchmark
scripts and the examples (tests excepted): the limit clippy's too_many_lines enforces on the
Rust side (clippy.toml), which ruff has no rule for. A function that long does several jobs,
which then cannot be read, tested or changed apart."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 120

# Functions allowed over the limit for a while, as (file, name); none at present.
WAITING: set = set()


def long_functions(source: str) -> list[tuple[str, int]]:
    """(name, lines without the docstring) of every function of `source` over LIMIT lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        assert node.end_lineno is not None
        lines = node.end_lineno - node.lineno + 1
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            assert first.end_lineno is not None
            lines -= first.end_lineno - first.lineno + 1
        if lines > LIMIT:
            found.append((node.name, lines))
    return found


def test_the_measure_counts_code_and_not_the_docstring():
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT - 1))
    docstring = '    """' + "\n" * 50 + '    """\n'
    # def line + LIMIT - 1 statements = LIMIT lines: allowed, with or without a long docstring.
    assert long_functions(f"def f():\n{docstring}{body}\n") == []
    assert long_functions(f"def f():\n{body}\n    y = 0\n") == [("f", LIMIT + 1)]


def test_no_function_over_120_lines():
    problems = []
    for folder in ("python/svmmap", "benchmarks", "examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for name, lines in long_functions(path.read_text(encoding="utf-8")):
                if (rel, name) not in WAITING:
                    problems.append(f"{rel}: {name} has {lines} lines (at most {LIMIT} besides its docstring)")
    assert not problems, "\n".join(problems)
