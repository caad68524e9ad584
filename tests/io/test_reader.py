"""svmmap.load_letor against scikit-learn's svmlight reader, and its error messages."""

import gzip
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import svmmap
from sklearn.datasets import load_svmlight_file
from svmmap import DataFormatError, load_letor
from svmmap.datasets import letor_folds, load_mq2008, mq2008_path, write_mq2008


def test_mq2008_matches_sklearn(shared):
    path = shared / "data" / "MQ2008" / "Fold1" / "test.txt"
    X, y, qid = load_letor(path)
    Xs, ys, qs = load_svmlight_file(str(path), query_id=True)
    assert isinstance(X, np.ndarray) and X.shape == (2874, 46) and X.flags.c_contiguous
    np.testing.assert_array_equal(X, Xs.toarray())
    np.testing.assert_array_equal(y, ys)
    np.testing.assert_array_equal(qid, qs)
    assert qid.dtype == np.int64


def test_gzip_is_detected_by_content(shared, tmp_path):
    plain = shared / "data" / "MQ2008" / "Fold2" / "test.txt"
    # Bundled S1 is Fold2/test.txt compressed; a gzip file under a .txt name works as well.
    renamed = tmp_path / "looks_plain.txt"
    renamed.write_bytes(gzip.compress(plain.read_bytes()))
    for path in (mq2008_path(1), renamed):
        X, y, qid = load_letor(path)
        X0, y0, q0 = load_letor(plain)
        np.testing.assert_array_equal(X, X0)
        np.testing.assert_array_equal(y, y0)
        np.testing.assert_array_equal(qid, q0)


def test_comments_and_float32(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("2 qid:3 1:0.5 2:0.25 #docid = GX1 inc = 1\n0 qid:3 1:0.1 2:0.2 # GX2\n")
    X, y, qid, comments = load_letor(f, dtype=np.float32, return_comments=True)
    assert X.dtype == np.float32
    np.testing.assert_array_equal(X, np.array([[0.5, 0.25], [0.1, 0.2]], dtype=np.float32))
    assert comments == ["docid = GX1 inc = 1", "GX2"]
    np.testing.assert_array_equal(qid, [3, 3])


def test_sparse_lines_give_csr(tmp_path):
    f = tmp_path / "sparse.txt"
    f.write_text("1 qid:a 3:1.5\n0 qid:b 1:2 5:-1\n-1 qid:a 2:7\n")
    X, y, qid = load_letor(f)
    assert sp.isspmatrix_csr(X) and X.shape == (3, 5)
    np.testing.assert_array_equal(X.toarray(), [[0, 0, 1.5, 0, 0], [2, 0, 0, 0, -1], [0, 7, 0, 0, 0]])
    np.testing.assert_array_equal(y, [1, 0, -1])
    assert list(qid) == ["a", "b", "a"]
    dense, _, _ = load_letor(f, sparse=False)
    np.testing.assert_array_equal(dense, X.toarray())
    wide, _, _ = load_letor(f, n_features=8)
    assert wide.shape == (3, 8)


@pytest.mark.parametrize(
    "text,line,needle",
    [
        ("1 qid:1 1:1\n0 1:2\n", 2, "field 2 must be 'qid:<query id>'"),
        ("1 qid:1 1:1\n1 qid:1 1:abc\n", 2, "field 3 ('1:abc'): value not a number"),
        ("1 qid:1 1:NULL 2:1\n", 1, "NULL"),
        ("1 qid:1 1:nan\n", 1, "finite"),
        ("1 qid:1 1:1\n\n1 qid:2 0:1\n", 3, "indices start at 1"),
        ("1 qid:1 -4:1\n", 1, "positive integer"),
        ("1 qid:1 2:1 2:2\n", 1, "more than once"),
        ("1 qid:1 1000000000000:1\n", 1, "largest supported index"),
        ("abc qid:1 1:1\n", 1, "field 1 (the label)"),
        ("1 qid:1 1:1 7\n", 1, "field 4 must be '<index>:<value>'"),
    ],
)
def test_malformed_lines_name_file_line_and_field(tmp_path, text, line, needle):
    f = tmp_path / "bad.txt"
    f.write_text(text)
    with pytest.raises(DataFormatError) as info:
        load_letor(f)
    message = str(info.value)
    assert message.startswith(f"{f}:{line}: "), message
    assert needle in message
    assert isinstance(info.value, ValueError)


def test_empty_and_missing_files(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(DataFormatError, match="no data lines"):
        load_letor(empty)
    comments = tmp_path / "comments.txt"
    comments.write_text("# just a header\n\n")
    with pytest.raises(DataFormatError, match="no data lines"):
        load_letor(comments)
    with pytest.raises(FileNotFoundError) as info:
        load_letor(tmp_path / "nope.txt")
    assert info.value.filename == str(tmp_path / "nope.txt")


def test_bundled_folds_rebuild_the_original_files(shared):
    # The bundled subsets regroup into exactly the original fold files (rows may be in
    # another order in train.txt; compare as multisets of rows).
    for fold in (1, 3):
        for split in ("train", "vali", "test"):
            X, y, qid = load_mq2008(fold, split)
            X0, y0, q0 = load_letor(shared / "data" / "MQ2008" / f"Fold{fold}" / f"{split}.txt")
            a = np.column_stack([qid, y, X])
            b = np.column_stack([q0, y0, X0])
            np.testing.assert_array_equal(a[np.lexsort(a.T[::-1])], b[np.lexsort(b.T[::-1])])


def test_write_mq2008_writes_the_release_s_fold_files(shared, tmp_path):
    # The bundled subsets, decompressed and concatenated in the readme's order, are the
    # release's files byte for byte, train.txt included.
    for path in write_mq2008(tmp_path, folds=[2, 5]):
        original = shared / "data" / "MQ2008" / Path(path).parent.name / Path(path).name
        assert Path(path).read_bytes() == original.read_bytes(), path


def test_write_mq2008_folds_read_back_as_the_bundled_folds(tmp_path):
    paths = write_mq2008(tmp_path / "new" / "MQ2008", folds=[4])
    assert [Path(p).relative_to(tmp_path).as_posix() for p in paths] == [
        f"new/MQ2008/Fold4/{split}.txt" for split in ("train", "vali", "test")
    ]
    (fold,) = letor_folds(str(tmp_path / "new" / "MQ2008"))
    for split in ("train", "vali", "test"):
        for got, want in zip(getattr(fold, split), load_mq2008(4, split)):
            np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="folds 1..5"):
        write_mq2008(tmp_path, folds=[6])


def test_bad_arguments():
    with pytest.raises(ValueError, match="dtype"):
        load_letor(mq2008_path(1), dtype=np.int32)
    with pytest.raises(ValueError, match="sparse"):
        load_letor(mq2008_path(1), sparse="yes")
    assert svmmap.load_letor is load_letor
