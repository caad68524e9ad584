"""The command line's rule for output paths: an output may not be one of the command's inputs."""

from __future__ import annotations

from typing import Iterable

__all__ = ["same_file", "refuse_overwriting_inputs"]


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (same device and inode: through symbolic and hard links)."""
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def refuse_overwriting_inputs(out_label: str, out: str, inputs: Iterable[tuple]) -> None:
    """An output path that is one of the inputs would replace the input with the output (the
    atomic write succeeds, and the input is gone): refuse before any work is done."""
    for label, path in inputs:
        if same_file(out, path):
            same = "" if out == path else f" (the same file as {label} {path!r})"
            raise ValueError(
                f"{out_label} {out!r} is the input {label}{same}; refusing to overwrite an input: give another output path"
            )
