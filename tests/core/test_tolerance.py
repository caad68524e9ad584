"""The stopping tolerance has one owner, the core (``Options::tolerance``): eps * C * the number
of slack groups. Every reader (the convergence warning, the fitted ``tolerance_``, the
convergence plot) takes it from the fit summary, so none is wrong for several losses with
separate slacks (L groups) or a shared slack (one group), as two of them were."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from svmmap import SVMMap, _core
from svmmap.datasets import load_mq2008


@pytest.fixture(scope="module")
def vali():
    return load_mq2008(fold=1, split="vali")


@pytest.mark.parametrize(
    "loss, slack, groups",
    [
        ("map", "separate", 1),
        (["map", "ndcg@10"], "separate", 2),
        (["map", "ndcg@10", "roc"], "separate", 3),
        (["map", "ndcg@10"], "shared", 1),
    ],
)
def test_tolerance_is_eps_C_times_slack_groups(vali, loss, slack, groups):
    X, y, qid = vali
    C, eps = 2.0, 1e-3
    # By hand: the tolerance is eps * sum of the groups' C, every group with the same C.
    expected = eps * (C * groups)
    assert _core.TrainConfig(C=C, eps=eps, loss=loss, slack=slack).tolerance == expected
    model = SVMMap(C=C, eps=eps, loss=loss, slack=slack).fit(X, y, qid=qid)
    assert model.tolerance_ == expected
    assert model.converged_ == (model.gap_ <= model.tolerance_)


def test_convergence_warning_states_the_tolerance_of_separate_slacks(vali):
    X, y, qid = vali
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SVMMap(C=10.0, eps=1e-6, loss={"map": 1.0, "ndcg@10": 1.0}, max_iter=2).fit(X, y, qid=qid)
    (warning,) = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    # Two slack groups: 2 * C * eps, not the C * eps the warning used to state.
    assert f"its tolerance {2 * 10.0 * 1e-6:.3g}" in str(warning.message)
    assert model.gap_ > model.tolerance_


def test_convergence_plot_draws_the_fit_tolerance(vali):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from svmmap.ir.plot import plot_convergence

    X, y, qid = vali
    # A shared slack is one group whatever the number of losses (the plot used to count losses).
    model = SVMMap(C=1.0, loss={"map": 1.0, "ndcg@10": 1.0}, slack="shared").fit(X, y, qid=qid)
    ax = plot_convergence(model)
    levels = [line.get_ydata()[0] for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert levels == [model.tolerance_] and np.isclose(model.tolerance_, 1.0 * model.eps)
