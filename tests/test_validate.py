"""`profiles validate` finds what would stop a persona rendering: syntax, likely typos, misspelt kinds."""

from __future__ import annotations

import pytest

from profiles import ConfigError, parse_profiles
from profiles.cli import cli
from profiles.validate import validate_config


def issues(text: str, tmp_path) -> list[str]:
    (config,) = parse_profiles(text, file="p.yaml", base_dir=tmp_path)
    return [str(issue) for issue in validate_config(config)]


def test_the_bundled_personas_validate(runner, configs):
    result = runner.invoke(cli, ["validate", str(configs)])
    assert result.exit_code == 0, result.output


def test_an_inline_template_that_does_not_parse(runner, write):
    path = write("broken.yaml", "name: Ada\nrole: Helper\ntemplates:\n  system: {inline: 'Hi {{ name'}\n")
    result = runner.invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2
    assert f"{path}:4: field 'templates.system': template 'system (inline)' line 1: unexpected end" in result.output


def test_a_misspelt_variable_in_a_field_has_a_hint(runner, write):
    path = write("typo.yaml", 'name: Ada\nrole: Helper\ngoal: "Help {{ nmae }}"\n')
    result = runner.invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2
    assert f"{path}:3: field 'goal': line 1 uses 'nmae', which this persona does not give; did you mean 'name'?" in (
        result.output
    )


def test_a_field_that_does_not_parse(tmp_path):
    found = issues("name: Ada\nrole: Helper\nconstraints:\n  - ok\n  - '{% if %}'\n", tmp_path)
    assert found == [
        "p.yaml:3: field 'constraints.1': its template syntax does not parse: line 1: Expected an expression, "
        "got 'end of statement block'; fix the syntax, or keep literal braces with {% raw %}…{% endraw %}"
    ]


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("templates.system", "templates:\n  system: {inline: '{{ questoin }}'}\n"),
        ("deployments.prod.expand_prompt", "deployments:\n  prod:\n    expand_prompt: '{{ rol }}'\n"),
        ("name", "name: {key: AGENT_NAME, default: 'Agent {{ nmae }}'}\n"),
    ],
)
def test_typos_are_found_wherever_a_template_is(where, text, tmp_path):
    found = issues(("role: Helper\n" if text.startswith("name") else "name: Ada\nrole: Helper\n") + text, tmp_path)
    assert len(found) == 1 and f"field '{where}'" in found[0] and "did you mean" in found[0]


def test_a_variable_given_at_render_time_is_not_a_typo(tmp_path):
    """`{{ agents }}` (the planner's) is no typo of anything: it is passed with --var, so it is not reported."""
    assert issues("name: Ada\nrole: Helper\nexpand_prompt: 'Agents: {{ agents }}'\n", tmp_path) == []


def test_samples_and_variables_declare_a_name(tmp_path):
    """A name close to a field is fine once the persona declares it."""
    text = "name: Ada\nrole: Helper\ngoal: '{{ names }} and {{ goals }}'\nsamples: {names: x}\nvariables: {goals: y}\n"
    assert issues(text, tmp_path) == []


def test_a_root_template_with_a_typo(tmp_path):
    (tmp_path / "prompts" / "default" / "en").mkdir(parents=True)
    (tmp_path / "prompts" / "default" / "en" / "handoff.j2").write_text("Hand over to {{ nmae }}.")
    found = issues("name: Ada\nrole: Helper\ntemplate_roots: [prompts]\n", tmp_path)
    assert len(found) == 1
    assert "field 'template_roots': template 'default/en/handoff.j2' line 1 uses 'nmae'" in found[0]


def test_a_kind_one_letter_from_a_builtin_is_an_error(tmp_path):
    with pytest.raises(ConfigError) as caught:
        parse_profiles("name: Ada\nrole: Helper\ntemplates:\n  sytem: {inline: Hi}\n", file="p.yaml")
    assert str(caught.value) == (
        "p.yaml:4:10: field 'templates.sytem': prompt kind 'sytem' is one letter away from the built-in 'system'; "
        "did you mean 'system'? If 'sytem' is a kind of its own, list it under 'kinds: [sytem]'"
    )


def test_a_kind_in_an_overlay_is_checked_too():
    with pytest.raises(ConfigError, match="'usr' is one letter away from the built-in 'user'"):
        parse_profiles("name: Ada\nrole: Helper\ndeployments:\n  prod:\n    templates:\n      usr: {inline: x}\n")


def test_a_declared_kind_is_a_kind(tmp_path):
    (config,) = parse_profiles("name: Ada\nrole: Helper\nkinds: [users]\ntemplates:\n  users: {inline: Hi}\n")
    assert config.create_profile().format_prompt("users") == "Hi"


def test_a_kind_found_in_a_root_needs_no_declaration(tmp_path):
    (tmp_path / "prompts" / "default" / "en").mkdir(parents=True)
    (tmp_path / "prompts" / "default" / "en" / "users.j2").write_text("All users")
    text = "name: Ada\nrole: Helper\ntemplate_roots: [prompts]\ntemplates:\n  users: {inline: Some users}\n"
    (config,) = parse_profiles(text, base_dir=tmp_path)
    assert config.create_profile().format_prompt("users") == "Some users"


def test_a_kind_far_from_every_builtin_needs_no_declaration():
    (config,) = parse_profiles("name: Ada\nrole: Helper\ntemplates:\n  handoff: {inline: Over}\n")
    assert config.create_profile().format_prompt("handoff") == "Over"


def test_kinds_must_be_names():
    with pytest.raises(ConfigError, match="kind '../x' is not a name a template file can have"):
        parse_profiles("name: Ada\nrole: Helper\nkinds: [../x]\n")


def test_check_gives_the_same_hint(runner, write):
    path = write("typo.yaml", "name: Ada\nrole: Helper\ntemplates:\n  user: {inline: '{{ questoin }}'}\n")
    result = runner.invoke(cli, ["check", str(path)])
    assert result.exit_code == 2 and "uses 'questoin'" in result.output and "did you mean 'question'?" in result.output


def test_a_message_layout_naming_a_kind_without_a_template(tmp_path):
    """A layout slot whose kind nothing renders would fail every render; validate says so at its place."""
    found = issues(
        "name: Ada\nrole: Helper\ntemplates:\n  plan: {inline: Plan.}\nmessages:\n  - {kind: system}\n"
        "  - {kind: usr}\n  - {kind: plan}\ndeployments:\n  prod:\n    messages: [{kind: handof}]\n",
        tmp_path,
    )
    assert found[0].startswith(
        "p.yaml:5: field 'messages.1': the message layout sends prompt kind 'usr', which has no template; "
        "did you mean 'user'?"
    )
    assert found[1].startswith("p.yaml:11: field 'deployments.prod.messages.0': the message layout sends prompt kind")
    assert len(found) == 2
    assert issues("name: Ada\nrole: Helper\nmessages: [{kind: system}, {history: true}]\n", tmp_path) == []
