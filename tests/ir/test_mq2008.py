"""The real result: SVM-map on MQ2008's five folds (issue #2, item 8)."""

import numpy as np
import pytest
from svmmap.datasets import mq2008_folds
from svmmap.ir.experiment import run_folds


@pytest.mark.slow
def test_mean_test_map_reaches_svm_map_level():
    # Protocol: C chosen by validation MAP from {0.1, 1, 10, 100, 1000}; MAP with relevant =
    # label > 0, queries without relevant documents skipped, ties broken pessimistically.
    # Reference points measured with this protocol: SVM^map 0.654, SVM^rank 0.656,
    # LightGBM LambdaRank 0.657.
    results = run_folds(mq2008_folds())
    assert len(results) == 5
    assert all(r.best_C in (0.1, 1.0, 10.0, 100.0, 1000.0) for r in results)
    mean = np.mean([r.test_map for r in results])
    assert mean >= 0.650, [(r.fold, r.best_C, r.test_map) for r in results]
