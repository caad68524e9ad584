"""What the command line imports, and that ``svmmap learn`` is ``SVMMap.fit`` without scikit-learn.

Every job runs in a fresh interpreter, which then lists the heavy libraries it has imported:
the quick jobs (--version, --help, learn and classify on a small file, evaluate) must import
none of them, since importing scikit-learn alone takes longer than training on the file. Timing
is the benchmark's (benchmarks/import_time.py); these tests check the imports, which decide it.
(A sparse data file is read into a SciPy CSR matrix, so learn and classify on one import SciPy,
which they then use; the files here are dense, as LETOR's are.)
"""

import inspect
import json
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import svmmap
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from svmmap.cli import main
from svmmap.datasets import load_mq2008

#: Libraries that take a large part of a second to import (or more), none needed by a quick job.
HEAVY = ("sklearn", "scipy", "pandas", "dask", "distributed", "matplotlib")
#: What a job that does need scikit-learn (it fits Pipelines, selects C by cross-validation)
#: must still not import: the cluster and the plots.
NEVER = ("dask", "distributed", "matplotlib")

COMMANDS = ("learn", "classify", "evaluate", "export", "experiment", "fuse", "protocol")

_PROBE = """
import runpy, sys
sys.argv = ["svmmap"] + {args!r}
try:
    runpy.run_module("svmmap", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    status = exc.code
print("STATUS", status)
print("IMPORTED", sorted({{name.split(".")[0] for name in sys.modules}} & set({heavy!r})))
"""


def heavy_imports(args, cwd):
    """Runs ``svmmap ARGS`` in a fresh interpreter; the heavy libraries it imported."""
    code = _PROBE.format(args=[str(a) for a in args], heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd)
    assert "STATUS 0" in out.stdout.splitlines(), (args, out.stdout, out.stderr)
    (line,) = [line for line in out.stdout.splitlines() if line.startswith("IMPORTED ")]
    return set(eval(line[len("IMPORTED ") :]))


def write_letor(path, X, y, qid):
    """A LETOR file with a document id in every line's comment (for --trec-run)."""
    with open(path, "w") as f:
        for i, (row, label, q) in enumerate(zip(X, y, qid)):
            features = " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(row.tolist()))
            f.write(f"{int(label)} qid:{q} {features} # docid = d{i}\n")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A 300-line MQ2008 file, models of it made by the library, predictions, a run and qrels."""
    d = tmp_path_factory.mktemp("startup")
    X, y, qid = load_mq2008(fold=1, split="train")
    X, y, qid = X[:300], y[:300], qid[:300]
    write_letor(d / "train.txt", X, y, qid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y, qid = svmmap.load_letor(d / "train.txt", missing="nan")
        svmmap.SVMMap().fit(X, y, qid=qid).save(d / "model.json")
        binned = make_pipeline(svmmap.Binner(n_thresholds=10), svmmap.SVMMap()).fit(X, y, svmmap__qid=qid)
        svmmap.save_model(binned, d / "binned.json")
    with open(d / "qrels", "w") as f:
        for i, (label, q) in enumerate(zip(y, qid)):
            f.write(f"{q} 0 d{i} {int(label)}\n")
    for name, model in (("a", "model.json"), ("b", "binned.json")):
        args = [
            "classify",
            "--trec-run",
            f"{d}/{name}.run",
            "--tag",
            name,
            f"{d}/train.txt",
            f"{d}/{model}",
            f"{d}/{name}.pred",
        ]
        assert main(args) == 0
    # A LETOR directory of one fold, for `svmmap experiment --data`.
    (d / "Fold1").mkdir()
    for split in ("train", "vali", "test"):
        (d / "Fold1" / f"{split}.txt").write_text((d / "train.txt").read_text())
    return d


QUICK_JOBS = [
    ["--version"],
    ["--help"],
    *[[command, "--help"] for command in COMMANDS],
    ["learn", "train.txt", "m1.json"],
    ["learn", "-c", "10", "--loss", "ndcg@10,map", "train.txt", "m2.json"],
    ["learn", "--loss", "roc", "-v", "train.txt", "m3.json"],
    ["learn", "--missing", "nan", "--bins", "10", "train.txt", "m4.json"],
    ["classify", "train.txt", "model.json", "p1"],
    ["classify", "train.txt", "binned.json", "p2"],
    ["classify", "--trec-run", "c.run", "train.txt", "model.json", "p3"],
    ["evaluate", "train.txt", "a.pred"],
    ["evaluate", "--run", "a.run", "--qrels", "qrels"],
]


@pytest.mark.parametrize("args", QUICK_JOBS, ids=" ".join)
def test_quick_jobs_import_no_heavy_library(args, files):
    assert heavy_imports(args, files) == set()


_NUMPY_PROBE = """
import runpy, sys
sys.argv = ["svmmap"] + {args!r}
try:
    runpy.run_module("svmmap", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    print("STATUS", exc.code)
print("NUMPY", "numpy" in sys.modules)
print("READY", sys.modules["svmmap._core"]._numpy_ready())
"""


@pytest.mark.parametrize("args", [["--version"], ["--help"], *[[c, "--help"] for c in COMMANDS]], ids=" ".join)
def test_version_and_help_do_not_import_numpy(args, files):
    # They print the core's tables and version; importing NumPy alone would cost more than
    # the 0.08 s they may add to the interpreter's start (benchmarks/import_time.py).
    code = _NUMPY_PROBE.format(args=args)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=files)
    lines = out.stdout.splitlines()
    assert "STATUS 0" in lines and "svmmap" in out.stdout, (out.stdout[-500:], out.stderr[-2000:])
    assert "NUMPY False" in lines and "READY False" in lines, (args, lines[-3:])


def test_a_command_sets_numpy_up_before_its_work(files):
    # The parser imported the core without NumPy; the command sets NumPy's C API up before
    # handing it arrays (rust/python/mod.rs, set_up_numpy), where a Ctrl-C is handled.
    code = _NUMPY_PROBE.format(args=["classify", "train.txt", "model.json", "p9"])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=files)
    assert out.stdout.splitlines()[-3:] == ["STATUS 0", "NUMPY True", "READY True"], (out.stdout, out.stderr[-2000:])


def test_import_svmmap_imports_neither_numpy_nor_the_core():
    code = "import sys, svmmap; print(sorted(m for m in sys.modules if m == 'numpy' or m == 'svmmap._core'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    # The names that live in the core set NumPy up as they import it, whatever came first.
    code = (
        "import sys; from svmmap.cli import parser; import svmmap; from svmmap import _core; "
        "print(_core._numpy_ready(), 'numpy' in sys.modules); svmmap.DataFormatError; svmmap.__version__; "
        "print(_core._numpy_ready())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "True"]


@pytest.mark.slow
def test_every_module_that_imports_numpy_finds_the_core_set_up():
    # The core sets NumPy's C API up at its import when NumPy is already imported; every module
    # of the package that imports NumPy must do so before the core (or set it up itself), so
    # that no array call sets it up lazily, where a Ctrl-C would be a PanicException. Each
    # module is imported first in a fresh interpreter.
    import pkgutil

    names = [m.name for m in pkgutil.walk_packages(svmmap.__path__, "svmmap.")]
    code = (
        "import importlib, sys; importlib.import_module(sys.argv[1]); core = sys.modules.get('svmmap._core'); "
        "print('numpy' not in sys.modules or core is None or core._numpy_ready())"
    )
    late = []
    for name in names:
        out = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.split()[-1] != "True":
            late.append(name)
    assert len(names) > 30 and late == []


def test_import_svmmap_and_its_light_names_import_no_heavy_library():
    code = (
        "import sys, svmmap; svmmap.SkippedQueriesWarning; svmmap.DegenerateModelWarning; svmmap.load_letor; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# A fresh interpreter importing scikit-learn (the slow marker's rule).
@pytest.mark.slow
def test_learn_imports_scikit_learn_only_to_raise_its_convergence_warning(files):
    # ConvergenceWarning is scikit-learn's class (users filter it by that class): a fit that
    # stops at max_iter imports it, and nothing else does.
    assert "sklearn" in heavy_imports(["learn", "--max-iter", "2", "train.txt", "m5.json"], files)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["export", "--to", "solr", "model.json", "solr.json"],
        ["fuse", "--qrels", "qrels", "--runs", "a.run", "b.run", "--out", "fused", "--folds", "2", "--C", "1", "-q"],
        ["experiment", "--data", ".", "--C", "1", "-q"],
        ["protocol", "--data", "train.txt", "--train", "5", "--vali", "3", "--trials", "1", "--C", "1", "-q"],
    ],
    ids=lambda args: args[0],
)
def test_jobs_that_use_scikit_learn_import_neither_dask_nor_matplotlib(args, files):
    assert heavy_imports(args, files) & set(NEVER) == set()


def test_bare_svmmap_has_exactly_svmmaps_parameters_and_defaults():
    # The model `svmmap learn` trains is SVMMap's with these parameters: the same names and
    # defaults, read from SVMMap's own signature.
    from svmmap._training import PARAMETER_DEFAULTS, BareSVMMap

    signature = inspect.signature(svmmap.SVMMap.__init__).parameters
    defaults = {name: p.default for name, p in signature.items() if name != "self"}
    assert PARAMETER_DEFAULTS == defaults
    assert BareSVMMap().get_params() == svmmap.SVMMap().get_params(deep=False)


def same_file_but_seconds(path_a, path_b):
    """The two model files' texts with the iterations' wall-clock seconds (the one field that
    differs between two runs of the same fit) blanked."""

    def blank(path):
        return re.sub(r'"seconds": [-+0-9.eE]+', '"seconds": 0', path.read_text())

    a, b = blank(path_a), blank(path_b)
    assert json.loads(path_a.read_text())["training"]["history"], "no history: the comparison would be too weak"
    return a == b


# (svmmap learn options, SVMMap parameters, Binner parameters or None)
LEARN_CASES = [
    ([], {}, None),
    (["-c", "10", "-e", "0.01", "--loss", "ndcg@10,map"], {"C": 10.0, "eps": 0.01, "loss": ["ndcg@10", "map"]}, None),
    (["--loss", "roc", "--relevance-threshold", "1"], {"loss": "roc", "relevance_threshold": 1.0}, None),
    (["--max-iter", "2"], {"max_iter": 2}, None),
    (["--missing", "nan", "--bins", "10"], {}, {"n_thresholds": 10, "missing": "indicator"}),
]


@pytest.mark.parametrize("options, params, binner", LEARN_CASES, ids=lambda v: str(v))
def test_learn_writes_the_model_file_of_svmmap_fit_with_its_warnings(options, params, binner, files, tmp_path, capsys):
    cli_path, api_path = tmp_path / "cli.json", tmp_path / "api.json"
    assert main(["learn", *options, str(files / "train.txt"), str(cli_path)]) == 0
    printed = [line for line in capsys.readouterr().err.splitlines() if line.startswith("svmmap: warning: ")]

    X, y, qid = svmmap.load_letor(files / "train.txt", missing="nan" if binner else "error")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if binner is None:
            svmmap.SVMMap(**params).fit(X, y, qid=qid).save(api_path)
        else:
            model = make_pipeline(svmmap.Binner(**binner), svmmap.SVMMap(**params))
            svmmap.save_model(model.fit(X, y, svmmap__qid=qid), api_path)
    assert same_file_but_seconds(cli_path, api_path)
    assert printed == [f"svmmap: warning: {w.message}" for w in caught]
    if "--max-iter" in options:
        # The library's warning is scikit-learn's ConvergenceWarning, and so the one users filter.
        assert [w.category for w in caught if "max_iter=2" in str(w.message)] == [ConvergenceWarning]
    # Every 300-line case skips queries (MQ2008 has queries without a relevant document).
    assert any(issubclass(w.category, svmmap.SkippedQueriesWarning) for w in caught)


def test_learn_warns_of_a_degenerate_model_as_svmmap_fit_does(tmp_path, capsys):
    # Relevant and non-relevant documents with the same features: every score ties, w = 0.
    data = tmp_path / "ties.txt"
    data.write_text("1 qid:1 1:1 2:0\n0 qid:1 1:1 2:0\n1 qid:2 1:0 2:1\n0 qid:2 1:0 2:1\n")
    assert main(["learn", str(data), str(tmp_path / "cli.json")]) == 0
    printed = [line for line in capsys.readouterr().err.splitlines() if line.startswith("svmmap: warning: ")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        X, y, qid = svmmap.load_letor(data)
        model = svmmap.SVMMap().fit(X, y, qid=qid)
    model.save(tmp_path / "api.json")
    assert [w.category for w in caught] == [svmmap.DegenerateModelWarning]
    assert printed == [f"svmmap: warning: {caught[0].message}"]
    assert same_file_but_seconds(tmp_path / "cli.json", tmp_path / "api.json")
    assert not np.any(model.coef_)
