"""OpenAI Agents SDK: an agents.Agent from a persona runs turns against the local server, Chat and Responses."""

from __future__ import annotations

import json

import pytest
from agents import (
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    function_tool,
)
from openai import AsyncOpenAI

from profiles import load_profile, parse_profiles
from profiles.adapters.openai_agents import to_agent, to_input
from profiles.errors import SecretError
from tests.llm_server import FROM_SCHEMA, ToolCall

RUN = RunConfig(tracing_disabled=True)


def _client(server) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=server.url, api_key="sk-local", max_retries=0, timeout=10)


def test_agent_with_output_schema_over_chat_completions(chat_server, configs):
    """The triage persona: instructions, settings, and a final output checked against its schema."""
    persona = configs / "triage.yaml"
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=_client(chat_server))
    agent = to_agent(persona, model=model)
    assert isinstance(agent, Agent)
    profile = load_profile(persona).create_profile()
    assert agent.instructions == profile.format_system_prompt() and agent.name == "Iris"
    assert agent.model_settings == ModelSettings(temperature=0.2, max_tokens=400, extra_args={"seed": 7})
    chat_server.script(FROM_SCHEMA)
    result = Runner.run_sync(agent, to_input(agent, ticket="I was charged twice."), run_config=RUN)
    assert result.final_output == profile.parse_reply(json.dumps(result.final_output))
    (body,) = chat_server.requests
    assert body["messages"][0] == {"role": "system", "content": profile.format_system_prompt()}
    assert body["messages"][1]["content"] == profile.format_user_prompt(ticket="I was charged twice.")
    assert body["response_format"]["json_schema"]["schema"] == profile.output_schema.as_dict()
    assert body["temperature"] == 0.2 and body["max_tokens"] == 400 and body["seed"] == 7
    assert agent.provenance["persona_file"].endswith("triage.yaml") and agent.provenance["deployment"] is None


def test_a_reply_the_schema_refuses_is_a_model_error(chat_server, configs):
    from agents.exceptions import ModelBehaviorError

    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=_client(chat_server))
    agent = to_agent(configs / "triage.yaml", model=model)
    chat_server.script('{"category": 7}')
    with pytest.raises(ModelBehaviorError) as caught:
        Runner.run_sync(agent, to_input(agent, ticket="x"), run_config=RUN)
    assert "category" in str(caught.value)


def test_caller_tools_and_the_responses_api(chat_server, configs):
    """A function tool the caller gives is called; the second request sends its output back."""

    @function_tool
    def lookup(city: str) -> str:
        """Look up the weather in a city."""
        return f"sunny in {city}"

    model = OpenAIResponsesModel(model="gpt-4o", openai_client=_client(chat_server))
    agent = to_agent(configs / "planner.yaml", model=model, tools=[lookup], agents="Searcher, Booker")
    assert "Searcher, Booker" in agent.instructions
    chat_server.script(ToolCall("lookup", {"city": "Lisbon"}), "Pack sunglasses.")
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    result = Runner.run_sync(agent, to_input(agent, "Plan a trip to Lisbon", history=history), run_config=RUN)
    assert result.final_output == "Pack sunglasses."
    first, second = chat_server.requests
    assert chat_server.paths == ["/v1/responses", "/v1/responses"]
    assert first["instructions"] == agent.instructions
    assert [item.get("role") for item in first["input"]] == ["user", "assistant", "user"]
    assert first["input"][-1]["content"] == "Question: Plan a trip to Lisbon"
    assert first["tools"][0]["name"] == "lookup"
    assert any(item.get("type") == "function_call_output" and item["output"] == "sunny in Lisbon"
               for item in second["input"])


def test_a_deployment_and_secrets(monkeypatch, configs):
    agent = to_agent(configs / "summarizer.yaml", model="gpt-4o", deployment="staging")
    assert agent.name == "Socrates" and agent.provenance["deployment"] == "staging"
    persona, = parse_profiles("name: {key: AGENT_TOKEN, default: x, secret: true}\nrole: B\n")
    with pytest.raises(SecretError) as caught:
        to_agent(persona, model="gpt-4o")
    assert "name" in str(caught.value)


def test_an_output_schema_with_strict_false_is_sent_without_strict_mode(chat_server, write):
    """strict: false in the persona is what the request says, though the schema would fit strict mode."""
    path = write("p.yaml", "name: Ada\nrole: Clerk\nmodel: gpt-4o-mini\noutput_schema:\n  strict: false\n  schema:\n"
                 "    type: object\n    properties: {answer: {type: string}}\n    required: [answer]\n"
                 "    additionalProperties: false\n")
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=_client(chat_server))
    agent = to_agent(path, model=model)
    chat_server.script('{"answer": "yes"}')
    assert Runner.run_sync(agent, to_input(agent, "Is it?"), run_config=RUN).final_output == {"answer": "yes"}
    (body,) = chat_server.requests
    assert body["response_format"]["json_schema"]["strict"] is False
    assert load_profile(path).create_profile().to_request("Is it?")["response_format"][
        "json_schema"]["strict"] is False


def test_agent_fields_given_win_over_the_personas(chat_server, configs, monkeypatch):
    """name, instructions and model_settings given to to_agent are the Agent's, not a TypeError; a secret
    name the persona keeps in says to pass name=…, and passing it works."""
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=_client(chat_server))
    agent = to_agent(configs / "triage.yaml", model=model, name="Bot", instructions="Be brief.",
                     model_settings=ModelSettings(temperature=1.0))
    assert agent.name == "Bot" and agent.model_settings == ModelSettings(temperature=1.0)
    chat_server.script(FROM_SCHEMA)
    Runner.run_sync(agent, to_input(agent, ticket="I was charged twice."), run_config=RUN)
    (body,) = chat_server.requests
    assert body["messages"][0] == {"role": "system", "content": "Be brief."} and body["temperature"] == 1.0
    monkeypatch.setenv("AGENT_TOKEN", "tok-agent-name-1")
    persona, = parse_profiles("name: {key: AGENT_TOKEN, default: x}\nrole: B\nallow_secrets: [name]\n")
    (hidden,) = parse_profiles("name: {key: AGENT_TOKEN, default: x}\nrole: B\ntemplates: {system: {inline: Hi}}\n")
    with pytest.raises(SecretError) as caught:
        to_agent(hidden, model="gpt-4o")
    assert "pass name=… for the agent's name" in str(caught.value) and "tok-agent-name-1" not in str(caught.value)
    assert to_agent(hidden, model="gpt-4o", name="Bot").name == "Bot"
    assert to_agent(persona, model="gpt-4o").name == "tok-agent-name-1"  # allowed out


def test_a_turns_input_does_not_render_the_instructions(chat_server, monkeypatch):
    """to_input leaves the system prompt to the agent's instructions and never renders it: an agent given
    instructions of its own in place of a secret the persona keeps in runs its turns."""
    monkeypatch.setenv("AGENT_TOKEN", "tok-agent-name-2")
    (hidden,) = parse_profiles("name: {key: AGENT_TOKEN, default: x}\nrole: B\n")
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=_client(chat_server))
    agent = to_agent(hidden, model=model, name="Bot", instructions="Be brief.")
    items = to_input(agent, "Is it?")
    assert items == [{"role": "user", "content": "Question: Is it?"}]
    chat_server.script("Yes.")
    assert Runner.run_sync(agent, items, run_config=RUN).final_output == "Yes."
    (body,) = chat_server.requests
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert "tok-agent-name-2" not in json.dumps(body)


def test_a_system_prompt_after_the_history_is_sent_once_in_its_place(chat_server, tmp_path):
    """A persona laid out with few-shot turns and a reminder after the history: the agent's instructions are
    the system prompt that opens the layout, and the request the SDK sends is the persona's own messages,
    in order, the reminder once (it was in the instructions and again in the input)."""
    path = tmp_path / "tutor.yaml"
    path.write_text(
        "name: Ada\nrole: Tutor\nmodel: gpt-4o-mini\ntemplates:\n  reminder: {inline: 'Remember: one line.'}\n"
        "  example_question: {inline: 'What is 2 + 2?'}\n  example_answer: {inline: '2 + 2 is 4.'}\n"
        "messages:\n  - {role: system, kind: system}\n  - {role: user, kind: example_question}\n"
        "  - {role: assistant, kind: example_answer}\n  - {history: true}\n  - {role: system, kind: reminder}\n"
        "  - {role: user, kind: user}\n", encoding="utf-8")
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=_client(chat_server))
    agent = to_agent(path, model=model)
    profile = load_profile(path).create_profile()
    assert agent.instructions == profile.format_system_prompt()
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    chat_server.script("One line.")
    Runner.run_sync(agent, to_input(agent, "Why?", history=history), run_config=RUN)
    (body,) = chat_server.requests
    assert body["messages"] == profile.format_messages("Why?", history=history)
