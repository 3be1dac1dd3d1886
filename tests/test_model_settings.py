"""model_settings: ranges checked at load, dynamic values read by type, overlays per setting, provenance."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles import ConfigError, ProfileConfig, ResolutionError, explain, load_profile
from profiles.cli import cli
from profiles.loader import parse_profiles
from profiles.settings import SETTINGS, SettingError, check_setting, setting_from_text


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        ("temperature", 2.5, "takes a number from 0 to 2, got 2.5"),
        ("temperature", "hot", "takes a number from 0 to 2, got 'hot'"),
        ("temperature", True, "takes a number"),
        ("top_p", -0.1, "from 0 to 1"),
        ("max_tokens", 0, "an integer of at least 1"),
        ("max_tokens", 1.5, "an integer"),
        ("presence_penalty", 3, "from -2 to 2"),
        ("frequency_penalty", -2.5, "from -2 to 2"),
        ("seed", "7", "takes an integer"),
        ("stop", [], "a text or a list of texts"),
        ("stop", ["END", 3], "a text or a list of texts"),
        ("stop", "", "must not be empty"),
    ],
)
def test_out_of_range_settings_are_refused_at_their_line(setting, value, expected):
    text = f"name: Ada\nrole: R\nmodel_settings:\n  max_tokens: 10\n  {setting}: {json.dumps(value)}\n"
    if setting == "max_tokens":
        text = f"name: Ada\nrole: R\nmodel_settings:\n  seed: 1\n  {setting}: {json.dumps(value)}\n"
    with pytest.raises(ConfigError) as caught:
        parse_profiles(text, file="ada.yaml")
    (issue,) = caught.value.issues
    assert expected in issue.message
    assert issue.field == f"model_settings.{setting}" and issue.line == 5


def test_every_problem_and_a_suggestion_at_once():
    with pytest.raises(ConfigError) as caught:
        ProfileConfig(name="Ada", role="R", model_settings={"temprature": 0.2, "top_p": 7, "max_tokens": -1})
    fields = {issue.field for issue in caught.value.issues}
    assert fields == {"model_settings.temprature", "model_settings.top_p", "model_settings.max_tokens"}
    assert "did you mean 'temperature'?" in str(caught.value)


def test_model_settings_must_be_a_mapping():
    with pytest.raises(ConfigError, match="expected a mapping of setting to value"):
        ProfileConfig(name="Ada", role="R", model_settings=[0.2])


@given(st.sampled_from(list(SETTINGS)), st.floats(-5, 5) | st.integers(-5, 5000))
def test_a_value_is_taken_exactly_when_it_is_in_range(name, value):
    spec = SETTINGS[name]
    if spec.kind == "texts":
        return
    fits = (
        (spec.kind == "number" or float(value).is_integer())
        and (spec.low is None or value >= spec.low)
        and (spec.high is None or value <= spec.high)
    )
    try:
        checked = check_setting(name, value)
    except SettingError:
        assert not fits
    else:
        assert fits and checked == value


@given(st.integers(1, 10**6))
def test_text_from_a_provider_reads_back_as_the_integer(number):
    assert setting_from_text("max_tokens", f" {number} ") == number


def test_a_dynamic_setting_reads_its_providers_text(monkeypatch):
    (config,) = parse_profiles(
        "name: Ada\nrole: R\nmodel_settings:\n  temperature: {key: ADA_TEMPERATURE, default: 0.2}\n"
        "  max_tokens: {key: ADA_MAX, default: 300}\n",
        file="ada.yaml",
    )
    profile = config.create_profile()
    assert profile.model_settings == {"temperature": 0.2, "max_tokens": 300}
    assert profile.settings["temperature"].source == "default"
    monkeypatch.setenv("ADA_TEMPERATURE", "0.7")
    monkeypatch.setenv("ADA_MAX", "512")
    profile = config.create_profile()
    assert profile.model_settings == {"temperature": 0.7, "max_tokens": 512}
    assert profile.settings["max_tokens"].source == "env:ADA_MAX"
    assert profile.to_request("q", model="gpt-4o")["max_completion_tokens"] == 512


def test_a_provider_value_out_of_range_names_the_setting_and_source(monkeypatch):
    dynamic = {"temperature": {"key": "ADA_TEMPERATURE", "default": 0}}
    config = ProfileConfig(name="Ada", role="R", model_settings=dynamic)
    monkeypatch.setenv("ADA_TEMPERATURE", "hot")
    with pytest.raises(ResolutionError) as caught:
        config.create_profile()
    assert "model_settings.temperature from env:ADA_TEMPERATURE" in str(caught.value)
    assert "takes a number from 0 to 2" in str(caught.value)


def test_a_dynamic_default_is_checked_when_the_persona_loads():
    with pytest.raises(ConfigError, match="default takes a number from 0 to 2"):
        ProfileConfig(name="Ada", role="R", model_settings={"temperature": {"key": "T", "default": 5}})


def test_a_dynamic_stop_list_splits_like_a_list_field(monkeypatch):
    config = ProfileConfig(name="Ada", role="R", model_settings={"stop": {"key": "ADA_STOP", "default": ["END"]}})
    assert config.create_profile().model_settings == {"stop": ["END"]}
    monkeypatch.setenv("ADA_STOP", "STOP[LIST_SEP]DONE")
    assert config.create_profile().model_settings == {"stop": ["STOP", "DONE"]}


PERSONA = """\
name: Ada
role: R
model: gpt-4o
model_settings:
  temperature: 0.7
  max_tokens: 300
  extra: {user: team-a, metadata: {a: 1}}
deployments:
  prod:
    model_settings:
      temperature: 0
      extra: {user: team-prod}
  dev:
"""


def test_an_overlay_changes_only_the_settings_it_names(write):
    path = write("ada.yaml", PERSONA)
    config = load_profile(path)
    prod = config.create_profile(deployment="prod")
    assert prod.model_settings == {"temperature": 0, "max_tokens": 300}
    assert prod.settings_extra == {"user": "team-prod", "metadata": {"a": 1}}
    assert prod.settings["temperature"].source == f"overlay prod: {path}:11"
    assert prod.settings["max_tokens"].source == f"yaml:{path}:6"
    assert config.create_profile(deployment="dev").model_settings == {"temperature": 0.7, "max_tokens": 300}


def test_explain_shows_each_setting_with_its_source(write, runner):
    path = write("ada.yaml", PERSONA)
    rows = {row.field: row for row in explain(path, deployment="prod")}
    assert rows["model_settings.temperature"].value == 0
    assert rows["model_settings.temperature"].source.startswith("overlay prod:")
    result = runner.invoke(cli, ["explain", str(path), "--deployment", "prod", "--json"])
    assert result.exit_code == 0, result.output
    listed = {row["field"]: row for row in json.loads(result.output)}
    assert listed["model_settings.max_tokens"] == {
        "field": "model_settings.max_tokens", "value": 300, "source": f"yaml:{path}:6", "secret": False
    }


def test_inherited_settings_merge_per_setting(write):
    write("base.yaml", "role: R\nmodel_settings: {temperature: 0.5, seed: 1, extra: {user: base}}\n")
    path = write("child.yaml", "extends: base.yaml\nname: Ada\nmodel_settings: {seed: 2}\n")
    profile = load_profile(path).create_profile()
    assert profile.model_settings == {"temperature": 0.5, "seed": 2}
    assert profile.settings_extra == {"user": "base"}


def test_a_persona_without_settings_has_none():
    profile = ProfileConfig(name="Ada", role="R").create_profile()
    assert profile.model_settings == {} and profile.settings_extra == {}
    assert "model_settings" not in repr(ProfileConfig(name="Ada", role="R"))


def test_a_dynamic_setting_that_does_not_fit_is_named_at_its_line_in_the_overlay(monkeypatch):
    """`model_settings.temperature from env:…: takes a number from 0 to 2` said neither file nor line."""
    monkeypatch.setenv("TRIAGE_TEMPERATURE", "9")
    text = (
        "name: A\nrole: R\nmodel_settings: {temperature: {key: TRIAGE_TEMPERATURE, default: '0.2'}}\n"
        "deployments:\n  prod:\n    model_settings:\n      temperature: {key: TRIAGE_TEMPERATURE, default: '0.1'}\n"
    )
    (config,) = parse_profiles(text, file="triage.yaml")
    for deployment, line in ((None, 3), ("prod", 7)):
        with pytest.raises(ResolutionError, match=rf"^triage\.yaml:{line}: model_settings\.temperature from env:"):
            config.create_profile(deployment=deployment).to_request("Hi", model="gpt-4o")


def test_a_dynconfig_settings_default_is_checked_when_the_persona_is_made():
    """From Python it was taken as written and failed at every create_profile; a file's was checked at load."""
    from profiles import DynConfig

    with pytest.raises(ConfigError, match=r"model_settings\.max_tokens': default takes an integer of at least 1"):
        ProfileConfig(name="A", role="R", model_settings={"max_tokens": DynConfig("lots", key="TRIAGE_MAX")})
    config = ProfileConfig(name="A", role="R", model_settings={"max_tokens": DynConfig("256", key="TRIAGE_MAX")})
    assert config.create_profile().to_request("Hi", model="gpt-4o")["max_completion_tokens"] == 256
