"""IR tooling built on the svmmap estimators (the ``svmmap`` command line, ``svmmap.cli``, runs it).

- `svmmap.ir.trec`: TREC run and qrels files, their evaluation.
- `svmmap.ir.fusion`: fusion of several retrieval runs into one learned ranking (Meng et al.).
- `svmmap.ir.protocol`: Yue et al.'s evaluation protocol (random splits, paired tests).
- `svmmap.ir.experiment`: the LETOR fold experiment behind ``svmmap experiment``.
- `svmmap.ir.export`: Solr and Elasticsearch LTR model exports.
- `svmmap.ir.plot`: convergence, weight and piecewise-score plots (needs matplotlib).

The submodules are imported when first used, so that the command line starts without importing
what it does not need.
"""

from __future__ import annotations

import importlib
from typing import Any, List

__all__ = ["trec", "fusion", "protocol", "experiment", "export", "plot"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))
