"""Reading LETOR/svmlight files, model files and prediction files; atomic writes."""

from __future__ import annotations

import contextlib
import json
import os
import re
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core

__all__ = [
    "load_letor",
    "read_group_file",
    "write_atomic",
    "save_predictions",
    "load_predictions",
    "model_document",
    "save_model",
    "load_model",
]

PathLike = Union[str, "os.PathLike[str]"]


#: A query id written the way Python writes an int64: no sign "+", no leading zeros, no "-0",
#: no spaces or underscores, ASCII digits only.
_CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]{0,18}")


def _canonical_int(text: str) -> bool:
    """Whether ``int(text)`` is an int64 whose ``str`` gives back ``text`` exactly."""
    return _CANONICAL_INT.fullmatch(text) is not None and -(2**63) <= int(text) < 2**63


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


_UTF8_BOM = b"\xef\xbb\xbf"


def _text_lines(name: str) -> Iterator[Tuple[int, bytes]]:
    """(1-based line number, bytes) of every line of a text file, as files really come: a UTF-8
    byte order mark is skipped, a line ends at LF, CRLF or a lone CR, and gzip-compressed files
    (TREC distributes runs as .gz) are decompressed, whatever their name. These are the LETOR
    reader's rules, so that line numbers in errors agree with an editor's and an id is the
    same string in every file. UTF-16 text, and a byte order mark inside the file (files
    joined with cat), are errors naming the line."""
    import gzip

    from ._core import DataFormatError

    lineno = 0
    # Opened once and peeked at, so that a pipe (`--runs <(zcat run.gz)`) loses no bytes.
    with open(name, "rb") as raw_file, contextlib.ExitStack() as stack:
        f: Any = raw_file
        if raw_file.peek(2)[:2] == b"\x1f\x8b":
            f = stack.enter_context(gzip.GzipFile(fileobj=raw_file, mode="rb"))
        for k, raw in enumerate(f):
            if k == 0 and raw.startswith(_UTF8_BOM):
                raw = raw[len(_UTF8_BOM) :]
            elif k == 0 and raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                raise DataFormatError(
                    f"{name}:1: the file is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8"
                )
            raw = raw[:-2] if raw.endswith(b"\r\n") else raw.rstrip(b"\n")
            for piece in raw.split(b"\r") if b"\r" in raw else (raw,):
                lineno += 1
                if piece.startswith(_UTF8_BOM):
                    raise DataFormatError(
                        f"{name}:{lineno}: a UTF-8 byte order mark in the middle of the file (files joined "
                        "together?); remove it"
                    )
                yield lineno, piece


def _number(token: str) -> float:
    """A decimal number as the LETOR reader (Rust's f64 parser) and C's strtod read it: ASCII
    only. Python's float() also takes "1_000" and other scripts' digits ("\u0661"), which
    other tools read differently or not at all."""
    if not token.isascii() or "_" in token:
        raise ValueError(token)
    return float(token)


def _integer(token: str) -> int:
    """An integer written with ASCII digits and an optional sign (see ``_number``)."""
    if re.fullmatch(r"[+-]?[0-9]+", token) is None:
        raise ValueError(token)
    return int(token)


def _split_fields(name: str, lineno: int, raw: bytes) -> List[str]:
    """The fields of a line, split on ASCII whitespace (space, tab, CR, VT, FF: C's isspace,
    the LETOR reader's separators) and decoded as UTF-8; a byte that is not UTF-8 is an error
    naming the file, line and field instead of a replacement character."""
    fields = raw.split()
    if b"\x00" in raw:
        # numpy's str arrays drop trailing NULs: "1\0" would become query or document "1".
        k = next(k for k, f in enumerate(fields, 1) if b"\x00" in f)
        raise _core.DataFormatError(f"{name}:{lineno}: field {k} contains a NUL byte (a binary file?)")
    try:
        return [f.decode("utf-8") for f in fields]
    except UnicodeDecodeError:
        for k, f in enumerate(fields, 1):
            try:
                f.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = f[exc.start]
                raise _core.DataFormatError(
                    f"{name}:{lineno}: field {k} ({f.decode('utf-8', 'replace')!r}) is not UTF-8 text "
                    f"(byte 0x{bad:02x}, Latin-1?); re-encode the file as UTF-8"
                ) from None
        raise


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
    path : str or path-like
        Plain text or gzip-compressed (detected from the content, whatever the name).
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
        field; "nan" reads it as NaN. NaN is missing to ``svmmap.Binner(missing="indicator")``,
        which learns a score of its own for it in a pipeline; for a plain ``SVMMap``, fill it
        first (LETOR's Feature-min files put the query's minimum of the feature there).
    group : None, False, str, path-like or array-like of int, default=None
        Query sizes in row order, as LightGBM's ``group``: the first ``group[0]`` rows are one
        query, the next ``group[1]`` the next, and so on. A path names a file of sizes, one
        integer per line (LightGBM's ``.query`` file). None (the default) uses ``<path>.query``
        when that file exists, as LightGBM does, and the ``qid:`` fields otherwise; False
        always uses the ``qid:`` fields. With sizes, no line may carry a ``qid:`` field, and
        the query ids returned are 0, 1, 2, ... in file order.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_documents, n_features)
    y : ndarray of shape (n_documents,), float64 labels
    qid : ndarray of shape (n_documents,)
        The query id of every row: the string of the file (as for TREC runs and qrels), held
        as int64 when every id is an integer written as Python writes one (``str(qid)`` gives
        the string back: "01" and "1" are two queries and make the array str).
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
    from ._validation import n_threads

    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    if sparse not in ("auto", True, False):
        raise ValueError(f'sparse must be "auto", True or False, got {sparse!r}')
    if n_features is not None and (
        isinstance(n_features, bool)
        or not isinstance(n_features, (int, np.integer))
        or not 1 <= n_features <= 2**31 - 1
    ):
        # The reader's largest feature index (scipy's int32 column indices) bounds it too.
        raise ValueError(f"n_features must be an integer in 1..2147483647, got {n_features!r}")
    if missing not in ("error", "nan"):
        raise ValueError(f'missing must be "error" or "nan", got {missing!r}')
    sizes = _group_sizes(path, group)
    raw = _core.read_letor_file(
        os.fspath(path),
        dt.name,
        None if n_features is None else int(n_features),
        return_comments,
        n_threads(n_jobs),
        missing_nan=missing == "nan",
        without_qid=sizes is not None,
    )
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
            X = X.toarray()
    if sizes is not None:
        from ._validation import qid_of

        qid = qid_of(None, sizes[0], n_rows, group_name=sizes[1], rows_name=os.fspath(path))
    else:
        qid = _qid_array(raw["qid_names"], raw["qid_codes"].astype(np.intp))
    if return_comments:
        return X, raw["labels"], qid, raw["comments"]
    return X, raw["labels"], qid


def read_group_file(path: PathLike) -> np.ndarray:
    """Read a LightGBM ``.query`` file: one query size (a positive integer) per line.

    Blank lines are skipped; anything else is an error naming the file and line.
    """
    from ._core import DataFormatError

    name = os.fspath(path)
    sizes = []
    with open(name, "r", encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            text = line.strip()
            if not text:
                continue
            try:
                size = int(text)
            except ValueError:
                raise DataFormatError(
                    f"{name}:{lineno}: expected a query size (a positive integer), got {text!r}"
                ) from None
            if size < 1:
                raise DataFormatError(f"{name}:{lineno}: query size {size} must be at least 1")
            sizes.append(size)
    if not sizes:
        raise DataFormatError(f"{name}: no query sizes: the group file is empty")
    return np.asarray(sizes, dtype=np.int64)


def _group_sizes(path: PathLike, group: Any) -> Optional[tuple]:
    """(sizes, where they came from) for ``load_letor``'s ``group``, or None for ``qid:`` fields."""
    if group is False:
        return None
    if group is None:
        auto = os.fspath(path) + ".query"
        if not os.path.exists(auto):
            return None
        return read_group_file(auto), auto
    if isinstance(group, (str, os.PathLike)):
        return read_group_file(group), os.fspath(group)
    return group, "group"


def write_atomic(path: PathLike, data: Union[str, bytes]) -> None:
    """Write a whole file so that readers see the old content or the new, never a part."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    _core.write_atomic(os.fspath(path), data)


def save_predictions(path: PathLike, scores: np.ndarray) -> None:
    """One score per line, exactly (shortest round-trip representation), written atomically."""
    write_atomic(path, "".join(f"{float(s)!r}\n" for s in np.asarray(scores, dtype=np.float64)))


def load_predictions(path: PathLike, n_expected: Optional[int] = None, qid: Any = None) -> np.ndarray:
    """Read the scores of a predictions file, one document per line, in the data file's order.

    Three layouts are read, the same on every line: ``score`` (svmmap, SVM^light/rank),
    ``qid score``, and RankLib's ``qid index score`` (``-score`` output); the score is the last
    field. With ``qid`` (the data file's query ids, one per document), the qid column must
    name the same query as the data file's line (the same string), so that a predictions file
    of another data file or order is refused instead of evaluated.

    Raises
    ------
    svmmap.DataFormatError
        With ``file:line`` and the field, for a score that is not a finite number, a line
        with another number of fields than the first, a non-integer RankLib index, a qid that
        differs from the data file's, bytes that are not UTF-8, or the wrong number of lines.
    """
    from ._core import DataFormatError

    name = os.fspath(path)
    layouts = {1: "'score'", 2: "'qid score'", 3: "'qid index score' (RankLib)"}
    expected_qids = None if qid is None else [str(q) for q in np.asarray(qid).tolist()]
    values: List[float] = []
    width = None
    first_line = 0
    for lineno, raw in _text_lines(name):
        fields = _split_fields(name, lineno, raw)
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
            v = _number(token)
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
    if n_expected is None and expected_qids is not None:
        n_expected = len(expected_qids)
    if n_expected is not None and len(values) != n_expected:
        raise DataFormatError(
            f"{name}: {len(values)} scores for {n_expected} documents; one score per document line is expected"
        )
    return np.asarray(values, dtype=np.float64)


#: Estimator parameters that describe how a model was run, not the model; not saved.
_RUNTIME_PARAMS = ("callback", "n_jobs", "verbose")


def _json_value(name: str, value: Any) -> Any:
    """A parameter value as JSON data, or a clear error when it has no JSON form."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, tuple):
        value = list(value)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise ValueError(
            f"parameter {name}={value!r} cannot be written to a model file (it has no JSON form)"
        ) from None
    return value


def _finite_or_none(value: Any) -> Optional[float]:
    v = float(value)
    return v if np.isfinite(v) else None


def _split_pipeline(model: Any) -> tuple:
    """(binner or None, the SVMMap) of a fitted SVMMap or Pipeline(Binner, SVMMap)."""
    from .estimator import SVMMap

    if isinstance(model, SVMMap):
        return None, model
    steps = getattr(model, "steps", None)
    if steps is not None and len(steps) == 2:
        from .binning import Binner

        first, last = steps[0][1], steps[1][1]
        if isinstance(first, Binner) and isinstance(last, SVMMap):
            return first, last
    raise TypeError(
        "save_model takes a fitted svmmap.SVMMap or a Pipeline of exactly (svmmap.Binner, svmmap.SVMMap), "
        f"got {type(model).__name__}"
    )


def model_document(model: Any) -> dict:
    """The model file's content (see ``docs/model-format.md``) as a dict."""
    from . import __version__

    binner, svm = _split_pipeline(model)
    svm._check_fitted()
    params = {k: _json_value(k, v) for k, v in svm.get_params(deep=False).items() if k not in _RUNTIME_PARAMS}
    names = getattr(svm, "feature_names_in_", None)
    binning = None
    if binner is not None:
        binning = binner.to_dict()
        # The binner's own input names (a DataFrame's columns) travel with it; the model's
        # features are then the binner's outputs ("name>threshold").
        if names is None:
            names = binner.get_feature_names_out()
    return {
        "format": "svmmap-model",
        "version": _core.MODEL_FORMAT_VERSION,
        "svmmap_version": __version__,
        "n_features": int(svm.n_features_in_),
        "coef": [float(c) for c in svm.coef_],
        "params": params,
        "feature_names": None if names is None else [str(n) for n in names],
        "binning": binning,
        "training": {
            # NaN (unknown: a loaded file without a training summary) is written as null.
            "objective": _finite_or_none(svm.objective_),
            "dual_objective": _finite_or_none(svm.dual_objective_),
            "gap": _finite_or_none(svm.gap_),
            "n_iter": int(svm.n_iter_),
            "n_cuts": int(svm.n_cuts_),
            "converged": bool(svm.converged_),
            "stop_reason": getattr(svm, "stop_reason_", "converged" if svm.converged_ else "max_iter"),
            "n_queries": int(svm.n_queries_),
            "n_queries_skipped": {k: int(v) for k, v in svm.n_queries_skipped_.items()},
            "history": [
                {k: (float(v) if isinstance(v, float) else int(v)) for k, v in record.items()}
                for record in getattr(svm, "history_", [])
            ],
        },
    }


def save_model(model: Any, path: PathLike) -> None:
    """Write a fitted model as versioned JSON, atomically (read it with ``svmmap.load_model``).

    Parameters
    ----------
    model : svmmap.SVMMap or sklearn.pipeline.Pipeline
        A fitted ``SVMMap``, or a fitted ``Pipeline([("bin", svmmap.Binner()), ("svm",
        svmmap.SVMMap())])``, whose thresholds are stored in the file's "binning" field.
    path : str or path-like
        Where to write. A reader sees either the old file or the whole new one.

    Notes
    -----
    The format (``docs/model-format.md``) holds the weights, the estimator's parameters (loss,
    C, eps, ...), the feature names, the binning thresholds and the training summary
    (objectives, gap, iterations, per-iteration history). ``svmmap learn`` writes the same
    format and ``svmmap classify`` reads it.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import svmmap
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 0.8]])
    >>> model = svmmap.SVMMap(C=10.0).fit(X, [1, 0, 1, 0], qid=[1, 1, 2, 2])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
    >>> svmmap.save_model(model, path)
    >>> loaded = svmmap.load_model(path)
    >>> bool(np.array_equal(loaded.coef_, model.coef_)), loaded.C
    (True, 10.0)
    """
    doc = model_document(model)
    _core.save_model_json(os.fspath(path), json.dumps(doc, allow_nan=False))


def load_model(path: PathLike) -> Any:
    """Read a model written by ``svmmap.save_model``, ``SVMMap.save`` or ``svmmap learn``.

    Returns
    -------
    model : svmmap.SVMMap, or a fitted Pipeline(Binner, SVMMap) when the file holds binning
        thresholds. Its parameters and fitted attributes (``coef_``, ``n_features_in_``,
        ``feature_names_in_``, ``objective_``, ``history_`` ...) are those that were saved.

    Raises
    ------
    svmmap.ModelFormatError
        When the file is truncated, corrupted, not an svmmap model, of a newer format version
        (the message says so and which version this svmmap reads), or inconsistent (e.g.
        ``n_features`` and the number of weights differ).
    FileNotFoundError, OSError
        When the file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from svmmap import Binner, SVMMap, load_model, save_model
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 0.8]])
    >>> model = make_pipeline(Binner(), SVMMap(C=10.0)).fit(X, [1, 0, 1, 0], svmmap__qid=[1, 1, 2, 2])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
    >>> save_model(model, path)
    >>> loaded = load_model(path)  # the file holds thresholds, so this is a Pipeline again
    >>> type(loaded).__name__, bool(np.array_equal(loaded.predict(X), model.predict(X)))
    ('Pipeline', True)
    """
    from ._core import ModelFormatError
    from ._model_file import read_model
    from .estimator import SVMMap

    document = read_model(path)
    params = document.params
    known = set(SVMMap._get_param_names())
    # How a model was run (callback, n_jobs, verbose) is not saved; a file that holds such
    # values anyway does not get to set them, so a bad one cannot break predict.
    model = SVMMap(**{k: v for k, v in params.items() if k in known and k not in _RUNTIME_PARAMS})
    model.coef_ = document.coef
    model.n_features_in_ = document.n_features
    names = document.feature_names
    if names is not None and document.binning is None:
        model.feature_names_in_ = np.asarray(names, dtype=object)
    training = document.training
    unknown = float("nan")
    model.objective_ = unknown if training.get("objective") is None else training["objective"]
    model.dual_objective_ = unknown if training.get("dual_objective") is None else training["dual_objective"]
    model.gap_ = unknown if training.get("gap") is None else training["gap"]
    model.n_iter_ = training.get("n_iter", 0)
    model.n_cuts_ = training.get("n_cuts", 0)
    model.converged_ = training.get("converged", False)
    model.stop_reason_ = training.get("stop_reason", "converged" if model.converged_ else "max_iter")
    model.n_queries_ = training.get("n_queries", 0)
    model.n_queries_skipped_ = training.get("n_queries_skipped", {})
    model.history_ = training.get("history", [])
    if document.binning is None:
        return model
    from sklearn.pipeline import Pipeline

    from .binning import Binner

    binning = document.binning
    binner = Binner(**{k: v for k, v in binning.params.items() if k in Binner._get_param_names()})
    try:
        binner._check_params()
    except ValueError as exc:
        raise ModelFormatError(f"{document.path}: invalid binning: {exc}") from None
    binner.thresholds_ = binning.thresholds
    binner.n_features_in_ = binning.n_features_in
    if binning.feature_names_in is not None:
        binner.feature_names_in_ = np.asarray(binning.feature_names_in, dtype=object)
    binner.n_output_features_ = binning.n_output
    return Pipeline([("bin", binner), ("svm", model)])
