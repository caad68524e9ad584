"""Command line: ``svmmap learn | classify | evaluate | experiment | fuse | protocol`` (SVM^map style)."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import TYPE_CHECKING, Any, Iterable, List, Optional, TextIO

if TYPE_CHECKING:
    from .._typing import IterationRecord
    from ..datasets import Fold

from .. import _core

__all__ = [
    "main",
]

#: The training defaults, owned by the core's TrainConfig (the estimators show the same ones).
_D = _core.TrainConfig.DEFAULTS


def _floats(text: str) -> List[float]:
    """A C grid: comma-separated finite numbers > 0, at least one (argparse names the option)."""
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers > 0 without empty items, got {text!r}")
    values = []
    for t in items:
        try:
            v = float(t)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {t!r} in {text!r}") from None
        if not (v > 0 and v != float("inf")):
            raise argparse.ArgumentTypeError(f"every C must be a finite number > 0, got {t!r} in {text!r}")
        values.append(v)
    return values


def _finite(text: str) -> float:
    """A finite number (a NaN threshold would make every document non-relevant)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return v


def _at_least(lo: int):
    """An argparse type: an integer >= lo (argparse names the option in its error)."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {lo}, got {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"expected an integer >= {lo}, got {v}")
        return v

    parse.__name__ = f"integer >= {lo}"
    return parse


def _n_jobs(text: str) -> int:
    """A thread count under scikit-learn's n_jobs rule; the rule and its message are the core's."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer thread count, got {text!r}") from None
    try:
        _core.n_threads(v)
    except (ValueError, OverflowError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return v


def _fold_numbers(text: str) -> List[int]:
    """--folds of `svmmap experiment`: comma-separated fold numbers >= 1, at least one."""
    items = [t.strip() for t in text.split(",")]
    if not all(t.isdigit() and int(t) >= 1 for t in items):
        raise argparse.ArgumentTypeError(f"expected comma-separated fold numbers >= 1, got {text!r}")
    return [int(t) for t in items]


def _loss_spec(text: str):
    """--loss: one loss name, or a comma-separated combination (SVMMap(loss=[...]), one slack
    per loss); commas inside max(...) belong to the shared-slack loss. The core checks the
    names and refuses a loss listed twice."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return items[0] if len(items) == 1 else items


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (same device and inode: through symbolic and hard links)."""
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _refuse_overwriting_inputs(out_label: str, out: str, inputs: Iterable[tuple]) -> None:
    """An output path that is one of the inputs would replace the input with the output (the
    atomic write succeeds, and the input is gone): refuse before any work is done."""
    for label, path in inputs:
        if _same_file(out, path):
            same = "" if out == path else f" (the same file as {label} {path!r})"
            raise ValueError(
                f"{out_label} {out!r} is the input {label}{same}; refusing to overwrite an input: give another output path"
            )


def _data_layout_options(parser: argparse.ArgumentParser, data: str) -> None:
    """--group and --missing: LightGBM's layout and LETOR's Feature-null files."""
    parser.add_argument(
        "--group",
        default=None,
        metavar="FILE",
        help=f"query sizes, one per line (LightGBM's .query file), for a {data} without qid: fields "
        f"(default: {data}.query when it exists)",
    )
    parser.add_argument(
        "--missing",
        default="error",
        choices=["error", "nan"],
        help="NULL feature values (LETOR Feature-null files): refuse them (default) or read them as "
        "missing; learn then trains Binner(missing='indicator') + SVMMap, a model with a score of "
        "its own for a missing value",
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="svmmap",
        description="Structural SVMs that optimize ranking metrics (MAP, ...) directly.",
    )
    from .. import __version__

    p.add_argument("--version", action="version", version=f"svmmap {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    learn = sub.add_parser("learn", help="train a model on a LETOR/svmlight file")
    learn.add_argument("-c", type=float, default=_D["C"], dest="C", help=f"trade-off C of OP 1 (default {_D['C']:g})")
    learn.add_argument("-e", type=float, default=_D["eps"], dest="eps", help=f"tolerance eps (default {_D['eps']:g})")
    learn.add_argument(
        "--loss",
        type=_loss_spec,
        default=_D["loss"],
        help=f"loss to optimize, or comma-separated losses to combine (default {_D['loss']})",
    )
    learn.add_argument(
        "--max-iter", type=_at_least(1), default=_D["max_iter"], help=f"iteration limit (default {_D['max_iter']})"
    )
    learn.add_argument(
        "--relevance-threshold",
        type=float,
        default=_D["relevance_threshold"],
        help=f"relevant means label > this (default {_D['relevance_threshold']:g})",
    )
    learn.add_argument("--n-jobs", type=_n_jobs, default=None, help="threads (default: all cores)")
    learn.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="show progress: primal, dual, gap (against its target C*eps), cuts and seconds per "
        "iteration (one status line on a terminal, one line per iteration otherwise)",
    )
    _data_layout_options(learn, "TRAIN")
    learn.add_argument(
        "--bins",
        type=int,
        default=50,
        help="with --missing nan: thresholds per feature of the binner (default 50)",
    )
    learn.add_argument("train", metavar="TRAIN")
    learn.add_argument("model", metavar="MODEL")

    classify = sub.add_parser("classify", help="score a LETOR/svmlight file with a model")
    classify.add_argument("--n-jobs", type=_n_jobs, default=None)
    _data_layout_options(classify, "TEST")
    classify.add_argument("test", metavar="TEST")
    classify.add_argument("model", metavar="MODEL")
    classify.add_argument("predictions", metavar="PREDICTIONS")

    evaluate = sub.add_parser(
        "evaluate",
        help="evaluate predictions against a data file, or a TREC run against qrels",
        description="Either DATA PREDICTIONS (a LETOR/svmlight file and one score per line; "
        "svmmap.metrics with named conventions), or --run RUN --qrels QRELS (a TREC run, "
        "evaluated as trec_eval does through ir_measures: map, ndcg@k, p@k, recall@k, rprec, "
        "bpref, mrr, err@k, success@k, judged@k, or ir_measures' and trec_eval's names).",
    )
    evaluate.add_argument(
        "--metrics",
        default=None,
        help="comma-separated metrics (default map,ndcg@10,mrr@10,roc,p@10 for DATA "
        "PREDICTIONS; map,ndcg@10,p@10,recall@100,rprec,bpref,mrr for --run)",
    )
    evaluate.add_argument(
        "--conventions",
        default=None,
        choices=["svmmap", "trec_eval", "letor"],
        help="named conventions (default svmmap for DATA PREDICTIONS, trec_eval for --run); "
        "the options below override single conventions of DATA PREDICTIONS",
    )
    evaluate.add_argument("--ties", default=None, choices=["pessimistic", "input"])
    evaluate.add_argument("--gain", default=None, choices=["exp", "linear"])
    evaluate.add_argument("--no-relevant", default=None, choices=["skip", "0", "1"])
    evaluate.add_argument("--relevance-threshold", type=_finite, default=None)
    evaluate.add_argument("--run", default=None, metavar="RUN", help="a TREC run: qid Q0 docno rank score tag")
    evaluate.add_argument("--qrels", default=None, metavar="QRELS", help="TREC qrels: qid iteration docno relevance")
    evaluate.add_argument("-q", "--per-query", action="store_true", help="also print the value of every query")
    evaluate.add_argument("data", metavar="DATA", nargs="?")
    evaluate.add_argument("predictions", metavar="PREDICTIONS", nargs="?")

    export = sub.add_parser(
        "export",
        help="write a model file as a Solr LTR or Elasticsearch LTR model (JSON)",
        description="Linear models become Solr LinearModel / Elasticsearch model/linear; models on "
        "binned features become one regression tree per base feature (Solr "
        "MultipleAdditiveTreesModel / Elasticsearch model/xgboost+json). See svmmap.ir.export.",
    )
    export.add_argument("--to", required=True, choices=["solr", "elasticsearch"], help="the search engine")
    export.add_argument("--name", default="svmmap", help="the model's name in the engine (default svmmap)")
    export.add_argument("--store", default=None, help="Solr feature store (default: Solr's default store)")
    export.add_argument(
        "--feature-names",
        default=None,
        help="comma-separated names of the engine's features, one per model input "
        "(default: the names in the model file, else f1,f2,...)",
    )
    export.add_argument("model", metavar="MODEL")
    export.add_argument("out", metavar="OUT", help="where to write the JSON (atomically)")

    exp = sub.add_parser(
        "experiment",
        help="train/validate/test on LETOR folds (default: the bundled MQ2008)",
    )
    exp.add_argument(
        "--data", default=None, help="directory with Fold*/{train,vali,test}.txt (default: bundled MQ2008)"
    )
    exp.add_argument(
        "--C", type=_floats, default=[0.1, 1.0, 10.0, 100.0, 1000.0], dest="C_grid", help="comma-separated C grid"
    )
    exp.add_argument("--eps", type=float, default=_D["eps"])
    exp.add_argument("--loss", type=_loss_spec, default=_D["loss"])
    exp.add_argument("--folds", type=_fold_numbers, default=None, help="comma-separated fold numbers (default: all)")
    exp.add_argument("--n-jobs", type=_n_jobs, default=None)
    exp.add_argument("-q", "--quiet", action="store_true", help="print only the table")

    fuse = sub.add_parser(
        "fuse",
        help="fuse TREC runs with SVM-map on binned scores (query-level cross-validation)",
        description=(
            "Learns to combine the scores of several TREC runs into one ranking that maximizes MAP "
            "(Yue et al. 2007, section 4). Every query of the output is scored by a model trained "
            "without it (k folds over queries); C is chosen by an inner cross-validation."
        ),
    )
    fuse.add_argument("--qrels", required=True, metavar="QRELS", help="TREC qrels: qid iteration docno relevance")
    fuse.add_argument("--runs", required=True, nargs="+", metavar="RUN", help="TREC runs: qid Q0 docno rank score tag")
    fuse.add_argument("--out", required=True, metavar="FUSED", help="where to write the fused run")
    fuse.add_argument("--folds", type=_at_least(2), default=5, help="folds over queries (default 5)")
    fuse.add_argument(
        "--C",
        type=_floats,
        default=None,
        dest="C_grid",
        help="comma-separated C grid, chosen by inner cross-validation (default 0.01,0.1,1,10); one value fixes C",
    )
    fuse.add_argument(
        "--inner-folds", type=_at_least(2), default=3, help="folds of the inner cross-validation for C (default 3)"
    )
    fuse.add_argument("--thresholds", type=_at_least(1), default=50, help="thresholds per run (default 50)")
    fuse.add_argument("--strategy", default="quantile", choices=["quantile", "uniform"])
    fuse.add_argument(
        "--normalize", default="none", choices=["none", "minmax"], help="per-query score normalization before binning"
    )
    fuse.add_argument("--depth", type=_at_least(1), default=None, help="write at most this many documents per query")
    fuse.add_argument("--tag", default="svmmap-fusion", help="run tag of the output (default svmmap-fusion)")
    fuse.add_argument("--seed", type=_at_least(0), default=0, help="seed of the fold assignments (default 0)")
    fuse.add_argument("--eps", type=float, default=_D["eps"])
    fuse.add_argument("--n-jobs", type=_n_jobs, default=None)
    fuse.add_argument("-q", "--quiet", action="store_true", help="print only the table")

    prot = sub.add_parser(
        "protocol",
        help="compare rankers with Yue et al.'s protocol (random splits or folds, Wilcoxon, W/L)",
        description=(
            "Repeated random query splits (default 10 training, 5 validation, the rest test, 50 trials) "
            "or given folds; C chosen on validation for every method; per-query AP, wins/losses and "
            "the two-sided Wilcoxon signed-rank test against the first method; a table laid out like "
            "Yue et al. Tables 6-11."
        ),
    )
    prot.add_argument(
        "--data",
        default=None,
        help="a LETOR file (random splits) or a directory with Fold*/{train,vali,test}.txt (default: bundled MQ2008)",
    )
    prot.add_argument("--design", default="random", choices=["random", "folds"])
    prot.add_argument(
        "--methods",
        default="map,roc,best",
        help="comma-separated methods, the first is the reference: a loss name for SVMMap(loss=...) "
        "(map, roc, ndcg@10, ...), best/best2/best3 (the best single feature on the training "
        "queries), feature:N (feature N, 1-based), or LABEL=module:callable (called with C=...). "
        "Default map,roc,best",
    )
    prot.add_argument("--trials", type=_at_least(1), default=50)
    prot.add_argument("--train", type=_at_least(1), default=10, help="training queries per trial (default 10)")
    prot.add_argument("--vali", type=_at_least(1), default=5, help="validation queries per trial (default 5)")
    prot.add_argument("--test", type=_at_least(1), default=None, help="test queries per trial (default: all the rest)")
    prot.add_argument(
        "--C", type=_floats, default=None, dest="C_grid", help="comma-separated C grid (default 0.01,0.1,1,10,100,1000)"
    )
    prot.add_argument(
        "--features",
        default=None,
        help="use only these features: comma-separated 1-based indices, LETOR 4.0 names, or 'retrieval' "
        "(the 25 TF-IDF/BM25/LMIR features of MQ2007/MQ2008)",
    )
    prot.add_argument(
        "--bin",
        type=_at_least(1),
        default=None,
        metavar="N",
        help="bin the features into N thresholds each (Yue et al. 4.2) for the learned methods",
    )
    prot.add_argument("--seed", type=_at_least(0), default=0)
    prot.add_argument("--eps", type=float, default=1e-3)
    prot.add_argument("--show-p", action="store_true", help="add a column of Wilcoxon p-values")
    prot.add_argument("--n-jobs", type=_n_jobs, default=None)
    prot.add_argument("-q", "--quiet", action="store_true", help="print only the table")
    return p


class _ProgressDisplay:
    """``svmmap learn -v``: per-iteration progress on stderr.

    On a terminal one status line is rewritten in place; otherwise (a log file, a pipe) every
    iteration gets its own line. The bar estimates how far the duality gap has come from its
    first value to its target C*eps on a log scale, which is how cutting-plane gaps shrink.
    """

    def __init__(self, target_gap: float, stream: Optional[TextIO] = None, width: int = 20) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.target = target_gap
        self.width = width
        self.first_gap: Optional[float] = None
        self.last_length = 0

    def fraction(self, gap: float) -> float:
        import numpy as np

        if gap <= self.target:
            return 1.0
        first = self.first_gap if self.first_gap is not None else gap
        if first <= self.target or first <= gap:
            return 0.0
        return float(np.clip(np.log(first / gap) / np.log(first / self.target), 0.0, 1.0))

    def __call__(self, record: "IterationRecord") -> bool:
        gap = record["gap"]
        if self.first_gap is None:
            self.first_gap = gap
        done = self.fraction(gap)
        filled = int(round(done * self.width))
        line = (
            f"iter {record['iteration']:4d} [{'#' * filled}{'.' * (self.width - filled)}] {100 * done:3.0f}%  "
            f"primal {record['primal']:.6g}  dual {record['dual']:.6g}  "
            f"gap {gap:.3g} (target {self.target:.3g})  "
            f"cuts {record['n_active']}/{record['n_cuts']}  {record['seconds']:.2f}s"
        )
        if self.tty:
            pad = " " * max(0, self.last_length - len(line))
            self.stream.write("\r" + line + pad)
            self.last_length = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        return False

    def close(self) -> None:
        if self.tty and self.last_length:
            self.stream.write("\n")
            self.stream.flush()


def _learn(args: argparse.Namespace) -> None:
    from ..estimator import SVMMap
    from ..io import load_letor

    _refuse_overwriting_inputs(
        "MODEL", args.model, [("TRAIN", args.train)] + ([("--group", args.group)] if args.group else [])
    )
    X, y, qid = load_letor(args.train, group=args.group, missing=args.missing)
    display = _ProgressDisplay(args.C * args.eps) if args.verbose else None
    model = SVMMap(
        C=args.C,
        loss=args.loss,
        eps=args.eps,
        max_iter=args.max_iter,
        relevance_threshold=args.relevance_threshold,
        n_jobs=args.n_jobs,
        callback=display,
    )
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if args.missing == "nan":
                # A linear model has no weight for "missing"; binning gives every feature an
                # indicator column for it, whose weight the SVM learns like any other.
                from sklearn.pipeline import make_pipeline

                from ..binning import Binner

                binner = Binner(n_thresholds=args.bins, missing="indicator", n_jobs=args.n_jobs)
                make_pipeline(binner, model).fit(X, y, svmmap__qid=qid)
            else:
                model.fit(X, y, qid=qid)
    finally:
        if display is not None:
            display.close()
    for w in caught:
        print(f"svmmap: warning: {w.message}", file=sys.stderr)
    # The callback is a property of this run, not of the model.
    model.set_params(callback=None)
    if args.missing == "nan":
        from ..persistence import save_model

        save_model(make_pipeline(binner, model), args.model)
    else:
        model.save(args.model)
    print(
        f"trained on {model.n_queries_} queries in {time.perf_counter() - start:.2f}s: "
        f"{model.n_iter_} iterations, primal {model.objective_:.6g}, gap {model.gap_:.3g}, "
        f"{model.n_cuts_} active cuts; model written to {args.model}",
        file=sys.stderr,
    )


def _classify(args: argparse.Namespace) -> None:
    # The model file is scored without building an estimator, so that this command does not
    # import scikit-learn (seconds) for a job that is one matrix-vector product.
    from .._model_file import read_model
    from .._validation import n_threads
    from ..io import load_letor, save_predictions
    from ..metrics import mean_average_precision

    _refuse_overwriting_inputs("PREDICTIONS", args.predictions, [("TEST", args.test), ("MODEL", args.model)])
    model = read_model(args.model)
    # A binned model takes the binner's input features.
    n_expected = model.n_input_features
    layout = {"group": args.group, "missing": args.missing}
    X, y, qid = load_letor(args.test, n_features=None, **layout)
    if X.shape[1] < n_expected:
        # A test file may simply not mention the last features; they are zero. Widened here
        # rather than read again, so that TEST may be a pipe (/dev/stdin).
        if hasattr(X, "indptr"):
            X = type(X)((X.data, X.indices, X.indptr), shape=(X.shape[0], n_expected))
        else:
            import numpy as np

            X = np.hstack([X, np.zeros((X.shape[0], n_expected - X.shape[1]), dtype=X.dtype)])
    elif X.shape[1] > n_expected:
        raise ValueError(
            f"{args.test} has features up to index {X.shape[1]}, but the model {args.model} "
            f"was trained on {n_expected} features"
        )
    scores = model.predict(X, n_threads(args.n_jobs))
    save_predictions(args.predictions, scores)
    map_ = mean_average_precision(y, scores, qid, relevance_threshold=model.relevance_threshold)
    map_trec = mean_average_precision(
        y, scores, qid, relevance_threshold=model.relevance_threshold, conventions="trec_eval"
    )
    print(
        f"{len(scores)} scores written to {args.predictions}; MAP {map_:.4f} (conventions svmmap: queries "
        f"without a relevant document skipped; {map_trec:.4f} with trec_eval's, which counts them 0)",
        file=sys.stderr,
    )


def _metric_list(text: Optional[str], default: str) -> List[str]:
    metrics = [m.strip() for m in (default if text is None else text).split(",")]
    if any(not m for m in metrics):
        raise ValueError(f"--metrics: expected comma-separated metric names without empty items, got {text!r}")
    return metrics


def _evaluate_run(args: argparse.Namespace) -> None:
    from .trec import evaluate_measures, read_qrels, read_run

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
        values = result[m]
        mean = sum(values.values()) / len(values) if values else float("nan")
        print(f"{m:<{width}}  {mean:.4f}  ({len(values)} queries)")
    if args.per_query:
        for m in metrics:
            for q, v in result[m].items():
                print(f"{m}\t{q}\t{v:.4f}")


def _evaluate(args: argparse.Namespace) -> None:
    if args.run is not None or args.qrels is not None:
        _evaluate_run(args)
        return
    from ..io import load_letor, load_predictions
    from ..metrics import CONVENTIONS, DEFAULT_CONVENTIONS, evaluate, resolve_conventions

    if args.data is None or args.predictions is None:
        raise ValueError("give DATA PREDICTIONS (a LETOR file and its scores) or --run RUN --qrels QRELS")
    _, y, qid = load_letor(args.data)
    scores = load_predictions(args.predictions, n_expected=len(y), qid=qid)
    metrics = _metric_list(args.metrics, "map,ndcg@10,mrr@10,roc,p@10")
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
    for m in metrics:
        pq = result.per_query[m]
        print(f"{m:<{width}}  {result[m]:.4f}  ({pq.values.size} queries, {pq.n_undefined} undefined)")
    if args.per_query:
        for m in metrics:
            pq = result.per_query[m]
            for q, v in zip(pq.qids.tolist(), pq.values.tolist()):
                print(f"{m}\t{q}\t{v:.4f}")


def _export(args: argparse.Namespace) -> None:
    import json

    from .._text import write_atomic
    from ..persistence import load_model
    from .export import to_elasticsearch, to_solr

    _refuse_overwriting_inputs("OUT", args.out, [("MODEL", args.model)])
    for option, value in (("--name", args.name), ("--store", args.store)):
        if value is not None and not value.strip():
            raise ValueError(f"{option}: the engine needs a non-empty name, got {value!r}")
    model = load_model(args.model)
    names = None if args.feature_names is None else [n.strip() for n in args.feature_names.split(",")]
    if names is not None and any(not n for n in names):
        raise ValueError(
            f"--feature-names: expected comma-separated names without empty items, got {args.feature_names!r}"
        )
    if args.to == "solr":
        doc = to_solr(model, args.name, feature_names=names, store=args.store)
    else:
        if args.store is not None:
            raise ValueError("--store is for Solr; Elasticsearch takes the feature set in the _createmodel URL")
        doc = to_elasticsearch(model, args.name, feature_names=names)
    write_atomic(args.out, json.dumps(doc, indent=2) + "\n")
    print(f"{args.to} model {args.name!r} written to {args.out}", file=sys.stderr)


def _experiment(args: argparse.Namespace) -> None:
    import os

    from ..datasets import MQ2008_FOLDS, letor_folds, mq2008_folds
    from .experiment import format_table, run_folds

    selected = args.folds
    if selected is not None:
        if args.data is None:
            available = [int(k) for k in MQ2008_FOLDS]
        elif os.path.isdir(args.data):
            available = [
                int(d[4:])
                for d in os.listdir(args.data)
                if d.lower().startswith("fold") and d[4:].isdigit() and os.path.isdir(os.path.join(args.data, d))
            ]
        else:
            raise ValueError(f"--data: {args.data!r} is not a directory with Fold*/{{train,vali,test}}.txt")
        missing = [k for k in selected if k not in available]
        if missing:
            raise ValueError(
                f"--folds: fold {missing[0]} is not in {args.data or 'MQ2008'} (folds {', '.join(map(str, sorted(available)))})"
            )
    folds: Iterable[Fold]
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


def _fuse(args: argparse.Namespace) -> None:
    from .fusion import DEFAULT_FUSION_C_GRID, cross_fuse
    from .trec import read_qrels, read_run, write_run

    say = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    _refuse_overwriting_inputs("--out", args.out, [("--qrels", args.qrels)] + [("--runs", r) for r in args.runs])
    for i, a in enumerate(args.runs):
        for b in args.runs[:i]:
            if a == b or _same_file(a, b):
                raise ValueError(f"--runs: {a!r} and {b!r} are the same run file, given twice")
    # Checked now, not after the cross-validation, so that a bad tag costs nothing.
    if not args.tag or any(c.isspace() for c in args.tag):
        raise ValueError(f"--tag: the run tag must be one word without spaces, got {args.tag!r}")
    qrels = read_qrels(args.qrels)
    runs = [read_run(path) for path in args.runs]
    grid = DEFAULT_FUSION_C_GRID if args.C_grid is None else args.C_grid
    if say:
        say(
            f"{len(runs)} runs, {len(qrels.queries())} judged queries; {args.folds} folds over queries, "
            f"C from {', '.join(f'{c:g}' for c in grid)}, {args.thresholds} thresholds per run"
        )
    start = time.perf_counter()
    result = cross_fuse(
        runs,
        qrels,
        n_folds=args.folds,
        random_state=args.seed,
        tag=args.tag,
        progress=say,
        C=grid if len(grid) > 1 else grid[0],
        inner_folds=args.inner_folds,
        n_thresholds=args.thresholds,
        strategy=args.strategy,
        normalize=args.normalize,
        eps=args.eps,
        n_jobs=args.n_jobs,
    )
    write_run(args.out, result.run, depth=args.depth)
    if say:
        say(f"fused run written to {args.out} ({time.perf_counter() - start:.1f}s)")
    print(result.table())


def _feature_columns(spec: Optional[str], n_features: int) -> Optional[List[int]]:
    from ..datasets import LETOR4_FEATURE_NAMES, LETOR4_RETRIEVAL_FUNCTIONS

    if spec is None:
        return None
    cols: List[int] = []
    items = [t.strip() for t in spec.split(",")]
    if any(not t for t in items):
        raise ValueError(f"--features: expected comma-separated features without empty items, got {spec!r}")
    for item in items:
        if item == "retrieval":
            cols.extend(LETOR4_RETRIEVAL_FUNCTIONS.values())
        elif item.isdigit():
            if not 1 <= int(item) <= n_features:
                raise ValueError(f"--features: feature {item} is outside 1..{n_features}")
            cols.append(int(item) - 1)
        elif item in LETOR4_FEATURE_NAMES:
            cols.append(LETOR4_FEATURE_NAMES.index(item))
        else:
            raise ValueError(
                f"--features: {item!r} is neither a 1-based index, a LETOR 4.0 feature name nor 'retrieval'"
            )
    return list(dict.fromkeys(cols))


def _protocol_methods(spec: str, *, eps: float, n_jobs: Optional[int], bin_thresholds: Optional[int]) -> dict:
    import importlib

    from ..binning import Binner
    from ..estimator import SVMMap
    from .protocol import SingleFeature

    def learned(make):
        if bin_thresholds is None:
            return make
        from sklearn.pipeline import Pipeline

        return lambda C: Pipeline([("bin", Binner(n_thresholds=bin_thresholds, n_jobs=n_jobs)), ("svm", make(C))])

    ordinal = {1: "Best Func.", 2: "2nd Best", 3: "3rd Best"}
    methods: dict = {}
    items = [t.strip() for t in spec.split(",")]
    if any(not t for t in items):
        raise ValueError(f"--methods: expected comma-separated methods without empty items, got {spec!r}")

    def add(label: str, item: str, method: Any) -> None:
        if label in methods:
            raise ValueError(f"--methods: {item!r} is given twice (as {label!r})")
        methods[label] = method

    for item in items:
        if "=" in item:
            label, target = (t.strip() for t in item.split("=", 1))
            module, _, attr = target.partition(":")
            if not label or not module or not attr:
                raise ValueError(f"--methods: {item!r}: expected LABEL=module:callable")
            try:
                factory = getattr(importlib.import_module(module), attr)
            except ImportError as exc:
                raise ValueError(f"--methods: {item!r}: cannot import module {module!r} ({exc})") from None
            except AttributeError:
                raise ValueError(f"--methods: {item!r}: module {module!r} has no attribute {attr!r}") from None
            if not callable(factory):
                raise ValueError(f"--methods: {item!r}: {module}:{attr} is not callable")
            add(label, item, learned(lambda C, f=factory: f(C=C)))
        elif item in ("best", "best2", "best3"):
            k = 1 if item == "best" else int(item[-1])
            add(ordinal[k], item, (lambda C, k=k: SingleFeature(rank=k), [1.0]))
        elif item.startswith("feature:"):
            number = item.split(":", 1)[1]
            if not number.isdigit() or int(number) < 1:
                raise ValueError(f"--methods: {item!r}: expected feature:N with N a 1-based feature number")
            j = int(number)
            add(f"feature {j}", item, (lambda C, j=j: SingleFeature(feature=j - 1), [1.0]))
        else:
            # A loss name: check it now rather than after the first trial.
            import numpy as np

            from .. import _core

            try:
                _core.oracle_argmax(np.array([1.0, 0.0]), np.array([True, False]), item)
            except ValueError as exc:
                raise ValueError(f"--methods: {item!r} is not a loss SVMMap knows ({exc})") from None
            add(f"SVM-{item}", item, learned(lambda C, loss=item: SVMMap(C=C, loss=loss, eps=eps, n_jobs=n_jobs)))
    if not methods:
        raise ValueError("--methods: no method given")
    return methods


def _check_feature_methods(spec: str, n_features: int) -> None:
    """feature:N beyond the data's width, found before the first trial rather than in it."""
    for item in (t.strip() for t in spec.split(",")):
        if item.startswith("feature:") and int(item.split(":", 1)[1]) > n_features:
            raise ValueError(f"--methods: {item!r}: the data has {n_features} features (numbered from 1)")


def _protocol(args: argparse.Namespace) -> None:
    import os

    import numpy as np

    from ..datasets import Fold, Split, letor_folds, load_mq2008_docs, mq2008_folds
    from ..io import load_letor
    from .protocol import DEFAULT_PROTOCOL_C_GRID, given_folds, random_splits

    say = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    grid = DEFAULT_PROTOCOL_C_GRID if args.C_grid is None else args.C_grid
    methods = _protocol_methods(args.methods, eps=args.eps, n_jobs=args.n_jobs, bin_thresholds=args.bin)
    source = "MQ2008 (bundled)" if args.data is None else args.data
    start = time.perf_counter()
    if args.design == "random":
        if args.data is None:
            X, y, qid, _ = load_mq2008_docs()
        elif os.path.isdir(args.data):
            fold = next(iter(letor_folds(args.data, folds=None)))
            X, y, qid = (np.concatenate([getattr(fold, p)[i] for p in ("train", "vali", "test")]) for i in range(3))
        else:
            X, y, qid = load_letor(args.data, sparse=False)
        cols = _feature_columns(args.features, X.shape[1])
        if cols is not None:
            X = np.ascontiguousarray(X[:, cols])
        _check_feature_methods(args.methods, X.shape[1])
        if say:
            say(f"{source}: {len(np.unique(qid))} queries, {X.shape[1]} features; methods {', '.join(methods)}")
        result = random_splits(
            X,
            y,
            qid,
            methods,
            n_trials=args.trials,
            n_train=args.train,
            n_vali=args.vali,
            n_test=args.test,
            C_grid=grid,
            random_state=args.seed,
            progress=say,
        )
    else:
        folds = list(mq2008_folds() if args.data is None else letor_folds(args.data))
        cols = _feature_columns(args.features, folds[0].train.X.shape[1])
        if cols is not None:
            folds = [
                Fold(
                    f.name, *(Split(np.ascontiguousarray(s.X[:, cols]), s.y, s.qid) for s in (f.train, f.vali, f.test))
                )
                for f in folds
            ]
        _check_feature_methods(args.methods, folds[0].train.X.shape[1])
        if say:
            say(f"{source}: {len(folds)} folds; methods {', '.join(methods)}")
        result = given_folds(folds, methods, C_grid=grid, progress=say)
    if say:
        say(f"{result.description}; {time.perf_counter() - start:.1f}s")
    title = "MQ2008" if args.data is None else os.path.basename(os.path.normpath(args.data))
    print(result.table(title=title, show_p=args.show_p))


def main(argv: Optional[List[str]] = None) -> int:
    from .._core import DataFormatError, ModelFormatError

    args = _parser().parse_args(argv)
    handlers = {
        "learn": _learn,
        "classify": _classify,
        "evaluate": _evaluate,
        "experiment": _experiment,
        "fuse": _fuse,
        "protocol": _protocol,
        "export": _export,
    }
    try:
        handlers[args.command](args)
    except (DataFormatError, ModelFormatError, OSError, ValueError) as exc:
        print(f"svmmap {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        print(f"svmmap {args.command}: error: out of memory: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Outputs are written atomically at the end, so an interrupted command leaves none.
        print(f"svmmap {args.command}: interrupted; nothing was written", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
