"""Smoke test of an installed svmmap (run by .ci/wheel on each CPython it tests): fit, predict,
save/load, SVMMapCV and the command line's learn/classify on the bundled MQ2008 fold 1."""

import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import svmmap
from svmmap.datasets import load_mq2008
from svmmap.model_selection import SVMMapCV

warnings.simplefilter("ignore", svmmap.SkippedQueriesWarning)  # MQ2008 has queries without relevant documents

X, y, qid = load_mq2008(fold=1, split="train")
Xt, yt, qt = load_mq2008(fold=1, split="test")
model = svmmap.SVMMap(C=10.0).fit(X, y, qid=qid)
test_map = model.score(Xt, yt, qid=qt)
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "model.json")
    model.save(path)
    again = svmmap.load_model(path)
    assert np.array_equal(again.predict(Xt), model.predict(Xt)), "a saved model predicts differently"
    cv = SVMMapCV(Cs=[0.1, 10.0], cv=2).fit(X, y, qid=qid)
    assert cv.best_C_ in (0.1, 10.0)
    # The command line on two of the bundled subsets (gzipped LETOR files).
    train, test = svmmap.datasets.mq2008_path(1), svmmap.datasets.mq2008_path(2)
    cli_model, predictions = os.path.join(tmp, "cli.model"), os.path.join(tmp, "predictions")
    run = [sys.executable, "-m", "svmmap"]
    subprocess.run(run + ["learn", "-c", "10", train, cli_model], check=True, capture_output=True)
    subprocess.run(run + ["classify", test, cli_model, predictions], check=True, capture_output=True)
    n_test = svmmap.load_letor(test)[0].shape[0]
    scores = np.loadtxt(predictions)
    assert scores.shape == (n_test,), scores.shape
print(f"Python {sys.version.split()[0]}: MQ2008 fold 1 test MAP {test_map:.4f}; save/load, SVMMapCV, CLI ok")
