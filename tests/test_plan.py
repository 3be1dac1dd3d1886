"""Profiles made from a plan: the same profile, prompts and errors as a persona resolved whole.

`create_profile` compiles a persona once per deployment and template path (`profiles.plan`) and
gives each profile only its dynamic fields' values. A call that pins a store version takes the
general way (every field resolved, the whole profile built), so pinning a key no field reads is
the reference each test compares the planned profile with.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles import DefaultProfile, ProfilesError, parse_profiles

#: A pin for a key no persona here reads: it sends `create_profile` the general way, changing nothing.
WHOLE = {"store_versions": {"unused/key": 1}}

PERSONA = """\
name: {key: PLAN_TEST_NAME, default: Ada}
role: Reviewer
goal: {key: PLAN_TEST_GOAL, default: "Review {{ topic }} carefully."}
constraints: {key: PLAN_TEST_RULES, default: [Be brief, Cite sources], separator: ";"}
model: gpt-4o
variables:
  topic: the draft
deployments:
  staging:
    role: Staging reviewer
  prod: {}
"""

SECRET_PERSONA = """\
name: Ada
role: Reviewer
goal: {key: PLAN_TEST_API_KEY, default: none}
model: gpt-4o
"""


def _persona(text: str = PERSONA) -> Any:
    (config,) = parse_profiles(text, file="plan-test.yaml")
    return config


def _outcome(action: Any) -> Any:
    """What an action gives, or the error it raises, as comparable data."""
    try:
        return ("ok", action())
    except ProfilesError as exc:
        return ("error", type(exc).__name__, str(exc))


def _observed(profile: Any) -> dict[str, Any]:
    """Everything a user can see of a profile, each part's error in its place."""
    return {
        "repr": repr(profile),
        "resolved": dict(profile.resolved),
        "values": dict(profile.values),
        "bound": dict(profile.bound),
        "provenance": profile.provenance,
        "explain": [dataclasses.asdict(row) for row in profile.explain()],
        "getters": [profile.get_name(), profile.get_role(), profile.get_goal(), profile.get_constraints()],
        "trace": profile.trace_attributes("system"),
        "system": _outcome(lambda: profile.format_system_prompt("What changed?")),
        "user": _outcome(lambda: profile.format_user_prompt("What changed?", strict=True)),
        "messages": _outcome(lambda: profile.format_messages("What changed?", topic="tests")),
        "request": _outcome(lambda: profile.to_request("What changed?", api="anthropic")),
        "partial": _outcome(lambda: profile.partial(topic="the plan").format_system_prompt()),
    }


def _both(config: Any, **options: Any) -> tuple[Any, Any]:
    planned = _outcome(lambda: _observed(config.create_profile("p-1", **options)))
    whole = _outcome(lambda: _observed(config.create_profile("p-1", **options, **WHOLE)))
    return planned, whole


def test_planned_profile_is_the_profile_resolved_whole(monkeypatch):
    config = _persona()
    monkeypatch.setenv("PLAN_TEST_NAME", "Grace")
    monkeypatch.setenv("PLAN_TEST_RULES", "One; Two ;Three")
    planned, whole = _both(config)
    assert planned == whole
    assert planned[0] == "ok" and planned[1]["getters"][0::3] == ["Grace", ["One", "Two", "Three"]]
    assert "Review the draft carefully." in planned[1]["system"][1]
    assert planned[1]["resolved"]["name"].source == "env:PLAN_TEST_NAME"


@pytest.mark.parametrize("language", [None, "zh"])
def test_planned_profile_matches_for_a_language_model_and_deployment(monkeypatch, language):
    config = _persona()
    monkeypatch.setenv("PROFILES_DEPLOYMENT", "staging")
    planned, whole = _both(config, language=language, model="claude-3-5-sonnet")
    assert planned == whole and planned[0] == "ok"
    assert planned[1]["resolved"]["model"].source == "argument"
    assert planned[1]["getters"][1] == "Staging reviewer"
    planned, whole = _both(config, language=language, deployment="prod")
    assert planned == whole and planned[1]["getters"][1] == "Reviewer"


def test_each_profile_keeps_its_own_values_and_shares_the_plan(monkeypatch):
    config = _persona()
    made = []
    for name in ("Ada", "Grace", "Edsger"):
        monkeypatch.setenv("PLAN_TEST_NAME", name)
        made.append(config.create_profile())
    assert [profile.get_name() for profile in made] == ["Ada", "Grace", "Edsger"]
    assert "You are Grace" in made[1].format_system_prompt() and "Grace" not in made[2].format_system_prompt()
    assert made[0]._base is made[1]._base is made[2]._base  # one plan, three small profiles
    assert not hasattr(made[0], "__dict__")


def test_a_dynamic_value_holding_a_template_gets_a_plan_of_its_own(monkeypatch):
    config = _persona()
    monkeypatch.setenv("PLAN_TEST_GOAL", "Check {{ topic }} twice.")
    first = config.create_profile()
    monkeypatch.setenv("PLAN_TEST_GOAL", "Read {{ topic }} once.")
    second = config.create_profile()
    assert "Check the draft twice." in first.format_system_prompt()
    assert "Read the draft once." in second.format_system_prompt()
    assert first._base is not second._base
    monkeypatch.setenv("PLAN_TEST_GOAL", "Broken {{ topic")
    planned, whole = _both(config)
    assert planned == whole and planned[0] == "error" and planned[1] == "RenderError"


def test_a_secret_dynamic_value_is_withheld_as_when_resolved_whole(monkeypatch):
    config = _persona(SECRET_PERSONA)
    monkeypatch.setenv("PLAN_TEST_API_KEY", "sk-live-0123456789")
    planned, whole = _both(config)
    assert planned == whole
    observed = planned[1]
    assert "sk-live" not in observed["repr"] and observed["system"][0] == "error"
    assert observed["system"][1] == "SecretError" and "sk-live" not in observed["system"][2]
    monkeypatch.delenv("PLAN_TEST_API_KEY")
    planned, whole = _both(config)
    assert planned == whole and planned[1]["getters"][2] == "none"


def test_a_required_field_resolving_to_nothing_fails_the_same_way(monkeypatch):
    config = _persona("name: {key: PLAN_TEST_NAME}\nrole: Reviewer\n")
    monkeypatch.delenv("PLAN_TEST_NAME", raising=False)
    planned, whole = _both(config)
    assert planned == whole and planned[0] == "error" and "PLAN_TEST_NAME" in planned[2]
    monkeypatch.setenv("PLAN_TEST_NAME", "Ada")
    assert config.create_profile().get_name() == "Ada"


def test_profile_made_from_its_parts_and_replaced_renders_the_same():
    profile = _persona().create_profile("first")
    parts = {
        name: getattr(profile, name)
        for name in ("profile_id", "resolved", "values", "templates", "bound", "field_templates", "renderer")
    }
    extra = {name: getattr(profile, name) for name in ("family", "tools", "context", "metadata", "origins", "origin")}
    again = DefaultProfile(**parts, **extra, resolved_variables=profile.resolved_variables)
    assert again.format_system_prompt("Q") == profile.format_system_prompt("Q")
    renamed = dataclasses.replace(profile, profile_id="second")
    assert renamed.profile_id == "second" and profile.profile_id == "first"
    assert renamed.format_system_prompt("Q") == profile.format_system_prompt("Q")
    assert [part.name for part in dataclasses.fields(profile)][:3] == ["profile_id", "resolved", "values"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.profile_id = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del profile.profile_id


#: Values a provider might answer: plain text, text with braces and template syntax, blanks.
_values = st.text(st.sampled_from("ab {}%#|;\n"), max_size=24) | st.sampled_from(
    ["{{ topic }}", "{{ name }} and {{ role }}", "{% if topic %}T{% endif %}", "{{ missing }}", "{{", ""]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_values, goal=_values, rules=_values, language=st.sampled_from([None, "en", "zh"]))
def test_planned_and_whole_agree_for_any_values(name, goal, rules, language):
    config = _persona()
    saved = {key: os.environ.get(key) for key in ("PLAN_TEST_NAME", "PLAN_TEST_GOAL", "PLAN_TEST_RULES")}
    try:
        for key, value in zip(saved, (name, goal, rules), strict=True):
            os.environ[key] = value
        planned, whole = _both(config, language=language)
        assert planned == whole
        again, _ = _both(config, language=language)  # the second creation reuses the plan
        assert again == planned
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_what_the_environment_says_now_shows_at_the_next_creation(monkeypatch):
    """The env provider keeps only what a key's name decides: its value, and the allow-list, are read each time."""
    config = _persona()
    monkeypatch.setenv("PLAN_TEST_NAME", "Grace")
    first, again = config.create_profile(), config.create_profile()
    assert first.resolved["name"] == again.resolved["name"] == config.create_profile(**WHOLE).resolved["name"]
    monkeypatch.setenv("PLAN_TEST_NAME", "Edsger")
    assert config.create_profile().get_name() == "Edsger" and first.get_name() == "Grace"
    monkeypatch.setenv("PROFILES_ENV_ALLOW", "OTHER_*")
    planned, whole = _both(config)
    assert planned == whole and planned[0] == "error" and "PROFILES_ENV_ALLOW" in planned[2]
    monkeypatch.setenv("PROFILES_ENV_ALLOW", "PLAN_TEST_*")
    assert config.create_profile().get_name() == "Edsger"
    monkeypatch.delenv("PLAN_TEST_NAME")
    assert config.create_profile().resolved["name"].source == "default"
