"""Private: the splits of a search (the folds, or the one validation set of cv="validation", checked
once) and each split's data as the core takes it."""

from __future__ import annotations

import ctypes
import numbers
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .._fit.evaluation_sets import memory_set, missing_queries_message
from .._fit.fitted import BinningSpec, fit_pairs
from .._fit.pairs import check_interactions
from .._validation import (
    check_labels,
    check_matrix,
    check_qid,
    densified,
    invalid_parameter,
    n_threads,
    qid_of,
    query_weights,
)
from .candidates import fit_preprocessor, make_preprocessor
from .folds import QueryKFold

__all__ = ["Split", "SplitData", "fit_scaler_in_chunks", "make_splits", "validation_split"]

#: (training rows, validation rows); validation rows None: the one validation set given.
Split = Tuple[np.ndarray, Optional[np.ndarray]]


def _return_free_pages() -> None:
    """Gives the pages that glibc's malloc holds free back to the system (``malloc_trim``; a
    no-op where the C library has none). Called when a split's bin codes go, before the next
    are made: glibc keeps what the fits and the codes' chunks freed in the middle of its heaps
    and in each thread's arena, so that a 573k-document search's resident memory grew by about
    120 MB of free pages over its fits, which the next codes did not reuse. A call takes a few
    milliseconds, and the search makes one per split and preprocessing, tens in all."""
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is not None:
        trim(0)


try:
    _LIBC: Any = ctypes.CDLL(None)
except (OSError, TypeError):  # pragma: no cover - no C library to open (Windows: TypeError)
    _LIBC = None


def make_splits(
    cv: Any, n_rows: int, labels: np.ndarray, codes: np.ndarray, uniques: np.ndarray, has_validation: bool
) -> List[Split]:
    """(train rows, validation rows) per split of ``cv`` (see SVMMapCV's ``cv``), checked:
    rows inside X, none empty, and no query cut between training and validation."""
    if isinstance(cv, str):
        if cv != "validation":
            raise ValueError(f'cv must be an integer >= 2, a splitter, a list of splits or "validation", got {cv!r}')
        if not has_validation:
            raise ValueError('cv="validation" scores on the eval_set given to fit, which was not given')
        return [(np.arange(n_rows), None)]
    if has_validation:
        raise ValueError('eval_set is only used with cv="validation"')
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        k = int(cv)
        if k < 2:
            raise ValueError(f"cv must be at least 2 folds, got {k}")
        n_queries = int(codes.max()) + 1
        if k > n_queries:
            raise ValueError(f"cv={k} folds need at least {k} queries, got {n_queries}")
        cv = QueryKFold(n_splits=k)
    if hasattr(cv, "split"):
        pairs = cv.split(np.zeros((n_rows, 1)), labels, groups=codes)
    elif hasattr(cv, "__iter__"):
        pairs = cv
    else:
        raise invalid_parameter("cv", 'an integer >= 2, a splitter, a list of splits or "validation"', cv)
    out: List[Split] = []
    for k, (train, test) in enumerate(pairs):
        train, test = _split_rows(train, k, "training", n_rows), _split_rows(test, k, "validation", n_rows)
        # A query is the unit of ranking: part of it in training and part in validation
        # would score rankings of a query the model has partly seen.
        shared = np.intersect1d(codes[train], codes[test])
        if shared.size:
            raise ValueError(
                f"split {k} of cv puts rows of query {uniques[shared[0]].item()!r} both in training and in "
                f"validation ({shared.size} of its queries are cut so); split by query, e.g. "
                "svmmap.model_selection.QueryKFold with groups=qid"
            )
        out.append((train, test))
    if not out:
        raise ValueError("cv gave no split")
    return out


def _split_rows(rows: Any, k: int, part: str, n_rows: int) -> np.ndarray:
    """The ``part`` rows of split ``k`` of a ``cv`` given as splits, as int64, checked to be
    what scikit-learn's splitters yield: distinct integer positions 0 <= i < n_rows. A boolean
    mask would otherwise be read as the rows 0 and 1, a negative index wrap around to the last
    rows, a float be truncated, and a row given twice be trained on twice."""
    arr = np.asarray(rows)
    if arr.size == 0:
        raise ValueError("every split of cv needs training and validation rows")
    if arr.ndim != 1:
        raise ValueError(f"split {k} of cv: the {part} rows must be a 1-D list of row indices, got shape {arr.shape}")
    if arr.dtype.kind == "b":
        raise ValueError(
            f"split {k} of cv: the {part} rows are a boolean mask; give the row indices (np.flatnonzero(mask))"
        )
    if arr.dtype.kind not in "iu":
        raise ValueError(f"split {k} of cv: the {part} rows must be integer row indices, got dtype {arr.dtype}")
    if np.any((arr < 0) | (arr >= n_rows)):
        raise ValueError(f"split {k} of cv has row indices outside the {n_rows} rows of X (0 to {n_rows - 1})")
    arr = arr.astype(np.int64)
    # Rows in increasing order (those of QueryKFold and of scikit-learn's splitters) are
    # distinct; others are sorted to find a row given twice. np.unique, hashing in NumPy 2,
    # took 0.25 s a call on 140,000 rows, a second of the default call on 174,000 documents
    # (five splits, training and validation rows) before its time budget started.
    if not np.all(arr[1:] > arr[:-1]):
        sorted_rows = np.sort(arr)
        repeated = sorted_rows[1:][sorted_rows[1:] == sorted_rows[:-1]]
        if repeated.size:
            raise ValueError(
                f"split {k} of cv lists row {repeated[0]} twice among its {part} rows; each row is used once"
            )
    return arr


def _rows(X: Any, rows: np.ndarray) -> Any:
    """Rows of X (an array, a sparse matrix or a dataframe) by position."""
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    return X[rows]


#: Rows per chunk when `standard_columns` reads the training rows (a float64 copy of a chunk
#: at a time, a few megabytes, instead of one of the rows).
MOMENT_CHUNK = 8192


def check_standardizable(mean: np.ndarray, std: np.ndarray) -> None:
    """Refuses the "standard" preprocessing of an X whose column mean or standard deviation is
    beyond float64 (values of 1e155 square to inf): the scale 1 / inf = 0 read the column as 0
    in every split's fit, without a word, and the refit stopped on the core's "column scales
    and centers must be finite", which named neither X nor "standard"."""
    bad = np.flatnonzero(~(np.isfinite(mean) & np.isfinite(std)))
    if bad.size:
        j = int(bad[0])
        raise ValueError(
            f'preprocessing "standard" cannot standardize X: the mean or standard deviation of its column {j} '
            "is beyond the float64 range (values beyond about 1e154 square to inf); scale the features of X, "
            'or search without "standard"'
        )


def standard_columns(core_X: Any, rows: np.ndarray, sparse: bool) -> Tuple[Optional[np.ndarray], np.ndarray]:
    """(center, scale) of the columns of ``core_X`` (dense or CSR) over ``rows``, for
    `CoreMatrix.with_columns`: what StandardScaler fitted on those rows subtracts (its mean,
    None for sparse X, which the scaler does not center) and multiplies by (one over its
    standard deviation, 1 for a constant column). The mean and the variance (over the rows,
    as the scaler's) are summed in float64 over chunks of rows, the variance from the
    deviations to the mean (two passes), so no copy of the rows is made."""
    n, d = rows.shape[0], core_X.n_cols
    chunks = [rows[i : i + MOMENT_CHUNK] for i in range(0, n, MOMENT_CHUNK)]
    total, square = np.zeros(d), np.zeros(d)
    # Values beyond about 1e154 overflow the squares: check_standardizable names X then,
    # where NumPy's overflow warning would come first.
    with np.errstate(over="ignore", invalid="ignore"):
        if core_X.kind == "dense":
            X = core_X.arrays[0]
            for chunk in chunks:
                total += X[chunk].sum(axis=0, dtype=np.float64)
            mean = total / n
            for chunk in chunks:
                # In place: one float64 copy of the chunk, not two.
                deviation = X[chunk].astype(np.float64)
                deviation -= mean
                square += np.einsum("ij,ij->j", deviation, deviation)
        else:
            stored = np.zeros(d)
            for chunk in chunks:
                data, indices = core_X.take_rows(chunk).arrays[:2]
                total += np.bincount(indices, weights=data.astype(np.float64), minlength=d)
                stored += np.bincount(indices, minlength=d)
            mean = total / n
            for chunk in chunks:
                data, indices = core_X.take_rows(chunk).arrays[:2]
                square += np.bincount(indices, weights=(data.astype(np.float64) - mean[indices]) ** 2, minlength=d)
            # The zeros of a column deviate from its mean by the mean.
            square += (n - stored) * mean**2
        std = np.sqrt(square / n)
    check_standardizable(mean, std)
    # StandardScaler's rule: a column of (nearly) constant values keeps its scale.
    std[std < 10 * np.finfo(np.float64).eps] = 1.0
    return (None if sparse else mean), 1.0 / std


def fit_scaler_in_chunks(scaler: Any, X: Any, core_X: Any) -> Any:
    """``scaler`` (an unfitted StandardScaler) fitted on every row of X by ``partial_fit`` over
    chunks of `MOMENT_CHUNK` rows: the same attributes as its ``fit`` (mean_, var_, scale_,
    n_samples_seen_, n_features_in_ and a DataFrame's feature_names_in_, by scikit-learn's own
    rules, constant columns included), equal up to rounding (Chan, Golub and LeVeque's
    pairwise update), with a float64 copy of one chunk at a time where ``fit`` makes one of X.
    The chunks are read from the checked matrix ``core_X`` (a view of each dense chunk, a
    copy of each CSR one), or from a DataFrame X itself, whose column names the scaler keeps."""
    n = core_X.n_rows
    if hasattr(X, "iloc"):
        chunks: Any = (X.iloc[i : i + MOMENT_CHUNK] for i in range(0, n, MOMENT_CHUNK))
    elif core_X.kind == "dense":
        dense = core_X.arrays[0]
        chunks = (dense[i : i + MOMENT_CHUNK] for i in range(0, n, MOMENT_CHUNK))
    else:
        from scipy import sparse

        csr = sparse.csr_matrix(tuple(core_X.arrays), shape=core_X.shape, copy=False)
        chunks = (csr[i : i + MOMENT_CHUNK] for i in range(0, n, MOMENT_CHUNK))
    for chunk in chunks:
        scaler.partial_fit(chunk)
    return scaler


@dataclass
class SplitData:
    """The data of a search, checked, and its splits: what every fit of the search trains and
    scores on.

    Without preprocessing, a split keeps no copy of X: it trains on the one checked matrix
    with the query code -1 on every row outside its training rows (the core then trains on
    those rows alone, bit for bit as on a copy of them in row order), and its validation
    scores are the predictions of that matrix at its validation rows. Only its codes (one
    integer a row) are kept. "standard" does the same with the matrix read through the
    split's column centers and scales (`CoreMatrix.with_columns`: the mean and standard
    deviation of its training rows, which StandardScaler would use), which gives the
    scaler's models up to rounding. "binned" and "ga2m" train on the bin codes of the split's
    training and validation rows (`_window`) under the thresholds (and "ga2m"'s pairs) fitted
    on its training rows (`_binned_of`), bit for bit the Binner's models on copies, one code
    matrix at a time.
    Training rows that are not in increasing order (a split given as a list of rows in
    another order) cannot be told apart by codes, and are copied (and transformed) as
    before, as is sparse X for "binned" and "ga2m". Matrices made so are made when first
    asked for and kept, so that a preprocessing no candidate reaches costs nothing.

    ``validation`` is the one validation set of cv="validation" as (X as given, core X,
    labels, query codes), else None."""

    X: Any
    core_X: Any
    labels: np.ndarray
    codes: np.ndarray
    doc_weights: Optional[np.ndarray]
    splits: List[Split]
    validation: Optional[Tuple[Any, Any, np.ndarray, np.ndarray]]
    n_jobs: Optional[int]
    _matrices: Dict[Tuple[str, int], Tuple[Any, Any]] = field(default_factory=dict)
    _training: Dict[Tuple[bool, int], Tuple[np.ndarray, np.ndarray, int, Optional[np.ndarray]]] = field(
        default_factory=dict
    )
    _columns: Dict[int, Tuple[Optional[np.ndarray], np.ndarray]] = field(default_factory=dict)
    _pairs: Dict[int, List[Tuple[int, int]]] = field(default_factory=dict)
    #: The binned matrices of one split and preprocessing at a time (see `_binned_of`):
    #: (split, "binned" or "ga2m", of X, of the validation set or None).
    _binned: Optional[Tuple[int, str, Any, Any]] = None
    _thresholds: Dict[int, Any] = field(default_factory=dict)
    #: Each split's window of rows and its validation rows' positions in it (see `_window`).
    _windows: Dict[int, Tuple[Optional[np.ndarray], Optional[np.ndarray]]] = field(default_factory=dict)
    _ga2m: Dict[int, Any] = field(default_factory=dict)

    @property
    def n_splits(self) -> int:
        return len(self.splits)

    def fit_inputs(self, preprocessing: str, k: int) -> Tuple[Any, np.ndarray, np.ndarray, int, Optional[np.ndarray]]:
        """Split k's training data as the core takes it: (matrix, labels, query codes, number
        of queries, query weights), the transformer of ``preprocessing`` fitted on the split's
        training rows only."""
        preprocessing = self._effective(preprocessing, k)
        in_place = self._in_place(preprocessing, k)
        if not in_place:
            return (self.matrices(preprocessing, k)[0], *self._training_of(k, False))
        training = self._training_of(k, True)
        if preprocessing in ("binned", "ga2m"):
            # The codes are those of the split's window of rows (`_window`): its training rows
            # keep their codes, in the same order, and every other row has the code -1.
            window = self._window(k)
            if window is not None:
                labels, codes, n_queries, weights = training
                training = (labels[window], codes[window], n_queries, weights)
        return (self._viewed(self.core_X, preprocessing, k), *training)

    def score_inputs(
        self, preprocessing: str, k: int
    ) -> Tuple[Any, Optional[np.ndarray], np.ndarray, np.ndarray, Optional[np.ndarray]]:
        """Split k's validation data: (matrix, rows, labels, query codes, document weights);
        the validation predictions are the matrix's at ``rows`` (None: at every row)."""
        preprocessing = self._effective(preprocessing, k)
        test = self.splits[k][1]
        y, codes, weights = self.scoring(k)
        # Validation rows are read where they are, in any order (a prediction is a row's own):
        # only a preprocessing that is not a view of X needs its own matrix.
        if preprocessing != "none" and not self._in_place(preprocessing, k):
            return self.matrices(preprocessing, k)[1], None, y, codes, weights
        if test is None:
            return self._viewed(self.validation[1], preprocessing, k), None, y, codes, weights  # type: ignore[index]
        if preprocessing in ("binned", "ga2m") and self._window(k) is not None:
            # The validation rows' positions among the window's rows, whose codes the matrix holds.
            test = self._windows[k][1]
        return self._viewed(self.core_X, preprocessing, k), test, y, codes, weights

    def matrices(self, preprocessing: str, k: int) -> Tuple[Any, Any]:
        """Split k's (training, validation) matrices as the core takes them, the transformer
        of ``preprocessing`` fitted on the split's training rows only (for "none", the copy
        of training rows that are not in increasing order, and no validation matrix)."""
        key = (preprocessing, k)
        if key not in self._matrices:
            self._matrices[key] = self._make_matrices(preprocessing, k)
        return self._matrices[key]

    def release(self, k: int) -> None:
        """Lets go of what split k's fits read and the search keeps (its matrices, bin codes,
        thresholds, pairs, window, column statistics and training codes), once no later fit
        reads the split; asked for again, they are made again, the same."""
        # Two loops, as the two caches' keys differ in type (a preprocessing's name, a bool).
        for key in [key for key in self._matrices if key[1] == k]:
            del self._matrices[key]
        for flag in [flag for flag in self._training if flag[1] == k]:
            del self._training[flag]
        for by_split in (self._columns, self._pairs, self._thresholds, self._windows, self._ga2m):
            by_split.pop(k, None)
        if self._binned is not None and self._binned[0] == k:
            self._binned = None

    def ga2m_pairs(self, k: int, deadline: Optional[float] = None) -> List[Tuple[int, int]]:
        """The pairs that "ga2m"'s Binner keeps on split k's training rows (chosen on a sample
        of the rows where they are, `_ga2m_spec`, or, for a split whose rows are copied, by
        the Binner fitted on the copy when its matrices are made). ``deadline`` (a
        ``time.perf_counter()`` time, the search's budget): the choice on the rows where they
        are raises `SelectionCut` once it passes, and keeps nothing, so that a later call
        chooses again; the Binner of a copy is not bounded by it."""
        if self._in_place("ga2m", k):
            return list(self._ga2m_spec(k, deadline).pairs or [])
        self.matrices("ga2m", k)
        return self._pairs[k]

    def _effective(self, preprocessing: str, k: int) -> str:
        """The preprocessing split k trains on: "ga2m" whose Binner keeps no pair on the split
        is "binned" there (without pairs the GA2M's Binner is the per-feature one, whose
        thresholds do not depend on the labels), read in place as "binned" is."""
        if preprocessing == "ga2m" and not self.ga2m_pairs(k):
            return "binned"
        return preprocessing

    def _in_place(self, preprocessing: str, k: int) -> bool:
        """Whether split k trains on the search's one matrix (read through its column scales
        for "standard", as the bin codes of all its rows for "binned" and "ga2m"): its
        training rows are in increasing order, so that the matrix with codes -1 elsewhere
        trains on them as a copy of them would."""
        if preprocessing == "standard" and self.core_X.kind == "binned":
            return False
        if preprocessing in ("binned", "ga2m") and not self._binnable():
            return False
        return bool(np.all(np.diff(self._train_rows(k)) > 0))

    def _train_rows(self, k: int) -> np.ndarray:
        """Split k's training rows, positions 0 .. n - 1: every split comes from `make_splits`
        (``np.arange`` or `_split_rows`, which refuses a negative row), through
        `limit_training_queries` (a subset of them), so none is negative."""
        return self.splits[k][0]

    def _window(self, k: int) -> Optional[np.ndarray]:
        """The rows of X whose bin codes split k's "binned" and "ga2m" fits read, in increasing
        order: its training rows and its validation rows (None: every row of X). The search
        trains a split on a few hundred queries at most (``max_train_queries``) and scores it
        on its fold, so on large data the window is a small part of X: its codes are made
        without those of the other rows, and each fit's validation predictions read it alone."""
        if k not in self._windows:
            n = self.codes.shape[0]
            train, test = self._train_rows(k), self.splits[k][1]
            rows = train if test is None else np.union1d(train, test)
            window = None if rows.shape[0] == n else rows
            # The validation rows' positions among the window's rows (None: their own rows).
            at = None if (window is None or test is None) else np.searchsorted(window, test)
            self._windows[k] = (window, at)
        return self._windows[k][0]

    def _binnable(self) -> bool:
        """Whether "binned" can bin the search's one matrix in place: dense X (and a dense
        validation set), which the Binner would bin as it is; sparse X is densified by the
        Binner, which only its per-split copies do."""
        dense = self.core_X.kind == "dense" and not hasattr(self.X, "tocsr")
        return dense and (self.validation is None or self.validation[1].kind == "dense")

    def _viewed(self, core_X: Any, preprocessing: str, k: int) -> Any:
        """``core_X`` as split k's fits read it: as it is, for "standard" through the column
        centers and scales of the split's training rows, for "binned" and "ga2m" as the bin
        codes of all its rows under the thresholds (and pairs) of the split's training rows."""
        if preprocessing == "none":
            return core_X
        if preprocessing in ("binned", "ga2m"):
            binned = self._binned_of(k, preprocessing)
            return binned[2] if core_X is self.core_X else binned[3]
        if k not in self._columns:
            self._columns[k] = standard_columns(self.core_X, self.splits[k][0], sparse=hasattr(self.X, "tocsr"))
        return core_X.with_columns(*self._columns[k])

    def _binned_of(self, k: int, preprocessing: str = "binned") -> Tuple[int, str, Any, Any]:
        """Split k's matrices of ``preprocessing`` ("binned" or "ga2m"): the codes of the rows
        of its window of X (`_window`; and of the validation set with cv="validation") under the thresholds the
        Binner fits on the split's training rows (`_thresholds_of`), with "ga2m"'s pair codes
        after them (`_ga2m_spec`). A split trains on the codes with the query code -1 outside
        its rows and scores at its validation rows, as on the codes of copies of its rows,
        which the Binner would give row by row. Only one such matrix is kept (at most a quarter
        of a float32 X, an eighth of a float64 one): the search fits all candidates of a split
        before the next, those of one preprocessing after another, so they are made again when
        the split or the preprocessing changes (one pass over the window's rows; the
        thresholds and pairs are kept), where keeping every split's would take more memory."""
        if self._binned is None or self._binned[:2] != (k, preprocessing):
            # The previous codes go before the next ones are made, so that they never take
            # memory together, and with them the free pages they leave.
            self._binned = None
            _return_free_pages()
            threads = n_threads(self.n_jobs)
            spec = self._thresholds_of(k) if preprocessing == "binned" else self._ga2m_spec(k)
            validation = None if self.validation is None else spec.core_codes(self.validation[1].arrays[0], threads)
            codes = spec.core_codes(self.core_X.arrays[0], threads, self._window(k))
            self._binned = (k, preprocessing, codes, validation)
        return self._binned

    def _thresholds_of(self, k: int) -> BinningSpec:
        """The thresholds the Binner fits on split k's training rows, fitted on those rows of X
        where they are (`_core.bin_fit` with ``rows``, bit for bit as on their copy) and kept
        (a few kilobytes; fitting them sorts every column)."""
        if k not in self._thresholds:
            X = self.core_X.arrays[0]
            binner = make_preprocessor("binned", False, self.n_jobs)
            config = binner._check_params()
            rows = self._train_rows(k).astype(np.int64)
            values, offsets = _core.bin_fit(X, config, n_threads(self.n_jobs), rows=rows)
            thresholds = [values[offsets[j] : offsets[j + 1]].copy() for j in range(X.shape[1])]
            self._thresholds[k] = BinningSpec(config, binner.get_params(), thresholds, X.shape[1])
        return self._thresholds[k]

    def _ga2m_spec(self, k: int, deadline: Optional[float] = None) -> BinningSpec:
        """The Binner of "ga2m" fitted on split k's training rows, without a copy of them: the
        thresholds are "binned"'s (the same Binner parameters), and the pairs are chosen as
        `Binner.fit` chooses them (`fit_pairs`) from the base codes of the sample of training
        rows it reads, binned where they are. Kept (thresholds and pairs), unless ``deadline``
        passed during the choice (`SelectionCut`, see `ga2m_pairs`)."""
        if k not in self._ga2m:
            # The codes held now (the split's "binned" ones, which its GA2M fits replace) go
            # before the pairs' choice, so that the two never take memory together.
            self._binned = None
            _return_free_pages()
            base = self._thresholds_of(k)
            binner = make_preprocessor("ga2m", False, self.n_jobs)
            spec = BinningSpec(base.config, binner.get_params(), base.thresholds, base.n_features_in)
            train = self._train_rows(k)
            X, threads = self.core_X.arrays[0], n_threads(self.n_jobs)

            def codes_at(rows: np.ndarray) -> np.ndarray:
                # A chunk of rows at a time (`BinningSpec.codes` with rows): a copy of the
                # sample's rows of X at once took 27 MB at 50,000 rows of 136 float32 columns.
                return base.codes(X, threads, train[rows])

            pairs_given = check_interactions(binner.interactions, binner.interaction_bins)
            # With cv="validation" (the one split, with no validation rows of X), the pairs are
            # judged on the validation set's queries, as `_make_matrices`'s Binner judges them.
            judged = None
            if self.splits[k][1] is None and self.validation is not None:
                judged = (self.validation[1].arrays[0], self.validation[2], self.validation[3])
            fit_pairs(
                spec,
                None,
                self.labels[train],
                self.codes[train],
                binner.interactions,
                pairs_given,
                binner.interaction_bins,
                threads,
                judged,
                codes_at=codes_at,
                deadline=deadline,
            )
            self._ga2m[k] = spec
            self._pairs[k] = list(spec.pairs or [])
        return self._ga2m[k]

    def _make_matrices(self, preprocessing: str, k: int) -> Tuple[Any, Any]:
        train, test = self.splits[k]
        if preprocessing == "none":
            # The checked matrix's rows: no second check of data that passed the first.
            return self.core_X.take_rows(train), None
        sparse = hasattr(self.X, "tocsr")
        x_train = _rows(self.X, train)
        x_test = self.validation[0] if test is None else _rows(self.X, test)  # type: ignore[index]
        transformer = make_preprocessor(preprocessing, sparse, self.n_jobs)
        # With cv="validation", "ga2m"'s pairs are judged on the validation set's queries.
        judged = None if (test is not None or self.validation is None) else (x_test, *self.validation[2:])
        fit_preprocessor(preprocessing, transformer, x_train, self.labels[train], self.codes[train], judged)
        if preprocessing == "ga2m":
            self._pairs[k] = list(transformer.interactions_)
            if not self._pairs[k]:
                # Without pairs the split trains on "binned"'s matrices (`_effective`): none
                # of its own are kept.
                return None, None
        x_train = transformer.transform(x_train)
        if not sparse and hasattr(x_test, "tocsr"):
            # A sparse validation set beside dense X (a LETOR file that leaves out its zeros
            # reads as CSR): the scaler fitted on dense X centers, which scikit-learn refuses
            # on a sparse matrix.
            x_test = densified(x_test, "eval_set[0] X", "pass the validation set dense or sparse as X is")
        x_test = transformer.transform(x_test)
        return check_matrix(x_train)[0], check_matrix(x_test, name="validation X")[0]

    def _training_of(self, k: int, in_place: bool) -> Tuple[np.ndarray, np.ndarray, int, Optional[np.ndarray]]:
        """Split k's training labels, query codes, number of queries and query weights: of
        its rows (``in_place`` False), or of every row of X with the code -1 outside them.
        The codes of every row (8 bytes a row) are kept for one split at a time, as the bin
        codes are (`_binned_of`): the search fits a split's candidates before the next."""
        key = (in_place, k)
        if key not in self._training:
            if in_place:
                for other in [key for key in self._training if key[0]]:
                    del self._training[other]
            train = self.splits[k][0]
            train_codes, train_ids = check_qid(self.codes[train], train.size)
            doc_weights = self.doc_weights
            weights = None if doc_weights is None else query_weights(doc_weights[train], train_codes, train_ids)
            if in_place:
                codes = np.full(self.codes.shape[0], -1, dtype=np.int64)
                codes[train] = train_codes
                self._training[key] = (self.labels, codes, len(train_ids), weights)
            else:
                self._training[key] = (self.labels[train], train_codes, len(train_ids), weights)
        return self._training[key]

    def scoring(self, k: int) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        """Split k's validation labels, query codes and document weights."""
        test = self.splits[k][1]
        if test is None:
            assert self.validation is not None
            return self.validation[2], self.validation[3], None
        weights = None if self.doc_weights is None else self.doc_weights[test]
        return self.labels[test], self.codes[test], weights


def validation_split(
    eval_set: Optional[Sequence[tuple]],
    eval_group: Optional[Sequence[Any]],
    eval_qid: Optional[Sequence[Any]],
    n_features: int,
    scoring: str,
    threads: int,
    relevance_threshold: float,
) -> Optional[Tuple[Any, np.ndarray, np.ndarray]]:
    """The one validation set of SVMMapCV(cv="validation") as (core X, labels, query codes),
    checked as SVMMap.fit's eval_set is (with the search's metric ``scoring``)."""
    if eval_set is None:
        if eval_group is not None or eval_qid is not None:
            raise ValueError("eval_group and eval_qid describe eval_set, which was not given")
        return None
    if not isinstance(eval_set, (list, tuple)) or len(eval_set) != 1 or not isinstance(eval_set[0], (tuple, list)):
        raise ValueError("SVMMapCV's eval_set must be a list of one (X, y) tuple, e.g. eval_set=[(X_val, y_val)]")
    if eval_group is None and eval_qid is None:
        raise ValueError(missing_queries_message(1))
    if eval_group is not None and eval_qid is not None:
        raise ValueError("eval_set's queries are given twice: give eval_qid or eval_group, not both")
    grouping = eval_group if eval_group is not None else eval_qid
    if grouping is None or len(grouping) != 1:
        raise ValueError("give the queries of the one eval_set as a list of one array")
    pair = eval_set[0]
    if len(pair) != 2:
        raise ValueError("eval_set[0] must be an (X, y) tuple")
    # The one check of a validation set, SVMMap.fit's eval_set's: it scores the set once
    # at w = 0 with this search's metric, so that NaN or infinite features, and labels the
    # metric cannot grade, are refused here in the validation set's names ("eval_set[0] X
    # [4, 1] is NaN") rather than by the first fit in the training data's ("X[4, 1]").
    memory_set(
        0,
        pair[0],
        pair[1],
        grouping[0],
        "eval_group" if eval_group is not None else "eval_qid",
        [scoring],
        n_features,
        threads,
        relevance_threshold,
        # SVMMapCV's X is the data its own preprocessings read, never a Pipeline step's output.
        pipeline_hint=False,
    )
    v_core, v_rows, _ = check_matrix(pair[0], name="eval_set[0] X")
    v_y = check_labels(pair[1], v_rows, name="eval_set[0] y", rows_name="eval_set[0] X")
    if eval_group is not None:
        v_qid = qid_of(None, eval_group[0], v_rows, "eval_qid[0]", "eval_group[0]", rows_name="eval_set[0] X")
    else:
        v_qid = qid_of(grouping[0], None, v_rows, "eval_qid[0]", "eval_group[0]", rows_name="eval_set[0] X")
    v_codes, _ = check_qid(v_qid, v_rows, required_by="eval_set[0]", qid_name="eval_qid[0]", rows_name="eval_set[0] X")
    return v_core, v_y, v_codes
