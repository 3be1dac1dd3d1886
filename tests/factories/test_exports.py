"""The LLM-factory building blocks export what they say and import their heavy dependencies lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

import profiles.factories.chat as chat
import profiles.factories.json_reply as json_reply


@pytest.mark.parametrize("module", [chat, json_reply])
def test_all_names_exist_and_are_sorted(module):
    """Every name in __all__ is defined, and __all__ is sorted."""
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), name


def test_importing_does_not_load_httpx_or_json_repair():
    """httpx and json-repair load on first use, not on import."""
    code = (
        "import sys, profiles.factories.chat, profiles.factories.json_reply\n"
        "print(sorted(m for m in ('httpx', 'json_repair') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
