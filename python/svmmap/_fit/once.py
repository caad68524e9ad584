"""Warnings said once per search: the fits a scikit-learn search (GridSearchCV,
RandomizedSearchCV, a Pipeline inside them), a scikit-learn cross-validation function
(cross_val_score, cross_validate, learning_curve, ...) or SVMMapCV makes on one data set skip
the same kind of queries, and one warning says so where ten used to.

A fit finds the search it runs in by walking up the call stack to the ``fit`` of a search
object (scikit-learn's ``BaseSearchCV`` or svmmap's ``SVMMapCV``) or to one of the
cross-validation functions. The first warning of a kind in one call of that ``fit`` (or
function) is issued, naming the search; the others are not (each model still carries its
counts). The call is marked by a name added to the locals of its frame, which lives
exactly as long as the call: a later call of the same search's ``fit`` is a new frame without
the mark (a registry keyed by frame ids would mistake a reused id for the same call), and
nothing outside the frame is kept.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any, Optional, Tuple

#: The name of the mark in the search's fit frame: the kinds of warning already issued.
_MARK = "__svmmap_reported__"

#: How far up the stack a search's fit may be (joblib, _fit_and_score, Pipeline, fit, train).
_DEPTH = 60


def _search_classes() -> Tuple[type, ...]:
    """The search classes already imported (none is imported here: a fit outside any search
    must not pay for scikit-learn's model_selection)."""
    classes = []
    module = sys.modules.get("sklearn.model_selection._search")
    if module is not None:
        classes.append(module.BaseSearchCV)
    svmmap_cv = sys.modules.get("svmmap.model_selection")
    if svmmap_cv is not None:
        classes.append(svmmap_cv.SVMMapCV)
    return tuple(classes)


#: scikit-learn's functions that fit one estimator on many splits of one data set, like a
#: search does, in the module that defines them. cross_val_score and cross_val_predict call
#: cross_validate; being outermost, they name the call the user made.
_CROSS_VALIDATIONS = frozenset(
    {
        "cross_validate",
        "cross_val_score",
        "cross_val_predict",
        "learning_curve",
        "validation_curve",
        "permutation_test_score",
    }
)
_CROSS_VALIDATION_MODULE = "sklearn.model_selection._validation"


def _enclosing_search() -> Optional[Tuple[str, Any]]:
    """(name of the search, the frame of its fit or function) of the outermost search this
    call runs in: a search object's fit, or one of scikit-learn's cross-validation
    functions."""
    classes = _search_classes()
    if not classes:
        return None
    found = None
    frame: Optional[FrameType] = sys._getframe(1)
    for _ in range(_DEPTH):
        if frame is None:
            break
        name = frame.f_code.co_name
        owner = frame.f_locals.get("self") if name == "fit" else None
        if owner is not None and isinstance(owner, classes):
            found = (type(owner).__name__, frame)
        elif name in _CROSS_VALIDATIONS and frame.f_globals.get("__name__") == _CROSS_VALIDATION_MODULE:
            found = (f"{name} call", frame)
        frame = frame.f_back
    return found


def first_in_search(kind: str) -> Tuple[bool, str]:
    """(whether to issue a warning of ``kind`` now, a note naming the search for its text).
    Outside a search: (True, "")."""
    scope = _enclosing_search()
    if scope is None:
        return True, ""
    name, frame = scope
    try:
        local = frame.f_locals
        reported = local.get(_MARK)
        if reported is None:
            reported = set()
            local[_MARK] = reported
    except Exception:  # a frame whose locals cannot be marked: say it every time
        return True, ""
    if kind in reported:
        return False, ""
    reported.add(kind)
    return True, (
        f"; the other fits of this {name} on the same data are not reported again "
        "(each model keeps its counts in n_queries_skipped_)"
    )
