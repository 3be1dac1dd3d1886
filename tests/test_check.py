"""`profiles check` renders every kind a persona can render, its template roots' kinds included."""

from __future__ import annotations

import pytest

from profiles import check_paths
from profiles.cli import cli


def _persona_with_root(write, template: str, samples: str) -> object:
    write("team/prompts/default/en/handoff.j2", template)
    return write(
        "team/support.yaml",
        f"name: Ada\nrole: Support agent\ntemplate_roots: [prompts]\nsamples:\n{samples}",
    )


def test_a_root_kind_is_rendered_with_its_samples(write, runner):
    """`samples: {handoff: {...}}` feeds the root's handoff template: no 'used by no template'."""
    path = _persona_with_root(write, "{{ name }} hands {{ ticket }} over.", "  handoff: {ticket: T-1}\n")
    result = runner.invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"ok {path}"


def test_a_root_kind_missing_a_variable_is_reported(write):
    path = _persona_with_root(write, "{{ name }} hands {{ ticket }} over.", "  agents: x\n")
    report = check_paths([path])
    messages = [issue.message for issue in report.issues]
    assert any(message.startswith("handoff prompt: template 'default/en/handoff.j2' line 1 uses 'ticket'")
               for message in messages), messages
    assert any("sample 'agents' is used by no template" in message for message in messages), messages


def test_a_persona_that_cannot_be_created_is_named_once_at_its_line(write, runner, monkeypatch):
    """It printed `team.yaml: team.yaml:1: field 'name' …`, the place twice."""
    monkeypatch.delenv("CHECK_UNSET_NAME", raising=False)
    path = write("team.yaml", "name: {key: CHECK_UNSET_NAME}\nrole: Reviewer\n")
    (issue,) = check_paths([path]).issues
    assert (issue.file, issue.line) == (str(path), 1) and issue.message.startswith("field 'name' is required")
    result = runner.invoke(cli, ["check", str(path)])
    assert result.exit_code == 2
    assert f"{path}:1: field 'name' is required" in result.output and f"{path}: {path}" not in result.output


def test_each_listed_deployment_is_checked_and_a_shared_problem_said_once(write):
    """An overlay whose prompt cannot render with the samples passed `profiles check` (only a snapshot saw it)."""
    path = write(
        "team.yaml",
        "name: Ada\nrole: Reviewer\ninputs: {ticket: string}\n"
        "templates:\n  user: {inline: 'T {{ ticket }}'}\n"
        "samples: {ticket: T-1, mood: calm}\n"
        "deployments:\n  dev:\n    inputs: {ticket: integer}\n  prod: {name: Grace}\n",
    )
    report = check_paths([path])
    messages = [(issue.line, issue.message) for issue in report.issues]
    dev = [line for line, message in messages if message.startswith("deployment 'dev': ")]
    assert 9 in dev, messages  # the overlay's own declaration
    assert not any(message.startswith("deployment 'prod'") for _, message in messages), messages
    mood = [message for _, message in messages if "'mood'" in message]
    assert len(mood) == 1 and not mood[0].startswith("deployment"), messages  # every deployment shares it


def test_one_path_is_checked_as_one_path_not_as_the_letters_of_its_name(tmp_path, monkeypatch):
    from pathlib import Path

    from profiles import ConfigError

    (tmp_path / "ada.yaml").write_text("name: Ada\nrole: Guide\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for path in ("ada.yaml", Path("ada.yaml"), ["ada.yaml"], (name for name in ["ada.yaml"])):
        report = check_paths(path)
        assert (report.checked, report.issues) == (["ada.yaml"], [])
    for wrong in (None, 5, ["ada.yaml", None]):
        with pytest.raises(ConfigError, match="check_paths takes a path or a list of paths"):
            check_paths(wrong)
