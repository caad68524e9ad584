"""The conventions table of docs/guide/conventions.md: one set of SVM-map scores under each preset.

SVMMap(C=10) is trained on MQ2008 Fold 1's training split (default eps), scores Fold 1's test
split, and the scores are evaluated with every ``conventions=`` preset (MAP, NDCG@5, NDCG@10,
P@10): what changes between the rows is the evaluation alone. Deterministic (the model is
bit-identical for any thread count), so ``tests/docs/test_tables.py`` recomputes it.

    python benchmarks/conventions_table.py [--write]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Optional, Sequence

from svmmap import SkippedQueriesWarning, SVMMap
from svmmap.datasets import load_mq2008
from svmmap.metrics import evaluate

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # noqa: E402

PRESETS = ("svmmap", "trec_eval", "letor")
METRICS = ("map", "ndcg@5", "ndcg@10", "p@10")
HEADERS = {"map": "MAP", "ndcg@5": "NDCG@5", "ndcg@10": "NDCG@10", "p@10": "P@10"}


def table() -> str:
    X, y, qid = load_mq2008(fold=1, split="train")
    Xt, yt, qt = load_mq2008(fold=1, split="test")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        scores = SVMMap(C=10.0).fit(X, y, qid=qid).predict(Xt)
    lines = [
        "| `conventions=` | " + " | ".join(HEADERS[m] for m in METRICS) + " |",
        "|---|" + "---:|" * len(METRICS),
    ]
    for preset in PRESETS:
        means = evaluate(yt, scores, qt, list(METRICS), conventions=preset).means
        lines.append(f'| `"{preset}"` | ' + " | ".join(f"{means[m]:.4f}" for m in METRICS) + " |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    tables.add_arguments(parser)
    args = parser.parse_args(argv)
    tables.publish(table(), __file__, argv, write=args.write, note=args.note)


if __name__ == "__main__":
    main()
