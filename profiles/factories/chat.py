"""A small client for OpenAI-compatible chat-completions endpoints, used by the LLM profile factory.

The factory asks a model for personas in batches. That needs more care than one ``POST``: rate
limits (429 with ``Retry-After``), flaky gateways (5xx), timeouts and dropped connections are
retried with exponential backoff and jitter; at most ``max_in_flight`` requests run at once, across
threads; a reply with no content is reported as such, not as an empty persona list; and every error
says which URL failed, how, and what to do, without ever carrying the API key.

httpx is imported inside the client so that ``import profiles`` stays light.
"""

from __future__ import annotations

import email.utils
import logging
import math
import os
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from profiles.bodies import read_bounded
from profiles.errors import FactoryError
from profiles.jsonlines import escape_surrogates

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ChatClient",
    "ChatError",
    "ChatReply",
    "ChatRequest",
    "EmptyReplyError",
    "Message",
]

logger = logging.getLogger(__name__)

#: One chat message as the API takes it: ``{"role": "user", "content": "..."}``.
Message = Mapping[str, Any]

#: Statuses worth another try: the server may answer differently a moment later.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})

#: How much of a server's error body an error message quotes.
MAX_QUOTED_BODY = 300

_MASK = "***"


class ChatError(FactoryError):
    """Raised when a chat-completions request fails; says which URL, how, and what to do."""

    def __init__(
        self,
        message: str,
        *,
        url: str = "",
        status: int | None = None,
        attempts: int = 1,
        request_id: str | None = None,
        fatal: bool = False,
    ) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.attempts = attempts
        self.request_id = request_id
        #: True when asking again cannot help (nothing listens at the URL): a run should stop at once.
        self.fatal = fatal


class EmptyReplyError(ChatError):
    """Raised when the endpoint answered but the reply has no choices or no content."""

    def __init__(self, message: str, *, finish_reason: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.finish_reason = finish_reason


@dataclass(frozen=True)
class ChatReply:
    """One model answer, with what is needed to trace it back to its request."""

    content: str
    #: The server's id for the request: the ``x-request-id`` header, else the body's ``id``.
    request_id: str | None
    #: The model that answered, as the server names it (may differ from the one asked for).
    model: str | None
    finish_reason: str | None
    #: Token counts as the server reports them; left out of equality and hashing (a dict, and
    #: not part of what the reply says).
    usage: Mapping[str, Any] | None = field(default=None, hash=False, compare=False)
    #: How many HTTP attempts it took (1 when nothing was retried).
    attempts: int = 1


@dataclass(frozen=True)
class ChatRequest:
    """One request for :meth:`ChatClient.complete_many` when requests differ in more than messages."""

    messages: Sequence[Message]
    seed: int | None = None
    temperature: float | None = None
    response_format: Mapping[str, Any] | None = None


def _parse_retry_after(value: str | None) -> float | None:
    """Return the delay a ``Retry-After`` header asks for, in seconds, or None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))  # the spec says whole seconds; fractions are harmless
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _kind(value: Any) -> str:
    """What a wrong value is, for an error: its type and a short form of it."""
    shown = repr(value)
    return f"{type(value).__name__} {shown if len(shown) <= 60 else shown[:57] + '...'}"


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


#: The longest timeout or backoff a client takes, in seconds.
MAX_SECONDS = 86_400


def _number(value: Any) -> bool:
    # NaN and infinity are no number of seconds: httpx and the clock refuse them at the first request
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_types(
    owner: str, names: Mapping[str, str], checks: Iterable[tuple[str, Any, str, Callable[[Any], bool]]]
) -> None:
    """Refuse an argument of the wrong type with what it takes, before it fails deep inside.

    From Python nothing checks the types the signature gives; a dict for `timeout` otherwise
    failed as "'<=' not supported". `names` maps an option to what the caller calls it (`--timeout`).

    Raises:
        FactoryError: the first argument of the wrong type, named with what it takes.
    """
    for option, value, takes, fits in checks:
        if not fits(value):
            raise FactoryError(f"{owner}: {names.get(option, option)} must be {takes}, got {_kind(value)}.")


class ChatClient:
    """A thread-safe client for one model on an OpenAI-compatible ``/chat/completions`` endpoint.

    ``base_url`` is what the OpenAI SDK takes (``http://host:8000/v1``); ``/chat/completions`` is
    appended unless the URL already ends with it. The API key is ``api_key`` or, when that is None,
    the environment variable named by ``api_key_env``; with neither, no ``Authorization`` header is
    sent (local servers seldom need one). The key never appears in reprs, logs or errors.

    A request is tried up to ``1 + max_retries`` times. Retried: 408, 409, 429 and 5xx statuses,
    timeouts and connection errors, except that a connection refused before this client ever got
    an answer from the server fails at once: nothing listens at the URL, and waiting will not
    start a server (the error is ``fatal``). The wait before retry ``n`` (from 0) is the server's
    ``Retry-After`` when it sends one, else ``backoff * 2**n`` with jitter (between half and all of
    it), never more than ``max_backoff``. ``jitter_seed`` makes the jitter reproducible.
    At most ``max_in_flight`` HTTP requests run at once through one client, whichever thread sends
    them; a request waiting to retry does not hold a slot.

    ``option_names`` maps the client's option names (``timeout``, ``max_retries``,
    ``max_in_flight``, ``base_url``, ``api_key``, ``api_key_env``) to what the caller calls them,
    e.g. ``{"timeout": "--timeout"}`` for a command line, so that advice in errors names options
    the user can actually set.
    """

    #: Most bytes an answer's body may hold; more is not a chat completion.
    max_body_bytes = 20_000_000

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_in_flight: int = 4,
        jitter_seed: int | None = None,
        headers: Mapping[str, str] | None = None,
        option_names: Mapping[str, str] | None = None,
    ) -> None:
        if option_names is not None and not (
            isinstance(option_names, Mapping)
            and all(isinstance(item, str) for pair in option_names.items() for item in pair)
        ):
            raise FactoryError(
                f"option_names must be a mapping of option to its name, such as {{'base_url': '--base-url'}}, "
                f"got {_kind(option_names)}."
            )
        names = dict(option_names or {})
        url_option, model_option = names.get("base_url", "base_url"), names.get("model", "model")
        check_types("ChatClient", names, (
            ("base_url", base_url, "text, the server's URL such as 'http://localhost:8000/v1'", _text_or_none),
            ("model", model, "text, the model's name", _text_or_none),
            ("api_key", api_key, "text or None", _text_or_none),
            ("api_key_env", api_key_env, "text, the name of an environment variable", _text),
            ("timeout", timeout, "a number of seconds", _number),
            ("backoff", backoff, "a number of seconds", _number),
            ("max_backoff", max_backoff, "a number of seconds", _number),
            ("max_retries", max_retries, "a whole number", _whole),
            ("max_in_flight", max_in_flight, "a whole number", _whole),
            ("jitter_seed", jitter_seed, "a whole number or None", lambda value: value is None or _whole(value)),
            ("headers", headers, "a mapping of header names to texts, or None",
             lambda value: value is None or (isinstance(value, Mapping) and all(
                 isinstance(item, str) for pair in value.items() for item in pair))),
        ))
        if not base_url:
            raise FactoryError(f"{url_option} is empty; give the server's URL, such as 'http://localhost:8000/v1'.")
        scheme, _, rest = base_url.partition("://")
        if scheme.lower() not in ("http", "https") or not rest.strip("/"):
            # httpx would refuse it on every attempt, each retried as if the server were busy
            raise FactoryError(
                f"{url_option} {base_url!r} is not an http:// or https:// URL; give the server's URL, such as "
                "'http://localhost:8000/v1'."
            )
        if not model:
            raise FactoryError(f"{model_option} is empty; name the model to ask, such as 'gpt-4o-mini'.")
        if max_retries < 0:
            raise FactoryError(f"max_retries must be 0 or more, got {max_retries}.")
        if max_in_flight < 1:
            raise FactoryError(f"max_in_flight must be 1 or more, got {max_in_flight}.")
        if timeout <= 0:
            raise FactoryError(f"timeout must be a positive number of seconds, got {timeout}.")
        for option, seconds in (("timeout", timeout), ("backoff", backoff), ("max_backoff", max_backoff)):
            if seconds > MAX_SECONDS:  # surely a mistake; the clock's waits overflow long before 1e308
                raise FactoryError(
                    f"{names.get(option, option)} must be at most {MAX_SECONDS:,} seconds (a day), got {seconds:g}."
                )
        self.base_url = base_url.rstrip("/")
        self.url = (
            self.base_url
            if self.base_url.endswith("/chat/completions")
            else self.base_url + "/chat/completions"
        )
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.max_in_flight = int(max_in_flight)
        self._api_key = api_key if api_key is not None else (os.environ.get(api_key_env) or None)
        #: A password written into the URL (http://user:password@host/v1), masked like the key.
        self._url_password = _url_password(self.base_url)
        self._key_source = (
            "given" if api_key is not None else (f"${api_key_env}" if self._api_key else "none")
        )
        self._extra_headers = dict(headers or {})
        self._rng = random.Random(jitter_seed)
        self._rng_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self.max_in_flight)
        self._http: httpx.Client | None = None
        self._http_lock = threading.Lock()
        self._names = dict(option_names or {})
        #: Set once the server has answered anything: from then on a refused connection is retried.
        self._reached = False

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(url={self._scrub(self.url)!r}, model={self.model!r}, "
            f"api_key={self._key_source}, max_in_flight={self.max_in_flight})"
        )

    def _option(self, name: str) -> str:
        """What the caller calls one of the client's options, for advice in an error."""
        return self._names.get(name, name)

    # -- lifecycle -------------------------------------------------------------------------

    def _client(self) -> httpx.Client:
        with self._http_lock:
            if self._http is None:
                import httpx  # lazy: keeps `import profiles` light

                headers = {"Content-Type": "application/json", **self._extra_headers}
                if self._api_key:
                    headers["Authorization"] = f"Bearer {self._api_key}"
                # The slots bound concurrency, not the pool: a pool limit would make a request
                # waiting for a connection fail with PoolTimeout, which looks like a slow server.
                limits = httpx.Limits(max_connections=None, max_keepalive_connections=self.max_in_flight)
                self._http = httpx.Client(headers=headers, timeout=self.timeout, limits=limits)
            return self._http

    def close(self) -> None:
        """Close the pooled connections; the client can still be used and reopens them."""
        with self._http_lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- requests --------------------------------------------------------------------------

    def complete(
        self,
        messages: Sequence[Message],
        *,
        seed: int | None = None,
        temperature: float | None = None,
        response_format: Mapping[str, Any] | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> ChatReply:
        """Send one chat request and return the model's reply, retrying what is worth retrying.

        Args:
            messages: the conversation, oldest first.
            seed: passed to the server for reproducible sampling, where it supports it.
            temperature: sampling temperature; the server's default when None.
            response_format: e.g. ``{"type": "json_object"}``.
            extra_body: more fields for the request body (``max_tokens``, ...).

        Raises:
            EmptyReplyError: the server answered with no choices or empty content.
            ChatError: the request failed for good (bad status, retries used up, unreadable body).
        """
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        if seed is not None:
            body["seed"] = seed
        if temperature is not None:
            body["temperature"] = temperature
        if response_format is not None:
            body["response_format"] = dict(response_format)
        if extra_body:
            body.update(extra_body)
        return self._send(body)

    def complete_many(
        self,
        requests: Iterable[Sequence[Message] | ChatRequest],
        *,
        seed: int | None = None,
        temperature: float | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> Iterator[ChatReply | ChatError]:
        """Run many requests, at most ``max_in_flight`` at once, yielding results in input order.

        Each item is a list of messages or a :class:`ChatRequest`, whose own ``seed``,
        ``temperature`` and ``response_format`` win over the ones given here. A request that fails
        yields its :class:`ChatError` instead of raising, so one bad request does not lose the
        others. The input is read lazily; stopping the iteration cancels requests not yet sent.
        """
        window: deque[Future[ChatReply | ChatError]] = deque()
        pool = ThreadPoolExecutor(max_workers=self.max_in_flight, thread_name_prefix="profiles-chat")
        try:
            for item in requests:
                if isinstance(item, ChatRequest):
                    kwargs = {
                        "seed": item.seed if item.seed is not None else seed,
                        "temperature": item.temperature if item.temperature is not None else temperature,
                        "response_format": item.response_format
                        if item.response_format is not None
                        else response_format,
                    }
                    messages = item.messages
                else:
                    kwargs = {"seed": seed, "temperature": temperature, "response_format": response_format}
                    messages = item
                window.append(pool.submit(self._complete_or_error, messages, kwargs))
                # read ahead a little so workers stay busy, but never the whole input
                while len(window) > 2 * self.max_in_flight:
                    yield window.popleft().result()
            while window:
                yield window.popleft().result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _complete_or_error(
        self, messages: Sequence[Message], kwargs: dict[str, Any]
    ) -> ChatReply | ChatError:
        try:
            return self.complete(messages, **kwargs)
        except ChatError as exc:
            return exc

    def _send(self, body: dict[str, Any]) -> ChatReply:
        import httpx

        client = self._client()
        url = self._scrub(self.url)
        attempts = 0
        while True:
            attempts += 1
            retry_after: float | None = None
            cause: Exception | None = None
            try:
                with self._slots, client.stream("POST", self.url, json=body) as streamed:
                    response = self._read_whole(streamed, attempts)
            except httpx.TimeoutException as exc:
                problem = f"no answer within {self.timeout:g} s ({type(exc).__name__})"
                advice = f"the server is slow or overloaded; raise {self._option('timeout')} or try again later"
                status, cause = None, exc
            except httpx.TransportError as exc:
                if isinstance(exc, httpx.ConnectError) and not self._reached:
                    # nothing has ever answered at this URL: retrying for half a minute only hides that
                    raise ChatError(
                        f"cannot connect to {url} ({self._scrub(str(exc)) or type(exc).__name__}); check that "
                        f"the server is running and that {self._option('base_url')} "
                        f"{self._scrub(self.base_url)!r} is right.",
                        url=url,
                        attempts=attempts,
                        fatal=True,
                    ) from exc
                problem = f"could not reach the server ({type(exc).__name__}: {self._scrub(str(exc))})"
                advice = f"check that the server is running and that {self._option('base_url')} is right"
                status, cause = None, exc
            except httpx.RequestError as exc:  # a body its content-encoding does not decode, say: not a busy server
                raise ChatError(
                    f"request to {url} got an answer that cannot be read ({type(exc).__name__}: "
                    f"{self._scrub(str(exc))}); check that {self._option('base_url')} points at an OpenAI-compatible "
                    "API, not a proxy or a download.",
                    url=url,
                    attempts=attempts,
                ) from exc
            else:
                self._reached = True
                status = response.status_code
                if status < 400:
                    return self._reply(response, attempts)
                if status not in RETRY_STATUSES:
                    raise self._status_error(response, attempts)
                retry_after = _parse_retry_after(response.headers.get("retry-after"))
                problem = f"HTTP {status}{self._quote_body(response)}"
                advice = (
                    f"the server is rate limiting; lower {self._option('max_in_flight')} or try again later"
                    if status == 429
                    else f"the server kept failing; try again later or raise {self._option('max_retries')}"
                )
            if attempts > self.max_retries:
                raise ChatError(
                    f"chat request to {url} failed after {attempts} attempt(s): {problem}; {advice}.",
                    url=url,
                    status=status,
                    attempts=attempts,
                ) from cause
            delay = self._delay(attempts - 1, retry_after)
            logger.info(
                "chat request to %s: %s; retry %d of %d in %.2f s",
                url,
                problem,
                attempts,
                self.max_retries,
                delay,
            )
            time.sleep(delay)

    def _read_whole(self, streamed: httpx.Response, attempts: int) -> httpx.Response:
        """The answer with its body read, no further than `max_body_bytes` and within `timeout` seconds.

        httpx's timeout bounds each wait for bytes, not the whole body: a server that drips a byte
        at a time, or streams without end (a download, a proxy gone wrong), would hold the run
        forever and fill its memory. Such a body times out like a stalled server, or is refused.
        """
        import httpx

        url = self._scrub(self.url)

        def refuse(size: str) -> ChatError:
            return ChatError(
                f"request to {url} answered HTTP {streamed.status_code} with a body of {size} bytes, more than "
                f"an answer holds ({self.max_body_bytes:,} at most); check that {self._option('base_url')} points "
                "at an OpenAI-compatible API.",
                url=url,
                status=streamed.status_code,
                attempts=attempts,
                request_id=streamed.headers.get("x-request-id"),
            )

        body = read_bounded(streamed, self.max_body_bytes, refuse, seconds=self.timeout)
        return httpx.Response(streamed.status_code, headers=streamed.headers, content=body, request=streamed.request)

    def _delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``retry`` (from 0)."""
        if retry_after is not None:
            return min(retry_after, self.max_backoff)
        base = min(self.backoff * (2**retry), self.max_backoff)
        with self._rng_lock:
            # "equal jitter": keeps at least half the backoff, spreads clients over the rest
            return base / 2 + self._rng.uniform(0, base / 2)

    def _reply(self, response: httpx.Response, attempts: int) -> ChatReply:
        url = self._scrub(self.url)
        request_id = response.headers.get("x-request-id")
        try:
            data = response.json()
        except ValueError:
            raise ChatError(
                f"chat request to {url} returned HTTP {response.status_code} but its body is not JSON"
                f"{self._quote_body(response)}; check that base_url points at an OpenAI-compatible API.",
                url=url,
                status=response.status_code,
                attempts=attempts,
                request_id=request_id,
            ) from None
        if not isinstance(data, dict):
            raise ChatError(
                f"chat request to {url} returned a JSON {type(data).__name__}, not an object; "
                "check that base_url points at an OpenAI-compatible API.",
                url=url,
                status=response.status_code,
                attempts=attempts,
                request_id=request_id,
            )
        request_id = request_id or (str(data["id"]) if data.get("id") else None)
        model = data.get("model") if isinstance(data.get("model"), str) else None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
        choices = data.get("choices")
        where = f"chat request to {url} (request id {request_id or 'unknown'})"
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise EmptyReplyError(
                f"{where} returned no choices; the model produced nothing. Try again, "
                "or check the server's logs for a filtered or failed generation.",
                url=url,
                status=response.status_code,
                attempts=attempts,
                request_id=request_id,
            )
        choice = choices[0]
        finish_reason = choice.get("finish_reason")
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # content parts: [{"type": "text", "text": "..."}, ...]
            content = "".join(
                part["text"]
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        if not isinstance(content, str) or not content.strip():
            hint = {
                "length": "the token limit was reached before any text; raise max_tokens",
                "content_filter": "the server's content filter removed the answer; rephrase the prompt",
            }.get(str(finish_reason), "try again, or rephrase the prompt")
            raise EmptyReplyError(
                f"{where} returned an empty reply (finish_reason={finish_reason!r}); {hint}.",
                url=url,
                status=response.status_code,
                attempts=attempts,
                request_id=request_id,
                finish_reason=finish_reason,
            )
        # a lone surrogate (a broken `\\ud800` escape) could be neither sent back nor written out
        return ChatReply(
            content=escape_surrogates(content),
            request_id=escape_surrogates(request_id) if request_id else request_id,
            model=escape_surrogates(model) if model else model,
            finish_reason=finish_reason if isinstance(finish_reason, str) else None,
            usage=usage,
            attempts=attempts,
        )

    def _status_error(self, response: httpx.Response, attempts: int) -> ChatError:
        url = self._scrub(self.url)
        status = response.status_code
        if status in (401, 403):
            where = self._option("api_key") if self._key_source == "given" else f"${self.api_key_env}"
            other = f"{self._option('api_key_env')} NAME" if "api_key_env" in self._names else "pass api_key"
            advice = (
                f"no API key was sent; set ${self.api_key_env} or {other}"
                if self._key_source == "none"
                else f"the API key (from {where}) was refused; check that it is valid for this server"
            )
        elif status == 404:
            advice = (
                f"check {self._option('base_url')} (it usually ends with '/v1') and that the server serves "
                f"model {self.model!r}"
            )
        else:
            advice = "the server refused the request; fix what it says above"
        return ChatError(
            f"chat request to {url} failed: HTTP {status}{self._quote_body(response)}; {advice}.",
            url=url,
            status=status,
            attempts=attempts,
            request_id=response.headers.get("x-request-id"),
        )

    def _quote_body(self, response: httpx.Response) -> str:
        text = response.text.strip()
        if not text:
            return ""
        if len(text) > MAX_QUOTED_BODY:
            text = text[:MAX_QUOTED_BODY] + "…"
        return f" (server said: {self._scrub(text)})"

    def _scrub(self, text: str) -> str:
        """Mask the API key wherever it might appear, e.g. echoed back in an error body or a URL."""
        if self._api_key and self._api_key in text:
            text = text.replace(self._api_key, _MASK)
        if self._url_password and f":{self._url_password}@" in text:  # the URL's own form, not every match
            text = text.replace(f":{self._url_password}@", f":{_MASK}@")
        return text


def _url_password(url: str) -> str | None:
    """The password in a URL's user part, as written there (percent-escapes kept), if it has one."""
    _, sep, rest = url.partition("://")
    credentials, at, _ = rest.partition("/")[0].rpartition("@")
    if not sep or not at or ":" not in credentials:
        return None
    return credentials.split(":", 1)[1] or None
