"""The one training configuration (`_core.TrainConfig`), the problem and fit summaries, and
the facts they own: defaults, checks, slack groups, query counts."""

import inspect
import pickle

import numpy as np
import pytest
import svmmap
from svmmap import _core
from svmmap._validation import check_matrix
from svmmap.baselines import DORM, AdaRank, SVMAcc
from svmmap.cli.parser import build_parser
from svmmap.ir.experiment import run_folds
from svmmap.ir.fusion import RunFusion
from svmmap.ir.protocol import SingleFeature, fit_ranker, given_folds, random_splits
from svmmap.losses import loss_groups, loss_names, structured_hinge


def test_every_trainer_shows_the_cores_defaults():
    defaults = _core.TrainConfig.DEFAULTS
    assert defaults == {
        "C": 1.0,
        "eps": 1e-3,
        "max_iter": 10000,
        "relevance_threshold": 0.0,
        "loss": "map",
        "slack": "separate",
        "n_jobs": None,
        "cut_blocks": None,
        "n_iter_no_change": 50,
        "max_time": None,
    }
    trainers = (
        svmmap.SVMMap.__init__,
        SVMAcc.__init__,
        DORM.__init__,
        AdaRank.__init__,
        RunFusion.__init__,
        SingleFeature.__init__,
        run_folds,
        random_splits,
        given_folds,
        fit_ranker,
        structured_hinge,
    )
    for trainer in trainers:
        params = inspect.signature(trainer).parameters
        for name, value in defaults.items():
            # A grid of C (RunFusion) is a choice among values, not the default of C.
            if name in params and not isinstance(params[name].default, tuple):
                assert params[name].default == value, (trainer, name)
    learn = build_parser().parse_args(["learn", "train.txt", "model.json"])
    assert (learn.C, learn.eps, learn.loss, learn.max_iter, learn.relevance_threshold, learn.n_jobs) == (
        defaults["C"],
        defaults["eps"],
        defaults["loss"],
        defaults["max_iter"],
        defaults["relevance_threshold"],
        defaults["n_jobs"],
    )
    for command in (["experiment"], ["fuse", "--qrels", "q", "--runs", "r", "--out", "o"], ["protocol"]):
        args = build_parser().parse_args(command)
        assert (args.eps, args.n_jobs) == (defaults["eps"], defaults["n_jobs"]), command


def test_slack_groups_are_structured_values():
    assert loss_groups("ndcg@10") == [["ndcg@10"]]
    assert loss_groups(["map", "roc"]) == [["map"], ["roc"]]
    assert loss_groups(["map", "roc"], "shared") == [["map", "roc"]]
    # A list's default weights are part of the names (tests/core/test_combo_weights.py).
    assert loss_groups(["map", "mrr@10"], "shared") == [["map", "0.0001*mrr@10"]]
    # The old spelling is derived from the groups, for code that used it.
    assert loss_names(["map", "roc"], "shared") == ["max(map,roc)"]
    with pytest.raises(ValueError, match='loss lists "map" twice'):
        loss_groups(["map", "roc", " map"])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"C": True}, "C must be a finite number > 0, got True"),
        ({"max_iter": -3}, "max_iter must be an integer >= 1, got -3"),
        ({"max_iter": "10"}, "max_iter must be an integer >= 1, got '10'"),
        ({"relevance_threshold": None}, "relevance_threshold must be a finite number, got None"),
        ({"slack": "both"}, 'slack must be "separate" or "shared", got \'both\''),
        (
            {"loss": b"map"},
            "loss must be a loss name, a list of loss names or a dict of loss names to weights, got b'map'",
        ),
        (
            {"loss": ["map", 3]},
            "loss must be a loss name, a list of loss names or a dict of loss names to weights, got ['map', 3]",
        ),
        (
            {"n_jobs": 1.5},
            "n_jobs must be None, an integer from 1 to 1024, or a negative integer (-1: every core, -2: all but one), got 1.5",
        ),
    ],
)
def test_parameters_are_checked_once_with_one_message_each(kwargs, message):
    with pytest.raises(ValueError) as info:
        _core.TrainConfig(**kwargs)
    assert str(info.value) == message
    # The estimator reports the same line.
    with pytest.raises(ValueError) as info:
        svmmap.SVMMap(**kwargs).fit(np.eye(2), [1, 0], qid=[1, 1])
    assert str(info.value) == message


def test_unknown_keywords_are_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        _core.TrainConfig(c=1.0)
    with pytest.raises(TypeError, match="positional"):
        _core.TrainConfig(1.0)


def test_defaults_are_the_table_of_parameters():
    # TrainConfig takes the names of the core's table as keywords (tests/api/test_parameters.py
    # checks the copies of the table); DEFAULTS lists them in the table's order.
    table = _core.TRAINING_PARAMETERS
    assert list(_core.TrainConfig.DEFAULTS) == [p["name"] for p in table]
    assert all(_core.TrainConfig.DEFAULTS[p["name"]] == p["default"] for p in table)


def test_a_config_pickles_as_its_keyword_arguments():
    config = _core.TrainConfig(C=3.0, loss=["map", "ndcg@5"], slack="shared", n_jobs=2)
    again = pickle.loads(pickle.dumps(config))
    assert again.kwargs() == config.kwargs()
    assert (again.C, again.losses, again.n_threads) == (3.0, [[(1.0, "map"), (0.1, "ndcg@5")]], 2)


def test_n_jobs_counts_back_from_the_cores():
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    # None is every core, as -1 (one rule, whatever RAYON_NUM_THREADS says).
    assert _core.n_threads(None) == cores
    assert _core.n_threads(3) == 3
    assert _core.n_threads(-1) == cores
    assert _core.n_threads(-(cores + 5)) == 1


def test_problem_summary_counts_queries_by_the_one_rule_and_merges_parts():
    # Query 0: relevant and non-relevant (used); 1: none relevant; 2: all relevant; 3: one
    # document, relevant.
    y = np.array([1.0, 0.0, 0.0, 0.0, 2.0, 1.0, 1.0])
    codes = np.array([0, 0, 1, 1, 2, 2, 3])
    summary = _core.problem_summary(y, codes, 4, 0.0)
    assert (summary.used, summary.no_relevant, summary.all_relevant, summary.skipped, summary.total) == (1, 1, 2, 3, 4)
    merged = _core.ProblemSummary.merge([summary, _core.ProblemSummary(used=2, no_relevant=1)])
    assert (merged.used, merged.no_relevant, merged.all_relevant) == (3, 2, 2)
    assert pickle.loads(pickle.dumps(merged)) == merged
    with pytest.raises(ValueError, match="no training query has both a relevant and a non-relevant document"):
        _core.ProblemSummary(no_relevant=2).require_usable(0.0)


def test_fit_summary_has_one_meaning_per_name():
    X, y, qid = svmmap.datasets.load_mq2008(fold=1, split="vali")
    model = svmmap.SVMMap(C=10.0).fit(X, y, qid=qid)
    last = model.history_[-1]
    # n_cuts_ is the active cuts; a record's n_cuts is the working set, n_active the active cuts.
    assert 0 < model.n_cuts_ <= last["n_cuts"] + 1
    assert set(last) == {"iteration", "primal", "dual", "gap", "loss", "n_cuts", "n_active", "seconds"}
    ((_, summary),) = _core.fit_path(
        check_matrix(X)[0],
        y.astype(float),
        np.unique(qid, return_inverse=True)[1].astype(np.int64),
        len(np.unique(qid)),
        _core.TrainConfig(C=10.0),
    )
    assert (summary.active_cuts, summary.n_iter, summary.stop) == (model.n_cuts_, model.n_iter_, model.stop_reason_)
    assert summary.problem.used == model.n_queries_
    assert summary.problem.no_relevant == model.n_queries_skipped_["no_relevant"]
