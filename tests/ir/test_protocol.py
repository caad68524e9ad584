"""Yue et al.'s evaluation protocol: splits, C selection, W/L and Wilcoxon, the table, the CLI."""

import numpy as np
import pytest
from scipy.stats import wilcoxon
from sklearn.metrics import average_precision_score
from svmmap import SVMMap
from svmmap.cli import main
from svmmap.datasets import load_mq2008
from svmmap.ir.protocol import (
    SingleFeature,
    format_table,
    given_folds,
    make_random_splits,
    paired_comparison,
    random_splits,
)


def test_paired_comparison_by_hand():
    # Differences 0.1, 0.2, 0.3, -0.05: ranks of |d| are 2, 3, 4 and 1, so W- = 1. Under the
    # null hypothesis each of the 2^4 = 16 sign patterns is equally likely; W- <= 1 happens
    # for 2 of them ({} and {1}), so the one-sided p is 2/16 and the two-sided p is 0.25.
    c = paired_comparison([0.5, 0.7, 0.9, 0.1], [0.4, 0.5, 0.6, 0.15])
    assert (c.wins, c.losses, c.ties, c.n) == (3, 1, 0, 4)
    assert c.p_value == pytest.approx(0.25)
    # Ties are counted and left out of the test.
    c = paired_comparison([0.5, 0.7, 0.9, 0.1, 0.3], [0.4, 0.5, 0.6, 0.15, 0.3])
    assert (c.wins, c.losses, c.ties) == (3, 1, 1) and c.p_value == pytest.approx(0.25)
    assert paired_comparison([0.2, 0.3], [0.2, 0.3]).p_value == 1.0
    # A larger sample against scipy directly.
    rng = np.random.default_rng(0)
    a, b = rng.random(60), rng.random(60) * 0.9
    assert paired_comparison(a, b).p_value == pytest.approx(wilcoxon(a, b).pvalue)


def test_random_splits_are_disjoint_and_balanced():
    queries = list(range(50))
    splits = make_random_splits(queries, n_trials=50, n_train=10, n_vali=5, random_state=1)
    assert len(splits) == 50
    counts = {role: np.zeros(50, int) for role in ("train", "vali", "test")}
    for s in splits:
        assert (len(s.train), len(s.vali), len(s.test)) == (10, 5, 35)
        assert set(s.train) | set(s.vali) | set(s.test) == set(queries)
        assert not (set(s.train) & set(s.vali))
        for role in counts:
            counts[role][list(getattr(s, role))] += 1
    # Yue et al.: every query trains 10 times, validates 5 times and is tested 35 times.
    # Training draws whole permutations (50 = 5 trials x 10), so its counts are exact; the
    # validation cycle skips the trial's training queries, so it may be off by one.
    assert np.all(counts["train"] == 10)
    assert counts["vali"].min() >= 4 and counts["vali"].max() <= 6
    assert counts["test"].min() >= 34 and counts["test"].max() <= 36
    assert splits == make_random_splits(queries, n_trials=50, n_train=10, n_vali=5, random_state=1)
    with pytest.raises(ValueError, match="too few"):
        make_random_splits(range(15), n_train=10, n_vali=5)


def toy_data(n_queries=24, seed=0):
    """Feature 0 puts every relevant document first (AP 1 on every query); feature 1 is noise."""
    rng = np.random.default_rng(seed)
    X, y, qid = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(5, 12))
        rel = np.zeros(n)
        rel[rng.choice(n, size=int(rng.integers(1, n)), replace=False)] = 1
        X.append(np.column_stack([rel + rng.random(n) * 0.5, rng.random(n)]))
        y.append(rel)
        qid.append(np.full(n, 100 + q))
    return np.vstack(X), np.concatenate(y), np.concatenate(qid)


class ByC:
    """A ranker whose quality depends on C: C == 1 ranks by the perfect feature 0, any other C
    by the noise feature 1. Validation must pick C == 1."""

    def __init__(self, C):
        self.C = C

    def fit(self, X, y, qid=None):
        self.col = 0 if self.C == 1 else 1
        return self

    def predict(self, X):
        return X[:, self.col]


def test_protocol_by_hand_on_toy_data():
    X, y, qid = toy_data()
    methods = {
        "perfect": (lambda C: SingleFeature(feature=0), [1.0]),
        "noise": (lambda C: SingleFeature(feature=1), [1.0]),
        "byC": ByC,
    }
    result = random_splits(X, y, qid, methods, n_trials=6, n_train=4, n_vali=3, C_grid=[3.0, 1.0, 0.5], random_state=2)
    assert result.reference == "perfect"
    assert np.all(result.methods["perfect"].test_map == 1.0)
    assert result.methods["byC"].chosen_C == [1.0] * 6
    assert np.all(result.methods["byC"].test_map == 1.0)
    # The noise ranker's test MAP per trial and per query, recomputed with scikit-learn's
    # average precision (no score ties here, so the tie conventions do not matter).
    noise = result.methods["noise"]
    per_query = {}
    for t, split in enumerate(result.splits):
        aps = []
        for q in split.test:
            m = qid == q
            ap = average_precision_score(y[m], X[m, 1])
            aps.append(ap)
            per_query.setdefault(q, []).append(ap)
        assert noise.test_map[t] == pytest.approx(np.mean(aps))
    assert noise.per_query == pytest.approx({q: np.mean(v) for q, v in per_query.items()})
    cmp = result.compare()
    # "perfect" has AP 1 everywhere: it wins wherever noise is below 1 and never loses.
    assert cmp["noise"].losses == 0
    assert cmp["noise"].wins == sum(v < 1 - 1e-12 for v in noise.per_query.values())
    assert cmp["byC"].wins == cmp["byC"].losses == 0
    table = result.table(title="toy")
    lines = table.splitlines()
    assert lines[0] == "| Model | toy MAP | W/L |"
    assert lines[2] == "| perfect | 1.000 | – |"
    assert lines[3] == f"| noise | {noise.map:.3f} | {cmp['noise'].wins}/0 ** |"
    assert lines[4] == "| byC | 1.000 | 0/0 |"


def test_two_datasets_side_by_side():
    X, y, qid = toy_data(seed=1)
    methods = {"a": (lambda C: SingleFeature(feature=0), [1.0]), "b": (lambda C: SingleFeature(feature=1), [1.0])}
    r1 = random_splits(X, y, qid, methods, n_trials=2, n_train=4, n_vali=3)
    r2 = random_splits(X, y, qid, methods, n_trials=2, n_train=4, n_vali=3, random_state=9)
    table = format_table({"D1": r1, "D2": r2}, show_p=True)
    assert table.splitlines()[0] == "| Model | D1 MAP | W/L | p | D2 MAP | W/L | p |"
    assert table.splitlines()[2].startswith("| a | 1.000 | – | | 1.000 | – | |")


def test_given_folds_on_mq2008_subset():
    # Two LETOR folds made of MQ2008 subsets (small and quick): SVM-map with a small C grid
    # against the best single feature; every test query is scored once.
    from svmmap.datasets import Fold, Split

    parts = {s: load_mq2008(s, "test") for s in (1, 2, 3)}  # test split of fold k = subset (k+3)%5+1
    f1 = Fold("A", Split(*parts[1]), Split(*parts[2]), Split(*parts[3]))
    f2 = Fold("B", Split(*parts[3]), Split(*parts[1]), Split(*parts[2]))
    methods = {"SVM-map": lambda C: SVMMap(C=C), "Best Func.": (lambda C: SingleFeature(), [1.0])}
    result = given_folds([f1, f2], methods, C_grid=[1.0, 10.0])
    test_queries = {q for f in (f1, f2) for q in np.unique(f.test.qid[f.test.y > 0]).tolist()}
    assert set(result.methods["SVM-map"].per_query) == test_queries
    assert len(result.methods["SVM-map"].test_map) == 2
    assert "| SVM-map |" in result.table()


def test_cli_protocol(tmp_path, capsys):
    X, y, qid = toy_data(n_queries=20, seed=3)
    with open(tmp_path / "toy.txt", "w") as f:
        for row, label, q in zip(X, y, qid):
            f.write(f"{int(label)} qid:{q} 1:{float(row[0])!r} 2:{float(row[1])!r}\n")
    code = main(
        [
            "protocol",
            "--data",
            str(tmp_path / "toy.txt"),
            "--methods",
            "feature:1,map,feature:2",
            "--trials",
            "3",
            "--train",
            "4",
            "--vali",
            "3",
            "--C",
            "1,10",
            "-q",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| Model | toy.txt MAP | W/L |"
    assert out[2] == "| feature 1 | 1.000 | – |"
    assert out[3].startswith("| SVM-map |") and out[4].startswith("| feature 2 |")
    code = main(["protocol", "--data", str(tmp_path / "toy.txt"), "--methods", "map,nonsense", "-q"])
    assert code == 2
    assert "'nonsense' is not a loss" in capsys.readouterr().err


def test_classifiers_compete_through_their_decision_function():
    # An SVM_acc-style competitor: a scikit-learn classifier fitted on binary relevance and
    # ranked by its decision function. Recompute one trial by hand with scikit-learn.
    from sklearn.linear_model import LogisticRegression

    X, y, qid = toy_data(seed=4)
    y = y * 2  # graded labels 0/2: relevant means > 0
    result = random_splits(
        X, y, qid, {"logreg": lambda C: LogisticRegression(C=C)}, n_trials=2, n_train=4, n_vali=3, C_grid=[0.5]
    )
    for t, split in enumerate(result.splits):
        train = np.isin(qid, split.train)
        clf = LogisticRegression(C=0.5).fit(X[train], (y[train] > 0).astype(int))
        aps = [average_precision_score(y[qid == q] > 0, clf.decision_function(X[qid == q])) for q in split.test]
        assert result.methods["logreg"].test_map[t] == pytest.approx(np.mean(aps))
