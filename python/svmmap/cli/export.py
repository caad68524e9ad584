"""``svmmap export``: a model file as a Solr LTR or Elasticsearch LTR model, or as ONNX."""

from __future__ import annotations

import argparse
import sys

from ._files import refuse_overwriting_inputs, wrote

__all__ = ["run_export"]


def run_export(args: argparse.Namespace) -> None:
    import json

    from .._files.text import write_atomic
    from ..ir.export import engine_name, score_offset, to_elasticsearch, to_onnx, to_solr
    from ..persistence import load_model

    refuse_overwriting_inputs("OUT", args.out, [("MODEL", args.model)])
    for option, value in (("--name", args.name), ("--store", args.store)):
        if value is not None:
            engine_name(value, option)
    model = load_model(args.model)
    names = None if args.feature_names is None else [n.strip() for n in args.feature_names.split(",")]
    if names is not None and any(not n for n in names):
        raise ValueError(
            f"--feature-names: expected comma-separated names without empty items, got {args.feature_names!r}"
        )
    if args.dtype is not None and args.to != "onnx":
        raise ValueError(f"--dtype is for --to onnx; {args.to} holds float32 numbers")
    if args.to == "onnx":
        if args.store is not None:
            raise ValueError("--store is for Solr")
        try:
            graph = to_onnx(model, dtype=args.dtype or "float64", name=args.name, feature_names=names)
        except ImportError as exc:
            # A missing optional package is the user's to install: a message, not a traceback.
            raise ValueError(str(exc)) from None
        write_atomic(args.out, graph.SerializeToString())
        wrote(args.out)
        print(f"onnx model {args.name!r} written to {args.out}", file=sys.stderr)
        return
    if args.to == "solr":
        doc = to_solr(model, args.name, feature_names=names, store=args.store)
    else:
        if args.store is not None:
            raise ValueError("--store is for Solr; Elasticsearch takes the feature set in the _createmodel URL")
        doc = to_elasticsearch(model, args.name, feature_names=names)
    write_atomic(args.out, json.dumps(doc, indent=2) + "\n")
    wrote(args.out)
    print(f"{args.to} model {args.name!r} written to {args.out}", file=sys.stderr)
    offset = score_offset(model)
    if offset != 0.0:
        # The scaler's constant, which the engines' linear models cannot hold.
        print(
            f"its scores are svmmap's minus {offset!r} (the scaler's constant; the rankings are the same)",
            file=sys.stderr,
        )
