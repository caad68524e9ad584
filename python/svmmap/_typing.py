"""The option values and record types of the API, for type checkers (and ``_core.pyi``)."""

from __future__ import annotations

# typing's Literal and TypedDict exist since Python 3.8; typing_extensions is not a dependency,
# and importing it here broke the package on Python 3.9 and 3.10.
from typing import Any, Dict, List, Literal, TypedDict

__all__ = [
    "Slack",
    "StopReason",
    "Ties",
    "Gain",
    "BinStrategy",
    "Missing",
    "Dtype",
    "ParameterKind",
    "LossInfo",
    "ParameterInfo",
    "IterationRecord",
]

Slack = Literal["separate", "shared"]
StopReason = Literal["converged", "max_iter", "callback", "stalled", "max_time"]
Ties = Literal["pessimistic", "input"]
Gain = Literal["exp", "linear"]
BinStrategy = Literal["quantile", "uniform"]
Missing = Literal["error", "indicator"]
Dtype = Literal["float32", "float64"]
ParameterKind = Literal["real", "count", "optional_count", "optional_real", "loss", "choice", "threads"]
# Each Literal above copies the spellings of the core, which exports them as _core.SPELLINGS
# (tests/api/test_typing.py checks that they agree, in order).


class ParameterInfo(TypedDict):
    """One training parameter of the core's table (rust/solver/options.rs, ``PARAMETERS``), as
    ``svmmap._core.TRAINING_PARAMETERS`` lists it."""

    name: str
    default: Any
    kind: ParameterKind
    choices: List[str]
    expected: str
    type: str
    flag: str
    doc: str


class LossInfo(TypedDict):
    """One loss of the registry (rust/oracle/registry.rs), as ``svmmap.losses.LOSSES`` lists it."""

    name: str
    syntax: str
    cutoff: bool
    options: List[str]
    cost: str
    feature_map: Literal["psi_po", "phi_mrr", "phi_dorm", "per_document"]
    convex: bool
    reference: str
    doc: str
    examples: List[str]


class _IterationFields(TypedDict):
    """The fields every iteration record has."""

    iteration: int
    primal: float
    dual: float
    gap: float
    #: Mean Delta of the new cut(s), summed over slack groups.
    loss: float
    #: Cuts held by the QP's working set before this iteration's cut is added.
    n_cuts: int
    #: Cuts of the working set with a positive dual variable (the estimators' ``n_cuts_``).
    n_active: int
    seconds: float


class IterationRecord(_IterationFields, total=False):
    """One cutting-plane iteration, as callbacks and ``history_`` see it."""

    #: In the callback's record of a fit with ``eval_set``: the validation metrics at this
    #: iteration's iterate, {set name: {metric: value}} (LightGBM's evaluation results).
    eval: Dict[str, Dict[str, float]]
