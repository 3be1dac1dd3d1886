"""CrewAI: agents.yaml and the tasks.yaml beside it become personas with inputs and a prompt per task."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiles import interop
from profiles.check import check_paths
from profiles.errors import ConfigError

from .conftest import EXAMPLES


def test_research_crew_agents_become_personas_with_kickoff_inputs():
    """role, goal and backstory carry over with {topic} as an input; the agent id gives the name."""
    result = interop.load("crewai", EXAMPLES / "crewai" / "research_crew")
    researcher, analyst = result.personas
    assert [researcher.stem, analyst.stem] == ["researcher", "reporting_analyst"]
    profile = researcher.config.create_profile()
    assert profile.get_name() == "Researcher"
    assert profile.provenance["name"].startswith("import:crewai:") and "derived: name" in profile.provenance["name"]
    assert profile.provenance["role"].endswith("research_crew/config/agents.yaml:4")
    assert set(researcher.config.inputs) == {"topic", "current_year"}
    system = profile.format_system_prompt(topic="AI agents", current_year="2025")
    assert system.startswith("You are Researcher. Your role: AI agents Senior Data Researcher.")
    assert "Uncover cutting-edge developments in AI agents" in system
    task = profile.format_prompt("research_task", topic="AI agents", current_year="2025")
    assert "the current year is 2025." in task
    assert "This is the expected criteria for your final answer: A list with 10 bullet points" in task
    assert analyst.data["metadata"]["crewai"]["tasks"]["reporting_task"]["output_file"] == "reports/{topic}_report.md"


def test_placeholders_named_like_persona_fields_are_renamed_and_reported():
    """{goal} and {role} are the customer's, not the agent's: they become goal_input and role_input."""
    result = interop.load("crewai", EXAMPLES / "crewai" / "support_crew")
    triage = result.personas[0]
    assert triage.data["metadata"]["imported"]["renamed"] == {"goal_input": "goal", "role_input": "role"}
    renamed = [note for note in triage.notes if note.kind == "renamed"]
    assert len(renamed) == 2 and "{goal}" in renamed[0].message
    profile = triage.config.create_profile()
    system = profile.format_system_prompt(
        company="Acme", customer_name="Li", goal_input="a refund", role_input="CFO", plan="pro", ticket_text="x"
    )
    assert "The customer's own goal is: a refund" in system and "(who works as CFO)" in system
    assert profile.get_goal().endswith("{{ goal_input }}")  # the persona's goal is its own text


def test_code_references_are_dropped_and_settings_kept():
    """Tool names (crew methods) are reported and dropped; switches stay under metadata.crewai."""
    result = interop.load("crewai", EXAMPLES / "crewai" / "support_crew" / "config" / "agents.yaml")
    triage, billing, _ = result.personas
    assert "tools" not in triage.data
    assert any(note.kind == "code" and note.message.startswith("tools dropped") and note.line == 14
               for note in triage.notes)
    assert triage.data["metadata"]["crewai"]["max_iter"] == 8
    assert triage.data["model"] == "gpt-4o-mini" and triage.data["metadata"]["crewai"]["llm_provider"] == "openai"
    assert billing.data["metadata"]["crewai"]["function_calling_llm"] == "openai/gpt-4o-mini"
    metadata_notes = [note for note in billing.notes if note.kind == "metadata"]
    assert any("date_format" in note.message and note.line == 41 for note in metadata_notes)


def test_max_tokens_becomes_a_model_setting_and_crewai_templates_stay_metadata():
    result = interop.load("crewai", EXAMPLES / "crewai" / "content_crew")
    planner, writer, _ = result.personas
    assert writer.config.model_settings.max_tokens == 2048
    assert "{{ .System }}" in planner.data["metadata"]["crewai"]["system_template"]
    assert planner.config.create_profile().get_model() == "llama3.1:8b"


def test_check_reports_only_the_inputs_crewai_gives_at_kickoff(tmp_path):
    """CrewAI declares no sample values, so check asks for exactly the kickoff inputs, nothing else."""
    result = interop.load("crewai", EXAMPLES / "crewai" / "research_crew")
    for persona in result.personas:
        (tmp_path / f"{persona.stem}.yaml").write_text(persona.to_yaml(), encoding="utf-8")
    report = check_paths([tmp_path])
    assert report.issues and all("has no sample" in issue.message for issue in report.issues)
    assert {issue.message.split("reads input ")[1].split(" ")[0] for issue in report.issues} == {
        "'topic'", "'current_year'"
    }


def test_a_long_task_id_becomes_a_kind_a_template_file_can_be_named(tmp_path):
    """A prompt kind is at most 64 characters; a CrewAI task id has no such bound."""
    task_id = "research_" + "the_market_" * 8
    (tmp_path / "agents.yaml").write_text("writer:\n  role: Writer\n  goal: Write\n  backstory: B\n")
    (tmp_path / "tasks.yaml").write_text(f"{task_id}:\n  description: D\n  expected_output: E\n  agent: writer\n")
    (persona,) = interop.load("crewai", tmp_path).personas
    (kind,) = [kind for kind in persona.config.templates if kind not in ("system", "user")]
    assert len(kind) <= 64 and task_id.startswith(kind)
    assert persona.config.create_profile().format_prompt(kind).startswith("D")


def test_a_task_for_an_unknown_agent_is_reported(tmp_path):
    (tmp_path / "agents.yaml").write_text("writer:\n  role: Writer\n  goal: Write\n  backstory: B\n")
    (tmp_path / "tasks.yaml").write_text("t:\n  description: D\n  expected_output: E\n  agent: editor\n")
    result = interop.load("crewai", tmp_path)
    assert [persona.stem for persona in result.personas] == ["writer"]
    assert result.notes[0].line == 1 and "names agent 'editor'" in result.notes[0].message


@pytest.mark.parametrize("text,problem", [
    ("- a\n- b\n", "expected a mapping of agent id"),
    ("a: 1\n", "agent 'a' must be a mapping"),
    ("a:\n  role: [x]\n", "a.role must be text"),
])
def test_malformed_agents_name_file_and_line(tmp_path, text, problem):
    path = tmp_path / "agents.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        interop.load("crewai", path)
    assert problem in str(caught.value) and str(path) in str(caught.value)


def test_a_text_guardrail_is_kept_and_written_back(tmp_path):
    """CrewAI hands a tasks.yaml guardrail to the task as text (an LLM checks the output against it): it is
    no code, so it is kept, with guardrails and guardrail_max_retries, and exported back; a key an export
    cannot write is listed, not dropped silently."""
    from profiles.interop.exporter import write as export

    (tmp_path / "agents.yaml").write_text("writer:\n  role: Writer\n  goal: Write\n  backstory: Writes.\n",
                                          encoding="utf-8")
    (tmp_path / "tasks.yaml").write_text(
        "draft:\n  description: Draft it.\n  expected_output: A draft.\n  agent: writer\n"
        "  guardrail: Ensure the draft has a title\n  guardrail_max_retries: 2\n  mystery: 1\n"
        "review:\n  description: Review it.\n  expected_output: Notes.\n  agent: writer\n"
        "  guardrails: [Is in English, Names the author]\n  guardrail: {check: 1}\n", encoding="utf-8")
    result = interop.load("crewai", tmp_path / "agents.yaml")
    (persona,) = result.personas
    tasks = persona.config.metadata["crewai"]["tasks"]
    assert tasks["draft"]["guardrail"] == "Ensure the draft has a title"
    assert tasks["draft"]["guardrail_max_retries"] == 2
    assert tasks["review"]["guardrails"] == ["Is in English", "Names the author"] and "guardrail" not in tasks["review"]
    assert not any("draft" in note.message and note.kind == "code" for note in persona.notes)
    assert any("'review' guardrail dropped" in note.message for note in persona.notes)
    files, notes = export([persona.config], "crewai")
    written = files["tasks.yaml"]
    assert "guardrail: Ensure the draft has a title\n  guardrail_max_retries: 2\n" in written
    assert "- Is in English\n" in written and "mystery" not in written
    assert any("metadata.crewai.tasks.draft.mystery not written" in note.message for note in notes)


def test_a_personas_own_system_template_is_listed_as_left_out(tmp_path):
    """CrewAI builds the system prompt from role, goal and backstory: a persona's own system template has
    no place in agents.yaml, and the export says so instead of leaving it out silently."""
    from profiles import load_profile
    from profiles.interop.exporter import write as export

    path = tmp_path / "p.yaml"
    path.write_text("name: Ada\nrole: Clerk\ngoal: File things.\n"
                    "templates:\n  system: {inline: 'Always cite {{ name }}.'}\n", encoding="utf-8")
    files, notes = export([load_profile(path)], "crewai")
    assert "Always cite" not in files["agents.yaml"]
    assert any(note.kind == "dropped" and "system prompt's own template is not written" in note.message
               for note in notes)
    imported = interop.load("crewai", EXAMPLES / "crewai" / "support_crew").personas[0].config
    _, plain = export([imported], "crewai")
    assert not any("own template" in note.message for note in plain)


def test_a_name_the_agent_id_cannot_hold_is_kept_or_said(tmp_path):
    """CrewAI has no name: an import names the agent after its id. 墨子 has no letter a slug keeps, so it
    is the id as it is (a crew method may be called so) and comes back; a name no id can give back is
    said to be left out, instead of becoming 'Persona' without a word."""
    from profiles import load_profile
    from profiles.interop.exporter import write as export

    files, notes = export([load_profile(Path(__file__).parents[2] / "profile_configs" / "analyst_zh.yaml")],
                          "crewai")
    assert files["agents.yaml"].splitlines()[1] == "墨子:"
    assert not any("reads back" in note.message for note in notes)
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (again,) = interop.load("crewai", tmp_path / "agents.yaml").personas
    assert again.config.create_profile().get_name() == "墨子"
    path = tmp_path / "p.yaml"
    path.write_text("name: Dr. Ada Lovelace\nrole: Clerk\ngoal: File things.\n", encoding="utf-8")
    files, notes = export([load_profile(path)], "crewai")
    assert files["agents.yaml"].splitlines()[1] == "dr_ada_lovelace:"
    assert any(note.kind == "dropped" and "the name 'Dr. Ada Lovelace' is not written" in note.message
               and "reads back as 'Dr Ada Lovelace'" in note.message for note in notes)
    path.write_text("name: Iris\nrole: Clerk\ngoal: File things.\n", encoding="utf-8")
    files, notes = export([load_profile(path)], "crewai")
    assert files["agents.yaml"].splitlines()[1] == "iris:" and not any("reads back" in n.message for n in notes)


def test_an_empty_role_is_derived_from_the_agent_id(tmp_path):
    """CrewAI takes `role: ''`; a persona needs a role: it is derived from the agent id, as for an agent
    without one, instead of failing the import with 'field role is required' and no line."""
    config = tmp_path / "agents.yaml"
    config.write_text("support_agent:\n  role: ''\n  goal: Help.\n  backstory: Kind.\n", encoding="utf-8")
    (persona,) = interop.load("crewai", config).personas
    assert persona.config.create_profile().get_role() == "Support Agent"
    assert any(note.kind == "derived" and note.message.startswith("role") for note in persona.notes)


def test_two_agents_tasks_of_one_id_are_both_written(tmp_path):
    """Every `crewai create crew` scaffold names its tasks research_task and reporting_task: personas of two
    crews exported as one kept only the last agent's task of an id (the other agent lost its task without a
    word). Each is written, the second under a new id, with a note; importing the crew gives both back."""
    from profiles.interop.exporter import write as export

    researcher = interop.load("crewai", EXAMPLES / "crewai" / "research_crew").personas[0].config
    files, notes = export([researcher, researcher], "crewai")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    first, second = interop.load("crewai", tmp_path / "agents.yaml").personas
    assert list(first.config.templates) == ["research_task"] and list(second.config.templates) == ["research_task_2"]
    assert any(note.kind == "renamed" and "'research_task' is written as 'research_task_2'" in note.message
               for note in notes)
    profile, again = researcher.create_profile(), second.config.create_profile()
    values = {"topic": "AI", "current_year": "2026"}
    assert again.format_prompt("research_task_2", **values) == profile.format_prompt("research_task", **values)
