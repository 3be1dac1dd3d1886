"""A real server for the tests: uvicorn on 127.0.0.1, on a port bound before it starts, in a thread.

Binding the socket first means the port is known before the server runs and nothing races for it;
the server stops (gracefully, then forced) when the block ends, which is how the tests take a
store server away in the middle of a run.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import uvicorn

from profiles.serve.app import create_app
from profiles.serve.settings import ServeSettings

LOOPBACK = "127.0.0.1"
#: The token every test server takes for writes.
TOKEN = "test-token-0123456789abcdef"
#: The token that may also move protected labels.
ADMIN_TOKEN = "admin-token-0123456789abcdef"


@dataclass
class Live:
    """A running server: where it is and what it was started with."""

    base: str
    settings: ServeSettings
    app: object
    server: uvicorn.Server
    thread: threading.Thread
    sock: socket.socket

    @property
    def state(self):
        return self.app.state.serve

    def stop(self) -> None:
        """Stop the server and close its socket: from now on, connecting is refused."""
        self.server.should_exit = True
        self.thread.join(10)
        if self.thread.is_alive():
            self.server.force_exit = True
            self.thread.join(10)
        self.sock.close()


def settings_for(root: Path, **values: object) -> ServeSettings:
    values.setdefault("token", TOKEN)
    return ServeSettings(root=Path(root).resolve(), **values)  # type: ignore[arg-type]


@contextlib.contextmanager
def serving(settings: ServeSettings, **config: object) -> Iterator[Live]:
    """Run a server for `settings` under uvicorn on 127.0.0.1; yield it, stop it afterwards."""
    # IPPROTO_TCP, or asyncio leaves Nagle on and keep-alive answers wait for a delayed ACK
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOOPBACK, 0))
    port = sock.getsockname()[1]
    settings = replace(settings, port=port)
    app = create_app(settings)
    config.setdefault("log_level", "warning")
    config.setdefault("lifespan", "on")
    server = uvicorn.Server(uvicorn.Config(app, host=LOOPBACK, port=port, **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="uvicorn")
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn exited during startup (see its log above)")
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start in 30 s")
        time.sleep(0.01)
    live = Live(f"http://{LOOPBACK}:{port}", settings, app, server, thread, sock)
    try:
        yield live
    finally:
        live.stop()
