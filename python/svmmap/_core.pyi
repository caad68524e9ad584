"""Type stubs for the Rust extension (hand-written; keep in step with rust/python/)."""

from typing import Any, Callable, ClassVar, Dict, List, Literal, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt
from typing_extensions import Self, disjoint_base

from svmmap._typing import (
    BinStrategy,
    Dtype,
    Gain,
    IterationRecord,
    LossInfo,
    Missing,
    ParameterInfo,
    Slack,
    StopReason,
    Ties,
)

@disjoint_base
class CoreMatrix:
    """A feature matrix as the core borrows it (dense, CSR or bin codes; the kinds are described
    in svmmap._data, whose CoreMatrix subclasses this one): checked and aligned on construction,
    immutable."""

    def __new__(
        cls,
        kind: Literal["dense", "csr", "binned"],
        arrays: Sequence[npt.NDArray[Any]],
        n_rows: int,
        n_cols: int,
        missing: bool = False,
        columns: Optional[Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]] = None,
    ) -> Self: ...
    @property
    def kind(self) -> Literal["dense", "csr", "binned"]: ...
    @property
    def arrays(self) -> Tuple[npt.NDArray[Any], ...]: ...
    @property
    def n_rows(self) -> int: ...
    @property
    def n_cols(self) -> int: ...
    @property
    def shape(self) -> Tuple[int, int]: ...
    @property
    def missing(self) -> bool: ...
    @property
    def columns(self) -> Optional[Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]: ...
    def __getnewargs__(
        self,
    ) -> Tuple[
        str,
        Tuple[npt.NDArray[Any], ...],
        int,
        int,
        bool,
        Optional[Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
    ]: ...

# Every feature matrix crosses into the core as a CoreMatrix (dense, CSR or bin codes).
_Matrix = CoreMatrix

VERSION: str

class DataFormatError(ValueError): ...
class ModelFormatError(ValueError): ...
class InternalError(RuntimeError): ...

LOSSES: Tuple[LossInfo, ...]
TRAINING_PARAMETERS: Tuple[ParameterInfo, ...]
# The spellings of every option value, by the name of its Literal type in svmmap._typing.
SPELLINGS: Dict[str, Tuple[str, ...]]
# The training parameter that bounds a fit's seconds, and the stop reason of a fit it ended.
TIME_LIMIT: str
LOSS_COMBINATION_EXAMPLES: Tuple[List[str], ...]

@final
class TrainConfig:
    """The one training configuration, validated on construction (keyword arguments only: the
    names of ``TRAINING_PARAMETERS``)."""

    DEFAULTS: ClassVar[Dict[str, Any]]
    def __new__(cls, **kwargs: Any) -> Self: ...
    @property
    def C(self) -> float: ...
    @property
    def relevance_threshold(self) -> float: ...
    # The slack groups: one list of (weight, loss name) per slack, a list's losses with their
    # default weights ((0.1, "ndcg@10")), a dict's with the given ones.
    @property
    def losses(self) -> List[List[Tuple[float, str]]]: ...
    # For a latent-target loss ("ndcg@10:latent"), the paper's loss its CCCP rounds solve
    # ("ndcg@10", the one slack group); None otherwise.
    @property
    def latent(self) -> Optional[str]: ...
    @property
    def slack(self) -> Slack: ...
    @property
    def tolerance(self) -> float: ...
    @property
    def n_threads(self) -> int: ...
    # Raises ValueError when more cut blocks were asked for than the one cut per slack group
    # and iteration that the trainer ``who`` makes.
    def require_one_cut(self, who: str, leave: str) -> None: ...
    def kwargs(self) -> Dict[str, Any]: ...
    def __getnewargs_ex__(self) -> Tuple[Tuple[()], Dict[str, Any]]: ...

@final
class BinnerConfig:
    """A binner's configuration, validated on construction (keyword arguments only)."""

    DEFAULTS: ClassVar[Dict[str, Any]]
    def __new__(
        cls,
        *,
        n_thresholds: int = ...,
        strategy: BinStrategy = ...,
        missing: Missing = ...,
        output: str = ...,
    ) -> Self: ...
    @property
    def n_thresholds(self) -> int: ...
    @property
    def strategy(self) -> BinStrategy: ...
    @property
    def missing(self) -> Missing: ...
    @property
    def output(self) -> str: ...
    def kwargs(self) -> Dict[str, Any]: ...
    def __getnewargs_ex__(self) -> Tuple[Tuple[()], Dict[str, Any]]: ...
    def __eq__(self, other: object, /) -> bool: ...

@final
class ProblemSummary:
    """Query counts: ``used`` can contribute to training (the n of C/n); the others cannot."""

    def __new__(cls, *, used: int = 0, no_relevant: int = 0, all_relevant: int = 0, graded: bool = False) -> Self: ...
    def __getnewargs_ex__(self) -> Tuple[Tuple[()], Dict[str, Any]]: ...
    @property
    def used(self) -> int: ...
    @property
    def no_relevant(self) -> int: ...
    @property
    def all_relevant(self) -> int: ...
    @property
    def skipped(self) -> int: ...
    @property
    def total(self) -> int: ...
    @staticmethod
    def merge(parts: Sequence["ProblemSummary"]) -> "ProblemSummary": ...
    def require_usable(self, relevance_threshold: float) -> None: ...

@final
class FitSummary:
    """The outcome of a cutting-plane run."""

    @property
    def primal(self) -> float: ...
    @property
    def dual(self) -> float: ...
    @property
    def gap(self) -> float: ...
    @property
    def n_iter(self) -> int: ...
    @property
    def working_set(self) -> int: ...
    @property
    def active_cuts(self) -> int: ...
    @property
    def n_evals(self) -> int: ...
    @property
    def tolerance(self) -> float: ...
    @property
    def qp_seconds(self) -> float: ...
    @property
    def qp_fallbacks(self) -> int: ...
    @property
    def stop(self) -> StopReason: ...
    @property
    def problem(self) -> ProblemSummary: ...
    @property
    def history(self) -> List[IterationRecord]: ...

_Callback = Optional[Callable[[IterationRecord], Any]]

# Query codes (qid_codes) number the queries 0..n_queries-1, one code per row of x, rows of a
# query in any order. In every function that takes them, the code -1 puts a row in no query:
# fit_path, fit_path_from and fit_latent then train on the other rows alone, bit for bit as on
# a copy of them taken in row order (n_queries counts their queries only), without the copy;
# problem_summary, query_kinds, the metrics and the hinge leave the row out (its gradient is 0).
def fit_path(
    x: _Matrix,
    y: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    config: TrainConfig,
    cs: Optional[Sequence[float]] = None,
    warm: bool = True,
    callback: _Callback = None,
    with_coef: bool = False,
    method: Literal["ocas", "plain"] = "ocas",
    query_weights: Optional[npt.NDArray[np.float64]] = None,
) -> List[Tuple[npt.NDArray[np.float64], FitSummary]]: ...
def problem_summary(
    y: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    relevance_threshold: float,
    config: Optional[TrainConfig] = None,
) -> ProblemSummary: ...
def query_kinds(
    y: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    relevance_threshold: float,
) -> npt.NDArray[np.uint8]: ...
def n_threads(n_jobs: Optional[int]) -> int: ...

# The ValueError of a refused parameter, in the one wording of every refused parameter.
def parameter_error(name: str, expected: str, value: Any) -> ValueError: ...

# Raises MemoryError ("{what} needs about N, but only M of memory is available; {advice}") when
# n_bytes exceed the memory available: the core's guard, for allocations made in Python.
def check_allocation(n_bytes: float, what: str, advice: str) -> None: ...
def predict(
    x: _Matrix, coef: npt.NDArray[np.float64], n_threads: int, rows: Optional[npt.NDArray[np.int64]] = None
) -> npt.NDArray[np.float64]: ...
def column_moments(x: _Matrix, n_threads: int) -> Optional[Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]: ...
def transpose_dot(x: _Matrix, v: npt.NDArray[np.float64], n_threads: int) -> npt.NDArray[np.float64]: ...
def oracle_argmax(
    scores: npt.NDArray[np.float64], relevant: npt.NDArray[np.bool_], loss: str
) -> Tuple[float, npt.NDArray[np.float64]]: ...
def structured_hinge(
    scores: npt.NDArray[np.float64],
    labels: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    losses: Sequence[Sequence[Tuple[float, str]]],
    relevance_threshold: float,
    n_threads: int,
) -> Tuple[float, npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def evaluate(
    metric: str,
    y_true: npt.NDArray[np.float64],
    y_score: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    ties: Ties,
    gain: Gain,
    relevance_threshold: float,
    n_relevant: Optional[npt.NDArray[np.float64]] = None,
    letor_ndcg: bool = False,
) -> npt.NDArray[np.float64]: ...
def read_letor_file(
    path: str,
    dtype: Dtype = "float64",
    n_features: Optional[int] = None,
    keep_comments: bool = False,
    n_threads: int = 0,
    missing_nan: bool = False,
    without_qid: bool = False,
) -> dict: ...
def read_model_text(path: str) -> str: ...
def read_text_file(path: str) -> bytes: ...
def write_model_text(path: str, text: str) -> None: ...
def write_atomic(path: str, data: bytes) -> None: ...
def check_memory(bytes: int, what: str, advice: str) -> None:
    """MemoryError "{what} needs N, but only M of memory is available; {advice}" when
    ``bytes`` exceed the memory the process can still use (the core's guard)."""

def bin_fit(
    x: Union[npt.NDArray[np.float64], npt.NDArray[np.float32]],
    config: BinnerConfig,
    n_threads: int,
    rows: Optional[npt.NDArray[np.int64]] = None,
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]: ...
def bin_transform(
    x: Union[npt.NDArray[np.float64], npt.NDArray[np.float32]],
    values: npt.NDArray[np.float64],
    offsets: npt.NDArray[np.int64],
    config: BinnerConfig,
    n_threads: int,
) -> Tuple[npt.NDArray[Any], npt.NDArray[Any], int]: ...
def bin_codes(
    x: Union[npt.NDArray[np.float64], npt.NDArray[np.float32]],
    values: npt.NDArray[np.float64],
    offsets: npt.NDArray[np.int64],
    config: BinnerConfig,
    n_threads: int,
) -> npt.NDArray[Any]: ...
def pair_histograms(
    coarse: npt.NDArray[np.uint8],
    sizes: npt.NDArray[np.int64],
    pairs: npt.NDArray[np.int64],
    residual: npt.NDArray[np.float64],
    n_threads: int,
    max_seconds: Optional[float] = None,
) -> Optional[Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]: ...
def _debug_panic(place: str) -> None: ...
def _set_up_numpy() -> None: ...
def _numpy_ready() -> bool: ...
def _debug_global_pool_started() -> bool: ...
def _debug_write_atomic(path: str, data: bytes, before_rename: Callable[[], Any]) -> None: ...

@final
class Partition:
    """One part of a data set, prepared once where it lives (svmmap.dask)."""

    def __new__(
        cls,
        x: _Matrix,
        y: npt.NDArray[np.float64],
        qid_codes: npt.NDArray[np.int64],
        n_queries: int,
        config: TrainConfig,
    ) -> Self: ...
    @property
    def counts(self) -> ProblemSummary: ...
    def cut_sums(self, w: npt.NDArray[np.float64], n_threads: int) -> List[Tuple[float, npt.NDArray[np.float64]]]: ...
    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]: ...

def solve(
    cut_source: Callable[[npt.NDArray[np.float64]], Sequence[Sequence[Tuple[float, npt.NDArray[np.float64]]]]],
    dim: int,
    config: TrainConfig,
    problem: ProblemSummary,
    callback: _Callback = None,
    with_coef: bool = False,
) -> Tuple[npt.NDArray[np.float64], FitSummary]: ...

# A path whose first C starts from warm_state, which must come from a path of the same losses,
# labels, queries, query weights, relevance threshold and number of features (ValueError
# otherwise; the feature values are not compared).
def fit_path_from(
    x: _Matrix,
    y: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    config: TrainConfig,
    cs: Sequence[float],
    warm_state: Optional[WarmState] = None,
    query_weights: Optional[npt.NDArray[np.float64]] = None,
) -> Tuple[List[Tuple[npt.NDArray[np.float64], FitSummary]], WarmState]: ...

# A latent-target loss's fit (its map start and CCCP rounds) in one call: (coef, summary,
# objectives, exhausted, the stop reason of an unkept round ended by a limit, and when the
# rounds stopped before w = 0: (rounds kept, F(0), [(t, F(t w_map))], w_map)).
def fit_latent(
    x: _Matrix,
    y: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    config: TrainConfig,
    *,
    max_rounds: int,
    relative_decrease: float,
    round_eps_factor: float,
    stop_before_zero: bool,
    ray: Sequence[float],
    target_cutoff: Optional[int] = None,
    callback: _Callback = None,
) -> Tuple[
    npt.NDArray[np.float64],
    FitSummary,
    List[float],
    bool,
    Optional[str],
    Optional[Tuple[int, float, List[Tuple[float, float]], npt.NDArray[np.float64]]],
]: ...
def latent_target_coefficients(
    scores: npt.NDArray[np.float64],
    grades: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    cutoff: int,
    graded: bool,
) -> npt.NDArray[np.float64]: ...

# Where solve_warm may start: the final working set and iterate of a solve (opaque).
@final
class WarmState:
    @property
    def nbytes(self) -> int: ...
    def shifted(self, delta: npt.NDArray[np.float64]) -> WarmState: ...

def solve_warm(
    cut_source: Callable[[npt.NDArray[np.float64]], Sequence[Sequence[Tuple[float, npt.NDArray[np.float64]]]]],
    dim: int,
    config: TrainConfig,
    problem: ProblemSummary,
    warm: Optional[WarmState] = None,
    callback: _Callback = None,
) -> Tuple[npt.NDArray[np.float64], FitSummary, WarmState]: ...
