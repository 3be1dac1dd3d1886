"""JSON lines have one byte form: orjson (the `fast` extra) and the standard library write the same."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles import jsonlines

orjson = pytest.importorskip("orjson", reason="the test extra installs orjson, so both encoders are compared")

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), _text),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=4)),
    max_leaves=20,
)


def _stdlib_only(record):
    saved = jsonlines._orjson
    jsonlines._orjson = None
    try:
        return jsonlines.dumps_line(record)
    finally:
        jsonlines._orjson = saved


@given(_values)
def test_both_encoders_write_the_same_bytes(record):
    line = jsonlines.dumps_line(record)
    assert line == _stdlib_only(record)
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    assert json.loads(line) == json.loads(json.dumps(record))  # what any JSON reader sees


def test_plain_records_go_through_orjson_and_others_through_the_standard_library():
    assert jsonlines.encoder_name() == "orjson"
    assert jsonlines._plain({"id": "c-1", "row": 1, "persona": {"constraints": ["a", "b"]}, "ok": True, "x": None})
    for other in (1.5, 2**65, {1: "a"}, {"when": object()}, ("a", 1.0)):
        assert not jsonlines._plain(other)
    assert jsonlines.dumps_line({"a": 1e16, "b": "ü"}) == '{"a":1e+16,"b":"ü"}\n'.encode()


def test_a_lone_surrogate_fails_alike():
    for encode in (jsonlines.dumps_line, _stdlib_only):
        with pytest.raises(UnicodeEncodeError):
            encode({"name": "\ud800"})
