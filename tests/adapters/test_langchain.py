"""LangChain: the persona as a ChatPromptTemplate and as BaseMessages, through ChatOpenAI to the local server."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_openai import ChatOpenAI

from profiles import load_profile, parse_profiles
from profiles.adapters.langchain import chat_model_kwargs, to_chat_prompt, to_messages
from profiles.errors import AdapterError, SecretError


def _model(server, persona) -> ChatOpenAI:
    return ChatOpenAI(**chat_model_kwargs(persona), base_url=server.url, api_key="sk-local", max_retries=0,
                      timeout=10)


def test_chat_prompt_runs_a_turn_through_chat_openai(chat_server, configs):
    """The triage persona's template: its system prompt as a message, its user prompt with {ticket} and {tier}."""
    persona = configs / "triage.yaml"
    prompt = to_chat_prompt(persona)
    assert isinstance(prompt, ChatPromptTemplate)
    assert set(prompt.input_variables) == {"ticket"} and "history" in prompt.optional_variables
    assert isinstance(prompt.messages[0], SystemMessage) and isinstance(prompt.messages[1], MessagesPlaceholder)
    chat_server.script("category: billing")
    history = [HumanMessage("Hello"), AIMessage("Hi, how can I help?")]
    reply = (prompt | _model(chat_server, persona)).invoke({"ticket": "I was charged twice {sic}.", "history": history})
    assert reply.content == "category: billing"
    (body,) = chat_server.requests
    profile = load_profile(persona).create_profile()
    expected = profile.format_messages(history=[{"role": "user", "content": "Hello"},
                                                {"role": "assistant", "content": "Hi, how can I help?"}],
                                       ticket="I was charged twice {sic}.")
    assert body["messages"] == expected
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0.2 and body["seed"] == 7
    assert body["max_completion_tokens"] == 400
    assert prompt.metadata["agent_profiles"]["persona_file"].endswith("profile_configs/triage.yaml")
    assert prompt.metadata["agent_profiles"]["sources"]["role"].endswith("triage.yaml:5")


def test_literal_braces_in_rendered_text_stay_braces(chat_server, configs):
    """The summarizer's text is rendered once; its examples' braces are never taken for variables."""
    persona, _ = parse_profiles(
        "name: Ada\nrole: Clerk\nconstraints: ['Reply as JSON like {% raw %}{\"answer\": \"...\"}{% endraw %}']\n"
        "templates: {user: {inline: 'Q: {{ question }} {% raw %}{keep}{% endraw %}'}}\n---\nname: B\nrole: C\n"
    )
    prompt = to_chat_prompt(persona)
    assert prompt.input_variables == ["question"]
    messages = prompt.invoke({"question": "What {now}?"}).to_messages()
    assert 'Reply as JSON like {"answer": "..."}' in messages[0].content
    assert messages[1].content == "Q: What {now}? {keep}"


def test_messages_for_one_turn(chat_server, configs):
    """to_messages gives BaseMessages with the provenance; a deployment changes the name."""
    messages = to_messages(configs / "summarizer.yaml", "What changed?", deployment="staging")
    assert [type(message).__name__ for message in messages] == ["SystemMessage", "HumanMessage"]
    assert messages[0].content.startswith("You are Socrates.")
    assert messages.provenance.deployment == "staging"
    assert messages.provenance.sources["name"].startswith("overlay staging:")
    chat_server.script("The budget passed.")
    reply = _model(chat_server, configs / "summarizer.yaml").invoke(messages)
    assert reply.content == "The budget passed."
    assert chat_server.requests[0]["messages"][1] == {"role": "user", "content": "Question: What changed?"}


def test_values_given_now_are_rendered_in_and_filters_need_them(configs):
    prompt = to_chat_prompt(configs / "planner.yaml", agents="Searcher, Coder")
    assert prompt.input_variables == ["question"]
    assert "Searcher, Coder" in prompt.messages[0].content
    persona, = parse_profiles("name: A\nrole: B\ninputs: {topic: string}\ngoal: 'Study {{ topic | upper }}'\n")
    with pytest.raises(AdapterError) as caught:
        to_chat_prompt(persona)
    assert "'topic' through the filter 'upper'" in str(caught.value)
    assert "TOPIC" in to_chat_prompt(persona, topic="topic").messages[0].content


def test_secrets_are_not_copied(monkeypatch):
    """A secret not allowed into prompts stays a variable of the template; never its value."""
    monkeypatch.setenv("DESK_TOKEN", "tok-12345")
    persona, = parse_profiles("name: A\nrole: B\nexpand_prompt: {key: DESK_TOKEN}\n")
    prompt = to_chat_prompt(persona)
    assert "tok-12345" not in str(prompt) and "expand_prompt" in prompt.input_variables
    secret_model, = parse_profiles("name: A\nrole: B\nmodel: {key: MODEL_TOKEN, default: x, secret: true}\n")
    with pytest.raises(SecretError):
        chat_model_kwargs(secret_model)


def test_metadata_an_import_kept_reaches_the_framework_object():
    """Fields with no persona equivalent (CrewAI's max_iter, say) travel with the prompt's provenance."""
    from profiles import interop
    from tests.interop.conftest import EXAMPLES

    triage = interop.load("crewai", EXAMPLES / "crewai" / "support_crew").personas[0]
    prompt = to_chat_prompt(triage.config, company="Acme", customer_name="Li", goal_input="a refund",
                            role_input="CFO")
    assert prompt.metadata["agent_profiles"]["metadata"]["crewai"]["max_iter"] == 8
    assert prompt.metadata["agent_profiles"]["sources"]["role"].startswith("yaml:")


def test_values_given_when_building_are_checked_against_inputs(configs):
    from profiles.errors import InputError

    with pytest.raises(InputError) as caught:
        to_chat_prompt(configs / "triage.yaml", tier="platinum")
    assert "'tier'" in str(caught.value) and "'free', 'pro', 'enterprise'" in str(caught.value)
    prompt = to_chat_prompt(configs / "triage.yaml", tier="pro")
    assert "Customer plan: pro" in prompt.invoke({"ticket": "x"}).to_messages()[-1].content


def test_a_secret_field_a_template_tests_can_be_given_a_value_of_its_own(monkeypatch):
    """The bundled system template tests `goal`, so a secret goal cannot stay an invoke variable; the
    error says to pass goal=…, and doing so renders that value in, never the secret."""
    monkeypatch.setenv("SUPPORT_GOAL_TOKEN", "tok-secret-goal-789")
    (config,) = parse_profiles("name: Ada\nrole: Clerk\ngoal: {key: SUPPORT_GOAL_TOKEN, default: Help}\n")
    with pytest.raises(AdapterError) as caught:
        to_chat_prompt(config)
    assert "pass goal=… to to_chat_prompt" in str(caught.value)
    prompt = to_chat_prompt(config, goal="Answer billing questions")
    assert prompt.input_variables == ["question"]
    system = prompt.invoke({"question": "Hi"}).to_messages()[0]
    assert "Your goal: Answer billing questions." in system.content
    assert "tok-secret-goal-789" not in repr(prompt)
