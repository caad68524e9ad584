"""Private: a fit inside a scikit-learn search or cross-validation that cannot be scored as
the user expects is refused at its start (metadata routing off with a scorer that ranks by query;
LightGBM's ``group`` inside a split search)."""

from __future__ import annotations

import sys
from typing import Any

from .._validation import _QUERY_SCORE_FUNCTIONS

__all__ = ["refuse_group_in_search", "refuse_group_request_in_search", "refuse_unrouted_search"]


def refuse_unrouted_search(required_by: str, qid_given: bool = True) -> None:
    """Refuses a fit inside a scikit-learn search or cross-validation whose scoring will get no
    qid: metadata routing off, and a scorer that ranks by query (the estimator's own ``score``
    or a ``make_ranking_scorer`` scorer).

    Without routing, ``GridSearchCV.fit(X, y, qid=qid)`` hands qid to ``fit`` only; every
    held-out score then fails, scikit-learn records it as NaN (its ``error_score``), warns, and
    still picks a parameter and refits. Failing the fit instead makes the search stop with this
    message ("All the N fits failed"). The search is found on the call stack: scikit-learn's
    ``_fit_and_score`` is the function every search, ``cross_validate`` and the curves call to
    fit and score one split. Should scikit-learn rename it, this check no longer fires and the
    score's own error (with the same advice) is what the user sees in the warnings.
    """
    sklearn = sys.modules.get("sklearn")
    if sklearn is None or sklearn.get_config().get("enable_metadata_routing", False):
        return
    frame = _fit_and_score_frame(sys._getframe(1))
    if frame is None:
        return
    if not _scores_by_query(frame.f_locals.get("scorer")):
        return
    if not qid_given:
        # The call gave no qid at all (``cross_val_score(SVMMap(), X, y, groups=qid)``): saying
        # it "was given qid" would send the user looking for a qid they never passed.
        raise ValueError(
            f"{required_by} was called by a scikit-learn search or cross-validation "
            "(GridSearchCV, cross_val_score, ...) without qid: a ranker needs one query id per row "
            "to fit and to score each held-out part, and scikit-learn passes it only with metadata "
            "routing on: sklearn.set_config(enable_metadata_routing=True), .set_fit_request(qid=True) "
            "on the estimator, scoring=svmmap.metrics.make_ranking_scorer('map').set_score_request(qid=True), "
            "and qid given to the call (params={'qid': qid, 'groups': qid} for cross_val_score, "
            "fit(X, y, qid=qid, groups=qid) for a search), or use svmmap.SVMMapCV"
        )
    raise ValueError(
        f"{required_by} was given qid by a scikit-learn search or cross-validation "
        "(GridSearchCV, cross_val_score, ...) with metadata routing off, so the held-out scoring "
        "gets no qid and every score would be NaN: enable metadata routing with "
        "sklearn.set_config(enable_metadata_routing=True), request qid with "
        ".set_fit_request(qid=True) on the estimator and .set_score_request(qid=True) on the "
        "scorer (scoring=svmmap.metrics.make_ranking_scorer('map').set_score_request(qid=True)), "
        "or use svmmap.SVMMapCV"
    )


#: What to do instead of routing LightGBM's ``group`` through a scikit-learn search, said by
#: both refusals below.
_GROUP_IN_SEARCH = (
    "scikit-learn cuts arrays of one entry per row into each split's rows, and query sizes cannot be cut "
    "that way (every split would get the sizes of all the queries): give one query id per row as qid "
    "instead, with metadata routing on: est.set_fit_request(qid=True), "
    "scoring=svmmap.metrics.make_ranking_scorer('map').set_score_request(qid=True) and "
    "params={'qid': qid, 'groups': qid} (a qid from sizes: numpy.repeat(numpy.arange(len(group)), group)); "
    "the scikit-learn guide shows it, or use svmmap.SVMMapCV"
)


def _in_split_search(first_frame: Any, depth: int = 60) -> bool:
    """Whether a scikit-learn function that fits on splits of the rows (a search,
    ``cross_validate`` and the functions built on it, the curves) is on the call stack above
    ``first_frame``: they all live in ``sklearn.model_selection``."""
    frame = first_frame
    for _ in range(depth):
        if frame is None:
            return False
        if frame.f_globals.get("__name__", "").startswith("sklearn.model_selection."):
            return True
        frame = frame.f_back
    return False


def refuse_group_request_in_search(routing: Any, name: str) -> None:
    """Refuses, before any fit, a scikit-learn search or cross-validation with metadata routing
    whose estimator requests LightGBM's ``group`` for ``fit`` (``routing``: its metadata
    routing, which scikit-learn asks for before it splits): the query sizes would reach every
    split's fit whole, and each fit would fail, hidden by scikit-learn under "All the N fits
    failed". Called from the estimator's ``get_metadata_routing``."""
    fit_requests = getattr(getattr(routing, "fit", None), "requests", {}) or {}
    if fit_requests.get("group") in (None, False) or not _in_split_search(sys._getframe(1)):
        return
    raise ValueError(f"{name} requests group= for fit in a scikit-learn search or cross-validation: {_GROUP_IN_SEARCH}")


def refuse_group_in_search(name: str, group: Any) -> None:
    """Refuses ``group`` handed to ``fit`` by a scikit-learn search or cross-validation (metadata
    routing off, or a request the routing check above did not see): scikit-learn passes an
    array whose length is not the number of rows as it is, so every split would get every
    query's size. scikit-learn records the error as the split's and, when every split fails,
    quotes it under "All the N fits failed"."""
    if group is None or "sklearn" not in sys.modules:
        return
    if _fit_and_score_frame(sys._getframe(1)) is not None:
        raise ValueError(f"{name} was given group= by a scikit-learn search or cross-validation: {_GROUP_IN_SEARCH}")


def _scores_by_query(scorer: Any) -> bool:
    """Whether a scikit-learn scorer needs query ids: the estimator's ``score`` (scoring=None,
    which for a ranker of this package ranks by query), a ``make_ranking_scorer`` scorer (its
    score function registered by ``ranks_by_query``), or a dict of scorers with one of them."""
    if scorer is None:
        return False
    if type(scorer).__name__ == "_PassthroughScorer":
        # The search's estimator, or the last step of a Pipeline, scores with a ``score`` of
        # this package, all of which rank by query.
        estimator: Any = getattr(scorer, "_estimator", None)
        while hasattr(estimator, "steps"):
            estimator = estimator.steps[-1][1]
        score = getattr(type(estimator), "score", None)
        return getattr(score, "__module__", "").startswith("svmmap.")
    if any(getattr(scorer, "_score_func", None) is f for f in _QUERY_SCORE_FUNCTIONS):
        return True
    scorers = getattr(scorer, "_scorers", None)
    return isinstance(scorers, dict) and any(_scores_by_query(s) for s in scorers.values())


def _fit_and_score_frame(frame: Any) -> Any:
    """The frame of scikit-learn's ``_fit_and_score`` among the 30 callers above ``frame``
    (the one split of a search or cross-validation being fitted), or None outside one."""
    for _ in range(30):
        frame = frame.f_back
        if frame is None:
            return None
        if frame.f_code.co_name == "_fit_and_score" and frame.f_globals.get("__name__", "").startswith("sklearn."):
            return frame
    return None
