"""Hypothesis strategies for chat histories: every turn valid for all three APIs.

A history is a run of exchanges; each is a user turn, then either an assistant's text or an
assistant's tool calls answered by one tool turn per call, sometimes followed by more text. Texts
are non-blank (Anthropic refuses blank text), tool names and ids use the characters every API
takes, and arguments are JSON objects.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

__all__ = ["arguments", "histories", "texts"]

#: Text both JSON and every API carry: no surrogates, no NUL, and something besides spaces.
texts = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1, max_size=40).filter(
    lambda text: text.strip() != ""
)
_names = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,20}", fullmatch=True)
_scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | texts
arguments = st.dictionaries(_names, _scalars | st.lists(_scalars, max_size=3), max_size=4)


@st.composite
def _exchange(draw: Any, number: int) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [{"role": "user", "content": draw(texts)}]
    if draw(st.booleans()):
        turns.append({"role": "assistant", "content": draw(texts)})
        return turns
    calls = [
        {
            "id": f"call_{number}_{index}",
            "type": "function",
            "function": {"name": draw(_names), "arguments": json.dumps(draw(arguments))},
        }
        for index in range(draw(st.integers(1, 3)))
    ]
    turns.append({"role": "assistant", "content": None, "tool_calls": calls})
    turns.extend({"role": "tool", "tool_call_id": call["id"], "content": draw(texts)} for call in calls)
    if draw(st.booleans()):
        turns.append({"role": "assistant", "content": draw(texts)})
    return turns


@st.composite
def histories(draw: Any, max_exchanges: int = 4) -> list[dict[str, Any]]:
    """A valid history of up to `max_exchanges` exchanges, starting with a user turn."""
    count = draw(st.integers(0, max_exchanges))
    turns: list[dict[str, Any]] = []
    for number in range(count):
        turns.extend(draw(_exchange(number)))
    return turns
