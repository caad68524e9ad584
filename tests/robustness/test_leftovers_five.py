"""Small defects left from the fifth round of trials, each with the test that found it.

- plot_piecewise_scores drew a GA2M pair only by the model's order of its names: "b&a" for the
  model's "a&b" was "no base feature".
- A validation X given as a ragged list was refused with NumPy's message, naming no argument
  (X itself too, and the Binner's X).
- load_letor(missing="nan") refused a feature value written nan without saying that the option
  reads NULL, not nan.
- The readers refused a file name that is not UTF-8 (a Linux name is bytes).
"""

import os

import numpy as np
import pytest
import svmmap
import svmmap.baselines

# A small ranking set whose two queries each have a relevant and a non-relevant document.
X = np.array([[0.5, 1.0], [0.1, 0.0], [0.3, 0.2], [0.9, 0.4], [0.2, 0.7], [0.6, 0.1]])
y = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 1.0])
qid = np.array([1, 1, 1, 2, 2, 2])
RAGGED = [[0.5, 1.0], [0.1]]


# 1. A pair named in the other order.


def _surface():
    from svmmap.binning import StepSurface

    # a has one coarse threshold (two cells up), b two (three cells across); written by hand.
    values = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, -2.0]])
    return StepSurface(("a", "b"), (0, 1), (np.array([0.5]), np.array([1.5, 2.5])), values)


@pytest.mark.parametrize("name", ["b&a", ("b", "a")])
def test_a_pair_named_in_reverse_is_drawn_transposed(name):
    pytest.importorskip("matplotlib").use("Agg")
    import matplotlib.pyplot as plt
    from svmmap.ir.plot import plot_piecewise_scores

    try:
        (ax,) = plot_piecewise_scores([_surface()], features=[name])
        (image,) = ax.get_images()
        # b now increases up the vertical axis and a across: the cells are the transpose.
        np.testing.assert_array_equal(image.get_array(), [[0.0, 0.0], [0.0, 1.0], [0.0, -2.0]])
        assert (ax.get_ylabel(), ax.get_xlabel(), ax.get_title()) == ("b", "a", "Interaction of b and a")
        (ax,) = plot_piecewise_scores([_surface()], features=[("a", "b")])
        np.testing.assert_array_equal(ax.get_images()[0].get_array(), _surface().values)
        with pytest.raises(ValueError, match=r"^no base feature or pair named 'a&c'; the features are \['a&b'\]$"):
            plot_piecewise_scores([_surface()], features=["a&c"])
    finally:
        plt.close("all")


# 2. A validation X that NumPy cannot read as a matrix.


def _fit_with_eval(entry, eval_X):
    ey, eq = y[:2], qid[:2]
    if entry == "SVMMap eval_set":
        svmmap.SVMMap().fit(X, y, qid=qid, eval_set=[(eval_X, ey)], eval_qid=[eq])
    elif entry == "SVMMap eval_X":
        svmmap.SVMMap().fit(X, y, qid=qid, eval_X=eval_X, eval_y=ey, eval_qid=[eq])
    elif entry == "SVMMapCV eval_set":
        svmmap.SVMMapCV(Cs=[1.0], cv="validation").fit(X, y, qid=qid, eval_set=[(eval_X, ey)], eval_qid=[eq])
    elif entry == "SVMMap X":
        svmmap.SVMMap().fit(eval_X, ey, qid=eq)
    elif entry == "Binner fit X":
        svmmap.Binner().fit(eval_X)
    elif entry == "SVMMap predict X":
        svmmap.SVMMap().fit(X, y, qid=qid).predict(eval_X)
    elif entry == "AdaRank fit X":
        svmmap.baselines.AdaRank().fit(eval_X, ey, qid=eq)
    else:
        svmmap.Binner().fit(X).transform(eval_X)


@pytest.mark.parametrize(
    "entry, argument",
    [
        ("SVMMap eval_set", "eval_set[0] X"),
        ("SVMMap eval_X", "eval_X"),
        ("SVMMapCV eval_set", "eval_set[0] X"),
        ("SVMMap X", "X"),
        ("Binner fit X", "X"),
        ("Binner transform X", "X"),
        ("SVMMap predict X", "X"),
        ("AdaRank fit X", "X"),
    ],
)
def test_a_ragged_list_is_refused_naming_the_argument_at_every_entry_point(entry, argument):
    message = f"^{argument} must be a 2-D array, got rows of different lengths: "
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _fit_with_eval(entry, RAGGED)


@pytest.mark.parametrize("front", ["scaler", "binner"])
def test_a_model_file_refuses_a_ragged_list_naming_x(tmp_path, front):
    # The command line's scorer of a model file (read_model(...).predict) reads X itself when
    # the model scales or bins its columns; it gave NumPy's message, naming no argument.
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from svmmap._files.model_file import read_model

    first = StandardScaler() if front == "scaler" else svmmap.Binner(n_thresholds=2)
    svmmap.save_model(make_pipeline(first, svmmap.SVMMap()).fit(X, y, svmmap__qid=qid), tmp_path / "m.json")
    with pytest.raises(ValueError, match=r"^X must be a 2-D array, got rows of different lengths: "):
        read_model(tmp_path / "m.json").predict(RAGGED)


@pytest.mark.parametrize("form", [list, tuple])
def test_a_validation_x_as_rows_in_a_list_or_tuple_scores_as_the_array(form):
    # The validation AP of the same rows is the same whether they come as an array or as Python
    # rows: each is converted once, by the rule of X.
    rows = form(form(row) for row in X[:3])
    results = []
    for ex in (X[:3], rows):
        m = svmmap.SVMMap(C=1.0).fit(X, y, qid=qid, eval_set=[(ex, y[:3])], eval_qid=[qid[:3]], eval_metric="map")
        results.append(m.evals_result_)
    assert results[0] == results[1]


# 3. The token nan with missing="nan".


def test_a_nan_token_with_missing_nan_says_the_option_reads_null(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("1 qid:1 1:nan 2:0.5\n0 qid:1 1:1 2:0.5\n")
    with pytest.raises(svmmap.DataFormatError) as info:
        svmmap.load_letor(path, missing="nan")
    text = str(info.value)
    assert text.startswith(
        f"{path}:1: field 3 ('1:nan'): value NaN: values must be finite; a missing value is written NULL"
    )
    assert 'missing="nan"' in text and "not the token nan" in text
    # The advice works: NULL in the same place reads as NaN.
    path.write_text("1 qid:1 1:NULL 2:0.5\n0 qid:1 1:1 2:0.5\n")
    X_read, _, _ = svmmap.load_letor(path, missing="nan")
    np.testing.assert_array_equal(X_read, [[np.nan, 0.5], [1.0, 0.5]])


# 4. File names that are not UTF-8.


def _odd_name(tmp_path, stem, as_bytes):
    raw = os.fsencode(str(tmp_path)) + b"/" + stem
    return raw if as_bytes else os.fsdecode(raw)


@pytest.mark.parametrize("as_bytes", [False, True])
def test_readers_open_a_file_name_that_is_not_utf8(tmp_path, as_bytes):
    from svmmap.io import load_predictions, read_group_file
    from svmmap.ir.trec import read_qrels, read_run

    files = {
        b"x\xff.txt": b"2 qid:7 1:0.5 2:1\n0 qid:7 1:0.25 2:0\n",
        b"r\xff.run": b"1 Q0 d1 1 2.5 t\n1 Q0 d2 2 1.5 t\n",
        b"q\xff.qrels": b"1 0 d1 1\n1 0 d2 0\n",
        b"p\xff.txt": b"0.25\n-1.5\n",
        b"g\xff.query": b"2\n",
    }
    for stem, data in files.items():
        with open(os.fsencode(str(tmp_path)) + b"/" + stem, "wb") as f:
            f.write(data)
    X_read, y_read, q_read = svmmap.load_letor(_odd_name(tmp_path, b"x\xff.txt", as_bytes))
    assert X_read.tolist() == [[0.5, 1.0], [0.25, 0.0]] and y_read.tolist() == [2.0, 0.0] and q_read.tolist() == [7, 7]
    run = read_run(_odd_name(tmp_path, b"r\xff.run", as_bytes))
    assert run.docno.tolist() == ["d1", "d2"] and run.score.tolist() == [2.5, 1.5]
    assert read_qrels(_odd_name(tmp_path, b"q\xff.qrels", as_bytes)).rel.tolist() == [1, 0]
    assert load_predictions(_odd_name(tmp_path, b"p\xff.txt", as_bytes)).tolist() == [0.25, -1.5]
    assert read_group_file(_odd_name(tmp_path, b"g\xff.query", as_bytes)).tolist() == [2]
    model = svmmap.SVMMap().fit(X, y, qid=qid)
    svmmap.save_model(model, tmp_path / "m.json")
    os.rename(tmp_path / "m.json", _odd_name(tmp_path, b"m\xff.json", True))
    loaded = svmmap.load_model(_odd_name(tmp_path, b"m\xff.json", as_bytes))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_missing_file_whose_name_is_not_utf8_is_named(tmp_path):
    for read, name in ((svmmap.load_letor, b"gone\xff.txt"), (svmmap.load_model, b"gone\xff.json")):
        with pytest.raises(FileNotFoundError) as info:
            read(_odd_name(tmp_path, name, False))
        # The name as the OS has it: os.fsdecode's str, whose repr shows the byte 0xff as
        # "\udcff" (it showed U+FFFD, which is no byte of the name, so no file could be found by it).
        expected = os.fsdecode(bytes(tmp_path) + b"/" + name)
        assert info.value.filename == expected
        assert repr(expected) in str(info.value) and "\ufffd" not in str(info.value)


def test_a_str_that_names_no_bytes_is_refused_naming_it():
    with pytest.raises(
        ValueError,
        match=r"^path 'x\\ud800\.txt': '\\ud800', half of a UTF-16 surrogate pair at character 1, is in no file name",
    ):
        svmmap.load_letor("x\ud800.txt")


def test_svmmap_learn_reads_a_data_file_whose_name_is_not_utf8(tmp_path):
    import contextlib
    import io

    from svmmap.cli import main

    data = _odd_name(tmp_path, b"t\xff.txt", False)
    with open(os.fsencode(data), "wb") as f:
        f.write(b"1 qid:1 1:1\n0 qid:1 1:0\n")
    err, printed = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(printed):
        code = main(["learn", data, str(tmp_path / "m.json")])
    assert code == 0, err.getvalue()
    assert svmmap.load_model(tmp_path / "m.json").coef_.shape == (1,)


# 5. The search's splits hold no negative row (SplitData reads them as positions).


def test_every_split_the_search_makes_holds_rows_inside_x():
    # SplitData._train_rows and _window read a split's rows as positions 0 .. n - 1 (their
    # branch for negative rows was removed as dead): every way a cv is given, and the cut to
    # max_train_queries, yields rows inside X, and a negative row in a given split is refused.
    from sklearn.model_selection import GroupKFold
    from svmmap._search.size import limit_training_queries
    from svmmap._search.splits import make_splits

    n = 40
    codes = np.repeat(np.arange(8), 5)
    labels = np.tile([1.0, 0.0, 0.0, 0.0, 0.0], 8)
    uniques = np.arange(8)
    rows = np.arange(n)
    given = [(rows[codes < 6], rows[codes >= 6]), (rows[codes >= 2], rows[codes < 2])]
    for cv, validation in [(4, False), (GroupKFold(n_splits=3), False), (given, False), ("validation", True)]:
        splits = make_splits(cv, n, labels, codes, uniques, validation)
        for max_queries in (None, 2):
            for train, test in limit_training_queries(splits, codes, max_queries):
                assert train.min() >= 0 and train.max() < n
                assert test is None or (test.min() >= 0 and test.max() < n)
    with pytest.raises(ValueError, match=r"^split 0 of cv has row indices outside the 40 rows of X \(0 to 39\)$"):
        make_splits([(np.r_[rows[codes < 6], -1], rows[codes >= 6])], n, labels, codes, uniques, False)
