"""MCP prompts through the official SDK's own clients: over stdio (`profiles mcp`, spawned by the
SDK's stdio client) and over streamable HTTP (`/mcp/` of a running `profiles serve`)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from mcp import Client, ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from profiles.serve.mcp_prompts import ROLE_META

from .conftest import SECRET_VALUE

INVALID_PARAMS = -32602
TICKET = "I was charged twice for March."


@asynccontextmanager
async def over_stdio(root, *args, errlog):
    params = StdioServerParameters(command=sys.executable, args=["-m", "profiles", "mcp", str(root), *args])
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def over_http(base):
    async with streamable_http_client(base + "/mcp/") as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def _check_prompts(session) -> None:
    """What both transports must answer, the same way."""
    listed = {prompt.name: prompt for prompt in (await session.list_prompts()).prompts}
    assert {"triage", "triage.system", "triage.user", "summarizer", "summarizer.system", "planner"} <= set(listed)
    assert "broken" not in listed  # a persona that does not load offers no prompt
    arguments = {arg.name: (arg.required, arg.description) for arg in listed["triage"].arguments}
    assert arguments["ticket"] == (True, "The customer's message, as they wrote it.")
    assert arguments["tier"] == (False, "The customer's plan.")
    assert arguments["max_labels"] == (False, "The most labels to suggest.")
    assert arguments["question"][0] is False
    user_only = {arg.name for arg in listed["triage.user"].arguments}
    assert "ticket" in user_only and "max_labels" not in user_only  # what that prompt's template reads
    planner = {arg.name: arg.required for arg in listed["planner.system"].arguments}
    assert planner["agents"] is True and planner["max_steps"] is False  # undeclared; a default in variables

    got = await session.get_prompt("triage", {"ticket": TICKET, "max_labels": "2", "tier": "pro"})
    roles = [(message.role, message.content.meta[ROLE_META]) for message in got.messages]
    assert roles == [("user", "system"), ("user", "user")]
    system, user = (message.content.text for message in got.messages)
    assert system.startswith("You are Iris.") and "Suggest at most 2 labels." in system
    assert user == f"Customer plan: pro\nTicket:\n{TICKET}"

    one = await session.get_prompt("summarizer.system", {})
    assert [message.content.meta[ROLE_META] for message in one.messages] == ["system"]
    assert one.messages[0].content.text.startswith("You are Aristotle.")

    masked = await session.get_prompt("secretive", {})
    assert masked.messages[0].content.text.startswith("You are ***.") and SECRET_VALUE not in str(masked)

    for name, arguments, words in (
        ("triage", {}, "ticket"),
        ("triage", {"ticket": "x", "max_labels": "lots"}, "max_labels"),
        ("triage", {"ticket": "x", "colour": "blue"}, "colour"),
        ("nope", {}, "no prompt 'nope'"),
        ("bounded.user", {"question": "q"}, "LimitExceeded"),
    ):
        with pytest.raises(MCPError) as raised:
            await session.get_prompt(name, arguments)
        assert raised.value.error.code == INVALID_PARAMS and words in raised.value.error.message, (name, raised)
    assert (await session.get_prompt("planner", {"agents": "Searcher"})).messages  # and it keeps serving


def test_prompts_over_stdio(persona_root, tmp_path):
    errlog = (tmp_path / "server.log").open("w+")

    async def main() -> None:
        async with over_stdio(persona_root, errlog=errlog) as session:
            await _check_prompts(session)
        async with over_stdio(persona_root / "summarizer.yaml", "--deployment", "prod", errlog=errlog) as session:
            names = [prompt.name for prompt in (await session.list_prompts()).prompts]
            assert names == ["summarizer", "summarizer.system", "summarizer.user", "summarizer.write_memory"]
            got = await session.get_prompt("summarizer.system", {})
            assert got.messages[0].content.text.startswith("You are Plato.")

    anyio.run(main)
    errlog.seek(0)
    log = errlog.read()
    assert "broken.yaml is left out of the MCP prompts" in log and SECRET_VALUE not in log


def test_a_request_spelling_half_a_surrogate_pair_is_answered_over_stdio(persona_root):
    """JSON may spell `"\\ud800"`, which is no Unicode; the SDK's stdio reader dropped such a request
    without a word, so the client waited for ever. It is answered with an error naming the place."""
    lines = [
        '{"jsonrpc": "2.0", "id": 2, "method": "prompts/get", '
        '"params": {"name": "triage", "arguments": {"ticket": "\\ud800"}}}',
        '{"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "summarizer.system"}}',
    ]
    got = _answers_over_stdio(persona_root, lines, {2, 3})
    error = got[2]["error"]
    assert error["code"] == INVALID_PARAMS
    assert error["message"].startswith("prompts/get: params.arguments.ticket holds '\\ud800', half of a surrogate")
    assert got[3]["result"]["messages"][0]["content"]["text"].startswith("You are Aristotle.")


def _answers_over_stdio(root, lines, ids):
    """Send `lines` to `profiles mcp root` after the handshake; the answers to `ids`, by id."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    handshake = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "profiles", "mcp", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    answers: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [answers.put(line) for line in process.stdout], daemon=True).start()
    try:
        for line in handshake + lines:
            process.stdin.write(line + "\n")
            process.stdin.flush()
        got = {}
        while not set(ids) <= set(got):
            answer = json.loads(answers.get(timeout=60))  # queue.Empty: a request went unanswered
            got[answer.get("id")] = answer
    finally:
        process.stdin.close()
        process.wait(20)
    return got


def test_requests_the_sdk_reader_drops_are_answered_over_stdio(persona_root):
    """The SDK's stdio reader gave up without a word on a line that is not JSON or not JSON-RPC 2.0,
    so a client waited for ever for the answer; a line naming its id is answered with what is wrong.
    A line spelling half a surrogate pair and nested past Python's reader stopped the server."""
    lines = [
        '{"jsonrpc": "2.0", "id": 1, "method": "ping",}',
        '{"jsonrpc": "2.0", "id": 2, "method": 5}',
        '{"jsonrpc": "1.0", "id": 3, "method": "ping"}',
        '{"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": []}',
        '{"jsonrpc": "2.0", "id": 5, "method": "prompts/list", "params": {"cursor": 5}}',
        '{"jsonrpc": "2.0", "id": 6, "method": "ping", "params": {"a": "\\ud800", "b": ' + "[" * 5000,
        "not json, and no id to answer",
        '{"jsonrpc": "2.0", "id": 7, "method": "prompts/get", "params": {"name": "summarizer.system"}}',
    ]
    got = _answers_over_stdio(persona_root, lines, range(1, 8))
    said = {ident: got[ident]["error"]["message"] for ident in range(1, 7)}
    assert all(got[ident]["error"]["code"] == INVALID_PARAMS for ident in range(1, 7)), got
    assert said[1].startswith("request: the line is not JSON (Expecting property name") and "column 46" in said[1]
    assert said[2] == "request: 'method' must be the method's name as text, got int"
    assert said[3] == 'ping: "jsonrpc" must be "2.0", got "1.0"'
    assert said[4] == "prompts/get: 'params' must be an object, got list"
    assert said[5].startswith("prompts/list: 'cursor' must be text")
    assert said[6].startswith("request: the line nests arrays or objects too deeply")
    assert got[7]["result"]["messages"][0]["content"]["text"].startswith("You are Aristotle.")


def test_a_request_spelling_half_a_surrogate_pair_is_answered_over_http(live):
    """Over HTTP the SDK answered such a request "Parse error: unexpected end of hex escape", of an
    escape that is whole; it is answered as over stdio, naming the place."""
    body = (
        '{"jsonrpc": "2.0", "id": 7, "method": "prompts/get", '
        '"params": {"name": "triage", "arguments": {"ticket": "\\ud800"}}}'
    )
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(base_url=live.base, timeout=30) as http:
        answer = http.post("/mcp/", content=body.encode(), headers=headers).json()
        assert answer["id"] == 7 and answer["error"]["code"] == INVALID_PARAMS, answer
        assert answer["error"]["message"].startswith(
            "prompts/get: params.arguments.ticket holds '\\ud800', half of a surrogate"
        ), answer
        # an escape of a whole character (a pair, or one outside the surrogates) is read as it was
        fine = body.replace("\\ud800", "\\ud83d\\ude00 \\u00e9")
        got = http.post("/mcp/", content=fine.encode(), headers=headers).json()
        assert "😀 é" in got["result"]["messages"][1]["content"]["text"], got
        # one nested past Python's reader as well is the SDK's parse error, not an internal error
        deep = body.replace('"triage"', '"triage", "x": ' + "[" * 5000)
        assert http.post("/mcp/", content=deep.encode(), headers=headers).status_code == 400
        listing = {"jsonrpc": "2.0", "id": 8, "method": "prompts/list", "params": {"cursor": 5}}
        error = http.post("/mcp/", json=listing, headers=headers).json()["error"]
        assert error["code"] == INVALID_PARAMS and error["message"].startswith("prompts/list: 'cursor' must be text")


def test_prompts_over_streamable_http(live):
    async def main() -> None:
        async with over_http(live.base) as session:
            await _check_prompts(session)
        async with Client(live.base + "/mcp/") as client:  # the SDK's newer client, its own protocol era
            got = await client.get_prompt("triage.user", {"ticket": TICKET})
            assert got.messages[0].content.text.endswith(TICKET)

    anyio.run(main)


def test_the_http_endpoint_checks_host_and_origin(live):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    with httpx.Client(base_url=live.base) as http:
        assert http.post("/mcp/", json=ping, headers=headers).status_code == 200
        foreign = http.post("/mcp/", json=ping, headers={**headers, "Origin": "http://evil.example"})
        assert foreign.status_code == 403
        rebound = http.post("/mcp/", json=ping, headers={**headers, "Host": "evil.example"})
        assert rebound.status_code == 400


@pytest.mark.parametrize("accept", ["text/event-stream", "*/*"])
def test_a_get_of_the_endpoint_is_a_405_not_a_stream_that_never_ends(live, accept):
    """A stateless server sends nothing unasked: a GET for its event stream (a client probing, a
    curl) is refused as the protocol allows, instead of held open forever."""
    with httpx.Client(base_url=live.base, timeout=10) as http:
        got = http.get("/mcp/", headers={"Accept": accept})
        assert got.status_code == 405 and got.headers["allow"] == "POST"
        assert "POST only" in got.json()["error"]["message"]
        assert http.get("/mcp", follow_redirects=True).status_code == 405


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"name": "triage", "arguments": {"ticket": 5}}, "argument 'ticket' is int, but MCP arguments are text"),
        ({"name": "triage", "arguments": {"ticket": True}}, 'send it as a string, e.g. "true"'),
        ({"name": "triage", "arguments": "ticket=x"}, "'arguments' must be an object of name to text, got str"),
        ({"name": 7}, "'name' must be the prompt's name as text"),
        ({"name": "triage", "arguments": {"ticket": ["a"]}}, "argument 'ticket' is list"),
    ],
)
def test_malformed_prompt_requests_say_what_is_wrong(live, params, words):
    """What the SDK would refuse with a bare "Invalid request parameters" says what and how to fix."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": params}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    with httpx.Client(base_url=live.base) as http:
        error = http.post("/mcp/", json=call, headers=headers).json()["error"]
        assert error["code"] == INVALID_PARAMS and words in error["message"], error
        good = {**call, "params": {"name": "triage.user", "arguments": {"ticket": TICKET}}}
        assert http.post("/mcp/", json=good, headers=headers).json()["result"]["messages"]
