"""Deployments: one persona file, its own identity per deployment, from `.env.<deployment>` or overlays."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from profiles import ConfigError, ResolutionError, UnknownDeploymentWarning, load_profile
from profiles.cli import cli
from profiles.loader import parse_profiles


@pytest.fixture
def summarizer(configs: Path):
    return load_profile(configs / "summarizer.yaml")


def line_of(path: Path, text: str, start: int = 1) -> int:
    """The 1-based number of the first line from `start` on that contains `text`."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if number >= start and text in line:
            return number
    raise AssertionError(f"{text!r} not in {path}")


def test_summarizer_without_deployment_is_aristotle(summarizer):
    assert summarizer.create_profile().get_name() == "Aristotle"


def test_summarizer_in_prod_is_plato_from_dotenv_prod(summarizer, configs, monkeypatch):
    monkeypatch.chdir(configs.parent)
    profile = summarizer.create_profile(deployment="prod")
    assert profile.get_name() == "Plato"
    assert profile.provenance["name"] == "env:SUMMARY_PROFILE_NAME from profile_configs/.env.prod"


def test_summarizer_in_staging_is_socrates_from_overlay(summarizer, configs):
    profile = summarizer.create_profile(deployment="staging")
    assert profile.get_name() == "Socrates"
    path = configs / "summarizer.yaml"
    expected_line = line_of(path, "name: Socrates")
    assert profile.provenance["name"] == f"overlay staging: {path}:{expected_line}"


def test_dotenv_prod_is_committed_not_ignored(configs):
    """The example `.env.prod` is part of the repository, and holds no credential-like key."""
    import subprocess

    for name in (".env.prod", ".env"):
        result = subprocess.run(
            ["git", "check-ignore", "-q", str(configs / name)], cwd=configs.parent, capture_output=True
        )
        assert result.returncode == 1, f"{name} is hidden by .gitignore"
    text = (configs / ".env.prod").read_text()
    assert "SUMMARY_PROFILE_NAME=Plato" in text
    from profiles import looks_like_credential

    keys = [line.split("=")[0] for line in text.splitlines() if "=" in line and not line.startswith("#")]
    assert keys and not any(looks_like_credential(key) for key in keys)


def test_deployment_falls_back_to_profiles_deployment(summarizer, monkeypatch):
    monkeypatch.setenv("PROFILES_DEPLOYMENT", "staging")
    assert summarizer.create_profile().get_name() == "Socrates"
    # the argument wins over the variable
    assert summarizer.create_profile(deployment="prod").get_name() == "Plato"


def test_process_environment_beats_dotenv_prod(summarizer, monkeypatch):
    monkeypatch.setenv("SUMMARY_PROFILE_NAME", "Zeno")
    profile = summarizer.create_profile(deployment="prod")
    assert (profile.get_name(), profile.provenance["name"]) == ("Zeno", "env:SUMMARY_PROFILE_NAME")


def test_overlay_literal_replaces_dynamic_field(summarizer, monkeypatch):
    """An overlay's own value replaces the field, provider and all."""
    monkeypatch.setenv("SUMMARY_PROFILE_NAME", "Zeno")
    assert summarizer.create_profile(deployment="staging").get_name() == "Socrates"


@pytest.mark.parametrize(
    ("args", "name"),
    [([], "Aristotle"), (["--deployment", "prod"], "Plato"), (["-d", "staging"], "Socrates")],
)
def test_cli_render_per_deployment(runner, configs, monkeypatch, args, name):
    monkeypatch.chdir(configs.parent)
    result = runner.invoke(cli, ["render", "profile_configs/summarizer.yaml", "--kind", "system", *args])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"You are {name}.")


def test_cli_render_reads_profiles_deployment(runner, configs, monkeypatch):
    monkeypatch.setenv("PROFILES_DEPLOYMENT", "prod")
    result = runner.invoke(cli, ["render", str(configs / "summarizer.yaml"), "--kind", "system"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("You are Plato.")


def test_cli_validate_examples_still_pass(runner, configs):
    result = runner.invoke(cli, ["validate", str(configs)])
    assert result.exit_code == 0, result.output
    assert "summarizer.yaml" in result.output


def test_unknown_deployment_uses_base_and_warns_once(write):
    path = write("p.yaml", "name: Base\nrole: r\ndeployments:\n  prod: {name: Prod}\n")
    config = load_profile(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = [config.create_profile(deployment="dev").get_name() for _ in range(3)]
        config.create_profile(deployment="qa")
    assert names == ["Base"] * 3
    messages = [str(w.message) for w in caught if issubclass(w.category, UnknownDeploymentWarning)]
    assert len(messages) == 2
    assert "'dev'" in messages[0] and str(path) in messages[0] and "prod" in messages[0]
    # a second load of the same file does not warn again for the same deployment
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        load_profile(path).create_profile(deployment="dev")
    assert not [w for w in again if issubclass(w.category, UnknownDeploymentWarning)]


def test_cli_prints_unknown_deployment_warning(runner, write):
    path = write("cli.yaml", "name: Base\nrole: r\ndeployments:\n  prod: {name: Prod}\n")
    result = runner.invoke(cli, ["render", str(path), "--kind", "system", "-d", "elsewhere"])
    assert result.exit_code == 0
    assert "Warning:" in result.output and "'elsewhere'" in result.output


def test_persona_without_overlays_never_warns(write):
    path = write("plain.yaml", "name: Base\nrole: r\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_profile(path).create_profile(deployment="prod").get_name() == "Base"


def test_empty_overlay_keeps_base_without_warning(write):
    path = write("empty.yaml", "name: Base\nrole: r\ndeployments:\n  prod:\n  staging: {name: S}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        profile = load_profile(path).create_profile(deployment="prod")
    assert profile.get_name() == "Base"
    assert profile.provenance["name"] == f"yaml:{path}:1"


def test_overlay_merges_templates_and_variables(write):
    path = write(
        "merge.yaml",
        "name: N\nrole: r\nvariables: {a: base-a, b: base-b}\n"
        "templates:\n  user: {inline: 'U {{ a }} {{ b }}'}\n  system: {inline: 'S {{ name }}'}\n"
        "deployments:\n  prod:\n    variables: {b: prod-b}\n    templates:\n      system: {inline: 'P {{ name }}'}\n",
    )
    config = load_profile(path)
    base = config.create_profile()
    prod = config.create_profile(deployment="prod")
    assert base.format_user_prompt() == "U base-a base-b"
    assert prod.format_user_prompt() == "U base-a prod-b"
    assert (base.format_system_prompt(), prod.format_system_prompt()) == ("S N", "P N")


def test_overlay_provenance_names_each_field_line(write):
    path = write(
        "lines.yaml",
        "name: N\nrole: r\ngoal: g\ndeployments:\n  prod:\n    goal: pg\n    constraints:\n      - one\n",
    )
    profile = load_profile(path).create_profile(deployment="prod")
    assert profile.provenance["goal"] == f"overlay prod: {path}:6"
    assert profile.provenance["constraints"] == f"overlay prod: {path}:7"
    assert profile.provenance["role"] == f"yaml:{path}:2"
    assert profile.get_constraints() == ["one"]


def test_overlay_with_wrong_type_reported_at_overlay_line(write):
    path = write(
        "bad.yaml",
        "name: N\nrole: r\ndeployments:\n  prod:\n    role: Writer\n    name:\n      - a\n      - b\n",
    )
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = caught.value.issues
    assert issue.field == "deployments.prod.name"
    assert (issue.file, issue.line) == (str(path), 7)
    assert "expected text, got a list" in issue.message
    assert f"{path}:7:" in str(caught.value)


def test_overlay_problems_reported_together(write):
    path = write(
        "bad2.yaml",
        "name: N\nrole: r\ndeployments:\n  prod:\n    colour: blue\n  staging:\n    constraints: one\n  'x/y': {}\n",
    )
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    found = {(issue.field.split(".")[1], issue.line) for issue in caught.value.issues}
    assert found == {("prod", 5), ("staging", 7), ("x/y", 8)}


def test_overlay_dynamic_field_reads_env(write, monkeypatch):
    path = write("dyn.yaml", "name: N\nrole: r\ndeployments:\n  prod:\n    name: {key: DEPLOY_TEST_NAME, default: P}\n")
    monkeypatch.setenv("DEPLOY_TEST_NAME", "FromEnv")
    profile = load_profile(path).create_profile(deployment="prod")
    assert (profile.get_name(), profile.provenance["name"]) == ("FromEnv", "env:DEPLOY_TEST_NAME")


def test_overlay_cannot_nest_deployments_or_extends(write):
    path = write("nest.yaml", "name: N\nrole: r\ndeployments:\n  prod:\n    deployments: {}\n    extends: x.yaml\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    assert {issue.field for issue in caught.value.issues} == {
        "deployments.prod.deployments",
        "deployments.prod.extends",
    }


def test_unsafe_deployment_argument_is_refused(summarizer):
    with pytest.raises(ResolutionError, match="deployment name"):
        summarizer.create_profile(deployment="../../etc")


def test_config_repr_and_overlay_repr(write):
    (config,) = parse_profiles("name: N\nrole: r\ndeployments:\n  prod: {name: P}\n")
    assert "deployments" in repr(config) and "name='P'" in repr(config.deployments["prod"])


def test_deployment_copy_does_not_change_the_base(summarizer):
    """Creating a profile for a deployment leaves the loaded config as it was."""
    summarizer.create_profile(deployment="staging")
    assert summarizer.create_profile().get_name() == "Aristotle"
    assert summarizer.for_deployment("staging").name == "Socrates"
    assert summarizer.for_deployment(None) is summarizer


def test_cli_refuses_unsafe_deployment(runner, configs):
    result = runner.invoke(cli, ["render", str(configs / "summarizer.yaml"), "--deployment", "../prod"])
    assert result.exit_code == 2
    assert result.output.startswith("Error: deployment name '../prod' is not allowed")


def test_schema_knows_deployments_extends_and_allow_secrets():
    import jsonschema

    from profiles import persona_schema

    validator = jsonschema.Draft202012Validator(persona_schema())
    good = [
        {"extends": "base.yaml", "goal": "g"},
        {"extends": ["a.yaml", "b.yaml"], "name": "n"},
        {"name": "n", "role": "r", "allow_secrets": ["name"], "deployments": {"prod": {"name": "P"}, "dev": None}},
    ]
    bad = [
        {"goal": "g"},
        {"name": "n", "role": "r", "allow_secrets": ["nmae"]},
        {"name": "n", "role": "r", "deployments": {"x/y": {}}},
        {"name": "n", "role": "r", "deployments": {"prod": {"colour": "blue"}}},
        {"name": "n", "role": "r", "deployments": {"prod": {"name": ["a"]}}},
        {"name": "n", "role": "r", "extends": []},
    ]
    for document in good:
        assert not list(validator.iter_errors(document)), document
    for document in bad:
        assert list(validator.iter_errors(document)), document


def test_overlay_may_change_resources_and_tools(write):
    from profiles import ResourceError

    path = write(
        "tools.yaml",
        "name: N\nrole: r\ndeployments:\n  prod:\n    requires_resources: true\n"
        "    tools:\n      - {name: search, description: Search the web.}\n",
    )
    config = load_profile(path)
    assert config.create_profile().format_system_prompt().startswith("You are N.")
    prod = config.create_profile(deployment="prod")
    assert [tool.name for tool in prod.tools] == ["search"]
    with pytest.raises(ResourceError):
        prod.format_system_prompt()


def test_an_unsafe_profiles_deployment_names_the_variable(write, monkeypatch):
    """Nobody passed the name: the error must say it came from the environment."""
    path = write("team.yaml", "name: Ada\nrole: Reviewer\n")
    monkeypatch.setenv("PROFILES_DEPLOYMENT", "../x")
    with pytest.raises(ResolutionError, match=r"^PROFILES_DEPLOYMENT: deployment name '\.\./x' is not allowed.*unset"):
        load_profile(path).create_profile()


@pytest.mark.parametrize(
    ("deployment", "place"),
    [
        (None, "team.yaml:1: field 'name'"),
        ("prod", "team.yaml:9: field 'role'"),
    ],
)
def test_a_refused_env_key_is_named_at_its_field_and_line(write, monkeypatch, deployment, place):
    """`env key 'TEAM_NAME' is not allowed…` said neither which persona nor which field reads it."""
    path = write(
        "team.yaml",
        "name: {key: TEAM_NAME, default: Ada}\nrole: Reviewer\nvariables:\n"
        "  company: {key: TEAM_COMPANY, default: Acme}\n"
        "model_settings:\n  temperature: {key: TEAM_TEMPERATURE, default: '0.2'}\ndeployments:\n  prod:\n"
        "    role: {key: TEAM_ROLE, default: Reviewer}\n",
    )
    config = load_profile(path)
    monkeypatch.setenv("PROFILES_ENV_ALLOW", "TEAM_COMPANY,TEAM_TEMPERATURE" + (",TEAM_NAME" if deployment else ""))
    with pytest.raises(ResolutionError) as caught:
        config.create_profile(deployment=deployment)
    assert str(caught.value).startswith(f"{path.parent / place}: env key "), str(caught.value)
    monkeypatch.setenv("PROFILES_ENV_ALLOW", "TEAM_NAME,TEAM_ROLE,TEAM_TEMPERATURE")
    with pytest.raises(ResolutionError, match=r"team\.yaml:4: variable 'company': env key 'TEAM_COMPANY'"):
        config.create_profile().format_system_prompt()
    monkeypatch.setenv("PROFILES_ENV_ALLOW", "TEAM_NAME,TEAM_ROLE,TEAM_COMPANY")
    with pytest.raises(ResolutionError, match=r"team\.yaml:6: model_settings\.temperature: env key 'TEAM_TEMPERATURE'"):
        config.create_profile().to_request("Hi", model="gpt-4o")


def test_deployments_nobody_lists_are_not_kept_without_bound(write, monkeypatch):
    """A server passing each request's deployment on kept one entry per made-up name, for ever."""
    from profiles import deployments

    config = load_profile(write("team.yaml", "name: Ada\nrole: Reviewer\ndeployments:\n  prod:\n"))
    monkeypatch.setattr(deployments, "MAX_WARNED", 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownDeploymentWarning)
        for number in range(50):
            assert config.create_profile(deployment=f"customer-{number}").get_name() == "Ada"
    assert len(deployments._warned) <= 10
    assert set(config._memo.get("overlaid", {})) <= {"prod"}
