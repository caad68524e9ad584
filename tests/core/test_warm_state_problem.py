"""A C path's warm state starts only a path of the problem that made it (`fit_path_from`)."""

import numpy as np
import pytest
from svmmap import _core
from svmmap._validation import check_matrix
from svmmap.datasets import make_ranking


@pytest.fixture(scope="module")
def problem():
    X, y, qid = make_ranking(n_queries=30, docs_per_query=20, n_features=10, random_state=0, dtype=np.float64)
    codes = np.unique(qid, return_inverse=True)[1].astype(np.int64)
    return check_matrix(X)[0], y.astype(np.float64), codes, int(codes.max()) + 1


def test_a_state_of_another_loss_or_labels_is_refused(problem):
    # A state holds its problem's cuts and the risk at its iterate. Before the check, a map
    # path's state started a roc path at C = 1 that stopped "converged" after one iteration with
    # the map's primal objective (0.4362), below the roc optimum (0.4509): a false certificate.
    M, y, codes, n = problem
    map_config = _core.TrainConfig(C=1.0, loss="map")
    _, state = _core.fit_path_from(M, y, codes, n, map_config, [1.0])
    with pytest.raises(ValueError, match="warm_state comes from a path of another problem"):
        _core.fit_path_from(M, y, codes, n, _core.TrainConfig(C=1.0, loss="roc"), [1.0], warm_state=state)
    # Other labels (the same labels in reverse order) and other query weights are other
    # problems too.
    with pytest.raises(ValueError, match="another problem"):
        _core.fit_path_from(M, y[::-1].copy(), codes, n, map_config, [1.0], warm_state=state)
    with pytest.raises(ValueError, match="another problem"):
        _core.fit_path_from(M, y, codes, n, map_config, [1.0], warm_state=state, query_weights=np.full(n, 2.0))
    # Another relevance threshold makes other documents relevant.
    high = _core.TrainConfig(C=1.0, loss="map", relevance_threshold=1.0)
    with pytest.raises(ValueError, match="another problem"):
        _core.fit_path_from(M, y, codes, n, high, [1.0], warm_state=state)


def test_the_same_problem_still_continues_its_path_bit_for_bit(problem):
    M, y, codes, n = problem
    config = _core.TrainConfig(C=1.0)
    whole = _core.fit_path(M, y, codes, n, config, cs=[0.1, 1.0, 10.0], with_coef=True)
    first, state = _core.fit_path_from(M, y, codes, n, config, [0.1])
    rest, _ = _core.fit_path_from(M, y, codes, n, config, [1.0, 10.0], warm_state=state)
    for (a, _), (b, _) in zip(whole, list(first) + list(rest)):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("solve", ["solve", "solve_warm"])
def test_a_cut_source_of_no_part_is_refused(solve):
    # A source that returns no part has summed no data; it made w = 0 "converged" with a
    # primal objective of 0, a certificate of nothing.
    config = _core.TrainConfig(C=1.0)
    problem = _core.ProblemSummary(used=3)
    with pytest.raises(ValueError, match="the cut source returned no part"):
        getattr(_core, solve)(lambda w: [], 4, config, problem)


def test_a_path_c_whose_tolerance_underflows_is_named_as_given(problem):
    # 1e-3 * 5e-324 is 0 in float64. The message wrote the C of a path's Cs with its 324
    # decimals ("got 0.000...0005"); TrainConfig(C=5e-324) writes it as given.
    M, y, codes, n = problem
    with pytest.raises(ValueError, match=r"C = 2\.2e-305 or more\), got 5e-324$"):
        _core.fit_path(M, y, codes, n, _core.TrainConfig(C=1.0), cs=[5e-324])
