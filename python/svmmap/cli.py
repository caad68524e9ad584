"""Command line: ``svmmap learn | classify | evaluate | experiment`` (SVM^map style)."""

from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings
from typing import List, Optional

import numpy as np


def _floats(text: str) -> List[float]:
    try:
        return [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="svmmap",
        description="Structural SVMs that optimize ranking metrics (MAP, ...) directly.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    learn = sub.add_parser("learn", help="train a model on a LETOR/svmlight file")
    learn.add_argument("-c", type=float, default=1.0, dest="C", help="trade-off C of OP 1 (default 1)")
    learn.add_argument("-e", type=float, default=1e-3, dest="eps", help="tolerance eps (default 0.001)")
    learn.add_argument("--loss", default="map", help="loss to optimize (default map)")
    learn.add_argument("--max-iter", type=int, default=10000, help="iteration limit (default 10000)")
    learn.add_argument("--relevance-threshold", type=float, default=0.0, help="relevant means label > this (default 0)")
    learn.add_argument("--n-jobs", type=int, default=None, help="threads (default: all cores)")
    learn.add_argument("-v", "--verbose", action="count", default=0, help="print one line per iteration")
    learn.add_argument("train", metavar="TRAIN")
    learn.add_argument("model", metavar="MODEL")

    classify = sub.add_parser("classify", help="score a LETOR/svmlight file with a model")
    classify.add_argument("--n-jobs", type=int, default=None)
    classify.add_argument("test", metavar="TEST")
    classify.add_argument("model", metavar="MODEL")
    classify.add_argument("predictions", metavar="PREDICTIONS")

    evaluate = sub.add_parser("evaluate", help="evaluate predictions (one score per line) against a data file")
    evaluate.add_argument("--metrics", default="map,ndcg@10,mrr@10,roc,p@10")
    evaluate.add_argument("--ties", default="pessimistic", choices=["pessimistic", "input"])
    evaluate.add_argument("--gain", default="exp", choices=["exp", "linear"])
    evaluate.add_argument("--no-relevant", default="skip", choices=["skip", "0", "1"])
    evaluate.add_argument("--relevance-threshold", type=float, default=0.0)
    evaluate.add_argument("data", metavar="DATA")
    evaluate.add_argument("predictions", metavar="PREDICTIONS")

    exp = sub.add_parser(
        "experiment",
        help="train/validate/test on LETOR folds (default: the bundled MQ2008)",
    )
    exp.add_argument("--data", default=None, help="directory with Fold*/{train,vali,test}.txt (default: bundled MQ2008)")
    exp.add_argument("--C", type=_floats, default=[0.1, 1.0, 10.0, 100.0, 1000.0], dest="C_grid", help="comma-separated C grid")
    exp.add_argument("--eps", type=float, default=1e-3)
    exp.add_argument("--loss", default="map")
    exp.add_argument("--folds", default=None, help="comma-separated fold numbers (default: all)")
    exp.add_argument("--n-jobs", type=int, default=None)
    exp.add_argument("-q", "--quiet", action="store_true", help="print only the table")
    return p


def _learn(args: argparse.Namespace) -> None:
    from .estimator import SVMMap
    from .io import load_letor

    X, y, qid = load_letor(args.train)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)

    model = SVMMap(
        C=args.C, loss=args.loss, eps=args.eps, max_iter=args.max_iter,
        relevance_threshold=args.relevance_threshold, n_jobs=args.n_jobs, verbose=args.verbose,
    )
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y, qid=qid)
    for w in caught:
        print(f"svmmap: warning: {w.message}", file=sys.stderr)
    model.save(args.model)
    print(
        f"trained on {model.n_queries_} queries in {time.perf_counter() - start:.2f}s: "
        f"{model.n_iter_} iterations, primal {model.objective_:.6g}, gap {model.gap_:.3g}, "
        f"{model.n_cuts_} active cuts; model written to {args.model}",
        file=sys.stderr,
    )


def _classify(args: argparse.Namespace) -> None:
    from .io import load_letor, load_model, save_predictions
    from .metrics import mean_average_precision

    model = load_model(args.model)
    X, y, qid = load_letor(args.test, n_features=None)
    if X.shape[1] < model.n_features_in_:
        # A test file may simply not mention the last features; they are zero.
        X, y, qid = load_letor(args.test, n_features=model.n_features_in_)
    scores = model.predict(X)
    save_predictions(args.predictions, scores)
    map_ = mean_average_precision(y, scores, qid, relevance_threshold=model.relevance_threshold)
    print(f"{len(scores)} scores written to {args.predictions}; MAP {map_:.4f}", file=sys.stderr)


def _evaluate(args: argparse.Namespace) -> None:
    from .io import load_letor, load_predictions
    from .metrics import evaluate

    _, y, qid = load_letor(args.data)
    scores = load_predictions(args.predictions, n_expected=len(y))
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    no_rel = args.no_relevant if args.no_relevant == "skip" else int(args.no_relevant)
    result = evaluate(
        y, scores, qid, metrics, relevance_threshold=args.relevance_threshold,
        ties=args.ties, gain=args.gain, no_relevant=no_rel,
    )
    width = max(len(m) for m in metrics)
    for m in metrics:
        pq = result.per_query[m]
        print(f"{m:<{width}}  {result[m]:.4f}  ({pq.values.size} queries, {pq.n_undefined} undefined)")


def _experiment(args: argparse.Namespace) -> None:
    from .datasets import letor_folds, mq2008_folds
    from .experiment import format_table, run_folds

    selected = None if args.folds is None else [int(f) for f in args.folds.split(",")]
    if args.data is None:
        folds = (f for f in mq2008_folds() if selected is None or int(f.name[4:]) in selected)
        source = "MQ2008 (bundled)"
    else:
        folds = letor_folds(args.data, folds=selected)
        source = args.data
    say = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    if say:
        say(f"{source}: C grid {', '.join(f'{c:g}' for c in args.C_grid)}, loss {args.loss}, eps {args.eps:g}")
    results = run_folds(folds, args.C_grid, loss=args.loss, eps=args.eps, n_jobs=args.n_jobs, progress=say)
    print(format_table(results))


def main(argv: Optional[List[str]] = None) -> int:
    from ._core import DataFormatError, ModelFormatError

    args = _parser().parse_args(argv)
    handlers = {"learn": _learn, "classify": _classify, "evaluate": _evaluate, "experiment": _experiment}
    try:
        handlers[args.command](args)
    except (DataFormatError, ModelFormatError, OSError, ValueError) as exc:
        print(f"svmmap {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"svmmap {args.command}: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
