"""DynConfig and ConfigInfo: definition-time checks, resolution, lists and provenance."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles import (
    ConfigError,
    ConfigInfo,
    ConfigProvider,
    DynConfig,
    ProfileConfig,
    ResolutionError,
    Resolved,
    UnknownProviderError,
    parse_profiles,
    register_provider,
)
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
        DynConfig({"a": 1})
    with pytest.raises(ConfigError, match="field 'name': default must be text or a list of text, got int"):
        ProfileConfig(name=DynConfig(3, key="AGENT_NAME"), role="r")  # a number is a model setting's default only


def test_a_model_setting_from_python_takes_a_number_default(monkeypatch):
    """DynConfig(0.2, key=…) for a setting, as `temperature: {key: …, default: 0.2}` in a file."""
    monkeypatch.delenv("TEMPERATURE_NOT_SET", raising=False)
    settings = {"temperature": DynConfig(0.2, key="TEMPERATURE_NOT_SET"), "max_tokens": DynConfig(300, key="MAX_T")}
    monkeypatch.setenv("MAX_T", "512")
    profile = ProfileConfig(name="n", role="r", model_settings=settings).create_profile()
    assert profile.model_settings == {"temperature": 0.2, "max_tokens": 512}
    with pytest.raises(ConfigError, match=r"field 'model_settings\.temperature': default takes a number from 0 to 2"):
        ProfileConfig(name="n", role="r", model_settings={"temperature": DynConfig(5.0, key="TEMPERATURE_NOT_SET")})
    with pytest.raises(ConfigError, match="variable 'a': default must be text or a list of text, got int"):
        ProfileConfig(name="n", role="r", variables={"a": DynConfig(5, key="A_NOT_SET")})


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


# -- a required field that resolves to nothing, and env keys that cannot name a variable -----------


def test_an_unset_required_field_is_an_error_not_none(write, runner, monkeypatch):
    """`name: {key: NOT_SET}` with no default: an error naming key, provider and how to set it."""
    from profiles import ResolutionError, load_profile
    from profiles.cli import cli

    monkeypatch.delenv("AGENT_NAME_NOT_SET", raising=False)
    path = write("p.yaml", "name: {provider: env, key: AGENT_NAME_NOT_SET}\nrole: Helper\n")
    with pytest.raises(ResolutionError) as caught:
        load_profile(path).create_profile()
    assert str(caught.value) == (
        f"{path}:1: field 'name' is required, but provider 'env' has no value for 'AGENT_NAME_NOT_SET' and the "
        "field has no default; set the environment variable AGENT_NAME_NOT_SET (or a line AGENT_NAME_NOT_SET=… in "
        ".env or .env.<deployment>), or give the field a default"
    )
    result = runner.invoke(cli, ["render", str(path)])
    assert result.exit_code == 2 and "None" not in result.output
    monkeypatch.setenv("AGENT_NAME_NOT_SET", "Ada")
    assert load_profile(path).create_profile().format_system_prompt().startswith("You are Ada.")


def test_an_unset_role_from_another_provider_says_how(monkeypatch):
    from profiles import ResolutionError

    class Empty(ConfigProvider):
        name = "empty"

        def lookup(self, key, *, language=None, model=None, deployment=None):
            return None

    register_provider("empty_directory", Empty())
    config = ProfileConfig(name="Ada", role=DynConfig(key="team/role", provider="empty_directory"))
    with pytest.raises(ResolutionError, match="make provider 'empty_directory' answer 'team/role'"):
        config.create_profile()


def test_a_factory_may_supply_what_resolves_to_nothing():
    made = []
    config = ProfileConfig(name=DynConfig(key="AGENT_NAME_NOT_SET"), role="r", factory=lambda *a, **k: made.append(k))
    with pytest.raises(ResolutionError, match="provider 'env' has no value for 'AGENT_NAME_NOT_SET'"):
        config.create_profile()  # the factory declined (None), so the fields make the profile: "You are None."
    assert made and made[0]["name"] is None
    supplied = ProfileConfig(name="Made", role="r").create_profile()
    config = ProfileConfig(name=DynConfig(key="AGENT_NAME_NOT_SET"), role="r", factory=lambda *a, **k: supplied)
    assert config.create_profile().get_name() == "Made"


def test_a_dataset_row_with_an_unset_required_field_is_a_bad_row(monkeypatch):
    from profiles import DatasetProfileFactory

    monkeypatch.delenv("AGENT_ROLE_NOT_SET", raising=False)
    factory = DatasetProfileFactory(
        [{"name": "Ada"}], base={"role": {"key": "AGENT_ROLE_NOT_SET"}}, on_error="collect"
    )
    assert list(factory.create_profiles()) == []
    assert "field 'role' is required, but provider 'env' has no value for 'AGENT_ROLE_NOT_SET'" in str(
        factory.errors[0]
    )


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("../etc/passwd", "holds a '/'"),
        ("a\\b", "holds a '\\'"),
        ("APP..NAME", "holds '..'"),
        ("AGENT NAME", "holds a space"),
        ("AGENT\tNAME", "holds the character '\\t'"),
        ("AGENT\x1bNAME", "holds the character '\\x1b'"),
        ("A=B", "holds an '='"),
    ],
)
def test_unsafe_env_keys_are_refused_when_loading(key, why):
    from profiles import parse_profiles

    with pytest.raises(ConfigError) as caught:
        parse_profiles(f"name: {{key: {json.dumps(key)}, default: x}}\nrole: r\n", file="p.yaml")
    assert f"p.yaml:1:7: field 'name': env key {key!r} {why}" in str(caught.value)


def test_store_keys_keep_their_slashes():
    from profiles import parse_profiles

    (config,) = parse_profiles("name: {key: summarizer/name, provider: store, default: A}\nrole: r\n")
    assert config.name.key == "summarizer/name"
    (agent,) = parse_profiles("name: {key: summarizer/name, category: agent, default: A}\nrole: r\n")
    assert agent.name.provider_name == "store"


def test_an_overlay_that_empties_the_name_is_an_error():
    from profiles import parse_profiles

    (config,) = parse_profiles('name: Ada\nrole: r\ndeployments:\n  prod:\n    name: ""\n', file="p.yaml")
    assert config.create_profile().get_name() == "Ada"
    with pytest.raises(ResolutionError, match="field 'name' is required but resolved to nothing"):
        config.create_profile(deployment="prod")


def test_a_required_field_from_a_store_that_is_down_says_so(monkeypatch):
    """No advice to `put` a key into a store that could not be asked."""
    import warnings

    from profiles import StoreProvider, parse_profiles, providers

    down = StoreProvider("postgresql+psycopg://nobody@127.0.0.1:1/none", ttl=0)
    monkeypatch.setitem(providers._providers, "store", down)
    (config,) = parse_profiles("name: {key: reviewer/name, provider: store}\nrole: Reviewer\n")
    with warnings.catch_warnings(), pytest.raises(ResolutionError) as caught:
        warnings.simplefilter("ignore")
        config.create_profile()
    message = str(caught.value)
    assert "could not answer for 'reviewer/name' (store:reviewer/name unreachable)" in message
    assert "store put" not in message


# -- what a field resolves to has the field's shape ---------------------------------------------------


class Answering(ConfigProvider):
    """A provider registered from Python, which may answer anything at all."""

    name = "answering"

    def __init__(self, answer):
        self.answer = answer

    def lookup(self, key, *, language=None, model=None, deployment=None):
        return self.answer


@pytest.mark.parametrize(
    ("answer", "field", "got"),
    [
        (42, "name", "a number"),
        ({"first": "Ada"}, "goal", "a mapping"),
        (["Ada"], "role", "a list"),
        (b"Ada", "desc", "bytes"),
        (7, "constraints", "a number"),
        (["Be brief.", 3], "constraints", "a number"),
        (b"Be brief.", "constraints", "bytes"),
        (3.5, "language", "a number"),
    ],
)
def test_a_provider_answer_that_is_not_text_is_an_error(answer, field, got):
    """Printed as Python writes it ("You are 42.", bytes as numbers) or failing inside a template before."""
    register_provider("answering", Answering(answer))
    is_list = field == "constraints"
    dynamic = DynConfig(["x"] if is_list else "x", key="k", provider="answering")
    fields = {"name": "Ada", "role": "Reviewer", field: dynamic}
    with pytest.raises(ResolutionError) as caught:
        ProfileConfig(**fields).create_profile().format_system_prompt()
    message = str(caught.value)
    assert f"field {field!r}: provider 'answering' answered 'k' with {got}" in message
    assert "make the provider answer a str" in message


def test_a_list_field_answered_with_texts_keeps_them():
    register_provider("answering", Answering(("Be brief.", "Cite sources.")))
    config = ProfileConfig(name="Ada", role="Reviewer", constraints=DynConfig(["x"], key="k", provider="answering"))
    assert config.create_profile().get_constraints() == ["Be brief.", "Cite sources."]


def test_a_text_default_of_a_list_field_is_one_item_not_its_letters(monkeypatch):
    monkeypatch.delenv("RULES_UNSET_HERE", raising=False)
    config = ProfileConfig(name="Ada", role="Reviewer", constraints=DynConfig("Be brief", key="RULES_UNSET_HERE"))
    assert config.create_profile().get_constraints() == ["Be brief"]
    (written,) = parse_profiles("name: A\nrole: R\nconstraints: {key: RULES_UNSET_HERE, default: one, is_list: false}")
    assert written.create_profile().get_constraints() == ["one"]
    monkeypatch.setenv("RULES_UNSET_HERE", "a[LIST_SEP]b")
    assert config.create_profile().get_constraints() == ["a", "b"]


@pytest.mark.parametrize(
    "text", ["name: {default: [Ada, Grace]}\nrole: R", "name: Ada\nrole: R\ngoal: {key: G, default: x, is_list: true}"]
)
def test_a_text_field_that_would_resolve_to_a_list_is_refused_at_its_line(text):
    with pytest.raises(ConfigError, match=r"<string>:\d:7: field '(name|goal)': expected text, got a dynamic field"):
        parse_profiles(text)
    with pytest.raises(ConfigError, match="give one text as its default"):
        ProfileConfig(name=DynConfig(["Ada", "Grace"]), role="R")


class Finding(ConfigProvider):
    """A provider that implements find(), and may hand back something other than a Resolved."""

    name = "finding"

    def __init__(self, answer):
        self.answer = answer

    def find(self, key, context):
        return self.answer


@pytest.mark.parametrize(
    ("answer", "got"),
    [("Ada", "str"), ({"value": "Ada"}, "dict"), (Resolved("Ada", 5), "a Resolved whose source is no text")],
)
def test_a_find_that_answers_no_resolved_is_an_error(answer, got):
    """`found.value` on a str failed outside the provider's guard: an internal error."""
    register_provider("finding", Finding(answer))
    config = ProfileConfig(name=DynConfig("x", key="k", provider="finding"), role="Reviewer")
    with pytest.raises(ResolutionError, match=f"field 'name': provider 'finding' answered 'k' with {got}; .*Resolved"):
        config.create_profile()
    register_provider("finding", Finding(Resolved("Ada", "finding:k")))
    assert config.create_profile().provenance["name"] == "finding:k"


def test_a_list_answer_drops_blank_items_as_a_split_text_does():
    """["Be brief.", "", "  "] rendered two empty numbered constraints; "a[LIST_SEP][LIST_SEP]b" never did."""
    register_provider("answering", Answering(["Be brief.", "", "  ", " Cite sources. "]))
    config = ProfileConfig(name="Ada", role="Reviewer", constraints=DynConfig(["x"], key="k", provider="answering"))
    assert config.create_profile().get_constraints() == ["Be brief.", "Cite sources."]


class _Answers(ConfigProvider):
    name = "answers"

    def __init__(self, answer):
        self.answer = answer

    def lookup(self, key, *, language=None, model=None, deployment=None):
        return self.answer


@pytest.mark.parametrize(
    ("field", "answer", "default"),
    [
        ("name", "Ada\udcff", "d"),  # text decoded with surrogateescape, as a file name or a pipe gives it
        ("constraints", ["Be brief.", "\ud800"], ["d"]),
        ("constraints", "one\n\ud800", ["d"]),
    ],
)
def test_a_provider_answer_holding_half_a_surrogate_pair_is_refused(field, answer, default):
    """It printed into the prompt, and every request holding it failed to encode as UTF-8 when sent."""
    register_provider("answers", _Answers(answer))
    config = ProfileConfig(**{"name": "N", "role": "R", field: DynConfig(default, key="k", provider="answers")})
    with pytest.raises(ResolutionError) as caught:
        config.create_profile()
    assert f"field {field!r}: provider 'answers' answered 'k' with text holding \\u" in str(caught.value)
    assert "half of a UTF-16 surrogate pair" in str(caught.value)
    register_provider("answers", _Answers("Zoë" if field == "name" else ["Zoë"]))
    assert "Zoë" in config.create_profile().format_system_prompt()


@pytest.mark.parametrize(
    "given",
    [
        {"name": "Ada\ud800"},
        {"constraints": ["Be brief.", "\udc80"]},
        {"goal": DynConfig("\ud800", key="GOAL_NOT_SET")},
        {"constraints": DynConfig(["\ud800"], key="RULES_NOT_SET")},
    ],
)
def test_a_literal_or_default_holding_half_a_surrogate_pair_is_refused(given):
    """YAML cannot spell one, but Python can: refused as the YAML reader refuses it."""
    field = next(iter(given))
    with pytest.raises(ConfigError, match=f"field {field!r}: holds \\\\u") as caught:
        ProfileConfig(**{"name": "N", "role": "R", **given})
    assert "half of a UTF-16 surrogate pair" in str(caught.value)


def test_an_override_holding_half_a_surrogate_pair_is_refused():
    with pytest.raises(ConfigError, match="override 'name' holds \\\\ud800, half of a UTF-16"):
        ProfileConfig(name="N", role="R").create_profile(overrides={"name": "a\ud800"})
