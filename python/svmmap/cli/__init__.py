"""The ``svmmap`` command line: ``svmmap learn | classify | evaluate | export | experiment |
fuse | protocol`` (SVM^map style).

``parser`` builds the arguments of every command; each command runs in the module of its
group (``learn``: learn and classify, ``evaluate``, ``export``, ``fuse``, ``experiment``:
experiment and protocol), which imports what it needs when it runs, so that ``svmmap --help``
and ``svmmap classify`` start without scikit-learn.
"""

from __future__ import annotations

import sys
from typing import List, Optional

__all__ = ["main"]


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command in ``argv`` (by default the process's arguments) and return the exit
    status: 0, 2 after an error (printed as ``svmmap COMMAND: error: ...``), 130 when
    interrupted."""
    import importlib

    from .. import _core
    from .._core import DataFormatError, ModelFormatError
    from ._files import forget_written, written
    from .parser import build_parser

    # --version and --help end here, without NumPy: the core is imported without it.
    args = build_parser().parse_args(argv)
    # (module, function) of every command: only the module of the command that runs is
    # imported, since every import counts in a job that takes milliseconds.
    handlers = {
        "learn": ("learn", "run_learn"),
        "classify": ("learn", "run_classify"),
        "evaluate": ("evaluate", "run_evaluate"),
        "experiment": ("experiment", "run_experiment"),
        "fuse": ("fuse", "run_fuse"),
        "protocol": ("experiment", "run_protocol"),
        "export": ("export", "run_export"),
    }
    module, function = handlers[args.command]
    handler = getattr(importlib.import_module(f".{module}", __name__), function)
    forget_written()
    try:
        # A command hands arrays to the core: NumPy's C API is set up first, where a Ctrl-C is
        # the KeyboardInterrupt handled below (rust/python/mod.rs, set_up_numpy).
        _core._set_up_numpy()
        handler(args)
    except (DataFormatError, ModelFormatError, OSError, ValueError) as exc:
        print(f"svmmap {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        print(f"svmmap {args.command}: error: out of memory: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Outputs are written atomically, each complete or not at all; an interrupt after one
        # was written (during classify's evaluation) says which, so the user keeps it.
        done = written()
        what = (
            "nothing was written"
            if not done
            else " and ".join(repr(p) for p in done) + " had been written completely; nothing else was written"
        )
        print(f"svmmap {args.command}: interrupted; {what}", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
