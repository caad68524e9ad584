"""svmmap: learning to rank with structural SVMs that optimize MAP and other IR metrics directly.

The numeric work (reading LETOR files, oracles, the cutting-plane solver, metrics) is done by the
Rust extension ``svmmap._core``; this package is a thin, typed layer over it.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from . import metrics
from ._core import DataFormatError, InternalError, ModelFormatError
from .binning import Binner, StepFunction, piecewise_scores
from .estimator import SkippedQueriesWarning, SVMMap
from .io import load_letor, load_model, save_model
from .losses import structured_hinge

try:
    __version__ = version("svmmap")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "SVMMap",
    "Binner",
    "StepFunction",
    "piecewise_scores",
    "SkippedQueriesWarning",
    "DataFormatError",
    "ModelFormatError",
    "InternalError",
    "load_letor",
    "load_model",
    "save_model",
    "metrics",
    "structured_hinge",
    "__version__",
]
