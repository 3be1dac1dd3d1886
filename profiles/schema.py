"""The JSON Schema of the persona file format, for editors' YAML support and for CI; and the field table.

The schema's shapes are written out rather than derived from `ProfileConfig`, because the file
format (mappings for dynamic fields, `{file: …}` templates) is what editors see, not the Python
types behind it. Descriptions come from the persona model's fields, and a field the shapes here
do not know yet still appears, with its description, so the schema never refuses a valid persona.
`field_table()` is the README's table of fields, made from the same descriptions.
"""

from __future__ import annotations

from typing import Any

from .dynconfig import DYNAMIC_KEYS
from .fields import LIST_FIELDS, PROFILE_FIELDS, TEXT_FIELDS
from .inheritance import EXTENDS_DESCRIPTION
from .providers.env import DEPLOYMENT_PATTERN

__all__ = ["SCHEMA_ID", "field_table", "persona_schema"]

SCHEMA_ID = "https://agent-profiles.dev/schema/persona.schema.json"

def _description(field: str) -> str:
    """A field's description, written once on the persona model (and shown in the README's table)."""
    from .config import PersonaModel

    return PersonaModel.model_fields[field].description or ""


#: A path a template root may not have: absolute, a drive letter, or a `..` part.
_ESCAPING_PATH = r"(^/|^[A-Za-z]:|(^|[/\\])\.\.([/\\]|$))"


def _shapes() -> dict[str, dict[str, Any]]:
    """The JSON shape of each field the file format knows, without its description."""
    text = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/dynamic"}]}
    texts = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"$ref": "#/$defs/dynamic"}]}
    shapes: dict[str, dict[str, Any]] = {field: text for field in TEXT_FIELDS}
    shapes.update({field: texts for field in LIST_FIELDS})
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
    shapes["templates"] = {"type": "object", "additionalProperties": {"oneOf": one_key}}
    shapes["variables"] = {"type": "object"}
    shapes["samples"] = {"type": "object"}
    shapes["tools"] = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"},
                "description": {"type": "string", "minLength": 1},
                "parameters": {
                    "description": "JSON Schema of the arguments; an object schema.",
                    "type": "object",
                    "properties": {"type": {"const": "object"}},
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
        "uniqueItems": True,
    }
    shapes["allow_secrets"] = {"type": "array", "items": {"enum": list(PROFILE_FIELDS)}, "uniqueItems": True}
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
        "default": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "key": {"type": "string", "minLength": 1},
        "provider": {"type": "string"},
        "is_list": {"type": "boolean"},
        "separator": {"type": "string", "minLength": 1},
        "secret": {"type": "boolean"},
        "description": {"type": "string"},
        "category": {"type": "string"},
    }
    shapes = _shapes()
    from .config import PYTHON_ONLY_FIELDS, DeploymentOverlay, PersonaModel

    def described(field: str) -> dict[str, Any]:
        # a field without a shape here yet takes any value: the model validates it
        return {"description": _description(field), **shapes.get(field, {})}

    properties = {field: described(field) for field in PersonaModel.model_fields if field not in PYTHON_ONLY_FIELDS}
    # an overlay may change any field a deployment overlay has; extends and deployments belong to the file
    overlay = {field: properties[field] for field in DeploymentOverlay.model_fields if field in properties}
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
                "anyOf": [{"required": ["default"]}, {"required": ["key"]}],
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
