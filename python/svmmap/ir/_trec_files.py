"""TREC run and qrels files: read with errors naming ``file:line``, written in trec_eval's
order, atomically (`svmmap.ir.trec` re-exports these)."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional

import numpy as np

from .._core import DataFormatError
from .._files.text import (
    BeyondInt64,
    PathLike,
    check_ids,
    integer,
    number,
    path_name,
    split_fields,
    text_lines,
    write_atomic,
)
from .._validation import invalid_parameter
from ._trec_data import Qrels, Run, _first_duplicate
from ._trec_order import _ranks_in_order, sort_qids, trec_order

__all__ = ["read_run", "read_qrels", "format_run", "write_run", "write_qrels"]


def _open_lines(path: PathLike) -> Iterable[tuple]:
    """(file name, line number, fields) of every line. The rules are the LETOR reader's, so
    that an id is the same string in a run, a qrels file and a LETOR file: a UTF-8 byte order
    mark is skipped, a line ends at LF, CRLF or a lone CR, fields are separated by ASCII
    whitespace only (a no-break space belongs to its field), and bytes that are not UTF-8 are
    an error naming the line and field."""
    name = path_name(path)
    for lineno, raw in text_lines(name):
        yield name, lineno, split_fields(name, lineno, raw)


def _out_of_memory(kind: str, fname: str, lineno: int) -> MemoryError:
    """The MemoryError of a run or qrels file too large for the memory left: Python's lists of
    its entries take about 15 times the text's size, so a file the opener let through can
    still exhaust the memory, and the bare MemoryError (or NumPy's "Unable to allocate ...
    <U13") named no file."""
    return MemoryError(
        f"reading the {kind} {fname} (at line {lineno}) needs more memory than is available: "
        "free memory, or evaluate the file in parts (split by query)"
    )


def read_run(path: PathLike, *, name: Optional[str] = None) -> Run:
    """Read a TREC run file ``qid Q0 docno rank score tag``.

    Raises
    ------
    svmmap.DataFormatError
        With ``file:line`` for a line without exactly 6 fields, a non-integer rank, a score
        that is not a finite number, or a document listed twice for the same query; and for a
        file without any entry.

    Examples
    --------
    >>> import os, tempfile
    >>> from svmmap.ir.trec import read_run
    >>> path = os.path.join(tempfile.mkdtemp(), "bm25.run")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 Q0 d1 1 2.5 bm25\\n1 Q0 d2 2 1.5 bm25\\n2 Q0 d7 1 0.3 bm25\\n")
    >>> run = read_run(path)
    >>> len(run), run.tag, run.queries(), run.to_dict()["1"]
    (3, 'bm25', ['1', '2'], {'d1': 2.5, 'd2': 1.5})
    """
    fname = path_name(path)
    at = [0]
    try:
        return _read_run(path, name, at)
    except MemoryError:
        raise _out_of_memory("run", fname, at[0]) from None


def _read_run(path: PathLike, name: Optional[str], at: List[int]) -> Run:
    """`read_run`'s work; ``at[0]`` is the line being read, for the caller's MemoryError."""
    qid: List[str] = []
    docno: List[str] = []
    rank: List[int] = []
    score: List[float] = []
    lines: List[int] = []
    tag = None
    fname = path_name(path)
    for fname, lineno, fields in _open_lines(path):
        at[0] = lineno
        if not fields:
            continue
        if len(fields) != 6:
            raise DataFormatError(
                f"{fname}:{lineno}: expected 6 fields 'qid Q0 docno rank score tag', got {len(fields)}: {' '.join(fields)!r}"
            )
        q, _, d, r, sc, t = fields
        try:
            r_val = integer(r)
        except BeyondInt64:
            raise DataFormatError(
                f"{fname}:{lineno}: field 4 (rank) must be an integer within int64, got {r!r}"
            ) from None
        except ValueError:
            raise DataFormatError(f"{fname}:{lineno}: field 4 (rank) must be an integer, got {r!r}") from None
        try:
            s_val = number(sc)
        except ValueError:
            raise DataFormatError(f"{fname}:{lineno}: field 5 (score) must be a number, got {sc!r}") from None
        if s_val - s_val != 0.0:  # NaN or infinite
            raise DataFormatError(f"{fname}:{lineno}: field 5 (score) must be finite, got {sc!r}")
        if tag is None:
            tag = t
        qid.append(q)
        docno.append(d)
        rank.append(r_val)
        score.append(s_val)
        lines.append(lineno)
    if not qid:
        raise DataFormatError(f"{fname}: the run is empty (expected lines 'qid Q0 docno rank score tag')")
    dup = _first_duplicate(qid, docno)
    if dup is not None:
        row, first = dup
        raise DataFormatError(
            f"{fname}:{lines[row]}: document {docno[row]!r} appears twice for query {qid[row]!r} "
            f"(first on line {lines[first]})"
        )
    return Run(
        np.asarray(qid, dtype=str),
        np.asarray(docno, dtype=str),
        np.asarray(score, dtype=np.float64),
        np.asarray(rank, dtype=np.int64),
        tag or "run",
        name if name is not None else fname,
    )


def read_qrels(path: PathLike) -> Qrels:
    """Read TREC qrels ``qid iteration docno relevance`` (relevance an integer).

    Raises
    ------
    svmmap.DataFormatError
        With ``file:line`` for a line without exactly 4 fields, a non-integer relevance, or a
        document judged twice for the same query; and for a file without any judgment.

    Examples
    --------
    >>> import os, tempfile
    >>> from svmmap.ir.trec import read_qrels
    >>> path = os.path.join(tempfile.mkdtemp(), "qrels.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 0 d1 2\\n1 0 d2 0\\n2 0 d7 1\\n")
    >>> qrels = read_qrels(path)
    >>> qrels.to_dict(), qrels.n_relevant(["1", "2"]).tolist()  # d2 is judged, but not relevant
    ({'1': {'d1': 2, 'd2': 0}, '2': {'d7': 1}}, [1.0, 1.0])
    """
    fname = path_name(path)
    at = [0]
    try:
        return _read_qrels(path, at)
    except MemoryError:
        raise _out_of_memory("qrels file", fname, at[0]) from None


def _read_qrels(path: PathLike, at: List[int]) -> Qrels:
    """`read_qrels`'s work; ``at[0]`` is the line being read, for the caller's MemoryError."""
    qid: List[str] = []
    docno: List[str] = []
    rel: List[int] = []
    seen: Dict[tuple, int] = {}
    fname = path_name(path)
    for fname, lineno, fields in _open_lines(path):
        at[0] = lineno
        if not fields:
            continue
        if len(fields) != 4:
            raise DataFormatError(
                f"{fname}:{lineno}: expected 4 fields 'qid iteration docno relevance', got {len(fields)}: {' '.join(fields)!r}"
            )
        q, _, d, r = fields
        try:
            r_val = integer(r)
        except BeyondInt64:
            raise DataFormatError(
                f"{fname}:{lineno}: field 4 (relevance) must be an integer within int64, got {r!r}"
            ) from None
        except ValueError:
            raise DataFormatError(f"{fname}:{lineno}: field 4 (relevance) must be an integer, got {r!r}") from None
        first = seen.setdefault((q, d), lineno)
        if first != lineno:
            raise DataFormatError(
                f"{fname}:{lineno}: document {d!r} is judged twice for query {q!r} (first on line {first})"
            )
        qid.append(q)
        docno.append(d)
        rel.append(r_val)
    if not qid:
        raise DataFormatError(f"{fname}: the qrels file is empty (expected lines 'qid iteration docno relevance')")
    return Qrels(np.asarray(qid, dtype=str), np.asarray(docno, dtype=str), np.asarray(rel, dtype=np.int64), fname)


def format_run(run: Run, *, tag: Optional[str] = None, depth: Optional[int] = None) -> str:
    """The text of a valid TREC run: per query (in sorted order), documents by decreasing
    score with ties by decreasing docno (trec_eval's order), ranks 1..n, scores written
    exactly (shortest round-trip form), at most ``depth`` documents per query.

    Examples
    --------
    >>> from svmmap.ir.trec import Run, format_run
    >>> run = Run.from_dict({"1": {"d1": 0.5, "d2": 0.5, "d3": 0.9}}, tag="bm25")
    >>> print(format_run(run), end="")  # d1 and d2 tie, so the larger docno, d2, comes first
    1 Q0 d3 1 0.9 bm25
    1 Q0 d2 2 0.5 bm25
    1 Q0 d1 3 0.5 bm25
    >>> print(format_run(run, tag="top1", depth=1), end="")
    1 Q0 d3 1 0.9 top1
    """
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        # depth=0 would write a run without a document, which trec_eval reads as no run.
        raise invalid_parameter("depth", "None or an integer >= 1", depth)
    tag = tag if tag is not None else run.tag
    if not isinstance(tag, str):
        raise ValueError(f"the run tag must be a str, got {tag!r}")
    # The columns were checked when the run was made, but they can be reassigned since.
    check_ids(tag, "the run tag")
    check_ids(run.qid, f"{run.name}: qid", first_field=True)
    check_ids(run.docno, f"{run.name}: docno")
    order = trec_order(run.qid, run.docno, run.score)
    qid, docno, score = run.qid[order], run.docno[order], run.score[order]
    ranks = _ranks_in_order(qid)
    if depth is not None:
        keep = ranks <= depth
        qid, docno, score, ranks = qid[keep], docno[keep], score[keep], ranks[keep]
    return "".join(
        f"{q} Q0 {d} {r} {x!r} {tag}\n"
        for q, d, r, x in zip(qid.tolist(), docno.tolist(), ranks.tolist(), score.tolist())
    )


def write_run(path: PathLike, run: Run, *, tag: Optional[str] = None, depth: Optional[int] = None) -> None:
    """Write ``run`` as a TREC run file, atomically (see `format_run`).

    Examples
    --------
    >>> import os, tempfile
    >>> from svmmap.ir.trec import Run, read_run, write_run
    >>> run = Run.from_dict({"1": {"d1": 0.5, "d2": 0.5, "d3": 0.9}, "2": {"d4": 1.0}}, tag="bm25")
    >>> path = os.path.join(tempfile.mkdtemp(), "bm25.run")
    >>> write_run(path, run)
    >>> back = read_run(path)  # the same scores, with the ranks in trec_eval's order
    >>> back.to_dict() == run.to_dict(), back.docno.tolist(), back.rank.tolist()
    (True, ['d3', 'd2', 'd1', 'd4'], [1, 2, 3, 1])
    """
    write_atomic(path, format_run(run, tag=tag, depth=depth))


def write_qrels(path: PathLike, qrels: Qrels) -> None:
    """Write qrels ``qid 0 docno relevance``, sorted by query and docno, atomically.

    Raises
    ------
    ValueError
        For an id that `read_qrels` could not read back (empty, with whitespace or a NUL), naming
        the column and row; the file is then not written.
    """
    # Checked when the qrels were made, but the columns can be reassigned since.
    check_ids(qrels.qid, f"{qrels.name}: qid", first_field=True)
    check_ids(qrels.docno, f"{qrels.name}: docno")
    q_order: Dict[Any, int] = {q: i for i, q in enumerate(sort_qids(np.unique(qrels.qid)))}
    keys = sorted(range(len(qrels)), key=lambda i: (q_order[qrels.qid[i]], qrels.docno[i]))
    write_atomic(path, "".join(f"{qrels.qid[i]} 0 {qrels.docno[i]} {int(qrels.rel[i])}\n" for i in keys))
