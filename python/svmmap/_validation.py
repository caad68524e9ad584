"""Input checks shared by the estimator, the metrics and the CLI.

Everything is turned into what the Rust core borrows without copying: C-contiguous float32 or
float64 arrays, or the arrays of a CSR matrix. A copy is made only when the input is of another
layout or dtype, and then exactly once.
"""

from __future__ import annotations

import numbers
import os
import sys
import warnings
from typing import Any

import numpy as np

from ._data import (  # noqa: F401 (the column-name checks, imported by callers from here)
    CoreMatrix,
    as_array,
    check_characters,
    check_feature_names,
    feature_names_mismatch,
    feature_names_of,
    issparse,
    require_2d,
    unique_column_names,
)
from ._data import aligned as contiguous


def check_matrix(X: Any, name: str = "X") -> tuple[CoreMatrix, int, int]:
    """Returns (the matrix as the core takes it, n_rows, n_features)."""
    from ._binned import BinnedMatrix

    if isinstance(X, BinnedMatrix):
        # The core reads the codes as the indicator matrix (n_features = indicator columns).
        if X.shape[0] == 0:
            raise ValueError(
                f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required: {name} has no documents"
            )
        return X._core(), X.shape[0], X.shape[1]
    if issparse(X):
        _check_not_empty_or_complex(X, name)
        X = X.tocsr() if X.format != "csr" else X
        data = X.data
        if data.dtype not in (np.float32, np.float64):
            if not np.issubdtype(data.dtype, np.number) and data.dtype != np.bool_:
                raise ValueError(f"{name} must hold numbers, got dtype {data.dtype}")
            data = data.astype(np.float64)
        indices, indptr = X.indices, X.indptr
        if indices.dtype != indptr.dtype or indices.dtype not in (np.int32, np.int64):
            indices = indices.astype(np.int64)
            indptr = indptr.astype(np.int64)
        n_rows, n_cols = X.shape
        return CoreMatrix.csr(data, indices, indptr, (int(n_rows), int(n_cols))), int(n_rows), int(n_cols)
    if hasattr(X, "__dask_graph__"):
        raise TypeError(f"{name} is a dask collection; use svmmap.dask.SVMMap for dask inputs")
    core = CoreMatrix.dense(dense_numbers(X, name))
    return core, core.n_rows, core.n_cols


def dense_numbers(X: Any, name: str = "X") -> np.ndarray:
    """THE check of a dense matrix's shape and type (``check_matrix``'s and ``Binner``'s): a 2-D
    float32 or float64 array with rows and columns, other numbers converted to float64 once,
    errors naming ``name``. The core refuses NaN and inf with their position (not Binner's NaN
    with ``missing="indicator"``)."""
    _refuse_categorical_columns(X, name)
    arr = as_array(X, name)
    require_2d(arr.ndim, name)
    _check_not_empty_or_complex(arr, name)
    if arr.dtype not in (np.float32, np.float64):
        if arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating):
            arr = arr.astype(np.float64)
        else:
            try:
                # pandas' NA (a nullable column's missing value) is NaN, as None is.
                numbers = np.where(_missing_ids(arr).astype(bool), np.nan, arr).astype(np.float64)
            except (TypeError, ValueError) as exc:
                # The same type (an object, or a string, that is no number), as scikit-learn's.
                raise type(exc)(
                    f"{name} must hold numbers, got dtype {arr.dtype}{_text_columns(X, name)}: {exc}"
                ) from None
            # Numbers written as text ("1.5", a DataFrame column of str) are refused as a str array is.
            at = next((i for i, v in enumerate(arr.flat) if isinstance(v, (str, bytes))), None)
            if at is not None:
                raise ValueError(f"{name}[{at // arr.shape[1]}, {at % arr.shape[1]}] is text: {name} must hold numbers")
            arr = numbers
    return arr


#: svmmap's way with a categorical feature, said wherever one is refused.
ENCODE_CATEGORIES = (
    "svmmap's model is linear, one weight per column, and reads no categories (LightGBM splits on them): "
    "encode them as indicator columns first, e.g. pandas.get_dummies(X, columns={columns}, dtype=float) "
    "or sklearn.preprocessing.OneHotEncoder"
)


def _pandas_frame(X: Any) -> Any:
    """pandas, when ``X`` is one of its DataFrames (pandas is not imported for anything else)."""
    pandas = sys.modules.get("pandas")
    return pandas if pandas is not None and isinstance(X, pandas.DataFrame) else None


def _refuse_categorical_columns(X: Any, name: str) -> None:
    """Refuses a DataFrame's columns of pandas' category dtype, naming them. LightGBM takes such
    a column as a categorical feature; numpy would read it as its categories (an error for
    text, and, for categories that are numbers, those numbers as an ordered feature, silently),
    so a ported script would either fail without a word on categories or learn one weight for
    an unordered code."""
    pandas = _pandas_frame(X)
    if pandas is None:
        return
    columns = [c for c, dtype in X.dtypes.items() if isinstance(dtype, pandas.CategoricalDtype)]
    if columns:
        raise ValueError(
            f"{name} has categorical column(s) {', '.join(map(repr, columns))} (pandas category dtype): "
            + ENCODE_CATEGORIES.format(columns=columns)
            + " (to use the category codes as numbers, give X[col].cat.codes)"
        )


def _text_columns(X: Any, name: str) -> str:
    """For a DataFrame numpy could not read as numbers, the columns at fault and svmmap's way."""
    pandas = _pandas_frame(X)
    if pandas is None:
        return ""
    columns = []
    for column, values in X.items():
        try:
            np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            columns.append(column)
    if not columns:
        return ""
    return f" in column(s) {', '.join(map(repr, columns))} ({ENCODE_CATEGORIES.format(columns=columns)})"


def _check_not_empty_or_complex(arr: Any, name: str) -> None:
    """Errors for an X without rows or columns, of complex numbers or of strings (worded as
    in scikit-learn where it has a message, since its users know them). Complex numbers would
    lose their imaginary part and strings would be parsed, both silently."""
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"Complex data not supported: {name} has dtype {arr.dtype}; ranking scores are real numbers")
    if arr.dtype.kind in "USV":
        raise ValueError(f"{name} must hold numbers, got dtype {arr.dtype} (strings or raw bytes)")
    if arr.shape[0] == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required: {name} has no documents"
        )
    if arr.shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required: {name} has no features"
        )


def minmax_scaled(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """(values - low) / (high - low), elementwise (broadcasting), without overflow: finite
    values that span more than the float64 range (-1e308 to 1e308) make ``high - low``
    infinite, which scaled every value to 0 (and the top one to NaN). Where that happens the
    three are halved first, which is exact for such magnitudes, so the result is the same
    fraction; elsewhere the plain formula runs, bit for bit as before. Where ``high == low``
    the result is NaN (0 / 0): the callers decide what a constant column means."""
    values, low, high = np.asarray(values, dtype=np.float64), np.asarray(low), np.asarray(high)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        span = high - low
        out = (values - low) / span
        wide = np.isinf(span) & np.isfinite(high) & np.isfinite(low)
        if np.any(wide):
            half = (values * 0.5 - low * 0.5) / (high * 0.5 - low * 0.5)
            out = np.where(np.broadcast_to(wide, out.shape), half, out)
    return out


def forget_fit(model: Any) -> None:
    """Removes every fitted attribute (those ending in an underscore). Every estimator's fit
    calls it first, before any check or work, so that a fit that fails (bad input, a refused
    parameter, Ctrl-C, MemoryError) leaves the estimator unfitted rather than holding the
    previous fit's model, thresholds or scores as if they were this one's."""
    for name in [k for k in vars(model) if k.endswith("_") and not k.startswith("_")]:
        delattr(model, name)


def _outside_svmmap() -> int:
    """The ``stacklevel`` of a warning issued by the caller of this function that points at the
    first frame outside the svmmap package: the user's line, however deep the check sits."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame: Any = sys._getframe(2)
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def one_column(values: Any, name: str, entries: str = "") -> np.ndarray:
    """``values`` (named ``name``) as a 1-D float64 array: THE rule of every array of numbers
    with one entry per row (labels, scores, weights, per-query counts). Numbers written as
    strings are refused ("1" is text, and NumPy would read "1e400" as inf and "nan" as NaN
    without a word), and so are complex numbers; a column vector (n, 1) is read as its n
    entries with scikit-learn's DataConversionWarning (`read_column_vector`), and any other
    shape is refused naming it (and ``entries``, e.g. "one score per document", when given)."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold numbers: {exc}") from None
    if raw.dtype.kind == "c":
        # NumPy's conversion would drop the imaginary part with a warning only.
        raise ValueError(f"Complex data not supported: {name} must hold real numbers")
    text = next((v for v in raw.flat if isinstance(v, (str, bytes))), None) if raw.dtype.kind in "OSU" else None
    if text is not None:
        text = str(text) if isinstance(text, str) else bytes(text)  # NumPy's str_ repr is noisy
        raise ValueError(
            f"{name} must hold numbers, got the string {text!r}: convert the strings to numbers first "
            f"(np.asarray({name}, dtype=float))"
        )
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold numbers: {exc}") from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = read_column_vector(arr, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D{f' ({entries})' if entries else ''}, got shape {arr.shape}")
    return arr


def read_column_vector(arr: np.ndarray, name: str) -> np.ndarray:
    """A column vector (n, 1) as its n entries, with scikit-learn's DataConversionWarning (its
    ``column_or_1d``; its class, so that its users' filters apply, imported only here, so that
    the command line reads labels without scikit-learn): `one_column`'s rule and the qid's."""
    from sklearn.exceptions import DataConversionWarning

    warnings.warn(
        f"A column-vector {name} of shape {arr.shape} was passed when a 1-D array was expected; it is read "
        f"as its {arr.shape[0]} entries: give {name}.ravel() to silence this",
        DataConversionWarning,
        stacklevel=_outside_svmmap(),
    )
    return arr.ravel()


def warn_unused(given: str, why: str) -> None:
    """A UserWarning that the argument ``given`` ("eval_metric='map'") is ignored, and ``why``:
    the rule of "no parameter silently ignored" for an argument that is harmless without what
    it describes (``eval_metric`` without an ``eval_set``, which LightGBM ignores without a
    word), where a refusal would break scripts that LightGBM runs. Points at the user's line."""
    warnings.warn(f"{given} is ignored: {why}", UserWarning, stacklevel=_outside_svmmap())


def check_labels(y: Any, n_rows: int, name: str = "y", rows_name: str = "X", what: str = "labels") -> np.ndarray:
    """A 1-D float64 array of finite labels (or other ``what``: per-query values), one per row."""
    if y is None:
        raise ValueError(
            f"this estimator requires y to be passed, but the target y is None: give one relevance label per row of X as {name}"
        )
    if np.iscomplexobj(y):
        raise ValueError(f"Complex data not supported: {name} must hold real relevance labels")
    arr = one_column(y, name)
    if arr.shape[0] != n_rows:
        raise ValueError(f"{name} has {arr.shape[0]} entries but {rows_name} has {n_rows} rows")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] is {arr[bad[0]]}: {what} must be finite numbers")
    return contiguous(arr)


def check_verbose(verbose: Any, levels: str) -> None:
    """THE rule of ``verbose`` (SVMMap and SVMMapCV alike): an integer, any value <= 0 silent (as
    LightGBM's -1), or a bool as scikit-learn's estimators take it (True is 1)."""
    if not isinstance(verbose, numbers.Integral):  # bool is an Integral
        raise invalid_parameter("verbose", f"an integer or a bool (<= 0 or False: silent; {levels})", verbose)


def check_n_relevant(n_relevant: Any, n_queries: int) -> np.ndarray:
    """The metrics' ``n_relevant``: one number of relevant documents per query, by the rule of
    `one_column` (a dict raised a float() TypeError, and True was one relevant document)."""
    expected, given = "one number of relevant documents per query", np.asarray(n_relevant, dtype=object).ravel()
    if isinstance(n_relevant, (dict, str, bytes)) or any(isinstance(v, (bool, np.bool_)) for v in given):
        raise invalid_parameter("n_relevant", expected, n_relevant)
    nr = contiguous(one_column(n_relevant, "n_relevant"))
    if nr.shape[0] != n_queries:
        raise ValueError(f"n_relevant has {nr.shape[0]} entries for {n_queries} queries")
    return nr


def _object_array(values: Any) -> np.ndarray:
    """A 1-D object array holding the given values as they are (tuples stay whole)."""
    items = list(values)
    arr = np.empty(len(items), dtype=object)
    for i, v in enumerate(items):
        arr[i] = v
    return arr


def query_sizes(group: Any, n_rows: int, group_name: str = "group", rows_name: str = "X") -> np.ndarray:
    """LightGBM-style query sizes as int64, checked to be positive whole numbers that add up to
    ``n_rows``: the one conversion of sizes and counts that ``fit(group=...)``, the
    ``eval_group`` lists and ``.query`` files go through.

    The bounds are checked on the values as given, before any conversion or sum: int64 sums
    wrap around (four sizes of 2**62 plus 6 add up to 6), float sizes beyond int64 convert to
    anything, and sizes that pass a wrapped sum make ``np.repeat`` write past its output (the
    interpreter crashed with SIGSEGV). Every size is at most ``n_rows`` and there are at most
    ``n_rows`` of them, so their int64 sum, at most ``n_rows`` squared, is exact for any matrix
    of fewer than 3e9 rows.
    """
    arr = np.asarray(group)
    if arr.ndim != 1 or arr.dtype.kind not in "iuf" or arr.size == 0:
        raise ValueError(
            f"{group_name} must be a non-empty 1-D array of query sizes (positive integers), got shape {arr.shape} and dtype {arr.dtype}"
        )
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        raise ValueError(f"{group_name} must hold whole numbers (query sizes), got {arr[:10].tolist()}")
    low = arr.min()
    if low < 1:
        raise ValueError(f"{group_name} must hold positive query sizes, got {low.item()}")
    high = arr.max()
    if high > n_rows or arr.size > n_rows:
        raise ValueError(
            f"{group_name} adds up to more than the {n_rows} rows of {rows_name}"
            + (f" (it holds a query size of {high.item()})" if high > n_rows else f" ({arr.size} queries)")
        )
    sizes = arr.astype(np.int64)
    total = int(sizes.sum())
    if total != n_rows:
        raise ValueError(f"{group_name} adds up to {total} rows, but {rows_name} has {n_rows} rows")
    return sizes


def qid_of(
    qid: Any, group: Any, n_rows: int, qid_name: str = "qid", group_name: str = "group", rows_name: str = "X"
) -> Any:
    """``qid`` itself, or query ids 0, 1, 2, ... made from LightGBM-style query sizes ``group``
    (in row order); giving both is an error, giving neither is left to ``check_qid``."""
    if group is None:
        return qid
    if qid is not None:
        raise ValueError(f"give {qid_name} (one query id per row) or {group_name} (query sizes in row order), not both")
    sizes = query_sizes(group, n_rows, group_name, rows_name)
    return np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)


def check_qid(
    qid: Any, n_rows: int, *, required_by: str = "SVMMap", qid_name: str = "qid", rows_name: str = "X"
) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes 0..n_queries-1 and the distinct query ids they stand for. Query ids may be
    any hashable values (integers, strings, tuples ...), in any order; rows of one query need
    not be adjacent. Ids that can be sorted are numbered in sorted order; otherwise (e.g. a mix
    of integers and strings) in order of first appearance."""
    if qid is None and qid_name.startswith("eval_qid"):
        # A validation set's ids, as SVMMap.fit words it: the advice below is fit's qid='s.
        raise ValueError(f"{qid_name} is None: give the query ids of {rows_name.removesuffix(' X')}")
    if qid is None:
        raise ValueError(
            f"{required_by} ranks documents within queries and needs qid=: one query id per row "
            "of X (any integers or strings, like the qid: field of a LETOR file or LightGBM's "
            "group). If you passed qid to a Pipeline or a scikit-learn search (GridSearchCV, "
            "cross_val_score), it was dropped on the way: enable metadata routing with "
            "sklearn.set_config(enable_metadata_routing=True) and request it with "
            "set_fit_request(qid=True) / set_score_request(qid=True), or use svmmap.SVMMapCV"
        )
    if np.ndim(qid) == 0 and not isinstance(qid, np.ndarray):
        # A single id (a number or a string) is not one id per row; a string would otherwise
        # be read as one id per character.
        raise ValueError(
            f"{qid_name} must hold one query id per row of {rows_name} (a 1-D array-like), got the single value {qid!r}"
        )
    arr = qid if isinstance(qid, np.ndarray) else None
    if arr is None:
        try:
            arr = np.asarray(qid)
        except (TypeError, ValueError):
            arr = _object_array(qid)
        if arr.ndim != 1 and isinstance(qid, (list, tuple)):
            arr = _object_array(qid)  # e.g. a list of tuples
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = read_column_vector(arr, qid_name)  # as y's (it was flattened without a word)
    if arr.ndim != 1:
        raise ValueError(f"{qid_name} must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n_rows:
        raise ValueError(f"{qid_name} has {arr.shape[0]} entries but {rows_name} has {n_rows} rows")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        at = int(np.flatnonzero(~np.isfinite(arr))[0])  # named as y's NaN is
        raise ValueError(f"{qid_name} contains NaN or infinite values: {qid_name}[{at}] is {arr[at]}")
    if arr.dtype.kind == "O" and arr.size:
        # None, pandas' NA or a float NaN among strings is a missing id, not a query: it would
        # pool every row that lacks one into one made-up query.
        missing = np.flatnonzero(_missing_ids(arr).astype(bool))
        if missing.size:
            raise ValueError(
                f"{qid_name} contains a missing id: {qid_name}[{missing[0]}] is {arr[missing[0]]!r}, "
                "and every row needs a query id"
            )
    if arr.dtype.kind in "iuf" and arr.size and bool(np.all(arr[1:] >= arr[:-1])):
        # Already sorted, as in LETOR files: the codes are the run numbers, in one vectorized pass
        # (np.unique's result, several times faster on millions of rows; once per fit).
        new_query = np.concatenate(([False], arr[1:] != arr[:-1]))
        codes = np.cumsum(new_query, dtype=np.int64)
        new_query[0] = True
        return contiguous(codes), arr[new_query]
    try:
        uniques, codes = np.unique(arr, return_inverse=True)
    except TypeError:
        # Not mutually comparable (e.g. integers and strings): number by first appearance.
        mapping: dict = {}
        try:
            codes = np.fromiter((mapping.setdefault(v, len(mapping)) for v in arr), dtype=np.int64, count=len(arr))
        except TypeError as exc:
            raise ValueError(f"{qid_name} values must be hashable: {exc}") from None
        uniques = _object_array(mapping)
    return contiguous(codes.reshape(-1), dtype=np.int64), uniques


def _missing_id(value: Any) -> bool:
    """Whether one entry of an object array of query ids stands for "no id": None, a NaN or
    infinite float, pandas' NA or NaT (recognised by type name, so pandas need not be loaded)."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return not np.isfinite(value)
    return type(value).__name__ in ("NAType", "NaTType")


_missing_ids = np.frompyfunc(_missing_id, 1, 1)


def query_weights(sample_weight: Any, codes: np.ndarray, uniques: np.ndarray) -> "np.ndarray | None":
    """One weight per query (indexed by the codes of ``check_qid``) from ``sample_weight``, one
    weight per document, which must be the same on every document of a query (the structural
    SVM has one slack per query, so a weight can only scale a whole query's loss). None stays
    None (every query weighs 1)."""
    if sample_weight is None:
        return None
    n_rows = codes.shape[0]
    # The rule of every per-row array (strings, complex numbers, a column vector), as y's.
    arr = one_column(sample_weight, "sample_weight")
    if arr.shape[0] != n_rows:
        raise ValueError(f"sample_weight has {arr.shape[0]} entries but X has {n_rows} rows")
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr >= 0)))
    if bad.size:
        raise ValueError(f"sample_weight[{bad[0]}] is {arr[bad[0]]}: weights must be finite numbers >= 0")
    per_query = np.zeros(uniques.shape[0], dtype=np.float64)
    per_query[codes] = arr
    differs = np.flatnonzero(arr != per_query[codes])
    if differs.size:
        r = int(differs[0])
        q = int(codes[r])
        ident = uniques[q].item() if isinstance(uniques[q], np.generic) else uniques[q]
        raise ValueError(
            f"sample_weight must be the same on every document of a query (one weight per query), "
            f"but query {ident!r} has weights {arr[r]:g} and {per_query[q]:g}"
        )
    if not np.any(per_query > 0):
        # One wording for fit and score (score's sample_weight weighs the mean over queries,
        # which trains nothing: "nothing to train on" was the fit's word in both).
        raise ValueError("sample_weight is 0 for every query: no query has any weight")
    return contiguous(per_query)


def invalid_parameter(name: str, expected: str, value: Any) -> ValueError:
    """The error of a parameter refused in Python, in the core's one wording of every refused
    parameter ("{name} must be {expected}, got {value!r}"): raise it."""
    from . import _core

    return _core.parameter_error(name, expected, value)


def finite_number(value: Any, name: str) -> float:
    """A real parameter such as ``relevance_threshold``: True is no number (it was read as 1)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)) or not np.isfinite(value):
        raise invalid_parameter(name, "a finite number", value)
    return float(value)


def refuse_str(value: Any, name: str, expected: str) -> None:
    """Refuse a str (or bytes) given where a sequence of items is meant: iterating it would
    take every character for an item ("abc" as the feature names a, b and c)."""
    if isinstance(value, (str, bytes)):
        raise invalid_parameter(name, expected, value)


def check_str(value: Any, name: str) -> str:
    """A text parameter (a name shown in messages and tables): a str, else refused naming
    ``name``; an int or a path kept as given would break every message and table that joins it
    as text later."""
    if not isinstance(value, str):
        raise invalid_parameter(name, "a str", value)
    return value


def refuse_bools(values: Any, name: str, expected: str) -> None:
    """Refuses True and False (Python's and NumPy's) among the 1-D ``values`` (named ``name``),
    where numbers are meant: NumPy takes them as 1 and 0 without a word, and the package's rule
    for numbers refuses them (as every numeric training parameter does), naming the entry."""
    arr = values if isinstance(values, np.ndarray) or not hasattr(values, "dtype") else np.asarray(values)
    if isinstance(arr, np.ndarray) and arr.dtype.kind not in "bO":
        return
    for i, v in enumerate(arr.reshape(-1) if isinstance(arr, np.ndarray) else arr):
        if isinstance(v, (bool, np.bool_)):
            raise invalid_parameter(f"{name}[{i}]", expected, bool(v))


def densified(X: Any, name: str, advice: str) -> np.ndarray:
    """``X.toarray()`` of a sparse matrix, refused with a MemoryError naming ``name``, the shape,
    the size and ``advice`` when the copy would not fit the memory (one feature index near 2**31
    is billions of columns), before NumPy allocates pages it would claim only when written."""
    from . import _core

    n, d = X.shape
    size = int(n) * int(d) * np.dtype(X.dtype).itemsize
    what = f"{name} as a dense array of {n} x {d} {np.dtype(X.dtype).name} values"
    _core.check_memory(size, what, advice)
    try:
        return X.toarray()
    except MemoryError:
        raise MemoryError(f"{what} needs {size / 2**30:.1f} GiB, more memory than is available; {advice}") from None


def check_spelling(names: Any, argument: str) -> None:
    """Refuses a loss or metric name with whitespace at either end, or with whitespace other
    than a plain space inside (a tab, a newline, a no-break space). The core reads " map" as
    "map", but the name given is what keys the results (``evaluate``'s means, ``evals_result_``,
    ``cv_results_``), so " map" would train or score MAP under a key no one looks up; the
    refusal is the one rule for every way a name enters (``SVMMap(loss=)``, ``SVMMapCV(losses=,
    scoring=)``, ``eval_metric``, the metrics). Plain spaces inside stay legal, as in
    "max(map, ndcg@10)" and "0.5 * map". ``names`` is a name, a list of names or a dict whose
    keys are names; other values are left to the argument's own check."""
    if isinstance(names, str):
        items: list = [names]
    elif isinstance(names, dict):
        items = list(names)
    elif isinstance(names, (list, tuple)):
        items = list(names)
    else:
        return
    for item in items:
        if not isinstance(item, str):
            continue
        odd = [c for c in item if c.isspace() and c != " "]
        if item != item.strip() or odd:
            where = "whitespace at its ends" if item != item.strip() else f"the whitespace character {odd[0]!r}"
            raise ValueError(
                f"{argument} names {item!r}, which holds {where}: write the name without it "
                f"({' '.join(item.split())!r}); a name is the key of its results, and whitespace would stay in it"
            )


def check_memory(n_bytes: float, what: str, advice: str) -> None:
    """The core's memory guard (``_core.check_allocation``) for an allocation made in Python from
    a parameter: a MemoryError "{what} needs about N, but only M of memory is available;
    {advice}" when ``n_bytes`` exceed the memory available, before the allocation is tried."""
    from . import _core

    _core.check_allocation(float(n_bytes), what, advice)


def check_bool(value: Any, name: str) -> bool:
    """A yes-or-no parameter: True or False (NumPy's too). Any other value is refused, since
    Python's truth would take "no", "False" or 0.5 for True."""
    if not isinstance(value, (bool, np.bool_)):
        raise invalid_parameter(name, "True or False", value)
    return bool(value)


def n_threads(n_jobs: int | None) -> int:
    """scikit-learn's n_jobs as a thread count for the core, by its rule and words (``_core.n_threads``)."""
    from . import _core

    return _core.n_threads(n_jobs)


def queries_with_relevant(y: Any, qid: Any, relevance_threshold: float) -> list:
    """The query ids (sorted as ``check_qid`` numbers them) with a relevant document (an AP to
    validate on), by the core's rule (``_core.query_kinds``)."""
    from . import _core

    labels = np.ascontiguousarray(y, dtype=np.float64)
    codes, uniques = check_qid(qid, labels.shape[0], required_by="queries_with_relevant")
    kinds = _core.query_kinds(labels, codes, len(uniques), float(relevance_threshold))
    return uniques[kinds != 1].tolist()  # kind 1: no relevant document (no AP)


#: The score functions of scorers that need query ids (``make_ranking_scorer``'s), registered by
#: svmmap.metrics, which imports this module (so that this one need not import it back).
_QUERY_SCORE_FUNCTIONS: list = []


def ranks_by_query(score_function: Any) -> Any:
    """Registers a scorer's score function as one that needs query ids (a decorator)."""
    _QUERY_SCORE_FUNCTIONS.append(score_function)
    return score_function
