"""The structural ranking losses as functions of the scores, for any scorer.

Every loss of svmmap is a structural SVM hinge: for one query with scores ``s`` (one per
document, ``s_i = w.x_i`` for a linear model, or a neural ranker's outputs),

    H(s) = max over rankings y of  Delta(y*, y) + w.Psi(y) - w.Psi(y*),

written in terms of the scores (the feature maps are linear in the documents: Psi_po scaled by
1/(|P||N|) for map, roc and ndcg, the same over the M pairs of different labels scaled by 1/M
for pairwise, Chakrabarti's phi_mrr for mrr, Le & Smola's phi_dorm for dorm). H is convex and piecewise linear in ``s``; its gradient (a subgradient where the argmax
ranking is not unique, e.g. at tied scores) has one coefficient per document. So any scorer can
be trained on these losses with ``structured_hinge``.

Loss names
----------
``"map"`` (Yue et al. 2007), ``"roc"`` (Joachims 2005), ``"pairwise"`` and ``"pairwise:count"``
(SVM^rank's loss over every pair of documents with different graded labels, as the fraction
or the count of swapped pairs; Joachims 2006), ``"ndcg@k"`` and ``"ndcg"`` (no clip),
``"mrr@k"`` and ``"mrr"`` (no cutoff) (Chakrabarti et al. 2008), ``"acc"``/``"acc2"`` (the
per-document classification hinge of the SVM_acc baselines), ``"dorm@k"``/``"dorm"``
(Le & Smola's permutation map, O(n^3) per query without ``:depth=R``). NDCG's discount is
1/log2(1 + rank); ``"ndcg@k:paper"`` selects Chakrabarti et al.'s variant (1 for the first two
ranks, 1/log2(rank) after). ``"map-greedy"`` and ``"map-fast"`` force one of the two exact MAP
algorithms. Structural losses other than ``"pairwise"`` and the ``":graded"`` NDCG use binary
relevance: a document is relevant when its label is above ``relevance_threshold``;
``"pairwise"`` compares the labels themselves. In particular ``"ndcg@k"`` and ``"ndcg"`` use the
binary gain, while ``svmmap.metrics.ndcg`` scores graded labels with the gain 2^label - 1; on
graded data with many relevant documents per query, ``"map"`` (or ``"pairwise"``) trains a
better NDCG@10 than ``"ndcg@10"`` does (README, "Which loss for NDCG@10"). ``"ndcg@k:graded"``
and ``"ndcg:graded"`` use the metric's gain 2^grade - 1 (grade: the label of a relevant
document, 0 for the others, as ``svmmap.metrics``) with the partial order of the grades as
feature map (1/Z over the Z pairs of different grades; Psi_po on binary labels, where they
equal ``"ndcg@k"``), solved exactly by a dynamic program over how many documents of each grade
fill the top k; its cost grows with the number of grades, and without a cutoff with the
product of their sizes, so long queries with many grades need ``"ndcg@10:graded"``.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._fit.defaults import TRAINING_DEFAULTS
from ._typing import Slack
from ._validation import check_labels, check_qid, finite_number, n_threads, one_column

#: A loss name, a list of names (SVM-combo) or a dict of names to weights (C_l = weight * C).
LossSpec = Union[str, Sequence[str], Mapping[str, float]]

__all__ = ["structured_hinge", "loss_groups", "loss_names", "LOSSES"]


#: Every loss of the core's registry: one dict per loss with its name, accepted syntax
#: ("ndcg, ndcg@k, ndcg@k:paper"), feature map, convexity, reference, one-line doc and example
#: spellings.
LOSSES = _core.LOSSES


def loss_groups(loss: LossSpec, slack: Slack = TRAINING_DEFAULTS["slack"]) -> List[List[str]]:
    """The slack groups the Rust core trains with, for ``loss`` and ``slack``: one list of loss
    names per slack. A single name is one group; a list with ``slack="separate"`` is one group
    per loss, with ``slack="shared"`` one group whose hinge is the largest of the components'
    (Chakrabarti et al. 2008, section 3.7). A list's losses carry their default weights (1e-4
    for MRR, 0.1 for NDCG with a cutoff, 1 otherwise, divided by the largest; see ``SVMMap``'s
    ``loss``), a dict's the given ones. Invalid names and arguments raise ValueError.

    >>> loss_groups(["map", "ndcg@10"], "shared")
    [['map', '0.1*ndcg@10']]
    >>> loss_groups(["map", "ndcg@10", "mrr@10"])
    [['map'], ['0.1*ndcg@10'], ['0.0001*mrr@10']]
    >>> loss_groups({"map": 1, "ndcg@10": 1})
    [['map'], ['ndcg@10']]
    """
    return [[_spelled(weight, name) for weight, name in group] for group in _core_groups(loss, slack)]


def _core_groups(loss: LossSpec, slack: Slack) -> List[List[Tuple[float, str]]]:
    """The slack groups as the core takes them: (weight, loss name) pairs."""
    return _core.TrainConfig(loss=loss, slack=slack).losses


def _spelled(weight: float, name: str) -> str:
    """A weighted loss as users spell it, "0.1*ndcg@10" (the weight's shortest round-trip
    digits; "2*map" rather than "2.0*map"), or the name alone for the weight 1."""
    if weight == 1.0:
        return name
    text = repr(float(weight))
    return f"{text.removesuffix('.0')}*{name}"


def loss_names(loss: LossSpec, slack: Slack = TRAINING_DEFAULTS["slack"]) -> List[str]:
    """``loss_groups`` spelled as loss names, a shared group as ``"max(a,b,...)"``."""
    return [group[0] if len(group) == 1 else f"max({','.join(group)})" for group in loss_groups(loss, slack)]


def structured_hinge(
    scores: Any,
    labels: Any,
    qid: Any = None,
    loss: LossSpec = TRAINING_DEFAULTS["loss"],
    *,
    slack: Slack = TRAINING_DEFAULTS["slack"],
    relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
    n_jobs: Optional[int] = TRAINING_DEFAULTS["n_jobs"],
) -> Tuple[float, np.ndarray]:
    """The structural SVM hinge of a ranking loss and its gradient with respect to the scores.

    For every query, ``max_y Delta(y*, y) + w.Psi(y) - w.Psi(y*)`` written through the scores
    (see the module docstring), summed over queries.

    Parameters
    ----------
    scores : array-like of shape (n_documents,)
        One score per document (finite numbers).
    labels : array-like of shape (n_documents,)
        Relevance labels; a document is relevant when its label is above
        ``relevance_threshold``.
    qid : array-like of shape (n_documents,) or None
        Query id of every document (any integers or strings, in any order). None treats all
        documents as one query.
    loss : str, list of str or dict of str to float, default="map"
        A loss name (see ``svmmap.losses``) or several, weighted as in ``SVMMap``'s ``loss``.
        Several losses are added up (``slack="separate"``, one hinge each) or combined by their
        maximum per query (``slack="shared"``).
    slack : {"separate", "shared"}, default="separate"
    relevance_threshold : float, default=0.0
    n_jobs : int or None, default=None
        Threads over queries (None: all cores). The result does not depend on it.

    Returns
    -------
    value : float
        The hinge summed over queries. Queries without a relevant or without a non-relevant
        document contribute 0 (no ranking of them can be wrong); for ``"pairwise"``, queries
        whose documents all have the same label.
    grad : ndarray of shape (n_documents,)
        d value / d scores, in the row order of ``scores`` (0 for documents of queries that
        contribute 0). At tied scores it is a subgradient: the one of the ranking the oracle
        returns.

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap import structured_hinge
    >>> # One relevant document scored 0 among non-relevant ones scored 1, 0, -1 (see the MAP
    >>> # oracle's tests): the most violated ranking puts it third, H = 4/3.
    >>> value, grad = structured_hinge([0.0, 1.0, 0.0, -1.0], [1, 0, 0, 0])
    >>> round(value, 6), np.round(grad, 6).tolist()
    (1.333333, [-1.333333, 0.666667, 0.666667, 0.0])
    """
    # The metrics' rule for their y_score (strings, complex numbers, a column vector); a 2-D
    # array was once flattened and reported as rows of an X this function does not take.
    s = np.ascontiguousarray(one_column(scores, "scores", "one score per document"))
    y = check_labels(labels, s.shape[0], name="labels", rows_name="scores")
    if not np.all(np.isfinite(s)):
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"scores[{bad}] is {s[bad]}: scores must be finite numbers")
    if qid is None:
        codes = np.zeros(s.shape[0], dtype=np.int64)
        n_queries = 1
    else:
        codes, uniques = check_qid(qid, s.shape[0], required_by="structured_hinge", rows_name="scores")
        n_queries = len(uniques)
    threshold = finite_number(relevance_threshold, "relevance_threshold")
    value, grad, _ = _core.structured_hinge(
        s, y, codes, n_queries, _core_groups(loss, slack), threshold, n_threads(n_jobs)
    )
    if not np.isfinite(value):
        # Finite scores whose differences overflow (1e308 and -1e308) make an infinite hinge,
        # which used to come back as a number; predict refuses such scores the same way.
        raise ValueError(
            f"the structured hinge of these scores is {value} (beyond the float64 range): the scores "
            f"span {s.min():.3g} to {s.max():.3g}, and their differences overflow; scale the scores"
        )
    return float(value), grad
