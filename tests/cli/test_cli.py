"""The command line: learn, classify, evaluate, experiment."""

import re
import subprocess
import sys

import numpy as np
import pytest
import svmmap
from svmmap.cli import main
from svmmap.datasets import load_mq2008, write_mq2008
from svmmap.io import load_letor
from svmmap.ir.trec import Qrels, evaluate_run, read_run, trec_ranks, write_qrels


def run(*args):
    return subprocess.run([sys.executable, "-m", "svmmap", *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def fold_files(tmp_path_factory):
    # MQ2008's fold 1 as the release's files (write_mq2008 writes them byte for byte from the
    # bundled subsets), so that these tests need nothing beyond the checkout.
    root = tmp_path_factory.mktemp("letor")
    write_mq2008(root, folds=[1])
    return root / "Fold1"


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


def test_experiment_on_written_folds_is_the_bundled_experiment(tmp_path, capsys):
    # The command-line guide says `svmmap experiment --data MQ2008` on write_mq2008's files
    # prints the table of plain `svmmap experiment`: the same rows, so the same figures (the
    # fit-time columns aside, which are measured).
    write_mq2008(tmp_path, folds=[2])

    def figures(argv):
        assert main(argv) == 0
        rows = [line.split("|") for line in capsys.readouterr().out.splitlines() if line.startswith("| Fold")]
        return [row[1:5] for row in rows]

    args = ["experiment", "--folds", "2", "--C", "1,10", "-q"]
    assert figures([*args, "--data", str(tmp_path)]) == figures(args) != []


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


# ---------------------------------------------------------------------------------------
# classify --trec-run


@pytest.fixture(scope="module")
def vali_model(fold_files, tmp_path_factory):
    X, y, qid = load_letor(fold_files / "vali.txt")
    path = tmp_path_factory.mktemp("model") / "model.json"
    svmmap.SVMMap(C=1.0).fit(X, y, qid=qid).save(path)
    return path


# Over about 5 s (the marker's rule), measured with --durations=0.
@pytest.mark.slow
def test_classify_writes_a_trec_run_named_by_the_letor_docids(fold_files, vali_model, tmp_path, capsys):
    test = fold_files / "test.txt"
    pred, run_path = tmp_path / "pred.txt", tmp_path / "test.run"
    assert main(["classify", "--trec-run", str(run_path), "--tag", "mine", str(test), str(vali_model), str(pred)]) == 0
    assert f"TREC run written to {run_path}" in capsys.readouterr().err
    # The document ids and query ids of the file's lines, read here with a regular expression.
    lines = [re.match(r"\S+ qid:(\S+) .*#docid = (\S+) ", line).groups() for line in test.read_text().splitlines()]
    scores = np.loadtxt(pred)
    run = read_run(run_path)
    assert run.tag == "mine" and len(run) == len(lines) == len(scores)
    # Every line's score under its query and docid, ranked in trec_eval's order.
    assert run.to_dict() == {q: {d: s for (q2, d), s in zip(lines, scores) if q2 == q} for q, _ in lines}
    np.testing.assert_array_equal(run.rank, trec_ranks(run.qid, run.docno, run.score))
    # Evaluated as a run (qrels from the file's labels), the MAP is the predictions file's, on
    # every query.
    _, y, qid = load_letor(test)
    qrels = Qrels(np.array([q for q, _ in lines]), np.array([d for _, d in lines]), y.astype(int))
    write_qrels(tmp_path / "qrels", qrels)
    by_run = evaluate_run(run, qrels)
    by_predictions = svmmap.metrics.per_query("map", y, scores, qid)
    assert sorted(by_run) == sorted(str(q) for q in by_predictions.qids.tolist())
    for q, v in zip(by_predictions.qids.tolist(), by_predictions.values.tolist()):
        assert by_run[str(q)] == pytest.approx(v, abs=1e-12), q
    # And so do the two ways of `svmmap evaluate` print.
    assert main(["evaluate", "--metrics", "map", str(test), str(pred)]) == 0
    from_predictions = capsys.readouterr().out.splitlines()[-1]
    assert (
        main(
            [
                "evaluate",
                "--run",
                str(run_path),
                "--qrels",
                str(tmp_path / "qrels"),
                "--metrics",
                "map",
                "--conventions",
                "svmmap",
            ]
        )
        == 0
    )
    from_run = capsys.readouterr().out.splitlines()[-1]
    assert from_run.split()[:2] == from_predictions.split()[:2] and from_run.split()[1].startswith("0.")


def test_classify_with_a_trec_run_imports_neither_scikit_learn_nor_scipy(fold_files, vali_model, tmp_path):
    args = [
        "classify",
        "--trec-run",
        str(tmp_path / "r.run"),
        str(fold_files / "test.txt"),
        str(vali_model),
        str(tmp_path / "p"),
    ]
    code = (
        "import sys; from svmmap.cli import main; "
        f"assert main({args!r}) == 0; "
        "print(sorted(m for m in ('sklearn', 'scipy', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# Files with one line whose comment has no document id, and the file line it is on: after
# blank and comment-only lines, at the start and the end, with CRLF and lone-CR line breaks,
# with "docid" in a word that is not the field, and without any comment.
MISSING_DOCID = [
    ("1 qid:1 1:1 # docid = a\n0 qid:1 1:0 # inc = 1\n", 2),
    ("0 qid:1 1:0\n1 qid:1 1:1 # docid = a\n", 1),
    ("# a header\n\n1 qid:1 1:1 # docid = a\n   \n# more\n0 qid:1 1:0 # mydocid = b\n", 6),
    ("1 qid:1 1:1 #docid=a\r\n\r\n0 qid:1 1:0 # docid\r\n", 3),
    ("1 qid:1 1:1 # docid = a\r# x\r0 qid:2 1:0 # nodocid = c\r", 3),
    ("1 qid:1 1:1 # docid = a\n0 qid:1 1:0 # docid = b\n1 qid:2 1:1 # docid =\n", 3),
]


@pytest.mark.parametrize("text, line", MISSING_DOCID)
def test_classify_names_the_line_without_a_docid_and_writes_nothing(text, line, vali_model, tmp_path, capsys):
    data = tmp_path / "data.txt"
    data.write_bytes(text.encode())
    pred, run_path = tmp_path / "p.txt", tmp_path / "r.run"
    assert main(["classify", "--trec-run", str(run_path), str(data), str(vali_model), str(pred)]) == 2
    err = capsys.readouterr().err
    assert f"{data}:{line}: no document id in the comment" in err and "'# docid = ...'" in err
    assert not pred.exists() and not run_path.exists()
    # The same file without --trec-run needs no document ids.
    assert main(["classify", str(data), str(vali_model), str(pred)]) == 0


def test_classify_trec_run_refusals(vali_model, tmp_path, capsys):
    data = tmp_path / "data.txt"
    data.write_text("1 qid:1 1:1 # docid = a\n0 qid:1 1:0 # docid = a\n")
    pred, run_path = tmp_path / "p.txt", tmp_path / "r.run"
    cases = [
        (["--trec-run", str(run_path)], "document 'a' appears twice for query '1'"),
        (["--trec-run", str(pred)], "is PREDICTIONS too"),
        (["--trec-run", str(data)], "refusing to overwrite an input"),
        (["--trec-run", str(run_path), "--tag", "two words"], "--tag: the run tag must be one word"),
    ]
    for extra, message in cases:
        assert main(["classify", *extra, str(data), str(vali_model), str(pred)]) == 2
        assert message in capsys.readouterr().err
        assert not pred.exists() and not run_path.exists()


def test_classify_names_swapped_arguments(tmp_path, capsys):
    """MODEL before TEST: the error says the arguments look swapped (it used to be a bare JSON
    parse error about the LETOR file); a model file that is merely broken gets no such hint."""
    data = tmp_path / "d.txt"
    data.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n")
    model = tmp_path / "m.json"
    assert main(["learn", str(data), str(model)]) == 0
    capsys.readouterr()
    assert main(["classify", str(model), str(data), str(tmp_path / "p.txt")]) == 2
    err = capsys.readouterr().err
    assert "the arguments look swapped" in err and f"{model} is a model file" in err
    assert not (tmp_path / "p.txt").exists()
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "svmmap-model"')
    assert main(["classify", str(data), str(broken), str(tmp_path / "p.txt")]) == 2
    err = capsys.readouterr().err
    assert "broken.json" in err and "look swapped" not in err


def test_learn_with_a_validation_file_stops_early_as_the_api_does(fold_files, tmp_path, capsys):
    """svmmap learn --vali FILE --early-stopping N trains the model SVMMap.fit(eval_set=...,
    early_stopping_rounds=N, eval_metric=--scoring) trains (the same coefficients, those of the
    best validation iteration), and says which iteration it kept; --early-stopping without
    --vali is refused."""
    import warnings

    model_path = tmp_path / "m.json"
    code = main(
        [
            "learn",
            "-c",
            "10",
            "--vali",
            str(fold_files / "vali.txt"),
            "--early-stopping",
            "3",
            "--scoring",
            "ndcg@10",
            str(fold_files / "train.txt"),
            str(model_path),
        ]
    )
    assert code == 0
    err = capsys.readouterr().err
    X, y, qid = load_mq2008(1, "train")
    Xv, yv, qv = load_mq2008(1, "vali")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api = svmmap.SVMMap(C=10.0).fit(
            X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], eval_metric="ndcg@10", early_stopping_rounds=3
        )
    np.testing.assert_array_equal(svmmap.load_model(model_path).coef_, api.coef_)
    assert f"kept iteration {api.best_iteration_} of " in err
    assert main(["learn", "--early-stopping", "3", str(fold_files / "train.txt"), str(tmp_path / "n.json")]) == 2
    assert "give it with --vali FILE" in capsys.readouterr().err


def test_learn_names_swapped_arguments(tmp_path, capsys):
    data = tmp_path / "d.txt"
    data.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n")
    model = tmp_path / "m.json"
    assert main(["learn", str(data), str(model)]) == 0
    capsys.readouterr()
    before = data.read_text()
    assert main(["learn", str(model), str(data)]) == 2
    err = capsys.readouterr().err
    assert "the arguments look swapped" in err and "svmmap learn TRAIN MODEL" in err
    assert data.read_text() == before


def two_feature_rows(n_queries, per_query):
    """LETOR lines of ``n_queries`` queries of ``per_query`` documents, two features each, a
    third of them relevant: data small enough for the command line's tests to fit at once."""
    return [
        f"{int(i % 3 == 0)} qid:{q} 1:{0.1 * i + 0.01 * q:.4f} 2:{(i * 7 % 5) / 5:.4f}\n"
        for q in range(n_queries)
        for i in range(per_query)
    ]


def test_learn_reads_training_data_from_a_pipe_whole(tmp_path):
    """TRAIN through a pipe (/dev/stdin, <(zcat ...)): the swapped-argument check looks only
    into regular files, so the reader gets every byte (it lost the first 4 KB)."""
    rows = two_feature_rows(40, 6)
    text = "".join(rows)
    assert len(text.encode()) > 4096
    model = tmp_path / "m.json"
    r = subprocess.run(
        [sys.executable, "-m", "svmmap", "learn", "/dev/stdin", str(model)], input=text, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    path = tmp_path / "t.txt"
    path.write_text(text)
    assert main(["learn", str(path), str(tmp_path / "n.json")]) == 0
    np.testing.assert_array_equal(svmmap.load_model(model).coef_, svmmap.load_model(tmp_path / "n.json").coef_)


def test_classify_says_when_the_model_has_features_the_file_never_mentions(tmp_path, capsys):
    # A 3-feature model scoring a file whose lines stop at feature 1: features 2 and 3 are read
    # as 0 on every line (as SVMlight reads them), and the scores are those of the zero-padded
    # rows; the warning names the features. A file that mentions all three gets no warning.
    train = tmp_path / "train.txt"
    train.write_text(
        "2 qid:1 1:0.5 2:0.2 3:0.9\n0 qid:1 1:0.1 2:0.7 3:0.1\n1 qid:2 1:0.3 2:0.1 3:0.5\n0 qid:2 1:0.2 2:0.4 3:0.2\n"
    )
    model = tmp_path / "m.json"
    assert main(["learn", str(train), str(model)]) == 0
    short = tmp_path / "short.txt"
    short.write_text("1 qid:7 1:0.5\n0 qid:7 1:0.25\n")
    capsys.readouterr()
    assert main(["classify", str(short), str(model), str(tmp_path / "p.txt")]) == 0
    err = capsys.readouterr().err
    assert f"svmmap: warning: the model {model} has 3 features but no line of {short} mentions features 2-3" in err
    assert "read as 0 on every line, as SVMlight does" in err
    w = svmmap.load_model(model).coef_
    scores = np.loadtxt(tmp_path / "p.txt")
    np.testing.assert_allclose(scores, [0.5 * w[0], 0.25 * w[0]], rtol=1e-12)
    # One feature short: named alone.
    two = tmp_path / "two.txt"
    two.write_text("1 qid:7 1:0.5 2:1\n")
    assert main(["classify", str(two), str(model), str(tmp_path / "q.txt")]) == 0
    assert "mentions feature 3:" in capsys.readouterr().err
    assert main(["classify", str(train), str(model), str(tmp_path / "r.txt")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_classify_refuses_only_features_beyond_the_model_as_the_pages_say(tmp_path, capsys):
    # docs/model-format.md said classify refuses any other feature count; it refuses a file with
    # features beyond the model's (above) and reads missing ones as 0 with a warning (the test
    # before), as docs/guide/command-line.md says. Both pages now say so.
    import pathlib

    train = tmp_path / "train.txt"
    train.write_text("2 qid:1 1:0.5 2:0.2\n0 qid:1 1:0.1 2:0.7\n1 qid:2 1:0.3 2:0.1\n0 qid:2 1:0.2 2:0.4\n")
    model = tmp_path / "m.json"
    assert main(["learn", str(train), str(model)]) == 0
    wide = tmp_path / "wide.txt"
    wide.write_text("1 qid:7 1:0.5 4:1\n")
    capsys.readouterr()
    assert main(["classify", str(wide), str(model), str(tmp_path / "p.txt")]) == 2
    err = capsys.readouterr().err
    assert f"{wide} has features up to index 4, but the model {model} was trained on 2 features" in err, err
    assert not (tmp_path / "p.txt").exists()
    docs = pathlib.Path(__file__).resolve().parents[2] / "docs"
    page = " ".join((docs / "model-format.md").read_text().split())
    assert (
        "`svmmap classify` refuses a file with features beyond the model's, and reads the features a file never mentions as 0 with a warning"
        in page
    )
    assert "reads the features a test file never mentions as 0" in " ".join(
        (docs / "guide" / "command-line.md").read_text().split()
    )


def test_learn_takes_lightgbm_s_valid_spelling(tmp_path, capsys):
    # --valid (LightGBM's name for the validation data) is --vali: the same model.
    rows = two_feature_rows(8, 5)
    train, vali = tmp_path / "t.txt", tmp_path / "v.txt"
    train.write_text("".join(rows[:30]))
    vali.write_text("".join(rows[30:]))
    for option, name in (("--vali", "a.json"), ("--valid", "b.json")):
        args = [
            "learn",
            option,
            str(vali),
            "--early-stopping",
            "2",
            "--scoring",
            "map",
            str(train),
            str(tmp_path / name),
        ]
        assert main(args) == 0
    capsys.readouterr()
    np.testing.assert_array_equal(
        svmmap.load_model(tmp_path / "a.json").coef_, svmmap.load_model(tmp_path / "b.json").coef_
    )
    assert main(["learn", "--early-stopping", "2", str(train), str(tmp_path / "c.json")]) == 2
    assert "--vali" in capsys.readouterr().err


def test_classify_help_describes_missing_for_scoring(capsys):
    from svmmap.cli.parser import build_parser

    def help_of(command):
        parser = build_parser()
        sub = next(a for a in parser._actions if a.dest == "command").choices[command]
        return next(a for a in sub._actions if a.dest == "missing").help

    assert "learn then trains" in help_of("learn")
    classify = help_of("classify")
    assert "learn then trains" not in classify and "TEST" in classify and "refuses them" in classify


@pytest.mark.parametrize(
    "options, complaint",
    [
        (["--bins", "10"], "--bins sets the binner of --missing nan"),
        (["--auto", "--bins", "10"], "--bins sets the binner of --missing nan"),
        (["--cv", "3"], "--cv is read by --auto only"),
        (["--patience", "2"], "--patience is read by --auto only"),
        (["--time-budget", "5"], "--time-budget is read by --auto only"),
        (["--scoring", "map"], "--scoring is the validation metric of --vali or --auto"),
        (["--auto", "--vali", "VALI", "--cv", "3"], "--cv makes the folds of --auto's search"),
        # Named as typed; they named Python's parameters (cv=3, scoring, eval_metric). attack5.
        (["--auto", "--cv", "3"], "--cv 3 folds need at least 3 queries; TRAIN has 2"),
        (
            ["--auto", "--scoring", "bogus"],
            '--scoring must be one of map, ndcg, ndcg@k, mrr, mrr@k, roc, p@k, got "bogus"',
        ),
        (["--vali", "VALI", "--scoring", "bogus"], "--scoring must be one of"),
    ],
)
def test_learn_refuses_options_it_would_not_read(tmp_path, capsys, options, complaint):
    """Each of these options is read in one mode only; given in another, the run used to
    train as if it had not been given and say nothing. It is refused, and no model written."""
    data = tmp_path / "d.txt"
    data.write_text("1 qid:1 1:0.5 2:1\n0 qid:1 1:0.1 2:0\n1 qid:2 1:0.3 2:0\n0 qid:2 1:0.2 2:1\n")
    model = tmp_path / "m.json"
    options = [str(data) if o == "VALI" else o for o in options]
    assert main(["learn", *options, str(data), str(model)]) == 2
    assert complaint in capsys.readouterr().err
    assert not model.exists()


def test_learn_auto_reads_a_validation_file_short_of_the_last_feature_as_zeros(tmp_path, capsys):
    """Without --auto a validation file whose lines never mention the training file's last
    feature reads it as 0 (SVMlight's rule); --auto failed on it with 'eval_set[0] has 1
    features, but X has 2'. Here feature 2 is 0 on every validation line, so the file that
    omits it and the file that writes 2:0 are the same data and give the same model."""
    rows = two_feature_rows(12, 5)
    train, short, full = tmp_path / "t.txt", tmp_path / "short.txt", tmp_path / "full.txt"
    train.write_text("".join(rows))
    vali = [f"{int(i % 2 == 0)} qid:{50 + q} 1:{0.05 * i - 0.02 * q:.4f}" for q in range(4) for i in range(5)]
    short.write_text("".join(line + "\n" for line in vali))
    full.write_text("".join(line + " 2:0\n" for line in vali))
    for vali_file, name in ((short, "a.json"), (full, "b.json")):
        assert (
            main(["learn", "--auto", "--n-jobs", "1", "--vali", str(vali_file), str(train), str(tmp_path / name)]) == 0
        )
    capsys.readouterr()
    np.testing.assert_array_equal(
        svmmap.load_model(tmp_path / "a.json").predict(np.eye(2)),
        svmmap.load_model(tmp_path / "b.json").predict(np.eye(2)),
    )


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_experiment_names_a_data_path_that_is_no_directory_before_its_header(tmp_path, capsys, kind):
    """--data must be a directory of folds; a file or a missing path printed the run's header
    and then "[Errno 20] Not a directory" (or ENOENT)."""
    path = tmp_path / "train.txt"
    if kind == "file":
        path.write_text("1 qid:1 1:0.5\n")
    assert main(["experiment", "--data", str(path)]) == 2
    err = capsys.readouterr().err
    what = "does not exist" if kind == "missing" else "is not a directory"
    assert f"--data: {str(path)!r} {what}; give a directory with Fold*/{{train,vali,test}}.txt" in err
    assert "C grid" not in err


def test_learn_names_a_model_file_given_as_vali(tmp_path, capsys):
    """TRAIN given a model file is named as such; --vali given one got the reader's
    "field 1 (the label) is '{'"."""
    data = tmp_path / "d.txt"
    data.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n")
    model = tmp_path / "m.json"
    assert main(["learn", str(data), str(model)]) == 0
    capsys.readouterr()
    for auto in ([], ["--auto"]):
        assert main(["learn", *auto, "--vali", str(model), str(data), str(tmp_path / "n.json")]) == 2
        assert f"--vali {model} is an svmmap model file (JSON), not validation data" in capsys.readouterr().err
    assert not (tmp_path / "n.json").exists()


def test_learn_auto_takes_patience_none_and_vv_as_python_does(tmp_path, capsys):
    """--patience none is SVMMapCV(patience=None) (every C fitted; it was refused, while the
    other options take 'none' for None), and -vv is verbose=2 (a line per split; it printed
    what -v prints). Found by attack5."""
    rows = two_feature_rows(12, 5)
    train = tmp_path / "t.txt"
    train.write_text("".join(rows))
    base = ["learn", "--auto", "--n-jobs", "1", "--cv", "2"]
    assert main([*base, "--patience", "none", "-v", str(train), str(tmp_path / "a.json")]) == 0
    err = capsys.readouterr().err
    assert "0 stopped early along C" in err
    assert main([*base, "-v", str(train), str(tmp_path / "b.json")]) == 0
    assert not re.search(r"split \d+ of \d+", capsys.readouterr().err)
    assert main([*base, "-vv", str(train), str(tmp_path / "c.json")]) == 0
    assert re.search(r"split 2 of 2: ", capsys.readouterr().err)


def test_learn_auto_reports_the_seconds_of_the_search_that_the_budget_bounds(tmp_path, capsys, monkeypatch):
    """The summary's "searched ... in X s" is the search's own time (``search_seconds_``, what
    --time-budget bounds); it was the whole fit's, refit included, so a search within its
    budget read as one that overran it. The refit is slowed here to make the two differ."""
    import time

    from svmmap._search import refit as refit_module
    from svmmap.model_selection import SVMMapCV

    searches = []
    original_fit, original_refit = SVMMapCV.fit, refit_module.refit_best

    def fit(self, *args, **kwargs):
        searches.append(self)
        return original_fit(self, *args, **kwargs)

    def slow_refit(*args, **kwargs):
        time.sleep(0.3)
        return original_refit(*args, **kwargs)

    monkeypatch.setattr(SVMMapCV, "fit", fit)
    monkeypatch.setattr(refit_module, "refit_best", slow_refit)
    rows = two_feature_rows(8, 5)
    train = tmp_path / "t.txt"
    train.write_text("".join(rows))
    assert main(["learn", "--auto", "--n-jobs", "1", "--cv", "2", str(train), str(tmp_path / "m.json")]) == 0
    err = capsys.readouterr().err
    assert f"candidates in {searches[0].search_seconds_:.2f}s (" in err
