"""What a server is asked to serve, and how: the folder, the store, the token, the bounds.

Built once at start and never changed; every part of the server reads it. The token is hidden in
the repr, so printing the settings (or an error that shows them) never shows it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ServeError

__all__ = [
    "ADMIN_TOKEN_ENV",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "LOOPBACK_HOSTS",
    "BODY_SECONDS",
    "MAX_BODY_BYTES",
    "MAX_VALUE_CHARS",
    "MAX_VARIABLES",
    "TOKEN_ENV",
    "ServeSettings",
    "is_loopback",
    "make_settings",
]

#: The address a server binds unless another is asked for.
DEFAULT_HOST = "127.0.0.1"
#: The port a server listens on unless another is asked for.
DEFAULT_PORT = 8765
#: Environment variable holding the bearer token every write needs; a random one when unset.
TOKEN_ENV = "PROFILES_SERVE_TOKEN"
#: Environment variable holding the token that may also move protected labels.
ADMIN_TOKEN_ENV = "PROFILES_SERVE_ADMIN_TOKEN"

#: Largest request body accepted, in bytes (a stored prompt, a render's variables).
MAX_BODY_BYTES = 1_000_000
#: Seconds a request's body may take to arrive, whole; a client still sending after that is refused.
BODY_SECONDS = 60.0
#: Longest question, variable value, or context part (deployment, language, model), in characters.
MAX_VALUE_CHARS = 100_000
#: Most variables one render may pass.
MAX_VARIABLES = 200

#: Host names that always reach this machine only.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, brackets allowed) stays on this machine."""
    host = host.strip().strip("[]").lower()
    return host in LOOPBACK_HOSTS or host.startswith("127.")


@dataclass(frozen=True)
class ServeSettings:
    """One server's configuration.

    `root` is the persona folder (resolved); `store_url` the prompt store, or None for the default
    `.profiles/store.db`; `token` the bearer token of writes (`token_generated` when it was made
    up at start); `admin_token` the one that may also move protected labels; `read_only` refuses
    every write; `host` and `port` where it listens; `allowed_hosts` the `Host` names it answers
    (DNS rebinding cannot reach it under another name); `store_cache` how many seconds a store
    read is kept (writes through this server are seen at once).
    """

    root: Path
    token: str = field(repr=False)
    store_url: str | None = None
    token_generated: bool = False
    admin_token: str | None = field(default=None, repr=False)
    read_only: bool = False
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS
    max_body_bytes: int = MAX_BODY_BYTES
    #: Seconds a request body may take to arrive (a client that stalls midway is answered 408).
    body_seconds: float = BODY_SECONDS
    max_value_chars: int = MAX_VALUE_CHARS
    max_variables: int = MAX_VARIABLES
    #: Seconds a store read is kept before the database is asked again (0: every time).
    store_cache: float = 1.0
    #: Signs CSRF tokens and studio sessions; new at every start, so a restart signs everyone out.
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    @property
    def any_host(self) -> bool:
        """Whether any `Host` is answered (`--allow-host '*'`)."""
        return "*" in self.allowed_hosts


def _checked_store(store: str | None, env: Mapping[str, str]) -> str | None:
    """The store `--store` or else `PROFILES_STORE_URL` names, held to what `profiles store` takes:
    a URL, or the path of an existing store file, so that a typo (`--store garbage`) stops the
    server at start rather than becoming a new empty database called `garbage` at the first write."""
    from ..providers.http_store import is_http_store
    from ..store.location import STORE_URL_ENV, check_store_value

    for origin, value in (("--store", store), (STORE_URL_ENV, env.get(STORE_URL_ENV))):
        text = (value or "").strip()
        if text:
            return text if is_http_store(text) else check_store_value(text, origin=origin)
    return None


def make_settings(
    root: str | Path,
    *,
    store: str | None = None,
    read_only: bool = False,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    allow_hosts: tuple[str, ...] = (),
    store_cache: float = 1.0,
    environ: Mapping[str, str] | None = None,
) -> ServeSettings:
    """Settings for serving the personas in `root`.

    The token is `PROFILES_SERVE_TOKEN`, else a new random one (printed at start). The store is
    `store` (the `--store` option), else `PROFILES_STORE_URL`, else `.profiles/store.db`: on a
    server the explicit choice wins, so a variable set for the agents of this machine cannot
    point the server somewhere else.

    Raises:
        ServeError: `root` is not a folder, a token is too short to be one, or `store_cache` is
            negative.
        StoreError: the store is neither a URL nor the path of an existing store file.
    """
    env = os.environ if environ is None else environ
    if not 0 <= store_cache <= 3600:
        raise ServeError(f"the store cache is {store_cache} s; give 0 (none) to 3600 seconds")
    folder = Path(root)
    if not folder.is_dir():
        what = "a file" if folder.is_file() else "not there"
        raise ServeError(f"{root} is {what}; give the folder of persona files to serve, e.g. profile_configs/")
    token = (env.get(TOKEN_ENV) or "").strip()
    generated = not token
    if generated:
        token = secrets.token_urlsafe(24)
    elif len(token) < 16:
        raise ServeError(
            f"{TOKEN_ENV} is {len(token)} characters long; use at least 16 random characters, e.g. "
            'python -c "import secrets; print(secrets.token_urlsafe(24))"'
        )
    admin = (env.get(ADMIN_TOKEN_ENV) or "").strip() or None
    if admin is not None and (len(admin) < 16 or admin == token):
        raise ServeError(f"{ADMIN_TOKEN_ENV} must be at least 16 characters long and differ from {TOKEN_ENV}")
    for name, value in ((TOKEN_ENV, token), (ADMIN_TOKEN_ENV, admin or "")):
        odd = next((char for char in value if not " " <= char <= "~"), None)
        if odd is not None:
            # a header's bytes are read as Latin-1: "ä" sent as UTF-8 arrives as "Ã¤", so no client
            # could ever send this token in `Authorization: Bearer …` and every API write would be refused
            raise ServeError(
                f"{name} holds {odd!r}, which an Authorization header cannot carry (headers are ASCII), so "
                "no API client could send it; use ASCII letters, digits and punctuation, e.g. "
                'python -c "import secrets; print(secrets.token_urlsafe(24))"'
            )
    store_url = _checked_store(store, env)
    hosts = list(LOOPBACK_HOSTS)
    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        hosts.append(host)
    hosts.extend(item.strip().lower() for item in allow_hosts if item.strip())
    return ServeSettings(
        root=folder.resolve(),
        token=token,
        store_url=store_url,
        token_generated=generated,
        admin_token=admin,
        read_only=read_only,
        host=host,
        port=port,
        allowed_hosts=tuple(dict.fromkeys(hosts)),
        store_cache=store_cache,
    )
