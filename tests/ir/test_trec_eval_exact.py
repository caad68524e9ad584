"""trec_eval's ranks and numbers on adversarial runs, checked against pytrec_eval (trec_eval's code).

trec_eval keeps scores as C floats and breaks ties by decreasing docno (strcmp). The runs here
have scores that differ in the 8th to 17th significant digit (ties in float32, not in float64),
exact ties, scores beyond float32's range, and docnos that sort differently as strings and as
numbers. trec_eval's rank of every document is measured with pytrec_eval itself: a query in
which that document alone is relevant has reciprocal rank 1/rank.
"""

import shutil

import numpy as np
import pytest
from svmmap import metrics
from svmmap.ir.trec import Qrels, Run, evaluate_measures, evaluate_run, format_run, read_run, trec_ranks, write_run

pytrec_eval = pytest.importorskip("pytrec_eval")

TREC_MEASURES = {
    # svmmap / ir_measures name: pytrec_eval name
    "map": "map",
    "ndcg@10": "ndcg_cut_10",
    "ndcg": "ndcg",
    "p@5": "P_5",
    "recall@10": "recall_10",
    "rprec": "Rprec",
    "bpref": "bpref",
    "mrr": "recip_rank",
    "success@5": "success_5",
}


def trec_eval_ranks(run):
    """{(qid, docno): rank} as trec_eval ranks the run, measured through pytrec_eval."""
    probe_qrels, probe_run = {}, {}
    for q, docs in run.items():
        for d in docs:
            key = f"{q}|{d}"
            probe_qrels[key] = {d: 1}
            probe_run[key] = dict(docs)
    result = pytrec_eval.RelevanceEvaluator(probe_qrels, {"recip_rank"}).evaluate(probe_run)
    return {tuple(k.split("|", 1)): int(round(1.0 / v["recip_rank"])) for k, v in result.items()}


def adversarial_run(rng, n_queries=8):
    """Runs whose order hinges on float32 rounding, exact ties and docno string order."""
    run, qrels = {}, {}
    for q in range(n_queries):
        n = int(rng.integers(6, 30))
        # Docnos: numbers without padding ("9" > "10" as strings), zero-padded twins, mixed case
        # and non-ASCII, so that string order, numeric order and case-folded order all differ.
        pool = [str(int(i)) for i in rng.choice(200, size=n, replace=False)]
        pool[0] = "0" + pool[1]
        pool[2] = "Doc" + pool[2]
        pool[3] = "doc" + pool[3]
        pool[4] = "é" + pool[4]
        base = float(rng.choice([1.0, -3.75, 1234.5678, 1e-3, 7e5]))
        scores = {}
        for i, d in enumerate(pool):
            kind = i % 6
            if kind == 0:
                scores[d] = base  # exact ties
            elif kind == 1:
                # Differs from base in the 8th to 17th significant digit: ties in float32 or not.
                scores[d] = base * (1.0 + 10.0 ** -int(rng.integers(7, 17)))
            elif kind == 2:
                scores[d] = float(np.nextafter(base, np.inf))
            elif kind == 3:
                scores[d] = float(rng.choice([1e39, 2e39, -1e39, 1e-46, -0.0, 0.0]))  # inf, -inf or 0 in float32
            else:
                scores[d] = float(rng.normal())
        run[str(q)] = scores
        judged = pool[: max(3, n - 3)]
        qrels[str(q)] = {d: int(rng.choice([0, 0, 1, 2])) for d in judged}
    qrels["0"]["never-retrieved"] = 1
    qrels[str(n_queries - 1)] = {d: 0 for d in qrels[str(n_queries - 1)]}  # no relevant document
    return run, qrels


@pytest.mark.parametrize("seed", range(6))
def test_ranks_are_trec_evals(seed, tmp_path):
    run, qrels = adversarial_run(np.random.default_rng(seed))
    expected = trec_eval_ranks(run)
    r = Run.from_dict(run)
    ours = dict(zip(zip(r.qid.tolist(), r.docno.tolist()), trec_ranks(r.qid, r.docno, r.score).tolist()))
    assert ours == expected
    # The plain float64 order would disagree somewhere: the run is adversarial.
    float64_rank = {}
    for q, docs in run.items():
        for i, d in enumerate(sorted(docs, key=lambda d: (-docs[d], [-ord(c) for c in d]))):
            float64_rank[(q, d)] = i + 1
    assert float64_rank != expected
    # A written run lists every query's documents with ranks 1..n in trec_eval's order, and the
    # file read back (scores parsed from text, as trec_eval's atof does) ranks the same way.
    path = tmp_path / "adversarial.run"
    write_run(path, r)
    back = read_run(path)
    assert dict(zip(zip(back.qid.tolist(), back.docno.tolist()), back.rank.tolist())) == expected
    assert trec_eval_ranks(back.to_dict()) == expected


@pytest.mark.parametrize("seed", range(6))
def test_measures_are_trec_evals(seed):
    run, qrels = adversarial_run(np.random.default_rng(100 + seed))
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES.values())).evaluate(run)
    got = evaluate_measures(Run.from_dict(run), Qrels.from_dict(qrels), list(TREC_MEASURES), conventions="trec_eval")
    for ours, theirs in TREC_MEASURES.items():
        assert set(got[ours]) == set(expected), ours
        for q, v in got[ours].items():
            # The same trec_eval code on the same order: the same double, not just close.
            assert v == expected[q][theirs], (ours, q)
    # ir_measures' and trec_eval's spellings, and a relevance level of 2, give trec_eval's numbers too.
    graded = pytrec_eval.RelevanceEvaluator(qrels, {"P_5", "map"}, relevance_level=2).evaluate(run)
    other = evaluate_measures(
        Run.from_dict(run), Qrels.from_dict(qrels), ["P(rel=2)@5", "AP(rel=2)", "ndcg_cut_10", "recip_rank"]
    )
    for q in expected:
        assert other["P(rel=2)@5"][q] == graded[q]["P_5"] and other["AP(rel=2)"][q] == graded[q]["map"]
        assert other["ndcg_cut_10"][q] == expected[q]["ndcg_cut_10"]
        assert other["recip_rank"][q] == expected[q]["recip_rank"]
    # svmmap's conventions keep the same values on the queries with a relevant document.
    with_rel = {q for q, docs in qrels.items() if any(r >= 1 for r in docs.values())}
    skip = evaluate_run(Run.from_dict(run), Qrels.from_dict(qrels), "map")
    assert set(skip) == with_rel & set(run)
    assert all(skip[q] == expected[q]["map"] for q in skip)


def test_other_tools_rank_as_trec_eval():
    # Three documents tie at 1.0: trec_eval ranks them c, b, a (decreasing docno). Only a is
    # relevant (rank 3), b is unjudged. Tools that break ties otherwise (the MS MARCO RR@k
    # sorts by increasing docno, which would put a first) must still see trec_eval's order.
    run = Run.from_dict({"1": {"a": 1.0, "b": 1.0, "c": 1.0}})
    qrels = Qrels.from_dict({"1": {"a": 1, "c": 0}})
    got = evaluate_measures(run, qrels, ["mrr@2", "mrr@3", "judged@1", "judged@2", "success@2"])
    assert got["mrr@2"] == {"1": 0.0}
    assert got["mrr@3"] == {"1": pytest.approx(1 / 3)}
    assert got["judged@1"] == {"1": 1.0}  # c is judged
    assert got["judged@2"] == {"1": 0.5}  # b is not
    assert got["success@2"] == {"1": 0.0}


@pytest.mark.skipif(shutil.which("perl") is None, reason="ir_measures computes ERR@k with gdeval, a Perl script")
def test_err_uses_trec_evals_order():
    # As above, the relevant document a is third in trec_eval's order: ERR@2 is 0 and ERR@3 is
    # not. gdeval's own tie rule would put a first and give ERR@2 > 0.
    run = Run.from_dict({"1": {"a": 1.0, "b": 1.0, "c": 1.0}})
    qrels = Qrels.from_dict({"1": {"a": 1, "b": 0, "c": 0}})
    got = evaluate_measures(run, qrels, ["err@2", "err@3"])
    assert got["err@2"]["1"] == 0.0
    assert got["err@3"]["1"] > 0.0


def test_format_run_breaks_float32_ties_by_docno():
    # 1 + 1e-9 and 1 are the same float32, so trec_eval ranks the larger docno, "b", first
    # even though "a" has the larger double.
    run = Run.from_dict({"1": {"a": 1.0 + 1e-9, "b": 1.0, "c": 1.0 + 1e-6}})
    assert format_run(run, tag="t").splitlines() == [
        "1 Q0 c 1 1.000001 t",
        "1 Q0 b 2 1.0 t",
        "1 Q0 a 3 1.000000001 t",
    ]


def test_array_conventions_trec_eval_match_pytrec_eval():
    # LETOR-style arrays: no docnos, so ties are made impossible except in float32, where the
    # trec_eval preset must see them. Docnos are then chosen so that trec_eval's docno rule
    # equals the preset's pessimistic tie rule (a lower grade gets a larger docno).
    rng = np.random.default_rng(7)
    n_q, per_q = 30, 12
    qid = np.repeat(np.arange(n_q), per_q)
    y = rng.choice([0, 0, 0, 1, 2], size=n_q * per_q)
    y[qid < 5] = 0  # five queries without a relevant document
    scores = rng.normal(size=n_q * per_q)
    scores[::3] = 0.5
    scores[1::3] = 0.5 * (1 + 1e-12)  # the same float32 as 0.5
    qrels, run = {}, {}
    for i, (label, s, q) in enumerate(zip(y, scores, qid)):
        d = f"{9 - int(label)}_{i:06d}"
        qrels.setdefault(str(q), {})[d] = int(label)
        run.setdefault(str(q), {})[d] = float(s)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10", "P_10", "recip_rank"}).evaluate(run)
    for ours, theirs in (("map", "map"), ("ndcg@10", "ndcg_cut_10"), ("p@10", "P_10"), ("mrr", "recip_rank")):
        pq = metrics.per_query(ours, y, scores, qid, conventions="trec_eval")
        assert pq.qids.tolist() == list(range(n_q)) and pq.n_undefined == 5
        expected = [ref[str(q)][theirs] for q in pq.qids.tolist()]
        np.testing.assert_allclose(pq.values, expected, rtol=0, atol=1e-12, err_msg=ours)
        mean = metrics.evaluate(y, scores, qid, [ours], conventions="trec_eval")[ours]
        assert mean == pytest.approx(np.mean(expected), abs=1e-12)
    # svmmap's default leaves the five queries out: its MAP is the mean over the other 25.
    skip = metrics.per_query("map", y, scores, qid)
    assert skip.qids.tolist() == list(range(5, n_q))
    # The same conventions on the float64 scores order the near-ties by their doubles, and
    # disagree with trec_eval: the float32 rounding is what makes the preset match.
    f64 = metrics.per_query("map", y, scores, qid, no_relevant=0, gain="linear")
    assert not np.allclose(f64.values, [ref[str(q)]["map"] for q in f64.qids.tolist()], rtol=0, atol=1e-12)


def test_conventions_presets_and_overrides():
    y, s, q = [1, 0, 0, 0], [0.2, 0.9, 0.5, 0.1], [1, 1, 2, 2]
    # Query 1: the relevant document is second, AP 1/2; query 2 has no relevant document.
    assert metrics.mean_average_precision(y, s, q) == 0.5
    assert metrics.mean_average_precision(y, s, q, conventions="trec_eval") == 0.25
    assert metrics.mean_average_precision(y, s, q, conventions="letor") == 0.25
    assert metrics.mean_average_precision(y, s, q, conventions="trec_eval", no_relevant="skip") == 0.5
    # LETOR's script keeps the file order for equal scores; svmmap's default is pessimistic.
    assert metrics.mrr([0, 1], [1.0, 1.0], conventions="letor") == 0.5
    assert metrics.mrr([1, 0], [1.0, 1.0], conventions="letor") == 1.0
    assert metrics.mrr([1, 0], [1.0, 1.0]) == 0.5
    result = metrics.evaluate(y, s, q, ["map"], conventions="trec_eval")
    assert result.conventions == "trec_eval" and result.per_query["map"].conventions == "trec_eval"
    with pytest.raises(ValueError, match="conventions must be one of 'svmmap', 'trec_eval', 'letor', got 'trec'"):
        metrics.per_query("map", y, s, q, conventions="trec")


def test_cli_evaluate_run(tmp_path, capsys):
    from svmmap.cli import main

    run, qrels = adversarial_run(np.random.default_rng(3))
    write_run(tmp_path / "a.run", Run.from_dict(run, tag="adv"))
    (tmp_path / "q").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    names = "map,ndcg@10,recall@10,rprec,bpref,mrr,success@5"
    args = ["evaluate", "--run", str(tmp_path / "a.run"), "--qrels", str(tmp_path / "q"), "--metrics", names]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("conventions: trec_eval (")
    table = {line.split()[0]: line.split() for line in lines[1:]}
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES.values())).evaluate(run)
    for name in names.split(","):
        mean = np.mean([v[TREC_MEASURES[name]] for v in expected.values()])
        assert float(table[name][1]) == pytest.approx(mean, abs=5e-5), name
        assert table[name][2] == f"({len(expected)}"
    assert main(args[:-1] + ["map", "--conventions", "svmmap"]) == 0
    out = capsys.readouterr().out
    with_rel = [q for q, docs in qrels.items() if any(r >= 1 for r in docs.values())]
    assert out.startswith("conventions: svmmap (") and f"({len(with_rel)} queries)" in out
    assert main(args[:-1] + ["foo"]) == 2
    assert "svmmap evaluate: error: unknown measure 'foo'" in capsys.readouterr().err
    assert main(["evaluate", "--run", str(tmp_path / "a.run")]) == 2
    assert "--run and --qrels go together" in capsys.readouterr().err


def test_cli_evaluate_arrays_prints_conventions(tmp_path, capsys):
    from svmmap.cli import main

    # Query 1: relevant document second (AP 1/2); query 2: no relevant document.
    (tmp_path / "d.txt").write_text("1 qid:1 1:0\n0 qid:1 1:1\n0 qid:2 1:0\n0 qid:2 1:1\n")
    (tmp_path / "p.txt").write_text("0.2\n0.9\n0.5\n0.1\n")
    for conventions, expected in (
        # Query 2 is left out under svmmap's convention and counted as 0 under trec_eval's
        # (it used to say "undefined" for both).
        ("svmmap", "0.5000  (1 queries; 1 without a relevant document, left out)"),
        ("trec_eval", "0.2500  (2 queries; 1 without a relevant document, counted as 0)"),
    ):
        assert (
            main(
                [
                    "evaluate",
                    "--conventions",
                    conventions,
                    "--metrics",
                    "map",
                    str(tmp_path / "d.txt"),
                    str(tmp_path / "p.txt"),
                ]
            )
            == 0
        )
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith(f"conventions: {conventions} (")
        assert out[1] == f"map  {expected}"
    assert (
        main(["evaluate", "--no-relevant", "0", "--metrics", "map", str(tmp_path / "d.txt"), str(tmp_path / "p.txt")])
        == 0
    )
    assert capsys.readouterr().out.startswith("conventions: svmmap with no_relevant changed (")
