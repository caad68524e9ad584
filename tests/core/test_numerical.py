"""Numerical robustness, for every loss this build has: features on scales from 1e-8 to 1e8,
duplicate documents with different labels, all-zero feature vectors and C up to 1e6 either
converge or stop at max_iter with a ConvergenceWarning; never NaN. Feature values so large
that float64 overflows are a clear error, not NaN."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from svmmap import DegenerateModelWarning, SkippedQueriesWarning, SVMMap

from tests._support.losses import LOSSES


def problem(kind: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    n_queries, per_query, d = 6, 8, 4
    X = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0], size=(n_queries * per_query, d))
    y = rng.integers(0, 3, size=n_queries * per_query).astype(float)
    qid = np.repeat(np.arange(n_queries), per_query)
    for q in range(n_queries):  # every query has a relevant and a non-relevant document
        y[q * per_query], y[q * per_query + 1] = 2.0, 0.0
    if kind == "scales":
        X = X * np.array([1e-8, 1e-3, 1e3, 1e8])
    elif kind == "duplicates":
        # Every document appears twice, once relevant and once not.
        X = np.repeat(X[::2], 2, axis=0)
        y[::2], y[1::2] = 1.0, 0.0
    elif kind == "zero-rows":
        X[::3] = 0.0
    elif kind == "all-zero":
        X[:] = 0.0
    return X, y, qid


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize(
    "kind,C",
    [
        ("scales", 1e-3),
        ("scales", 1.0),
        ("scales", 1e6),
        ("duplicates", 1e6),
        ("zero-rows", 1e6),
        ("all-zero", 1.0),
        ("plain", 1e6),
    ],
)
def test_converges_or_warns_never_nan(loss, kind, C):
    X, y, qid = problem(kind)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SVMMap(C=C, loss=loss, max_iter=40, n_jobs=1).fit(X, y, qid=qid)
    assert np.all(np.isfinite(model.coef_))
    for value in (model.objective_, model.dual_objective_, model.gap_):
        assert np.isfinite(value)
    if not loss.startswith("dorm"):
        # DORM's target ranking is the best label-consistent one at the current w
        # (rust/oracle/dorm.rs), so its objective is not convex and its cuts are not lower
        # bounds: the working-set dual need not be below the objective.
        assert model.dual_objective_ <= model.objective_ + 1e-9 * (1 + abs(model.objective_))
    assert np.all(np.isfinite(model.predict(X)))
    stopped = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert model.converged_ or (model.n_iter_ == 40 and stopped), (model.n_iter_, model.gap_)
    if stopped:
        assert "stopped at max_iter=40 with duality gap" in str(stopped[0].message)
    degenerate = [w for w in caught if issubclass(w.category, DegenerateModelWarning)]
    if kind == "all-zero":
        # Nothing can be learned from all-zero features: w = 0 is the optimum, and it is said.
        assert model.converged_ and not np.any(model.coef_)
        assert degenerate and "certifies" in str(degenerate[0].message)
    # A model that ranks nothing is always reported (the cutoff losses have w = 0 as their
    # optimum on some of these problems).
    if not np.any(model.coef_):
        assert degenerate
    expected = (ConvergenceWarning, SkippedQueriesWarning, DegenerateModelWarning)
    assert not [w for w in caught if not issubclass(w.category, expected)]


@pytest.mark.parametrize("scale", [1e160, 1e300])
def test_astronomical_features_are_an_error_not_nan(scale):
    X, y, qid = problem("plain")
    with pytest.raises(ValueError, match="not a finite float64 number; the feature values of X are too large"):
        SVMMap().fit(X * scale, y, qid=qid)


def test_transpose_dot_of_every_matrix_form_against_exact_sums():
    """CoreMatrix.transpose_dot (X^T v, the product of the latent rounds) for dense float64 and
    float32, CSR and bin codes, against column sums made exactly with math.fsum over the
    float64 products (for bin codes, over the indicator matrix the codes stand for); and the
    same bits for one thread and two."""
    import math

    import scipy.sparse as sp
    from svmmap import Binner
    from svmmap._validation import check_matrix

    rng = np.random.default_rng(3)
    X = rng.normal(size=(5000, 7)) * 10 ** rng.uniform(-3, 3, 7)
    X[rng.random(X.shape) < 0.3] = 0.0
    v = rng.normal(size=5000)
    binner = Binner(n_thresholds=5).fit(X)
    thresholds = binner.thresholds_
    indicators = np.hstack([(X[:, [f]] > np.asarray(t)[None, :]).astype(np.float64) for f, t in enumerate(thresholds)])
    cases = [
        (X, X),
        (X.astype(np.float32), X.astype(np.float32).astype(np.float64)),
        (sp.csr_matrix(X), X),
        (binner.transform(X), indicators),
    ]
    for given, dense in cases:
        core = check_matrix(given)[0]
        got = core.transpose_dot(v)
        exact = np.array([math.fsum(v * dense[:, j]) for j in range(dense.shape[1])])
        scale = np.abs(v) @ np.abs(dense)
        assert got.shape == exact.shape
        assert np.all(np.abs(got - exact) <= 1e-12 * scale + 1e-300), type(given)
        assert np.array_equal(core.transpose_dot(v, 2), got)
