"""profiles.environ.getenv answers what os.environ.get answers, at every moment."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from profiles.environ import getenv

NAMES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="=\x00"), min_size=1, max_size=20)


def test_set_changed_and_removed_variables_show_at_once(monkeypatch):
    """A variable set, changed, emptied and removed reads as os.environ.get reads it each time."""
    name = "PROFILES_TEST_ENVIRON_VALUE"
    monkeypatch.delenv(name, raising=False)
    assert getenv(name) is None and getenv(name, "fallback") == "fallback"
    monkeypatch.setenv(name, "one")
    assert getenv(name) == "one"
    os.environ[name] = "two"
    assert getenv(name) == "two"
    os.environ[name] = ""
    assert getenv(name) == "" and getenv(name, "fallback") == ""
    del os.environ[name]
    assert getenv(name) is None


def test_non_ascii_names_and_values(monkeypatch):
    """Names and values outside ASCII round-trip as os.environ keeps them."""
    monkeypatch.setenv("PROFILES_TEST_ÉTÉ", "наш ключ ✓")
    assert getenv("PROFILES_TEST_ÉTÉ") == os.environ.get("PROFILES_TEST_ÉTÉ") == "наш ключ ✓"


def test_a_replaced_environment_is_asked_through_its_own_get(monkeypatch):
    """Code that puts a plain mapping in place of os.environ is answered from that mapping."""
    monkeypatch.setattr(os, "environ", {"PROFILES_TEST_PLAIN": "from a dict"})
    assert getenv("PROFILES_TEST_PLAIN") == "from a dict"
    assert getenv("PROFILES_TEST_MISSING", "default") == "default"


@given(names=st.lists(NAMES, min_size=1, max_size=5, unique=True), data=st.data())
def test_agrees_with_os_environ_get(names, data):
    """For any names, set or not, getenv and os.environ.get give the same answer."""
    saved = {name: os.environ.get(name) for name in names}
    try:
        for name in names:
            if data.draw(st.booleans()):
                os.environ[name] = data.draw(NAMES)
            else:
                os.environ.pop(name, None)
        for name in names:
            assert getenv(name) == os.environ.get(name)
            assert getenv(name, "d") == os.environ.get(name, "d")
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
