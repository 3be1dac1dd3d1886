"""What every route of one server shares: its settings, its personas, its store and its signer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ServeError
from .personas import PersonaFolder
from .security import Signer, bearer_token, tokens_match
from .settings import ServeSettings
from .store_access import StoreAccess

__all__ = ["ServeState", "state_of"]


@dataclass
class ServeState:
    """One server's parts, built by `create_app` and kept on `app.state.serve`."""

    settings: ServeSettings
    folder: PersonaFolder
    store: StoreAccess
    signer: Signer

    @classmethod
    def build(cls, settings: ServeSettings) -> ServeState:
        return cls(
            settings,
            PersonaFolder(settings.root, settings.max_value_chars, settings.max_variables),
            StoreAccess(settings.store_url, read_cache=settings.store_cache),
            Signer(settings.secret),
        )

    def check_write(self, token: str | None) -> str:
        """Let a write through with `token`, or refuse it; returns "admin" or "writer".

        Raises:
            ServeError: the server is read-only (403), or the token is missing or wrong (401).
        """
        if self.settings.read_only:
            raise ServeError("this server is read-only (--read-only): it changes nothing", status=403)
        if tokens_match(token, self.settings.admin_token):
            return "admin"
        if tokens_match(token, self.settings.token):
            return "writer"
        if token:
            raise ServeError(
                "wrong token; writes need the token `profiles serve` printed or PROFILES_SERVE_TOKEN", status=401
            )
        raise ServeError(
            "writes need a token: send `Authorization: Bearer <token>` with the token `profiles serve` printed "
            "(or PROFILES_SERVE_TOKEN)",
            status=401,
        )

    def check_bearer(self, authorization: str | None) -> str:
        """`check_write` for an `Authorization` header."""
        return self.check_write(bearer_token(authorization))


def state_of(request: Any) -> ServeState:
    """The state of the application a request reached."""
    return request.app.state.serve
