"""The JSON Schema of the persona file format, for editors' YAML support and for CI; and the field table.

The schema's shapes are written out rather than derived from `ProfileConfig`, because the file
format (mappings for dynamic fields, `{file: …}` templates) is what editors see, not the Python
types behind it. Descriptions come from the persona model's fields, and a field the shapes here
do not know yet still appears, with its description, so the schema never refuses a valid persona.
`field_table()` is the README's table of fields, made from the same descriptions.
"""

from __future__ import annotations

from typing import Any

from .config import FILLED_VARIABLES
from .dynconfig import DYNAMIC_KEYS
from .fields import LIST_FIELDS, PROFILE_FIELDS, REQUIRED_FIELDS, TEXT_FIELDS
from .inheritance import EXTENDS_DESCRIPTION
from .inputs import INPUT_TYPES
from .messages import MESSAGE_ROLES
from .providers.env import DEPLOYMENT_PATTERN
from .settings import SETTINGS

__all__ = ["SCHEMA_ID", "field_table", "persona_schema"]

SCHEMA_ID = "https://agent-profiles.dev/schema/persona.schema.json"


def _nullable(shape: dict[str, Any]) -> dict[str, Any]:
    """`shape`, or null: the loader takes a key written with no value (`goal:`) as left out."""
    return {"anyOf": [{"type": "null"}, shape]}


def _description(field: str) -> str:
    """A field's description, written once on the persona model (and shown in the README's table)."""
    from .config import PersonaModel

    return PersonaModel.model_fields[field].description or ""


#: Names a variable or an input may not take: a persona field's, or one the library fills in.
_NOT_VARIABLES = [*PROFILE_FIELDS, *FILLED_VARIABLES]

#: Fields the loader refuses null for (a persona's name and role are text, see below).
_NOT_NULL = {"requires_resources"}

#: A path a template root may not have: absolute, a drive letter, or a `..` part.
_ESCAPING_PATH = r"(^/|^[A-Za-z]:|(^|[/\\])\.\.([/\\]|$))"


def _model_settings_schema() -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for name, spec in SETTINGS.items():
        if spec.kind == "texts":
            literal: dict[str, Any] = {
                "anyOf": [
                    {"type": "string", "minLength": 1},
                    {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
                ]
            }
        else:
            literal = {"type": spec.kind}
            if spec.low is not None:
                literal["minimum"] = spec.low
            if spec.high is not None:
                literal["maximum"] = spec.high
        settings[name] = {
            "description": spec.description,
            "anyOf": [
                {"type": "null"},
                literal,
                # a text default is read like a provider's answer; any other must fit the setting
                {
                    "$ref": "#/$defs/dynamic_setting",
                    "properties": {"default": {"anyOf": [{"type": ["null", "string"]}, literal]}},
                },
            ],
        }
    settings["extra"] = {
        "description": "Request body keys passed through untouched; a key naming an API (openai-chat, "
        "openai-responses, anthropic) holds keys for that API only.",
        "type": ["object", "null"],
    }
    return {
        "type": "object",
        "properties": settings,
        "additionalProperties": False,
    }


def _output_schema_schema() -> dict[str, Any]:
    options = {
        "name": _nullable({"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"}),
        "strict": {"type": ["boolean", "null"]},
        "description": {"type": ["string", "null"]},
    }

    def reference(key: str, value: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {key: value, **options},
            "required": [key],
            "additionalProperties": False,
        }

    return {
        "anyOf": [
            reference("file", {"type": "string", "minLength": 1, "not": {"pattern": _ESCAPING_PATH}}),
            reference("store", {"type": "string", "minLength": 1}),
            reference("schema", {"type": "object"}),
            {
                "type": "object",
                "description": "A JSON Schema written out.",
                "not": {"anyOf": [{"required": ["file"]}, {"required": ["store"]}, {"required": ["schema"]}]},
            },
        ],
    }


def _inputs_schema() -> dict[str, Any]:
    type_name = {"enum": list(INPUT_TYPES)}
    return {
        "type": "object",
        "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$", "not": {"enum": _NOT_VARIABLES}},
        "additionalProperties": {
            "anyOf": [
                {"type": "null"},
                type_name,
                {
                    "type": "object",
                    "properties": {
                        "type": {
                            "anyOf": [{"type": "null"}, type_name, {"type": "array", "items": type_name, "minItems": 1}]
                        },
                        "enum": {"type": ["array", "null"], "minItems": 1},
                        "description": {"type": ["string", "null"]},
                        "required": {"type": "boolean", "description": "Whether a render must give it; default true."},
                        "default": {},
                        "examples": {"type": "array"},
                    },
                    "additionalProperties": False,
                },
            ]
        },
    }


def _shapes() -> dict[str, dict[str, Any]]:
    """The JSON shape of each field the file format knows, without its description."""
    text = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/dynamic_text"}]}
    texts = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"$ref": "#/$defs/dynamic"}]}
    shapes: dict[str, dict[str, Any]] = {field: text for field in TEXT_FIELDS}
    shapes.update({field: texts for field in LIST_FIELDS})
    # a template locale: no path parts, no spaces around it, at most 64 characters (see language_problem)
    locale = {
        "type": "string",
        "maxLength": 64,
        # no line break anywhere first, so that `$` means the end in Python's regexes as in ECMA's
        "pattern": r"^(?![\s\S]*[\n\r])(?:|(?!.*(?:/|\\|\.\.))\S(?:.*\S)?)$",
    }
    shapes["language"] = {
        "anyOf": [
            locale,
            {"$ref": "#/$defs/dynamic_text", "properties": {"default": {"anyOf": [{"type": "null"}, locale]}}},
        ]
    }
    one_key = [
        {
            "type": "object",
            "properties": {"file": {"type": "string"}},
            "required": ["file"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"inline": {"type": "string"}},
            "required": ["inline"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"store": {"type": "string", "minLength": 1}},
            "required": ["store"],
            "additionalProperties": False,
        },
    ]
    shapes["templates"] = {
        "type": "object",
        "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_-]{0,63}$"},
        "additionalProperties": {"oneOf": one_key},
    }
    shapes["variables"] = {
        "type": "object",
        "propertyNames": {"not": {"enum": _NOT_VARIABLES}},
        # a mapping holding `key` is resolved like a dynamic field; any other value is used as written
        "additionalProperties": {
            "if": {"type": "object", "required": ["key"]},
            "then": {"$ref": "#/$defs/dynamic"},
        },
    }
    shapes["samples"] = {"type": "object"}
    shapes["tools"] = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"},
                "description": {"type": "string", "pattern": "\\S"},
                "parameters": {
                    "description": "JSON Schema of the arguments; an object schema.",
                    "type": ["object", "null"],
                    "properties": {"type": {"const": "object"}, "properties": {"type": "object"}},
                },
                "strict": {
                    "description": "OpenAI strict mode for this tool in request bodies; left out, on exactly when "
                    "the parameters fit strict mode.",
                    "type": ["boolean", "null"],
                },
            },
            "required": ["name", "description"],
            "additionalProperties": False,
        },
    }
    shapes["requires_resources"] = {"type": "boolean"}
    shapes["template_roots"] = {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "not": {"pattern": _ESCAPING_PATH}},
    }
    shapes["kinds"] = {
        "type": "array",
        "items": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_-]{0,63}$"},
    }
    shapes["allow_secrets"] = {
        "type": "array",
        "items": {"enum": [*PROFILE_FIELDS, *(f"model_settings.{name}" for name in SETTINGS)]},
    }
    shapes["model_settings"] = _model_settings_schema()
    shapes["output_schema"] = _output_schema_schema()
    shapes["inputs"] = _inputs_schema()
    shapes["roles"] = {
        "type": "object",
        "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"},
        "additionalProperties": {"enum": list(MESSAGE_ROLES)},
    }
    shapes["messages"] = {
        "type": "array",
        "minItems": 1,
        "items": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"history": {"const": True}},
                    "required": ["history"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"},
                        "role": {"enum": list(MESSAGE_ROLES)},
                    },
                    "required": ["kind"],
                    "additionalProperties": False,
                },
            ]
        },
        # the history goes in one place
        "contains": {"type": "object", "required": ["history"]},
        "minContains": 0,
        "maxContains": 1,
    }
    shapes["metadata"] = {"type": "object"}
    shapes["deployments"] = {
        "type": "object",
        "propertyNames": {"pattern": DEPLOYMENT_PATTERN.pattern.join("^$")},
        "additionalProperties": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/overlay"}]},
    }
    return shapes


def persona_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) that persona YAML files follow."""
    dynamic_properties: dict[str, Any] = {
        "default": {"anyOf": [{"type": "null"}, {"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "key": {"type": ["string", "null"], "pattern": "\\S"},
        "provider": {"type": ["string", "null"]},
        "is_list": {"type": "boolean"},
        "separator": {"type": "string", "minLength": 1},
        "secret": {"type": "boolean"},
        "description": {"type": ["string", "null"]},
        "category": {"type": ["string", "null"]},
    }
    # a dynamic field needs a default or a key that is not null
    default_or_key = [
        {"required": ["default"], "properties": {"default": {"not": {"type": "null"}}}},
        {"required": ["key"], "properties": {"key": {"type": "string"}}},
    ]
    shapes = _shapes()
    from .config import PYTHON_ONLY_FIELDS, DeploymentOverlay, PersonaModel

    def described(field: str) -> dict[str, Any]:
        # a field without a shape here yet takes any value: the model validates it
        shape = shapes.get(field, {})
        if shape and field not in _NOT_NULL:
            shape = _nullable(shape)
        return {"description": _description(field), **shape}

    properties = {field: described(field) for field in PersonaModel.model_fields if field not in PYTHON_ONLY_FIELDS}
    # an overlay may change any field a deployment overlay has; extends and deployments belong to the file
    overlay = {field: properties[field] for field in DeploymentOverlay.model_fields if field in properties}
    for field in REQUIRED_FIELDS:  # an overlay may leave them null, keeping the base's; the persona may not
        properties[field] = {
            "description": _description(field),
            "anyOf": [{"type": "string", "minLength": 1}, {"$ref": "#/$defs/dynamic_text"}],
        }
    properties["extends"] = {
        "description": EXTENDS_DESCRIPTION,
        "anyOf": [
            {"type": "string", "minLength": 1},
            {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        ],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "agent-profiles persona",
        "type": "object",
        "properties": properties,
        # a persona that extends another may take its name and role from it
        "if": {"required": ["extends"]},
        "else": {"required": ["name", "role"]},
        "additionalProperties": False,
        "$defs": {
            "dynamic": {
                "description": "A value resolved when the profile is created: from a provider's key, else the default.",
                "type": "object",
                "properties": {key: dynamic_properties[key] for key in DYNAMIC_KEYS},
                "anyOf": default_or_key,
                "additionalProperties": False,
            },
            "dynamic_text": {
                "description": "A text resolved when the profile is created: from a provider's key, else the default.",
                "$ref": "#/$defs/dynamic",
                "properties": {"default": {"type": ["string", "null"]}, "is_list": {"const": False}},
            },
            "dynamic_setting": {
                "description": "A model setting resolved when the profile is created: the provider's text is read "
                "as the setting's type, else the default is used.",
                "type": "object",
                "properties": {
                    **{key: dynamic_properties[key] for key in DYNAMIC_KEYS},
                    "default": {
                        "anyOf": [
                            {"type": "null"},
                            {"type": "number"},
                            {"type": "string"},
                            {"type": "array", "items": {"type": "string"}},
                        ]
                    },
                },
                "anyOf": default_or_key,
                "additionalProperties": False,
            },
            "overlay": {
                "description": "Fields one deployment changes; templates and variables merge per key.",
                "type": "object",
                "properties": overlay,
                "additionalProperties": False,
            },
        },
    }


def field_table() -> str:
    """The README's table of persona fields, one row per field, in the model's order, then `extends`.

    Made from the fields' descriptions, so a field added to the model is documented by its own
    description; fields only Python can set (`factory`) are left out.
    """
    from .config import PYTHON_ONLY_FIELDS, PersonaModel

    def cell(text: str) -> str:
        return " ".join(text.replace("|", "\\|").split())

    rows = ["| field | holds |", "| --- | --- |"]
    for field in PersonaModel.model_fields:
        if field in PYTHON_ONLY_FIELDS:
            continue
        text = _description(field)
        if field in TEXT_FIELDS or field in LIST_FIELDS:
            kind = "text" if field in TEXT_FIELDS else "a list of texts"
            text = f"{kind} or a dynamic field: {text[:1].lower()}{text[1:]}"
        rows.append(f"| `{field}` | {cell(text)} |")
    rows.append(f"| `extends` | {cell(EXTENDS_DESCRIPTION)} |")
    return "\n".join(rows) + "\n"
