"""Output schemas: the JSON Schema a persona's replies follow, checked once and used three ways.

A persona's `output_schema:` is a JSON Schema written inline, or `{file: schemas/answer.json}`
(JSON or YAML, inside the persona's folder), or `{store: name}` (read from the prompt store when
the profile is created). The reference forms may also give `name` (what OpenAI calls the format;
default: the schema's `title`, else `response`) and `strict`; an inline schema with those is
written `{schema: {...}, name: …, strict: …}`.

The schema is checked against the meta-schema of the draft its `$schema` names (2020-12 when it
names none; an unknown one is refused, not silently read as 2020-12), and every local `$ref` must
resolve. `strict` is OpenAI's strict mode: left out, it is on exactly when the schema fits the
subset strict mode takes (`openai_strict_problems`); set to true, a schema outside that subset is
refused with the reasons. Then the schema is

- given to templates as `out_schema` (the JSON text), as DB-GPT's prompts expect;
- sent as each API's response format (`requests.py`);
- the check `parse_reply` holds a model's reply to, after repairing broken JSON.

Checking needs the `jsonschema` package: `pip install 'agent-profiles[schema]'`. It is imported
only by personas that have an output schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .errors import ConfigError, SchemaReplyError
from .jsonlines import SURROGATE_PROBLEM, NestingError, lone_surrogate, non_finite
from .jsonlines import loads as load_json

__all__ = [
    "DEFAULT_NAME",
    "SPEC_KEYS",
    "OutputSchema",
    "OutputSchemaSpecError",
    "build_output_schema",
    "check_reference",
    "is_reference",
    "openai_strict_problems",
    "parse_reply",
    "read_schema_text",
    "schema_problems",
]

#: The format name OpenAI is sent when the schema has no usable `title` and the persona gives none.
DEFAULT_NAME = "response"

#: Keys of the reference form `{file | store | schema: …, name?, strict?, description?}`.
SPEC_KEYS: tuple[str, ...] = ("file", "store", "schema", "name", "strict", "description")

#: Longest reply `parse_reply` reads; a longer one is refused rather than scanned.
MAX_REPLY_CHARS = 1_000_000

#: Most schema errors a reply error lists.
MAX_LISTED = 10

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

INSTALL_HINT = "install it with: pip install 'agent-profiles[schema]'"


class OutputSchemaSpecError(ValueError):
    """An output schema or its options are not usable; `problems` lists every reason."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def _jsonschema() -> Any:
    try:
        import jsonschema
    except ImportError:
        raise ConfigError(
            f"output_schema needs the jsonschema package, which is not installed; {INSTALL_HINT}"
        ) from None
    return jsonschema


def is_reference(value: Any) -> bool:
    """Whether `value` is the reference form rather than a schema written out.

    No JSON Schema keyword is called `file`, `store` or `schema`, so a mapping holding one is the
    reference form (and `check_reference` says what is wrong with it, if anything).
    """
    return isinstance(value, Mapping) and any(key in value for key in ("file", "store", "schema"))


def check_reference(value: Mapping[str, Any]) -> None:
    """Refuse a reference form with two sources or keys it does not take.

    Raises:
        OutputSchemaSpecError: naming what to fix.
    """
    sources = [key for key in ("file", "store", "schema") if key in value]
    if len(sources) != 1:
        raise OutputSchemaSpecError([f"give one of file, store or schema, not {' and '.join(sources)}"])
    unknown = sorted(str(key) for key in value if key not in SPEC_KEYS)
    if unknown:
        raise OutputSchemaSpecError(
            [f"{sources[0]}: takes only name, strict and description beside it, not {', '.join(unknown)}"]
        )


def _where(path: Any) -> str:
    parts = list(path)
    return "/" + "/".join(str(part) for part in parts) if parts else "<root>"


def _local_refs(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield path, ref
        for key, value in node.items():
            if key not in ("enum", "const", "default", "examples"):
                yield from _local_refs(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _local_refs(value, (*path, index))


def _resolves(root: Any, ref: str) -> bool:
    target = root
    for raw in ref[2:].split("/") if ref != "#" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return False
    return True


#: Longest a schema's `pattern` may take to match one value of a reply, in seconds.
PATTERN_SECONDS = 1.0

_BOUNDED: dict[Any, Any] = {}


def _bounded(cls: Any) -> Any:
    """`cls` with `pattern`, `patternProperties` and `additionalProperties` matched under a time bound.

    A persona's pattern such as `^(a+)+$` backtracks for minutes on a reply of thirty characters,
    and Python's `re` cannot be stopped; the `regex` package (installed with the schema extra) can.
    Without it the validator is `cls` itself.
    """
    found = _BOUNDED.get(cls)
    if found is not None:
        return found
    try:
        import regex
    except ImportError:  # jsonschema installed alone: patterns match as jsonschema matches them
        return cls
    jsonschema = _jsonschema()
    error_type = jsonschema.ValidationError

    def search(pattern: str, text: str) -> bool:
        try:
            return regex.search(pattern, text, timeout=PATTERN_SECONDS) is not None
        except TimeoutError:
            raise _SlowPattern(pattern) from None

    def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string"):
            try:
                if not search(patrn, instance):
                    yield error_type(f"{instance!r} does not match {patrn!r}")
            except _SlowPattern as slow:
                yield error_type(slow.message)

    def pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                try:
                    matched = search(patrn, key)
                except _SlowPattern as slow:
                    yield error_type(slow.message)
                    return
                if matched:
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    keywords = cls.VALIDATORS
    additional = keywords.get("additionalProperties")

    def additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Any:
        patterns = schema.get("patternProperties") if isinstance(schema, dict) else None
        if not patterns or not validator.is_type(instance, "object"):
            yield from additional(validator, allowed, instance, schema)
            return
        # jsonschema's own keyword, with its search for the keys no pattern matches bounded
        joined = "|".join(patterns)
        properties = schema.get("properties", {})
        try:
            extras = [key for key in instance if key not in properties and not search(joined, key)]
        except _SlowPattern as slow:
            yield error_type(slow.message)
            return
        if validator.is_type(allowed, "object"):
            for key in extras:
                yield from validator.descend(instance[key], allowed, path=key)
        elif not allowed and extras:
            verb = "does" if len(extras) == 1 else "do"
            listed = ", ".join(repr(key) for key in sorted(extras))
            yield error_type(f"{listed} {verb} not match any of the regexes: {', '.join(map(repr, sorted(patterns)))}")

    changed = {"pattern": pattern, "patternProperties": pattern_properties}
    if additional is not None:
        changed["additionalProperties"] = additional_properties
    found = _BOUNDED[cls] = jsonschema.validators.extend(cls, {k: v for k, v in changed.items() if k in keywords})
    return found


class _SlowPattern(Exception):
    def __init__(self, pattern: str) -> None:
        shown = pattern if len(pattern) <= 60 else pattern[:59] + "…"
        self.message = (
            f"the schema's pattern {shown!r} took over {PATTERN_SECONDS:g} s to check this value, so it was not "
            "checked; the persona's output_schema needs a pattern that does not backtrack (e.g. ^a+$ for ^(a+)+$)"
        )
        super().__init__(self.message)


def _validator_class(schema: Any) -> Any:
    jsonschema = _jsonschema()
    if isinstance(schema, dict) and "$schema" in schema:
        if not isinstance(schema["$schema"], str):  # jsonschema parses it as a URL, and fails on anything else
            return None
        return jsonschema.validators.validator_for(schema, default=None)
    return jsonschema.Draft202012Validator


def schema_problems(schema: Any) -> list[str]:
    """Every reason `schema` is not a valid JSON Schema; an empty list when it is one.

    All meta-schema errors are listed (jsonschema's `check_schema` raises only one), a `pattern`
    Python cannot compile is reported, and a local `$ref` must point inside the schema.

    Raises:
        ConfigError: the jsonschema package is not installed.
    """
    if not isinstance(schema, (dict, bool)):
        return [f"<root>: a JSON Schema is a mapping (or true/false), got {type(schema).__name__}"]
    try:
        json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return [f"<root>: must be plain JSON data ({exc}); quote dates and other values YAML reads as objects"]
    cls = _validator_class(schema)
    if cls is None:
        return [
            f"$schema: unknown meta-schema {schema['$schema']!r}; name a JSON Schema draft or leave it out (2020-12)"
        ]
    meta = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
    problems = [
        f"{_where(error.absolute_path)}: {error.message}" for error in sorted(meta.iter_errors(schema), key=str)
    ]
    ids, anchors = _names_declared(schema)
    for path, ref in _local_refs(schema):
        if ref.startswith("#"):
            if not (ref == "#" or (ref.startswith("#/") and _resolves(schema, ref)) or ref[1:] in anchors):
                problems.append(f"{_where(path)}/$ref: {ref!r} points at nothing in the schema")
        elif ref.split("#", 1)[0] not in ids:
            # a validator would try to fetch it, or fail when a reply is checked: nothing is read from outside
            problems.append(
                f"{_where(path)}/$ref: {ref!r} points outside the schema; only references inside it are followed "
                "(#/…, or an $id it declares): copy the referenced schema in under $defs"
            )
    return problems


def _names_declared(node: Any) -> tuple[set[str], set[str]]:
    """The `$id`s and `$anchor`s (and `$dynamicAnchor`s) a schema declares anywhere inside it."""
    ids: set[str] = set()
    anchors: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("$id"), str):
                ids.add(item["$id"].split("#", 1)[0])
            for key in ("$anchor", "$dynamicAnchor"):
                if isinstance(item.get(key), str):
                    anchors.add(item[key])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return ids, anchors


# OpenAI strict mode ---------------------------------------------------------------------------

_STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "definitions",
        "description",
        "title",
        "default",
        "$schema",
        "$id",
        "$comment",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
_STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
_STRICT_MAX_DEPTH, _STRICT_MAX_PROPERTIES, _STRICT_MAX_ENUM = 10, 5000, 1000


def openai_strict_problems(schema: Any) -> list[str]:
    """Why OpenAI's strict mode would refuse `schema`; an empty list when it fits.

    Strict mode (Structured Outputs and strict function tools) takes an object schema at the root,
    `additionalProperties: false` on every object, every property listed in `required` (an
    optional one is a union with null), and only its documented keywords: no allOf, oneOf, not,
    if/then/else, minLength, patternProperties, uniqueItems, …; at most 10 levels of objects,
    5,000 properties and 1,000 enum values.
    """
    problems: list[str] = []
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return ["<root>: strict mode needs an object schema (type: object) at the root"]
    counts = {"properties": 0, "enum": 0}

    def walk(node: Any, path: tuple[Any, ...], depth: int) -> None:
        if not isinstance(node, dict):
            problems.append(f"{_where(path)}: boolean schemas are not taken")
            return
        for key in node:
            if key not in _STRICT_KEYWORDS:
                problems.append(f"{_where((*path, key))}: {key!r} is not taken in strict mode")
        kinds = node.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if node.get("format") is not None and node["format"] not in _STRICT_FORMATS:
            problems.append(f"{_where((*path, 'format'))}: format {node['format']!r} is not taken in strict mode")
        if isinstance(node.get("enum"), list):
            counts["enum"] += len(node["enum"])
        if "object" in kinds or "properties" in node:
            if depth > _STRICT_MAX_DEPTH:
                problems.append(f"{_where(path)}: objects nest more than {_STRICT_MAX_DEPTH} levels deep")
            properties = node.get("properties") or {}
            counts["properties"] += len(properties)
            if node.get("additionalProperties") is not False:
                problems.append(f"{_where(path)}: objects need additionalProperties: false")
            optional = [key for key in properties if key not in (node.get("required") or [])]
            if optional:
                problems.append(
                    f"{_where(path)}: every property must be required (make optional ones nullable): "
                    + ", ".join(optional)
                )
            for key, value in properties.items():
                walk(value, (*path, "properties", key), depth + 1)
        if "items" in node:
            walk(node["items"], (*path, "items"), depth)
        for index, value in enumerate(node.get("anyOf") or []):
            walk(value, (*path, "anyOf", index), depth)
        for defs in ("$defs", "definitions"):
            for key, value in (node.get(defs) or {}).items():
                walk(value, (*path, defs, key), depth)

    walk(schema, (), 1)
    if counts["properties"] > _STRICT_MAX_PROPERTIES:
        problems.append(
            f"<root>: {counts['properties']} properties; strict mode takes at most {_STRICT_MAX_PROPERTIES}"
        )
    if counts["enum"] > _STRICT_MAX_ENUM:
        problems.append(f"<root>: {counts['enum']} enum values; strict mode takes at most {_STRICT_MAX_ENUM}")
    return problems


# the schema a profile holds -------------------------------------------------------------------


@dataclass(frozen=True)
class OutputSchema:
    """A checked output schema with the options each API is sent it with."""

    schema: Mapping[str, Any] = field(repr=False)
    #: What OpenAI calls the format (`json_schema.name`): letters, digits, '_' and '-'.
    name: str = DEFAULT_NAME
    #: OpenAI strict mode; Anthropic's structured output is always constrained and takes no flag.
    strict: bool = False
    description: str | None = None
    #: Where it came from: `inline`, `file:schemas/answer.json`, `store:triage/schema v2 label=production`.
    origin: str = "inline"
    #: Set for `{store: key}` until the store's text is fetched at `create_profile`.
    store_key: str | None = None
    #: The options as the persona gave them (name, strict, description), for a schema fetched later.
    asked: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def text(self) -> str:
        """The schema as one line of JSON, as templates get it in `out_schema` (the fewest tokens)."""
        return json.dumps(self.schema, ensure_ascii=False)

    def as_dict(self) -> dict[str, Any]:
        """A private copy of the schema, safe to put into a request body."""
        return json.loads(json.dumps(self.schema))

    @cached_property
    def _validator(self) -> Any:
        cls = _bounded(_validator_class(self.schema))
        return cls(self.schema)

    def errors(self, value: Any) -> list[str]:
        """Why `value` does not follow the schema, one line each with its JSON pointer."""
        found = sorted(self._validator.iter_errors(value), key=lambda error: list(map(str, error.absolute_path)))
        return [f"{_where(error.absolute_path)}: {error.message}" for error in found]


def _default_name(schema: Any) -> str:
    title = schema.get("title") if isinstance(schema, dict) else None
    if isinstance(title, str):
        cleaned = re.sub(r"[^a-zA-Z0-9_-]+", "_", title.strip()).strip("_")[:64]
        if cleaned:
            return cleaned
    return DEFAULT_NAME


def build_output_schema(
    schema: Any,
    *,
    origin: str = "inline",
    name: Any = None,
    strict: Any = None,
    description: Any = None,
    store_key: str | None = None,
) -> OutputSchema:
    """Check `schema` and its options and return the `OutputSchema`; `store_key` skips the checks.

    Raises:
        OutputSchemaSpecError: every reason it cannot be used.
        ConfigError: the jsonschema package is not installed.
    """
    problems: list[str] = []
    if name is not None and (not isinstance(name, str) or not _NAME.match(name)):
        problems.append(f"name must be 1 to 64 letters, digits, '_' or '-' (OpenAI's rule), got {name!r}")
    if strict is not None and not isinstance(strict, bool):
        problems.append(f"strict must be true or false, got {strict!r}")
    if description is not None and not isinstance(description, str):
        problems.append("description must be text")
    if store_key is not None:
        if problems:
            raise OutputSchemaSpecError(problems)
        asked = {"name": name, "strict": strict, "description": description}
        return OutputSchema({}, name or DEFAULT_NAME, bool(strict), description, origin, store_key, asked)
    if not problems:
        problems = schema_problems(schema)
    if not problems and not isinstance(schema, dict):
        problems.append("<root>: an output schema is a mapping, e.g. {type: object, properties: {...}}")
    if problems:
        raise OutputSchemaSpecError(problems)
    plain = json.loads(json.dumps(schema))
    fits = openai_strict_problems(plain)
    if strict is True and fits:
        raise OutputSchemaSpecError(
            ["strict: true, but OpenAI's strict mode would refuse this schema: " + "; ".join(fits[:MAX_LISTED])]
        )
    return OutputSchema(
        plain,
        name if isinstance(name, str) else _default_name(plain),
        (not fits) if strict is None else strict,
        description,
        origin,
    )


def read_schema_text(text: str, origin: str) -> Any:
    """A schema's data from JSON text, or YAML text (read safely and bounded) when it is not JSON.

    Raises:
        OutputSchemaSpecError: the text is neither.
    """
    try:
        return load_json(text)
    except ValueError:
        pass
    from .safe_yaml import safe_load

    try:
        return safe_load(text)
    except Exception as exc:  # yaml.YAMLError, or a bound that tripped
        raise OutputSchemaSpecError([f"{origin} is neither JSON nor YAML ({type(exc).__name__})"]) from None


# reading a reply ------------------------------------------------------------------------------

_NO_JSON = "Your reply holds no JSON. Reply with only a JSON value{what}, with no prose or code fences around it."
_SEVERAL_JSON = "Your reply holds more than one JSON value. Reply again with only one JSON value, the answer."


_NESTED = (
    "Your reply's JSON is nested too deeply to read. Reply again with only the JSON value, nested a few "
    "levels at most."
)


def _strict_values(text: str) -> list[Any]:
    """The reply's first object or array when it is well-formed JSON, and the next one after it
    when that is well-formed too: [], [first] or [first, second].

    Prose and code fences around one value leave it as it is. Two values are an error for the
    caller: json-repair would read `{…} {…}` as the list of both and `[1] [2]` as the last, so a
    reply holding two answers would pass as one. Only the first `{` or `[` of each stretch is
    tried: one inside broken JSON (`{"labels": ["a"],}`) is not a value of its own.
    """
    decoder = json.JSONDecoder()
    values: list[Any] = []
    at = 0
    while len(values) < 2:
        starts = [i for i in (text.find("{", at), text.find("[", at)) if i >= 0]
        if not starts:
            break
        try:
            value, at = decoder.raw_decode(text, min(starts))
        except RecursionError:
            raise SchemaReplyError(_NESTED) from None
        except ValueError:
            break
        values.append(value)
    return values


def _read_json(text: str) -> tuple[bool, Any]:
    """(found, value): the JSON the reply holds, repaired where models commonly break it."""
    stripped = text.strip()
    try:
        return True, load_json(stripped)
    except NestingError:
        raise SchemaReplyError(_NESTED) from None
    except ValueError:
        pass
    values = _strict_values(stripped)
    if len(values) > 1:
        raise SchemaReplyError(_SEVERAL_JSON)
    if values:
        return True, values[0]
    import json_repair

    try:
        value = json_repair.repair_json(stripped, return_objects=True)
    except Exception:  # the repairer gave up on this text
        return False, None
    # json-repair answers "" when it finds nothing that looks like JSON
    if value == "" and stripped not in ('""', "''"):
        return False, None
    return True, value


def parse_reply(text: str, output: OutputSchema | None) -> Any:
    """The JSON value a model's reply holds, checked against `output` when there is one.

    Code fences, prose around the JSON, trailing commas and single quotes are repaired
    (json-repair); a reply holding two JSON values is refused, not read as a list of both. The
    message of the error is written to be sent back to the model.

    Raises:
        SchemaReplyError: the reply holds no JSON, or JSON the schema refuses.
    """
    if not isinstance(text, str):
        raise SchemaReplyError(f"a reply is text, got {type(text).__name__}")
    if len(text) > MAX_REPLY_CHARS:
        raise SchemaReplyError(f"the reply is over {MAX_REPLY_CHARS} characters; ask for a shorter one")
    what = " that follows the JSON Schema you were given" if output is not None else ""
    found, value = _read_json(text)
    if not found:
        raise SchemaReplyError(_NO_JSON.format(what=what))
    broken = lone_surrogate(value)
    if broken is not None:
        where = _where(broken[0])
        raise SchemaReplyError(
            f"Your reply holds {broken[1]} at {where}, {SURROGATE_PROBLEM}. Reply again with only the JSON "
            f"value{what}.",
            [f"{where}: {broken[1]} is {SURROGATE_PROBLEM.split(';')[0]}"],
            None,
        )
    odd = non_finite(value)
    if odd is not None:
        # json.loads reads NaN and Infinity, which JSON has not; NaN passes every minimum and maximum
        raise SchemaReplyError(
            f"Your reply holds {odd[1]} at {_where(odd[0])}, which is not a JSON number. Reply again with only "
            f"the JSON value{what}, writing a finite number (or null) there.",
            [f"{_where(odd[0])}: {odd[1]} is not a JSON number"],
            value,
        )
    if output is None:
        return value
    problems = output.errors(value)
    if problems:
        listed = "\n".join(f"- {line}" for line in problems[:MAX_LISTED])
        more = f"\n- … and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
        raise SchemaReplyError(
            f"Your reply does not follow the JSON Schema you were given:\n{listed}{more}\n"
            "Reply again with only the corrected JSON value.",
            problems,
            value,
        )
    return value
