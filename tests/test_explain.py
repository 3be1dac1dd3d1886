"""`explain`: each field's value and where it came from, in Python and on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiles import ConfigError, ExplainRow, explain, load_profile
from profiles.cli import cli
from profiles.fields import PROFILE_FIELDS


def line_of(path: Path, prefix: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith(prefix):
            return number
    raise AssertionError(prefix)


def test_rows_follow_field_order_with_yaml_lines(configs):
    path = configs / "summarizer.yaml"
    rows = explain(path)
    assert [row.field for row in rows] == list(PROFILE_FIELDS)
    by_field = {row.field: row for row in rows}
    for field in ("role", "goal", "retry_goal", "constraints", "retry_constraints", "examples"):
        assert by_field[field].source == f"yaml:{path}:{line_of(path, field + ':')}"
    assert (by_field["name"].value, by_field["name"].source) == ("Aristotle", "default")
    assert (by_field["desc"].value, by_field["desc"].source) == (None, "unset")
    assert isinstance(by_field["constraints"].value, tuple)


def test_prod_row_names_env_key_and_file(configs, monkeypatch):
    monkeypatch.chdir(configs.parent)
    rows = {row.field: row for row in explain("profile_configs/summarizer.yaml", deployment="prod")}
    assert rows["name"] == ExplainRow("name", "Plato", "env:SUMMARY_PROFILE_NAME from profile_configs/.env.prod")


def test_overlay_row_names_overlay_file_and_line(configs):
    path = configs / "summarizer.yaml"
    rows = {row.field: row for row in explain(path, deployment="staging")}
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "name: Socrates" in text)
    assert rows["name"].source == f"overlay staging: {path}:{line}"


def test_explain_accepts_config_and_profile(configs):
    config = load_profile(configs / "summarizer.yaml")
    from_config = explain(config, language="zh", model="gpt-4o")
    rows = {row.field: row for row in from_config}
    assert (rows["language"].value, rows["language"].source) == ("zh", "argument")
    assert (rows["model"].value, rows["model"].source) == ("gpt-4o", "argument")
    profile = config.create_profile(overrides={"goal": "Be brief."})
    rows = {row.field: row for row in profile.explain()}
    assert (rows["goal"].value, rows["goal"].source) == ("Be brief.", "override")
    assert explain(profile) == profile.explain()


def test_explain_picks_a_persona_in_a_file_of_several_as_its_error_says(write):
    """Without a pick, the error suggested name=, which explain did not take."""
    path = write("team.yaml", "name: Ada\nrole: Reviewer\n---\nname: Grace\nrole: Writer\n")
    with pytest.raises(ConfigError, match=r"holds 2 personas .*explain\(path, name=…\)") as caught:
        explain(path)
    assert "--name NAME or --index N" in str(caught.value)
    by_name = {row.field: row.value for row in explain(path, name="Grace")}
    by_index = {row.field: row.value for row in explain(str(path), index=2)}
    assert by_name == by_index and by_name["role"] == "Writer"
    assert {row.field: row.value for row in explain(path, index=1)}["name"] == "Ada"
    with pytest.raises(ConfigError, match="a ProfileConfig is one persona already"):
        explain(load_profile(path, index=1), name="Ada")


def test_literal_config_without_file():
    from profiles import ProfileConfig

    rows = {row.field: row for row in ProfileConfig(name="N", role="R").create_profile().explain()}
    assert rows["name"].source == "literal"


def test_row_to_dict_is_json_ready():
    row = ExplainRow("constraints", ("a", "b"), "yaml:x.yaml:3")
    assert json.loads(json.dumps(row.to_dict())) == {
        "field": "constraints",
        "value": ["a", "b"],
        "source": "yaml:x.yaml:3",
        "secret": False,
    }


def test_cli_table_shows_field_value_source(runner, configs, monkeypatch):
    monkeypatch.chdir(configs.parent)
    result = runner.invoke(cli, ["explain", "profile_configs/summarizer.yaml", "--deployment", "prod"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["field", "value", "source"]
    name = next(line for line in lines if line.startswith("name "))
    assert name.split() == ["name", "Plato", "env:SUMMARY_PROFILE_NAME", "from", "profile_configs/.env.prod"]
    role = next(line for line in lines if line.startswith("role "))
    assert role.split()[-1] == f"yaml:profile_configs/summarizer.yaml:{line_of(configs / 'summarizer.yaml', 'role:')}"
    assert all(line == line.rstrip() for line in lines)


def test_cli_table_keeps_brackets_and_shortens_long_values(runner, write):
    path = write("b.yaml", "name: '[bold]N[/bold]'\nrole: r\ngoal: '" + "word " * 40 + "'\n")
    result = runner.invoke(cli, ["explain", str(path)])
    assert result.exit_code == 0, result.output
    assert "[bold]N[/bold]" in result.output
    goal = next(line for line in result.output.splitlines() if line.startswith("goal"))
    assert "…" in goal and f"yaml:{path}:3" in goal


def test_cli_json(runner, configs):
    result = runner.invoke(
        cli, ["explain", str(configs / "summarizer.yaml"), "-d", "staging", "--language", "en", "--json"]
    )
    assert result.exit_code == 0, result.output
    rows = {row["field"]: row for row in json.loads(result.output)}
    assert rows["name"]["value"] == "Socrates" and rows["name"]["source"].startswith("overlay staging: ")
    assert rows["language"] == {"field": "language", "value": "en", "source": "argument", "secret": False}
    assert isinstance(rows["constraints"]["value"], list)


def test_cli_explain_reads_profiles_deployment(runner, configs, monkeypatch):
    monkeypatch.setenv("PROFILES_DEPLOYMENT", "staging")
    result = runner.invoke(cli, ["explain", str(configs / "summarizer.yaml"), "--json"])
    assert json.loads(result.output)[0]["value"] == "Socrates"


def test_cli_explain_reports_bad_file(runner, write):
    path = write("bad.yaml", "name: N\n")
    result = runner.invoke(cli, ["explain", str(path)])
    assert result.exit_code == 2
    assert f"Error: {path}" in result.output and "role" in result.output


def test_explain_in_help(runner):
    result = runner.invoke(cli, ["explain", "--help"])
    assert result.exit_code == 0
    for option in ("--deployment", "--language", "--model", "--json"):
        assert option in result.output


@pytest.mark.parametrize("field", ["role", "goal"])
def test_provenance_lines_for_duplicates_use_first_key(write, field):
    """With a duplicate key reported as an error, no provenance is made: loading fails first."""
    from profiles import ConfigError

    path = write("dup.yaml", f"name: N\nrole: r\n{field}: a\n{field}: b\n")
    with pytest.raises(ConfigError, match="duplicate key"):
        load_profile(path)
