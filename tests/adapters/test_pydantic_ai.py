"""Pydantic AI: a pydantic_ai.Agent from a persona runs turns against the local server, through its real model."""

from __future__ import annotations

import json

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from profiles import load_profile
from profiles.adapters.pydantic_ai import to_agent, user_prompt
from profiles.errors import AdapterError
from tests.llm_server import FROM_SCHEMA, ToolCall


def _model(server) -> OpenAIChatModel:
    return OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=server.url, api_key="sk-local"))


def test_output_tool_turn_with_settings(chat_server, configs):
    """The default output mode: Pydantic AI's final_result tool carries the persona's schema."""
    persona = configs / "triage.yaml"
    agent = to_agent(persona, _model(chat_server))
    assert isinstance(agent, Agent) and agent.name == "Iris"
    triaged = {"category": "billing", "urgency": 4, "labels": ["refund"], "summary": "Charged twice for March."}
    chat_server.script(ToolCall("final_result", triaged))
    result = agent.run_sync(user_prompt(agent, ticket="I was charged twice."))
    assert result.output == triaged
    (body,) = chat_server.requests
    profile = load_profile(persona).create_profile()
    assert body["messages"][0] == {"role": "system", "content": profile.format_system_prompt()}
    assert body["messages"][1]["content"] == profile.format_user_prompt(ticket="I was charged twice.")
    (tool,) = body["tools"]
    assert tool["function"]["name"] == "final_result" and body["tool_choice"] == "required"
    assert tool["function"]["parameters"]["properties"] == profile.output_schema.as_dict()["properties"]
    assert body["temperature"] == 0.2 and body["max_completion_tokens"] == 400 and body["seed"] == 7
    assert agent.provenance["persona_file"].endswith("triage.yaml")


def test_native_output_and_a_refused_output_retried(chat_server, configs):
    """Native structured output; an output the schema refuses goes back to the model once, then passes."""
    agent = to_agent(configs / "triage.yaml", _model(chat_server), output_mode="native")
    chat_server.script('{"category": "weather", "urgency": 9, "labels": [], "summary": "s"}', FROM_SCHEMA)
    result = agent.run_sync(user_prompt(agent, ticket="x"))
    first, second = chat_server.requests
    assert first["response_format"]["type"] == "json_schema"
    assert "weather" in second["messages"][-1]["content"]  # the correction parse_reply wrote, sent back
    profile = load_profile(configs / "triage.yaml").create_profile()
    assert profile.parse_reply(json.dumps(result.output)) == result.output


def test_plain_text_persona_and_variables(chat_server, configs):
    agent = to_agent(configs / "planner.yaml", _model(chat_server), agents="Searcher, Booker")
    chat_server.script("1. Book flights.")
    assert agent.run_sync(user_prompt(agent, "Plan a trip")).output == "1. Book flights."
    body = chat_server.requests[0]
    assert "Searcher, Booker" in body["messages"][0]["content"] and "tools" not in body
    with pytest.raises(AdapterError):
        to_agent(configs / "planner.yaml", agents="x")  # names no model


def test_native_output_keeps_strict_false(chat_server, write):
    """strict: false in the persona is what the native structured output says, though the schema would fit."""
    path = write("p.yaml", "name: Ada\nrole: Clerk\nmodel: gpt-4o-mini\noutput_schema:\n  strict: false\n  schema:\n"
                 "    type: object\n    properties: {answer: {type: string}}\n    required: [answer]\n"
                 "    additionalProperties: false\n")
    agent = to_agent(path, _model(chat_server), output_mode="native")
    chat_server.script('{"answer": "yes"}')
    assert agent.run_sync(user_prompt(agent, "Is it?")).output == {"answer": "yes"}
    (body,) = chat_server.requests
    assert body["response_format"]["json_schema"]["strict"] is False


def test_agent_arguments_given_win_over_the_personas(chat_server, configs):
    """name, instructions and model_settings given to to_agent are the Agent's, not a TypeError."""
    agent = to_agent(configs / "triage.yaml", _model(chat_server), name="Bot", instructions="Be brief.",
                     model_settings={"temperature": 1.0})
    assert agent.name == "Bot"
    triaged = {"category": "billing", "urgency": 4, "labels": [], "summary": "s"}
    chat_server.script(ToolCall("final_result", triaged))
    assert agent.run_sync(user_prompt(agent, ticket="x")).output == triaged
    (body,) = chat_server.requests
    assert body["messages"][0] == {"role": "system", "content": "Be brief."} and body["temperature"] == 1.0


def test_few_shot_turns_and_history_reach_the_model_in_the_layouts_order(chat_server, tmp_path):
    """A persona's own few-shot turns were lost: Pydantic AI took only the instructions and the user prompt.
    message_history gives the turns between them, history (tool calls too) in its slot, and the request the
    model gets is the persona's own messages."""
    from profiles.adapters.pydantic_ai import message_history

    path = tmp_path / "tutor.yaml"
    path.write_text(
        "name: Ada\nrole: Tutor\nmodel: gpt-4o-mini\ntemplates:\n"
        "  example_question: {inline: 'What is 2 + 2?'}\n  example_answer: {inline: '2 + 2 is 4.'}\n"
        "messages:\n  - {role: system, kind: system}\n  - {role: user, kind: example_question}\n"
        "  - {role: assistant, kind: example_answer}\n  - {history: true}\n  - {role: user, kind: user}\n",
        encoding="utf-8")
    agent = to_agent(path, _model(chat_server))
    history = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "look", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "rain"},
        {"role": "assistant", "content": "It rains."},
    ]
    chat_server.script("Because.")
    result = agent.run_sync(user_prompt(agent, "Why?"), message_history=message_history(agent, "Why?", history=history))
    assert result.output == "Because."
    (body,) = chat_server.requests
    ours = load_profile(path).create_profile().format_messages("Why?", history=history)
    sent = [{key: value for key, value in message.items() if value is not None} for message in body["messages"]]
    assert [(m["role"], m.get("content")) for m in sent] == [(m["role"], m["content"]) for m in ours]
    (call,) = sent[4]["tool_calls"]
    assert call["function"]["name"] == "look" and json.loads(call["function"]["arguments"]) == {"city": "Oslo"}
    assert sent[5]["tool_call_id"] == "call_1"
