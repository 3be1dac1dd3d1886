"""How persona templates get their variables: across files, from other fields, from dynamic `variables:`,
and how their errors name the persona file and line."""

from __future__ import annotations

import pytest

from profiles import ConfigError, RenderError, SecretError, load_profile, parse_profiles
from profiles.cli import cli


@pytest.fixture
def persona(tmp_path):
    """Write a persona file (and any template files) into a fresh folder; returns its path."""

    def write(text: str, **files: str):
        for name, body in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body, encoding="utf-8")
        path = tmp_path / "persona.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


BASE = "You are {{ name }}, our {{ role }}.\n{% block task %}{% endblock %}\nSigned: {{ signature }}"
CHILD = "{% extends 'base/system.j2' %}{% block task %}Help {{ customer }} with {{ question }}.{% endblock %}"


def test_a_template_that_extends_a_base_gets_the_bases_variables(persona, runner):
    """Persona fields, `variables:` and `--var` reach the parent template."""
    path = persona(
        "name: Ada\nrole: Support agent\ntemplate_roots: [prompts]\nvariables:\n  signature: The team\n",
        **{"prompts/base/system.j2": BASE, "prompts/default/en/system.j2": CHILD},
    )
    profile = load_profile(path).create_profile()
    assert profile.format_system_prompt("a refund", customer="Bo") == (
        "You are Ada, our Support agent.\nHelp Bo with a refund.Signed: The team"
    )
    result = runner.invoke(cli, ["render", str(path), "--kind", "system", "--question", "x", "--var", "customer=Cy"])
    assert result.exit_code == 0, result.output
    assert "Help Cy with x." in result.output


def test_a_variable_missing_in_a_parent_is_reported_at_the_parent(persona):
    path = persona(
        "name: Ada\nrole: Agent\ntemplate_roots: [prompts]\n",
        **{"prompts/base/system.j2": BASE, "prompts/default/en/system.j2": CHILD},
    )
    profile = load_profile(path).create_profile()
    with pytest.raises(RenderError) as caught:
        profile.format_system_prompt("q", customer="Bo")
    assert "template 'base/system.j2' line 3 uses 'signature'" in caught.value.message
    assert (caught.value.template, caught.value.line) == ("base/system.j2", 3)


def test_include_and_import_with_context_get_the_variables_too(persona):
    files = {
        "prompts/parts/rules.j2": "Rules for {{ name }}: {{ rules }}",
        "prompts/parts/macros.j2": "{% macro sign() %}-- {{ name }}, {{ role }}{% endmacro %}",
    }
    template = "{% include 'parts/rules.j2' %} {% import 'parts/macros.j2' as m with context %}{{ m.sign() }}"
    path = persona(
        "name: Ada\nrole: Agent\ntemplate_roots: [prompts]\nvariables: {rules: be kind}\n"
        f"templates:\n  user: {{inline: \"{template}\"}}\n",
        **files,
    )
    profile = load_profile(path).create_profile()
    assert profile.format_user_prompt("q") == "Rules for Ada: be kind -- Ada, Agent"


def test_optional_variables_need_not_be_given():
    (config,) = parse_profiles(
        "name: Ada\nrole: Agent\ntemplates:\n  user: {inline: \"{% if date is defined %}{{ date }}: {% endif %}"
        "{{ question }} ({{ tone|default('plain') }})\"}\n"
    )
    profile = config.create_profile()
    assert profile.format_user_prompt("Go") == "Go (plain)"
    assert profile.format_user_prompt("Go", date="Monday", tone="warm") == "Monday: Go (warm)"


def test_a_computed_include_gets_every_variable(persona):
    path = persona(
        "name: Ada\nrole: Agent\ntemplate_roots: [prompts]\nvariables: {style: formal}\n"
        "templates:\n  user: {inline: \"{% include style ~ '.j2' %}\"}\n",
        **{"prompts/formal.j2": "Dear customer, {{ name }} here. {{ question }} {{ extra }}"},
    )
    profile = load_profile(path).create_profile()
    text = profile.format_user_prompt("How can I help?", extra="(ok)")
    assert text == "Dear customer, Ada here. How can I help? (ok)"


# fields that read fields ----------------------------------------------------------------------


def test_a_field_reads_another_fields_rendered_text():
    (config,) = parse_profiles(
        'name: Ada\nrole: Researcher\ngoal: "Research {{ topic }}"\ndesc: "{{ name }} wants to {{ goal|lower }}."\n'
        "variables: {topic: tides}\n"
    )
    profile = config.create_profile()
    assert profile.format_system_prompt().count("Ada wants to research tides.") == 1
    assert "Research tides" in profile.format_system_prompt(topic="tides")
    assert profile.format_prompt("system", topic="moons").count("Ada wants to research moons.") == 1


def test_list_items_read_fields_too():
    (config,) = parse_profiles(
        'name: Ada\nrole: R\nexpand_prompt: "Use {{ tool }}."\nconstraints: ["Always: {{ expand_prompt }}", plain]\n'
        "variables: {tool: search}\n"
    )
    prompt = config.create_profile().format_system_prompt()
    assert "Always: Use search." in prompt and "plain" in prompt


def test_fields_reading_each_other_in_a_circle_is_an_error(persona):
    path = persona(
        'name: Ada\nrole: R\ngoal: "Do {{ desc }}"\ndesc: "{{ expand_prompt }}"\nexpand_prompt: "{{ goal }}"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_profile(path).create_profile()
    message = caught.value.message
    assert f"{path}:3: field 'goal': fields read each other in a circle: goal → desc → expand_prompt → goal" in message


def test_a_field_reading_itself_is_a_circle():
    (config,) = parse_profiles('name: Ada\nrole: R\ngoal: "{{ goal }} again"\n')
    with pytest.raises(ConfigError, match="goal → goal"):
        config.create_profile()


# dynamic variables ----------------------------------------------------------------------------


def test_a_variable_can_be_dynamic_with_its_source_in_explain(persona, monkeypatch):
    path = persona(
        "name: Ada\nrole: R\nvariables:\n  company: {key: PROFILES_TEST_COMPANY, default: Acme}\n  max_steps: 3\n"
        "templates:\n  user: {inline: '{{ company }} ({{ max_steps }}): {{ question }}'}\n"
    )
    monkeypatch.delenv("PROFILES_TEST_COMPANY", raising=False)
    config = load_profile(path)
    profile = config.create_profile()
    assert profile.format_user_prompt("hi") == "Acme (3): hi"
    rows = {row.field: row for row in profile.explain()}
    assert (rows["variables.company"].value, rows["variables.company"].source) == ("Acme", "default")
    assert rows["variables.max_steps"].source == f"yaml:{path}:5"
    monkeypatch.setenv("PROFILES_TEST_COMPANY", "Globex")
    assert config.create_profile().format_user_prompt("hi") == "Globex (3): hi"
    assert config.create_profile().provenance["variables.company"] == "env:PROFILES_TEST_COMPANY"


def test_an_overlay_variable_names_the_overlay(persona):
    path = persona(
        "name: Ada\nrole: R\nvariables: {tone: calm}\ndeployments:\n  prod:\n    variables: {tone: formal}\n"
    )
    rows = {row.field: row for row in load_profile(path).create_profile(deployment="prod").explain()}
    assert (rows["variables.tone"].value, rows["variables.tone"].source) == ("formal", f"overlay prod: {path}:6")


def test_a_secret_variable_is_masked_and_kept_out_of_prompts(monkeypatch):
    monkeypatch.setenv("PROFILES_TEST_API_TOKEN", "tok-123")
    (config,) = parse_profiles(
        "name: Ada\nrole: R\nvariables:\n  token: {key: PROFILES_TEST_API_TOKEN}\n"
        "templates:\n  user: {inline: 'Token {{ token }}'}\n"
    )
    profile = config.create_profile()
    assert {row.field: row.value for row in profile.explain()}["variables.token"] == "***"
    with pytest.raises(SecretError) as caught:
        profile.format_user_prompt("q")
    assert "tok-123" not in caught.value.message and "token" in caught.value.message


def test_a_mapping_without_key_is_a_plain_value_and_a_bad_dynamic_entry_is_refused():
    (config,) = parse_profiles(
        "name: Ada\nrole: R\nvariables:\n  limits: {max: 3}\ntemplates:\n  user: {inline: '{{ limits.max }}'}\n"
    )
    assert config.create_profile().format_user_prompt("q") == "3"
    with pytest.raises(ConfigError, match=r"variable 'company': unknown key\(s\) defualt"):
        parse_profiles("name: Ada\nrole: R\nvariables:\n  company: {key: X, defualt: Acme}\n")


# errors name the persona file and line ------------------------------------------------------


def test_a_field_templates_error_names_the_persona_file_and_line(persona):
    path = persona('name: Ada\nrole: R\ngoal: |-\n  Plan.\n  Use {{ agents }}.\n')
    with pytest.raises(RenderError) as caught:
        load_profile(path).create_profile().format_system_prompt()
    assert caught.value.message.startswith(f"{path}:3: field 'goal' line 2 uses 'agents'")


def test_a_list_items_error_names_the_items_line(persona):
    path = persona('name: Ada\nrole: R\nconstraints:\n  - plain\n  - "{{ 1 / 0 }}"\n')
    with pytest.raises(RenderError) as caught:
        load_profile(path).create_profile().format_system_prompt()
    assert caught.value.message.startswith(f"{path}:5: field 'constraints[1]' line 1: ZeroDivisionError")


def test_a_field_that_does_not_parse_names_the_file_and_line(persona):
    path = persona('name: Ada\nrole: R\ndesc: "Hello {{ name"\n')
    with pytest.raises(RenderError) as caught:
        load_profile(path).create_profile()
    assert caught.value.message.startswith(f"{path}:3: field 'desc' holds template syntax that does not parse")
    assert "{% raw %}" in caught.value.message


def test_an_unknown_tag_is_not_blamed_on_braces(persona):
    path = persona('name: Ada\nrole: R\ndesc: "{% generation %}x{% endgeneration %}"\n')
    with pytest.raises(RenderError) as caught:
        load_profile(path).create_profile()
    assert "unknown tag 'generation'" in caught.value.message and "register_extension" in caught.value.message
    assert "{% raw %}" not in caught.value.message


def test_an_oversized_field_is_named_with_its_line_and_the_setting(persona):
    path = persona(f"name: Ada\nrole: R\ngoal: {'x' * 210_000}\n")
    with pytest.raises(RenderError) as caught:
        load_profile(path).create_profile().format_system_prompt()
    message = caught.value.message
    assert message.startswith(f"field 'goal' ({path}:3) holds 210000 characters")
    assert "PROFILES_MAX_OUTPUT_CHARS" in message and caught.value.limit == "PROFILES_MAX_OUTPUT_CHARS"


def test_an_own_templates_error_names_the_template_entry(persona):
    path = persona("name: Ada\nrole: R\ntemplates:\n  user: {file: user.j2}\n", **{"user.j2": "ok\n{{ 1 / 0 }}"})
    with pytest.raises(RenderError) as caught:
        load_profile(path).create_profile().format_user_prompt("q")
    assert "template 'user (file:user.j2)' line 2: ZeroDivisionError" in caught.value.message
