"""The model file's text written: a document built in memory checked as a reader checks the
text (`model_json`'s rules, without making and parsing the text first), and laid out as every
model file is.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List

from .model_json import (
    _SURROGATE,
    MAX_DEPTH,
    _beyond_float64,
    _check_header,
    _check_model,
    _floats,
    _show,
    _too_deep,
    _typed_fields,
    parse_model_text,
)

__all__ = ["checked_fields", "document_text", "json_document", "model_text"]

# ----------------------------------------------------------------------------------------------
# The file's text.


def model_text(text: str, source: str) -> str:
    """The file's text of the model document `text` (JSON): checked as a reader checks it
    (`parse_model_text`), then written by `document_text`.

    Raises
    ------
    svmmap.ModelFormatError
        When a reader would refuse the document; the error names `source`.
    """
    return document_text(parse_model_text(text, source))


def document_text(model: Dict[str, Any]) -> str:
    """The file's text of a checked model document (`parse_model_text`'s or
    `writable_document`'s): the fields in their order, the keys of every other object sorted
    (as both return them), two spaces of indentation per level and a line break at the end.
    Every number reads back as the same float64: Python writes a float in the shortest form
    that does."""
    pieces: List[str] = []
    _pretty(model, "", pieces)
    pieces.append("\n")
    return "".join(pieces)


#: One JSON scalar (a string, number, true, false or null) as compact text; characters beyond
#: ASCII are written as themselves.
_scalar = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def _pretty(value: Any, indent: str, out: List[str]) -> None:
    """`value` as JSON with two spaces of indentation per level, as ``json.dumps(value,
    indent=2, ensure_ascii=False)`` writes it, appended to `out`; a list of floats (the
    weights) is joined at once rather than element by element."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(f"{',' if i else ''}\n{inner}{_scalar(key)}: ")
            _pretty(item, inner, out)
        out.append(f"\n{indent}}}")
    elif isinstance(value, list) and value:
        if _floats(value) and all(map(math.isfinite, value)):
            # float.__repr__ is json's own float encoding: the shortest text that reads back
            # as the same float64.
            out.append(f"[\n{inner}" + f",\n{inner}".join(map(float.__repr__, value)) + f"\n{indent}]")
            return
        out.append("[")
        for i, item in enumerate(value):
            out.append(f"{',' if i else ''}\n{inner}")
            _pretty(item, inner, out)
        out.append(f"\n{indent}]")
    else:
        out.append(_scalar(value))


# ----------------------------------------------------------------------------------------------
# A document built in memory, checked before its text is made.


def json_document(doc: Any, source: str) -> Any:
    """The document `doc` (built in memory, as ``model_file.svm_document`` builds it) as
    ``json.loads`` reads the text ``json.dumps`` writes of it, with the keys of every object
    sorted (as `parse_model_text` sorts them), refused where a reader would refuse that text's
    values; with `checked_fields`, a model is checked once, in memory, and saved without
    encoding and parsing its text first (which took longer than writing it, for a model of
    many weights).

    Tuples become lists, keys that are numbers, booleans or null strings, float and int
    subclasses their values; a value json cannot write is the TypeError json raises.

    Raises
    ------
    ValueError
        When a value is NaN or infinite (which JSON cannot hold), naming its path.
    svmmap.ModelFormatError
        When a string holds half a surrogate pair, an integer is beyond float64, a key appears
        twice or the document nests too deep, as the reader would refuse its text.
    """
    return _plain(doc, "", 0, source)


def checked_fields(doc: Any, source: str) -> Dict[str, Any]:
    """`json_document`'s document as `parse_model_text` returns it from the document's text:
    its header, the types of its fields and what they must agree on checked, the fields of
    `FIELDS` only, in their order.

    Raises
    ------
    svmmap.ModelFormatError
        When a reader would refuse the document; the error names `source` and the field.
    """
    _check_header(doc, source)
    model = _typed_fields(doc, None, source)
    _check_model(model, source)
    return model


def _plain(value: Any, at: str, depth: int, source: str) -> Any:
    """`value` as JSON reads its text back (see `writable_document`), with the keys of every
    object sorted, as `_unique_keys` sorts them."""
    from .._core import ModelFormatError

    if type(value) is list and _floats(value):
        # The weights: checked at C speed, and shared rather than copied.
        if all(map(math.isfinite, value)):
            return value
        i = next(i for i, v in enumerate(value) if not math.isfinite(v))
        raise _not_finite(f"{at}[{i}]", source)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise ModelFormatError(
                f"{source}: {at or 'the document'} holds half a UTF-16 surrogate pair, which is no character"
            )
        return str(value)
    if isinstance(value, int):
        if _beyond_float64(value):
            raise ModelFormatError(f"{source}: {at}: number out of range (beyond float64)")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _not_finite(at, source)
        return float(value)
    if depth >= MAX_DEPTH:
        raise ModelFormatError(f"{source}: not valid JSON: {_too_deep()}")
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{at}[{i}]", depth + 1, source) for i, item in enumerate(value)]
    if isinstance(value, dict):
        pairs = [(_json_key(key, at), item) for key, item in value.items()]
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            twice = next(k for k in keys if keys.count(k) > 1)
            raise ModelFormatError(
                f"{source}: {at or 'the document'}: the key {_show(twice)} appears twice in one object (a JSON "
                "reader would keep either); keep one"
            )
        return {
            key: _plain(item, f"{at}.{key}" if at else key, depth + 1, source)
            for key, item in sorted(pairs, key=lambda pair: pair[0])
        }
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _json_key(key: Any, at: str) -> str:
    """A key as ``json.dumps`` writes it."""
    if isinstance(key, str):
        return str(key)
    if key is None or isinstance(key, bool):
        return _scalar(key)
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float) and math.isfinite(key):
        return float.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__} (in {at or 'the document'})")


def _not_finite(at: str, source: str) -> ValueError:
    return ValueError(
        f"{source}: the model was not written: {at or 'a value'} is not a finite number, which JSON cannot hold "
        "(was the model fitted to the end?)"
    )
