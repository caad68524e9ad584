"""Accuracy where features are on raw scales: linear SVM-map, binned SVM-map and LightGBM.

Feature binning (Yue et al. 2007, section 4.2) turns every base feature into a learned
piecewise-constant score. A linear model sees a feature through its scale; a binned model sees
only which of the feature's training quantiles a value exceeds, so any monotone transform of a
feature (a column scaled by 10^3, a score passed through exp or a logistic) leaves it unchanged.
This script measures what that is worth on two kinds of raw-scale data:

mq2008-scaled  MQ2008 (LETOR 4.0, 5 folds) with each of the 46 columns multiplied by a fixed
               factor 10 ** uniform(-2, 3) (numpy.random.default_rng(0)), as raw BM25, LM and
               PageRank scores differ in scale (the rescaling of the solver benchmark).
monotone       make_ranking data (1,000 queries of 40 documents on average, 20 features, half of
               them informative, seed 0) whose columns are each passed through a monotone
               non-linear transform (exp, cube, logistic, signed log, identity in turn, applied
               to the normal scores of the column's ranks) and then scaled like the MQ2008 columns: the features see the hidden utility only through
               curves a linear model cannot follow. The queries are cut into five subsets and
               rotated as in LETOR (train on three, validate on one, test on one).

Rows, each trained on the training split with its hyper-parameter chosen on the validation
split by MAP, then tested:

linear     SVMMap(loss="map"), C in {10^-4, 10^-3, ..., 10^4} (raw scales need large C; the
           binned models, with 50 indicator columns per feature, small C).
binned     Pipeline(Binner(n_thresholds=50), SVMMap(loss="map")), the same C grid.
lambdarank LightGBM's LGBMRanker (objective lambdarank, learning rate 0.05, 7 or 31 leaves, up to
           500 trees with early stopping on validation NDCG@10), leaves chosen by validation MAP.

Every test query of the five folds is pooled; the table shows mean test MAP and NDCG@10 under
svmmap.metrics' default conventions (queries without a relevant document skipped, ties broken
pessimistically, gain 2^label - 1) and the two-sided Wilcoxon signed-rank p-value of the per-query
MAP differences against the binned row (scipy.stats.wilcoxon, zero differences dropped).

Usage:
    python benchmarks/binned_accuracy.py                     # both data sets, all rows
    python benchmarks/binned_accuracy.py --data monotone --json out.json
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
import warnings
from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np
import tables  # benchmarks/tables.py, beside this script
from scipy.stats import norm, rankdata, wilcoxon
from sklearn.pipeline import make_pipeline
from svmmap import Binner, SVMMap
from svmmap._search.selection import choose_C
from svmmap.datasets import Fold, Split, make_ranking, mq2008_folds
from svmmap.estimator import SkippedQueriesWarning
from svmmap.metrics import per_query

C_GRID = (1e-4, 1e-3, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 1e4)
N_THRESHOLDS = 50


def column_factors(n_features: int) -> np.ndarray:
    """The fixed per-column factors of the solver benchmark: 10 ** uniform(-2, 3), seed 0."""
    return 10 ** np.random.default_rng(0).uniform(-2, 3, size=n_features)


def mq2008_scaled() -> Iterator[Fold]:
    factors = column_factors(46)
    for fold in mq2008_folds():
        yield Fold(fold.name, *(Split(s.X * factors, s.y, s.qid) for s in (fold.train, fold.vali, fold.test)))


#: Monotone increasing curves applied to standardized columns (z): a heavy tail like raw term
#: counts, a cube, a saturating logistic like a classifier's probability, a signed log like a
#: log-scaled count, and the identity.
CURVES: List[Tuple[str, Callable[[np.ndarray], np.ndarray]]] = [
    ("exp", lambda z: np.exp(2.0 * z)),
    ("cube", lambda z: z**3),
    ("logistic", lambda z: 1.0 / (1.0 + np.exp(-4.0 * z))),
    ("signed-log", lambda z: np.sign(z) * np.log1p(10.0 * np.abs(z))),
    ("identity", lambda z: z),
]


def monotone_data(n_queries: int = 1000, seed: int = 0) -> Split:
    X, y, qid = make_ranking(
        n_queries=n_queries,
        docs_per_query=40,
        n_features=20,
        informative_fraction=0.5,
        dtype=np.float64,
        random_state=seed,
    )
    # Normal scores of the columns' ranks: every column becomes standard normal whatever its
    # shape in make_ranking (Gaussian, heavy-tailed, many zeros; ties keep equal scores), so
    # that each curve below acts on the same range and the exp curve reaches about e^8, not
    # the exponential of an already heavy-tailed value.
    z = norm.ppf((rankdata(X, axis=0) - 0.5) / X.shape[0])
    out = np.empty_like(X)
    for j in range(X.shape[1]):
        out[:, j] = CURVES[j % len(CURVES)][1](z[:, j])
    return Split(out * column_factors(X.shape[1]), y, qid)


def monotone_folds(n_queries: int = 1000) -> Iterator[Fold]:
    data = monotone_data(n_queries)
    subset = data.qid % 5
    parts = [Split(data.X[subset == k], data.y[subset == k], data.qid[subset == k]) for k in range(5)]

    def joined(ks: List[int]) -> Split:
        return Split(*(np.concatenate([getattr(parts[k], f) for k in ks]) for f in ("X", "y", "qid")))

    for k in range(5):
        # LETOR's rotation: fold k+1 trains on subsets k, k+1, k+2, validates on k+3, tests on k+4.
        train = [(k + i) % 5 for i in range(3)]
        yield Fold(f"Fold{k + 1}", joined(train), parts[(k + 3) % 5], parts[(k + 4) % 5])


def mean_metric(name: str, split: Split, scores: np.ndarray) -> float:
    return float(per_query(name, split.y, scores, split.qid).mean())


def svm_row(binned: bool) -> Callable[[Fold], Tuple[str, Callable[[np.ndarray], np.ndarray]]]:
    def train(fold: Fold) -> Tuple[str, Callable[[np.ndarray], np.ndarray]]:
        def fit_and_score(C: float) -> Tuple[float, Any]:
            svm = SVMMap(C=C, loss="map")
            model = make_pipeline(Binner(n_thresholds=N_THRESHOLDS), svm) if binned else svm
            model.fit(fold.train.X, fold.train.y, **{("svmmap__qid" if binned else "qid"): fold.train.qid})
            return mean_metric("map", fold.vali, model.predict(fold.vali.X)), model

        chosen = choose_C(C_GRID, fit_and_score)
        return f"C={chosen.C:g}", chosen.model.predict

    return train


def lambdarank_row(fold: Fold) -> Tuple[str, Callable[[np.ndarray], np.ndarray]]:
    import lightgbm as lgb

    def groups(split: Split) -> List[int]:
        # LightGBM wants each query's rows together; both data sets keep them so.
        _, starts, counts = np.unique(split.qid, return_index=True, return_counts=True)
        order = np.argsort(starts)
        if not np.all(np.diff(starts[order]) == counts[order][:-1]):
            raise ValueError("rows of a query are not consecutive")
        return list(counts[order])

    best = None
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
            evaluation: Dict[str, Any] = {"eval_X": (fold.vali.X,), "eval_y": (fold.vali.y,)}
        else:
            evaluation = {"eval_set": [(fold.vali.X, fold.vali.y)]}
        model.fit(
            fold.train.X,
            fold.train.y,
            group=groups(fold.train),
            eval_group=[groups(fold.vali)],
            eval_at=[10],
            callbacks=[lgb.early_stopping(50, verbose=False)],
            **evaluation,
        )
        score = mean_metric("map", fold.vali, model.predict(fold.vali.X))
        if best is None or score > best[0]:
            best = (score, f"leaves={leaves},trees={model.best_iteration_}", model.predict)
    assert best is not None
    return best[1], best[2]


ROWS = {"linear": svm_row(False), "binned": svm_row(True), "lambdarank": lambdarank_row}
DATA = {"mq2008-scaled": mq2008_scaled, "monotone": monotone_folds}


def run(data_name: str, rows: List[str]) -> Dict[str, Any]:
    per_row: Dict[str, Dict[str, List[np.ndarray]]] = {r: {"map": [], "ndcg@10": []} for r in rows}
    chosen: Dict[str, List[str]] = {r: [] for r in rows}
    seconds: Dict[str, float] = {r: 0.0 for r in rows}
    for fold in DATA[data_name]():
        for r in rows:
            start = time.perf_counter()
            what, predict = ROWS[r](fold)
            seconds[r] += time.perf_counter() - start
            scores = predict(fold.test.X)
            for m in per_row[r]:
                per_row[r][m].append(per_query(m, fold.test.y, scores, fold.test.qid).values)
            chosen[r].append(what)
            print(f"  {data_name} {fold.name} {r}: {what}", file=sys.stderr, flush=True)
    result: Dict[str, Any] = {}
    reference = np.concatenate(per_row["binned"]["map"]) if "binned" in per_row else None
    for r in rows:
        values = {m: np.concatenate(v) for m, v in per_row[r].items()}
        entry = {m: float(v.mean()) for m, v in values.items()}
        entry["queries"] = int(len(values["map"]))
        entry["chosen"] = chosen[r]
        entry["seconds"] = seconds[r]
        if reference is not None and r != "binned":
            diff = values["map"] - reference
            entry["p_map_vs_binned"] = float(wilcoxon(diff).pvalue) if np.any(diff != 0) else 1.0
        result[r] = entry
    return result


#: The data sets and rows as the README names them.
README_DATA = {"mq2008-scaled": "MQ2008, columns rescaled", "monotone": "make_ranking through monotone curves"}
README_ROWS = {"linear": "linear", "binned": "binned", "lambdarank": "LambdaRank"}


#: The data sets as the benchmarks page names them.
PAGE_DATA = {"mq2008-scaled": "MQ2008, columns rescaled", "monotone": "make_ranking, monotone curves"}


def number(value: float) -> str:
    """A value of C as the page writes it: 0.01, 1000, 10^4, 10^-4."""
    if value > 0 and float(np.log10(value)).is_integer() and (value >= 1e4 or value <= 1e-3):
        return f"10^{int(np.log10(value))}"
    return f"{value:g}"


def p_value(value: float) -> str:
    """Two significant digits, the exponent without its leading zero (5.8e-5)."""
    text = f"{value:.2g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def chosen_cell(chosen: list) -> str:
    """The per-fold choices: 'C = 10, 1000, ...' or, for LightGBM, '31, 7, ... leaves; 16-47 trees'."""
    settings = [dict(part.split("=") for part in c.split(",")) for c in chosen]
    if all("C" in s for s in settings):
        return "C = " + ", ".join(number(float(s["C"])) for s in settings)
    trees = [int(s["trees"]) for s in settings]
    return ", ".join(s["leaves"] for s in settings) + f" leaves; {min(trees)}-{max(trees)} trees"


def print_table(results: dict) -> None:
    """The benchmarks page's table: per data set and model, test MAP and NDCG@10 (the best of
    each bold), the p-value of MAP against the binned model, the choices per fold and the time."""
    print("| data | model | test MAP | test NDCG@10 | p (MAP vs binned) | chosen per fold | seconds (timing) |")
    print("|---|---|---:|---:|---:|---|---:|")
    for name, res in results.items():
        best = {m: max(e[m] for e in res.values()) for m in ("map", "ndcg@10")}
        for i, (r, e) in enumerate(res.items()):
            cells = [f"**{e[m]:.4f}**" if e[m] == best[m] else f"{e[m]:.4f}" for m in ("map", "ndcg@10")]
            p = p_value(e["p_map_vs_binned"]) if "p_map_vs_binned" in e else ""
            data = PAGE_DATA.get(name, name) if i == 0 else ""
            row = [data, README_ROWS.get(r, r), *cells, p, chosen_cell(e["chosen"]), f"{e['seconds']:.1f}"]
            print("|" + "|".join(f" {cell} " if cell else " " for cell in row) + "|")


def print_readme_table(results: dict) -> None:
    """The README's compact table: MAP / NDCG@10 per model, the best of each bold."""
    rows = [r for r in README_ROWS if all(r in res for res in results.values())]
    print("| data | " + " | ".join(f"{README_ROWS[r]} MAP / NDCG@10" for r in rows) + " |")
    print("|---|" + "---:|" * len(rows))
    for name, res in results.items():
        best = {m: max(res[r][m] for r in rows) for m in ("map", "ndcg@10")}

        def cell(value: float, metric: str) -> str:
            text = f"{value:.4f}"
            return f"**{text}**" if value == best[metric] else text

        cells = [f"{cell(res[r]['map'], 'map')} / {cell(res[r]['ndcg@10'], 'ndcg@10')}" for r in rows]
        print(f"| {README_DATA.get(name, name)} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=",".join(DATA), help="comma-separated: " + ", ".join(DATA))
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated: " + ", ".join(ROWS))
    parser.add_argument("--json", help="also write the results to this JSON file")
    parser.add_argument("--readme", action="store_true", help="print the README's compact table instead")
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__, None)
    rows = args.rows.split(",")
    warnings.simplefilter("ignore", SkippedQueriesWarning)
    results = {}
    for name in args.data.split(","):
        results[name] = run(name, rows)
    if args.readme:
        print_readme_table(results)
        return
    print_table(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
