"""``svmmap export``: a model file as a Solr LTR or Elasticsearch LTR model."""

from __future__ import annotations

import argparse
import sys

from ._files import refuse_overwriting_inputs, wrote

__all__ = ["run_export"]


def run_export(args: argparse.Namespace) -> None:
    import json

    from .._text import write_atomic
    from ..ir.export import to_elasticsearch, to_solr
    from ..persistence import load_model

    refuse_overwriting_inputs("OUT", args.out, [("MODEL", args.model)])
    for option, value in (("--name", args.name), ("--store", args.store)):
        if value is not None and not value.strip():
            raise ValueError(f"{option}: the engine needs a non-empty name, got {value!r}")
    model = load_model(args.model)
    names = None if args.feature_names is None else [n.strip() for n in args.feature_names.split(",")]
    if names is not None and any(not n for n in names):
        raise ValueError(
            f"--feature-names: expected comma-separated names without empty items, got {args.feature_names!r}"
        )
    if args.to == "solr":
        doc = to_solr(model, args.name, feature_names=names, store=args.store)
    else:
        if args.store is not None:
            raise ValueError("--store is for Solr; Elasticsearch takes the feature set in the _createmodel URL")
        doc = to_elasticsearch(model, args.name, feature_names=names)
    write_atomic(args.out, json.dumps(doc, indent=2) + "\n")
    wrote(args.out)
    print(f"{args.to} model {args.name!r} written to {args.out}", file=sys.stderr)
