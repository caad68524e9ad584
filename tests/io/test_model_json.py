"""The model file's JSON (``svmmap._files.model_json``) and the core's reading and writing of its
text (``_core.read_model_text``, ``_core.write_model_text``): the checks every reader relies on,
with the file, line and field in their messages, and numbers that read back bit for bit.

These were the Rust unit tests of rust/model.rs when the core parsed the document (with
serde_json); the cases are the same, and the checks that Python's ``json`` needs on top of
them (NaN and Infinity, which it reads and JSON has not; repeated keys; lone surrogates, which
it reads into strings) have their own tests here.
"""

from __future__ import annotations

import gzip
import json
import struct
import sys

import numpy as np
import pytest
from svmmap import ModelFormatError, _core
from svmmap._files.model_json import FIELDS, MAX_DEPTH, parse_model_text
from svmmap._files.model_writing import model_text


def _sample(**changes):
    doc = {
        "format": "svmmap-model",
        "version": 1,
        "n_features": 2,
        "coef": [0.1, -3.0e-17],
        "params": {"C": 1.0},
        "feature_names": None,
        "binning": None,
        "training": None,
    }
    doc.update(changes)
    return doc


def _text(doc):
    """The file's text of a document that a reader accepts, as svmmap writes it."""
    return model_text(json.dumps(doc), "m.json")


def _raw(doc):
    """A document as text, unchecked (for documents a reader refuses)."""
    return json.dumps(doc, indent=2)


def _refused(text, source="m.json"):
    with pytest.raises(ModelFormatError) as info:
        parse_model_text(text, source)
    return str(info.value)


def _bits(values):
    return [struct.pack("<d", v) for v in values]


@pytest.mark.parametrize("name", ["m.json", "m.json.gz"])
def test_round_trip_is_exact(tmp_path, name):
    path = str(tmp_path / name)
    _core.write_model_text(path, _text(_sample()))
    with open(path, "rb") as f:
        head = f.read(2)
    # A ".gz" name promises gzip data (magic bytes 1f 8b); any other name plain text.
    assert (head == b"\x1f\x8b") == name.endswith(".gz")
    assert parse_model_text(_core.read_model_text(path), path) == _sample()


def test_weights_read_back_bit_for_bit(tmp_path):
    rng = np.random.default_rng(7)
    # Random weights of every magnitude, random bit patterns (every exponent, every mantissa)
    # below 1e300 so that their magnitudes' sum stays finite, and the extremes: the smallest
    # subnormal, the largest subnormal, the smallest normal, 1e308 and both zeros.
    magnitudes = rng.uniform(-1.0, 1.0, 3000) * 10.0 ** rng.integers(-30, 30, 3000)
    patterns = rng.integers(0, 2**63, 3000, dtype=np.uint64).view(np.float64)
    patterns = patterns[np.isfinite(patterns) & (np.abs(patterns) < 1e300)]
    extremes = [5e-324, -5e-324, 2.225073858507201e-308, 2.2250738585072014e-308, 1e308, -0.0, 0.0, 1.0]
    coef = [float(v) for v in magnitudes] + [float(v) for v in patterns] + extremes
    doc = _sample(n_features=len(coef), coef=coef)
    for name in ("w.json", "w.json.gz"):
        path = str(tmp_path / name)
        _core.write_model_text(path, _text(doc))
        back = parse_model_text(_core.read_model_text(path), path)["coef"]
        assert _bits(back) == _bits(coef)
    # The largest float64 alone (with another weight its magnitude would overflow the sum).
    top = _sample(n_features=1, coef=[1.7976931348623157e308])
    assert _bits(parse_model_text(_text(top), "m.json")["coef"]) == _bits([1.7976931348623157e308])
    # -0.0 keeps its sign in the text, and the smallest subnormal its one significant digit.
    assert "-0.0," in _text(doc) and "5e-324," in _text(doc)


def test_a_byte_order_mark_is_skipped_and_a_model_without_weights_refused(tmp_path):
    path = tmp_path / "m.json"
    path.write_bytes(b"\xef\xbb\xbf" + _text(_sample()).encode())
    assert parse_model_text(_core.read_model_text(str(path)), str(path)) == _sample()
    said = _refused(_raw(_sample(n_features=0, coef=[])))
    # Line 4 of the text: "{", "format", "version", then "n_features".
    assert said == "m.json:4: n_features is 0; a model has at least one weight"


def test_bad_files_are_reported():
    text = _text(_sample())
    assert "the file ends early (truncated?)" in _refused(text[: len(text) // 2])
    assert "newer svmmap" in _refused(text.replace('"version": 1', '"version": 3'))
    assert "not an svmmap model" in _refused(text.replace("svmmap-model", "something-else"))
    assert "overflow to inf" in _refused(_raw(_sample(coef=[1e308, 1e308])))
    assert _refused(text.replace('"n_features": 2', '"n_features": 3')).endswith(
        "n_features is 3 but coef has 2 entries"
    )


def test_a_scaler_needs_version_2_and_its_absence_keeps_version_1_text():
    assert "scaler" not in _text(_sample())
    scaled = _sample(version=2, scaler={"type": "sklearn.preprocessing.MaxAbsScaler"})
    text = _text(scaled)
    assert parse_model_text(text, "m.json") == scaled
    said = _refused(text.replace('"version": 2', '"version": 1'))
    assert '"scaler" needs model format version 2' in said
    said = _refused(text.replace('"scaler": {', '"scaler": [{').replace('MaxAbsScaler"\n  }', 'MaxAbsScaler"\n  }]'))
    # "scaler" comes last, after the eight lines of the sample's fields and coef's two weights.
    assert said == 'm.json:15: "scaler" must be a JSON object or null, got an array'
    # A null scaler is no scaler: allowed in version 1, and left out of the document read.
    assert parse_model_text(_raw(_sample(scaler=None)), "m.json") == _sample()


def test_binary_and_mistyped_model_files_are_format_errors(tmp_path):
    path = tmp_path / "m.json"
    cases = [
        (b"PK\x03\x04\xff\xfe", "not UTF-8"),
        # A file that starts as gzip but does not decompress is named as such, and one cut
        # short (here in its ten-byte header) as truncated.
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xfe", "does not decompress"),
        (b"\x1f\x8b\x08\x00\xff\xfe", "the gzip data ends early"),
    ]
    for content, needle in cases:
        path.write_bytes(content)
        with pytest.raises(ModelFormatError, match=needle):
            _core.read_model_text(str(path))
    text = _text(_sample())
    said = _refused(text.replace('"params": {', '"params": [{').replace("1.0\n  }", "1.0\n  }]"))
    # "params" follows "{", three fields and coef's four lines.
    assert said == 'm.json:9: "params" must be a JSON object or null, got an array'
    # gzip data that inflates to a model is one, whatever the file's name.
    path.write_bytes(gzip.compress(text.encode()))
    assert parse_model_text(_core.read_model_text(str(path)), "m.json") == _sample()


# What Python's json reads but a model file may not hold. The texts are written out, so that
# the lines and columns in the expected messages can be counted on them.

HEAD = '{\n  "format": "svmmap-model",\n  "version": 1,\n  "n_features": 2,\n  "coef": [\n    0.5,\n'
#                                                                 line 5: "coef": [   line 6: 0.5,


@pytest.mark.parametrize("word", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_naming_their_line(word):
    said = _refused(HEAD + f"    {word}\n  ]\n}}\n")
    assert said.startswith(f"m.json:7: not valid JSON: {word} is no JSON number"), said
    assert said.endswith("at line 7 column 5"), said


@pytest.mark.parametrize(
    "number",
    # 2^1024 - 2^970 is halfway between the largest float64 (2^1024 - 2^971) and 2^1024, and
    # rounds to even, that is to infinity: every integer from it on is out of range, below 2^1024.
    ["1e999", "-2.5e308", "1" + "0" * 400, "-" + "9" * 5000, str(2**1024 - 1), str(-(2**1024 - 2**970))],
)
def test_numbers_beyond_float64_are_refused_naming_their_line(number):
    said = _refused(HEAD + f"    {number}\n  ]\n}}\n")
    assert said == "m.json:7: not valid JSON: number out of range at line 7 column 5", said
    # Anywhere in the document, not only in the weights: line 15 here.
    text = _text(_sample(training={"gap": 1.5})).replace("1.5", "1e400")
    assert _refused(text).startswith("m.json:15: not valid JSON: number out of range"), text


def test_a_repeated_key_is_refused_naming_key_and_line():
    text = HEAD + '    1.0\n  ],\n  "params": {\n    "C": 1.0,\n    "C": 2.0\n  }\n}\n'
    said = _refused(text)
    expected = 'm.json:11: not valid JSON: the key "C" appears twice in one object (a JSON reader would keep either)'
    assert said.startswith(expected) and said.endswith("at line 11 column 5"), said
    # The same key in two objects is two keys.
    text = HEAD + '    1.0\n  ],\n  "params": {\n    "version": 1\n  }\n}\n'
    assert parse_model_text(text, "m.json")["params"] == {"version": 1}


def test_a_lone_surrogate_is_refused_naming_field_line_and_column():
    text = HEAD + '    1.0\n  ],\n  "feature_names": [\n    "a",\n    "b\\ud800"\n  ]\n}\n'
    said = _refused(text)
    # Line 11 is `    "b\ud800"`: the escape starts at column 7 (4 spaces, the quote, b).
    assert said.startswith('m.json:11: a string of field "feature_names" holds a \\u escape of half'), said
    assert "column 7)" in said, said
    # A pair is one character, and an escaped backslash before "ud800" is no escape.
    for string, read in (("\\ud83d\\ude00", "\U0001f600"), ("\\\\ud800", "\\ud800")):
        doc = parse_model_text(text.replace("b\\ud800", string), "m.json")
        assert doc["feature_names"] == ["a", read]
    # In a key, the field is the key of its object.
    said = _refused(_text(_sample()).replace('"C"', '"\\udc00"'))
    assert said.startswith('m.json:10: a string of field "params" holds'), said


def test_wrong_types_name_the_field_and_line():
    cases = [
        ("coef", [1.0, True], 7, "invalid type: boolean `true`, expected a number"),
        ("coef", "w", 5, 'invalid type: string "w", expected a sequence'),
        ("n_features", -1, 4, "invalid value: integer `-1`, expected a non-negative integer"),
        ("n_features", 2.0, 4, "invalid type: floating point `2.0`, expected a non-negative integer"),
        ("n_features", 2**64, 4, f"invalid value: integer `{2**64}`, expected a non-negative integer below 2^64"),
        ("feature_names", "ab", 12, 'invalid type: string "ab", expected a sequence'),
        ("feature_names", ["a", None], 14, "invalid type: null, expected a string"),
    ]
    for field, value, line, said in cases:
        got = _refused(_raw(_sample(**{field: value})))
        assert got == f'm.json:{line}: malformed model: field "{field}": {said}', got
    # Integers among the weights are read as the floats they write.
    back = parse_model_text(_raw(_sample(coef=[1, -2])), "m.json")["coef"]
    assert back == [1.0, -2.0] and all(type(v) is float for v in back)
    said = _refused(_raw({k: v for k, v in _sample().items() if k != "coef"}))
    assert said == "m.json:11: malformed model: missing field `coef`", said


def test_the_version_is_read_before_the_rest():
    # A newer file is reported as such even when its layout has changed.
    newer = _refused(_raw({"format": "svmmap-model", "version": 3, "weights": [1.0]}))
    assert newer == (
        "m.json: model format version 3 was written by a newer svmmap; this svmmap reads versions 1 to 2: "
        "upgrade svmmap"
    )
    for value, shown in (
        (1.0, "1.0 (a number)"),
        (True, "true (a boolean)"),
        (None, "null (null)"),
        (-1, "-1 (a number)"),
    ):
        said = _refused(_raw(_sample(version=value)))
        assert (
            said == f"m.json: unsupported model format version {shown}; this svmmap reads versions 1 to 2 (an integer)"
        )
    assert _refused("[1, 2]").endswith("not an svmmap model: the file holds an array, where a model is a JSON object")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_deep_nesting_is_refused(depth):
    text = _text(_sample()).replace('"C": 1.0', '"C": ' + "[" * depth + "]" * depth)
    assert "nest deeper than 128 levels" in _refused(text)
    shallow = _text(_sample()).replace('"C": 1.0', '"C": ' + "[" * 100 + "]" * 100)
    assert "C" in parse_model_text(shallow, "m.json")["params"]


def test_a_file_that_is_not_json_names_its_line():
    text = '{\n  "format": "svmmap-model",\n  "version": 1\n  "n_features": 2\n}\n'
    assert _refused(text) == "m.json:4: not valid JSON: Expecting ',' delimiter at line 4 column 3"
    assert _refused('{"format": "svmm').startswith("m.json:1: the file ends early (truncated?)")
    assert _refused("").startswith("m.json:1: the file ends early (truncated?)")


def test_the_text_keeps_the_layout_older_readers_read():
    doc = _sample(
        svmmap_version="0.1.0",
        unknown={"z": 1},
        params={"loss": "map", "C": 1.0},
        feature_names=["café", "b"],
        training={"n_iter": 3, "history": [{"primal": 1.0, "dual": 0.5}]},
    )
    text = _text(doc)
    # The fields in their fixed order, unknown ones dropped, the keys of every other object
    # sorted, characters beyond ASCII as themselves: the text json.dumps gives that document.
    expected = {name: doc[name] for name in FIELDS if name in doc}
    expected["params"] = {"C": 1.0, "loss": "map"}
    expected["training"] = {"history": [{"dual": 0.5, "primal": 1.0}], "n_iter": 3}
    assert text == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
    assert list(parse_model_text(text, "m.json")) == list(FIELDS[:-1])
    assert '"café"' in text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status and sets RLIMIT_AS")
def test_a_model_file_too_large_for_memory_is_refused_before_it_is_read_into_python(tmp_path):
    # "0," two million times and a last 0: 4 MB of text and 2,000,001 values, which Python's
    # json holds at about 80 bytes each (a float object, its list slot, the list's spare room):
    # the core asks 2 x 4 MB + 96 bytes a value, 200 MB, of the 64 MB left under the
    # address-space limit set below, and refuses before Python sees the text.
    import resource

    path = tmp_path / "big.json"
    path.write_text('{"coef": [' + "0," * 2_000_000 + "0]}")
    with open("/proc/self/status") as f:
        used = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (used + 64 * 2**20, hard))
    try:
        with pytest.raises(
            MemoryError, match=r"loading the model file \S*big\.json \(.* of JSON text, up to 2000001 numbers\)"
        ):
            _core.read_model_text(str(path))
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def test_the_largest_integer_below_the_rounding_to_infinity_reads_as_the_largest_float64():
    # One below the halfway point rounds down, to the largest float64 (by hand: 2^1024 - 2^971).
    doc = parse_model_text(HEAD + f"    {2**1024 - 2**970 - 1}\n  ]\n}}\n", "m.json")
    assert doc["coef"][-1] == float(2**1024 - 2**971) == sys.float_info.max


@pytest.mark.parametrize(
    "top, kind",
    [
        ("[1, 2]", "an array"),
        ('"svmmap-model"', 'the lone value "svmmap-model"'),
        ("3", "the lone value 3"),
        ("null", "the lone value null"),
    ],
)
def test_a_file_that_holds_no_object_says_what_it_holds(top, kind):
    said = _refused(top + "\n")
    assert said == f"m.json: not an svmmap model: the file holds {kind}, where a model is a JSON object", said


def test_a_control_character_in_a_string_is_named_once_with_its_place():
    said = _refused('{\n  "format": "svmmap\x01-model"\n}\n')
    assert "at at" not in said and said.startswith(
        "m.json:2: not valid JSON: Invalid control character at line 2 column"
    ), said


def test_a_model_with_a_nan_is_not_written_and_the_error_names_the_file_and_the_value(tmp_path):
    from svmmap._files.model_file import write_model

    path = tmp_path / "m.json"
    for doc, where in [
        (_sample(coef=[0.5, float("nan")]), "coef[1]"),
        (_sample(training={"history": [{"gap": 1.0}, {"gap": float("inf")}]}), "training.history[1].gap"),
    ]:
        with pytest.raises(ValueError) as info:
            write_model(path, doc)
        assert str(info.value).startswith(f"{path}: the model was not written: {where} is not a finite number"), (
            info.value
        )
        assert not path.exists()


def test_a_binner_pairs_feature_index_is_named_by_its_path_in_the_file():
    from svmmap._fit.fitted import _pairs_from_dict

    with pytest.raises(ValueError) as info:
        _pairs_from_dict([{"features": [0, -1], "thresholds": [[], []]}], [np.zeros(2), np.zeros(2)])
    assert str(info.value) == '"interactions"[0]."features" must be a non-negative integer, got -1'


def test_the_file_records_the_svmmap_that_wrote_it(tmp_path):
    # docs/model-format.md: "svmmap_version", the svmmap that wrote the file, informative only.
    # A file without it (every file written before it was kept) reads and writes as before.
    import svmmap
    from svmmap.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=6, docs_per_query=5, n_features=3, random_state=0)
    path = tmp_path / "m.json"
    with pytest.warns(Warning):
        model = svmmap.SVMMap(C=1.0).fit(X, y, qid=qid)
    svmmap.save_model(model, path)
    assert json.loads(path.read_text())["svmmap_version"] == svmmap.__version__
    np.testing.assert_array_equal(svmmap.load_model(path).predict(X), model.predict(X))
    assert "svmmap_version" not in parse_model_text(_text(_sample()), "m.json")
    said = _refused(_raw(_sample(svmmap_version=1)))
    # Line 15 by hand: the field is added last to the sample, after "training" on line 14.
    assert said == 'm.json:15: malformed model: field "svmmap_version": invalid type: integer `1`, expected a string', (
        said
    )


# ----------------------------------------------------------------------------------------------
# Leftovers of the model file's trial: saving checks in memory, value errors name their line,
# complex weights, the ".gz" suffix in any case.


def _fitted_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from svmmap import Binner, SVMMap

    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(float)
    qid = np.repeat(np.arange(6), 10)
    model = make_pipeline(StandardScaler(), Binner(n_thresholds=3), SVMMap(C=2.0))
    return model.fit(X, y, svmmap__qid=qid)


def test_saving_parses_no_text_and_writes_the_former_bytes(tmp_path, monkeypatch):
    # write_model encoded the document (json.dumps), parsed it back (json.loads) for
    # check_document, then parsed it once more to check and lay it out: a 200,000-weight model
    # took 1.4-2.0 s to save. Now the document is checked in memory and its text made once
    # (benchmarks/model_save_speed.py times both).
    from svmmap._files import model_file
    from svmmap.persistence import model_document

    doc = model_document(_fitted_pipeline())
    # The former writer's text, made here independently of write_model: the document as JSON
    # text, checked and laid out by the reader's parse.
    former = model_text(json.dumps(doc, allow_nan=False), "m.json")
    calls = []
    real_loads, real_dumps = json.loads, json.dumps
    monkeypatch.setattr(json, "loads", lambda *a, **k: calls.append("loads") or real_loads(*a, **k))
    monkeypatch.setattr(json, "dumps", lambda *a, **k: calls.append("dumps") or real_dumps(*a, **k))
    model_file.write_model(tmp_path / "m.json", doc)
    assert calls == []
    assert (tmp_path / "m.json").read_text() == former
    # The refusals are kept: NaN named by its path, a value JSON cannot write as json's TypeError.
    with pytest.raises(ValueError, match=r"m\.json: the model was not written: coef\[1\] is not a finite number"):
        model_file.write_model(tmp_path / "m.json", dict(doc, coef=[1.0, float("nan")] + doc["coef"][2:]))
    with pytest.raises(TypeError, match="Object of type int64 is not JSON serializable"):
        model_file.write_model(tmp_path / "m.json", dict(doc, n_features=np.int64(doc["n_features"])))
    assert (tmp_path / "m.json").read_text() == former


def _line(text, needle):
    """The line of the first line of `text` that holds `needle` (found by reading the text)."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_value_errors_name_the_line_of_their_field(tmp_path):
    # The syntax and type errors named the line; the value errors (C=0, n_features against
    # coef, the scaler's and the binning's checks) named only the file.
    from svmmap._files.model_file import read_model
    from svmmap.persistence import model_document

    base = model_document(_fitted_pipeline())

    def refused(change):
        doc = json.loads(json.dumps(base))
        change(doc)
        text = json.dumps(doc, indent=2)
        (tmp_path / "m.json").write_text(text)
        with pytest.raises(ModelFormatError) as info:
            read_model(tmp_path / "m.json")
        return text, str(info.value).split(str(tmp_path / "m.json"), 1)[1]

    text, said = refused(lambda d: d["params"].update(C=0.0))
    line = _line(text, '"C": 0.0')
    assert said.startswith(f':{line}: "params"."C": '), said
    text, said = refused(lambda d: d.update(n_features=d["n_features"] + 1))
    line = _line(text, '"n_features"')
    assert said.startswith(f":{line}: n_features is "), said
    text, said = refused(lambda d: d["scaler"]["attributes"]["var_"].__setitem__(1, -1.0))
    # The entry's own line: the second below the list's key.
    line = _line(text, '"var_"') + 2
    assert said.startswith(f':{line}: invalid scaler: "attributes"."var_"[1]'), said
    text, said = refused(lambda d: d["binning"]["params"].update(strategy="nope"))
    line = _line(text, '"strategy": "nope"')
    assert said.startswith(f':{line}: invalid binning: "params"."strategy"'), said
    text, said = refused(lambda d: d["training"].update(n_iter=-1))
    line = _line(text, '"n_iter": -1')
    assert said.startswith(f':{line}: "training"."n_iter" must be'), said


def test_complex_weights_are_refused_naming_coef(tmp_path):
    # float(np.complex128) dropped the imaginary part, with only numpy's ComplexWarning.
    from svmmap import load_model, save_model

    model = _fitted_pipeline()[-1]
    real = model.coef_.copy()
    model.coef_ = real.astype(np.complex128)
    model.coef_[2] += 0.5j
    with pytest.raises(ValueError, match=r"coef_\[2\] is the complex number .*0\.5j\); a model's weights are real"):
        save_model(model, tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()
    # Imaginary parts of 0 lose nothing: the real weights are saved.
    model.coef_ = real.astype(np.complex128)
    save_model(model, tmp_path / "m.json")
    assert _bits(load_model(tmp_path / "m.json").coef_) == _bits(real)


@pytest.mark.parametrize("name", ["m.json.gz", "M.JSON.GZ", "m.json.Gz"])
def test_the_gz_suffix_compresses_in_any_case(tmp_path, name):
    # "MODEL.JSON.GZ" was written as plain text under a gzip name.
    path = tmp_path / name
    _core.write_model_text(str(path), _text(_sample()))
    data = path.read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert gzip.decompress(data).decode() == _text(_sample())
    assert parse_model_text(_core.read_model_text(str(path)), name) == _sample()
