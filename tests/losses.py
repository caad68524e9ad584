"""The loss names this build of svmmap accepts, probed from a list so that tests parametrized
over them cover new losses as soon as they land (keep in step with rust/fuzzing.rs)."""

import numpy as np

from svmmap import _core

CANDIDATE_LOSSES = [
    "map", "map-greedy", "map-fast", "roc", "ndcg", "ndcg@1", "ndcg@3", "ndcg@3:paper",
    "mrr", "mrr@1", "mrr@3", "acc", "acc2", "dorm", "dorm@3", "max(map,roc)", "max(ndcg@3,mrr@3)",
]


def available_losses() -> list:
    names = []
    for name in CANDIDATE_LOSSES:
        try:
            _core.oracle_argmax(np.array([1.0, 0.0]), np.array([True, False]), name)
        except ValueError:
            continue
        names.append(name)
    return names


LOSSES = available_losses()
