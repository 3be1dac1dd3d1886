"""What keeps the server shut: headers, the `Host` check, body limits, tokens, CSRF and sessions.

- Every response carries a strict Content-Security-Policy (scripts, styles and images from the
  server itself only; no inline script, no framing, forms post only here) and `nosniff`.
- A request naming another `Host` than the server's own names is refused, so a web page that
  rebinds its DNS name to 127.0.0.1 cannot read the studio.
- A body over the limit is refused with 413 before any route sees it, and one that has not
  arrived whole within `body_seconds` (a client stalling midway) with 408.
- Writes need the bearer token; the studio signs a browser in with it into a session cookie
  (an HMAC of the token, never the token itself). Its forms carry a signed CSRF token that must
  equal the cookie, and must come from the server's own origin: cookies on 127.0.0.1 are shared by
  every port, so SameSite alone would let a page on another local port post here.

Cookie names carry the port, so two servers on one machine do not overwrite each other's.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import logging
import os
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import anyio

from .settings import ServeSettings

__all__ = [
    "CSP",
    "CSRF_COOKIE",
    "SESSION_COOKIE",
    "Guard",
    "Signer",
    "bearer_token",
    "cookie_name",
    "same_origin",
    "tokens_match",
]

#: The policy every response gets. `img-src data:` because the API page's stylesheet draws its
#: icons as data: images; nothing else is relaxed.
CSP = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)

#: Cookie holding the studio's CSRF token (the port is appended).
CSRF_COOKIE = "profiles_csrf"
#: Cookie holding a signed-in studio session (the port is appended).
SESSION_COOKIE = "profiles_session"

log = logging.getLogger("profiles.serve")

_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: Methods whose bodies are read (and bounded) before the application sees them.
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Guard:
    """Pure ASGI middleware: the `Host` check, the body limit, the security headers, and the last
    word on an unexpected error.

    Pure ASGI rather than Starlette's `BaseHTTPMiddleware`: it costs one function call per
    request, and a streamed answer passes through untouched. An exception no handler took is
    answered here with a 500 naming only its type, and logged the same way (its message could
    quote a secret; `PROFILES_DEBUG=1` logs the traceback); the server goes on serving.
    """

    def __init__(self, app: Callable[..., Awaitable[None]], settings: ServeSettings) -> None:
        self.app = app
        self.settings = settings
        self.hosts = frozenset(host.strip("[]").lower() for host in settings.allowed_hosts)

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        started = False
        # HEAD is answered as GET without the body (the routes know only GET): a monitor's
        # `curl -I` gets the status and headers a GET would, not a 405
        head = scope.get("method") == "HEAD"
        if head:
            scope = {**scope, "method": "GET"}

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            if head and message["type"] == "http.response.body":
                message = {**message, "body": b""}
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", CSP.encode()))
                headers.extend(item for item in _HEADERS if item[0] not in names)
                message = {**message, "headers": headers}
            await send(message)

        headers = dict(scope.get("headers") or [])
        if not self.settings.any_host and _host_name(headers.get(b"host", b"")) not in self.hosts:
            shown = headers.get(b"host", b"").decode("latin-1")[:100]
            await _refuse(
                send_with_headers,
                400,
                f"this server does not answer to the host {shown!r}; reach it as "
                f"http://127.0.0.1:{self.settings.port}/ or start it with --allow-host NAME",
            )
            return
        if scope.get("method") in _BODY_METHODS:
            limit = self.settings.max_body_bytes
            length = headers.get(b"content-length")
            if length is not None and (not length.isdigit() or int(length) > limit):
                await _refuse(send_with_headers, 413, _too_large(limit))
                return
            body = bytearray()
            seconds = self.settings.body_seconds
            try:
                # a client that sends its headers and then the body never (or a byte a minute)
                # would hold its connection and this request open forever
                with anyio.fail_after(seconds):
                    while True:
                        message = await receive()
                        if message["type"] != "http.request":
                            break  # the client went away; the application sees an empty body and stops
                        body += message.get("body", b"")
                        if len(body) > limit:
                            await _refuse(send_with_headers, 413, _too_large(limit))
                            return
                        if not message.get("more_body"):
                            break
            except TimeoutError:
                await _refuse(
                    send_with_headers,
                    408,
                    f"the request body did not arrive within {seconds:g} s ({len(body):,} bytes came); "
                    "send it whole, with a content-length that matches it",
                )
                return
            replayed = False
            upstream = receive

            async def replay() -> MutableMapping[str, Any]:
                nonlocal replayed
                if replayed:
                    return await upstream()  # a disconnect, once the response is sent
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}

            receive = replay
        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as error:  # the last resort: one request fails, the server does not
            where = f"{scope.get('method')} {scope.get('path', '')[:200]}"
            if os.environ.get("PROFILES_DEBUG") == "1":
                log.exception("internal error answering %s", where)
            else:
                log.error(
                    "internal error answering %s: %s (set PROFILES_DEBUG=1 for the traceback)",
                    where,
                    type(error).__name__,
                )
            if not started:
                await _internal_error(send_with_headers, scope, type(error).__name__)


def _host_name(raw: bytes) -> str:
    """The host of a `Host` header without its port: `127.0.0.1:8765` → `127.0.0.1`, `[::1]:80` → `::1`."""
    text = raw.decode("latin-1").strip().lower()
    if text.startswith("["):
        return text[1:].split("]", 1)[0]
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


def _too_large(limit: int) -> str:
    return f"the request body is over {limit:,} bytes; send less (a prompt, a render's variables)"


async def _refuse(send: _Send, status: int, message: str, *, error: str = "ServeError") -> None:
    body = json.dumps({"error": error, "message": message, "status": status}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _internal_error(send: _Send, scope: _Scope, kind: str) -> None:
    message = f"internal error: {kind}; the server keeps serving. Please report it."
    if str(scope.get("path", "")).startswith(("/api", "/mcp", "/openapi")):
        await _refuse(send, 500, message, error="InternalError")
        return
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Internal error</title>'
        '<link rel="stylesheet" href="/static/studio.css"></head><body><main class="narrow">'
        f'<h1>Internal error</h1><p class="error-box">{html.escape(message)}</p><p><a href="/">Back to the personas</a>'
        "</p></main></body></html>"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 500,
            "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def tokens_match(given: str | None, expected: str | None) -> bool:
    """Whether `given` is `expected`, compared in constant time; never for a missing one."""
    if not given or not expected:
        return False
    return _same(given, expected)


def _same(given: str, expected: str) -> bool:
    """Constant-time equality of two texts; as bytes, since `compare_digest` refuses a `str` with
    anything but ASCII, and a cookie or form field may hold anything."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


class Signer:
    """Signs CSRF tokens and studio sessions with the server's secret (new at every start)."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _sign(self, purpose: str, value: str) -> str:
        return hmac.new(self._secret, f"{purpose}\0{value}".encode(), hashlib.sha256).hexdigest()[:40]

    def new_csrf(self) -> str:
        nonce = secrets.token_urlsafe(18)
        return f"{nonce}.{self._sign('csrf', nonce)}"

    def csrf_valid(self, token: str | None) -> bool:
        if not token or token.count(".") != 1:
            return False
        nonce, signature = token.split(".")
        return bool(nonce) and _same(signature, self._sign("csrf", nonce))

    def session(self, token: str) -> str:
        """The cookie value of a browser signed in with `token`: it proves the token without holding it."""
        return self._sign("session", token)

    def session_matches(self, cookie: str | None, token: str | None) -> bool:
        if not cookie or not token:
            return False
        return _same(cookie, self.session(token))


def cookie_name(base: str, port: int | None) -> str:
    """`profiles_csrf_8765`: the port keeps two local servers' cookies apart."""
    return f"{base}_{port}" if port else base


def same_origin(scheme: str, host: str, headers: MutableMapping[str, str] | Any) -> bool:
    """Whether a form post comes from this server's own pages: `Origin`, else `Referer`, else
    `Sec-Fetch-Site` says so. A post that shows none of them is refused."""
    own = f"{scheme}://{host}".lower()
    origin = headers.get("origin")
    if origin is not None:
        return origin.lower() == own  # "null" (a sandboxed frame, a file) is refused too
    referer = headers.get("referer")
    if referer:
        parts = urlsplit(referer)
        return f"{parts.scheme}://{parts.netloc}".lower() == own
    return headers.get("sec-fetch-site") == "same-origin"
