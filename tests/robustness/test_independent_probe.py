"""What an independent probe of the reliability classes found after issue 36's fixes landed
(a tester who had not read the issue's list): unlisted instances of the same classes, each
checked here as the class's rule, over variants."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from svmmap import SVMMap, metrics
from svmmap.io import letor_docids
from svmmap.ir.trec import Qrels, Run, evaluate_measures, read_run, write_run

ODD_QIDS = ["-1", "q", "Q1", "1e3", "1.5", "007", "0", "99999999999999999999"]


@pytest.mark.parametrize("qid", ODD_QIDS)
def test_every_measure_of_a_query_does_not_depend_on_how_its_id_is_spelled(qid):
    """ERR@20 goes through gdeval, which read ids as numbers: 0 for "-1", a crash for "q".
    Every measure of a one-query run must equal the same run's under the id "1"."""
    names = ["err@20", "map", "ndcg@10", "judged@10", "success@10"]

    def values(q):
        run = Run.from_dict({q: {"a": 1.0, "b": 0.5, "c": 0.2}})
        qrels = Qrels.from_dict({q: {"a": 0, "b": 2, "c": 1}})
        return {m: v[q] for m, v in evaluate_measures(run, qrels, names).items()}

    assert values(qid) == values("1")


def test_ids_differing_only_in_their_leading_zeros_are_two_queries_for_every_measure():
    run = Run.from_dict({"007": {"a": 1.0, "b": 0.5}, "7": {"a": 0.2, "b": 0.9}})
    qrels = Qrels.from_dict({"007": {"a": 0, "b": 1}, "7": {"a": 0, "b": 1}})
    err = evaluate_measures(run, qrels, ["err@20"])["err@20"]
    # gdeval's ERR with its maximum grade 4: a document of grade 1 stops the user with
    # R = (2^1 - 1) / 2^4 = 1/16. Query "7" ranks it first (ERR 1/16), "007" second (1/16 / 2).
    assert err == {"007": pytest.approx(1 / 32), "7": pytest.approx(1 / 16)}


@pytest.mark.parametrize("space", ["\u00a0", "\u2028", "\u0085", "\u3000", "\u200b"])
def test_a_letor_docid_keeps_the_unicode_whitespace_the_run_reader_keeps(tmp_path, space):
    """Only ASCII whitespace ends a docid, in the LETOR comment as in a run file: a docid with
    a no-break space written to a run reads back whole."""
    docid = f"D007{space}x"
    (got,) = letor_docids([f"docid = {docid} inc = 1"]).tolist()
    assert got == docid
    run = Run(np.array(["1", "1"]), np.array([got, "D8"]), np.array([1.0, 0.5]), np.array([1, 2]))
    path = tmp_path / "r.run"
    write_run(path, run)
    assert read_run(path).docno.tolist() == [got, "D8"]


def test_constructors_refuse_what_the_readers_would_refuse(tmp_path):
    """A pair listed twice, or an id that is not a string or an integer, was accepted by the
    constructors and from_dict (and then written, or turned into the text "nan")."""
    with pytest.raises(ValueError, match="appears twice"):
        Run(np.array(["q", "q"]), np.array(["a", "a"]), np.array([1.0, 0.5]), np.array([1, 2]))
    with pytest.raises(ValueError, match="judged twice"):
        Qrels(np.array(["q", "q"]), np.array(["a", "a"]), np.array([1, 0]))
    for bad in (float("nan"), None, True, 7.0, b"\xff"):
        with pytest.raises(ValueError, match="ids must be strings or integers"):
            Run.from_dict({bad: {"a": 1.0}})
        with pytest.raises(ValueError, match="ids must be strings or integers"):
            Qrels.from_dict({"q": {bad: 1}})
    assert Run.from_dict({7: {"a": 1.0}}).qid.tolist() == ["7"]
    for tag in (7, None):
        with pytest.raises(ValueError, match="run tag must be a str"):
            Run(np.array(["q"]), np.array(["a"]), np.array([1.0]), np.array([1]), tag=tag)


@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), -float("inf"), True, "0"])
def test_best_accuracy_refuses_a_threshold_every_other_metric_refuses(threshold):
    with pytest.raises(ValueError, match="relevance_threshold must be a finite number"):
        metrics.best_accuracy([0, 1, 0], [0.1, 0.2, 0.3], relevance_threshold=threshold)


def _data():
    rng = np.random.default_rng(0)
    y = np.tile([1, 0, 0, 1, 0, 0], 10)
    X = rng.normal(size=(60, 4)) + np.outer(y, [1.0, 0.0, 0.0, 0.0])
    return X, y, np.repeat(np.arange(10), 6)


@pytest.mark.parametrize("labels", [np.ones(18), np.full(18, 2.0), np.tile([2.0, 1.0, 1.0], 6)])
def test_early_stopping_refuses_an_eval_set_whose_every_ranking_scores_the_same(labels):
    """Every document relevant (MAP 1 whatever the ranking), also with labels 1 and 2 under the
    binary MAP; NDCG@10 grades 1 and 2, so there the same eval set is accepted."""
    X, y, qid = _data()
    with pytest.raises(ValueError, match="every ranking of every query scores the same"):
        SVMMap(C=10.0).fit(X, y, qid=qid, eval_set=[(X[:18], labels)], eval_qid=[qid[:18]], early_stopping_rounds=3)
    if len(set(labels.tolist())) > 1:
        SVMMap(C=10.0).fit(
            X,
            y,
            qid=qid,
            eval_set=[(X[:18], labels)],
            eval_qid=[qid[:18]],
            eval_metric="ndcg@10",
            early_stopping_rounds=3,
        )


@pytest.mark.parametrize("limit", [{"max_iter": 1}, {"max_time": 1e-9, "n_iter_no_change": None}])
def test_a_limit_reached_is_not_blamed_on_C(limit):
    """On features of one scale, a fit that reaches max_iter or max_time names the limit, not a
    cause it did not measure ("C = 1e-06 is large for these features")."""
    X, y, qid = _data()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        SVMMap(C=1e-6, **limit).fit(X, y, qid=qid)
    texts = [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]
    assert len(texts) == 1
    assert "is large for these features" not in texts[0] and "was reached first" in texts[0]


@pytest.mark.parametrize("name", ["ndcg@\u0661\u0660", "p@\uff15", "recall@\u0967\u0966"])
def test_a_measure_name_in_other_digits_or_spaces_is_refused_by_every_reader(name):
    """svmmap.metrics refused "ndcg@١٠" (Arabic-Indic digits) while evaluate_run read it as
    NDCG@10: str.isdigit takes any script's digits."""
    from svmmap.ir.trec import parse_measure

    with pytest.raises(ValueError):
        metrics.evaluate([1, 0], [1.0, 0.0], None, [name])
    with pytest.raises(ValueError):
        parse_measure(name)
