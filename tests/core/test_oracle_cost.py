"""Every loss states the cost of one oracle call (the registry's "cost", shown in the docs with
the measured times of benchmarks/oracle_cost.py); the fast ones are run here on a query of a
million documents, and the slow one refuses long queries up front."""

import numpy as np
import pytest
import svmmap
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


# The one cost guard (oracle::work::check_query_len): an oracle call may take at most 500^3 steps
# beyond its sort. The extra steps by each loss's stated cost, written here by hand: Algorithm 2
# alone P N <= (n/2)^2, NDCG's clipped program k^2 (k < n), DORM's assignment m^2 n with
# m = max(k, depth) capped at n (n without a cutoff or depth); the graded NDCG's program
# G prod_g (min(n_g, K) + 1) over the query's G grades with n_g documents each (K = min(k, n)),
# plus its bottom tables G^2 (K + 1)^2 log2(n) when K < n; the others none.
BUDGET = 500.0**3


def extra_steps(name, n, grade_counts=None):
    base, _, option = name.partition(":")
    base, _, k = base.partition("@")
    cutoff = int(k) if k else None
    if base == "map-greedy":
        return (n // 2) * ((n + 1) // 2)
    if base == "ndcg" and option == "graded":
        depth = min(cutoff, n) if cutoff is not None else n
        g = len(grade_counts)
        states = float(np.prod([min(c, depth) + 1.0 for c in grade_counts]))
        tables = g * g * (depth + 1.0) ** 2 * np.log2(n) if depth < n else 0.0
        return g * states + tables
    if base == "ndcg":
        return float(cutoff) ** 2 if cutoff is not None and cutoff < n else 0.0
    if base == "dorm":
        depth = int(option.partition("=")[2]) if option else n
        m = max(min(cutoff if cutoff is not None else n, n), min(depth, n))
        return float(m) ** 2 * n
    return 0.0


def test_the_issues_costly_oracles_are_refused_up_front():
    # dorm@10:depth=1000000 is the O(n^3) oracle of "dorm"; map-greedy took 77 s per call on
    # 10^6 documents. Both are refused before any work, naming a loss that takes the query.
    n = 600
    X = np.random.default_rng(0).random((n, 2))
    y = (np.arange(n) % 7 == 0).astype(float)
    with pytest.raises(
        ValueError, match=r'query of 600 documents, on which "dorm@10:depth=1000000".*use "dorm@10:depth=30"'
    ):
        svmmap.structured_hinge(X[:, 0], y, loss="dorm@10:depth=1000000")
    big = 1_000_000
    relevant = np.zeros(big, dtype=bool)
    relevant[::3] = True
    with pytest.raises(ValueError, match=r'"map-greedy" \(cost O\(n log n \+ P N\)\).*use "map"'):
        _core.oracle_argmax(np.zeros(big), relevant, "map-greedy")


@pytest.mark.parametrize("n", [100, 501, 30_000])
def test_every_loss_is_guarded_by_its_stated_cost(n):
    # Every loss of the registry, its examples and hostile cutoffs and depths: refused exactly
    # when its extra steps exceed the budget, and then the loss the message names takes the
    # same query.
    rng = np.random.default_rng(n)
    scores = rng.standard_normal(n)
    y = (rng.random(n) < 0.3).astype(float)
    y[0], y[1] = 1.0, 0.0
    names = []
    for info in _core.LOSSES:
        names += list(info["examples"])
        if info["cutoff"]:
            names += [f"{info['name']}@{k}" for k in (10, 400, 20_000, 1_000_000)]
        if "graded" in info["options"]:
            names += [f"{info['name']}@{k}:graded" for k in (10, 400, 20_000, 1_000_000)]
        if "depth=R" in info["options"]:
            names += [f"{info['name']}@10:depth={d}" for d in (30, 1_000, 1_000_000)]
    grade_counts = np.unique(y, return_counts=True)[1]
    for name in names:
        refused = extra_steps(name, n, grade_counts) > BUDGET
        try:
            value = svmmap.structured_hinge(scores, y, loss=name)[0]
        except ValueError as exc:
            assert refused, (name, n, str(exc))
            fix = str(exc).rsplit('use "', 1)[1].split('"')[0]
            assert np.isfinite(svmmap.structured_hinge(scores, y, loss=fix)[0]), (name, fix)
            continue
        assert not refused, (name, n)
        assert np.isfinite(value)
