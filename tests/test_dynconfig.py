"""DynConfig and ConfigInfo: definition-time checks, resolution, lists and provenance."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles import ConfigError, ConfigInfo, DynConfig, ResolutionError, UnknownProviderError
from profiles.context import Context


def test_no_key_gives_default():
    """Without a key the default is the value and the source says so."""
    info = DynConfig("Aristotle")
    assert isinstance(info, ConfigInfo)
    resolved = info.resolve()
    assert (resolved.value, resolved.source) == ("Aristotle", "default")
    assert info.query() == "Aristotle"


def test_provider_answer_wins(monkeypatch):
    """The provider's answer replaces the default and names the key as its source."""
    monkeypatch.setenv("DYN_TEST_NAME", "Plato")
    resolved = DynConfig("Aristotle", key="DYN_TEST_NAME", provider="env").resolve()
    assert (resolved.value, resolved.source) == ("Plato", "env:DYN_TEST_NAME")


@pytest.mark.parametrize("answer", [None, ""])
def test_empty_answer_falls_back(monkeypatch, answer):
    """No answer, or an empty one, falls back to the default."""
    if answer is None:
        monkeypatch.delenv("DYN_TEST_EMPTY", raising=False)
    else:
        monkeypatch.setenv("DYN_TEST_EMPTY", answer)
    assert DynConfig("fallback", key="DYN_TEST_EMPTY").query() == "fallback"


def test_changed_environment_shows_at_next_call(monkeypatch):
    """There is no cache: each resolution reads the provider again."""
    info = DynConfig("A", key="DYN_TEST_LIVE")
    monkeypatch.setenv("DYN_TEST_LIVE", "B")
    assert info.query() == "B"
    monkeypatch.setenv("DYN_TEST_LIVE", "C")
    assert info.query() == "C"


def test_list_split_and_strip(monkeypatch):
    """is_list splits on the separator and strips items, dropping empty ones."""
    monkeypatch.setenv("DYN_TEST_LIST", " one [LIST_SEP]two  [LIST_SEP] [LIST_SEP]three")
    assert DynConfig(key="DYN_TEST_LIST", is_list=True).query() == ["one", "two", "three"]


def test_custom_separator(monkeypatch):
    monkeypatch.setenv("DYN_TEST_LIST", "a; b;c")
    assert DynConfig(key="DYN_TEST_LIST", is_list=True, separator=";").query() == ["a", "b", "c"]


def test_list_default_implies_is_list(monkeypatch):
    """A list default makes the field a list field, so a text answer is split too."""
    info = DynConfig(["x"], key="DYN_TEST_LIST2")
    assert info.is_list
    monkeypatch.setenv("DYN_TEST_LIST2", "p[LIST_SEP]q")
    assert info.query() == ["p", "q"]
    monkeypatch.delenv("DYN_TEST_LIST2")
    assert info.query() == ["x"]


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="[]", blacklist_categories=("Cs",))), max_size=8))
def test_list_round_trip(items):
    """Joining items with the separator and resolving gives back the stripped, non-empty items."""
    info = ConfigInfo(default="[LIST_SEP]".join(items), is_list=True)
    assert info.query() == [item.strip() for item in items if item.strip()]


def test_neither_default_nor_key_is_an_error():
    with pytest.raises(ConfigError, match="needs a default, a key, or both"):
        DynConfig()


def test_unknown_provider_lists_known_ones():
    """An unknown provider fails when the field is defined and names the known providers."""
    with pytest.raises(UnknownProviderError) as caught:
        DynConfig("x", key="K", provider="vault")
    assert "'vault'" in str(caught.value) and "env" in str(caught.value) and "store" in str(caught.value)


@pytest.mark.parametrize("provider", [None, "store", "prompt_manager"])
def test_store_without_store_is_a_clear_error(provider):
    """Agent prompts read the store; with none configured that is an error, not a silent None."""
    info = DynConfig("x", key="summarizer/name", provider=provider, category="agent")
    with pytest.raises(ResolutionError, match="no prompt store configured"):
        info.resolve(Context())


def test_wrong_option_types():
    with pytest.raises(ConfigError, match="is_list must be true or false"):
        DynConfig("x", is_list="yes")
    with pytest.raises(ConfigError, match="default must be text"):
        DynConfig(3)


def test_secret_default_is_masked_in_repr():
    info = DynConfig("hunter2", key="PASSWORD_X", secret=True)
    assert "hunter2" not in repr(info)
    assert "hunter2" not in repr(info.resolve())


def test_failing_user_provider_is_wrapped():
    """A user's provider that raises becomes a ResolutionError naming the provider and key."""
    from profiles import ConfigProvider, register_provider

    class Broken(ConfigProvider):
        name = "broken"

        def lookup(self, key, *, language=None, model=None, deployment=None):
            raise RuntimeError("backend down")

    register_provider("broken", Broken())
    with pytest.raises(ResolutionError, match="provider 'broken' failed to look up 'k'"):
        DynConfig("x", key="k", provider="broken").query()
