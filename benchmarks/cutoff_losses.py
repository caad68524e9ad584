"""Cutoff losses on queries with many relevant documents: which formulation trains a model?

The papers' NDCG@k (Psi_po) and MRR@k (phi_mrr) losses have w = 0 as their exact optimum when
queries have many relevant documents (issue 24, item 3; docs/guide/losses.md, "Degenerate
models"). This script trains, for every C of a grid, the papers' losses, `map` and the
candidate formulations below, and prints ||w|| and the training and test NDCG@10, MRR@10 and
MAP (binary relevance, label > 0, as the losses see it).

Candidates (prototyped here with a cut source in Python, through svmmap._core.solve):

- "mrr@10:po": MRR@10 with Psi_po (every relevant/non-relevant pair) in place of phi_mrr; the
  argmax is exact (first relevant document after a0 non-relevant ones, the others at their
  constrained peaks). It is still degenerate: at w = 0 the rankings of largest loss leave the
  tail free, as for NDCG@k.
- "ndcg@10:latent", "mrr@10:latent": the latent target of Yu and Joachims (ICML 2009). The
  target is not the one ranking with every relevant document above every non-relevant one but
  the best-scored ranking of loss 0: the m = min(P, k) (NDCG@k) or m = 1 (MRR@k) best-scored
  relevant documents first, the rest in score order. Training is CCCP: each round fixes the
  target at the current scores and solves the convex problem (the Psi_po oracle of the loss for
  ybar), until the objective stops decreasing. Started from w = 0 the first target is the
  ideal ranking and the first round is the degenerate paper's loss, so the rounds start from
  the `map` model at the same C.

"Pairs weighted by their discount difference" is not trained here: the loss sum over misordered
pairs of D_k(rank of the non-relevant) - D_k(rank of the relevant) is, at w = 0, maximized by
every ranking with k non-relevant documents on top whatever the order below rank k (every pair
there weighs 0), the same set as NDCG@k's, so it is degenerate on the same data.

With --shipped, the script trains the shipped loss instead, SVMMap(loss="ndcg@10:latent")
(CCCP rounds in svmmap's training routine, stopping when the objective decreases by less than
a millionth of its value), against `map` at the same C, and prints the table of docs/guide/losses.md (--write
puts it there).

Usage: python benchmarks/cutoff_losses.py [--data synthetic,mq2008] [--C 0.1,1,10,100]
       python benchmarks/cutoff_losses.py --shipped [--write]
       python benchmarks/cutoff_losses.py --check --table guide [--write]   # the guide's table of the prototypes
"""

from __future__ import annotations

import argparse
import itertools
import sys
import warnings
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from svmmap import SVMMap, _core
from svmmap.datasets import load_mq2008, make_ranking
from svmmap.estimator import SkippedQueriesWarning
from svmmap.metrics import per_query

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # noqa: E402

Split = Tuple[np.ndarray, np.ndarray, np.ndarray]


def synthetic(seed: int, n_queries: int = 200, docs: int = 150, n_features: int = 30) -> Tuple[Split, Split]:
    """Binary labels, about a third of 150 documents relevant per query, queries split 1:1."""
    data = make_ranking(
        n_queries,
        docs,
        n_features,
        label_fractions=(0.65, 0.35),
        size_spread=0.0,
        random_state=seed,
        dtype=np.float64,
    )
    queries = np.unique(data.qid)
    train_q = np.random.default_rng(seed).permutation(queries)[: len(queries) // 2]
    train = np.isin(data.qid, train_q)
    return ((data.X[train], data.y[train], data.qid[train]), (data.X[~train], data.y[~train], data.qid[~train]))


def mq2008(fold: int) -> Tuple[Split, Split]:
    return load_mq2008(fold=fold, split="train"), load_mq2008(fold=fold, split="test")


def rr_delta(a0: np.ndarray, k: Optional[int]) -> np.ndarray:
    """1 - RR@k when the first relevant document has a0 non-relevant ones above it."""
    d = 1.0 - 1.0 / (1.0 + a0)
    if k is not None:
        d = np.where(a0 >= k, 1.0, d)
    return d


def mrr_po_argmax(s: np.ndarray, rel: np.ndarray, k: Optional[int]) -> Tuple[float, np.ndarray]:
    """max_y 1 - RR@k(y) + w.(Psi_po(y) - Psi_po(ideal)) by the first relevant document's
    position a0: relevant documents in score order, the first after the a0 best non-relevant
    ones, each other one at max(a0, its peak #{b : s_b > s_g}). Returns (Delta, coef) with
    hinge = Delta - coef.s."""
    pos = np.flatnonzero(rel)
    neg = np.flatnonzero(~rel)
    pos = pos[np.argsort(-s[pos], kind="stable")]
    neg = neg[np.argsort(-s[neg], kind="stable")]
    sp, sn = s[pos], s[neg]
    p, n = len(pos), len(neg)
    scale = 2.0 / (p * n)
    prefix = np.concatenate([[0.0], np.cumsum(sn)])
    peak = np.searchsorted(-sn, -sp, side="left")  # #{b : sn_b > sp_g}
    a0 = np.arange(n + 1)
    above = np.maximum(peak[None, :], a0[:, None])
    above[:, 0] = a0
    h = scale * (prefix[above] - above * sp[None, :])
    total = rr_delta(a0.astype(float), k) + h.sum(axis=1)
    best = int(np.argmax(total))
    ab = above[best]
    coef = np.zeros(len(s))
    coef[pos] = scale * ab
    # Non-relevant b (0-based in score order) is above relevant g when b < above[g].
    counts = np.searchsorted(np.sort(ab), np.arange(n), side="right")
    coef[neg] = -scale * (p - counts)
    return float(rr_delta(np.array([best], dtype=float), k)[0]), coef


def target_coef(anchor: np.ndarray, rel: np.ndarray, m: int) -> np.ndarray:
    """e with e.s = w.(Psi_po(ideal) - Psi_po(y_t)), y_t the latent target at the anchor scores:
    the m best-anchored relevant documents first, the rest by anchor (ties in the ideal order)."""
    pos = np.flatnonzero(rel)
    neg = np.flatnonzero(~rel)
    p, n = len(pos), len(neg)
    scale = 2.0 / (p * n)
    order = pos[np.argsort(-anchor[pos], kind="stable")]
    rest = order[m:]
    e = np.zeros(len(anchor))
    if len(rest) == 0:
        return e
    misordered = anchor[neg][None, :] > anchor[rest][:, None]  # (rest, neg): b above i
    e[rest] = scale * misordered.sum(axis=1)
    e[neg] = -scale * misordered.sum(axis=0)
    return e


def brute_check(rng: np.random.Generator, trials: int = 300) -> None:
    """mrr_po_argmax and target_coef against every ranking of small queries with ties."""
    for _ in range(trials):
        n = int(rng.integers(2, 7))
        s = rng.integers(0, 3, n) * 0.3
        rel = rng.random(n) < 0.5
        rel[0], rel[-1] = True, False
        p, q = int(rel.sum()), int((~rel).sum())
        k = int(rng.integers(1, 4))

        def psi(perm: Sequence[int]) -> float:
            rank = np.empty(n, int)
            rank[list(perm)] = np.arange(n)
            return sum(
                (1 if rank[i] < rank[j] else -1) * (s[i] - s[j])
                for i in np.flatnonzero(rel)
                for j in np.flatnonzero(~rel)
            ) / (p * q)

        best, ideal = -np.inf, psi(sorted(range(n), key=lambda d: not rel[d]))
        for perm in itertools.permutations(range(n)):
            first = next(r for r, d in enumerate(perm) if rel[d])
            # 1 - RR@k written out here, independently of rr_delta.
            loss = 1.0 - (1.0 / (first + 1) if first < k else 0.0)
            best = max(best, loss + psi(perm) - ideal)
        delta, coef = mrr_po_argmax(s, rel, k)
        assert abs(delta - coef @ s - best) < 1e-9, (s, rel, k, delta - coef @ s, best)
        # The target: best psi over rankings whose top m are relevant, against target_coef.
        for m in (1, p):
            top = max(psi(perm) for perm in itertools.permutations(range(n)) if all(rel[d] for d in perm[:m]))
            assert abs((ideal - top) - target_coef(s, rel, m) @ s) < 1e-9
        # At w = 0 the discount-weighted pairs loss has the same rankings of largest loss as
        # 1 - NDCG@k: every ranking whose top min(k, N) documents are non-relevant.
        if q >= k:
            perms = list(itertools.permutations(range(n)))
            pairs = np.array([pairs_loss(rel[list(perm)], k) for perm in perms])
            ndcg = np.array([ndcg_delta(rel[list(perm)], k) for perm in perms])
            assert np.array_equal(pairs >= pairs.max() - 1e-12, ndcg >= ndcg.max() - 1e-12)


def discount(r: np.ndarray, k: int) -> np.ndarray:
    """1/log2(2 + r) for 0-based ranks below k, 0 from k on."""
    return np.where(r < k, 1.0 / np.log2(2.0 + r), 0.0)


def ndcg_delta(ranked: np.ndarray, k: int) -> float:
    """1 - NDCG@k of a ranking given as the relevance of its documents from the top."""
    # The discount written out again, so that the check does not rest on `discount`.
    gains = [1.0 / np.log2(2.0 + r) if r < k else 0.0 for r in range(len(ranked))]
    ideal = sum(gains[: int(ranked.sum())])
    return float(1.0 - sum(g for g, relevant in zip(gains, ranked) if relevant) / ideal)


def pairs_loss(ranked: np.ndarray, k: int) -> float:
    """Sum over misordered pairs (non-relevant b above relevant g) of D_k(b) - D_k(g)."""
    r = np.arange(len(ranked))
    d = discount(r, k)
    return float(sum(d[b] - d[g] for g in r[ranked] for b in r[~ranked] if b < g))


class Latent:
    """The cuts of one loss with a latent target on one training set (a Python cut source)."""

    def __init__(self, base: str, train: Split, threshold: float = 0.0) -> None:
        self.base = base
        X, y, q = train
        self.X = X
        self.queries = []
        for code in np.unique(q):
            rows = np.flatnonzero(q == code)
            rel = y[rows] > threshold
            if rel.any() and not rel.all():
                self.queries.append((rows, rel))
        # The loss-0 rankings have their top m documents relevant: m = 1 for MRR@k (RR = 1),
        # min(P, k) for NDCG@k.
        self.k = int(base.split("@")[1])
        self.m: Callable[[int], int] = (lambda p: 1) if base.startswith("mrr") else (lambda p: min(p, self.k))

    def argmax(self, s: np.ndarray, rel: np.ndarray) -> Tuple[float, np.ndarray]:
        if self.base.startswith("mrr"):
            return mrr_po_argmax(s, rel, self.k)
        delta, coef = _core.oracle_argmax(np.ascontiguousarray(s), rel, self.base)
        return delta, coef

    def cuts(self, w: np.ndarray, anchor: Optional[np.ndarray]) -> Tuple[float, np.ndarray, float]:
        """(sum Delta, sum X^T coef, sum hinge) at w, with the target fixed at the anchor scores
        (or taken at w's own scores when None)."""
        scores = self.X @ w
        anchors = scores if anchor is None else anchor
        b, g, hinge = 0.0, np.zeros(self.X.shape[1]), 0.0
        for rows, rel in self.queries:
            s = scores[rows]
            delta, coef = self.argmax(s, rel)
            coef = coef - target_coef(anchors[rows], rel, self.m(int(rel.sum())))
            b += delta
            g += self.X[rows].T @ coef
            hinge += delta - coef @ s
        return b, g, hinge

    def objective(self, w: np.ndarray, C: float) -> float:
        return 0.5 * float(w @ w) + C * self.cuts(w, None)[2] / len(self.queries)

    def fit(self, C: float, w0: np.ndarray, max_rounds: int = 30) -> Tuple[np.ndarray, List[float]]:
        config = _core.TrainConfig(C=C, loss="map")
        X, n = self.X, len(self.queries)
        y = np.zeros(X.shape[0])
        codes = np.zeros(X.shape[0], dtype=np.int64)
        for i, (rows, rel) in enumerate(self.queries):
            codes[rows] = i
            y[rows] = rel
        problem = _core.problem_summary(y, codes, n, 0.0, config)
        w, history = w0.copy(), [self.objective(w0, C)]
        for _ in range(max_rounds):
            anchor = X @ w

            def source(v: np.ndarray) -> list:
                b, g, _ = self.cuts(v, anchor)
                return [[(b, g)]]

            w_new, _ = _core.solve(source, X.shape[1], config, problem)
            f = self.objective(w_new, C)
            if f >= history[-1] - 1e-6 * max(1.0, abs(history[-1])):
                break
            w = w_new
            history.append(f)
        return w, history


def measures(w: np.ndarray, split: Split) -> Dict[str, float]:
    X, y, q = split
    s = X @ w
    yb = (y > 0).astype(float)
    return {
        "ndcg@10": float(per_query("ndcg@10", yb, s, q).mean()),
        "mrr@10": float(per_query("mrr@10", yb, s, q).mean()),
        "map": float(per_query("map", yb, s, q).mean()),
    }


def svmmap_fit(loss: str, C: float, train: Split) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SVMMap(C=C, loss=loss).fit(train[0], train[1], qid=train[2])
    return np.asarray(model.coef_, dtype=float)


#: The shipped loss's table: each data set with its C grid (the synthetic data needs large C).
SHIPPED = (
    ("synthetic:0", (1.0, 100.0, 1000.0, 10000.0)),
    ("synthetic:1", (1.0, 100.0, 1000.0, 10000.0)),
    ("mq2008:1", (1.0, 10.0, 100.0, 1000.0)),
)


def shipped_table() -> str:
    """`map` against the shipped `ndcg@10:latent` at every C of SHIPPED: the latent model's
    norm, training and test NDCG@10 of both, and the latent fit's CCCP rounds."""
    lines = [
        "| data | C | ‖w‖ map / latent | train NDCG@10 map / latent | test NDCG@10 map / latent | CCCP rounds |",
        "|---|---:|---|---|---|---:|",
    ]
    for data, grid in SHIPPED:
        kind, _, number = data.partition(":")
        train, test = synthetic(int(number)) if kind == "synthetic" else mq2008(int(number))
        label = f"make_ranking, seed {number}" if kind == "synthetic" else f"MQ2008 fold {number}"
        for C in grid:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                w_map = svmmap_fit("map", C, train)
                latent = SVMMap(C=C, loss="ndcg@10:latent").fit(train[0], train[1], qid=train[2])
            w = np.asarray(latent.coef_, dtype=float)
            a_map, a = measures(w_map, train), measures(w, train)
            b_map, b = measures(w_map, test), measures(w, test)
            lines.append(
                f"| {label} | {C:g} | {np.linalg.norm(w_map):.3g} / {np.linalg.norm(w):.3g} | "
                f"{a_map['ndcg@10']:.4f} / {a['ndcg@10']:.4f} | {b_map['ndcg@10']:.4f} / {b['ndcg@10']:.4f} | "
                f"{latent.n_rounds_} |"
            )
            label = ""
    return "\n".join(lines)


#: The values of C the guide's table shows, per kind of data (every C of the grid is fitted).
GUIDE_CS = {"synthetic": [1.0, 100.0, 1000.0, 10000.0], "mq2008": [1.0, 10.0, 100.0, 1000.0]}
GUIDE_LOSSES = ["map", "ndcg@10", "mrr@10", "mrr@10:po", "ndcg@10:latent", "mrr@10:latent"]


def guide_table(results: Dict[str, Dict[float, Dict[str, tuple]]], grid: Sequence[float]) -> str:
    """The table of docs/guide/losses.md from `results[data][C][loss] = (norm of w, training
    measures, test measures, rounds)`: per data set and loss, the guide's values of C joined
    by ' / '; losses whose model is zero at every C of the grid, with the same measures, share
    one row."""
    lines = [
        "| data | loss | C | ‖w‖ | train NDCG@10 | train MRR@10 | test NDCG@10 | test MRR@10 | CCCP rounds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def value(v: float) -> str:
        return "0" if v == 0 else f"{v:.4f}"

    for data, by_c in results.items():
        kind, _, number = data.partition(":")
        label = f"make_ranking, seed {number}" if kind == "synthetic" else f"MQ2008 fold {number}"
        shown = [C for C in GUIDE_CS.get(kind, list(grid)) if C in by_c]
        rows: List[Tuple[List[str], List[str]]] = []  # (losses, cells)
        for loss in GUIDE_LOSSES:
            fits = [by_c[C][loss] for C in grid if loss in by_c.get(C, {})]
            if not fits:
                continue
            if all(f[0] == 0 for f in fits) and all(f[1:3] == fits[0][1:3] for f in fits):
                _, a, b, _ = fits[0]
                cells = [f"every C from {min(grid):g} to {max(grid):g}", "0"]
                cells += [value(a["ndcg@10"]), value(a["mrr@10"]), value(b["ndcg@10"]), value(b["mrr@10"]), ""]
                if rows and rows[-1][1] == cells:
                    rows[-1][0].append(loss)
                else:
                    rows.append(([loss], cells))
                continue
            picked = [by_c[C][loss] for C in shown]
            cells = [" / ".join(f"{C:g}" for C in shown), " / ".join(f"{f[0]:.3g}" for f in picked)]
            for part, measure in ((1, "ndcg@10"), (1, "mrr@10"), (2, "ndcg@10"), (2, "mrr@10")):
                cells.append(" / ".join(f"{f[part][measure]:.4f}" for f in picked))
            cells.append(" / ".join(f[3] for f in picked) if any(f[3] for f in picked) else "")
            rows.append(([loss], cells))
        for i, (losses, cells) in enumerate(rows):
            first = label if i == 0 else ""
            row = [first, ", ".join(f"`{loss}`" for loss in losses), *cells]
            lines.append("|" + "|".join(f" {cell} " if cell else " " for cell in row) + "|")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="synthetic:0,synthetic:1,mq2008:1", help="synthetic:SEED or mq2008:FOLD")
    parser.add_argument("--C", default="0.1,1,10,100,1000,10000")
    parser.add_argument("--rounds", type=int, default=200, help="most CCCP rounds of a latent loss")
    parser.add_argument("--check", action="store_true", help="check the Python oracles by brute force first")
    parser.add_argument(
        "--shipped", action="store_true", help="the shipped ndcg@10:latent against map (the docs' table)"
    )
    parser.add_argument(
        "--table",
        choices=["guide"],
        default=None,
        help="guide: print only the table of docs/guide/losses.md (the per-data tables go to stderr)",
    )
    tables.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.shipped:
        warnings.simplefilter("ignore", SkippedQueriesWarning)
        tables.publish(shipped_table(), __file__, argv, write=args.write, note=args.note)
        return
    if args.write and args.table is None:
        parser.error("--write needs --table guide (the per-data tables are in no block)")
    out = sys.stderr if args.table == "guide" else sys.stdout
    if args.check:
        brute_check(np.random.default_rng(0))
        print("brute-force check passed", file=out)
    grid = [float(c) for c in args.C.split(",")]
    warnings.simplefilter("ignore", SkippedQueriesWarning)
    results: Dict[str, Dict[float, Dict[str, tuple]]] = {}
    for data in args.data.split(","):
        kind, _, number = data.partition(":")
        train, test = synthetic(int(number)) if kind == "synthetic" else mq2008(int(number))
        q = train[2]
        rel = [(train[1][q == k] > 0).sum() for k in np.unique(q)]
        size = [(q == k).sum() for k in np.unique(q)]
        print(
            f"\n{data}: {len(size)} training queries, {np.mean(size):.1f} documents and "
            f"{np.mean(rel):.1f} relevant per query\n",
            file=out,
        )
        print(
            "| loss | C | ‖w‖ | train NDCG@10 | train MRR@10 | train MAP | test NDCG@10 | test MRR@10 "
            "| test MAP | CCCP rounds |",
            file=out,
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", file=out)
        best: Dict[str, Dict[str, float]] = {}
        for C in grid:
            w_map = svmmap_fit("map", C, train)
            rows: List[Tuple[str, np.ndarray, str]] = [("map", w_map, "")]
            for loss in ("ndcg@10", "mrr@10"):
                rows.append((loss, svmmap_fit(loss, C, train), ""))
            # mrr@10 with Psi_po and the ideal target: anchors at w = 0 misorder no pair.
            w_po, _ = Latent("mrr@10", train).fit(C, np.zeros(train[0].shape[1]), max_rounds=1)
            rows.append(("mrr@10:po", w_po, ""))
            for base in ("ndcg@10", "mrr@10"):
                w, history = Latent(base, train).fit(C, w_map, max_rounds=args.rounds)
                rows.append((f"{base}:latent", w, f"{len(history) - 1}"))
            for loss, w, rounds in rows:
                a, b = measures(w, train), measures(w, test)
                results.setdefault(data, {}).setdefault(C, {})[loss] = (float(np.linalg.norm(w)), a, b, rounds)
                for measure, value in a.items():
                    best.setdefault(loss, {})[measure] = max(best.get(loss, {}).get(measure, 0.0), value)
                print(
                    f"| {loss} | {C:g} | {np.linalg.norm(w):.3g} | {a['ndcg@10']:.4f} | {a['mrr@10']:.4f} | "
                    f"{a['map']:.4f} | {b['ndcg@10']:.4f} | {b['mrr@10']:.4f} | {b['map']:.4f} | {rounds} |",
                    flush=True,
                    file=out,
                )
        print("\nBest training value over C:\n", file=out)
        print("| loss | train NDCG@10 | train MRR@10 | train MAP |", file=out)
        print("|---|---:|---:|---:|", file=out)
        for loss, values in best.items():
            print(f"| {loss} | {values['ndcg@10']:.4f} | {values['mrr@10']:.4f} | {values['map']:.4f} |", file=out)
    if args.table == "guide":
        tables.publish(guide_table(results, grid), __file__, argv, write=args.write, note=args.note)


if __name__ == "__main__":
    main()
