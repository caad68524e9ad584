"""TREC run and qrels files: parsing errors, trec_eval's order, evaluation against pytrec_eval."""

import numpy as np
import pytest
from svmmap import DataFormatError
from svmmap.ir.trec import (
    Qrels,
    Run,
    evaluate_measures,
    evaluate_run,
    format_run,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)

pytrec_eval = pytest.importorskip("pytrec_eval")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_read_run_and_qrels(tmp_path):
    run = read_run(write(tmp_path, "a.run", "1 Q0 d1 1 2.5 tagA\n\n1 Q0 d2 2 -1e-3 tagA\n2 Q0 d1 1 7 tagA\n"))
    assert run.qid.tolist() == ["1", "1", "2"]
    assert run.docno.tolist() == ["d1", "d2", "d1"]
    assert run.score.tolist() == [2.5, -0.001, 7.0]
    assert run.rank.tolist() == [1, 2, 1]
    assert run.tag == "tagA" and run.name.endswith("a.run")
    assert run.to_dict() == {"1": {"d1": 2.5, "d2": -0.001}, "2": {"d1": 7.0}}
    qrels = read_qrels(write(tmp_path, "q", "1 0 d1 1\n1 0 d9 2\n2 0 d1 0\n3 0 x -2\n"))
    assert qrels.to_dict() == {"1": {"d1": 1, "d9": 2}, "2": {"d1": 0}, "3": {"x": -2}}
    assert qrels.labels(["1", "1", "2", "4"], ["d9", "d2", "d1", "d1"]).tolist() == [2, 0, 0, 0]
    assert qrels.n_relevant(["1", "2", "3"]).tolist() == [2, 0, 0]


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 Q0 d1 1 2.5\n", r"a\.run:1: expected 6 fields 'qid Q0 docno rank score tag', got 5"),
        ("1 Q0 d1 1 2.5 t\n1 Q0 d2 x 2.0 t\n", r"a\.run:2: field 4 \(rank\) must be an integer, got 'x'"),
        ("1 Q0 d1 1 high t\n", r"a\.run:1: field 5 \(score\) must be a number, got 'high'"),
        ("1 Q0 d1 1 nan t\n", r"a\.run:1: field 5 \(score\) must be finite"),
        (
            "1 Q0 d1 1 2 t\n2 Q0 d1 1 2 t\n\n1 Q0 d1 3 1 t\n",
            r"a\.run:4: document 'd1' appears twice for query '1' \(first on line 1\)",
        ),
        ("\n\n", r"a\.run: the run is empty"),
    ],
)
def test_bad_runs_name_file_and_line(tmp_path, text, message):
    with pytest.raises(DataFormatError, match=message):
        read_run(write(tmp_path, "a.run", text))


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 0 d1\n", r"q:1: expected 4 fields 'qid iteration docno relevance', got 3"),
        ("1 0 d1 1\n1 0 d2 yes\n", r"q:2: field 4 \(relevance\) must be an integer, got 'yes'"),
        ("1 0 d1 1\n1 0 d1 0\n", r"q:2: document 'd1' is judged twice for query '1' \(first on line 1\)"),
    ],
)
def test_bad_qrels_name_file_and_line(tmp_path, text, message):
    with pytest.raises(DataFormatError, match=message):
        read_qrels(write(tmp_path, "q", text))


def test_written_run_is_in_trec_eval_order(tmp_path):
    # Query 10 sorts after query 9 (numerically). Within query 9, d1 and d3 tie at 1.0:
    # trec_eval puts the larger docno first, so d3 (rank 2) precedes d1 (rank 3).
    run = Run.from_dict({"10": {"a": 0.5}, "9": {"d1": 1.0, "d2": 3.0, "d3": 1.0}}, tag="t")
    text = format_run(run, tag="fused")
    assert text.splitlines() == [
        "9 Q0 d2 1 3.0 fused",
        "9 Q0 d3 2 1.0 fused",
        "9 Q0 d1 3 1.0 fused",
        "10 Q0 a 1 0.5 fused",
    ]
    path = tmp_path / "out.run"
    write_run(path, run, tag="fused", depth=2)
    assert path.read_text().splitlines() == text.splitlines()[:2] + text.splitlines()[3:]
    back = read_run(path)
    assert back.rank.tolist() == [1, 2, 1]
    with pytest.raises(ValueError, match="one word"):
        format_run(run, tag="two words")


def test_qrels_round_trip(tmp_path):
    q = Qrels(["2", "1", "1"], ["b", "z", "a"], [1, 0, 2])
    write_qrels(tmp_path / "q", q)
    assert (tmp_path / "q").read_text() == "1 0 a 2\n1 0 z 0\n2 0 b 1\n"
    assert read_qrels(tmp_path / "q").to_dict() == q.to_dict()


@pytest.mark.parametrize("seed", range(5))
def test_evaluate_run_matches_pytrec_eval(seed):
    # Random runs with many ties, unjudged documents and relevant documents the run misses.
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(12):
        docs = [f"D{int(i):03d}" for i in rng.choice(200, size=int(rng.integers(3, 40)), replace=False)]
        judged = docs[: int(len(docs) * 0.8)] + [f"X{q}{i}" for i in range(int(rng.integers(0, 3)))]
        qrels[str(q)] = {d: int(rng.choice([0, 0, 1, 2, -1])) for d in judged}
        run[str(q)] = {d: float(rng.integers(0, 5)) for d in docs}
    qrels["0"]["D999"] = 1  # never retrieved: still counts in AP's denominator
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_5", "recip_rank"})
    expected = evaluator.evaluate(run)
    r = Run.from_dict(run)
    q = Qrels.from_dict(qrels)
    for ours, theirs in (("map", "map"), ("p@5", "P_5"), ("mrr", "recip_rank")):
        got = evaluate_run(r, q, ours)
        # svmmap leaves out queries without a relevant document; trec_eval scores them 0.
        with_rel = {k for k, v in qrels.items() if any(x >= 1 for x in v.values())}
        assert set(got) == with_rel & set(run)
        for k, v in got.items():
            assert v == pytest.approx(expected[k][theirs], abs=1e-12), (ours, k)


def test_evaluations_carry_trec_eval_s_all_line():
    # Query 1: relevant d1 (rank 1) and d3 (rank 3), d5 never retrieved: AP = (1 + 2/3) / 3 = 5/9.
    # Query 2: its only relevant document d9 at rank 2: AP = 1/2. Query 3 is listed but the run
    # does not retrieve it: 0, as with trec_eval -c.
    run = Run.from_dict({"1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}, "2": {"d8": 2.0, "d9": 1.0}})
    qrels = Qrels.from_dict({"1": {"d1": 1, "d3": 2, "d5": 1}, "2": {"d9": 1}, "3": {"d4": 1}})
    ap = evaluate_run(run, qrels, "map")
    assert isinstance(ap, dict) and dict(ap) == pytest.approx({"1": 5 / 9, "2": 1 / 2})
    assert ap.mean == pytest.approx((5 / 9 + 1 / 2) / 2, abs=1e-12)
    with_3 = evaluate_run(run, qrels, "map", queries=["1", "2", "3"])
    assert with_3.mean == pytest.approx((5 / 9 + 1 / 2 + 0) / 3, abs=1e-12)
    # Counts add up over the queries on trec_eval's all line: 3 + 2 retrieved documents.
    result = evaluate_measures(run, qrels, ["map", "NumRet", "p@2"])
    assert result.means == pytest.approx({"map": (5 / 9 + 1 / 2) / 2, "NumRet": 5.0, "p@2": (1 / 2 + 1 / 2) / 2})
    assert result["NumRet"].mean == 5.0
    # A plain dict otherwise: its repr, equality and keys are those of the per-query values.
    assert repr(ap) == repr(dict(ap)) and ap == dict(ap) and list(ap) == ["1", "2"]
    # No query to average; query 7 is not judged, which a warning says.
    with pytest.warns(UserWarning, match="queries' '7'"):
        assert np.isnan(evaluate_run(run, qrels, "map", queries=["7"]).mean)


@pytest.mark.parametrize("seed", range(3))
def test_means_are_pytrec_eval_s_aggregates(seed):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(10):
        docs = [f"D{int(i):03d}" for i in rng.choice(100, size=int(rng.integers(3, 30)), replace=False)]
        qrels[str(q)] = {d: int(rng.choice([0, 1, 2])) for d in docs[: int(len(docs) * 0.7)]}
        run[str(q)] = {d: float(rng.integers(0, 5)) for d in docs}
    r, q = Run.from_dict(run), Qrels.from_dict(qrels)
    result = evaluate_measures(r, q, ["map", "P_5", "num_ret", "ndcg_cut_10"])
    # trec_eval's own aggregation (pytrec_eval.compute_aggregated_measure) of the per-query values.
    for name, trec_name in (("map", "map"), ("P_5", "P_5"), ("num_ret", "num_ret"), ("ndcg_cut_10", "ndcg_cut_10")):
        expected = pytrec_eval.compute_aggregated_measure(trec_name, list(result[name].values()))
        assert result.means[name] == pytest.approx(expected, abs=1e-12), name


def test_evaluate_run_given_a_list_of_measures_says_which_function_takes_a_list():
    run = Run.from_dict({"1": {"d1": 0.9, "d2": 0.8}})
    qrels = Qrels.from_dict({"1": {"d1": 1}})
    with pytest.raises(TypeError, match="evaluate_run takes one measure, evaluate_measures a list"):
        evaluate_run(run, qrels, ["map", "p@5"])
