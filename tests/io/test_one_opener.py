"""Issue 46, item 2: one opener for every text file.

LETOR files, LightGBM's ``.query`` files, TREC runs and qrels, predictions and model files are
all opened by the core's one opener (``rust/data/reader/file.rs``), so each hostile encoding is
read or refused the same way by every reader: a UTF-8 byte order mark is skipped, gzip is read
whatever the name, gzip data that ends early is refused naming the file and the word
"truncated", and UTF-16 (with or without its byte order mark), UTF-32 and Latin-1 are refused
naming the file and the line. Before, a ``.query`` file in UTF-16, Latin-1 or gzip raised
"'utf-8' codec can't decode" without a file name and its byte order mark was refused; a
truncated gzip run, qrels or predictions file raised EOFError without the file's name, and
``svmmap evaluate`` printed its traceback.

The hostile files are made here with Python's ``gzip`` and ``codecs``, independently of the
reader.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re

import numpy as np
import pytest
from svmmap import DataFormatError, ModelFormatError, SVMMap, load_letor, load_model, save_model
from svmmap.cli import main
from svmmap.io import load_predictions, read_group_file
from svmmap.ir.trec import read_qrels, read_run

# The plain text of each kind of file, and how the test reads it back to a comparable value.
LETOR = "2 qid:1 1:0.5 2:1\n0 qid:1 1:0.1 2:0\n1 qid:2 1:0.3 2:0.2\n0 qid:2 1:0.2 2:0.1\n"
NO_QID = "2 1:0.5 2:1\n0 1:0.1 2:0\n1 1:0.3 2:0.2\n0 1:0.2 2:0.1\n"
QUERY = "2\n2\n"
RUN = "1 Q0 d1 1 2.5 t\n1 Q0 d2 2 1.5 t\n2 Q0 d3 1 0.5 t\n"
QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n"
PREDICTIONS = "0.5\n-1.25\n3\n2\n"


def _model_text():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 0.8]])
    return SVMMap(C=10.0).fit(X, [1, 0, 1, 0], qid=[1, 1, 2, 2])


def _read_letor(path):
    X, y, qid = load_letor(path)
    return (np.asarray(X.todense() if hasattr(X, "todense") else X).tolist(), y.tolist(), qid.tolist())


def _read_query(path):
    # The sizes file as load_letor's group reads it (found beside the data file, it is read by
    # the same read_group_file: test_a_query_file_beside_the_data_is_read_by_the_same_rules).
    data = path.parent / "d.txt"
    data.write_text(NO_QID)
    _, _, qid = load_letor(data, group=path)
    return qid.tolist()


def _read_run(path):
    run = read_run(path)
    return list(map(str, run.qid)), list(map(str, run.docno)), list(map(float, run.score))


def _read_qrels(path):
    qrels = read_qrels(path)
    return list(map(str, qrels.qid)), list(map(str, qrels.docno)), list(map(int, qrels.rel))


def _read_predictions(path):
    return load_predictions(path).tolist()


READERS = {
    "letor": (LETOR, _read_letor, DataFormatError),
    "query": (QUERY, _read_query, DataFormatError),
    "run": (RUN, _read_run, DataFormatError),
    "qrels": (QRELS, _read_qrels, DataFormatError),
    "predictions": (PREDICTIONS, _read_predictions, DataFormatError),
}


def _expected(kind, tmp_path):
    text, read, _ = READERS[kind]
    plain = tmp_path / "plain" / "f"
    plain.parent.mkdir()
    plain.write_text(text)
    return read(plain)


def _write(tmp_path, data):
    path = tmp_path / "hostile" / "f"
    path.parent.mkdir()
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind", READERS)
@pytest.mark.parametrize("form", ["bom", "gzip", "gzip-bom", "crlf"])
def test_every_reader_reads_a_bom_gzip_and_crlf_as_the_plain_file(tmp_path, kind, form):
    text, read, _ = READERS[kind]
    raw = text.encode("utf-8")
    data = {
        "bom": codecs_bom_utf8() + raw,
        "gzip": gzip.compress(raw),
        "gzip-bom": gzip.compress(codecs_bom_utf8() + raw),
        "crlf": raw.replace(b"\n", b"\r\n"),
    }[form]
    assert read(_write(tmp_path, data)) == _expected(kind, tmp_path)


def codecs_bom_utf8():
    import codecs

    return codecs.BOM_UTF8


def _hostile(text, form):
    raw = text.encode("utf-8")
    if form == "utf-16":
        return text.encode("utf-16"), r":1: the file is UTF-16 text"
    if form == "utf-16-be-no-bom":
        return text.encode(
            "utf-16-be"
        ), r":1: the file is not UTF-8 text: it looks like UTF-16 without a byte order mark"
    if form == "utf-16-le-no-bom":
        return text.encode(
            "utf-16-le"
        ), r":1: the file is not UTF-8 text: it looks like UTF-16 without a byte order mark"
    if form == "utf-32-le-no-bom":
        return text.encode(
            "utf-32-le"
        ), r":1: the file is not UTF-8 text: it looks like UTF-32 without a byte order mark"
    if form == "utf-32":
        return text.encode("utf-32"), r":1: the file is UTF-16 text"  # FF FE 00 00 starts like UTF-16
    if form == "truncated-gzip":
        # Many lines, so that the gzip stream is long; the last 12 bytes (part of the deflate
        # data, the CRC and the size) are cut off, as an interrupted download leaves it.
        return gzip.compress(raw * 200)[:-12], r":\d+: the gzip data ends early: the file is truncated"
    if form == "broken-gzip":
        # The gzip header, then bytes that are not deflate data.
        return (
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xff\xff\xff",
            r":1: the file starts as gzip data but does not decompress",
        )
    raise AssertionError(form)


HOSTILE = [
    "utf-16",
    "utf-16-be-no-bom",
    "utf-16-le-no-bom",
    "utf-32",
    "utf-32-le-no-bom",
    "truncated-gzip",
    "broken-gzip",
]


@pytest.mark.parametrize("kind", READERS)
@pytest.mark.parametrize("form", HOSTILE)
def test_every_reader_refuses_other_encodings_and_damaged_gzip_naming_file_and_line(tmp_path, kind, form):
    text, read, error = READERS[kind]
    data, message = _hostile(text, form)
    path = _write(tmp_path, data)
    with pytest.raises(error, match=re.escape(str(path)) + message):
        read(path)


@pytest.mark.parametrize("kind", ["query", "run", "qrels", "predictions"])
def test_latin1_bytes_are_refused_naming_file_line_and_field(tmp_path, kind):
    # A Latin-1 'é' (0xe9) at the end of the second line's first field.
    text, read, error = READERS[kind]
    lines = text.split("\n")
    first, _, rest = lines[1].partition(" ")
    lines[1] = first + "\xe9" + (" " + rest if rest else "")
    path = _write(tmp_path, "\n".join(lines).encode("latin-1"))
    with pytest.raises(error, match=re.escape(str(path)) + r":2: field 1 .* is not UTF-8 text \(byte 0xe9"):
        read(path)


def test_a_query_file_beside_the_data_is_read_by_the_same_rules(tmp_path):
    data = tmp_path / "d.txt"
    data.write_text(NO_QID)
    (tmp_path / "d.txt.query").write_bytes("2\n2\n".encode("utf-16"))
    with pytest.raises(DataFormatError, match=r"d\.txt\.query:1: the file is UTF-16 text"):
        load_letor(data)
    (tmp_path / "d.txt.query").write_bytes(gzip.compress(b"\xef\xbb\xbf2\r\n2\r\n"))
    assert load_letor(data)[2].tolist() == [0, 0, 1, 1]


def test_query_file_with_a_bom_is_read_not_refused(tmp_path):
    # Before: "expected a query size (a positive integer), got '\ufeff2'".
    path = tmp_path / "q"
    path.write_bytes(b"\xef\xbb\xbf2\n2\n")
    assert read_group_file(path).tolist() == [2, 2]


def test_query_file_numbers_follow_the_one_integer_rule(tmp_path):
    path = tmp_path / "q"
    for bad in ["1_0", "\uff12", "2.0", "1e3"]:
        path.write_text(f"2\n{bad}\n", encoding="utf-8")
        with pytest.raises(DataFormatError, match=r"q:2: expected a query size"):
            read_group_file(path)
    path.write_text("2 3\n")
    with pytest.raises(DataFormatError, match=r"q:1: 2 fields"):
        read_group_file(path)


# Model files: the same opener, their errors ModelFormatError (a format problem of the model).
@pytest.mark.parametrize("form", HOSTILE)
def test_model_files_refuse_other_encodings_and_damaged_gzip_naming_the_file(tmp_path, form):
    model = tmp_path / "m.json"
    save_model(_model_text(), model)
    data, message = _hostile(model.read_text(), form)
    model.write_bytes(data)
    with pytest.raises(ModelFormatError, match=re.escape(str(model)) + message):
        load_model(model)


def test_a_latin1_model_file_names_its_line(tmp_path):
    model = tmp_path / "m.json"
    save_model(_model_text(), model)
    doc = json.loads(model.read_text())
    doc["feature_names"] = ["caf\xe9", "b"]
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    # The line of the name in the file, counted by hand from the text written.
    line = text[: text.index("caf\xe9")].count("\n") + 1
    model.write_bytes(text.encode("latin-1"))
    with pytest.raises(ModelFormatError, match=rf"m\.json:{line}: not an svmmap model: the file is not UTF-8 text"):
        load_model(model)


def test_a_gzip_model_with_a_bom_loads(tmp_path):
    model = tmp_path / "m.json"
    fitted = _model_text()
    save_model(fitted, model)
    packed = tmp_path / "m.gz"
    packed.write_bytes(gzip.compress(codecs_bom_utf8() + model.read_bytes()))
    assert load_model(packed).coef_.tolist() == fitted.coef_.tolist()


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("damaged", ["run", "qrels"])
def test_evaluate_with_a_truncated_gzip_run_or_qrels_is_one_line_naming_the_file(tmp_path, damaged):
    # 300 queries of one document each, so that the files are long enough to cut into.
    files = {
        "run": "".join(f"{q} Q0 d{q} 1 1.0 t\n" for q in range(300)),
        "qrels": "".join(f"{q} 0 d{q} 1\n" for q in range(300)),
    }
    paths = {}
    for kind, text in files.items():
        paths[kind] = tmp_path / f"{kind}.gz"
        data = gzip.compress(text.encode())
        paths[kind].write_bytes(data[:-12] if kind == damaged else data)
    status, _, err = _cli(["evaluate", "--run", str(paths["run"]), "--qrels", str(paths["qrels"])])
    assert status == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"{paths[damaged]}:" in err and "truncated" in err, err


def test_evaluate_with_truncated_gzip_predictions_is_one_line_naming_the_file(tmp_path):
    data = tmp_path / "d.txt"
    data.write_text(LETOR)
    predictions = tmp_path / "p.gz"
    predictions.write_bytes(gzip.compress((PREDICTIONS * 300).encode())[:-12])
    status, _, err = _cli(["evaluate", str(data), str(predictions)])
    assert status == 2
    assert "Traceback" not in err and f"{predictions}:" in err and "truncated" in err, err
