"""The generated tables of README.md and docs/: their markers, their stamps, and --write.

Every table of figures in README.md and docs/**/*.md sits in a generated block that names the
command printing it, and ends with a stamp line saying what measured it:

    <!-- generated: benchmarks/criteria_table.py --rows map,roc -->

    | trained on | test MAP (p) | ... | time (s, timing) |
    |---|---:|...|

    *Measured with svmmap 0.1.0, commit df16b35, on 2026-11-26; 2-core Intel Xeon @ 2.80GHz, load 3.2.*

    <!-- end generated -->

A script prints its block (the table and a fresh stamp) by default, and with ``--write``
replaces the block of the page whose marker names exactly its command line (``--write`` and
``--note`` left out), so a table cannot drift from what the script prints:

    python benchmarks/criteria_table.py --write

The command is a script of benchmarks/ (or examples/), an ``svmmap`` command, or a ``cargo
bench --bench NAME`` of benches/; only the scripts that call ``publish`` write their blocks.
Several blocks of one command on a page (its tables with the page's own text between them)
take the printed tables one each, in order.

A block marked ``<!-- generated (record): ... -->`` is a comparison measured once (two builds,
one after the other) that the current build cannot reproduce; it keeps its stamp and is not
regenerated. A table of text only (parameters, options, formats, test names) is preceded by
``<!-- text table -->`` instead, and must then hold no cell that is a bare number.

Columns of wall-clock time say ``timing`` in their header cell: they change from run to run,
so the tests that recompute a table compare every other column exactly and skip those.

    python benchmarks/tables.py            # every block and opted-out table, with its stamp
    python benchmarks/tables.py --check    # exit 1 if a table has neither (what the test checks)
"""

from __future__ import annotations

import argparse
import atexit
import datetime
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]

OPEN = re.compile(r"^(?P<indent>\s*)<!-- generated(?P<record> \(record\))?: (?P<command>.+?) -->\s*$")
CLOSE = re.compile(r"^\s*<!-- end generated -->\s*$")
TEXT_TABLE = re.compile(r"^\s*<!-- text table -->\s*$")
STAMP = re.compile(
    r"^\*Measured with svmmap (?P<version>\S+), commit (?P<commit>[0-9a-f]{7,40}\+?|unrecorded), "
    r"on (?P<date>\d{4}-\d{2}-\d{2})(?:; (?P<note>.+))?\.\*$"
)
#: A cell that is a figure: a decimal number or a number with a unit or ratio mark, possibly
#: bold or signed (0.6609, **37.3x**, 2.5e-3, 12 ms, 98%).
#: A bare integer is left out: text tables hold settings such as 0 or 1.
FIGURE = re.compile(
    r"^\**[-+]?(\d[\d,]*\.\d+(e[-+]?\d+)?\s*(x|%|s|ms|µs|ns|MB|GB|GiB|MiB)?"
    r"|\d[\d,]*(\.\d+)?\s*(x|%|s|ms|µs|ns|MB|GB|GiB|MiB))\**$"
)


def pages(root: Path = ROOT) -> List[Path]:
    """README.md and every page of the documentation site."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


@dataclass
class Table:
    """A markdown table: its first line (0-based) and its rows of cells, the header first."""

    line: int
    rows: List[List[str]]
    block: Optional["Block"] = None
    text_only: bool = False

    @property
    def header(self) -> List[str]:
        return self.rows[0]


@dataclass
class Block:
    """A generated block: the marker's command, its lines (0-based, markers excluded) and stamp."""

    command: str
    record: bool
    indent: str
    start: int  # the line after the opening marker
    end: int  # the line of the closing marker
    lines: List[str]
    tables: List[Table] = field(default_factory=list)

    @property
    def body(self) -> str:
        """The block's text without its stamp, dedented and stripped of blank edges."""
        lines = [line[len(self.indent) :] if line.startswith(self.indent) else line for line in self.lines]
        while lines and not lines[-1].strip():
            lines.pop()
        if lines and STAMP.match(lines[-1].strip()):
            lines.pop()
        return "\n".join(lines).strip("\n")

    @property
    def stamp(self) -> Optional[re.Match]:
        filled = [line.strip() for line in self.lines if line.strip()]
        return STAMP.match(filled[-1]) if filled else None

    @property
    def script(self) -> str:
        return shlex.split(self.command)[0]


@dataclass
class Page:
    path: Path
    lines: List[str]
    blocks: List[Block]
    tables: List[Table]
    errors: List[str]


def split_row(line: str) -> List[str]:
    """The cells of a table line (escaped pipes \\| stay inside their cell)."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", body)]


def parse(path: Path) -> Page:
    """The blocks and tables of one page, and what is wrong with them."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks: List[Block] = []
    tables: List[Table] = []
    errors: List[str] = []
    where = lambda i: f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{i + 1}"  # noqa: E731
    block: Optional[Block] = None
    fence = False
    text_only = False
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = not fence
        if fence:
            i += 1
            continue
        opened = OPEN.match(line)
        if opened:
            if block is not None:
                errors.append(f"{where(i)}: a generated block opens inside another")
            block = Block(opened["command"], bool(opened["record"]), opened["indent"], i + 1, -1, [])
        elif CLOSE.match(line):
            if block is None:
                errors.append(f"{where(i)}: '<!-- end generated -->' without an opening marker")
            else:
                block.end = i
                block.lines = lines[block.start : i]
                blocks.append(block)
                block = None
        elif TEXT_TABLE.match(line):
            text_only = True
        elif stripped.startswith("|"):
            start = i
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(split_row(lines[i]))
                i += 1
            # The second line of a table is its alignment row; drop it from the cells.
            if len(rows) > 1 and all(re.fullmatch(r":?-+:?", c) for c in rows[1] if c):
                del rows[1]
            table = Table(start, rows, block, text_only)
            tables.append(table)
            if block is not None:
                block.tables.append(table)
            text_only = False
            continue
        elif stripped and not stripped.startswith("<!--"):
            # An opt-out applies to the table right after it (blank lines allowed), nothing later.
            text_only = False
        i += 1
    if block is not None:
        errors.append(f"{where(block.start - 1)}: a generated block is never closed")
    errors += _table_errors(tables, where) + _block_errors(blocks, where)
    return Page(path, lines, blocks, tables, errors)


def _table_errors(tables: List[Table], where: Callable[[int], str]) -> List[str]:
    """What is wrong with a page's tables: a table neither generated nor marked as text, or both,
    or a text table that holds figures."""
    errors = []
    for table in tables:
        if table.block is not None and table.text_only:
            errors.append(f"{where(table.line)}: a table both generated and marked as text")
        elif table.block is None and not table.text_only:
            errors.append(
                f"{where(table.line)}: a table with neither a '<!-- generated: benchmarks/SCRIPT ... -->' "
                "block nor a '<!-- text table -->' mark (header: " + " | ".join(table.header) + ")"
            )
        elif table.text_only:
            figures = [c for row in table.rows[1:] for c in row if FIGURE.match(c)]
            if figures:
                errors.append(f"{where(table.line)}: a text table holds figures {figures[:3]}: generate it")
    return errors


def _block_errors(blocks: List[Block], where: Callable[[int], str]) -> List[str]:
    """What is wrong with a page's generated blocks: a command that is not runnable, no stamp,
    no table."""
    errors = []
    for b in blocks:
        if not runnable(b.command):
            errors.append(
                f"{where(b.start - 1)}: the block's command {b.command!r} is neither a script of benchmarks/ "
                "or examples/, nor an svmmap command or a cargo bench of benches/"
            )
        if b.stamp is None:
            errors.append(f"{where(b.end)}: the block of {b.command!r} has no stamp line before its end marker")
        if not b.tables:
            errors.append(f"{where(b.start - 1)}: the block of {b.command!r} holds no table")
    return errors


def runnable(command: str) -> bool:
    """Whether a marker's command names something in this repository that prints the figures:
    a script of benchmarks/ or examples/, the svmmap command, or a cargo bench of benches/."""
    words = shlex.split(command)
    if words[:2] == ["cargo", "bench"]:
        target = words[words.index("--bench") + 1] if "--bench" in words[:-1] else None
        return target is not None and (ROOT / "benches" / f"{target}.rs").is_file()
    if words[0] == "svmmap":
        return len(words) > 1
    return words[0].split("/")[0] in ("benchmarks", "examples") and (ROOT / words[0]).is_file()


def all_pages(root: Path = ROOT) -> List[Page]:
    return [parse(p) for p in pages(root)]


def machine() -> str:
    """The CPU, its cores and the load average: what a reader needs to weigh a timing."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = " ".join(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()}-core {model}, load average {load:.1f}"


def commit(root: Path = ROOT) -> str:
    """The checkout's short commit, with '+' when tracked files differ from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "rust", "python"], cwd=root).returncode
    except (OSError, subprocess.CalledProcessError):
        return "unrecorded"
    return head + ("+" if dirty else "")


def stamp(note: Optional[str] = None) -> str:
    """The stamp line of a table measured now, with this build."""
    import svmmap

    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    details = machine() if note is None else f"{machine()}; {note}"
    return f"*Measured with svmmap {svmmap.__version__}, commit {commit()}, on {today}; {details}.*"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--write and --note, the same for every script that prints a table of the docs."""
    parser.add_argument(
        "--write",
        action="store_true",
        help="replace the generated block of this command line in README.md / docs/ instead of printing",
    )
    parser.add_argument("--note", default=None, help="added to the stamp (e.g. 'other jobs running')")


def command_line(argv: Optional[Sequence[str]], script: str) -> str:
    """The script's command line as its marker spells it: --write and --note left out."""
    args = list(sys.argv[1:] if argv is None else argv)
    kept: List[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--write":
            continue
        if arg == "--note":
            skip = True
            continue
        if arg.startswith("--note="):
            continue
        kept.append(arg)
    path = Path(script).resolve()
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    return " ".join([name, *(shlex.quote(a) for a in kept)])


def publish(
    text: str,
    script: str,
    argv: Optional[Sequence[str]] = None,
    write: bool = False,
    note: Optional[str] = None,
    root: Path = ROOT,
) -> List[Path]:
    """Print ``text`` (a table, or tables and their headings) with a stamp, or with ``write``
    put it into every block whose marker names this command line. Returns the pages written."""
    command = command_line(argv, script)
    if not write:
        print(text.strip("\n") + "\n\n" + stamp(note))
        return []
    written = []
    for page in all_pages(root):
        # A record block keeps its figures whatever command produced them, so it never takes
        # a printed table, even where its marker names the same command line as a live block.
        hits = [b for b in page.blocks if not b.record and same_command(b.command, command)]
        if not hits:
            continue
        lines = list(page.lines)
        # Several blocks of one command on a page (tables with the page's own text between
        # them) take the printed tables one each, in order.
        parts = [text.strip("\n")] if len(hits) == 1 else table_chunks(text)
        if len(parts) != len(hits):
            raise SystemExit(
                f"{page.path}: {len(hits)} blocks of {command!r}, but it printed {len(parts)} tables; not rewritten"
            )
        for b, part in sorted(zip(hits, parts), key=lambda hit: hit[0].start, reverse=True):
            content = part + "\n\n" + stamp(note)
            new = [""] + [(b.indent + line if line else "") for line in content.split("\n")] + [""]
            lines[b.start : b.end] = new
        page.path.write_text("\n".join(lines), encoding="utf-8")
        written.append(page.path)
        print(f"wrote {len(hits)} block(s) of {command!r} in {page.path.relative_to(root)}", file=sys.stderr)
    if not written:
        known = sorted(
            {b.command for p in all_pages(root) for b in p.blocks if not b.record and b.script == command.split()[0]}
        )
        raise SystemExit(
            f"no block of README.md or docs/ is generated by {command!r}; the blocks of this script: {known}"
        )
    return written


def same_command(a: str, b: str) -> bool:
    """Whether two command lines are the same words (quoting and spacing aside)."""
    return shlex.split(a) == shlex.split(b)


def write_on_exit(args: argparse.Namespace, script: str, argv: Optional[Sequence[str]] = None) -> None:
    """``--write`` for a script that prints its tables as it goes: with ``args.write``, what it
    prints is kept (and echoed) and, when it ends without an error, its tables (the lines
    starting with '|', their headings and notes left out) go into the blocks of its command line
    (``publish``). Without ``--write`` nothing changes."""
    if not getattr(args, "write", False):
        return
    real = sys.stdout
    buffer = io.StringIO()
    sys.stdout = buffer
    failed: List[bool] = []
    previous_hook = sys.excepthook

    def hook(*exc_info) -> None:  # type: ignore[no-untyped-def]
        failed.append(True)
        sys.stdout = real
        previous_hook(*exc_info)

    def finish() -> None:
        sys.stdout = real
        text = buffer.getvalue()
        real.write(text)
        real.flush()
        if failed:
            print("nothing was written: the script failed", file=sys.stderr)
            sys.stderr.flush()
            os._exit(1)
        chunks = table_chunks(text)
        if not chunks:
            print("nothing was written: the script printed no table", file=sys.stderr)
            sys.stderr.flush()
            os._exit(1)
        try:
            publish("\n\n".join(chunks), script, argv, write=True, note=getattr(args, "note", None))
        except SystemExit as refused:
            print(refused, file=sys.stderr)
            sys.stderr.flush()
            os._exit(1)

    # A script that stops with sys.exit(message or non-zero code) has failed too; an exit
    # raised as `raise SystemExit(...)` is invisible here, so the scripts call sys.exit.
    previous_exit = sys.exit

    def exit(status: object = None) -> None:
        if status not in (None, 0):
            failed.append(True)
        previous_exit(status)

    sys.exit = exit  # type: ignore[assignment]
    sys.excepthook = hook
    atexit.register(finish)


def table_chunks(text: str) -> List[str]:
    """The tables of a text (each a run of lines starting with '|'), in order."""
    chunks: List[List[str]] = []
    previous = False
    for line in text.split("\n"):
        is_row = line.strip().startswith("|")
        if is_row and not previous:
            chunks.append([])
        if is_row:
            chunks[-1].append(line.strip())
        previous = is_row
    return ["\n".join(c) for c in chunks]


def cells(table_text: str) -> Iterator[List[str]]:
    """The rows of cells of the tables in a text (alignment rows left out)."""
    for line in table_text.split("\n"):
        if line.strip().startswith("|"):
            row = split_row(line)
            if not all(re.fullmatch(r":?-+:?", c) for c in row if c):
                yield row


# --- Regenerating every block: python benchmarks/tables.py --regenerate ----------------------

#: Commands that must run before a command whose script reads what they leave behind:
#: oracle_table.py summarizes criterion's results under target/criterion.
PREREQUISITES = {
    "benchmarks/oracle_table.py": ["cargo bench --bench oracles -- --noplot"],
}

#: Seconds each command (or prerequisite) took when last run to the end, on the project's
#: 2-core machine shared with other jobs and compilations (2026-11-26, load 5-7, so the
#: figures are high): for ordering the run (cheap first) and for --list. A run of
#: --regenerate keeps its own durations in DURATIONS_FILE, which --list prefers. A command
#: not listed here is taken as long and runs last.
EXPECTED_SECONDS = {
    "benchmarks/conventions_table.py": 1,
    "benchmarks/binning_table.py": 1,
    "benchmarks/mq2008_table.py --table readme": 2,
    "benchmarks/mq2008_table.py --table benchmarks": 2,
    "benchmarks/oracle_cost.py": 3,
    "benchmarks/scale.py --only fit": 20,
    "benchmarks/protocol_table.py --methods map,roc,SVM-acc=svmmap.baselines:SVMAcc,SVM-acc2=svmmap.baselines:SVMAcc2": 21,
    "examples/mq2008_fusion.py": 29,
    "benchmarks/scale.py --only lightgbm": 36,
    "benchmarks/criteria_table.py": 41,
    "benchmarks/cv_path.py --folds 1,2,3,4,5 --repeat 1 --confirm": 45,
    "benchmarks/protocol_table.py --methods map,LinearSVC=sklearn.svm:LinearSVC,best,best2,best3": 49,
    "benchmarks/scale.py --only threads": 54,
    "benchmarks/binned_scale.py --only codes": 59,
    "benchmarks/binned_scale.py --only csr": 69,
    "benchmarks/import_time.py --runs 10": 72,
    "benchmarks/install_time.py": 80,
    "benchmarks/solver.py --only folds": 76,
    "benchmarks/ndcg_vs_map.py --table guide": 81,
    "benchmarks/binned_solver.py --data mq2008 --blocks 1,4": 88,
    "benchmarks/cv_path.py --folds 1,2,3,4,5 --repeat 3": 95,
    "benchmarks/binned_solver.py": 99,
    "benchmarks/solver.py --only scale --readme": 126,
    "benchmarks/solver.py --only scale": 131,
    # Its first run builds examples/pass_cost.rs with cargo (230 s then).
    "benchmarks/scale.py --only pass": 60,
    "benchmarks/scale.py --only reader": 219,
    "benchmarks/binned_accuracy.py --readme": 434,
    "benchmarks/binned_accuracy.py": 612,
    "benchmarks/combo_weights.py": 8,
    "benchmarks/cutoff_losses.py --shipped": 13,
    "benchmarks/dask_scale.py": 34,
    "benchmarks/eps_choice.py --budget 30": 388,
    "benchmarks/cutoff_losses.py --check --table guide": 674,
    "benchmarks/oracle_table.py": 2,
    "benchmarks/latent_collapse.py": 60,
    "benchmarks/graded_ndcg.py": 420,
    # Its build of the bench included.
    "cargo bench --bench oracles -- --noplot": 375,
}

DURATIONS_FILE = ROOT / "target" / "tables-durations.json"
UNKNOWN_SECONDS = 3600.0


@dataclass
class Job:
    """One command of the pages and the blocks it writes (page, block), in page order."""

    command: str
    blocks: List[tuple] = field(default_factory=list)

    @property
    def prerequisites(self) -> List[str]:
        return PREREQUISITES.get(self.command, [])

    @property
    def writable(self) -> bool:
        """Only a Python script of benchmarks/ or examples/ can take --write (an svmmap
        command or a cargo bench prints no block of its own)."""
        return self.command.split()[0].endswith(".py")

    def argv(self, write: bool) -> List[str]:
        """The command to run: a script with this interpreter (and --write), the svmmap
        command as `python -m svmmap`, anything else (cargo) as it is."""
        words = shlex.split(self.command)
        if words[0] == "svmmap":
            return [sys.executable, "-m", *words]
        if not words[0].endswith(".py"):
            return words
        return [sys.executable, *words] + (["--write"] if write else [])


def known_durations(root: Path = ROOT) -> dict:
    """EXPECTED_SECONDS, overridden by the durations of the last --regenerate run (if any)."""
    durations = dict(EXPECTED_SECONDS)
    path = root / "target" / DURATIONS_FILE.name
    try:
        import json

        durations.update(json.loads(path.read_text()))
    except (OSError, ValueError):
        pass
    return durations


def expected_seconds(job: Job, durations: dict) -> float:
    """The job's last known duration, its prerequisites included."""
    return sum(float(durations.get(c, UNKNOWN_SECONDS)) for c in [*job.prerequisites, job.command])


def jobs(root: Path = ROOT, durations: Optional[dict] = None) -> List[Job]:
    """Every distinct command of a non-record block of README.md and docs/, cheapest first
    (ties in page order); a command's prerequisites run just before it."""
    durations = known_durations(root) if durations is None else durations
    found: dict = {}
    for page in all_pages(root):
        for b in page.blocks:
            if b.record:
                continue
            key = tuple(shlex.split(b.command))
            found.setdefault(key, Job(" ".join(key))).blocks.append((page.path, b))
    order = list(found.values())
    return sorted(order, key=lambda job: expected_seconds(job, durations))


def printed_against_blocks(job: Job, text: str, root: Path = ROOT) -> List[str]:
    """What is wrong between the tables a command printed and the blocks it would write:
    per page, as many tables as its blocks hold (one each where a page has several blocks
    of the command), with the same header cells. Headers whose cells differ are reported too
    (a header may hold a size or a thread count that differs on another machine)."""
    printed = table_chunks(text)
    problems: List[str] = []
    pages_of: dict = {}
    for path, b in job.blocks:
        pages_of.setdefault(path, []).append(b)
    for path, blocks in pages_of.items():
        where = path.relative_to(root) if path.is_relative_to(root) else path
        wanted = [t for b in blocks for t in b.tables]
        if len(blocks) > 1 and any(len(b.tables) != 1 for b in blocks):
            problems.append(f"{where}: {len(blocks)} blocks of {job.command!r}, not all holding one table each")
        if len(printed) != len(wanted):
            problems.append(f"{where}: the blocks hold {len(wanted)} table(s), the command printed {len(printed)}")
            continue
        for table, chunk in zip(wanted, printed):
            header = next(cells(chunk))
            if header != table.header:
                problems.append(f"{where}:{table.line + 1}: header {table.header} on the page, printed {header}")
    return problems


def stale_blocks(root: Path = ROOT, commands: Optional[Sequence[str]] = None) -> List[str]:
    """The non-record blocks (of `commands`, or all) whose stamp names another commit than the
    checkout's HEAD (or a build that differed from it, '+')."""
    head = commit(root).rstrip("+")
    wanted = None if commands is None else {tuple(shlex.split(c)) for c in commands}
    stale = []
    for page in all_pages(root):
        for b in page.blocks:
            s = b.stamp
            if b.record or (s is not None and s["commit"] == head):
                continue
            if wanted is not None and tuple(shlex.split(b.command)) not in wanted:
                continue
            where = page.path.relative_to(root)
            stale.append(f"{where}:{b.start}: {b.command} [{s['commit'] + ' ' + s['date'] if s else 'NO STAMP'}]")
    return stale


def run_logged(argv: List[str], log: Path, timeout: Optional[float], root: Path) -> tuple:
    """Runs a command in the checkout with its output in `log`; (exit status, seconds)."""
    import time

    start = time.perf_counter()
    # criterion writes its results where oracle_table.py reads them, the checkout's target/,
    # only without a CARGO_TARGET_DIR of the environment.
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    with open(log, "w", encoding="utf-8") as out:
        try:
            status = subprocess.run(
                argv, cwd=root, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, env=env
            ).returncode
        except subprocess.TimeoutExpired:
            status = -1
            out.write(f"\n[tables.py: stopped after the timeout of {timeout:g} s]\n")
        except OSError as error:
            status = -1
            out.write(f"\n[tables.py: could not start: {error}]\n")
    return status, time.perf_counter() - start


def regenerate(
    only: Optional[str] = None,
    dry_run: bool = False,
    write: bool = True,
    timeout: Optional[float] = None,
    log_dir: Optional[Path] = None,
    root: Path = ROOT,
) -> int:
    """Runs every command of the pages (those matching the regular expression `only`) one
    after the other, with --write (or, with write=False, as printed, checking what it prints
    against its blocks), printing each command, its exit status and its wall time, then the
    blocks whose stamp is not of HEAD. Returns 1 if a command failed or a block is stale."""
    import json

    durations = known_durations(root)
    todo = [j for j in jobs(root, durations) if only is None or re.search(only, j.command)]
    if not todo:
        print(f"no command of the pages matches {only!r}", file=sys.stderr)
        return 1
    log_dir = root / "target" / "tables-logs" if log_dir is None else log_dir
    failed: List[str] = []
    measured: dict = {}
    done_prerequisites: set = set()
    total = sum(expected_seconds(j, durations) for j in todo)
    print(f"{len(todo)} command(s), about {total / 60:.0f} min by the last known durations", flush=True)
    for number, job in enumerate(todo, 1):
        steps = [(p, shlex.split(p), False) for p in job.prerequisites if p not in done_prerequisites]
        steps.append((job.command, job.argv(write and job.writable), True))
        for command, argv, main_step in steps:
            shown = f"{command} --write" if main_step and write and job.writable else command
            if dry_run:
                print(f"[{number}/{len(todo)}] {shown}  (last known {durations.get(command, UNKNOWN_SECONDS):.0f} s)")
                continue
            if main_step and write and not job.writable:
                print(f"[{number}/{len(todo)}] {command}: FAILED, it cannot take --write (not a Python script)")
                failed.append(command)
                continue
            print(f"[{number}/{len(todo)}] {shown}", flush=True)
            log_dir.mkdir(parents=True, exist_ok=True)
            log = log_dir / (re.sub(r"[^A-Za-z0-9_.,=-]+", "_", command)[:150] + ".log")
            status, seconds = run_logged(argv, log, timeout, root)
            problems: List[str] = []
            if status == 0 and main_step and not write:
                problems = printed_against_blocks(job, log.read_text(encoding="utf-8"), root)
            verdict = "ok" if status == 0 and not problems else "FAILED"
            print(f"    exit {status}, {seconds:.0f} s, {verdict}; output in {log}", flush=True)
            for problem in problems:
                print(f"    {problem}")
            if status != 0:
                tail = log.read_text(encoding="utf-8", errors="replace").strip().split("\n")[-15:]
                print("\n".join("    | " + line for line in tail))
            if status == 0:
                measured[command] = round(seconds, 1)
                if not main_step:
                    done_prerequisites.add(command)
            if verdict == "FAILED":
                failed.append(command)
                break  # a failed prerequisite leaves nothing for its command to read
    if dry_run:
        return 0
    if measured:
        path = root / "target" / DURATIONS_FILE.name
        saved = {}
        try:
            saved = json.loads(path.read_text())
        except (OSError, ValueError):
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**saved, **measured}, indent=1, sort_keys=True) + "\n")
    # With --only, the blocks of the commands it left out are not this run's to judge.
    stale = stale_blocks(root, None if only is None else [j.command for j in todo]) if write else []
    print(f"\n{len(failed)} failed" + "".join(f"\n  {c}" for c in failed))
    if write:
        print(f"{len(stale)} block(s) with a stamp of another commit than HEAD" + "".join(f"\n  {s}" for s in stale))
    return 1 if failed or stale else 0


def list_jobs(only: Optional[str] = None, root: Path = ROOT) -> None:
    """The commands --regenerate runs, in its order, with their last known durations."""
    durations = known_durations(root)
    total = 0.0
    for job in jobs(root, durations):
        if only is not None and not re.search(only, job.command):
            continue
        seconds = expected_seconds(job, durations)
        total += seconds
        where = ", ".join(
            f"{path.relative_to(root) if path.is_relative_to(root) else path}:{b.start}" for path, b in job.blocks
        )
        before = "".join(f" (after {p})" for p in job.prerequisites)
        unknown = "" if job.command in durations else " (unknown: taken as long)"
        print(f"{seconds:7.0f} s{unknown}  {job.command}{before}  -> {where}")
    print(f"{total:7.0f} s  in all")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report tables without a marker; exit 1 if any")
    parser.add_argument(
        "--regenerate",
        action="store_true",
        help="run every command of a non-record block with --write, cheapest first; exit 1 if one fails or "
        "a block is left with a stamp of another commit than HEAD",
    )
    parser.add_argument("--only", default=None, metavar="PATTERN", help="only the commands this regex finds")
    parser.add_argument("--dry-run", action="store_true", help="with --regenerate: print the commands, run nothing")
    parser.add_argument(
        "--no-write",
        action="store_true",
        help="with --regenerate: run the commands without --write and check that they print the tables their "
        "blocks hold (count and header)",
    )
    parser.add_argument("--timeout", type=float, default=None, help="with --regenerate: seconds per command")
    parser.add_argument("--list", action="store_true", help="the commands --regenerate runs, with durations")
    args = parser.parse_args(argv)
    if args.list:
        list_jobs(args.only)
        return 0
    if args.regenerate:
        return regenerate(args.only, dry_run=args.dry_run, write=not args.no_write, timeout=args.timeout)
    errors = []
    for page in all_pages():
        errors += page.errors
        if args.check:
            continue
        for b in page.blocks:
            s = b.stamp
            when = f"{s['version']} {s['commit']} {s['date']}" if s else "NO STAMP"
            kind = "record" if b.record else "generated"
            print(f"{page.path.relative_to(ROOT)}:{b.start}: {kind}: {b.command} [{when}]")
    print("\n".join(errors), file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
