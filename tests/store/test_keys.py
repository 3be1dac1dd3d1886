"""Key spelling and the order a lookup tries keys in."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles.errors import StoreError
from profiles.store import candidate_keys, language_chain, normalize_language
from profiles.store.keys import PromptKey, make_key


@pytest.mark.parametrize(
    ("typed", "spelled"),
    [
        ("zh_tw", "zh-TW"),
        ("ZH-tw", "zh-TW"),
        ("zh-hant-tw", "zh-Hant-TW"),
        (" en ", "en"),
        ("", ""),
        (None, ""),
    ],
)
def test_normalize_language(typed, spelled):
    """One language typed several ways is spelled one way."""
    assert normalize_language(typed) == spelled


def test_language_chain_drops_subtags_then_ends_with_none():
    """zh-Hant-TW falls back to zh-Hant, zh, then no language."""
    assert language_chain("zh-Hant-TW") == ("zh-Hant-TW", "zh-Hant", "zh", "")
    assert language_chain(None) == ("",)


def test_candidates_prefer_language_over_model():
    """A prompt in the right language for any model beats one for the model in another language."""
    keys = [(key.language, key.model) for key in candidate_keys("s", "zh-TW", "gpt-4o")]
    assert keys == [
        ("zh-TW", "gpt-4o"),
        ("zh-TW", ""),
        ("zh", "gpt-4o"),
        ("zh", ""),
        ("", "gpt-4o"),
        ("", ""),
    ]


@pytest.mark.parametrize("name", ["", "   ", "a\x00b"])
def test_bad_names_are_refused(name):
    """Empty names and NUL characters are StoreErrors, on every backend alike."""
    with pytest.raises(StoreError):
        make_key(name)


_subtags = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=8
)


@given(st.lists(_subtags, min_size=1, max_size=4).map("_".join))
def test_normalize_is_idempotent(tag):
    """Normalising twice changes nothing."""
    once = normalize_language(tag)
    assert normalize_language(once) == once
    assert language_chain(once)[0] == once


@pytest.mark.parametrize("tag", ["中文", "en-US!", "toolongsubtag", "zh TW"])
def test_non_tags_are_refused(tag):
    """Something that is not a language tag is a StoreError saying what a tag looks like."""
    with pytest.raises(StoreError, match="BCP 47"):
        normalize_language(tag)


def test_key_str_names_parts():
    """A key prints the parts that are set."""
    assert str(PromptKey("s", "zh", "")) == "s language=zh"


def _incompressible(size: int, seed: int) -> str:
    """`size` bytes of UTF-8 that PostgreSQL cannot compress (random CJK, three bytes each)."""
    import random

    chosen = random.Random(seed)
    return "".join(chr(chosen.randint(0x4E00, 0x9FFF)) for _ in range(size // 3))


def test_key_parts_and_labels_are_bounded_to_what_every_backend_can_index(store):
    """At the bounds, every backend stores the prompt; past them, the same StoreError on SQLite as on
    PostgreSQL, not an index failure that reads like a server that cannot be reached."""
    name, model, label = _incompressible(1500, 1), _incompressible(500, 2), _incompressible(999, 3)
    stored = store.put(name, "text", model=model, label=label, note=_incompressible(30_000, 4))
    assert store.get(name, model=model, label=label).version == stored.version == 1
    for attempt, what in (
        (lambda: store.put(_incompressible(1503, 5), "text"), "prompt name"),
        (lambda: store.put("n", "text", model=_incompressible(503, 6)), "model"),
        (lambda: store.put("n", "text", label=_incompressible(1002, 7)), "a label"),
        (lambda: store.set_label(name, _incompressible(1002, 8), 1, model=model), "a label"),
    ):
        with pytest.raises(StoreError, match="bytes of UTF-8; at most") as raised:
            attempt()
        assert str(raised.value).startswith(what) and "server is running" not in str(raised.value)
    assert [summary.name for summary in store.list()] == [name]
