"""Probe every CLI subcommand and the public Python API with bad values of each argument.

Not a test (pytest does not collect it): a tool that lists how each bad value is answered,
so that new failures show up by class. Run it from the repository root:

    python tests/_support/probe_bad_arguments.py            # everything; BAD lines first
    python tests/_support/probe_bad_arguments.py --cli      # only the command line

Outcomes: "ok" is a clear error (argparse's usage error, or `svmmap CMD: error: ...` and
exit status 2; in Python a ValueError or TypeError); "BAD" is anything else escaping (a
traceback: IndexError, AssertionError, OverflowError, ZeroDivisionError, KeyError ...) or an
error message over several lines; "accepted" means the value was taken, which is right for
some values and is listed for review. What is found here becomes a case in
tests/robustness/test_bad_arguments.py.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import traceback
import warnings
from typing import Any, Callable, List, Tuple

import numpy as np

RESULTS: List[Tuple[str, str, str]] = []


def record(name: str, outcome: str, detail: str) -> None:
    RESULTS.append((outcome, name, detail.strip().splitlines()[-1][:160] if detail.strip() else ""))


def probe_cli(name: str, argv: List[str]) -> None:
    from svmmap.cli import main

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = main(argv)
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        record(name, "BAD", traceback.format_exc())
        return
    text = err.getvalue()
    lines = [line for line in text.splitlines() if "error" in line]
    if code == 0:
        record(name, "accepted", text)
    elif code == 2 and len(lines) == 1:
        record(name, "ok", lines[0])
    else:
        record(name, "BAD", f"exit {code}: {text}")


def probe_api(name: str, call: Callable[[], Any]) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except (ValueError, TypeError, OSError) as exc:
        msg = str(exc)
        record(name, "ok" if "\n" not in msg.strip() else "BAD", f"{type(exc).__name__}: {msg}")
    except BaseException as exc:
        record(name, "BAD", f"{type(exc).__name__}: {exc}")
    else:
        record(name, "accepted", "")


def data_files(tmp: str) -> dict:
    rng = np.random.default_rng(0)
    lines = []
    for q in range(1, 13):
        for d in range(6):
            label = int(d < 2)
            feats = " ".join(f"{j + 1}:{rng.random() + label * (j == 0):.4f}" for j in range(3))
            lines.append(f"{label} qid:{q} {feats} # doc{q}-{d}")
    train = os.path.join(tmp, "train.txt")
    with open(train, "w") as f:
        f.write("\n".join(lines) + "\n")
    qrels = os.path.join(tmp, "qrels")
    runs = [os.path.join(tmp, f"run{r}") for r in range(2)]
    with open(qrels, "w") as f:
        for q in range(1, 13):
            for d in range(6):
                f.write(f"{q} 0 d{d} {int(d < 2)}\n")
    for r, path in enumerate(runs):
        with open(path, "w") as f:
            for q in range(1, 13):
                for d in range(6):
                    f.write(f"{q} Q0 d{d} {d + 1} {rng.random() + (d < 2) * (r + 1) * 0.3:.4f} r{r}\n")
    model = os.path.join(tmp, "model.json")
    from svmmap.cli import main

    predictions = os.path.join(tmp, "predictions")
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["learn", train, model]) == 0
        assert main(["classify", train, model, predictions]) == 0
    return {"train": train, "qrels": qrels, "runs": runs, "model": model, "tmp": tmp, "predictions": predictions}


def cli_probes(f: dict) -> None:
    t, m, tmp = f["train"], f["model"], f["tmp"]
    out = os.path.join(tmp, "out")
    learn_bad = {
        "-c": ["0", "-1", "nan", "inf", "abc", "1e400"],
        "-e": ["0", "-1", "nan", "abc"],
        "--loss": ["nope", "", "map,map", "map,nope", "ndcg@0", "map:depth=x"],
        "--max-iter": ["0", "-1", "2.5", "1e30", "99999999999999999999999"],
        "--relevance-threshold": ["nan", "inf", "abc"],
        "--n-jobs": ["0", "-5", "1000000", "x", "99999999999999999999999"],
    }
    for opt, values in learn_bad.items():
        for v in values:
            probe_cli(f"learn {opt} {v!r}", ["learn", opt, v, t, out])
    probe_cli("learn TRAIN TRAIN", ["learn", t, t])
    probe_cli("learn missing file", ["learn", os.path.join(tmp, "missing"), out])
    probe_cli("learn out in missing dir", ["learn", t, os.path.join(tmp, "no", "m.json")])
    probe_cli("classify TEST MODEL TEST", ["classify", t, m, t])
    probe_cli("classify TEST MODEL MODEL", ["classify", t, m, m])
    probe_cli("classify model is data", ["classify", t, t, out])
    probe_cli("classify --n-jobs 0", ["classify", "--n-jobs", "0", t, m, out])
    for opt, values in {
        "--metrics": ["", "nope", "ndcg@0", "map,,", ",", "p@x"],
        "--relevance-threshold": ["nan", "abc"],
    }.items():
        for v in values:
            probe_cli(f"evaluate {opt} {v!r}", ["evaluate", opt, v, t, f["predictions"]])
    probe_cli("evaluate predictions of wrong layout", ["evaluate", t, f["runs"][0]])
    probe_cli("evaluate data as predictions", ["evaluate", t, t])
    probe_cli("evaluate PREDICTIONS of another length", ["evaluate", t, f["qrels"]])
    for opt, values in {
        "--C": ["", ",", "1,,2", "0", "-1", "nan", "inf", "x"],
        "--eps": ["0", "nan"],
        "--loss": ["nope"],
        "--folds": ["", "0", "x", "9", "1,9", "-1"],
        "--n-jobs": ["0"],
    }.items():
        for v in values:
            probe_cli(f"experiment {opt} {v!r}", ["experiment", "-q", "--data", tmp, opt, v])
    probe_cli("experiment --data a file", ["experiment", "-q", "--data", t])
    probe_cli("experiment --data missing", ["experiment", "-q", "--data", os.path.join(tmp, "missing")])
    base = ["fuse", "-q", "--qrels", f["qrels"], "--runs", *f["runs"]]
    for opt, values in {
        "--depth": ["0", "-3", "x"],
        "--folds": ["0", "1", "-2", "13", "1000", "x"],
        "--inner-folds": ["0", "1", "100"],
        "--C": ["", "0", "-1", "nan", "1,,2"],
        "--thresholds": ["0", "-1", "x", "10000000000"],
        "--eps": ["0", "-1", "nan"],
        "--seed": ["-1", "x"],
        "--tag": ["", "two words"],
        "--n-jobs": ["0"],
    }.items():
        for v in values:
            probe_cli(f"fuse {opt} {v!r}", base + [opt, v, "--out", out])
    probe_cli("fuse --out onto a run", base + ["--out", f["runs"][0]])
    probe_cli("fuse --out onto the qrels", base + ["--out", f["qrels"]])
    probe_cli(
        "fuse the same run twice",
        ["fuse", "-q", "--qrels", f["qrels"], "--runs", f["runs"][0], f["runs"][0], "--out", out],
    )
    pbase = ["protocol", "-q", "--data", t, "--trials", "1", "--train", "4", "--vali", "2"]
    for opt, values in {
        "--methods": [
            "",
            ",",
            "nope",
            "map,map",
            "feature:0",
            "feature:x",
            "feature:99",
            "x=nomodule:f",
            "x=svmmap:nothing",
            "=svmmap:SVMMap",
            "x=svmmap",
            "best9",
        ],
        "--trials": ["0", "-1"],
        "--train": ["0", "100"],
        "--vali": ["0", "100"],
        "--test": ["0", "100"],
        "--C": ["", "0"],
        "--features": ["", ",", "0", "99", "x", "1,1"],
        "--bin": ["0", "-1"],
        "--seed": ["-1"],
        "--eps": ["0"],
        "--design": ["x"],
    }.items():
        for v in values:
            probe_cli(f"protocol {opt} {v!r}", pbase + [opt, v])
    probe_cli("protocol --design folds --data a file", ["protocol", "-q", "--design", "folds", "--data", t])
    for opt, values in {
        "--feature-names": ["", "a", "a,a,a", "a,b,a", "a,,b"],
        "--name": [""],
        "--store": [""],
    }.items():
        for v in values:
            probe_cli(f"export {opt} {v!r}", ["export", "--to", "solr", opt, v, m, out])
    probe_cli("export MODEL MODEL", ["export", "--to", "solr", m, m])
    probe_cli("export --store for elasticsearch", ["export", "--to", "elasticsearch", "--store", "s", m, out])


def api_probes(f: dict) -> None:
    import svmmap
    from svmmap import Binner, SVMMap, load_letor, metrics
    from svmmap.ir import protocol, trec
    from svmmap.ir.fusion import RunFusion, cross_fuse, query_folds, run_features

    X, y, qid = load_letor(f["train"])
    for k, v in {
        "C": [0, -1, float("nan"), float("inf"), "1", None, [1.0], True, 10**400 if False else 1e308 * 10],
        "eps": [0, -1, float("nan"), "x", None],
        "max_iter": [0, -1, 2.5, 10**30, "10", True, None],
        "relevance_threshold": [float("nan"), "x", None],
        "loss": ["nope", "", [], ["map", "map"], ["map", "nope"], 3, None, "map,map"],
        "slack": ["x", 3, None],
        "n_jobs": [0, -100, 10**6, 2.5, "4", 10**30],
        "verbose": ["yes", 2.5, -1, None, [1], 10**30],
        "callback": [3, "print"],
    }.items():
        for val in v:
            probe_api(f"SVMMap({k}={val!r}).fit", lambda k=k, val=val: SVMMap(**{k: val}).fit(X, y, qid=qid))
    probe_api("SVMMap.fit(qid=scalar)", lambda: SVMMap().fit(X, y, qid=1))
    probe_api("SVMMap.fit(qid=0-d array)", lambda: SVMMap().fit(X, y, qid=np.array(1)))
    probe_api("SVMMap.fit(qid=2-d)", lambda: SVMMap().fit(X, y, qid=qid.reshape(-1, 1)))
    probe_api("SVMMap.fit(qid=str)", lambda: SVMMap().fit(X, y, qid="abc"))
    probe_api("SVMMap.fit(qid=None)", lambda: SVMMap().fit(X, y))
    probe_api("SVMMap.fit(y=scalar)", lambda: SVMMap().fit(X, 1, qid=qid))
    probe_api("SVMMap.fit(qid=huge ints)", lambda: SVMMap().fit(X, y, qid=np.full(len(y), 2**70, dtype=object)))
    probe_api("SVMMap.fit(qid=floats)", lambda: SVMMap().fit(X, y, qid=qid + 0.5))
    probe_api("SVMMap.fit(sample_weight=...)", lambda: SVMMap().fit(X, y, qid=qid, sample_weight=np.ones(len(y))))
    fitted = SVMMap().fit(X, y, qid=qid)
    probe_api("SVMMap.predict(1-d)", lambda: fitted.predict(X[0]))
    probe_api("SVMMap.predict(scalar)", lambda: fitted.predict(3.0))
    probe_api(
        "SVMMap.predict(huge X)",
        lambda: (
            (_ for _ in ()).throw(ValueError(str(fitted.predict(X * 1e308)[:1])))
            if not np.all(np.isfinite(fitted.predict(X * 1e308)))
            else None
        ),
    )
    probe_api("SVMMap.score(qid=scalar)", lambda: fitted.score(X, y, qid=1))
    for k, v in {
        "n_thresholds": [0, -1, 2.5, "5", 10**30, True, None],
        "strategy": ["x", None],
        "missing": ["x", None],
        "n_jobs": [0, "x"],
    }.items():
        for val in v:
            probe_api(f"Binner({k}={val!r}).fit", lambda k=k, val=val: Binner(**{k: val}).fit(X))
    probe_api("Binner.fit(1-d)", lambda: Binner().fit(X[:, 0]))
    probe_api("Binner.transform(wrong width)", lambda: Binner().fit(X).transform(X[:, :2]))
    for metric in ["nope", "", "ndcg@0", "p@", "mrr@x", "map@3", "ndcg@1e3", "p@99999999999999999999"]:
        probe_api(f"metrics.evaluate({metric!r})", lambda m=metric: metrics.evaluate(y, X[:, 0], qid, [m]))
    probe_api("metrics.evaluate([])", lambda: metrics.evaluate(y, X[:, 0], qid, []))
    probe_api("metrics.evaluate('map')", lambda: metrics.evaluate(y, X[:, 0], qid, "map"))
    probe_api("metrics.evaluate(ties=x)", lambda: metrics.evaluate(y, X[:, 0], qid, ties="x"))
    probe_api("metrics.evaluate(gain=x)", lambda: metrics.evaluate(y, X[:, 0], qid, gain="x"))
    probe_api("metrics.evaluate(no_relevant=2)", lambda: metrics.evaluate(y, X[:, 0], qid, no_relevant=2))
    probe_api("metrics.evaluate(no_relevant=nan)", lambda: metrics.evaluate(y, X[:, 0], qid, no_relevant=float("nan")))
    probe_api(
        "metrics.evaluate(n_relevant=-1)", lambda: metrics.evaluate(y, X[:, 0], qid, ["map"], n_relevant=-np.ones(12))
    )
    probe_api(
        "metrics.evaluate(n_relevant=short)", lambda: metrics.evaluate(y, X[:, 0], qid, ["map"], n_relevant=[1.0])
    )
    probe_api("mean_average_precision(qid=scalar)", lambda: metrics.mean_average_precision(y, X[:, 0], 1))
    probe_api("mean_average_precision(scores short)", lambda: metrics.mean_average_precision(y, X[:5, 0], qid))
    probe_api(
        "mean_average_precision(scores nan)", lambda: metrics.mean_average_precision(y, np.full(len(y), np.nan), qid)
    )
    probe_api("mean_average_precision(empty)", lambda: metrics.mean_average_precision([], [], []))
    probe_api("ndcg(k=0)", lambda: metrics.ndcg(y, X[:, 0], qid, k=0))
    probe_api("ndcg(k=2.5)", lambda: metrics.ndcg(y, X[:, 0], qid, k=2.5))
    probe_api("ndcg(k=10**30)", lambda: metrics.ndcg(y, X[:, 0], qid, k=10**30))
    probe_api("mrr(k=-1)", lambda: metrics.mrr(y, X[:, 0], qid, k=-1))
    probe_api("precision_at(0)", lambda: metrics.precision_at(0, y, X[:, 0], qid))
    probe_api("precision_at('x')", lambda: metrics.precision_at("x", y, X[:, 0], qid))
    probe_api("make_ranking_scorer('nope')", lambda: metrics.make_ranking_scorer("nope"))
    probe_api("best_accuracy(qid=scalar)", lambda: metrics.best_accuracy(y, X[:, 0], 1))
    for k, v in {
        "dtype": ["int32", "x"],
        "n_features": [0, -1, 2.5, "3", 10**30],
        "sparse": ["x", 1],
        "n_jobs": [0, "x"],
    }.items():
        for val in v:
            probe_api(f"load_letor({k}={val!r})", lambda k=k, val=val: load_letor(f["train"], **{k: val}))
    probe_api("load_letor(path=None)", lambda: load_letor(None))
    probe_api("load_letor(path=3)", lambda: load_letor(3))
    probe_api("trec.read_run(None)", lambda: trec.read_run(None))
    probe_api("trec.read_run(qrels)", lambda: trec.read_run(f["qrels"]))
    probe_api("trec.read_qrels(run)", lambda: trec.read_qrels(f["runs"][0]))
    run = trec.read_run(f["runs"][0])
    run2 = trec.read_run(f["runs"][1])
    qrels = trec.read_qrels(f["qrels"])
    probe_api("format_run(depth=0)", lambda: trec.format_run(run, depth=0))
    probe_api("format_run(depth=-1)", lambda: trec.format_run(run, depth=-1))
    probe_api("format_run(depth=2.5)", lambda: trec.format_run(run, depth=2.5))
    probe_api("format_run(tag='')", lambda: trec.format_run(run, tag=""))
    probe_api("write_run(depth=0)", lambda: trec.write_run(os.path.join(f["tmp"], "w"), run, depth=0))
    probe_api("evaluate_run('nope')", lambda: trec.evaluate_run(run, qrels, "nope"))
    probe_api("evaluate_run('p@0')", lambda: trec.evaluate_run(run, qrels, "p@0"))
    probe_api("evaluate_run('p@x')", lambda: trec.evaluate_run(run, qrels, "p@x"))
    probe_api("evaluate_run('mrr@-1')", lambda: trec.evaluate_run(run, qrels, "mrr@-1"))
    probe_api("evaluate_run(queries=scalar)", lambda: trec.evaluate_run(run, qrels, queries="1"))
    probe_api("Run(score=nan)", lambda: trec.Run(["1"], ["d"], [float("nan")], [1]))
    probe_api("Run(qid scalar)", lambda: trec.Run("1", ["d"], [1.0], [1]))
    probe_api("Qrels(short rel)", lambda: trec.Qrels(["1", "2"], ["d", "e"], [1]))
    probe_api("Qrels(rel=x)", lambda: trec.Qrels(["1"], ["d"], ["x"]))
    probe_api("Qrels.from_dict(rel=1.5)", lambda: trec.Qrels.from_dict({"1": {"d": 1.5}}))
    for k, v in {
        "C": [0, [], [0], "x", float("nan"), [1, "x"]],
        "n_thresholds": [0, -1, "x"],
        "strategy": ["x"],
        "normalize": ["x"],
        "inner_folds": [0, 1, 100],
        "eps": [0, float("nan")],
        "max_iter": [0, 2.5],
        "n_jobs": [0],
    }.items():
        for val in v:
            probe_api(f"RunFusion({k}={val!r}).fit", lambda k=k, val=val: RunFusion(**{k: val}).fit([run, run2], qrels))
    probe_api("RunFusion.fit([])", lambda: RunFusion().fit([], qrels))
    probe_api("RunFusion.fit(run not list)", lambda: RunFusion().fit(run, qrels))
    probe_api("RunFusion.fuse(other run count)", lambda: RunFusion(C=1.0).fit([run, run2], qrels).fuse([run]))
    probe_api("cross_fuse(n_folds=0)", lambda: cross_fuse([run, run2], qrels, n_folds=0))
    probe_api("cross_fuse(n_folds=13)", lambda: cross_fuse([run, run2], qrels, n_folds=13))
    probe_api("cross_fuse(n_folds=2.5)", lambda: cross_fuse([run, run2], qrels, n_folds=2.5))
    probe_api("cross_fuse(tag='a b')", lambda: cross_fuse([run, run2], qrels, n_folds=2, tag="a b", C=1.0))
    probe_api("query_folds(n_folds=1)", lambda: query_folds(["1", "2"], 1))
    probe_api("run_features(normalize=x)", lambda: run_features([run], normalize="x"))
    methods = {"map": lambda C: SVMMap(C=C)}
    for k, v in {
        "n_trials": [0, -1, 2.5],
        "n_train": [0, 100],
        "n_vali": [0, 100],
        "n_test": [0, 100],
        "C_grid": [[], [0], ["x"], [float("nan")]],
        "relevance_threshold": [float("nan")],
    }.items():
        for val in v:
            probe_api(
                f"protocol.random_splits({k}={val!r})",
                lambda k=k, val=val: protocol.random_splits(
                    X, y, qid, methods, **{"n_trials": 1, "n_train": 4, "n_vali": 2, k: val}
                ),
            )
    probe_api(
        "protocol.random_splits(methods={})",
        lambda: protocol.random_splits(X, y, qid, {}, n_trials=1, n_train=4, n_vali=2),
    )
    probe_api(
        "protocol.random_splits(qid=scalar)",
        lambda: protocol.random_splits(X, y, 1, methods, n_trials=1, n_train=4, n_vali=2),
    )
    probe_api(
        "protocol.random_splits(method not callable)",
        lambda: protocol.random_splits(X, y, qid, {"x": 3}, n_trials=1, n_train=4, n_vali=2),
    )
    probe_api("protocol.given_folds([])", lambda: protocol.given_folds([], methods))
    probe_api("protocol.paired_comparison(short)", lambda: protocol.paired_comparison([1.0, 2.0], [1.0]))
    probe_api("protocol.paired_comparison(empty)", lambda: protocol.paired_comparison([], []))
    probe_api("protocol.paired_comparison(nan)", lambda: protocol.paired_comparison([np.nan, 1.0], [1.0, 2.0]))
    probe_api(
        "protocol.make_random_splits(queries=3)",
        lambda: protocol.make_random_splits(3, n_trials=1, n_train=1, n_vali=1),
    )
    probe_api("SingleFeature(feature=-1).fit", lambda: protocol.SingleFeature(feature=-1).fit(X, y, qid=qid))
    probe_api("SingleFeature(rank=0).fit", lambda: protocol.SingleFeature(rank=0).fit(X, y, qid=qid))
    probe_api("structured_hinge(loss=nope)", lambda: svmmap.structured_hinge(y, X[:, 0], qid, loss="nope"))
    probe_api("save_model(unfitted)", lambda: svmmap.save_model(SVMMap(), os.path.join(f["tmp"], "u.json")))
    probe_api("save_model(path=None)", lambda: svmmap.save_model(fitted, None))
    probe_api("save_model(path=dir)", lambda: svmmap.save_model(fitted, f["tmp"]))
    probe_api("load_model(path=None)", lambda: svmmap.load_model(None))


def main() -> int:
    only_cli = "--cli" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "Fold1"))
        files = data_files(tmp)
        for part in ("train", "vali", "test"):
            os.link(files["train"], os.path.join(tmp, "Fold1", f"{part}.txt"))
        cli_probes(files)
        if not only_cli:
            api_probes(files)
    order = {"BAD": 0, "accepted": 1, "ok": 2}
    for outcome, name, detail in sorted(RESULTS, key=lambda r: order[r[0]]):
        print(f"{outcome:8s} {name:45s} {detail}")
    bad = sum(r[0] == "BAD" for r in RESULTS)
    print(f"\n{len(RESULTS)} probes: {bad} BAD, {sum(r[0] == 'accepted' for r in RESULTS)} accepted")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
