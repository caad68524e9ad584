"""``svmmap evaluate``: predictions against a data file, or a TREC run against qrels."""

from __future__ import annotations

import argparse
from typing import List, Optional

from .parser import refuse_repeated

__all__ = ["run_evaluate"]


def _metric_list(text: Optional[str], default: str) -> List[str]:
    metrics = [m.strip() for m in (default if text is None else text).split(",")]
    if any(not m for m in metrics):
        raise ValueError(f"--metrics: expected comma-separated metric names without empty items, got {text!r}")
    refuse_repeated(metrics, metrics, text or default, "--metrics")
    return metrics


def _evaluate_run(args: argparse.Namespace) -> None:
    from ..ir.trec import evaluate_measures, read_qrels, read_run

    if args.run is None or args.qrels is None:
        raise ValueError("--run and --qrels go together: give both")
    if args.data is not None:
        raise ValueError("give either DATA PREDICTIONS or --run RUN --qrels QRELS, not both")
    overridden = [o for o in ("ties", "gain", "no_relevant", "relevance_threshold") if getattr(args, o) is not None]
    if overridden:
        raise ValueError(f"--{overridden[0].replace('_', '-')} is for DATA PREDICTIONS; runs follow --conventions")
    conventions = "trec_eval" if args.conventions is None else args.conventions
    if conventions == "letor":
        raise ValueError('--conventions letor is for DATA PREDICTIONS; runs take "trec_eval" or "svmmap"')
    metrics = _metric_list(args.metrics, "map,ndcg@10,p@10,recall@100,rprec,bpref,mrr")
    run, qrels = read_run(args.run), read_qrels(args.qrels)
    result = evaluate_measures(run, qrels, metrics, conventions=conventions)
    rule = (
        "trec_eval: every query of the run that has judgments"
        if conventions == "trec_eval"
        else "svmmap: only queries with a relevant document"
    )
    print(f"conventions: {conventions} ({rule}; ranks in trec_eval's order)")
    width = max(len(m) for m in metrics)
    for m in metrics:
        # trec_eval's "all" line: the mean over the queries (the sum for counts such as NumRet).
        values = result[m]
        print(f"{m:<{width}}  {values.mean:.4f}  ({len(values)} queries)")
    if args.per_query:
        for m in metrics:
            for q, v in result[m].items():
                print(f"{m}\t{q}\t{v:.4f}")


def run_evaluate(args: argparse.Namespace) -> None:
    if args.run is not None or args.qrels is not None:
        _evaluate_run(args)
        return
    from ..io import load_letor, load_predictions
    from ..metrics import CONVENTIONS, DEFAULT_CONVENTIONS, check_metric_names, evaluate, resolve_conventions

    if args.data is None or args.predictions is None:
        raise ValueError("give DATA PREDICTIONS (a LETOR file and its scores) or --run RUN --qrels QRELS")
    _, y, qid = load_letor(args.data)
    scores = load_predictions(args.predictions, n_expected=len(y), qid=qid)
    metrics = _metric_list(args.metrics, "map,ndcg@10,mrr@10,roc,p@10")
    check_metric_names(metrics, "--metrics")
    no_rel = (
        None
        if args.no_relevant is None
        else (args.no_relevant if args.no_relevant == "skip" else int(args.no_relevant))
    )
    name = DEFAULT_CONVENTIONS if args.conventions is None else args.conventions
    overrides = dict(relevance_threshold=args.relevance_threshold, ties=args.ties, gain=args.gain, no_relevant=no_rel)
    conv = resolve_conventions(name, **overrides)
    result = evaluate(y, scores, qid, metrics, conventions=name, **overrides)
    changed = [k for k, v in conv.items() if v != CONVENTIONS[name][k]]
    scores_as = "float32" if conv["float32"] else "float64"
    print(
        f"conventions: {name}{' with ' + ', '.join(changed) + ' changed' if changed else ''} "
        f"(relevant: label > {conv['relevance_threshold']:g}; ties: {conv['ties']}; gain: {conv['gain']}; "
        f"queries without a relevant document: {conv['no_relevant']}; scores as {scores_as}"
        f"{'; NDCG as Eval-Score-4.0.pl' if conv['letor_ndcg'] else ''})"
    )
    width = max(len(m) for m in metrics)
    # Queries without a relevant document are left out, or counted with the convention's value.
    undefined_as = {"skip": "left out", "0": "counted as 0", "1": "counted as 1"}.get(
        str(conv["no_relevant"]), f"counted as {conv['no_relevant']}"
    )
    for m in metrics:
        pq = result.per_query[m]
        print(
            f"{m:<{width}}  {result[m]:.4f}  ({pq.values.size} queries; {pq.n_undefined} without a relevant "
            f"document, {undefined_as})"
        )
    if args.per_query:
        for m in metrics:
            pq = result.per_query[m]
            for q, v in zip(pq.qids.tolist(), pq.values.tolist()):
                print(f"{m}\t{q}\t{v:.4f}")
