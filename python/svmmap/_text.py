"""The text-file rules every reader and writer shares: how lines are read (gzip, byte order
marks, LF/CRLF/CR), how a line splits into fields, which numbers are accepted, and how a file
is written atomically.

LETOR files (read by the core), predictions (``svmmap.io``) and TREC runs and qrels
(``svmmap.ir.trec``) follow the same rules, so that a line number in an error agrees with an
editor's and an id is the same string in every file.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any, Iterator, List, Tuple, Union

from . import _core

__all__ = ["PathLike", "text_lines", "split_fields", "number", "integer", "write_atomic"]

PathLike = Union[str, "os.PathLike[str]"]

_UTF8_BOM = b"\xef\xbb\xbf"


def text_lines(name: str) -> Iterator[Tuple[int, bytes]]:
    """(1-based line number, bytes) of every line of a text file, as files really come: a UTF-8
    byte order mark is skipped, a line ends at LF, CRLF or a lone CR, and gzip-compressed files
    (TREC distributes runs as .gz) are decompressed, whatever their name. These are the LETOR
    reader's rules, so that line numbers in errors agree with an editor's and an id is the
    same string in every file. UTF-16 text, and a byte order mark inside the file (files
    joined with cat), are errors naming the line."""
    import gzip

    from ._core import DataFormatError

    lineno = 0
    # Opened once and peeked at, so that a pipe (`--runs <(zcat run.gz)`) loses no bytes.
    with open(name, "rb") as raw_file, contextlib.ExitStack() as stack:
        f: Any = raw_file
        if raw_file.peek(2)[:2] == b"\x1f\x8b":
            f = stack.enter_context(gzip.GzipFile(fileobj=raw_file, mode="rb"))
        for k, raw in enumerate(f):
            if k == 0 and raw.startswith(_UTF8_BOM):
                raw = raw[len(_UTF8_BOM) :]
            elif k == 0 and raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                raise DataFormatError(
                    f"{name}:1: the file is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8"
                )
            raw = raw[:-2] if raw.endswith(b"\r\n") else raw.rstrip(b"\n")
            for piece in raw.split(b"\r") if b"\r" in raw else (raw,):
                lineno += 1
                if piece.startswith(_UTF8_BOM):
                    raise DataFormatError(
                        f"{name}:{lineno}: a UTF-8 byte order mark in the middle of the file (files joined "
                        "together?); remove it"
                    )
                yield lineno, piece


def number(token: str) -> float:
    """A decimal number as the LETOR reader (Rust's f64 parser) and C's strtod read it: ASCII
    only. Python's float() also takes "1_000" and other scripts' digits ("\u0661"), which
    other tools read differently or not at all."""
    if not token.isascii() or "_" in token:
        raise ValueError(token)
    return float(token)


def integer(token: str) -> int:
    """An integer written with ASCII digits and an optional sign (see ``number``)."""
    if re.fullmatch(r"[+-]?[0-9]+", token) is None:
        raise ValueError(token)
    return int(token)


def split_fields(name: str, lineno: int, raw: bytes) -> List[str]:
    """The fields of a line, split on ASCII whitespace (space, tab, CR, VT, FF: C's isspace,
    the LETOR reader's separators) and decoded as UTF-8; a byte that is not UTF-8 is an error
    naming the file, line and field instead of a replacement character."""
    fields = raw.split()
    if b"\x00" in raw:
        # numpy's str arrays drop trailing NULs: "1\0" would become query or document "1".
        k = next(k for k, f in enumerate(fields, 1) if b"\x00" in f)
        raise _core.DataFormatError(f"{name}:{lineno}: field {k} contains a NUL byte (a binary file?)")
    try:
        return [f.decode("utf-8") for f in fields]
    except UnicodeDecodeError:
        for k, f in enumerate(fields, 1):
            try:
                f.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = f[exc.start]
                raise _core.DataFormatError(
                    f"{name}:{lineno}: field {k} ({f.decode('utf-8', 'replace')!r}) is not UTF-8 text "
                    f"(byte 0x{bad:02x}, Latin-1?); re-encode the file as UTF-8"
                ) from None
        raise


def write_atomic(path: PathLike, data: Union[str, bytes]) -> None:
    """Write a whole file so that readers see the old content or the new, never a part."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    _core.write_atomic(os.fspath(path), data)
