"""The documentation runs: docstring examples of the installed package (doctests) and the
Python snippets of the README and of the documentation site's pages (docs/)."""

import doctest
import importlib
import io
import os
import pkgutil
import re
import subprocess
import sys
import warnings
from contextlib import redirect_stdout
from pathlib import Path

import pytest
import svmmap

# `pytest -m docs` runs the documentation's tests alone.
pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: The README and every page of the documentation site.
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]

# Modules whose examples need an optional dependency, and that dependency.
OPTIONAL = {"svmmap.ir.plot": "matplotlib", "svmmap.dask": "distributed", "svmmap.ir.export": "onnxruntime"}


def package_modules():
    # The installed package (what `import svmmap` finds), not the source tree.
    names = ["svmmap"]
    for info in pkgutil.walk_packages(svmmap.__path__, prefix="svmmap."):
        # Private modules count too: public functions such as make_ranking live in them.
        if info.name not in ("svmmap._core", "svmmap.__main__"):
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", package_modules())
def test_docstring_examples(name, tmp_path, monkeypatch):
    if name in OPTIONAL:
        pytest.importorskip(OPTIONAL[name])
    if name == "svmmap.ir.plot":
        import matplotlib

        matplotlib.use("Agg")
    module = importlib.import_module(name)
    monkeypatch.chdir(tmp_path)  # examples may write files
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    tests = [t for t in finder.find(module, name) if t.examples]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", svmmap.SkippedQueriesWarning)
        for test in tests:
            runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()


def readme_sections(page: Path = README):
    """(heading, [code blocks]) of every '## ' section of a page with Python blocks to run. A
    block right after a line '<!-- not run: reason -->' is illustrative and skipped."""
    sections = []
    heading, blocks, skip_next = "(top)", [], False
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            if blocks:
                sections.append((heading, blocks))
            heading, blocks = line[3:].strip(), []
        elif re.match(r"<!--\s*not run", line):
            skip_next = True
        elif line.strip() == "```python":
            j = i + 1
            while lines[j].strip() != "```":
                j += 1
            if not skip_next:
                blocks.append("\n".join(lines[i + 1 : j]))
            skip_next = False
            i = j
        elif line.strip():
            skip_next = False
        i += 1
    if blocks:
        sections.append((heading, blocks))
    return sections


def page_sections():
    return [(p.relative_to(ROOT).as_posix(), h, b) for p in PAGES for h, b in readme_sections(p)]


@pytest.mark.parametrize("page,heading,blocks", page_sections(), ids=[f"{p}: {h}" for p, h, _ in page_sections()])
def test_readme_snippets(page, heading, blocks, tmp_path, monkeypatch):
    for module in ("matplotlib", "distributed", "pandas", "lightgbm", "pyterrier"):
        if any(module in b for b in blocks):
            pytest.importorskip(module)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = {"__name__": "__readme__"}
    # The quick start is the first code a newcomer runs: any warning it shows (even the
    # SkippedQueriesWarning other pages may leave to the reader) would be read as something
    # wrong, so there every warning is recorded and the test fails on the first one.
    quick_start = heading == "Quick start" and page in ("README.md", "docs/index.md")
    with warnings.catch_warnings(record=True) as shown, redirect_stdout(io.StringIO()):
        if quick_start:
            warnings.simplefilter("always")
        else:
            # Other pages may leave the warning to the reader, but only if they say what it
            # is: a newcomer who opens a guide page first sees it on the first fit.
            warnings.simplefilter("always", svmmap.SkippedQueriesWarning)
        # PyTerrier's add_ranks calls DataFrame.drop(inplace=True), which pandas >= 3.1
        # deprecates: PyTerrier's to change, as in tests/ir/test_pyterrier.py.
        warnings.filterwarnings("ignore", "The inplace keyword in DataFrame")
        for k, block in enumerate(blocks):
            try:
                exec(compile(block, f"{page} [{heading}] block {k + 1}", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(
                    f"{page} section {heading!r}, Python block {k + 1} fails: {exc!r}. Fix the snippet, "
                    "or mark an illustrative one with a line '<!-- not run: reason -->' just above it."
                ) from exc
    assert not (quick_start and shown), f"{page}'s quick start shows warnings: " + "; ".join(
        f"{w.category.__name__}: {w.message}" for w in shown
    )
    skipped = [w for w in shown if issubclass(w.category, svmmap.SkippedQueriesWarning)]
    assert not skipped or "SkippedQueriesWarning" in (ROOT / page).read_text(encoding="utf-8"), (
        f"{page} section {heading!r} shows a SkippedQueriesWarning ({skipped[0].message}) that the page "
        "never mentions: say once on the page why its fits warn and how to silence it"
    )


def shell_blocks():
    """(page, first line, block) of every ```bash block right after a line '<!-- runs as
    written ... -->': the command-line walkthroughs a reader copies into a shell."""
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines[:-1]):
            if re.match(r"<!--\s*runs as written", line) and lines[i + 1].strip() == "```bash":
                j = lines.index("```", i + 2)
                found.append((page.relative_to(ROOT).as_posix(), i + 3, "\n".join(lines[i + 2 : j])))
    return found


@pytest.mark.slow  # seven commands in fresh interpreters, one of them the 5-fold experiment
@pytest.mark.parametrize("page,line,block", shell_blocks(), ids=[f"{p}:{n}" for p, n, _ in shell_blocks()])
def test_shell_walkthroughs_run_as_written(page, line, block, tmp_path):
    # `python` and `svmmap` are this test's interpreter and the svmmap it imports (the installed
    # console script calls the same svmmap.cli.main as `python -m svmmap`), so that a checkout
    # run with PYTHONPATH tests its own code rather than whatever svmmap is on PATH.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, command in (
        ("python", f'exec "{sys.executable}" "$@"'),
        ("svmmap", f'exec "{sys.executable}" -m svmmap "$@"'),
    ):
        (bin_dir / name).write_text(f"#!/bin/sh\n{command}\n")
        (bin_dir / name).chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    # -x echoes each command to stderr, so a failure names the command that failed.
    result = subprocess.run(
        ["bash", "-euxo", "pipefail", "-c", block], cwd=work, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, f"{page}:{line}: the shell block fails:\n{result.stderr[-3000:]}"


def test_the_command_line_page_runs_the_bundled_data_walkthrough():
    # The walkthrough writes MQ2008's folds and runs every kind of command on them.
    blocks = [b for p, _, b in shell_blocks() if p == "docs/guide/command-line.md"]
    assert blocks and "write_mq2008" in blocks[0] and "svmmap experiment --data" in blocks[0]


def test_the_readme_opens_with_the_main_job_and_the_test_commands():
    """The project's rule for the README: its first code block gives the command that installs
    svmmap and runs the main job on the bundled data, and the commands that install and run the
    tests (the quick run and the whole suite), so a reader of the first screen has both."""
    first = re.search(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert first is not None
    lines = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    assert any("pip install" in line and "svmmap experiment" in line for line in lines), lines
    assert any("pip install" in line and 'pytest -m "not slow"' in line for line in lines), lines
    assert any("pip install" in line and line.endswith("&& pytest") for line in lines), lines


def test_index_quick_start_is_the_readme_s(tmp_path, monkeypatch):
    """docs/index.md's quick start is README.md's block (docs/quick_start.py copies it), and a
    change to README's block shows in what the script would write."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("quick_start", ROOT / "docs" / "quick_start.py")
    quick_start = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(quick_start)
    assert quick_start.INDEX.read_text(encoding="utf-8") == quick_start.expected_index(), (
        "docs/index.md's quick start differs from README.md's: run python docs/quick_start.py"
    )
    readme, index = tmp_path / "README.md", tmp_path / "index.md"
    text = quick_start.README.read_text(encoding="utf-8")
    readme.write_text(text.replace("## Quick start\n", "## Quick start\n\nSee [the guide](docs/guide/x.md).\n", 1))
    index.write_text(quick_start.INDEX.read_text(encoding="utf-8"))
    monkeypatch.setattr(quick_start, "README", readme)
    monkeypatch.setattr(quick_start, "INDEX", index)
    changed = quick_start.expected_index()
    assert changed != index.read_text() and "See [the guide](guide/x.md)." in changed
    # A link the site cannot follow is refused.
    readme.write_text(text.replace("## Quick start\n", "## Quick start\n\nSee [c](CONTRIBUTING.md).\n", 1))
    with pytest.raises(SystemExit, match="outside docs/"):
        quick_start.expected_index()


def test_api_page_documents_every_public_module():
    # svmmap.callback (LightGBM's callbacks) was missing from the API page. Every public module
    # must have an entry there (`::: svmmap.module` or one of its names), except the command
    # line's (documented on the guide page "Command line") and a package of modules only.
    entries = re.findall(r"^::: (svmmap[\w.]*)", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.M)
    missing = []
    for name in package_modules():
        parts = name.split(".")
        if any(p.startswith("_") for p in parts[1:]) or name in ("svmmap", "svmmap.ir") or parts[1:2] == ["cli"]:
            continue
        if not any(entry == name or entry.startswith(name + ".") for entry in entries):
            missing.append(name)
    assert not missing, f"docs/api.md has no entry for {missing}"
