"""A mkdocs hook: the pages' figures, drawn during the build by the code the pages show.

A page asks for a figure with a line ``<!-- figure: NAME.png -->`` right above a Python block
that saves ``NAME.png`` in the current directory. While the site is built (mkdocs.yml lists this
file under ``hooks:``), the hook runs the Python blocks of that block's ``## `` section up to
and including it, in one namespace and a temporary directory, with matplotlib's Agg backend, and
adds the PNG they wrote to the site next to the page, where ``![...](NAME.png)`` shows it.

Why at build time, and not a script whose output is checked in: a picture of a learned model is
only right for the svmmap that drew it, and a checked-in PNG can only be compared with a fresh
one byte by byte, which differs across matplotlib and FreeType versions even when the figure is
the same. Built with the site, the figure is always the current package's, nothing binary sits in
git, and the reader sees exactly what the code above the picture draws. The same blocks run as
snippets in ``tests/docs/test_docs.py``, so a block that breaks fails the tests too. The cost is
the blocks' run time in every build (about a second for the binning guide's GA2M heat map, once
scikit-learn is imported) and that the image is absent where a page is read as plain Markdown
(on GitHub, say), where its alternative text stands in.

The build needs what the blocks import: svmmap (already needed by the API reference) and
matplotlib (in the ``docs`` extra). A block that fails or does not write its file fails the build
with the page and the reason.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

#: The marker line above a block that draws a figure; the name is a PNG next to the page.
FIGURE = re.compile(r"^<!--\s*figure:\s*([\w.-]+\.png)\s*-->\s*$")


def figure_blocks(text: str) -> List[Tuple[str, List[str]]]:
    """(file name, the code to run) for every figure a page asks for.

    The code is the section's Python blocks up to and including the marked one, since a figure
    block usually plots what an earlier block of its section fitted (as ``test_docs.py`` runs
    a section's blocks in one namespace).
    """
    figures: List[Tuple[str, List[str]]] = []
    section: List[str] = []
    pending = None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        marker = FIGURE.match(line.strip())
        if line.startswith("## "):
            section, pending = [], None
        elif marker:
            pending = marker.group(1)
        elif line.strip() == "```python":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            section.append("\n".join(lines[i + 1 : j]))
            if pending is not None:
                figures.append((pending, list(section)))
            pending = None
            i = j
        elif line.strip():
            # The marker names the block right below it, as `<!-- not run -->` does for the tests.
            pending = None
        i += 1
    return figures


def draw(blocks: List[str], name: str, where: str) -> bytes:
    """Run a figure's blocks in a temporary directory and return the PNG they saved as ``name``."""
    import matplotlib

    # No window: the build may run where there is no display, and pyplot must not try one.
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    namespace: Dict[str, Any] = {"__name__": "__figure__"}
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            # The blocks' prints are for the reader of the page, not for the build's log.
            with contextlib.redirect_stdout(io.StringIO()):
                for k, block in enumerate(blocks):
                    exec(compile(block, f"{where} block {k + 1}", "exec"), namespace)
            path = Path(tmp) / name
            if not path.is_file():
                raise PluginError(f"{where}: the block marked <!-- figure: {name} --> did not save {name}")
            return path.read_bytes()
        except PluginError:
            raise
        except Exception as exc:
            raise PluginError(f"{where}: drawing {name} failed: {exc!r}") from exc
        finally:
            os.chdir(here)
            plt.close("all")


def on_files(files: Files, config: Any) -> Files:
    """Add every page's figures to the site, drawn now (mkdocs calls this once per build)."""
    for page in list(files.documentation_pages()):
        text = Path(page.abs_src_path).read_text(encoding="utf-8")
        for name, blocks in figure_blocks(text):
            src_uri = f"{page.src_uri.rsplit('/', 1)[0]}/{name}" if "/" in page.src_uri else name
            if files.get_file_from_path(src_uri) is not None:
                raise PluginError(f"docs/{src_uri} is drawn by the build (docs/figures.py); remove the file in docs/")
            files.append(File.generated(config, src_uri, content=draw(blocks, name, f"docs/{page.src_uri}")))
    return files
