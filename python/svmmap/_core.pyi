"""Type stubs for the Rust extension (hand-written; keep in step with rust/python.rs)."""

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

_Matrix = Union[
    npt.NDArray[np.float64],
    npt.NDArray[np.float32],
    Tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any], int, int],
]

MODEL_FORMAT_VERSION: int

class DataFormatError(ValueError): ...
class ModelFormatError(ValueError): ...
class InternalError(RuntimeError): ...

def fit(
    x: _Matrix,
    y: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    losses: Sequence[str],
    c: float,
    eps: float,
    max_iter: int,
    relevance_threshold: float,
    n_threads: int,
    callback: Optional[Callable[[dict], Any]] = None,
    method: str = "ocas",
) -> Tuple[npt.NDArray[np.float64], dict]: ...
def predict(x: _Matrix, coef: npt.NDArray[np.float64], n_threads: int) -> npt.NDArray[np.float64]: ...
def oracle_argmax(
    scores: npt.NDArray[np.float64], relevant: npt.NDArray[np.bool_], loss: str
) -> Tuple[float, npt.NDArray[np.float64]]: ...
def structured_hinge(
    scores: npt.NDArray[np.float64],
    labels: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    losses: Sequence[str],
    relevance_threshold: float,
    n_threads: int,
) -> Tuple[float, npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def evaluate(
    metric: str,
    y_true: npt.NDArray[np.float64],
    y_score: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    ties: str,
    gain: str,
    relevance_threshold: float,
    n_relevant: Optional[npt.NDArray[np.float64]] = None,
) -> npt.NDArray[np.float64]: ...
def read_letor_file(
    path: str,
    dtype: str = "float64",
    n_features: Optional[int] = None,
    keep_comments: bool = False,
    n_threads: int = 0,
) -> dict: ...
def load_model_json(path: str) -> str: ...
def save_model_json(path: str, text: str) -> None: ...
def write_atomic(path: str, data: bytes) -> None: ...
def bin_fit(
    x: Union[npt.NDArray[np.float64], npt.NDArray[np.float32]],
    n_thresholds: int,
    strategy: str,
    missing: str,
    n_threads: int,
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]: ...
def bin_transform(
    x: Union[npt.NDArray[np.float64], npt.NDArray[np.float32]],
    values: npt.NDArray[np.float64],
    offsets: npt.NDArray[np.int64],
    missing: str,
    n_threads: int,
) -> Tuple[npt.NDArray[Any], npt.NDArray[Any], int]: ...
def _debug_panic(place: str) -> None: ...
def _debug_write_atomic(path: str, data: bytes, before_rename: Callable[[], Any]) -> None: ...
def cut_sums(
    x: _Matrix,
    y: npt.NDArray[np.float64],
    qid_codes: npt.NDArray[np.int64],
    n_queries: int,
    w: npt.NDArray[np.float64],
    losses: Sequence[str],
    relevance_threshold: float,
    n_threads: int,
) -> Tuple[List[Tuple[float, npt.NDArray[np.float64]]], Dict[str, int]]: ...
def solve(
    cut_source: Callable[[npt.NDArray[np.float64]], Sequence[Tuple[float, npt.NDArray[np.float64]]]],
    dim: int,
    n_groups: int,
    c: float,
    eps: float,
    max_iter: int,
    counts: Tuple[int, int, int],
    callback: Optional[Callable[[dict], Any]] = None,
) -> Tuple[npt.NDArray[np.float64], dict]: ...
