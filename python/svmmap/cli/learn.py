"""``svmmap learn`` and ``svmmap classify``: train a model file, score a data file with one."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import TYPE_CHECKING, Any, Optional, TextIO

from .._fit.defaults import LEARN_DEFAULTS
from ._files import data_inputs, refuse_overwriting_inputs, same_file, wrote
from .parser import GIVEN

if TYPE_CHECKING:
    from .._typing import IterationRecord

__all__ = ["run_learn", "run_classify"]


class _ProgressDisplay:
    """``svmmap learn -v``: per-iteration progress on stderr.

    On a terminal one status line is rewritten in place; otherwise (a log file, a pipe) every
    iteration gets its own line. The bar estimates how far the duality gap has come from its
    first value to its target, the fit's tolerance (eps * C * slack groups, from the core), on a
    log scale, which is how cutting-plane gaps shrink.
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


def run_learn(args: argparse.Namespace) -> None:
    # SVMMap.fit's training routine on a BareSVMMap, which has SVMMap's parameters but not
    # its scikit-learn base class: the same checks, warnings and model file, without the
    # second that importing scikit-learn takes (training a small file takes milliseconds).
    from .._files.model_file import svm_document, write_model
    from .._fit.fitted import BinningSpec
    from .._fit.training import TRAINING_PARAMETERS, BareSVMMap, train, train_config
    from .._validation import densified, n_threads
    from ..io import load_letor

    if args.auto and args.early_stopping is not None:
        raise ValueError("--early-stopping is not used by --auto, which chooses C on --vali or --cv folds")
    _refuse_unused_options(args)
    inputs = data_inputs("TRAIN", args.train, args.group)
    if _looks_like_model(args.train):
        # MODEL TRAIN instead of TRAIN MODEL: say so before the reader reports line 1's '{'.
        raise ValueError(
            f"TRAIN {args.train} is an svmmap model file (JSON), not training data; the arguments look swapped "
            "(usage: svmmap learn TRAIN MODEL)"
        )
    if args.vali is not None and _looks_like_model(args.vali):
        raise ValueError(f"--vali {args.vali} is an svmmap model file (JSON), not validation data")
    if args.auto:
        _learn_auto(args)
        return
    if args.early_stopping is not None and args.vali is None:
        raise ValueError("--early-stopping watches the validation file: give it with --vali FILE")
    if args.vali is not None:
        inputs = inputs + data_inputs("VALI", args.vali, None)
    refuse_overwriting_inputs("MODEL", args.model, inputs)
    X, y, qid = load_letor(args.train, group=args.group, missing=args.missing)
    validation = None
    if args.vali is not None:
        # A validation file without a feature the training file has reads as zeros there.
        X_val, y_val, qid_val = load_letor(args.vali, n_features=X.shape[1], missing=args.missing)
        validation = (X_val, y_val, qid_val)
    model = BareSVMMap(**{p["name"]: getattr(args, p["name"]) for p in TRAINING_PARAMETERS})
    # The target is the core's tolerance (eps * C * slack groups), not a restatement of it.
    display = _ProgressDisplay(train_config(model).tolerance) if args.verbose else None
    model.callback = display
    binning = None
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if args.missing == "nan":
                # A linear model has no weight for "missing"; binning gives every feature an
                # indicator column for it, whose weight the SVM learns like any other. This is
                # what Pipeline(Binner(missing="indicator"), SVMMap()) fits, by the same routines.
                from .. import _core
                from .._validation import contiguous

                params = {"n_thresholds": args.bins, "missing": "indicator", "n_jobs": args.n_jobs}
                config = _core.BinnerConfig(n_thresholds=args.bins, missing="indicator")
                # The reader gives float64 rows; a sparse file's are densified, as Binner does.
                advice = "--missing nan bins dense columns: keep only the feature indices used"
                features = contiguous(densified(X, args.train, advice) if hasattr(X, "toarray") else X)
                binning = BinningSpec.fit(features, config, params, n_threads(args.n_jobs))
                if validation is not None:
                    X_val = validation[0]
                    binned_val = binning.binned(
                        contiguous(densified(X_val, args.vali, advice) if hasattr(X_val, "toarray") else X_val),
                        n_threads(args.n_jobs),
                    )
                    validation = (binned_val, *validation[1:])
                train(
                    model,
                    binning.binned(features, n_threads(args.n_jobs)),
                    y,
                    qid,
                    **_validation_args(args, validation),
                )
            else:
                train(model, X, y, qid, **_validation_args(args, validation))
    finally:
        if display is not None:
            display.close()
    for w in caught:
        print(f"svmmap: warning: {w.message}", file=sys.stderr)
    # The callback is a property of this run, not of the model.
    model.callback = None
    write_model(args.model, svm_document(model, binning))
    wrote(args.model)
    # A latent-target loss trains in CCCP rounds; the solver's figures are its last round's.
    rounds = f"{model.n_rounds_} CCCP rounds from map, the last in " if hasattr(model, "n_rounds_") else ""
    if validation is not None:
        metric = args.scoring
        scores = model.evals_result_["valid_0"][metric]
        # best_iteration_ is 0 when no early stopping kept a round (LightGBM's value).
        best = model.best_iteration_
        kept = f"kept iteration {best} of {len(scores)}" if best else f"{len(scores)} iterations"
        value = model.best_score_["valid_0"][metric] if best else scores[-1]
        print(f"validation {metric} {value:.4f} ({kept}) on {args.vali}", file=sys.stderr)
    print(
        f"trained on {model.n_queries_} queries in {time.perf_counter() - start:.2f}s: "
        f"{rounds}{model.n_iter_} iterations, primal {model.objective_:.6g}, gap {model.gap_:.3g}, "
        f"{model.n_cuts_} active cuts; model written to {args.model}",
        file=sys.stderr,
    )


def _refuse_unused_options(args: argparse.Namespace) -> None:
    """Refuses an option that this run would not read (``--bins 10`` without ``--missing nan``
    used to train with no binner and say nothing), as ``--early-stopping`` without ``--vali``
    is refused; then fills in the defaults of the options left out."""
    given: set = getattr(args, GIVEN, set())
    if args.auto:
        for name, option in (("C", "-c"), ("loss", "--loss")):
            if name in given:
                # The search chooses them; the model written used to have C 0.01 and loss
                # pairwise after `--auto -c 5 --loss roc`, without a word.
                raise ValueError(
                    f"{option} is chosen by --auto's search (over loss, preprocessing and C); leave {option} out, "
                    "or train without --auto"
                )
    if args.bins is not None and (args.auto or args.missing != "nan"):
        raise ValueError("--bins sets the binner of --missing nan (without --auto); give --missing nan too")
    search_options = (
        ("cv", "--cv"),
        ("time_budget", "--time-budget"),
        ("patience", "--patience"),
        ("losses", "--losses"),
        ("prune_margin", "--prune-margin"),
        ("max_train_queries", "--max-train-queries"),
    )
    for name, option in search_options:
        if (getattr(args, name) is not None or name in given) and not args.auto:
            raise ValueError(f"{option} is read by --auto only: give --auto too, or leave {option} out")
    if args.cv is not None and args.vali is not None:
        raise ValueError("--cv makes the folds of --auto's search when there is no --vali; give one of them")
    if args.scoring is not None and not args.auto and args.vali is None:
        raise ValueError("--scoring is the validation metric of --vali or --auto; give one of them too")
    if args.scoring is not None:
        # Read before the data is, and named as typed: the refusal named Python's parameter
        # ("scoring must be one of ...", "eval_metric must be one of ...").
        from ..metrics import check_metric_names

        check_metric_names([args.scoring], "--scoring")
    if args.auto:
        # SVMMapCV's own checks, before the data is read, naming the options as typed.
        from .._search.checks import check_max_train_queries, check_prune_margin

        check_prune_margin(args.prune_margin, "--prune-margin")
        check_max_train_queries(args.max_train_queries, "--max-train-queries")
    for name, default in LEARN_DEFAULTS.items():
        # An option given as 'none' (--patience none) keeps its None.
        if getattr(args, name) is None and name not in given:
            setattr(args, name, default)


def _validation_args(args: argparse.Namespace, validation: Any) -> dict:
    """The eval-set arguments of ``train`` for ``--vali`` (and ``--early-stopping``)."""
    if validation is None:
        return {}
    X_val, y_val, qid_val = validation
    return {
        "eval_set": [(X_val, y_val)],
        "eval_qid": [qid_val],
        "eval_metric": args.scoring,
        "early_stopping_rounds": args.early_stopping,
    }


def _looks_like_model(path: str) -> bool:
    """Whether ``path`` is a regular file whose first non-blank character opens a JSON object
    (as every svmmap model file does, and no LETOR file can). Only a regular file is looked
    into: reading ahead in a pipe or FIFO (``<(zcat train.gz)``, /dev/stdin) would take its
    first bytes away from the reader."""
    import os
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            head = f.read(4096).lstrip()
    except OSError:
        return False
    return head.startswith(b"{")


def _learn_auto(args: argparse.Namespace) -> None:
    """``svmmap learn --auto``: SVMMapCV's search over loss, preprocessing and C, and the best
    candidate refitted on TRAIN written as a model file."""
    # The search needs scikit-learn (splits, scaler, Pipeline), so it is imported here only,
    # keeping the plain learn command quick to start.
    from .._fit.training import TRAINING_PARAMETERS
    from ..io import load_letor
    from ..model_selection import SVMMapCV
    from ..persistence import save_model

    if args.missing != "error":
        raise ValueError("--auto searches the preprocessing itself; it does not take --missing nan")
    inputs = data_inputs("TRAIN", args.train, args.group)
    if args.vali is not None:
        inputs = inputs + data_inputs("VALI", args.vali, None)
    refuse_overwriting_inputs("MODEL", args.model, inputs)
    # The training parameters given on the command line, but for the searched C and loss.
    params = {p["name"]: getattr(args, p["name"]) for p in TRAINING_PARAMETERS if p["name"] not in ("C", "loss")}
    if args.losses is not None:
        # SVMMapCV's check of its list (each loss known, none twice), before the data is read.
        from .._search.candidates import candidate_list

        config_of = lambda loss: SVMMapCV(loss=loss, **params)._estimator(1.0)._config()  # noqa: E731
        candidate_list(args.losses, ["none"], config_of, True, listed=True, refuse_latent=lambda: None, name="--losses")
    X, y, qid = load_letor(args.train, group=args.group)
    n_queries = len(set(qid.tolist()))
    if args.vali is None and args.cv > n_queries:
        # Named as typed (the search's refusal says "cv=K folds need ...").
        raise ValueError(f"--cv {args.cv} folds need at least {args.cv} queries; TRAIN has {n_queries}")
    fit_args = {}
    cv: object = args.cv
    if args.vali is not None:
        # As without --auto: a validation file without a feature the training file has reads
        # as zeros there (SVMlight's rule), rather than failing on the feature count.
        X_val, y_val, qid_val = load_letor(args.vali, n_features=X.shape[1])
        cv = "validation"
        fit_args = {"eval_set": [(X_val, y_val)], "eval_qid": [qid_val]}
    search = SVMMapCV(
        loss="auto",
        preprocessing="auto",
        scoring=args.scoring,
        cv=cv,
        patience=args.patience,
        time_budget=args.time_budget,
        losses=args.losses,
        prune_margin=args.prune_margin,
        max_train_queries=args.max_train_queries,
        # -v: a progress line per candidate and C on stderr (a search can take minutes); -vv
        # (verbose=2) a line per split as well, as in Python.
        verbose=min(args.verbose, 2),
        **params,
    )
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y, qid=qid, **fit_args)
    for w in caught:
        print(f"svmmap: warning: {w.message}", file=sys.stderr)
    save_model(search.best_estimator_, args.model)
    wrote(args.model)
    best = search.best_params_
    status = search.cv_results_["status"]
    # The search's own seconds (those --time-budget bounds), and the whole fit's apart: the
    # whole fit's alone read as a search that overran its budget.
    print(
        f"searched {int((status == 'fitted').sum())} of {len(status)} candidates in {search.search_seconds_:.2f}s "
        f"({time.perf_counter() - start:.2f}s with the input checks and the refit; "
        f"the rest: {int((status == 'early stop').sum())} stopped early along C, "
        f"{int((status == 'pruned').sum())} pruned by the race, "
        # A GA2M whose Binner kept no pair on any split is the binned candidate's model: not
        # counted, the counts fell short of the candidates searched (24 of MQ2008's 96).
        f"{int((status == 'no pairs').sum())} without pairs (ga2m), "
        f"{int((status == 'failed').sum())} refused on this data, "
        f"{int((status == 'time budget').sum())} left by the time budget); best: loss {best['loss']}, "
        f"preprocessing {best['preprocessing']}, C {best['C']:g}, mean validation {args.scoring} "
        f"{search.best_score_:.4f}; model written to {args.model}",
        file=sys.stderr,
    )


def run_classify(args: argparse.Namespace) -> None:
    # The model file is scored without building an estimator, so that this command does not
    # import scikit-learn (seconds) for a job that is one matrix-vector product.
    from .._files.model_file import read_model
    from .._validation import n_threads
    from ..io import letor_docids, load_letor, save_predictions
    from ..metrics import mean_average_precision

    inputs = data_inputs("TEST", args.test, args.group) + [("MODEL", args.model)]
    refuse_overwriting_inputs("PREDICTIONS", args.predictions, inputs)
    if args.tag is not None and args.trec_run is None:
        # The tag is the run's (default svmmap, set below): without --trec-run it used to be
        # ignored, exit 0.
        raise ValueError("--tag names the TREC run of --trec-run; give --trec-run RUN too, or leave --tag out")
    if args.tag is None:
        args.tag = "svmmap"
    if args.trec_run is not None:
        refuse_overwriting_inputs("--trec-run", args.trec_run, inputs)
        if args.trec_run == args.predictions or same_file(args.trec_run, args.predictions):
            raise ValueError(f"--trec-run {args.trec_run!r} is PREDICTIONS too; give two output paths")
        # Checked now, so that a bad tag costs nothing and leaves no predictions behind.
        if not args.tag or any(c.isspace() for c in args.tag):
            raise ValueError(f"--tag: the run tag must be one word without spaces, got {args.tag!r}")
    try:
        model = read_model(args.model)
    except Exception as exc:
        # TEST and MODEL given the other way round is the commonest slip: say so, rather than
        # leave the user with a JSON parse error about a LETOR file.
        if _looks_like_model(args.test) and not _looks_like_model(args.model):
            raise type(exc)(
                f"{exc}; the arguments look swapped: {args.test} is a model file and {args.model} is not "
                "(usage: svmmap classify TEST MODEL PREDICTIONS)"
            ) from None
        raise
    if args.missing == "nan" and (model.binning is None or model.binning.missing == "error"):
        # Said before the file is read: otherwise the first NULL was "X[0, 0] is NaN", with
        # neither the file nor the line, and not why no NULL can be scored by this model.
        raise ValueError(
            f"--missing nan reads NULL as a missing value, which only a model with a score for missing values "
            f"(trained by svmmap learn --missing nan) can score; {args.model} has none: leave --missing out "
            "to have every NULL refused with its line"
        )
    # A binned model takes the binner's input features.
    n_expected = model.n_input_features
    layout = {"group": args.group, "missing": args.missing}
    if args.trec_run is None:
        X, y, qid = load_letor(args.test, n_features=None, **layout)
    else:
        X, y, qid, comments = load_letor(args.test, n_features=None, return_comments=True, **layout)
        # The document ids are read before anything is written, so that a file without them
        # fails with no output at all.
        docno = letor_docids(comments, path=args.test)
    if X.shape[1] < n_expected:
        # A test file may simply not mention the last features; they are zero, as SVMlight
        # reads them. Said, since a file of another feature set is scored so too. Widened here
        # rather than read again, so that TEST may be a pipe (/dev/stdin).
        span = f"feature {n_expected}" if X.shape[1] + 1 == n_expected else f"features {X.shape[1] + 1}-{n_expected}"
        print(
            f"svmmap: warning: the model {args.model} has {n_expected} features but no line of {args.test} "
            f"mentions {span}: read as 0 on every line, as SVMlight does",
            file=sys.stderr,
        )
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
    run = None
    if args.trec_run is not None:
        from ..ir.trec import Run

        # from_frame refuses a document listed twice for a query (trec_eval would count it twice).
        frame = {"qid": [str(q) for q in qid.tolist()], "docno": docno, "score": scores}
        run = Run.from_frame(frame, tag=args.tag, name=args.test)
    save_predictions(args.predictions, scores)
    wrote(args.predictions)
    if run is not None:
        from ..ir.trec import write_run

        write_run(args.trec_run, run)
        wrote(args.trec_run)
    map_ = mean_average_precision(y, scores, qid, relevance_threshold=model.relevance_threshold)
    map_trec = mean_average_precision(
        y, scores, qid, relevance_threshold=model.relevance_threshold, conventions="trec_eval"
    )
    print(
        f"{len(scores)} scores written to {args.predictions}; MAP {map_:.4f} (conventions svmmap: queries "
        f"without a relevant document skipped; {map_trec:.4f} with trec_eval's, which counts them 0)"
        + (f"; TREC run written to {args.trec_run}" if run is not None else ""),
        file=sys.stderr,
    )
