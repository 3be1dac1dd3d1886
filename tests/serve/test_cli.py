"""`profiles serve` as people run it: a process that prints where it is and the token, binds
127.0.0.1, refuses to use itself as its store, and stops cleanly on Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

import httpx
import pytest

from profiles.cli import cli
from profiles.serve.server import check_not_own_store, start_lines
from profiles.serve.settings import make_settings
from profiles.store import PromptStore
from tests.conftest import CONFIGS


@contextmanager
def running(*args: str, env: dict[str, str] | None = None):
    """`profiles serve …` in a child process; yields (base URL, the lines it printed)."""
    environment = {**os.environ, **(env or {})}
    for name in ("PROFILES_SERVE_TOKEN", "PROFILES_STORE_URL"):
        if env is None or name not in env:
            environment.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "profiles", "serve", *args, "--port", "0", "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                raise AssertionError(f"profiles serve exited: {process.wait()} {process.stderr.read()}")
            lines.append(line.rstrip("\n"))
            if line.startswith("Stop with Ctrl-C."):
                break
        base = re.search(r"at (http://127\.0\.0\.1:\d+)/", lines[0]).group(1)
        for _ in range(300):  # the socket is bound before the lines print; uvicorn may still be starting
            try:
                httpx.get(base + "/api/health", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        yield base, lines, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()
        process.stderr.close()


def test_serve_prints_where_it_is_and_a_made_up_token(tmp_path):
    store = f"sqlite:///{tmp_path / 'store.db'}"
    with running(str(CONFIGS), "--store", store) as (base, lines, process):
        text = "\n".join(lines)
        assert lines[0] == f"agent-profiles studio for profile_configs/ at {base}/"
        assert f"{base}/docs" in text and f"{base}/mcp/" in text and "store.db" in text
        token = re.search(r"token for writes: (\S+)", text).group(1)
        assert len(token) >= 24 and f"{base}/login#token={token}" in text
        put = httpx.post(
            base + "/api/store/put", json={"name": "n", "content": "x"}, headers={"Authorization": f"Bearer {token}"}
        )
        assert put.status_code == 201
        refused = httpx.post(base + "/api/store/put", json={"name": "n", "content": "x"})
        assert refused.status_code == 401
        assert httpx.get(base + "/").status_code == 200
        process.send_signal(signal.SIGINT)
        assert process.wait(20) == 0


def test_a_token_from_the_environment_is_not_printed(tmp_path):
    token = "env-token-0123456789abcdef"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    with running(str(CONFIGS), "--store", store, env={"PROFILES_SERVE_TOKEN": token}) as (base, lines, _):
        assert token not in "\n".join(lines) and any("from PROFILES_SERVE_TOKEN" in line for line in lines)
        answer = httpx.post(
            base + "/api/store/put", json={"name": "n", "content": "x"}, headers={"Authorization": f"Bearer {token}"}
        )
        assert answer.status_code == 201


def test_store_option_wins_over_the_environment(tmp_path):
    chosen = f"sqlite:///{tmp_path / 'chosen.db'}"
    other = f"sqlite:///{tmp_path / 'other.db'}"
    with running(str(CONFIGS), "--store", chosen, "--read-only", env={"PROFILES_STORE_URL": other}) as (base, lines, _):
        assert httpx.get(base + "/api/health").json()["store"].endswith("chosen.db")
        assert any("read-only" in line for line in lines)


def test_binds_loopback_by_default():
    settings = make_settings(CONFIGS)
    assert settings.host == "127.0.0.1"
    with running(str(CONFIGS)) as (base, _, _process):
        port = int(base.rsplit(":", 1)[1])
        listening = open("/proc/net/tcp").read().lower()  # noqa: SIM115 - read at once
        local = f"0100007f:{port:04x}"  # 127.0.0.1 in the kernel's byte order
        assert local in listening and f"00000000:{port:04x}" not in listening


def test_another_address_must_be_asked_for_and_warns():
    lines = start_lines(make_settings(CONFIGS, host="0.0.0.0", port=8765), "sqlite:///x.db")
    assert any(line.startswith("Warning: listening on 0.0.0.0") for line in lines)
    assert not any(line.startswith("Warning") for line in start_lines(make_settings(CONFIGS), "sqlite:///x.db"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_server_never_uses_itself_as_its_store(runner):
    port = _free_port()
    for url in (f"http://127.0.0.1:{port}", f"http://localhost:{port}/"):
        result = runner.invoke(cli, ["serve", str(CONFIGS), "--port", str(port), "--store", url])
        assert result.exit_code == 2, result.output
        assert "is this server itself" in result.output
    other = make_settings(CONFIGS, store="http://127.0.0.1:1", port=port)
    check_not_own_store(other)  # another server's store is fine


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["nope/"], {}, "give the folder of persona files"),
        ([str(CONFIGS / "planner.yaml")], {}, "is a file"),
        ([str(CONFIGS)], {"PROFILES_SERVE_TOKEN": "short"}, "at least 16"),
        # sent as UTF-8 in a header, read back as Latin-1: such a token could never match
        ([str(CONFIGS)], {"PROFILES_SERVE_TOKEN": "pässwörd-0123456789"}, "holds 'ä', which an Authorization"),
        (
            [str(CONFIGS)],
            {"PROFILES_SERVE_TOKEN": "0123456789abcdefgh", "PROFILES_SERVE_ADMIN_TOKEN": "admin\t0123456789abc"},
            "PROFILES_SERVE_ADMIN_TOKEN holds '\\t'",
        ),
    ],
)
def test_mistakes_are_one_error_line(runner, monkeypatch, args, env, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = runner.invoke(cli, ["serve", *args, "--port", "0"])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "env", "origin"),
    [(["--store", "garbage"], {}, "--store"), ([], {"PROFILES_STORE_URL": "garbage"}, "PROFILES_STORE_URL")],
)
def test_a_store_that_is_neither_a_url_nor_a_store_file_stops_the_server_at_start(
    runner, monkeypatch, tmp_path, args, env, origin
):
    """As for `profiles store`: a typo is an error listing the accepted forms, never a new database
    named like the typo at the first write."""
    monkeypatch.chdir(tmp_path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = runner.invoke(cli, ["serve", str(CONFIGS), "--port", "0", *args])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{origin} 'garbage' is neither a store URL nor the path of an existing store file" in result.output
    assert "postgresql+psycopg://" in result.output and list(tmp_path.iterdir()) == []
    existing = tmp_path / "team.db"
    PromptStore(f"sqlite:///{existing}").close()
    assert make_settings(CONFIGS, store="team.db").store_url == f"sqlite:///{existing}"


@pytest.mark.parametrize(("args", "env"), [(["--deployment", "a b"], {}), ([], {"PROFILES_DEPLOYMENT": "../x"})])
def test_mcp_refuses_a_bad_deployment_at_start(runner, monkeypatch, args, env):
    """Not a server that answers with every persona left out of prompts/list."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = runner.invoke(cli, ["mcp", str(CONFIGS), *args], input="")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "deployment name" in result.output and "is not allowed" in result.output


def test_mcp_refuses_a_file_that_is_not_a_persona_file(runner, tmp_path):
    """It would only be left out of prompts/list: a server with nothing to serve is a mistake to say."""
    other = tmp_path / "notes.txt"
    other.write_text("name: Ada\nrole: R\n")
    result = runner.invoke(cli, ["mcp", str(other)], input="")
    assert result.exit_code == 2 and "is not a persona file (.yaml, .yml)" in result.output


def test_a_taken_port_is_an_error(runner):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        result = runner.invoke(cli, ["serve", str(CONFIGS), "--port", str(sock.getsockname()[1])])
    assert result.exit_code == 2 and "cannot listen on 127.0.0.1" in result.output


def test_help_shows_examples(runner):
    result = runner.invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0
    assert "profiles serve profile_configs/" in result.output and "--read-only" in result.output


def test_without_the_serve_extra_the_command_says_how_to_install_it():
    code = (
        "import sys; sys.modules['fastapi'] = None; sys.modules['uvicorn'] = None\n"
        "from profiles.cli import main; sys.argv = ['profiles', 'serve', sys.argv[1]]; main()"
    )
    result = subprocess.run([sys.executable, "-c", code, str(CONFIGS)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "pip install 'agent-profiles[serve]'" in result.stderr and "fastapi, uvicorn" in result.stderr
    assert "Traceback" not in result.stderr


def test_other_host_names_are_answered_only_when_allowed(start):
    with start(allowed_hosts=("127.0.0.1", "studio.internal")) as live, httpx.Client(base_url=live.base) as http:
        assert http.get("/api/health", headers={"Host": "studio.internal:8765"}).status_code == 200
        assert http.get("/api/health", headers={"Host": "other.internal"}).status_code == 400
    with start(allowed_hosts=("*",)) as live, httpx.Client(base_url=live.base) as http:
        assert http.get("/api/health", headers={"Host": "anything.example"}).status_code == 200
    settings = make_settings(CONFIGS, host="10.1.2.3", allow_hosts=("Studio.Internal",))
    assert {"10.1.2.3", "studio.internal", "127.0.0.1"} <= set(settings.allowed_hosts)


@pytest.mark.parametrize("cache", ["1", "0"])
def test_a_persona_reading_the_store_shows_the_servers_own_write_at_once(tmp_path, cache):
    """Personas with `provider: store` fields render from the server's store; a label moved through
    the server shows in the next render, as its own store pages do, not after the provider's TTL."""
    folder = tmp_path / "personas"
    folder.mkdir()
    (folder / "st.yaml").write_text("name: {key: st/name, provider: store, default: Nobody}\nrole: Tester\n")
    token = "env-token-0123456789abcdef"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    auth = {"Authorization": f"Bearer {token}"}
    args = (str(folder), "--store", store, "--store-cache", cache)
    with running(*args, env={"PROFILES_SERVE_TOKEN": token}) as (base, _, _), httpx.Client(base_url=base) as http:
        texts = []
        for name in ("Ada", "Grace"):
            body = {"name": "st/name", "content": name, "label": "production"}
            put = http.post("/api/store/put", json=body, headers=auth)
            assert put.status_code == 201, put.text
            rendered = http.post("/api/personas/st.yaml/render", json={"deployment": "production"})
            texts.append(rendered.json()["text"])
        assert texts == ["You are Ada. Your role: Tester.", "You are Grace. Your role: Tester."]
        undone = http.post("/api/store/undo", json={"name": "st/name", "label": "production"}, headers=auth)
        assert undone.status_code == 200, undone.text
        page = http.get("/personas/st.yaml", params={"deployment": "production"})
        assert "You are Ada." in page.text
