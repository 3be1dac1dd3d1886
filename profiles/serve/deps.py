"""What the API's routes share: the server's state, the context parameters, and the write gate."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, Header, Query, Request
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.responses import Response

from .state import ServeState, state_of

__all__ = [
    "ERRORS",
    "NOT_MODIFIED",
    "Deployment",
    "DuplicateKeyError",
    "IfNoneMatch",
    "Language",
    "Model",
    "State",
    "UniqueKeysRoute",
    "Writer",
]

_bearer = HTTPBearer(
    auto_error=False,
    description="The token `profiles serve` prints at start, or PROFILES_SERVE_TOKEN; only writes need it. "
    "PROFILES_SERVE_ADMIN_TOKEN also moves protected labels.",
)

#: Declared on every read, for the API page.
NOT_MODIFIED = {304: {"description": "Not modified: the `If-None-Match` tag is still current"}}
ERRORS = {
    400: {"description": "The request is malformed"},
    404: {"description": "No such persona, prompt kind or prompt"},
    422: {"description": "The persona is invalid, or the render failed or tripped a bound"},
}


def _state(request: Request) -> ServeState:
    return state_of(request)


State = Annotated[ServeState, Depends(_state)]
IfNoneMatch = Annotated[str | None, Header(include_in_schema=False)]
Deployment = Annotated[str | None, Query(description="Deployment: picks the overlay, .env file and label chain")]
Language = Annotated[str | None, Query(description="Answer language and template locale, e.g. zh-TW", max_length=100)]
Model = Annotated[str | None, Query(description="The model the prompts are for", max_length=200)]


def _writer(request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str:
    """Let a write through with the bearer token ("writer", or "admin" for the admin token), or
    refuse it (401, or 403 on a read-only server)."""
    return state_of(request).check_write(credentials.credentials if credentials else None)


Writer = Annotated[str, Depends(_writer)]


class DuplicateKeyError(ValueError):
    """A JSON body names one key twice in an object (turned into a 400 by the application)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise DuplicateKeyError(key)
        found[key] = value
    return found


class _UniqueKeysRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = json.loads(await self.body(), object_pairs_hook=_unique)
        return self._json


class UniqueKeysRoute(APIRoute):
    """A route whose JSON body may not name a key twice in one object.

    Python's reader keeps the last of two equal keys, so `{"label": "staging", …, "label":
    "production"}` would move production without a word; a body that says two things is refused.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            return await handler(_UniqueKeysRequest(request.scope, request.receive))

        return route
