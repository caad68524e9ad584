"""Train criterion x test criterion on MQ2008 (Chakrabarti et al. 2008, Figure 9; Yue et al. 2007).

For each of the five MQ2008 folds and each row (a training criterion or a baseline), every value
of the row's hyper-parameter (C for the SVMs, the number of rounds for AdaRank, the tree
configuration and the number of trees for LightGBM) is trained on the training split; the
value is chosen by the row's own criterion on the validation split (MAP for map, ROC area for
roc, NDCG@10 for ndcg@10, ...); the chosen model is tested on the test split. Every test query
of the five folds is pooled (each MQ2008 query is tested exactly once), and the table shows the
mean test MAP, NDCG@10 and MRR@10 with the two-sided Wilcoxon signed-rank p-value of the
per-query differences against SVM-map (scipy.stats.wilcoxon; zero differences dropped).

Evaluation follows svmmap.metrics' defaults: relevant means label > 0, queries without a
relevant document are skipped, score ties are broken pessimistically, NDCG uses the graded
gain 2^label - 1.

Usage: python benchmarks/criteria_table.py [--rows map,roc,...] [--json results.json] [--write]
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

import numpy as np
from scipy.stats import wilcoxon
from svmmap import SVMMap
from svmmap.baselines import DORM, AdaRank, SVMAcc
from svmmap.datasets import mq2008_folds
from svmmap.estimator import SkippedQueriesWarning
from svmmap.metrics import per_query

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # noqa: E402

TEST_METRICS = ("map", "ndcg@10", "mrr@10")
C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
#: phi_mrr is not scaled by 1/(|P||N|) like Psi_po, so the same w gives hinges of another
#: magnitude and useful values of C are smaller; past C = 10 training also slows down sharply
#: (hundreds of cuts). The combination contains the MRR loss, hence the same upper limit.
MRR_C_GRID = (1e-4, 1e-3, 0.01, 0.1, 1.0, 10.0)
COMBO_C_GRID = (0.01, 0.1, 1.0, 10.0)
#: SVM_acc averages the hinge over documents (C means SVM^perf's C), so C is larger.
ACC_C_GRID = (1.0, 10.0, 100.0, 1000.0, 1e4)


@dataclass
class Row:
    """One row of the table: how to train it and by which validation criterion to choose."""

    name: str
    criterion: Callable[[np.ndarray, np.ndarray, np.ndarray], float]
    #: Yields (parameter description, scores function) for every candidate trained on `train`.
    candidates: Callable[[Any, Any], Iterable]
    note: str = ""


def metric(name: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray], float]:
    return lambda y, s, q: per_query(name, y, s, q).mean()


def accuracy(y: np.ndarray, s: np.ndarray, q: np.ndarray) -> float:
    """Classification accuracy of sign(score) (the criterion SVM_acc trains for)."""
    return float(np.mean((s > 0) == (y > 0)))


def pair_accuracy(y: np.ndarray, s: np.ndarray, q: np.ndarray) -> float:
    """The fraction of pairs of different labels ordered correctly (ties count as wrong, as
    svmmap.metrics breaks ties pessimistically), averaged over the queries with two labels: the
    criterion of the graded pairwise loss, one minus its Delta."""
    values = []
    for query in np.unique(q):
        rows = q == query
        yq, sq = y[rows], s[rows]
        higher = yq[:, None] > yq[None, :]
        if higher.any():
            values.append(float((higher & (sq[:, None] > sq[None, :])).sum() / higher.sum()))
    return float(np.mean(values))


def combo_criterion(y: np.ndarray, s: np.ndarray, q: np.ndarray) -> float:
    return float(np.mean([per_query(m, y, s, q).mean() for m in TEST_METRICS]))


def fit_quietly(model: Any, split: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        return model.fit(split.X, split.y, qid=split.qid)


def svm_candidates(make: Callable[[float], Any], grid: Sequence[float]) -> Callable:
    def candidates(train: Any, vali: Any) -> Iterable:
        for C in grid:
            model = fit_quietly(make(C), train)
            yield f"C={C:g}", model.predict

    return candidates


def adarank_candidates(measure: str, rounds: int = 300) -> Callable:
    def candidates(train: Any, vali: Any) -> Iterable:
        model = fit_quietly(AdaRank(measure, n_estimators=rounds), train)
        for t, coef in enumerate(model.coef_path_, start=1):
            yield f"T={t}", (lambda X, c=coef: X @ c)

    return candidates


def lambdarank_candidates(train: Any, vali: Any) -> Iterable:
    import lightgbm as lgb

    def groups(split: Any) -> List[int]:
        # LightGBM wants consecutive query groups: MQ2008 files keep a query's rows together.
        _, starts, counts = np.unique(split.qid, return_index=True, return_counts=True)
        if not np.all(np.diff(np.sort(starts)) == counts[np.argsort(starts)][:-1]):
            raise ValueError("rows of a query are not consecutive")
        return list(counts[np.argsort(starts)])

    for leaves in (7, 31):
        model = lgb.LGBMRanker(
            objective="lambdarank",
            n_estimators=500,
            learning_rate=0.05,
            num_leaves=leaves,
            min_child_samples=20,
            verbose=-1,
            n_jobs=1,
        )
        # LightGBM 4.7 renamed eval_set to eval_X/eval_y; older 4.x only knows eval_set.
        if "eval_X" in inspect.signature(model.fit).parameters:
            evaluation = {"eval_X": (vali.X,), "eval_y": (vali.y,)}
        else:
            evaluation = {"eval_set": [(vali.X, vali.y)]}
        model.fit(
            train.X,
            train.y,
            group=groups(train),
            eval_group=[groups(vali)],
            eval_at=[10],
            callbacks=[lgb.early_stopping(50, verbose=False)],
            **evaluation,
        )
        yield f"leaves={leaves},trees={model.best_iteration_}", model.predict


ROWS: Dict[str, Row] = {
    r.name: r
    for r in [
        Row("map", metric("map"), svm_candidates(lambda C: SVMMap(C=C, loss="map"), C_GRID)),
        Row("roc", metric("roc"), svm_candidates(lambda C: SVMMap(C=C, loss="roc"), C_GRID)),
        Row(
            "pairwise",
            pair_accuracy,
            svm_candidates(lambda C: SVMMap(C=C, loss="pairwise"), C_GRID),
            "SVM^rank's graded pairs; chosen by validation pair accuracy over different labels",
        ),
        Row("ndcg@10", metric("ndcg@10"), svm_candidates(lambda C: SVMMap(C=C, loss="ndcg@10"), C_GRID)),
        Row("ndcg", metric("ndcg"), svm_candidates(lambda C: SVMMap(C=C, loss="ndcg"), C_GRID)),
        Row("mrr@10", metric("mrr@10"), svm_candidates(lambda C: SVMMap(C=C, loss="mrr@10"), MRR_C_GRID)),
        Row(
            "combo",
            combo_criterion,
            svm_candidates(lambda C: SVMMap(C=C, loss=["map", "ndcg@10", "mrr@10"]), COMBO_C_GRID),
            "map + ndcg@10 + mrr@10, separate slacks; chosen by the mean of the three on validation",
        ),
        Row(
            "combo-shared",
            combo_criterion,
            svm_candidates(lambda C: SVMMap(C=C, loss=["map", "ndcg@10", "mrr@10"], slack="shared"), COMBO_C_GRID),
            "the same losses with a shared slack",
        ),
        Row("acc", accuracy, svm_candidates(lambda C: SVMAcc(C=C), ACC_C_GRID), "chosen by validation accuracy"),
        Row(
            "acc2",
            accuracy,
            svm_candidates(lambda C: SVMAcc(C=C, balanced=True), ACC_C_GRID),
            "chosen by validation accuracy",
        ),
        Row(
            "acc (C by MAP)",
            metric("map"),
            svm_candidates(lambda C: SVMAcc(C=C), ACC_C_GRID),
            "not a row of the papers' table: SVM_acc with C chosen by validation MAP instead",
        ),
        Row(
            "acc2 (C by MAP)",
            metric("map"),
            svm_candidates(lambda C: SVMAcc(C=C, balanced=True), ACC_C_GRID),
            "the same for SVM_acc2",
        ),
        Row("AdaRank-MAP", metric("map"), adarank_candidates("map"), "T in 1..300 chosen on validation"),
        Row("AdaRank-NDCG", metric("ndcg@10"), adarank_candidates("ndcg@10"), "T in 1..300 chosen on validation"),
        Row(
            "DORM",
            metric("ndcg@10"),
            svm_candidates(lambda C: DORM(C=C, k=10, depth=30), C_GRID),
            "NDCG@10 loss, A(r) = 1/sqrt(1+r) cut at rank 30",
        ),
        Row(
            "LambdaRank",
            metric("ndcg@10"),
            lambdarank_candidates,
            "LightGBM LGBMRanker, 7 or 31 leaves, trees by early stopping on validation NDCG@10",
        ),
    ]
}


@dataclass
class RowResult:
    name: str
    chosen: List[str] = field(default_factory=list)
    seconds: float = 0.0
    #: metric -> {qid: test value}
    per_query: Dict[str, Dict[Any, float]] = field(default_factory=dict)


def run_row(row: Row, folds: Sequence[Any], progress: Optional[Callable[[str], None]] = None) -> RowResult:
    result = RowResult(row.name, per_query={m: {} for m in TEST_METRICS})
    start = time.perf_counter()
    for fold in folds:
        best = None
        for param, scorer in row.candidates(fold.train, fold.vali):
            value = row.criterion(fold.vali.y, scorer(fold.vali.X), fold.vali.qid)
            if best is None or value > best[0]:
                best = (value, param, scorer)
        assert best is not None
        _, param, scorer = best
        result.chosen.append(param)
        scores = scorer(fold.test.X)
        for m in TEST_METRICS:
            pq = per_query(m, fold.test.y, scores, fold.test.qid)
            result.per_query[m].update({(fold.name, q): v for q, v in zip(pq.qids.tolist(), pq.values.tolist())})
        if progress:
            progress(f"{row.name} {fold.name}: {param}")
    result.seconds = time.perf_counter() - start
    return result


def p_value(a: Dict[Any, float], b: Dict[Any, float]) -> float:
    keys = sorted(a)
    x = np.array([a[k] for k in keys])
    y = np.array([b[k] for k in keys])
    if np.allclose(x, y):
        return 1.0
    return float(wilcoxon(x, y).pvalue)


def format_table(results: Sequence[RowResult], reference: str = "map") -> str:
    ref = next((r for r in results if r.name == reference), None)
    lines = [
        "| trained on | "
        + " | ".join(f"test {m.upper()} (p)" for m in TEST_METRICS)
        + " | C / setting per fold | time (s, timing) |",
        "|---|" + "---:|" * len(TEST_METRICS) + "---|---:|",
    ]
    for r in results:
        cells = []
        for m in TEST_METRICS:
            mean = np.mean(list(r.per_query[m].values()))
            if ref is None or r is ref:
                cells.append(f"{mean:.4f}")
            else:
                p = p_value(r.per_query[m], ref.per_query[m])
                mark = "**" if p < 0.05 else ""
                cells.append(f"{mark}{mean:.4f}{mark} ({p:.2g})")
        chosen = ", ".join(r.chosen)
        lines.append(f"| {r.name} | " + " | ".join(cells) + f" | {chosen} | {r.seconds:.0f} |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated rows (default all: {','.join(ROWS)})")
    parser.add_argument("--folds", default="1,2,3,4,5", help="MQ2008 folds (default 1-5)")
    parser.add_argument("--json", default=None, help="also write per-query test values here")
    tables.add_arguments(parser)
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.rows.split(",") if n.strip()]
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; choose from {list(ROWS)}")
    wanted = {f"Fold{int(k)}" for k in args.folds.split(",")}
    folds = [f for f in mq2008_folds() if f.name in wanted]
    start = time.perf_counter()
    results = []
    for name in names:
        results.append(run_row(ROWS[name], folds, progress=lambda msg: print(msg, file=sys.stderr, flush=True)))
    total = time.perf_counter() - start
    tables.publish(format_table(results), __file__, argv, write=args.write, note=args.note)
    n_queries = len(results[0].per_query["map"]) if results else 0
    print(
        f"\n{len(folds)} folds, {n_queries} test queries with a relevant document, {total:.0f} s in all.",
        file=sys.stderr,
    )
    notes = [f"- {ROWS[r.name].name}: {ROWS[r.name].note}" for r in results if ROWS[r.name].note]
    if notes:
        print("\n" + "\n".join(notes), file=sys.stderr)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    r.name: {
                        "chosen": r.chosen,
                        "seconds": r.seconds,
                        "per_query": {
                            m: {f"{k[0]}:{k[1]}": v for k, v in r.per_query[m].items()} for m in TEST_METRICS
                        },
                    }
                    for r in results
                },
                fh,
                indent=1,
            )


if __name__ == "__main__":
    main()
