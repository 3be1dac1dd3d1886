"""Adapter tests drive real frameworks against the scripted chat server, and reach nothing but 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.network import chat_server, loopback_only  # noqa: F401  (fixtures)


@pytest.fixture(autouse=True)
def _loopback(loopback_only: list[str]) -> None:  # noqa: F811
    """Every test here: any lookup or connection beyond 127.0.0.1 fails the test."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Other tools' files and frameworks name models of their own (llama3.1:8b, gemini-2.5-flash, a
    secret one) that no family rule matches: meeting them is what these tests do, so the
    UnknownModelWarning the suite otherwise turns into a failure is expected here."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.filterwarnings("ignore::profiles.rendering.families.UnknownModelWarning"))
