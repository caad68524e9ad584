"""One home per training parameter (issue 44 item 3): in how many source files each parameter
of the core's table (``svmmap._core.TRAINING_PARAMETERS``, declared in
rust/solver/options.rs) is named as a parameter, that every default of a parameter named as a
training parameter is read from the table, and that the docstrings outside SVMMap's show the
table's type and default. Each check is a function of a source tree, and a test hands it a
small tree that it must find fault with.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest
from svmmap import _core

ROOT = Path(__file__).resolve().parents[2]
Table = Sequence[Dict[str, Any]]


def names(table: Table) -> List[str]:
    return [p["name"] for p in table]


def shown(value: Any) -> str:
    """A default as the numpydoc headers write it: strings in double quotes, else repr."""
    return f'"{value}"' if isinstance(value, str) else repr(value)


# --- where each training parameter is named ------------------------------------------------

#: Files of tests and test harnesses (the core's fuzzing and property tests, the oracles' test
#: helpers): they name a parameter to check it, which is no second home for it.
TEST_CODE = {"tests.rs", "testing.rs", "fuzzing.rs", "proptests.rs"}

#: Files that name a training parameter's word only as something else, with what it is there.
#: The count leaves them out; `test_what_is_left_out_is_not_the_training_parameter` checks that
#: each still names the word and does not read the training table for it (the defaults, an
#: estimator's parameter, the core's options), which is how the two are told apart: the
#: training parameter is whatever takes its value or its default from the table.
OTHER_MEANINGS: Dict[str, Dict[str, str]] = {
    "relevance_threshold": {
        "python/svmmap/metrics.py": "the metrics' convention (which labels count as relevant when scoring)",
        "rust/metrics.rs": "the metrics' convention, a field of metrics::Conventions",
        "python/svmmap/cli/evaluate.py": "svmmap evaluate's option, which sets the metrics' convention",
    },
    "max_iter": {
        "python/svmmap/_typing.py": 'the stop reason "max_iter" (StopReason), the core\'s stop name',
        "python/svmmap/persistence.py": 'the stop reason "max_iter" of a model file without one',
        "python/svmmap/_fit/evaluation_sets.py": 'the stop reason "max_iter" in the early-stopping messages',
        "python/svmmap/_files/model_file.py": 'the stop reason "max_iter" written for a model without one',
    },
    "C": {
        "python/svmmap/_data.py": 'NumPy\'s memory order (requirements=["C", "A"])',
        "python/svmmap/_binned.py": 'NumPy\'s memory order (requirements=["C", "A"])',
        "python/svmmap/dask/_parts.py": 'NumPy\'s memory order (requirements=["C", "A"])',
        "rust/python/matrix.rs": 'NumPy\'s memory order (np.require(..., ("C", "A")))',
        "rust/binning/transform.rs": "a type parameter (C: Code, the bin codes' integer type)",
        "rust/data/binned_view.rs": "a type parameter (C: Code, the bin codes' integer type)",
        "rust/python/binning.rs": "a type parameter (C: Code, the bin codes' integer type)",
    },
    "max_time": {
        "python/svmmap/_typing.py": 'the stop reason "max_time" (StopReason), the core\'s stop name',
    },
}

#: The training parameters still named in more than five source files: the count the rule below
#: finds (a test checks it is exact, so that a file added or removed updates this list) and why.
#: Most are parameters of every trainer of the package, not of SVMMap only: the baselines
#: (SVMAcc, SVMAcc2, AdaRank's relevance, DORM), the IR tools (RunFusion, run_folds, the
#: protocol's rankers) and the command line's experiment, fuse and protocol commands take them
#: in their own public signatures, with the table's defaults, and the core reads them where it
#: uses them (the solvers, the binding).
OVER_FIVE: Dict[str, Tuple[int, str]] = {
    "loss": (
        37,
        "a public parameter of every trainer and of svmmap.losses' functions, the search's candidates, and each oracle's and solver's loss (a field in rust/oracle and rust/solver)",
    ),
    "relevance_threshold": (
        30,
        "a public parameter of every trainer (the baselines, the protocol's rankers) and of svmmap.losses, and the usable-query rule's argument in the binding and the solvers",
    ),
    "n_jobs": (
        28,
        "a public parameter of every trainer, of the Binner, the readers and svmmap.losses, the Dask workers' thread count, and the thread rule's name in the core",
    ),
    "C": (
        27,
        "a public parameter of every trainer, and the search's C (its grid, the chosen one, cv_results_'s column) and the warnings that name it",
    ),
    "eps": (
        16,
        "a public parameter of every trainer, the commands' --eps, the search's ranking eps and the solvers' stopping rule (options.rs also derives the tolerance from it)",
    ),
    "max_iter": (
        10,
        "a public parameter of SVMMap, SVMMapCV, the baselines and the IR tools, the warnings that name it, and the solvers' loop bound (rust/solver/progress.rs, which both solvers iterate over)",
    ),
    "slack": (
        9,
        "svmmap.losses' loss_groups, loss_names and structured_hinge take it, the search keys its candidates by it (TrainConfig.slack, a getter of rust/python/config.rs and _core.pyi), the binding checks it with the loss (rust/python/losses.rs) and reads its choices from the table in rust/python/tables.rs (there rather than in losses.rs, which would make the binding's modules a loop)",
    ),
}


def code_of(path: Path) -> str:
    """The file without what names a parameter to show or check it rather than to use it: its
    comment lines, its docstrings' examples (``>>>`` and ``...`` lines) and a Rust file's test
    module (``#[cfg(test)] mod ... {``, which the crate's files keep at their end)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".rs":
        text = re.sub(r"^#\[cfg\(test\)\]\n(?:pub\(crate\) )?mod \w+ \{.*", "", text, flags=re.M | re.S)
        return re.sub(r"^\s*//.*$", "", text, flags=re.M)
    return re.sub(r"^\s*(?:#|>>>|\.\.\.).*$", "", text, flags=re.M)


def parameter_forms(name: str, rust: bool) -> "re.Pattern[str]":
    """Where ``name`` is named as a parameter: a keyword argument or a default without spaces
    (``name=``, as ruff formats them; an assignment ``name = ...`` is a local variable), an
    annotation, a Rust field or a numpydoc header (``name:``, ``name :``, not Rust's ``::``), a
    string key (``"name"``), an attribute (``.name``), a getter (``def name(``, ``fn name(``)
    and, in Rust, an entry of the table's declaration (``name {``, ``name =>``). Prose in
    docstrings and messages is not counted, so a one-letter ``C`` counts as ``C=``, ``C:``,
    ``"C"``, ``.C`` or ``def C(``, not as a word."""
    n = re.escape(name)
    forms = [
        rf"(?<![\w.]){n}=(?!=)",
        rf"(?<![\w.]){n}\s*:(?!:)",
        rf"[\"']{n}[\"']",
        rf"\.{n}\b",
        rf"\b(?:def|fn) {n}\(",
    ]
    if rust:
        forms.append(rf"(?<![\w.]){n}\s*(?:\{{|=>)")
    return re.compile("|".join(forms))


def parameter_sources(name: str, root: Optional[Path] = None) -> Dict[str, int]:
    """The source files (``rust/``, ``python/svmmap/``) that name ``name`` as a parameter, with
    the count of its places, leaving out test code and the files of ``OTHER_MEANINGS``."""
    root = ROOT if root is None else root
    counts = {}
    for pattern in ("rust/**/*.rs", "python/svmmap/**/*.py", "python/svmmap/**/*.pyi"):
        for path in root.glob(pattern):
            rel = path.relative_to(root).as_posix()
            if path.name in TEST_CODE or rel in OTHER_MEANINGS.get(name, {}):
                continue
            n = len(parameter_forms(name, path.suffix == ".rs").findall(code_of(path)))
            if n:
                counts[rel] = n
    return counts


AT_MOST_FIVE = [n for n in names(_core.TRAINING_PARAMETERS) if n not in OVER_FIVE]


def test_every_table_parameter_is_counted():
    assert set(OVER_FIVE) <= set(names(_core.TRAINING_PARAMETERS))
    assert AT_MOST_FIVE == ["cut_blocks", "n_iter_no_change", "max_time"]


@pytest.mark.parametrize("name", AT_MOST_FIVE)
def test_a_training_parameter_is_named_in_at_most_five_source_files(name):
    """Issues 38 and 44: one home per parameter. Besides its one entry in the table's
    declaration (rust/solver/options.rs), a parameter is named where it is used and in the
    signatures scikit-learn reads (SVMMap's and SVMMapCV's __init__, checked against the table
    above): adding one touches at most four source files, so at most five name an existing
    one."""
    sources = parameter_sources(name)
    assert sources.get("rust/solver/options.rs") == 1, sources
    assert len(sources) <= 5, sorted(sources)


@pytest.mark.parametrize("name", OVER_FIVE)
def test_the_parameters_over_five_files_are_counted_exactly(name):
    """The counts of ``OVER_FIVE`` are the code's: a file that stops naming one (or starts to)
    updates the list, so that its docstring keeps saying how far each is from five."""
    assert len(parameter_sources(name)) == OVER_FIVE[name][0], sorted(parameter_sources(name))


def test_what_is_left_out_is_not_the_training_parameter():
    """Each file of ``OTHER_MEANINGS`` names the word, and reads nothing of the training table
    for it: not its default (``TRAINING_DEFAULTS["name"]``), not an estimator's parameter
    (``self.name``, ``model.name``) and, in Rust, not the solver's options (``opts.name``)."""
    for name, files in OTHER_MEANINGS.items():
        for rel in files:
            path = ROOT / rel
            code = code_of(path)
            assert parameter_forms(name, path.suffix == ".rs").search(code), (name, rel)
            if path.suffix == ".rs":
                reads = [f"opts.{name}", f"options.{name}"]
            else:
                reads = [f'TRAINING_DEFAULTS["{name}"]', f"self.{name}", f"model.{name}"]
            assert not [r for r in reads if r in code], (name, rel)


def test_the_count_sees_a_parameter_named_again_and_not_prose(tmp_path, monkeypatch):
    """The count finds each form of naming a parameter in another file, and not prose, a
    comment, a docstring's example, a Rust test module, a local variable or a longer name (a
    count that saw nothing would pass whatever the code said; one that counted words would
    count prose)."""
    files = {
        "rust/solver/options.rs": "max_time => time_limit: Option<f64> { }\n// max_time: a comment",
        "rust/python/a.rs": "let max_time = 1;\nfn max_time(&self) -> f64 {\n    1.0\n}",
        "python/svmmap/kw.py": "f(max_time=3)",
        "python/svmmap/key.py": 'd["max_time"]',
        "python/svmmap/doc.py": '"""\n    max_time : float or None, default=None\n"""',
        "python/svmmap/prose.py": '"""The max_time parameter bounds the time."""\nmax_time = 2\n# max_time=3\nmax_timer=1',
        "python/svmmap/c.py": 'np.zeros(3, order="C")\nSVMMap(C=1.0)\n"""C is a letter"""',
        "rust/python/b.rs": "fn f() {}\n#[cfg(test)]\nmod tests {\n    opts.max_time\n}",
        "python/svmmap/example.py": '"""\n    >>> SVMMap(max_time=1.0)\n    ...     .fit(X, y, max_time=2)\n"""',
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    found = parameter_sources("max_time", tmp_path)
    assert found == {
        "rust/solver/options.rs": 1,
        "rust/python/a.rs": 1,
        "python/svmmap/kw.py": 1,
        "python/svmmap/key.py": 1,
        "python/svmmap/doc.py": 1,
    }
    # Five files pass the limit, a sixth would not.
    assert len(found) == 5
    (tmp_path / "python/svmmap/sixth.py").write_text("model.max_time", encoding="utf-8")
    assert len(parameter_sources("max_time", tmp_path)) == 6
    # "C" counts as a parameter (C=1.0) and as a string ("C", here NumPy's order): the latter
    # is why C is over five, and a file of OTHER_MEANINGS would be how to leave it out.
    assert parameter_sources("C", tmp_path) == {"python/svmmap/c.py": 2}
    assert parameter_sources("cut_blocks", tmp_path) == {}


#: The functions whose parameter has a training parameter's name but is another parameter, by
#: (file, function, name), with what it is. Everything else named as a training parameter takes
#: its default from the table (``TRAINING_DEFAULTS[name]``), which the test below checks.
OTHER_PARAMETERS: Dict[Tuple[str, str, str], str] = {
    ("python/svmmap/_fit/degenerate.py", "message", "C"): "the C a warning names, None when it names none",
    (
        "python/svmmap/binning.py",
        "__init__",
        "n_jobs",
    ): "the Binner's threads (its table, BinnerConfig, has no thread count)",
    ("python/svmmap/io.py", "load_letor", "n_jobs"): "the reader's threads",
    (
        "python/svmmap/ir/fusion.py",
        "__init__",
        "C",
    ): "RunFusion's grid of C values, chosen by an inner cross-validation",
    (
        "python/svmmap/metrics.py",
        "per_query",
        "relevance_threshold",
    ): "the metrics' convention, None for the metric's own",
    (
        "python/svmmap/metrics.py",
        "evaluate",
        "relevance_threshold",
    ): "the metrics' convention, None for the metric's own",
    ("python/svmmap/metrics.py", "best_accuracy", "relevance_threshold"): "the metrics' convention (label > 0)",
}


def restated_defaults(root: Path, table: Table) -> List[Tuple[str, str, str, str]]:
    """Every default of a parameter named as a training parameter, in the package's functions
    and methods, that is not read from the table: (file, function, name, the default's code)."""
    wanted = set(names(table))
    out = []
    for path in sorted((root / "python" / "svmmap").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            pairs = [
                *zip(positional[len(positional) - len(a.defaults) :], a.defaults),
                *zip(a.kwonlyargs, a.kw_defaults),
            ]
            for arg, default in pairs:
                if default is None or arg.arg not in wanted:
                    continue
                code = ast.unparse(default)
                if code != f"TRAINING_DEFAULTS[{arg.arg!r}]":
                    out.append((rel, node.name, arg.arg, code))
    return out


def test_every_default_of_a_training_parameter_is_read_from_the_table():
    """Issue 44: the defaults come from one table. A parameter named as a training parameter
    either reads its default from it (SVMMap, SVMMapCV, the baselines, the IR tools,
    svmmap.losses) or is another parameter, listed in ``OTHER_PARAMETERS`` with what it is;
    this is how the count above tells the training parameter from the metrics' or the readers'."""
    found = {(f, fn, n): code for f, fn, n, code in restated_defaults(ROOT, _core.TRAINING_PARAMETERS)}
    assert sorted(found) == sorted(OTHER_PARAMETERS), found


def test_a_restated_default_is_found(tmp_path):
    """A default written as a number, or read from another table, is found; one read from the
    training table is not (the check would otherwise pass whatever the code said)."""
    path = tmp_path / "python" / "svmmap" / "m.py"
    path.parent.mkdir(parents=True)
    path.write_text(
        "def f(x, max_iter=10000, *, eps: float = 1e-3, n_jobs=TRAINING_DEFAULTS['n_jobs']):\n    pass\n"
        "class A:\n    def __init__(self, C=DEFAULTS['C'], loss=TRAINING_DEFAULTS['loss'], k=3):\n        pass\n",
        encoding="utf-8",
    )
    assert restated_defaults(tmp_path, _core.TRAINING_PARAMETERS) == [
        ("python/svmmap/m.py", "f", "max_iter", "10000"),
        ("python/svmmap/m.py", "f", "eps", "0.001"),
        ("python/svmmap/m.py", "__init__", "C", "DEFAULTS['C']"),
    ]


#: The numpydoc entries with a training parameter's name that document another parameter, by
#: (file, name), with what it is.
OTHER_HEADERS: Dict[Tuple[str, str], str] = {
    ("python/svmmap/ir/fusion.py", "C"): "RunFusion's grid of C values",
    ("python/svmmap/binning.py", "n_jobs"): "the Binner's threads",
}


def restated_headers(root: Path, table: Table) -> List[Tuple[str, str, str]]:
    """Every numpydoc entry ``name : type, default=value`` of a training parameter, outside
    SVMMap's docstring (checked above), whose type and default are not the table's: (file,
    name, the entry's header)."""
    expected = {p["name"]: f"{p['type']}, default={shown(p['default'])}" for p in table}
    pattern = re.compile(rf"^\s+({'|'.join(expected)}) : (.*, default=.*)$", re.M)
    out = []
    for path in sorted((root / "python" / "svmmap").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "python/svmmap/estimator.py":
            continue
        for name, header in pattern.findall(path.read_text(encoding="utf-8")):
            if (rel, name) not in OTHER_HEADERS and header != expected[name]:
                out.append((rel, name, header))
    return out


def test_the_other_docstrings_show_the_table_type_and_default():
    """The baselines, svmmap.losses and the protocol's rankers document the training parameters
    they take with the table's type and default, as SVMMap's docstring does."""
    assert restated_headers(ROOT, _core.TRAINING_PARAMETERS) == []


def test_a_docstring_that_disagrees_with_the_table_is_found(tmp_path):
    path = tmp_path / "python" / "svmmap" / "m.py"
    path.parent.mkdir(parents=True)
    path.write_text(
        '"""\n    max_iter : int, default=100\n    eps : float, default=0.001\n    loss : str, default="map"\n"""',
        encoding="utf-8",
    )
    assert restated_headers(tmp_path, _core.TRAINING_PARAMETERS) == [
        ("python/svmmap/m.py", "max_iter", "int, default=100"),
        ("python/svmmap/m.py", "loss", 'str, default="map"'),
    ]
