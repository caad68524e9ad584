"""Pickles written before the private subpackages (commit bc31605, tests/data/old_pickles/make.py)
still load, and their models predict what the same models fitted now predict: a move of a module
that a pickle names, or a fitted attribute renamed, would break users' saved models."""

from __future__ import annotations

import importlib.util
import pickle
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parents[1] / "data" / "old_pickles"


def _maker():
    spec = importlib.util.spec_from_file_location("make_old_pickles", HERE / "make.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKER = _maker()


@pytest.mark.parametrize("name", ["svmmap", "binner_pipeline", "svmmap_cv"])
def test_an_old_pickle_loads_and_predicts_as_the_model_fitted_now(name):
    X, y, qid = MAKER.data()
    old = pickle.loads((HERE / f"{name}.pkl").read_bytes())
    new = MAKER.fit(name, MAKER.models()[name], X, y, qid)
    assert type(old) is type(new)
    # The fits are bit-identical across the moves (benchmarks/model_fingerprints.txt), so the
    # predictions are equal, not close.
    np.testing.assert_array_equal(old.predict(X), new.predict(X))
    if name == "svmmap_cv":
        assert old.best_params_ == new.best_params_
        np.testing.assert_array_equal(old.cv_results_["mean_test_score"], new.cv_results_["mean_test_score"])
