"""Servers, persona folders and a browser for the serve tests.

- `persona_root`: a copy of `profile_configs/` plus personas that try the server: a hostile name,
  a broken file, a secret, a template that trips a bound.
- `live`: one server for the session (uvicorn on 127.0.0.1, a SQLite store); `client` talks to it.
- `start`: a server of a test's own, with the settings it needs (a PostgreSQL store, read-only, …).
- `browser` / `page`: Debian's Chromium through Playwright (`executable_path`, never Playwright's
  own download). Every request a page makes is recorded, and anything not on 127.0.0.1 is
  aborted before it is sent and fails the test. Without Chromium the browser tests skip, except
  under CI, where `.ci/services/chromium.sh` always provides one and a missing browser fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import CONFIGS

from .live import TOKEN, Live, serving, settings_for

#: A secret the `secretive` persona reads; it must never appear in an answer.
SECRET_VALUE = "sk-serve-test-4b1d-never-shown"
#: A name that must show as text, never as markup.
HOSTILE = "<script>alert(1)</script>"

PERSONAS = {
    "hostile.yaml": f"name: '{HOSTILE}'\nrole: '<img src=x onerror=alert(2)>'\n"
    "goal: 'Say </pre><b>bold</b> & more'\ndeployments:\n  evil:\n    name: '<svg onload=alert(3)>'\n",
    "broken.yaml": "name: Broken\nrole: Tester\ncolour: blue\ngoal:\n  - a\n",
    "secretive.yaml": "name: {key: SERVE_TEST_API_TOKEN, default: Nobody}\nrole: Keeper\nallow_secrets: [name]\n",
    "bounded.yaml": "name: Bounded\nrole: Tester\ntemplates:\n  user: {inline: \"{{ 'a' * 99999 * 99999 }}\"}\n",
    "typo.yaml": "name: Typo\nrole: Tester\ngoal: 'Greet {{ nmae }} warmly.'\n",
}


@pytest.fixture(scope="session")
def persona_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("served") / "personas"
    shutil.copytree(CONFIGS, root)
    for name, text in PERSONAS.items():
        (root / name).write_text(text, encoding="utf-8")
    with (root / ".env").open("a", encoding="utf-8") as env:
        env.write(f"\nSERVE_TEST_API_TOKEN={SECRET_VALUE}\n")
    return root


@pytest.fixture(scope="session")
def live(persona_root, tmp_path_factory) -> Iterator[Live]:
    store = f"sqlite:///{tmp_path_factory.mktemp('served-store') / 'store.db'}"
    with serving(settings_for(persona_root, store_url=store)) as running:
        yield running


@pytest.fixture
def client(live) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.base, timeout=30) as http:
        yield http


@pytest.fixture
def writer() -> dict[str, str]:
    """The header a write needs."""
    return {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def start(persona_root):
    """Start a server of the test's own: `with start(store_url=…, read_only=True) as live:`."""

    @contextlib.contextmanager
    def _start(root: Path | None = None, **values) -> Iterator[Live]:
        with serving(settings_for(root or persona_root, **values)) as running:
            yield running

    return _start


# -- the browser ---------------------------------------------------------------------------------

#: Flags Debian's Chromium needs here (root, no GPU, nothing but loopback); chromium.sh exports them too.
CHROMIUM_ARGS = (
    "--no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync"
)


def is_local(url: str) -> bool:
    """Whether a URL stays on this machine: http(s) on 127.0.0.1, or data:/blob:/about:."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about", "chrome-error"):
        return True
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname == "127.0.0.1"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("PROFILES_TEST_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        if os.environ.get("CI"):
            pytest.fail("no Chromium: .ci/services/chromium.sh should have exported PROFILES_TEST_CHROMIUM")
        pytest.skip("no Chromium (source .ci/services/chromium.sh, or apt-get install chromium)")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    args = (os.environ.get("PROFILES_TEST_CHROMIUM_ARGS") or CHROMIUM_ARGS).split()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path, headless=True, args=args)
        yield launched
        launched.close()


class Visit:
    """A browser context for one test: its page, every request it made, and what went wrong."""

    def __init__(self, context, shots: Path) -> None:
        self.context = context
        self.shots = shots
        self.requests: list[str] = []
        self.outside: list[str] = []
        self.console: list[str] = []
        context.route("**/*", self._guard)
        context.on("request", lambda request: self.requests.append(request.url))
        # CSP violations, seen by a listener Playwright installs outside the page's own policy
        context.add_init_script(
            "window.__csp = []; document.addEventListener('securitypolicyviolation', e => "
            "window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || '')));"
        )
        self.page = context.new_page()
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))

    def _guard(self, route) -> None:
        if is_local(route.request.url):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def shot(self, name: str) -> Path:
        """A full-page screenshot under the test's temporary folder."""
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def csp_violations(self) -> list[str]:
        return list(self.page.evaluate("window.__csp || []"))


@pytest.fixture
def visit(browser, tmp_path) -> Iterator[Visit]:
    """A fresh browser context; after the test, nothing may have left 127.0.0.1."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    visiting = Visit(context, tmp_path)
    yield visiting
    context.close()
    assert visiting.requests, "the test loaded no page"
    assert not visiting.outside, f"the pages tried to load from outside 127.0.0.1: {visiting.outside}"
    assert all(is_local(url) for url in visiting.requests), visiting.requests


@pytest.fixture
def no_js_visit(browser, tmp_path) -> Iterator[Visit]:
    """A browser context with JavaScript off: the studio must still work."""
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1400, "height": 900})
    visiting = Visit(context, tmp_path)
    yield visiting
    context.close()
    assert not visiting.outside, visiting.outside
