"""The command line: learn, classify, evaluate, experiment."""

import subprocess
import sys

import numpy as np
import pytest
import svmmap
from svmmap.cli import main
from svmmap.datasets import load_mq2008


def run(*args):
    return subprocess.run([sys.executable, "-m", "svmmap", *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def fold_files(shared):
    return shared / "data" / "MQ2008" / "Fold1"


@pytest.mark.slow
def test_learn_classify_evaluate(fold_files, tmp_path):
    model_path = tmp_path / "model.json"
    pred_path = tmp_path / "pred.txt"
    r = run("learn", "-c", "10", "-e", "0.001", fold_files / "train.txt", model_path)
    assert r.returncode == 0, r.stderr
    assert "skipped" in r.stderr and "iterations" in r.stderr
    r = run("classify", fold_files / "test.txt", model_path, pred_path)
    assert r.returncode == 0, r.stderr
    # The CLI's model is the API's model, and its predictions are exact.
    X, y, qid = load_mq2008(1, "train")
    api = svmmap.SVMMap(C=10.0, eps=1e-3).fit(X, y, qid=qid)
    cli_model = svmmap.load_model(model_path)
    np.testing.assert_array_equal(cli_model.coef_, api.coef_)
    Xt, yt, qt = load_mq2008(1, "test")
    scores = np.loadtxt(pred_path)
    np.testing.assert_array_equal(scores, api.predict(Xt))
    r = run("evaluate", "--metrics", "map,ndcg@10", fold_files / "test.txt", pred_path)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(None, 1) for line in r.stdout.splitlines())
    assert float(lines["map"].split()[0]) == pytest.approx(
        svmmap.metrics.mean_average_precision(yt, scores, qt), abs=5e-5
    )
    assert float(lines["ndcg@10"].split()[0]) == pytest.approx(svmmap.metrics.ndcg(yt, scores, qt, k=10), abs=5e-5)


def test_errors_are_reported_not_raised(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:0.5\n0 qid:1 1:x\n")
    assert main(["learn", str(bad), str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: field 3" in err
    assert not (tmp_path / "m.json").exists()
    assert main(["classify", str(bad), str(tmp_path / "missing.json"), str(tmp_path / "p.txt")]) == 2
    assert "missing.json" in capsys.readouterr().err
    preds = tmp_path / "p.txt"
    preds.write_text("0.5\n")
    good = tmp_path / "good.txt"
    good.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n")
    assert main(["evaluate", str(good), str(preds)]) == 2
    assert "1 scores for 2 documents" in capsys.readouterr().err


def test_experiment_on_one_fold(capsys):
    assert main(["experiment", "--folds", "2", "--C", "1,10", "-q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| fold |") and "| Fold2 |" in out and "| mean |" in out


def test_every_argument_of_every_command_has_help():
    import argparse

    from svmmap.cli.parser import build_parser

    missing = []

    def walk(parser, path):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, path + [name])
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                missing.append(" ".join(path + [action.option_strings[0] if action.option_strings else action.dest]))

    walk(build_parser(), ["svmmap"])
    assert not missing, missing
