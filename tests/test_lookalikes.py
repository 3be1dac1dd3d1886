"""Another tool's file, or a sampling plan, in a folder of personas is named for what it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiles import ConfigError, parse_profiles
from profiles.lookalikes import lookalike
from profiles.safe_yaml import read_documents, read_text

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CASES = [
    ("interop/agentspec/planner_agent.yaml", "an Agent Spec component", "profiles import agentspec"),
    ("interop/google_adk/support_desk/root_agent.yaml", "a Google ADK agent config", "profiles import adk"),
    ("interop/semantic_kernel/agents/summarizer_agent.yaml", "a Semantic Kernel agent", "semantic-kernel"),
    ("interop/semantic_kernel/agents/story_agent_template.yaml", "a Semantic Kernel agent", "semantic-kernel"),
    ("interop/semantic_kernel/prompts/summarize.yaml", "a Semantic Kernel prompt", "semantic-kernel"),
    ("interop/crewai/research_crew/config/agents.yaml", "a CrewAI agents.yaml", "profiles import crewai"),
    ("interop/crewai/research_crew/config/tasks.yaml", "a CrewAI tasks.yaml", "profiles import crewai"),
    ("generate/plan.yaml", "a sampling plan", "profiles generate --plan"),
]


@pytest.mark.parametrize(("relative", "what", "command"), CASES)
def test_bundled_files_of_other_kinds_get_one_line_saying_what_they_are(relative, what, command):
    path = EXAMPLES / relative
    with pytest.raises(ConfigError) as caught:
        parse_profiles(read_text(path), file=str(path), base_dir=path.parent)
    (issue,) = caught.value.issues
    assert what in issue.message and command in issue.message and (issue.line, issue.column) == (1, 1)
    if "tasks" not in relative:  # a tasks.yaml points at the agents.yaml beside it instead
        assert str(path) in issue.message


def test_every_bundled_persona_is_left_alone():
    for path in sorted((EXAMPLES.parent / "profile_configs").rglob("*.yaml")):
        documents, _, _ = read_documents(read_text(path), str(path))
        for document in documents:
            if isinstance(document, dict):
                assert lookalike(document, str(path)) is None, path


def test_a_persona_with_a_typo_keeps_its_field_errors():
    # `role:` present: a persona, however many other keys look like another tool's
    text = "name: Ada\nrole: Planner\ncomponent_type: Agent\ninstruction: plan\nmodel: gpt-4o\n"
    with pytest.raises(ConfigError) as caught:
        parse_profiles(text, file="ada.yaml")
    messages = [str(issue) for issue in caught.value.issues]
    assert any("component_type" in message for message in messages)
    assert not any("not a persona" in message for message in messages)


def test_a_persona_missing_its_role_is_not_taken_for_a_plan():
    with pytest.raises(ConfigError) as caught:
        parse_profiles("name: Ada\ngoal: plan trips\n", file="ada.yaml")
    assert any("'role'" in str(issue) for issue in caught.value.issues)
    assert not any("not a persona" in str(issue) for issue in caught.value.issues)
