"""Tests that drive other tools' libraries reach nothing but 127.0.0.1.

`loopback_only` refuses, and records, any name lookup or connection to an address that is not
loopback, from Python code of any library; the test then fails, naming the host, instead of
reaching the internet. The conftests of tests/adapters and tests/interop turn it on for every test.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm_server import ChatServer

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def _is_loopback(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode()
    host = str(host).strip("[]")
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    attempts: list[str] = []
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_loopback(host):
            attempts.append(f"lookup {host}:{port}")
            raise socket.gaierror(f"tests reach only 127.0.0.1, not {host}")
        return real_getaddrinfo(host, port, *args, **kwargs)

    def check(address: Any) -> None:
        if isinstance(address, tuple) and address and not _is_loopback(address[0]):
            attempts.append(f"connect {address[0]}:{address[1]}")
            raise OSError(f"tests reach only 127.0.0.1, not {address[0]}")

    def connect(self: socket.socket, address: Any) -> Any:
        check(address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        check(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield attempts
    assert not attempts, f"a framework tried to reach beyond 127.0.0.1: {attempts}"


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """The scripted OpenAI-style server on 127.0.0.1, fresh for each test."""
    with ChatServer() as server:
        yield server
