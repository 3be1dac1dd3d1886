"""Typed inputs: the template variables a persona's caller must give, each with its JSON type.

```yaml
inputs:
  ticket: {type: string, description: The customer's message.}
  tier: {type: string, enum: [free, pro, enterprise], default: free}
  max_labels: {type: integer, default: 3, examples: [2]}
  notes: string            # shorthand for {type: string}
```

A declaration holds `type` (one of the JSON Schema types below, or a list of them; none means
any), `enum`, `description`, `required` (default true), `default` and `examples`. Values are
checked at every render (`problem`), text from a command line is read by the declared type
(`from_text`), and `inputs_schema` gives the JSON Schema of all of them, for tools that ask a user
or a model for arguments.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .jsonlines import loads as load_json

__all__ = [
    "INPUT_KEYS",
    "INPUT_TYPES",
    "InputSpec",
    "InputSpecError",
    "inputs_schema",
    "parse_inputs",
]

#: The JSON Schema types an input may declare.
INPUT_TYPES: tuple[str, ...] = ("string", "integer", "number", "boolean", "array", "object")

#: Keys one declaration may hold.
INPUT_KEYS: tuple[str, ...] = ("type", "enum", "description", "required", "default", "examples")

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_WORDS = {
    "string": "text",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping",
}

_MISSING: Any = object()


class InputSpecError(ValueError):
    """An `inputs:` declaration is malformed; `name` is the input (None for the mapping itself)."""

    def __init__(self, reason: str, name: str | None = None) -> None:
        self.reason = reason
        self.name = name
        super().__init__(reason if name is None else f"inputs.{name}: {reason}")


def _is(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind == "array":
        return isinstance(value, (list, tuple))
    return isinstance(value, Mapping)


@dataclass(frozen=True)
class InputSpec:
    """One declared input: its type, allowed values, whether it is required, and its default."""

    name: str
    #: The JSON types it takes; empty means any.
    types: tuple[str, ...] = ()
    enum: tuple[Any, ...] | None = None
    description: str | None = None
    required: bool = True
    default: Any = field(default=_MISSING, repr=False)
    examples: tuple[Any, ...] = ()

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    @property
    def expected(self) -> str:
        """What the input takes, in words: "an integer", "one of 'free', 'pro'"."""
        if self.enum is not None:
            return "one of " + ", ".join(repr(item) for item in self.enum)
        if not self.types:
            return "any value"
        return " or ".join(_WORDS[kind] for kind in self.types)

    def problem(self, value: Any) -> str | None:
        """Why `value` does not fit this input, or None when it does."""
        if self.types and not any(_is(kind, value) for kind in self.types):
            return f"expected {self.expected}, got {_kind_of(value)}"
        if self.enum is not None and value not in self.enum:
            return f"expected {self.expected}, got {_shown(value)}"
        return None

    def from_text(self, text: str) -> Any:
        """The value `text` (from `--var NAME=TEXT`) stands for, read by the declared type.

        Raises:
            InputSpecError: the text is no value of that type.
        """
        types = self.types or ("string",)
        for kind in types:
            value = _read(kind, text)
            if value is not _MISSING:
                problem = self.problem(value)
                if problem is None:
                    return value
        raise InputSpecError(f"{_shown(text)} is not {self.expected}", self.name)

    def json_schema(self) -> dict[str, Any]:
        """This input as a JSON Schema."""
        schema: dict[str, Any] = {}
        if self.types:
            schema["type"] = self.types[0] if len(self.types) == 1 else list(self.types)
        if self.enum is not None:
            schema["enum"] = list(self.enum)
        if self.description:
            schema["description"] = self.description
        if self.has_default:
            schema["default"] = self.default
        if self.examples:
            schema["examples"] = list(self.examples)
        return schema

    def to_dict(self) -> dict[str, Any]:
        """The declaration as a persona file writes it."""
        written = self.json_schema()
        if "type" not in written and self.types:
            written["type"] = list(self.types)
        if not self.required:
            written["required"] = False
        return written

    @property
    def needs_value(self) -> bool:
        """Whether a render must be given a value: required and without a default."""
        return self.required and not self.has_default


def _read(kind: str, text: str) -> Any:
    stripped = text.strip()
    if kind == "string":
        return text
    if kind == "boolean":
        lowered = stripped.lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        return _MISSING
    if kind == "integer":
        try:
            return int(stripped)
        except ValueError:
            return _MISSING
    if kind == "number":
        try:
            number = float(stripped)
        except ValueError:
            return _MISSING
        if not math.isfinite(number):
            return _MISSING
        return int(number) if number.is_integer() and "." not in stripped and "e" not in stripped.lower() else number
    try:
        value = load_json(stripped)
    except ValueError:
        return _MISSING
    return value if _is(kind, value) else _MISSING


def _kind_of(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value}, which is no JSON number"
    for kind in ("boolean", "integer", "number", "string", "array", "object"):
        if _is(kind, value):
            return _WORDS[kind]
    return type(value).__name__


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _declaration(name: str, value: Any) -> InputSpec:
    if isinstance(value, InputSpec):
        return value
    if isinstance(value, str):
        value = {"type": value}
    elif value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise InputSpecError(
            f"expected a type name (e.g. string) or a mapping with {', '.join(INPUT_KEYS)}, got {_kind_of(value)}", name
        )
    unknown = sorted(str(key) for key in value if key not in INPUT_KEYS)
    if unknown:
        raise InputSpecError(f"unknown key(s) {', '.join(unknown)}; allowed keys are {', '.join(INPUT_KEYS)}", name)
    raw_types = value.get("type")
    if raw_types is None:
        types: tuple[str, ...] = ()
    elif isinstance(raw_types, str):
        types = (raw_types,)
    elif isinstance(raw_types, (list, tuple)) and raw_types and all(isinstance(item, str) for item in raw_types):
        types = tuple(dict.fromkeys(raw_types))
    else:
        raise InputSpecError(f"type must be one of {', '.join(INPUT_TYPES)}, or a list of them", name)
    bad = [item for item in types if item not in INPUT_TYPES]
    if bad:
        raise InputSpecError(f"type {bad[0]!r} is not one of {', '.join(INPUT_TYPES)}", name)
    enum = value.get("enum")
    if enum is not None:
        if not isinstance(enum, (list, tuple)) or not enum:
            raise InputSpecError("enum must be a non-empty list of the values allowed", name)
        enum = tuple(enum)
    description = value.get("description")
    if description is not None and not isinstance(description, str):
        raise InputSpecError("description must be text", name)
    required = value.get("required", True)
    if not isinstance(required, bool):
        raise InputSpecError("required must be true or false", name)
    examples = value.get("examples", ())
    if not isinstance(examples, (list, tuple)):
        raise InputSpecError("examples must be a list of values", name)
    spec = InputSpec(name, types, enum, description, required, value.get("default", _MISSING), tuple(examples))
    if enum is not None and types:
        for item in enum:
            if not any(_is(kind, item) for kind in types):
                raise InputSpecError(f"enum value {_shown(item)} is not {' or '.join(_WORDS[k] for k in types)}", name)
    checks = [("default", spec.default)] if spec.has_default else []
    checks += [("example", item) for item in examples]
    for what, item in checks:
        if item is None and not spec.required:
            continue
        problem = spec.problem(item)
        if problem:
            raise InputSpecError(f"{what} {_shown(item)} does not fit: {problem}", name)
    try:
        json.dumps([spec.default if spec.has_default else None, list(examples), list(enum or ())], allow_nan=False)
    except (TypeError, ValueError):
        raise InputSpecError("default, enum and examples must be plain JSON data", name) from None
    return spec


def parse_inputs(value: Any) -> dict[str, InputSpec]:
    """Check an `inputs:` mapping and return each input's declaration.

    Raises:
        InputSpecError: naming the input and what to fix.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputSpecError("expected a mapping of template variable to its declaration, e.g. {ticket: string}")
    specs = {}
    for name, declaration in value.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise InputSpecError(f"{name!r} is not a template variable name (letters, digits and '_')")
        specs[name] = _declaration(name, declaration)
    return specs


def inputs_schema(inputs: Mapping[str, InputSpec]) -> dict[str, Any]:
    """The JSON Schema of an object holding every input: for forms, MCP prompt arguments, tool calls."""
    return {
        "type": "object",
        "properties": {name: spec.json_schema() for name, spec in inputs.items()},
        "required": [name for name, spec in inputs.items() if spec.needs_value],
        "additionalProperties": False,
    }
