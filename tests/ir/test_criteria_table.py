"""benchmarks/criteria_table.py on a small part of MQ2008 (the full table is a script)."""

import numpy as np
import pytest
from scipy.stats import wilcoxon
from svmmap import SVMMap
from svmmap.datasets import Fold, Split, load_mq2008

from tests._support.benchmarks import load

# Trains LightGBM's LambdaRank beside the SVMs.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def table():
    return load("criteria_table")


def small_fold(k: int, n_queries: int = 40) -> Fold:
    parts = []
    for split in ("train", "vali", "test"):
        X, y, qid = load_mq2008(fold=k, split=split)
        keep = np.isin(qid, np.unique(qid)[:n_queries])
        parts.append(Split(X[keep], y[keep], qid[keep]))
    return Fold(f"Fold{k}", *parts)


def test_rows_choose_on_validation_and_compare_with_svm_map(table):
    folds = [small_fold(1), small_fold(2)]
    grid = (0.1, 10.0)
    rows = [
        table.Row("map", table.metric("map"), table.svm_candidates(lambda C: SVMMap(C=C), grid)),
        table.Row(
            "ndcg@10", table.metric("ndcg@10"), table.svm_candidates(lambda C: SVMMap(C=C, loss="ndcg@10"), grid)
        ),
        table.ROWS["AdaRank-MAP"],
    ]
    pytest.importorskip("lightgbm")
    rows.append(table.ROWS["LambdaRank"])
    results = [table.run_row(r, folds) for r in rows]
    # Each fold's choice is a candidate of the row, and the chosen one is the best on validation.
    assert all(c in ("C=0.1", "C=10") for c in results[0].chosen)
    fold = folds[0]
    vali = {
        C: table.metric("map")(
            fold.vali.y,
            SVMMap(C=C).fit(fold.train.X, fold.train.y, qid=fold.train.qid).predict(fold.vali.X),
            fold.vali.qid,
        )
        for C in grid
    }
    assert results[0].chosen[0] == f"C={max(vali, key=vali.get):g}"
    # Test queries of both folds are pooled, one value per query and metric.
    n_test = sum(len(np.unique(f.test.qid[f.test.y > 0])) for f in folds)
    assert all(len(r.per_query["map"]) == n_test for r in results)
    text = table.format_table(results)
    assert text.count("\n") == len(results) + 1
    assert "| map | " in text and "| LambdaRank | " in text
    # The p-values are scipy's Wilcoxon signed-rank test on the per-query differences.
    a, b = results[1].per_query["map"], results[0].per_query["map"]
    keys = sorted(a)
    expected = wilcoxon([a[k] for k in keys], [b[k] for k in keys]).pvalue
    assert table.p_value(a, b) == pytest.approx(expected)
    assert table.p_value(b, b) == 1.0


def test_unknown_rows_are_rejected(table):
    with pytest.raises(SystemExit):
        table.main(["--rows", "nope"])


def test_pair_accuracy_by_hand(table):
    # Query a: labels 2, 1, 0 scored 3, 1, 2: (2 over 1) and (2 over 0) right, (1 over 0) wrong:
    # 2/3. Query b: labels 1, 1, 0 with a tie between a 1 and the 0 (counted wrong) and one right
    # pair: 1/2. Query c has one label and no pair. Mean over a and b: 7/12.
    y = np.array([2, 1, 0, 1, 1, 0, 3, 3], dtype=float)
    s = np.array([3, 1, 2, 5, 0, 0, 1, 2], dtype=float)
    q = np.array(["a", "a", "a", "b", "b", "b", "c", "c"])
    assert table.pair_accuracy(y, s, q) == pytest.approx(7 / 12)
