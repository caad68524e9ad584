"""Training on a Dask cluster: the oracles and cut sums run on the workers, the QP on the client.

``svmmap.dask.SVMMap`` takes the same parameters as ``svmmap.SVMMap`` and learns the same
model; only the place of the work changes. Every cutting-plane iteration sends the current
``w`` to the workers; each worker scores its partitions, runs the loss-augmented argmax of every
query in them and returns, per partition, the sums sum_q Delta_q and sum_q deltaPsi_q (a
vector of ``n_features`` numbers). The core's cutting-plane loop (``svmmap._core.solve``, the one
single-machine training runs) adds them up in partition order, divides by the number n of usable
training queries and solves the small working-set QP on the client. The data never leaves the
workers; per iteration and partition, ``w`` (``n_features`` numbers) travels to the worker and
``n_features + 1`` numbers per slack group come back. Each partition is prepared once where it
lives (``svmmap._core.Partition``: its values checked, its query groups, oracles and counts).

As with LightGBM's and XGBoost's Dask rankers, every query must lie entirely within one
partition (rows of one query may be in any order inside it). ``fit`` checks this and names the
offending query otherwise.

Validation sets and early stopping take ``svmmap.SVMMap.fit``'s arguments (``eval_set`` or
``eval_X``/``eval_y``, ``eval_qid``, ``callbacks``, ...). A validation set that is a Dask
collection is prepared once on the workers, as the training data is, and scored there every
round: per partition, ``w`` goes out and one number per query and metric comes back; the
client averages them and runs the early stopping. A set in memory is scored on the client.

Binned models train on the cluster too. ``svmmap.dask.Binner`` fits its thresholds on a Dask
collection exactly as ``svmmap.Binner`` does on the same rows in memory (each partition sends, per
feature, its distinct values with their counts; the client merges them and places the thresholds
with the same code), and its ``transform`` of a Dask collection bins every partition on the worker
that holds it, when training or prediction needs it, so the binned data never travels.

Requires the optional dependencies ``pip install "svmmap[dask]"`` (dask[array], dask[dataframe],
distributed).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, List

if TYPE_CHECKING:  # pragma: no cover - for type checkers, IDEs and the API reference
    from ._binning import BinnedPartitions, Binner
    from ._estimator import SVMMap

__all__ = ["Binner", "BinnedPartitions", "SVMMap"]

#: Where each public name is defined, imported on first access: importing a module of this
#: package runs this file first, so an import here would make each module depend on all.
_LAZY = {"SVMMap": "_estimator", "Binner": "_binning", "BinnedPartitions": "_binning"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))
