"""Read a model's ReAct reply into a tool call or a final answer.

The reply format is a contract between the `react` template and `parse`: both take their
keywords from `KEYWORDS` (the template receives it as the `react` variable), so the words the
prompt asks for are the words the parser reads. A reply looks like either

```
Thought: I need the weather first.
Action: search
Action Input: {"query": "weather in Paris"}
```

or

```
Thought: I know enough now.
Answer: It is sunny in Paris.
```

Slightly broken JSON (single quotes, a trailing comma, a missing brace) is repaired with
`json-repair`; anything else raises `ReactParseError`, whose message an agent loop can send back
to the model as a correction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .errors import ReactParseError
from .jsonlines import SURROGATE_PROBLEM, lone_surrogate, non_finite
from .jsonlines import loads as load_json

__all__ = ["KEYWORDS", "ReactAction", "ReactAnswer", "ReactKeywords", "expected_format", "parse"]


@dataclass(frozen=True)
class ReactKeywords:
    """The line labels of the reply protocol; each is written as `<label>: …` at a line start."""

    thought: str = "Thought"
    action: str = "Action"
    action_input: str = "Action Input"
    observation: str = "Observation"
    answer: str = "Answer"


#: The one set of keywords the bundled `react` templates and `parse` share.
KEYWORDS = ReactKeywords()


@dataclass(frozen=True)
class ReactAction:
    """The model asks to call `tool` with `input` (a JSON object) and waits for the observation."""

    thought: str
    tool: str
    input: dict[str, Any] = field(default_factory=dict)

    __hash__ = None  # type: ignore[assignment]  # input is a dict


@dataclass(frozen=True)
class ReactAnswer:
    """The model gives its final answer."""

    thought: str
    answer: str


ReactStep = ReactAction | ReactAnswer


def expected_format(keywords: ReactKeywords = KEYWORDS, tool_names: Iterable[str] | None = None) -> str:
    """The reply format in plain words, as error messages show it to the model."""
    names = ", ".join(tool_names) if tool_names is not None else ""
    tool = f"<one tool name: {names}>" if names else "<tool name>"
    return (
        "To call a tool, reply with exactly:\n"
        f"{keywords.thought}: <your reasoning>\n"
        f"{keywords.action}: {tool}\n"
        f"{keywords.action_input}: <the arguments as one JSON object>\n"
        "To give the final answer, reply with:\n"
        f"{keywords.thought}: <your reasoning>\n"
        f"{keywords.answer}: <your answer>"
    )


@lru_cache(maxsize=16)
def _label_pattern(keywords: ReactKeywords) -> re.Pattern[str]:
    # longest first, so "Action Input" is never read as "Action" followed by text
    labels = sorted(
        (keywords.thought, keywords.action, keywords.action_input, keywords.observation, keywords.answer),
        key=len,
        reverse=True,
    )
    alternatives = "|".join(re.escape(label) for label in labels)
    # a label may be bolded by a model that likes markdown: **Action:** or **Action**:
    return re.compile(
        rf"^[ \t]*(?:\*\*)?(?P<label>{alternatives})(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]?", re.I | re.M
    )


_FENCE = re.compile(r"^```[A-Za-z]*[ \t]*\n?(?P<body>.*?)\n?```$", re.S)


def parse(
    text: str, *, tool_names: Iterable[str] | None = None, keywords: ReactKeywords = KEYWORDS
) -> ReactAction | ReactAnswer:
    """Read a ReAct reply: a `ReactAction` (tool call) or a `ReactAnswer` (final answer).

    The first `Action:` or `Answer:` line decides which. An answer runs to the end of the reply;
    an action's input runs from `Action Input:` to the next label outside its JSON (an `Observation:` the model
    invented is dropped). With `tool_names`, a tool outside them is an error.

    Raises:
        ReactParseError: saying what was wrong, followed by the expected format.
    """
    if isinstance(tool_names, str):
        tool_names = (tool_names,)
    names = tuple(tool_names) if tool_names is not None else None
    if not isinstance(text, str):
        _fail(f"the reply is {type(text).__name__}, not text", keywords, names)
    labels = {
        label.lower(): key
        for key, label in (
            ("thought", keywords.thought),
            ("action", keywords.action),
            ("action_input", keywords.action_input),
            ("observation", keywords.observation),
            ("answer", keywords.answer),
        )
    }
    marks = [
        (labels[match.group("label").lower()], match) for match in _label_pattern(keywords).finditer(text)
    ]
    decisive = next(((key, match) for key, match in marks if key in ("action", "answer")), None)
    if decisive is None:
        _fail(
            f"the reply has no '{keywords.action}:' line and no '{keywords.answer}:' line",
            keywords,
            names,
        )
    key, match = decisive
    thought = _thought(text[: match.start()], marks)
    if key == "answer":
        answer = text[match.end() :].strip()
        if not answer:
            _fail(f"the '{keywords.answer}:' line is empty; write the answer after it", keywords, names)
        return ReactAnswer(thought, answer)

    line_end = text.find("\n", match.end())
    tool = text[match.end() : line_end if line_end != -1 else len(text)].strip().strip("`*\"' ")
    if not tool:
        _fail(f"the '{keywords.action}:' line names no tool", keywords, names)
    if names is not None and tool not in names:
        _fail(f"there is no tool named {tool!r}; the tools are {', '.join(names) or 'none'}", keywords, names)
    following = [(k, m) for k, m in marks if m.start() > match.start()]
    if not following or following[0][0] != "action_input":
        _fail(
            f"the '{keywords.action}:' line must be followed by an '{keywords.action_input}:' line with the "
            "arguments as a JSON object",
            keywords,
            names,
        )
    start = following[0][1].end()
    ends = [m.start() for _, m in following[1:17]] + [len(text)]  # a few: each is read in full
    # a label at a line start inside the JSON (a string running over lines) does not end the input:
    # the first end at which the arguments read as they are wins, before any repair that would
    # close a string cut short and call the tool with half of it
    end = next((end for end in ends if _whole_object(text[start:end])), ends[0])
    return ReactAction(thought, tool, _arguments(text[start:end], keywords, names))


def _thought(before: str, marks: list[tuple[str, re.Match[str]]]) -> str:
    """The reasoning before the decisive line, without the `Thought:` label it starts with."""
    if marks and marks[0][0] == "thought":
        first = marks[0][1]
        if first.start() < len(before) and not before[: first.start()].strip():
            before = before[first.end() :]
    return before.strip()


def _unfenced(raw: str) -> str:
    text = raw.strip()
    fenced = _FENCE.match(text)
    return fenced.group("body").strip() if fenced else text


def _whole_object(raw: str) -> bool:
    """Whether `raw` is one JSON object as written (line breaks inside its strings allowed)."""
    text = _unfenced(raw)
    if not text.startswith("{"):
        return False
    try:
        return isinstance(json.loads(text, strict=False), dict)
    except (ValueError, RecursionError):
        return False


def _arguments(raw: str, keywords: ReactKeywords, names: tuple[str, ...] | None) -> dict[str, Any]:
    text = _unfenced(raw)
    if not text:
        _fail(
            f"the '{keywords.action_input}:' line is empty; give the arguments as a JSON object",
            keywords,
            names,
        )
    try:
        value = load_json(text)
    except ValueError:
        value = _repair(text)
    if not isinstance(value, dict):
        shown = text if len(text) <= 200 else text[:200] + "…"
        _fail(
            f"the '{keywords.action_input}:' is not a JSON object ({shown!r}); write the arguments as "
            '{"name": value, ...}, or {} for none',
            keywords,
            names,
        )
    # what json.loads lets through but no tool can be called with: the arguments go on as JSON
    broken = lone_surrogate(value)
    if broken is not None:
        _fail(f"the '{keywords.action_input}:' holds {broken[1]}, {SURROGATE_PROBLEM}", keywords, names)
    odd = non_finite(value)
    if odd is not None:
        _fail(
            f"the '{keywords.action_input}:' holds {odd[1]}, which is not a JSON number; write a finite number "
            "or null",
            keywords,
            names,
        )
    return value


def _repair(text: str) -> Any:
    import json_repair  # imported on first broken reply: most replies parse as they are

    try:
        return json_repair.loads(text)
    except Exception:  # the repairer's own failures mean "not JSON" to us
        return None


def _fail(reason: str, keywords: ReactKeywords, names: tuple[str, ...] | None) -> Any:
    raise ReactParseError(f"Could not read your reply: {reason}.\n{expected_format(keywords, names)}")
