"""Fits that cannot converge stop as stalled and say why; those that can are left alone.

The stall rule itself (rust/solver/progress.rs, ``stalled``) is checked on hand-made histories
by the Rust tests; here, on data whose columns span ten orders of magnitude (where the solver
really stalls), the fit stops early with ``stop_reason_ == "stalled"``, keeps the best iterate
it saw, names the cause it measured, and each remedy it names trains a model that converges and
ranks on the same data. ``n_iter_no_change=None`` and ``max_time`` are checked as documented.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from svmmap import Binner, SVMMap
from svmmap.datasets import make_ranking
from svmmap.metrics import evaluate


@pytest.fixture(scope="module")
def raw():
    """make_ranking with column j multiplied by 10^u_j, u_j uniform on (-2, 8): the column
    standard deviations span about nine orders of magnitude."""
    data = make_ranking(30, 20, 8, random_state=0)
    X = data.X.astype(np.float64) * 10 ** np.random.default_rng(0).uniform(-2, 8, 8)
    return X, data.y, data.qid


def fit(X, y, qid, **params):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        model = SVMMap(**params).fit(X, y, qid=qid)
    return model, [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]


def mean_ap(model, X, y, qid) -> float:
    return float(evaluate(y, model.predict(X), qid, ["map"])["map"])


def test_a_stalled_fit_stops_keeps_its_best_iterate_and_names_the_scales(raw):
    X, y, qid = raw
    model, texts = fit(X, y, qid, C=1.0)
    assert model.stop_reason_ == "stalled" and not model.converged_
    # Stopped within a few windows of 50 iterations, far from max_iter = 10000.
    assert model.n_iter_ < 500
    # The model is the best iterate: its objective is the smallest primal of the history.
    assert model.objective_ == min(r["primal"] for r in model.history_)
    assert model.gap_ > 10 * model.tolerance_
    assert len(texts) == 1
    text = texts[0]
    assert "stalled at iteration" in text and "orders of magnitude" in text
    std = X.std(axis=0)
    orders = np.log10(std.max() / std.min())
    assert f"span {orders:.1f} orders" in text, (orders, text)
    assert "StandardScaler" in text and "Binner" in text and "n_iter_no_change=None" in text


@pytest.mark.parametrize(
    "remedy",
    [
        lambda: make_pipeline(StandardScaler(), SVMMap(C=1.0)),
        lambda: make_pipeline(Binner(), SVMMap(C=1.0)),
    ],
    ids=["standardize", "bin"],
)
def test_each_remedy_the_stall_warning_names_converges_and_ranks(raw, remedy):
    X, y, qid = raw
    stalled, _ = fit(X, y, qid, C=1.0)
    pipeline = remedy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        pipeline.fit(X, y, svmmap__qid=qid)
    model = pipeline[-1]
    assert model.stop_reason_ == "converged" and not model.degenerate_
    # It ranks the training data better than the stalled model does.
    assert float(evaluate(y, pipeline.predict(X), qid, ["map"])["map"]) > mean_ap(stalled, X, y, qid)


def test_pairwise_count_names_the_pairs_and_its_remedies_converge(raw):
    """pairwise:count's C multiplies the number of pairs: its stall warning measures R(0), the
    mean misordered pairs per query at w = 0 (counted here independently), beside the scales.
    Each remedy it names, with the features standardized, converges and ranks."""
    X, y, qid = raw
    model, texts = fit(X, y, qid, C=1.0, loss="pairwise:count")
    assert model.stop_reason_ == "stalled"
    # At w = 0 every ranking scores the same, so the hinge is the largest loss, the ranking
    # that reverses every pair of different labels: R(0) is the mean number of such pairs over
    # the queries that have one.
    pairs = []
    for q in np.unique(qid):
        labels = y[qid == q]
        pairs.append(sum(int(a > b) for a in labels for b in labels))
    at_zero = np.mean([p for p in pairs if p > 0])
    assert f"the hinge is {at_zero:.4g} per query" in texts[0], (at_zero, texts[0])
    assert "loss='pairwise'" in texts[0] and "orders of magnitude" in texts[0]
    for remedy in (dict(C=1.0, loss="pairwise"), dict(C=1.0 / at_zero, loss="pairwise:count")):
        pipeline = make_pipeline(StandardScaler(), SVMMap(**remedy))
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            pipeline.fit(X, y, svmmap__qid=qid)
        assert pipeline[-1].stop_reason_ == "converged" and not pipeline[-1].degenerate_, remedy


def test_none_trains_on_and_max_time_stops(raw):
    X, y, qid = raw
    stalled, _ = fit(X, y, qid, C=1.0)
    on, texts = fit(X, y, qid, C=1.0, n_iter_no_change=None, max_iter=stalled.n_iter_ + 100)
    assert on.stop_reason_ == "max_iter" and on.n_iter_ == stalled.n_iter_ + 100
    # The same iterations up to the stall: the rule only stops the loop.
    assert [r["primal"] for r in on.history_[: stalled.n_iter_]] == [r["primal"] for r in stalled.history_]
    timed, texts = fit(X, y, qid, C=1.0, n_iter_no_change=None, max_time=0.05)
    assert timed.stop_reason_ == "max_time"
    assert timed.history_[-1]["seconds"] >= 0.05 and all(r["seconds"] < 0.05 for r in timed.history_[:-1])
    assert "max_time=0.05" in texts[0]


def test_a_latent_fit_shares_its_time_limit_between_rounds():
    data = make_ranking(40, 30, 10, random_state=0)
    model, texts = fit(data.X, data.y, data.qid, C=1000.0, loss="ndcg@10:latent", max_time=0.2)
    total = sum(1 for _ in model.round_objectives_)
    assert total >= 1
    assert model.stop_reason_ in ("max_time", "converged")


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "50"])
def test_n_iter_no_change_is_checked(value):
    with pytest.raises(ValueError, match="n_iter_no_change must be None or an integer >= 1"):
        SVMMap(n_iter_no_change=value).fit(np.eye(2), [1, 0], qid=[0, 0])


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), True, "1"])
def test_max_time_is_checked(value):
    with pytest.raises(ValueError, match="max_time must be None or a number of seconds > 0"):
        SVMMap(max_time=value).fit(np.eye(2), [1, 0], qid=[0, 0])


@pytest.mark.slow
def test_the_command_line_stops_a_stalled_fit_and_takes_the_limits(raw, tmp_path):
    """svmmap learn on the same data as a LETOR file: the default stops as stalled with the
    warning; --n-iter-no-change none with --max-time stops on the time instead; a bad value is
    refused naming the option."""
    import subprocess
    import sys

    import svmmap

    X, y, qid = raw
    train = tmp_path / "train.txt"
    with open(train, "w") as out:
        for row, label, q in zip(X, y, qid):
            features = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row))
            out.write(f"{int(label)} qid:{int(q)} {features}\n")

    def learn(*args):
        return subprocess.run(
            [sys.executable, "-m", "svmmap", "learn", *args, str(train), str(tmp_path / "m.json")],
            capture_output=True,
            text=True,
        )

    done = learn("-c", "1")
    assert done.returncode == 0, done.stderr
    assert "stalled at iteration" in done.stderr and "orders of magnitude" in done.stderr
    assert svmmap.load_model(tmp_path / "m.json").stop_reason_ == "stalled"
    timed = learn("-c", "1", "--n-iter-no-change", "none", "--max-time", "0.05")
    assert timed.returncode == 0, timed.stderr
    model = svmmap.load_model(tmp_path / "m.json")
    assert model.stop_reason_ == "max_time" and model.n_iter_no_change is None and model.max_time == 0.05
    bad = learn("--max-time", "0")
    assert bad.returncode != 0 and "--max-time" in bad.stderr


def test_under_early_stopping_the_warning_names_the_model_it_returns(raw):
    """Early stopping returns the iterate of the best validation score, not the solver's best
    iterate; a stall's warning says so instead of quoting the solver's objective for it."""
    X, y, qid = raw
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        model = SVMMap(C=1.0).fit(
            # A copy: early stopping never watches the training data's own arrays, as LightGBM.
            X,
            y,
            qid=qid,
            eval_set=[(X.copy(), y.copy())],
            eval_qid=[qid],
            early_stopping_rounds=500,
            eval_metric="map",
        )
    texts = [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]
    assert model.stop_reason_ == "stalled"
    assert f"the iterate of the best validation score (iteration {model.best_iteration_})" in texts[0]
