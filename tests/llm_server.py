"""A real LLM server on 127.0.0.1 that replays scripted replies, for tests.

Testing clients against mocks would miss what breaks in practice: headers, status codes, timeouts
on a real socket, concurrency, and what the official ``openai`` and ``anthropic`` clients put on
the wire. This server speaks enough of three protocols, each also without the ``/v1`` prefix:

- OpenAI Chat Completions, ``POST /v1/chat/completions``;
- OpenAI Responses, ``POST /v1/responses``;
- Anthropic Messages, ``POST /v1/messages``;

and answers each request with the next scripted item, in the shape of the API asked:

- a string: a normal reply with that text (with ``id``, ``model``, usage and an ``x-request-id``
  header), or a :class:`Reply` to set the finish reason, a delay, etc.;
- a :class:`ToolCall`: the model calls that tool with those arguments;
- :data:`FROM_SCHEMA`: a JSON reply built from the output schema the request asks for;
- a :class:`Status`: that status code with optional headers and body (429 with ``Retry-After``, 500);
- a :class:`Stall`: no answer for longer than the client waits (a timeout);
- an :class:`Empty`: a 200 with ``choices: []`` or with empty content;
- a callable taking the request body and returning one of the above, to answer by content.

The replies validate against the clients' own response models (``_strict_response_validation``).
A Chat Completions request with ``stream: true`` gets the same reply as Server-Sent Events
(content in two chunks, usage when ``stream_options.include_usage``); other APIs do not stream.

``ChatServer(default=item)`` answers with `item` once the script is used up (a callable that
writes personas, say), and ``max_requests`` raises the bound for long runs.

``POST /v1/embeddings`` (also ``/embeddings``) answers ``{"input": [texts]}`` with one vector per
text from ``embed(text)``: by default counts of hashed words, so texts with the same words point
the same way whatever their order. Its request bodies go to ``embedding_requests``.

It records every request body (parsed, and the raw bytes), its headers and path, and the highest
number of requests handled at once. It serves at most :data:`MAX_REQUESTS` requests and stops
when the test ends.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FROM_SCHEMA",
    "MAX_REQUESTS",
    "ChatServer",
    "Empty",
    "Reply",
    "Stall",
    "Status",
    "ToolCall",
    "word_embedding",
]

#: Requests one server answers before refusing all others, so a retry loop gone wrong ends.
MAX_REQUESTS = 200

#: Paths that reach the chat endpoint: base URLs with and without ``/v1`` both work.
CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})

#: Each path the server answers, and the API it speaks there.
API_PATHS = {
    **{path: "openai-chat" for path in CHAT_PATHS},
    "/v1/responses": "openai-responses",
    "/responses": "openai-responses",
    "/v1/messages": "anthropic",
    "/messages": "anthropic",
}

#: Paths that reach the embeddings endpoint.
EMBEDDING_PATHS = frozenset({"/v1/embeddings", "/embeddings"})

#: Length of the default embeddings.
EMBEDDING_SIZE = 64


def word_embedding(text: str) -> list[float]:
    """Counts of the text's words hashed into `EMBEDDING_SIZE` buckets: same words, same direction."""
    vector = [0.0] * EMBEDDING_SIZE
    for word in text.lower().split():
        vector[zlib.crc32(word.strip(".,;:!?").encode("utf-8")) % EMBEDDING_SIZE] += 1.0
    return vector


@dataclass(frozen=True)
class Reply:
    """A successful chat completion."""

    content: str
    finish_reason: str = "stop"
    model: str | None = None  # None: echo the model asked for
    delay: float = 0.0  # seconds to wait before answering, to make requests overlap
    request_id_header: bool = True  # False: only the body's ``id`` names the request


@dataclass(frozen=True)
class Status:
    """An HTTP error status, e.g. ``Status(429, {"Retry-After": "0.05"})``."""

    code: int
    headers: dict[str, str] = field(default_factory=dict)
    body: str | dict[str, Any] = ""


@dataclass(frozen=True)
class Stall:
    """Hold the request for ``seconds`` (longer than the client's timeout) before answering."""

    seconds: float = 2.0


@dataclass(frozen=True)
class Empty:
    """A 200 with no usable reply: ``choices: []`` or empty content."""

    no_choices: bool = False
    finish_reason: str = "stop"


@dataclass(frozen=True)
class ToolCall:
    """A reply in which the model calls tool ``name`` with ``arguments``."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


class _FromSchema:
    """Answer with a JSON value built from the output schema the request asks for."""

    def __repr__(self) -> str:
        return "FROM_SCHEMA"


FROM_SCHEMA = _FromSchema()

Item = str | Reply | Status | Stall | Empty | ToolCall | _FromSchema | Callable[[dict[str, Any]], Any]


class ChatServer:
    """A scripted chat-completions server; use as a context manager or call start() and stop()."""

    def __init__(
        self,
        *,
        default: Item | None = None,
        max_requests: int = MAX_REQUESTS,
        embed: Callable[[str], list[float]] = word_embedding,
    ) -> None:
        self._default = default
        self._max_requests = max_requests
        self._embed = embed
        self.embedding_requests: list[dict[str, Any]] = []
        self._script: deque[Item] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._in_flight = 0
        self._count = 0
        self.requests: list[dict[str, Any]] = []
        #: The bytes of each request body, as they came over the socket.
        self.raw: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.max_in_flight = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None
        host, port = self._httpd.server_address[:2]
        self.root_url = f"http://{host}:{port}"
        self.url = self.root_url + "/v1"

    def script(self, *items: Item) -> ChatServer:
        """Queue replies, answered in order, one per request."""
        with self._lock:
            self._script.extend(items)
        return self

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._script)

    def start(self) -> ChatServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes stalled handlers
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------------------

    def _next(self, body: dict[str, Any]) -> tuple[int, Item | None]:
        with self._lock:
            self._count += 1
            number = self._count
            if number > self._max_requests:
                return number, None
            self.requests.append(body)
            item = self._script.popleft() if self._script else self._default
        while callable(item):
            item = item(body)
        return number, item

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                path = self.path.split("?", 1)[0].rstrip("/")
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                api = API_PATHS.get(path)
                if api is None and path not in EMBEDDING_PATHS:
                    self._send(404, {"error": {"message": f"no route {path}"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, _error(api, "body is not JSON"))
                    return
                if path in EMBEDDING_PATHS:
                    self._embeddings(body)
                    return
                if not isinstance(body, dict) or (body.get("stream") and api != "openai-chat"):
                    self._send(400, _error(api, "expected a JSON object for a non-streaming request"))
                    return
                self._stream = bool(body.get("stream"))
                self._usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self._api = api
                with server._lock:
                    server.paths.append(path)
                    server.raw.append(raw)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                self._counted = True
                try:
                    number, item = server._next(body)
                    self._answer(number, item, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to tell it
                finally:
                    self._leave()

            def _embeddings(self, body: dict[str, Any]) -> None:
                texts = body.get("input")
                if isinstance(texts, str):
                    texts = [texts]
                if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
                    self._send(400, {"error": {"message": "input must be a text or a list of texts"}})
                    return
                with server._lock:
                    server.embedding_requests.append(body)
                data = [
                    {"object": "embedding", "index": index, "embedding": server._embed(text)}
                    for index, text in enumerate(texts)
                ]
                self._send(200, {"object": "list", "data": data, "model": body.get("model", "unknown")})

            def _leave(self) -> None:
                # called before the answer goes out: once the client has it, it may send the next
                # request before this thread runs again, and that must not count as overlap
                if getattr(self, "_counted", False):
                    self._counted = False
                    with server._lock:
                        server._in_flight -= 1

            def _answer(self, number: int, item: Item | None, body: dict[str, Any]) -> None:
                if item is None:
                    self._send(410, {"error": {"message": "no scripted reply left for this request"}})
                    return
                if isinstance(item, str):
                    item = Reply(item)
                if isinstance(item, Status):
                    payload = item.body if isinstance(item.body, str) else json.dumps(item.body)
                    self._send(item.code, payload, item.headers)
                    return
                if isinstance(item, Stall):
                    if server._stopping.wait(item.seconds):
                        return
                    item = Reply("too late")
                model = body.get("model", "unknown")
                request_id = f"req-{number}"
                headers = {"x-request-id": request_id, "request-id": request_id}
                if self._api != "openai-chat" or isinstance(item, (ToolCall, _FromSchema)):
                    if isinstance(item, Empty):
                        item = Reply("")
                    if isinstance(item, Reply) and item.delay and server._stopping.wait(item.delay):
                        return
                    self._send(200, _reply(self._api, number, model, item, body), headers)
                    return
                if isinstance(item, Empty):
                    message = {"role": "assistant", "content": ""}
                    choices = (
                        []
                        if item.no_choices
                        else [{"index": 0, "message": message, "finish_reason": item.finish_reason}]
                    )
                    self._send(200, _completion(number, model, choices), headers)
                    return
                if not isinstance(item, Reply):
                    raise TypeError(f"cannot answer with {item!r}")
                if item.delay and server._stopping.wait(item.delay):
                    return
                choices = [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": item.content},
                        "finish_reason": item.finish_reason,
                    }
                ]
                self._send(
                    200,
                    _completion(number, item.model or model, choices),
                    headers if item.request_id_header else {},
                )

            def _send(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                if code == 200 and getattr(self, "_stream", False) and isinstance(payload, dict):
                    self._send_events(payload, headers)
                    return
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode("utf-8")
                self._leave()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _send_events(self, completion: dict[str, Any], headers: dict[str, str] | None) -> None:
                """A chat completion as Server-Sent Events, the way the API streams one."""
                self._leave()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                for chunk in _chunks(completion, self._usage):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode("utf-8") + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.close_connection = True

        return Handler


def _chunks(completion: dict[str, Any], usage: bool) -> list[dict[str, Any]]:
    """The `chat.completion.chunk`s a streamed reply arrives in: role, the content in two parts, the end."""
    base = {key: completion[key] for key in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    chunks = []
    for choice in completion.get("choices") or []:
        message = choice.get("message") or {}
        index = choice.get("index", 0)
        chunks.append({**base, "choices": [{"index": index, "delta": {"role": "assistant", "content": ""},
                                            "finish_reason": None}]})
        content = message.get("content") or ""
        middle = len(content) // 2
        for part in (content[:middle], content[middle:]):
            if part:
                chunks.append({**base, "choices": [{"index": index, "delta": {"content": part},
                                                    "finish_reason": None}]})
        for number, call in enumerate(message.get("tool_calls") or []):
            delta = {"tool_calls": [{"index": number, "id": call["id"], "type": "function",
                                     "function": call["function"]}]}
            chunks.append({**base, "choices": [{"index": index, "delta": delta, "finish_reason": None}]})
        end = {"index": index, "delta": {}, "finish_reason": choice.get("finish_reason")}
        chunks.append({**base, "choices": [end]})
    if usage:
        chunks.append({**base, "choices": [], "usage": completion.get("usage")})
    return chunks


def _error(api: str, message: str) -> dict[str, Any]:
    if api == "anthropic":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


def output_schema_of(api: str, body: dict[str, Any]) -> Any:
    """The JSON Schema a request asks its reply to follow, or None."""
    if api == "openai-chat":
        spec = (body.get("response_format") or {}).get("json_schema") or {}
    elif api == "openai-responses":
        spec = (body.get("text") or {}).get("format") or {}
    else:
        spec = (body.get("output_config") or {}).get("format") or {}
    return spec.get("schema")


def example_from_schema(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """A small JSON value that fits the common parts of a JSON Schema (for canned replies only)."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > 8:
        return None
    if isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/"):
        target: Any = root
        for part in schema["$ref"][2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return example_from_schema(target, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    if schema.get("anyOf"):
        variants = [item for item in schema["anyOf"] if not (isinstance(item, dict) and item.get("type") == "null")]
        return example_from_schema((variants or schema["anyOf"])[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((item for item in kind if item != "null"), "null")
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        properties = schema.get("properties") or {}
        return {key: example_from_schema(value, root, depth + 1) for key, value in properties.items()}
    if kind == "array":
        count = max(int(schema.get("minItems", 1) or 0), 0)
        return [example_from_schema(schema.get("items", {"type": "string"}), root, depth + 1) for _ in range(count)]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "ok"


def _reply(api: str, number: int, model: str, item: Any, body: dict[str, Any]) -> dict[str, Any]:
    """A Responses or Messages reply (or a Chat tool call or schema reply) for a scripted item."""
    call = item if isinstance(item, ToolCall) else None
    if isinstance(item, _FromSchema):
        text = json.dumps(example_from_schema(output_schema_of(api, body)))
    elif isinstance(item, Reply):
        text = item.content
    else:
        text = ""
    if api == "openai-chat":
        message: dict[str, Any] = {"role": "assistant", "content": None if call else text, "refusal": None}
        if call:
            message["tool_calls"] = [
                {"id": f"call_{number}", "type": "function",
                 "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}
            ]
        finish = "tool_calls" if call else "stop"
        return _completion(number, model, [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}])
    if api == "openai-responses":
        if call:
            output = [{"type": "function_call", "id": f"fc_{number}", "call_id": f"call_{number}", "name": call.name,
                       "arguments": json.dumps(call.arguments), "status": "completed"}]
        else:
            output = [{"type": "message", "id": f"msg_{number}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]}]
        return {
            "id": f"resp_{number}", "object": "response", "created_at": 1_700_000_000 + number,
            "status": "completed", "model": model, "output": output, "error": None, "incomplete_details": None,
            "instructions": body.get("instructions"), "metadata": {}, "parallel_tool_calls": True,
            "temperature": body.get("temperature"), "top_p": body.get("top_p"), "tool_choice": "auto",
            "tools": body.get("tools") or [], "text": body.get("text") or {"format": {"type": "text"}},
            "max_output_tokens": body.get("max_output_tokens"),
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                      "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 30},
        }
    if call:
        content = [{"type": "tool_use", "id": f"toolu_{number}", "name": call.name, "input": call.arguments}]
    else:
        content = [{"type": "text", "text": text}]
    return {
        "id": f"msg_{number}", "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": "tool_use" if call else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 20},
    }


def _completion(number: int, model: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_700_000_000 + number,
        "model": model,
        "choices": choices,
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    }
