"""`create_app(settings)`: the FastAPI application of one server, ready for uvicorn.

It puts together the JSON API (`/api`, described at `/openapi.json`, browsable at `/docs`), the
studio (`/`), the MCP prompts (streamable HTTP at `/mcp/`) and the static files, behind the `Guard` middleware, and
turns every error into an answer: a `ProfilesError` is a 4xx with its message (a 503 when the
store's database fails); anything else is a 500 from `Guard` that names no detail, and the
server keeps serving.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response
from starlette.staticfiles import StaticFiles

from .. import __version__
from ..errors import (
    ConfigError,
    LabelConflictError,
    ProfilesError,
    PromptNotFoundError,
    ProtectedLabelError,
    ServeError,
    StoreError,
    StoreNotFoundError,
    TemplateNotFoundError,
)
from . import api, store_api, studio
from .deps import DuplicateKeyError
from .personas import RenderContext
from .security import Guard
from .settings import ServeSettings
from .state import ServeState, state_of
from .store_access import database_failure

__all__ = ["create_app", "status_of"]

STATIC = Path(__file__).resolve().parent / "static"
#: Where a JSON answer is expected rather than a page.
_JSON_PREFIXES = ("/api", "/openapi.json", "/mcp")


def status_of(error: ProfilesError) -> int:
    """The HTTP status of a library error: the caller's mistake is a 4xx, the database's failure a 503."""
    if isinstance(error, ServeError):
        return error.status
    if isinstance(error, (PromptNotFoundError, TemplateNotFoundError, StoreNotFoundError)):
        return 404
    if isinstance(error, LabelConflictError):
        return 409
    if isinstance(error, ProtectedLabelError):
        return 403
    if isinstance(error, StoreError) and database_failure(error):
        return 503
    return 422


def create_app(settings: ServeSettings) -> FastAPI:
    """The application serving `settings.root` and its store; a new one per server start (the
    MCP session manager runs once per application)."""
    from .mcp_prompts import PromptCatalog, build_server

    state = ServeState.build(settings)
    mcp_server = build_server(PromptCatalog(state.folder, RenderContext()))
    mcp_app = mcp_server.streamable_http_app(
        streamable_http_path="/",
        stateless_http=True,  # any request may come alone; prompts need no session
        json_response=True,
        transport_security=_mcp_security(settings),
        max_request_body_size=settings.max_body_bytes,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            async with mcp_server.session_manager.run():  # a mounted app's own lifespan never runs
                yield
        finally:
            state.store.close()

    app = FastAPI(
        title="agent-profiles",
        version=__version__,
        description="Personas of one folder and the prompt store, as `profiles serve` serves them. Reads answer "
        "with an ETag (send If-None-Match for a 304); writes need the bearer token.",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.serve = state
    app.add_middleware(Guard, settings=settings)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.mount("/docs-assets", StaticFiles(directory=str(_docs_assets())), name="docs-assets")
    app.include_router(api.router)
    app.include_router(store_api.router)
    app.include_router(studio.router)
    app.mount("/mcp", _without_event_stream(mcp_app))
    _add_error_handlers(app)
    return app


def _without_event_stream(mcp_app: Any) -> Any:
    """The MCP app, answering GET with 405 as the protocol allows a server that offers no stream.

    A stateless server never sends anything unasked, yet the SDK opens the event stream a GET asks
    for and holds it open without end: `curl …/mcp/` (or a client probing for the stream) hung.

    A request whose JSON spells half a surrogate pair (`"\\ud800"`) is answered as over stdio,
    with an error naming where it is: the SDK's reader said only "Parse error: unexpected end of
    hex escape", of an escape that is whole.
    """
    from .mcp_prompts import answerable

    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "Method Not Allowed: this server answers MCP over POST only (stateless "
                "streamable HTTP) and has no event stream to GET; POST JSON-RPC requests to /mcp/",
            },
        }
    ).encode()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("method") == "GET":
            length = str(len(body)).encode()
            headers = [(b"content-type", b"application/json"), (b"allow", b"POST"), (b"content-length", length)]
            await send({"type": "http.response.start", "status": 405, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        if scope["type"] == "http" and scope.get("method") == "POST":
            receive = await _readable(receive)
        await mcp_app(scope, receive, send)

    async def _readable(receive: Any) -> Any:
        # the Guard has read the whole body already and hands it on in one message
        message = await receive()
        raw = message.get("body", b"") if message["type"] == "http.request" else b""
        if b"\\u" in raw and not message.get("more_body"):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = ""
            if text and (fixed := answerable(text)) != text:
                message = {"type": "http.request", "body": fixed.encode("utf-8"), "more_body": False}
        replayed = [message]

        async def again() -> Any:
            return replayed.pop() if replayed else await receive()

        return again

    return app


def _mcp_security(settings: ServeSettings) -> Any:
    """The SDK's own Host and Origin checks, with the host names the server answers to."""
    from mcp.server.transport_security import TransportSecuritySettings

    if settings.any_host:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = [f"[{host}]" if ":" in host else host for host in settings.allowed_hosts]
    return TransportSecuritySettings(
        allowed_hosts=[*hosts, *(f"{host}:*" for host in hosts)],
        allowed_origins=[
            origin
            for host in hosts
            for origin in (f"http://{host}", f"http://{host}:*", f"https://{host}", f"https://{host}:*")
        ],
    )


def _docs_assets() -> Any:
    """Swagger UI's files as the `fastapi-offline` package installs them: nothing from a CDN."""
    return importlib.resources.files("fastapi_offline") / "static"


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith(_JSON_PREFIXES)


def _answer(request: Request, status: int, error: str, message: str, **extra: Any) -> Response:
    if _wants_json(request):
        headers = {"WWW-Authenticate": 'Bearer realm="profiles"'} if status == 401 else None
        return JSONResponse({"error": error, "message": message, "status": status, **extra}, status, headers=headers)
    titles = {
        401: "Token needed",
        403: "Refused",
        404: "Not found",
        409: "Moved meanwhile",
        413: "Too large",
        503: "Store unavailable",
    }
    return studio.error_page(request, status, titles.get(status, "Cannot show this"), message)


def _problem(item: dict[str, Any]) -> dict[str, str]:
    """One validation problem as where and what, with how to fix it where pydantic's words alone
    would leave a client guessing (a body that is not JSON, or JSON that is not an object)."""
    loc = [str(part) for part in item.get("loc", ())]
    message = str(item.get("msg", ""))[:300]
    if item.get("type") == "json_invalid":
        at = f" at character {loc[1]}" if len(loc) > 1 else ""
        reason = str((item.get("ctx") or {}).get("error", "")).strip()[:200]
        detail = f" ({reason})" if reason else ""
        return {
            "where": "body",
            "message": f"the body is not valid JSON{at}{detail}; send one JSON object, "
            "with content-type: application/json",
        }
    where = ".".join(part for part in loc if part != "body")
    if item.get("type") == "string_unicode":  # JSON's "\ud800": pydantic says only "unable to parse raw data"
        from ..jsonlines import SURROGATE_PROBLEM, lone_surrogate

        found = lone_surrogate(item.get("input"))
        if found is not None:
            message = f"holds {found[1]}, {SURROGATE_PROBLEM}"
    if not where and loc[:1] == ["body"]:  # the body as a whole: a list, a string, or not sent as JSON
        where = "body"
        message += "; send one JSON object, with content-type: application/json"
    return {"where": where, "message": message}


def _unreadable_body(cause: BaseException) -> str:
    """Why a body that parsed as JSON syntax could not be read, and how to send it: the framework
    says only "There was an error parsing the body"."""
    if isinstance(cause, DuplicateKeyError):
        return (
            f"the body names {cause.key[:100]!r} twice in one object, and only one of them could be meant; "
            "send each key once"
        )
    if isinstance(cause, RecursionError):
        return (
            "the body nests arrays or objects too deeply to be read (Python reads JSON up to about "
            "1,000 levels); send a flatter JSON object"
        )
    if isinstance(cause, UnicodeDecodeError):
        byte = cause.object[cause.start : cause.start + 1].hex()
        return (
            f"the body is not UTF-8 text: byte 0x{byte} at position {cause.start} is no character of UTF-8 "
            f"(text in another encoding, such as Latin-1?); send the JSON as UTF-8"
        )
    if isinstance(cause, ValueError) and "digits" in str(cause):
        return (
            "the body holds a number with over 4,300 digits, more than a JSON number may have here; "
            "send it as a string"
        )
    return ""


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProfilesError)
    async def profiles_error(request: Request, error: ProfilesError) -> Response:
        folder = state_of(request).folder
        extra: dict[str, Any] = {}
        if isinstance(error, ConfigError):
            extra["issues"] = [
                {
                    "file": issue.file,
                    "line": issue.line,
                    "column": issue.column,
                    "field": issue.field,
                    "message": folder.clean(issue.message),
                    "text": folder.clean(str(issue)),
                }
                for issue in error.issues
            ]
        return _answer(request, status_of(error), type(error).__name__, folder.clean(error.message), **extra)

    @app.exception_handler(Warning)
    async def warning_as_error(request: Request, warning: Warning) -> Response:
        # a process run with warnings as errors (-W error) raises them: the unknown model or
        # deployment that caused one is the caller's to fix, so it is a 422 like other input
        message = state_of(request).folder.clean(str(warning))
        return _answer(request, 422, type(warning).__name__, message)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> Response:
        problems = [_problem(item) for item in error.errors()]
        text = "; ".join(f"{item['where']}: {item['message']}" for item in problems[:10]) or "malformed request"
        return _answer(request, 422, "RequestValidationError", f"the request is not valid: {text}", problems=problems)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        messages = {404: f"nothing at {request.url.path[:200]}; see /docs for the API", 405: "method not allowed here"}
        message = messages.get(error.status_code, str(error.detail)[:300])
        if error.status_code == 400 and error.__cause__ is not None:
            message = _unreadable_body(error.__cause__) or message
        return _answer(request, error.status_code, "HTTPException", message)
