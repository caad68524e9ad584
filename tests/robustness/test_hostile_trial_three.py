"""A third independent hostile trial (attack3): a crash on a subnormal C, parameters silently
ignored, and refusals that did not name the argument the user gave. Each test failed before
its fix; the report is /work/prompts/attack3_report.md (C1, I1-I3, I5, N1-N4, N6, N7, N10, K1),
and the defects it left that branch fix3 fixed (C2, I6, K3, K4, K5, K7, N9; I7 kept as documented)."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
import scipy.sparse as sp
import svmmap
from svmmap.baselines import AdaRank, QueryMinMaxScaler, QueryPercentileTransformer, SVMAcc


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.tile([1, 0, 0, 1, 0], 8)
    return X, y, np.repeat(np.arange(8), 5)


def _letor(path):
    # Two queries of three documents, every line listing both features: load_letor's "auto"
    # reads such a file as a dense array, so only sparse=True makes it a CSR matrix.
    path.write_text("".join(f"{int(d == 0)} qid:{q} 1:{d} 2:{q} # docid = d{q}{d}\n" for q in (1, 2) for d in range(3)))
    return path


def _cli(argv):
    from svmmap.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


@pytest.mark.parametrize("C", [5e-324, 1e-322])
def test_a_c_whose_tolerance_underflows_to_zero_is_refused_naming_c(C):
    # C1: eps * C = 1e-3 * 5e-324 is 0.0 in float64, so the fit could never meet its tolerance,
    # and the ConvergenceWarning divided the gap by it: ZeroDivisionError from SVMMap, SVMMapCV
    # and svmmap learn (a traceback, exit 1). 1e-322 * 1e-3 = 1e-325 underflows too.
    assert 1e-3 * C == 0.0
    X, y, qid = _data()
    with pytest.raises(ValueError, match=r"^C must be large enough that the tolerance eps \* C is above 0"):
        svmmap.SVMMap(C=C).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"^C must be large enough"):
        svmmap.SVMMapCV(Cs=[C], cv=2).fit(X, y, qid=qid)


def test_a_tiny_c_whose_tolerance_is_still_positive_trains():
    # The boundary of C1: 1e-310 * 1e-3 = 1e-313 is a subnormal float64 above 0, which the
    # solver can stop at; such a C is refused by nothing and learns w = 0 (the margin term
    # dominates), with the DegenerateModelWarning that says so.
    assert 1e-3 * 1e-310 > 0.0
    X, y, qid = _data()
    with pytest.warns(svmmap.DegenerateModelWarning):
        model = svmmap.SVMMap(C=1e-310).fit(X, y, qid=qid)
    np.testing.assert_array_equal(model.coef_, 0.0)


def test_learn_with_a_c_whose_tolerance_underflows_is_an_error_not_a_traceback(tmp_path):
    train = _letor(tmp_path / "train.txt")
    code, err = _cli(["learn", "-c", "5e-324", str(train), str(tmp_path / "m.json")])
    assert code == 2
    assert "error: C must be large enough that the tolerance eps * C is above 0" in err
    assert "Traceback" not in err
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("given", [True, np.True_])
def test_load_letor_sparse_true_in_any_spelling_is_a_csr_matrix(tmp_path, given):
    # I1: sparse=np.True_ passed the check (it equals True) but not "sparse is True", and a
    # dense array came back.
    X = svmmap.load_letor(_letor(tmp_path / "t.txt"), sparse=given)[0]
    assert sp.issparse(X) and X.format == "csr"
    np.testing.assert_array_equal(X.toarray(), [[0, 1], [1, 1], [2, 1], [0, 2], [1, 2], [2, 2]])


@pytest.mark.parametrize("given", [1, 0, "True", None])
def test_load_letor_sparse_other_values_are_refused_naming_sparse(tmp_path, given):
    # I1: sparse=1 returned a dense array, silently; 1 and 0 are refused as check_bool refuses
    # them for every yes-or-no parameter.
    with pytest.raises(ValueError, match=r'^sparse must be "auto", True or False, got '):
        svmmap.load_letor(_letor(tmp_path / "t.txt"), sparse=given)


def test_load_letor_return_comments_is_checked_naming_it(tmp_path):
    # N1: "TypeError: 'str' object is not an instance of 'bool'" named no argument.
    path = _letor(tmp_path / "t.txt")
    with pytest.raises(ValueError, match=r"^return_comments must be True or False, got 'no'$"):
        svmmap.load_letor(path, return_comments="no")
    assert svmmap.load_letor(path, return_comments=np.True_)[3][0] == "docid = d10"


def test_early_stopping_first_metric_only_takes_true_or_false_only():
    # I5: bool("yes") made first_metric_only=True, and bool("False") too.
    for bad in ("yes", "False", 1):
        with pytest.raises(ValueError, match=r"^first_metric_only must be True or False, got "):
            svmmap.early_stopping(3, first_metric_only=bad)
    assert svmmap.early_stopping(3, first_metric_only=np.True_).first_metric_only is True


@pytest.mark.parametrize("threshold", [float("nan"), float("inf")])
def test_svmacc_names_a_relevance_threshold_that_is_not_finite(threshold):
    # N2: "SVMAcc needs relevant and non-relevant documents (label > nan); got 0 relevant of
    # 40" blamed the data; SVMMap and AdaRank name the parameter in the core's words.
    X, y, qid = _data()
    expected = rf"^relevance_threshold must be a finite number, got {threshold}$"
    with pytest.raises(ValueError, match=expected):
        SVMAcc(relevance_threshold=threshold).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=expected):
        svmmap.SVMMap(relevance_threshold=threshold).fit(X, y, qid=qid)


def test_evaluate_run_names_run_and_qrels_given_the_wrong_way_round():
    # N3: evaluate_run(qrels, run) failed with "AttributeError: 'Run' object has no attribute
    # 'rel'".
    from svmmap.ir.trec import Qrels, Run, evaluate_measures, evaluate_run

    run = Run.from_dict({"1": {"d1": 0.9, "d2": 0.8}})
    qrels = Qrels.from_dict({"1": {"d1": 1, "d2": 0}})
    # By hand: d1, the one relevant document, is ranked first, so AP = 1.
    assert evaluate_run(run, qrels)["1"] == 1.0
    with pytest.raises(
        TypeError, match=r"^run must be a svmmap.ir.trec.Run .*got Qrels \(run and qrels are swapped\?\)$"
    ):
        evaluate_run(qrels, run)
    with pytest.raises(TypeError, match=r"^qrels must be a svmmap.ir.trec.Qrels .*got dict$"):
        evaluate_measures(run, {"1": {"d1": 1}}, ["map"])


@pytest.mark.parametrize("name", ["", "   ", None])
def test_to_onnx_refuses_a_blank_name_as_the_engine_exports_do(name):
    # N4: onnx's checker said "Field 'name' of 'graph' is required to be non-empty", where
    # to_solr, to_elasticsearch and svmmap export --name say "name: the engine needs a
    # non-empty name".
    pytest.importorskip("onnx")
    from svmmap.ir.export import to_elasticsearch, to_onnx, to_solr

    X, y, qid = _data()
    model = svmmap.SVMMap().fit(X, y, qid=qid)
    for export in (to_onnx, to_solr, to_elasticsearch):
        with pytest.raises(ValueError, match=r"^name: the engine needs a non-empty name, got "):
            export(model, name=name)


@pytest.mark.parametrize("transformer", [QueryPercentileTransformer, QueryMinMaxScaler])
def test_query_transformers_check_x_as_every_estimator_does(transformer):
    # N7 and K1: strings were parsed as numbers ("0.5" became 0.5) where SVMMap refuses them,
    # and NaN was "X contains NaN or infinite values" without its position.
    X, y, qid = _data()
    with pytest.raises(ValueError, match=r"^X must hold numbers, got dtype <U"):
        transformer().fit_transform(X.astype(str), qid=qid)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"^X\[3, 1\] is NaN: features must be finite numbers"):
        transformer().fit_transform(bad, qid=qid)
    fitted = transformer().fit(X, qid=qid)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match=r"^X\[3, 1\] is inf: features must be finite numbers"):
        fitted.transform(bad, qid=qid)
    # Sparse input is still transformed, densely: by hand, the first query's column 0 holds
    # five distinct values, so its largest becomes 1 under either transform.
    out = transformer().fit_transform(sp.csr_matrix(X), qid=qid)
    assert out[np.argmax(X[:5, 0]), 0] == 1.0


def test_protocol_folds_refuses_the_options_of_random_splits():
    # I2: --design folds printed the folds' table and exit 0 whatever --trials, --train,
    # --vali, --test or --seed said.
    for option in (["--trials", "3"], ["--train", "3"], ["--vali", "2"], ["--test", "4"], ["--seed", "5"]):
        code, err = _cli(["protocol", "--design", "folds", *option, "-q"])
        assert code == 2, option
        assert f"error: {option[0]} is for --design random" in err


def test_protocol_random_reads_its_defaults_when_the_options_are_not_given():
    # The parser's defaults became None (to tell a given option); the random design must
    # still get the help's defaults: 50 trials of 10 training and 5 validation queries, seed 0.
    from svmmap.cli.experiment import protocol_result
    from svmmap.cli.parser import build_parser

    args = build_parser().parse_args(["protocol", "--methods", "map", "-q"])
    assert (args.trials, args.train, args.vali, args.test, args.seed) == (None, None, None, None, None)
    seen = {}

    def fake_random_splits(X, y, qid, methods, **kwargs):
        seen.update(kwargs)
        raise KeyboardInterrupt  # stop before any training

    import svmmap.ir.protocol as protocol

    original = protocol.random_splits
    protocol.random_splits = fake_random_splits
    try:
        with pytest.raises(KeyboardInterrupt):
            protocol_result(args)
    finally:
        protocol.random_splits = original
    assert (seen["n_trials"], seen["n_train"], seen["n_vali"], seen["n_test"], seen["random_state"]) == (
        50,
        10,
        5,
        None,
        0,
    )


def test_classify_tag_without_trec_run_is_refused(tmp_path):
    # I3: --tag without --trec-run was ignored, exit 0.
    train = _letor(tmp_path / "train.txt")
    assert _cli(["learn", str(train), str(tmp_path / "m.json")])[0] == 0
    code, err = _cli(["classify", "--tag", "mine", str(train), str(tmp_path / "m.json"), str(tmp_path / "p.txt")])
    assert code == 2
    assert "error: --tag names the TREC run of --trec-run" in err
    assert not (tmp_path / "p.txt").exists()
    # With --trec-run the tag is the run's, and without --tag the run is tagged svmmap.
    for argv, tag in ((["--tag", "mine"], "mine"), ([], "svmmap")):
        run = tmp_path / f"r{tag}.run"
        code, _ = _cli(
            ["classify", *argv, "--trec-run", str(run), str(train), str(tmp_path / "m.json"), str(tmp_path / "p.txt")]
        )
        assert code == 0
        assert {line.split()[5] for line in run.read_text().splitlines()} == {tag}


def test_score_with_every_weight_zero_is_not_told_it_trains():
    # N10: SVMMap.score(..., sample_weight=0) said "there is nothing to train on": the fit's
    # words, from the one check of weights that fit and score share.
    X, y, qid = _data()
    model = svmmap.SVMMap().fit(X, y, qid=qid)
    for call in (
        lambda: model.score(X, y, qid=qid, sample_weight=np.zeros(40)),
        lambda: svmmap.SVMMap().fit(X, y, qid=qid, sample_weight=np.zeros(40)),
    ):
        with pytest.raises(ValueError, match=r"^sample_weight is 0 for every query: no query has any weight$"):
            call()


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_a_run_or_qrels_file_too_large_for_memory_names_the_file_and_line(tmp_path, monkeypatch, kind):
    # N6: under a memory limit (ulimit -v 300 MB, a 19 MB run) read_run raised a bare
    # MemoryError from a list's append, or NumPy's "Unable to allocate 29.8 MiB ... <U13",
    # naming no file. The memory runs out here at the third entry, as it may at any.
    import svmmap.ir._trec_files as files
    from svmmap.ir.trec import read_qrels, read_run

    path = tmp_path / f"big.{kind}"
    if kind == "run":
        path.write_text("".join(f"1 Q0 d{i} {i + 1} {10 - i} t\n" for i in range(5)))
        patched, read, what = "number", read_run, "run"
    else:
        path.write_text("".join(f"1 0 d{i} {i % 2}\n" for i in range(5)))
        patched, read, what = "integer", read_qrels, "qrels file"
    original = getattr(files, patched)
    calls = []

    def runs_out(text):
        calls.append(text)
        if len(calls) == 3:
            raise MemoryError
        return original(text)

    monkeypatch.setattr(files, patched, runs_out)
    # By hand: lines 1 and 2 are read, and the memory runs out on the third line's number.
    with pytest.raises(
        MemoryError, match=rf"^reading the {what} {path} \(at line 3\) needs more memory than is available: "
    ):
        read(path)


# --- The defects the trial left, fixed on branch fix3 ---------------------------------------


@pytest.mark.parametrize("argument", ["y", "qid"])
def test_binner_without_interactions_refuses_y_or_qid_of_another_length(argument):
    # I6: without interactions y and qid are unused, yet one of 39 entries for 40 rows was
    # accepted silently; SVMMap one step later in a Pipeline refuses it with these words.
    X, y, qid = _data()
    given = {"y": y, "qid": qid}
    given[argument] = given[argument][:-1]
    with pytest.raises(ValueError, match=rf"^{argument} has 39 entries but X has 40 rows$"):
        svmmap.Binner().fit(X, given["y"], qid=given["qid"])
    # The boundary: the right lengths, or none given, fit as before.
    assert svmmap.Binner().fit(X, y, qid=qid).n_features_in_ == 3
    assert svmmap.Binner().fit(X).n_features_in_ == 3


def _frame_with_repeated_names():
    pd = pytest.importorskip("pandas")
    X, y, qid = _data()
    return pd.DataFrame(X, columns=["a", "a", "c"]), y, qid


@pytest.mark.parametrize("fit", ["SVMMap", "SVMMapCV", "Binner"])
def test_repeated_column_names_are_refused_at_fit_naming_them(fit):
    # K3: the names were kept in feature_names_in_ and refused only by the exports, long after
    # the fit ("feature names must be unique"); a repeated name cannot pick one column.
    X, y, qid = _frame_with_repeated_names()
    estimator = {"SVMMap": svmmap.SVMMap(), "SVMMapCV": svmmap.SVMMapCV(Cs=[1.0], cv=2), "Binner": svmmap.Binner()}[fit]
    with pytest.raises(ValueError, match=r"^X's column names must be unique, but \['a'\] occur more than once"):
        estimator.fit(X, y, qid=qid)


def test_unique_column_names_still_fit_and_are_kept():
    # The boundary of K3: distinct names are kept as given.
    X, y, qid = _frame_with_repeated_names()
    X.columns = ["a", "b", "c"]
    assert list(svmmap.SVMMap().fit(X, y, qid=qid).feature_names_in_) == ["a", "b", "c"]


@pytest.mark.parametrize("value", [True, False, np.True_, np.False_])
@pytest.mark.parametrize("name", ["relevance_threshold", "C", "eps", "max_iter"])
def test_bools_are_refused_for_every_numeric_training_parameter(name, value):
    # K5: relevance_threshold=True was taken as 1 while C=True was refused; NumPy's bool passed
    # every numeric parameter (it converts to a float and an index). One rule for all numbers.
    X, y, qid = _data()
    with pytest.raises(ValueError, match=rf"^{name} must be .*, got {value!r}$"):
        svmmap.SVMMap(**{name: value}).fit(X, y, qid=qid)


def test_a_threshold_of_one_still_trains():
    # The boundary of K5: the number 1 (what True stood for) is still a threshold; with the
    # labels 0 and 2, label 2 is above it and every query has a relevant document.
    X, y, qid = _data()
    y = y * 2
    assert svmmap.SVMMap(relevance_threshold=1).fit(X, y, qid=qid).coef_.shape == (3,)


def test_cli_list_options_refuse_a_repeated_value(tmp_path):
    # K4: --folds 1,1 ran fold 1 once and --metrics map,map printed map twice, silently, while
    # --runs a a, --methods map,map and SVMMapCV(Cs=[1, 1]) refuse a repeat.
    # --folds is parsed by argparse, whose error exits 2 before any data is read.
    from svmmap.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exited:
        main(["experiment", "--folds", "1,01"])
    assert exited.value.code == 2
    assert "error: argument --folds: '01' is given twice in '1,01'" in err.getvalue()
    data = _letor(tmp_path / "d.txt")
    predictions = tmp_path / "p.txt"
    predictions.write_text("".join(f"{s}\n" for s in (3, 2, 1, 1, 2, 3)))
    code, err = _cli(["evaluate", "--metrics", "map, map", str(data), str(predictions)])
    assert code == 2
    assert "error: --metrics: 'map' is given twice in 'map, map'" in err
    # The boundary: distinct metrics are evaluated.
    assert _cli(["evaluate", "--metrics", "map,mrr", str(data), str(predictions)])[0] == 0


def test_warnings_of_svmmapcv_name_svmmapcv():
    # K7: the refit of SVMMapCV warned "SVMMap stopped at max_iter=1 ...", naming an estimator
    # the user never called; after it, a plain SVMMap's warnings name SVMMap again.
    from sklearn.exceptions import ConvergenceWarning

    X, y, qid = _data()
    with pytest.warns(ConvergenceWarning) as record:
        svmmap.SVMMapCV(Cs=[1.0], cv=2, max_iter=1).fit(X, y, qid=qid)
    texts = [str(w.message) for w in record if issubclass(w.category, ConvergenceWarning)]
    assert any(t.startswith("SVMMapCV stopped at max_iter=1 ") for t in texts), texts
    assert not any(t.startswith("SVMMap ") for t in texts), texts
    with pytest.warns(ConvergenceWarning, match=r"^SVMMap stopped at max_iter=1 "):
        svmmap.SVMMap(max_iter=1).fit(X, y, qid=qid)


def test_adaranks_path_that_cannot_fit_in_memory_is_refused_up_front():
    # C2: n_estimators=10**12 ran for ever while coef_path_ grew by 3 floats a round; the path
    # of 10**12 rounds x 3 features is 24 TB of float64 at least, which no test machine has.
    X, y, qid = _data()
    with pytest.raises(MemoryError, match=r"^AdaRank's coef_path_ of n_estimators=1000000000000 rounds x 3 features"):
        AdaRank(n_estimators=10**12).fit(X, y, qid=qid)
    # The boundary: a path that fits trains, one row per round.
    assert AdaRank(n_estimators=5, variant="meng").fit(X, y, qid=qid).coef_path_.shape == (5, 3)


def test_make_ranking_checks_its_size_and_seed_up_front():
    # N9: numpy's bare "Unable to allocate 3.64 TiB" and "SeedSequence expects int" named no
    # argument of make_ranking.
    from svmmap.datasets import make_ranking

    with pytest.raises(MemoryError, match=r"^make_ranking's X of \d+ documents x n_features=1000000000000 \(float32\)"):
        make_ranking(n_queries=3, n_features=10**12)
    with pytest.raises(ValueError, match=r"^random_state must be an integer >= 0, a numpy Generator or None, got 'x'$"):
        make_ranking(n_queries=3, n_features=2, random_state="x")
    # The boundary: a size that fits is generated, the same for the same seed.
    a = make_ranking(n_queries=3, n_features=2, random_state=1)
    assert np.array_equal(a.X, make_ranking(n_queries=3, n_features=2, random_state=1).X)


def test_load_model_ignores_unknown_parameters_as_the_format_documents(tmp_path):
    # I7, kept: docs/model-format.md promises "fields may be added within a version (readers
    # ignore unknown fields and parameters)", and unknown top-level keys are ignored likewise;
    # refusing "params"."bogus" would break that promise for files of a later svmmap.
    import json

    X, y, qid = _data()
    path = tmp_path / "m.json"
    model = svmmap.SVMMap().fit(X, y, qid=qid)
    model.save(path)
    doc = json.loads(path.read_text())
    doc["params"]["bogus"] = 3
    doc["bogus"] = 3
    path.write_text(json.dumps(doc))
    loaded = svmmap.load_model(path)
    assert np.array_equal(loaded.predict(X), model.predict(X))
    assert "bogus" not in loaded.get_params()


def test_an_overflow_from_a_loss_weight_names_the_loss_weight_not_the_features():
    # N5: X holds values below 4 in magnitude, so the features cannot be what overflowed; the
    # weight 1e300 on map multiplies its loss (and so the cutting planes) past float64's range.
    X, y, qid = _data()
    assert np.abs(X).max() < 10
    with pytest.raises(ValueError) as error:
        svmmap.SVMMap(loss={"map": 1e300, "roc": 1}).fit(X, y, qid=qid)
    message = str(error.value)
    assert "loss weight 1e+300 of 'map'" in message
    assert "feature values of X" not in message
    # The same combination at ordinary weights trains.
    svmmap.SVMMap(loss={"map": 1.0, "roc": 1}).fit(X, y, qid=qid)
