"""Tests for reading JSON objects out of model replies, and for name and prompt fingerprints."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles.errors import FactoryError
from profiles.factories.json_reply import (
    MAX_REPLY_CHARS,
    extract_json_objects,
    normalise_name,
    parse_json_reply,
    prompt_hash,
)

ADA = {"name": "Ada Lovelace", "role": "analyst"}
ALAN = {"name": "Alan Turing", "role": "critic"}


# -- reply shapes --------------------------------------------------------------------------------


def test_fenced_json_with_prose_around_it():
    """A ```json fence is read and the prose around it ignored."""
    reply = f"Sure! Here are two personas:\n\n```json\n{json.dumps([ADA, ALAN], indent=2)}\n```\n\nEnjoy!"
    assert extract_json_objects(reply) == [ADA, ALAN]


def test_unlabelled_fence_and_prose_brackets():
    """An unlabelled fence is read too; brackets in prose before it do not confuse the search."""
    reply = f"Here [as asked] are they:\n```\n{json.dumps([ADA])}\n```"
    assert extract_json_objects(reply) == [ADA]


@pytest.mark.parametrize(
    "fence", ["```{}```", "```json {} ```", "```JSON\n{}", "``` json\n{}\n```\n```\nnot json\n```"]
)
def test_fence_variants(fence):
    """One-line fences, tags in any case, unclosed fences and fences without JSON are handled."""
    assert extract_json_objects(fence.replace("{}", json.dumps([ADA]))) == [ADA]


def test_several_fenced_blocks_are_all_read():
    """Items spread over two fenced blocks are all collected, in order, and prose between is ignored."""
    reply = f"First:\n```json\n{json.dumps([ADA])}\n```\nand {{not this}}\n```json\n{json.dumps(ALAN)}\n```"
    assert extract_json_objects(reply) == [ADA, ALAN]


def test_bare_json_after_prose_with_an_apostrophe():
    """Without fences, the JSON is found after prose, even prose with an apostrophe in brackets."""
    reply = f"Sure [here's the list]:\n{json.dumps([ADA, ALAN])}"
    assert extract_json_objects(reply) == [ADA, ALAN]


@pytest.mark.parametrize("key", ["personas", "Profiles", "people"])
def test_object_wrapping_a_list(key):
    """An object holding the list under a known key, or under its only key, yields the list."""
    assert extract_json_objects(json.dumps({key: [ADA, ALAN]})) == [ADA, ALAN]


def test_single_object_is_one_item():
    """A single object is one item, even with a list of objects among its fields."""
    persona = {**ADA, "examples": [{"q": "hi", "a": "hello"}]}
    assert extract_json_objects(json.dumps(persona)) == [persona]


def test_objects_one_after_another():
    """Objects written one per line (JSON Lines style) are all collected."""
    reply = "\n".join(json.dumps(p) for p in (ADA, ALAN))
    assert extract_json_objects(reply) == [ADA, ALAN]


def test_trailing_commas_and_single_quotes_are_repaired():
    """Trailing commas, single quotes and unquoted keys are repaired and flagged as such."""
    reply = '[{\'name\': \'Ada Lovelace\', role: \'analyst\',}, {"name": "Alan Turing", "role": "critic",},]'
    parsed = parse_json_reply(reply)
    assert parsed.objects == [ADA, ALAN]
    assert parsed.repaired is True
    assert parsed.truncated is False


def test_repaired_json_keeps_escaped_emoji():
    """Surrogate-pair escapes in repaired JSON decode to one character, as json.loads does."""
    reply = '[{"name": "Smiley \\ud83d\\ude00"},]'
    assert extract_json_objects(reply) == [{"name": "Smiley \U0001f600"}]


def test_valid_json_is_not_marked_repaired():
    """Valid JSON is parsed as is."""
    parsed = parse_json_reply(json.dumps([ADA]))
    assert parsed.repaired is False
    assert parsed.problems == ()


# -- truncation ----------------------------------------------------------------------------------


def test_truncated_list_keeps_the_complete_items():
    """A reply cut off inside the second item keeps the first and says the last was dropped."""
    reply = json.dumps([ADA, ALAN])[:-12]
    parsed = parse_json_reply(reply)
    assert parsed.objects == [ADA]
    assert parsed.truncated is True
    assert any("cut off" in p for p in parsed.problems)


def test_truncated_inside_a_nested_field_drops_the_whole_item():
    """An item cut off inside one of its nested values is dropped, not completed."""
    reply = '```json\n[{"name": "Ada"}, {"name": "Alan", "traits": {"calm": [1, 2'
    assert extract_json_objects(reply) == [{"name": "Ada"}]


def test_truncated_between_items_keeps_all_of_them():
    """A reply cut off after an item's closing brace loses nothing and reports no dropped item."""
    parsed = parse_json_reply(json.dumps([ADA, ALAN])[:-1] + ", ")
    assert parsed.objects == [ADA, ALAN]
    assert parsed.truncated is True
    assert parsed.problems == ()


def test_truncated_wrapper_keeps_the_complete_items():
    """A wrapped list cut off mid-item keeps the items that closed."""
    reply = json.dumps({"personas": [ADA, ALAN]})[:-15]
    assert extract_json_objects(reply) == [ADA]


def test_truncation_after_the_wrapped_list_loses_nothing():
    """A cut in a field after the wrapped list does not drop the list's last item."""
    reply = json.dumps({"personas": [ADA, ALAN], "notes": [{"x": "unfinished"}]})[:-8]
    assert extract_json_objects(reply) == [ADA, ALAN]


def test_truncated_single_object_is_refused():
    """A single object cut off mid-way is not completed: nothing usable, with a correction."""
    with pytest.raises(FactoryError, match="cut off"):
        extract_json_objects('{"name": "Ada Lovelace", "role": "anal')


# -- wrong types and failures -------------------------------------------------------------------


def test_items_that_are_not_objects_are_dropped_and_reported():
    """Strings, numbers, nulls and lists in the list are dropped, each reported by position."""
    parsed = parse_json_reply(json.dumps(["Ada", ADA, 3, None, ["x"], ALAN]))
    assert parsed.objects == [ADA, ALAN]
    assert parsed.problems == (
        "item 1 is a string ('Ada'), not an object; it was dropped.",
        "item 3 is a number (3), not an object; it was dropped.",
        "item 4 is null, not an object; it was dropped.",
        "item 5 is a list (['x']), not an object; it was dropped.",
    )


def test_extract_logs_what_it_dropped(caplog):
    """extract_json_objects logs each dropped item."""
    caplog.set_level("INFO", logger="profiles.factories.json_reply")
    extract_json_objects(json.dumps([ADA, 42]))
    assert "item 2 is a number (42)" in caplog.text


def test_only_wrong_types_is_an_error_fit_for_the_model():
    """A list of names only is refused with the reasons and the shape to use instead."""
    with pytest.raises(FactoryError) as info:
        extract_json_objects('["Ada Lovelace", "Alan Turing"]')
    message = str(info.value)
    assert "item 1 is a string ('Ada Lovelace')" in message
    assert "Reply with only a JSON array of objects" in message


@pytest.mark.parametrize(
    "reply, needle",
    [
        ("", "The reply was empty."),
        ("   \n", "The reply was empty."),
        ("I cannot help with that.", "no JSON array or object"),
        ("[]", "no usable JSON object"),
        ("```json\n```", "no JSON array or object"),
    ],
)
def test_nothing_usable_raises_factory_error(reply, needle):
    """Replies with no objects raise a FactoryError that says why and how to answer."""
    with pytest.raises(FactoryError, match="Reply with only a JSON array") as info:
        extract_json_objects(reply)
    assert needle in str(info.value)


def test_non_text_and_huge_replies_are_refused():
    """A non-string or over-long reply raises FactoryError rather than being scanned."""
    with pytest.raises(FactoryError, match="as text"):
        extract_json_objects(b"[]")  # type: ignore[arg-type]
    with pytest.raises(FactoryError, match="fewer items"):
        extract_json_objects("[" + " " * MAX_REPLY_CHARS + "]")


def test_duplicates_by_normalised_name():
    """Personas whose names differ only in case, spacing or punctuation dedupe to one."""
    reply = json.dumps([{"name": "Ada Lovelace"}, {"name": "ada  lovelace"}, {"name": "ADA-LOVELACE!"}, ALAN])
    seen: dict[str, dict] = {}
    for item in extract_json_objects(reply):
        seen.setdefault(normalise_name(item["name"]), item)
    assert list(seen) == ["ada lovelace", "alan turing"]


# -- normalise_name and prompt_hash -------------------------------------------------------------


@pytest.mark.parametrize(
    "name, expected",
    [
        ("Dr.  Jane O'Neil", "dr jane o neil"),
        ("dr jane o\u2019neil", "dr jane o neil"),
        ("\uff24\uff32 Jane", "dr jane"),  # full-width letters
        ("Stra\u00dfe", "strasse"),
        ("  --Zo\u00eb\t\n", "zo\u00eb"),
        ("Zoe\u0308", "zo\u00eb"),  # combining diaeresis composes under NFKC
        ("R2-D2", "r2 d2"),
        ("...", ""),
    ],
)
def test_normalise_name(name, expected):
    """Names fold case, width and punctuation runs to one canonical form."""
    assert normalise_name(name) == expected


def test_prompt_hash_is_stable_and_short():
    """The hash ignores key order, changes with content, and is 16 hex digits by default."""
    a = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Personas, please."}]
    b = [{"content": m["content"], "role": m["role"]} for m in a]
    assert prompt_hash(a) == prompt_hash(b)
    assert prompt_hash(a) != prompt_hash(a[:1])
    assert len(prompt_hash(a)) == 16 and int(prompt_hash(a), 16) >= 0
    assert len(prompt_hash(a, length=64)) == 64
    # pinned: a change here breaks the provenance of every profile already made
    assert prompt_hash([{"role": "user", "content": "x"}]) == "7c5139ff349b5009"


# -- properties ----------------------------------------------------------------------------------

objects = st.lists(
    st.dictionaries(st.text(max_size=12), st.text(max_size=20), max_size=4), min_size=1, max_size=5
)


def dumps_items(items: list[dict]) -> tuple[str, list[int]]:
    """Serialise a list as JSON, returning the text and where each item's closing brace ends."""
    parts, ends, pos = [], [], 1
    for index, item in enumerate(items):
        text = json.dumps(item)
        if index:
            parts.append(", ")
            pos += 2
        parts.append(text)
        pos += len(text)
        ends.append(pos)
    return "[" + "".join(parts) + "]", ends


@settings(max_examples=150, deadline=None)
@given(items=objects, fenced=st.booleans(), trailing_comma=st.booleans(), indent=st.sampled_from([None, 2]))
def test_valid_lists_round_trip(items, fenced, trailing_comma, indent):
    """Any list of string dicts comes back intact, fenced or not, with a trailing comma or not."""
    text = json.dumps(items, indent=indent)
    if trailing_comma:
        text = text[:-1].rstrip() + ",]"
    if fenced:
        text = f"Here you go:\n```json\n{text}\n```\nAnything else?"
    assert extract_json_objects(text) == items


@settings(max_examples=200, deadline=None)
@given(items=objects, data=st.data())
def test_truncation_keeps_exactly_the_closed_items(items, data):
    """A list cut anywhere yields exactly the items whose closing brace survived, or FactoryError."""
    text, ends = dumps_items(items)
    cut = data.draw(st.integers(min_value=0, max_value=len(text)), label="cut")
    closed = sum(1 for end in ends if end <= cut)
    try:
        found = extract_json_objects(text[:cut])
    except FactoryError:
        assert closed == 0
    else:
        assert found == items[:closed]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet=st.sampled_from("{}[]\"',:\\` \nabc01json"), max_size=80) | st.text(max_size=80))
def test_never_raises_anything_but_factory_error(text):
    """Whatever the reply, the parser returns dicts or raises FactoryError."""
    try:
        found = extract_json_objects(text)
    except FactoryError as exc:
        assert str(exc)
    else:
        assert found and all(isinstance(item, dict) for item in found)


@settings(max_examples=200, deadline=None)
@given(items=objects, data=st.data())
def test_damaged_json_never_raises_anything_but_factory_error(items, data):
    """JSON with a slice cut out and junk put in still yields dicts or a FactoryError."""
    text, _ = dumps_items(items)
    start = data.draw(st.integers(0, len(text)), label="start")
    stop = data.draw(st.integers(start, len(text)), label="stop")
    junk = data.draw(st.text(alphabet="{}[]\"',:\\ \n`", max_size=4), label="junk")
    try:
        found = extract_json_objects(text[:start] + junk + text[stop:])
    except FactoryError:
        return
    assert all(isinstance(item, dict) for item in found)
