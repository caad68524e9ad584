"""The one form in which a feature matrix crosses into the Rust core, and the column names of
DataFrame inputs (`feature_names_of` and its comparisons, at the end).

Every call of ``_core`` that reads features (fit, predict, cut sums, the structured hinge) takes a
`CoreMatrix`, a class of the extension (``rust/python/matrix.rs``), subclassed here. Its
arrays are the ones the core borrows without copying: C-contiguous and aligned, of the dtypes the
core reads, checked once when the matrix is made (``_validation.check_matrix`` makes them from user
input), after which the matrix cannot be changed. Three kinds exist:

- ``"dense"``: ``arrays = (X,)``, a float32 or float64 array of shape (n_rows, n_cols);
- ``"csr"``: ``arrays = (data, indices, indptr)`` of a CSR matrix, data float32 or float64,
  indices and indptr both int32 or both int64;
- ``"binned"``: ``arrays = (codes, values, offsets)``: the uint8 or uint16 bin codes of a
  `BinnedMatrix` (one column per base feature), every base feature's thresholds
  concatenated (float64) and the offsets of each feature's block (int64); ``missing`` is true when
  the codes carry missing-value indicators. ``n_cols`` counts the indicator columns the codes stand
  for, the length of ``coef_``. With pairwise interactions, ``arrays = (codes, values, offsets,
  grids)``: the codes have one more column per pair after the base features', and ``grids``
  (int64) holds every pair's two coarse threshold counts (a_0, b_0, a_1, b_1, ...), see
  ``rust/data/binned.rs``. Or ``arrays = (codes, values, offsets, grids, pair_codes)``: the
  codes of the base features alone and, in an array of their own (uint8 or uint16, one column
  per pair), the pairs' codes, so that uint8 base codes need not widen to the pairs' uint16
  (``rust/data/binned_view.rs``); the core reads both forms alike, bit for bit.

Any kind may carry ``columns = (center, scale)`` (float64, one value per column; the center
empty for none): the core then reads column j as (x_j - center_j) * scale_j without a copy
(``rust/data/scaled.rs``), as SVMMapCV's "standard" preprocessing does with the statistics of
each split's training rows (`with_columns`).
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Tuple

import numpy as np

from . import _core


def issparse(X: Any) -> bool:
    """scipy.sparse.issparse without importing SciPy: an object cannot be a SciPy sparse
    matrix unless SciPy was imported, so the command line stays quick to start."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(X))


def as_array(X: Any, name: str) -> np.ndarray:
    """``np.asarray(X)``, with a ragged list (rows of different lengths) refused naming
    ``name``: NumPy's own message ("setting an array element with a sequence") names no
    argument. THE first step of every dense matrix a user gives (`dense_numbers`, a loaded
    model's ``predict``)."""
    try:
        return np.asarray(X)
    except ValueError as exc:
        raise ValueError(f"{name} must be a 2-D array, got rows of different lengths: {exc}") from None


def require_2d(ndim: int, name: str) -> None:
    """THE refusal of a matrix that is not 2-D (documents x features), for arrays in memory and
    Dask arrays alike, with the reshape that a 1-D one most likely needs."""
    if ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array (documents x features), got {ndim} dimension(s)"
            + (
                ". Reshape your data with X.reshape(-1, 1) if it has a single feature, or "
                "X.reshape(1, -1) if it is a single document"
                if ndim == 1
                else ""
            )
        )


def aligned(a: np.ndarray, dtype: Any = None) -> np.ndarray:
    """``a`` as a C-contiguous and aligned array, copied only when it is neither.

    Aligned matters besides contiguous: arrays rebuilt from network frames or made with
    ``np.frombuffer`` at an odd offset can be unaligned views, which the core cannot borrow.
    """
    return np.require(a, dtype=dtype, requirements=["C", "A"])


class CoreMatrix(_core.CoreMatrix):
    """A feature matrix as the core borrows it (see the module docstring for the kinds).

    The class of the extension (``_core.CoreMatrix``) holds the arrays: it checks the kind, the
    dtypes and the shape once, when the matrix is made, aligns the arrays (a copy only where one
    is not C-contiguous and aligned) and is immutable, so that each core call only borrows them.
    This subclass adds the NumPy helpers of the Python layer. Pickles with its arrays (to Dask
    workers); arrays rebuilt from network frames are aligned again on unpickling.
    """

    __slots__ = ()

    def with_columns(self, center: Optional[np.ndarray], scale: np.ndarray) -> "CoreMatrix":
        """The same arrays (not copied) read with column j as (x_j - center_j) * scale_j
        (``center`` None: scaled only)."""
        empty = np.zeros(0, dtype=np.float64)
        columns = (empty if center is None else center, scale)
        return type(self)(self.kind, self.arrays, self.n_rows, self.n_cols, self.missing, columns)

    @classmethod
    def dense(cls, X: np.ndarray) -> "CoreMatrix":
        return cls("dense", (X,), X.shape[0], X.shape[1])

    @classmethod
    def csr(cls, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: Tuple[int, int]) -> "CoreMatrix":
        return cls("csr", (data, indices, indptr), shape[0], shape[1])

    @classmethod
    def binned(
        cls,
        codes: np.ndarray,
        values: np.ndarray,
        offsets: np.ndarray,
        n_cols: int,
        missing: bool,
        grids: Any = None,
        pair_codes: Optional[np.ndarray] = None,
    ) -> "CoreMatrix":
        """Bin codes with pairs' codes after the base features' (``grids`` given), or beside
        them in ``pair_codes`` (see the module docstring)."""
        arrays: Tuple[Any, ...] = (codes, values, offsets)
        if grids is not None:
            arrays += (grids,) if pair_codes is None else (grids, pair_codes)
        elif pair_codes is not None:
            raise ValueError("pair_codes need the grids of their pairs")
        return cls("binned", arrays, codes.shape[0], n_cols, missing)

    def take_rows(self, rows: np.ndarray) -> "CoreMatrix":
        """The rows ``rows`` (integer positions) in the same form."""
        if self.kind == "dense":
            return CoreMatrix.dense(self.arrays[0][rows])
        if self.kind == "binned":
            # One row of codes per document; the thresholds are shared.
            codes, values, offsets = self.arrays[:3]
            grids = self.arrays[3] if len(self.arrays) >= 4 else None
            pair_codes = self.arrays[4][rows] if len(self.arrays) == 5 else None
            return CoreMatrix.binned(codes[rows], values, offsets, self.n_cols, self.missing, grids, pair_codes)
        data, indices, indptr = self.arrays
        starts, ends = indptr[rows], indptr[rows + 1]
        lengths = ends - starts
        new_indptr = np.zeros(rows.shape[0] + 1, dtype=indptr.dtype)
        np.cumsum(lengths, out=new_indptr[1:])
        # The positions of the kept rows' entries, in row order.
        take = np.repeat(starts - new_indptr[:-1], lengths) + np.arange(int(new_indptr[-1]), dtype=indptr.dtype)
        return CoreMatrix.csr(data[take], indices[take], new_indptr, (int(rows.shape[0]), self.n_cols))

    def column_moments(self, n_threads: int) -> Tuple[np.ndarray, np.ndarray]:
        """The mean and the variance of every column over the rows (float64), without a copy
        of the matrix: one parallel read in the core (dense, on ``n_threads`` threads), the
        stored values (CSR), or the counts of every bin code (binned: an indicator column set
        in a share p of the rows has the mean p and the variance p (1 - p))."""
        n = max(self.n_rows, 1)
        if self.columns is not None:
            # Read through column centers and scales: the moments of the stored columns, moved
            # and scaled as each value is (a mean by the same map, a variance by the scale
            # squared), as SVMMapCV's refit of a "standard" winner reports its importances.
            center, scale = self.columns
            if self.kind == "dense":
                # Two passes over chunks of rows, the deviations taken from the mean in
                # float64: a column whose spread is tiny against its mean (which the scale
                # blows up to 1) keeps its variance, where E[x^2] - E[x]^2 would lose it.
                X, step = self.arrays[0], 8192
                shift = center if center.size else np.zeros(self.n_cols)
                total = np.zeros(self.n_cols)
                for i in range(0, self.n_rows, step):
                    total += (X[i : i + step] - shift).sum(axis=0)
                shifted_mean = total / n
                square = np.zeros(self.n_cols)
                for i in range(0, self.n_rows, step):
                    # In place: one float64 chunk at a time, not two (the same values).
                    deviation = X[i : i + step] - shift
                    deviation -= shifted_mean
                    square += np.einsum("ij,ij->j", deviation, deviation)
                return shifted_mean * scale, square / n * scale * scale
            raw = type(self)(self.kind, self.arrays, self.n_rows, self.n_cols, self.missing)
            mean, variance = raw.column_moments(n_threads)
            return (mean - center if center.size else mean) * scale, variance * scale * scale
        if self.kind == "dense":
            moments = _core.column_moments(self, n_threads)
            assert moments is not None
            return moments
        if self.kind == "csr":
            data, indices, _ = self.arrays
            values = data.astype(np.float64, copy=False)
            mean = np.bincount(indices, weights=values, minlength=self.n_cols) / n
            square = np.bincount(indices, weights=values * values, minlength=self.n_cols) / n
        else:
            codes, _, offsets = self.arrays[:3]
            shares = []
            for f, k in enumerate(np.diff(offsets).tolist()):
                counts = np.bincount(codes[:, f], minlength=k + 2)
                # Indicator j (0-based) is set by codes j + 1 .. k; the missing column by k + 1.
                above = np.cumsum(counts[k:0:-1])[::-1] if k else np.zeros(0)
                shares.append(above / n)
                if self.missing:
                    shares.append(np.array([counts[k + 1] / n]))
            grids = self.arrays[3].reshape(-1, 2) if len(self.arrays) >= 4 else np.zeros((0, 2), np.int64)
            # The pairs' codes follow the base features' or are an array of their own.
            pair_codes = self.arrays[4] if len(self.arrays) == 5 else codes[:, len(offsets) - 1 :]
            for p, (a, b) in enumerate(grids.tolist()):
                # Cell (s, t) is set by the codes ci * (b + 1) + cj with ci >= s, cj >= t: the
                # 2-D suffix sums of the code counts (the missing code sets none).
                cells = np.bincount(pair_codes[:, p], minlength=(a + 1) * (b + 1) + 1)
                grid = cells[: (a + 1) * (b + 1)].reshape(a + 1, b + 1)[::-1, ::-1].cumsum(0).cumsum(1)[::-1, ::-1]
                shares.append(grid[1:, 1:].reshape(-1) / n)
            mean = np.concatenate(shares) if shares else np.zeros(0)
            square = mean
        return mean, np.maximum(square - mean * mean, 0.0)

    def column_std(self, n_threads: int) -> np.ndarray:
        """The standard deviation of every column over the rows (float64); see
        :meth:`column_moments`."""
        return np.sqrt(self.column_moments(n_threads)[1])

    def transpose_dot(self, v: np.ndarray, n_threads: int = 1) -> np.ndarray:
        """X^T v (float64) for a float64 vector ``v`` of one value per row: the feature-space
        sum of the rows weighted by ``v``, by the core (``_core.transpose_dot``) for every form
        of X, in row order, so the sum does not depend on the thread count, and with its output
        allocated fallibly: NumPy's BLAS product ``v @ X`` exits the interpreter when its work
        buffer cannot be allocated (seen in the CCCP rounds of ``"ndcg@k:latent"`` under a
        memory limit), where this raises MemoryError."""
        v = np.require(v, dtype=np.float64, requirements=["C", "A"])
        return _core.transpose_dot(self, v, n_threads)

    def __repr__(self) -> str:
        dtypes = ", ".join(str(a.dtype) for a in self.arrays)
        return f"CoreMatrix({self.kind!r}, shape={self.shape}, dtypes=({dtypes}))"


# The column names of DataFrame inputs: read once at fit (`feature_names_of`, which refuses a
# repeated name or one that no file can hold) and compared at predict and for eval sets, in
# scikit-learn's words. Callers import them through ``_validation``, the one place of the checks.


def feature_names_of(X: Any) -> "np.ndarray | None":
    """The string column names of a DataFrame-like ``X`` (pandas, polars ...), else None.

    Names are kept only when every column name is a string, as scikit-learn does; a mix of
    strings and other names is an error because it cannot be checked reliably later.
    """
    columns = getattr(X, "columns", None)
    if columns is None or issparse(X) or isinstance(X, np.ndarray):
        return None
    names = np.asarray(list(columns), dtype=object)
    is_str = np.array([isinstance(n, str) for n in names], dtype=bool)
    if names.size == 0 or not is_str.any():
        return None
    if not is_str.all():
        kinds = sorted({type(n).__name__ for n in names})
        raise TypeError(
            f"X's column names must be all strings or all non-strings, got a mix of {kinds}; "
            "convert them with X.columns = X.columns.astype(str)"
        )
    for j, name in enumerate(names):
        check_characters(name, f"X's column {j} name", "rename the column")
    return unique_column_names(names)


def unique_column_names(names: np.ndarray, name: str = "X") -> np.ndarray:
    """The column names of ``name`` as given, refused when one is repeated: a name must pick
    one column at predict time and in the exports (which refused them only there, long after
    the fit had kept them in ``feature_names_in_``)."""
    seen: set = set()
    repeated = []
    for n in names:
        if n in seen and n not in repeated:
            repeated.append(n)
        seen.add(n)
    if repeated:
        raise ValueError(
            f"{name}'s column names must be unique, but {repeated[:5]} occur more than once; "
            "rename the columns so that each name picks one column"
        )
    return names


def check_characters(text: str, name: str, advice: str) -> None:
    """Refuses a str holding a lone surrogate ("\\ud800", what Python's surrogateescape makes of
    an undecodable byte): it is half of a UTF-16 pair and no character, so the model file,
    every export and the core, all UTF-8, cannot hold it, and the failure would come from a
    codec without the name of what held it (``name``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{name} {text!r} holds a lone surrogate at character {exc.start} ({text[exc.start]!r}, half of a "
            f"UTF-16 pair), which is no character and cannot be written to a file: {advice}"
        ) from None


def check_feature_names(estimator: Any, X: Any) -> None:
    """Checks X's column names against those seen in ``fit`` (scikit-learn's convention:
    different names are an error; names present on one side only get a warning)."""
    import warnings

    fitted = getattr(estimator, "feature_names_in_", None)
    given = feature_names_of(X)
    name = type(estimator).__name__
    if fitted is None and given is None:
        return
    if fitted is not None and given is None:
        warnings.warn(
            f"X does not have valid feature names, but {name} was fitted with feature names", UserWarning, stacklevel=3
        )
        return
    if fitted is None or given is None:
        warnings.warn(f"X has feature names, but {name} was fitted without feature names", UserWarning, stacklevel=3)
        return
    detail = feature_names_mismatch(fitted, given)
    if detail is not None:
        raise ValueError("The feature names should match those that were passed during fit; " + detail)


def feature_names_mismatch(fitted: np.ndarray, given: np.ndarray) -> Optional[str]:
    """How the column names ``given`` differ from those of the training data (``fitted``),
    or None when they are the same names in the same order."""
    if len(fitted) == len(given) and np.array_equal(fitted, given):
        return None
    unexpected = [n for n in given if n not in set(fitted)]
    missing = [n for n in fitted if n not in set(given)]
    detail = []
    if unexpected:
        detail.append(f"names unseen at fit time: {unexpected[:5]}")
    if missing:
        detail.append(f"names seen at fit time, yet now missing: {missing[:5]}")
    if not detail:
        detail.append("the same names in a different order")
    return "; ".join(detail)
