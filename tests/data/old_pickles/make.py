"""Writes the pickles of this folder with the build that made them: commit bc31605, the last
before the private subpackages (svmmap._fit, svmmap._search, svmmap._files) and svmmap/dask/.
Run it from a checkout of that commit whose compiled core is in place (``git archive bc31605``,
``cargo build --release --lib --features python,pyo3/extension-module,pyo3/abi3-py39``, the
library copied to python/svmmap/_core.abi3.so), as ``PYTHONPATH=<checkout>/python python
make.py``. tests/api/test_old_pickles.py loads them and fits the same models with the same data
(``data()``, which it imports from here) to compare the predictions.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def data():
    """Twelve queries of eight documents, five features, graded labels 0..2."""
    rng = np.random.default_rng(44)
    qid = np.repeat(np.arange(12), 8)
    X = rng.normal(size=(qid.size, 5))
    y = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.7, size=qid.size)), 0, 2)
    return X, y, qid


def models():
    """The models the pickles hold, unfitted: the estimator, a pipeline with the binner, and the
    search over C (its fitted state holds the search's results and the refitted model)."""
    from sklearn.pipeline import make_pipeline
    from svmmap import SVMMap, SVMMapCV
    from svmmap.binning import Binner

    return {
        "svmmap": SVMMap(C=10.0),
        "binner_pipeline": make_pipeline(Binner(n_thresholds=8), SVMMap(C=1.0, loss="ndcg@5")),
        "svmmap_cv": SVMMapCV(Cs=(0.1, 10.0), cv=3),
    }


def fit(name, model, X, y, qid):
    if name == "binner_pipeline":
        return model.fit(X, y, svmmap__qid=qid)
    return model.fit(X, y, qid)


if __name__ == "__main__":
    X, y, qid = data()
    for name, model in models().items():
        fitted = fit(name, model, X, y, qid)
        (HERE / f"{name}.pkl").write_bytes(pickle.dumps(fitted, protocol=4))
