"""Exported CrewAI files load in CrewAI and run a crew turn against the local server.

CrewAI needs openai below 3 and an OpenTelemetry that google-adk refuses, so it cannot share the
test extra: these tests run in an environment of their own (`.ci/crewai.sh`: `pip install -e .
crewai pytest`, `pytest -m crewai`) and are left out of the main run. CrewAI's telemetry is off
(tests/conftest.py sets CREWAI_DISABLE_TELEMETRY, this module OTEL_SDK_DISABLED, before it is imported).
"""

from __future__ import annotations

import pytest
import yaml

from profiles import interop, load_profile

from .conftest import EXAMPLES

pytestmark = pytest.mark.crewai



@pytest.fixture(autouse=True)
def _quiet_crewai(monkeypatch):
    """CrewAI's OpenTelemetry exporter reads this when crewai is imported, which only these tests do."""
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")


def _crew(files, server, inputs):
    from crewai import LLM, Agent, Crew, Process, Task

    agents_config = yaml.safe_load(files["agents.yaml"])  # files this project wrote
    tasks_config = yaml.safe_load(files["tasks.yaml"])
    llm = LLM(model="openai/gpt-4o-mini", base_url=server.url, api_key="sk-local")
    agents = {name: Agent(config={**spec, "llm": llm}) for name, spec in agents_config.items()}
    tasks = [Task(config={key: value for key, value in spec.items() if key not in ("agent", "context")},
                  agent=agents[spec["agent"]]) for spec in tasks_config.values()]
    return Crew(agents=list(agents.values()), tasks=tasks, process=Process.sequential).kickoff(inputs=inputs)


def test_an_imported_crew_exports_back_and_runs(chat_server, tmp_path):
    """research_crew: import, export, and CrewAI interpolates the same {topic} into the same texts."""
    result = interop.load("crewai", EXAMPLES / "crewai" / "research_crew")
    files = interop.export([persona.config for persona in result.personas], "crewai")
    chat_server.script("Final Answer: ten bullet points", "Final Answer: a report")
    output = _crew(files, chat_server, {"topic": "AI agents", "current_year": "2025"})
    assert output.raw == "a report"
    first = chat_server.requests[0]["messages"]
    assert first[0]["content"].startswith("You are AI agents Senior Data Researcher.")
    assert "Uncover cutting-edge developments in AI agents" in first[0]["content"]
    assert "the current year is 2025." in first[1]["content"]


def test_a_bundled_persona_runs_as_a_crewai_agent(chat_server, configs):
    files = interop.export([load_profile(configs / "planner.yaml")], "crewai")
    chat_server.script("Final Answer: 1. Book flights.")
    output = _crew(files, chat_server, {"question": "Plan a trip to Lisbon", "agents": "Searcher, Booker"})
    assert output.raw == "1. Book flights."
    (body,) = chat_server.requests
    system = body["messages"][0]["content"]
    assert "You are Planner." in system and "The agents you can assign steps to are: Searcher, Booker." in system
    assert "Keep the plan to at most 8 steps." in system  # the variable's default, written in
    assert "Question: Plan a trip to Lisbon" in body["messages"][1]["content"]


def test_every_example_crew_builds_in_crewai():
    from crewai import Agent, Task

    for folder in ("research_crew", "support_crew", "content_crew"):
        result = interop.load("crewai", EXAMPLES / "crewai" / folder)
        files = interop.export([persona.config for persona in result.personas], "crewai")
        agents = {name: Agent(config=spec) for name, spec in yaml.safe_load(files["agents.yaml"]).items()}
        for spec in yaml.safe_load(files["tasks.yaml"]).values():
            task = Task(config={key: value for key, value in spec.items() if key not in ("agent", "context")},
                        agent=agents[spec["agent"]])
            assert task.description and task.expected_output
