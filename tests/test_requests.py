"""to_request: whole bodies for three APIs, checked against the official clients' types and sent through them.

Each body goes through `openai.OpenAI(...).chat.completions.create`, `.responses.create` or
`anthropic.Anthropic(...).messages.create` to the scripted server on 127.0.0.1, which records
what arrives; the clients validate its replies against their own response models.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from profiles import (
    ConfigError,
    ProfileConfig,
    RenderError,
    RequestError,
    SecretError,
    UnknownModelWarning,
    load_profile,
)
from profiles.settings import ANTHROPIC_DEFAULT_MAX_TOKENS, SETTINGS
from tests.llm_server import FROM_SCHEMA, ChatServer, ToolCall
from tests.request_types import API_KEY, BodyError, send, validate_request

APIS = ("openai-chat", "openai-responses", "anthropic")
REPO = Path(__file__).resolve().parent.parent
CLIENT_ENV = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE",
)

WEATHER = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
}
LENIENT = {"name": "search", "description": "Search the web.", "parameters": {"type": "object", "properties": {
    "query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}}
ANSWER = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["answer", "confidence"],
    "additionalProperties": False,
}
HISTORY = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    {"role": "assistant", "content": "It is sunny."},
]


@pytest.fixture(scope="module")
def server():
    with ChatServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _no_client_environment(monkeypatch):
    """The clients read base URLs, keys and headers from the environment; none may leak into a test."""
    for name in CLIENT_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def ada():
    config = ProfileConfig(
        name="Ada",
        role="Forecaster",
        model="gpt-4o",
        tools=[WEATHER, LENIENT],
        output_schema=ANSWER,
        model_settings={"temperature": 0.3, "top_p": 0.9, "max_tokens": 256, "stop": ["END"], "seed": 11,
                        "presence_penalty": 0.5, "frequency_penalty": -0.5},
    )
    return config.create_profile()


@pytest.mark.parametrize("api", APIS)
def test_body_is_the_clients_type_and_arrives_unchanged(server, ada, api):
    body = ada.to_request("And tomorrow?", api=api, history=HISTORY)
    validate_request(api, body)
    server.script(FROM_SCHEMA)
    send(server.root_url, api, body)
    assert server.requests[-1] == json.loads(json.dumps(body))
    assert API_KEY.encode() not in server.raw[-1]
    assert server.headers[-1]["authorization"] == f"Bearer {API_KEY}"
    assert server.paths[-1] == {"openai-chat": "/v1/chat/completions", "openai-responses": "/v1/responses",
                                "anthropic": "/v1/messages"}[api]


@pytest.mark.parametrize("api", APIS)
def test_structured_reply_parses_by_the_output_schema(server, ada, api):
    server.script(FROM_SCHEMA)
    reply = send(server.root_url, api, ada.to_request("Rain?", api=api))
    text = {
        "openai-chat": lambda r: r.choices[0].message.content,
        "openai-responses": lambda r: r.output_text,
        "anthropic": lambda r: r.content[0].text,
    }[api](reply)
    assert ada.parse_reply(text) == {"answer": "ok", "confidence": 0.0}


@pytest.mark.parametrize("api", APIS)
def test_a_tool_call_reply_fits_the_tool_sent(server, ada, api):
    server.script(ToolCall("get_weather", {"city": "Lyon"}))
    reply = send(server.root_url, api, ada.to_request("Weather in Lyon?", api=api))
    if api == "openai-chat":
        call = reply.choices[0].message.tool_calls[0].function
        name, args = call.name, json.loads(call.arguments)
    elif api == "openai-responses":
        name, args = reply.output[0].name, json.loads(reply.output[0].arguments)
    else:
        name, args = reply.content[0].name, reply.content[0].input
    sent = {tool.name: tool for tool in ada.tools}[name]
    assert set(args) <= set(sent.parameters["properties"]) and "city" in args


def test_each_api_gets_its_own_shapes(ada):
    chat, responses, claude = (ada.to_request("q", api=api) for api in APIS)
    assert chat["messages"][0]["role"] == "system" and chat["response_format"]["json_schema"]["name"] == "response"
    assert chat["tools"][0] == {"type": "function", "function": {**WEATHER, "strict": True}}
    assert responses["instructions"] == chat["messages"][0]["content"] and responses["store"] is False
    assert responses["tools"][1] == {"type": "function", **LENIENT, "strict": False}
    assert responses["text"]["format"] == {"type": "json_schema", "name": "response", "schema": ANSWER, "strict": True}
    assert claude["system"] == chat["messages"][0]["content"]
    assert claude["tools"][0] == {"name": "get_weather", "description": WEATHER["description"],
                                  "input_schema": WEATHER["parameters"]}
    assert claude["output_config"] == {"format": {"type": "json_schema", "schema": ANSWER}}


def test_strict_follows_the_schema_unless_the_persona_says(ada):
    """Strict mode is on exactly when the schema fits it; a tool may say otherwise."""
    body = ada.to_request("q")
    assert [tool["function"]["strict"] for tool in body["tools"]] == [True, False]
    config = ProfileConfig(name="Ada", role="R", model="gpt-4o", tools=[{**WEATHER, "strict": False}])
    assert config.create_profile().to_request("q")["tools"][0]["function"]["strict"] is False
    claude = config.create_profile().to_request("q", api="anthropic")
    assert claude["tools"][0]["strict"] is False


def test_a_strict_tool_whose_schema_strict_mode_refuses_is_refused_at_load(ada):
    """OpenAI answers 400 to such a tool; the output schema was already held to this, the tools were not."""
    lenient_strict = {**LENIENT, "strict": True}
    with pytest.raises(ConfigError) as caught:
        ProfileConfig(name="Ada", role="R", model="gpt-4o", tools=[WEATHER, lenient_strict])
    message = str(caught.value)
    assert "tools.1': tool 'search': strict: true, but OpenAI's strict mode would refuse these parameters" in message
    assert "parameters: objects need additionalProperties: false" in message
    assert "every property must be required (make optional ones nullable): limit" in message
    assert message.endswith("make the schema fit, or set strict: false")
    with pytest.raises(RenderError, match="tools given to the render: tools\\[0\\] \\(search\\): strict: true"):
        ada.to_request("q", tools=[lenient_strict])
    assert ada.to_request("q", tools=[{**WEATHER, "strict": True}])["tools"][0]["function"]["strict"] is True


@pytest.mark.parametrize("api", APIS)
def test_a_tool_schema_without_a_type_is_sent_as_an_object(api):
    """A schema without `type` passes as an object schema when the persona loads; both APIs refuse a tool
    whose schema does not say type: object, so the body says it."""
    schema = {"properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}
    profile = ProfileConfig(name="Ada", role="R", model="gpt-4o", tools=[
        {"name": "get_weather", "description": "The weather.", "parameters": schema},
        {"name": "ping", "description": "Ping.", "parameters": {"properties": {}}, "strict": False},
    ]).create_profile()
    body = profile.to_request("q", api=api)
    validate_request(api, body)
    sent = [tool.get("function", tool) for tool in body["tools"]]
    schemas = [tool.get("parameters", tool.get("input_schema")) for tool in sent]
    assert schemas == [{"type": "object", **schema}, {"type": "object", "properties": {}}]
    if api != "anthropic":
        assert [tool["strict"] for tool in sent] == [True, False]
    assert dict(profile.tools[0].parameters) == schema  # the persona's own schema is unchanged
    strict = ProfileConfig(name="Ada", role="R", tools=[{"name": "t", "description": "d", "parameters": schema,
                                                         "strict": True}])
    assert strict.create_profile().to_request("q", model="m")["tools"][0]["function"]["strict"] is True


# model settings: each API's names, as its client types them ---------------------------------------

README = (REPO / "README.md").read_text(encoding="utf-8")


def _readme_table() -> dict[str, list[str]]:
    start = README.index("| setting | takes | openai-chat | openai-responses | anthropic |")
    rows = {}
    for line in README[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[2:]
    return rows


@pytest.mark.parametrize("name", list(SETTINGS))
def test_readme_table_says_what_each_api_gets(name):
    """The README's table of settings is the one requests are built by."""
    assert list(_readme_table()) == [*SETTINGS, "extra"]
    row = _readme_table()[name]
    for api, cell in zip(APIS, row, strict=True):
        field = SETTINGS[name].fields[api]
        if field is None:
            assert "left out" in cell, (name, api, cell)
        else:
            assert re.match(rf"`{field}`", cell), (name, api, cell)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("name", list(SETTINGS))
def test_a_setting_goes_under_the_name_the_client_types(server, api, name):
    value = {"stop": ["END"], "max_tokens": 64, "seed": 3}.get(name, 0.5)
    config = ProfileConfig(name="Ada", role="R", model="gpt-4o", model_settings={name: value})
    body = config.create_profile().to_request("q", api=api)
    field = SETTINGS[name].fields[api]
    validate_request(api, body)  # the name is one the client's request type has
    if field is None:
        assert not ({name} & set(body)) or (api == "anthropic" and name == "max_tokens")
        with pytest.raises(RequestError, match=f"{api} has no such request field"):
            config.create_profile().to_request("q", api=api, unsupported="error")
    else:
        assert body[field] == value
    server.script("ok")
    send(server.root_url, api, body)
    assert server.requests[-1] == json.loads(json.dumps(body))


def test_anthropic_always_gets_max_tokens():
    body = ProfileConfig(name="Ada", role="R", model="claude-x").create_profile().to_request("q", api="anthropic")
    assert body["max_tokens"] == ANTHROPIC_DEFAULT_MAX_TOKENS
    validate_request("anthropic", body)


def test_chat_takes_at_most_four_stop_texts():
    config = ProfileConfig(name="Ada", role="R", model="gpt-4o", model_settings={"stop": list("abcde")})
    with pytest.raises(RequestError, match="at most 4 stop texts"):
        config.create_profile().to_request("q")
    assert config.create_profile().to_request("q", api="anthropic")["stop_sequences"] == list("abcde")


def test_extra_goes_through_untouched_and_per_api(server):
    config = ProfileConfig(
        name="Ada", role="R", model="claude-x",
        model_settings={"temperature": 0.4, "extra": {"metadata": {"user_id": "u-1"}, "anthropic": {"temperature": 0.4},
                                                      "openai-chat": {"max_tokens": 50}}},
    )
    profile = config.create_profile()
    claude = profile.to_request("q", api="anthropic")
    assert claude["temperature"] == 0.4 and claude["metadata"] == {"user_id": "u-1"}
    validate_request("anthropic", claude, allow_extra={"temperature"})
    with pytest.raises(BodyError, match="temperature: not a field"):
        validate_request("anthropic", claude)
    server.script("ok")
    send(server.root_url, "anthropic", claude)  # temperature travels as extra_body
    assert server.requests[-1]["temperature"] == 0.4
    chat = profile.to_request("q")
    assert chat["max_tokens"] == 50 and "anthropic" not in chat and chat["metadata"] == {"user_id": "u-1"}


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"messages": []}, "written from the persona itself"),
        ({"anthropic": {"system": "x"}}, "written from the persona itself"),
        ({"api_key": "sk-1"}, "would put a credential into the request body"),
        ({"openai-chat": {"Authorization": "Bearer x"}}, "would put a credential"),
        ({"extra_headers": {"Authorization": "Bearer x"}}, "'extra_headers.Authorization' would put a credential"),
        ({"openai-chat": {"tools_meta": [{"api_key": "x"}]}}, r"'openai-chat.tools_meta\[0\].api_key' would put"),
        ({"anthropic": 3}, "names an API"),
        ({"n": float("nan")}, "plain JSON data"),
    ],
)
def test_extra_cannot_replace_what_the_persona_writes_or_carry_a_key(extra, expected):
    with pytest.raises(ConfigError, match=expected):
        ProfileConfig(name="Ada", role="R", model_settings={"extra": extra})


def test_call_arguments_replace_the_personas_model_settings_and_tools(ada):
    body = ada.to_request("q", model="gpt-4.1", settings={"temperature": 0, "seed": None}, tools=[])
    assert body["model"] == "gpt-4.1" and body["temperature"] == 0 and "seed" not in body and "tools" not in body
    with pytest.raises(RequestError, match="takes a number from 0 to 2"):
        ada.to_request("q", settings={"temperature": 9})
    with pytest.raises(RequestError, match="'temprature' is not a model setting"):
        ada.to_request("q", settings={"temprature": 0})


@pytest.mark.parametrize("settings", [[("temperature", 0)], "temperature=0", 0.2])
def test_settings_that_are_not_a_mapping_are_a_request_error(ada, settings):
    """They failed with AttributeError: 'list' object has no attribute 'items'."""
    with pytest.raises(RequestError, match="settings must be a mapping of setting name to value"):
        ada.to_request("q", settings=settings)


@pytest.mark.parametrize("model", [4, "", " ", ["gpt-4o"]])
def test_a_model_argument_that_is_no_name_says_so(ada, model):
    """A number or an empty text was reported as the persona naming no model."""
    with pytest.raises(RequestError, match="model= must be the model's name as text"):
        ada.to_request("q", model=model)


def test_a_request_needs_a_model():
    with pytest.raises(RequestError, match="names no model"):
        ProfileConfig(name="Ada", role="R").create_profile().to_request("q")


def test_unknown_api_is_refused(ada):
    with pytest.raises(RequestError, match="unknown api 'gemini'; use one of openai-chat"):
        ada.to_request("q", api="gemini")


def test_tool_names_the_apis_refuse_are_named():
    config = ProfileConfig(
        name="Ada", role="R", model="gpt-4o", tools=[{"name": "web.search", "description": "Search."}]
    )
    profile = config.create_profile()
    assert "web.search" in profile.format_prompt("react")  # fine for the ReAct prompt
    with pytest.raises(RequestError, match="tool 'web.search'"):
        profile.to_request("q")


def test_anthropic_needs_a_user_message():
    config = ProfileConfig(name="Ada", role="R", model="claude-x")
    with pytest.raises(RequestError, match="at least one user message"):
        config.create_profile().to_request(api="anthropic")


# secrets and the API key --------------------------------------------------------------------------


def test_a_secret_setting_stays_out_unless_allowed(monkeypatch):
    monkeypatch.setenv("SEED_TOKEN", "424242")
    persona = {"name": "Ada", "role": "R", "model": "gpt-4o", "model_settings": {"seed": {"key": "SEED_TOKEN"}}}
    with pytest.raises(SecretError) as caught:
        ProfileConfig(**persona).create_profile().to_request("q")
    assert "model_settings.seed" in str(caught.value) and "424242" not in str(caught.value)
    allowed = ProfileConfig(**persona, allow_secrets=["model_settings.seed"]).create_profile()
    assert allowed.to_request("q")["seed"] == 424242
    assert [row.value for row in allowed.explain() if row.field == "model_settings.seed"] == ["***"]


def test_a_secret_model_stays_out_unless_allowed(monkeypatch):
    monkeypatch.setenv("MODEL_SECRET", "ft:gpt-4o:acme:private")
    config = ProfileConfig(name="Ada", role="R", model={"key": "MODEL_SECRET"})
    # no family matches the fine-tuned name: the warning says so without naming it
    with pytest.warns(UnknownModelWarning, match="a secret model name") as warned:
        profile = config.create_profile()
    assert all("acme" not in str(item.message) for item in warned)
    with pytest.raises(SecretError, match="allow_secrets: \\[model\\]"):
        profile.to_request("q")
    assert config.create_profile().to_request("q", model="gpt-4o")["model"] == "gpt-4o"


def test_no_body_carries_the_key_the_client_sends(server, configs):
    """The triage persona through every API: the Authorization header has the key, no body does."""
    profile = load_profile(configs / "triage.yaml").create_profile()
    for api in APIS:
        server.script(FROM_SCHEMA)
        send(server.root_url, api, profile.to_request(api=api, ticket="I was charged twice."))
        assert API_KEY.encode() not in server.raw[-1] and API_KEY in server.headers[-1]["authorization"]


def test_a_profile_written_out_makes_the_same_requests(configs):
    """What batch writes for a profile (persona data) keeps its inputs, settings and output schema."""
    from profiles.batch import persona_data

    profile = load_profile(configs / "triage.yaml").create_profile(deployment="prod")
    again = ProfileConfig(**persona_data(profile)).create_profile()
    for api in APIS:
        assert again.to_request(api=api, ticket="x", tier="pro") == profile.to_request(api=api, ticket="x", tier="pro")
    assert again.inputs == profile.inputs


def test_persona_data_writes_a_secret_variable_as_its_definition(monkeypatch):
    """A dynamic variable read from a credential-like key is written as its key, never its value."""
    from profiles.batch import persona_data

    monkeypatch.setenv("CRM_API_KEY", "crm-secret-1234")
    config = ProfileConfig(name="Ada", role="R", variables={"crm": {"key": "CRM_API_KEY"}, "plan": "gold"})
    data = persona_data(config.create_profile(), config)
    assert "crm-secret-1234" not in json.dumps(data)
    assert data["variables"] == {"crm": {"key": "CRM_API_KEY", "provider": "env", "secret": True}, "plan": "gold"}
    assert ProfileConfig.from_data(data).create_profile().bound["crm"] == "crm-secret-1234"
