"""Tests for the chat-completions client, against a real scripted server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import http.server
import logging
import socket
import threading
import time

import pytest

from profiles.errors import FactoryError
from profiles.factories.chat import (
    ChatClient,
    ChatError,
    ChatReply,
    ChatRequest,
    EmptyReplyError,
    _parse_retry_after,
)
from tests.llm_server import ChatServer, Empty, Reply, Stall, Status

SECRET = "sk-test-Zq8u2ALw9X"
ASK = [{"role": "user", "content": "Invent two personas."}]


# a generous timeout: a busy machine must not turn a scripted reply into a retry; timeout tests pass their own
def make_client(server: ChatServer, **kwargs) -> ChatClient:
    options = {"timeout": 10.0, "max_retries": 2, "backoff": 0.01, "max_backoff": 0.05, "jitter_seed": 1}
    options.update(kwargs)
    return ChatClient(server.url, "test-model", **options)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- replies -------------------------------------------------------------------------------


def test_reply_carries_content_and_provenance(chat_server):
    """A normal reply gives its content, the request id header, model, finish reason and usage."""
    chat_server.script('[{"name": "Ada"}]')
    with make_client(chat_server) as client:
        reply = client.complete(ASK)
    assert reply == ChatReply(
        content='[{"name": "Ada"}]', request_id="req-1", model="test-model", finish_reason="stop"
    )
    assert reply.usage == {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    assert reply.attempts == 1
    assert chat_server.requests == [{"model": "test-model", "messages": ASK}]


def test_request_id_falls_back_to_body_id(chat_server):
    """Without an x-request-id header, the body's id names the request."""
    chat_server.script(Reply("hi", request_id_header=False))
    with make_client(chat_server) as client:
        assert client.complete(ASK).request_id == "chatcmpl-1"


def test_content_parts_are_joined(chat_server):
    """A reply whose content is a list of text parts is read as their joined text."""
    parts = [{"type": "text", "text": '[{"name": '}, {"type": "text", "text": '"Ada"}]'}]
    chat_server.script(lambda body: Status(200, body=_completion_with(parts)))
    with make_client(chat_server) as client:
        assert client.complete(ASK).content == '[{"name": "Ada"}]'


def _completion_with(content):
    return {"id": "x", "model": "m", "choices": [{"message": {"content": content}, "finish_reason": "stop"}]}


def test_seed_temperature_and_format_are_sent(chat_server):
    """Seed, temperature, response_format and extra fields reach the server as given."""
    chat_server.script("ok")
    with make_client(chat_server) as client:
        client.complete(
            ASK,
            seed=1234,
            temperature=0.7,
            response_format={"type": "json_object"},
            extra_body={"max_tokens": 50},
        )
    (body,) = chat_server.requests
    assert body["seed"] == 1234
    assert body["temperature"] == 0.7
    assert body["response_format"] == {"type": "json_object"}
    assert body["max_tokens"] == 50


@pytest.mark.parametrize("suffix, path", [("/v1", "/v1/chat/completions"), ("", "/chat/completions")])
def test_base_url_with_or_without_v1(chat_server, suffix, path):
    """/chat/completions is appended to the base URL, with or without /v1."""
    chat_server.script("ok")
    with ChatClient(chat_server.root_url + suffix + "/", "m", timeout=10.0) as client:
        assert client.complete(ASK).content == "ok"
    assert chat_server.paths == [path]


def test_full_endpoint_url_is_used_as_is(chat_server):
    """A base URL already ending in /chat/completions is not extended."""
    chat_server.script("ok")
    with ChatClient(chat_server.url + "/chat/completions", "m", timeout=10.0) as client:
        client.complete(ASK)
    assert chat_server.paths == ["/v1/chat/completions"]


# -- empty replies ---------------------------------------------------------------------------


def test_no_choices_is_an_empty_reply(chat_server):
    """A reply with choices: [] raises EmptyReplyError (a FactoryError) and is not retried."""
    chat_server.script(Empty(no_choices=True), "never used")
    with make_client(chat_server) as client, pytest.raises(EmptyReplyError, match="no choices") as info:
        client.complete(ASK)
    assert isinstance(info.value, FactoryError)
    assert info.value.request_id == "req-1"
    assert len(chat_server.requests) == 1


def test_empty_content_names_the_finish_reason(chat_server):
    """Empty content cut by the token limit says so and suggests raising max_tokens."""
    chat_server.script(Empty(finish_reason="length"))
    with make_client(chat_server) as client, pytest.raises(EmptyReplyError) as info:
        client.complete(ASK)
    assert info.value.finish_reason == "length"
    assert "empty reply" in str(info.value)
    assert "max_tokens" in str(info.value)


# -- retries -----------------------------------------------------------------------------------


def test_429_honours_retry_after_then_succeeds(chat_server):
    """A 429 is retried after the Retry-After delay, and the reply counts both attempts."""
    chat_server.script(Status(429, {"Retry-After": "0.2"}, {"error": {"message": "slow down"}}), "ok")
    with make_client(chat_server, max_backoff=5.0) as client:
        started = time.monotonic()
        reply = client.complete(ASK)
        elapsed = time.monotonic() - started
    assert reply.content == "ok"
    assert reply.attempts == 2
    assert len(chat_server.requests) == 2
    assert elapsed >= 0.2


def test_retry_after_is_capped_by_max_backoff(chat_server):
    """A huge Retry-After waits no longer than max_backoff."""
    chat_server.script(Status(429, {"Retry-After": "3600"}), "ok")
    with make_client(chat_server, max_backoff=0.05) as client:
        started = time.monotonic()
        assert client.complete(ASK).content == "ok"
    assert time.monotonic() - started < 60  # far below the hour the server asked for


def test_timeout_then_success(chat_server):
    """A request the server stalls on times out and is retried."""
    chat_server.script(Stall(2.0), "ok")
    with make_client(chat_server, timeout=0.2) as client:
        started = time.monotonic()
        reply = client.complete(ASK)
    assert reply.content == "ok"
    assert reply.attempts == 2
    assert time.monotonic() - started >= 0.2  # it waited for the timeout, then asked again


def test_server_errors_until_retries_are_used_up(chat_server):
    """Repeated 500s end in a ChatError naming the URL, the status and what to do."""
    chat_server.script(*[Status(500, body="upstream exploded")] * 5)
    with make_client(chat_server, max_retries=2) as client, pytest.raises(ChatError) as info:
        client.complete(ASK)
    error = info.value
    assert len(chat_server.requests) == 3
    assert error.attempts == 3
    assert error.status == 500
    message = str(error)
    assert chat_server.url + "/chat/completions" in message
    assert "HTTP 500" in message
    assert "upstream exploded" in message
    assert "max_retries" in message


def test_timeouts_until_retries_are_used_up(chat_server):
    """A server that never answers in time ends in a ChatError that says to raise the timeout."""
    chat_server.script(Stall(2.0), Stall(2.0))
    with make_client(chat_server, timeout=0.2, max_retries=1) as client, pytest.raises(ChatError) as info:
        client.complete(ASK)
    assert info.value.status is None
    assert "raise timeout" in str(info.value)
    assert len(chat_server.requests) == 2


def test_client_errors_are_not_retried(chat_server):
    """A 404 fails at once, pointing at base_url and the model."""
    chat_server.script(Status(404, body={"error": {"message": "model not found"}}), "never used")
    with make_client(chat_server) as client, pytest.raises(ChatError) as info:
        client.complete(ASK)
    assert len(chat_server.requests) == 1
    assert info.value.status == 404
    assert "base_url" in str(info.value)
    assert "'test-model'" in str(info.value)


def test_nothing_listening_fails_at_once():
    """A connection refused before the server ever answered is not retried: one attempt, the URL, fatal."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    with ChatClient(url, "m", timeout=5, max_retries=4, backoff=5) as client:
        with pytest.raises(ChatError) as info:
            client.complete(ASK)
    assert info.value.attempts == 1 and info.value.fatal
    assert str(info.value).startswith(f"cannot connect to {url}/chat/completions (")
    assert "check that the server is running and that base_url" in str(info.value)


def test_server_gone_after_answering_is_retried():
    """Once the server has answered, a refused connection is a dropped server: retried, then reported."""
    server = ChatServer().start()
    server.script("hello")
    client = ChatClient(server.url, "m", timeout=5, max_retries=1, backoff=0.01)
    try:
        assert client.complete(ASK).content == "hello"
        server.stop()
        client.close()  # a new connection, to a port nobody listens on now
        with pytest.raises(ChatError, match="could not reach the server") as info:
            client.complete(ASK)
    finally:
        client.close()
    assert info.value.attempts == 2 and not info.value.fatal
    assert server.url in str(info.value)


def test_advice_names_the_callers_options(chat_server):
    """With option_names, advice names the caller's options (a command line's flags)."""
    chat_server.script(*[Status(503)] * 3)
    names = {"max_retries": "--max-retries", "base_url": "--base-url"}
    with make_client(chat_server, option_names=names) as client, pytest.raises(ChatError) as info:
        client.complete(ASK)
    assert "raise --max-retries" in str(info.value) and "max_retries" not in str(info.value)


def test_body_that_is_not_json(chat_server):
    """A 200 whose body is not JSON is an error that says the URL may not be an OpenAI API."""
    chat_server.script(Status(200, body="<html>login</html>"))
    with make_client(chat_server) as client, pytest.raises(ChatError, match="not JSON"):
        client.complete(ASK)


def test_jitter_is_reproducible_with_a_seed():
    """The same jitter_seed gives the same backoff delays, each within half to all of the base."""

    def delays(seed):
        client = ChatClient("http://127.0.0.1:9/v1", "m", backoff=0.1, max_backoff=10, jitter_seed=seed)
        return [client._delay(n, None) for n in range(5)]

    first, again, other = delays(7), delays(7), delays(8)
    assert first == again
    assert first != other
    for n, delay in enumerate(first):
        base = 0.1 * 2**n
        assert base / 2 <= delay <= base


def test_retry_after_formats():
    """Retry-After is read as seconds or as an HTTP date; junk is ignored."""
    assert _parse_retry_after("3") == 3.0
    assert _parse_retry_after("0.5") == 0.5
    assert _parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert _parse_retry_after("soon") is None
    assert _parse_retry_after(None) is None


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"max_in_flight": 0}, "max_in_flight"),
        ({"max_retries": -1}, "max_retries"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_bad_settings_are_refused(kwargs, needle):
    """Settings that cannot work raise a FactoryError naming the setting."""
    with pytest.raises(FactoryError, match=needle):
        ChatClient("http://127.0.0.1:9/v1", "m", **kwargs)


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/v1", "127.0.0.1:8000/v1", "http://", ""])
def test_a_url_that_is_not_http_is_refused_before_any_request(url):
    """httpx refuses such a URL on every attempt; it fails once, at once, naming the caller's option."""
    with pytest.raises(FactoryError, match=r"^--base-url .*(is not an http:// or https:// URL|is empty)"):
        ChatClient(url, "m", option_names={"base_url": "--base-url"})
    with pytest.raises(FactoryError, match=r"^--model is empty"):
        ChatClient("http://127.0.0.1:9/v1", "", option_names={"model": "--model"})


# -- many requests ---------------------------------------------------------------------------


def echo(delay: float = 0.0):
    """A script item answering each request with its own last message, after a delay."""
    return lambda body: Reply(body["messages"][-1]["content"], delay=delay)


def test_complete_many_bounds_in_flight_and_keeps_order(chat_server):
    """At most max_in_flight requests reach the server at once; results come in input order."""
    chat_server.script(*[echo(delay=0.1)] * 6)
    asks = [[{"role": "user", "content": f"batch {i}"}] for i in range(6)]
    with make_client(chat_server, max_in_flight=2) as client:
        replies = list(client.complete_many(asks, seed=5))
    assert [r.content for r in replies] == [f"batch {i}" for i in range(6)]
    assert chat_server.max_in_flight == 2
    assert {body["seed"] for body in chat_server.requests} == {5}


def test_complete_many_yields_errors_in_place(chat_server):
    """A failed request yields its ChatError at its position; the others still succeed."""

    def answer(body):
        content = body["messages"][-1]["content"]
        return Status(400, body="bad request") if content == "bad" else Reply(content)

    chat_server.script(*[answer] * 3)
    asks = [[{"role": "user", "content": c}] for c in ("one", "bad", "three")]
    with make_client(chat_server) as client:
        results = list(client.complete_many(asks))
    assert results[0].content == "one"
    assert isinstance(results[1], ChatError) and results[1].status == 400
    assert results[2].content == "three"


def test_chat_requests_carry_their_own_seed(chat_server):
    """A ChatRequest's seed wins over the shared one."""
    chat_server.script(*[echo()] * 2)
    requests = [ChatRequest([{"role": "user", "content": "a"}], seed=11), [{"role": "user", "content": "b"}]]
    with make_client(chat_server) as client:
        list(client.complete_many(requests, seed=99))
    seeds = {body["messages"][0]["content"]: body["seed"] for body in chat_server.requests}
    assert seeds == {"a": 11, "b": 99}


def test_in_flight_bound_holds_across_threads(chat_server):
    """Threads sharing one client never have more than max_in_flight requests at the server."""
    chat_server.script(*[echo(delay=0.05)] * 4)
    with make_client(chat_server, max_in_flight=1) as client:
        threads = [
            threading.Thread(target=client.complete, args=([{"role": "user", "content": str(i)}],))
            for i in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=5)
    assert len(chat_server.requests) == 4
    assert chat_server.max_in_flight == 1


# -- the API key -----------------------------------------------------------------------------


def test_key_is_sent_but_never_leaked(chat_server, caplog):
    """The key reaches the server, but not errors, reprs or logs, even when the server echoes it."""
    caplog.set_level(logging.DEBUG)
    chat_server.script(
        Status(500, body=f"backend error for key {SECRET}"),
        Status(401, body={"error": {"message": f"Incorrect API key provided: {SECRET}"}}),
    )
    client = make_client(chat_server, api_key=SECRET)
    with client, pytest.raises(ChatError) as info:
        client.complete(ASK)
    assert chat_server.headers[0]["authorization"] == f"Bearer {SECRET}"
    error = info.value
    assert error.status == 401
    assert "***" in str(error)
    for text in (str(error), repr(error), repr(client), str(client), caplog.text):
        assert SECRET not in text
    assert "retry 1 of 2" in caplog.text  # the retry was logged, so the log check saw something


def test_key_comes_from_the_named_environment_variable(chat_server, monkeypatch):
    """With no api_key, the key is read from api_key_env; repr names the variable, not the value."""
    monkeypatch.setenv("PERSONA_LLM_KEY", SECRET)
    chat_server.script(Status(403, body="forbidden"))
    client = make_client(chat_server, api_key_env="PERSONA_LLM_KEY")
    with client, pytest.raises(ChatError) as info:
        client.complete(ASK)
    assert chat_server.headers[0]["authorization"] == f"Bearer {SECRET}"
    assert "$PERSONA_LLM_KEY" in repr(client)
    assert "$PERSONA_LLM_KEY" in str(info.value)
    assert SECRET not in repr(client) + str(info.value)


def test_missing_key_is_reported_on_401(chat_server, monkeypatch):
    """With no key at all, no Authorization header is sent and a 401 says which variable to set."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    chat_server.script(Status(401))
    with make_client(chat_server) as client, pytest.raises(ChatError, match=r"set \$OPENAI_API_KEY"):
        client.complete(ASK)
    assert "authorization" not in chat_server.headers[0]


@contextlib.contextmanager
def _sending(head: bytes, chunk: bytes, count: int, pause: float = 0.0):
    """A server on 127.0.0.1 answering every POST with `head` (status line and headers), then `chunk`
    `count` times, `pause` seconds apart: a download, a proxy gone wrong, or a server dripping bytes."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_args):
            pass

        def do_POST(self):  # noqa: N802 - the name http.server calls
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.wfile.write(head)
            try:
                for _ in range(count):
                    self.wfile.write(chunk)
                    self.wfile.flush()
                    time.sleep(pause)
            except OSError:  # the client stopped reading: what it should do
                pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


OK_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"


@pytest.mark.parametrize(
    ("head", "says"),
    [
        (OK_HEAD + b"content-length: 9000000000\r\n\r\n", "a body of 9,000,000,000 bytes"),
        (OK_HEAD + b"connection: close\r\n\r\n", "a body of over 20,000,000 bytes"),
    ],
)
def test_a_body_too_big_for_an_answer_is_not_read_to_its_end(head, says):
    """An endless body was read whole into memory, and never ended: it is refused once past the limit."""
    with _sending(head, b"x" * 65536, 400) as url:  # 26 MB on offer
        with ChatClient(url, "test-model", max_retries=3, timeout=10.0) as client, pytest.raises(ChatError) as info:
            client.complete(ASK)
    assert says in str(info.value) and "OpenAI-compatible" in str(info.value)
    assert info.value.attempts == 1  # not a busy server: asking again cannot help


def test_a_body_dripping_a_byte_at_a_time_times_out():
    """httpx's timeout bounds each wait for bytes, so a byte every 50 ms held the request for as long as the
    server liked; the whole body must now arrive within the timeout, or it is retried as a stall."""
    with _sending(OK_HEAD + b"connection: close\r\n\r\n", b" ", 400, pause=0.05) as url:
        options = {"timeout": 0.5, "max_retries": 1, "backoff": 0.01, "max_backoff": 0.01}
        with ChatClient(url, "test-model", **options) as client, pytest.raises(ChatError) as info:
            client.complete(ASK)
    assert "no answer within 0.5 s" in str(info.value) and info.value.attempts == 2


def test_a_body_its_encoding_does_not_decode_is_a_chat_error():
    """A gzip header over bytes that are not gzip escaped as httpx.DecodingError: an internal error."""
    head = OK_HEAD + b"content-encoding: gzip\r\ncontent-length: 10\r\n\r\n"
    with _sending(head, b"notgzip!!!", 1) as url:
        with ChatClient(url, "test-model", max_retries=2, timeout=10.0) as client, pytest.raises(ChatError) as info:
            client.complete(ASK)
    assert "got an answer that cannot be read (DecodingError" in str(info.value)
    assert "OpenAI-compatible API" in str(info.value) and info.value.attempts == 1


def test_a_password_in_the_url_is_masked_in_reprs_and_errors(chat_server):
    """http://user:password@host/v1 sends the password, and shows it nowhere."""
    from profiles import EmbeddingClient, LLMProfileFactory

    url = f"http://ada:{SECRET}@127.0.0.1:{free_port()}/v1"
    client = ChatClient(url, "test-model", max_retries=0, timeout=5.0)
    shown = [
        repr(client),
        repr(EmbeddingClient(url, "test-model")),
        repr(LLMProfileFactory(url, "test-model", rules="r", count=1)),
    ]
    with client, pytest.raises(ChatError) as refused:
        client.complete(ASK)
    shown += [str(refused.value), str(refused.value.url)]
    served = chat_server.url.replace("http://", f"http://ada:{SECRET}@")
    chat_server.script(Status(500), Status(500))
    with ChatClient(served, "test-model", max_retries=1, backoff=0.01, timeout=10.0) as failing:
        with pytest.raises(ChatError) as failed:
            failing.complete(ASK)
    shown += [str(failed.value), str(failed.value.url)]
    for text in shown:
        assert SECRET not in text and "ada:***@127.0.0.1" in text, text
