"""svmmap: learning to rank with structural SVMs that optimize MAP and other IR metrics directly.

The numeric work (reading LETOR files, oracles, the cutting-plane solver, metrics) is done by the
Rust extension ``svmmap._core``; this package is a thin, typed layer over it, in two parts:

- the estimator core: `SVMMap` (``svmmap.estimator``), `SVMMapCV` (C chosen by
  cross-validation, ``svmmap.model_selection``), the losses (``svmmap.losses``),
  metrics (``svmmap.metrics``), feature binning (``svmmap.binning``), data files
  (``svmmap.io``), model files (``svmmap.persistence``), bundled data (``svmmap.datasets``),
  the papers' baselines (``svmmap.baselines``) and Dask training (``svmmap.dask``);
- the IR tooling built on it, in ``svmmap.ir``: TREC files, run fusion, the evaluation protocol,
  the experiment, exports and plots; and the ``svmmap`` command line (``svmmap.cli``).

Names are imported when first used, so that ``import svmmap`` (and the command line) does not pay
for NumPy, scikit-learn or SciPy until a name that needs them is touched: ``svmmap --version``
and ``--help`` import neither NumPy nor anything of the package beyond the core's tables.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any, List

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from . import baselines, datasets, ir, losses, metrics
    from ._binned import BinnedMatrix
    from ._core import DataFormatError, InternalError, ModelFormatError
    from ._fit.degenerate import DegenerateModelWarning
    from .binning import Binner, StepFunction, piecewise_scores
    from .callback import early_stopping, log_evaluation, record_evaluation
    from .estimator import SkippedQueriesWarning, SVMMap
    from .io import load_letor
    from .losses import structured_hinge
    from .model_selection import SVMMapCV
    from .persistence import load_model, save_model

#: Public names defined in submodules, imported on first access.
_LAZY = {
    "SVMMap": "estimator",
    "SVMMapCV": "model_selection",
    "SkippedQueriesWarning": "_fit.training",
    "DegenerateModelWarning": "_fit.degenerate",
    "BinnedMatrix": "_binned",
    "Binner": "binning",
    "StepFunction": "binning",
    "piecewise_scores": "binning",
    "load_letor": "io",
    "load_model": "persistence",
    "save_model": "persistence",
    "structured_hinge": "losses",
    "early_stopping": "callback",
    "log_evaluation": "callback",
    "record_evaluation": "callback",
}
#: The core's exceptions, also imported on first access.
_CORE_NAMES = ("DataFormatError", "ModelFormatError", "InternalError")
_SUBMODULES = (
    "baselines",
    "binning",
    "datasets",
    "estimator",
    "io",
    "ir",
    "losses",
    "metrics",
    "model_selection",
    "persistence",
    "dask",
)

__all__ = [
    "SVMMap",
    "SVMMapCV",
    "BinnedMatrix",
    "Binner",
    "StepFunction",
    "piecewise_scores",
    "SkippedQueriesWarning",
    "DegenerateModelWarning",
    "DataFormatError",
    "ModelFormatError",
    "InternalError",
    "load_letor",
    "load_model",
    "save_model",
    "structured_hinge",
    "early_stopping",
    "log_evaluation",
    "record_evaluation",
    "metrics",
    "losses",
    "datasets",
    "baselines",
    "ir",
    "__version__",
]


def _core_with_numpy() -> Any:
    """The extension, with NumPy's C API set up for its calls.

    The core sets NumPy up when it is imported after NumPy, as every module here that hands it
    arrays imports it; a name resolved here may be the first to import the core, before NumPy,
    so it is set up now, where an interrupt is a plain KeyboardInterrupt (see
    rust/python/mod.rs, set_up_numpy).
    """
    # import_module, not "from . import _core": that asks this module's __getattr__ first.
    core = importlib.import_module("._core", __name__)
    core._set_up_numpy()
    return core


def __getattr__(name: str) -> Any:
    if name in _LAZY or name in _SUBMODULES:
        module = importlib.import_module(f".{_LAZY.get(name, name)}", __name__)
        value = getattr(module, name) if name in _LAZY else module
        if "numpy" in sys.modules:
            # The core may have been imported before NumPy (by the command line's parser).
            _core_with_numpy()
    elif name in _CORE_NAMES:
        value = getattr(_core_with_numpy(), name)
    elif name == "__version__":
        # Cargo.toml's version, which maturin also writes into the package metadata
        # (tests/api/test_packaging.py checks they agree); read from the extension, since
        # importlib.metadata would cost the command line a quarter of its start-up.
        value = _core_with_numpy().VERSION
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))
