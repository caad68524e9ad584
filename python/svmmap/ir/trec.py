"""TREC run files and qrels: reading with clear errors, writing valid runs, evaluating runs.

Formats (whitespace-separated, one entry per line):

- run: ``qid Q0 docno rank score tag`` (the second field is ignored, as trec_eval does);
- qrels: ``qid iteration docno relevance`` (the second field is ignored; relevance is an integer,
  and a document is relevant when it is >= 1, trec_eval's default).

trec_eval ranks a query's documents by decreasing score and breaks ties by *decreasing* docno
(byte order, ``strcmp``); it ignores the rank column. It keeps scores as C ``float``s: a score
is read as a double (``atof``) and rounded to the nearest float32, so scores that differ only
beyond float32's 24-bit significand (about 7 significant digits) tie, and so do scores beyond
float32's range (both become infinite) or below its smallest subnormal (both become 0).
`trec_order` reproduces exactly that, `write_run` writes documents in that order
with ranks 1..n, so that the written ranks and the order trec_eval evaluates agree, and
`evaluate_run` evaluates in that order too (also for the measures that other tools
compute, such as gdeval's ERR@k).

The code lives in four private modules, one per job, and this module re-exports their public
names: ``_trec_order`` (the one rule above, which the other three share), ``_trec_data`` (`Run`
and `Qrels`, their dicts and frames), ``_trec_files`` (reading and writing the files) and
``_trec_measures`` (`parse_measure`, `evaluate_measures`, `evaluate_run`).
"""

from __future__ import annotations

from ._trec_data import Qrels, Run
from ._trec_files import format_run, read_qrels, read_run, write_qrels, write_run
from ._trec_measures import (
    RUN_CONVENTIONS,
    MeasureValues,
    QueryValues,
    evaluate_measures,
    evaluate_run,
    parse_measure,
)
from ._trec_order import sort_qids, trec_order, trec_ranks, trec_scores

__all__ = [
    "Run",
    "Qrels",
    "sort_qids",
    "trec_scores",
    "trec_order",
    "trec_ranks",
    "read_run",
    "read_qrels",
    "format_run",
    "write_run",
    "write_qrels",
    "evaluate_run",
    "evaluate_measures",
    "parse_measure",
    "QueryValues",
    "MeasureValues",
    "RUN_CONVENTIONS",
]

# The classes and functions say they are svmmap.ir.trec's, where users import them from: the
# API pages and reprs show that path, and pickles name it.
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type) or callable(_obj):
        _obj.__module__ = __name__
del _name, _obj
