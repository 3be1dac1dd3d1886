"""The bundled examples of other tools' files, and helpers to import and compare them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.network import chat_server, loopback_only  # noqa: F401  (fixtures)

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples" / "interop"
BAD = EXAMPLES / "bad"


@pytest.fixture(autouse=True)
def _loopback(loopback_only: list[str]) -> None:  # noqa: F811
    """Every test here loads other tools' libraries: any lookup or connection beyond 127.0.0.1 fails it."""


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """A persona's data without where it was read from: the same persona read from two files compares equal."""
    copied = json.loads(json.dumps(data, default=str))
    copied.get("metadata", {}).get("imported", {}).pop("source", None)
    return copied


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Other tools' files and frameworks name models of their own (llama3.1:8b, gemini-2.5-flash, a
    secret one) that no family rule matches: meeting them is what these tests do, so the
    UnknownModelWarning the suite otherwise turns into a failure is expected here."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.filterwarnings("ignore::profiles.rendering.families.UnknownModelWarning"))
