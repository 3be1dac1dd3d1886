"""Run a server under uvicorn: bind, say where it is and how to sign in, serve until stopped.

The socket is bound before anything else, so `--port 0` gets a free port whose number the
start-up lines already show, and a server can tell when its store URL names itself (it would
ask itself for every prompt, forever) and refuse to start. While it runs, the `store` provider of
this process reads the server's own store, so personas with `provider: store` fields render from
it and never from a `PROFILES_STORE_URL` meant for something else.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from urllib.parse import urlsplit

from ..errors import ServeError
from ..providers import store_answering_from
from .settings import ServeSettings, is_loopback
from .store_access import StoreAccess, is_http_url

__all__ = ["bind", "check_not_own_store", "serve", "start_lines", "store_provider_for"]


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host:port`.

    Raises:
        ServeError: the address is taken or cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named explicitly: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say
    # they are TCP, and without it every keep-alive answer waits ~40 ms for a delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServeError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another --port (0 picks a free one)"
        ) from None
    sock.listen(2048)
    return sock


def check_not_own_store(settings: ServeSettings) -> None:
    """Refuse a store URL that names this very server.

    Raises:
        ServeError: the store URL is `http(s)://` on this server's port and one of its addresses.
    """
    if not is_http_url(settings.store_url):
        return
    parts = urlsplit(settings.store_url or "")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = (parts.hostname or "").lower()
    wildcard = settings.host in ("0.0.0.0", "::")
    names = {settings.host.lower()}
    if wildcard:  # every address of this machine
        names |= {"0.0.0.0", "::", socket.gethostname().lower(), _own_address()}
    same_host = host in names or (is_loopback(host) and (is_loopback(settings.host) or wildcard))
    if port == settings.port and same_host:
        raise ServeError(
            f"the store URL {settings.store_url} is this server itself; give --store the database "
            "(sqlite:///… or postgresql+psycopg://…), or the address of another server"
        )


def _own_address() -> str:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def start_lines(settings: ServeSettings, store: str) -> list[str]:
    """What `profiles serve` prints at start: where the studio, the API and MCP are, and the token."""
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    if settings.host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"
    base = f"http://{shown}:{settings.port}"
    lines = [
        f"agent-profiles studio for {settings.root.name}/ at {base}/",
        f"  API:    {base}/docs (OpenAPI at {base}/openapi.json)",
        f"  MCP:    {base}/mcp/ (streamable HTTP; prompts need no token)",
        f"  store:  {store}",
    ]
    if settings.read_only:
        lines.append("  read-only: every write is refused")
    elif settings.token_generated:
        lines += [
            f"  token for writes: {settings.token}",
            "    (made up for this run; set PROFILES_SERVE_TOKEN to choose one)",
            f"  sign in to the studio: {base}/login#token={settings.token}",
        ]
    else:
        lines.append(f"  token for writes: from PROFILES_SERVE_TOKEN; sign in at {base}/login")
    if settings.admin_token:
        lines.append("  protected labels move with the token in PROFILES_SERVE_ADMIN_TOKEN")
    if not is_loopback(settings.host):
        lines.append(
            f"Warning: listening on {settings.host}, not only on this machine: anyone who reaches it can read "
            "the personas and the store (writes still need the token); it answers to the host names "
            f"{', '.join(settings.allowed_hosts)} only, add others with --allow-host NAME"
        )
    lines.append("Stop with Ctrl-C.")
    return lines


@contextmanager
def store_provider_for(store: StoreAccess) -> Iterator[None]:
    """Point this process's `store` provider at the server's store while it serves, keeping its
    answers as long as the server keeps a store read (`--store-cache`), and expiring them at each
    write through the server, so a persona rendered after a label move shows the move at once."""
    with store_answering_from(store.url, ttl=store.read_cache) as provider:
        store.on_write(provider.expire)
        yield


def serve(
    settings: ServeSettings,
    *,
    announce: Callable[[str], None],
    log_level: str = "info",
    access_log: bool = True,
) -> None:
    """Serve `settings` until interrupted; `announce` gets each start-up line.

    Raises:
        ServeError: the address cannot be bound, or the store URL names this server.
    """
    import uvicorn

    from .app import create_app

    sock = bind(settings.host, settings.port)
    try:
        settings = replace(settings, port=sock.getsockname()[1])
        check_not_own_store(settings)
        app = create_app(settings)
        state = app.state.serve
        for line in start_lines(settings, state.store.display):
            announce(line)
        config = uvicorn.Config(
            app,
            log_level=log_level,
            access_log=access_log,
            lifespan="on",
            server_header=False,
            forwarded_allow_ips="",
        )
        with store_provider_for(state.store):
            uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
