"""THE defaults of svmmap: every estimator's signature, every command-line option and the search
read them here, and no other module states or renames one.

The training and binning defaults are the Rust core's tables (``rust/solver/options.rs``,
``rust/binning/config.rs``), read through the extension; the search's and ``svmmap learn``'s
are written here. This module imports the extension only, so that the command line reads it
without importing scikit-learn.
"""

from __future__ import annotations

from typing import Any, Dict

from .. import _core

__all__ = ["BINNING_DEFAULTS", "LEARN_DEFAULTS", "SEARCH_DEFAULTS", "TRAINING_DEFAULTS"]

#: Every training parameter's default (SVMMap, SVMMapCV, the baselines, the IR tools, ``svmmap
#: learn``), from the core's table.
TRAINING_DEFAULTS: Dict[str, Any] = _core.TrainConfig.DEFAULTS

#: Every Binner parameter's default, from the core's BinnerConfig.
BINNING_DEFAULTS: Dict[str, Any] = _core.BinnerConfig.DEFAULTS

#: The search's defaults: `svmmap.SVMMapCV`'s and ``svmmap learn --auto``'s.
SEARCH_DEFAULTS: Dict[str, Any] = {
    # Six decades around SVM^map's usual C (C multiplies the mean loss over queries, so values
    # far above 1000 only matter for unscaled features).
    "Cs": (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0),
    "cv": 5,
    # The measure users report for rankers: the search chooses by it unless told otherwise.
    "scoring": "ndcg@10",
    "patience": 1,
    # The race across candidates: a candidate this far below the best over the same splits
    # (from the second split on) stops (benchmarks/auto_search.py).
    "prune_margin": 0.02,
    # The large-data rule: a split of the search trains on at most this many of its training
    # queries (`svmmap._search.size`). MQ2008's folds (about 380 per split of 5) and the
    # generated kinds of benchmarks/auto_search.py (240) are below it, so they are searched as
    # before; the 573k-document shape of benchmarks/search_memory.py (3,840 per split) trains on
    # 500 of them, 7.7 times fewer documents per fit.
    "max_train_queries": 500,
}

#: The defaults of ``svmmap learn``'s options that only some modes read (the parser's are None,
#: so that an option given where it is not read can be told from one left out): the binner's
#: thresholds of ``--missing nan`` and the search's folds, metric, patience, race margin and
#: training queries per split of ``--auto``.
LEARN_DEFAULTS: Dict[str, Any] = {
    "bins": BINNING_DEFAULTS["n_thresholds"],
    **{name: SEARCH_DEFAULTS[name] for name in ("cv", "scoring", "patience", "prune_margin", "max_train_queries")},
}
