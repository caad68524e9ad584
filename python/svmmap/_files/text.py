"""The text-file rules every reader and writer shares: how lines are read (gzip, byte order
marks, LF/CRLF/CR), how a line splits into fields, which numbers are accepted, and how a file
is written atomically.

Every text file is opened by the core's one opener (``rust/data/reader/file.rs``): LETOR
files (read by the core), model files (``svmmap.persistence``), and through ``text_lines``
LightGBM's query sizes and predictions (``svmmap.io``) and TREC runs and qrels
(``svmmap.ir.trec``). They follow the same rules, so that a line number in an error agrees
with an editor's and an id is the same string in every file.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterator, List, Tuple, Union

from .. import _core

__all__ = [
    "PathLike",
    "path_name",
    "text_lines",
    "split_fields",
    "number",
    "integer",
    "BeyondInt64",
    "check_ids",
    "write_atomic",
]

PathLike = Union[str, "os.PathLike[str]"]


def path_name(path: Any, name: str = "path", *, writing: bool = False) -> str:
    """A file's path as the str the core opens: a str, bytes (decoded as ``os.fsdecode``
    decodes file names) or a path-like object; any other value is a TypeError naming the
    argument (bytes used to fail with "can't concat str to bytes").

    A file is read by any name the OS takes: a name that is not UTF-8 (legal on Linux, where a
    name is bytes) crosses as ``os.fsdecode`` gives it, with the byte 0xff as ``"\\udcff"``,
    and the core opens it by the original bytes (``os.fsencode``'s). Only a str that names no
    bytes at all (a lone UTF-16 surrogate not made by ``os.fsdecode``) is refused. A file is
    written (``writing=True``) by a UTF-8 name only: the atomic write builds its temporary
    name beside it as text, so another name is refused, naming the byte, before any work."""
    try:
        text = os.fsdecode(path)
    except TypeError:
        raise TypeError(f"{name} must be a file path (str, bytes or os.PathLike), got {type(path).__name__}") from None
    try:
        if writing:
            text.encode("utf-8")
        else:
            os.fsencode(text)
    except UnicodeEncodeError as exc:
        # A name refused here reached the core as "'utf-8' codec can't encode character",
        # naming neither argument nor file; the refusal says which byte and what to do.
        try:
            shown, byte = repr(os.fsencode(text)), f"byte 0x{os.fsencode(text[exc.start])[0]:02x}"
        except UnicodeEncodeError:
            shown, byte = repr(text), f"{text[exc.start]!r}, half of a UTF-16 surrogate pair,"
        if not writing:
            raise ValueError(
                f"{name} {shown}: {byte[:-1]} at character {exc.start}, is in no file name the OS takes"
            ) from None
        raise ValueError(
            f"{name} {shown}: the file name is not UTF-8 text ({byte} at character {exc.start}); "
            "svmmap writes files by UTF-8 names: rename the file"
        ) from None
    return text


_UTF8_BOM = b"\xef\xbb\xbf"


def text_lines(name: str) -> Iterator[Tuple[int, bytes]]:
    """(1-based line number, bytes) of every line of a text file, as files really come.

    The file is read by the core's one opener of text files (``_core.read_text_file``, the
    LETOR reader's and the model loader's too): the memory its text needs is checked before it
    is read or inflated, gzip-compressed files (TREC distributes runs as .gz) are decompressed
    whatever their name, gzip data that ends early or does not decompress is an error naming
    the file and line, a UTF-8 byte order mark is skipped and UTF-16 or UTF-32 text is refused.
    Here a line ends at LF, CRLF or a lone CR, as in the LETOR reader, so that line numbers in
    errors agree with an editor's and an id is the same string in every file; a byte order
    mark inside the file (files joined with cat) is an error naming the line."""
    import io

    from .._core import DataFormatError

    name = path_name(name)

    lineno = 0
    # The whole text at once: one call releases the GIL while reading and decompressing, and
    # a pipe (`--runs <(zcat run.gz)`) is read once, as a file is. BytesIO shares the buffer.
    for raw in io.BytesIO(_core.read_text_file(name)):
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


#: The bounds of the integer fields of text files: every column of integers is an int64
#: array, which cannot hold more.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class BeyondInt64(ValueError):
    """An integer field written correctly whose value an int64 column cannot hold."""


def integer(token: str) -> int:
    """An integer written with ASCII digits and an optional sign (see ``number``), within
    int64: the column it goes into is an int64 array, and a larger value would escape the
    reader as numpy's OverflowError instead of an error naming its line."""
    if re.fullmatch(r"[+-]?[0-9]+", token) is None:
        raise ValueError(token)
    value = int(token)
    if not INT64_MIN <= value <= INT64_MAX:
        raise BeyondInt64(token)
    return value


# The separators `split_fields` splits on (bytes.split(): ASCII whitespace) and the NUL byte
# it refuses: an id holding one of them would come back as other fields or not at all.
_NOT_IN_A_FIELD = re.compile("[ \t\n\r\x0b\x0c\x00]")


def _id_problem(value: str, first_field: bool) -> str:
    """Why ``value`` cannot be a field of a text file, or ''."""
    if not value:
        return "empty"
    found = _NOT_IN_A_FIELD.search(value)
    if found:
        char = found.group()
        return "a NUL byte" if char == "\x00" else f"whitespace ({char!r}), which separates fields"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "not UTF-8 text (a lone surrogate)"
    if first_field and value.startswith("\ufeff"):
        return "starting with a byte order mark, which the readers skip or refuse at the start of a line"
    return ""


def check_ids(values: Any, what: str, *, first_field: bool = False) -> Any:
    """The one check of ids (query ids, docnos, run tags) that go into a text file: each must be
    one field of UTF-8 text as `split_fields` reads it back, so non-empty, without ASCII
    whitespace or NUL, and (``first_field``, the query id that starts each line) without a
    leading byte order mark. Every reader yields such ids; every writer and every constructor
    of runs and qrels calls this, so that what is written reads back the same and what cannot
    be written is refused when it enters, naming ``what`` (the argument) and the row.

    ``values``: a str (checked alone) or a sequence of ids; returns them unchanged. A
    ValueError names the first bad id.
    """
    if isinstance(values, str):
        problem = _id_problem(values, first_field)
        if problem:
            raise ValueError(f"{what} {values!r} is {problem}; it must be one word of text to be written to a file")
        return values
    items = values.tolist() if hasattr(values, "tolist") else list(values)
    strings = [v if isinstance(v, str) else str(v) for v in items]
    # One pass over the joined text finds whether any id is bad (fast for runs of millions of
    # rows); only then is the first bad one looked for.
    text = "\x01".join(strings)
    bad = (
        any(not v for v in strings)
        or _NOT_IN_A_FIELD.search(text) is not None
        or (first_field and any(v.startswith("\ufeff") for v in strings))
    )
    if not bad:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            bad = True
    if bad:
        for row, v in enumerate(strings):
            problem = _id_problem(v, first_field)
            if problem:
                raise ValueError(
                    f"{what}[{row}] is {v!r}, {problem}; an id must be one word of text to be written "
                    "to a file and read back"
                )
    return values


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
    _core.write_atomic(path_name(path, writing=True), data)
