"""evaluate_run / evaluate_measures with ``queries=``: a listed query that the qrels do not
judge is left out, as trec_eval leaves it out, and a warning names it (a typo in an id gave an
empty result without a word)."""

import warnings

import pytest
from svmmap.ir.trec import Qrels, Run, evaluate_measures, evaluate_run


def data():
    run = Run(qid=["1", "1", "2"], docno=["a", "b", "c"], score=[2.0, 1.0, 1.0], rank=[1, 2, 1])
    qrels = Qrels(qid=["1", "2"], docno=["a", "c"], rel=[1, 1])
    return run, qrels


def test_a_listed_query_the_qrels_do_not_judge_is_named():
    run, qrels = data()
    with pytest.warns(UserWarning, match=r"queries' '9' \(1 of 2\) is ignored: the qrels judge no such query"):
        result = evaluate_run(run, qrels, "map", queries=["1", "9"])
    # Query 1 ranks its one relevant document first: AP 1, by hand.
    assert dict(result) == {"1": 1.0}
    with pytest.warns(UserWarning, match=r"queries' '9' \(1 of 1\)"):
        assert dict(evaluate_measures(run, qrels, ["map"], queries=["9"])["map"]) == {}


def test_judged_queries_and_no_list_warn_of_nothing():
    run, qrels = data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert set(evaluate_run(run, qrels, "map", queries=["1", "2"])) == {"1", "2"}
        assert set(evaluate_run(run, qrels, "map")) == {"1", "2"}
