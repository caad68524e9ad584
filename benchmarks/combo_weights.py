"""SVM-combo with per-loss weights against its components, on data with many relevant documents.

Chakrabarti et al.'s SVM-combo gives every loss its own C_l; svmmap spells it
``loss={"map": 1.0, "ndcg@10": 0.1, "mrr@10": 0.1}`` (C_l = weight_l * C). This script trains, on
the five MQ2008 folds (C chosen per fold on the validation split from --Cs) and on make_ranking
data where a third of about 150 documents per query are relevant (one train/test split, the same
C grid chosen on a validation split), each component alone and the combination with several
weights and both slack kinds, and prints test MAP, NDCG@10 and MRR@10 with the number of zero
models. It is the source of the table in docs/guide/losses.md ("Weights").

    python benchmarks/combo_weights.py [--Cs 0.1,1,10]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import svmmap
from svmmap.datasets import make_ranking, mq2008_folds

METRICS = ["map", "ndcg@10", "mrr@10"]
COMPONENTS = ["map", "ndcg@10", "mrr@10"]


def candidates():
    yield "map", "map", "separate"
    yield "ndcg@10", "ndcg@10", "separate"
    yield "mrr@10", "mrr@10", "separate"
    for w in (1.0, 0.1, 0.01):
        weights = {"map": 1.0, "ndcg@10": w, "mrr@10": w}
        for slack in ("separate", "shared"):
            yield f"combo {slack}, weights 1/{w:g}/{w:g}", weights, slack


def splits(seed: int):
    """MQ2008's five folds, then make_ranking with a third of the documents relevant."""
    for fold in mq2008_folds():
        yield f"MQ2008 {fold.name}", fold.train, fold.vali, fold.test
    X, y, qid = make_ranking(300, 150, 30, label_fractions=(0.67, 0.33), random_state=seed)
    queries = np.unique(qid)
    parts = np.array_split(np.random.default_rng(seed).permutation(queries), 3)

    def take(part):
        rows = np.isin(qid, part)
        return svmmap.datasets.Split(X[rows], y[rows], qid[rows])

    yield "make_ranking (1/3 relevant)", take(parts[0]), take(parts[1]), take(parts[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--Cs", default="0.1,1,10", help="C grid, chosen on validation MAP (default 0.1,1,10)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    grid = [float(c) for c in args.Cs.split(",")]
    warnings.simplefilter("ignore")
    rows = {}
    for data, train, vali, test in splits(args.seed):
        for name, loss, slack in candidates():
            best = None
            for C in grid:
                model = svmmap.SVMMap(C=C, loss=loss, slack=slack).fit(train.X, train.y, qid=train.qid)
                v = svmmap.metrics.evaluate(vali.y, model.predict(vali.X), vali.qid, ["map"]).means["map"]
                if best is None or v > best[0]:
                    best = (v, model)
            model = best[1]
            means = svmmap.metrics.evaluate(test.y, model.predict(test.X), test.qid, METRICS).means
            group = "MQ2008 (5 folds)" if data.startswith("MQ2008") else data
            rows.setdefault((group, name), []).append(([means[m] for m in METRICS], not np.any(model.coef_)))
    print(f"svmmap {svmmap.__version__}; C from {grid} on validation MAP per split")
    print("| data | loss | test MAP | NDCG@10 | MRR@10 | zero models |")
    print("|---|---|---|---|---|---|")
    for (group, name), runs in rows.items():
        values = np.mean([r[0] for r in runs], axis=0)
        zeros = sum(r[1] for r in runs)
        print(f"| {group} | {name} | {values[0]:.4f} | {values[1]:.4f} | {values[2]:.4f} | {zeros}/{len(runs)} |")


if __name__ == "__main__":
    main()
