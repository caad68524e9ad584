"""The usable-query rule has one owner (rust/oracle/usable.rs): the solver, problem_summary,
query_kinds and the error when nothing can train all read it, and the error states the rule of
the losses at hand (it stated only the binary rule, wrong for loss="pairwise")."""

from __future__ import annotations

import numpy as np
import pytest
from svmmap import SVMMap, _core

# Three queries by hand: q0 relevant and non-relevant; q1 only non-relevant, labels 0 and -1
# (two labels: "pairwise" can use it); q2 only relevant, one label (nothing can use it).
Y = np.array([1.0, 0.0, 0.0, -1.0, 2.0, 2.0])
CODES = np.array([0, 0, 1, 1, 2, 2], dtype=np.int64)
X = np.arange(12, dtype=np.float64).reshape(6, 2) % 5


def test_query_kinds_by_hand():
    kinds = _core.query_kinds(Y, CODES, 3, 0.0)
    assert kinds.tolist() == [0, 1, 2]


def test_problem_summary_with_and_without_a_graded_loss():
    binary = _core.problem_summary(Y, CODES, 3, 0.0)
    assert (binary.used, binary.no_relevant, binary.all_relevant) == (1, 1, 1)
    graded = _core.problem_summary(Y, CODES, 3, 0.0, _core.TrainConfig(loss="pairwise"))
    assert (graded.used, graded.no_relevant, graded.all_relevant) == (2, 0, 1)


@pytest.mark.parametrize(
    "loss, words",
    [("map", "both a relevant and a non-relevant document"), ("pairwise", "two different labels")],
)
def test_nothing_to_train_on_states_the_rule_of_the_loss(loss, words):
    # Only single-label queries: neither rule finds a usable one.
    y = np.array([0.0, 0.0, 2.0, 2.0])
    with pytest.raises(ValueError, match=words):
        SVMMap(loss=loss).fit(X[:4], y, qid=[1, 1, 2, 2])
