"""What the API's routes share: the server's state, the context parameters, and the write gate."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .state import ServeState, state_of

__all__ = ["ERRORS", "NOT_MODIFIED", "Deployment", "IfNoneMatch", "Language", "Model", "State", "Writer"]

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
