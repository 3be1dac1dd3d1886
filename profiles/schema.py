"""The JSON Schema of the persona file format, for editors' YAML support and for CI.

It is written out rather than derived from `ProfileConfig`, because the file format (mappings
for dynamic fields, `{file: …}` templates) is what editors see, not the Python types behind it.
"""

from __future__ import annotations

from typing import Any

from .dynconfig import DYNAMIC_KEYS
from .fields import LIST_FIELDS, PROFILE_FIELDS, TEXT_FIELDS
from .providers.env import DEPLOYMENT_PATTERN

__all__ = ["SCHEMA_ID", "persona_schema"]

SCHEMA_ID = "https://agent-profiles.dev/schema/persona.schema.json"

_DESCRIPTIONS = {
    "name": "The agent's name, e.g. Aristotle.",
    "role": "What the agent is, e.g. Summarizer.",
    "goal": "What the agent aims at.",
    "desc": "A longer description of the agent.",
    "constraints": "Rules the agent keeps; rendered as a numbered list.",
    "expand_prompt": "Extra instructions; may use template variables such as {{ agents }}.",
    "examples": "Examples of good answers.",
    "retry_goal": "The goal used when retrying after a failed answer.",
    "retry_constraints": "The constraints used when retrying.",
    "language": "The answer language and template locale, e.g. en, zh, zh-TW. None means English.",
    "model": "The model the prompts are for; picks model-specific templates.",
    "avatar": "An avatar URL or name for user interfaces.",
}


#: A path a template root may not have: absolute, a drive letter, or a `..` part.
_ESCAPING_PATH = r"(^/|^[A-Za-z]:|(^|[/\\])\.\.([/\\]|$))"


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
    properties: dict[str, Any] = {}
    for field in TEXT_FIELDS:
        properties[field] = {
            "description": _DESCRIPTIONS[field],
            "anyOf": [{"type": "string"}, {"$ref": "#/$defs/dynamic"}],
        }
    for field in LIST_FIELDS:
        properties[field] = {
            "description": _DESCRIPTIONS[field],
            "anyOf": [{"type": "array", "items": {"type": "string"}}, {"$ref": "#/$defs/dynamic"}],
        }
    properties["templates"] = {
        "description": "A prompt kind's own template: {file: path relative to this file}, {inline: text}, "
        "or {store: prompt name}, read from the prompt store when the profile is created.",
        "type": "object",
        "additionalProperties": {
            "oneOf": [
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
        },
    }
    properties["variables"] = {"description": "Default values of template variables.", "type": "object"}
    properties["samples"] = {
        "description": (
            "Sample values `profiles check` renders every prompt with: variable name to value; a key naming a "
            "prompt kind (system, user, write_memory, react, or a kind of this persona) with a mapping as its "
            "value holds samples for that kind only, which win over the shared ones."
        ),
        "type": "object",
    }
    properties["tools"] = {
        "description": (
            "Tools the react prompt offers: each a name, what it does, and the JSON Schema of its arguments."
        ),
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
    properties["requires_resources"] = {
        "description": "Refuse to render the system prompt without resources that have content.",
        "type": "boolean",
    }
    properties["template_roots"] = {
        "description": (
            "Folders, relative to this file and inside its folder, holding <family>/<locale>/<kind>.j2 "
            "templates and an optional families.yaml; searched before the bundled templates."
        ),
        "type": "array",
        "items": {"type": "string", "minLength": 1, "not": {"pattern": _ESCAPING_PATH}},
    }
    properties["allow_secrets"] = {
        "description": "Secret fields (secret: true, or read from a credential-like key) that may reach a prompt.",
        "type": "array",
        "items": {"enum": list(PROFILE_FIELDS)},
        "uniqueItems": True,
    }
    # an overlay may change any field but these, which belong to the persona file itself
    overlay = {
        key: value for key, value in properties.items() if key not in ("extends", "deployments", "factory", "metadata")
    }
    properties["metadata"] = {
        "description": "Free-form data kept with the persona and written out unchanged, never rendered: text keys, "
        "JSON values, at most 64,000 characters as JSON and 8 levels deep (a sampling plan's draws go under plan).",
        "type": "object",
    }
    properties["extends"] = {
        "description": "Parent persona file(s), relative to this file and inside the loaded persona's folder; "
        "this file's fields replace theirs, and templates, variables and deployments merge per key.",
        "anyOf": [
            {"type": "string", "minLength": 1},
            {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        ],
    }
    properties["deployments"] = {
        "description": "Per deployment (dev, staging, prod, a customer), the fields it changes; "
        "an empty entry keeps the base persona.",
        "type": "object",
        "propertyNames": {"pattern": DEPLOYMENT_PATTERN.pattern.join("^$")},
        "additionalProperties": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/overlay"}]},
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
