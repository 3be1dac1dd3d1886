"""`profiles render --messages / --request`: messages and request bodies as JSON on the command line."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from profiles import ConfigError, UnusedInputWarning, persona_schema
from profiles.cli import cli
from profiles.loader import parse_profiles
from tests.request_types import validate_request

TICKET = "ticket=I was charged twice."
HISTORY = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi! What happened?"}]


def test_messages_are_printed_as_json(runner, configs):
    result = runner.invoke(cli, ["render", str(configs / "triage.yaml"), "--messages", "--var", TICKET])
    assert result.exit_code == 0, result.output
    messages = json.loads(result.output)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == "Customer plan: free\nTicket:\nI was charged twice."


def test_anthropic_style_with_a_history_file(runner, configs, write):
    history = write("history.json", json.dumps(HISTORY))
    args = ["render", str(configs / "triage.yaml"), "--messages", "--style", "anthropic", "--history", str(history)]
    result = runner.invoke(cli, [*args, "--var", TICKET])
    assert result.exit_code == 0, result.output
    shaped = json.loads(result.output)
    assert shaped["system"].startswith("You are Iris.")
    assert [m["role"] for m in shaped["messages"]] == ["user", "assistant", "user"]


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic"])
def test_request_bodies_are_the_clients_types(runner, configs, api):
    args = ["render", str(configs / "triage.yaml"), "--request", api, "--var", TICKET, "--var", "max_labels=2"]
    result = runner.invoke(cli, [*args, "--deployment", "prod"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    validate_request(api, body)
    assert "Suggest at most 2 labels." in json.dumps(body)
    if api != "anthropic":
        assert body["temperature"] == 0  # the prod overlay


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--messages", "--request", "anthropic"], "give --messages or --request, not both"),
        (["--messages", "--kind", "system"], "--kind renders one prompt"),
        (["--history", "h.json"], "--history goes with --messages or --request"),
        (["--messages", "--history", "missing.json"], "missing.json not found"),
        (["--messages", "--history", "/dev/zero"], "/dev/zero is over 2000000 bytes"),  # had no size, read for ever
        (["--request", "gemini"], "'gemini' is not one of"),
        (["--request", "anthropic", "--var", "tier=gold"], "tier: 'gold' is not one of 'free'"),
        (["--messages", "--var", "history=[]"], "'history' names an option of --messages and --request"),
        (["--request", "openai-chat", "--var", "settings={}"], "'settings' names an option"),
        (["--messages", "--var", "style=x"], "use --style"),
        (["--messages", "-q", "Hi", "--var", "question=Hi"], "give the question once"),
    ],
)
def test_usage_mistakes_exit_2(runner, configs, extra, expected):
    result = runner.invoke(cli, ["render", str(configs / "triage.yaml"), "--var", TICKET, *extra])
    assert result.exit_code == 2 and expected in result.output, result.output


def test_a_bad_history_file_is_a_clean_error(runner, configs, write):
    history = write("history.json", json.dumps([{"role": "user", "content": 3}]))
    args = ["render", str(configs / "triage.yaml"), "--messages", "--history", str(history), "--var", TICKET]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2 and "Error: history: history[0].content" in result.output
    write("list.json", '{"role": "user"}')
    result = runner.invoke(cli, [*args[:4], str(history.parent / "list.json"), *args[5:]])
    assert result.exit_code == 2 and "must hold a JSON list of turns" in result.output


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--messages", "--history", "history.json"], "--history: history.json[1]['content'] holds \\ud800, half of"),
        (["--messages", "--var", 'resources=[{"content": "\\udfff"}]'], "--var: resources[0]['content'] holds \\udfff"),
        (["--kind", "system", "--var", 'resources=[{"content": "\\udfff"}]'], "resources[0]['content'] holds"),
        (["--request", "openai-chat", "--var", 'tools=[{"name": "\\ud800"}]'], "--var: tools[0]['name'] holds"),
        (["--messages", "--history", "deep.json"], "--history: deep.json: nested too deeply to read"),
        (["--messages", "--history", "deep100.json"], "--history: deep100.json is nested over 64 levels deep"),
        (["--messages", "--var", "resources=" + "[" * 5000 + "]" * 5000], "resources must be JSON"),
        (["--kind", "system", "--var", "resources=" + "[" * 100 + "]" * 100], "resources is nested over 64 levels"),
    ],
)
def test_unsendable_json_given_on_the_command_line_is_a_usage_error(
    runner, configs, write, monkeypatch, tmp_path, extra, expected
):
    """A bare `\\ud800` escape is valid JSON but no text, and JSON thousands of levels deep exhausts the
    parser's stack: both are refused where they are given, not when the prompt is built or printed."""
    monkeypatch.chdir(tmp_path)
    write("history.json", '[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello \\ud800"}]')
    write("deep.json", "[" * 5000 + "]" * 5000)
    write("deep100.json", '[{"role": "user", "content": [' + "[" * 100 + "]" * 100 + "]}]")
    result = runner.invoke(cli, ["render", str(configs / "triage.yaml"), "--var", TICKET, *extra])
    assert result.exit_code == 2, result.output
    assert expected in result.output and "internal error" not in result.output


def test_a_request_without_a_model_says_how_to_give_one(runner, configs):
    args = ["render", str(configs / "planner.yaml"), "--request", "openai-chat", "--var", "agents=A"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2 and "names no model" in result.output and "--model" in result.output
    result = runner.invoke(
        cli, ["render", str(configs / "planner.yaml"), "--request", "openai-chat", "--var", "agents=A", "-m", "gpt-4o"]
    )
    assert result.exit_code == 0 and json.loads(result.output)["model"] == "gpt-4o"


# the persona JSON Schema knows the new fields ------------------------------------------------------

GOOD = [
    {"model_settings": {"temperature": 0.2, "stop": ["END"], "seed": {"key": "SEED", "default": 3}, "extra": {"a": 1}}},
    {"output_schema": {"file": "schemas/a.json", "strict": True}},
    {"output_schema": {"type": "object"}},
    {"inputs": {"ticket": "string", "n": {"type": "integer", "default": 3, "required": False}}},
    {"roles": {"planner": "developer"}, "messages": [{"kind": "system"}, {"history": True}, {"kind": "user"}]},
    {"deployments": {"prod": {"model_settings": {"temperature": 0}}}},
]
BAD = [
    {"model_settings": {"temperature": 3}},
    {"model_settings": {"temprature": 0.2}},
    {"inputs": {"n": {"type": "int"}}},
    {"roles": {"planner": "boss"}},
    {"messages": [{"role": "user"}]},
    {"messages": []},
    {"output_schema": {"file": "../x.json"}},
]


@pytest.mark.parametrize("fields", GOOD)
def test_schema_takes_what_the_loader_takes(fields, tmp_path):
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "a.json").write_text('{"type": "object", "properties": {}, "additionalProperties": false}')
    document = {"name": "Ada", "role": "R", **fields}
    assert not list(jsonschema.Draft202012Validator(persona_schema()).iter_errors(document))
    if "inputs" in fields:  # declared, but read by no template of this bare persona
        with pytest.warns(UnusedInputWarning):
            parse_profiles(yaml.safe_dump(document), base_dir=tmp_path)
    else:
        parse_profiles(yaml.safe_dump(document), base_dir=tmp_path)


@pytest.mark.parametrize("fields", BAD)
def test_schema_refuses_what_the_loader_refuses(fields):
    document = {"name": "Ada", "role": "R", **fields}
    assert list(jsonschema.Draft202012Validator(persona_schema()).iter_errors(document))
    with pytest.raises(ConfigError):
        parse_profiles(yaml.safe_dump(document))


def test_inputs_of_the_prompts_reach_the_messages_as_render_takes_them(runner, configs):
    """`--question` and `--var question=…` are one input; resources are JSON, as for `render`."""
    base = ["render", str(configs / "triage.yaml"), "--messages", "--var", TICKET]
    by_flag = runner.invoke(cli, [*base, "-q", "Refund?"])
    by_var = runner.invoke(cli, [*base, "--var", "question=Refund?"])
    assert by_flag.exit_code == 0, by_flag.output
    assert json.loads(by_flag.output) == json.loads(by_var.output)
    resources = '[{"content": "Invoices go out on the 1st."}]'
    with_resources = runner.invoke(cli, [*base, "--var", f"resources={resources}"])
    assert with_resources.exit_code == 0, with_resources.output
    assert "Invoices go out on the 1st." in json.loads(with_resources.output)[0]["content"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "--history: history.json:1:1: the file is empty; the file holds one JSON list of turns, e.g. ["),
        ('[{"role": "user",\n  "content": "Hi",}]', "--history: history.json:2:19: invalid JSON: Expecting property"),
        (b"\xff\xfe[]", "--history: history.json: byte 0 is not UTF-8 (invalid start byte); save the file as UTF-8"),
    ],
)
def test_a_history_file_that_is_not_json_says_where(runner, configs, tmp_path, monkeypatch, text, expected):
    """It said only 'is not a readable JSON file (JSONDecodeError)', with no line, column or remedy."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "history.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    args = ["render", str(configs / "triage.yaml"), "--messages", "--history", "history.json", "--var", TICKET]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2 and expected in result.output, result.output


def test_a_history_file_may_start_with_a_byte_order_mark(runner, configs, tmp_path):
    path = tmp_path / "history.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(HISTORY).encode())
    args = ["render", str(configs / "triage.yaml"), "--messages", "--history", str(path), "--var", TICKET]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[1:3] == HISTORY


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--messages", "--question", "Hello \udcff"], "--question holds the byte 0xFF, which is not UTF-8 text"),
        (["--request", "anthropic", "--var", "ticket=caf\udce9"], "--var ticket holds the byte 0xE9"),
        (["--kind", "system", "--var", "tier\udcfe=pro"], "--var tier\\udcfe holds the byte 0xFE"),
        (["--request", "openai-chat", "--model", "gpt-\udcff"], "--model holds the byte 0xFF"),
        (["--kind", "system", "--language", "z\udcff"], "--language holds the byte 0xFF"),
    ],
)
def test_a_command_line_text_that_is_not_utf8_is_a_usage_error(runner, configs, extra, expected):
    """Bytes that are not UTF-8 reach Python as lone surrogates, and were echoed back as the same bytes
    inside the JSON of a message or a request body, which no API reads."""
    result = runner.invoke(cli, ["render", str(configs / "triage.yaml"), "--var", TICKET, *extra])
    assert result.exit_code == 2, result.output
    assert expected in result.output
