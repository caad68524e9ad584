"""Run measures computed as trec_eval computes them, through ir_measures: measure names,
per-query values and their means (`svmmap.ir.trec` re-exports these)."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from .._validation import invalid_parameter, warn_unused
from ._trec_data import Qrels, Run
from ._trec_order import _ranks_in_order, sort_qids, trec_order

__all__ = ["parse_measure", "evaluate_measures", "evaluate_run", "QueryValues", "MeasureValues", "RUN_CONVENTIONS"]


# svmmap's metric names (those of svmmap.metrics, lower case) and their ir_measures names.
_PLAIN_NAMES = {
    "map": "AP",
    "ap": "AP",
    "ndcg": "nDCG",
    "mrr": "RR",
    "rr": "RR",
    "rprec": "Rprec",
    "r-prec": "Rprec",
    "bpref": "Bpref",
}
_CUTOFF_NAMES = {
    "map": "AP",
    "ap": "AP",
    "ndcg": "nDCG",
    "mrr": "RR",
    "rr": "RR",
    "p": "P",
    "recall": "R",
    "r": "R",
    "err": "ERR",
    "success": "Success",
    "judged": "Judged",
}
RUN_CONVENTIONS = ("svmmap", "trec_eval")
# Rank-encoded scores are integers, exact in a float32 up to 2**24.
_MAX_DOCS_PER_QUERY = 2**24


def parse_measure(name: str) -> Any:
    """The ir_measures measure for a name in svmmap's, ir_measures' or trec_eval's spelling.

    svmmap's names are case-insensitive: ``map``, ``ndcg``, ``ndcg@k``, ``mrr``, ``mrr@k``,
    ``p@k``, ``recall@k``, ``rprec``, ``bpref``, ``err@k``, ``success@k``, ``judged@k``.
    ir_measures' names (``AP``, ``nDCG@10``, ``R@100``, ``Rprec``, ``Bpref``, ``RR``,
    ``ERR@20``, ``Success@10``, ``Judged@10``, ``P(rel=2)@5``, ...) and trec_eval's
    (``ndcg_cut_10``, ``recall_100``, ``recip_rank``, ``success_10``, ...) are taken as they are.

    Examples
    --------
    >>> from svmmap.ir.trec import parse_measure
    >>> [str(parse_measure(m)) for m in ["map", "NDCG@10", "recall@100", "ERR@20", "ndcg_cut_5", "Judged@10"]]
    ['AP', 'nDCG@10', 'R@100', 'ERR@20', 'nDCG@5', 'Judged@10']
    """
    if not isinstance(name, str):
        # evaluate_run(run, qrels, ["map", "p@5"]) failed with "'list' object has no attribute 'strip'".
        raise TypeError(
            f"a measure name must be a string, got {name!r}; evaluate_run takes one measure, "
            "evaluate_measures a list of them"
        )
    measure = _parse_measure(name)
    cutoff = getattr(measure, "params", {}).get("cutoff")
    if isinstance(cutoff, int) and cutoff < 1:
        # pytrec_eval aborts the interpreter (SIGABRT) on a cutoff of 0 (P_0, ndcg_cut_0, R@0),
        # so it is refused here, as svmmap.metrics refuses ndcg@0.
        raise ValueError(f"measure {name!r}: the cutoff must be an integer >= 1, got {cutoff}")
    if isinstance(cutoff, int) and cutoff > _MAX_CUTOFF:
        # trec_eval reads cutoffs as C longs and names its results after what it read, so a
        # larger one came back under another name (KeyError 'P_9223372036854775807').
        raise ValueError(f"measure {name!r}: the cutoff {cutoff} is above the largest supported, {_MAX_CUTOFF}")
    return measure


#: The largest cutoff of a measure: far beyond any query's depth (``_MAX_DOCS_PER_QUERY``).
_MAX_CUTOFF = 2**31 - 1


def _parse_measure(name: str) -> Any:
    import ir_measures

    text = name.strip()
    if not text.isascii():
        # str.isdigit and int() take any script's digits ("ndcg@١٠" was NDCG@10 here and
        # refused by svmmap.metrics); a measure name is ASCII in every tool.
        raise ValueError(f"unknown measure {name!r}: a measure name is ASCII text")
    low = text.lower()
    if low in _PLAIN_NAMES:
        return ir_measures.parse_measure(_PLAIN_NAMES[low])
    base, at, cutoff = low.partition("@")
    if at and base in _CUTOFF_NAMES and cutoff.isdigit():
        return ir_measures.parse_measure(f"{_CUTOFF_NAMES[base]}@{int(cutoff)}")
    try:
        return ir_measures.parse_measure(text)
    except (NameError, ValueError, SyntaxError):
        pass
    try:
        found = ir_measures.parse_trec_measure(text)
    except (NameError, ValueError, SyntaxError, KeyError):
        found = []
    if len(found) == 1:
        return found[0]
    raise ValueError(
        f"unknown measure {name!r}: use svmmap's names (map, ndcg@10, mrr, p@10, recall@100, rprec, bpref, "
        "err@20, success@10, judged@10), ir_measures' (AP, nDCG@10, R@100, RR, ...) or trec_eval's "
        "(ndcg_cut_10, recall_100, ...)"
    )


def _check_run_and_qrels(run: Any, qrels: Any) -> None:
    """A Run and a Qrels, in this order: given the other way round (or a path, or a dict),
    the measures failed deep inside with "'Run' object has no attribute 'rel'"."""
    for name, value, kind, reader in (("run", run, Run, "read_run"), ("qrels", qrels, Qrels, "read_qrels")):
        if not isinstance(value, kind):
            swapped = " (run and qrels are swapped?)" if isinstance(value, (Run, Qrels)) else ""
            raise TypeError(
                f"{name} must be a svmmap.ir.trec.{kind.__name__} (read a file with {reader}), "
                f"got {type(value).__name__}{swapped}"
            )


def _check_conventions(conventions: str) -> None:
    if conventions not in RUN_CONVENTIONS:
        raise invalid_parameter("conventions", '"svmmap" or "trec_eval" for runs', conventions)


def _ranked_dict(run: Run, keep: Optional[np.ndarray] = None) -> Dict[str, Dict[str, float]]:
    """``{qid: {docno: score}}`` with scores replaced by ``-rank`` in trec_eval's order.

    Every tool behind ir_measures then sees one strict order, trec_eval's: trec_eval's own
    measures get the same numbers as from the original scores, and measures that other tools
    compute (gdeval's ERR, ir_measures' Judged, the MS MARCO RR@k, which break ties by
    increasing docno) rank the documents as trec_eval does instead of by their own tie rules.
    """
    qid, docno, score = run.qid, run.docno, run.score
    if keep is not None:
        qid, docno, score = qid[keep], docno[keep], score[keep]
    order = trec_order(qid, docno, score)
    qid, docno = qid[order], docno[order]
    ranks = _ranks_in_order(qid)
    if ranks.size and int(ranks.max()) > _MAX_DOCS_PER_QUERY:
        big = qid[int(np.argmax(ranks))]
        raise ValueError(f"run {run.name}: query {big!r} has more than {_MAX_DOCS_PER_QUERY} documents")
    out: Dict[str, Dict[str, float]] = {}
    for q, d, r in zip(qid.tolist(), docno.tolist(), ranks.tolist()):
        out.setdefault(q, {})[d] = -float(r)
    return out


class QueryValues(Dict[str, float]):
    """``{qid: value}`` of one measure on a run, with ``mean``: the measure over all these
    queries, the number trec_eval prints on its ``all`` line.

    A plain dict in every other way (its items are the per-query values). ``mean`` is
    ir_measures' aggregate of the measure, which is trec_eval's: the mean of the per-query
    values, including the 0 of a listed query the run does not retrieve (``trec_eval -c``),
    and the sum for the counts ``NumRet``, ``NumRel`` and ``NumRelRet``. NaN without queries.
    """

    mean: float

    def __init__(self, values: Mapping[str, float], mean: float) -> None:
        super().__init__(values)
        self.mean = mean

    def __repr__(self) -> str:
        return dict.__repr__(self)


class MeasureValues(Dict[str, QueryValues]):
    """``{measure name: QueryValues}``: what `evaluate_measures` returns, with ``means``."""

    @property
    def means(self) -> Dict[str, float]:
        """``{measure name: mean}``, trec_eval's ``all`` line of every measure."""
        return {name: values.mean for name, values in self.items()}


def _aggregate(measure: Any, values: Iterable[float]) -> float:
    """The measure over all queries as trec_eval reports it (ir_measures' aggregator of the
    measure: the mean, the sum for counts); NaN without a value."""
    values = list(values)
    if not values:
        return float("nan")
    aggregator = measure.aggregator()
    for v in values:
        aggregator.add(v)
    return float(aggregator.result())


def evaluate_measures(
    run: Run,
    qrels: Qrels,
    measures: Union[str, Sequence[str]] = ("map", "ndcg@10", "p@10"),
    *,
    conventions: str = "trec_eval",
    queries: Optional[Sequence[str]] = None,
) -> "MeasureValues":
    """Per-query values of several measures of a run, computed by ir_measures with trec_eval's ranks.

    Measures are named as `parse_measure` accepts (``"map"``, ``"nDCG@10"``, ``"R@100"``,
    ``"Rprec"``, ``"Bpref"``, ``"RR"``, ``"ERR@20"``, ``"Success@10"``, ``"Judged@10"``, ...).
    ir_measures computes trec_eval's measures with pytrec_eval (trec_eval's own code), so the
    numbers are trec_eval's: a document is relevant when its relevance is >= 1, unjudged
    documents are not relevant, AP divides by the relevant documents in the qrels, NDCG uses
    the relevance as gain and the qrels' ideal ranking. Documents are ranked as trec_eval
    ranks them (`trec_order`) for every measure, including those computed by other tools
    (ERR@k by gdeval, Judged@k, RR@k).

    Parameters
    ----------
    conventions : {"trec_eval", "svmmap"}
        ``"trec_eval"`` (default): the queries of the run that have judgments, as trec_eval
        and pytrec_eval evaluate them (a query without a relevant document counts, e.g. with
        AP 0). ``"svmmap"``: only the queries with at least one relevant document.
    queries : sequence of str, optional
        Evaluate these queries only (still subject to ``conventions``); a listed query that
        the run does not retrieve gets 0, as ``trec_eval -c`` gives it, and one the qrels do
        not judge is left out with a ``UserWarning`` naming it.

    Returns
    -------
    MeasureValues
        ``{measure name as given: {qid: value}}``, queries in sorted order: a dict of
        `QueryValues`, each with ``.mean`` (trec_eval's ``all`` line); ``.means`` gives them
        all as ``{measure name: mean}``.

    Examples
    --------
    >>> from svmmap.ir.trec import Qrels, Run, evaluate_measures
    >>> run = Run.from_dict({"1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}, "2": {"d1": 1.0}})
    >>> qrels = Qrels.from_dict({"1": {"d1": 0, "d3": 2, "d5": 1}, "2": {"d1": 0}})
    >>> # Query 1: relevant documents at rank 3 and never retrieved (d5): AP = (1/3) / 2 = 1/6,
    >>> # R-precision = relevant in the top 2 / 2 = 0, recall@3 = 1/2, 2 of the top 3 judged.
    >>> # Query 2 has no relevant document: trec_eval counts it (AP 0, 1 of 1 judged).
    >>> result = evaluate_measures(run, qrels, ["map", "Rprec", "recall@3", "judged@3"])
    >>> {m: {q: round(v, 4) for q, v in per.items()} for m, per in result.items()}
    {'map': {'1': 0.1667, '2': 0.0}, 'Rprec': {'1': 0.0, '2': 0.0}, 'recall@3': {'1': 0.5, '2': 0.0}, 'judged@3': {'1': 0.6667, '2': 1.0}}
    >>> evaluate_measures(run, qrels, "map", conventions="svmmap")
    {'map': {'1': 0.16666666666666666}}
    >>> {m: round(v, 4) for m, v in result.means.items()}  # trec_eval's "all": the mean over queries 1 and 2
    {'map': 0.0833, 'Rprec': 0.0, 'recall@3': 0.25, 'judged@3': 0.8333}
    """
    import ir_measures

    _check_run_and_qrels(run, qrels)
    _check_conventions(conventions)
    names = [measures] if isinstance(measures, str) else list(measures)
    if not names:
        raise ValueError("measures: no measure given")
    parsed = {name: parse_measure(name) for name in names}
    judged = set(qrels.qid.tolist())
    wanted = run.queries() if queries is None else sort_qids(dict.fromkeys(str(q) for q in queries))
    if queries is not None:
        # A listed query the qrels do not judge is left out, as trec_eval leaves it out: said,
        # since a typo in an id would otherwise give an empty or smaller result without a word.
        unjudged = [q for q in wanted if q not in judged]
        if unjudged:
            shown = ", ".join(repr(q) for q in unjudged[:5]) + (", ..." if len(unjudged) > 5 else "")
            warn_unused(
                f"queries' {shown} ({len(unjudged)} of {len(wanted)})",
                "the qrels judge no such query, and a measure is defined on judged queries only",
            )
    wanted = [q for q in wanted if q in judged]
    if conventions == "svmmap":
        with_rel = set(qrels.qid[qrels.rel >= 1].tolist())
        wanted = [q for q in wanted if q in with_rel]
    keep = np.isin(run.qid, wanted)
    # The tools behind ir_measures see the queries as 1, 2, 3, ... (their order in `wanted`):
    # gdeval (ERR@k) reads query ids as numbers, and gave 0 for "-1", failed on "Q1", "1e3" or
    # "1.5", and divided by zero for "007" beside "7"; every id Run and Qrels accept is valid
    # for the other measures, so the aliases change no value.
    alias = {q: str(i + 1) for i, q in enumerate(wanted)}
    original = {a: q for q, a in alias.items()}
    ranked = {alias[q]: docs for q, docs in _ranked_dict(run, keep).items()}
    qrels_dict = {alias[q]: docs for q, docs in qrels.to_dict().items() if q in alias}
    values: Dict[Any, Dict[str, float]] = {m: {} for m in set(parsed.values())}
    if ranked:
        for metric in ir_measures.iter_calc(list(values), qrels_dict, ranked):
            values[metric.measure][original[str(metric.query_id)]] = float(metric.value)
    # A wanted query that the run does not retrieve: every measure is 0, as with trec_eval -c.
    out = MeasureValues()
    for name, m in parsed.items():
        per = {q: values[m].get(q, 0.0) for q in wanted}
        out[name] = QueryValues(per, _aggregate(m, per.values()))
    return out


def evaluate_run(
    run: Run,
    qrels: Qrels,
    metric: str = "map",
    *,
    queries: Optional[Sequence[str]] = None,
    conventions: str = "svmmap",
) -> QueryValues:
    """Per-query ``metric`` of a run against qrels, computed as trec_eval computes it.

    ``metric`` is any name `parse_measure` accepts ("map", "ndcg@10", "p@10",
    "recall@100", "rprec", "bpref", "mrr", "err@20", "success@10", "judged@10", or
    ir_measures' and trec_eval's names); see `evaluate_measures` for how the values are
    computed. With ``conventions="svmmap"`` (the default here, used by run fusion) only the
    queries that have at least one relevant document in the qrels are returned (trec_eval
    would also count the others, mostly as 0); ``conventions="trec_eval"`` returns them too.

    Returns
    -------
    QueryValues
        ``{qid: value}``, a dict with ``.mean``: the metric over these queries (trec_eval's
        ``all`` line; see `QueryValues`).

    Examples
    --------
    >>> from svmmap.ir.trec import Qrels, Run, evaluate_run
    >>> run = Run.from_dict({"1": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d4": 0.6}, "2": {"d1": 1.0}})
    >>> qrels = Qrels.from_dict({"1": {"d1": 1, "d2": 0, "d3": 2, "d5": 1}, "2": {"d1": 0}})
    >>> # Query 1 has relevant documents at ranks 1 and 3 and misses d5: AP = (1/1 + 2/3) / 3 = 5/9.
    >>> # Query 2 has no relevant document, so it is left out.
    >>> {q: round(ap, 4) for q, ap in evaluate_run(run, qrels).items()}
    {'1': 0.5556}
    >>> evaluate_run(run, qrels, "p@2")
    {'1': 0.5}
    >>> evaluate_run(run, qrels, "map", conventions="trec_eval")["2"]  # trec_eval's AP of query 2
    0.0
    >>> round(evaluate_run(run, qrels, "map", conventions="trec_eval").mean, 4)  # MAP: (5/9 + 0) / 2
    0.2778
    """
    if queries is not None and np.ndim(queries) != 1:
        raise invalid_parameter("queries", "a sequence of query ids", queries)
    return evaluate_measures(run, qrels, [metric], conventions=conventions, queries=queries)[metric]
