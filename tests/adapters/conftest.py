"""Adapter tests drive real frameworks against the scripted chat server, and reach nothing but 127.0.0.1."""

from __future__ import annotations

import pytest

from tests.network import chat_server, loopback_only  # noqa: F401  (fixtures)


@pytest.fixture(autouse=True)
def _loopback(loopback_only: list[str]) -> None:  # noqa: F811
    """Every test here: any lookup or connection beyond 127.0.0.1 fails the test."""
