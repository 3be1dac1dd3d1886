"""Fixtures for the factory tests: a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm_server import ChatServer


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A scripted chat-completions server, fresh for each test and stopped after it."""
    with ChatServer() as server:
        yield server
