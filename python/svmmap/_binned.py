"""A binned feature matrix stored as one bin code per (document, base feature).

`BinnedMatrix` is what ``Binner(output="codes").transform`` returns. It stands for the
indicator matrix of `svmmap.Binner.transform` with ``output="indicators"`` (same shape,
same columns, so a model trained on either has the same weights), at one or two bytes per
(document, base feature) instead of 12 or 16 bytes per set indicator. The Rust core reads the
codes directly (``rust/data/binned.rs``): a score is a sum of per-feature table look-ups and
the cutting plane X^T c a per-feature histogram of c over the codes.

This module depends on numpy only, so that the input checks can recognize a BinnedMatrix
without importing the binning module.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ._data import CoreMatrix

__all__ = ["BinnedMatrix"]


class BinnedMatrix:
    """Bin codes and the thresholds they refer to: the indicator matrix of a Binner, compactly.

    The code of a value ``v`` of base feature ``j`` is the number of thresholds of ``j``
    strictly below ``v`` (``0 .. len(thresholds[j])``): the number of its indicator columns
    ``1[v > k]`` that are set, which are always the first ones. With
    ``missing="indicator"``, NaN has the code ``len(thresholds[j]) + 1`` and sets only the
    feature's missing-value column.

    The matrix behaves as the indicator matrix for everything svmmap does with it:
    `svmmap.SVMMap` ``fit``, ``predict`` and ``score``, ``svmmap.dask.SVMMap``'s
    ``predict`` and ``score``, and `to_csr` gives exactly the CSR matrix that
    ``Binner(output="indicators").transform`` returns. ``shape`` is therefore
    ``(n_documents, n_indicator_columns)``.

    Parameters
    ----------
    codes : ndarray of shape (n_documents, n_base_features), uint8 or uint16
        Row-major bin codes (copied once if not C-contiguous).
    thresholds : sequence of 1-D arrays
        Per base feature, its strictly increasing finite thresholds.
    missing : {"error", "indicator"}, default="error"
        Whether every base feature has a missing-value column (and code).
    pairs : list of (int, int), optional
        Pairwise interactions (``Binner(interactions=...)``): ``codes`` then has one more
        column per pair after the base features', the pair's cell code ``ci * (b + 1) + cj``
        (``(a + 1) * (b + 1)`` when either value is missing, which sets no column).
    pair_thresholds : list of (array, array), optional
        Every pair's coarse thresholds of its two features (a and b of them).

    Attributes
    ----------
    codes : ndarray
    thresholds : list of ndarray
    missing : str
    shape : tuple of int
        (n_documents, number of indicator columns).
    n_features_in : int
        Number of base features.
    dtype : numpy dtype
        The codes' dtype: uint8 when every code fits, uint16 otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap import BinnedMatrix
    >>> # Feature 0 has thresholds 0.5 and 2: a value of 1 exceeds one of them (code 1).
    >>> B = BinnedMatrix(np.array([[1], [2]], dtype=np.uint8), [np.array([0.5, 2.0])])
    >>> B.shape
    (2, 2)
    >>> B.to_csr().toarray()
    array([[1., 0.],
           [1., 1.]])
    """

    def __init__(
        self,
        codes: Any,
        thresholds: Sequence[Any],
        missing: str = "error",
        pairs: Optional[Sequence[Tuple[int, int]]] = None,
        pair_thresholds: Optional[Sequence[Tuple[Any, Any]]] = None,
    ) -> None:
        if missing not in ("error", "indicator"):
            raise ValueError(f'missing must be "error" or "indicator", got {missing!r}')
        codes = np.asarray(codes)
        if codes.ndim != 2:
            raise ValueError(f"codes must be a 2-D array (documents x base features), got {codes.ndim} dimension(s)")
        if codes.dtype not in (np.uint8, np.uint16):
            raise ValueError(f"codes must be uint8 or uint16, got dtype {codes.dtype}")
        th = [np.ascontiguousarray(np.asarray(k, dtype=np.float64).reshape(-1)) for k in thresholds]
        pairs = [(int(i), int(j)) for i, j in pairs or []]
        grid = [tuple(np.asarray(k, dtype=np.float64).reshape(-1) for k in g) for g in pair_thresholds or []]
        if len(grid) != len(pairs):
            raise ValueError(f"{len(pairs)} pairs but {len(grid)} pairs of coarse thresholds were given")
        if not pairs and len(th) != codes.shape[1]:
            raise ValueError(f"codes have {codes.shape[1]} base features but {len(th)} threshold arrays were given")
        if len(th) + len(pairs) != codes.shape[1]:
            raise ValueError(
                f"codes have {codes.shape[1]} columns but {len(th)} threshold arrays and {len(pairs)} pairs were given"
            )
        for j, k in enumerate(th):
            if not np.all(np.isfinite(k)) or np.any(np.diff(k) <= 0):
                raise ValueError(f"thresholds of feature {j} must be finite and strictly increasing")
        self.codes = np.require(codes, requirements=["C", "A"])
        self.thresholds: List[np.ndarray] = th
        self.missing = missing
        self.pairs: List[Tuple[int, int]] = pairs
        self.pair_thresholds: List[Tuple[np.ndarray, ...]] = grid
        self._check_codes()

    @classmethod
    def _trusted(
        cls,
        codes: np.ndarray,
        thresholds: List[np.ndarray],
        missing: str,
        pairs: Optional[List[Tuple[int, int]]] = None,
        pair_thresholds: Optional[List[Any]] = None,
    ) -> "BinnedMatrix":
        """Codes just made by the core from these thresholds: no checks needed."""
        out = cls.__new__(cls)
        out.codes, out.thresholds, out.missing = codes, thresholds, missing
        out.pairs, out.pair_thresholds = list(pairs or []), list(pair_thresholds or [])
        return out

    def _grids(self) -> List[Tuple[int, int]]:
        return [(len(a), len(b)) for a, b in self.pair_thresholds]

    def _counts(self) -> np.ndarray:
        return np.fromiter((len(k) for k in self.thresholds), dtype=np.int64, count=len(self.thresholds))

    def _check_codes(self) -> None:
        if self.codes.shape[0] == 0 or self.codes.shape[1] == 0:
            return
        top = self._counts() + (1 if self.missing == "indicator" else 0)
        top = np.concatenate([top, [(a + 1) * (b + 1) for a, b in self._grids()]]).astype(np.int64)
        over = np.flatnonzero(self.codes.max(axis=0) > top)
        if over.size:
            j = int(over[0])
            i = int(np.flatnonzero(self.codes[:, j] > top[j])[0])
            if j >= len(self.thresholds):
                raise ValueError(
                    f"bin code {int(self.codes[i, j])} at row {i}, pair {j - len(self.thresholds)} is out of range: "
                    f"its codes are 0..{int(top[j])}"
                )
            raise ValueError(
                f"bin code {int(self.codes[i, j])} at row {i}, feature {j} is out of range: feature {j} has "
                f"{len(self.thresholds[j])} thresholds, so its codes are 0..{int(top[j])}"
            )

    @property
    def n_features_in(self) -> int:
        return len(self.thresholds)

    @property
    def n_output_features(self) -> int:
        extra = 1 if self.missing == "indicator" else 0
        return int(sum(len(k) + extra for k in self.thresholds)) + sum(a * b for a, b in self._grids())

    @property
    def shape(self) -> Tuple[int, int]:
        return (int(self.codes.shape[0]), self.n_output_features)

    @property
    def dtype(self) -> np.dtype:
        return self.codes.dtype

    @property
    def nbytes(self) -> int:
        """Bytes of the codes (the thresholds are small)."""
        return int(self.codes.nbytes)

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    def __repr__(self) -> str:
        n, d = self.shape
        pairs = f" and {len(self.pairs)} pairs" if self.pairs else ""
        return (
            f"<BinnedMatrix of {n} documents x {self.n_features_in} base features{pairs} "
            f"({d} indicator columns), {self.dtype} codes, missing={self.missing!r}>"
        )

    def __getitem__(self, rows: Any) -> "BinnedMatrix":
        """The rows selected by a slice, an integer array or a boolean mask (a new
        BinnedMatrix sharing the thresholds). Columns cannot be selected."""
        if isinstance(rows, tuple):
            # X[rows, ...] and X[rows, :] (as scikit-learn's cross-validation indexes) select rows.
            if len(rows) >= 1 and all(r is Ellipsis or r == slice(None) for r in rows[1:]):
                return self[rows[0]]
            raise IndexError("a BinnedMatrix is indexed by rows only (an integer array, a boolean mask or a slice)")
        if isinstance(rows, (int, np.integer)):
            rows = [int(rows)]
        if not isinstance(rows, slice):
            rows = np.asarray(rows)
            if rows.dtype != np.bool_ and not np.issubdtype(rows.dtype, np.integer):
                raise IndexError(
                    f"rows must be selected by integers, a boolean mask or a slice, got dtype {rows.dtype}"
                )
        return BinnedMatrix._trusted(
            np.ascontiguousarray(self.codes[rows]), self.thresholds, self.missing, self.pairs, self.pair_thresholds
        )

    def _core(self) -> CoreMatrix:
        """The matrix as the Rust core takes it: the codes with the thresholds."""
        counts = self._counts()
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        values = np.concatenate(self.thresholds) if self.thresholds else np.zeros(0)
        grids = np.asarray([n for g in self._grids() for n in g], dtype=np.int64) if self.pairs else None
        return CoreMatrix.binned(
            self.codes,
            values.astype(np.float64, copy=False),
            offsets,
            self.shape[1],
            self.missing == "indicator",
            grids,
        )

    def to_csr(self) -> Any:
        """The indicator matrix as a scipy.sparse CSR matrix of float64 ones: exactly what
        ``Binner(output="indicators").transform`` returns for the same values."""
        import scipy.sparse as sp

        if self.pairs:
            return self._to_csr_with_pairs()
        n, d = self.codes.shape
        counts = self._counts()
        extra = 1 if self.missing == "indicator" else 0
        starts = np.concatenate([[0], np.cumsum(counts + extra)[:-1]]).astype(np.int64) if d else np.zeros(0, np.int64)
        codes = self.codes.astype(np.int64).reshape(-1)
        k = np.tile(counts, n)
        first = np.tile(starts, n)
        is_missing = codes > k
        n_set = np.where(is_missing, 1, codes)
        first = np.where(is_missing, first + k, first)
        total = int(n_set.sum())
        index_type = np.int32 if max(total, self.shape[1]) <= np.iinfo(np.int32).max else np.int64
        begin = np.cumsum(n_set) - n_set
        indices = np.repeat(first, n_set) + (np.arange(total, dtype=np.int64) - np.repeat(begin, n_set))
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(n_set.reshape(n, d).sum(axis=1), out=indptr[1:])
        return sp.csr_matrix((np.ones(total), indices.astype(index_type), indptr.astype(index_type)), shape=self.shape)

    def _to_csr_with_pairs(self) -> Any:
        """`to_csr` with pairs: the base features' columns, then every pair's cells (s, t),
        set when the coarse codes are ci >= s and cj >= t (from the definition, cell by cell)."""
        import scipy.sparse as sp

        d = len(self.thresholds)
        base = BinnedMatrix._trusted(np.ascontiguousarray(self.codes[:, :d]), self.thresholds, self.missing).to_csr()
        blocks = [base]
        for p, (a, b) in enumerate(self._grids()):
            code = self.codes[:, d + p].astype(np.int64)
            present = code < (a + 1) * (b + 1)
            ci, cj = code // (b + 1), code % (b + 1)
            s = np.arange(1, a + 1).repeat(b)
            t = np.tile(np.arange(1, b + 1), a)
            cells = present[:, None] & (ci[:, None] >= s[None, :]) & (cj[:, None] >= t[None, :])
            blocks.append(sp.csr_matrix(cells.astype(np.float64)))
        out = sp.hstack(blocks, format="csr")
        out.sort_indices()
        return out

    def toarray(self) -> np.ndarray:
        """The indicator matrix as a dense float64 array (for small matrices)."""
        return np.asarray(self.to_csr().toarray())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.toarray()
        return out if dtype is None else out.astype(dtype)
