"""`profiles check` passes the bundled personas and flags a seeded mistake of each kind, with file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from profiles import check_paths
from profiles.cli import cli

CONFIGS = Path(__file__).resolve().parents[2] / "profile_configs"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def test_bundled_personas_pass(runner):
    result = runner.invoke(cli, ["check", str(CONFIGS)])
    assert result.exit_code == 0, result.output
    personas = [path for path in CONFIGS.rglob("*.yaml") if not path.name.endswith(".map.yaml")]
    assert result.output.count("ok ") == len(personas) and "datasets/support_agent.yaml" in result.output


def test_readme_example_passes(runner, write):
    """The README's `samples:` example checks clean."""
    path = write(
        "planner.yaml",
        "name: Hypatia\nrole: Planner\nexpand_prompt: 'Agents: {{ agents }}.'\n"
        "samples:\n  agents: Searcher, Coder        # every prompt kind\n"
        "  user: {question: Plan a trip}  # the user prompt only\n",
    )
    result = runner.invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output


@pytest.fixture
def seeded(tmp_path, monkeypatch):
    """A copy of profile_configs with one mistake of each kind seeded into new personas."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.delenv("PROFILES_ENV_ALLOW", raising=False)
    folder = tmp_path / "configs"
    shutil.copytree(CONFIGS, folder)
    (folder / "missing.yaml").write_text("name: A\nrole: B\nexpand_prompt: 'Use {{ agents }}.'\n")
    (folder / "unused.yaml").write_text("name: A\nrole: B\nsamples:\n  agnets: x\n  user: {colour: red}\n")
    (folder / "broken.yaml").write_text("name: A\nrole: B\ntemplates:\n  system: {inline: '{% if %}'}\n")
    (folder / "failing.yaml").write_text("name: A\nrole: B\ntemplates:\n  user: {inline: '{{ 1 // 0 }}'}\n")
    (folder / "leaky.yaml").write_text(
        "name: {key: AWS_SECRET_ACCESS_KEY, default: Nobody}\nrole: B\n"
    )
    (folder / "invalid.yaml").write_text("name: A\nrole: B\nrole: C\n")
    return folder


def test_seeded_mistakes_are_all_reported_in_one_run(seeded, runner):
    result = runner.invoke(cli, ["check", str(seeded)])
    assert result.exit_code == 2
    out = result.output
    assert f"{seeded}/missing.yaml:3" in out and "'agents'" in out
    assert f"{seeded}/unused.yaml:3" in out and "sample 'agnets'" in out and "sample 'colour'" in out
    assert f"{seeded}/broken.yaml:3" in out and "system prompt" in out
    assert f"{seeded}/failing.yaml:3" in out and "ZeroDivisionError" in out
    assert f"{seeded}/leaky.yaml:1" in out and "secret" in out and SECRET not in out
    assert f"{seeded}/invalid.yaml:3:1" in out and "duplicate key" in out
    for name in ("planner", "summarizer", "analyst_zh"):
        assert f"ok {seeded}/{name}.yaml" in out


def test_check_paths_reports_issues_with_lines(seeded):
    report = check_paths([seeded / "missing.yaml", seeded / "unused.yaml"])
    assert not report.ok
    assert {(Path(issue.file).name, issue.line) for issue in report.issues} == {
        ("missing.yaml", 3),
        ("unused.yaml", 3),
    }


def test_allowed_secret_passes(write, monkeypatch, runner):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    path = write("ok.yaml", "name: {key: AWS_SECRET_ACCESS_KEY, default: N}\nrole: B\nallow_secrets: [name]\n")
    result = runner.invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output


def test_react_is_checked_when_the_persona_has_tools(write, runner):
    path = write(
        "tools.yaml",
        "name: A\nrole: B\ntools:\n  - {name: search, description: Search the web, parameters: {}}\n"
        "templates:\n  react: {inline: '{{ tools }} {{ tool_names }} {{ nope }}'}\n",
    )
    result = runner.invoke(cli, ["check", str(path)])
    assert result.exit_code == 2
    assert "react prompt" in result.output and "'nope'" in result.output


def test_no_files_is_an_error(tmp_path, runner):
    result = runner.invoke(cli, ["check", str(tmp_path)])
    assert result.exit_code == 2 and "no persona files" in result.output
