"""`profiles import` and `profiles export` from the command line: files, notes and exit statuses."""

from __future__ import annotations

import json

from profiles import load_profile
from profiles.cli import cli

from .conftest import BAD, EXAMPLES


def test_import_writes_one_persona_per_agent_and_lists_what_changed(runner, tmp_path):
    out = tmp_path / "personas"
    result = runner.invoke(cli, ["import", "crewai", str(EXAMPLES / "crewai" / "support_crew"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in out.iterdir()) == [
        "billing_specialist.yaml", "escalation_manager.yaml", "triage_agent.yaml"
    ]
    assert f"wrote {out / 'triage_agent.yaml'}" in result.output
    assert "metadata: allow_delegation has no persona field; kept as metadata.crewai.allow_delegation" in result.output
    assert "code: tools dropped" in result.output and "renamed: placeholder {goal}" in result.output
    persona = load_profile(out / "triage_agent.yaml")
    assert persona.metadata["crewai"]["max_iter"] == 8
    assert persona.create_profile().provenance["role"] == f"yaml:{out / 'triage_agent.yaml'}:4"
    again = runner.invoke(cli, ["import", "crewai", str(EXAMPLES / "crewai" / "support_crew"), "--out", str(out)])
    assert again.exit_code == 2 and "exist(s) already; pass --force" in again.output
    forced = runner.invoke(cli, ["import", "crewai", str(EXAMPLES / "crewai" / "support_crew"), "--out", str(out),
                                 "--force", "--quiet"])
    assert forced.exit_code == 0 and "metadata:" not in forced.output


def test_imported_prompty_files_pass_profiles_check(runner, tmp_path):
    result = runner.invoke(cli, ["import", "prompty", str(EXAMPLES / "prompty" / "v1"), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    checked = runner.invoke(cli, ["check", str(tmp_path)])
    assert checked.exit_code == 0, checked.output


def test_a_hostile_file_is_one_error_with_file_and_line(runner, tmp_path):
    result = runner.invoke(cli, ["import", "agentspec", str(BAD / "agentspec" / "billion_laughs.yaml"),
                                 "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.startswith("Error: ") and "billion_laughs.yaml:" in result.output
    assert "internal error" not in result.output and not list(tmp_path.iterdir())
    code = runner.invoke(cli, ["import", "adk", str(BAD / "google_adk" / "code_refs" / "agent_class_builtin.yaml"),
                               "--out", str(tmp_path)])
    assert code.exit_code == 2 and "no agent or prompt in it could become a persona" in code.output


def test_export_prints_one_file_and_writes_a_crew(runner, tmp_path, configs):
    result = runner.invoke(cli, ["export", str(configs / "summarizer.yaml"), "--to", "agentspec", "--model",
                                 "gpt-4o", "--base-url", "http://127.0.0.1:8000/v1", "--deployment", "staging"])
    assert result.exit_code == 0, result.output
    agent = json.loads(result.stdout)
    assert agent["name"] == "Socrates" and agent["llm_config"]["url"] == "http://127.0.0.1:8000/v1"
    assert "api_key" not in result.output
    crew = runner.invoke(cli, ["export", str(configs / "planner.yaml"), str(configs / "summarizer.yaml"),
                               "--to", "crewai"])
    assert crew.exit_code == 2 and "give --out FOLDER" in crew.output
    crew = runner.invoke(cli, ["export", str(configs / "planner.yaml"), str(configs / "summarizer.yaml"),
                               "--to", "crewai", "--out", str(tmp_path)])
    assert crew.exit_code == 0, crew.output
    agents = (tmp_path / "agents.yaml").read_text()
    assert "hypatia:" in agents and "aristotle:" in agents and "{agents}" in agents
    refused = runner.invoke(cli, ["export", str(configs / "planner.yaml"), "--to", "crewai", "--out", str(tmp_path)])
    assert refused.exit_code == 2 and "pass --force" in refused.output


def test_export_to_an_existing_file_without_a_suffix(runner, tmp_path, configs):
    """An --out that is a file already is that file (kept without --force), never a folder to make inside it."""
    out = tmp_path / "PROMPT"
    out.write_text("old\n")
    args = ["export", str(configs / "summarizer.yaml"), "--to", "prompty", "--out", str(out)]
    refused = runner.invoke(cli, args)
    assert refused.exit_code == 2 and "exist(s) already; pass --force" in refused.stderr, refused.output
    assert out.read_text() == "old\n"
    forced = runner.invoke(cli, [*args, "--force"])
    assert forced.exit_code == 0, forced.output
    assert out.read_text().startswith("---\nname: aristotle\n")
    crew = runner.invoke(cli, ["export", str(configs / "summarizer.yaml"), "--to", "crewai", "--out", str(out)])
    assert crew.exit_code == 2
    assert f"--out {out} is a file, and crewai writes agents.yaml, tasks.yaml; name a folder" in crew.stderr


def test_export_errors_are_the_users_to_fix(runner, write):
    path = write("p.yaml", "name: Ada\nrole: Clerk\ngoal: \"As {% raw %}{first_name}{% endraw %}\"\n")
    result = runner.invoke(cli, ["export", str(path), "--to", "adk"])
    assert result.exit_code == 2 and result.output.startswith("Error: ") and "{first_name}" in result.output
    unknown = runner.invoke(cli, ["export", str(path), "--to", "nope"])
    assert unknown.exit_code == 2 and "'nope' is not one of" in unknown.output


def test_help_shows_examples(runner):
    for command in ("import", "export"):
        result = runner.invoke(cli, [command, "--help"])
        assert result.exit_code == 0 and f"profiles {command} " in result.output


def test_export_model_replaces_the_personas_model_as_its_help_says(runner, configs):
    """--model is the model the prompts are for, in place of the persona's (triage names gpt-4o-mini)."""
    result = runner.invoke(cli, ["export", str(configs / "triage.yaml"), "--to", "adk", "--model", "gemini-2.5-flash"])
    assert result.exit_code == 0, result.output
    assert "\nmodel: gemini-2.5-flash\n" in result.stdout
    shown = " ".join(runner.invoke(cli, ["export", "--help"]).output.split())
    assert "in place of the persona's" in shown and "where the persona names none" not in shown


def test_export_base_url_for_another_format_is_a_usage_error(runner, configs):
    """--base-url goes into Agent Spec's llm_config only; given for another format it is refused, not ignored."""
    result = runner.invoke(cli, ["export", str(configs / "triage.yaml"), "--to", "prompty", "--base-url",
                                 "http://127.0.0.1:8000/v1"])
    assert result.exit_code == 2 and "--base-url is an Agent Spec setting" in result.output
    assert "Traceback" not in result.output
