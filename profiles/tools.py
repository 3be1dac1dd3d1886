"""Tools an agent may call: a name, what it does, and the JSON Schema of its arguments.

A persona lists them under `tools:`, or a caller passes them when rendering
(`format_prompt("react", tools=[...])`). Either way they are checked here once, so a template
can rely on every tool having a usable name, a description and an object schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .output_schema import openai_strict_problems

__all__ = ["Tool", "ToolSpecError", "parse_tools"]

#: Keys a tool's mapping may hold.
TOOL_KEYS = ("name", "description", "parameters", "strict")

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


class ToolSpecError(ValueError):
    """A tool list is malformed; callers turn it into a `ConfigError` or a `RenderError`.

    `index` is the tool's position (None for the list itself) and `reason` the message without it,
    so a persona loader can point at the item's own line.
    """

    def __init__(self, reason: str, index: int | None = None, name: Any = None) -> None:
        self.reason = reason
        self.index = index
        self.name = name if isinstance(name, str) else None
        where = (
            "tools" if index is None else f"tools[{index}]" + (f" ({name})" if isinstance(name, str) else "")
        )
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True)
class Tool:
    """One tool: `parameters` is the JSON Schema (an object schema) of its arguments.

    `strict` is OpenAI's strict mode for this tool in request bodies; None leaves it to the
    schema (on exactly when the schema fits strict mode).
    """

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: _empty_schema())
    strict: bool | None = None

    @property
    def parameters_json(self) -> str:
        """The argument schema as compact JSON, as templates show it to the model."""
        return json.dumps(self.parameters, ensure_ascii=False)

    __hash__ = None  # type: ignore[assignment]  # parameters is a dict


def parse_tools(value: Any) -> tuple[Tool, ...]:
    """Check a list of tools (mappings or `Tool`s) and return them as `Tool`s.

    OpenAI's `{"type": "function", "function": {...}}` shape is accepted too.

    Raises:
        ToolSpecError: naming the tool's position and what to fix.
    """
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ToolSpecError("expected a list of tools, each a mapping with name, description and parameters")
    tools = []
    seen: dict[str, int] = {}
    for index, item in enumerate(value):
        tool = item if isinstance(item, Tool) else _tool(item, index)
        _check_tool(tool, index)
        if tool.name in seen:
            raise ToolSpecError(
                f"name {tool.name!r} repeats tools[{seen[tool.name]}]; names must be unique", index
            )
        seen[tool.name] = index
        tools.append(tool)
    return tuple(tools)


def _tool(item: Any, index: int) -> Tool:
    if (
        isinstance(item, Mapping)
        and item.get("type") == "function"
        and isinstance(item.get("function"), Mapping)
    ):
        item = item["function"]
    if not isinstance(item, Mapping):
        raise ToolSpecError("expected a mapping with name, description and parameters", index)
    unknown = sorted(str(key) for key in item if key not in TOOL_KEYS)
    if unknown:
        raise ToolSpecError(
            f"unknown key(s) {', '.join(unknown)}; allowed keys are {', '.join(TOOL_KEYS)}", index
        )
    parameters = item.get("parameters")
    strict = item.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise ToolSpecError(f"strict must be true or false, got {strict!r}", index, item.get("name"))
    return Tool(
        name=item.get("name"),  # type: ignore[arg-type]
        description=item.get("description"),  # type: ignore[arg-type]
        parameters=_copy_schema(parameters, index) if parameters is not None else _empty_schema(),
        strict=strict,
    )


def _empty_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


def _check_tool(tool: Tool, index: int) -> None:
    if not isinstance(tool.name, str) or not _NAME.match(tool.name):
        raise ToolSpecError(
            f"name {tool.name!r} must start with a letter or '_' and hold only letters, digits, "
            "'_', '.', '-' (at most 64), so a model can write it on one line",
            index,
        )
    if not isinstance(tool.description, str) or not tool.description.strip():
        raise ToolSpecError(
            "description must be a non-empty text saying what the tool does", index, tool.name
        )
    problem = _schema_problem(tool.parameters)
    if problem:
        raise ToolSpecError(problem, index, tool.name)
    if tool.strict is True:
        # the output schema is held to the same rule: a body the API refuses is found here, not at send time
        refused = openai_strict_problems({"type": "object", **tool.parameters})  # requests say type: object
        if refused:
            raise ToolSpecError(
                "strict: true, but OpenAI's strict mode would refuse these parameters: "
                + "; ".join(f"parameters{line[6:] if line.startswith('<root>') else line}" for line in refused[:5])
                + "; make the schema fit, or set strict: false",
                index,
                tool.name,
            )


def _copy_schema(schema: Any, index: int) -> dict[str, Any]:
    """A private JSON copy, so a caller changing its dict later cannot change a profile's tool."""
    try:
        return json.loads(json.dumps(schema, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ToolSpecError(f"parameters must be plain JSON data ({exc})", index) from None


def _schema_problem(schema: Any) -> str | None:
    """What makes `schema` unusable as a tool's argument schema, or None."""
    if not isinstance(schema, Mapping):
        return "parameters must be a JSON Schema object (type: object, properties: ...)"
    if schema.get("type", "object") != "object":
        return (
            f"parameters must describe an object (type: object), got type {schema.get('type')!r}; "
            "a tool's arguments are one JSON object"
        )
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping) or not all(
        isinstance(spec, Mapping) for spec in properties.values()
    ):
        return "parameters.properties must map each argument name to its schema"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        return "parameters.required must be a list of argument names"
    missing = [name for name in required if name not in properties]
    if missing:
        return f"parameters.required names {', '.join(missing)}, not described under properties"
    return None
