"""The model file's JSON document: its text parsed and checked as every reader relies on it
(``model_writing`` writes it, from a document checked by the same rules).

The core reads the file (the one opener's rules: memory checked, gzip, byte order mark, UTF-8)
and writes it atomically; what the text means is decided here, with the standard library's
``json``:

- the text is JSON without NaN or Infinity (JSON has neither), without a number beyond the
  float64 range, without a key twice in one object (a JSON reader would keep either copy) and
  without half a UTF-16 surrogate pair in a string (no character);
- ``format`` is ``"svmmap-model"`` and ``version`` an integer from `PLAIN_FORMAT_VERSION` to
  `FORMAT_VERSION`, checked before the rest, so that a newer file is reported as such even when
  its layout has changed;
- ``n_features`` is a count and ``coef`` holds ``n_features`` finite numbers whose magnitudes sum
  within the float64 range; ``feature_names`` is null or ``n_features`` strings; ``params``,
  ``binning``, ``training`` and ``scaler`` are objects or null (their contents are the Python
  layer's, see ``model_file.check_document``), and ``scaler`` needs version 2.

Every error is a ``ModelFormatError`` naming the file, and the line and field where the text
has them. ``model_file`` builds and reads the documents; this module knows only their text, and
``model_writing`` writes it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "PLAIN_FORMAT_VERSION", "line_of", "parse_model_text"]

FORMAT_NAME = "svmmap-model"
#: The newest format version, which this svmmap reads and writes for models with a scaler.
FORMAT_VERSION = 2
#: The format version of a model without a scaler (the oldest, which every svmmap reads). Version
#: 2 added ``scaler``; a version-1 reader would ignore it and score unscaled features.
PLAIN_FORMAT_VERSION = 1

#: The document's fields in the file's order; a reader keeps these and drops any other.
FIELDS = (
    "format",
    "version",
    "svmmap_version",
    "n_features",
    "coef",
    "params",
    "feature_names",
    "binning",
    "training",
    "scaler",
)
#: The free-form parts, objects (or null) whose keys the Python layer owns.
_FREE_FORM = ("params", "binning", "training", "scaler")

#: A model nests a few levels (a Binner's interaction thresholds are the deepest, at six);
#: deeper text is refused before Python's own recursion limit is reached.
MAX_DEPTH = 128

#: The largest magnitude an integer may have and still be a float64 (2^1024 is inf).
_FLOAT_LIMIT = 2**1024
_SURROGATE = re.compile("[\ud800-\udfff]")


def _floats(values: List[Any]) -> bool:
    """Whether every item of a list is a float (not an int or a bool): the weights' lists are
    checked at C speed, a model's weights can number millions."""
    return set(map(type, values)) <= {float}


class _Refused(Exception):
    """A part of the text that ``json`` reads but a model may not hold; `where` finds its first
    occurrence among the text's tokens (see `_tokens`), which the error then names."""

    def __init__(self, what: str, where: Callable[["_Token"], bool]) -> None:
        super().__init__(what)
        self.what = what
        self.where = where


def _unique_keys(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Refused("a key appears twice", lambda token: token.repeated)
    # In the order of their keys, as the file writes every free-form object (the core's
    # serde_json wrote them so before this module), so that a document read and written again
    # keeps its text.
    return dict(sorted(pairs, key=lambda pair: pair[0]))


def _no_constant(word: str) -> float:
    raise _Refused(
        f"{word} is no JSON number (JSON has no NaN or Infinity, and a model's numbers are finite)",
        lambda token: token.kind == "word" and token.text == word,
    )


def _beyond_float64(value: int) -> bool:
    """Whether an integer reads as no finite float64: not only from 2^1024 on, as every integer
    from 2^1024 - 2^970 rounds to infinity (Python's float() then raises OverflowError)."""
    try:
        float(value)
    except OverflowError:
        return True
    return False


def _integer(digits: str) -> int:
    # 309 digits are beyond float64 already; the length is checked first so that a hostile
    # file of a million digits is not converted (Python refuses over 4300 with a bare error).
    value = int(digits) if len(digits) <= 320 else _FLOAT_LIMIT
    if _beyond_float64(value):
        raise _Refused("number out of range", lambda token: token.kind == "number" and token.out_of_range)
    return value


def _parse(text: str, source: str) -> Any:
    from .._core import ModelFormatError

    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_int=_integer)
    except json.JSONDecodeError as exc:
        # A document cut short fails at its end, or in a string that never closes.
        ends_early = not text[exc.pos :].strip() or exc.msg.startswith("Unterminated string")
        what = "the file ends early (truncated?)" if ends_early else "not valid JSON"
        raise ModelFormatError(
            # json's "Invalid control character at" ends with the word its position follows.
            f"{source}:{exc.lineno}: {what}: {exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}"
        ) from None
    except _Refused as exc:
        raise ModelFormatError(_located(text, source, exc)) from None
    except RecursionError:
        raise ModelFormatError(f"{source}: not valid JSON: {_too_deep()}") from None


def _too_deep() -> str:
    return f"arrays or objects nest deeper than {MAX_DEPTH} levels (a model nests a few)"


def _located(text: str, source: str, refused: _Refused) -> str:
    token = next((t for t in _tokens(text) if refused.where(t)), None)
    if token is None:  # pragma: no cover - the hooks refuse only what the tokens show
        return f"{source}: not valid JSON: {refused.what}"
    what = refused.what
    if token.repeated:
        what = f"the key {_show(token.value)} appears twice in one object (a JSON reader would keep either); keep one"
    return f"{source}:{token.line}: not valid JSON: {what} at line {token.line} column {token.column}"


def _show(value: Any) -> str:
    """A JSON value as compact text, readable whatever characters its strings hold."""
    shown = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return shown.encode("utf-8", "backslashreplace").decode("utf-8")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


# ----------------------------------------------------------------------------------------------
# Where a refused part is: the text's tokens with their paths, walked only after an error.

_TOKEN = re.compile(
    r'[ \t\n\r]*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)'
    r"|(?P<word>true|false|null|NaN|-?Infinity)|(?P<punct>[{}\[\]:,]))",
    re.DOTALL,
)


class _Token:
    """A key or a value of the text: where it starts, and the keys and indices leading to it
    (for a key, those of its object)."""

    def __init__(self, source: str, kind: str, start: int, end: int, path: Tuple[Any, ...], key: bool) -> None:
        self.source = source
        self.kind = kind
        self.start = start
        self.text = source[start:end]
        self.path = path
        self.key = key
        self.repeated = False

    @property
    def value(self) -> Any:
        return json.loads(self.text) if self.kind == "string" else self.text

    @property
    def field(self) -> Optional[str]:
        """The nearest key of its path: a feature name's is "feature_names", a parameter's its own."""
        return next((k for k in reversed(self.path) if isinstance(k, str)), None)

    @property
    def out_of_range(self) -> bool:
        if any(c in self.text for c in ".eE"):
            return math.isinf(float(self.text))
        return len(self.text) > 320 or _beyond_float64(int(self.text))

    @property
    def line(self) -> int:
        return self.source.count("\n", 0, self.start) + 1

    @property
    def column(self) -> int:
        return self.start - self.source.rfind("\n", 0, self.start)


def _tokens(text: str) -> Iterator[_Token]:
    """The keys and values of `text` in document order (an array or object as its opening
    bracket), up to the first token that is not JSON."""
    # One frame per open array or object: [is an object, key or index, keys seen, a key is next].
    stack: List[List[Any]] = []
    pos = 0
    while True:
        m = _TOKEN.match(text, pos)
        if m is None:
            return
        pos = m.end()
        kind = m.lastgroup or ""
        word = m.group(kind)
        top = stack[-1] if stack else None
        if kind == "punct" and word not in "{[":
            if word == "," and top is not None:
                if top[0]:
                    top[3] = True
                else:
                    top[1] += 1
            elif word in "}]" and stack:
                stack.pop()
            continue
        is_key = top is not None and top[0] and top[3]
        path = tuple(frame[1] for frame in (stack[:-1] if is_key else stack))
        token = _Token(text, kind, m.start(kind), m.end(kind), path, is_key)
        if is_key and top is not None:
            name = token.value
            token.repeated = name in top[2]
            top[2].add(name)
            top[1], top[3] = name, False
        yield token
        if word in "{[":
            stack.append([word == "{", None if word == "{" else 0, set(), word == "{"])


# ----------------------------------------------------------------------------------------------
# The values json accepted but a model may not hold.


def _check_values(doc: Any, text: str, source: str) -> None:
    """Lone surrogates and numbers beyond float64 (read as inf), anywhere in the document."""
    from .._core import ModelFormatError

    found = _first_bad(doc, 0)
    if found is None:
        return
    if found == "depth":
        raise ModelFormatError(f"{source}: not valid JSON: {_too_deep()}")
    if found == "range":
        refused = _Refused("number out of range", lambda token: token.kind == "number" and token.out_of_range)
        raise ModelFormatError(_located(text, source, refused))
    token = next((t for t in _tokens(text) if t.kind == "string" and _lone_surrogate_at(t.text) is not None), None)
    if token is None:  # pragma: no cover - a text read from UTF-8 holds surrogates only as escapes
        raise ModelFormatError(f"{source}: a string holds half a UTF-16 surrogate pair, which is no character")
    field = "" if token.field is None else f' of field "{_show(token.field)[1:-1]}"'
    column = token.column + (_lone_surrogate_at(token.text) or 0)
    raise ModelFormatError(
        f"{source}:{token.line}: a string{field} holds a \\u escape of half a UTF-16 surrogate pair (\\ud800 to "
        f"\\udfff without its other half, column {column}), which is no character: write the character itself "
        "or both halves of its pair"
    )


def _first_bad(value: Any, depth: int) -> Optional[str]:
    """ "surrogate", "range" or "depth" for the first such problem in `value`, else None."""
    if depth > MAX_DEPTH:
        return "depth"
    if isinstance(value, str):
        return "surrogate" if _SURROGATE.search(value) else None
    if isinstance(value, float):
        return None if math.isfinite(value) else "range"
    if isinstance(value, dict):
        for key, item in value.items():
            found = _first_bad(key, depth) or _first_bad(item, depth + 1)
            if found:
                return found
    elif isinstance(value, list):
        # A list of floats (the weights, the importances) is checked at once.
        if _floats(value):
            return None if all(map(math.isfinite, value)) else "range"
        for item in value:
            found = _first_bad(item, depth + 1)
            if found:
                return found
    return None


_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)


def _lone_surrogate_at(string_token: str) -> Optional[int]:
    """The offset in a string token of its first \\u escape of half a surrogate pair that has
    no other half, or None."""
    escapes = [
        (m.start(), int(m.group(1), 16) if m.group(1) else None, m.end()) for m in _ESCAPE.finditer(string_token)
    ]
    i = 0
    while i < len(escapes):
        start, code, _ = escapes[i]
        if code is not None and 0xD800 <= code <= 0xDBFF:
            after = escapes[i + 1] if i + 1 < len(escapes) else None
            if (
                after is not None
                and after[0] == escapes[i][2]
                and after[1] is not None
                and 0xDC00 <= after[1] <= 0xDFFF
            ):
                i += 2
                continue
            return start
        if code is not None and 0xDC00 <= code <= 0xDFFF:
            return start
        i += 1
    return None


# ----------------------------------------------------------------------------------------------
# The document: header, field types, and what the fields must agree on.


def parse_model_text(text: str, source: str) -> Dict[str, Any]:
    """The model document of `text`, checked, with the fields of `FIELDS` only (``scaler`` only
    when it is not null), in their order; `source` names the file in errors.

    Raises
    ------
    svmmap.ModelFormatError
        Naming the file, and the line and the field where the text has them.
    """
    doc = _parse(text, source)
    _check_values(doc, text, source)
    _check_header(doc, source)
    model = _typed_fields(doc, text, source)
    _check_model(model, source, text)
    return model


def _check_header(doc: Any, source: str) -> None:
    from .._core import ModelFormatError

    if not isinstance(doc, dict):
        kind = "an array" if isinstance(doc, list) else f"the lone value {_show(doc)}"
        raise ModelFormatError(f"{source}: not an svmmap model: the file holds {kind}, where a model is a JSON object")
    header = doc
    if header.get("format") != FORMAT_NAME:
        got = _show(header["format"]) if "format" in header else "nothing"
        raise ModelFormatError(f'{source}: not an svmmap model (expected "format": "{FORMAT_NAME}", got {got})')
    version = header.get("version")
    readable = f"this svmmap reads versions {PLAIN_FORMAT_VERSION} to {FORMAT_VERSION}"
    if type(version) is int and PLAIN_FORMAT_VERSION <= version <= FORMAT_VERSION:
        return
    if type(version) is int and version > FORMAT_VERSION:
        raise ModelFormatError(
            f"{source}: model format version {version} was written by a newer svmmap; {readable}: upgrade svmmap"
        )
    # Say what the file holds: 0, "1", 1.0 and a missing field are refused alike.
    if type(version) is int and version >= 0:
        given = str(version)
    else:
        given = f"{_show(version)} ({_kind(version)})" if "version" in header else "(missing)"
    raise ModelFormatError(f"{source}: unsupported model format version {given}; {readable} (an integer)")


def _unexpected(value: Any) -> str:
    """A value as the core's serde_json named it in these errors before this module: `string "1"`,
    ``boolean `true` ``, ``integer `1` ``, ``floating point `1.5` ``, `null`, `sequence`, `map`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{_show(value)}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value!r}`"
    if isinstance(value, str):
        return f"string {_show(value)}"
    return "sequence" if isinstance(value, list) else "map"


def _field_problem(name: str, value: Any) -> Optional[Tuple[Tuple[Any, ...], str]]:
    """The path (below the field) to the first part of the wrong type of field `name` and the
    words of the error, or None when the field has its type."""
    if name == "n_features":
        if type(value) is int and 0 <= value < 2**64:
            return None
        # The words are JSON's, not the core's former serde_json's ("expected usize").
        if type(value) is int and value >= 0:
            return (), f"invalid value: integer `{value}`, expected a non-negative integer below 2^64"
        if type(value) is int:
            return (), f"invalid value: integer `{value}`, expected a non-negative integer"
        return (), f"invalid type: {_unexpected(value)}, expected a non-negative integer"
    if name == "coef":
        if not isinstance(value, list):
            return (), f"invalid type: {_unexpected(value)}, expected a sequence"
        if _floats(value):
            return None
        for i, v in enumerate(value):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return (i,), f"invalid type: {_unexpected(v)}, expected a number"
        return None
    if name == "svmmap_version" and value is not None and not isinstance(value, str):
        return (), f"invalid type: {_unexpected(value)}, expected a string"
    if name == "feature_names" and value is not None:
        if not isinstance(value, list):
            return (), f"invalid type: {_unexpected(value)}, expected a sequence"
        for i, v in enumerate(value):
            if not isinstance(v, str):
                return (i,), f"invalid type: {_unexpected(v)}, expected a string"
    return None


def _typed_fields(doc: Dict[str, Any], text: Optional[str], source: str) -> Dict[str, Any]:
    """The fields of `FIELDS` of the document, after checking the types of those of fixed type
    in the document's order (so that the first wrong one in the text is named); errors name
    the line when the document has a `text`."""
    from .._core import ModelFormatError

    for name in doc:
        problem = _field_problem(name, doc[name])
        if problem is None:
            continue
        below, said = problem
        # The document's keys are unique (checked), so the path finds the one value.
        where = source if text is None else f"{source}:{line_of(text, (name,) + below)}"
        raise ModelFormatError(f'{where}: malformed model: field "{name}": {said}')
    for name in ("n_features", "coef"):
        if name not in doc:
            # A missing field is found at the end of the document, after every key.
            where = source if text is None else f"{source}:{text.count(chr(10), 0, len(text.rstrip())) + 1}"
            raise ModelFormatError(f"{where}: malformed model: missing field `{name}`")
    model = {name: doc.get(name) for name in FIELDS}
    coef: List[Any] = doc["coef"]
    if not _floats(coef):
        # An integer weight is read as the float64 it writes, as every weight is.
        model["coef"] = [float(v) for v in coef]
    # Left out when absent, as in files written before it was kept (see docs/model-format.md).
    for optional in ("scaler", "svmmap_version"):
        if model[optional] is None:
            del model[optional]
    return model


def _check_model(model: Dict[str, Any], source: str, text: Optional[str] = None) -> None:
    """What the fields must agree on; an error names the line of the field it is about when
    the document has a `text` (a value refused here is as much the file's as a syntax error)."""
    from .._core import ModelFormatError

    def at(*path: Any) -> str:
        line = None if text is None else line_of(text, path)
        return source if line is None else f"{source}:{line}"

    n_features, coef = model["n_features"], model["coef"]
    if n_features == 0:
        # Nothing could be scored with it: predict refuses data without features.
        raise ModelFormatError(f"{at('n_features')}: n_features is 0; a model has at least one weight")
    if len(coef) != n_features:
        raise ModelFormatError(f"{at('n_features')}: n_features is {n_features} but coef has {len(coef)} entries")
    # Python's json reads NaN, Infinity and 1e999, which the parse refuses; this guards the
    # rule itself, whoever hands the weights over.
    if not all(map(math.isfinite, coef)):
        i = next(i for i, v in enumerate(coef) if not math.isfinite(v))
        raise ModelFormatError(f"{at('coef', i)}: coef[{i}] is not a finite number")
    # A score is a sum of weights times features; on binned (0/1) features it can reach the
    # sum of the weights' magnitudes, which must therefore stay finite (summed in order; fsum
    # would raise on the overflow rather than return inf).
    total = 0.0
    for v in coef:
        total += abs(v)
    if math.isinf(total):
        raise ModelFormatError(
            f"{at('coef')}: coef: the weights' magnitudes sum beyond the float64 range (1.8e308), so scores would "
            "overflow to inf"
        )
    # The free-form parts are objects when present; a reader may look up keys in them.
    for name in _FREE_FORM:
        value = model.get(name)
        if value is not None and not isinstance(value, dict):
            raise ModelFormatError(f'{at(name)}: "{name}" must be a JSON object or null, got {_kind(value)}')
    if model["version"] < 2 and model.get("scaler") is not None:
        # A version-1 reader ignores the field and would score unscaled features.
        raise ModelFormatError(
            f'{at("scaler")}: "scaler" needs model format version 2 (a version-1 reader would ignore it), but the '
            f"file says version {model['version']}"
        )
    names = model["feature_names"]
    if names is not None and len(names) != n_features:
        raise ModelFormatError(f"{at('feature_names')}: {len(names)} feature names for {n_features} features")


def line_of(text: str, path: Tuple[Any, ...]) -> Optional[int]:
    """The line of the value at `path` (keys and indices) in `text`, or of the deepest value on
    the way to it that the text has; None when the text has not even the first."""
    line, depth = None, 0
    for token in _tokens(text):
        n = len(token.path)
        if not token.key and n > depth and token.path == path[:n]:
            line, depth = token.line, n
            if n == len(path):
                break
    return line
