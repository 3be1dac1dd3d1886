"""format_messages: the prompts as chat messages, by the persona's layout and roles, in two shapes."""

from __future__ import annotations

import json

import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam

from profiles import ConfigError, HistoryError, ProfileConfig, RenderError, SecretError, TemplateNotFoundError
from profiles.context import Context
from profiles.loader import load_profile, parse_profiles
from tests.request_types import validate_as

HISTORY = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi, how can I help?"}]


@pytest.fixture
def ada():
    return ProfileConfig(name="Ada", role="Analyst", model="gpt-4o").create_profile()


def _valid_chat(messages):
    for message in messages:
        validate_as(ChatCompletionMessageParam, message)


def test_default_layout_is_system_history_user(ada):
    messages = ada.format_messages("What changed?", history=HISTORY)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[0]["content"] == ada.format_system_prompt("What changed?")
    assert messages[1:3] == HISTORY
    assert messages[3] == {"role": "user", "content": ada.format_user_prompt("What changed?")}
    _valid_chat(messages)


def test_a_prompt_that_renders_empty_leaves_no_message(ada):
    """Without a question the user prompt is empty: no empty user message is sent."""
    assert [m["role"] for m in ada.format_messages()] == ["system"]


def test_history_is_copied_not_shared(ada):
    history = [{"role": "user", "content": "Hello"}]
    messages = ada.format_messages("q", history=history)
    history[0]["content"] = "changed"
    assert messages[1]["content"] == "Hello"


def test_variables_reach_the_kinds_that_document_them():
    config = ProfileConfig(name="Ada", role="Analyst")
    messages = config.create_profile().format_messages("q", most_recent_memories="Budget: 2,000 EUR", now_time="noon")
    system, user = messages
    assert "Current time: noon" in system["content"]
    assert user["content"].startswith("Recent memories:\nBudget: 2,000 EUR")


def test_resources_go_to_the_system_prompt(ada):
    (system, _user) = ada.format_messages("q", resources=[{"content": "Paris is sunny.", "title": "Weather"}])
    assert "## Resources" in system["content"] and "Paris is sunny." in system["content"]


def test_retry_swaps_in_the_retry_goal():
    config = ProfileConfig(name="Ada", role="Analyst", goal="Answer.", retry_goal="Answer again, better.")
    first = config.create_profile().format_messages("q")[0]["content"]
    retry = config.create_profile().format_messages("q", is_retry_chat=True)[0]["content"]
    assert "Your goal: Answer." in first and "Your goal: Answer again, better." in retry


def test_roles_give_a_kind_its_role():
    (config,) = parse_profiles("name: Ada\nrole: Analyst\nroles: {system: developer}\n")
    messages = config.create_profile().format_messages("q")
    assert [m["role"] for m in messages] == ["developer", "user"]
    _valid_chat(messages)


def test_a_layout_of_the_personas_own_kinds():
    persona = """\
name: Ada
role: Planner
templates:
  planner: {inline: "Plan for {{ name }}: {{ task }}"}
  example_answer: {inline: "1. Book the train."}
roles: {planner: developer}
messages:
  - {role: system, kind: system}
  - {kind: planner}
  - {role: assistant, kind: example_answer}
  - {history: true}
  - {role: user, kind: user}
"""
    (config,) = parse_profiles(persona)
    messages = config.create_profile().format_messages("Go", task="a trip", history=HISTORY)
    assert [m["role"] for m in messages] == ["system", "developer", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"] == "Plan for Ada: a trip"
    assert messages[2]["content"] == "1. Book the train."
    _valid_chat(messages)


def test_history_needs_a_slot():
    (config,) = parse_profiles("name: Ada\nrole: Analyst\nmessages:\n  - {role: system, kind: system}\n")
    profile = config.create_profile()
    assert len(profile.format_messages("q")) == 1
    with pytest.raises(HistoryError, match=r"no \{history: true\} slot"):
        profile.format_messages("q", history=HISTORY)


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("[{history: true}, {history: true}]", "only one {history: true} slot"),
        ("[{role: tool, kind: user}]", "role must be one of system, developer, user, assistant"),
        ("[{role: user}]", "needs the prompt kind"),
        ("[{kind: user, colour: red}]", "unknown key(s) colour"),
        ("[{history: false}]", "written {history: true}"),
        ("[]", "the layout is empty"),
        ("system", "expected a list of messages"),
    ],
)
def test_bad_layouts_are_refused_at_their_line(layout, expected):
    with pytest.raises(ConfigError) as caught:
        parse_profiles(f"name: Ada\nrole: Analyst\nmessages: {layout}\n", file="ada.yaml")
    (issue,) = caught.value.issues
    assert expected in issue.message and issue.line == 3 and issue.field.startswith("messages")


def test_bad_roles_are_refused():
    with pytest.raises(ConfigError, match="role of 'planner' must be one of"):
        ProfileConfig(name="Ada", role="Analyst", roles={"planner": "boss"})


def test_an_unknown_kind_in_the_layout_is_refused_when_it_renders():
    config = ProfileConfig(name="Ada", role="Analyst", messages=[{"kind": "nope"}])
    with pytest.raises(TemplateNotFoundError, match="unknown prompt kind 'nope'"):
        config.create_profile().format_messages("q")


# the Anthropic shape ------------------------------------------------------------------------------


def test_anthropic_style_has_system_apart(ada):
    shaped = ada.format_messages("What changed?", history=HISTORY, style="anthropic")
    assert set(shaped) == {"system", "messages"}
    assert shaped["system"] == ada.format_system_prompt("What changed?")
    assert [m["role"] for m in shaped["messages"]] == ["user", "assistant", "user"]
    for message in shaped["messages"]:
        validate_as(MessageParam, message)


def test_anthropic_style_needs_a_user_first(ada):
    with pytest.raises(HistoryError, match="first message must be the user's"):
        ada.format_messages("q", history=[{"role": "assistant", "content": "Hello!"}], style="anthropic")
    # the same history is fine for OpenAI
    assert ada.format_messages("q", history=[{"role": "assistant", "content": "Hello!"}])[1]["role"] == "assistant"


def test_anthropic_history_rules_apply_in_its_style(ada):
    with pytest.raises(HistoryError, match="Anthropic refuses empty text"):
        ada.format_messages("q", history=[{"role": "user", "content": " "}], style="anthropic")


def test_unknown_style_is_refused(ada):
    with pytest.raises(RenderError, match="unknown style 'gemini'"):
        ada.format_messages("q", style="gemini")


def test_write_memory_has_a_messages_form():
    config = ProfileConfig(name="Ada", role="Analyst")
    profile = config.create_profile()
    (message,) = profile.format_write_memory_messages("q", "think", "search", "found it")
    prompt = profile.format_write_memory_prompt("q", "think", "search", "found it")
    assert message == {"role": "user", "content": prompt}
    shaped = profile.format_write_memory_messages("q", "think", style="anthropic")
    assert shaped["system"] is None and shaped["messages"][0]["role"] == "user"
    own = ProfileConfig(name="Ada", role="Analyst", roles={"write_memory": "assistant"}).create_profile()
    assert own.format_write_memory_messages("q")[0]["role"] == "assistant"


# strict mode, secrets, context --------------------------------------------------------------------


def test_strict_refuses_a_variable_no_prompt_uses(configs):
    planner = load_profile(configs / "planner.yaml").create_profile()
    assert planner.format_messages("Plan", agents="A, B", strict=True)
    with pytest.raises(RenderError, match="uses variable\\(s\\) colour"):
        planner.format_messages("Plan", agents="A, B", colour="red", strict=True)


def test_a_secret_in_the_history_is_refused(monkeypatch):
    monkeypatch.setenv("TEAM_API_KEY", "sk-live-abcdef123456")
    config = ProfileConfig(name="Ada", role="Analyst", avatar={"key": "TEAM_API_KEY", "default": "x"})
    profile = config.create_profile()
    leaked = [{"role": "user", "content": "my key is sk-live-abcdef123456"}]
    with pytest.raises(SecretError) as caught:
        profile.format_messages("q", history=leaked)
    assert "'avatar'" in str(caught.value) and "appears in the messages" in str(caught.value)
    assert "sk-live" not in str(caught.value)
    allowed = ProfileConfig(
        name="Ada", role="Analyst", avatar={"key": "TEAM_API_KEY", "default": "x"}, allow_secrets=["avatar"]
    ).create_profile()
    assert allowed.format_messages("q", history=leaked)[1] == leaked[0]


def test_a_secret_passed_as_a_variable_is_refused_in_messages(monkeypatch):
    monkeypatch.setenv("TEAM_API_KEY", "sk-live-abcdef123456")
    config = ProfileConfig(name="Ada", role="Analyst", avatar={"key": "TEAM_API_KEY", "default": "x"},
                           templates={"user": {"inline": "{{ question }} {{ note }}"}})
    profile = config.create_profile()
    assert profile.format_messages("q", note="fine")[-1]["content"] == "q fine"
    with pytest.raises(SecretError, match="the value of 'avatar'"):
        profile.format_messages("q", note="sk-live-abcdef123456")


def test_a_secret_variable_is_kept_out_of_messages(monkeypatch):
    """A dynamic `variables:` entry read from a credential-like key is a secret there too."""
    monkeypatch.setenv("CRM_API_KEY", "crm-key-987654")
    config = ProfileConfig(name="Ada", role="Analyst", variables={"crm": {"key": "CRM_API_KEY", "default": "x"}})
    profile = config.create_profile()
    leaked = [{"role": "user", "content": "use crm-key-987654"}]
    with pytest.raises(SecretError) as caught:
        profile.format_messages("q", history=leaked)
    assert "'variables.crm'" in str(caught.value) and "crm-key" not in str(caught.value)
    assert "allow_secrets" not in str(caught.value)  # a variable cannot be let out
    replaced = profile.partial(crm="public")  # a value of the caller's own is no secret
    assert replaced.format_messages("q", history=[{"role": "user", "content": "crm-key-987654"}])


def test_a_secret_field_never_reaches_a_message(monkeypatch):
    monkeypatch.setenv("AGENT_TOKEN", "tok-123456")
    config = ProfileConfig(name={"key": "AGENT_TOKEN", "default": "Ada"}, role="Analyst")
    with pytest.raises(SecretError):
        config.create_profile().format_messages("q")


def test_the_profile_records_what_it_was_made_for():
    (config,) = parse_profiles("name: Ada\nrole: Analyst\nmodel: gpt-4o\ndeployments:\n  prod:\n")
    profile = config.create_profile(deployment="prod", language="fr")
    assert profile.context == Context(language="fr", model="gpt-4o", deployment="prod")
    assert profile.get_deployment() == "prod"
    assert config.create_profile().get_deployment() is None


def test_a_secret_passed_to_the_write_memory_messages_is_refused(monkeypatch):
    """format_messages refused a secret in the caller's values; the write-memory messages let it through."""
    monkeypatch.setenv("CRM_API_KEY", "crm-key-987654")
    config = ProfileConfig(name="Ada", role="Analyst", variables={"crm": {"key": "CRM_API_KEY", "default": "x"}})
    profile = config.create_profile()
    assert profile.format_write_memory_messages("q", "thought", "act", "seen")[0]["role"] == "user"
    with pytest.raises(SecretError, match="the value of 'variables.crm'") as caught:
        profile.format_write_memory_messages("q", "I will use crm-key-987654", "act", "seen", style="anthropic")
    assert "987654" not in str(caught.value)


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic"])
@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_a_secret_escaped_in_tool_call_arguments_is_refused(monkeypatch, api, ensure_ascii):
    """Arguments are JSON text: a secret holding a quote, a backslash or a non-ASCII letter is written escaped
    there, and the model reads it decoded."""
    secret = 'pa"ss\\wörd-42'
    monkeypatch.setenv("CRM_PASSWORD", secret)
    config = ProfileConfig(
        name="Ada", role="Analyst", model="gpt-4o", variables={"crm": {"key": "CRM_PASSWORD", "default": "x"}}
    )
    arguments = json.dumps({"password": secret}, ensure_ascii=ensure_ascii)
    assert secret not in arguments
    call = {"id": "call_1", "type": "function", "function": {"name": "log_in", "arguments": arguments}}
    history = [
        {"role": "user", "content": "Log in."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "done"},
    ]
    with pytest.raises(SecretError, match="the value of 'variables.crm'"):
        config.create_profile().to_request("q", api=api, history=history)
