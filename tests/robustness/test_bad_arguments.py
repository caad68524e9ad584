"""Issue 13, item 5: arguments that make no sense are refused with one clear line.

Found with ``tests/_support/probe_bad_arguments.py``, which tries bad values of every argument of every
CLI subcommand and of the public Python API; each class of what it found is a case here. On
the command line the answer is argparse's usage error (exit status 2, ``argument --X: ...``)
or ``svmmap CMD: error: ...`` (exit status 2), never a traceback (IndexError, AssertionError,
OverflowError, ModuleNotFoundError ...) and never an exit status 0 with a useless output
(``fuse --depth 0`` used to write an empty run).
"""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest
import svmmap
import svmmap.metrics
from svmmap import SVMMap
from svmmap.cli import main
from svmmap.ir import trec
from svmmap.ir.protocol import random_splits
from svmmap.metrics import mean_average_precision


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad-arguments")
    rng = np.random.default_rng(0)
    train = tmp / "train.txt"
    with open(train, "w") as f:
        for q in range(1, 9):
            for d in range(4):
                f.write(
                    f"{int(d < 2)} qid:{q} 1:{rng.random() + (d < 2):.4f} 2:{rng.random():.4f} 3:{rng.random():.4f}\n"
                )
    fold = tmp / "Fold1"
    fold.mkdir()
    for part in ("train", "vali", "test"):
        os.link(train, fold / f"{part}.txt")
    qrels = tmp / "qrels"
    qrels.write_text("".join(f"{q} 0 d{d} {int(d < 2)}\n" for q in range(1, 9) for d in range(4)))
    runs = []
    for r in range(2):
        path = tmp / f"run{r}"
        path.write_text(
            "".join(f"{q} Q0 d{d} {d + 1} {rng.random() + (d < 2):.4f} r{r}\n" for q in range(1, 9) for d in range(4))
        )
        runs.append(str(path))
    model = tmp / "model.json"
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["learn", str(train), str(model)]) == 0
    return {
        "dir": str(tmp),
        "train": str(train),
        "qrels": str(qrels),
        "runs": runs,
        "model": str(model),
        "out": str(tmp / "out"),
    }


def _fuse(f, *extra):
    return ["fuse", "-q", "--qrels", f["qrels"], "--runs", *f["runs"], "--out", f["out"], *extra]


def _protocol(f, *extra):
    return ["protocol", "-q", "--data", f["train"], "--trials", "1", "--train", "3", "--vali", "2", *extra]


# (id, argv builder, a piece of the one error line)
CLI_CASES = [
    ("fuse-depth-zero", lambda f: _fuse(f, "--depth", "0"), "argument --depth: expected an integer >= 1, got 0"),
    ("fuse-depth-negative", lambda f: _fuse(f, "--depth", "-3"), "argument --depth: expected an integer >= 1, got -3"),
    ("fuse-folds-one", lambda f: _fuse(f, "--folds", "1"), "argument --folds: expected an integer >= 2, got 1"),
    ("fuse-folds-beyond-queries", lambda f: _fuse(f, "--folds", "9"), "8 queries cannot be split into 9 folds"),
    (
        "fuse-inner-folds-one",
        lambda f: _fuse(f, "--inner-folds", "1"),
        "argument --inner-folds: expected an integer >= 2",
    ),
    (
        "fuse-thresholds-zero",
        lambda f: _fuse(f, "--thresholds", "0"),
        "argument --thresholds: expected an integer >= 1",
    ),
    (
        "fuse-C-empty",
        lambda f: _fuse(f, "--C", ""),
        "argument --C: expected comma-separated numbers > 0 without empty items",
    ),
    (
        "fuse-C-empty-item",
        lambda f: _fuse(f, "--C", "1,,10"),
        "argument --C: expected comma-separated numbers > 0 without empty items",
    ),
    ("fuse-C-zero", lambda f: _fuse(f, "--C", "0.1,0"), "argument --C: every C must be a finite number > 0, got '0'"),
    ("fuse-C-nan", lambda f: _fuse(f, "--C", "nan"), "argument --C: every C must be a finite number > 0, got 'nan'"),
    ("fuse-C-text", lambda f: _fuse(f, "--C", "1,ten"), "argument --C: expected comma-separated numbers, got 'ten'"),
    ("fuse-seed-negative", lambda f: _fuse(f, "--seed", "-1"), "argument --seed: expected an integer >= 0, got -1"),
    (
        "fuse-tag-with-space",
        lambda f: _fuse(f, "--tag", "my run"),
        "--tag: the run tag must be one word without spaces",
    ),
    (
        "fuse-n-jobs-zero",
        lambda f: _fuse(f, "--n-jobs", "0"),
        "argument --n-jobs: n_jobs must be None, an integer from 1 to 1024",
    ),
    (
        "learn-max-iter-zero",
        lambda f: ["learn", "--max-iter", "0", f["train"], f["out"]],
        "argument --max-iter: expected an integer >= 1",
    ),
    (
        "learn-max-iter-float",
        lambda f: ["learn", "--max-iter", "2.5", f["train"], f["out"]],
        "argument --max-iter: expected an integer >= 1, got '2.5'",
    ),
    (
        "learn-n-jobs-text",
        lambda f: ["learn", "--n-jobs", "all", f["train"], f["out"]],
        "argument --n-jobs: expected an integer thread count",
    ),
    (
        "learn-n-jobs-huge",
        lambda f: ["learn", "--n-jobs", "9" * 30, f["train"], f["out"]],
        "argument --n-jobs: n_jobs must be",
    ),
    ("learn-loss-twice", lambda f: ["learn", "--loss", "map,map", f["train"], f["out"]], 'loss lists "map" twice'),
    # Issue 36: a loss listed twice through a weight, and a loss with two weights.
    (
        "learn-loss-twice-weighted",
        lambda f: ["learn", "--loss", "map,1*map", f["train"], f["out"]],
        '"map" twice',
    ),
    (
        "learn-loss-two-weights",
        lambda f: ["learn", "--loss", "2*3*ndcg@10", f["train"], f["out"]],
        "a loss with at most one weight",
    ),
    (
        "learn-loss-unknown-in-list",
        lambda f: ["learn", "--loss", "map,nope", f["train"], f["out"]],
        "loss must be one of",
    ),
    (
        "experiment-C-empty",
        lambda f: ["experiment", "-q", "--data", f["dir"], "--C", ""],
        "argument --C: expected comma-separated numbers",
    ),
    (
        "experiment-folds-missing",
        lambda f: ["experiment", "-q", "--data", f["dir"], "--folds", "1,7"],
        "--folds: fold 7 is not in",
    ),
    (
        "experiment-folds-zero",
        lambda f: ["experiment", "-q", "--data", f["dir"], "--folds", "0"],
        "argument --folds: expected comma-separated fold numbers >= 1",
    ),
    (
        "evaluate-metrics-empty",
        lambda f: ["evaluate", "--metrics", "", f["train"], f["out"] + "-pred"],
        "--metrics: expected comma-separated metric names",
    ),
    (
        "evaluate-threshold-nan",
        lambda f: ["evaluate", "--relevance-threshold", "nan", f["train"], f["out"] + "-pred"],
        "argument --relevance-threshold: expected a finite number",
    ),
    ("protocol-methods-twice", lambda f: _protocol(f, "--methods", "map,best,map"), "--methods: 'map' is given twice"),
    (
        "protocol-methods-empty-item",
        lambda f: _protocol(f, "--methods", "map,,best"),
        "--methods: expected comma-separated methods without empty items",
    ),
    (
        "protocol-methods-no-module",
        lambda f: _protocol(f, "--methods", "x=no_such_module:f"),
        "cannot import module 'no_such_module'",
    ),
    (
        "protocol-methods-no-attribute",
        lambda f: _protocol(f, "--methods", "x=svmmap:no_such_thing"),
        "module 'svmmap' has no attribute 'no_such_thing'",
    ),
    (
        "protocol-methods-empty-label",
        lambda f: _protocol(f, "--methods", "=svmmap:SVMMap"),
        "expected LABEL=module:callable",
    ),
    (
        "protocol-methods-feature-zero",
        lambda f: _protocol(f, "--methods", "map,feature:0"),
        "expected feature:N with N a 1-based feature number",
    ),
    (
        "protocol-methods-feature-beyond",
        lambda f: _protocol(f, "--methods", "map,feature:4"),
        "'feature:4': the data has 3 features",
    ),
    (
        "protocol-features-empty-item",
        lambda f: _protocol(f, "--features", "1,,2"),
        "--features: expected comma-separated features without empty items",
    ),
    ("protocol-trials-zero", lambda f: _protocol(f, "--trials", "0"), "argument --trials: expected an integer >= 1"),
    ("protocol-bin-zero", lambda f: _protocol(f, "--bin", "0"), "argument --bin: expected an integer >= 1"),
    (
        "export-name-empty",
        lambda f: ["export", "--to", "solr", "--name", "", f["model"], f["out"]],
        "--name: the engine needs a non-empty name",
    ),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_refuses_with_one_line(files, case):
    _, argv_of, needle = case
    if os.path.exists(files["out"]):
        os.remove(files["out"])
    with open(files["out"] + "-pred", "w") as f:
        f.write("".join("0.5\n" for _ in range(32)))
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv_of(files))
    except SystemExit as exc:  # argparse's usage error
        code = exc.code
    assert code == 2, err.getvalue()
    errors = [line for line in err.getvalue().splitlines() if "error:" in line]
    assert len(errors) == 1 and needle in errors[0], err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert not os.path.exists(files["out"]), "nothing is written"


# (id, call, exception type, message piece)
API_CASES = [
    ("fit-scalar-qid", lambda X, y: SVMMap().fit(X, y, qid=1), ValueError, "qid must hold one query id per row of X"),
    ("fit-string-qid", lambda X, y: SVMMap().fit(X, y, qid="q1"), ValueError, "got the single value 'q1'"),
    (
        "metric-scalar-qid",
        lambda X, y: mean_average_precision(y, X[:, 0], 3),
        ValueError,
        "qid must hold one query id per row",
    ),
    (
        "protocol-scalar-qid",
        lambda X, y: random_splits(X, y, 1, {"m": lambda C: SVMMap(C=C)}),
        ValueError,
        "qid must hold one query id",
    ),
    (
        "verbose-text",
        lambda X, y: SVMMap(verbose="yes").fit(X, y, qid=np.repeat([1, 2], 2)),
        ValueError,
        "verbose must be an integer or a bool (<= 0 or False: silent; above 0: progress), got 'yes'",
    ),
    (
        "verbose-float",
        lambda X, y: SVMMap(verbose=2.5).fit(X, y, qid=np.repeat([1, 2], 2)),
        ValueError,
        "verbose must be an integer or a bool (<= 0 or False: silent; above 0: progress), got 2.5",
    ),
    (
        "loss-twice",
        lambda X, y: SVMMap(loss=["map", "map"]).fit(X, y, qid=np.repeat([1, 2], 2)),
        ValueError,
        'loss lists "map" twice',
    ),
    (
        "shared-slack-loss-twice",
        lambda X, y: SVMMap(loss="max(ndcg@10,map,ndcg@10)").fit(X, y, qid=np.repeat([1, 2], 2)),
        ValueError,
        '("ndcg@10" appears twice), got "max(ndcg@10,map,ndcg@10)"',
    ),
    (
        "run-depth-zero",
        lambda X, y: trec.format_run(trec.Run.from_dict({"1": {"d": 1.0}}), depth=0),
        ValueError,
        "depth must be None or an integer >= 1, got 0",
    ),
    (
        "run-depth-float",
        lambda X, y: trec.format_run(trec.Run.from_dict({"1": {"d": 1.0}}), depth=2.5),
        ValueError,
        "depth must be None or an integer >= 1",
    ),
    ("run-scalar-qid", lambda X, y: trec.Run("1", ["d"], [1.0], [1]), ValueError, "qid must be a 1-D sequence"),
    (
        "qrels-short-column",
        lambda X, y: trec.Qrels(["1", "2"], ["a", "b"], [1]),
        ValueError,
        "rel has shape (1,), expected (2,)",
    ),
    (
        "qrels-fractional-relevance",
        lambda X, y: trec.Qrels.from_dict({"1": {"d": 1.5}}),
        ValueError,
        "rel must hold integers, got 1.5",
    ),
    (
        "qrels-text-relevance",
        lambda X, y: trec.Qrels(["1"], ["d"], ["high"]),
        ValueError,
        "rel must hold integers, got 'high'",
    ),
    (
        "binner-absurd-thresholds",
        lambda X, y: svmmap.Binner(n_thresholds=10**30).fit(X),
        ValueError,
        "n_thresholds must be an integer >= 1 and at most 4294967295, got 1000000000000000000000000000000",
    ),
    (
        "binner-1d",
        lambda X, y: svmmap.Binner().fit(X[:, 0]),
        ValueError,
        "X must be a 2-D array (documents x features), got 1 dimension(s). Reshape your data",
    ),
    (
        "evaluate-metric-string",
        lambda X, y: svmmap.metrics.evaluate(y, X[:, 0], np.repeat([1, 2], 2), "map"),
        ValueError,
        "metrics must be a non-empty list of metric names",
    ),
    (
        "evaluate-no-metrics",
        lambda X, y: svmmap.metrics.evaluate(y, X[:, 0], np.repeat([1, 2], 2), []),
        ValueError,
        "metrics must be a non-empty list",
    ),
    (
        "ndcg-fractional-k",
        lambda X, y: svmmap.metrics.ndcg(y, X[:, 0], np.repeat([1, 2], 2), k=2.5),
        ValueError,
        "k must be an integer >= 1, got 2.5",
    ),
    (
        "precision-text-k",
        lambda X, y: svmmap.metrics.precision_at("x", y, X[:, 0], np.repeat([1, 2], 2)),
        ValueError,
        "k must be an integer >= 1, got 'x'",
    ),
    (
        "evaluate-run-scalar-queries",
        lambda X, y: trec.evaluate_run(
            trec.Run.from_dict({"1": {"d": 1.0}}), trec.Qrels.from_dict({"1": {"d": 1}}), queries="1"
        ),
        ValueError,
        "queries must be a sequence",
    ),
]


@pytest.mark.parametrize("case", API_CASES, ids=[c[0] for c in API_CASES])
def test_python_api_refuses_with_one_line(case):
    _, call, kind, needle = case
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1], [0.2, 0.7]])
    y = np.array([1, 0, 1, 0])
    with pytest.raises(kind) as info:
        call(X, y)
    assert type(info.value) is kind or isinstance(info.value, kind)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_load_letor_refuses_an_absurd_n_features(files):
    from svmmap import load_letor

    with pytest.raises(ValueError, match=r"n_features must be an integer in 1\.\.2147483647, got 10{30}"):
        load_letor(files["train"], n_features=10**30)


def test_cli_accepts_a_loss_combination(files):
    """--loss takes comma-separated losses now (a combination, as SVMMap(loss=[...])); commas
    inside max(...) stay with it."""
    for loss in ("map,ndcg@10", "max(map,roc)"):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert main(["learn", "--loss", loss, files["train"], files["out"]]) == 0, err.getvalue()
        os.remove(files["out"])
