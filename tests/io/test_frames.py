"""pandas in and out: runs, qrels and evaluations as DataFrames (``to_frame``) and back
(``from_frame``), checked against hand-made inputs and by round trips."""

import subprocess
import sys

import numpy as np
import pytest
from svmmap.ir.trec import Qrels, Run, read_run, write_run
from svmmap.metrics import Evaluation, PerQuery, evaluate, per_query

pd = pytest.importorskip("pandas")


# ---------------------------------------------------------------------------------------
# Runs


def test_run_to_frame_by_hand():
    run = Run(["1", "1", "2"], ["d1", "d2", "d7"], [0.5, 0.9, 0.3], [2, 1, 1], tag="bm25", name="x")
    frame = run.to_frame()
    assert list(frame.columns) == ["qid", "docno", "score", "rank"]
    assert frame["qid"].tolist() == ["1", "1", "2"]
    assert frame["docno"].tolist() == ["d1", "d2", "d7"]
    assert frame["score"].tolist() == [0.5, 0.9, 0.3]
    assert frame["rank"].tolist() == [2, 1, 1]
    assert frame["score"].dtype == np.float64 and frame["rank"].dtype == np.int64


def test_run_from_pyterrier_and_ir_datasets_frames():
    # PyTerrier's retrieval output (with its extra columns and ranks from 0) and ir_datasets'
    # scoreddocs (no rank: ranks follow trec_eval's order, ties by decreasing docno).
    pyt = pd.DataFrame(
        {
            "qid": ["q1", "q1", "q2"],
            "query": ["a b", "a b", "c"],
            "docno": ["d1", "d2", "d1"],
            "score": [2.0, 3.0, 1.0],
            "rank": [1, 0, 0],
        }
    )
    run = Run.from_frame(pyt, tag="BM25", name="terrier")
    assert run.qid.tolist() == ["q1", "q1", "q2"] and run.docno.tolist() == ["d1", "d2", "d1"]
    assert run.score.tolist() == [2.0, 3.0, 1.0] and run.rank.tolist() == [1, 0, 0]
    assert (run.tag, run.name) == ("BM25", "terrier")
    ird = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "c", "b"], "score": [0.5, 0.5, 0.9]})
    run = Run.from_frame(ird)
    assert run.rank.tolist() == [3, 2, 1]  # b first; a and c tie, the larger docno c first
    # A dict of columns with integer query ids: the ids become their decimal strings.
    run = Run.from_frame({"qid": np.array([10, 10, 2]), "docno": ["a", "b", "a"], "score": [1, 2, 3]})
    assert run.qid.tolist() == ["10", "10", "2"] and run.rank.tolist() == [2, 1, 1]


def test_run_frame_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame(
        {
            "qid": rng.choice(["1", "2", "30", "x"], size=n),
            "docno": [f"d{i}" for i in range(n)],
            "score": rng.normal(size=n).round(2),  # rounded, so that there are ties
            "rank": rng.integers(1, 50, size=n),
        }
    )
    run = Run.from_frame(frame, tag="t", name="n")
    # frame -> Run -> frame gives the same frame, and Run -> frame -> Run the same run.
    pd.testing.assert_frame_equal(run.to_frame(), frame, check_dtype=False)
    assert Run.from_frame(run.to_frame(), tag="t", name="n") == run
    # Through a file: the written ranks are trec_eval's, the same as from_frame without a rank.
    write_run(tmp_path / "r.run", run)
    back = read_run(tmp_path / "r.run")
    without_rank = Run.from_frame(frame.drop(columns="rank"))
    assert back.to_dict() == without_rank.to_dict()
    assert dict(zip(zip(back.qid, back.docno), back.rank.tolist())) == dict(
        zip(zip(without_rank.qid, without_rank.docno), without_rank.rank.tolist())
    )


def test_run_frames_keep_the_tag_and_the_name():
    run = Run.from_dict({"1": {"a": 1.0, "b": 2.0}, "2": {"c": 0.5}}, tag="bm25", name="runs/bm25.txt")
    frame = run.to_frame()
    assert frame.attrs == {"tag": "bm25", "name": "runs/bm25.txt"}
    assert list(frame.columns) == ["qid", "docno", "score", "rank"]  # PyTerrier's layout, no extra column
    back = Run.from_frame(frame)
    assert (back.tag, back.name) == ("bm25", "runs/bm25.txt") and back == run
    # pandas keeps attrs through a copy and a row selection, as PyTerrier's transformers make them.
    assert Run.from_frame(frame.copy()[frame["qid"] == "1"]).tag == "bm25"
    # A tag or name given to from_frame wins over the frame's; without either, "run".
    assert Run.from_frame(frame, tag="other").tag == "other"
    assert Run.from_frame(frame, name="n").name == "n"
    plain = Run.from_frame(frame.to_dict("list"))
    assert (plain.tag, plain.name) == ("run", "run")
    # attrs holding something other than a str (another library's metadata) are not a tag.
    odd = frame.copy()
    odd.attrs = {"tag": 3}
    assert Run.from_frame(odd).tag == "run"


def test_run_equality_compares_every_column():
    run = Run.from_dict({"1": {"a": 1.0, "b": 2.0}}, tag="t")
    assert run == Run.from_dict({"1": {"a": 1.0, "b": 2.0}}, tag="t")
    assert run != Run.from_dict({"1": {"a": 1.0, "b": 2.5}}, tag="t")
    assert run != Run.from_dict({"1": {"a": 1.0, "b": 2.0}}, tag="u")
    assert run != "run"


# The columns an id may come in from a frame, with the ids they mean. A float column (what pandas
# makes of an integer column with a gap) or a missing value would otherwise become ids such
# as "1.0" or "nan", which match nothing in qrels that say "1".
BAD_IDS = [
    ([1.0, 2.0], "the float 1.0|1.0 of type float"),
    (np.array([1.0, 2.0]), "1.0 of type float"),
    (["a", None], "row 1 is missing"),
    (np.array(["a", np.nan], dtype=object), "row 1 is missing"),
    (pd.Series(["a", None], dtype="string"), "row 1 is missing"),
    (pd.Series([1, None], dtype="Int64"), "row 1 is missing"),
    ([True, False], "True of type bool"),
    (np.array([True, False]), "True of type bool"),
    ([("a", 1), ("b", 2)], "one column|\\('a', 1\\) of type tuple"),
]


@pytest.mark.parametrize("values, message", BAD_IDS)
@pytest.mark.parametrize("column", ["qid", "docno"])
def test_frames_with_ids_that_are_not_ids_are_refused(values, message, column):
    good = {"qid": ["1", "2"], "docno": ["a", "b"], "score": [1.0, 2.0], "label": [1, 0]}
    frame = dict(good, **{column: values})
    for make in (Run.from_frame, Qrels.from_frame):
        with pytest.raises(ValueError, match=message):
            make(frame)
        with pytest.raises(ValueError, match=message):
            make(pd.DataFrame(frame))


def test_frames_with_a_document_twice_are_refused():
    with pytest.raises(ValueError, match=r"run: document 'a' appears twice for query '1' \(rows 0 and 2"):
        Run.from_frame({"qid": ["1", "2", "1"], "docno": ["a", "a", "a"], "score": [1, 2, 3]})
    with pytest.raises(ValueError, match=r"qrels: document 'a' is judged twice for query '1' \(rows 0 and 2"):
        Qrels.from_frame({"qid": ["1", "2", "1"], "docno": ["a", "a", "a"], "label": [1, 0, 1]})


@pytest.mark.parametrize(
    "frame, message",
    [
        ({"docno": ["a"], "score": [1.0]}, "run: no query column; expected one of qid, query_id, got docno, score"),
        ({"qid": ["1"], "score": [1.0]}, "no document column; expected one of docno, doc_id"),
        ({"qid": ["1"], "docno": ["a"]}, "no score column"),
        ({"qid": ["1"], "docno": ["a"], "score": [np.nan]}, "scores must be finite"),
        ({"qid": ["1"], "docno": ["a"], "score": ["high"]}, "score must hold numbers"),
        ({"qid": ["1"], "docno": ["a"], "score": [1.0], "rank": [1.5]}, "rank must hold integers"),
    ],
)
def test_run_frames_with_bad_columns_are_refused(frame, message):
    with pytest.raises(ValueError, match=message):
        Run.from_frame(frame)


# ---------------------------------------------------------------------------------------
# Qrels


def test_qrels_frame_round_trips():
    frame = pd.DataFrame({"qid": ["3", "1", "1"], "docno": ["x", "b", "a"], "label": [0, 2, -1]})
    qrels = Qrels.from_frame(frame, name="q")
    assert qrels.to_dict() == {"3": {"x": 0}, "1": {"b": 2, "a": -1}}
    pd.testing.assert_frame_equal(qrels.to_frame(), frame, check_dtype=False)
    assert qrels.to_frame()["label"].dtype == np.int64
    assert Qrels.from_frame(qrels.to_frame(), name="q") == qrels
    # The name travels in the frame's attrs; a name given wins, a dict of columns has none.
    assert qrels.to_frame().attrs == {"name": "q"}
    assert Qrels.from_frame(qrels.to_frame()) == qrels
    assert Qrels.from_frame(qrels.to_frame(), name="other").name == "other"
    assert Qrels.from_frame(frame.to_dict("list")).name == "qrels"


# ---------------------------------------------------------------------------------------
# Evaluations


def test_per_query_to_frame_by_hand():
    # Query 1: relevant documents at ranks 1 and 3, AP = (1 + 2/3) / 2 = 5/6. Query 2 has no
    # relevant document: left out by default, 0 with no_relevant=0.
    y, scores, qid = [1, 0, 1, 0, 0], [4, 3, 2, 2, 1], ["a", "a", "a", "b", "b"]
    frame = per_query("map", y, scores, qid).to_frame()
    assert list(frame.columns) == ["qid", "map"]
    assert frame["qid"].tolist() == ["a"] and frame["map"].tolist() == [pytest.approx(5 / 6, abs=1e-15)]
    frame = per_query("map", y, scores, qid, no_relevant=0).to_frame()
    assert frame["qid"].tolist() == ["a", "b"] and frame["map"].tolist() == [pytest.approx(5 / 6), 0.0]
    by_hand = PerQuery("ndcg@3", np.array([7, 9]), np.array([0.25, 1.0]), 0)
    pd.testing.assert_frame_equal(by_hand.to_frame(), pd.DataFrame({"qid": [7, 9], "ndcg@3": [0.25, 1.0]}))


def test_evaluation_to_frame_by_hand():
    # Query 10: relevant document second (AP 1/2, RR 1/2, ROC area 0: the one pair is wrong).
    # Query 20: only relevant documents (AP 1, RR 1, ROC undefined: no non-relevant one).
    # Query 30: no relevant document (every metric undefined, left out).
    y = [0, 1, 1, 1, 0, 0]
    scores = [2, 1, 2, 1, 2, 1]
    qid = [10, 10, 20, 20, 30, 30]
    result = evaluate(y, scores, qid, ["map", "mrr", "roc"])
    frame = result.to_frame()
    expected = pd.DataFrame(
        {"qid": [10, 20, 30], "map": [0.5, 1.0, np.nan], "mrr": [0.5, 1.0, np.nan], "roc": [0.0, np.nan, np.nan]}
    )
    pd.testing.assert_frame_equal(frame, expected)
    # The column means are the Evaluation's means, because both skip the undefined queries.
    for metric in ("map", "mrr", "roc"):
        assert frame[metric].mean() == pytest.approx(result.means[metric], abs=1e-15)
    # Counted as 0 instead, the queries are in every column.
    zero = evaluate(y, scores, qid, ["map", "roc"], no_relevant=0).to_frame()
    assert zero["map"].tolist() == [0.5, 1.0, 0.0] and zero["roc"].tolist() == [0.0, 0.0, 0.0]


def test_evaluation_to_frame_without_qids_lists_the_queries_with_values():
    made = Evaluation(
        means={"map": 0.5, "roc": 1.0},
        per_query={
            "map": PerQuery("map", np.array(["b", "a"]), np.array([0.0, 1.0]), 0),
            "roc": PerQuery("roc", np.array(["c"]), np.array([1.0]), 2),
        },
        n_queries=3,
        n_undefined={"map": 0, "roc": 2},
    )
    frame = made.to_frame()
    assert frame["qid"].tolist() == ["b", "a", "c"]
    np.testing.assert_array_equal(frame["map"], [0.0, 1.0, np.nan])
    np.testing.assert_array_equal(frame["roc"], [np.nan, np.nan, 1.0])


def test_evaluation_frames_agree_with_per_query_on_random_data():
    # Many queries, some without a relevant or a non-relevant document, and tied scores.
    rng = np.random.default_rng(5)
    n = 600
    qid = rng.integers(0, 80, size=n)
    y = (rng.random(n) < 0.3).astype(float)
    scores = rng.integers(0, 5, size=n).astype(float)
    metrics = ["map", "ndcg@5", "mrr", "roc", "p@3"]
    for conventions in ("svmmap", "trec_eval", "letor"):
        result = evaluate(y, scores, qid, metrics, conventions=conventions)
        frame = result.to_frame()
        assert frame["qid"].tolist() == sorted(set(qid.tolist()))
        for metric in metrics:
            pq = result.per_query[metric]
            # The metric's own queries carry its values; the rest are NaN.
            got = frame.set_index("qid")[metric]
            np.testing.assert_array_equal(got.loc[pq.qids].to_numpy(), pq.values)
            assert got.drop(index=pq.qids).isna().all()
            assert frame[metric].mean() == pytest.approx(result.means[metric], abs=1e-12)


def test_pandas_is_imported_only_by_to_frame():
    code = (
        "import sys, svmmap, svmmap.metrics, svmmap.ir.trec;"
        "assert 'pandas' not in sys.modules;"
        "svmmap.metrics.evaluate([1, 0], [1, 0]).to_frame();"
        "assert 'pandas' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
