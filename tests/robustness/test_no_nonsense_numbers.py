"""No silent nonsense number (issue 25): every number svmmap returns is either the metric's
defined value or refused with a message. Per class, the issue's examples and a generated
hostile loop:

- signed zeros are one score, in every metric, tie convention, oracle and the TREC run path;
- NDCG never has a negative gain: a relevant document needs a label >= 0;
- a prediction that overflows float64 is refused, naming the row, by the API and the CLI alike;
- SVMMapCV never chooses C on NaN, and refuses split lists that cut a query.
"""

import warnings

import numpy as np
import pytest
import svmmap
from svmmap import _core, metrics
from svmmap.ir.trec import Qrels, Run, evaluate_run

METRICS = ["map", "ndcg", "ndcg@2", "mrr", "mrr@1", "roc", "p@1", "p@3"]


# --- signed zeros -------------------------------------------------------------------------


@pytest.mark.parametrize("ties", ["pessimistic", "input"])
def test_minus_zero_ties_with_zero(ties):
    # The case: y = [1, 0]. Scores [0.0, -0.0] tie, so the pessimistic rule puts the
    # non-relevant document first (AP 1/2), like [0.0, 0.0]; input order puts the relevant
    # first (AP 1) both times.
    expected = 0.5 if ties == "pessimistic" else 1.0
    for scores in ([0.0, -0.0], [0.0, 0.0], [-0.0, 0.0], [-0.0, -0.0]):
        assert metrics.mean_average_precision([1, 0], scores, ties=ties) == expected, scores
    # With the relevant document second in the input, input order ranks it second: AP 1/2.
    assert metrics.mean_average_precision([0, 1], [-0.0, 0.0], ties="input") == 0.5


@pytest.mark.slow
def test_signed_zeros_are_one_score_in_every_metric_and_convention():
    # Generated: queries with many zero scores of random sign (as X @ w gives them). Turning
    # every -0.0 into +0.0 must change no metric under any convention.
    rng = np.random.default_rng(25)
    for case in range(200):
        n = int(rng.integers(2, 30))
        y = rng.choice([0.0, 1.0, 2.0], size=n)
        qid = rng.integers(0, 3, size=n)
        scores = rng.choice([0.0, 1.0, -1.0, 0.5], size=n)
        signed = np.where((scores == 0) & (rng.random(n) < 0.5), -0.0, scores)
        for conventions in ("svmmap", "trec_eval", "letor"):
            for ties in ("pessimistic", "input"):
                got = metrics.evaluate(y, signed, qid, METRICS, conventions=conventions, ties=ties)
                want = metrics.evaluate(y, scores, qid, METRICS, conventions=conventions, ties=ties)
                assert got.means == pytest.approx(want.means, nan_ok=True), (case, conventions, ties)


def test_signed_zeros_are_one_score_for_every_oracle():
    # Every loss of the registry: flipping the sign of zero scores changes neither the loss
    # nor the cutting plane (the oracles order scores by one key).
    rng = np.random.default_rng(7)
    names = [name for info in _core.LOSSES for name in info["examples"]] + ["max(map,roc)"]
    for case in range(60):
        n = int(rng.integers(2, 12))
        relevant = rng.random(n) < 0.4
        relevant[0], relevant[-1] = True, False
        scores = rng.choice([0.0, 0.0, 1.0, -1.0], size=n)
        signed = np.where((scores == 0) & (rng.random(n) < 0.5), -0.0, scores)
        for name in names:
            d1, c1 = _core.oracle_argmax(scores, relevant, name)
            d2, c2 = _core.oracle_argmax(signed, relevant, name)
            assert d1 == d2 and np.array_equal(c1, c2), (case, name, signed)


def test_signed_zeros_tie_in_the_trec_run_path():
    # A TREC run breaks ties by docno (decreasing): -0.0 and +0.0 must tie there too.
    qrels = Qrels.from_dict({"1": {"a": 1, "b": 0}})
    for scores in ({"a": 0.0, "b": -0.0}, {"a": -0.0, "b": 0.0}, {"a": 0.0, "b": 0.0}):
        # Equal scores: "b" (the larger docno) first, so AP = 1/2.
        assert evaluate_run(Run.from_dict({"1": scores}), qrels) == {"1": 0.5}, scores


# --- NDCG grades --------------------------------------------------------------------------


def test_ndcg_refuses_relevant_labels_below_zero():
    # The case: relevance_threshold=-2 makes the -1 labels relevant, with gain 2^-1 - 1.
    y = np.array([1.0, -1.0, -1.0, 1.0])
    s = np.array([0.1, 0.9, 0.8, 0.2])
    with pytest.raises(ValueError, match=r"y_true\[1\] is -1.*relevance_threshold -2.*>= 0"):
        metrics.ndcg(y, s, relevance_threshold=-2)
    with pytest.raises(ValueError, match="relevance_threshold -2"):
        metrics.ndcg(y, s, relevance_threshold=-2, conventions="letor")
    # Labels at or below the threshold are not relevant: grade 0, whatever their value.
    assert metrics.ndcg(y, s) == pytest.approx((1 / np.log2(4) + 1 / np.log2(5)) / (1 + 1 / np.log2(3)))
    # Other metrics need no grade: with every document relevant, AP is 1.
    assert metrics.mean_average_precision(y, s, relevance_threshold=-2) == 1.0


def test_ndcg_is_between_zero_and_one_or_refused():
    # Generated: thresholds and labels of both signs, both gains, every convention.
    rng = np.random.default_rng(3)
    for case in range(300):
        n = int(rng.integers(1, 12))
        y = rng.choice([-3.0, -1.0, 0.0, 0.5, 1.0, 2.0], size=n)
        s = rng.standard_normal(n)
        threshold = float(rng.choice([-4.0, -2.0, -1.0, 0.0, 0.5, 1.0]))
        gain = str(rng.choice(["exp", "linear"]))
        conventions = str(rng.choice(["svmmap", "letor", "trec_eval"]))
        relevant_negative = bool(np.any((y > threshold) & (y < 0)))
        for k in (None, 1, 3):
            try:
                value = metrics.ndcg(y, s, k=k, relevance_threshold=threshold, gain=gain, conventions=conventions)
            except ValueError as exc:
                assert relevant_negative, (case, exc)
                continue
            assert not relevant_negative, (case, y, threshold)
            assert np.isnan(value) or 0.0 <= value <= 1.0 + 1e-12, (case, value)


# --- overflowing predictions ----------------------------------------------------------------


def _fitted():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    model = svmmap.SVMMap(C=1.0).fit(X, [1, 0, 1, 0], qid=[1, 1, 1, 1])
    # A model with weights whose products with finite features overflow.
    model.coef_ = np.array([2.0, 2.0])
    return model


def test_predict_refuses_an_overflowing_score_as_classify_does(tmp_path):
    model = _fitted()
    X = np.array([[1.0, 1.0], [1e308, 1.0], [1e308, 1.0]])
    with pytest.raises(ValueError, match=r"score of row 1 is inf .*scale them"):
        model.predict(X)
    with pytest.raises(ValueError, match="score of row 1 is inf"):
        model.score(X, [1, 0, 0], qid=[1, 1, 1])
    model.save(tmp_path / "m.json")
    test = tmp_path / "test.txt"
    test.write_text("1 qid:1 1:1 2:1\n0 qid:1 1:1e308 2:1\n0 qid:1 1:1e308 2:1\n")
    from svmmap.cli import main

    assert main(["classify", str(test), str(tmp_path / "m.json"), str(tmp_path / "p.txt")]) != 0
    assert not (tmp_path / "p.txt").exists()
    loaded = svmmap.load_model(tmp_path / "m.json")
    with pytest.raises(ValueError, match="score of row 1 is inf"):
        loaded.predict(X)


def test_every_prediction_is_finite_or_refused():
    # Generated: magnitudes around the overflow of w.x, both signs, dense and sparse.
    import scipy.sparse as sp

    model = _fitted()
    rng = np.random.default_rng(11)
    for case in range(200):
        X = rng.choice([0.0, 1.0, -1.0], size=(5, 2)) * 10.0 ** rng.integers(300, 309, size=(5, 2))
        for data in (X, sp.csr_matrix(X)):
            with np.errstate(over="ignore"):
                expected = X @ model.coef_
            try:
                got = model.predict(data)
            except ValueError as exc:
                row = int(np.flatnonzero(~np.isfinite(expected))[0])
                assert f"row {row} " in str(exc), (case, exc)
                continue
            assert np.all(np.isfinite(got)) and np.array_equal(got, expected), case


# --- choosing C ---------------------------------------------------------------------------


def _data(n_queries=6, seed=0):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), 6)
    X = rng.standard_normal((qid.size, 3))
    y = (X[:, 0] + 0.5 * rng.standard_normal(qid.size) > 0).astype(float)
    y[::6] = 1.0  # every query has a relevant document ...
    y[1::6] = 0.0  # ... and a non-relevant one
    return X, y, qid


def test_cv_skips_a_split_without_a_relevant_document_and_never_chooses_on_nan():
    X, y, qid = _data()
    y = y.copy()
    y[qid >= 4] = 0.0  # queries 4 and 5: no relevant document
    splits = [(np.flatnonzero(qid < 4), np.flatnonzero(qid >= 4)), (np.flatnonzero(qid >= 2), np.flatnonzero(qid < 2))]
    with pytest.warns(UserWarning, match=r"splits \[0\].*left out of the mean"):
        cv = svmmap.SVMMapCV(Cs=[0.01, 1.0, 100.0], cv=splits).fit(X, y, qid=qid)
    assert np.isfinite(cv.best_score_)
    assert np.all(np.isnan(cv.cv_results_["split0_test_score"]))
    assert np.array_equal(cv.cv_results_["mean_test_score"], cv.cv_results_["split1_test_score"])
    # Only splits without a relevant document: nothing to choose on.
    with pytest.raises(ValueError, match="no validation split has a query"):
        svmmap.SVMMapCV(Cs=[0.01, 1.0], cv=splits[:1]).fit(X, y, qid=qid)


def test_choose_C_never_chooses_on_nan():
    from svmmap._search.selection import choose_C

    rng = np.random.default_rng(5)
    for case in range(200):
        values = rng.choice([np.nan, 0.1, 0.5, 0.9], size=int(rng.integers(1, 6)))
        grid = [float(10.0**i) for i in range(values.size)]
        if np.all(np.isnan(values)):
            with pytest.raises(ValueError, match="NaN validation score"):
                choose_C(grid, lambda C: (float(values[grid.index(C)]), None))
            continue
        chosen = choose_C(grid, lambda C: (float(values[grid.index(C)]), None))
        assert chosen.score == np.nanmax(values), case
        assert chosen.C == grid[int(np.nanargmax(values))], case


def test_cv_refuses_split_lists_that_cut_a_query():
    X, y, qid = _data()
    qid = np.array([f"q{q}" for q in qid])
    rows = np.arange(qid.size)
    cut = [(rows[:20], rows[20:]), (rows[16:], rows[:16])]  # 20 and 16 fall inside queries
    with pytest.raises(ValueError, match=r"split 0 of cv puts rows of query 'q3' both in training and in validation"):
        svmmap.SVMMapCV(Cs=[1.0], cv=cut).fit(X, y, qid=qid)
    # Generated: random cuts are refused exactly when a query has rows on both sides.
    rng = np.random.default_rng(9)
    for _ in range(40):
        side = rng.random(qid.size) < 0.5
        if rng.random() < 0.5:  # whole queries on each side
            side = np.isin(qid, rng.choice(np.unique(qid), 3, replace=False))
        train, test = rows[~side], rows[side]
        if train.size == 0 or test.size == 0:
            continue
        is_cut = bool(np.intersect1d(qid[train], qid[test]).size)
        model = svmmap.SVMMapCV(Cs=[1.0], cv=[(train, test)], refit=False)
        if is_cut:
            with pytest.raises(ValueError, match="both in training and in validation"):
                model.fit(X, y, qid=qid)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y, qid=qid)


def test_a_relevance_threshold_that_is_not_a_number_is_refused_by_every_metric():
    # Generated: NaN and infinite thresholds, with every metric, preset and entry point. A NaN
    # threshold made no label relevant and every value NaN, silently; -inf made every label
    # relevant (NDCG 0.73 on queries whose relevant documents were not found). The core checks
    # it once for the API, the presets and `svmmap evaluate`.
    rng = np.random.default_rng(7)
    y = rng.choice([0.0, 1.0, 2.0], size=30)
    qid = np.repeat(np.arange(3), 10)
    scores = rng.random(30)
    for threshold in (np.nan, np.inf, -np.inf, float("nan")):
        for name in METRICS + ["ndcg", "mrr@5", "p@3"]:
            for conventions in ("svmmap", "trec_eval", "letor"):
                with pytest.raises(ValueError, match="relevance_threshold"):
                    metrics.evaluate(y, scores, qid, [name], conventions=conventions, relevance_threshold=threshold)
            with pytest.raises(ValueError, match="relevance_threshold"):
                metrics.per_query(name, y, scores, qid, relevance_threshold=threshold)
    # Finite thresholds, however large, are numbers with a meaning: accepted.
    for threshold in (-1e300, -0.0, 1e300):
        metrics.evaluate(y, scores, qid, METRICS, relevance_threshold=threshold)


def test_query_size_files_take_ascii_decimals_only(tmp_path):
    # A .query file is read as every other reader reads numbers: ASCII decimals. Python's int()
    # read "1_0" as 10 and full-width or Arabic-Indic digits as their values, silently.
    data = tmp_path / "t.txt"
    data.write_text("".join(f"{i % 2} 1:{i}\n" for i in range(4)))
    sizes = tmp_path / "t.txt.query"
    for text in ["1_0", "\uff12\n2", "\u0662\n2", "2.0\n2", "0b10\n2", "2e0\n2", "½"]:
        sizes.write_text(text + "\n")
        with pytest.raises(svmmap.DataFormatError, match="expected a query size"):
            svmmap.load_letor(data, group=sizes)
    for text, want in [("2\n2", [0, 0, 1, 1]), (" +2 \n\n2\n", [0, 0, 1, 1]), ("3\n1", [0, 0, 0, 1])]:
        sizes.write_text(text)
        assert svmmap.load_letor(data, group=sizes)[2].tolist() == want, text


def test_integer_columns_beyond_int64_are_refused_not_wrapped():
    # Generated: relevance and rank columns beyond int64 (uint64, large floats, Python ints)
    # used to wrap around (2**64 - 1 became relevance -1) or fail with AttributeError.
    rng = np.random.default_rng(11)
    ids = np.array(["1", "1"])
    values = [np.array([2**64 - 1, 0], dtype=np.uint64), np.array([2.0**63, 0.0]), np.array([-1e19, 0.0]), [2**70, 0]]
    values += [np.array([float(rng.uniform(2**63, 1e300)), 0.0]) for _ in range(20)]
    for v in values:
        with pytest.raises(ValueError, match="rel must hold integers"):
            Qrels(qid=ids, docno=np.array(["a", "b"]), rel=v)
        with pytest.raises(ValueError, match="rank must hold integers"):
            Run(qid=ids, docno=np.array(["a", "b"]), score=np.array([1.0, 0.0]), rank=v)
    ok = Qrels(qid=ids, docno=np.array(["a", "b"]), rel=np.array([2**63 - 1, -(2**63)], dtype=np.int64))
    assert ok.rel.tolist() == [2**63 - 1, -(2**63)]


def test_run_measures_with_huge_cutoffs_are_refused_or_computed():
    # Generated cutoffs around and beyond int64, in svmmap's, ir_measures' and trec_eval's
    # spellings: a KeyError ('P_9223372036854775807') used to escape for every cutoff beyond
    # a C long; now a ValueError names the cutoff, and cutoffs up to 2**31 - 1 are computed.
    q, dn = np.array(["1"] * 4), np.array(["a", "b", "c", "d"])
    run = Run(qid=q, docno=dn, score=np.array([1.0, 2.0, 3.0, 4.0]), rank=np.arange(4))
    qrels = Qrels(qid=q, docno=dn, rel=np.array([1, 0, 1, 0]))
    rng = np.random.default_rng(3)
    huge = [2**31, 2**63 - 1, 2**63, 2**64 + 1, 10**23] + [int(rng.integers(2**31, 2**62)) for _ in range(10)]
    for k in huge:
        for name in (f"p@{k}", f"P@{k}", f"ndcg@{k}", f"recall@{k}", f"nDCG@{k}"):
            with pytest.raises(ValueError, match="cutoff"):
                evaluate_run(run, qrels, name)
    # P@k of one query with 2 relevant among 4 documents is 2 / k for every k >= 4.
    for k in (4, 1000, 2**31 - 1):
        assert evaluate_run(run, qrels, f"p@{k}")["1"] == pytest.approx(2 / k)
