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


def is_slow_section(page, heading):
    """The sections the quick run (`-m "not slow"`) leaves to the full run: docs/index.md's
    quick start is README.md's block (test_index_quick_start_is_the_readme_s), which runs
    there; the Dask page starts clusters, as the slow marker says; the plots import matplotlib
    and fit all of MQ2008's fold, and tests/ir/test_plot.py draws every plot."""
    return (
        (page == "docs/index.md" and heading == "Quick start")
        or page == "docs/guide/dask.md"
        or (page == "docs/guide/sklearn.md" and heading == "Plots")
    )


def section_params():
    return [
        pytest.param(p, h, b, id=f"{p}: {h}", marks=[pytest.mark.slow] if is_slow_section(p, h) else [])
        for p, h, b in page_sections()
    ]


def test_the_slow_sections_are_sections_of_the_pages():
    # Each rule above names a section that exists, so that a renamed heading cannot move a
    # slow section into the quick run unnoticed.
    sections = {(p, h) for p, h, _ in page_sections()}
    assert ("docs/index.md", "Quick start") in sections and ("docs/guide/sklearn.md", "Plots") in sections
    assert any(p == "docs/guide/dask.md" for p, _ in sections)
    assert sum(is_slow_section(p, h) for p, h in sections) < len(sections) // 4


@pytest.mark.parametrize("page,heading,blocks", section_params())
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


#: The pages written for contributors, which may name the tests that check a claim; every other
#: page is a user's, and speaks of what svmmap does, not of how its work was organized.
CONTRIBUTOR_PAGES = ("docs/development.md",)
#: What a user page must not name: the project's issue numbers, its test files and the names of
#: the rounds and trials of testing that found a defect (a user cannot look any of them up).
INTERNAL_NAMES = (
    (re.compile(r"\bissues? #?\d+", re.I), "an issue number"),
    (re.compile(r"\btests/[\w./*-]*"), "a path under tests/"),
    (re.compile(r"\btest_\w+\.py\b"), "a test file"),
    (re.compile(r"\bround[ _-](one|two|three|four|five|six|seven|eight|nine|ten)\b", re.I), "a round name"),
    (
        re.compile(r"\b(first|second|third|fourth|independent|hostile|the same) (trial|probe)\b", re.I),
        "a trial's name",
    ),
)


def internal_names(text):
    """(line number, what, the text) of every internal name in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for pattern, what in INTERNAL_NAMES:
            found.extend((number, what, m.group(0)) for m in pattern.finditer(line))
    return found


def test_the_internal_names_check_finds_each_kind_and_spares_ordinary_words():
    # Each kind, in the forms the pages used to hold them; a line is searched for each kind in
    # turn, so a test file inside a tests/ path counts as both (a round inside a file name is
    # not a word of its own, and the file's name catches it).
    text = (
        "issue 43's bar\nsee tests/io/test_one_opener.py (`G`)\n`test_gate_round_five.py::x`\n"
        "reliability round four\nfound by a third independent trial\nthe same probe"
    )
    assert [what for _, what, _ in internal_names(text)] == [
        "an issue number",
        "a path under tests/",
        "a test file",
        "a test file",
        "a round name",
        "a trial's name",
        "a trial's name",
    ]
    # Words a user page uses in their own sense: a round of training, the protocol's trials,
    # a metric's test split, a test of significance.
    ordinary = "a round is one iteration; each trial's training queries; mean_test_score; a paired t-test"
    assert internal_names(ordinary) == []


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if p.relative_to(ROOT).as_posix() not in CONTRIBUTOR_PAGES],
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_user_pages_name_no_issue_test_file_or_round(page):
    """A user page says what svmmap does and how a user sees it; the tests that check each claim
    are listed for contributors in docs/development.md."""
    found = internal_names(page.read_text(encoding="utf-8"))
    assert not found, f"{page.relative_to(ROOT)} names internals: " + "; ".join(
        f"line {n}: {what} ({text!r})" for n, what, text in found
    )


#: How the pages restate the search's constants, each with the value the code holds. A page may
#: say them where the reader needs them, and this test keeps every such sentence true.
def search_constants():
    from svmmap import SVMMapCV
    from svmmap._search.engine import RANKING_EPS

    defaults = SVMMapCV().get_params()
    return [
        # "they stop at 10 times `eps`": the search's fits are solved RANKING_EPS times looser.
        (re.compile(r"(\d+(?:\.\d+)?) times `eps`"), RANKING_EPS, "RANKING_EPS"),
        # The race's margin, in the words of the benchmarks page.
        (re.compile(r"race \(margin (\d+(?:\.\d+)?)\)"), defaults["prune_margin"], "prune_margin"),
        (re.compile(r"a candidate (\d+(?:\.\d+)?) below the best"), defaults["prune_margin"], "prune_margin"),
        (
            re.compile(r"at most (\d+) training queries per split"),
            defaults["max_train_queries"],
            "max_train_queries",
        ),
    ]


#: "`prune_margin=0.02`, the default", "max_train_queries=500 (the default)", "`patience` (default 1)".
STATED_DEFAULT = re.compile(
    r"`?(?P<name>\w+)=(?P<value>[\w.+-]+)`?(?:,| \(| --?)\s*the default"
    r"|`(?P<name2>\w+)` \(default (?P<value2>[\w.+-]+)\)"
)


def stated_constants(text, constants, defaults):
    """(what the page says, the code's value, the name) of every restated constant in ``text``."""
    out = []
    for pattern, value, name in constants:
        out.extend((float(m.group(1)), value, name) for m in pattern.finditer(text))
    for m in STATED_DEFAULT.finditer(text):
        name, said = (m.group("name"), m.group("value")) if m.group("name") else (m.group("name2"), m.group("value2"))
        if name in defaults:
            out.append((said, defaults[name], name))
    return out


def test_the_pages_restate_the_search_s_constants_as_the_code_holds_them():
    from svmmap import SVMMap, SVMMapCV

    defaults = {**SVMMap().get_params(), **SVMMapCV().get_params()}
    constants = search_constants()
    wrong, named = [], set()
    for page in PAGES:
        for said, value, name in stated_constants(page.read_text(encoding="utf-8"), constants, defaults):
            named.add(name)
            ok = str(said) == str(value) if isinstance(said, str) else said == float(value)
            if not ok and isinstance(said, str):
                try:
                    ok = float(said) == float(value)
                except (TypeError, ValueError):
                    ok = said == str(value)
            if not ok:
                wrong.append(f"{page.relative_to(ROOT)}: {name} is said to be {said}, the code has {value}")
    # The API reference, rendered from the docstrings: "prune_margin : float or None, default=0.02".
    for cls in (SVMMap, SVMMapCV):
        for m in re.finditer(r"^\s*(\w+) : [^\n]*default=([\w.+-]+)\s*$", cls.__doc__ or "", re.M):
            name, said = m.group(1), m.group(2)
            if name in cls().get_params() and said != repr(cls().get_params()[name]).strip("'\""):
                try:
                    if float(said) == float(cls().get_params()[name]):
                        continue
                except (TypeError, ValueError):
                    pass
                wrong.append(
                    f"{cls.__name__}'s docstring: {name} is said to be {said}, the code has {cls().get_params()[name]}"
                )
    assert not wrong, "\n".join(wrong)
    # The pages do restate each of them (so this test is not vacuous): the guide's page on the
    # search and the benchmarks say all three.
    assert {"RANKING_EPS", "prune_margin", "max_train_queries", "patience"} <= named, named


def test_the_restated_constants_check_finds_a_wrong_value():
    # A page that said 5 times `eps`, a margin of 0.05 and a default of 100 queries is wrong
    # on all three, whatever the code holds (10, 0.02 and 500 when this was written).
    constants = search_constants()
    defaults = {"max_train_queries": 500, "prune_margin": 0.02}
    text = "they stop at 5 times `eps`; the race (margin 0.05); (`max_train_queries=100`, the default)"
    found = stated_constants(text, constants, defaults)
    assert [(said, name) for said, _, name in found] == [
        (5.0, "RANKING_EPS"),
        (0.05, "prune_margin"),
        ("100", "max_train_queries"),
    ]
    assert all(float(said) != float(value) for said, value, _ in found)
