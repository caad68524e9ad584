"""``svmmap experiment`` (LETOR folds) and ``svmmap protocol`` (Yue et al.'s comparison of
rankers): the two commands that run the package's evaluation designs."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any, Iterable, List, Optional, Tuple

if TYPE_CHECKING:
    from ..datasets import Fold

__all__ = ["run_experiment", "run_protocol"]


def run_experiment(args: argparse.Namespace) -> None:
    import os

    from ..datasets import MQ2008_FOLDS, letor_folds, mq2008_folds
    from ..ir.experiment import format_table, run_folds

    selected = args.folds
    if args.data is not None and not os.path.isdir(args.data):
        # Said before the run's header line, and in these words rather than the folds
        # reader's "[Errno 20] Not a directory" (or ENOENT) once the header is out.
        what = "does not exist" if not os.path.exists(args.data) else "is not a directory"
        raise ValueError(f"--data: {args.data!r} {what}; give a directory with Fold*/{{train,vali,test}}.txt")
    if selected is not None:
        if args.data is None:
            available = [int(k) for k in MQ2008_FOLDS]
        else:
            available = [
                int(d[4:])
                for d in os.listdir(args.data)
                if d.lower().startswith("fold") and d[4:].isdigit() and os.path.isdir(os.path.join(args.data, d))
            ]
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


def _feature_columns(spec: Optional[str], n_features: int) -> Optional[List[int]]:
    from ..datasets import LETOR4_FEATURE_NAMES, LETOR4_RETRIEVAL_FUNCTIONS

    if spec is None:
        return None
    cols: List[int] = []
    items = [t.strip() for t in spec.split(",")]
    if any(not t for t in items):
        raise ValueError(f"--features: expected comma-separated features without empty items, got {spec!r}")
    named_by: dict = {}  # column -> the item that listed it
    for item in items:
        if item == "retrieval":
            listed = list(LETOR4_RETRIEVAL_FUNCTIONS.values())
        elif item.isdigit():
            if not 1 <= int(item) <= n_features:
                raise ValueError(f"--features: feature {item} is outside 1..{n_features}")
            listed = [int(item) - 1]
        elif item in LETOR4_FEATURE_NAMES:
            listed = [LETOR4_FEATURE_NAMES.index(item)]
        else:
            raise ValueError(
                f"--features: {item!r} is neither a 1-based index, a LETOR 4.0 feature name nor 'retrieval'"
            )
        for col in listed:
            if col in named_by:
                # A feature listed twice ("1,1", or "retrieval" and one of its features) is most
                # likely a typo for another feature; it is refused rather than dropped silently.
                raise ValueError(
                    f"--features: feature {col + 1} is given twice ({named_by[col]!r} and {item!r}); list each once"
                )
            named_by[col] = item
            cols.append(col)
    return cols


def _protocol_methods(spec: str, *, eps: float, n_jobs: Optional[int], bin_thresholds: Optional[int]) -> dict:
    import importlib

    from ..binning import Binner
    from ..estimator import SVMMap
    from ..ir.protocol import SingleFeature

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


def run_protocol(args: argparse.Namespace) -> None:
    result, title = protocol_result(args)
    print(result.table(title=title, show_p=args.show_p))


def protocol_result(args: argparse.Namespace) -> Tuple[Any, str]:
    """The protocol's result for parsed ``svmmap protocol`` arguments, and the data's title
    (benchmarks/protocol_table.py puts both designs of one method list into one table)."""
    import os

    import numpy as np

    from ..datasets import Fold, Split, letor_folds, load_mq2008_docs, mq2008_folds
    from ..io import load_letor
    from ..ir.protocol import DEFAULT_PROTOCOL_C_GRID, given_folds, random_splits

    # The options of the random splits default to None in the parser, so that the folds
    # design can tell them given: it used to ignore --trials, --train, --vali, --test and
    # --seed, printing the folds' table as if they had been read.
    split_options = {
        "--trials": args.trials,
        "--train": args.train,
        "--vali": args.vali,
        "--test": args.test,
        "--seed": args.seed,
    }
    if args.design == "folds":
        given = [flag for flag, value in split_options.items() if value is not None]
        if given:
            raise ValueError(
                f"{given[0]} is for --design random; --design folds trains, validates and tests on the data's own folds"
            )
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
            # The parser's None is the help's default, which is random_splits' own.
            n_trials=50 if args.trials is None else args.trials,
            n_train=10 if args.train is None else args.train,
            n_vali=5 if args.vali is None else args.vali,
            n_test=args.test,
            C_grid=grid,
            random_state=0 if args.seed is None else args.seed,
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
    return result, title
