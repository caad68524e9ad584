"""TREC run files and qrels: reading with clear errors, writing valid runs, evaluating runs.

Formats (whitespace-separated, one entry per line):

- run: ``qid Q0 docno rank score tag`` (the second field is ignored, as trec_eval does);
- qrels: ``qid iteration docno relevance`` (the second field is ignored; relevance is an integer,
  and a document is relevant when it is >= 1, trec_eval's default).

trec_eval ranks a query's documents by decreasing score and breaks ties by *decreasing* docno
(byte order, ``strcmp``); it ignores the rank column. It keeps scores as C ``float``s: a score
is read as a double (``atof``) and rounded to the nearest float32, so scores that differ only
beyond float32's 24-bit significand (about 7 significant digits) tie, and so do scores beyond
float32's range (both become infinite) or below its smallest subnormal (both become 0).
`trec_order` reproduces exactly that, `write_run` writes documents in that order
with ranks 1..n, so that the written ranks and the order trec_eval evaluates agree, and
`evaluate_run` evaluates in that order too (also for the measures that other tools
compute, such as gdeval's ERR@k).

The module is over 600 lines on purpose: reading, writing and evaluating share the one rule
above (trec_eval's float32 scores and docno order), and kept together they cannot drift apart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from .._core import DataFormatError
from .._text import BeyondInt64, PathLike, check_ids, integer, number, split_fields, text_lines, write_atomic

__all__ = [
    "Run",
    "Qrels",
    "sort_qids",
    "trec_order",
    "trec_ranks",
    "read_run",
    "read_qrels",
    "format_run",
    "write_run",
    "write_qrels",
    "evaluate_run",
    "evaluate_measures",
    "parse_measure",
    "QueryValues",
    "MeasureValues",
]


def _column(values: Any, what: str, dtype: Any, name: str) -> np.ndarray:
    """One column of a run or qrels as a 1-D array of ``dtype``; a single value, a 2-D array, a
    relevance of 1.5 or "x" is an error naming the column (it would be truncated, read as
    one id per character, or fail later with an IndexError)."""
    if np.ndim(values) != 1:
        raise ValueError(
            f"{name}: {what} must be a 1-D sequence (one entry per row), got {np.ndim(values)} dimension(s)"
        )
    if dtype is str:
        if not (isinstance(values, np.ndarray) and values.dtype.kind in "Uiu"):
            # Ids are strings or integers, as in `from_frame`: NaN, None, a bool or a float
            # became the text "nan", "None", "True" or "7.0", which matches nothing.
            values = list(values)
            for i, v in enumerate(values):
                if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                    values[i] = str(v)
                elif not isinstance(v, str):
                    raise ValueError(
                        f"{name}: {what}[{i}] is {v!r} of type {type(v).__name__}; ids must be strings or integers"
                    )
        # Checked before numpy's conversion, which drops trailing NUL characters ("d1\0" would
        # become "d1"): every Run and Qrels, from a file, a dict, a frame or fusion, holds only
        # ids that a run or qrels file can carry and give back.
        check_ids(values, f"{name}: {what}", first_field=what == "qid")
        return np.asarray(values, dtype=str)
    arr = np.asarray(values)
    first = arr.reshape(-1)[:1].tolist()
    if dtype is np.int64:
        if arr.dtype.kind == "f" and arr.size and not np.all(arr == np.round(arr)):
            bad = arr[arr != np.round(arr)][0].item()
            raise ValueError(f"{name}: {what} must hold integers, got {bad!r}")
        if arr.size and arr.dtype.kind not in "iub" and not (arr.dtype.kind == "f" and np.all(np.isfinite(arr))):
            # Integers beyond int64 arrive as an object array.
            raise ValueError(f"{name}: {what} must hold integers, got {first[0]!r}")
        if arr.size and arr.dtype.kind in "uf" and np.any(np.abs(arr) >= 2.0**63):
            # The cast below would wrap uint64 values around (2**64 - 1 became -1) and turn
            # floats such as 1e30 into arbitrary integers.
            bad = arr[np.abs(arr) >= 2.0**63][0].item()
            raise ValueError(f"{name}: {what} must hold integers within int64, got {bad!r}")
    elif arr.size and arr.dtype.kind not in "iuf":
        raise ValueError(f"{name}: {what} must hold numbers, got {first[0]!r}")
    return arr.astype(dtype)


@dataclass
class Run:
    """A retrieval run: one row per (query, document) with its score.

    Attributes
    ----------
    qid, docno : ndarray of str
        Query id and document id of every row.
    score : ndarray of float64
        The run's score of every row.
    rank : ndarray of int64
        The rank column as given (not used for evaluation: trec_eval sorts by score).
    tag : str
        The run tag (sixth field) of the first line.
    name : str
        Where the run came from (its path), for messages and tables.
    """

    qid: np.ndarray
    docno: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    tag: str = "run"
    name: str = "run"

    def __post_init__(self) -> None:
        self.qid = _column(self.qid, "qid", str, self.name)
        self.docno = _column(self.docno, "docno", str, self.name)
        self.score = _column(self.score, "score", np.float64, self.name)
        self.rank = _column(self.rank, "rank", np.int64, self.name)
        n = self.qid.shape[0]
        for what in ("docno", "score", "rank"):
            if getattr(self, what).shape != (n,):
                raise ValueError(f"run {self.name}: {what} has shape {getattr(self, what).shape}, expected ({n},)")
        if not np.all(np.isfinite(self.score)):
            raise ValueError(f"run {self.name}: scores must be finite numbers")
        if not isinstance(self.tag, str):
            raise ValueError(f"run {self.name}: the run tag must be a str, got {self.tag!r}")
        check_ids(self.tag, f"run {self.name}: the run tag")
        # A pair listed twice could be written but not read back (readers refuse it).
        _refuse_duplicates(self.qid, self.docno, f"run {self.name}", "appears")

    def __len__(self) -> int:
        return int(self.qid.shape[0])

    def queries(self) -> List[str]:
        """The query ids of the run, sorted (numerically when they are all integers)."""
        return sort_qids(np.unique(self.qid))

    def to_dict(self) -> Dict[str, Dict[str, float]]:
        """``{qid: {docno: score}}``, the layout pytrec_eval takes."""
        out: Dict[str, Dict[str, float]] = {}
        for q, d, s in zip(self.qid.tolist(), self.docno.tolist(), self.score.tolist()):
            out.setdefault(q, {})[d] = s
        return out

    @classmethod
    def from_dict(cls, scores: Mapping[str, Mapping[str, float]], *, tag: str = "run", name: str = "run") -> "Run":
        """A run from ``{qid: {docno: score}}``; ranks follow trec_eval's order."""
        qid, docno, score = [], [], []
        for q, docs in scores.items():
            for d, s in docs.items():
                qid.append(q)
                docno.append(d)
                score.append(float(s))
        # Object arrays, not str arrays: the constructor checks the ids as given, before numpy's
        # str conversion drops a trailing NUL.
        run = cls(
            np.asarray(qid, dtype=object),
            np.asarray(docno, dtype=object),
            np.asarray(score),
            np.zeros(len(qid), dtype=np.int64),
            tag,
            name,
        )
        run.rank = trec_ranks(run.qid, run.docno, run.score)
        return run

    def to_frame(self) -> Any:
        """The run as a pandas DataFrame in PyTerrier's layout: columns ``qid``, ``docno`` (str),
        ``score`` (float64) and ``rank`` (int64), one row per entry in the run's row order.

        The tag and the name are not columns (PyTerrier's layout has none for them): they are
        kept in the frame's ``attrs`` (``frame.attrs["tag"]``, ``frame.attrs["name"]``), so that
        ``Run.from_frame(run.to_frame()) == run``. pandas keeps ``attrs`` through copies and
        most operations of one frame, not through a CSV file.

        Examples
        --------
        >>> from svmmap.ir.trec import Run
        >>> run = Run.from_dict({"1": {"d1": 0.5, "d2": 0.9}, "2": {"d7": 0.3}}, tag="bm25")
        >>> print(run.to_frame().to_string(index=False))
        qid docno  score  rank
          1    d1    0.5     2
          1    d2    0.9     1
          2    d7    0.3     1
        >>> run.to_frame().attrs
        {'tag': 'bm25', 'name': 'run'}
        >>> Run.from_frame(run.to_frame()) == run
        True
        """
        import pandas as pd

        frame = pd.DataFrame({"qid": self.qid, "docno": self.docno, "score": self.score, "rank": self.rank})
        frame.attrs.update(tag=self.tag, name=self.name)
        return frame

    @classmethod
    def from_frame(cls, frame: Any, *, tag: Optional[str] = None, name: Optional[str] = None) -> "Run":
        """A run from a table of scored documents: a pandas DataFrame or a dict of columns.

        The column names of PyTerrier (``qid``, ``docno``, ``score``, and ``rank`` when present,
        as a retrieval transformer returns them and `to_frame` writes them) and of
        ir_datasets (``query_id``, ``doc_id``, ``score``, as ``pd.DataFrame(dataset.scoreddocs_iter())``
        has them) are both understood; other columns (``query``, ``text``, ...) are ignored.
        Without a ``rank`` column, ranks follow trec_eval's order (`trec_ranks`); a rank
        column is kept as given (trec_eval ignores it, and so does evaluation here).

        ``tag`` and ``name`` default to the frame's ``attrs["tag"]`` and ``attrs["name"]``
        (where `to_frame` keeps them), and to "run" when it has none.

        Raises
        ------
        ValueError
            When a column is missing, an id is missing (None, NaN, pandas' NA) or is a float
            (a query id 1.0 would not be the "1" of the qrels), a score is not a finite number,
            or a document is listed twice for the same query; the message names the row.
        """
        tag = _frame_attr(frame, "tag", tag, "run")
        name = _frame_attr(frame, "name", name, "run")
        qid = _frame_ids(frame, name, "query", "qid", "query_id")
        docno = _frame_ids(frame, name, "document", "docno", "doc_id")
        score = _frame_column(frame, name, "score", "score")
        rank = _find_column(frame, "rank")
        run = cls(qid, docno, score, np.zeros(len(qid), dtype=np.int64) if rank is None else rank, tag, name)
        _refuse_duplicates(run.qid, run.docno, name, "appears")
        if rank is None:
            run.rank = trec_ranks(run.qid, run.docno, run.score)
        return run

    def __eq__(self, other: object) -> bool:
        """Equal when every column, the tag and the name are equal (row order included)."""
        if not isinstance(other, Run):
            return NotImplemented
        return (self.tag, self.name) == (other.tag, other.name) and all(
            np.array_equal(getattr(self, c), getattr(other, c)) for c in ("qid", "docno", "score", "rank")
        )


def _frame_attr(frame: Any, key: str, given: Optional[str], default: str) -> str:
    """``given``, else the frame's ``attrs[key]`` (a DataFrame's metadata, where ``to_frame``
    keeps the tag and the name), else ``default``."""
    if given is not None:
        return given
    kept = getattr(frame, "attrs", None)
    value = kept.get(key) if isinstance(kept, Mapping) else None
    return value if isinstance(value, str) else default


def _find_column(frame: Any, *choices: str) -> Optional[np.ndarray]:
    """The first of ``choices`` that ``frame`` (a DataFrame or a dict of columns) has, as an
    array, or None."""
    for c in choices:
        if c in frame.keys():
            return np.asarray(frame[c])
    return None


def _frame_column(frame: Any, name: str, role: str, *choices: str) -> np.ndarray:
    """The first of ``choices`` that ``frame`` has; without any, an error naming the columns
    expected and those found."""
    found = _find_column(frame, *choices)
    if found is None:
        raise ValueError(
            f"{name}: no {role} column; expected one of {', '.join(choices)}, got {', '.join(map(str, frame.keys()))}"
        )
    return found


def _frame_ids(frame: Any, name: str, role: str, *choices: str) -> np.ndarray:
    """An id column of a frame as str, the same string a TREC file or LETOR file has for it.

    Integers become their decimal strings. A missing value (None, NaN, pandas' NA) would
    become the id "nan" or "None", and a float id such as 1.0 (what pandas makes of an
    integer column with a gap) the id "1.0", which matches nothing in qrels or runs that say
    "1": both are errors naming the row."""
    values = _frame_column(frame, name, role, *choices)
    column = next(c for c in choices if c in frame.keys())
    raw = frame[column]
    if not isinstance(raw, np.ndarray) and values.dtype.kind == "U" and np.ndim(raw) == 1:
        # A list of str became a str array, which drops trailing NULs: checked as given.
        check_ids(list(raw), f"{name}: {column}", first_field=role == "query")
    if values.ndim != 1:
        raise ValueError(f"{name}: the {role} ids must be one column, got shape {values.shape}")
    if values.dtype.kind in "USiu":
        return values.astype(str)
    items = values.tolist()
    bad = [
        row
        for row, v in enumerate(items)
        if not isinstance(v, str) and not (isinstance(v, int) and not isinstance(v, bool))
    ]
    if bad:
        # A missing value is named first: it is what makes pandas turn integer ids into floats.
        # pandas' NA and NaT are their own types, and comparing them would raise, not answer.
        missing = [
            row
            for row in bad
            if items[row] is None
            or (isinstance(items[row], float) and items[row] != items[row])
            or type(items[row]).__name__ in ("NAType", "NaTType")
        ]
        row = missing[0] if missing else bad[0]
        what = "missing" if missing else f"{items[row]!r} of type {type(items[row]).__name__}"
        hint = ""
        if missing or isinstance(items[row], float):
            hint = " (a float column of ids usually comes from a missing value in an integer column)"
        raise ValueError(f"{name}: the {role} id of row {row} is {what}; ids must be strings or integers{hint}")
    return np.asarray([str(v) for v in items], dtype=str)


def _refuse_duplicates(qid: np.ndarray, docno: np.ndarray, name: str, verb: str) -> None:
    """A (query, document) pair listed twice is an error naming both rows: trec_eval would
    count the document twice, and a dict of the pairs would keep one of them silently."""
    dup = _first_duplicate(qid, docno)
    if dup is not None:
        row, first = dup
        raise ValueError(
            f"{name}: document {str(docno[row])!r} {verb} twice for query {str(qid[row])!r} "
            f"(rows {first} and {row}, counted from 0)"
        )


@dataclass
class Qrels:
    """Relevance judgments: one row per judged (query, document) with its integer relevance."""

    qid: np.ndarray
    docno: np.ndarray
    rel: np.ndarray
    name: str = "qrels"
    _lookup: Optional[Dict[tuple, int]] = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.qid = _column(self.qid, "qid", str, self.name)
        self.docno = _column(self.docno, "docno", str, self.name)
        self.rel = _column(self.rel, "rel", np.int64, self.name)
        n = self.qid.shape[0]
        for what in ("docno", "rel"):
            if getattr(self, what).shape != (n,):
                raise ValueError(f"qrels {self.name}: {what} has shape {getattr(self, what).shape}, expected ({n},)")
        _refuse_duplicates(self.qid, self.docno, f"qrels {self.name}", "is judged")

    def __len__(self) -> int:
        return int(self.qid.shape[0])

    def queries(self) -> List[str]:
        return sort_qids(np.unique(self.qid))

    def to_dict(self) -> Dict[str, Dict[str, int]]:
        """``{qid: {docno: relevance}}``, the layout pytrec_eval takes."""
        out: Dict[str, Dict[str, int]] = {}
        for q, d, r in zip(self.qid.tolist(), self.docno.tolist(), self.rel.tolist()):
            out.setdefault(q, {})[d] = int(r)
        return out

    @classmethod
    def from_dict(cls, judgments: Mapping[str, Mapping[str, int]], *, name: str = "qrels") -> "Qrels":
        """Qrels from ``{qid: {docno: relevance}}`` (pytrec_eval's layout)."""
        rows = [(q, d, r) for q, docs in judgments.items() for d, r in docs.items()]
        qid, docno, rel = zip(*rows) if rows else ((), (), ())
        # Object arrays: the ids are checked as given (see Run.from_dict).
        return cls(np.asarray(qid, dtype=object), np.asarray(docno, dtype=object), np.asarray(rel), name)

    @classmethod
    def from_frame(cls, frame: Any, *, name: Optional[str] = None) -> "Qrels":
        """Qrels from a table of judgments: a pandas DataFrame or a dict of columns.

        The column names of ir_datasets (``query_id``, ``doc_id``, ``relevance``, as
        ``pd.DataFrame(dataset.qrels_iter())`` has them) and of PyTerrier (``qid``, ``docno``,
        ``label``) are both understood; other columns (``iteration``) are ignored. Ids follow
        `Run.from_frame`'s rule (strings or integers; a missing or float id is an error
        naming the row), and a document judged twice for a query is an error, as in
        `read_qrels`. ``name`` defaults to the frame's ``attrs["name"]`` (where `to_frame`
        keeps it), and to "qrels" when it has none.
        """
        name = _frame_attr(frame, "name", name, "qrels")
        qid = _frame_ids(frame, name, "query", "query_id", "qid")
        docno = _frame_ids(frame, name, "document", "doc_id", "docno")
        rel = _frame_column(frame, name, "relevance", "relevance", "label")
        if rel.dtype.kind == "f":
            if not np.all(np.isfinite(rel) & (rel == np.round(rel))):
                raise ValueError(f"{name}: relevance values must be whole numbers")
        elif rel.dtype.kind not in "iub":
            raise ValueError(f"{name}: relevance values must be integers, got dtype {rel.dtype}")
        _refuse_duplicates(qid, docno, name, "is judged")
        return cls(qid, docno, rel.astype(np.int64), name)

    def to_frame(self) -> Any:
        """The judgments as a pandas DataFrame in PyTerrier's layout: columns ``qid``, ``docno``
        (str) and ``label`` (int64), one row per judgment in the qrels' row order, with the
        name in ``frame.attrs["name"]``; `from_frame` reads it back.

        Examples
        --------
        >>> from svmmap.ir.trec import Qrels
        >>> qrels = Qrels.from_dict({"1": {"d1": 2, "d2": 0}})
        >>> print(qrels.to_frame().to_string(index=False))
        qid docno  label
          1    d1      2
          1    d2      0
        >>> Qrels.from_frame(qrels.to_frame()) == qrels
        True
        """
        import pandas as pd

        frame = pd.DataFrame({"qid": self.qid, "docno": self.docno, "label": self.rel})
        frame.attrs["name"] = self.name
        return frame

    def __eq__(self, other: object) -> bool:
        """Equal when every column and the name are equal (row order included)."""
        if not isinstance(other, Qrels):
            return NotImplemented
        return self.name == other.name and all(
            np.array_equal(getattr(self, c), getattr(other, c)) for c in ("qid", "docno", "rel")
        )

    def labels(self, qid: Union[Sequence[str], np.ndarray], docno: Union[Sequence[str], np.ndarray]) -> np.ndarray:
        """Relevance of each (qid, docno) pair; unjudged documents get 0 (not relevant)."""
        if self._lookup is None:
            self._lookup = {(q, d): r for q, d, r in zip(self.qid.tolist(), self.docno.tolist(), self.rel.tolist())}
        lookup = self._lookup
        return np.fromiter((lookup.get((q, d), 0) for q, d in zip(qid, docno)), dtype=np.float64, count=len(qid))

    def n_relevant(self, queries: Iterable[str], level: int = 1) -> np.ndarray:
        """Number of documents judged relevant (relevance >= level) for each query."""
        rel = self.rel >= level
        counts: Dict[str, int] = {}
        for q in self.qid[rel].tolist():
            counts[q] = counts.get(q, 0) + 1
        return np.asarray([counts.get(str(q), 0) for q in queries], dtype=np.float64)


def sort_qids(qids: Iterable[Any]) -> List[str]:
    """Query ids as strings, sorted numerically when all are integers, else as text."""
    ids = [str(q) for q in qids]
    try:
        return sorted(ids, key=lambda q: (int(q), q))
    except ValueError:
        return sorted(ids)


def trec_scores(score: Any) -> np.ndarray:
    """Scores as trec_eval compares them: each rounded to the nearest float32 (C ``float``).

    trec_eval stores a run's scores in ``float`` fields (it parses the text with ``atof`` into
    a double, then assigns it to a ``float``), and pytrec_eval does the same with the Python
    floats it is given. Rounding is to nearest, ties to even; magnitudes beyond float32's
    range become infinite, as the C conversion gives on IEEE machines.

    Examples
    --------
    >>> from svmmap.ir.trec import trec_scores
    >>> # 1 + 2**-24 is half-way between 1 and the next float32, 1 + 2**-23: it rounds to even, 1.
    >>> trec_scores([1.0 + 2**-24, 1.0 + 2**-23, 0.1, 1e39]).tolist()
    [1.0, 1.0000001192092896, 0.10000000149011612, inf]
    """
    with np.errstate(over="ignore"):
        return np.asarray(score, dtype=np.float64).astype(np.float32).astype(np.float64)


def trec_order(qid: np.ndarray, docno: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Row order of trec_eval: by query, then decreasing score (as a float32, see
    `trec_scores`), then decreasing docno (compared as strings)."""
    q_order = {q: i for i, q in enumerate(sort_qids(np.unique(qid)))}
    q_key = np.fromiter((q_order[q] for q in qid.tolist()), dtype=np.int64, count=len(qid))
    # Decreasing docno: rank the docnos increasingly, then negate the rank. numpy compares
    # str by code point, which is the byte order of their UTF-8 encodings (trec_eval's strcmp).
    _, d_rank = np.unique(np.asarray(docno, dtype=str), return_inverse=True)
    return np.lexsort((-d_rank.reshape(-1), -trec_scores(score), q_key))


def _ranks_in_order(qid_sorted: np.ndarray) -> np.ndarray:
    """1..n within each run of equal query ids of an array already in trec_eval's order."""
    n = len(qid_sorted)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    new_query = np.r_[True, qid_sorted[1:] != qid_sorted[:-1]]
    starts = np.flatnonzero(new_query)
    return np.arange(n, dtype=np.int64) - starts[np.cumsum(new_query) - 1] + 1


def trec_ranks(qid: np.ndarray, docno: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Rank 1..n of every row within its query, in trec_eval's order."""
    order = trec_order(qid, docno, score)
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = _ranks_in_order(qid[order])
    return ranks


def _open_lines(path: PathLike) -> Iterable[tuple]:
    """(file name, line number, fields) of every line. The rules are the LETOR reader's, so
    that an id is the same string in a run, a qrels file and a LETOR file: a UTF-8 byte order
    mark is skipped, a line ends at LF, CRLF or a lone CR, fields are separated by ASCII
    whitespace only (a no-break space belongs to its field), and bytes that are not UTF-8 are
    an error naming the line and field."""
    name = os.fspath(path)
    for lineno, raw in text_lines(name):
        yield name, lineno, split_fields(name, lineno, raw)


def _first_duplicate(qid: Any, docno: Any) -> Optional[tuple]:
    """(row of the first repeated (qid, docno) pair, row of its first occurrence), or None."""
    keys = np.char.add(np.char.add(np.asarray(qid, dtype=str), "\t"), np.asarray(docno, dtype=str))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    repeated = np.flatnonzero(first[inverse.reshape(-1)] != np.arange(len(keys)))
    if repeated.size == 0:
        return None
    row = int(repeated[0])
    return row, int(first[inverse.reshape(-1)[row]])


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
    qid: List[str] = []
    docno: List[str] = []
    rank: List[int] = []
    score: List[float] = []
    lines: List[int] = []
    tag = None
    fname = os.fspath(path)
    for fname, lineno, fields in _open_lines(path):
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
    qid: List[str] = []
    docno: List[str] = []
    rel: List[int] = []
    seen: Dict[tuple, int] = {}
    fname = os.fspath(path)
    for fname, lineno, fields in _open_lines(path):
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
        raise ValueError(f"depth must be None or an integer >= 1, got {depth!r}")
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


# svmmap's metric names (those of svmmap.metrics, lower case) and their ir_measures names.
_PLAIN_NAMES = {
    "map": "AP",
    "ap": "AP",
    "ndcg": "nDCG",
    "mrr": "RR",
    "rr": "RR",
    "rprec": "Rprec",
    "r-prec": "Rprec",
    "bpref": "Bpref",
}
_CUTOFF_NAMES = {
    "map": "AP",
    "ap": "AP",
    "ndcg": "nDCG",
    "mrr": "RR",
    "rr": "RR",
    "p": "P",
    "recall": "R",
    "r": "R",
    "err": "ERR",
    "success": "Success",
    "judged": "Judged",
}
RUN_CONVENTIONS = ("svmmap", "trec_eval")
# Rank-encoded scores are integers, exact in a float32 up to 2**24.
_MAX_DOCS_PER_QUERY = 2**24


def parse_measure(name: str) -> Any:
    """The ir_measures measure for a name in svmmap's, ir_measures' or trec_eval's spelling.

    svmmap's names are case-insensitive: ``map``, ``ndcg``, ``ndcg@k``, ``mrr``, ``mrr@k``,
    ``p@k``, ``recall@k``, ``rprec``, ``bpref``, ``err@k``, ``success@k``, ``judged@k``.
    ir_measures' names (``AP``, ``nDCG@10``, ``R@100``, ``Rprec``, ``Bpref``, ``RR``,
    ``ERR@20``, ``Success@10``, ``Judged@10``, ``P(rel=2)@5``, ...) and trec_eval's
    (``ndcg_cut_10``, ``recall_100``, ``recip_rank``, ``success_10``, ...) are taken as they are.

    Examples
    --------
    >>> from svmmap.ir.trec import parse_measure
    >>> [str(parse_measure(m)) for m in ["map", "NDCG@10", "recall@100", "ERR@20", "ndcg_cut_5", "Judged@10"]]
    ['AP', 'nDCG@10', 'R@100', 'ERR@20', 'nDCG@5', 'Judged@10']
    """
    measure = _parse_measure(name)
    cutoff = getattr(measure, "params", {}).get("cutoff")
    if isinstance(cutoff, int) and cutoff > _MAX_CUTOFF:
        # trec_eval reads cutoffs as C longs and names its results after what it read, so a
        # larger one came back under another name (KeyError 'P_9223372036854775807').
        raise ValueError(f"measure {name!r}: the cutoff {cutoff} is above the largest supported, {_MAX_CUTOFF}")
    return measure


#: The largest cutoff of a measure: far beyond any query's depth (``_MAX_DOCS_PER_QUERY``).
_MAX_CUTOFF = 2**31 - 1


def _parse_measure(name: str) -> Any:
    import ir_measures

    text = name.strip()
    if not text.isascii():
        # str.isdigit and int() take any script's digits ("ndcg@١٠" was NDCG@10 here and
        # refused by svmmap.metrics); a measure name is ASCII in every tool.
        raise ValueError(f"unknown measure {name!r}: a measure name is ASCII text")
    low = text.lower()
    if low in _PLAIN_NAMES:
        return ir_measures.parse_measure(_PLAIN_NAMES[low])
    base, at, cutoff = low.partition("@")
    if at and base in _CUTOFF_NAMES and cutoff.isdigit() and int(cutoff) > 0:
        return ir_measures.parse_measure(f"{_CUTOFF_NAMES[base]}@{int(cutoff)}")
    try:
        return ir_measures.parse_measure(text)
    except (NameError, ValueError, SyntaxError):
        pass
    try:
        found = ir_measures.parse_trec_measure(text)
    except (NameError, ValueError, SyntaxError, KeyError):
        found = []
    if len(found) == 1:
        return found[0]
    raise ValueError(
        f"unknown measure {name!r}: use svmmap's names (map, ndcg@10, mrr, p@10, recall@100, rprec, bpref, "
        "err@20, success@10, judged@10), ir_measures' (AP, nDCG@10, R@100, RR, ...) or trec_eval's "
        "(ndcg_cut_10, recall_100, ...)"
    )


def _check_conventions(conventions: str) -> None:
    if conventions not in RUN_CONVENTIONS:
        raise ValueError(f'conventions must be "svmmap" or "trec_eval" for runs, got {conventions!r}')


def _ranked_dict(run: Run, keep: Optional[np.ndarray] = None) -> Dict[str, Dict[str, float]]:
    """``{qid: {docno: score}}`` with scores replaced by ``-rank`` in trec_eval's order.

    Every tool behind ir_measures then sees one strict order, trec_eval's: trec_eval's own
    measures get the same numbers as from the original scores, and measures that other tools
    compute (gdeval's ERR, ir_measures' Judged, the MS MARCO RR@k, which break ties by
    increasing docno) rank the documents as trec_eval does instead of by their own tie rules.
    """
    qid, docno, score = run.qid, run.docno, run.score
    if keep is not None:
        qid, docno, score = qid[keep], docno[keep], score[keep]
    order = trec_order(qid, docno, score)
    qid, docno = qid[order], docno[order]
    ranks = _ranks_in_order(qid)
    if ranks.size and int(ranks.max()) > _MAX_DOCS_PER_QUERY:
        big = qid[int(np.argmax(ranks))]
        raise ValueError(f"run {run.name}: query {big!r} has more than {_MAX_DOCS_PER_QUERY} documents")
    out: Dict[str, Dict[str, float]] = {}
    for q, d, r in zip(qid.tolist(), docno.tolist(), ranks.tolist()):
        out.setdefault(q, {})[d] = -float(r)
    return out


class QueryValues(Dict[str, float]):
    """``{qid: value}`` of one measure on a run, with ``mean``: the measure over all these
    queries, the number trec_eval prints on its ``all`` line.

    A plain dict in every other way (its items are the per-query values). ``mean`` is
    ir_measures' aggregate of the measure, which is trec_eval's: the mean of the per-query
    values, including the 0 of a listed query the run does not retrieve (``trec_eval -c``),
    and the sum for the counts ``NumRet``, ``NumRel`` and ``NumRelRet``. NaN without queries.
    """

    mean: float

    def __init__(self, values: Mapping[str, float], mean: float) -> None:
        super().__init__(values)
        self.mean = mean

    def __repr__(self) -> str:
        return dict.__repr__(self)


class MeasureValues(Dict[str, QueryValues]):
    """``{measure name: QueryValues}``: what `evaluate_measures` returns, with ``means``."""

    @property
    def means(self) -> Dict[str, float]:
        """``{measure name: mean}``, trec_eval's ``all`` line of every measure."""
        return {name: values.mean for name, values in self.items()}


def _aggregate(measure: Any, values: Iterable[float]) -> float:
    """The measure over all queries as trec_eval reports it (ir_measures' aggregator of the
    measure: the mean, the sum for counts); NaN without a value."""
    values = list(values)
    if not values:
        return float("nan")
    aggregator = measure.aggregator()
    for v in values:
        aggregator.add(v)
    return float(aggregator.result())


def evaluate_measures(
    run: Run,
    qrels: Qrels,
    measures: Union[str, Sequence[str]] = ("map", "ndcg@10", "p@10"),
    *,
    conventions: str = "trec_eval",
    queries: Optional[Sequence[str]] = None,
) -> Dict[str, Dict[str, float]]:
    """Per-query values of several measures of a run, computed by ir_measures with trec_eval's ranks.

    Measures are named as `parse_measure` accepts (``"map"``, ``"nDCG@10"``, ``"R@100"``,
    ``"Rprec"``, ``"Bpref"``, ``"RR"``, ``"ERR@20"``, ``"Success@10"``, ``"Judged@10"``, ...).
    ir_measures computes trec_eval's measures with pytrec_eval (trec_eval's own code), so the
    numbers are trec_eval's: a document is relevant when its relevance is >= 1, unjudged
    documents are not relevant, AP divides by the relevant documents in the qrels, NDCG uses
    the relevance as gain and the qrels' ideal ranking. Documents are ranked as trec_eval
    ranks them (`trec_order`) for every measure, including those computed by other tools
    (ERR@k by gdeval, Judged@k, RR@k).

    Parameters
    ----------
    conventions : {"trec_eval", "svmmap"}
        ``"trec_eval"`` (default): the queries of the run that have judgments, as trec_eval
        and pytrec_eval evaluate them (a query without a relevant document counts, e.g. with
        AP 0). ``"svmmap"``: only the queries with at least one relevant document.
    queries : sequence of str, optional
        Evaluate these queries only (still subject to ``conventions``); a listed query that
        the run does not retrieve gets 0, as ``trec_eval -c`` gives it.

    Returns
    -------
    MeasureValues
        ``{measure name as given: {qid: value}}``, queries in sorted order: a dict of
        `QueryValues`, each with ``.mean`` (trec_eval's ``all`` line); ``.means`` gives them
        all as ``{measure name: mean}``.

    Examples
    --------
    >>> from svmmap.ir.trec import Qrels, Run, evaluate_measures
    >>> run = Run.from_dict({"1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}, "2": {"d1": 1.0}})
    >>> qrels = Qrels.from_dict({"1": {"d1": 0, "d3": 2, "d5": 1}, "2": {"d1": 0}})
    >>> # Query 1: relevant documents at rank 3 and never retrieved (d5): AP = (1/3) / 2 = 1/6,
    >>> # R-precision = relevant in the top 2 / 2 = 0, recall@3 = 1/2, 2 of the top 3 judged.
    >>> # Query 2 has no relevant document: trec_eval counts it (AP 0, 1 of 1 judged).
    >>> result = evaluate_measures(run, qrels, ["map", "Rprec", "recall@3", "judged@3"])
    >>> {m: {q: round(v, 4) for q, v in per.items()} for m, per in result.items()}
    {'map': {'1': 0.1667, '2': 0.0}, 'Rprec': {'1': 0.0, '2': 0.0}, 'recall@3': {'1': 0.5, '2': 0.0}, 'judged@3': {'1': 0.6667, '2': 1.0}}
    >>> evaluate_measures(run, qrels, "map", conventions="svmmap")
    {'map': {'1': 0.16666666666666666}}
    >>> {m: round(v, 4) for m, v in result.means.items()}  # trec_eval's "all": the mean over queries 1 and 2
    {'map': 0.0833, 'Rprec': 0.0, 'recall@3': 0.25, 'judged@3': 0.8333}
    """
    import ir_measures

    _check_conventions(conventions)
    names = [measures] if isinstance(measures, str) else list(measures)
    if not names:
        raise ValueError("measures: no measure given")
    parsed = {name: parse_measure(name) for name in names}
    judged = set(qrels.qid.tolist())
    wanted = run.queries() if queries is None else sort_qids(dict.fromkeys(str(q) for q in queries))
    wanted = [q for q in wanted if q in judged]
    if conventions == "svmmap":
        with_rel = set(qrels.qid[qrels.rel >= 1].tolist())
        wanted = [q for q in wanted if q in with_rel]
    keep = np.isin(run.qid, wanted)
    # The tools behind ir_measures see the queries as 1, 2, 3, ... (their order in `wanted`):
    # gdeval (ERR@k) reads query ids as numbers, and gave 0 for "-1", failed on "Q1", "1e3" or
    # "1.5", and divided by zero for "007" beside "7"; every id Run and Qrels accept is valid
    # for the other measures, so the aliases change no value.
    alias = {q: str(i + 1) for i, q in enumerate(wanted)}
    original = {a: q for q, a in alias.items()}
    ranked = {alias[q]: docs for q, docs in _ranked_dict(run, keep).items()}
    qrels_dict = {alias[q]: docs for q, docs in qrels.to_dict().items() if q in alias}
    values: Dict[Any, Dict[str, float]] = {m: {} for m in set(parsed.values())}
    if ranked:
        for metric in ir_measures.iter_calc(list(values), qrels_dict, ranked):
            values[metric.measure][original[str(metric.query_id)]] = float(metric.value)
    # A wanted query that the run does not retrieve: every measure is 0, as with trec_eval -c.
    out = MeasureValues()
    for name, m in parsed.items():
        per = {q: values[m].get(q, 0.0) for q in wanted}
        out[name] = QueryValues(per, _aggregate(m, per.values()))
    return out


def evaluate_run(
    run: Run,
    qrels: Qrels,
    metric: str = "map",
    *,
    queries: Optional[Sequence[str]] = None,
    conventions: str = "svmmap",
) -> QueryValues:
    """Per-query ``metric`` of a run against qrels, computed as trec_eval computes it.

    ``metric`` is any name `parse_measure` accepts ("map", "ndcg@10", "p@10",
    "recall@100", "rprec", "bpref", "mrr", "err@20", "success@10", "judged@10", or
    ir_measures' and trec_eval's names); see `evaluate_measures` for how the values are
    computed. With ``conventions="svmmap"`` (the default here, used by run fusion) only the
    queries that have at least one relevant document in the qrels are returned (trec_eval
    would also count the others, mostly as 0); ``conventions="trec_eval"`` returns them too.

    Returns
    -------
    QueryValues
        ``{qid: value}``, a dict with ``.mean``: the metric over these queries (trec_eval's
        ``all`` line; see `QueryValues`).

    Examples
    --------
    >>> from svmmap.ir.trec import Qrels, Run, evaluate_run
    >>> run = Run.from_dict({"1": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d4": 0.6}, "2": {"d1": 1.0}})
    >>> qrels = Qrels.from_dict({"1": {"d1": 1, "d2": 0, "d3": 2, "d5": 1}, "2": {"d1": 0}})
    >>> # Query 1 has relevant documents at ranks 1 and 3 and misses d5: AP = (1/1 + 2/3) / 3 = 5/9.
    >>> # Query 2 has no relevant document, so it is left out.
    >>> {q: round(ap, 4) for q, ap in evaluate_run(run, qrels).items()}
    {'1': 0.5556}
    >>> evaluate_run(run, qrels, "p@2")
    {'1': 0.5}
    >>> evaluate_run(run, qrels, "map", conventions="trec_eval")["2"]  # trec_eval's AP of query 2
    0.0
    >>> round(evaluate_run(run, qrels, "map", conventions="trec_eval").mean, 4)  # MAP: (5/9 + 0) / 2
    0.2778
    """
    if queries is not None and np.ndim(queries) != 1:
        raise ValueError(f"queries must be a sequence of query ids, got {queries!r}")
    return evaluate_measures(run, qrels, [metric], conventions=conventions, queries=queries)[metric]
