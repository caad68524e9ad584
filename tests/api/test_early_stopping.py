"""LightGBM-style validation in fit: eval_at, early stopping on the first metric of the first
validation set with the best iterate kept, and LightGBM's other fit arguments refused with the
svmmap equivalent (as PyTerrier's fit_kwargs pass them)."""

from __future__ import annotations

import numpy as np
import pytest
import svmmap
from svmmap import SVMMap
from svmmap.datasets import load_mq2008


@pytest.fixture(scope="module")
def data():
    train = load_mq2008(fold=1, split="train")
    vali = load_mq2008(fold=1, split="vali")
    return train, vali


def test_early_stopping_keeps_the_best_iterate(data):
    (X, y, qid), (Xv, yv, qv) = data
    # Large C with a tiny eps: many iterations, so that the validation MAP has a peak.
    model = SVMMap(C=1000.0, eps=1e-7).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], early_stopping_rounds=3)
    curve = model.evals_result_["valid_0"]["map"]
    # The best iteration by hand: the first maximum of the recorded curve (iterations count from 1).
    best = int(np.argmax(curve)) + 1
    assert model.best_iteration_ == best
    assert model.best_score_ == {"valid_0": {"map": curve[best - 1]}}
    # coef_ is that iterate: scoring the validation set with it gives the recorded value.
    assert svmmap.metrics.evaluate(yv, model.predict(Xv), qv, ["map"]).means["map"] == curve[best - 1]
    # Training ran exactly three iterations past the best, unless it converged first.
    assert len(curve) == best + 3 or model.stop_reason_ == "converged"
    if len(curve) == best + 3:
        assert model.stop_reason_ == "callback"


def test_eval_at_adds_ndcg_at_each_cutoff(data):
    (X, y, qid), (Xv, yv, qv) = data
    # eval_metric given: its metrics first, then NDCG at each cutoff (LightGBM's rule; the
    # rule without eval_metric is tests/api/test_lightgbm_habits.py's).
    model = SVMMap(C=1.0).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], eval_metric="map", eval_at=[5, 10])
    assert list(model.evals_result_["valid_0"]) == ["map", "ndcg@5", "ndcg@10"]
    last = svmmap.metrics.evaluate(yv, model.predict(Xv), qv, ["ndcg@10"]).means["ndcg@10"]
    assert model.evals_result_["valid_0"]["ndcg@10"][-1] == last


def test_bad_early_stopping_arguments(data):
    (X, y, qid), _ = data
    with pytest.raises(ValueError, match="needs an eval_set"):
        SVMMap().fit(X, y, qid=qid, early_stopping_rounds=3)
    with pytest.raises(ValueError, match="early_stopping_rounds must be an integer >= 1"):
        SVMMap().fit(X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid], early_stopping_rounds=0)
    with pytest.raises(ValueError, match="eval_at must be a list of integers >= 1"):
        SVMMap().fit(X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid], eval_at=[0])


@pytest.mark.parametrize("key, value", [("verbose", None), ("verbose", 1), ("init_model", "model.txt")])
def test_lightgbm_fit_arguments_name_the_svmmap_equivalent(data, key, value):
    (X, y, qid), _ = data
    with pytest.raises(TypeError, match=f"does not take LightGBM's '{key}'"):
        SVMMap().fit(X, y, qid=qid, **{key: value})
    with pytest.raises(TypeError, match="unexpected keyword argument 'nonsense'"):
        SVMMap().fit(X, y, qid=qid, nonsense=1)


def test_feature_importances_are_the_share_of_the_score_spread(data):
    (X, y, qid), _ = data
    model = SVMMap(C=1.0).fit(X, y, qid=qid)
    # By hand: |w_j| * std_j over the training documents, normalized to sum to 1.
    expected = np.abs(model.coef_) * X.std(axis=0)
    np.testing.assert_allclose(model.feature_importances_, expected / expected.sum(), rtol=1e-9, atol=1e-12)
    assert model.feature_importances_.sum() == pytest.approx(1.0)
    # Bin codes: the spread of every indicator column, as on the CSR indicators.
    codes = svmmap.Binner(n_thresholds=5).fit(X).transform(X)
    binned = SVMMap(C=1.0).fit(codes, y, qid=qid)
    spread = np.abs(binned.coef_) * codes.toarray().std(axis=0)
    np.testing.assert_allclose(binned.feature_importances_, spread / spread.sum(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_feature_importances_keep_the_spread_of_large_values(data, n_jobs):
    # float32 columns moved to around 10^4, where E[x^2] - E[x]^2 in float64 loses the
    # spread's leading digits to cancellation (about 1e-5 relative here); the reference
    # is two passes over the stored values in float64.
    (X, y, qid), _ = data
    X32 = (X + 1e4 * (np.arange(X.shape[1]) % 2)).astype(np.float32)
    model = SVMMap(C=1.0, n_jobs=n_jobs).fit(X32, y, qid=qid)
    spread = np.abs(model.coef_) * X32.astype(np.float64).std(axis=0)
    np.testing.assert_allclose(model.feature_importances_, spread / spread.sum(), rtol=1e-9, atol=1e-12)


def test_the_callback_record_carries_the_validation_metrics(data):
    (X, y, qid), (Xv, yv, qv) = data
    seen = []
    model = SVMMap(C=10.0, callback=lambda record: seen.append(record["eval"]) and False).fit(
        X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], eval_metric="map", eval_at=[10]
    )
    assert [r["valid_0"]["map"] for r in seen] == model.evals_result_["valid_0"]["map"]
    assert [r["valid_0"]["ndcg@10"] for r in seen] == model.evals_result_["valid_0"]["ndcg@10"]
    # history_ keeps the documented fields only.
    assert "eval" not in model.history_[-1]
