"""Files that are not personas but sit beside them: another tool's agent files and sampling plans.

A folder of personas often holds a CrewAI `agents.yaml`, a Semantic Kernel prompt or a sampling
plan too. Read as a persona, such a file gives a dozen "unknown field" lines that say nothing of
what it is; `lookalike` names what it looks like and the command that uses it, so the loader can
report that one line instead. Only files without a `role:` count: a persona with a typo is
still a persona, and keeps its field-by-field errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["lookalike"]

_CREWAI_AGENT_KEYS = frozenset({"role", "goal", "backstory"})
_CREWAI_TASK_KEYS = frozenset({"description", "expected_output"})
_SK_PROMPT_KEYS = frozenset({"template_format", "input_variables", "execution_settings"})
_PLAN_KEYS = frozenset({"count", "seed", "attributes"})


def lookalike(document: Mapping[str, Any], file: str) -> str | None:
    """What `document` (one YAML document of `file`) is if not a persona, and how to use it; else None."""
    if "role" in document:
        return None
    named = _named(document)
    if named is None:
        return None
    what, how = named
    return f"this is {what}, not a persona; {how.format(file=file)}"


def _named(document: Mapping[str, Any]) -> tuple[str, str] | None:
    keys = set(document)
    if "component_type" in keys:
        return "an Agent Spec component", "bring it in with `profiles import agentspec {file} --out DIR`"
    if "agent_class" in keys or {"instruction", "model"} <= keys:
        return "a Google ADK agent config", "bring it in with `profiles import adk {file} --out DIR`"
    if isinstance(document.get("type"), str) and document["type"].endswith("_agent"):  # chat_completion_agent
        return "a Semantic Kernel agent", "bring it in with `profiles import semantic-kernel {file} --out DIR`"
    if "template" in keys and keys & _SK_PROMPT_KEYS:
        return "a Semantic Kernel prompt", "bring it in with `profiles import semantic-kernel {file} --out DIR`"
    if "attributes" in keys and keys <= _PLAN_KEYS:
        return "a sampling plan", "use it with `profiles generate --plan {file}`"
    entries = list(document.values())
    if entries and all(isinstance(entry, Mapping) for entry in entries):
        if all(_CREWAI_AGENT_KEYS & set(entry) for entry in entries):
            return "a CrewAI agents.yaml", "bring it in with `profiles import crewai {file} --out DIR`"
        if all(_CREWAI_TASK_KEYS <= set(entry) for entry in entries):
            return (
                "a CrewAI tasks.yaml",
                "import the agents.yaml beside it with `profiles import crewai`, which reads this file too",
            )
    return None
