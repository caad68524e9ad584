"""The bad-input table of the documentation (docs/guide/reliability.md): every row is a case here.

Each case states the documented behaviour: which exception, and what its message must say
(file, line, field and what was expected), or what happens instead when the input is
accepted. That table lists the ids of these cases; keep the two in step.
"""

from __future__ import annotations

import gzip
import json
import pickle
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import svmmap
from svmmap import DataFormatError, ModelFormatError, SkippedQueriesWarning, SVMMap, _core, load_letor, load_model
from svmmap._data import CoreMatrix
from svmmap.io import load_predictions

# ---------------------------------------------------------------------------------------
# Data files: DataFormatError (a ValueError) naming file:line, the field and the problem.

READER_ERRORS = {
    # id: (file content, line, text the message must contain)
    "malformed-line": ("1 qid:1 1:1\n1 qid:1 1:0.5 7\n", 2, "field 4 must be '<index>:<value>', got '7'"),
    "missing-qid": ("1 qid:1 1:1\n0 1:2 2:3\n", 2, "field 2 must be 'qid:<query id>', got '1:2'"),
    "empty-qid": ("1 qid: 1:1\n", 1, "field 2 must be 'qid:<query id>', got 'qid:'"),
    "label-only": ("1\n", 1, "expected 'qid:<query id>' after the label, got the end of the line"),
    "non-numeric-value": ("1 qid:1 1:abc\n", 1, "field 3 ('1:abc'): value not a number"),
    "non-numeric-label": ("high qid:1 1:1\n", 1, "field 1 (the label) is 'high': not a number"),
    "null-value": ("0 qid:1 1:0.5 2:NULL 3:1\n", 1, "field 4 ('2:NULL'): value NULL: a missing value"),
    "nan-value": ("1 qid:1 1:nan\n", 1, "field 3 ('1:nan'): value NaN: values must be finite"),
    "inf-value": ("1 qid:1 1:-inf\n", 1, "field 3 ('1:-inf'): value -inf: values must be finite"),
    "overflowing-value": ("1 qid:1 1:1e400\n", 1, "value inf: values must be finite"),
    "nan-label": ("nan qid:1 1:1\n", 1, "field 1 (the label) is 'nan'"),
    "index-zero": ("1 qid:1 0:1\n", 1, "field 3 ('0:1'): feature index 0: indices start at 1"),
    "negative-index": ("1 qid:1 -3:1\n", 1, "field 3 ('-3:1'): the feature index must be a positive integer"),
    "repeated-index": ("1 qid:1 2:1 5:1 2:3\n", 1, "feature index 2 appears more than once"),
    "absurd-index": (
        "1 qid:1 1000000000000:1\n",
        1,
        "feature index 1000000000000 is above the largest supported index 2147483647",
    ),
    "index-above-n-features": ("1 qid:1 1:1\n0 qid:1 9:1\n", 2, "feature index 9 is above n_features = 4"),
    "non-utf8-qid": (b"1 qid:\xff\xfe 1:1\n", 1, "the query id 'qid:\ufffd\ufffd' is not valid UTF-8 text"),
    "float32-overflow": ("1 qid:1 1:1e39\n", 1, "value 1e39 is beyond the float32 range"),
}


@pytest.mark.parametrize("case", sorted(READER_ERRORS))
def test_reader_errors(tmp_path, case):
    text, line, needle = READER_ERRORS[case]
    path = tmp_path / "bad.txt"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    kwargs = {}
    if case == "index-above-n-features":
        kwargs["n_features"] = 4
    if case == "float32-overflow":
        kwargs["dtype"] = np.float32
    with pytest.raises(DataFormatError) as info:
        load_letor(path, **kwargs)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert needle in message, message
    assert isinstance(info.value, ValueError)


def test_reader_errors_in_gzip_files_name_the_line(tmp_path):
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(gzip.compress(b"1 qid:1 1:1\n" * 1000 + b"0 qid:2 1:x\n"))
    with pytest.raises(DataFormatError, match=rf"^{path}:1001: field 3"):
        load_letor(path)


@pytest.mark.parametrize("content", ["", "# header only\n\n   \n"], ids=["empty-file", "comments-only"])
def test_reader_empty_files(tmp_path, content):
    path = tmp_path / "empty.txt"
    path.write_text(content)
    with pytest.raises(DataFormatError, match=rf"^{path}: no data lines: the file is empty or holds only comments"):
        load_letor(path)


def test_reader_accepts_unsorted_indices_and_sorts_them(tmp_path):
    path = tmp_path / "unsorted.txt"
    path.write_text("1 qid:1 3:0.3 1:0.1\n0 qid:1 2:0.2 1:0.5\n")
    X, y, qid = load_letor(path)
    np.testing.assert_array_equal(X.toarray(), [[0.1, 0, 0.3], [0.5, 0.2, 0]])


def test_reader_largest_index_is_sparse_not_allocated(tmp_path):
    # 2^31 - 1 is accepted, but as a CSR matrix: nothing proportional to the index is
    # allocated. Training on it is refused by the memory check (test_arrays[huge-width]).
    path = tmp_path / "wide.txt"
    path.write_text("1 qid:1 2147483647:1\n0 qid:1 1:1\n")
    X, _, _ = load_letor(path)
    assert sp.issparse(X) and X.shape == (2, 2147483647) and X.nnz == 2


def test_reader_corrupt_gzip_missing_and_directory(tmp_path):
    corrupt = tmp_path / "corrupt.gz"
    corrupt.write_bytes(b"\x1f\x8b" + b"\x00" * 30)
    # A format problem of the file, named by the one opener of text files (issue 46); it was an
    # OSError with errno 0 before.
    with pytest.raises(
        DataFormatError, match=re.escape(str(corrupt)) + ":1: the file starts as gzip data but does not decompress"
    ):
        load_letor(corrupt)
    with pytest.raises(FileNotFoundError):
        load_letor(tmp_path / "missing.txt")
    with pytest.raises(IsADirectoryError):
        load_letor(tmp_path)


# ---------------------------------------------------------------------------------------
# Queries that cannot contribute a constraint: skipped, counted, warned; an error if none
# remain.

X4 = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.9, 0.2], [0.3, 0.3], [0.1, 0.9]])


def test_query_with_one_document_is_skipped_and_counted():
    y = np.array([1, 0, 1, 0, 0, 1])
    qid = np.array([1, 1, 2, 2, 3, 4])  # queries 3 (label 0) and 4 (label 1) have one document
    with pytest.warns(
        SkippedQueriesWarning,
        match="2 of 4 training queries were skipped: 1 without a relevant document, 1 with only relevant",
    ):
        model = SVMMap().fit(X4, y, qid=qid)
    assert model.n_queries_ == 2
    assert model.n_queries_skipped_ == {"no_relevant": 1, "all_relevant": 1}


def test_no_usable_query_is_an_error():
    with pytest.raises(
        ValueError,
        match=r"no training query has both a relevant and a non-relevant document \(2 queries: 1 without a relevant document, 1 with only relevant documents\)",
    ):
        SVMMap().fit(X4[:4], np.array([0, 0, 1, 1]), qid=[1, 1, 2, 2])
    with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\).*X has no documents"):
        SVMMap().fit(X4[:0], np.zeros(0), qid=np.zeros(0))


def test_svmmap_labels_and_graded_labels():
    # SVM^map's -1/+1: -1 is not relevant. Graded 0..4: relevant when above the threshold.
    minus_plus = SVMMap().fit(X4[:2], np.array([+1, -1]), qid=[0, 0])
    zero_one = SVMMap().fit(X4[:2], np.array([1, 0]), qid=[0, 0])
    np.testing.assert_array_equal(minus_plus.coef_, zero_one.coef_)
    graded = np.array([4, 0, 2, 1, 0, 3])
    qid = np.array([1, 1, 1, 2, 2, 2])
    binary = (graded > 0).astype(float)
    np.testing.assert_array_equal(SVMMap().fit(X4, graded, qid=qid).coef_, SVMMap().fit(X4, binary, qid=qid).coef_)
    # With relevance_threshold=2 only labels 3 and 4 are relevant.
    np.testing.assert_array_equal(
        SVMMap(relevance_threshold=2).fit(X4, graded, qid=qid).coef_,
        SVMMap().fit(X4, (graded > 2).astype(float), qid=qid).coef_,
    )


# ---------------------------------------------------------------------------------------
# Arrays handed to fit / predict.

Y = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 1.0])
Q = np.array([1, 1, 1, 2, 2, 2])

ARRAY_ERRORS = {
    # id: (X, y, qid, exception, text the message must contain)
    "y-length": (X4, Y[:5], Q, ValueError, "y has 5 entries but X has 6 rows"),
    "qid-length": (X4, Y, Q[:4], ValueError, "qid has 4 entries but X has 6 rows"),
    "qid-missing": (X4, Y, None, ValueError, "needs qid=: one query id per row"),
    "X-1d": (X4[:, 0], Y, Q, ValueError, "X must be a 2-D array (documents x features), got 1 dimension(s)"),
    "X-3d": (X4[:, :, None], Y, Q, ValueError, "X must be a 2-D array (documents x features), got 3 dimension(s)"),
    "X-no-features": (X4[:, :0], Y, Q, ValueError, "Found array with 0 feature(s) (shape=(6, 0))"),
    "X-complex": (X4 + 1j, Y, Q, ValueError, "Complex data not supported: X has dtype complex128"),
    "X-strings": (X4.astype(str), Y, Q, ValueError, "X must hold numbers, got dtype <U32"),
    # numpy turns None into NaN when converting an object array to float.
    "X-objects-none": (
        np.array([[1.0, None]] * 6, dtype=object),
        Y,
        Q,
        ValueError,
        "X[0, 1] is NaN: features must be finite numbers",
    ),
    "X-objects-text": (
        np.array([[1.0, "x"]] * 6, dtype=object),
        Y,
        Q,
        ValueError,
        "X must hold numbers, got dtype object",
    ),
    "X-nan": (np.where(X4 == 0.9, np.nan, X4), Y, Q, ValueError, "X[3, 0] is NaN: features must be finite numbers"),
    "X-inf": (np.where(X4 == 0.9, np.inf, X4), Y, Q, ValueError, "X[3, 0] is inf: features must be finite numbers"),
    "X-sparse-nan": (
        sp.csr_matrix(np.where(X4 == 0.9, np.nan, X4)),
        Y,
        Q,
        ValueError,
        "X[3, 0] (stored value 4 of the sparse matrix) is NaN",
    ),
    "y-nan": (X4, np.where(Y == 0, np.nan, Y), Q, ValueError, "y[1] is nan: labels must be finite numbers"),
    "y-strings": (X4, np.array(list("abcdef")), Q, ValueError, "y must hold numbers"),
    "y-2d": (X4, np.ones((6, 2)), Q, ValueError, "y must be 1-D, got shape (6, 2)"),
    "qid-nan": (X4, Y, np.array([1, 1, np.nan, 2, 2, 2]), ValueError, "qid contains NaN or infinite values"),
    "huge-width": (
        sp.csr_matrix((np.ones(6), np.arange(6), np.arange(7)), shape=(6, 2_000_000_000)),
        Y,
        Q,
        MemoryError,
        "training on 2000000000 features keeps every cutting plane as a dense vector of the features (16.0 GB each)",
    ),
}


@pytest.mark.parametrize("case", sorted(ARRAY_ERRORS))
def test_arrays(case):
    X, y, qid, exc, needle = ARRAY_ERRORS[case]
    with pytest.raises(exc) as info:
        SVMMap().fit(X, y, qid=qid)
    assert needle in str(info.value), str(info.value)


@pytest.mark.parametrize("missing", [None, "pd.NA", float("nan"), float("inf")], ids=["None", "NA", "nan", "inf"])
def test_a_missing_query_id_in_an_object_array_is_refused(missing):
    # Hostile trial 2, W1: a float NaN qid was refused, but None, pandas' NA or a NaN among
    # string ids were taken as one more query, pooling the rows that lack an id (here rows 3 to
    # 5, which with ids "1", "1", "1" would be the second query of Q).
    if missing == "pd.NA":
        missing = pytest.importorskip("pandas").NA
    qid = np.array(["1", "1", "1", missing, missing, missing], dtype=object)
    with pytest.raises(ValueError, match=r"qid contains a missing id: qid\[3\] is .*every row needs a query id"):
        SVMMap().fit(X4, Y, qid=qid)
    with pytest.raises(ValueError, match=r"qid contains a missing id: qid\[3\]"):
        svmmap.metrics.evaluate(Y, X4[:, 0], qid, ["map"])


def test_qid_of_mixed_types_is_accepted():
    # Query ids may be any hashable values; ids that cannot be sorted are numbered in order of
    # first appearance. The grouping is what matters: the same model as with integer ids.
    mixed = np.array([1, "a", 1, "a", "a", 1], dtype=object)
    ints = np.array([0, 1, 0, 1, 1, 0])
    np.testing.assert_array_equal(SVMMap().fit(X4, Y, qid=mixed).coef_, SVMMap().fit(X4, Y, qid=ints).coef_)


def test_huge_width_is_refused_by_the_one_memory_rule_of_the_core():
    # One owner of "too wide for memory" (issue 38): the core's check of the working set
    # against the memory available, the same for a fit and a search (there was a second rule
    # in Python, at 1/64 of the physical memory per vector, with other words).
    X = sp.csr_matrix((np.ones(6), np.arange(6), np.arange(7)), shape=(6, 2_000_000_000))
    messages = set()
    for fit in (lambda: SVMMap().fit(X, Y, qid=Q), lambda: svmmap.SVMMapCV(Cs=[1.0], cv=2).fit(X, Y, qid=Q)):
        with pytest.raises(MemoryError) as info:
            fit()
        # The memory available is read at each call and moves with the machine's load.
        messages.add(re.sub(r"only [0-9.]+ [KMGT]?B of memory", "only N of memory", str(info.value)))
    assert len(messages) == 1, messages
    assert "remove the unused columns" in messages.pop()


def test_predict_with_the_wrong_width_and_before_fit():
    model = SVMMap().fit(X4, Y, qid=Q)
    with pytest.raises(ValueError, match=r"X has 3 features, but SVMMap is expecting 2 features as input"):
        model.predict(np.zeros((2, 3)))
    with pytest.raises(svmmap.estimator.NotFittedError):
        SVMMap().predict(X4)
    # Zero rows are refused, with scikit-learn's wording, as scikit-learn's estimators do.
    with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\)"):
        model.predict(np.zeros((0, 2)))


@pytest.mark.parametrize(
    "variant",
    [
        "fortran",
        "strided-rows",
        "reversed-columns",
        "float32-fortran",
        "int",
        "bool",
        "list",
        "csc",
        "coo",
        "csr-int64",
    ],
)
def test_non_contiguous_and_other_layouts_give_the_same_model(variant):
    # Any layout or dtype is copied once into what the core reads; the model is bit-identical
    # to the one trained on the C-contiguous float64 array of the same values.
    rng = np.random.default_rng(4)
    X = rng.integers(0, 4, size=(40, 3)).astype(np.float64)
    y = rng.integers(0, 2, size=40)
    qid = np.repeat(np.arange(8), 5)
    big = np.zeros((80, 6))
    big[::2, ::2] = X
    layouts = {
        "fortran": np.asfortranarray(X),
        "strided-rows": big[::2, ::2],
        "reversed-columns": np.ascontiguousarray(X[:, ::-1])[:, ::-1],
        "float32-fortran": np.asfortranarray(X.astype(np.float32)),
        "int": X.astype(np.int64),
        "bool": X > 1,
        "list": X.tolist(),
        "csc": sp.csc_matrix(X),
        "coo": sp.coo_matrix(X),
        "csr-int64": sp.csr_matrix(
            (
                sp.csr_matrix(X).data,
                sp.csr_matrix(X).indices.astype(np.int64),
                sp.csr_matrix(X).indptr.astype(np.int64),
            ),
            shape=X.shape,
        ),
    }
    Xv = layouts[variant]
    reference_X = (X > 1).astype(np.float64) if variant == "bool" else X
    expected = SVMMap(n_jobs=1).fit(reference_X, y, qid=qid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        model = SVMMap(n_jobs=1).fit(Xv, y, qid=qid)
    if variant.startswith("float32"):
        # float32 values are exactly these small integers, so the problem is the same.
        np.testing.assert_allclose(model.coef_, expected.coef_, rtol=1e-12, atol=1e-15)
    elif variant in ("csc", "coo", "csr-int64"):
        # Sparse rows sum only stored values; the same problem up to rounding.
        np.testing.assert_allclose(model.coef_, expected.coef_, rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_array_equal(model.coef_, expected.coef_)
    # Non-contiguous y and qid are fine too.
    yy = np.repeat(y, 2)[::2]
    qq = np.repeat(qid, 2)[::2]
    np.testing.assert_array_equal(SVMMap(n_jobs=1).fit(reference_X, yy, qid=qq).coef_, expected.coef_)


def test_a_core_matrix_is_checked_once_when_made():
    # The kind, the dtypes and the stated shape are checked when the matrix is made (the core's
    # calls then only borrow its arrays), in the words the core's calls used for them.
    with pytest.raises(ValueError, match="kind must be one of"):
        CoreMatrix("sparse", (X4,), 6, 2)
    with pytest.raises(ValueError, match="X must be a 2-D float32 or float64 array"):
        CoreMatrix.dense(X4.astype(np.int64))
    with pytest.raises(ValueError, match=r"says \(6, 3\) but its array has shape \(6, 2\)"):
        CoreMatrix("dense", (X4,), 6, 3)
    with pytest.raises(ValueError, match="must have the same integer type"):
        CoreMatrix.csr(np.ones(2), np.array([0, 1], np.int32), np.array([0, 1, 2], np.int64), (2, 2))
    # An unaligned view (np.frombuffer at an odd offset, as arrays rebuilt from network frames
    # can be) is copied once, aligned; pickled (to Dask workers), the matrix comes back as the
    # same class with its columns. Scaled by 2 and scored with coef (1, 0), row i scores
    # 2 * X4[i, 0].
    buffer = np.zeros(X4.size * 8 + 1, dtype=np.uint8)
    view = np.frombuffer(buffer[1:].data, dtype=np.float64).reshape(X4.shape)
    view[...] = X4
    assert not view.flags.aligned
    matrix = CoreMatrix.dense(view)
    assert matrix.arrays[0].flags.aligned
    back = pickle.loads(pickle.dumps(matrix.with_columns(None, np.full(2, 2.0))))
    assert type(back) is CoreMatrix and back.shape == (6, 2)
    np.testing.assert_array_equal(back.arrays[0], X4)
    np.testing.assert_array_equal(_core.predict(back, np.array([1.0, 0.0]), 1), 2 * X4[:, 0])


def test_the_core_refuses_what_it_cannot_borrow():
    # The Python layer always hands over C-contiguous arrays; called directly, the core
    # refuses other layouts instead of reading the memory in the wrong order.
    codes = np.array([0, 0, 0, 1, 1, 1], dtype=np.int64)
    core = CoreMatrix.dense(X4)
    # A CoreMatrix copies what the core cannot borrow when it is made (here a Fortran-ordered
    # array, the same values in C order) and cannot be changed afterwards.
    fortran = CoreMatrix.dense(np.asfortranarray(X4))
    assert fortran.arrays[0].flags.c_contiguous
    np.testing.assert_array_equal(fortran.arrays[0], X4)
    with pytest.raises(AttributeError):
        fortran.arrays = (np.asfortranarray(X4),)  # type: ignore[misc]
    # An array reshaped in place after the matrix was made (6 x 2 read as 3 x 4) is refused at
    # the call instead of read past its rows.
    reshaped = X4.copy()
    stale = CoreMatrix.dense(reshaped)
    reshaped.shape = (3, 4)
    with pytest.raises(ValueError, match=r"says \(6, 2\) but its array has shape \(3, 4\)"):
        _core.fit_path(stale, Y, codes, 2, _core.TrainConfig(C=1.0, eps=1e-3, max_iter=10, n_jobs=1))
    with pytest.raises(TypeError, match="takes a svmmap._core.CoreMatrix"):
        _core.fit_path(X4, Y, codes, 2, _core.TrainConfig(C=1.0, eps=1e-3, max_iter=10, n_jobs=1))
    with pytest.raises(ValueError, match="y must be a contiguous array"):
        _core.fit_path(core, np.repeat(Y, 2)[::2], codes, 2, _core.TrainConfig(C=1.0, eps=1e-3, max_iter=10, n_jobs=1))
    with pytest.raises(TypeError):
        _core.fit_path(core, Y.astype(np.float32), codes, 2, _core.TrainConfig(C=1.0, eps=1e-3, max_iter=10, n_jobs=1))
    # An absurd query count is refused before anything is allocated for it.
    with pytest.raises(ValueError, match="1000000000000000000 queries for 6 rows"):
        _core.fit_path(core, Y, codes, 10**18, _core.TrainConfig(C=1.0, eps=1e-3, max_iter=10, n_jobs=1))
    with pytest.raises(ValueError, match="query code 5 of row 0 is outside 0..2"):
        _core.fit_path(
            core,
            Y,
            np.array([5, 0, 0, 1, 1, 1], dtype=np.int64),
            2,
            _core.TrainConfig(C=1.0, eps=1e-3, max_iter=10, n_jobs=1),
        )


# ---------------------------------------------------------------------------------------
# Parameters.

PARAM_ERRORS = {
    "C-zero": ({"C": 0.0}, "C must be a finite number > 0, got 0.0"),
    "C-negative": ({"C": -1.0}, "C must be a finite number > 0, got -1.0"),
    "C-nan": ({"C": float("nan")}, "C must be a finite number > 0, got nan"),
    "C-inf": ({"C": float("inf")}, "C must be a finite number > 0, got inf"),
    "C-string": ({"C": "1"}, "C must be a finite number > 0, got '1'"),
    "eps-zero": ({"eps": 0.0}, "eps must be a finite number > 0, got 0.0"),
    "eps-negative": ({"eps": -1e-3}, "eps must be a finite number > 0, got -0.001"),
    "max_iter-zero": ({"max_iter": 0}, "max_iter must be an integer >= 1, got 0"),
    "max_iter-float": ({"max_iter": 2.5}, "max_iter must be an integer >= 1, got 2.5"),
    "threshold-nan": ({"relevance_threshold": float("nan")}, "relevance_threshold must be a finite number"),
    "loss-unknown": ({"loss": "accuracy-of-vibes"}, "loss must be one of"),
    "loss-k-zero": ({"loss": "ndcg@0"}, "loss must be one of"),
    "loss-k-negative": ({"loss": "mrr@-2"}, "loss must be one of"),
    "loss-empty-list": (
        {"loss": []},
        "loss must be a loss name, a list of loss names or a dict of loss names to weights, got []",
    ),
    "loss-none": (
        {"loss": None},
        "loss must be a loss name, a list of loss names or a dict of loss names to weights, got None",
    ),
    "n_jobs-zero": ({"n_jobs": 0}, "n_jobs must be None, an integer from 1 to 1024, or a negative integer"),
    "n_jobs-absurd": ({"n_jobs": 10**6}, "n_jobs must be None, an integer from 1 to 1024, or a negative integer"),
    "callback-not-callable": ({"callback": 3}, "callback must be callable or None, got 3"),
}


@pytest.mark.parametrize("case", sorted(PARAM_ERRORS))
def test_parameters(case):
    params, needle = PARAM_ERRORS[case]
    with pytest.raises(ValueError) as info:
        SVMMap(**params).fit(X4, Y, qid=Q)
    assert needle in str(info.value), str(info.value)


METRIC_ERRORS = {
    "metric-k-zero": (dict(metrics=["ndcg@0"]), 'cutoff k must be an integer >= 1, got "ndcg@0"'),
    "metric-k-negative": (dict(metrics=["mrr@-1"]), 'cutoff k must be an integer >= 1, got "mrr@-1"'),
    "metric-k-text": (dict(metrics=["p@ten"]), 'cutoff k must be an integer >= 1, got "p@ten"'),
    "metric-unknown": (dict(metrics=["bleu"]), "metric must be one of map, ndcg, ndcg@k"),
    "metric-gain-overflow": (
        dict(metrics=["ndcg"], y_true=[2000.0, 0, 1, 0, 1, 0]),
        "y_true[0] is 2000: with the gain 2^label - 1, NDCG needs labels of at most 1000",
    ),
    "metric-score-nan": (dict(metrics=["map"], y_score=[np.nan, 0, 0, 0, 0, 0]), "y_score[0] is NaN"),
    "metric-length": (dict(metrics=["map"], y_score=[0.0] * 5), "entries"),
}


@pytest.mark.parametrize("case", sorted(METRIC_ERRORS))
def test_metrics(case):
    kw, needle = METRIC_ERRORS[case]
    y_true = kw.pop("y_true", Y)
    y_score = kw.pop("y_score", X4[:, 0])
    with pytest.raises(ValueError) as info:
        svmmap.metrics.evaluate(y_true, y_score, Q, **kw)
    assert needle in str(info.value), str(info.value)


# ---------------------------------------------------------------------------------------
# Model files: ModelFormatError (a ValueError) naming the file and the problem.


@pytest.fixture(scope="module")
def model_text(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "m.json"
    SVMMap(C=2.0).fit(X4, Y, qid=Q).save(path)
    return path.read_text()


def _edit(doc_text, **changes):
    doc = json.loads(doc_text)
    doc.update(changes)
    return json.dumps(doc)


MODEL_ERRORS = {
    "model-empty": (lambda t: "", "the file ends early (truncated?)"),
    "model-truncated": (lambda t: t[: len(t) // 2], "the file ends early (truncated?)"),
    "model-corrupted": (lambda t: t.replace('"coef": [', '"coef": [}', 1), "not valid JSON"),
    "model-binary": (lambda t: b"PK\x03\x04\xff\xfe\xfa", "not UTF-8 text"),
    # A whole gzip header, then bytes that are not deflate data.
    "model-gzip-broken": (
        lambda t: b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xfe\xfa",
        "starts as gzip data but does not decompress",
    ),
    # Seven bytes of a ten-byte gzip header: a file cut short, named as such (issue 46).
    "model-gzip-truncated": (lambda t: b"\x1f\x8b\x08\x00\xff\xfe\xfa", "the gzip data ends early"),
    "model-not-json-object": (
        lambda t: "[1, 2, 3]",
        "not an svmmap model: the file holds an array, where a model is a JSON object",
    ),
    "model-other-format": (
        lambda t: _edit(t, format="lightgbm"),
        'not an svmmap model (expected "format": "svmmap-model", got "lightgbm")',
    ),
    "model-newer-version": (lambda t: _edit(t, version=99), "model format version 99 was written by a newer svmmap"),
    "model-older-version": (lambda t: _edit(t, version=0), "unsupported model format version 0"),
    "model-version-missing": (
        lambda t: json.dumps({k: v for k, v in json.loads(t).items() if k != "version"}),
        "unsupported model format version (missing)",
    ),
    "model-version-text": (lambda t: _edit(t, version="1"), 'unsupported model format version "1" (a string)'),
    "model-coef-length": (lambda t: _edit(t, n_features=3), "n_features is 3 but coef has 2 entries"),
    "model-coef-not-numbers": (lambda t: _edit(t, coef=["a", 1.0]), "malformed model"),
    "model-coef-overflow": (lambda t: t.replace('"coef": [', '"coef": [1e999, ', 1), "not valid JSON"),
    "model-params-not-object": (lambda t: _edit(t, params=[1]), '"params" must be a JSON object or null, got an array'),
    "model-training-not-object": (
        lambda t: _edit(t, training="fast"),
        '"training" must be a JSON object or null, got a string',
    ),
    "model-feature-names": (lambda t: _edit(t, feature_names=["a"]), "1 feature names for 2 features"),
}


@pytest.mark.parametrize("case", sorted(MODEL_ERRORS))
def test_model_files(tmp_path, model_text, case):
    make, needle = MODEL_ERRORS[case]
    content = make(model_text)
    path = tmp_path / "m.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ModelFormatError) as info:
        load_model(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    assert needle in message, message


def test_model_file_missing_or_a_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing.json")
    with pytest.raises(IsADirectoryError):
        load_model(tmp_path)


# ---------------------------------------------------------------------------------------
# Prediction files read back by `svmmap evaluate`.


@pytest.mark.parametrize(
    "content,needle",
    [
        ("0.5\nhigh\n", r":2: field 1 \(the score\): expected a number, got 'high'"),
        ("0.5\nnan\n", r":2: field 1 \(the score\): nan is not finite"),
        ("0.5\n", "1 scores for 2 documents"),
    ],
    ids=["predictions-not-a-number", "predictions-nan", "predictions-count"],
)
def test_prediction_files(tmp_path, content, needle):
    path = tmp_path / "p.txt"
    path.write_text(content)
    with pytest.raises(DataFormatError, match=needle):
        load_predictions(path, n_expected=2)
