"""Every loss states the cost of one oracle call (the registry's "cost", shown in the docs with
the measured times of benchmarks/oracle_cost.py); the fast ones are run here on a query of a
million documents, and the slow one refuses long queries up front."""

import numpy as np
import pytest
from svmmap import _core

# Algorithm 2 alone is O(P N) and DORM is cubic; every other loss is O(n log n) or better.
SLOW = {"map-greedy", "dorm"}
FAST = [info["examples"][0] for info in _core.LOSSES if info["name"] not in SLOW]


def test_every_loss_states_its_cost():
    for info in _core.LOSSES:
        cost = info["cost"]
        assert cost.startswith("O("), info
        if info["name"] not in SLOW:
            assert cost.startswith("O(n)") or "O(n log n)" in cost, info


@pytest.mark.parametrize("loss", FAST + ["ndcg@10", "mrr@10"])
def test_fast_oracles_take_a_query_of_a_million_documents(loss):
    rng = np.random.default_rng(0)
    n = 1_000_000
    relevant = np.zeros(n, dtype=bool)
    relevant[rng.choice(n, n // 100, replace=False)] = True
    scores = np.round(rng.standard_normal(n) + relevant, 3)
    delta, coef = _core.oracle_argmax(scores, relevant, loss)
    assert np.isfinite(delta) and np.all(np.isfinite(coef))
    # The hinge max_y Delta + w.Psi(y) - w.Psi(y*) is at least its value at y = y* (0).
    assert delta - float(coef @ scores) >= -1e-9 * (1 + abs(delta))
