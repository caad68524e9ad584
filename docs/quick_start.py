"""docs/index.md's quick start: a copy of README.md's, made here so that the two cannot drift.

    python docs/quick_start.py           # rewrite docs/index.md's block from README.md's
    python docs/quick_start.py --check   # exit 1 when they differ (tests/docs/test_docs.py runs it)

The block is everything between the lines ``<!-- quick start: ... -->`` and
``<!-- end quick start -->`` of README.md: the install commands, the introduction and the quick
start's snippets. Its links to ``docs/...`` become links relative to docs/; a link to anything
outside docs/ is refused, since the site could not follow it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
INDEX = ROOT / "docs" / "index.md"
START = re.compile(r"^<!-- quick start:.*-->$", re.M)
END = "<!-- end quick start -->"
INDEX_MARKER = "<!-- quick start: a copy of README.md's block, made by `python docs/quick_start.py`; edit README.md -->"


def block(text: str, name: str) -> tuple:
    """(start, end) offsets of the text between the markers of ``text`` (a file called ``name``)."""
    start = START.search(text)
    end = text.find(END)
    if start is None or end < start.end():
        raise SystemExit(f"{name}: no '<!-- quick start: ... -->' ... '{END}' block")
    return start.end(), end


def for_the_site(text: str) -> str:
    """README's block with its links made relative to docs/."""

    def relink(match: re.Match) -> str:
        target = match.group(1)
        if re.match(r"[a-z]+://|#", target):
            return match.group(0)
        if not target.startswith("docs/"):
            raise SystemExit(f"README.md's quick start links to {target!r}, outside docs/: the site cannot follow it")
        return f"]({target[len('docs/') :]})"

    return re.sub(r"\]\(([^)]+)\)", relink, text)


def expected_index() -> str:
    readme = README.read_text(encoding="utf-8")
    a, b = block(readme, "README.md")
    index = INDEX.read_text(encoding="utf-8")
    start = START.search(index)
    i, j = block(index, "docs/index.md")
    return index[: start.start()] + INDEX_MARKER + for_the_site(readme[a:b]) + index[j:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/index.md differs")
    args = parser.parse_args()
    want = expected_index()
    if INDEX.read_text(encoding="utf-8") == want:
        return 0
    if args.check:
        print("docs/index.md's quick start differs from README.md's: run python docs/quick_start.py", file=sys.stderr)
        return 1
    INDEX.write_text(want, encoding="utf-8")
    print("docs/index.md: quick start copied from README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
