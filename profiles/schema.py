"""The JSON Schema of the persona file format, for editors' YAML support and for CI.

It is written out rather than derived from `ProfileConfig`, because the file format (mappings
for dynamic fields, `{file: …}` templates) is what editors see, not the Python types behind it.
"""

from __future__ import annotations

from typing import Any

from .dynconfig import DYNAMIC_KEYS
from .fields import LIST_FIELDS, PROFILE_FIELDS, TEXT_FIELDS
from .inputs import INPUT_TYPES
from .messages import MESSAGE_ROLES
from .providers.env import DEPLOYMENT_PATTERN
from .settings import SETTINGS

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
        settings[name] = {"description": spec.description, "anyOf": [literal, {"$ref": "#/$defs/dynamic_setting"}]}
    settings["extra"] = {
        "description": "Request body keys passed through untouched; a key naming an API (openai-chat, "
        "openai-responses, anthropic) holds keys for that API only.",
        "type": "object",
    }
    return {
        "description": "Sampling and length settings for requests; each API gets the ones it takes, under its own "
        "names (see the README's table).",
        "type": "object",
        "properties": settings,
        "additionalProperties": False,
    }


def _output_schema_schema() -> dict[str, Any]:
    options = {
        "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
        "strict": {"type": "boolean"},
        "description": {"type": "string"},
    }

    def reference(key: str, value: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {key: value, **options},
            "required": [key],
            "additionalProperties": False,
        }

    return {
        "description": "The JSON Schema replies follow: written inline, {file: path} (JSON or YAML, inside this "
        "file's folder), {store: prompt name}, or {schema: {...}} with name and strict.",
        "anyOf": [
            reference("file", {"type": "string", "minLength": 1, "not": {"pattern": _ESCAPING_PATH}}),
            reference("store", {"type": "string", "minLength": 1}),
            reference("schema", {"type": ["object", "boolean"]}),
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
        "description": "Template variables callers give, each with its type; once declared, a template reading "
        "any other variable is an error when the persona loads.",
        "type": "object",
        "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
        "additionalProperties": {
            "anyOf": [
                type_name,
                {
                    "type": "object",
                    "properties": {
                        "type": {"anyOf": [type_name, {"type": "array", "items": type_name, "minItems": 1}]},
                        "enum": {"type": "array", "minItems": 1},
                        "description": {"type": "string"},
                        "required": {"type": "boolean", "description": "Whether a render must give it; default true."},
                        "default": {},
                        "examples": {"type": "array"},
                    },
                    "additionalProperties": False,
                },
            ]
        },
    }


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
                "strict": {
                    "description": "OpenAI strict mode for this tool in request bodies; left out, on exactly when "
                    "the parameters fit strict mode.",
                    "type": "boolean",
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
        "description": "Secret fields (secret: true, or read from a credential-like key) that may reach a prompt, "
        "or a request body (model, model_settings.<name>).",
        "type": "array",
        "items": {"enum": [*PROFILE_FIELDS, *(f"model_settings.{name}" for name in SETTINGS)]},
        "uniqueItems": True,
    }
    properties["model_settings"] = _model_settings_schema()
    properties["output_schema"] = _output_schema_schema()
    properties["inputs"] = _inputs_schema()
    properties["roles"] = {
        "description": "The chat role each prompt kind is sent as, e.g. {planner: developer}; the system kind "
        "defaults to system, every other kind to user.",
        "type": "object",
        "additionalProperties": {"enum": list(MESSAGE_ROLES)},
    }
    properties["messages"] = {
        "description": "The chat messages the prompts become, in order: {role, kind} for a prompt kind, "
        "{history: true} for where the caller's history goes. Default: system prompt, history, user prompt.",
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
    }
    # an overlay may change any field but these three, which belong to the persona file itself
    overlay = {key: value for key, value in properties.items() if key not in ("extends", "deployments", "factory")}
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
            "dynamic_setting": {
                "description": "A model setting resolved when the profile is created: the provider's text is read "
                "as the setting's type, else the default is used.",
                "type": "object",
                "properties": {
                    **{key: dynamic_properties[key] for key in DYNAMIC_KEYS},
                    "default": {
                        "anyOf": [
                            {"type": "number"},
                            {"type": "string"},
                            {"type": "array", "items": {"type": "string"}},
                        ]
                    },
                },
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
