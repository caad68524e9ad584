"""Issue 46 item 1: every way data enters, crossed with every hostile value class.

``WAYS`` is the one list: each entry is a way data enters (an argument of an estimator's
``fit``/``predict``/``score``, an eval set, SVMMapCV's validation set, ``Binner``, the Dask
estimators, a pandas frame, a file reader, the model loader, the command line), the argument
its refusals must name, and the one check it goes through. ``CLASSES`` are the hostile value
classes. The test below feeds every class that applies to the argument's kind to every way
and checks that the value is refused with an error naming the argument the user passed, or,
where the value is legal, accepted with the meaning the entry documents. The table of
``docs/guide/reliability.md`` ("The gate matrix") is rendered from ``WAYS``, and
``test_the_guide_lists_exactly_these_ways`` checks the page holds that rendering, so the table
and the test cannot disagree; ``python tests/robustness/test_gate_matrix.py --write`` rewrites
the page's table after ``WAYS`` changes.

The hostile values, by class (derived from the good value of the argument):

- nan / inf: one entry of the good value made NaN / infinite (for files, the text ``nan`` /
  ``inf`` in a number field);
- huge: finite values beyond what the computation can hold: features and labels times 1e300,
  a query weight of 1e306, a query size of 1e30, ``1e400`` in a file (beyond float64);
- length: one row fewer than the other arguments (for a matrix given alone to ``predict``,
  one column fewer than the model's);
- type: strings where numbers belong (a UTF-16 file for a reader);
- scalar: one number where an array belongs;
- chunks: a Dask array whose row chunks are unknown (``to_dask_array()`` of a DataFrame);
- ids: query ids that cannot be ids (unhashable dicts), query sizes below 1, a NUL byte in an
  id of a file.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "reliability.md"
HEADING = "### The gate matrix"

CLASSES = ("nan", "inf", "huge", "length", "type", "scalar", "chunks", "ids")

#: The classes that apply to each kind of argument. A class left out cannot be given to that
#: kind at all (an unknown chunk size is a property of Dask collections only; a file has no
#: length of its own to get wrong), so it is not a case.
KIND_CLASSES = {
    "matrix": ("nan", "inf", "huge", "length", "type", "scalar"),
    "dask matrix": ("nan", "inf", "huge", "length", "type", "scalar", "chunks"),
    "labels": ("nan", "inf", "huge", "length", "type", "scalar"),
    "qid": ("nan", "inf", "huge", "length", "type", "scalar", "ids"),
    "group": ("nan", "inf", "huge", "length", "type", "scalar", "ids"),
    "weights": ("nan", "inf", "huge", "length", "type", "scalar"),
    "file": ("nan", "inf", "huge", "type", "ids"),
}

#: What a legal value of a class means, shared by the entries that accept it.
LABELS_ARE_THRESHOLDED = "a label of 1e300 is relevant (above `relevance_threshold`), and MAP grades relevance only"
IDS_ARE_ANY_VALUES = "query ids are any hashable values: numbers of any size and strings are ids"
BINNED_BY_THRESHOLDS = "thresholds are fitted on any finite values, and a bin code is the same for 1e300 as for 1"
NO_LENGTH = "without `y` the binner has no other length to match"
SCORES_ARE_FINITE = (
    "a score is w.x: finite scores of 1e300 rank as any others (a score beyond float64 is refused naming the row)"
)

# ----------------------------------------------------------------------------------------------
# The data: 4 queries of 6 documents, two relevant in each, 3 features.

_RNG = np.random.default_rng(46)
X = _RNG.normal(size=(24, 3))
Y = np.tile([1.0, 0.0, 0.0, 1.0, 0.0, 0.0], 4)
Q = np.repeat(np.arange(4), 6)
G = np.full(4, 6)
W = np.ones(24)


def hostile(kind: str, good: Any, cls: str, *, alone: bool = False) -> Any:
    """The hostile value of class ``cls`` for an argument of ``kind`` whose good value is
    ``good``; ``alone``: a matrix that has no other argument to match rows with."""
    good = np.asarray(good)
    if cls in ("nan", "inf"):
        bad = good.astype(np.float64)
        bad.flat[1] = np.nan if cls == "nan" else np.inf
        return bad
    if cls == "huge":
        if kind == "weights":
            return np.full(good.shape, 1e306)
        if kind == "group":
            return np.full(good.shape, 1e30)
        return good.astype(np.float64) * 1e300
    if cls == "length":
        return good[:, :-1] if (alone and good.ndim == 2) else good[:-1]
    if cls == "type":
        # One string per row (distinct), so that where strings are legal (query ids) the
        # queries stay as they were.
        if good.ndim == 2:
            return np.full(good.shape, "abc", dtype=object)
        return np.array([f"s{v}" for v in good.tolist()], dtype=object)
    if cls == "scalar":
        return 1.0
    if cls == "ids":
        if kind == "qid":
            return np.array([{"query": int(v)} for v in good], dtype=object)
        bad = good.copy()
        bad[0], bad[1] = -good[0], good[1] + 2 * good[0]
        return bad
    raise AssertionError(cls)


@dataclass(frozen=True)
class Way:
    """One way data enters: ``call`` feeds a value in place of ``argument``."""

    way: str
    argument: str
    check: str
    kind: str
    call: Callable[[Any], Any] = field(repr=False)
    good: Any = field(default=None, repr=False)
    #: Classes whose values are legal here, with what they mean.
    accepted: Dict[str, str] = field(default_factory=dict)
    #: A regular expression a refusal must match when it cannot start with the argument
    #: (a file's refusal names its path).
    names: str = ""
    alone: bool = False

    @property
    def classes(self) -> Tuple[str, ...]:
        return KIND_CLASSES[self.kind]

    def pattern(self) -> str:
        return self.names or r"(^|[^\w\[])" + re.escape(self.argument) + r"($|[^\w])"


def _quiet(call: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def _svmmap():
    from svmmap import SVMMap

    return SVMMap()


def _fitted():
    return _quiet(lambda: _svmmap().fit(X, Y, qid=Q))


def _cv(**params):
    from svmmap import SVMMapCV

    return SVMMapCV(Cs=[1.0], **params)


def _cv_fitted():
    return _quiet(lambda: _cv(cv=2).fit(X, Y, qid=Q))


def _binner(**params):
    from svmmap import Binner

    return Binner(**params)


def _frame(value):
    import pandas as pd

    return pd.DataFrame(value, columns=["a", "b", "c"][: np.shape(value)[1]]) if np.ndim(value) == 2 else value


def _in_memory_ways() -> list:
    fit = lambda **kw: lambda v: _svmmap().fit(**{"X": X, "y": Y, "qid": Q, **{k: v for k in kw}})  # noqa: E731
    ways = [
        Way("`SVMMap.fit`", "X", "`check_matrix`, then the core's finite check", "matrix", fit(X=1), X),
        Way("`SVMMap.fit`", "y", "`check_labels`", "labels", fit(y=1), Y, {"huge": LABELS_ARE_THRESHOLDED}),
        Way(
            "`SVMMap.fit`",
            "qid",
            "`check_qid`",
            "qid",
            fit(qid=1),
            Q,
            {"huge": IDS_ARE_ANY_VALUES, "type": IDS_ARE_ANY_VALUES},
        ),
        Way(
            "`SVMMap.fit`",
            "group",
            "`query_sizes`",
            "group",
            lambda v: _svmmap().fit(X, Y, group=v),
            G,
        ),
        Way(
            "`SVMMap.fit`",
            "sample_weight",
            "`query_weights`; an overflow in training by `overflow_named`",
            "weights",
            lambda v: _svmmap().fit(X, Y, qid=Q, sample_weight=v),
            W,
        ),
    ]
    return ways


WAYS: list = []


def _build() -> list:
    from svmmap import SVMMap  # noqa: F401  (imported so that a broken build fails here)

    fitted = _fitted()
    cv_fitted = _cv_fitted()
    svm = _svmmap
    ev = lambda v=None, y=None, q=None, g=None: dict(  # noqa: E731
        eval_set=[(X if v is None else v, Y if y is None else y)],
        **({"eval_group": [g]} if g is not None else {"eval_qid": [Q if q is None else q]}),
    )
    val = lambda **kw: _cv(cv="validation").fit(X, Y, qid=Q, **ev(**kw))  # noqa: E731
    any_ids = {"huge": IDS_ARE_ANY_VALUES, "type": IDS_ARE_ANY_VALUES}
    ways = _in_memory_ways() + [
        Way(
            "`SVMMap.fit` eval set",
            "eval_set[0] X",
            "`memory_set` (`check_matrix`, scored once at w = 0)",
            "matrix",
            lambda v: svm().fit(X, Y, qid=Q, **ev(v=v)),
            X,
            {"huge": SCORES_ARE_FINITE},
            names=r"eval_set\[0\] X|eval_set\[0\] has",
        ),
        Way(
            "`SVMMap.fit` eval set",
            "eval_set[0] y",
            "`memory_set` (`check_labels`)",
            "labels",
            lambda v: svm().fit(X, Y, qid=Q, **ev(y=v)),
            Y,
            {"huge": LABELS_ARE_THRESHOLDED},
        ),
        Way(
            "`SVMMap.fit` eval set",
            "eval_qid[0]",
            "`memory_set` (`check_qid`)",
            "qid",
            lambda v: svm().fit(X, Y, qid=Q, **ev(q=v)),
            Q,
            any_ids,
        ),
        Way(
            "`SVMMap.fit` eval set",
            "eval_group[0]",
            "`memory_set` (`query_sizes`)",
            "group",
            lambda v: svm().fit(X, Y, qid=Q, **ev(g=v)),
            G,
        ),
        Way(
            "`SVMMap.predict`",
            "X",
            "`check_matrix`; a score beyond float64 by the core",
            "matrix",
            lambda v: fitted.predict(v),
            X,
            {"huge": SCORES_ARE_FINITE},
            alone=True,
            names=r"(^|\W)X\W|score of row",
        ),
        Way(
            "`SVMMap.score`",
            "X",
            "`check_matrix`; a score beyond float64 by the core",
            "matrix",
            lambda v: fitted.score(v, Y, qid=Q),
            X,
            {"huge": SCORES_ARE_FINITE},
            alone=True,
            names=r"(^|\W)X\W|score of row",
        ),
        Way(
            "`SVMMap.score`",
            "y",
            "`check_labels`",
            "labels",
            lambda v: fitted.score(X, v, qid=Q),
            Y,
            {"huge": LABELS_ARE_THRESHOLDED},
        ),
        Way("`SVMMap.score`", "qid", "`check_qid`", "qid", lambda v: fitted.score(X, Y, qid=v), Q, any_ids),
        Way("`SVMMap.score`", "group", "`query_sizes`", "group", lambda v: fitted.score(X, Y, group=v), G),
        Way(
            "`SVMMap.score`",
            "sample_weight",
            "`query_weights`",
            "weights",
            lambda v: fitted.score(X, Y, qid=Q, sample_weight=v),
            W,
            {"huge": "weights only weigh the mean over queries: 1e306 on every query is the unweighted mean"},
        ),
        Way(
            "`SVMMapCV.fit`", "X", "`check_inputs` (as `SVMMap.fit`)", "matrix", lambda v: _cv(cv=2).fit(v, Y, qid=Q), X
        ),
        Way(
            "`SVMMapCV.fit`",
            "y",
            "`check_inputs` (as `SVMMap.fit`)",
            "labels",
            lambda v: _cv(cv=2, scoring="map").fit(X, v, qid=Q),
            Y,
            {"huge": LABELS_ARE_THRESHOLDED},
        ),
        Way(
            "`SVMMapCV.fit`",
            "qid",
            "`check_inputs` (as `SVMMap.fit`)",
            "qid",
            lambda v: _cv(cv=2).fit(X, Y, qid=v),
            Q,
            any_ids,
        ),
        Way(
            "`SVMMapCV.fit`",
            "group",
            "`check_inputs` (as `SVMMap.fit`)",
            "group",
            lambda v: _cv(cv=2).fit(X, Y, group=v),
            G,
        ),
        Way(
            "`SVMMapCV.fit`",
            "sample_weight",
            "`check_inputs`; an overflow in training by `overflow_named`",
            "weights",
            lambda v: _cv(cv=2).fit(X, Y, qid=Q, sample_weight=v),
            W,
        ),
        Way(
            '`SVMMapCV(cv="validation")` validation set',
            "eval_set[0] X",
            "`memory_set`, as `SVMMap.fit`'s eval set",
            "matrix",
            lambda v: val(v=v),
            X,
            {"huge": SCORES_ARE_FINITE},
            names=r"eval_set\[0\] X|eval_set\[0\] has",
        ),
        Way(
            '`SVMMapCV(cv="validation")` validation set',
            "eval_set[0] y",
            "`memory_set`, as `SVMMap.fit`'s eval set (NDCG grades by the core)",
            "labels",
            lambda v: val(y=v),
            Y,
        ),
        Way(
            '`SVMMapCV(cv="validation")` validation set',
            "eval_qid[0]",
            "`memory_set`, as `SVMMap.fit`'s eval set",
            "qid",
            lambda v: val(q=v),
            Q,
            any_ids,
        ),
        Way(
            '`SVMMapCV(cv="validation")` validation set',
            "eval_group[0]",
            "`memory_set`, as `SVMMap.fit`'s eval set",
            "group",
            lambda v: val(g=v),
            G,
        ),
        Way(
            "`SVMMapCV.predict`",
            "X",
            "`SVMMap.predict`'s",
            "matrix",
            lambda v: cv_fitted.predict(v),
            X,
            {"huge": SCORES_ARE_FINITE},
            alone=True,
            names=r"(^|\W)X\W|score of row",
        ),
        Way(
            "`SVMMapCV.score`",
            "y",
            "`check_labels` (NDCG grades by the core)",
            "labels",
            lambda v: cv_fitted.score(X, v, qid=Q),
            Y,
        ),
        Way("`SVMMapCV.score`", "qid", "`check_qid`", "qid", lambda v: cv_fitted.score(X, Y, qid=v), Q, any_ids),
        Way(
            "`SVMMapCV.score`",
            "sample_weight",
            "`query_weights`",
            "weights",
            lambda v: cv_fitted.score(X, Y, qid=Q, sample_weight=v),
            W,
            {"huge": "weights only weigh the mean over queries: 1e306 on every query is the unweighted mean"},
        ),
        Way(
            "`Binner.fit`",
            "X",
            "`dense_numbers`, then the core's finite check",
            "matrix",
            lambda v: _binner().fit(v),
            X,
            {"huge": BINNED_BY_THRESHOLDS, "length": NO_LENGTH},
        ),
        Way(
            "`Binner(interactions=k).fit`",
            "y",
            "`check_labels`",
            "labels",
            lambda v: _binner(interactions=1).fit(X, v, Q),
            Y,
            {"huge": "pairs are chosen on the labels centred per query, and 1e300 is a label like any other"},
        ),
        Way(
            "`Binner(interactions=k).fit`",
            "qid",
            "`check_qid`",
            "qid",
            lambda v: _binner(interactions=1).fit(X, Y, v),
            Q,
            any_ids,
        ),
        Way(
            "`Binner.transform`",
            "X",
            "`dense_numbers`, then the core's finite check",
            "matrix",
            lambda v: _binner().fit(X).transform(v),
            X,
            {"huge": BINNED_BY_THRESHOLDS},
            alone=True,
        ),
        Way(
            "pandas DataFrame `X` (`SVMMap.fit`)",
            "X",
            "`check_matrix` on its values; its column names by `feature_names_of`",
            "matrix",
            lambda v: svm().fit(_frame(v), Y, qid=Q),
            X,
        ),
        Way(
            "pandas DataFrame `X` (`SVMMap.predict`)",
            "X",
            "`check_feature_names`, then `check_matrix`",
            "matrix",
            lambda v: _fitted_on_frame().predict(_frame(v)),
            X,
            {"huge": SCORES_ARE_FINITE},
            alone=True,
            names=r"(^|\W)X\W|score of row|feature names",
        ),
        Way(
            "`SVMMap.fit` eval set, LightGBM's spelling",
            "eval_X",
            "`memory_set`, its names by `lightgbm_names`",
            "matrix",
            lambda v: svm().fit(X, Y, qid=Q, eval_X=v, eval_y=Y, eval_qid=[Q]),
            X,
            {"huge": SCORES_ARE_FINITE},
            names=r"eval_X\b",
        ),
        Way(
            "`SVMMap.fit` eval set, LightGBM's spelling",
            "eval_y",
            "`memory_set`, its names by `lightgbm_names`",
            "labels",
            lambda v: svm().fit(X, Y, qid=Q, eval_X=X, eval_y=v, eval_qid=[Q]),
            Y,
            {"huge": LABELS_ARE_THRESHOLDED},
        ),
        Way(
            "polars DataFrame `X` (`SVMMap.fit`)",
            "X",
            "`check_matrix` on its values; its column names by `feature_names_of`",
            "matrix",
            lambda v: svm().fit(_polars(v), Y, qid=Q),
            X,
        ),
        Way(
            "`svmmap.metrics.evaluate`",
            "y_true",
            "`check_labels`",
            "labels",
            lambda v: _evaluate(y_true=v),
            Y,
        ),
        Way(
            "`svmmap.metrics.evaluate`",
            "y_score",
            "`one_column` (the rule of `check_labels`), then its finite check",
            "labels",
            lambda v: _evaluate(y_score=v),
            Y,
            {
                "huge": "scores only rank: 1e300 ranks as any other number",
                "inf": "an infinite score ranks first (or last), as trec_eval ranks it",
            },
        ),
        Way("`svmmap.metrics.evaluate`", "qid", "`check_qid`", "qid", lambda v: _evaluate(qid=v), Q, any_ids),
    ]
    return ways


def _polars(value):
    pl = pytest.importorskip("polars")
    return (
        pl.DataFrame(np.asarray(value), schema=["a", "b", "c"][: np.shape(value)[1]]) if np.ndim(value) == 2 else value
    )


def _evaluate(**given):
    from svmmap.metrics import evaluate

    args = {"y_true": Y, "y_score": X[:, 0], "qid": Q, **given}
    return evaluate(args["y_true"], args["y_score"], args["qid"], ["map", "ndcg@10"])


def _fitted_on_frame():
    return _quiet(lambda: _svmmap().fit(_frame(X), Y, qid=Q))


# ----------------------------------------------------------------------------------------------
# Sparse and binned X, the baselines and fusion in memory.

RANKS_BY_FEATURES = "AdaRank weighs each feature by the MAP of its ranking: features of 1e300 rank as any others"
NAN_IS_NOT_RETURNED = "NaN is a run that did not return the document: the Binner's missing indicator"


def _sparse(fmt: str) -> Callable[[Any], Any]:
    """A hostile matrix as a scipy.sparse matrix of format ``fmt``. Strings cannot be held by
    a sparse matrix, so the ``type`` class is complex numbers there, the numbers svmmap cannot
    rank by; a scalar stays a scalar."""
    import scipy.sparse as sp

    def make(value: Any) -> Any:
        value = np.asarray(value)
        if value.ndim != 2:
            return value if value.ndim else float(value)
        if value.dtype == object:
            value = np.full(value.shape, 1 + 2j)
        return getattr(sp, f"{fmt}_matrix")(value)

    return make


def _more_ways() -> list:
    from svmmap import baselines
    from svmmap.ir.fusion import RunFusion

    fitted = _fitted()
    binner = _quiet(lambda: _binner(n_thresholds=4).fit(X))
    binned_fitted = _quiet(lambda: _svmmap().fit(binner.transform(X), Y, qid=Q))
    any_ids = {"huge": IDS_ARE_ANY_VALUES, "type": IDS_ARE_ANY_VALUES}
    score_names = r"(^|\W)X\W|score of row"
    ways = []
    for fmt in ("csr", "csc", "coo"):
        sparse = _sparse(fmt)
        ways += [
            Way(
                f"`SVMMap.fit`, scipy.sparse {fmt.upper()} `X`",
                "X",
                "`check_matrix` (as CSR), then the core's finite check",
                "matrix",
                lambda v, sparse=sparse: _svmmap().fit(sparse(v), Y, qid=Q),
                X,
            ),
            Way(
                f"`SVMMap.predict`, scipy.sparse {fmt.upper()} `X`",
                "X",
                "`check_matrix` (as CSR); a score beyond float64 by the core",
                "matrix",
                lambda v, sparse=sparse: fitted.predict(sparse(v)),
                X,
                {"huge": SCORES_ARE_FINITE},
                alone=True,
                names=score_names,
            ),
        ]
    ways += [
        Way(
            "`SVMMap.fit` of `Binner` codes",
            "X",
            "`Binner.transform`'s; the codes by `check_matrix`",
            "matrix",
            lambda v: _svmmap().fit(binner.transform(v), Y, qid=Q),
            X,
            {"huge": BINNED_BY_THRESHOLDS},
        ),
        Way(
            "`SVMMap.predict` of `Binner` codes",
            "X",
            "`Binner.transform`'s; the codes' width by `check_matrix`",
            "matrix",
            lambda v: binned_fitted.predict(binner.transform(v)),
            X,
            {"huge": BINNED_BY_THRESHOLDS},
            alone=True,
        ),
    ]
    for name in ("SVMAcc", "SVMAcc2", "DORM", "AdaRank"):
        cls = getattr(baselines, name)
        # AdaRank measures every feature by MAP: its y must have a relevant document.
        base = _quiet(lambda cls=cls: cls().fit(X, Y, Q))
        qid_matters = name != "SVMAcc" and name != "SVMAcc2"
        ways += [
            Way(
                f"`baselines.{name}.fit`",
                "X",
                "`check_matrix`",
                "matrix",
                lambda v, c=cls: c().fit(v, Y, Q),
                X,
                {"huge": RANKS_BY_FEATURES} if name == "AdaRank" else {},
            ),
            Way(
                f"`baselines.{name}.fit`",
                "y",
                "`check_labels`",
                "labels",
                lambda v, c=cls: c().fit(X, v, Q),
                Y,
                {"huge": LABELS_ARE_THRESHOLDED},
            ),
            Way(
                f"`baselines.{name}.predict`",
                "X",
                "`check_matrix`",
                "matrix",
                lambda v, b=base: b.predict(v),
                X,
                {"huge": SCORES_ARE_FINITE},
                alone=True,
                names=score_names,
            ),
            Way(
                f"`baselines.{name}.score`",
                "y",
                "`check_labels`",
                "labels",
                lambda v, b=base: b.score(X, v, Q),
                Y,
                {"huge": LABELS_ARE_THRESHOLDED},
            ),
            Way(
                f"`baselines.{name}.score`", "qid", "`check_qid`", "qid", lambda v, b=base: b.score(X, Y, v), Q, any_ids
            ),
        ]
        if qid_matters:
            ways.append(
                Way(
                    f"`baselines.{name}.fit`",
                    "qid",
                    "`check_qid`",
                    "qid",
                    lambda v, c=cls: c().fit(X, Y, v),
                    Q,
                    any_ids,
                )
            )
    for name in ("QueryMinMaxScaler", "QueryPercentileTransformer"):
        cls = getattr(baselines, name)
        ways += [
            Way(
                f"`baselines.{name}.fit_transform`",
                "X",
                "`dense_numbers`, then its finite check",
                "matrix",
                lambda v, c=cls: c().fit_transform(v, qid=Q),
                X,
                {"huge": "the transform is per query and feature: values of 1e300 scale as any others"},
            ),
            Way(
                f"`baselines.{name}.fit_transform`",
                "qid",
                "`check_qid`",
                "qid",
                lambda v, c=cls: c().fit_transform(X, qid=v),
                Q,
                any_ids,
            ),
        ]
    fusion = lambda: RunFusion(C=1.0, n_thresholds=4)  # noqa: E731
    fused = _quiet(lambda: fusion().fit_features(X, Y, Q))
    ways += [
        Way(
            "`svmmap.ir.fusion.RunFusion.fit_features`",
            "X",
            "`Binner.fit`'s (`dense_numbers`, the core's finite check)",
            "matrix",
            lambda v: fusion().fit_features(v, Y, Q),
            X,
            {"nan": NAN_IS_NOT_RETURNED, "huge": BINNED_BY_THRESHOLDS},
        ),
        Way(
            "`svmmap.ir.fusion.RunFusion.fit_features`",
            "y",
            "`check_labels`",
            "labels",
            lambda v: fusion().fit_features(X, v, Q),
            Y,
            {"huge": LABELS_ARE_THRESHOLDED},
        ),
        Way(
            "`svmmap.ir.fusion.RunFusion.fit_features`",
            "qid",
            "`check_qid`",
            "qid",
            lambda v: fusion().fit_features(X, Y, v),
            Q,
            any_ids,
        ),
        Way(
            "`svmmap.ir.fusion.RunFusion.predict_features`",
            "X",
            "`Binner.transform`'s",
            "matrix",
            lambda v: fused.predict_features(v),
            X,
            {"nan": NAN_IS_NOT_RETURNED, "huge": BINNED_BY_THRESHOLDS},
            alone=True,
        ),
    ]
    return ways


# ----------------------------------------------------------------------------------------------
# Files: each reader gets a file whose number or id field is hostile, or a UTF-16 file.

LETOR = "1 qid:1 1:0.5 2:0.25\n0 qid:1 1:0.125 2:VALUE\n1 qid:2 1:0.5 2:0.5\n0 qid:ID 1:0.25 2:0.75\n"
RUN = "1 Q0 d1 1 2.5 t\n1 Q0 d2 2 VALUE t\nID Q0 d3 1 1.5 t\n"
QRELS = "1 0 d1 1\n1 0 d2 VALUE\nID 0 d3 1\n"
QUERY = "2\nVALUE\nID\n"
PREDICTIONS = "0.5\nVALUE\n0.25\n"
VALUES = {"nan": "nan", "inf": "inf", "huge": "1e400"}


def _file_text(template: str, cls: str, number: str = "1", ident: str = "3") -> bytes:
    value = VALUES.get(cls, number)
    text = template.replace("VALUE", value).replace("ID", "3\x00" if cls == "ids" else ident)
    return text.encode("utf-16") if cls == "type" else text.encode()


def _model_text(cls: str) -> bytes:
    value = {"nan": "NaN", "inf": "Infinity", "huge": "1e400"}.get(cls, "0.5")
    # A model's ids are its feature names: two of one name cannot be told apart in an export.
    names = ', "feature_names": ["a", "a"]' if cls == "ids" else ""
    text = '{"format": "svmmap-model", "version": 1, "n_features": 2, "coef": [0.25, %s]%s}\n' % (value, names)
    return text.encode("utf-16") if cls == "type" else text.encode()


def _reader(read: Callable[[Path], Any], suffix: str, content: Callable[[str], bytes]) -> Callable[[Any], Any]:
    def call(cls: str) -> Any:
        path = _TMP / f"input-{cls}{suffix}"
        path.write_bytes(content(cls))
        return read(path)

    return call


def _cli(argv: Callable[[Path], list], suffix: str, content: Callable[[str], bytes]) -> Callable[[Any], Any]:
    """A command line whose file argument holds the hostile text: its exit status must be 2 and
    its one line of error (turned into a ValueError here) must name the file."""

    def call(cls: str) -> Any:
        from svmmap.cli import main

        path = _TMP / f"cli-{cls}{suffix}"
        path.write_bytes(content(cls))
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main([str(a) for a in argv(path)])
        if code != 0:
            text = err.getvalue().strip()
            assert code == 2 and len(text.splitlines()) == 1, (code, text)
            raise ValueError(text)
        return code

    return call


_TMP = Path(".")


def _file_ways() -> list:
    from svmmap import load_model
    from svmmap.io import load_letor, load_predictions, read_group_file
    from svmmap.ir.trec import read_qrels, read_run

    letor = lambda c: _file_text(LETOR, c)  # noqa: E731
    named = r"input-\w+(\.\w+)?:\d+|input-\w+(\.\w+)?\b"
    cli_named = r"cli-\w+(\.\w+)?"
    model_file = _TMP / "model.json"
    return [
        Way(
            "`svmmap.io.load_letor`",
            "the file",
            "`open_text`, then the LETOR reader's line rules",
            "file",
            _reader(load_letor, ".txt", letor),
            names=named,
        ),
        Way(
            "`svmmap.io.read_group_file`",
            "the `.query` file",
            "`open_text` through `text_lines` and `integer`",
            "file",
            _reader(read_group_file, ".query", lambda c: _file_text(QUERY, c, "2", "-1")),
            names=named,
        ),
        Way(
            "`svmmap.io.load_predictions`",
            "the file",
            "`open_text` through `text_lines` and `number`",
            "file",
            _reader(
                load_predictions, ".txt", lambda c: _file_text(PREDICTIONS, c) if c != "ids" else b"0.5\n0.25\x00\n"
            ),
            names=named,
        ),
        Way(
            "`svmmap.ir.read_run`",
            "the file",
            "`open_text` through `text_lines`, `split_fields` and `check_ids`",
            "file",
            _reader(read_run, ".run", lambda c: _file_text(RUN, c)),
            {"huge": "trec_eval reads scores as C floats: 1e400 is +inf, ranked first"},
            names=named,
        ),
        Way(
            "`svmmap.ir.read_qrels`",
            "the file",
            "`open_text` through `text_lines`, `split_fields` and `integer`",
            "file",
            _reader(read_qrels, ".qrels", lambda c: _file_text(QRELS, c)),
            names=named,
        ),
        Way(
            "`svmmap.load_model`",
            "the model file",
            "`open_text`, the parse's memory, `ModelFile::check` and `check_document`",
            "file",
            _reader(load_model, ".json", _model_text),
            names=named,
        ),
        Way(
            "`svmmap learn`",
            "TRAIN",
            "`load_letor`'s",
            "file",
            _cli(lambda p: ["learn", p, _TMP / "learned.json"], ".txt", letor),
            names=cli_named,
        ),
        Way(
            "`svmmap classify`",
            "TEST",
            "`load_letor`'s",
            "file",
            _cli(lambda p: ["classify", p, model_file, _TMP / "scores.txt"], ".txt", letor),
            names=cli_named,
        ),
        Way(
            "`svmmap classify`",
            "MODEL",
            "`load_model`'s",
            "file",
            _cli(lambda p: ["classify", _TMP / "test.txt", p, _TMP / "scores.txt"], ".json", _model_text),
            names=cli_named,
        ),
        Way(
            "`svmmap evaluate`",
            "PREDICTIONS",
            "`load_predictions`'s",
            "file",
            _cli(
                lambda p: ["evaluate", _TMP / "test.txt", p],
                ".txt",
                lambda c: _file_text(PREDICTIONS + "0.125\n", c) if c != "ids" else b"0.5\n0.25\x00\n0.5\n0.125\n",
            ),
            names=cli_named,
        ),
        Way(
            "`svmmap learn --vali`",
            "VALI",
            "`load_letor`'s",
            "file",
            _cli(lambda p: ["learn", "--vali", p, _TMP / "test.txt", _TMP / "learned.json"], ".txt", letor),
            names=cli_named,
        ),
        Way(
            "`svmmap evaluate --run`",
            "RUN",
            "`read_run`'s",
            "file",
            _cli(
                lambda p: ["evaluate", "--run", p, "--qrels", _TMP / "good.qrels"], ".run", lambda c: _file_text(RUN, c)
            ),
            {"huge": "trec_eval reads scores as C floats: 1e400 is +inf, ranked first"},
            names=cli_named,
        ),
        Way(
            "`svmmap fuse --runs`",
            "RUN",
            "`read_run`'s",
            "file",
            _cli(
                lambda p: [
                    "fuse",
                    "--qrels",
                    _TMP / "good.qrels",
                    "--runs",
                    p,
                    _TMP / "good.run",
                    "--C",
                    "1",
                    "--folds",
                    "2",
                    "--out",
                    _TMP / "fused.run",
                    "--quiet",
                ],
                ".run",
                lambda c: _file_text(RUN, c),
            ),
            {"huge": "trec_eval reads scores as C floats: 1e400 is +inf, ranked first"},
            names=cli_named,
        ),
        Way(
            "`svmmap fuse --qrels`",
            "QRELS",
            "`read_qrels`'s",
            "file",
            _cli(
                lambda p: [
                    "fuse",
                    "--qrels",
                    p,
                    "--runs",
                    _TMP / "good.run",
                    _TMP / "other.run",
                    "--C",
                    "1",
                    "--folds",
                    "2",
                    "--out",
                    _TMP / "fused.run",
                    "--quiet",
                ],
                ".qrels",
                lambda c: _file_text(QRELS, c),
            ),
            names=cli_named,
        ),
        Way(
            "`svmmap evaluate --qrels`",
            "QRELS",
            "`read_qrels`'s",
            "file",
            _cli(
                lambda p: ["evaluate", "--run", _TMP / "good.run", "--qrels", p],
                ".qrels",
                lambda c: _file_text(QRELS, c),
            ),
            names=cli_named,
        ),
    ]


# ----------------------------------------------------------------------------------------------
# Dask: the Dask estimators' ways in, on a cluster of threads in this process.


def _dask_ways() -> list:
    from svmmap.dask import Binner as DaskBinner
    from svmmap.dask import SVMMap as DaskSVMMap

    da = pytest.importorskip("dask.array")

    def arr(v: Any) -> Any:
        if np.ndim(v) == 0:
            return v
        v = np.asarray(v)
        return da.from_array(v, chunks=((12, v.shape[0] - 12),) + tuple((n,) for n in v.shape[1:]))

    dX, dY, dQ = arr(X), arr(Y), arr(Q)

    @functools.lru_cache(maxsize=None)
    def fitted() -> Any:
        return _quiet(lambda: DaskSVMMap().fit(dX, dY, dQ))

    @functools.lru_cache(maxsize=None)
    def dask_binner() -> Any:
        return _quiet(lambda: DaskBinner(n_thresholds=4).fit(dX))

    @functools.lru_cache(maxsize=None)
    def binned_fitted() -> Any:
        # The transform is lazy (its blocks are binned where they are used), so its refusals
        # come from the use: a predict, computed.
        return _quiet(lambda: DaskSVMMap().fit(dask_binner().transform(dX), dY, dQ))

    def dask_x(v: Any) -> Any:
        return v.array if isinstance(v, _Unknown) else arr(v)

    return [
        Way(
            "`svmmap.dask.SVMMap.fit`",
            "X",
            "`_prepare` on each partition (`check_inputs`, as `SVMMap.fit`)",
            "dask matrix",
            lambda v: DaskSVMMap().fit(dask_x(v), dY, dQ),
            X,
            names=r"(^|\W)X\W|partition",
        ),
        Way(
            "`svmmap.dask.SVMMap.fit`",
            "y",
            "`_prepare` on each partition (`check_labels`)",
            "labels",
            lambda v: DaskSVMMap().fit(dX, arr(v), dQ),
            Y,
            {"huge": LABELS_ARE_THRESHOLDED},
        ),
        Way(
            "`svmmap.dask.SVMMap.fit`",
            "qid",
            "`_prepare` on each partition (`check_qid`)",
            "qid",
            lambda v: DaskSVMMap().fit(dX, dY, arr(v)),
            Q,
            {"huge": IDS_ARE_ANY_VALUES, "type": IDS_ARE_ANY_VALUES},
        ),
        Way(
            "`svmmap.dask.SVMMap.fit` eval set",
            "eval_set[0] X",
            "`memory_set` (a set in memory)",
            "matrix",
            lambda v: DaskSVMMap().fit(dX, dY, dQ, eval_set=[(v, Y)], eval_qid=[Q]),
            X,
            {"huge": SCORES_ARE_FINITE},
            names=r"eval_set\[0\] X|eval_set\[0\] has",
        ),
        Way(
            "`svmmap.dask.SVMMap.predict`",
            "X",
            "`SVMMap.predict`'s on each block",
            "dask matrix",
            lambda v: _compute(fitted().predict(dask_x(v))),
            X,
            {
                "huge": SCORES_ARE_FINITE,
                "chunks": "each block is scored as it comes: the scores have the blocks' unknown chunks",
            },
            alone=True,
            names=r"(^|\W)X\W|score of row",
        ),
        Way(
            "`svmmap.dask.Binner.fit`",
            "X",
            "`dense_numbers` on each block, then the core's finite check",
            "dask matrix",
            lambda v: DaskBinner().fit(dask_x(v)),
            X,
            {"huge": BINNED_BY_THRESHOLDS, "length": NO_LENGTH},
        ),
        Way(
            "`svmmap.dask.SVMMap.score`",
            "X",
            "`SVMMap.predict`'s on each block",
            "dask matrix",
            lambda v: fitted().score(dask_x(v), dY, dQ),
            X,
            {
                "huge": SCORES_ARE_FINITE,
                "chunks": "each block is scored as it comes, and the scores are computed before they are matched to y",
            },
            alone=True,
            names=r"(^|\W)X\W|score of row",
        ),
        Way(
            "`svmmap.dask.SVMMap.score`",
            "y",
            "`check_labels`, as `SVMMap.score`",
            "labels",
            lambda v: fitted().score(dX, arr(v), dQ),
            Y,
            {"huge": LABELS_ARE_THRESHOLDED},
        ),
        Way(
            "`svmmap.dask.SVMMap.score`",
            "qid",
            "`check_qid`, as `SVMMap.score`",
            "qid",
            lambda v: fitted().score(dX, dY, arr(v)),
            Q,
            {"huge": IDS_ARE_ANY_VALUES, "type": IDS_ARE_ANY_VALUES},
        ),
        Way(
            "`svmmap.dask.SVMMap.score`",
            "sample_weight",
            "`query_weights`, as `SVMMap.score`",
            "weights",
            lambda v: fitted().score(dX, dY, dQ, sample_weight=arr(v)),
            W,
            {"huge": "weights only weigh the mean over queries: 1e306 on every query is the unweighted mean"},
        ),
        Way(
            "`svmmap.dask.Binner.transform`",
            "X",
            "`Binner.transform`'s on each block, where the codes are used (here by `predict`)",
            "dask matrix",
            lambda v: _compute(binned_fitted().predict(dask_binner().transform(dask_x(v)))),
            X,
            {"huge": BINNED_BY_THRESHOLDS},
            alone=True,
        ),
        Way(
            "`svmmap.dask.SVMMap.fit` eval set of Dask collections",
            "eval_set[0] X",
            "`_dask_sets`: `memory_set`'s checks on each partition",
            "dask matrix",
            lambda v: DaskSVMMap().fit(dX, dY, dQ, eval_set=[(dask_x(v), dY)], eval_qid=[dQ]),
            X,
            {"huge": SCORES_ARE_FINITE},
            names=r"eval_set\[0\] X|eval_set\[0\] has",
        ),
    ]


@dataclass
class _Unknown:
    """A Dask array with unknown row chunks (the ``chunks`` class)."""

    array: Any


def _unknown_chunks(good: Any) -> _Unknown:
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    frame = dd.from_pandas(pd.DataFrame(np.asarray(good)), npartitions=2)
    return _Unknown(frame.to_dask_array())


def _compute(value: Any) -> Any:
    return value.compute() if hasattr(value, "compute") else value


# ----------------------------------------------------------------------------------------------
# The table of the guide, rendered from WAYS.


def _all_ways() -> list:
    return _build() + _more_ways() + _file_ways() + _dask_ways()


def render(ways: list) -> str:
    # The page is a user's: it says what is refused and what is accepted, and the refusal's
    # form is said once above the table. The one check each way goes through (``Way.check``)
    # is an internal function's name, which stays here for contributors.
    lines = [
        "| way in | argument its errors name | refused | accepted, with its meaning |",
        "|---|---|---|---|",
    ]
    for way in ways:
        refused = ", ".join(c for c in way.classes if c not in way.accepted)
        accepted = "; ".join(f"{c}: {m}" for c, m in way.accepted.items()) or "none"
        argument = way.argument if way.argument.startswith("the ") else f"`{way.argument}`"
        lines.append(f"| {way.way} | {argument} | {refused} | {accepted} |")
    return "\n".join(lines)


def _guide_table(text: str) -> str:
    after = text.split(HEADING, 1)[1]
    block = after.split("<!-- text table -->", 1)[1].lstrip("\n")
    return (
        "\n".join(line for line in block.splitlines() if line.startswith("|") or not line.strip())
        .strip()
        .split("\n\n")[0]
    )


@pytest.fixture(scope="module")
def ways(tmp_path_factory):
    global _TMP
    _TMP = tmp_path_factory.mktemp("gate")
    (_TMP / "test.txt").write_text(LETOR.replace("VALUE", "1").replace("ID", "3"))
    (_TMP / "good.run").write_text(RUN.replace("VALUE", "1").replace("ID", "3"))
    (_TMP / "other.run").write_text(RUN.replace("VALUE", "3").replace("ID", "3").replace("2.5", "0.5"))
    (_TMP / "good.qrels").write_text(QRELS.replace("VALUE", "1").replace("ID", "3"))
    from svmmap import save_model

    save_model(_fitted_on_two(), _TMP / "model.json")
    ways = {f"{w.way} {w.argument}": w for w in _all_ways()}
    try:
        import distributed
    except ImportError:
        # The Dask rows are then skipped (they need a client); every other row runs.
        yield ways
        return
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0"):
        yield ways


def _fitted_on_two():
    X2 = np.array([[0.5, 0.25], [0.125, 1.0], [0.5, 0.5], [0.25, 0.75]])
    return _quiet(lambda: _svmmap().fit(X2, [1, 0, 1, 0], qid=[1, 1, 2, 2]))


def _cases():
    # The ids of the cross product are known without building the ways (which needs a cluster):
    # the names and kinds are read from the guide's table, which the next test checks is WAYS's.
    rows = _guide_table(GUIDE.read_text()).splitlines()[2:]
    out = []
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        way, argument = cells[0], cells[1].strip("`")
        classes = [c for c in (cells[2].split(", ") if cells[2] else [])] + [
            part.split(":")[0] for part in cells[3].split("; ") if cells[3] != "none"
        ]
        out.extend((f"{way} {argument}", cls) for cls in classes)
    return out


def test_the_guide_lists_exactly_these_ways(ways):
    assert _guide_table(GUIDE.read_text()) == render(list(ways.values())), (
        "docs/guide/reliability.md's gate matrix differs from WAYS: run python tests/robustness/test_gate_matrix.py --write"
    )


@pytest.mark.parametrize("key, cls", _cases(), ids=[f"{k}-{c}" for k, c in _cases()])
def test_every_hostile_class_is_refused_naming_the_argument_or_accepted(ways, key, cls):
    way = ways[key]
    if way.way.startswith("`svmmap.dask.") and "distributed" not in sys.modules:
        pytest.skip("the Dask rows need dask.distributed")
    if way.kind == "file":
        value: Any = cls
    elif cls == "chunks":
        value = _unknown_chunks(way.good)
    else:
        value = hostile(way.kind.replace("dask ", ""), way.good, cls, alone=way.alone)
    if cls in way.accepted:
        _quiet(lambda: _compute(way.call(value)))
        return
    with pytest.raises((ValueError, TypeError)) as info:
        _quiet(lambda: _compute(way.call(value)))
    text = str(info.value)
    assert re.search(way.pattern(), text), f"{key} / {cls}: the refusal does not name {way.argument}: {text}"
    # Never the training data's names for another argument's defect.
    if way.argument.startswith("eval_"):
        assert not re.match(r"(X|y|qid)\[", text), text


def main() -> None:
    import tempfile

    global _TMP
    with tempfile.TemporaryDirectory() as tmp:
        _TMP = Path(tmp)
        table = render(_all_ways())
    if "--write" not in sys.argv:
        print(table)
        return
    text = GUIDE.read_text()
    old = _guide_table(text)
    GUIDE.write_text(text.replace(old, table, 1))


if __name__ == "__main__":
    main()
