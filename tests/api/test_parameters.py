"""Every copy of the training parameters agrees with the core's table (rust/solver/options.rs,
``svmmap._core.TRAINING_PARAMETERS``): the estimators' signatures and numpydoc Parameters
sections, the command line's options, the model files' fields and the lists in the docs.

Each check is a function of the table that returns what disagrees, so that the last test can
hand it a table that differs from the code (a parameter renamed or added, a default, doc line,
type or flag changed) and see the disagreement reported: a check that passed whatever the table
said would check nothing.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

import pytest
from svmmap import SVMMap, SVMMapCV, _core
from svmmap._files.model_file import RUNTIME_PARAMS, TRAINING_PARAMS
from svmmap._fit.training import PARAMETER_DEFAULTS
from svmmap.cli.parser import build_parser

ROOT = Path(__file__).resolve().parents[2]
Table = Sequence[Dict[str, Any]]


def names(table: Table) -> List[str]:
    return [p["name"] for p in table]


def shown(value: Any) -> str:
    """A default as the numpydoc headers write it: strings in double quotes, else repr."""
    return f'"{value}"' if isinstance(value, str) else repr(value)


def same_default(a: Any, b: Any) -> bool:
    """Equal and of the same type (1 and 1.0 would show differently in the signatures)."""
    return type(a) is type(b) and a == b


def numpydoc_parameters(doc: str) -> Dict[str, Dict[str, str]]:
    """The Parameters section of a class docstring: {name: {"header": ..., "text": ...}}, the
    header the part after "name : " and the text the description joined into one line. An
    entry naming several parameters ("loss, slack : ...") gives each of them."""
    lines = inspect.cleandoc(doc).splitlines()
    start = lines.index("Parameters") + 2
    entries: Dict[str, Dict[str, str]] = {}
    current: List[str] = []
    text: List[str] = []

    def close() -> None:
        for name in current[1:]:
            entries[name] = {"header": current[0], "text": " ".join(text)}

    for line in lines[start:]:
        if line and not line.startswith(" "):
            if set(lines[lines.index(line) + 1]) == {"-"}:
                break  # the next section
            close()
            head, _, rest = line.partition(" : ")
            current, text = [rest, *[n.strip() for n in head.split(",")]], []
        elif line.strip():
            text.append(line.strip())
    close()
    return entries


# --- the checks: each returns the disagreements between the table and one copy ---------------


def config_mismatches(table: Table) -> List[str]:
    """TrainConfig's DEFAULTS and kwargs() are the table's names and defaults, in its order."""
    out = []
    if list(_core.TrainConfig.DEFAULTS) != names(table):
        out.append(f"TrainConfig.DEFAULTS names {list(_core.TrainConfig.DEFAULTS)}")
    for p in table:
        if not same_default(_core.TrainConfig.DEFAULTS.get(p["name"], ...), p["default"]):
            out.append(f"TrainConfig.DEFAULTS[{p['name']!r}]")
    if list(_core.TrainConfig().kwargs()) != names(table):
        out.append("TrainConfig().kwargs()")
    return out


def signature_mismatches(table: Table, cls: type, skip: Sequence[str] = ()) -> List[str]:
    """``cls.__init__`` names every parameter of the table (but ``skip``), keyword-only after
    C, with the table's default."""
    params = inspect.signature(cls.__init__).parameters
    out = []
    for p in table:
        if p["name"] in skip:
            continue
        given = params.get(p["name"])
        if given is None:
            out.append(f"{cls.__name__}.__init__ lacks {p['name']}")
        elif not same_default(given.default, p["default"]):
            out.append(f"{cls.__name__}.__init__: {p['name']}={given.default!r}, table {p['default']!r}")
    return out


def svmmap_signature_mismatches(table: Table) -> List[str]:
    """SVMMap has exactly the table's parameters plus verbose and callback (PARAMETER_DEFAULTS,
    the parameters of svmmap learn's BareSVMMap)."""
    out = signature_mismatches(table, SVMMap)
    own = [n for n in inspect.signature(SVMMap.__init__).parameters if n != "self"]
    if sorted(own) != sorted([*names(table), "verbose", "callback"]):
        out.append(f"SVMMap.__init__ has {own}")
    if sorted(PARAMETER_DEFAULTS) != sorted(own):
        out.append("PARAMETER_DEFAULTS")
    return out


def svmmap_cv_signature_mismatches(table: Table) -> List[str]:
    """SVMMapCV takes every training parameter but C (it searches C) with the same defaults."""
    return signature_mismatches(table, SVMMapCV, skip=("C",))


def svmmap_docstring_mismatches(table: Table) -> List[str]:
    """SVMMap's entry of every parameter reads "name : type, default=value" and starts with the
    table's doc line; it documents no training parameter outside the table."""
    entries = numpydoc_parameters(SVMMap.__doc__ or "")
    out = []
    for p in table:
        entry = entries.get(p["name"])
        if entry is None:
            out.append(f"SVMMap's docstring lacks {p['name']}")
            continue
        header = f"{p['type']}, default={shown(p['default'])}"
        if entry["header"] != header:
            out.append(f"{p['name']}: docstring {entry['header']!r}, table {header!r}")
        if not entry["text"].startswith(p["doc"]):
            out.append(f"{p['name']}: docstring {entry['text'][:80]!r}..., table {p['doc']!r}")
    extra = set(entries) - set(names(table)) - {"verbose", "callback"}
    if extra:
        out.append(f"SVMMap's docstring documents {sorted(extra)}, not in the table")
    return out


def svmmap_cv_docstring_mismatches(table: Table) -> List[str]:
    """SVMMapCV's docstring refers to SVMMap for exactly the training parameters but C."""
    entries = numpydoc_parameters(SVMMapCV.__doc__ or "")
    referred = sorted(n for n, e in entries.items() if e["text"] == "As in `SVMMap`.")
    expected = sorted(n for n in names(table) if n != "C")
    return [] if referred == expected else [f"SVMMapCV's docstring refers {referred} to SVMMap, table {expected}"]


def cli_mismatches(table: Table) -> List[str]:
    """``svmmap learn`` has one option per parameter: the table's flag, dest and default, and
    a help that starts with the doc line (without the docstrings' ``literal`` marks)."""
    learn = build_parser()._subparsers._group_actions[0].choices["learn"]  # type: ignore[union-attr]
    actions = {a.dest: a for a in learn._actions}
    out = []
    for p in table:
        action = actions.get(p["name"])
        if action is None:
            out.append(f"svmmap learn has no option for {p['name']}")
            continue
        if list(action.option_strings) != [p["flag"]]:
            out.append(f"{p['name']}: options {action.option_strings}, table {p['flag']!r}")
        if not same_default(action.default, p["default"]):
            out.append(f"{p['name']}: CLI default {action.default!r}, table {p['default']!r}")
        if not (action.help or "").startswith(p["doc"].replace("``", "").rstrip(".")):
            out.append(f"{p['name']}: CLI help {action.help!r}")
        if list(action.choices or []) != p["choices"]:
            out.append(f"{p['name']}: CLI choices {action.choices!r}")
    return out


def model_file_mismatches(table: Table) -> List[str]:
    """The model file's checked parameters are the table's but the run-time ones, and the JSON
    Schema describes each of them."""
    out = []
    expected = [n for n in names(table) if n not in RUNTIME_PARAMS]
    if list(TRAINING_PARAMS) != expected:
        out.append(f"TRAINING_PARAMS {TRAINING_PARAMS}, table {expected}")
    schema = json.loads((ROOT / "docs" / "model-format.schema.json").read_text())
    described = sorted(schema["properties"]["params"]["properties"])
    if described != sorted(expected):
        out.append(f"the schema's params {described}, table {sorted(expected)}")
    return out


def backticked(text: str) -> List[str]:
    return re.findall(r"`(\w+)`", text)


def docs_mismatches(table: Table) -> List[str]:
    """The parameter lists of the guide ("Choosing C": SVMMapCV's parameters as in SVMMap) and
    of the model format (the params field) name the table's parameters."""
    out = []
    guide = (ROOT / "docs" / "guide" / "choosing-c.md").read_text()
    (line,) = [x for x in guide.splitlines() if x.endswith("are those of `SVMMap`.")]
    listed = sorted(backticked(line)[:-1])
    expected = sorted(n for n in names(table) if n != "C")
    if listed != expected:
        out.append(f"docs/guide/choosing-c.md lists {listed}, table {expected}")
    fmt = (ROOT / "docs" / "model-format.md").read_text()
    (row,) = [x for x in fmt.splitlines() if x.startswith("| `params` |")]
    saved, _, runtime = row.partition("except the run-time ones")
    saved_names = sorted(backticked(saved)[1:])  # after the field's own name
    runtime_names = sorted(backticked(runtime.split(".")[0]))
    table_runtime = sorted(set(RUNTIME_PARAMS) & set(names(table)))
    if saved_names != sorted(n for n in names(table) if n not in RUNTIME_PARAMS):
        out.append(f"docs/model-format.md's params lists {saved_names}")
    if not set(table_runtime) <= set(runtime_names):
        out.append(f"docs/model-format.md's run-time parameters {runtime_names}")
    return out


CHECKS: Dict[str, Callable[[Table], List[str]]] = {
    "config": config_mismatches,
    "svmmap_signature": svmmap_signature_mismatches,
    "svmmap_cv_signature": svmmap_cv_signature_mismatches,
    "svmmap_docstring": svmmap_docstring_mismatches,
    "svmmap_cv_docstring": svmmap_cv_docstring_mismatches,
    "cli": cli_mismatches,
    "model_file": model_file_mismatches,
    "docs": docs_mismatches,
}


@pytest.mark.parametrize("check", CHECKS)
def test_the_copy_agrees_with_the_table(check):
    assert CHECKS[check](_core.TRAINING_PARAMETERS) == []


def test_the_table_is_well_formed():
    table = _core.TRAINING_PARAMETERS
    assert len(set(names(table))) == len(table)
    for p in table:
        assert p["doc"].endswith(".") and "\n" not in p["doc"], p["name"]
        assert (p["kind"] == "choice") == bool(p["choices"]), p["name"]
        if p["kind"] == "choice":
            # The check's words name the choices the table allows.
            assert p["expected"] == " or ".join(f'"{c}"' for c in p["choices"])
            assert p["default"] in p["choices"]
        # Every default passes the core's check.
        _core.TrainConfig(**{p["name"]: p["default"]})


def test_the_config_takes_the_table_names_only():
    for p in _core.TRAINING_PARAMETERS:
        assert p["name"] in _core.TrainConfig(**{p["name"]: p["default"]}).kwargs()
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        _core.TrainConfig(c=1.0)


def _renamed(table: List[Dict[str, Any]]) -> None:
    table[-1]["name"] += "_x"


def _added(table: List[Dict[str, Any]]) -> None:
    table.append({**table[-1], "name": "new_parameter"})


def _default(table: List[Dict[str, Any]]) -> None:
    for p in table:
        p["default"] = 2 if p["default"] is None else p["default"] * 2


def _doc(table: List[Dict[str, Any]]) -> None:
    for p in table:
        p["doc"] = "Another " + p["doc"]


def _type(table: List[Dict[str, Any]]) -> None:
    for p in table:
        p["type"] += " or bytes"


def _flag(table: List[Dict[str, Any]]) -> None:
    for p in table:
        p["flag"] += "-x"


# Which checks must notice which change of the table (the lists of names in the docs and the
# model files carry no defaults, doc lines, types or flags).
CHANGES = {
    "renamed": (_renamed, list(CHECKS)),
    "added": (_added, list(CHECKS)),
    "default": (_default, ["config", "svmmap_signature", "svmmap_cv_signature", "svmmap_docstring", "cli"]),
    "doc": (_doc, ["svmmap_docstring", "cli"]),
    "type": (_type, ["svmmap_docstring"]),
    "flag": (_flag, ["cli"]),
}


@pytest.mark.parametrize("change", CHANGES)
def test_each_check_notices_a_table_that_disagrees(change):
    perturb, checks = CHANGES[change]
    table = copy.deepcopy(list(_core.TRAINING_PARAMETERS))
    perturb(table)
    silent = [name for name in checks if not CHECKS[name](table)]
    assert silent == []
