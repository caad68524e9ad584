"""LETOR/svmlight data files, LightGBM query-size files and prediction files.

The text-file rules (line breaks, fields, numbers, atomic writes) are ``svmmap._files.text``'s;
model files are ``svmmap.persistence``'s, whose ``save_model``, ``load_model`` and
``model_document`` stay importable from here too.
"""

from __future__ import annotations

import os
import re
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from . import _core
from ._files.text import BeyondInt64, PathLike, integer, number, path_name, split_fields, text_lines, write_atomic
from ._validation import check_qid, invalid_parameter, one_column
from .persistence import load_model, model_document, save_model

__all__ = [
    "load_letor",
    "letor_docids",
    "read_group_file",
    "write_atomic",
    "save_predictions",
    "load_predictions",
    "model_document",
    "save_model",
    "load_model",
]


#: A query id written the way Python writes an int64: no sign "+", no leading zeros, no "-0",
#: no spaces or underscores, ASCII digits only.
_CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]{0,18}")


def _canonical_int(text: str) -> bool:
    """Whether ``int(text)`` is an int64 whose ``str`` gives back ``text`` exactly."""
    return _CANONICAL_INT.fullmatch(text) is not None and -(2**63) <= int(text) < 2**63


#: A query id that is a decimal number (SVMlight reads the qid: field as a number).
_NUMBER_ID = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _refuse_one_number_two_ways(names: Sequence[str], codes: np.ndarray, lines: np.ndarray, path: Any) -> None:
    """Refuse a file in which one number is written as two query ids ("1" and "01", "+1",
    "1.0"): SVMlight would read them as one query and trec_eval or RankLib as two, and either
    silent reading splits or merges a query for someone."""
    from decimal import Decimal, InvalidOperation

    seen: dict = {}
    for code, name in enumerate(names):
        if _NUMBER_ID.fullmatch(name) is None:
            continue
        try:
            value = Decimal(name)
        except InvalidOperation:  # pragma: no cover - the pattern is Decimal's syntax
            continue
        if value in seen:
            first, other = seen[value], code
            at = [int(lines[int(np.argmax(codes == c))]) for c in (first, other)]
            raise _core.DataFormatError(
                f"{os.fspath(path)}:{at[1]}: the query id {names[other]!r} is the number of the query id "
                f"{names[first]!r} (line {at[0]}) written another way; query ids are kept as written, as "
                "trec_eval and RankLib keep them, so they would be two queries: write every id of a query "
                "the same way"
            )
        seen[value] = code


def _qid_array(names: Sequence[str], codes: np.ndarray) -> np.ndarray:
    """Query ids as int64 when every id is an integer written canonically (as in LETOR), else
    as strings.

    A query id is the string in the file, as for TREC runs and qrels: int64 is only a compact
    spelling of it, used when ``str(id)`` gives back every string exactly. Otherwise "01" and
    "1" (or "+1", " 1", "1_0", Arabic-Indic digits) would become the same query in one file
    and different queries in a run file, or merge two queries of one file.
    """
    if all(_canonical_int(n) for n in names):
        values = np.array([int(n) for n in names], dtype=np.int64)
    else:
        values = np.array(names, dtype=str)
    return values[codes]


#: The core reader's words for a `qid:` field in a file read with separate query sizes.
_QID_WITH_SIZES = "but the query sizes were given separately"


def load_letor(
    path: PathLike,
    *,
    dtype: Any = np.float64,
    n_features: Optional[int] = None,
    sparse: Union[str, bool] = "auto",
    return_comments: bool = False,
    n_jobs: Optional[int] = None,
    missing: str = "error",
    group: Any = None,
) -> tuple:
    """Read a LETOR / svmlight ranking file: ``label qid:Q index:value ... # comment``.

    Also reads LightGBM's layout, ``label index:value ...`` without ``qid:`` and the query
    sizes in a separate file (``rank.train`` with ``rank.train.query``), and LETOR's
    Feature-null files, whose missing values are written ``NULL``.

    Parameters
    ----------
    path : str, bytes or path-like
        Plain text or gzip-compressed (detected from the content, whatever the name). Any name
        the OS takes, UTF-8 or not (bytes, or a str from ``os.fsdecode``).
    dtype : numpy.float32 or numpy.float64, default=numpy.float64
        Type of the feature values.
    n_features : int or None
        Number of features; by default the largest index in the file. An index above it is an
        error. Give it when reading a test file whose last features happen to be absent.
    sparse : "auto", True or False, default="auto"
        "auto" returns a dense array when every line lists every feature 1..d in order (as
        LETOR files do, and then without a copy), and a CSR matrix otherwise.
    return_comments : bool, default=False
        Also return the text after '#' of every line (LETOR puts the document id there).
    n_jobs : int or None
        Threads for parsing (None: all cores).
    missing : {"error", "nan"}, default="error"
        What a feature value ``NULL`` (any case) means. "error" refuses it, naming the line and
        field; "nan" reads it as NaN. A value written ``nan`` is refused either way (the
        message says to write ``NULL`` there). NaN is missing to ``svmmap.Binner(missing="indicator")``,
        which learns a score of its own for it in a pipeline; for a plain ``SVMMap``, fill it
        first (LETOR's Feature-min files put the query's minimum of the feature there).
    group : None, False, str, path-like or array-like of int, default=None
        Query sizes in row order, as LightGBM's ``group``: the first ``group[0]`` rows are one
        query, the next ``group[1]`` the next, and so on. A path names a file of sizes, one
        integer per line (LightGBM's ``.query`` file). None (the default) uses ``<path>.query``
        when that file exists, as LightGBM does, and the ``qid:`` fields otherwise; False
        always uses the ``qid:`` fields (for a file with ``qid:`` fields beside a stale
        ``.query`` file, which is otherwise an error naming it). With sizes, no line may carry a ``qid:`` field, and
        the query ids returned are 0, 1, 2, ... in file order.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_documents, n_features)
    y : ndarray of shape (n_documents,), float64 labels
    qid : ndarray of shape (n_documents,)
        The query id of every row: the string of the file (as for TREC runs and qrels), held
        as int64 when every id is an integer written as Python writes one (``str(qid)`` gives
        the string back: ids "01", "02" make the array str). A file that writes one number as
        two ids ("1" and "01", "+1" or "1.0") is refused: SVMlight would read them as one query,
        trec_eval and RankLib as two.
    comments : list of str, only with ``return_comments=True``

    Raises
    ------
    svmmap.DataFormatError
        For a malformed line; the message gives ``file:line``, the field and what was wrong.
        A UTF-8 byte order mark is skipped and CRLF or CR-only line breaks are read as line
        breaks; UTF-16 files and query ids or kept comments that are not UTF-8 are errors.
    FileNotFoundError, OSError
        When the file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> from svmmap import load_letor
    >>> path = os.path.join(tempfile.mkdtemp(), "train.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("2 qid:10 1:0.5 2:1.0 # a\\n0 qid:10 1:0.1 2:0.0 # b\\n1 qid:11 1:0.3 2:0.2 # c\\n")
    >>> X, y, qid, comments = load_letor(path, return_comments=True)
    >>> X.tolist(), y.tolist(), qid.tolist(), comments
    ([[0.5, 1.0], [0.1, 0.0], [0.3, 0.2]], [2.0, 0.0, 1.0], [10, 10, 11], ['a', 'b', 'c'])
    """
    from ._validation import check_bool, densified, n_threads

    path = path_name(path)
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    if isinstance(sparse, (bool, np.bool_)):
        # NumPy's True is True; 1 and 0 are refused as check_bool refuses them: they passed
        # a test of membership in ("auto", True, False), but not the "is True" below, so
        # sparse=1 and np.True_ returned a dense array.
        sparse = bool(sparse)
    elif not (isinstance(sparse, str) and sparse == "auto"):
        raise invalid_parameter("sparse", '"auto", True or False', sparse)
    return_comments = check_bool(return_comments, "return_comments")
    if n_features is not None and (
        isinstance(n_features, bool)
        or not isinstance(n_features, (int, np.integer))
        or not 1 <= n_features <= 2**31 - 1
    ):
        # The reader's largest feature index (scipy's int32 column indices) bounds it too.
        raise invalid_parameter("n_features", "an integer in 1..2147483647", n_features)
    if missing not in ("error", "nan"):
        raise invalid_parameter("missing", '"error" or "nan"', missing)
    sizes = _group_sizes(path, group)
    try:
        raw = _core.read_letor_file(
            os.fspath(path),
            dt.name,
            None if n_features is None else int(n_features),
            return_comments,
            n_threads(n_jobs),
            missing_nan=missing == "nan",
            without_qid=sizes is not None,
        )
    except _core.DataFormatError as exc:
        if group is None and sizes is not None and _QID_WITH_SIZES in str(exc):
            # The sizes came from a `.query` file found beside the data, not from the caller:
            # say where they came from and how to read the file's own query ids instead.
            raise _core.DataFormatError(
                f"{exc}. The query sizes come from {sizes[1]}, read because it lies beside the data "
                "file; if it is stale, pass group=False (svmmap: --no-group) to read the qid: fields, "
                "or remove it"
            ) from None
        raise
    n_rows = raw["labels"].shape[0]
    d = raw["n_features"]
    if "dense" in raw:
        X: Any = raw["dense"]
        if sparse is True:
            import scipy.sparse as sp

            X = sp.csr_matrix(X)
    else:
        import scipy.sparse as sp

        X = sp.csr_matrix((raw["values"], raw["indices"], raw["indptr"]), shape=(n_rows, d))
        if sparse is False:
            X = densified(X, path, "read it as a sparse matrix (sparse='auto' or True)")
    if sizes is not None:
        from ._validation import qid_of

        qid = qid_of(None, sizes[0], n_rows, group_name=sizes[1], rows_name=os.fspath(path))
    else:
        codes = raw["qid_codes"].astype(np.intp)
        _refuse_one_number_two_ways(raw["qid_names"], codes, raw["line_numbers"], path)
        qid = _qid_array(raw["qid_names"], codes)
    if return_comments:
        return X, raw["labels"], qid, raw["comments"]
    return X, raw["labels"], qid


#: LETOR's document id in a line's comment: ``#docid = GX004-93-7097963 inc = 1 prob = 0.02``
#: (LETOR 4.0), ``#docid = 244338`` (OHSUMED); written ``docid=X`` by some tools.
_DOCID = re.compile(r"(?:^|\s)docid\s*=\s*(\S+)", re.ASCII)


def _data_line_numbers(path: PathLike) -> Optional[List[int]]:
    """The file line number of every data line (a line with a field before any '#': the LETOR
    reader's rule), or None when the file cannot be read again (a pipe)."""
    name = path_name(path)
    if not os.path.isfile(name):
        return None
    found = []
    for lineno, raw in text_lines(name):
        if raw.split(b"#", 1)[0].split():
            found.append(lineno)
    return found


def letor_docids(comments: Sequence[str], *, path: Optional[PathLike] = None) -> np.ndarray:
    """The document id of every row, from the comments ``load_letor(..., return_comments=True)``
    returns: LETOR's ``#docid = GX004-93-7097963 inc = 1 prob = 0.0246`` gives ``GX004-93-7097963``.

    Parameters
    ----------
    comments : sequence of str
        The text after '#' of every data line.
    path : str or path-like, optional
        The file the comments come from, for the error message (which then names the line).

    Raises
    ------
    svmmap.DataFormatError
        For a comment without ``docid = ...``, naming the file and line (when ``path`` is a
        file that can be read again) or the row.

    Examples
    --------
    >>> from svmmap.io import letor_docids
    >>> letor_docids(["docid = GX004-93-7097963 inc = 1 prob = 0.0246", "docid=d2"]).tolist()
    ['GX004-93-7097963', 'd2']
    """
    from ._core import DataFormatError
    from ._validation import refuse_str

    refuse_str(
        comments, "comments", "the comments of every row (a list of str, from load_letor(..., return_comments=True))"
    )
    docids = []
    for row, comment in enumerate(comments):
        found = _DOCID.search(comment)
        if found is None:
            where = f"row {row} (counted from 0)"
            if path is not None:
                lines = _data_line_numbers(path)
                where = (
                    f"{os.fspath(path)}:{lines[row]}"
                    if lines is not None and row < len(lines)
                    else f"{os.fspath(path)}: {where}"
                )
            raise DataFormatError(
                f"{where}: no document id in the comment {comment!r}; expected LETOR's '# docid = ...'"
            )
        docids.append(found.group(1))
    return np.asarray(docids, dtype=str)


def read_group_file(path: PathLike) -> np.ndarray:
    """Read a LightGBM ``.query`` file: one query size (a positive integer) per line.

    Blank lines are skipped; anything else is an error naming the file and line.
    """
    from ._core import DataFormatError

    name = path_name(path)
    sizes = []
    # The text-file rules of every reader (gzip, byte order marks, line breaks, UTF-8 fields,
    # ASCII integers within int64): Python's int() would also read "1_0" as 10 and "\uff12"
    # (a full-width 2) as 2.
    for lineno, raw in text_lines(name):
        fields = split_fields(name, lineno, raw)
        if not fields:
            continue
        if len(fields) > 1:
            raise DataFormatError(
                f"{name}:{lineno}: {len(fields)} fields; a line of query sizes holds one positive integer"
            )
        try:
            size = integer(fields[0])
        except BeyondInt64:
            # Beyond int64 no data file can have that many rows; said here with the line,
            # rather than as numpy's OverflowError.
            raise DataFormatError(f"{name}:{lineno}: query size {fields[0]} is beyond any number of rows") from None
        except ValueError:
            raise DataFormatError(
                f"{name}:{lineno}: expected a query size (a positive integer), got {fields[0]!r}"
            ) from None
        if size < 1:
            raise DataFormatError(f"{name}:{lineno}: query size {size} must be at least 1")
        sizes.append(size)
    if not sizes:
        raise DataFormatError(f"{name}: no query sizes: the group file is empty")
    return np.asarray(sizes, dtype=np.int64)


def group_file(path: PathLike, group: Any) -> Optional[str]:
    """The file of query sizes ``load_letor(path, group=group)`` reads, if any: ``group`` when it
    is a path, ``<path>.query`` when ``group`` is None and that file exists. The command line
    counts it among a command's inputs, so that no output is written over it."""
    if group is None:
        auto = path_name(path) + ".query"
        return auto if os.path.exists(auto) else None
    if isinstance(group, (str, os.PathLike)):
        return path_name(group, "group")
    return None


def _group_sizes(path: PathLike, group: Any) -> Optional[tuple]:
    """(sizes, where they came from) for ``load_letor``'s ``group``, or None for ``qid:`` fields."""
    if group is False:
        return None
    name = group_file(path, group)
    if name is not None:
        return read_group_file(name), name
    if group is None:
        return None
    return group, "group"


def save_predictions(path: PathLike, scores: np.ndarray) -> None:
    """One score per line, exactly (shortest round-trip representation), written atomically.

    ``scores`` must be a 1-D array-like of finite numbers: `load_predictions` refuses "nan" and
    "inf", so such a file could not be read back, and a 2-D array has no one score per line.
    """
    # The rule of the metrics' y_score: strings ("1.5" was written as 1.5), complex numbers,
    # a column vector.
    values = one_column(scores, "scores", "one score per document")
    if values.size == 0:
        # An empty file, which load_predictions refuses ("no data lines").
        raise ValueError(
            "scores is empty: a predictions file holds one score per document, and is read back only with one"
        )
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise ValueError(
            f"scores[{bad[0]}] is {values[bad[0]]}: scores must be finite numbers (a predictions file is read back "
            "only with finite scores)"
        )
    write_atomic(path, "".join(f"{float(s)!r}\n" for s in values))


def _by_ranklib_index(name: str, values: List[float], lines: List[tuple]) -> List[float]:
    """The scores of RankLib's ``qid index score`` lines put in the data file's order: the
    index is the document's position in its query (from 0), so within each run of lines of one
    query the score of index j belongs to that query's j-th document, whatever the line order.
    Every index of a query must appear once and lie below the query's number of documents."""
    from ._core import DataFormatError

    out = list(values)
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and lines[end][0] == lines[start][0]:
            end += 1
        size = end - start
        seen: dict = {}
        for i in range(start, end):
            q, index, lineno = lines[i]
            if index >= size:
                raise DataFormatError(
                    f"{name}:{lineno}: field 2 (RankLib's document index) is {index}, but query {q!r} has "
                    f"{size} lines here, so its indices run from 0 to {size - 1}"
                )
            if index in seen:
                raise DataFormatError(
                    f"{name}:{lineno}: field 2 (RankLib's document index) {index} of query {q!r} is also on "
                    f"line {seen[index]}; each document of a query has one score"
                )
            seen[index] = lineno
            out[start + index] = values[i]
        start = end
    return out


def _expected_qids(qid: Any) -> Optional[List[str]]:
    """The data file's query ids as the strings a predictions file's qid column must hold,
    checked as the estimators check qid (a scalar raised "'int' object is not iterable")."""
    if qid is None:
        return None
    check_qid(qid, len(qid) if np.ndim(qid) else 0, rows_name="the data file")
    return [str(q) for q in np.asarray(qid).tolist()]


def load_predictions(path: PathLike, n_expected: Optional[int] = None, qid: Any = None) -> np.ndarray:
    """Read the scores of a predictions file, one document per line, in the data file's order.

    Three layouts are read, the same on every line: ``score`` (svmmap, SVM^light/rank),
    ``qid score``, and RankLib's ``qid index score`` (``-score`` output); the score is the last
    field. RankLib's index is the document's position in its query, from 0: the scores of a
    query are put in that order, whatever the order of its lines. With ``qid`` (the data file's query ids, one per document), the qid column must
    name the same query as the data file's line (the same string), so that a predictions file
    of another data file or order is refused instead of evaluated.

    Raises
    ------
    svmmap.DataFormatError
        With ``file:line`` and the field, for a score that is not a finite number, a line
        with another number of fields than the first, a RankLib index that is not an integer,
        repeated in its query or not below the query's number of lines, a qid that
        differs from the data file's, bytes that are not UTF-8, the wrong number of lines, or
        an empty file.
    """
    from ._core import DataFormatError

    if n_expected is not None and (
        isinstance(n_expected, bool) or not isinstance(n_expected, (int, np.integer)) or n_expected < 1
    ):
        raise invalid_parameter("n_expected", "an integer >= 1 (the number of documents) or None", n_expected)
    name = path_name(path)
    layouts = {1: "'score'", 2: "'qid score'", 3: "'qid index score' (RankLib)"}
    expected_qids = _expected_qids(qid)
    values: List[float] = []
    ranklib: List[tuple] = []  # (qid, document index, line) of every line in RankLib's layout
    width = None
    first_line = 0
    for lineno, raw in text_lines(name):
        fields = split_fields(name, lineno, raw)
        if not fields:
            continue
        if width is None:
            width, first_line = len(fields), lineno
            if width not in layouts:
                raise DataFormatError(
                    f"{name}:{lineno}: {width} fields; a predictions line is 'score', 'qid score' "
                    "or 'qid index score' (RankLib)"
                )
        elif len(fields) != width:
            raise DataFormatError(
                f"{name}:{lineno}: {len(fields)} fields, but line {first_line} has {width} "
                f"({layouts[width]}); every line must have the same layout"
            )
        token = fields[-1]
        try:
            v = number(token)
        except ValueError:
            raise DataFormatError(
                f"{name}:{lineno}: field {width} (the score): expected a number, got {token!r}"
            ) from None
        if not np.isfinite(v):
            raise DataFormatError(f"{name}:{lineno}: field {width} (the score): {token} is not finite")
        if width == 3 and not re.fullmatch(r"[0-9]+", fields[1]):
            raise DataFormatError(
                f"{name}:{lineno}: field 2 (RankLib's document index) must be an integer, got {fields[1]!r}"
            )
        if width > 1 and expected_qids is not None and len(values) < len(expected_qids):
            want = expected_qids[len(values)]
            if fields[0] != want:
                raise DataFormatError(
                    f"{name}:{lineno}: field 1 (qid) is {fields[0]!r}, but document {len(values) + 1} of the "
                    f"data file belongs to query {want!r}; the predictions are of another file or order"
                )
        values.append(v)
        if width == 3:
            ranklib.append((fields[0], int(fields[1]), lineno))
    if ranklib:
        values = _by_ranklib_index(name, values, ranklib)
    if not values and width is None:
        # Every other reader refuses a file without a data line; an empty predictions file is
        # most often a run that failed before it wrote anything.
        raise DataFormatError(
            f"{name}: no data lines: the file is empty or holds only blank lines (expected one score per document)"
        )
    if n_expected is None and expected_qids is not None:
        n_expected = len(expected_qids)
    if n_expected is not None and len(values) != n_expected:
        raise DataFormatError(
            f"{name}: {len(values)} scores for {n_expected} documents; one score per document line is expected"
        )
    return np.asarray(values, dtype=np.float64)
