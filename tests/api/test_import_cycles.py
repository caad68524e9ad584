"""No dependency loops between files: in the Python package (modules importing each other) and
in the Rust core (files using each other's items). A loop makes every file in it depend on all
the others, so that none can be read, tested or changed alone (the oracle layer was one loop of
13 files through the work guard; binning -> ir.export -> persistence -> binning was another).

Python: every import of a module of svmmap counts, those inside functions included (a lazy
import breaks the loop at import time, not the dependency), except those under
``if TYPE_CHECKING:``, which never run. Rust: every path to another file's item counts (``use``
lines and paths written inline, ``crate::``, ``super::``, ``self::`` and child modules), test code
excepted; a ``mod.rs`` (or ``lib.rs``) that only re-exports is seen through: a path to a name
it re-exports is a dependency on the file that defines it."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "svmmap"
RUST = ROOT / "rust"


def loops(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def test_loops_finds_a_cycle_and_only_cycles():
    assert loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert loops({"a": {"b"}, "b": {"c"}, "d": {"a", "c"}}) == []


# Python.


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


def _type_checking_nodes(tree: ast.Module) -> Set[int]:
    """The nodes under ``if TYPE_CHECKING:`` (imports for type checkers only)."""
    skipped: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skipped


def python_imports(source: str, module: str, is_package: bool, known: Set[str]) -> Set[str]:
    """The modules of `known` that `source` (module `module`) imports."""
    tree = ast.parse(source)
    skipped = _type_checking_nodes(tree)
    found: Set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    # Importing a.b.c runs a/b/__init__.py first; svmmap/__init__.py itself only forwards
    # names lazily, so it is no dependency.
    found.update(".".join(m.split(".")[:k]) for m in list(found) for k in range(2, m.count(".") + 1))
    return {m for m in found if m in known and m not in (module, "svmmap")}


def python_graph() -> Dict[str, Set[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    known = set(paths)
    return {
        m: python_imports(p.read_text(encoding="utf-8"), m, p.name == "__init__.py", known) for m, p in paths.items()
    }


def test_python_imports_are_read():
    known = {"svmmap.a", "svmmap.b", "svmmap.ir", "svmmap.ir.c"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import a\n"
        "if TYPE_CHECKING:\n    from .b import X\n"
        "def f():\n    from .ir.c import g\n"
    )
    assert python_imports(source, "svmmap.d", False, known) == {"svmmap.a", "svmmap.ir", "svmmap.ir.c"}
    assert python_imports("from ..a import x", "svmmap.ir.c", False, known) == {"svmmap.a"}


def test_no_import_loops_in_the_package():
    # The package's graph is read once (reading every module is most of this file's time).
    graph = python_graph()
    # Known dependencies, so that an empty graph cannot pass.
    assert "svmmap._fit.fitted" in graph["svmmap.binning"]
    assert "svmmap._fit.scaler" in graph["svmmap.ir.export"]
    assert "svmmap._validation" in graph["svmmap.metrics"]
    assert loops(graph) == []


# Rust.


def blank(text: str) -> str:
    """Rust source with comments, strings and character literals blanked out (line breaks kept),
    so that braces and paths are those of the code."""
    out: List[str] = []
    i, n = 0, len(text)
    while i < n:
        raw = re.match(r'r(#*)"', text[i : i + 10]) if text[i] == "r" else None
        if raw and i and (text[i - 1].isalnum() or text[i - 1] == "_"):
            raw = None
        char = re.match(r"'(\\.|[^'\\])[^']{0,8}'", text[i : i + 12]) if text[i] == "'" else None
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j, depth = i + 2, 1
            while depth and j < n:
                step = 2 if text.startswith(("/*", "*/"), j) else 1
                depth += 1 if text.startswith("/*", j) else -1 if text.startswith("*/", j) else 0
                j += step
        elif raw:
            j = text.index('"' + raw.group(1), i + 2 + len(raw.group(1))) + 1 + len(raw.group(1))
        elif text[i] == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
        elif char and re.fullmatch(r"'(\\.[^']*|[^'\\])'", char.group(0)):
            j = i + char.end()
        else:
            out.append(text[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def _block_end(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return j + 1
    raise ValueError("unbalanced braces")


def _without_tests(text: str) -> str:
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*[{;]", text):
        if m.start() < i:
            continue
        out.append(text[i : m.start()])
        i = m.end() if text[m.end() - 1] == ";" else _block_end(text, m.end() - 1)
    return "".join(out) + text[i:]


def _segments(module: Tuple[str, ...], text: str) -> List[Tuple[Tuple[str, ...], str]]:
    """(module path, its own code) of a file and of every inline ``mod name { ... }`` in it."""
    nested, rest, i = [], [], 0
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", text):
        if m.start() < i:
            continue
        rest.append(text[i : m.start()])
        end = _block_end(text, m.end() - 1)
        nested += _segments(module + (m.group(1),), text[m.end() : end - 1])
        i = end
    return [(module, "".join(rest) + text[i:])] + nested


def _expand(tree: str) -> List[str]:
    """The paths of a use tree: 'a::{b, c::{d, e}}' -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = re.sub(r"\s+", " ", tree).strip()
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if not m:
        return [tree]
    parts, depth, current = [], 0, ""
    for ch in m.group(2):
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        current += ch
    parts.append(current)
    return [p for part in parts if part.strip() for p in _expand(m.group(1) + part.strip())]


def _absolute(module: Tuple[str, ...], path: str, children: Set[str]) -> Optional[Tuple[str, ...]]:
    segments = [s.strip() for s in path.split(" as ")[0].split("::") if s.strip()]
    base = list(module)
    if segments[0] == "crate":
        return tuple(segments[1:])
    if segments[0] == "self":
        return tuple(base + segments[1:])
    if segments[0] == "super":
        while segments and segments[0] == "super":
            base, segments = base[:-1], segments[1:]
        return tuple(base + segments)
    if segments[0] in children:
        return tuple(base + segments)
    return None  # another crate


class RustGraph:
    """Which file of rust/ uses which (test code left out), by module path."""

    def __init__(self, sources: Dict[Tuple[str, ...], str]):
        declared_tests = {
            module + (m.group(1),)
            for module, text in sources.items()
            for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text)
        }
        self.code = {m: _without_tests(blank(t)) for m, t in sources.items() if m not in declared_tests}
        self.reexports: Dict[Tuple[Tuple[str, ...], str], Tuple[str, ...]] = {}
        self.paths: Dict[Tuple[str, ...], List[Tuple[str, ...]]] = {m: [] for m in self.code}
        for file_module, text in self.code.items():
            for module, own in _segments(file_module, text):
                self._read(file_module, module, own)

    def _read(self, file_module: Tuple[str, ...], module: Tuple[str, ...], text: str) -> None:
        children = set(re.findall(r"\bmod\s+(\w+)\s*;", text))
        namespaces: Dict[str, Tuple[str, ...]] = {}
        found = self.paths[file_module]
        for m in re.finditer(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", text):
            for path in _expand(m.group(2)):
                target = _absolute(module, path, children)
                if target is None:
                    continue
                name = path.split(" as ")[-1].split("::")[-1].strip()
                if target[-1] == "self":
                    target = target[:-1]
                    name = name if " as " in path else target[-1]
                if m.group(1) and m.group(1).strip() == "pub":
                    # Seen through: a dependency of the files that use the name, not of this one.
                    self.reexports[(module, name)] = target
                elif target in self.code:
                    namespaces[name] = target  # a module used as a namespace: `oracle::from_name`
                else:
                    found.append(target)
        for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", text):
            target = _absolute(module, m.group(1), children)
            if target is not None and target not in self.code:
                found.append(target)
        for name, target in namespaces.items():
            for m in re.finditer(r"(?<![\w:])" + name + r"((?:::\w+)+)", text):
                found.append(target + tuple(m.group(1).split("::")[1:]))

    def defining_file(self, path: Tuple[str, ...], hops: int = 0) -> Optional[Tuple[str, ...]]:
        """The file whose item `path` names, through re-exports."""
        for cut in range(len(path), -1, -1):
            module, rest = path[:cut], path[cut:]
            if module in self.code:
                again = self.reexports.get((module, rest[0])) if rest else None
                if again is not None and hops < 10:
                    return self.defining_file(again + rest[1:], hops + 1)
                return module
        return None

    def edges(self) -> Dict[str, Set[str]]:
        out: Dict[str, Set[str]] = {}
        for module, paths in self.paths.items():
            for path in paths:
                target = self.defining_file(path)
                if target is not None and target != module:
                    out.setdefault("::".join(module) or "crate", set()).add("::".join(target) or "crate")
        return out


def rust_sources(root: Path = RUST) -> Dict[Tuple[str, ...], str]:
    sources = {}
    for path in sorted(root.rglob("*.rs")):
        parts = path.relative_to(root).with_suffix("").parts
        module = () if parts == ("lib",) else parts[:-1] if parts[-1] == "mod" else parts
        sources[module] = path.read_text(encoding="utf-8")
    return sources


def test_rust_paths_are_read():
    sources = {
        (): "pub mod a;\npub mod b;\npub use b::Thing;",
        ("a",): 'use crate::Thing;\nuse crate::b::{self, Other};\nfn f() { b::g(); let s = "crate::c::X"; }\n'
        "#[cfg(test)]\nmod tests { use crate::c::Y; }",
        ("b",): "pub struct Thing; pub struct Other; pub fn g() {}\nmod inner { use super::super::c::Z; }",
        ("c",): "// use crate::a::f;\npub struct X; pub struct Y; pub struct Z;",
    }
    # a uses b (through the re-export of lib.rs and directly); b's inline module uses c; the
    # string, the comment and the test module count for nothing.
    assert RustGraph(sources).edges() == {"a": {"b"}, "b": {"c"}}
    sources[("c",)] = "pub fn h() { crate::a::f() }"
    assert loops(RustGraph(sources).edges()) == [["a", "b", "c"]]


def test_no_dependency_loops_in_the_rust_core():
    # The core's graph is read once, as the package's is above.
    edges = RustGraph(rust_sources()).edges()
    # Known dependencies, so that an empty graph cannot pass.
    assert "oracle::interface" in edges["oracle::map"]
    assert "oracle::registry" in edges["oracle::work"]
    assert "solver::qp" in edges["solver::ocas"]
    assert "data::reader::line" in edges["data::reader::blocks"]
    assert loops(edges) == []
