"""Issue 13, item 6: text inputs as real files come.

A UTF-8 byte order mark, CRLF and CR-only line breaks, Latin-1 bytes, vertical tabs and no-break
spaces, and predictions files with several columns, in LETOR files, TREC runs and qrels and
predictions files. Each is read as its plain LF/UTF-8 twin is, or refused with file, line and
field. The three readers agree on what a query id is: the same string is the same query in
every file, whatever else the file holds.
"""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest
from svmmap import DataFormatError, load_letor
from svmmap.cli import main
from svmmap.io import load_predictions, save_predictions
from svmmap.ir.trec import read_qrels, read_run

BOM = b"\xef\xbb\xbf"

# Line-break conventions and a BOM, applied to the bytes of an LF file.
VARIANTS = {
    "lf": lambda b: b,
    "bom": lambda b: BOM + b,
    "crlf": lambda b: b.replace(b"\n", b"\r\n"),
    "cr": lambda b: b.replace(b"\n", b"\r"),
    "bom-cr": lambda b: BOM + b.replace(b"\n", b"\r"),
    "bom-crlf-no-final-break": lambda b: BOM + b.replace(b"\n", b"\r\n").rstrip(b"\r\n"),
}

LETOR = b"2 qid:7 1:0.5 2:1 # doc-a\n\n0 qid:7 1:0.25 # doc-b\n1 qid:12 2:3 # doc-c\n"


@pytest.mark.parametrize("variant", VARIANTS)
def test_letor_files_read_the_same_with_any_line_breaks_and_a_bom(tmp_path, variant):
    path = tmp_path / "f.txt"
    path.write_bytes(VARIANTS[variant](LETOR))
    X, y, qid, comments = load_letor(path, return_comments=True)
    # Written out by hand from LETOR above.
    assert X.toarray().tolist() == [[0.5, 1.0], [0.25, 0.0], [0.0, 3.0]]
    assert y.tolist() == [2.0, 0.0, 1.0]
    assert qid.tolist() == [7, 7, 12] and qid.dtype == np.int64
    assert comments == ["doc-a", "doc-b", "doc-c"]


def test_letor_errors_count_cr_line_breaks(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"1 qid:1 1:1\r0 qid:1 1:2\r1 qid:1 1:oops\r")
    with pytest.raises(DataFormatError, match=r"f\.txt:3: field 3 \('1:oops'\)"):
        load_letor(path)


def test_letor_latin1_bytes_are_refused_with_line_and_field(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"1 qid:1 1:1 # ok\n0 qid:caf\xe9 1:2\n")
    with pytest.raises(
        DataFormatError, match=r"f\.txt:2: field 2: the query id 'qid:caf.' is not valid UTF-8 text \(byte 0xe9"
    ):
        load_letor(path)
    path.write_bytes(b"1 qid:1 1:1 # ok\n0 qid:1 1:2 # caf\xe9\n")
    with pytest.raises(DataFormatError, match=r"f\.txt:2: the comment is not valid UTF-8 text \(byte 0xe9"):
        load_letor(path, return_comments=True)
    # Not asked for, the comment is not read, and the file loads.
    assert load_letor(path)[1].tolist() == [1.0, 0.0]


RUN = b"1 Q0 d1 1 2.5 bm25\n1 Q0 d2 2 1.5 bm25\n\n02 Q0 d7 1 0.25 bm25\n"
QRELS = b"1 0 d1 1\n1 0 d3 0\n02 0 d7 2\n"


@pytest.mark.parametrize("variant", VARIANTS)
def test_trec_runs_and_qrels_read_the_same_with_any_line_breaks_and_a_bom(tmp_path, variant):
    (tmp_path / "run").write_bytes(VARIANTS[variant](RUN))
    (tmp_path / "qrels").write_bytes(VARIANTS[variant](QRELS))
    run, qrels = read_run(tmp_path / "run"), read_qrels(tmp_path / "qrels")
    assert run.to_dict() == {"1": {"d1": 2.5, "d2": 1.5}, "02": {"d7": 0.25}}
    assert run.tag == "bm25"
    assert qrels.to_dict() == {"1": {"d1": 1, "d3": 0}, "02": {"d7": 2}}


def test_trec_latin1_bytes_are_refused_with_line_and_field(tmp_path):
    path = tmp_path / "run"
    path.write_bytes(b"1 Q0 d1 1 2.5 bm25\n1 Q0 caf\xe9 2 1.5 bm25\n")
    with pytest.raises(DataFormatError, match=r"run:2: field 3 \('caf.'\) is not UTF-8 text \(byte 0xe9"):
        read_run(path)
    path = tmp_path / "qrels"
    path.write_bytes(b"1 0 d1 1\n\xe91 0 d2 1\n")
    with pytest.raises(DataFormatError, match=r"qrels:2: field 1 .* is not UTF-8 text \(byte 0xe9"):
        read_qrels(path)


def test_readers_split_fields_on_the_same_whitespace(tmp_path):
    """Vertical tab and form feed separate fields (C's isspace); a no-break space does not, in
    the LETOR reader and in the TREC readers alike, so "1\\u00a0a" is one id in both."""
    nbsp = "\u00a0".encode()
    (tmp_path / "f.txt").write_bytes(b"1 qid:1" + nbsp + b"a\x0b1:2\x0c2:3\n0 qid:1" + nbsp + b"a 1:1\n")
    X, y, qid = load_letor(tmp_path / "f.txt")
    assert qid.tolist() == ["1\u00a0a"] * 2 and X.toarray().tolist() == [[2.0, 3.0], [1.0, 0.0]]
    (tmp_path / "run").write_bytes(b"1" + nbsp + b"a\x0bQ0 d1 1 2.5\x0cbm25\n")
    assert read_run(tmp_path / "run").qid.tolist() == ["1\u00a0a"]
    (tmp_path / "qrels").write_bytes(b"1" + nbsp + b"a 0 d1\x0b1\n")
    assert read_qrels(tmp_path / "qrels").qid.tolist() == ["1\u00a0a"]


@pytest.mark.parametrize(
    "ids",
    [["01", "1"], ["1", "+1"], ["1", " 1"], ["1_0", "10"], ["-0", "0"], ["\u0661", "1"], ["9223372036854775808", "1"]],
    ids=["leading-zero", "plus", "space", "underscore", "minus-zero", "arabic-indic-digit", "beyond-int64"],
)
def test_a_query_id_is_its_string(tmp_path, ids):
    """Two different strings are two queries (int() would merge "01" and "1" into query 1), and
    each id read back as str() is the file's string, as the TREC readers have it."""
    a, b = ids
    if a.startswith(" ") or b.startswith(" "):
        # A space cannot be inside a LETOR field; "qid: 1" has an empty id instead.
        (tmp_path / "f.txt").write_text("1 qid: 1 1:1\n")
        with pytest.raises(DataFormatError, match="field 2 must be 'qid:<query id>'"):
            load_letor(tmp_path / "f.txt")
        return
    (tmp_path / "f.txt").write_text(f"1 qid:{a} 1:1\n0 qid:{a} 1:0\n1 qid:{b} 1:1\n0 qid:{b} 1:0\n")
    if (a, b) in [("01", "1"), ("1", "+1"), ("-0", "0")]:
        # One number written two ways in one LETOR file is refused (hostile trial 2, W2):
        # SVMlight would read one query, trec_eval and RankLib two.
        with pytest.raises(
            DataFormatError,
            match=rf"f\.txt:3: the query id '{re.escape(b)}' is the number of the query id '{re.escape(a)}' \(line 1\)",
        ):
            load_letor(tmp_path / "f.txt")
    else:
        qid = load_letor(tmp_path / "f.txt")[2]
        assert [str(q) for q in qid] == [a, a, b, b]
        assert len(set(qid.tolist())) == 2
    (tmp_path / "run").write_text(f"{a} Q0 d1 1 1 t\n{b} Q0 d1 1 1 t\n")
    assert sorted(read_run(tmp_path / "run").qid.tolist()) == sorted([a, b])


@pytest.mark.parametrize("other", ["01", "+1", "1.0", "1e0", "001.00"])
def test_one_number_written_as_two_query_ids_is_refused_naming_both_lines(tmp_path, other):
    # Hostile trial 2, W2: "qid:01" beside "qid:1" split query 1 in two (ids are kept as
    # written), while feature index 01 is feature 1. Decimal's value is the number rule, so
    # 1e0 and 001.00 are the number 1 as well.
    (tmp_path / "f.txt").write_text(f"1 qid:1 1:0.5\n0 qid:2 1:0.1\n1 qid:2 1:0.3\n0 qid:{other} 1:0.9\n")
    with pytest.raises(
        DataFormatError,
        match=rf"f\.txt:4: the query id '{re.escape(other)}' is the number of the query id '1' \(line 1\)",
    ):
        load_letor(tmp_path / "f.txt")
    # Ids that are not one number written twice stay as they are: "01" and "02" are strings.
    (tmp_path / "g.txt").write_text("1 qid:01 1:0.5\n0 qid:01 1:0.1\n1 qid:02 1:0.3\n0 qid:1.5 1:0.9\n")
    assert load_letor(tmp_path / "g.txt")[2].tolist() == ["01", "01", "02", "1.5"]


def test_canonical_integer_ids_stay_int64_and_the_same_in_every_reader(tmp_path):
    """LETOR ids that are all canonical integers are int64 whose str() is the id; the same
    queries in a run with a BOM and qrels with CR line breaks have the same strings."""
    (tmp_path / "f.txt").write_bytes(BOM + b"1 qid:10 1:1\n0 qid:10 1:0\n1 qid:-3 1:1\n0 qid:0 1:0\n")
    qid = load_letor(tmp_path / "f.txt")[2]
    assert qid.dtype == np.int64 and qid.tolist() == [10, 10, -3, 0]
    (tmp_path / "run").write_bytes(BOM + b"10 Q0 a 1 1 t\n-3 Q0 a 1 1 t\n0 Q0 a 1 1 t\n")
    (tmp_path / "qrels").write_bytes(b"10 0 a 1\r-3 0 a 1\r0 0 a 1\r")
    letor_ids = {str(q) for q in qid}
    assert set(read_run(tmp_path / "run").queries()) == letor_ids == set(read_qrels(tmp_path / "qrels").queries())


@pytest.mark.parametrize(
    "text",
    ["0.5\n-1\n2.25\n", "1 0.5\n1 -1\n2 2.25\n", "1\t0\t0.5\n1\t1\t-1\n2\t0\t2.25\n", "\ufeff0.5\r-1\r2.25\r"],
    ids=["score", "qid-score", "ranklib-qid-index-score", "bom-cr"],
)
def test_predictions_in_every_layout_read_the_scores(tmp_path, text):
    path = tmp_path / "p.txt"
    path.write_bytes(text.encode())
    assert load_predictions(path, qid=np.array([1, 1, 2])).tolist() == [0.5, -1.0, 2.25]


@pytest.mark.parametrize(
    "text,needle",
    [
        (
            "1 0.5\n2 -1\n2 2.25\n",
            r"p\.txt:2: field 1 \(qid\) is '2', but document 2 of the data file belongs to query '1'",
        ),
        ("1 0.5\n1 -1\n02 2.25\n", r"p\.txt:3: field 1 \(qid\) is '02'"),
        ("1 0.5\n-1\n2 2.25\n", r"p\.txt:2: 1 fields, but line 1 has 2 \('qid score'\)"),
        ("1 0 0.5\n1 x -1\n2 0 2.25\n", r"p\.txt:2: field 2 \(RankLib's document index\) must be an integer, got 'x'"),
        ("1 0 0 0.5\n", r"p\.txt:1: 4 fields"),
        ("1 0.5\n1 high\n", r"p\.txt:2: field 2 \(the score\): expected a number, got 'high'"),
        ("0.5\n1e999\n", r"p\.txt:2: field 1 \(the score\): 1e999 is not finite"),
        ("0.5\n\xe9\n", None),
    ],
    ids=[
        "qid-differs",
        "qid-leading-zero",
        "layout-changes",
        "ranklib-index",
        "four-columns",
        "score-not-a-number",
        "score-overflows",
        "latin1",
    ],
)
def test_bad_predictions_are_refused_with_line_and_field(tmp_path, text, needle):
    path = tmp_path / "p.txt"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(DataFormatError, match=needle or r"p\.txt:2: field 1 .* is not UTF-8 text \(byte 0xe9"):
        load_predictions(path, qid=np.array([1, 1, 2]))


def test_cli_evaluate_reads_ranklib_predictions_like_single_scores(tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("1 qid:1 1:1\n0 qid:1 1:0\n0 qid:2 1:1\n1 qid:2 1:0\n")
    scores = [0.9, 0.1, 0.8, 0.2]
    (tmp_path / "one.txt").write_text("".join(f"{s}\n" for s in scores))
    (tmp_path / "ranklib.txt").write_text(
        "".join(f"{q}\t{i}\t{s}\n" for q, i, s in zip([1, 1, 2, 2], [0, 1, 0, 1], scores))
    )
    outputs = []
    for name in ("one.txt", "ranklib.txt"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["evaluate", "--metrics", "map", str(data), str(tmp_path / name)]) == 0
        outputs.append(out.getvalue())
    # Query 1 ranks its relevant document first (AP 1), query 2 second (AP 1/2): MAP 0.75.
    assert outputs[0] == outputs[1] and "\nmap  0.7500" in outputs[0]
    # Predictions of another data file (a different query order) are refused, not evaluated.
    (tmp_path / "other.txt").write_text("2 0.9\n2 0.1\n1 0.8\n1 0.2\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["evaluate", str(data), str(tmp_path / "other.txt")]) == 2
    assert "other.txt:1: field 1 (qid) is '2'" in err.getvalue()


def test_gzipped_runs_qrels_and_predictions_are_read(tmp_path):
    """TREC distributes runs as .gz; like the LETOR reader, the text readers detect gzip by
    its magic bytes, whatever the file's name."""
    import gzip

    (tmp_path / "run").write_bytes(gzip.compress(RUN))
    (tmp_path / "qrels.gz").write_bytes(gzip.compress(QRELS.replace(b"\n", b"\r\n")))
    (tmp_path / "p.txt").write_bytes(gzip.compress(b"0.5\n-1\n"))
    assert read_run(tmp_path / "run").to_dict() == {"1": {"d1": 2.5, "d2": 1.5}, "02": {"d7": 0.25}}
    assert read_qrels(tmp_path / "qrels.gz").to_dict() == {"1": {"d1": 1, "d3": 0}, "02": {"d7": 2}}
    assert load_predictions(tmp_path / "p.txt").tolist() == [0.5, -1.0]


@pytest.mark.parametrize("reader", ["letor", "run", "qrels", "predictions"])
def test_utf16_files_and_marks_inside_a_file_are_refused(tmp_path, reader):
    text = {"letor": LETOR, "run": RUN, "qrels": QRELS, "predictions": b"0.5\n-1\n2.25\n"}[reader]
    read = {
        "letor": load_letor,
        "run": read_run,
        "qrels": read_qrels,
        "predictions": lambda p: load_predictions(p),
    }[reader]
    path = tmp_path / "f.txt"
    path.write_bytes(text.decode().encode("utf-16"))  # Python writes the BOM FF FE first
    with pytest.raises(DataFormatError, match=r"f\.txt:1: the file is UTF-16 text"):
        read(path)
    # Two files with marks joined by cat: the second mark would stick to a label or query id.
    path.write_bytes(BOM + text + BOM + text)
    n_lines = text.count(b"\n")
    with pytest.raises(
        DataFormatError, match=rf"f\.txt:{n_lines + 1}: a UTF-8 byte order mark in the middle of the file"
    ):
        read(path)


@pytest.mark.parametrize("token", ["1_0", "\u0661", "\uff11", "0x10"])
def test_numbers_are_ascii_decimals_in_every_reader(tmp_path, token):
    """Python's int() and float() take "1_0" and other scripts' digits; the LETOR reader (and
    C's atof in trec_eval) do not. Refused with line and field, instead of read as 10 or 1."""
    (tmp_path / "run").write_text(f"1 Q0 d1 1 2.5 t\n1 Q0 d2 2 {token} t\n")
    with pytest.raises(DataFormatError, match=r"run:2: field 5 \(score\) must be a number"):
        read_run(tmp_path / "run")
    (tmp_path / "run").write_text(f"1 Q0 d1 {token} 2.5 t\n")
    with pytest.raises(DataFormatError, match=r"run:1: field 4 \(rank\) must be an integer"):
        read_run(tmp_path / "run")
    (tmp_path / "qrels").write_text(f"1 0 d1 {token}\n")
    with pytest.raises(DataFormatError, match=r"qrels:1: field 4 \(relevance\) must be an integer"):
        read_qrels(tmp_path / "qrels")
    (tmp_path / "p.txt").write_text(f"{token}\n")
    with pytest.raises(DataFormatError, match=r"p\.txt:1: field 1 \(the score\): expected a number"):
        load_predictions(tmp_path / "p.txt")
    (tmp_path / "f.txt").write_text(f"1 qid:1 1:{token}\n")
    with pytest.raises(DataFormatError, match=r"f\.txt:1: field 3"):
        load_letor(tmp_path / "f.txt")


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs FIFOs")
def test_text_readers_read_a_pipe_once(tmp_path):
    """A run given as a pipe (the shell's `<(zcat run.gz)`) is read from its first byte: the
    gzip check peeks instead of reading the start and opening the file again."""
    import gzip
    import os
    import threading

    for content in (RUN, gzip.compress(RUN)):
        fifo = tmp_path / "pipe"
        if fifo.exists():
            fifo.unlink()
        os.mkfifo(fifo)

        def feed(data=content):
            with open(fifo, "wb") as f:
                f.write(data)

        writer = threading.Thread(target=feed)
        writer.start()
        try:
            run = read_run(fifo)
        finally:
            writer.join(timeout=30)
        assert run.to_dict() == {"1": {"d1": 2.5, "d2": 1.5}, "02": {"d7": 0.25}}


def test_nul_bytes_in_ids_are_refused_in_every_reader(tmp_path):
    """numpy's str arrays drop trailing NUL characters, so "1\\0" and "1" would silently be
    one query (or document); every reader refuses the byte with its line and field."""
    (tmp_path / "f.txt").write_bytes(b"1 qid:1 1:1\n0 qid:1\x00 1:2\n")
    with pytest.raises(DataFormatError, match=r"f\.txt:2: field 2: the query id .* contains a NUL byte"):
        load_letor(tmp_path / "f.txt")
    (tmp_path / "run").write_bytes(b"1 Q0 d1 1 2 t\n1 Q0 d1\x00 2 1 t\n")
    with pytest.raises(DataFormatError, match=r"run:2: field 3 contains a NUL byte"):
        read_run(tmp_path / "run")
    (tmp_path / "qrels").write_bytes(b"1\x00 0 d1 1\n")
    with pytest.raises(DataFormatError, match=r"qrels:1: field 1 contains a NUL byte"):
        read_qrels(tmp_path / "qrels")


def test_ranklib_scores_are_placed_by_their_document_index(tmp_path):
    # Hostile trial 2, W3: the index column was ignored and the scores taken in line order.
    # RankLib's index is the document's position in its query from 0, so query 1's lines
    # "index 1: -1" then "index 0: 0.5" give document 1 of query 1 the score 0.5.
    path = tmp_path / "p.txt"
    path.write_text("1\t1\t-1\n1\t0\t0.5\n2\t0\t2.25\n")
    assert load_predictions(path, qid=np.array([1, 1, 2])).tolist() == [0.5, -1.0, 2.25]
    assert load_predictions(path).tolist() == [0.5, -1.0, 2.25]


@pytest.mark.parametrize(
    "text,needle",
    [
        (
            "1\t0\t0.5\n1\t0\t-1\n2\t0\t2.25\n",
            r"p\.txt:2: field 2 \(RankLib's document index\) 0 of query '1' is also on line 1",
        ),
        (
            "1\t0\t0.5\n1\t2\t-1\n2\t0\t2.25\n",
            r"p\.txt:2: field 2 \(RankLib's document index\) is 2, but query '1' has 2 lines",
        ),
        (
            "1\t0\t0.5\n1\t1\t-1\n2\t5\t2.25\n",
            r"p\.txt:3: field 2 \(RankLib's document index\) is 5, but query '2' has 1 lines",
        ),
    ],
    ids=["duplicate", "beyond-the-query", "beyond-the-last-query"],
)
def test_ranklib_indices_that_name_no_document_are_refused(tmp_path, text, needle):
    path = tmp_path / "p.txt"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=needle):
        load_predictions(path, qid=np.array([1, 1, 2]))


@pytest.mark.parametrize(
    "scores,needle",
    [
        (np.array([np.nan, 1.0]), r"scores\[0\] is nan: scores must be finite numbers"),
        (np.array([1.0, -np.inf]), r"scores\[1\] is -inf: scores must be finite numbers"),
        (np.ones((2, 3)), r"scores must be 1-D \(one score per document\), got shape \(2, 3\)"),
        (np.array([1 + 2j]), r"scores must hold real numbers"),
        (["a"], r"scores must hold numbers"),
    ],
    ids=["nan", "inf", "2d", "complex", "text"],
)
def test_save_predictions_refuses_what_load_predictions_could_not_read(tmp_path, scores, needle):
    # Hostile trial 2, W4: NaN was written as "nan", which load_predictions refuses, and a 2-D
    # array failed with NumPy's "only 0-dimensional arrays can be converted". Nothing is written.
    path = tmp_path / "p.txt"
    with pytest.raises(ValueError, match=needle):
        save_predictions(path, scores)
    assert not path.exists()


@pytest.mark.parametrize("text", ["", "\n\n  \n"], ids=["empty", "blank-lines"])
def test_an_empty_predictions_file_is_refused(tmp_path, text):
    # Hostile trial 2, W7: it gave an empty array, while every other reader refuses an empty file.
    path = tmp_path / "p.txt"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=r"p\.txt: no data lines: the file is empty or holds only blank lines"):
        load_predictions(path)


@pytest.mark.parametrize("n_expected", [-1, 0, 2.0, True, "3"])
def test_load_predictions_refuses_a_count_that_is_not_one(tmp_path, n_expected):
    path = tmp_path / "p.txt"
    path.write_text("0.5\n")
    with pytest.raises(ValueError, match=r"n_expected must be an integer >= 1 \(the number of documents\) or None"):
        load_predictions(path, n_expected=n_expected)


def test_letor_docids_refuses_a_path_given_for_the_comments(tmp_path):
    # Hostile trial 2, W5: a str was read one character per row ("row 0: no document id in
    # the comment '/'"); the comments are a list, one per row.
    from svmmap.io import letor_docids

    with pytest.raises(ValueError, match=r"comments must be the comments of every row \(a list of str"):
        letor_docids(str(tmp_path / "file.txt"))
    assert letor_docids(["docid = d1 inc = 1", "docid=d2"]).tolist() == ["d1", "d2"]
