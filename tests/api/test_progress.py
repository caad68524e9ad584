"""Progress reports: logging with verbose, the CLI's display, callbacks that stop, history_."""

import io
import logging
import subprocess
import sys
import textwrap

import pytest
from svmmap import SVMMap
from svmmap.cli.learn import _ProgressDisplay
from svmmap.datasets import load_mq2008

RECORD_KEYS = {"iteration", "primal", "dual", "gap", "loss", "n_cuts", "n_active", "seconds"}


@pytest.fixture(scope="module")
def data():
    return load_mq2008(fold=1, split="vali")


# A fresh interpreter importing scikit-learn, over about 5 s (the slow marker's rule).
@pytest.mark.slow
def test_verbose_lines_reach_stderr_without_any_logging_configuration():
    # A fresh interpreter, so that nothing (not even pytest) has configured logging: Python's
    # last-resort handler would drop INFO records, yet verbose=1 must show the lines.
    code = textwrap.dedent(
        """
        import logging
        from svmmap import SVMMap
        from svmmap.datasets import load_mq2008
        X, y, qid = load_mq2008(fold=1, split="vali")
        import warnings; warnings.simplefilter("ignore")
        model = SVMMap(C=1.0, verbose=1).fit(X, y, qid=qid)
        logger = logging.getLogger("svmmap")
        print("iterations", model.n_iter_, "handlers", len(logger.handlers), "level", logger.level)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [l for l in out.stderr.splitlines() if l.startswith("[svmmap] iter")]
    n_iter = int(out.stdout.split()[1])
    assert len(lines) == n_iter
    for field in ("primal", "dual", "gap", "cuts"):
        assert field in lines[0]
    assert "[svmmap] converged after" in out.stderr
    # The temporary handler and level are gone after fit.
    assert out.stdout.split()[3:] == ["0", "level", "0"]


def test_verbose_lines_go_to_configured_handlers(data, caplog):
    X, y, qid = data
    # As after logging.basicConfig(): the root logger passes warnings only, its handler
    # has no level of its own.
    caplog.set_level(logging.WARNING)
    caplog.handler.setLevel(logging.NOTSET)
    model = SVMMap(C=1.0, verbose=1).fit(X, y, qid=qid)
    # verbose=1 is an explicit request: the svmmap logger is lowered to INFO for the fit.
    iters = [r for r in caplog.records if r.name == "svmmap" and r.getMessage().startswith("iter")]
    assert len(iters) == model.n_iter_ and all(r.levelno == logging.INFO for r in iters)
    assert logging.getLogger("svmmap").level == logging.NOTSET


def test_a_level_set_by_the_user_is_respected(data, caplog):
    X, y, qid = data
    caplog.set_level(logging.INFO)
    logger = logging.getLogger("svmmap")
    logger.setLevel(logging.WARNING)
    try:
        SVMMap(C=1.0, verbose=1).fit(X, y, qid=qid)
    finally:
        logger.setLevel(logging.NOTSET)
    assert not [r for r in caplog.records if r.name == "svmmap"]


def test_quiet_by_default(data, caplog):
    X, y, qid = data
    caplog.set_level(logging.DEBUG)
    SVMMap(C=1.0).fit(X, y, qid=qid)
    assert not [r for r in caplog.records if r.name == "svmmap"]


def test_callback_stops_training_early_and_history_is_kept(data):
    X, y, qid = data
    full = SVMMap(C=100.0).fit(X, y, qid=qid)
    assert full.n_iter_ > 4 and full.stop_reason_ == "converged"
    seen = []

    def stop_when_gap_below(record):
        seen.append(dict(record))
        return record["iteration"] == 4

    model = SVMMap(C=100.0, callback=stop_when_gap_below).fit(X, y, qid=qid)
    assert model.n_iter_ == 4 and model.stop_reason_ == "callback" and not model.converged_
    # history_ holds exactly what the callback saw, in order.
    assert model.history_ == seen
    assert [r["iteration"] for r in model.history_] == [1, 2, 3, 4]
    assert all(set(r) == RECORD_KEYS for r in model.history_)
    # The same first iterations as the full run: stopping early changes nothing before it.
    assert [r["primal"] for r in model.history_] == [r["primal"] for r in full.history_[:4]]
    # Seconds are cumulative.
    assert all(b["seconds"] >= a["seconds"] for a, b in zip(model.history_, model.history_[1:]))
    # The fitted attributes describe the last iteration.
    assert model.objective_ == model.history_[-1]["primal"] and model.gap_ == model.history_[-1]["gap"]


def test_progress_display_lines_and_terminal_rewrites():
    record = {"iteration": 1, "primal": 2.0, "dual": 0.0, "gap": 2.0, "n_active": 0, "n_cuts": 0, "seconds": 0.1}
    out = io.StringIO()
    display = _ProgressDisplay(target_gap=2e-3, stream=out)
    assert display(record) is False
    display(dict(record, iteration=2, gap=2e-2, seconds=0.2))
    display(dict(record, iteration=3, gap=1e-3, seconds=0.3))
    display.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and "\r" not in out.getvalue()
    # The bar is log-linear in the gap: from 2 to 2e-3 is three decades; 2e-2 is two of them
    # (67%); at or below the target it is full.
    assert "[" + "." * 20 + "]   0%" in lines[0]
    assert "  67%" in lines[1] and "#" * 13 + "." * 7 in lines[1]
    assert "[" + "#" * 20 + "] 100%" in lines[2]
    assert "gap 0.02 (target 0.002)" in lines[1]

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()
    display = _ProgressDisplay(target_gap=2e-3, stream=tty)
    display(record)
    display(dict(record, iteration=2, gap=2e-2))
    display.close()
    text = tty.getvalue()
    # One status line rewritten in place, then a newline at the end.
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1


def test_cli_learn_shows_progress(tmp_path, capsys):
    from svmmap.cli import main
    from svmmap.datasets import mq2008_path

    model_path = tmp_path / "model.json"
    assert main(["learn", "-v", "-c", "10", mq2008_path(1), str(model_path)]) == 0
    err = capsys.readouterr().err
    progress = [l for l in err.splitlines() if l.startswith("iter ")]
    assert progress and "gap" in progress[0] and "target 0.01" in progress[0]
    assert progress[-1].split()[3] == "100%"
    assert "model written to" in err


def test_cli_progress_of_several_losses_ends_at_100_percent(tmp_path, capsys):
    # Two losses with separate slacks stop at a gap of 2 * C * eps; a bar aimed at C * eps (as
    # it was) ends short of 100% on a converged fit.
    from svmmap.cli import main
    from svmmap.datasets import mq2008_path

    model_path = tmp_path / "model.json"
    assert main(["learn", "-v", "-c", "10", "--loss", "map,ndcg@10", mq2008_path(1), str(model_path)]) == 0
    err = capsys.readouterr().err
    progress = [l for l in err.splitlines() if l.startswith("iter ")]
    assert "target 0.02" in progress[0], progress[0]
    assert progress[-1].split()[3] == "100%", progress[-1]
