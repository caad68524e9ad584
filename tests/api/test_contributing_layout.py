"""CONTRIBUTING.md's Layout section matches the tree, so that it cannot go stale.

Every path written in the section's code block must exist, and every source file under rust/
and python/svmmap/ and every folder under tests/ must be written there. A path is a word that
starts with one of the repository's top-level folders (``rust/metrics.rs``, ``tests/core/``);
it may name several files with a brace list without spaces (``rust/oracle/{map,roc}.rs``) or a
glob (``rust/oracle/*.rs``, which exists when it matches something, but names nothing). A folder
(``rust/python/``) exists as a folder, but does not name the files in it.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRIBUTING = ROOT / "CONTRIBUTING.md"

#: Files that are sources, by folder: what must be written in the Layout section.
SOURCES = {"rust": ("*.rs",), "python/svmmap": ("*.py", "*.pyi")}

#: A word that may be a path: characters of file names, slashes, brace lists and globs.
WORD = re.compile(r"[\w.-]+/[\w./{},*-]*")


def layout_block(text: str) -> str:
    """The first code block after the heading "## Layout"."""
    section = re.search(r"^## Layout\s*$(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert section, "CONTRIBUTING.md has no '## Layout' section"
    block = re.search(r"^```[^\n]*\n(.*?)^```", section.group(1), flags=re.M | re.S)
    assert block, "the Layout section of CONTRIBUTING.md has no code block"
    return block.group(1)


def expand_braces(word: str) -> list:
    """``a/{b,c}.rs`` -> ``a/b.rs``, ``a/c.rs``; several brace lists multiply."""
    match = re.search(r"\{([^{}]*)\}", word)
    if match is None:
        return [word]
    head, tail = word[: match.start()], word[match.end() :]
    return [name for part in match.group(1).split(",") for name in expand_braces(head + part + tail)]


def written_paths(block: str, top_level: set) -> set:
    """The paths written anywhere in the block, brace lists expanded, without a final slash."""
    paths = set()
    for word in WORD.findall(block):
        word = word.rstrip(".,;:")
        if word.split("/", 1)[0] not in top_level:
            continue  # "acc3/acc4", "C/n", "guide/*.md": not paths from the repository's root
        paths.update(path.rstrip("/") for path in expand_braces(word))
    return paths


def exists(path: str) -> bool:
    if any(c in path for c in "*?["):
        return any(ROOT.glob(path))
    return (ROOT / path).exists()


def required_paths() -> set:
    """Every source file under rust/ and python/svmmap/, and every folder under tests/."""
    required = set()
    for folder, patterns in SOURCES.items():
        for pattern in patterns:
            required.update(p.relative_to(ROOT).as_posix() for p in (ROOT / folder).rglob(pattern))
    for p in (ROOT / "tests").rglob("*"):
        parts = p.relative_to(ROOT).parts
        if p.is_dir() and not any(part.startswith(".") or part == "__pycache__" for part in parts):
            required.add(p.relative_to(ROOT).as_posix())
    return required


def test_brace_lists_expand():
    assert expand_braces("rust/oracle/{map,roc}.rs") == ["rust/oracle/map.rs", "rust/oracle/roc.rs"]
    assert expand_braces("a/{b,c}/{d,e}.py") == ["a/b/d.py", "a/b/e.py", "a/c/d.py", "a/c/e.py"]
    block = "rust/{lib,error}.rs  the crate (see rust/metrics.rs, not C/n or guide/*.md)\ntests/core/\n"
    assert written_paths(block, {"rust", "tests"}) == {"rust/lib.rs", "rust/error.rs", "rust/metrics.rs", "tests/core"}


def test_layout_section_names_every_source_file_and_test_folder():
    if not CONTRIBUTING.is_file() or not (ROOT / "rust").is_dir():
        pytest.skip("the source tree is not available")
    top_level = {p.name for p in ROOT.iterdir() if p.is_dir()}
    written = written_paths(layout_block(CONTRIBUTING.read_text(encoding="utf-8")), top_level)
    extra = sorted(path for path in written if not exists(path))
    missing = sorted(required_paths() - written)
    message = ["CONTRIBUTING.md's Layout section does not match the tree."]
    if missing:
        message.append("Not named there (add them, or a brace list such as rust/oracle/{map,roc}.rs):")
        message += [f"  {path}" for path in missing]
    if extra:
        message.append("Named there but not in the tree (moved or deleted?):")
        message += [f"  {path}" for path in extra]
    assert not missing and not extra, "\n".join(message)
