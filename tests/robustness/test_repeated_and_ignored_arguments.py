"""A second independent hostile trial, I2 and I6: an argument given twice, or given where it is
not read, is refused with one line instead of the last one winning or being dropped.

The command-line cases reuse the files of ``test_bad_arguments`` and its one-line check.
"""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest
from svmmap.cli import main
from svmmap.datasets import load_mq2008, make_ranking, write_mq2008

from .test_bad_arguments import _fuse, _protocol, files  # noqa: F401 (files is a fixture)

CLI_CASES = [
    # argparse kept the last -c: C 10 was trained, and the 1 before it ignored.
    ("learn-c-twice", lambda f: ["learn", "-c", "1", "-c", "10", f["train"], f["out"]], "-c is given twice"),
    (
        "learn-loss-twice-as-options",
        lambda f: ["learn", "--loss", "map", "--loss", "roc", f["train"], f["out"]],
        "--loss is given twice",
    ),
    (
        "learn-vali-and-valid",
        lambda f: ["learn", "--vali", f["train"], "--valid", f["train"], f["train"], f["out"]],
        "--vali/--valid is given twice",
    ),
    # --auto chooses C and the loss: the model was written with C 0.01 and loss pairwise.
    ("learn-auto-c", lambda f: ["learn", "--auto", "-c", "5", f["train"], f["out"]], "-c is chosen by --auto's search"),
    # Even the default value, which the user wrote and may believe is used.
    (
        "learn-auto-c-default",
        lambda f: ["learn", "--auto", "-c", "1", f["train"], f["out"]],
        "-c is chosen by --auto's search",
    ),
    (
        "learn-auto-loss",
        lambda f: ["learn", "--auto", "--loss", "roc", f["train"], f["out"]],
        "--loss is chosen by --auto's search",
    ),
    # SVMMapCV(Cs=[1, 1]) is refused; fuse fitted C 1 twice.
    ("fuse-C-twice", lambda f: _fuse(f, "--C", "1,1"), "argument --C: every C once: '1' is 1, given twice in '1,1'"),
    ("fuse-C-twice-spelled-apart", lambda f: _fuse(f, "--C", "0.1,1e-1"), "'1e-1' is 0.1, given twice"),
    (
        "protocol-features-twice",
        lambda f: _protocol(f, "--features", "1,1"),
        "--features: feature 1 is given twice ('1' and '1')",
    ),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_refuses_an_option_twice_or_unread_with_one_line(files, case):  # noqa: F811
    _, argv_of, needle = case
    if os.path.exists(files["out"]):
        os.remove(files["out"])
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv_of(files))
    except SystemExit as exc:  # argparse's usage error
        code = exc.code
    assert code == 2, err.getvalue()
    errors = [line for line in err.getvalue().splitlines() if "error:" in line]
    assert len(errors) == 1 and needle in errors[0], err.getvalue()
    assert not os.path.exists(files["out"]), "nothing is written"


def test_an_option_given_once_is_still_read(files):  # noqa: F811
    # The refusal counts the options given, not their values: -c once, with --max-iter once.
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["learn", "-c", "10", "--max-iter", "50", files["train"], files["out"]]) == 0
    os.remove(files["out"])


@pytest.mark.parametrize(
    "call,needle",
    [
        # Fold 1 was written twice (the second write replacing the first).
        (lambda tmp: write_mq2008(tmp, folds=[1, 1]), "folds lists a fold twice: [1, 1]"),
        (lambda tmp: write_mq2008(tmp, folds="12"), "folds must be a list of MQ2008 fold numbers (1 to 5), got '12'"),
        (lambda tmp: write_mq2008(tmp, folds=["1"]), "MQ2008 has folds 1..5, got '1'"),
        # True was fold 1 (True == 1), while "1" is refused.
        (lambda tmp: load_mq2008(fold=True), "MQ2008 has folds 1..5, got True"),
        (lambda tmp: load_mq2008(fold=1.0), "MQ2008 has folds 1..5, got 1.0"),
        # 0.5 + 0.6 = 1.1: normalized silently to 0.45 and 0.55.
        (
            lambda tmp: make_ranking(3, 5, 3, label_fractions=[0.5, 0.6]),
            "label_fractions must add up to 1 (the fraction of documents with each label), got [0.5, 0.6], which adds up to 1.1",
        ),
    ],
    ids=["folds-twice", "folds-str", "folds-text", "fold-true", "fold-float", "fractions-sum"],
)
def test_datasets_refuse_repeated_or_ambiguous_arguments(tmp_path, call, needle):
    with pytest.raises(ValueError) as info:
        call(tmp_path)
    assert needle in str(info.value)
    assert not any(tmp_path.iterdir()), "nothing is written"
    # The valid spellings still work.
    assert make_ranking(3, 5, 3, label_fractions=[0.5, 0.5], random_state=0)[1].shape == (15,)


def _yes_no_cases():
    from svmmap import SVMMapCV
    from svmmap.baselines import AdaRank, SVMAcc

    return {
        "SVMMapCV-refit": (lambda: SVMMapCV(Cs=[1.0], cv=2, refit="no"), "refit must be True or False, got 'no'"),
        "SVMMapCV-warm_start": (lambda: SVMMapCV(Cs=[1.0], cv=2, warm_start="no"), "warm_start must be True or False"),
        "search-refit": (
            lambda: SVMMapCV(Cs=[1.0], cv=2, loss=["map", "roc"], refit=0.5),
            "refit must be True or False, got 0.5",
        ),
        "SVMAcc-balanced": (lambda: SVMAcc(balanced="no"), "balanced must be True or False, got 'no'"),
        "AdaRank-repeat": (lambda: AdaRank(repeat="False"), "repeat must be True or False, got 'False'"),
    }


@pytest.mark.parametrize("case", sorted(_yes_no_cases()))
def test_yes_no_parameters_take_only_true_or_false(case):
    # Hostile trial 2, I5: "no" is a true value in Python, so each of these ran as True.
    make, needle = _yes_no_cases()[case]
    X = np.tile([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 0.8]], (4, 1))
    y = np.tile([1, 0, 1, 0], 4)
    qid = np.repeat([1, 2, 3, 4], 4)
    with pytest.raises(ValueError) as info:
        make().fit(X, y, qid=qid)
    assert needle in str(info.value)
    # NumPy's booleans are booleans.
    model = make().set_params(**{case.split("-")[1]: np.False_})
    model.fit(X, y, qid=qid)


@pytest.mark.parametrize("value", ["1e400", "1e999", "nan"])
def test_an_overflowing_number_is_echoed_as_written(files, value):  # noqa: F811
    # M9: "-c 1e400" was read as inf and refused as "got inf", a value the user never wrote.
    err = io.StringIO()
    with pytest.raises(SystemExit), contextlib.redirect_stderr(err):
        main(["learn", "-c", value, files["train"], files["out"]])
    assert f"argument -c: expected a finite number, got '{value}'" in err.getvalue()
