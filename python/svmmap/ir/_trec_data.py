"""Run and Qrels: the columns of a TREC run and of qrels, checked once, and their dicts and
pandas frames (`svmmap.ir.trec` re-exports them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union, cast

import numpy as np

from .._files.text import check_ids
from .._optional import load
from .._validation import check_str, refuse_bools
from ._trec_order import sort_qids, trec_ranks

__all__ = ["Run", "Qrels"]


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
    # Before NumPy's conversion, which makes [1, True] the integers [1, 1] (and [1.5, True]
    # the scores [1.5, 1.0]).
    refuse_bools(values, f"{name}: {what}", "an integer" if dtype is np.int64 else "a number")
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
        check_str(self.name, "name")
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
                # As given: the constructor's check is from_frame's and read_run's (float()
                # parsed "1.0", read True as 1 and raised a bare TypeError for None).
                score.append(s)
        # Object arrays, not str arrays: the constructor checks the ids as given, before numpy's
        # str conversion drops a trailing NUL.
        run = cls(
            np.asarray(qid, dtype=object),
            np.asarray(docno, dtype=object),
            cast(np.ndarray, score),  # a list: the constructor converts it after its check
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
        pd = load("pandas", "Run.to_frame")

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
        _frame_column(frame, name, "score", "score")  # a missing column named
        # As given, not through NumPy, which makes [2.5, True] the scores [2.5, 1.0]: the
        # constructor's check refuses the True, as read_run refuses the field.
        score = frame["score"]
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
        check_str(self.name, "name")
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
        # A bool among integers is refused before NumPy makes it one ([1, True] is [1, 1]).
        refuse_bools(rel, f"{name}: rel", "an integer")
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
        _frame_column(frame, name, "relevance", "relevance", "label")  # a missing column named
        # The column as given, checked by the constructor as from_dict's and a file's are: a
        # private check here let uint64 2**63 wrap around to -2**63, and NumPy made [1, True]
        # the labels [1, 1].
        rel = frame["relevance" if "relevance" in frame.keys() else "label"]
        refuse_bools(rel, f"{name}: relevance", "an integer")  # named as the frame's column
        _refuse_duplicates(qid, docno, name, "is judged")
        return cls(qid, docno, rel, name)

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
        pd = load("pandas", "Qrels.to_frame")

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


def _first_duplicate(qid: Any, docno: Any) -> Optional[tuple]:
    """(row of the first repeated (qid, docno) pair, row of its first occurrence), or None."""
    keys = np.char.add(np.char.add(np.asarray(qid, dtype=str), "\t"), np.asarray(docno, dtype=str))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    repeated = np.flatnonzero(first[inverse.reshape(-1)] != np.arange(len(keys)))
    if repeated.size == 0:
        return None
    row = int(repeated[0])
    return row, int(first[inverse.reshape(-1)[row]])
