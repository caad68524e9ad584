"""The fitted preprocessing of a model as plain data, below both the estimators and the exports:
a Binner's thresholds (``BinningSpec``) and its dict as model files hold it (read and checked,
written), with the checks of JSON values that the scaler's dict (`scaler`) shares.
``svmmap.binning``, ``svmmap.ir.export``, model files and the command line all read these, so
that a binner or scaler is checked, applied and folded one way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .. import _core
from .._binned import BinnedMatrix
from .._data import CoreMatrix
from .._validation import check_labels, check_qid
from .defaults import BINNING_DEFAULTS
from .pairs import (
    DEFAULT_PAIR_BINS,
    MAX_PAIR_BINS,
    SELECTION_BINS,
    check_interactions,
    coarse_indices,
    pair_codes,
    select_pairs,
)

__all__ = [
    "BINNER_DICT_TYPE",
    "BINNER_DICT_VERSION",
    "BINNER_PAIRS_VERSION",
    "BinningSpec",
    "binning_from_dict",
    "check_binner_params",
    "check_names",
    "count",
    "fit_pairs",
    "indicator_names",
    "is_number",
    "json_value",
    "kind_of",
    "show",
]

#: The "type" and "version" of a Binner's dict (``Binner.to_dict``, the "binning" of a model file).
#: A binner without pairwise interactions writes version 1, which every svmmap reads; one with
#: pairs writes ``BINNER_PAIRS_VERSION``, which svmmap before pairs refuses ("written by a newer
#: svmmap; upgrade svmmap").
BINNER_DICT_TYPE = "svmmap.Binner"
BINNER_DICT_VERSION = 1
BINNER_PAIRS_VERSION = 2


#: Rows per chunk when `BinningSpec.codes` bins X with pairs or a subset of its rows. A chunk's
#: temporaries (the copy of its rows of X, their base codes, the pair columns and the two
#: joined) live beside the codes being filled: at 65,536 rows of 136 float32 columns they took
#: about 50 MB, the largest transient of SVMMapCV's search at 573k documents
#: (benchmarks/search_memory.py); at 8,192 rows they take about 6 MB, for the same codes.
CODE_CHUNK = 8192


def _in_chunks(n: int, chunk: Callable[[int], Tuple[np.ndarray, ...]]) -> Tuple[np.ndarray, ...]:
    """The arrays of ``chunk(start)`` for start = 0, CODE_CHUNK, ... below ``n``, each stacked
    by rows into an array of n rows made once (an empty chunk's arrays when n is 0). Every
    chunk's arrays have the dtypes of the thresholds' and grids' largest codes, the first's."""
    out: Optional[Tuple[np.ndarray, ...]] = None
    for start in range(0, n, CODE_CHUNK):
        parts = chunk(start)
        if out is None:
            out = tuple(np.empty((n, part.shape[1]), dtype=part.dtype) for part in parts)
        for whole, part in zip(out, parts):
            whole[start : start + CODE_CHUNK] = part
    return chunk(0) if out is None else out


@dataclass
class BinningSpec:
    """Fitted binning thresholds: the Binner's checked configuration, its parameters as given,
    and feature j's sorted thresholds."""

    config: _core.BinnerConfig
    params: Dict[str, Any]
    thresholds: List[np.ndarray]
    n_features_in: int
    feature_names_in: Optional[List[str]] = None
    #: Pairwise interactions (features i, j) and each pair's coarse thresholds of i and of j,
    #: a subset of their thresholds (see ``svmmap._fit.pairs``).
    pairs: Optional[List[Tuple[int, int]]] = None
    pair_thresholds: Optional[List[Tuple[np.ndarray, np.ndarray]]] = None

    @property
    def missing(self) -> str:
        return self.config.missing

    @property
    def n_output(self) -> int:
        """Indicator columns: one per threshold, plus one per feature for missing values, then
        a b cell indicators per pair with a and b coarse thresholds."""
        extra = 1 if self.missing == "indicator" else 0
        base = int(sum(len(k) + extra for k in self.thresholds))
        return base + sum(len(a) * len(b) for a, b in self.pair_thresholds or [])

    def pair_indices(self) -> List[Tuple[np.ndarray, np.ndarray]]:
        """Every pair's coarse thresholds as indices into its features' thresholds."""
        out = []
        for (i, j), (a, b) in zip(self.pairs or [], self.pair_thresholds or []):
            out.append(
                (
                    np.searchsorted(self.thresholds[i], a).astype(np.int64),
                    np.searchsorted(self.thresholds[j], b).astype(np.int64),
                )
            )
        return out

    def with_pair_codes(self, codes: np.ndarray) -> np.ndarray:
        """The base bin codes followed by the pair codes (the codes alone without pairs)."""
        if not self.pairs:
            return codes
        # hstack takes the wider dtype: uint16 for all the codes when a pair's codes need it.
        return np.ascontiguousarray(np.hstack([codes, self.pair_codes_of(codes)]))

    def pair_codes_of(
        self, codes: np.ndarray, coarse: Optional[List[Tuple[np.ndarray, np.ndarray]]] = None
    ) -> np.ndarray:
        """The pair codes (n_rows, n_pairs) of base bin codes, uint8 when every pair's codes fit
        and uint16 otherwise (``coarse``: `pair_indices`, when the caller has them)."""
        counts = [len(k) for k in self.thresholds]
        coarse = self.pair_indices() if coarse is None else coarse
        return pair_codes(codes, self.pairs or [], coarse, counts, self.missing == "indicator")

    def grids(self) -> np.ndarray:
        """The pairs' coarse threshold counts (a_0, b_0, a_1, b_1, ...) as the core reads them."""
        flat = [n for a, b in self.pair_thresholds or [] for n in (len(a), len(b))]
        return np.asarray(flat, dtype=np.int64)

    def flat(self) -> Tuple[np.ndarray, np.ndarray]:
        """All thresholds in one array and the offsets of every feature's block."""
        lengths = [len(k) for k in self.thresholds]
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        values = np.concatenate(self.thresholds) if self.thresholds else np.zeros(0)
        return np.ascontiguousarray(values, dtype=np.float64), offsets

    def codes(self, X: np.ndarray, n_threads: int, rows: Optional[np.ndarray] = None) -> np.ndarray:
        """The bin codes of a dense, C-contiguous ``X`` (uint8 or uint16, see BinnedMatrix),
        followed by the pair codes when there are pairs; with ``rows`` (integer positions),
        those of the rows listed alone, in that order. With pairs, or rows, they are made a
        chunk of `CODE_CHUNK` rows at a time (`_in_chunks`), so that the base codes of all of X
        (a quarter of a float32 X) are never held beside the codes with the pairs' columns, and
        no copy of the rows of X is made beyond one chunk's: the same codes, row by row."""
        n = X.shape[0] if rows is None else rows.shape[0]
        if rows is None and (not self.pairs or n <= CODE_CHUNK):
            values, offsets = self.flat()
            return self.with_pair_codes(_core.bin_codes(X, values, offsets, self.config, n_threads))
        base = self._base_chunk(X, n_threads, rows)
        return _in_chunks(n, lambda start: (self.with_pair_codes(base(start)),))[0]

    def split_codes(
        self, X: np.ndarray, n_threads: int, rows: Optional[np.ndarray] = None
    ) -> Tuple[np.ndarray, np.ndarray]:
        """`codes` with pairs as two arrays: the base features' codes and the pairs' codes,
        each of its own dtype, made a chunk at a time as `codes` makes them. A GA2M's pairs on
        grids of up to 33 x 33 cells need uint16 codes where its base features' fit in uint8:
        in one array all of them took uint16, about twice the bytes (49 MB against 23 MB for
        a window of 150,000 rows of the 136 features and 10 pairs of SVMMapCV's search)."""
        n = X.shape[0] if rows is None else rows.shape[0]
        base, coarse = self._base_chunk(X, n_threads, rows), self.pair_indices()

        def both(start: int) -> Tuple[np.ndarray, np.ndarray]:
            codes = base(start)
            return codes, self.pair_codes_of(codes, coarse)

        first, second = _in_chunks(n, both)
        return first, second

    def _base_chunk(self, X: np.ndarray, n_threads: int, rows: Optional[np.ndarray]) -> Callable[[int], np.ndarray]:
        """The base bin codes of the `CODE_CHUNK` rows of X (of ``rows``) from a start on."""
        values, offsets = self.flat()

        def chunk(start: int) -> np.ndarray:
            part = (
                X[start : start + CODE_CHUNK]
                if rows is None
                else np.ascontiguousarray(X[rows[start : start + CODE_CHUNK]])
            )
            return _core.bin_codes(part, values, offsets, self.config, n_threads)

        return chunk

    def core_codes(self, X: np.ndarray, n_threads: int, rows: Optional[np.ndarray] = None) -> CoreMatrix:
        """The binned matrix of ``X`` (of its rows ``rows``, see `codes`) as ``_core.predict``
        and ``_core.fit_path`` take it: with pairs, the base and pair codes in two arrays of
        their own dtypes (`split_codes`), which the core reads as the one array of `codes`, bit
        for bit."""
        values, offsets = self.flat()
        missing = self.missing == "indicator"
        if not self.pairs:
            return CoreMatrix.binned(self.codes(X, n_threads, rows), values, offsets, self.n_output, missing)
        base, pairs = self.split_codes(X, n_threads, rows)
        return CoreMatrix.binned(base, values, offsets, self.n_output, missing, self.grids(), pairs)

    @classmethod
    def fit(
        cls,
        X: np.ndarray,
        config: _core.BinnerConfig,
        params: Dict[str, Any],
        n_threads: int,
        feature_names_in: Optional[List[str]] = None,
    ) -> "BinningSpec":
        """The thresholds the core fits on every column of a dense, C-contiguous ``X`` (what
        ``Binner.fit`` keeps; ``svmmap learn --missing nan`` fits them here without
        scikit-learn)."""
        values, offsets = _core.bin_fit(X, config, n_threads)
        thresholds = [values[offsets[j] : offsets[j + 1]].copy() for j in range(X.shape[1])]
        return cls(config, params, thresholds, X.shape[1], feature_names_in)

    def binned(self, X: np.ndarray, n_threads: int) -> Any:
        """The BinnedMatrix of a dense, C-contiguous ``X`` (``Binner.transform`` with
        ``output="codes"``)."""

        return BinnedMatrix._trusted(
            self.codes(X, n_threads), list(self.thresholds), self.missing, self.pairs, self.pair_thresholds
        )

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The indicator columns' names (as ``Binner.get_feature_names_out()``), of
        ``input_features`` (a scaler's input names before the binner) if given."""
        if input_features is not None:
            names = [str(n) for n in input_features]
        else:
            names = self.feature_names_in or [f"x{j}" for j in range(self.n_features_in)]
        return indicator_names(names, self.thresholds, self.missing, self.pairs, self.pair_thresholds)

    def to_dict(self) -> Dict[str, Any]:
        """The Binner dict of these thresholds (``Binner.to_dict``; read by ``binning_from_dict``)."""
        out: Dict[str, Any] = {
            "type": BINNER_DICT_TYPE,
            "version": BINNER_DICT_VERSION,
            "params": {
                "n_thresholds": int(self.config.n_thresholds),
                "strategy": str(self.config.strategy),
                "missing": str(self.config.missing),
            },
            "n_features_in": int(self.n_features_in),
            "feature_names_in": None if self.feature_names_in is None else [str(n) for n in self.feature_names_in],
            "thresholds": [[float(t) for t in k] for k in self.thresholds],
            "n_output_features": int(self.n_output),
        }
        if self.pairs:
            out["version"] = BINNER_PAIRS_VERSION
            given = self.params.get("interactions")
            if given is not None and not isinstance(given, (int, np.integer)):
                given = [[int(v) for v in p] for p in given]
            out["params"]["interactions"] = None if given is None else json_value("interactions", given)

            out["params"]["interaction_bins"] = int(self.params.get("interaction_bins", DEFAULT_PAIR_BINS))
            out["interactions"] = [
                {"features": [int(i), int(j)], "thresholds": [[float(t) for t in a], [float(t) for t in b]]}
                for (i, j), (a, b) in zip(self.pairs, self.pair_thresholds or [])
            ]
            # Before n_output_features, so that a reader sees the pairs that make its count.
            out["n_output_features"] = out.pop("n_output_features")
        return out

    def indicators(self, X: np.ndarray, n_threads: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
        """The indicator features of a dense, C-contiguous ``X`` as the CSR parts (data,
        indices, indptr, n_rows, n_cols) that scipy.sparse takes."""
        values, offsets = self.flat()
        indptr, indices, n_cols = _core.bin_transform(X, values, offsets, self.config, n_threads)
        data = np.ones(indices.shape[0], dtype=np.float64)
        return data, indices, indptr, X.shape[0], n_cols


def indicator_names(
    names: List[str],
    thresholds: List[np.ndarray],
    missing: str,
    pairs: Optional[List[Tuple[int, int]]] = None,
    pair_thresholds: Optional[List[Tuple[np.ndarray, np.ndarray]]] = None,
) -> np.ndarray:
    """The names of a binner's indicator columns: ``"name>threshold"``, and ``"name=missing"``
    after each feature's thresholds with ``missing="indicator"``, then every pair's cells
    ``"a>s&b>t"`` (both coarse thresholds exceeded), row by row. Thresholds are written with
    Python's shortest round-trip representation, so the names are unique and give the exact
    thresholds back."""
    out: List[str] = []
    for name, k in zip(names, thresholds):
        out.extend(f"{name}>{float(t)!r}" for t in k)
        if missing == "indicator":
            out.append(f"{name}=missing")
    for (i, j), (a, b) in zip(pairs or [], pair_thresholds or []):
        out.extend(f"{names[i]}>{float(s)!r}&{names[j]}>{float(t)!r}" for s in a for t in b)
    return np.asarray(out, dtype=object)


def binning_from_dict(d: Any) -> BinningSpec:
    """The thresholds of a Binner dict (``Binner.to_dict``), checked.

    Raises
    ------
    ValueError
        When the dict is not a Binner's, is of a newer version, or is inconsistent.
    """
    if not isinstance(d, dict) or d.get("type") != BINNER_DICT_TYPE:
        got = d.get("type") if isinstance(d, dict) else type(d).__name__
        raise ValueError(f'not a Binner dict (expected "type": "{BINNER_DICT_TYPE}", got {got!r})')
    version = d.get("version")
    if version not in (BINNER_DICT_VERSION, BINNER_PAIRS_VERSION) or isinstance(version, bool):
        newer = isinstance(version, int) and not isinstance(version, bool) and version > BINNER_PAIRS_VERSION
        raise ValueError(
            f"Binner dict version {version!r} "
            + ("was written by a newer svmmap; upgrade svmmap" if newer else "is not supported")
            + f" (this svmmap reads versions {BINNER_DICT_VERSION} and {BINNER_PAIRS_VERSION})"
        )
    for key in ("params", "thresholds", "n_features_in"):
        if key not in d:
            raise ValueError(f'malformed Binner dict: "{key}" is missing')
    if not isinstance(d["params"], dict):
        raise ValueError(f'"params" must be an object, got {kind_of(d["params"])}')
    params = dict(d["params"])
    n_features = count(d["n_features_in"], "n_features_in")
    raw = d["thresholds"]
    if not isinstance(raw, list):
        raise ValueError(f'"thresholds" must be a list of lists of numbers, got {kind_of(raw)}')
    thresholds = []
    for j, k in enumerate(raw):
        # Exactly numbers: numpy would also turn "0.5", true or [[0.5]] into thresholds.
        if not isinstance(k, list) or not all(is_number(t) for t in k):
            raise ValueError(f'"thresholds"[{j}] must be a list of numbers, got {show(k)}')
        thresholds.append(np.asarray(k, dtype=np.float64).reshape(-1))
    config = check_binner_params(params)
    _check_pair_params(params)
    if len(thresholds) != n_features:
        raise ValueError(f"Binner dict has {len(thresholds)} threshold lists for {n_features} features")
    for j, k in enumerate(thresholds):
        if not np.all(np.isfinite(k)) or np.any(np.diff(k) <= 0):
            raise ValueError(f"thresholds of feature {j} must be finite and strictly increasing")
    names = d.get("feature_names_in")
    if names is not None:
        check_names(names, "feature_names_in")
        if len(names) != n_features:
            raise ValueError(f"Binner dict has {len(names)} feature names for {n_features} features")
    spec = BinningSpec(config, params, thresholds, n_features, None if names is None else list(names))
    if version == BINNER_PAIRS_VERSION:
        spec.pairs, spec.pair_thresholds = _pairs_from_dict(d.get("interactions"), thresholds)
    elif "interactions" in d:
        raise ValueError(f'a Binner dict of version {BINNER_DICT_VERSION} has no "interactions"')
    stored = d.get("n_output_features")
    if stored is not None and count(stored, "n_output_features") != spec.n_output:
        raise ValueError(f"Binner dict says {stored} output features but its thresholds give {spec.n_output}")
    return spec


def _check_pair_params(params: Dict[str, Any]) -> None:
    """The pair parameters of a Binner dict ("interactions", "interaction_bins"), checked as
    ``Binner.fit`` checks them: a binner loaded with ``"interactions": "all"`` or
    ``"interaction_bins": null`` would predict, and then fail to be saved or refitted."""

    if "interactions" not in params and "interaction_bins" not in params:
        return
    bins = params.get("interaction_bins", DEFAULT_PAIR_BINS)
    try:
        check_interactions(params.get("interactions"), bins)
    except ValueError as exc:
        key = "interaction_bins" if str(exc).startswith("interaction_bins") else "interactions"
        raise ValueError(f'"params"."{key}": {exc}') from None


def _pairs_from_dict(raw: Any, thresholds: List[np.ndarray]) -> Tuple[List[Tuple[int, int]], List[Any]]:
    """The "interactions" of a version-2 Binner dict, checked: two different features each, and
    coarse thresholds that are some of their features' thresholds (which the codes rely on)."""

    if not isinstance(raw, list) or not raw:
        raise ValueError(f'"interactions" must be a non-empty list of pairs, got {show(raw)}')
    pairs: List[Tuple[int, int]] = []
    coarse: List[Any] = []
    for p, item in enumerate(raw):
        where = f'"interactions"[{p}]'
        if not isinstance(item, dict) or not isinstance(item.get("features"), list) or len(item["features"]) != 2:
            raise ValueError(f'{where} must be an object with "features": [i, j], got {show(item)}')
        # `count` quotes a field's name; this one is a path, quoted in its parts already.
        i, j = (count(f, f'interactions"[{p}]."features') for f in item["features"])
        if i == j or max(i, j) >= len(thresholds):
            raise ValueError(f"{where} must name two different features below {len(thresholds)}, got [{i}, {j}]")
        ks = item.get("thresholds")
        if not (isinstance(ks, list) and len(ks) == 2 and all(isinstance(k, list) for k in ks)):
            raise ValueError(f"{where}.thresholds must be two lists of numbers, got {show(ks)}")
        grid = []
        for f, k in zip((i, j), ks):
            if not all(is_number(t) for t in k):
                raise ValueError(f"{where}.thresholds must be two lists of numbers, got {show(ks)}")
            values = np.asarray(k, dtype=np.float64).reshape(-1)
            if (
                len(values) > MAX_PAIR_BINS
                or not np.all(np.isin(values, thresholds[f]))
                or np.any(np.diff(values) <= 0)
            ):
                raise ValueError(
                    f"{where}: the coarse thresholds of feature {f} must be at most {MAX_PAIR_BINS} of its thresholds, increasing"
                )
            grid.append(values)
        pairs.append((i, j))
        coarse.append((grid[0], grid[1]))
    return pairs, coarse


def kind_of(v: Any) -> str:
    """A JSON value's type, as the Rust side names it in its messages."""
    if v is None:
        return "null"
    for t, name in ((bool, "a boolean"), (str, "a string"), (list, "an array"), (dict, "an object")):
        if isinstance(v, t):
            return name
    return "a number" if isinstance(v, (int, float)) else type(v).__name__


def show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def is_number(v: Any) -> bool:
    """A finite JSON number (bool is an int in Python, but not a number in a model file)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and bool(np.isfinite(float(v)))


def count(v: Any, field: str) -> int:
    """A non-negative JSON integer (3.0, "3" and true are refused, not truncated or coerced)."""
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f'"{field}" must be a non-negative integer, got {show(v)}')
    return v


def check_names(names: Any, field: str) -> None:
    """Feature names: strings, unique (the search engines identify features by name)."""
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f'"{field}" must be a list of strings, got {show(names)}')
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f'"{field}" must be unique; repeated: {dup[:5]}')


def check_binner_params(params: Dict[str, Any]) -> _core.BinnerConfig:
    """The Binner parameters of a model file as the core's BinnerConfig, which checks them as
    ``Binner.fit`` does; a parameter left out takes its default."""
    given = {k: params[k] for k in BINNING_DEFAULTS if k in params}
    # One key at a time, so that the error names the field as the file does: the core's
    # `strategy must be one of (...), got 'x'` becomes `"params"."strategy" must be one of
    # (...), got 'x'`, with long values shortened as in the file's other messages.
    for key, value in given.items():
        try:
            _core.BinnerConfig(**{key: value})
        except (TypeError, ValueError, OverflowError) as exc:
            rule = str(exc).split(", got ", 1)[0]
            if rule.startswith(f"{key} "):
                raise ValueError(f'"params"."{key}"{rule[len(key) :]}, got {show(value)}') from None
            raise ValueError(f'"params"."{key}": {exc}') from None
    return _core.BinnerConfig(**given)


def json_value(name: str, value: Any) -> Any:
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


def validation_codes(spec: BinningSpec, X_val: np.ndarray, threads: int) -> np.ndarray:
    """The bin codes of a validation set under ``spec``, by the core's check of its values
    (a NaN without missing="indicator", an inf), whose "X" is told as "eval_set[0] X"."""
    values, offsets = spec.flat()
    try:
        return _core.bin_codes(X_val, values, offsets, spec.config, threads)
    except ValueError as error:
        raise ValueError(f"eval_set[0] {error}") from None


def fit_pairs(
    spec: BinningSpec,
    X: Optional[np.ndarray],
    y: Any,
    qid: Any,
    interactions: Any,
    given: Any,
    bins: int,
    threads: int,
    validation: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]] = None,
    codes_at: Optional[Callable[[np.ndarray], np.ndarray]] = None,
    deadline: Optional[float] = None,
) -> np.ndarray:
    """Sets the pairs of ``spec`` (given, or chosen by FAST and judged out of sample: on the
    validation set's queries when ``validation``, a checked (X, labels, query codes), is
    given) and their coarse thresholds; returns the held-out reductions of the chosen pairs
    (NaN for given ones). ``codes_at`` (with X None): the base codes under ``spec`` of the
    data's rows it is asked for (`select_pairs` reads a sample of them), for data that are rows
    of a larger matrix that is not copied (SVMMapCV's splits). ``deadline``: see
    `select_pairs`; when it passes, `SelectionCut` is raised and ``spec`` keeps no pairs."""

    coarse = [coarse_indices(len(k), bins) for k in spec.thresholds]
    # FAST scores pairs on a grid of its own, so that its histograms stay small for all pairs.
    scan = [coarse_indices(len(k), min(bins, SELECTION_BINS)) for k in spec.thresholds]
    if given is not None:
        d = spec.n_features_in
        for i, j in given:
            if max(i, j) >= d:
                raise ValueError(f"interactions: pair ({i}, {j}) names a feature beyond the {d} of X")
        pairs, scores = given, np.full(len(given), np.nan)
    else:
        if y is None:
            raise ValueError("interactions=k chooses pairs from the labels: fit(X, y, qid=qid) needs y")
        # The estimators' checks of labels and query ids: a NaN or infinite label used to make
        # every pair's score NaN, so that no pair was chosen without a word. The query codes
        # group the rows as the ids do (numbered in the ids' sorted order).
        n = len(y) if X is None else X.shape[0]
        y = check_labels(y, n)
        if qid is not None:
            qid, _ = check_qid(qid, n, required_by="Binner.fit")
        codes = None
        values, offsets = spec.flat()
        if codes_at is None:
            assert X is not None
            codes = _core.bin_codes(X, values, offsets, spec.config, threads)
        counts = [len(k) for k in spec.thresholds]
        judged = None
        if validation is not None:
            judged = (validation_codes(spec, validation[0], threads), validation[1], validation[2])
        pairs, scores = select_pairs(
            codes,
            counts,
            scan,
            spec.missing == "indicator",
            y,
            qid,
            int(interactions),
            threads,
            judged,
            codes_at=codes_at,
            deadline=deadline,
        )
    # A pair of a constant feature has no cell: it is kept (the user named it) with no columns.
    spec.pairs = [(int(i), int(j)) for i, j in pairs]
    spec.pair_thresholds = [
        (spec.thresholds[i][coarse[i]].copy(), spec.thresholds[j][coarse[j]].copy()) for i, j in spec.pairs
    ]
    return scores
