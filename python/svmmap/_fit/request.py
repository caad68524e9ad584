"""A fit's arguments, declared once: the fields of `FitRequest`, which every fit builds once from
its own arguments, and the one docstring template of their Parameters section (`fit_doc`), as
LightGBM's estimators share ``_lgbmmodel_doc_fit``.

``SVMMap.fit``, ``svmmap.dask.SVMMap.fit``, ``SVMMapCV.fit`` and ``svmmap learn`` (through
`training.train`) take the arguments below or a subset of them; each writes its signature (so
that editors and ``help`` show it), builds the request with ``FitRequest.of(locals())`` and
takes its documentation from `fit_doc`, overriding only what differs (a Dask fit's ``X`` is a
Dask collection). tests/api/test_fit_orchestrator.py checks that every fit's signature and
docstring name the same arguments as the request, in the same order.
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Union

__all__ = ["FIT_ARGUMENTS", "FitRequest", "fit_doc"]


@dataclass
class FitRequest:
    """One fit's arguments as the caller gave them, unchecked (the orchestrator checks them
    once). Their meaning is `FIT_ARGUMENTS`'s."""

    X: Any
    y: Any
    qid: Any = None
    group: Any = None
    sample_weight: Any = None
    eval_set: Optional[Sequence[tuple]] = None
    eval_group: Optional[Sequence[Any]] = None
    eval_qid: Optional[Sequence[Any]] = None
    eval_metric: Optional[Union[str, Sequence[str]]] = None
    eval_at: Optional[Sequence[int]] = None
    early_stopping_rounds: Optional[int] = None
    eval_names: Optional[Sequence[str]] = None
    eval_X: Any = None
    eval_y: Any = None
    callbacks: Optional[Sequence[Any]] = None
    #: LightGBM's other fit arguments (``init_model`` ...), refused with the svmmap equivalent.
    lightgbm_kwargs: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, arguments: Mapping[str, Any]) -> "FitRequest":
        """The request of a fit's ``locals()``: its arguments that are fields (``self`` and
        ``__class__`` are not), so that no fit spells the list again."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in arguments.items() if k in names})


#: The Parameters entries of a fit, in signature order: name -> (type line, description).
#: ``fit_doc`` writes them; a fit overrides the entries that differ for it.
FIT_ARGUMENTS: Dict[str, "tuple[str, str]"] = {
    "X": (
        "array-like, scipy.sparse matrix or svmmap.BinnedMatrix of shape (n_documents, n_features)",
        """float32 and float64 C-ordered arrays, CSR matrices and the bin codes of a
        BinnedMatrix (read as its indicator columns) are used without a copy.
        A pandas DataFrame's string column names are kept in ``feature_names_in_``.""",
    ),
    "y": (
        "array-like of shape (n_documents,)",
        """Relevance labels (graded or -1/+1).""",
    ),
    "qid": (
        "array-like of shape (n_documents,)",
        """Query id of every document, any integers or strings, in any order.""",
    ),
    "group": (
        "array-like of int, optional",
        """Instead of ``qid``, LightGBM's query sizes in row order: the first ``group[0]`` rows
        are one query, the next ``group[1]`` rows the next, and so on (what PyTerrier's
        ``pt.ltr.apply_learned_model(..., form="ltr")`` passes). Give ``qid`` or
        ``group``, not both.""",
    ),
    "sample_weight": (
        "array-like of shape (n_documents,), optional",
        """Per-query weights given per document, as in scikit-learn's ``fit(X, y,
        sample_weight=...)``: every document of a query must carry the query's weight
        s_q >= 0 (a query has one slack, so a weight can only scale the whole query). The
        objective becomes 1/2 ||w||^2 + C/n sum_q s_q xi_q, with n still the number of
        usable queries. Weights of 1 give exactly the unweighted model; an integer weight k
        on one query trains the model of that query repeated k times at C (n + k - 1) / n;
        a weight of 0 drops the query's constraint (it still counts in n, so this is the
        model without the query at C (n - 1) / n). Queries that cannot train (no relevant
        or no non-relevant document) are skipped whatever their weight.""",
    ),
    "eval_set": (
        "list of (X, y) tuples, optional",
        """Validation sets scored at every iteration; the metric goes to ``evals_result_``.
        It does not change the model.""",
    ),
    "eval_group": (
        "list of array-like of int, optional",
        """The query sizes of every validation set, as ``group``.""",
    ),
    "eval_qid": (
        "list of array-like, optional",
        """The query ids of every validation set, as ``qid`` (instead of ``eval_group``).""",
    ),
    "eval_metric": (
        "str or list of str, optional",
        """Metric names of ``svmmap.metrics.evaluate`` ("map", "ndcg@10", ...), computed with
        this estimator's ``relevance_threshold``, read as LightGBM reads names: in any case
        (recorded in lower case) and with LightGBM's aliases ("mean_average_precision" for
        "map"; "lambdarank", "rank_xendcg", "xendcg" ... for "ndcg"). None (the default, as
        in LightGBM's signature) records "map", or with ``eval_at`` NDCG at its cutoffs only.
        Needs ``eval_set``: without one it is not read, and a UserWarning says so (LightGBM
        ignores it without a word); so are ``eval_at`` and ``eval_names``.""",
    ),
    "eval_at": (
        "list of int, optional",
        """As LightGBM's ``eval_at``, by its rule: the metrics of ``eval_metric`` in their
        order, then NDCG unless they name it, NDCG ("ndcg") being evaluated at each of
        these cutoffs in increasing order ("ndcg@5", "ndcg@10"). So ``eval_at=[5, 10]``
        alone records ndcg@5 and ndcg@10, ndcg@5 first (the metric ``first_metric_only``
        and ``early_stopping_rounds`` watch), and ``eval_metric="ndcg"`` means NDCG at
        these cutoffs. LightGBM cuts "map" at them too; svmmap has no MAP at a cutoff, so
        "map" stays MAP over the whole list. An empty list is the default (no cutoff), as
        LightGBM reads an empty ``eval_at`` as its default.""",
    ),
    "early_stopping_rounds": (
        "int, optional",
        """Stop when the first metric on the first validation set has not improved for this
        many cutting-plane iterations, and keep the iterate where it was best: ``coef_`` is
        that iterate, ``best_iteration_`` its iteration and ``best_score_`` its metrics
        ({set name: {metric: value}}), as LightGBM's early stopping does (LightGBM 4's
        ``early_stopping_round`` parameter watches every metric, as
        ``callbacks=[svmmap.early_stopping(n)]`` does). Needs ``eval_set``. Early stopping
        ends training before the optimality certificate: ``coef_`` is then the model of
        best validation score rather than an eps-optimal solution of OP 1, and
        ``objective_``, ``dual_objective_``, ``gap_`` and ``converged_`` are those of its
        round (``stop_reason_`` is "callback" when early stopping stopped training, and
        says why training ended when the solver ended first; with ``verbose`` above 0 the
        kept round is then logged). A validation set that is the training data itself
        (the very ``X`` and ``y`` arrays) is never watched.""",
    ),
    "eval_names": (
        "list of str, optional",
        """Names of the validation sets in ``evals_result_`` and ``best_score_`` (default
        ``valid_0``, ``valid_1``, ..., and ``training`` for the training data itself).""",
    ),
    "eval_X, eval_y": (
        "array-like or tuple of them, optional",
        """LightGBM 4.7's spelling of ``eval_set``: one validation matrix and its labels, or
        tuples of them (``eval_set=list(zip(eval_X, eval_y))``); not with ``eval_set``.""",
    ),
    "callbacks": (
        "list, optional",
        """LightGBM's training callbacks, called after every round (one solver iteration):
        ``svmmap.early_stopping(n, first_metric_only=...)``, ``svmmap.log_evaluation(period)``,
        ``svmmap.record_evaluation(result)``, or any callable taking a
        ``svmmap.callback.CallbackEnv`` (which has LightGBM's fields: a callback written for
        LightGBM runs). LightGBM's own ``lightgbm.early_stopping``,
        ``lightgbm.log_evaluation`` and ``lightgbm.record_evaluation`` are taken as these,
        with their settings; LightGBM's other callbacks are refused before training. They
        run in LightGBM's order (those without an ``order`` attribute first, then the log,
        the record and early stopping), and one that raises ``EarlyStopException``
        (LightGBM's or ``svmmap.callback``'s) ends training keeping the round it names; for
        that, a fit with a callback of the user's keeps every round's w until it ends (8
        bytes per feature and round). ``log_evaluation`` and ``record_evaluation`` read the
        validation sets' scores: without ``eval_set`` they warn that they do nothing, and
        ``early_stopping`` is refused.""",
    ),
    "**lightgbm_kwargs": (
        "",
        """LightGBM's other ``fit`` arguments (``verbose``, ``init_model`` ...), as PyTerrier's
        ``fit_kwargs`` pass them, are refused with the svmmap equivalent, unless their value
        is LightGBM's default, which asks for nothing (``init_score=None``,
        ``eval_init_score=None``, ``eval_sample_weight=None``, ``init_model=None``,
        ``feature_name="auto"``, ``categorical_feature="auto"``).""",
    ),
}


def fit_doc(
    summary: str,
    returns: str,
    *,
    overrides: Optional[Mapping[str, "tuple[str, str]"]] = None,
    omit: Sequence[str] = (),
) -> str:
    """A fit's numpydoc docstring: ``summary``, the Parameters of `FIT_ARGUMENTS` less ``omit``,
    each entry of ``overrides`` in place of the template's, and the Returns section ``returns``."""
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(FIT_ARGUMENTS)) + sorted(set(omit) - set(FIT_ARGUMENTS))
    if unknown:
        raise ValueError(f"fit_doc: {unknown} are not arguments of FIT_ARGUMENTS")
    lines = [summary, "", "Parameters", "----------"]
    for name, entry in FIT_ARGUMENTS.items():
        if name in omit:
            continue
        kind, text = overrides.get(name, entry)
        lines.append(f"{name} : {kind}" if kind else name)
        # The first line of a description starts at its quotes, the others are indented as the
        # source that wrote them: dedented apart.
        first, *rest = text.strip().splitlines()
        lines.extend("    " + line for line in [first, *textwrap.dedent("\n".join(rest)).splitlines()])
    lines += ["", "Returns", "-------", returns, ""]
    return "\n".join(lines)
