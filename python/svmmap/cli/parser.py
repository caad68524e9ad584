"""The ``svmmap`` command line's argument parser: one function per command, and the argument
types that check values as argparse reads them (so that the message names the option).

Building the parser imports nothing heavy: ``svmmap --help`` starts without scikit-learn or
SciPy. Every option of a training parameter (its flag, default, type and help) is built from the
core's table (``_core.TRAINING_PARAMETERS``), in ``learn`` and in the other commands alike.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, List

from .. import _core

if TYPE_CHECKING:
    from .._typing import ParameterInfo

__all__ = ["build_parser"]


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
        if v in values:
            # As SVMMapCV(Cs=[1, 1]) is refused: a C given twice would be fitted twice.
            raise argparse.ArgumentTypeError(f"every C once: {t!r} is {v:g}, given twice in {text!r}")
        values.append(v)
    return values


def _loss_list(text: str) -> List[Any]:
    """--losses: comma-separated as --loss is, each item one candidate of the search."""
    spec = _loss_spec(text)
    return [spec] if isinstance(spec, str) else spec


def _number_or_text(text: str) -> Any:
    """An option that Python's own check of its parameter checks (``--prune-margin``): 'none'
    is None, a number an int or float, other text itself, which that check refuses."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return None if text.strip().lower() == "none" else text


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


def _or_none(parse_value: Any, name: str) -> Any:
    """An argparse type: "none" (any case) for Python's None, else ``parse_value``'s value."""

    def parse(text: str) -> Any:
        if text.strip().lower() == "none":
            return None
        return parse_value(text)

    parse.__name__ = f"{name} or 'none'"
    return parse


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds > 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}") from None
    if not (v > 0 and v < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return v


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


def refuse_repeated(values: List[Any], items: List[str], text: str, option: str) -> None:
    """The command line's one rule for a list option: each value once. ``values`` are the
    parsed ``items`` of ``text`` (so "1,01" repeats fold 1); a repeat ran a fold once while it
    was asked twice, or printed a metric twice, as ``SVMMapCV(Cs=[1, 1])`` and ``--runs a a``
    are refused instead."""
    seen: List[Any] = []
    for value, item in zip(values, items):
        if value in seen:
            prefix = f"{option}: " if option else ""
            raise ValueError(f"{prefix}{item!r} is given twice in {text!r}; list each value once")
        seen.append(value)


def _fold_numbers(text: str) -> List[int]:
    """--folds of `svmmap experiment`: comma-separated fold numbers >= 1, at least one, each once."""
    items = [t.strip() for t in text.split(",")]
    if not all(t.isdigit() and int(t) >= 1 for t in items):
        raise argparse.ArgumentTypeError(f"expected comma-separated fold numbers >= 1, got {text!r}")
    folds = [int(t) for t in items]
    try:
        # argparse names the option ("argument --folds: ...").
        refuse_repeated(folds, items, text, "")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return folds


def _loss_spec(text: str):
    """--loss: one loss name, or a comma-separated combination (SVMMap(loss=[...]), one slack
    per loss, with the list's default weights); commas inside max(...) belong to the shared-slack loss. The core checks the
    names and refuses a loss listed twice."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return items[0] if len(items) == 1 else items


def _data_layout_options(parser: argparse.ArgumentParser, data: str, missing_help: str) -> None:
    """--group and --missing: LightGBM's layout and LETOR's Feature-null files."""
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument(
        "--group",
        default=None,
        metavar="FILE",
        help=f"query sizes, one per line (LightGBM's .query file), for a {data} without qid: fields "
        f"(default: {data}.query when it exists)",
    )
    # load_letor's group=False: a stale .query file beside a file with qid: fields is left alone.
    sizes.add_argument(
        "--no-group",
        dest="group",
        action="store_const",
        const=False,
        help=f"read the query ids from the qid: fields, ignoring a {data}.query file",
    )
    parser.add_argument(
        "--missing",
        default="error",
        choices=["error", "nan"],
        help=missing_help,
    )


#: The attribute of the parsed arguments that lists the options given on the command line (by
#: their ``dest``), so that a command can tell an option given with its default value from one
#: left out (``learn --auto -c 1`` is refused, as -c is not read with --auto).
GIVEN = "options_given"


class _StoreOnce(argparse._StoreAction):
    """argparse's ``store``, refusing an option given twice: ``learn -c 1 -c 10`` trained with
    C 10 and said nothing, and a script that appends its options to a default command line
    would silently override them."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        given = namespace.__dict__.setdefault(GIVEN, set())
        if option_string is not None:
            if self.dest in given:
                parser.error(f"{'/'.join(self.option_strings)} is given twice; give it once")
            given.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """The parser of svmmap and of each command (argparse makes the commands' parsers of the
    same class): every plain option is stored once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; ``main`` dispatches on its ``command``."""
    p = _Parser(
        prog="svmmap",
        description="Structural SVMs that optimize ranking metrics (MAP, ...) directly.",
    )

    p.add_argument("--version", action="version", version=f"svmmap {_core.VERSION}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_learn, _classify, _evaluate, _export, _experiment, _fuse, _protocol):
        add(sub)
    return p


def _training_help(parameter: "ParameterInfo") -> str:
    """An option's help: the table's doc line, and its default unless None (whose meaning the
    doc line says)."""
    text = parameter["doc"].replace("``", "").rstrip(".")
    if parameter["kind"] == "loss":
        text += "; comma-separated losses combine, MRR losses weighted 1e-4 and NDCG@k 0.1 against the others unless given as 'W*loss'"
    default = parameter["default"]
    if parameter["kind"].startswith("optional_") or parameter["kind"] == "threads":
        text += "; 'none' for None"
    if isinstance(default, float):
        text += f" (default {default:g})"
    elif default is not None:
        text += f" (default {default})"
    return text


def _training_option(parser: argparse.ArgumentParser, parameter: "ParameterInfo", flag: str = "") -> None:
    """One training parameter's option, all from the core's table (``_core.TRAINING_PARAMETERS``):
    its flag, default, choices and help, and the type of its kind. ``flag`` is a command's own
    spelling where it differs from the table's (``--eps`` of experiment, fuse and protocol,
    which their users type; the table's is ``svmmap learn``'s ``-e``)."""
    types = {
        # Finite on the command line: "-c 1e400" was read as inf and refused as "got inf".
        "real": _finite,
        "count": _at_least(1),
        "optional_count": _or_none(_at_least(1), "integer >= 1"),
        "optional_real": _or_none(_seconds, "seconds > 0"),
        "loss": _loss_spec,
        "choice": str,
        # 'none' as the other options whose default is None take it (the help says None).
        "threads": _or_none(_n_jobs, "thread count"),
    }
    parser.add_argument(
        flag or parameter["flag"],
        type=types[parameter["kind"]],
        default=parameter["default"],
        dest=parameter["name"],
        choices=parameter["choices"] or None,
        help=_training_help(parameter),
    )


def _training_options(parser: argparse.ArgumentParser) -> None:
    """``svmmap learn``'s options: one per training parameter of the core's table."""
    for p in _core.TRAINING_PARAMETERS:
        _training_option(parser, p)


def _table_option(parser: argparse.ArgumentParser, name: str, flag: str = "") -> None:
    """The option of the training parameter ``name`` for a command other than ``learn``, from
    the table as ``learn``'s (its help, default and type are written nowhere else)."""
    (parameter,) = [p for p in _core.TRAINING_PARAMETERS if p["name"] == name]
    _training_option(parser, parameter, flag)


def _learn(sub: Any) -> None:
    """``svmmap learn TRAIN MODEL``: the training parameters and the data layout."""
    learn = sub.add_parser("learn", help="train a model on a LETOR/svmlight file")
    _training_options(learn)
    learn.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="show progress: primal, dual, gap (against its target, eps * C * slack groups), cuts and seconds per "
        "iteration (one status line on a terminal, one line per iteration otherwise); with --auto, a line per "
        "candidate and C fitted on every split, -vv a line per split as well",
    )
    _data_layout_options(
        learn,
        "TRAIN",
        "NULL feature values (LETOR Feature-null files): refuse them (default) or read them as missing; "
        "learn then trains Binner(missing='indicator') + SVMMap, a model with a score of its own for a "
        "missing value",
    )
    learn.add_argument(
        "--bins",
        type=int,
        default=None,
        help="with --missing nan: thresholds per feature of the binner (default 50)",
    )
    learn.add_argument(
        "--auto",
        action="store_true",
        help="search loss (map, pairwise, pairwise:count, graded NDCG at the cutoff of --scoring), "
        "preprocessing (none, standardized, binned, binned with pairwise interactions) and C (SVMMapCV(loss='auto', preprocessing='auto')) and "
        "write the best model refitted on TRAIN; -c and --loss, which it chooses, are then refused",
    )
    learn.add_argument(
        "--vali",
        "--valid",
        dest="vali",
        default=None,
        metavar="FILE",
        help="a validation LETOR/svmlight file (--valid, LightGBM's spelling, is the same option): with --auto, the candidates are scored on it (default: --cv folds "
        "of TRAIN); otherwise its --scoring metric is recorded at every iteration and, with --early-stopping, "
        "watched",
    )
    learn.add_argument(
        "--early-stopping",
        type=_at_least(1),
        default=None,
        metavar="N",
        help="with --vali: stop when the validation --scoring metric has not improved for N iterations and keep "
        "the model of its best iteration, as SVMMap.fit(early_stopping_rounds=N) (default: no early stopping)",
    )
    learn.add_argument(
        "--cv", type=_at_least(2), default=None, help="with --auto and no --vali: query-grouped folds (default 5)"
    )
    learn.add_argument(
        "--scoring",
        default=None,
        help="with --auto or --vali: the validation metric, e.g. map (default ndcg@10)",
    )
    learn.add_argument(
        "--time-budget",
        type=_seconds,
        default=None,
        help="with --auto: seconds for the whole search; no fit starts after them, and the refit of the best "
        "candidate stops after as many (default: no limit)",
    )
    learn.add_argument(
        "--patience",
        # 'none' is SVMMapCV(patience=None): every C of every path is fitted.
        type=_or_none(_at_least(1), "integer >= 1"),
        default=None,
        help="with --auto: a C path stops after this many C values that do not improve its score; 'none' fits "
        "every C (default 1)",
    )
    # SVMMapCV's search parameters, checked by its own checks (learn.py), which name the option.
    losses = "each one loss (default: map, pairwise, pairwise:count, graded NDCG at the cutoff of --scoring)"
    for flag, kind, text in (
        ("--losses", _loss_list, f"the losses to search, comma-separated, {losses}"),
        ("--prune-margin", _number_or_text, "the race's margin; 'none' fits every candidate on every split (0.02)"),
        ("--max-train-queries", _number_or_text, "the most training queries of a split; 'none': all (500)"),
    ):
        learn.add_argument(flag, type=kind, default=None, help=f"with --auto: {text}")
    learn.add_argument("train", metavar="TRAIN", help="training data: a LETOR/svmlight file (.gz too)")
    learn.add_argument("model", metavar="MODEL", help="where to write the model (versioned JSON)")


def _classify(sub: Any) -> None:
    """``svmmap classify TEST MODEL PREDICTIONS``."""
    classify = sub.add_parser("classify", help="score a LETOR/svmlight file with a model")
    _table_option(classify, "n_jobs")
    _data_layout_options(
        classify,
        "TEST",
        "NULL feature values in TEST (LETOR Feature-null files): refuse them (default) or read them as "
        "missing, which a model trained with learn --missing nan scores with its own score for a missing "
        "value; a model without that refuses them",
    )
    classify.add_argument(
        "--trec-run",
        default=None,
        metavar="RUN",
        help="also write the scores as a TREC run (qid Q0 docno rank score tag, in trec_eval's order), "
        "each document named by its LETOR comment '# docid = ...'; evaluate it with svmmap evaluate --run",
    )
    classify.add_argument("--tag", default=None, help="run tag of --trec-run (default svmmap)")
    classify.add_argument("test", metavar="TEST", help="data to score: a LETOR/svmlight file (.gz too)")
    classify.add_argument("model", metavar="MODEL", help="a model written by svmmap learn or save_model")
    classify.add_argument("predictions", metavar="PREDICTIONS", help="where to write one score per line")


def _evaluate(sub: Any) -> None:
    """``svmmap evaluate``: DATA PREDICTIONS, or a TREC run against qrels."""
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
    evaluate.add_argument(
        "--ties",
        default=None,
        choices=["pessimistic", "input"],
        help="how tied scores are ordered (pessimistic: relevant last)",
    )
    evaluate.add_argument("--gain", default=None, choices=["exp", "linear"], help="NDCG gain: 2^rel - 1 (exp) or rel")
    evaluate.add_argument(
        "--no-relevant",
        default=None,
        choices=["skip", "0", "1"],
        help="what a query without a relevant document counts as",
    )
    evaluate.add_argument(
        "--relevance-threshold", type=_finite, default=None, help="a document is relevant when its label is above this"
    )
    evaluate.add_argument("--run", default=None, metavar="RUN", help="a TREC run: qid Q0 docno rank score tag")
    evaluate.add_argument("--qrels", default=None, metavar="QRELS", help="TREC qrels: qid iteration docno relevance")
    evaluate.add_argument("-q", "--per-query", action="store_true", help="also print the value of every query")
    evaluate.add_argument("data", metavar="DATA", nargs="?", help="a LETOR/svmlight file with the labels")
    evaluate.add_argument("predictions", metavar="PREDICTIONS", nargs="?", help="one score per line of DATA")


def _export(sub: Any) -> None:
    """``svmmap export``: a model file as a Solr or Elasticsearch LTR model."""
    export = sub.add_parser(
        "export",
        help="write a model file as a Solr LTR or Elasticsearch LTR model (JSON), or as ONNX",
        description="Linear models become Solr LinearModel / Elasticsearch model/linear; models on "
        "binned features become one regression tree per base feature (Solr "
        "MultipleAdditiveTreesModel / Elasticsearch model/xgboost+json); a scaler is folded into "
        "the weights or thresholds. --to onnx writes an ONNX graph that computes predict (needs "
        "the onnx extra). See svmmap.ir.export.",
    )
    export.add_argument(
        "--to", required=True, choices=["solr", "elasticsearch", "onnx"], help="the search engine, or onnx"
    )
    export.add_argument(
        "--dtype",
        default=None,
        choices=["float64", "float32"],
        help="ONNX only: the type of the graph's input and arithmetic (default float64)",
    )
    export.add_argument("--name", default="svmmap", help="the model's name in the engine (default svmmap)")
    export.add_argument("--store", default=None, help="Solr feature store (default: Solr's default store)")
    export.add_argument(
        "--feature-names",
        default=None,
        help="comma-separated names of the engine's features, one per model input "
        "(default: the names in the model file, else f1,f2,...)",
    )
    export.add_argument("model", metavar="MODEL", help="a model written by svmmap learn or save_model")
    export.add_argument("out", metavar="OUT", help="where to write the JSON or ONNX file (atomically)")


def _experiment(sub: Any) -> None:
    """``svmmap experiment``: train/validate/test on LETOR folds."""
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
    _table_option(exp, "eps", "--eps")
    _table_option(exp, "loss")
    exp.add_argument("--folds", type=_fold_numbers, default=None, help="comma-separated fold numbers (default: all)")
    _table_option(exp, "n_jobs")
    exp.add_argument("-q", "--quiet", action="store_true", help="print only the table")


def _fuse(sub: Any) -> None:
    """``svmmap fuse``: TREC runs fused by SVM-map with query-level cross-validation."""
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
    fuse.add_argument(
        "--strategy",
        default="quantile",
        choices=["quantile", "uniform"],
        help="where the thresholds go (as Binner's strategy)",
    )
    fuse.add_argument(
        "--normalize", default="none", choices=["none", "minmax"], help="per-query score normalization before binning"
    )
    fuse.add_argument("--depth", type=_at_least(1), default=None, help="write at most this many documents per query")
    fuse.add_argument("--tag", default="svmmap-fusion", help="run tag of the output (default svmmap-fusion)")
    fuse.add_argument("--seed", type=_at_least(0), default=0, help="seed of the fold assignments (default 0)")
    _table_option(fuse, "eps", "--eps")
    _table_option(fuse, "n_jobs")
    fuse.add_argument("-q", "--quiet", action="store_true", help="print only the table")


def _protocol(sub: Any) -> None:
    """``svmmap protocol``: Yue et al.'s comparison protocol."""
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
    prot.add_argument(
        "--design",
        default="random",
        choices=["random", "folds"],
        help="random query splits (Yue et al.) or the data's own folds (default random)",
    )
    prot.add_argument(
        "--methods",
        default="map,roc,best",
        help="comma-separated methods, the first is the reference: a loss name for SVMMap(loss=...) "
        "(map, roc, ndcg@10, ...), best/best2/best3 (the best single feature on the training "
        "queries), feature:N (feature N, 1-based), or LABEL=module:callable (called with C=...). "
        "Default map,roc,best",
    )
    prot.add_argument("--trials", type=_at_least(1), default=None, help="random splits (default 50)")
    prot.add_argument("--train", type=_at_least(1), default=None, help="training queries per trial (default 10)")
    prot.add_argument("--vali", type=_at_least(1), default=None, help="validation queries per trial (default 5)")
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
    prot.add_argument("--seed", type=_at_least(0), default=None, help="seed of the random splits (default 0)")
    _table_option(prot, "eps", "--eps")
    prot.add_argument("--show-p", action="store_true", help="add a column of Wilcoxon p-values")
    _table_option(prot, "n_jobs")
    prot.add_argument("-q", "--quiet", action="store_true", help="print only the table")
