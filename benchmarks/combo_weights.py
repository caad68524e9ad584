"""SVM-combo's weights against its components, on data with many relevant documents.

Chakrabarti et al.'s SVM-combo gives every loss its own C_l; svmmap spells it
``loss={"map": 1.0, "ndcg@10": 0.1, "mrr@10": 0.1}`` (C_l = weight_l * C), and a list of losses
gets default weights (``loss=["map", "ndcg@10", "mrr@10"]`` is map 1, ndcg@10 0.1, mrr@10 1e-4;
see docs/guide/losses.md). This script trains, on the five MQ2008 folds (C chosen per fold on
the validation split from --Cs) and on make_ranking data where a third of about 150 documents
per query are relevant (one train/validation/test split of its queries into thirds, the same C
grid), each component alone, the lists with their default weights and the combination with
other weights, with both slack kinds. It prints test MAP, NDCG@10 and MRR@10, the number of
zero models, and the lowest ratio of the row's three figures to the best of its components
alone (>= 0.99: within 1% of the best component on every measure). It is the source of the
table in docs/guide/losses.md ("Weights"); every figure is deterministic.

    python benchmarks/combo_weights.py [--Cs 0.1,1,10] [--data all|mq2008|make_ranking] [--write]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import svmmap
from svmmap.datasets import make_ranking, mq2008_folds

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # noqa: E402

METRICS = ["map", "ndcg@10", "mrr@10"]
COMPONENTS = ["map", "ndcg@10", "mrr@10"]
MQ2008 = "MQ2008 (5 folds)"
MAKE_RANKING = "make_ranking (1/3 relevant)"


def candidates() -> Iterator[Tuple[str, Any, str]]:
    """(row name, loss, slack): the components, the default lists, and explicit weights."""
    for name in COMPONENTS:
        yield name, name, "separate"
    for slack in ("separate", "shared"):
        yield f"list map, ndcg@10, mrr@10 (default weights), {slack}", ["map", "ndcg@10", "mrr@10"], slack
    for slack in ("separate", "shared"):
        yield f"list ndcg@10, mrr@10 (default weights), {slack}", ["ndcg@10", "mrr@10"], slack
    for w_ndcg, w_mrr in ((1.0, 1.0), (0.1, 0.01), (0.01, 0.01)):
        for slack in ("separate", "shared"):
            weights = {"map": 1.0, "ndcg@10": w_ndcg, "mrr@10": w_mrr}
            yield f"weights 1/{w_ndcg:g}/{w_mrr:g}, {slack}", weights, slack
    for slack in ("separate", "shared"):
        yield f"weights ndcg@10 1, mrr@10 1, {slack}", {"ndcg@10": 1.0, "mrr@10": 1.0}, slack


def splits(seed: int, data: str = "all") -> Iterator[Tuple[str, Any, Any, Any]]:
    """MQ2008's five folds, then make_ranking with a third of the documents relevant."""
    if data in ("all", "mq2008"):
        for fold in mq2008_folds():
            yield MQ2008, fold.train, fold.vali, fold.test
    if data in ("all", "make_ranking"):
        X, y, qid = make_ranking(300, 150, 30, label_fractions=(0.67, 0.33), random_state=seed)
        queries = np.unique(qid)
        parts = np.array_split(np.random.default_rng(seed).permutation(queries), 3)

        def take(part):
            rows = np.isin(qid, part)
            return svmmap.datasets.Split(X[rows], y[rows], qid[rows])

        yield MAKE_RANKING, take(parts[0]), take(parts[1]), take(parts[2])


def fit_best(loss: Any, slack: str, grid: Sequence[float], train: Any, vali: Any) -> Any:
    """The model of the C (from grid) with the best validation MAP; the first of equals."""
    best = None
    for C in grid:
        model = svmmap.SVMMap(C=C, loss=loss, slack=slack).fit(train.X, train.y, qid=train.qid)
        v = svmmap.metrics.evaluate(vali.y, model.predict(vali.X), vali.qid, ["map"]).means["map"]
        if best is None or v > best[0]:
            best = (v, model)
    assert best is not None
    return best[1]


def measure(grid: Sequence[float], seed: int = 0, data: str = "all") -> Dict[Tuple[str, str], Dict[str, Any]]:
    """(data set, row name) -> loss, mean test figures over the splits, zero models, splits."""
    warnings.simplefilter("ignore")
    runs: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for group, train, vali, test in splits(seed, data):
        for name, loss, slack in candidates():
            model = fit_best(loss, slack, grid, train, vali)
            means = svmmap.metrics.evaluate(test.y, model.predict(test.X), test.qid, METRICS).means
            row = runs.setdefault((group, name), {"loss": loss, "values": [], "zeros": 0})
            row["values"].append([means[m] for m in METRICS])
            row["zeros"] += int(not np.any(model.coef_))
    for row in runs.values():
        row["splits"] = len(row["values"])
        row["means"] = np.mean(row["values"], axis=0)
    return runs


def component_names(loss: Any) -> List[str]:
    return [loss] if isinstance(loss, str) else list(loss)


def format_table(runs: Dict[Tuple[str, str], Dict[str, Any]]) -> str:
    lines = [
        "| data | loss | test MAP | NDCG@10 | MRR@10 | zero models | lowest / best component |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for (group, name), row in runs.items():
        parts = component_names(row["loss"])
        if parts == [name]:
            ratio = "–"  # a component alone
        else:
            best = np.max([runs[(group, c)]["means"] for c in parts], axis=0)
            ratio = f"{float(np.min(row['means'] / best)):.3f}"
        values = " | ".join(f"{v:.4f}" for v in row["means"])
        lines.append(f"| {group} | {name} | {values} | {row['zeros']}/{row['splits']} | {ratio} |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--Cs", default="0.1,1,10", help="C grid, chosen on validation MAP (default 0.1,1,10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", choices=("all", "mq2008", "make_ranking"), default="all")
    tables.add_arguments(parser)
    args = parser.parse_args(argv)
    grid = [float(c) for c in args.Cs.split(",")]
    text = format_table(measure(grid, args.seed, args.data))
    tables.publish(text, __file__, argv, write=args.write, note=args.note)


if __name__ == "__main__":
    main()
