"""Chat history: checked as the clients' own types check it and as the APIs do, converted for each API."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from openai.types.chat import ChatCompletionMessageParam

from profiles import HistoryError, ProfileConfig
from profiles.history import check_history, to_anthropic, to_responses_input
from tests.request_types import BodyError, validate_as, validate_request
from tests.strategies import histories

CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
WEATHER = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    {"role": "assistant", "content": "It is sunny."},
]
APIS = ("openai-chat", "openai-responses", "anthropic")


@pytest.fixture(scope="module")
def profile():
    return ProfileConfig(name="Ada", role="Forecaster", model="gpt-4o").create_profile()


# one turn at a time: check_history agrees with the Chat Completions type ------------------------

TURNS = [
    ({"role": "user", "content": "hi"}, True),
    ({"role": "system", "content": [{"type": "text", "text": "Be brief."}]}, True),
    ({"role": "developer", "content": "Be brief.", "name": "ops"}, True),
    ({"role": "user", "content": [{"type": "text", "text": "look"},
                                  {"type": "image_url", "image_url": {"url": "https://example.org/a.png"}}]}, True),
    ({"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]}, True),
    ({"role": "robot", "content": "hi"}, False),
    ({"role": "user", "content": 42}, False),
    ({"role": "system", "content": [{"type": "image_url", "image_url": {"url": "https://example.org/a.png"}}]}, False),
    ({"role": "user", "content": [{"type": "text", "text": "a", "x": 1}]}, False),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u", "detail": "ultra"}}]}, False),
    ({"role": "tool", "content": "sunny"}, False),
    ({"role": "user", "content": "hi", "timestamp": 3}, False),
]


@pytest.mark.parametrize(("turn", "valid"), TURNS, ids=[str(i) for i in range(len(TURNS))])
def test_turn_shapes_agree_with_the_client_type(turn, valid):
    """A single turn is accepted exactly when openai's ChatCompletionMessageParam accepts it."""
    problems = check_history([turn])
    try:
        validate_as(ChatCompletionMessageParam, turn)
        typed = True
    except BodyError:
        typed = False
    assert typed == valid
    assert (problems == []) == valid, problems


def test_arguments_must_be_json_text_like_the_type_says():
    bad = {**CALL, "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    turn = {"role": "assistant", "tool_calls": [bad]}
    with pytest.raises(BodyError):
        validate_as(ChatCompletionMessageParam, turn)
    assert "must be JSON text" in "\n".join(check_history([{"role": "user", "content": "q"}, turn]))


# what the types let through and the APIs refuse ------------------------------------------------


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        ([{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [CALL]}], "ends with unanswered"),
        ([{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "x", "content": "r"}], "answers no tool"),
        (
            [{"role": "assistant", "tool_calls": [CALL]}, {"role": "user", "content": "q"}],
            "need their tool turns right after",
        ),
        (
            [{"role": "assistant", "tool_calls": [CALL]}, {"role": "tool", "tool_call_id": "call_1", "content": "a"},
             {"role": "assistant", "tool_calls": [CALL]}, {"role": "tool", "tool_call_id": "call_1", "content": "b"}],
            "repeats an earlier",
        ),
        ([{"role": "assistant", "tool_calls": [{**CALL, "function": {"name": "f", "arguments": "{"}}]}],
         "not valid JSON"),
        ([{"role": "assistant", "tool_calls": [{**CALL, "function": {"name": "f", "arguments": "[1]"}}]}],
         "one JSON object"),
        ([{"role": "assistant", "content": "x", "tool_calls": []}], "an empty list"),
        ([{"role": "assistant", "content": ""}], "needs content or tool_calls"),
        ([{"role": "function", "content": "x", "name": "f"}], "legacy 'function' role"),
        ("hello", "must be a list of turns"),
    ],
)
def test_api_rules_the_types_do_not_check(history, expected):
    problems = check_history(history)
    assert any(expected in line for line in problems), problems


def test_every_problem_is_listed_with_its_turn():
    problems = check_history([{"role": "robot", "content": "x"}, {"role": "user", "content": 3}])
    assert [line.split(":")[0] for line in problems] == ["history[0].role", "history[1].content"]


@pytest.mark.parametrize(
    ("turn", "api", "expected"),
    [
        ({"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AA==", "format": "wav"}}]},
         "openai-responses", "no audio"),
        ({"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AA==", "format": "wav"}}]},
         "anthropic", "no audio"),
        ({"role": "user", "content": "  "}, "anthropic", "refuses empty text"),
        ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/bmp;base64,AA=="}}]},
         "anthropic", "not image/bmp"),
        ({"role": "user", "content": [{"type": "file", "file": {"file_data": "data:text/plain;base64,AA=="}}]},
         "anthropic", "base64 PDF"),
    ],
)
def test_each_api_has_its_own_limits(turn, api, expected):
    assert check_history([turn], "openai-chat") == []
    assert any(expected in line for line in check_history([turn], api))


def test_anthropic_ids_are_checked():
    bad = [{"role": "user", "content": "q"},
           {"role": "assistant", "tool_calls": [{**CALL, "id": "call|1"}]},
           {"role": "tool", "tool_call_id": "call|1", "content": "r"}]
    assert check_history(bad, "openai-chat") == []
    assert any("letters, digits" in line for line in check_history(bad, "anthropic"))


# conversions ------------------------------------------------------------------------------------


def test_anthropic_conversion_merges_turns_and_puts_results_first():
    turns = [
        {"role": "system", "content": "You are Ada."},
        {"role": "developer", "content": "Answer in English."},
        *WEATHER[:3],
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "Welcome."},
        {"role": "system", "content": "Be brief now."},
        {"role": "user", "content": "Tomorrow?"},
    ]
    converted = to_anthropic(turns)
    assert converted["system"] == "You are Ada.\n\nAnswer in English."
    roles = [message["role"] for message in converted["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    results = converted["messages"][2]["content"]
    assert results[0] == {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"}
    assert results[1] == {"type": "text", "text": "thanks"}
    assert converted["messages"][1]["content"][0] == {
        "type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}
    }
    assert converted["messages"][4]["content"][0]["text"] == "<system>\nBe brief now.\n</system>"


def test_responses_conversion_makes_call_items():
    items = to_responses_input(WEATHER)
    assert items[1] == {
        "type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'
    }
    assert items[2] == {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
    assert items[3] == {"role": "assistant", "content": "It is sunny."}


def test_responses_images_get_their_required_detail():
    turn = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.org/a.png"}}]}
    (item,) = to_responses_input([turn])
    assert item["content"][0] == {"type": "input_image", "image_url": "https://example.org/a.png", "detail": "auto"}


@settings(max_examples=60, deadline=None)
@given(histories())
def test_any_valid_history_makes_valid_bodies_for_every_api(profile, history):
    """Generated histories pass every check and convert into bodies each client's types accept."""
    for api in APIS:
        assert check_history(history, api) == []
        body = profile.to_request("And now?", api=api, history=history)
        validate_request(api, body)
        if api == "anthropic":
            roles = [message["role"] for message in body["messages"]]
            assert roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:], strict=False))
        elif api == "openai-chat":
            assert body["messages"][1:-1] == json.loads(json.dumps(history))


def test_history_errors_are_history_errors(profile):
    with pytest.raises(HistoryError) as caught:
        profile.format_messages("q", history=[{"role": "user", "content": 3}])
    assert caught.value.problems == ["history[0].content: must be text or a list of parts, got int"]
    assert str(caught.value).startswith("history: history[0].content")


@pytest.mark.parametrize(("depth", "expected"), [(100, "nested over 64 levels deep"), (5000, "nested too deeply")])
@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic"])
def test_deeply_nested_arguments_are_a_history_error(profile, depth, expected, api):
    """Arguments `[[[[…` deep would exhaust the stack when parsed or copied; they are refused by their turn."""
    arguments = '{"a": ' + "[" * depth + "]" * depth + "}"
    call = {**CALL, "function": {"name": "get_weather", "arguments": arguments}}
    history = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": CALL["id"], "content": "sunny"},
    ]
    with pytest.raises(HistoryError) as caught:
        profile.to_request("q", api=api, history=history)
    assert caught.value.problems[0].startswith("history[1].tool_calls[0].function.arguments: ")
    assert expected in caught.value.problems[0]
    shallow = {**CALL, "function": {"name": "get_weather", "arguments": '{"a": ' + "[" * 60 + "]" * 60 + "}"}}
    assert profile.to_request("q", api=api, history=[history[0], {**history[1], "tool_calls": [shallow]}, history[2]])


@pytest.mark.parametrize("content", ["", None])
def test_an_assistant_turn_calling_tools_with_empty_text_converts_for_every_api(profile, content):
    """OpenAI-compatible servers answer a tool call with content "" as often as null; Anthropic gets the call."""
    history = [WEATHER[0], {**WEATHER[1], "content": content}, WEATHER[2]]
    for api in APIS:
        assert check_history(history, api) == []
        body = profile.to_request("And tomorrow?", api=api, history=history)
        validate_request(api, body)
    claude = profile.to_request("And tomorrow?", api="anthropic", history=history)
    assert claude["messages"][1]["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}
    ]
    assert check_history([WEATHER[0], {"role": "assistant", "content": " "}], "anthropic") == [
        "history[1].content: Anthropic refuses empty text; leave the turn out",
        "history[1]: an assistant turn needs content or tool_calls",
    ]


def test_leading_system_turns_of_text_parts_become_the_instructions():
    """A system turn written as text parts was dropped from the Responses body: in neither instructions nor input."""
    profile = ProfileConfig(
        name="Ada", role="Forecaster", model="gpt-4o", messages=[{"history": True}, {"kind": "user"}]
    ).create_profile()
    history = [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Cite."}]},
        {"role": "system", "content": "Use metric units."},
        {"role": "user", "content": "Weather?"},
    ]
    body = profile.to_request("And tomorrow?", api="openai-responses", history=history)
    validate_request("openai-responses", body)
    assert body["instructions"] == "Be brief.\n\nCite.\n\nUse metric units."
    assert body["input"] == [
        {"role": "user", "content": "Weather?"},
        {"role": "user", "content": "Question: And tomorrow?"},
    ]


@pytest.mark.parametrize("history", [{}, "", b"", 0])
def test_an_empty_history_of_the_wrong_type_is_refused(profile, history):
    """Only None and a list mean history; an empty mapping or text was taken for "none" without a word."""
    with pytest.raises(HistoryError, match="history must be a list of turns"):
        profile.format_messages("q", history=history)
    assert profile.format_messages("q", history=[]) == profile.format_messages("q")


@pytest.mark.parametrize("name", ["Ada Lovelace", "", "ops\n", "a/b", "<|im_start|>"])
def test_a_name_openai_chat_refuses_is_a_problem_for_it_alone(profile, name):
    """OpenAI answers 400 to a turn named with a space (or any of < | \\ / >); Responses and Anthropic
    have no name for a turn, and it is left out of their bodies."""
    history = [{"role": "user", "content": "Weather?", "name": name}]
    (problem,) = check_history(history, "openai-chat")
    assert problem.startswith("history[0].name: OpenAI Chat takes a name of one word, without spaces")
    for api in ("openai-responses", "anthropic"):
        assert check_history(history, api) == []
        validate_request(api, profile.to_request("q", api=api, history=history))
    assert check_history([{**history[0], "name": "Ada_Lovelace"}]) == []
    assert check_history([{**history[0], "name": "André"}]) == []
