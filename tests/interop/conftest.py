"""The bundled examples of other tools' files, and helpers to import and compare them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples" / "interop"
BAD = EXAMPLES / "bad"


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """A persona's data without where it was read from: the same persona read from two files compares equal."""
    copied = json.loads(json.dumps(data, default=str))
    copied.get("metadata", {}).get("imported", {}).pop("source", None)
    return copied
